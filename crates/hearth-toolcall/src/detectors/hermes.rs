//! `hermes`: `<tool_call>{json}</tool_call>`, the ChatML tool-call format.
//!
//! Emitted by Hermes 2 Pro / Hermes 3, Qwen2.5 and Qwen3 (their templates), and by most
//! generic ChatML fine-tunes. Each call is one JSON object `{"name": …, "arguments": {…}}`
//! inside its own `<tool_call>` block; parallel calls are several blocks in a row. Some
//! models put a list of call objects in one block, and some (Granite) send `arguments` as a
//! JSON-encoded string: both are read (the string is decoded once).
//!
//! Edge cases handled:
//! - whitespace and newlines around the JSON, any number of blocks, text before/after;
//! - an unclosed block at the end of the output (`<tool_call>{…}` then EOS, or `<|im_end|>`):
//!   accepted only at end of output (`ctx.eof`) when its JSON is complete; while streaming
//!   it is `Pending`. A complete JSON object followed directly by the next `<tool_call>`
//!   is accepted too (the model forgot one closer);
//! - a block whose content is not JSON (Qwen3-Coder's `<function=…>`, GLM's `name<arg_key>`,
//!   generic `<name>` XML, prose) is reported `Malformed` when it is closed: a detector that
//!   understands that content claims the same span with a call and wins. An unclosed block
//!   whose content is not JSON is left alone at end of output (prose that mentions the tag);
//! - malformed JSON is `Malformed` with serde's message; nothing is repaired.
//!
//! The block scanner is shared with `qwen25` (strict newline-wrapped shape) and `granite4`
//! (same wrapper, relaxed payload): see `shared::tagged_blocks`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::tagged_blocks::{parse_hermes_body, scan_tool_call_blocks, OPEN};

pub struct Hermes;

impl Detector for Hermes {
    fn name(&self) -> &str {
        "hermes"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        scan_tool_call_blocks(text, ctx, out, parse_hermes_body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, reason};
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(&Hermes, text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn single_and_parallel() {
        let t = "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>\n<tool_call>{\"name\":\"get_time\",\"arguments\":{}}</tool_call> ok";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(&t[out[0].span.clone()][..11], "<tool_call>");
        assert!(t[out[0].span.clone()].ends_with("</tool_call>"));
        assert_eq!(calls(&out[0])[0].name, "get_weather");
        assert_eq!(calls(&out[0])[0].arguments, json!({"location": "Paris"}));
        assert_eq!(calls(&out[1])[0].name, "get_time");
        assert_eq!(&t[out[1].span.end..], " ok");
    }

    #[test]
    fn list_inside_and_string_arguments_and_id() {
        let t = r#"<tool_call>[{"name":"a","arguments":"{\"x\":1}"},{"name":"b","id":"c1"}]</tool_call>"#;
        let out = run(t, true);
        let c = calls(&out[0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].arguments, json!({"x": 1}));
        assert_eq!(c[1].arguments, json!({}));
        assert_eq!(c[1].id.as_deref(), Some("c1"));
    }

    #[test]
    fn unclosed_at_end() {
        let t = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(calls(&out[0])[0].name, "get_time");
        let out = run(t, false);
        assert_eq!(out, vec![Found::pending(0..t.len())]);
        // trailing end token stays outside the span
        let t2 = "<tool_call>{\"name\": \"get_time\"}<|im_end|>";
        let out = run(t2, true);
        assert_eq!(&t2[out[0].span.end..], "<|im_end|>");
    }

    #[test]
    fn unclosed_followed_by_next_block() {
        let t = "<tool_call>{\"name\": \"a\"}\n<tool_call>{\"name\": \"b\"}</tool_call>";
        let out = run(t, false);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[0])[0].name, "a");
        assert_eq!(calls(&out[1])[0].name, "b");
    }

    #[test]
    fn streaming_pending() {
        for t in [
            "Let me <tool_call>",
            "x <tool_call>{\"name\": \"get_",
            "<tool_call>{\"name\":\"a\"}\n</tool",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(&t[out[0].span.clone()][..11], "<tool_call>");
        }
    }

    #[test]
    fn malformed_json_and_non_json() {
        let t = "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1,}}</tool_call>";
        let out = run(t, true);
        assert!(
            reason(&out[0]).starts_with("malformed JSON in <tool_call>"),
            "{:?}",
            out[0]
        );
        let t = "<tool_call>\n<function=get_time>\n</function>\n</tool_call>";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("does not hold JSON"));
        assert_eq!(out[0].span, 0..t.len());
        let out = run("<tool_call></tool_call>", true);
        assert!(reason(&out[0]).contains("empty"));
        let out = run("<tool_call>{\"nom\": \"a\"}</tool_call>", true);
        assert!(reason(&out[0]).contains("no \"name\""));
    }

    #[test]
    fn unclosed_truncated_json_is_malformed_at_eof() {
        let t = "<tool_call>{\"name\": \"get_weather\", \"argu";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert!(reason(&out[0]).contains("unclosed"));
    }

    #[test]
    fn prose_mention_unclosed_is_ignored_at_eof() {
        assert!(run("I can emit a <tool_call> tag when needed.", true).is_empty());
        assert!(run("no tags here", true).is_empty());
    }

    #[test]
    fn adversarial_inputs_finish() {
        let big = "<tool_call>{\"".repeat(80_000);
        let _ = run(&big, true);
        let _ = run(&big, false);
        let big = "<tool_call>".repeat(90_000);
        let _ = run(&big, true);
        let big = "<tool_call>{\"name\":\"a\"}</tool_call>".repeat(30_000);
        assert_eq!(run(&big, true).len(), 30_000);
        let big = format!("<tool_call>{}", "[".repeat(1_000_000));
        let _ = run(&big, true);
        let big = "</tool_call><tool_call>[{".repeat(40_000);
        let _ = run(&big, true);
        let _ = run(&big, false);
    }

    #[test]
    fn multibyte_text_is_safe() {
        let t = "é<tool_call>{\"name\":\"é\"}</tool_call>ü<tool_call>ß";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        for f in run(t, false) {
            assert!(t.is_char_boundary(f.span.start) && t.is_char_boundary(f.span.end));
        }
    }
}
