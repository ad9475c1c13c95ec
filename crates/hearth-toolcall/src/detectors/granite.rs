//! `granite`: IBM Granite 3.x tool calls.
//!
//! Shape: the `<|tool_call|>` special token followed by a JSON list of call objects, with no
//! closing tag:
//!
//! ```text
//! <|tool_call|>[{"name": "get_weather", "arguments": {"location": "Paris"}}]
//! <|tool_call|> [
//!   {"name": "get_time", "arguments": {}},
//!   {"arguments": {"room": "kitchen", "on": true}, "name": "set_light"}
//! ]<|end_of_text|>
//! ```
//!
//! Models: granite-3.0/3.1/3.2/3.3 instruct (their chat templates render an assistant's
//! `tool_calls` as `<|tool_call|>` + the list as JSON). Granite 3.1 checkpoints served without
//! the special token write the plain string `<tool_call>` instead (vLLM's granite parser and
//! its tests accept both); that form is claimed here only as `<tool_call>` + a JSON list with
//! no `</tool_call>` after it, so Hermes-style `<tool_call>{…}</tool_call>` stays with the
//! `hermes` detector.
//!
//! Sources: vLLM `granite_tool_parser.py` + `tests/tool_parsers/test_granite_tool_parser.py`,
//! llama.cpp `common/chat-parsers/granite.cpp` (Granite 3.3 template), the Granite 3.x chat
//! templates.
//!
//! Edge cases:
//! - whitespace/newlines between the token and the list, pretty-printed lists, `arguments`
//!   before `name`, a missing `arguments` key (no arguments);
//! - a single call object instead of a list is accepted (the token only ever opens calls);
//! - a trailing `<|end_of_text|>` right after the list is part of the span;
//! - text before the token is reply text; so is text after the list;
//! - the list is cut off: `Pending` while streaming, malformed at end of output;
//! - the token followed by anything but JSON is malformed (the token is removed, the text
//!   after it stays in the reply).
//!
//! The scanning helpers it shares with the other detectors of this group (`mistral`,
//! `granite_20b_fc`, `command_r`, `apriel`) are in `shared::json_after_marker`.

use std::convert::identity;

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::json_after_marker::{
    absorb_tokens, bracket_mismatch, calls_found, cut_off, is_partial, json_at, JsonAt, NextOf,
};

const TOKEN: &str = "<|tool_call|>";
const STRING_TAG: &str = "<tool_call>";
const STRING_CLOSE: &str = "</tool_call>";
const END_OF_TEXT: &str = "<|end_of_text|>";

pub struct Granite;

impl Detector for Granite {
    fn name(&self) -> &str {
        "granite"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[TOKEN, STRING_TAG]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut pos = 0;
        let mut tokens = NextOf::new(TOKEN);
        let mut tags = NextOf::new(STRING_TAG);
        while pos < text.len() {
            let tok = tokens.at_or_after(text, pos);
            let tag = tags.at_or_after(text, pos);
            let (start, is_token) = match (tok, tag) {
                (Some(a), Some(b)) if b < a => (b, false),
                (Some(a), _) => (a, true),
                (None, Some(b)) => (b, false),
                (None, None) => return,
            };
            let step = if is_token {
                token_form(text, start, ctx.eof, out)
            } else {
                string_form(text, start, ctx.eof, out)
            };
            match step {
                Some(next) => pos = next,
                None => return,
            }
        }
    }
}

/// `<|tool_call|>` + list. Returns where to continue, or `None` when the text is used up.
fn token_form(text: &str, start: usize, eof: bool, out: &mut Vec<Found>) -> Option<usize> {
    let body = start + TOKEN.len();
    match json_at(text, body, text.len()) {
        JsonAt::Nothing => {
            out.push(cut_off(
                start..body,
                text.len(),
                !eof,
                None,
                "<|tool_call|> with no calls after it",
            ));
            None
        }
        JsonAt::NotJson(_) => {
            out.push(Found::malformed(
                start..body,
                None,
                "expected a JSON list of calls after <|tool_call|>",
            ));
            Some(body)
        }
        JsonAt::Incomplete(_) => {
            out.push(cut_off(
                start..text.len(),
                text.len(),
                !eof,
                None,
                "unterminated JSON after <|tool_call|>",
            ));
            None
        }
        JsonAt::Invalid(s, at) => {
            out.push(bracket_mismatch(
                text,
                start,
                s,
                at,
                "malformed JSON after <|tool_call|>: brackets do not match",
            ));
            Some(at)
        }
        JsonAt::Complete(s, e) => {
            let end = absorb_tokens(text, e, &[END_OF_TEXT]);
            out.push(calls_found(start..end, &text[s..e], TOKEN, identity));
            Some(end)
        }
    }
}

