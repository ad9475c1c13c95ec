//! `jamba`: AI21 Jamba (1.5 Mini/Large, 1.6, 1.7, Reasoning 3B) tool calls.
//!
//! # Wire format
//!
//! A JSON list of call objects between `<tool_calls>` tags, usually after some text:
//!
//! ```text
//! Sure, let me check.<tool_calls>[
//!     {"name": "get_current_weather", "arguments": {"city": "Dallas", "unit": "fahrenheit"}}
//! ]</tool_calls>
//! ```
//!
//! - Parallel calls are more objects in the one list; several blocks are also accepted.
//! - `arguments` is an object; a JSON-encoded string of an object is decoded once.
//! - A model-emitted `id` is kept.
//!
//! Sources: vLLM's `jamba` tool parser and `test_jamba_tool_parser.py` (single, with
//! content, parallel; the list is pretty-printed with newlines), the Jamba 1.5 chat template.
//!
//! # Decisions and edge cases
//!
//! - The JSON is read only up to `</tool_calls>`: broken JSON is reported malformed
//!   (serde's message names the problem) and never swallows the text after the block.
//! - `<tool_calls>[]</tool_calls>` holds no call: it is removed from the reply silently.
//! - A single object instead of a list is accepted (same meaning).
//! - Complete JSON without `</tool_calls>` is accepted only at the end of the output; with
//!   other text after it, it is malformed. While streaming, an open block is `Pending`.
//!
//! The block scanner is shared with `nemotron` (`<TOOLCALL>[…]</TOOLCALL>`): see
//! `shared::tagged_json`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::tagged_json::detect_tagged_json;

pub struct Jamba;

const JAMBA_TAGS: &[(&str, &str)] = &[("<tool_calls>", "</tool_calls>")];

impl Detector for Jamba {
    fn name(&self) -> &str {
        "jamba"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["<tool_calls>"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        detect_tagged_json(JAMBA_TAGS, text, ctx, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{check_spans, megabyte_of_each, reason};
    use crate::validate::ToolSet;
    use serde_json::json;
    use serde_json::Value;

    pub(crate) fn run_tags(
        tags: &[(&'static str, &'static str)],
        text: &str,
        eof: bool,
    ) -> Vec<Found> {
        let t = ToolSet::unrestricted();
        let ctx = DetectCtx { eof, tools: &t };
        let mut out = Vec::new();
        detect_tagged_json(tags, text, &ctx, &mut out);
        check_spans(text, &out);
        out
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        run_tags(JAMBA_TAGS, text, eof)
    }

    fn calls(f: &Found) -> Vec<(String, Value, Option<String>)> {
        match &f.kind {
            FoundKind::Calls(c) => c
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone(), c.id.clone()))
                .collect(),
            other => panic!("not calls: {other:?}"),
        }
    }

    #[test]
    fn single_with_content() {
        let t = " Sure! let me call the tool for you.<tool_calls>[\n    {\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\"}}\n]</tool_calls>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            &t[..out[0].span.start],
            " Sure! let me call the tool for you."
        );
        assert_eq!(out[0].span.end, t.len());
        assert_eq!(
            calls(&out[0]),
            vec![(
                "get_current_weather".into(),
                json!({"city":"Dallas","state":"TX"}),
                None
            )]
        );
    }

    #[test]
    fn parallel_ids_and_string_arguments() {
        let t = r#"<tool_calls>[{"name":"a","arguments":{"x":1},"id":"c1"},{"name":"b","arguments":"{\"y\": 2}"}]</tool_calls>"#;
        let out = run(t, true);
        assert_eq!(
            calls(&out[0]),
            vec![
                ("a".into(), json!({"x":1}), Some("c1".into())),
                ("b".into(), json!({"y":2}), None)
            ]
        );
        // a single object, and two blocks
        let t = r#"<tool_calls>{"name":"a","arguments":{}}</tool_calls> and <tool_calls>[{"name":"b"}]</tool_calls>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[1])[0].1, json!({}));
    }

    #[test]
    fn empty_list_is_no_call() {
        let out = run("<tool_calls>[]</tool_calls>Hello!", true);
        assert_eq!(out[0].kind, FoundKind::Calls(vec![]));
        assert_eq!(out[0].span.end, 27);
    }

    #[test]
    fn malformed_json_stays_inside_its_block() {
        let t = r#"<tool_calls>[{"name": "broken", "arguments": {}</tool_calls> Sure, see [this]."#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(reason(&out[0]).contains("malformed JSON"));
        assert_eq!(&t[out[0].span.end..], " Sure, see [this].");
        let out = run("<tool_calls></tool_calls>", true);
        assert!(reason(&out[0]).contains("empty"));
        let out = run(r#"<tool_calls>[{"arguments":{}}]</tool_calls>"#, true);
        assert!(reason(&out[0]).contains("no \"name\""));
        let out = run(r#"<tool_calls>get_time()</tool_calls>"#, true);
        assert!(reason(&out[0]).contains("expected a JSON list"));
        let out = run(r#"<tool_calls>[{"name":"a",}]</tool_calls>"#, true);
        assert!(reason(&out[0]).contains("malformed JSON in <tool_calls>: trailing comma"));
        let t = r#"<tool_calls>[{"name":"a"}]]</tool_calls>"#;
        assert!(reason(&run(t, false)[0]).contains("missing </tool_calls>"));
    }

    #[test]
    fn unclosed_and_streaming() {
        let t = r#"Ok <tool_calls>[{"name":"get_time","arguments":{}}]"#;
        assert_eq!(calls(&run(t, true)[0])[0].0, "get_time");
        for t in [
            "Ok <tool_calls>",
            "Ok <tool_calls>[{\"name\":\"get_ti",
            "Ok <tool_calls>[{\"name\":\"get_time\",\"arguments\":{}}]",
            "Ok <tool_calls>[{\"name\":\"get_time\",\"arguments\":{}}]</tool_c",
            "Ok <tool_calls>get_time(",
        ] {
            let out = run(t, false);
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(out[0].span, 3..t.len());
        }
        let out = run("Ok <tool_calls>[{\"name\":\"get_ti", true);
        assert!(reason(&out[0]).contains("unterminated JSON"));
        let t = r#"<tool_calls>[{"name":"get_time"}] and then text"#;
        let out = run(t, true);
        assert!(reason(&out[0]).contains("missing </tool_calls>"));
        assert_eq!(&t[out[0].span.end..], " and then text");
        let t = r#"<tool_calls>[{"name":"a" <tool_calls>[{"name":"b"}]</tool_calls>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(reason(&out[0]).contains("next block"));
        assert_eq!(calls(&out[1])[0].0, "b");
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        megabyte_of_each(
            &[
                "<tool_calls>",
                "<tool_calls>[",
                "<tool_calls>[{\"name\":\"",
                "</tool_calls>",
                "<tool_calls>[]",
                "[{\"",
            ],
            run,
        );
        let t = format!("<tool_calls>{}", "[".repeat(1_000_000));
        run(&t, true);
    }
}
