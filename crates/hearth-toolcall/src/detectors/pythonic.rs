//! `pythonic`: Python-call-syntax tool calls (loose).
//!
//! What it looks like (Meta's Llama 3.2 / 3.3 zero-shot prompt format, Llama 4's
//! pythonic format, ToolACE, the vLLM `pythonic` / `llama4_pythonic` parsers and tests):
//!
//! ```text
//! [get_weather(location='Paris', unit="celsius"), get_time()]
//! <|python_start|>[set_light(room='kitchen', on=True)]<|python_end|>
//! get_time()
//! ```
//!
//! - A list of calls `[name(key=value, …), …]`; values are Python literals only (strings
//!   with either quote and escapes, numbers, `True`/`False`/`None`, lists, tuples, dicts,
//!   nested), parsed by [`pyliteral`]; nothing is evaluated.
//! - Llama 4 wraps the list in `<|python_start|>` … `<|python_end|>`; the markers are part
//!   of the span. A missing `<|python_end|>` at the end of the output is accepted. A marker
//!   followed by something that is not a call is malformed and only the marker is claimed
//!   (a stray `<|python_end|>` is a special token the reply drops anyway).
//! - An "inline" call: a single `name(key=value)` that is the ENTIRE reply (trimmed, after
//!   any think block, ignoring trailing special tokens).
//! - A fenced list (```` ```tool_code ```` / ```` ``` ````) has its span widened over the fence.
//!
//! Conservative rules, because this runs on prose:
//! - a list is only looked at when `[` is followed by an identifier and then directly by
//!   `(` (so `[see below]`, `[1, 2]`, `[Note (draft)]` are skipped), not when it indexes
//!   something (`a[f(x)]`), and not when it is the text of a markdown link
//!   (`[f(x)](https://…)`, `[text](url)`);
//! - it must parse completely with keyword arguments only; a list that does not parse is
//!   reported malformed only when it is the entire reply or sits between the Llama 4
//!   markers, and is otherwise ignored; the inline form is never reported malformed;
//! - names are identifiers (letters, digits, `_`, `.`, `-`);
//! - a list right after another format's opening marker (`<|tool_call_start|>[…]`,
//!   `[TOOL_CALLS][…]`) is that format's payload and is skipped.
//! - While streaming, a list whose head (`[name(`) is complete but whose end is not is
//!   pending, and so is a `[` or `[name` at the very end of the text, and a first word
//!   that may still become an inline call (`get_ti`). For that last reason the detector
//!   has no trigger and always runs (the inline form has no marker).

