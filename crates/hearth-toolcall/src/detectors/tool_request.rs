//! `tool_request`: the `[TOOL_REQUEST]` text formats from LLxprt Code's text tool-call
//! parser (seed 002's format list; LM Studio-style prompts for Gemma and other models
//! without native tool tokens).
//!
//! What it looks like:
//!
//! ```text
//! [TOOL_REQUEST]
//! list_directory {"path": "/home/user"}
//! [TOOL_REQUEST_END]
//!
//! {"name": "search", "arguments": {"query": "climate change"}}
//! [END_TOOL_REQUEST]
//! ```
//!
//! - Form 1: `[TOOL_REQUEST]`, a tool name, its JSON arguments object (on the same line or
//!   the next), `[TOOL_REQUEST_END]`. A name with no arguments object means no arguments;
//!   a full call object `{"name": …, "arguments": …}` instead of name + arguments is
//!   accepted too. `[END_TOOL_REQUEST]` is accepted as the closer as well.
//! - Form 2: a call object (any shape [`scan::call_from_object`] reads) directly followed
//!   (after whitespace) by `[END_TOOL_REQUEST]`; LLxprt also allows a line number before
//!   the object (`1 {"name": …}`), which then belongs to the span.
//! - The markers are part of the span. A missing `[TOOL_REQUEST_END]` is accepted only at
//!   the end of the output with complete arguments; while streaming it is pending.
//!   Anything else that does not parse is malformed; a lone `[END_TOOL_REQUEST]` with no
//!   call object before it is reported malformed so the marker leaves the reply.

use serde_json::{Map, Value};

use super::shared::json_finder::{find_byte, is_partial_of, ws, Finder};
use super::shared::json_object::{guess_name, object_head, parse_object, Head};
use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::scan::{self, Scan};

pub struct ToolRequest;

const OPEN: &str = "[TOOL_REQUEST]";
const CLOSE: &str = "[TOOL_REQUEST_END]";
const END_AFTER: &str = "[END_TOOL_REQUEST]";

