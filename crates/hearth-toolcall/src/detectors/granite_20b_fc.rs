//! `granite_20b_fc`: IBM granite-20b-functioncalling.
//!
//! Shape: each call is the `<function_call>` tag, a space, and one JSON call object; parallel
//! calls repeat the tag. The turn ends with `<|endoftext|>`:
//!
//! ```text
//! <function_call> {"name": "get_weather", "arguments": {"location": "Paris"}}
//! <function_call> {"name": "get_time", "arguments": {}}<|endoftext|>
//! ```
//!
//! Model: ibm-granite/granite-20b-functioncalling (served with vLLM's
//! `tool_chat_template_granite_20b_fc.jinja`, which renders past calls exactly this way).
//!
//! Sources: vLLM `tool_parsers/granite_20b_fc_tool_parser.py` and
//! `tests/tool_parsers/test_granite_20b_fc_tool_parser.py`, the vLLM example chat template,
//! the Granite function-calling paper (arXiv 2407.00121).
//!
//! Edge cases:
//! - pretty-printed objects, newlines between calls, text before the first tag (vLLM keeps it
//!   as content), `arguments` given as a JSON-encoded string (decoded once);
//! - each tag is parsed up to the next tag, so one broken call does not hide the next;
//! - a JSON *list* after the tag is not this format (vLLM's tests treat it as malformed): it
//!   is reported malformed, not guessed at;
//! - `{"name": "no_function", "arguments": {}}` is the model's trained answer for "none of
//!   the functions applies" (the chat template tells it to emit exactly that). It is not a
//!   call: the markup is consumed and yields no candidate (an empty `Calls`), unless the tool
//!   set really has a tool named `no_function`;
//! - a trailing `<|endoftext|>` right after a call belongs to its span;
//! - a cut-off object is `Pending` while streaming and malformed at end of output.

use super::shared::json_after_marker::{
    absorb_tokens, bracket_mismatch, calls_found, cut_off, json_at, name_hint,
    without_pseudo_calls, JsonAt,
};
use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan;

const TAG: &str = "<function_call>";
const END: &str = "<|endoftext|>";
/// The trained "no function applies" answer.
const NO_FUNCTION: &str = "no_function";

pub struct Granite20bFc;

impl Detector for Granite20bFc {
    fn name(&self) -> &str {
        "granite_20b_fc"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[TAG]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut tags = scan::find_all(text, TAG).peekable();
        while let Some(start) = tags.next() {
            let next = tags.peek().copied();
            let limit = next.unwrap_or(text.len());
            let may_grow = next.is_none() && !ctx.eof;
            one_call(text, start, limit, may_grow, ctx, out);
        }
    }
}

fn one_call(
    text: &str,
    start: usize,
    limit: usize,
    may_grow: bool,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
) {
    let body = start + TAG.len();
    let cut = |end: usize, reason: &str| cut_off(start..end, text.len(), may_grow, None, reason);
    match json_at(text, body, limit) {
        JsonAt::Nothing => out.push(cut(body, "<function_call> with no call object after it")),
        JsonAt::NotJson(_) => out.push(Found::malformed(
            start..body,
            None,
            "expected a JSON call object after <function_call>",
        )),
        JsonAt::Incomplete(_) => out.push(cut(limit, "unterminated JSON after <function_call>")),
        JsonAt::Invalid(s, at) => out.push(bracket_mismatch(
            text,
            start,
            s,
            at,
            "malformed JSON after <function_call>: unbalanced brackets",
        )),
        JsonAt::Complete(s, e) => {
            let end = absorb_tokens(text, e, &[END]);
            let json = &text[s..e];
            if json.starts_with('[') {
                return out.push(Found::malformed(
                    start..end,
                    name_hint(json),
                    "expected one JSON call object after <function_call>, got a list",
                ));
            }
            out.push(calls_found(start..end, json, TAG, |calls| {
                without_pseudo_calls(calls, NO_FUNCTION, ctx)
            }));
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

    fn run_with(text: &str, eof: bool, tools: &ToolSet) -> Vec<Found> {
        detect(&Granite20bFc, text, eof, tools)
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        run_with(text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn single_and_parallel() {
        let t = "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"location\": \"Tokyo\"}}\n<function_call> {\"name\": \"get_time\", \"arguments\": {}}<|endoftext|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[0])[0].arguments, json!({"location": "Tokyo"}));
        assert_eq!(calls(&out[1])[0].name, "get_time");
        assert_eq!(out[1].span.end, t.len());
        assert_eq!(&t[out[0].span.clone()][..15], TAG);
    }

    #[test]
    fn text_before_and_string_arguments() {
        let t = "Let me check.\n<function_call> {\"name\": \"add\", \"arguments\": \"{\\\"x\\\": 1, \\\"y\\\": 2}\"}";
        let out = run(t, true);
        assert_eq!(out[0].span.start, 14);
        assert_eq!(calls(&out[0])[0].arguments, json!({"x": 1, "y": 2}));
    }

    #[test]
    fn no_function_is_not_a_call() {
        let t = "<function_call> {\"name\": \"no_function\", \"arguments\": {}}";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        assert!(calls(&out[0]).is_empty());
        let tools = ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"no_function","parameters":{"type":"object"}}}]"#,
        )
        .unwrap();
        assert_eq!(calls(&run_with(t, true, &tools)[0])[0].name, "no_function");
    }

    #[test]
    fn list_is_malformed() {
        let out = run(
            "<function_call> [{\"name\": \"get_time\", \"arguments\": {}}]",
            true,
        );
        match &out[0].kind {
            FoundKind::Malformed { reason, name } => {
                assert!(reason.contains("got a list"));
                assert_eq!(name.as_deref(), Some("get_time"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn streaming_and_cut_off() {
        let t = "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"loc";
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        assert!(matches!(
            run("<function_call>", false)[0].kind,
            FoundKind::Pending
        ));
        // a broken call followed by a good one
        let t = "<function_call> {\"name\": \"a\", \"arguments\": {\n<function_call> {\"name\": \"get_time\", \"arguments\": {}}";
        let out = run(t, false);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(calls(&out[1])[0].name, "get_time");
    }

    #[test]
    fn malformed_json_and_prose() {
        let out = run(
            "<function_call> {\"name\": \"get_time\", \"arguments\": {,}}",
            true,
        );
        match &out[0].kind {
            FoundKind::Malformed { reason, .. } => assert!(reason.contains("malformed JSON")),
            other => panic!("{other:?}"),
        }
        let out = run("<function_call> I will not call anything.", true);
        assert_eq!(out[0].span, 0..15);
        assert!(run("A function call is {\"name\": \"x\"}.", true).is_empty());
    }

    #[test]
    fn adversarial_input_finishes() {
        for unit in [
            "<function_call>",
            "<function_call> {",
            "<function_call>[{\"a\":[}",
            "<function_call> {\"a\":\"",
        ] {
            let t = unit.repeat(1_000_000 / unit.len());
            let _ = run(&t, true);
            let _ = run(&t, false);
        }
    }
}
