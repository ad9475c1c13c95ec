//! `phi4`: Microsoft Phi-4-mini tool calls, and the `functools[…]` prefix.
//!
//! What it looks like (Phi-4-mini-instruct's model card and chat template, the
//! model-specific grammars note in seed 001, vLLM's `phi4_mini_json` parser and template,
//! llama.cpp's FireFunction v2 parser):
//!
//! ```text
//! <|tool_call|>[{"name": "add", "arguments": {"x": 1, "y": 2}}, {"name": "get_time", "arguments": {}}]<|/tool_call|>
//! functools[{"name": "get_weather", "arguments": {"location": "Paris"}}]
//! ```
//!
//! - Phi-4-mini wraps one JSON list of `{"name", "arguments"}` objects between the special
//!   tokens `<|tool_call|>` and `<|/tool_call|>`; a single object instead of a list is
//!   accepted. The close tag is part of the span.
//! - `functools[…]` is the prompt-injected "unified" format of vLLM's Phi-4-mini template
//!   and the native format of FireFunction v2 (which starts its reply with ` functools[`);
//!   it has no closing marker: the span ends with the list. It must not be glued to a
//!   preceding word character, and the list must hold objects (`functools[{`):
//!   `functools[0]` in prose is not this format.
//! - A missing `<|/tool_call|>` is accepted (at the end of the output, or when other text
//!   follows: the `granite` detector claims the same unclosed shape, and Granite's
//!   `<|tool_call|>[…]` is exactly that); with the close tag the span is longer and wins.
//! - Payloads that are not valid JSON call lists are malformed, with serde's reason;
//!   while streaming an unfinished construct is pending from its marker.

use super::shared::construct_end::close_construct;
use super::shared::json_finder::{ws, Finder};
use super::shared::json_object::guess_name;
use crate::detector::{DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::scan::{self, Scan};

pub struct Phi4;

const OPEN: &str = "<|tool_call|>";
const CLOSE: &str = "<|/tool_call|>";
const FUNCTOOLS: &str = "functools[";

impl Detector for Phi4 {
    fn name(&self) -> &str {
        "phi4"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN, FUNCTOOLS]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Finder::new(OPEN);
        let mut closes = Finder::new(CLOSE);
        let mut fts = Finder::new(FUNCTOOLS);
        let mut cursor = 0;
        loop {
            let o = opens.next(text, cursor);
            let f = fts.next(text, cursor);
            let found = match (o, f) {
                (None, None) => return,
                (Some(o), None) => tagged_at(text, o, ctx.eof, &mut closes),
                (Some(o), Some(f)) if o < f => tagged_at(text, o, ctx.eof, &mut closes),
                (_, Some(f)) => {
                    let glued = f > 0
                        && text
                            .as_bytes()
                            .get(f - 1)
                            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
                    if glued {
                        cursor = f + FUNCTOOLS.len();
                        continue;
                    }
                    match functools_at(text, f, ctx.eof) {
                        Some(found) => found,
                        None => {
                            cursor = f + FUNCTOOLS.len();
                            continue;
                        }
                    }
                }
            };
            let stop = matches!(found.kind, FoundKind::Pending) || found.span.end >= text.len();
            cursor = found.span.end.max(cursor + 1);
            out.push(found);
            if stop {
                return;
            }
        }
    }
}

fn tagged_at(text: &str, s: usize, eof: bool, closes: &mut Finder) -> Found {
    let j = ws(text, s + OPEN.len());
    let broken = |closes: &mut Finder, at: usize, reason: String| {
        let close = closes.next(text, j);
        if close.is_none() && !eof {
            return Found::pending(s..text.len());
        }
        let end = close.map(|q| q + CLOSE.len()).unwrap_or(text.len()).max(at);
        Found::malformed(
            s..end,
            guess_name(&text[j..end.max(j)]),
            format!("malformed JSON in {OPEN}: {reason}"),
        )
    };
    match text.as_bytes().get(j) {
        None if !eof => return Found::pending(s..text.len()),
        None => return broken(closes, text.len(), "no call follows the marker".into()),
        Some(b'[' | b'{') => {}
        Some(_) => return broken(closes, j, "expected a JSON list of calls".into()),
    }
    match scan::balanced_end(text, j, false) {
        Scan::Complete(e) => {
            let parsed = scan::parse_calls_json(&text[j..e])
                .map_err(|r| format!("malformed JSON in {OPEN}: {r}"));
            let f = close_construct(text, s, e, eof, CLOSE, parsed, true);
            match f.kind {
                FoundKind::Malformed { name: None, reason } => {
                    Found::malformed(f.span, guess_name(&text[j..e]), reason)
                }
                _ => f,
            }
        }
        Scan::Incomplete if !eof => Found::pending(s..text.len()),
        Scan::Incomplete => Found::malformed(
            s..text.len(),
            guess_name(&text[j..]),
            format!("malformed JSON in {OPEN}: unterminated list (the text ends inside it)"),
        ),
        Scan::Invalid(at) => broken(
            closes,
            at + 1,
            format!("mismatched bracket at byte {}", at - j),
        ),
    }
}