use super::shared::json_finder::{find_byte, is_partial_of, ws, Finder};
use super::shared::json_object::{after_wrapper_tag, widen, Whole};
use super::shared::py_calls::candidates;
use crate::detector::{DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::pyliteral;
use crate::scan::{self, Scan};

pub struct Pythonic;

const PY_START: &str = "<|python_start|>";
const PY_END: &str = "<|python_end|>";

impl Detector for Pythonic {
    fn name(&self) -> &str {
        "pythonic"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Loose
    }
    fn triggers(&self) -> &[&str] {
        // Always run: the inline form (`get_time()` as the whole reply) has no marker, and
        // while streaming its first word must be held back before its `(` arrives.
        &[]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let whole = Whole::of(text);
        // The inline form covers the reply after any think block; lists are looked for
        // only before it (inside reasoning, where the framework judges them).
        let inline = inline_call(text, whole, ctx.eof);
        let cap = inline.as_ref().map_or(text.len(), |f| f.span.start);
        let b = text.as_bytes();
        let mut starts = Finder::new(PY_START);
        let mut cursor = 0;
        let mut last_end = 0;
        loop {
            let next_start = starts.next(text, cursor).filter(|p| *p < cap);
            let limit = next_start.unwrap_or(cap);
            let bracket = find_byte(b, cursor, limit, |c| c == b'[');
            let step = match (bracket, next_start) {
                (Some(s), _) => list_at(text, s, ctx.eof, whole, last_end),
                (None, Some(p)) => marked_at(text, p, ctx.eof),
                (None, None) => break,
            };
            match step {
                Step::Skip(next) => cursor = next.max(cursor + 1),
                Step::Found(f) => {
                    let stop = matches!(f.kind, FoundKind::Pending);
                    cursor = f.span.end.max(cursor + 1);
                    last_end = f.span.end;
                    out.push(f);
                    if stop {
                        return;
                    }
                }
                Step::Stop => return,
            }
        }
        if let Some(f) = inline {
            if last_end <= f.span.start {
                out.push(f);
            }
        }
    }
}

pub(crate) enum Step {
    /// Nothing here; continue at this offset.
    Skip(usize),
    Found(Found),
    /// The rest of the text is inside an unterminated value.
    Stop,
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-'
}

/// The end of an identifier starting at `j` (`j` itself if there is none).
fn ident_end(b: &[u8], j: usize) -> usize {
    let mut k = j;
    while b.get(k).is_some_and(|c| is_name_byte(*c)) {
        k += 1;
    }
    if b.get(j)
        .is_some_and(|c| c.is_ascii_digit() || *c == b'.' || *c == b'-')
    {
        return j;
    }
    k
}

/// A `[name(…), …]` list at `s`.
fn list_at(text: &str, s: usize, eof: bool, whole: Whole, floor: usize) -> Step {
    let b = text.as_bytes();
    if s > 0
        && b.get(s - 1)
            .is_some_and(|c| is_name_byte(*c) || matches!(c, b']' | b')'))
    {
        return Step::Skip(s + 1);
    }
    let j = {
        let mut j = s + 1;
        while b.get(j).is_some_and(|c| c.is_ascii_whitespace()) {
            j += 1;
        }
        j
    };
    let k = ident_end(b, j);
    if k >= b.len() {
        // `[` or `[get_wea` at the very end of a stream.
        let only_name = b[j..].iter().all(|c| is_name_byte(*c));
        return if !eof && only_name {
            Step::Found(Found::pending(s..text.len()))
        } else {
            Step::Skip(s + 1)
        };
    }
    if k == j || b.get(k) != Some(&b'(') {
        return Step::Skip(s + 1);
    }
    if after_wrapper_tag(text, s) {
        // Another format's payload (`<|tool_call_start|>[…]`): its own detector judges it.
        return match scan::balanced_end(text, s, true) {
            Scan::Complete(e) => Step::Skip(e),
            Scan::Invalid(at) => Step::Skip(at + 1),
            Scan::Incomplete => Step::Stop,
        };
    }
    match scan::balanced_end(text, s, true) {
        Scan::Complete(e) => {
            if b.get(e) == Some(&b'(') {
                // `[f(x)](https://…)`: the text of a markdown link.
                return Step::Skip(e);
            }
            let (a, z) = widen(text, s, e, floor);
            match pyliteral::parse_call_list(&text[s..e]) {
                Ok(calls) => Step::Found(Found::calls(a..z, candidates(calls))),
                Err(reason) if whole.covers(a, z) => Step::Found(Found::malformed(
                    a..z,
                    Some(text[j..k].to_string()),
                    format!("malformed pythonic call list: {reason}"),
                )),
                Err(_) => Step::Skip(e),
            }
        }
        Scan::Invalid(at) => Step::Skip(at + 1),
        Scan::Incomplete => {
            if !eof {
                Step::Found(Found::pending(s..text.len()))
            } else if whole.covers(s, text.len()) {
                Step::Found(Found::malformed(
                    s..text.len(),
                    Some(text[j..k].to_string()),
                    "malformed pythonic call list: unterminated list (the text ends inside it)",
                ))
            } else {
                Step::Stop
            }
        }
    }
}

/// Llama 4: `<|python_start|>[…]<|python_end|>` at `p`.
fn marked_at(text: &str, p: usize, eof: bool) -> Step {
    let b = text.as_bytes();
    let j = ws(text, p + PY_START.len());
    let malformed = |end: usize, reason: String| {
        Step::Found(Found::malformed(
            p..end,
            None,
            format!("malformed pythonic call after <|python_start|>: {reason}"),
        ))
    };
    let (close, list) = match b.get(j) {
        None if !eof => return Step::Found(Found::pending(p..text.len())),
        None => return malformed(text.len(), "no call follows the marker".into()),
        Some(b'[') => (j, true),
        Some(_) => {
            let k = ident_end(b, j);
            if k >= b.len() && !eof {
                // `<|python_start|>get_ti`: may still become a call.
                return Step::Found(Found::pending(p..text.len()));
            }
            if k == j || b.get(k) != Some(&b'(') {
                // Only the marker is claimed: what follows is not a call, and a span that
                // waited for `<|python_end|>` would be undecided while streaming.
                return malformed(j, "expected a call list `[name(…)]`".into());
            }
            (k, false)
        }
    };
    let e = match scan::balanced_end(text, close, true) {
        Scan::Complete(e) => e,
        Scan::Incomplete if !eof => return Step::Found(Found::pending(p..text.len())),
        Scan::Incomplete => {
            return malformed(
                text.len(),
                "unterminated call (the text ends inside it)".into(),
            )
        }
        Scan::Invalid(at) => {
            return malformed((at + 1).min(text.len()), "mismatched bracket".into());
        }
    };
    let parsed = if list {
        pyliteral::parse_call_list(&text[j..e]).map(candidates)
    } else {
        pyliteral::parse_call(&text[j..e]).map(|c| candidates(vec![c]))
    };
    let k = ws(text, e);
    let rest = text.get(k..).unwrap_or("");
    let end = if rest.starts_with(PY_END) {
        k + PY_END.len()
    } else if !eof && (k >= text.len() || is_partial_of(rest, &[PY_END])) {
        return Step::Found(Found::pending(p..text.len()));
    } else {
        e
    };
    match parsed {
        Ok(calls) => Step::Found(Found::calls(p..end, calls)),
        Err(reason) => malformed(end, reason),
    }
}

/// A single `name(k=v)` that is the entire reply.
fn inline_call(text: &str, whole: Whole, eof: bool) -> Option<Found> {
    let b = text.as_bytes();
    let (lead, tail) = (whole.lead, whole.tail);
    let k = ident_end(b, lead);
    if k > lead && k >= b.len() && !eof {
        // `get_ti`: may still become `get_time()`.
        return Some(Found::pending(lead..text.len()));
    }
    if k == lead || b.get(k) != Some(&b'(') {
        return None;
    }
    match scan::balanced_end(text, k, true) {
        Scan::Complete(e) if e == tail => {
            let c = pyliteral::parse_call(&text[lead..tail]).ok()?;
            Some(Found::calls(lead..tail, candidates(vec![c])))
        }
        Scan::Incomplete if !eof => Some(Found::pending(lead..text.len())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, megabyte_of_each, named_args as calls};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Pythonic, text, eof)
    }

    #[test]
    fn list_with_literals() {
        let t = "[register(name='John Doe', age=37, address={'city': 'SF'}, role=None, ok=True, aliases=['J', \"Jo\"]), get_time()]";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        let c = calls(&out[0]);
        assert_eq!(
            c[0].1,
            json!({"name": "John Doe", "age": 37, "address": {"city": "SF"}, "role": null, "ok": true, "aliases": ["J", "Jo"]})
        );
        assert_eq!(c[1], ("get_time".to_string(), json!({})));
    }

    #[test]
    fn list_in_prose_and_escapes() {
        let t = "Sure! [send_message(to='Bob', text='It\\'s \"done\" [ok]')] Sent.";
        let out = run(t, true);
        assert_eq!(
            &t[out[0].span.clone()],
            "[send_message(to='Bob', text='It\\'s \"done\" [ok]')]"
        );
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"to": "Bob", "text": "It's \"done\" [ok]"})
        );
    }

    #[test]
    fn llama4_markers() {
        let t = "<|python_start|>[get_weather(location=\"Paris\")]<|python_end|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        let t = "<|python_start|>get_time()<|python_end|>";
        assert_eq!(calls(&run(t, true)[0])[0].0, "get_time");
        let t = "<|python_start|>[get_time(]<|python_end|>";
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        let t = "<|python_start|>[get_time()]";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(run(t, true)[0].span, 0..t.len());
        for eof in [true, false] {
            let out = run("<|python_start|>>>>x y", eof);
            assert_eq!(out[0].span, 0..16);
            assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
        }
        assert_eq!(
            run("<|python_start|>get_ti", false),
            vec![Found::pending(0..22)]
        );
    }

    #[test]
    fn inline_whole_reply() {
        let out = run("  set_light(room='kitchen', on=True)\n<|eot_id|>", true);
        assert_eq!(calls(&out[0])[0].1, json!({"room": "kitchen", "on": true}));
        assert!(run("f(x)", true).is_empty());
        assert!(run("Call get_time() now", true).is_empty());
    }

    #[test]
    fn prose_is_not_a_call() {
        for t in [
            "See [the docs](https://example.com) and [see below].",
            "[click here](http://x) or [f(x=1)](http://y)",
            "Values [1, 2, 3] and a[f(x=1)] and [Note (draft)].",
            "A list: [Paris(France), Rome(Italy)] is nice.",
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
    }

    #[test]
    fn malformed_only_when_whole() {
        let out = run("[get_weather('Paris')]", true);
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("positional"))
        );
        assert!(run("Maybe [get_weather('Paris')] works.", true).is_empty());
    }

    #[test]
    fn fenced_list_widens() {
        let t = "```tool_code\n[get_time()]\n```";
        assert_eq!(run(t, true)[0].span, 0..t.len());
    }

    #[test]
    fn streaming() {
        let t = "Ok [get_weather(location='Par";
        assert_eq!(run(t, false), vec![Found::pending(3..t.len())]);
        assert!(run(t, true).is_empty());
        assert_eq!(run("Ok [get_wea", false), vec![Found::pending(3..11)]);
        assert_eq!(run("Ok [", false), vec![Found::pending(3..4)]);
        assert!(run("Ok [", true).is_empty());
        assert_eq!(run("get_time(", false), vec![Found::pending(0..9)]);
        assert_eq!(run("get_ti", false), vec![Found::pending(0..6)]);
        assert!(run("get_ti", true).is_empty());
        assert!(run("Hello there", false).is_empty());
        let t = "[get_time()]</think>Hello";
        let out = run(t, false);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], Found::pending(20..25));
        assert!(run("Hello([/THINK]{}", false).is_empty());
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "[f(",
                "[",
                "[f(x=1)]",
                "[f('",
                "<|python_start|>",
                "<|python_start|>[f(",
                "(",
                "[a(b) ",
            ],
            run,
        );
    }
}
