//! `gigachat3`: Sber GigaChat 3 (and 3.1) function calls.
//!
//! # Wire format
//!
//! GigaChat's chat format is a list of role messages, `ROLE<|role_sep|>\nCONTENT` separated
//! by `<|message_sep|>\n\n`. A call is a separate message of the role `function call`
//! right after the assistant's text, holding one JSON object:
//!
//! ```text
//! I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", "arguments": {"city": "Moscow"}}
//! ```
//!
//! GigaChat 3.1 replaced the role header by one token:
//!
//! ```text
//! I'll check that for you.<|function_call|>{"name": "get_weather", "arguments": {"city": "Moscow"}}
//! ```
//!
//! - One call per turn (the chat template renders only `tool_calls[0]`); several headers
//!   in one output are each read.
//! - The call message may end with `<|message_sep|>` and/or the EOS `</s>`; both belong to
//!   the call and are included in the span, as is the `<|message_sep|>` that ends the
//!   assistant text before `function call`.
//! - The JSON object is `{"name", "arguments"}` with `arguments` an object (a JSON-encoded
//!   string is decoded once). Like the reference parser (Python `json.loads(strict=False)`),
//!   raw control characters (a literal newline) inside JSON strings are accepted; that is
//!   the only leniency.
//!
//! Sources: the GigaChat3-10B-A1.8B chat template (llama.cpp `models/templates`:
//! `render_function_call`, `role_sep`/`message_sep` tokens), vLLM's `gigachat3` tool parser
//! and `test_gigachat3_tool_parser.py` (3 and 3.1 headers, parameterless and nested calls,
//! content before, trailing `</s>`).
//!
//! # Edge cases
//!
//! - The object ends where its braces balance; what follows is the reply again. The scan
//!   never runs past the next `<|message_sep|>` or call header, so broken JSON is reported
//!   malformed without swallowing later messages.
//! - While streaming an unfinished object is `Pending`; at the end of the output it is
//!   malformed. Anything but a JSON object after the header is malformed.
//! - GigaChat 3.5 moved to an XML-like `<｜GCML｜tool_calls>` format; not handled here.

use serde_json::Value;

use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan::{self, Scan};

use super::shared::memo_find::Finder;

pub struct Gigachat3;

const HEADER_V3: &str = "function call<|role_sep|>";
const HEADER_V31: &str = "<|function_call|>";
const MESSAGE_SEP: &str = "<|message_sep|>";
const EOS: &str = "</s>";

impl Detector for Gigachat3 {
    fn name(&self) -> &str {
        "gigachat3"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // The whole v3 header: while streaming, its partial presence at the end is held
        // back, so "function call" is never spoken before the header is complete.
        &[HEADER_V3, HEADER_V31]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut v3 = Finder::new(text, HEADER_V3);
        let mut v31 = Finder::new(text, HEADER_V31);
        let mut seps = Finder::new(text, MESSAGE_SEP);
        let mut pos = 0;
        while pos < text.len() {
            let a = v3.next(pos);
            let b = v31.next(pos);
            let Some(h) = a.into_iter().chain(b).min() else {
                break;
            };
            let header = if a == Some(h) { HEADER_V3 } else { HEADER_V31 };
            let after = h + header.len();
            // The span starts at the separator closing the assistant text, if any.
            let before = text[pos..h].trim_end();
            let start = if before.ends_with(MESSAGE_SEP) {
                pos + before.len() - MESSAGE_SEP.len()
            } else {
                h
            };
            // The call message ends at the next separator or header.
            let limit = [seps.next(after), v3.next(after), v31.next(after)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(text.len());
            let (found, resume) = call_at(text, start, after, limit, ctx.eof);
            out.push(found);
            match resume {
                Some(r) => pos = r.max(after),
                None => break,
            }
        }
    }
}

fn call_at(
    text: &str,
    start: usize,
    after: usize,
    limit: usize,
    eof: bool,
) -> (Found, Option<usize>) {
    let broken = |reason: String| -> (Found, Option<usize>) {
        if limit < text.len() {
            let end = absorb_enders(text, limit);
            (Found::malformed(start..end, None, reason), Some(end))
        } else if eof {
            (Found::malformed(start..text.len(), None, reason), None)
        } else {
            (Found::pending(start..text.len()), None)
        }
    };
    let region = &text[..limit];
    let p = scan::skip_ws(region, after);
    if p == limit {
        return broken("empty function call message: no JSON object after the header".into());
    }
    if region.as_bytes()[p] != b'{' {
        return broken(
            "expected a JSON object {\"name\", \"arguments\"} after the function call header"
                .into(),
        );
    }
    match scan::balanced_end(region, p, false) {
        Scan::Complete(e) => {
            let end = absorb_enders(text, e);
            let found = match parse_call(&text[p..e]) {
                Ok(c) => Found::call(start..end, c),
                Err(r) => Found::malformed(start..end, None, r),
            };
            (found, Some(end))
        }
        Scan::Incomplete => broken(if limit < text.len() {
            "unterminated JSON in the function call: the message ended inside it".into()
        } else {
            "unterminated JSON in the function call: the output ended inside it".into()
        }),
        Scan::Invalid(at) => broken(format!(
            "malformed JSON in the function call: brackets do not match at byte {at}"
        )),
    }
}

/// Extend over the `<|message_sep|>` and `</s>` that end the call message.
fn absorb_enders(text: &str, mut end: usize) -> usize {
    for tok in [MESSAGE_SEP, EOS] {
        let q = scan::skip_ws(text, end);
        if text[q..].starts_with(tok) {
            end = q + tok.len();
        }
    }
    end
}

fn parse_call(json: &str) -> Result<crate::detector::Candidate, String> {
    let v: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => match serde_json::from_str(&escape_controls(json)) {
            Ok(v) => v,
            Err(_) => return Err(format!("malformed JSON in the function call: {e}")),
        },
    };
    match &v {
        Value::Object(o) => scan::call_from_object(o),
        other => Err(format!(
            "function call must be a JSON object, got {}",
            scan::type_name(other)
        )),
    }
}