impl Detector for ToolRequest {
    fn name(&self) -> &str {
        "tool_request"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // `{`: while streaming, a call object may be waiting for its `[END_TOOL_REQUEST]`.
        &[OPEN, END_AFTER, "{"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Finder::new(OPEN);
        let mut afters = Finder::new(END_AFTER);
        let mut cursor = 0;
        loop {
            let o = opens.next(text, cursor);
            let a = afters.next(text, cursor);
            let step = match (o, a) {
                (None, None) => break,
                (Some(o), None) => request_at(text, o, ctx.eof),
                (Some(o), Some(a)) if o < a => request_at(text, o, ctx.eof),
                (_, Some(a)) => object_before(text, cursor, a),
            };
            match step {
                Step::Skip(next) => cursor = next.max(cursor + 1),
                Step::Found(f) => {
                    let stop = matches!(f.kind, FoundKind::Pending);
                    cursor = f.span.end.max(cursor + 1);
                    out.push(f);
                    if stop {
                        return;
                    }
                }
                Step::Stop => return,
            }
        }
        if !ctx.eof {
            if let Some(s) = trailing_object(text, cursor) {
                out.push(Found::pending(line_number_start(text, s)..text.len()));
            }
        }
    }
}

/// While streaming: the start of a call object at the end of the text that may still be
/// followed by `[END_TOOL_REQUEST]` (unfinished, or finished with only whitespace or part
/// of the marker after it).
fn trailing_object(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from;
    while let Some(s) = find_byte(b, i, b.len(), |c| c == b'{') {
        let head = object_head(text, s);
        if head == Head::NotJson {
            i = s + 1;
            continue;
        }
        match scan::balanced_end(text, s, false) {
            Scan::Complete(e) => {
                let rest = text[e..].trim_start();
                if head == Head::Call && (rest.is_empty() || is_partial_of(rest, &[END_AFTER])) {
                    return Some(s);
                }
                i = e;
            }
            Scan::Invalid(at) => i = at + 1,
            Scan::Incomplete => return (head != Head::Other).then_some(s),
        }
    }
    None
}

enum Step {
    Skip(usize),
    Found(Found),
    Stop,
}

/// If one of the closing markers starts at `k`, its end.
fn closer_at(text: &str, k: usize) -> Option<usize> {
    let rest = text.get(k..)?;
    [CLOSE, END_AFTER]
        .iter()
        .find(|m| rest.starts_with(**m))
        .map(|m| k + m.len())
}

/// Form 1 at `o`.
fn request_at(text: &str, o: usize, eof: bool) -> Step {
    let b = text.as_bytes();
    let j = ws(text, o + OPEN.len());
    let malformed = |end: usize, name: Option<String>, reason: String| {
        Step::Found(Found::malformed(
            o..end,
            name,
            format!("malformed {OPEN}: {reason}"),
        ))
    };
    // The tool name, unless a whole call object follows.
    let (name, args_at) = match b.get(j) {
        None if !eof => return Step::Found(Found::pending(o..text.len())),
        None => return malformed(text.len(), None, "no tool name follows the marker".into()),
        Some(b'{') => (None, j),
        Some(_) => {
            let mut k = j;
            while b
                .get(k)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
            {
                k += 1;
            }
            let name = &text[j..k];
            if k >= b.len() && !eof {
                return Step::Found(Found::pending(o..text.len()));
            }
            if !scan::is_ident(name) {
                return malformed(
                    k.max(j + 1).min(text.len()),
                    None,
                    "expected a tool name".into(),
                );
            }
            let n = ws(text, k);
            if !eof && is_partial_of(&text[n..], &[CLOSE, END_AFTER]) {
                return Step::Found(Found::pending(o..text.len()));
            }
            if let Some(end) = closer_at(text, n) {
                let c = Candidate::new(name, Value::Object(Map::new()));
                return Step::Found(Found::call(o..end, c));
            }
            match b.get(n) {
                Some(b'{') => (Some(name.to_string()), n),
                None if !eof => return Step::Found(Found::pending(o..text.len())),
                None => {
                    return malformed(
                        text.len(),
                        Some(name.to_string()),
                        format!("missing {CLOSE}"),
                    )
                }
                Some(_) => {
                    return malformed(
                        n,
                        Some(name.to_string()),
                        "the arguments are not a JSON object".into(),
                    )
                }
            }
        }
    };
    let e = match scan::balanced_end(text, args_at, false) {
        Scan::Complete(e) => e,
        Scan::Incomplete if !eof => return Step::Found(Found::pending(o..text.len())),
        Scan::Incomplete => {
            return malformed(
                text.len(),
                name,
                "unterminated JSON (the text ends inside it)".into(),
            )
        }
        Scan::Invalid(at) => {
            return malformed(
                (at + 1).min(text.len()),
                name.or_else(|| guess_name(&text[args_at..])),
                format!("mismatched bracket at byte {} of the JSON", at - args_at),
            )
        }
    };
    let raw = &text[args_at..e];
    let parsed = match &name {
        Some(n) => scan::parse_args_json(raw).map(|a| Candidate::new(n.clone(), a)),
        None => parse_object(raw)
            .map_err(|r| format!("malformed JSON: {r}"))
            .and_then(|o| scan::call_from_object(&o)),
    };
    let k = ws(text, e);
    if !eof && is_partial_of(&text[k..], &[CLOSE, END_AFTER]) {
        return Step::Found(Found::pending(o..text.len()));
    }
    let end = match closer_at(text, k) {
        Some(end) => end,
        None if k >= text.len() && !eof => return Step::Found(Found::pending(o..text.len())),
        None if k >= text.len() => e,
        None => {
            let name = name.or_else(|| guess_name(raw));
            return malformed(e, name, format!("missing {CLOSE} after the arguments"));
        }
    };
    match parsed {
        Ok(c) => Step::Found(Found::call(o..end, c)),
        Err(reason) => malformed(end, name.or_else(|| guess_name(raw)), reason),
    }
}

/// Form 2: the call object that ends right before the `[END_TOOL_REQUEST]` at `a`,
/// searched forward from `from` (the end of the previous construct).
fn object_before(text: &str, from: usize, a: usize) -> Step {
    let b = text.as_bytes();
    let marker_end = a + END_AFTER.len();
    let mut i = from;
    while let Some(s) = b
        .get(i..a)
        .and_then(|r| r.iter().position(|&c| c == b'{'))
        .map(|p| i + p)
    {
        if object_head(text, s) == Head::NotJson {
            i = s + 1;
            continue;
        }
        match scan::balanced_end(text, s, false) {
            Scan::Complete(e) if e > a => {
                // The marker sits inside this JSON value: it is not a marker.
                return Step::Skip(e);
            }
            Scan::Complete(e) if ws(text, e) == a => {
                let start = line_number_start(text, s);
                let raw = &text[s..e];
                let parsed = parse_object(raw)
                    .map_err(|r| format!("malformed JSON before {END_AFTER}: {r}"))
                    .and_then(|o| scan::call_from_object(&o));
                return Step::Found(match parsed {
                    Ok(c) => Found::call(start..marker_end, c),
                    Err(reason) => Found::malformed(start..marker_end, guess_name(raw), reason),
                });
            }
            Scan::Complete(e) => i = e,
            // Broken JSON around the marker: the marker is part of it; resume after it.
            Scan::Invalid(at) if at >= a => return Step::Skip(at + 1),
            Scan::Invalid(at) => i = at + 1,
            Scan::Incomplete => return Step::Stop,
        }
    }
    Step::Found(Found::malformed(
        a..marker_end,
        None,
        format!("{END_AFTER} without a call object before it"),
    ))
}

/// LLxprt accepts a line number before the object (`1 {"name": …}`): if only digits and
/// spaces precede `s` on its line, the span starts at the line start.
fn line_number_start(text: &str, s: usize) -> usize {
    let b = text.as_bytes();
    let mut k = s;
    while k > 0 && matches!(b[k - 1], b' ' | b'\t') {
        k -= 1;
    }
    let digits_end = k;
    while k > 0 && b[k - 1].is_ascii_digit() {
        k -= 1;
    }
    if k < digits_end && (k == 0 || b[k - 1] == b'\n') {
        k
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, first_call as call, megabyte_of_each};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&ToolRequest, text, eof)
    }

    #[test]
    fn request_block() {
        let t = "Let me look.\n[TOOL_REQUEST]\nlist_directory {\"path\": \"/home/user\"}\n[TOOL_REQUEST_END]\nDone.";
        let out = run(t, true);
        assert_eq!(
            &t[out[0].span.clone()],
            "[TOOL_REQUEST]\nlist_directory {\"path\": \"/home/user\"}\n[TOOL_REQUEST_END]"
        );
        assert_eq!(
            call(&out[0]),
            ("list_directory".into(), json!({"path": "/home/user"}))
        );
    }

    #[test]
    fn request_variants() {
        assert_eq!(
            call(&run("[TOOL_REQUEST]\nget_time\n[TOOL_REQUEST_END]", true)[0]),
            ("get_time".into(), json!({}))
        );
        let t = "[TOOL_REQUEST]\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}\n[TOOL_REQUEST_END]";
        assert_eq!(
            call(&run(t, true)[0]),
            ("search".into(), json!({"query": "x"}))
        );
        let t = "[TOOL_REQUEST]\nget_weather {\"location\": \"Paris\"}";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let t2 = format!("{t}\n[TOOL_REQ");
        assert_eq!(run(&t2, false), vec![Found::pending(0..t2.len())]);
        let t3 = "Ok.\n1 {\"name\": \"get_time\", \"arguments\": {}}\n[END_TO";
        assert_eq!(run(t3, false), vec![Found::pending(4..t3.len())]);
        assert!(run("{\"data\": 1}", false).is_empty());
        assert_eq!(call(&run(t, true)[0]).0, "get_weather");
    }

    #[test]
    fn end_tool_request_form() {
        let t = "Searching.\n{\"name\": \"search\", \"arguments\": {\"query\": \"climate change\"}}\n[END_TOOL_REQUEST]\n";
        let out = run(t, true);
        assert_eq!(&t[out[0].span.clone()], "{\"name\": \"search\", \"arguments\": {\"query\": \"climate change\"}}\n[END_TOOL_REQUEST]");
        let t = "1 {\"name\": \"get_time\", \"arguments\": {}}[END_TOOL_REQUEST]";
        assert_eq!(run(t, true)[0].span, 0..t.len());
        let t = "{\"a\": {\"b\": 1}} {\"name\": \"get_time\", \"arguments\": {}} [END_TOOL_REQUEST] {\"name\": \"get_date\"}\n[END_TOOL_REQUEST]";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(call(&out[1]).0, "get_date");
    }

    #[test]
    fn malformed() {
        let out = run(
            "[TOOL_REQUEST]\nget_weather {\"location\": Paris}\n[TOOL_REQUEST_END]",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), .. } if n == "get_weather")
        );
        let out = run(
            "{\"name\": \"x\", \"arguments\": {,}}[END_TOOL_REQUEST]",
            true,
        );
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
        let out = run("Nothing here [END_TOOL_REQUEST]", true);
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(out[0].span, 13..31);
        let out = run(
            "[TOOL_REQUEST]\nget_weather {\"location\": \"Paris\"} and more",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("missing"))
        );
        let out = run("{\"x\": \"[END_TOOL_REQUEST]\"}", true);
        assert!(out.is_empty());
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "[TOOL_REQUEST]",
                "[END_TOOL_REQUEST]",
                "{[END_TOOL_REQUEST]",
                "{\"a\":[END_TOOL_REQUEST]",
                "[TOOL_REQUEST]a {",
                "{}[END_TOOL_REQUEST]",
            ],
            run,
        );
    }
}
