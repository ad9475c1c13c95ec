//! `qwen3_coder`: `<function=NAME>` / `<parameter=KEY>` XML tool calls.
//!
//! Emitted by Qwen3-Coder, Qwen3.5 and NVIDIA Nemotron 3 (their templates render calls this
//! way), one call per `<tool_call>` block:
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=location>
//! Paris
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! Values are raw text, one newline stripped on each side, typed by the tool's JSON Schema
//! (`scan::typed_param`): a string stays verbatim (multi-line code included), numbers,
//! booleans, objects and arrays are parsed. Edge cases:
//! - the opening `<tool_call>` is sometimes missing: a bare `<function=NAME>` block whose
//!   body is `<parameter=…>` blocks (or empty) still counts, and a stray `</tool_call>`
//!   right after it belongs to the span;
//! - several calls (several blocks, or several functions in one block); a block whose
//!   `</tool_call>` is missing after a complete `</function>` is accepted;
//! - a value may contain `</parameter>` or `</function>` as text: a `</parameter>` only
//!   closes the value when the next thing after it is `<parameter=`, `</function>` or a
//!   closing wrapper tag;
//! - a missing `</parameter>` (the value runs into the next `<parameter=`), a duplicate
//!   parameter, an invalid name or stray text are `Malformed`; nothing is repaired. A
//!   function cut by the end of output is `Malformed` (parameters may be lost).
//!
//! The `<function=…>` grammar is shared with `seed_oss` (see `shared::xml_function`).

use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::shared::markers::prefix_of;
use super::shared::memo_find::Next;
use super::shared::tagged_blocks::{CLOSE, OPEN};
use super::shared::xml_call::{settle, Step};
use super::shared::xml_function::{parse_wrapped, FnParser, FUNC_CLOSE, FUNC_OPEN};

pub struct Qwen3Coder;