/// `functools[{…}]` at `f`; `None` when the list does not hold objects (`functools[0]`).
fn functools_at(text: &str, f: usize, eof: bool) -> Option<Found> {
    let j = f + FUNCTOOLS.len() - 1;
    let first = ws(text, j + 1);
    match text.as_bytes().get(first) {
        Some(b'{') => {}
        None if !eof => return Some(Found::pending(f..text.len())),
        _ => return None,
    }
    Some(match scan::balanced_end(text, j, false) {
        Scan::Complete(e) => match scan::parse_calls_json(&text[j..e]) {
            Ok(calls) => Found::calls(f..e, calls),
            Err(r) => Found::malformed(
                f..e,
                guess_name(&text[j..e]),
                format!("malformed JSON in functools[…]: {r}"),
            ),
        },
        Scan::Incomplete if !eof => Found::pending(f..text.len()),
        Scan::Incomplete => Found::malformed(
            f..text.len(),
            guess_name(&text[j..]),
            "malformed JSON in functools[…]: unterminated list (the text ends inside it)",
        ),
        Scan::Invalid(at) => Found::malformed(
            f..(at + 1).min(text.len()),
            None,
            format!(
                "malformed JSON in functools[…]: mismatched bracket at byte {}",
                at - j
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, megabyte_of_each, names};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Phi4, text, eof)
    }

    #[test]
    fn tagged_list() {
        let t = "<|tool_call|>[{\"name\": \"add\", \"arguments\": {\"x\": 123345432, \"y\": 4563464236}}, {\"name\": \"mul\", \"arguments\": {\"x\": 874284, \"y\": 912429}}]<|/tool_call|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(names(&out[0]), ["add", "mul"]);
        match &out[0].kind {
            FoundKind::Calls(c) => {
                assert_eq!(c[0].arguments, json!({"x": 123345432, "y": 4563464236u64}))
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn unclosed_is_accepted_like_granite() {
        let t = "<|tool_call|>[{\"name\": \"get_time\", \"arguments\": {}}]";
        assert_eq!(run(t, true)[0].span, 0..t.len());
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let t2 = format!("{t} Let me check.");
        assert_eq!(run(&t2, false)[0].span, 0..t.len());
    }

    #[test]
    fn functools() {
        let t = "functools[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        let t = " functools[{\"name\": \"get_time\", \"arguments\": {}}] ok";
        assert_eq!(
            &t[run(t, true)[0].span.clone()],
            "functools[{\"name\": \"get_time\", \"arguments\": {}}]"
        );
        assert!(run("myfunctools[{\"name\": \"x\"}]", true).is_empty());
        assert!(run("functools[THINK] and functools[0]", true).is_empty());
        assert_eq!(run("functools[ ", false), vec![Found::pending(0..11)]);
        let t = "functools[{\"name\": \"get_time\"";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
    }

    #[test]
    fn malformed() {
        let t = "<|tool_call|>[{\"name\": \"get_time\", \"arguments\": {},}]<|/tool_call|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), .. } if n == "get_time")
        );
        let t = "<|tool_call|>get_time()<|/tool_call|>";
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(run(t, true)[0].span, 0..t.len());
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "<|tool_call|>",
                "<|tool_call|>[",
                "functools[",
                "functools[{",
                "<|tool_call|>[{\"name\":\"a\"}]",
            ],
            run,
        );
    }
}