/// Escape raw control characters inside JSON strings (what `json.loads(strict=False)`
/// accepts); everything else is kept byte for byte.
fn escape_controls(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    let mut in_str = false;
    let mut escaped = false;
    for ch in json.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
            } else if (ch as u32) < 0x20 {
                match ch {
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c => out.push_str(&format!("\\u{:04x}", c as u32)),
                }
                continue;
            }
        } else if ch == '"' {
            in_str = true;
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{
        check_spans, detect_any, first_call as call, megabyte_of_each, reason,
    };
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect_any(&Gigachat3, text, eof);
        check_spans(text, &out);
        out
    }

    #[test]
    fn v3_with_content_and_eos() {
        let t = "I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\", \"content\": {\"short\": true}}}</s>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[..out[0].span.start], "I'll check that for you.");
        assert_eq!(out[0].span.end, t.len());
        assert_eq!(
            call(&out[0]),
            (
                "manage_user_memory".into(),
                json!({"action": "create", "content": {"short": true}})
            )
        );
    }

    #[test]
    fn v31_header_and_parameterless() {
        let t = "Сейчас проверю.<|function_call|>{\"name\": \"get_time\", \"arguments\": {}}<|message_sep|>\n\n";
        let out = run(t, true);
        assert_eq!(&t[..out[0].span.start], "Сейчас проверю.");
        assert_eq!(call(&out[0]), ("get_time".into(), json!({})));
        assert_eq!(&t[out[0].span.end..], "\n\n");
    }

    #[test]
    fn raw_newlines_in_strings_are_accepted() {
        let t = "<|function_call|>{\"name\": \"send\", \"arguments\": {\"text\": \"line one\nline two\"}}";
        assert_eq!(
            call(&run(t, true)[0]).1,
            json!({"text": "line one\nline two"})
        );
    }

    #[test]
    fn malformed() {
        let t = "<|function_call|>{\"name\": \"a\", \"arguments\": {\"x\": 1,}}</s>";
        assert!(reason(&run(t, true)[0]).contains("malformed JSON"));
        let t = "<|function_call|>get_time()";
        assert!(reason(&run(t, true)[0]).contains("expected a JSON object"));
        let t = "<|function_call|>{\"arguments\": {}}";
        assert!(reason(&run(t, true)[0]).contains("no \"name\""));
        // unterminated JSON ends at the next message
        let t = "<|function_call|>{\"name\": \"a\", \"arguments\": {<|message_sep|>\n\nassistant<|role_sep|>\nHi";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("message ended"));
        assert_eq!(&t[out[0].span.end..], "\n\nassistant<|role_sep|>\nHi");
    }

    #[test]
    fn streaming() {
        for t in [
            "Ok.<|message_sep|>\n\nfunction call<|role_sep|>\n",
            "Ok.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_wea",
            "Ok.<|function_call|>{\"name\": \"x\", \"arguments\": {\"a\": [1,",
        ] {
            let out = run(t, false);
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(&t[..out[0].span.start], "Ok.");
            assert!(reason(&run(t, true)[0]).contains("output ended") || t.ends_with('\n'));
        }
    }

    #[test]
    fn prose_mentions_are_not_calls() {
        assert!(run("A function call is how a model uses tools.", true).is_empty());
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        megabyte_of_each(
            &[
                "<|function_call|>",
                "function call<|role_sep|>{",
                "<|function_call|>{\"name\": \"",
                "<|message_sep|>",
                "{[\"",
            ],
            run,
        );
    }
}