impl Detector for Qwen3Coder {
    fn name(&self) -> &str {
        "qwen3_coder"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[FUNC_OPEN, OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = FnParser::new(text);
        let mut tc_opens = Next::new(text, OPEN);
        let mut tc_closes = Next::new(text, CLOSE);
        let mut fn_opens = Next::new(text, FUNC_OPEN);
        let mut fn_closes = Next::new(text, FUNC_CLOSE);
        let mut pos = 0;
        loop {
            let t = tc_opens.find(pos);
            let f = fn_opens.find(pos);
            let (start, wrapped) = match (t, f) {
                (Some(t), Some(f)) if t < f => (t, true),
                (Some(t), None) => (t, true),
                (_, Some(f)) => (f, false),
                (None, None) => return,
            };
            let next = if wrapped {
                let step = parse_wrapped(&mut p, ctx, start, OPEN, CLOSE);
                settle(out, ctx, text.len(), start, step, |at| {
                    tc_closes.find(at).map(|c| c + CLOSE.len())
                })
                .resume(start + OPEN.len())
            } else {
                let step = p.function(ctx, start, true).and_then(|c, e| {
                    match after_stray_close(text, e) {
                        Some(end) => Step::Done(vec![c], end),
                        None if ctx.eof => Step::Done(vec![c], e),
                        None => Step::Incomplete(Some(c.name), "a closing tag may follow".into()),
                    }
                });
                settle(out, ctx, text.len(), start, step, |at| {
                    fn_closes.find(at).map(|c| {
                        let e = c + FUNC_CLOSE.len();
                        after_stray_close(text, e).unwrap_or(e)
                    })
                })
                .resume(start + FUNC_OPEN.len())
            };
            match next {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

/// Extend `e` over whitespace and a `</tool_call>` the model wrote without its opener.
/// `None`: the text ends in a cut `</tool_call>`, so the end is not known yet.
fn after_stray_close(text: &str, e: usize) -> Option<usize> {
    let k = scan::skip_ws(text, e);
    let rest = &text[k..];
    if rest.starts_with(CLOSE) {
        Some(k + CLOSE.len())
    } else if !rest.is_empty() && prefix_of(rest, CLOSE) {
        None
    } else {
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{calls, detect, reason, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let tools = tools(
            r#"[{"type":"function","function":{"name":"set_light","parameters":{"type":"object","properties":{
                "room":{"type":"string"},"on":{"type":"boolean"},"brightness":{"type":"integer"}}}}},
               {"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{
                "path":{"type":"string"},"content":{"type":"string"}}}}}]"#,
        );
        let out = detect(&Qwen3Coder, text, eof, &tools);
        for f in &out {
            assert!(f.span.start <= f.span.end);
        }
        out
    }

    #[test]
    fn typed_single_call() {
        let t = "Turning it on.\n<tool_call>\n<function=set_light>\n<parameter=room>\nkitchen\n</parameter>\n<parameter=on>\ntrue\n</parameter>\n<parameter=brightness>\n80\n</parameter>\n</function>\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.start, t.find("<tool_call>").unwrap());
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(c[0].name, "set_light");
        assert_eq!(
            c[0].arguments,
            json!({"room": "kitchen", "on": true, "brightness": 80})
        );
    }

    #[test]
    fn bare_function_and_stray_close() {
        let t = "<function=set_light>\n<parameter=room>\nhall\n</parameter>\n</function>\n</tool_call> done";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], " done");
        assert_eq!(calls(&out[0])[0].arguments, json!({"room": "hall"}));
        // a Llama-style JSON body is not ours
        assert!(run("<function=get_time>{}</function>", true).is_empty());
    }

    #[test]
    fn multiline_value_with_literal_closers() {
        let t = "<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n<parameter=content>\n<x></parameter></x>\nline2\n</parameter>\n</function>\n</tool_call>";
        let c = calls(&run(t, true)[0]);
        assert_eq!(
            c[0].arguments["content"],
            json!("<x></parameter></x>\nline2")
        );
    }

    #[test]
    fn several_calls() {
        let t = "<tool_call>\n<function=a>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>\n<function=c>\n</function>\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[1]).len(), 2);
        assert_eq!(calls(&out[1])[0].arguments, json!({"x": 1}));
    }

    #[test]
    fn malformed_cases() {
        let t = "<tool_call>\n<function=set_light>\n<parameter=room>\nhall\n<parameter=on>\ntrue\n</parameter>\n</function>\n</tool_call>after";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("missing its </parameter>"));
        assert_eq!(&t[out[0].span.end..], "after");
        let t = "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n<parameter=x>\n2\n</parameter>\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("given twice"));
        let t = "<tool_call>\n<function={{ name }}>\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("invalid function name"));
        let t = "<tool_call>\n<function=a>\nhello\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("unexpected text"));
    }

    #[test]
    fn unclosed_and_streaming() {
        let t = "<tool_call>\n<function=set_light>\n<parameter=room>\nhall\n</parameter>\n";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let out = run(t, true);
        assert!(reason(&out[0]).contains("not closed"));
        // complete function, wrapper closer missing
        let t = "<tool_call>\n<function=get_time>\n</function>";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
        let t = "<tool_call>\n<function=get_time>\n</function>\nDone.";
        assert_eq!(run(t, false).len(), 1);
        assert_eq!(calls(&run(t, false)[0])[0].name, "get_time");
        for t in ["<tool_call>\n", "<tool_call>\n<func", "x <function=get_ti"] {
            assert_eq!(run(t, false).len(), 1, "{t}");
        }
        assert!(run("<tool_call>\n", true).is_empty());
        assert!(run("<tool_call>{\"name\": \"a\"}</tool_call>", true).is_empty());
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<tool_call>\n<function=a>\n<parameter=b>\n".repeat(40_000),
            true,
        );
        let _ = run(
            &"<function=a><parameter=b></parameter>".repeat(40_000),
            true,
        );
        let _ = run(&"</parameter>\n".repeat(100_000), true);
        let _ = run(
            &format!(
                "<function=a>\n<parameter=b>\n{}",
                "</parameter>x".repeat(80_000)
            ),
            true,
        );
        let _ = run(&"<function=".repeat(100_000), false);
        let _ = run(&format!("<function={}", "a".repeat(1_000_000)), true);
    }
}