/// Granite 3.1's plain-string `<tool_call>` + list, unclosed. Anything else after the tag is
/// left to other detectors.
fn string_form(text: &str, start: usize, eof: bool, out: &mut Vec<Found>) -> Option<usize> {
    let body = start + STRING_TAG.len();
    match json_at(text, body, text.len()) {
        JsonAt::Nothing => {
            if !eof {
                out.push(Found::pending(start..text.len()));
            }
            None
        }
        JsonAt::NotJson(_) => Some(body),
        // An object: Hermes-style markup, not Granite's. Skip past what was scanned.
        JsonAt::Complete(s, e) if text.as_bytes().get(s) != Some(&b'[') => Some(e),
        JsonAt::Invalid(s, at) if text.as_bytes().get(s) != Some(&b'[') => Some(at),
        JsonAt::Incomplete(s) if text.as_bytes().get(s) != Some(&b'[') => None,
        JsonAt::Incomplete(_) => {
            out.push(cut_off(
                start..text.len(),
                text.len(),
                !eof,
                None,
                "unterminated JSON list after <tool_call>",
            ));
            None
        }
        JsonAt::Invalid(s, at) => {
            out.push(bracket_mismatch(
                text,
                start,
                s,
                at,
                "malformed JSON after <tool_call>: brackets do not match",
            ));
            Some(at)
        }
        JsonAt::Complete(s, e) => {
            let rest = &text[e..];
            if rest.trim_start().starts_with(STRING_CLOSE) {
                // Closed: Hermes-style markup, not Granite's.
                return Some(e);
            }
            if !eof && (rest.trim().is_empty() || is_partial(rest, STRING_CLOSE)) {
                out.push(Found::pending(start..text.len()));
                return None;
            }
            let end = absorb_tokens(text, e, &[END_OF_TEXT]);
            out.push(calls_found(start..end, &text[s..e], STRING_TAG, identity));
            Some(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect};
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(&Granite, text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn single_call_with_space() {
        let t = r#"<|tool_call|> [{"name": "get_weather", "arguments": {"location": "Tokyo"}}]"#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        let c = calls(&out[0]);
        assert_eq!(c[0].name, "get_weather");
        assert_eq!(c[0].arguments, json!({"location": "Tokyo"}));
        assert_eq!(c[0].id, None);
    }

    #[test]
    fn parallel_pretty_printed_and_end_of_text() {
        let t = "Checking.\n<|tool_call|>[\n  {\"arguments\": {}, \"name\": \"get_time\"},\n  {\"name\": \"get_date\"}\n]<|end_of_text|>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.clone()][..13], "<|tool_call|>");
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].name, "get_date");
        assert_eq!(c[1].arguments, json!({}));
    }

    #[test]
    fn string_tag_unclosed_list() {
        let t = r#"<tool_call> [{"name": "get_weather", "arguments": {"location": "Oslo"}}]"#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(calls(&out[0])[0].name, "get_weather");
        // streaming: `</tool_call>` may still come
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
    }

    #[test]
    fn string_tag_hermes_forms_are_not_claimed() {
        assert!(run(
            r#"<tool_call>{"name": "a", "arguments": {}}</tool_call>"#,
            true
        )
        .is_empty());
        assert!(run(
            r#"<tool_call>[{"name": "a", "arguments": {}}]</tool_call>"#,
            true
        )
        .is_empty());
        assert!(run("<tool_call>\n{\"name\": \"a\"", true).is_empty());
    }

    #[test]
    fn malformed_and_pending() {
        let t = r#"<|tool_call|>[{"name": "get_time", "arguments": {]"#;
        let out = run(t, true);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
        let t = r#"<|tool_call|>[{"name": "get_time", "arguments": {"#;
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
        let out = run(t, true);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(out[0].span, 0..t.len());
        let t = r#"<|tool_call|>[{"name": "get_time", "arguments": {"x": tru}}]"#;
        match &run(t, true)[0].kind {
            FoundKind::Malformed { reason, .. } => assert!(reason.contains("malformed JSON")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            run("<|tool_call|>", false)[0].kind,
            FoundKind::Pending
        ));
        assert!(matches!(
            run("<|tool_call|>", true)[0].kind,
            FoundKind::Malformed { .. }
        ));
    }

    #[test]
    fn token_then_prose() {
        let t = "<|tool_call|>I cannot do that.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..13);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn prose_is_ignored() {
        assert!(run("Granite says [1, 2] and {\"name\": \"x\"}.", true).is_empty());
    }

    #[test]
    fn adversarial_input_finishes() {
        for unit in [
            "<|tool_call|>[",
            "<|tool_call|>[{\"a\":[}",
            "<tool_call>[",
            "<tool_call>[]</tool_call>",
            "<|tool_call|>",
            "<|tool_call|>x",
        ] {
            let t = unit.repeat(1_000_000 / unit.len());
            let _ = run(&t, true);
            let _ = run(&t, false);
        }
        let t = format!("<|tool_call|>{}", "[".repeat(1_000_000));
        let _ = run(&t, true);
    }
}
