//! `llama31_function`: `<function=NAME>{json}</function>` (Llama 3.1 custom tools,
//! Functionary v3.1).
//!
//! What it looks like (Meta's Llama 3.1 prompt-format page, "custom tool calling" section;
//! MeetKai Functionary v3.1's template; llama.cpp's Functionary v3.1 / Llama 3.1 parser
//! and tests; LLxprt's format list):
//!
//! ```text
//! <function=get_weather>{"location": "Paris"}</function>
//! Hell<function=foo>{"arg1": 1}</function>o, world<function=bar>{"arg2": 2}</function>!
//! <function=get_time>{}</function><|eom_id|>
//! ```
//!
//! - The system prompt asks for `<function=NAME>` + a JSON object of arguments +
//!   `</function>`, "on one line", possibly several in a row; text may surround them.
//! - The end tokens that follow a call (`<|eom_id|>`, `<|eot_id|>`) are part of its span.
//! - `</function>` may be missing when the call is the last thing in the output, or when
//!   the next `<function=` or an end token follows; any other text after the arguments
//!   without the close tag is malformed. While streaming, a call whose close tag has not
//!   arrived yet is pending.
//! - An empty body (`<function=get_time></function>`) means no arguments.
//! - Malformed calls: broken JSON is claimed up to the end of the JSON (and the close tag
//!   when it follows); a body that is not JSON at all, or brackets that do not match,
//!   claim only the tag / the JSON up to the mismatch, so the span never depends on text
//!   that has not streamed in yet.
//! - `<function=NAME>` followed by `<parameter=…>` is Qwen3-Coder's XML format, not this
//!   one: it is left alone (as is any body that starts with `<`).
//! - Functionary v3.1's `<|python_tag|>` code calls are handled by the `llama32` detector.

use super::shared::end_tokens::{skip_end_tokens, LLAMA_END_TOKENS};
use super::shared::json_finder::{args_end, is_partial_of, ws, ArgsEnd, Finder};
use super::shared::json_object::guess_name;
use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::scan;

pub struct Llama31Function;

const OPEN: &str = "<function=";
const CLOSE: &str = "</function>";

/// Longest tag name looked at (`<function=` … `>`).
const MAX_NAME: usize = 256;

impl Detector for Llama31Function {
    fn name(&self) -> &str {
        "llama31_function"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Finder::new(OPEN);
        let mut cursor = 0;
        while let Some(s) = opens.next(text, cursor) {
            match call_at(text, s, ctx.eof) {
                Step::Skip(next) => cursor = next.max(s + 1),
                Step::Found(f) => {
                    let stop = matches!(f.kind, FoundKind::Pending);
                    cursor = f.span.end.max(s + 1);
                    out.push(f);
                    if stop {
                        return;
                    }
                }
            }
        }
    }
}

enum Step {
    Skip(usize),
    Found(Found),
}

