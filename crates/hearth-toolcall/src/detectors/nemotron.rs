//! `nemotron`: NVIDIA Nemotron tool calls in `<TOOLCALL>` tags.
//!
//! # Wire format
//!
//! ```text
//! <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}, {"name": "get_time", "arguments": {}}]</TOOLCALL>
//! ```
//!
//! Emitted by NVIDIA-Nemotron-Nano-9B/12B-v2, Llama-3.3-Nemotron-Super-49B-v1.5,
//! Llama-3.1-Nemotron-Nano-4B/8B-v1.x and Ultra (their chat templates render assistant
//! `tool_calls` exactly this way and tell the model to answer in it), usually after a
//! `<think>…</think>` block and optional text. The older Nemotron-Mini-4B-Instruct writes
//! the same JSON in lowercase tags, `<toolcall> {"name": …, "arguments": …} </toolcall>`,
//! which is accepted too (tags must pair in the same case).
//!
//! - The JSON is a list of call objects (one block holds all parallel calls), or a single
//!   object. `arguments` may be a JSON-encoded string (the templates' own instruction shows
//!   `"arguments": "tool_args1"`); it is decoded once. A model-emitted `id` is kept.
//! - `<TOOLCALL>[]</TOOLCALL>` (Nano v2 sometimes answers "no call" that way) holds no
//!   call and is removed from the reply silently.
//!
//! Sources: the Nemotron Nano v2 and Llama-3.3-Nemotron-Super-49B-v1.5 chat templates
//! (llama.cpp `models/templates`), vLLM's `nemotron_json` / `nemotron_nano_v2` parsers and
//! tests and the model-shipped `llama_nemotron_json` plugin (`<TOOLCALL>(.*?)</TOOLCALL>`,
//! single object wrapped, string arguments decoded, malformed JSON left uncalled), llama.cpp's
//! `NEMOTRON_V2` format tests.
//!
//! # Edge cases
//!
//! Shared with `jamba` (`shared::tagged_json`): broken JSON is malformed
//! with serde's reason and never swallows text after `</TOOLCALL>`; complete JSON without
//! the closer is accepted only at the end of the output; an open block while streaming is
//! `Pending`. Nemotron 3 (Nano 30B-A3B) moved to Qwen3-Coder style
//! `<tool_call><function=…>` XML, handled by `qwen3_coder`, not here.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::tagged_json::detect_tagged_json;

pub struct Nemotron;

const NEMOTRON_TAGS: &[(&str, &str)] =
    &[("<TOOLCALL>", "</TOOLCALL>"), ("<toolcall>", "</toolcall>")];

impl Detector for Nemotron {
    fn name(&self) -> &str {
        "nemotron"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["<TOOLCALL>", "<toolcall>"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        detect_tagged_json(NEMOTRON_TAGS, text, ctx, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{detect_any, megabyte_of_each, named_args as calls};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect_any(&Nemotron, text, eof);
        // Order and bounds only: not `check_spans`, which also wants char boundaries.
        let mut last = 0;
        for f in &out {
            assert!(f.span.start >= last && f.span.start < f.span.end && f.span.end <= text.len());
            last = f.span.end;
        }
        out
    }

    #[test]
    fn nano_v2_list() {
        let t = "<think>\nNeed weather.\n</think>\nLet me check.<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}, {\"name\": \"get_time\", \"arguments\": {}}]</TOOLCALL>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.end, t.len());
        assert_eq!(
            calls(&out[0]),
            vec![
                ("get_weather".into(), json!({"city": "Tokyo"})),
                ("get_time".into(), json!({}))
            ]
        );
    }

    #[test]
    fn single_object_string_args_and_lowercase() {
        let t =
            r#"<TOOLCALL>{"name": "run_query", "arguments": "{\"sql\": \"select 1\"}"}</TOOLCALL>"#;
        assert_eq!(calls(&run(t, true)[0])[0].1, json!({"sql": "select 1"}));
        let t = r#"<toolcall> {"name": "get_time", "arguments": {}} </toolcall>"#;
        assert_eq!(calls(&run(t, true)[0])[0].0, "get_time");
        // case must pair
        let t = r#"<TOOLCALL>[{"name": "get_time"}]</toolcall>"#;
        let out = run(t, true);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn empty_list_and_malformed() {
        let out = run("<TOOLCALL>[]</TOOLCALL>", true);
        assert_eq!(out[0].kind, FoundKind::Calls(vec![]));
        let t = r#"<TOOLCALL>[{"name": "broken", "arguments": {}</TOOLCALL>Hi"#;
        let out = run(t, true);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(&t[out[0].span.end..], "Hi");
    }

    #[test]
    fn streaming() {
        let t = r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tok"#;
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        let t = r#"<TOOLCALL>[{"name": "get_time"}]"#;
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert_eq!(calls(&run(t, true)[0])[0].0, "get_time");
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        megabyte_of_each(
            &[
                "<TOOLCALL>",
                "<toolcall>[",
                "<TOOLCALL>[{\"a\":\"",
                "</TOOLCALL><toolcall>{",
            ],
            run,
        );
    }
}
