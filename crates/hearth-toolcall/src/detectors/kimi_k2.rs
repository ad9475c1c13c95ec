//! `kimi_k2`: Moonshot Kimi-K2 (Instruct, 0905, Thinking) tool calls.
//!
//! # Wire format
//!
//! ~~~text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"location": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>
//! ~~~
//!
//! Each marker is one special token. The call id `functions.NAME:IDX` is the model's own id
//! (IDX counts calls across the conversation) and is kept verbatim in `Candidate::id`; the
//! name is the part between `functions.` and the last `:`. Parallel calls sit in one
//! section, optionally separated by newlines (ik_llama.cpp's notes show one token per line).
//!
//! # What this detector accepts
//!
//! - one section with one or more calls → one `Found` with every call, ids kept;
//! - ids without the `functions.` prefix (`get_weather:0`, accepted by vLLM too) and ids
//!   without the `:IDX` suffix;
//! - the singular section spelling `<|tool_call_section_begin|>` / `<|tool_call_section_end|>`
//!   and the `<|tool_arguments_begin|>` argument marker, both as written in the token
//!   template of the Kimi K2 technical report (vLLM accepts the singular section tokens too
//!   because some checkpoints emit them);
//! - a bare `<|tool_call_begin|>…<|tool_call_end|>` with no section around it, and a
//!   section whose end marker never came after its last complete call;
//! - an empty argument slot means `{}`; arguments sent as a JSON-encoded string are decoded
//!   once.
//!
//! The arguments are the text between the argument marker and `<|tool_call_end|>` (the
//! special tokens never occur inside JSON), so a call's span does not depend on how much of
//! the output has arrived.
//!
//! Bad JSON, a missing id / argument marker, or text inside the section are `Malformed`
//! with the reason; an unfinished section while streaming is `Pending`. K2-Thinking may put
//! the section inside its reasoning; the framework's think handling decides about that.
//!
//! Sources: Kimi-K2 chat template, the Kimi K2 technical report (tool-call token template),
//! vLLM `kimi_k2_tool_parser.py`
//! and its tests, SGLang `KimiK2Detector`, ik_llama.cpp function-calling notes.

use super::shared::token_blocks::{describe, Boundary, Outcome};
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

pub struct KimiK2;

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_BEGIN_1: &str = "<|tool_call_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const SECTION_END_1: &str = "<|tool_call_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";
const ARG_BEGIN_1: &str = "<|tool_arguments_begin|>";
const CALL_END: &str = "<|tool_call_end|>";

