//! `command_r`: Cohere Command R / R+ and Command R7B / Command A tool calls.
//!
//! Two generations of markup:
//!
//! ````text
//! Command R / R+ (2024, "Action:" tool-use prompt):
//!   Action: ```json
//!   [
//!       {"tool_name": "get_weather", "parameters": {"location": "Paris"}}
//!   ]
//!   ```
//! Command R7B, Command A (03-2025, Reasoning, Vision, Plus):
//!   <|START_ACTION|>[
//!       {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"location": "Paris"}},
//!       {"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}
//!   ]<|END_ACTION|>
//! ````
//!
//! Sources: Cohere's Command R tool-use prompt (as rendered by the HF `tool_use` template and
//! reproduced in many projects: "Write 'Action:' followed by a json-formatted list of
//! actions…"), llama.cpp `chat-parsers/command-r7b.cpp` (ids are integer strings), SGLang
//! `cohere_command4_detector.py`, vLLM `cohere_command_tool_parser.py` +
//! `tests/tool_parsers/test_cohere_command_tool_parser.py`, Cohere's "directly answering"
//! documentation.
//!
//! `directly_answer`: Command R's tool-use prompt always offers a built-in
//! `directly_answer()` tool ("Calls a standard (un-augmented) AI chatbot to generate a
//! response given the conversation history") and tells the model to pick it when no other
//! tool is needed. It is therefore not a call of any real tool but the model's way of saying
//! "no tool, just answer". Decision: a `directly_answer` action is dropped from the
//! candidates (its markup is still consumed, so a block holding only it yields an empty
//! `Calls`), unless the tool set on offer really has a tool of that name, in which case it is
//! kept like any other call.
//!
//! Edge cases:
//! - `tool_call_id` is kept verbatim as the candidate id (`"0"`, `"1"`, …);
//! - the `Action:` form is claimed only with a fenced JSON list (info string empty or `json`),
//!   or with a bare JSON list whose items all have a `tool_name` key; anything else after
//!   `Action:` is prose and ignored;
//! - an action list with no closing `<|END_ACTION|>` (or closing fence) is accepted only at
//!   the end of the output (a stop sequence may have eaten the token); while streaming it is
//!   `Pending`;
//! - text between the list and `<|END_ACTION|>` is malformed; a block whose content is not
//!   JSON, or whose brackets do not match, is malformed up to its `<|END_ACTION|>` (while
//!   streaming it is `Pending` until that token or the end of the output decides its span);
//! - `<|START_THINKING|>…<|END_THINKING|>` (the tool plan) is the framework's think block, and
//!   `<|START_RESPONSE|>…<|END_RESPONSE|>` is reply text whose tokens the framework strips.

use serde_json::Value;

use super::shared::json_after_marker::{
    absorb_tokens, after_token, bracket_mismatch, bracket_reason, calls_found, cut_off, is_partial,
    json_at, name_hint, without_pseudo_calls, JsonAt, NextOf,
};
use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan;

const START: &str = "<|START_ACTION|>";
const END: &str = "<|END_ACTION|>";
const END_OF_TURN: &str = "<|END_OF_TURN_TOKEN|>";
const ACTION: &str = "Action:";
const FENCE: &str = "```";
/// Command R's built-in "no tool, answer directly" pseudo-tool.
const DIRECTLY_ANSWER: &str = "directly_answer";

pub struct CommandR;

