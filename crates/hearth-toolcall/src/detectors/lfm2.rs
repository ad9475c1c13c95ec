//! `lfm2`: Liquid AI LFM2 / LFM2.5 tool calls.
//!
//! What it looks like (the LFM2 / LFM2.5 model cards and chat template, SGLang's LFM2
//! detector, MLX-LM's pythonic parser):
//!
//! ```text
//! <|tool_call_start|>[get_candidate_status(candidate_id="12345")]<|tool_call_end|>Checking now.
//! <|tool_call_start|>[get_time(), get_weather(location='Paris')]<|tool_call_end|>
//! <|tool_call_start|>[{"name": "get_time", "arguments": {}}]<|tool_call_end|>
//! ```
//!
//! - `<|tool_call_start|>` and `<|tool_call_end|>` are special tokens (ids 10 and 11);
//!   between them the model writes a pythonic call list by default (values are Python
//!   literals, parsed by [`pyliteral`]), or a JSON call list when the system prompt asks
//!   for JSON. A single JSON object or a single `name(…)` without brackets is accepted too.
//! - Text usually follows the end marker on the same line ("Checking now."); it stays in
//!   the reply.
//! - A missing `<|tool_call_end|>` is accepted only at the very end of the output
//!   (generation stopped on it); if other text follows instead, the construct is malformed.
//! - Anything between the markers that does not parse is malformed (the reason names the
//!   parse error); while streaming an unfinished construct is pending from its start marker.

use super::shared::construct_end::close_construct;
use super::shared::json_finder::{ws, Finder};
use super::shared::py_calls::candidates;
use crate::detector::{DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::pyliteral;
use crate::scan::{self, Scan};

pub struct Lfm2;

const START: &str = "<|tool_call_start|>";
const END: &str = "<|tool_call_end|>";

impl Detector for Lfm2 {
    fn name(&self) -> &str {
        "lfm2"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[START]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut starts = Finder::new(START);
        let mut ends = Finder::new(END);
        let mut cursor = 0;
        while let Some(s) = starts.next(text, cursor) {
            let f = construct_at(text, s, ctx.eof, &mut ends);
            let stop = matches!(f.kind, FoundKind::Pending) || f.span.end >= text.len();
            cursor = f.span.end.max(s + START.len());
            out.push(f);
            if stop {
                return;
            }
        }
    }
}

fn construct_at(text: &str, s: usize, eof: bool, ends: &mut Finder) -> Found {
    let b = text.as_bytes();
    let j = ws(text, s + START.len());
    // A broken construct ends at its end marker; while streaming without one, it may
    // still grow.
    let broken = |ends: &mut Finder, at: usize, reason: String| match ends.next(text, j) {
        None if !eof => Found::pending(s..text.len()),
        close => {
            let end = close.map(|q| q + END.len()).unwrap_or(text.len()).max(at);
            Found::malformed(s..end, None, format!("malformed call in {START}: {reason}"))
        }
    };
    let (close_from, kind) = match b.get(j) {
        None if !eof => return Found::pending(s..text.len()),
        None => return broken(ends, text.len(), "no call follows the start marker".into()),
        Some(b'[') => {
            let json = b.get(ws(text, j + 1)) == Some(&b'{');
            (j, if json { Body::JsonList } else { Body::PyList })
        }
        Some(b'{') => (j, Body::JsonList),
        Some(_) => {
            let k = ident_end(b, j);
            if k == j || b.get(k) != Some(&b'(') {
                return broken(ends, j, "expected a call list `[name(…)]`".into());
            }
            (k, Body::PyCall)
        }
    };
    let e = match scan::balanced_end(text, close_from, kind != Body::JsonList) {
        Scan::Complete(e) => e,
        Scan::Incomplete if !eof => return Found::pending(s..text.len()),
        Scan::Incomplete => {
            return Found::malformed(
                s..text.len(),
                None,
                format!("malformed call in {START}: unterminated call (the text ends inside it)"),
            )
        }
        Scan::Invalid(at) => {
            return broken(
                ends,
                at + 1,
                format!("mismatched bracket at byte {}", at - j),
            )
        }
    };
    let inner = &text[j..e];
    let parsed = match kind {
        Body::JsonList => scan::parse_calls_json(inner),
        Body::PyList => pyliteral::parse_call_list(inner).map(candidates),
        Body::PyCall => pyliteral::parse_call(inner).map(|c| candidates(vec![c])),
    };
    let parsed = parsed.map_err(|r| format!("malformed call in {START}: {r}"));
    close_construct(text, s, e, eof, END, parsed, false)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    JsonList,
    PyList,
    PyCall,
}

fn ident_end(b: &[u8], j: usize) -> usize {
    if b.get(j).is_none_or(|c| c.is_ascii_digit()) {
        return j;
    }
    let mut k = j;
    while b
        .get(k)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
    {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, megabyte_of_each, named_args as calls};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Lfm2, text, eof)
    }

    #[test]
    fn pythonic_list_then_text() {
        let t = "<|tool_call_start|>[get_candidate_status(candidate_id=\"12345\")]<|tool_call_end|>Checking now.";
        let out = run(t, true);
        assert_eq!(&t[out[0].span.end..], "Checking now.");
        assert_eq!(
            calls(&out[0]),
            [(
                "get_candidate_status".to_string(),
                json!({"candidate_id": "12345"})
            )]
        );
    }

    #[test]
    fn json_list_and_parallel() {
        let t = "<|tool_call_start|>[{\"name\": \"get_time\", \"arguments\": {}}, {\"name\": \"add\", \"arguments\": {\"x\": 1, \"y\": 2}}]<|tool_call_end|>";
        assert_eq!(calls(&run(t, true)[0]).len(), 2);
        let t =
            "<|tool_call_start|>[get_time(), set_light(room='hall', on=False)]<|tool_call_end|>";
        assert_eq!(
            calls(&run(t, true)[0])[1].1,
            json!({"room": "hall", "on": false})
        );
    }

    #[test]
    fn unclosed() {
        let t = "<|tool_call_start|>[get_time()]";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(run(t, true)[0].span, 0..t.len());
        let t = "<|tool_call_start|>[get_time()] and more";
        assert!(
            matches!(&run(t, true)[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("missing"))
        );
        let t = "<|tool_call_start|>[get_time(";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn malformed_payloads() {
        for t in [
            "<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>",
            "<|tool_call_start|>[{\"name\": \"x\", }]<|tool_call_end|>",
            "<|tool_call_start|>hello<|tool_call_end|>",
            "<|tool_call_start|>[f(]<|tool_call_end|>",
        ] {
            let out = run(t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].span, 0..t.len(), "{t}");
            assert!(matches!(out[0].kind, FoundKind::Malformed { .. }), "{t}");
        }
    }

    #[test]
    fn two_constructs() {
        let t = "<|tool_call_start|>[get_time()]<|tool_call_end|> then <|tool_call_start|>[get_date()]<|tool_call_end|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[1])[0].0, "get_date");
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "<|tool_call_start|>",
                "<|tool_call_start|>[f(",
                "<|tool_call_start|>[",
                "<|tool_call_start|>x",
            ],
            run,
        );
    }
}