fn call_at(text: &str, s: usize, eof: bool) -> Step {
    let b = text.as_bytes();
    let name_start = s + OPEN.len();
    let window_end = (name_start + MAX_NAME + 1).min(b.len());
    let gt = b
        .get(name_start..window_end)
        .and_then(|w| w.iter().position(|&c| matches!(c, b'>' | b'\n' | b'<')))
        .map(|p| name_start + p);
    let gt = match gt {
        Some(p) if b[p] == b'>' => p,
        Some(_) => return Step::Skip(name_start),
        None if window_end == b.len() && !eof => {
            return Step::Found(Found::pending(s..text.len()));
        }
        None => return Step::Skip(name_start),
    };
    let raw = text[name_start..gt].trim();
    let name = raw.trim_matches(|c| c == '"' || c == '\'');
    if !scan::is_ident(name) {
        return Step::Skip(gt);
    }
    let body = gt + 1;
    let j = ws(text, body);
    let malformed = |end: usize, reason: String| {
        Step::Found(Found::malformed(
            s..end,
            Some(name.to_string()),
            format!("malformed <function={name}> call: {reason}"),
        ))
    };
    match b.get(j) {
        None if !eof => return Step::Found(Found::pending(s..text.len())),
        None => return malformed(text.len(), "no arguments follow the tag".into()),
        Some(b'<') => {
            if !eof && is_partial_of(&text[j..], &[CLOSE]) {
                return Step::Found(Found::pending(s..text.len()));
            }
            if text[j..].starts_with(CLOSE) {
                let end =
                    skip_end_tokens(text, j + CLOSE.len(), LLAMA_END_TOKENS).max(j + CLOSE.len());
                return Step::Found(Found::call(
                    s..end,
                    Candidate::new(name, serde_json::json!({})),
                ));
            }
            // `<function=x>\n<parameter=…>`: another format's markup.
            return Step::Skip(body);
        }
        Some(b'{') => {}
        Some(_) => {
            // Only the tag is claimed: where the broken body ends is not knowable while
            // streaming, and a span that shrinks at the end of the output is not stable.
            return malformed(body, "the arguments are not a JSON object".into());
        }
    }
    let e = match args_end(text, j, eof) {
        ArgsEnd::Complete(e) => e,
        ArgsEnd::Pending => return Step::Found(Found::pending(s..text.len())),
        ArgsEnd::Malformed(end, reason) => return malformed(end, reason),
    };
    let args = scan::parse_args_json(&text[j..e]);
    let k = ws(text, e);
    let rest = text.get(k..).unwrap_or("");
    if !eof && (is_partial_of(rest, &[CLOSE, OPEN]) || is_partial_of(rest, LLAMA_END_TOKENS)) {
        return Step::Found(Found::pending(s..text.len()));
    }
    let end = if rest.starts_with(CLOSE) {
        skip_end_tokens(text, k + CLOSE.len(), LLAMA_END_TOKENS).max(k + CLOSE.len())
    } else if rest.is_empty() {
        if !eof {
            return Step::Found(Found::pending(s..text.len()));
        }
        e
    } else if rest.starts_with(OPEN) || LLAMA_END_TOKENS.iter().any(|t| rest.starts_with(t)) {
        skip_end_tokens(text, e, LLAMA_END_TOKENS)
    } else {
        return malformed(e, format!("expected {CLOSE} after the arguments"));
    };
    match args {
        Ok(v) => Step::Found(Found::call(s..end, Candidate::new(name, v))),
        Err(reason) => Step::Found(Found::malformed(
            s..end,
            Some(name.to_string()).or_else(|| guess_name(&text[j..e])),
            format!("malformed <function={name}> call: {reason}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, first_call as call, megabyte_of_each};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Llama31Function, text, eof)
    }

    #[test]
    fn basic_and_end_token() {
        let t = "<function=get_weather>{\"location\": \"Paris\"}</function><|eom_id|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(
            call(&out[0]),
            ("get_weather".into(), json!({"location": "Paris"}))
        );
    }

    #[test]
    fn interleaved_with_text() {
        let t = "Hell<function=foo>{\"arg1\": 1}</function>o, world<function=bar>{\"arg2\": 2}</function>!";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        let mut reply = String::new();
        let mut at = 0;
        for f in &out {
            reply.push_str(&t[at..f.span.start]);
            at = f.span.end;
        }
        reply.push_str(&t[at..]);
        assert_eq!(reply, "Hello, world!");
    }

    #[test]
    fn missing_close() {
        let t = "<function=get_time>{}";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(call(&run(t, true)[0]).0, "get_time");
        let t = "<function=get_time>{}<function=get_date>{}</function>";
        assert_eq!(run(t, true).len(), 2);
        let t = "<function=get_time>{}<|eot_id|>";
        assert_eq!(run(t, true)[0].span, 0..t.len());
        let t = "<function=get_time>{} and then text";
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn empty_body_and_other_formats() {
        assert_eq!(
            call(&run("<function=get_time></function>", true)[0]),
            ("get_time".into(), json!({}))
        );
        assert!(run("<tool_call>\n<function=get_time>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>", true).is_empty());
        assert!(run("a <function=not a name> b", true).is_empty());
    }

    #[test]
    fn malformed() {
        let out = run(
            "<function=get_weather>{\"location\": Paris}</function>",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), reason } if n == "get_weather" && reason.contains("malformed JSON"))
        );
        let out = run("<function=get_weather>Paris</function>", true);
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
        let t = "<function=get_weather>{\"a\": [}</function> ok";
        assert_eq!(run(t, true)[0].span.end, t.find('}').unwrap() + 1);
    }

    #[test]
    fn streaming_partial_tag() {
        assert_eq!(
            run("x <function=get_ti", false),
            vec![Found::pending(2..18)]
        );
        assert!(run("x <function=get_ti", true).is_empty());
        let t = "<function=get_time>{} </fun";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let t = "<function=get_time>Paris";
        assert_eq!(run(t, false)[0].span, 0..19);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "<function=",
                "<function=a>",
                "<function=a>{",
                "<function=a>{}",
                "<function=a>x",
            ],
            run,
        );
    }
}