impl Detector for CommandR {
    fn name(&self) -> &str {
        "command_r"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[START, ACTION]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut starts = NextOf::new(START);
        let mut actions = NextOf::new(ACTION);
        let mut pos = 0;
        while pos < text.len() {
            let s = starts.at_or_after(text, pos);
            let a = actions.at_or_after(text, pos);
            let next = match (s, a) {
                (Some(s), Some(a)) if a < s => action_form(text, a, ctx, out),
                (Some(s), _) => {
                    let limit = starts
                        .at_or_after(text, s + START.len())
                        .unwrap_or(text.len());
                    action_block(text, s, limit, ctx, out)
                }
                (None, Some(a)) => action_form(text, a, ctx, out),
                (None, None) => return,
            };
            match next {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

/// `<|START_ACTION|>[…]<|END_ACTION|>`, looking no further than `limit` (the next
/// `<|START_ACTION|>`). Returns where to continue, or `None` when the text is used up.
fn action_block(
    text: &str,
    start: usize,
    limit: usize,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
) -> Option<usize> {
    let body = start + START.len();
    let may_grow = !ctx.eof && limit == text.len();
    let cut = |out: &mut Vec<Found>, end: usize, reason: &str| {
        out.push(cut_off(start..end, text.len(), may_grow, None, reason));
        (limit < text.len()).then_some(limit)
    };
    match json_at(text, body, limit) {
        JsonAt::Nothing => cut(out, body, "<|START_ACTION|> with no action list after it"),
        JsonAt::NotJson(_) => {
            let close = scan::find_from(&text[..limit], END, body).map(|e| e + END.len());
            if close.is_none() && may_grow {
                // <|END_ACTION|> may still come and decide the span.
                out.push(Found::pending(start..text.len()));
                return None;
            }
            let end = close.unwrap_or(body);
            out.push(Found::malformed(
                start..end,
                None,
                "expected a JSON list of actions after <|START_ACTION|>",
            ));
            Some(end)
        }
        JsonAt::Incomplete(_) => cut(out, limit, "unterminated JSON after <|START_ACTION|>"),
        JsonAt::Invalid(s, at) => {
            // The block still ends at its closing token, if there is one.
            let close = scan::find_from(&text[..limit], END, at).map(|e| e + END.len());
            if close.is_none() && may_grow {
                out.push(Found::pending(start..text.len()));
                return None;
            }
            let end = close.unwrap_or(at);
            out.push(Found::malformed(
                start..end,
                name_hint(&text[s..at]),
                bracket_reason(
                    "malformed JSON after <|START_ACTION|>: unbalanced brackets",
                    s,
                    at,
                ),
            ));
            Some(end)
        }
        JsonAt::Complete(s, e) => {
            let end = match closer_after(
                text,
                start..e,
                s,
                limit,
                END,
                may_grow,
                "expected <|END_ACTION|> right after the action list",
                out,
            ) {
                Close::At(end) => end,
                Close::Stop(resume) => return resume,
            };
            out.push(calls_found(start..end, &text[s..e], START, |calls| {
                without_pseudo_calls(calls, DIRECTLY_ANSWER, ctx)
            }));
            Some(end)
        }
    }
}

/// What follows a complete action list.
enum Close {
    /// The construct ends here (after its closer, or at the list when the output ends).
    At(usize),
    /// Pending or malformed was pushed: return this from the scan step.
    Stop(Option<usize>),
}

/// After a complete action list (`start..e`, JSON from `s`): the closer (`<|END_ACTION|>`
/// or the fence), or the end of the turn, must follow; anything else before `limit` is
/// malformed. While the output may grow, an end or a partial closer is still pending.
#[allow(clippy::too_many_arguments)]
fn closer_after(
    text: &str,
    span: std::ops::Range<usize>,
    s: usize,
    limit: usize,
    closer: &str,
    may_grow: bool,
    missing: &str,
    out: &mut Vec<Found>,
) -> Close {
    let (start, e) = (span.start, span.end);
    let rest = &text[e..limit];
    if let Some(end) = after_token(text, e, closer) {
        return Close::At(end);
    }
    let ended = rest.trim().is_empty() || after_token(text, e, END_OF_TURN).is_some();
    if may_grow && (ended || is_partial(rest, closer)) {
        out.push(Found::pending(start..text.len()));
        return Close::Stop(None);
    }
    if ended {
        return Close::At(e);
    }
    out.push(Found::malformed(start..e, name_hint(&text[s..e]), missing));
    Close::Stop(Some(e))
}

/// True if every item of a JSON list is an object with a `tool_name` key.
fn all_cohere_items(v: &Value) -> bool {
    match v {
        Value::Array(items) => {
            !items.is_empty()
                && items
                    .iter()
                    .all(|it| it.get("tool_name").is_some_and(Value::is_string))
        }
        _ => false,
    }
}

/// `Action: ```json\n[…]\n```` (or a bare Cohere-shaped list after `Action:`). Returns where
/// to continue, or `None` when the text is used up.
fn action_form(
    text: &str,
    start: usize,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
) -> Option<usize> {
    let after_label = start + ACTION.len();
    let may_grow = !ctx.eof;
    let p = scan::skip_ws(text, after_label);
    let rest = &text[p..];
    if rest.is_empty() {
        if may_grow {
            out.push(Found::pending(start..text.len()));
            return None;
        }
        return Some(after_label);
    }
    if let Some(fenced) = rest.strip_prefix(FENCE) {
        // The info string: up to the end of the line.
        let Some(nl) = fenced.find('\n') else {
            // The info line is not finished: wait if it can still become "json".
            if may_grow && "json".starts_with(fenced.trim_start()) {
                out.push(Found::pending(start..text.len()));
                return None;
            }
            return Some(after_label);
        };
        let info = fenced[..nl].trim();
        if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
            return Some(after_label);
        }
        let body = p + FENCE.len() + nl + 1;
        return match json_at(text, body, text.len()) {
            JsonAt::Nothing => {
                out.push(cut_off(
                    start..body,
                    text.len(),
                    may_grow,
                    None,
                    "Action: code fence with no action list",
                ));
                None
            }
            JsonAt::NotJson(_) => Some(body),
            JsonAt::Complete(s, _) | JsonAt::Incomplete(s) | JsonAt::Invalid(s, _)
                if text.as_bytes().get(s) != Some(&b'[') =>
            {
                Some(body)
            }
            JsonAt::Incomplete(_) => {
                out.push(cut_off(
                    start..text.len(),
                    text.len(),
                    may_grow,
                    None,
                    "unterminated JSON action list after Action:",
                ));
                None
            }
            JsonAt::Invalid(s, at) => {
                out.push(bracket_mismatch(
                    text,
                    start,
                    s,
                    at,
                    "malformed JSON action list after Action: unbalanced brackets",
                ));
                Some(at)
            }
            JsonAt::Complete(s, e) => {
                let end = match closer_after(
                    text,
                    start..e,
                    s,
                    text.len(),
                    FENCE,
                    may_grow,
                    "expected a closing ``` after the Action: list",
                    out,
                ) {
                    Close::At(end) => end,
                    Close::Stop(resume) => return resume,
                };
                let json = &text[s..e];
                out.push(match serde_json::from_str::<Value>(json) {
                    Err(err) => Found::malformed(
                        start..end,
                        None,
                        format!("malformed JSON action list after Action: {err}"),
                    ),
                    Ok(v) => match scan::calls_from_json(&v) {
                        Ok(calls) => Found::calls(
                            start..end,
                            without_pseudo_calls(calls, DIRECTLY_ANSWER, ctx),
                        ),
                        Err(reason) => Found::malformed(
                            start..end,
                            name_hint(json),
                            format!("Action: {reason}"),
                        ),
                    },
                });
                Some(end)
            }
        };
    }
    if may_grow && is_partial(rest, FENCE) {
        out.push(Found::pending(start..text.len()));
        return None;
    }
    if !rest.starts_with('[') {
        return Some(after_label);
    }
    // A bare list: only a Cohere-shaped one is claimed.
    match json_at(text, p, text.len()) {
        JsonAt::Incomplete(_) => {
            if may_grow {
                out.push(Found::pending(start..text.len()));
            }
            None
        }
        JsonAt::Invalid(_, at) => Some(at),
        JsonAt::Complete(s, e) => {
            let json = &text[s..e];
            match serde_json::from_str::<Value>(json) {
                Ok(v) if all_cohere_items(&v) => {
                    let end = absorb_tokens(text, e, &[END_OF_TURN]);
                    out.push(calls_found(start..end, json, ACTION, |calls| {
                        without_pseudo_calls(calls, DIRECTLY_ANSWER, ctx)
                    }));
                    Some(end)
                }
                _ => Some(e),
            }
        }
        JsonAt::Nothing | JsonAt::NotJson(_) => Some(after_label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, reason};
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run_with(text: &str, eof: bool, tools: &ToolSet) -> Vec<Found> {
        detect(&CommandR, text, eof, tools)
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        run_with(text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn r7b_block_with_ids() {
        let t = "<|START_THINKING|>I will look it up.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {}}\n]<|END_ACTION|>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.clone()][..16], START);
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(c[0].id.as_deref(), Some("0"));
        assert_eq!(c[1].id.as_deref(), Some("1"));
        assert_eq!(c[0].arguments, json!({"location": "Paris"}));
    }

    #[test]
    fn r7b_unclosed_only_at_eof() {
        let t =
            r#"<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_time", "parameters": {}}]"#;
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
        let t2 = format!("{t}<|END_ACT");
        assert!(matches!(run(&t2, false)[0].kind, FoundKind::Pending));
        let t3 = format!("{t} and more<|END_ACTION|>");
        assert!(reason(&run(&t3, true)[0]).contains("<|END_ACTION|>"));
    }

    #[test]
    fn directly_answer_is_dropped_unless_offered() {
        let t = r#"<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "directly_answer", "parameters": {}}]<|END_ACTION|>"#;
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert!(calls(&out[0]).is_empty());
        let tools = ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"directly_answer","parameters":{"type":"object"}}}]"#,
        )
        .unwrap();
        assert_eq!(calls(&run_with(t, true, &tools)[0]).len(), 1);
        let t = "Action: ```json\n[{\"tool_name\": \"directly_answer\", \"parameters\": {}}, {\"tool_name\": \"search\", \"parameters\": {\"query\": \"penguins\"}}]\n```";
        let c = run(t, true);
        assert_eq!(calls(&c[0]).len(), 1);
        assert_eq!(calls(&c[0])[0].name, "search");
    }

    #[test]
    fn action_fenced_form() {
        let t = "Action: ```json\n[\n    {\n        \"tool_name\": \"search\",\n        \"parameters\": {\"query\": \"biggest penguin\"}\n    }\n]\n```";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(
            calls(&out[0])[0].arguments,
            json!({"query": "biggest penguin"})
        );
        // streaming: closing fence not there yet
        let cut = &t[..t.len() - 3];
        assert!(matches!(run(cut, false)[0].kind, FoundKind::Pending));
        assert_eq!(calls(&run(cut, true)[0])[0].name, "search");
    }

    #[test]
    fn action_bare_list_needs_cohere_shape() {
        let t = r#"Action: [{"tool_name": "get_time", "parameters": {}}]"#;
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
        assert!(run("Action: [see below]", true).is_empty());
        assert!(run("Action: [1, 2, 3] were taken.", true).is_empty());
        assert!(run("Action: we go now. ```python\nprint(1)\n```", true).is_empty());
    }

    #[test]
    fn action_prose_and_pending() {
        assert!(run("Lights, camera, Action: go!", true).is_empty());
        assert!(matches!(
            run("Sure. Action:", false)[0].kind,
            FoundKind::Pending
        ));
        assert!(run("Sure. Action:", true).is_empty());
        assert!(matches!(
            run("Action: ``", false)[0].kind,
            FoundKind::Pending
        ));
        assert!(matches!(
            run("Action: ```js", false)[0].kind,
            FoundKind::Pending
        ));
        assert!(matches!(
            run("Action: ```json\n[{\"tool_na", false)[0].kind,
            FoundKind::Pending
        ));
        assert!(matches!(
            run("Action: ```json\n[{\"tool_na", true)[0].kind,
            FoundKind::Malformed { .. }
        ));
    }

    #[test]
    fn malformed_cases() {
        let out = run(
            r#"<|START_ACTION|>[{"tool_name": "get_time", "parameters": {]}]<|END_ACTION|>"#,
            true,
        );
        assert!(reason(&out[0]).contains("malformed JSON"));
        let out = run("<|START_ACTION|>get_time()<|END_ACTION|>", true);
        assert!(reason(&out[0]).contains("expected a JSON list"));
        assert_eq!(out[0].span.end, 40);
        let out = run(
            "Action: ```json\n[{\"tool_name\": \"x\", \"parameters\": {,}}]\n```",
            true,
        );
        assert!(reason(&out[0]).contains("malformed JSON"));
        let out = run(
            r#"<|START_ACTION|>[{"parameters": {}}]<|END_ACTION|>"#,
            true,
        );
        assert!(reason(&out[0]).contains("name"));
    }

    #[test]
    fn two_blocks_and_text() {
        let t = "<|START_RESPONSE|>Sure.<|END_RESPONSE|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"a\", \"parameters\": {}}]<|END_ACTION|> then <|START_ACTION|>[{\"tool_call_id\": \"1\", \"tool_name\": \"b\", \"parameters\": {}}]<|END_ACTION|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[1])[0].id.as_deref(), Some("1"));
    }

    #[test]
    fn adversarial_input_finishes() {
        for unit in [
            "<|START_ACTION|>",
            "<|START_ACTION|>[",
            "<|START_ACTION|>[{\"a\":[}",
            "Action:",
            "Action: ```json\n[",
            "Action: [",
            "Action: [1]",
            "Action: ```json\n",
        ] {
            let t = unit.repeat(1_000_000 / unit.len());
            let _ = run(&t, true);
            let _ = run(&t, false);
        }
    }
}