impl Detector for KimiK2 {
    fn name(&self) -> &str {
        "kimi_k2"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[SECTION_BEGIN, SECTION_BEGIN_1, CALL_BEGIN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut bound = Boundary::new();
        let mut pos = 0;
        while let Some((start, tok, end)) =
            next_tok(text, pos, &[Tok::SectionBegin, Tok::CallBegin])
        {
            let (span_end, outcome) = parse_section(text, start, tok, end, ctx.eof, &mut bound);
            let span_end = span_end.max(start + 1);
            pos = span_end;
            out.push(outcome.into_found(start..span_end, text.len(), ctx.eof));
            if span_end >= text.len() {
                break;
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    SectionBegin,
    SectionEnd,
    CallBegin,
    ArgBegin,
    CallEnd,
}

const TOKENS: &[(&str, Tok)] = &[
    (SECTION_BEGIN, Tok::SectionBegin),
    (SECTION_BEGIN_1, Tok::SectionBegin),
    (SECTION_END, Tok::SectionEnd),
    (SECTION_END_1, Tok::SectionEnd),
    (CALL_BEGIN, Tok::CallBegin),
    (ARG_BEGIN, Tok::ArgBegin),
    (ARG_BEGIN_1, Tok::ArgBegin),
    (CALL_END, Tok::CallEnd),
];

enum TokMatch {
    Full(Tok, usize),
    Partial,
    No,
}

fn match_tok(text: &str, i: usize) -> TokMatch {
    let rest = text.as_bytes().get(i..).unwrap_or(&[]);
    let mut partial = false;
    for (lit, tok) in TOKENS {
        if rest.starts_with(lit.as_bytes()) {
            return TokMatch::Full(*tok, i + lit.len());
        }
        partial |= lit.as_bytes().starts_with(rest);
    }
    if partial {
        TokMatch::Partial
    } else {
        TokMatch::No
    }
}

/// The next token of one of `kinds` at or after `from`: (start, kind, end).
fn next_tok(text: &str, from: usize, kinds: &[Tok]) -> Option<(usize, Tok, usize)> {
    let mut at = from;
    loop {
        let p = scan::find_from(text, "<|tool_", at)?;
        if let TokMatch::Full(tok, end) = match_tok(text, p) {
            if kinds.contains(&tok) {
                return Some((p, tok, end));
            }
        }
        at = p + 1;
    }
}

enum CallRes {
    Ok(Candidate, usize),
    Incomplete(Option<String>),
    Fail {
        name: Option<String>,
        reason: String,
        at: usize,
    },
}

/// Longest id we follow, in bytes.
const ID_MAX: usize = 256;

/// `functions.get_weather:0` → `get_weather`; `get_weather:0` → `get_weather`.
fn name_of(id: &str) -> &str {
    let base = id.strip_prefix("functions.").unwrap_or(id);
    match base.rsplit_once(':') {
        Some((n, idx)) if !idx.is_empty() && idx.bytes().all(|c| c.is_ascii_digit()) => n,
        _ => base,
    }
}

/// One call, starting right after `<|tool_call_begin|>`; ends after `<|tool_call_end|>`.
fn parse_call(text: &str, i: usize) -> CallRes {
    let b = text.as_bytes();
    let w_end = (i + ID_MAX).min(b.len());
    let Some(lt) = b
        .get(i..w_end)
        .and_then(|w| memchr::memchr(b'<', w))
        .map(|p| p + i)
    else {
        if w_end == b.len() {
            return CallRes::Incomplete(None);
        }
        return CallRes::Fail {
            name: None,
            reason: "expected `<|tool_call_argument_begin|>` after the call id".into(),
            at: i,
        };
    };
    let id = text.get(i..lt).unwrap_or("").trim();
    let name = name_of(id);
    let named = scan::is_ident(name).then(|| name.to_string());
    let args_start = match match_tok(text, lt) {
        TokMatch::Full(Tok::ArgBegin, e) => e,
        TokMatch::Partial => return CallRes::Incomplete(named),
        _ => {
            return CallRes::Fail {
                name: named,
                reason: format!(
                    "expected `<|tool_call_argument_begin|>` after the call id, found {}",
                    describe(text, lt)
                ),
                at: lt,
            }
        }
    };
    if id.is_empty() {
        return CallRes::Fail {
            name: None,
            reason: "the call has no id (expected `functions.NAME:IDX`)".into(),
            at: args_start,
        };
    }
    if !scan::is_ident(name) {
        return CallRes::Fail {
            name: named,
            reason: format!("invalid function name `{name}` in call id `{id}`"),
            at: args_start,
        };
    }
    let fail = |reason: String, at: usize| CallRes::Fail {
        name: Some(name.to_string()),
        reason,
        at,
    };
    // The arguments run to the next Kimi token, which must end the call (the tokens never
    // occur inside JSON, so the span does not depend on how much has arrived).
    let Some((p, tok, end)) = next_tok(
        text,
        args_start,
        &[
            Tok::CallEnd,
            Tok::CallBegin,
            Tok::ArgBegin,
            Tok::SectionEnd,
            Tok::SectionBegin,
        ],
    ) else {
        return CallRes::Incomplete(named);
    };
    if tok != Tok::CallEnd {
        return fail(
            format!(
                "expected `<|tool_call_end|>` after the arguments, found {}",
                describe(text, p)
            ),
            p,
        );
    }
    let body = text.get(args_start..p).unwrap_or("").trim();
    if !body.is_empty() && !matches!(body.as_bytes()[0], b'{' | b'[' | b'"') {
        return fail(
            format!(
                "expected JSON arguments, found {}",
                describe(text, args_start)
            ),
            p,
        );
    }
    // An empty argument slot means no arguments.
    match scan::parse_args_json(body) {
        Ok(args) => CallRes::Ok(
            Candidate::new(name, args).with_id(Some(id.to_string())),
            end,
        ),
        Err(reason) => fail(reason, p),
    }
}

/// Where a broken section ends: its end marker, else the broken call's end, else just
/// before the next section, else the end of the text.
fn recover_end(
    text: &str,
    from: usize,
    sectioned: bool,
    eof: bool,
    bound: &mut Boundary<Tok>,
) -> usize {
    if !sectioned {
        return match next_tok(
            text,
            from,
            &[Tok::CallEnd, Tok::CallBegin, Tok::SectionBegin],
        ) {
            Some((_, Tok::CallEnd, e)) => e,
            Some((p, _, _)) => p,
            None => text.len(),
        };
    }
    let boundary = bound.next(from, |from| {
        next_tok(text, from, &[Tok::SectionEnd, Tok::SectionBegin])
    });
    if let Some((_, Tok::SectionEnd, e)) = boundary {
        return e;
    }
    if boundary.is_none() && !eof {
        // The section's end marker may still arrive: not settled yet.
        return text.len();
    }
    let limit = boundary.map(|b| b.0).unwrap_or(text.len());
    match next_tok(text, from, &[Tok::CallEnd, Tok::SectionBegin]) {
        Some((p, Tok::CallEnd, e)) if p < limit => e,
        _ => limit,
    }
}

fn parse_section(
    text: &str,
    start: usize,
    first: Tok,
    first_end: usize,
    eof: bool,
    bound: &mut Boundary<Tok>,
) -> (usize, Outcome) {
    let b = text.as_bytes();
    let sectioned = first == Tok::SectionBegin;
    let mut calls: Vec<Candidate> = Vec::new();
    let mut i = if sectioned { first_end } else { start };
    let done = |calls: Vec<Candidate>, end: usize| {
        (
            end,
            Outcome::calls_or(calls, "Kimi tool-call section holds no calls"),
        )
    };
    loop {
        let j = scan::skip_ws(text, i);
        if j >= b.len() {
            return if eof {
                done(calls, i)
            } else {
                (b.len(), Outcome::Pending)
            };
        }
        match match_tok(text, j) {
            TokMatch::Full(Tok::CallBegin, e) if sectioned || calls.is_empty() => {
                match parse_call(text, e) {
                    CallRes::Ok(c, end) => {
                        calls.push(c);
                        i = end;
                    }
                    CallRes::Incomplete(name) => {
                        if !eof {
                            return (b.len(), Outcome::Pending);
                        }
                        return (
                            b.len(),
                            Outcome::Malformed(
                                name,
                                "Kimi tool call is cut off: the text ends inside the call".into(),
                            ),
                        );
                    }
                    CallRes::Fail { name, reason, at } => {
                        let end = recover_end(text, at, sectioned, eof, bound).max(at.min(b.len()));
                        return (end, Outcome::failed("Kimi tool call", name, &reason));
                    }
                }
            }
            TokMatch::Full(Tok::SectionEnd, e) if sectioned => return done(calls, e),
            TokMatch::Partial if !eof => return (b.len(), Outcome::Pending),
            _ => {
                if calls.is_empty() {
                    // A section opener followed by something else entirely.
                    return (
                        first_end,
                        Outcome::Malformed(
                            None,
                            format!(
                                "expected `<|tool_call_begin|>` after the section begin marker, found {}",
                                describe(text, j)
                            ),
                        ),
                    );
                }
                // Not closed: the section ends after its last call.
                return done(calls, i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::detectors::shared::token_blocks::tests::{calls, reason, run};
    use serde_json::json;

    const TWO: &str = "I'll check both.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": \"Tokyo\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";

    fn ids(f: &Found) -> Vec<Option<String>> {
        match &f.kind {
            FoundKind::Calls(c) => c.iter().map(|c| c.id.clone()).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parallel_calls_keep_ids() {
        let out = run(&KimiK2, TWO, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![
                ("get_weather".into(), json!({"location": "Tokyo"})),
                ("get_time".into(), json!({}))
            ]
        );
        assert_eq!(
            ids(&out[0]),
            vec![
                Some("functions.get_weather:0".into()),
                Some("functions.get_time:1".into())
            ]
        );
        assert_eq!(&TWO[..out[0].span.start], "I'll check both.");
        assert_eq!(out[0].span.end, TWO.len());
    }

    #[test]
    fn variants() {
        let t = "<|tool_call_section_begin|>\n<|tool_call_begin|>\nget_date:3\n<|tool_call_argument_begin|>\n{}\n<|tool_call_end|>\n<|tool_call_section_end|>";
        let out = run(&KimiK2, t, true);
        assert_eq!(calls(&out[0]), vec![("get_date".into(), json!({}))]);
        assert_eq!(ids(&out[0]), vec![Some("get_date:3".into())]);
        assert_eq!(out[0].span, 0..t.len());
        let bare = "ok <|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"x\":1,\"y\":2}<|tool_call_end|> then";
        let out = run(&KimiK2, bare, true);
        assert_eq!(
            calls(&out[0]),
            vec![("add".into(), json!({"x": 1, "y": 2}))]
        );
        assert_eq!(&bare[out[0].span.end..], " then");
        let unclosed = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_arguments_begin|>{}<|tool_call_end|>";
        assert_eq!(
            calls(&run(&KimiK2, unclosed, true)[0]),
            vec![("get_time".into(), json!({}))]
        );
        assert_eq!(run(&KimiK2, unclosed, false)[0].kind, FoundKind::Pending);
        assert_eq!(name_of("functions.mcp.search:12"), "mcp.search");
        assert_eq!(name_of("functions.get_time"), "get_time");
    }

    #[test]
    fn malformed() {
        let t = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": Tokyo}<|tool_call_end|><|tool_calls_section_end|> Sorry.";
        let out = run(&KimiK2, t, true);
        let r = reason(&out[0]);
        assert!(
            r.contains("get_weather") && r.contains("malformed JSON"),
            "{r}"
        );
        assert_eq!(&t[out[0].span.end..], " Sorry.");
        let t = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0{\"location\": \"x\"}<|tool_call_end|><|tool_calls_section_end|>";
        assert!(reason(&run(&KimiK2, t, true)[0]).contains("argument"));
        let t = "<|tool_calls_section_begin|><|tool_call_begin|><|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
        assert!(reason(&run(&KimiK2, t, true)[0]).contains("no id"));
        let t = "<|tool_calls_section_begin|><|tool_calls_section_end|>";
        assert!(reason(&run(&KimiK2, t, true)[0]).contains("no calls"));
    }

    #[test]
    fn streaming_prefixes_are_pending() {
        let start = TWO.find('<').unwrap();
        for cut in start + SECTION_BEGIN.len()..TWO.len() {
            let out = run(&KimiK2, &TWO[..cut], false);
            assert_eq!(out.len(), 1, "{:?}", &TWO[..cut]);
            assert_eq!(out[0].kind, FoundKind::Pending, "{:?}", &TWO[..cut]);
        }
        let out = run(&KimiK2, &TWO[..TWO.len() - 60], true);
        assert!(reason(&out[0]).contains("cut off"), "{out:?}");
    }

    #[test]
    fn deepseek_and_prose_are_not_kimi() {
        assert!(run(&KimiK2, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜>", true).is_empty());
        assert!(run(&KimiK2, "Kimi writes <|tool_", true).is_empty());
    }

    #[test]
    fn adversarial_input_is_fast() {
        for p in [
            SECTION_BEGIN,
            CALL_BEGIN,
            "<|tool_call_begin|>f:0<|tool_call_argument_begin|>{]",
            "<|tool_calls_section_begin|><|tool_call_begin|>f:0<|tool_call_argument_begin|>{\"a\":[",
            "<|tool_",
        ] {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&KimiK2, &t, true);
            let _ = run(&KimiK2, &t, false);
        }
    }
}
