//! `claude_xml`: Claude-style `<invoke name="…">` / `<parameter name="…">` calls.
//!
//! The plain (namespace-less) form of Anthropic's XML function-call syntax, which open models
//! fine-tuned on Claude transcripts and prompt-injected agents emit:
//!
//! ```text
//! <function_calls>
//! <invoke name="get_weather">
//! <parameter name="location">San Francisco</parameter>
//! </invoke>
//! </function_calls>
//! ```
//!
//! The `<function_calls>` wrapper is optional: a bare `<invoke name="…">` element whose body is
//! `<parameter name="…">` elements (or empty) is a call too (LLxprt lists this as its
//! "Claude-style" XML). Only the plain forms are read; namespaced tags are not this format.
//! Values are raw text typed by the tool's JSON Schema (objects/arrays as JSON). The
//! `<invoke>` grammar (structural `</parameter>`, duplicates, missing closers) is shared
//! with `minimax_m2`. A wrapper holding anything but invokes is `Malformed`; a bare `<invoke`
//! followed by something else is prose and left alone. Unfinished markup is `Pending`
//! while streaming and `Malformed` at end of output.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::memo_find::Next;
use super::shared::xml_call::{settle, Step};
use super::shared::xml_invoke::{InvokeParser, INVOKE_CLOSE, INVOKE_OPEN};

pub struct ClaudeXml;

const OPEN: &str = "<function_calls>";
const CLOSE: &str = "</function_calls>";

impl Detector for ClaudeXml {
    fn name(&self) -> &str {
        "claude_xml"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN, "<invoke name=", "<invoke\nname=", "<invoke  name="]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = InvokeParser::new(text);
        let mut wraps = Next::new(text, OPEN);
        let mut wrap_closes = Next::new(text, CLOSE);
        let mut invokes = Next::new(text, INVOKE_OPEN);
        let mut invoke_closes = Next::new(text, INVOKE_CLOSE);
        let mut pos = 0;
        loop {
            let w = wraps.find(pos);
            let i = invokes.find(pos);
            let (start, wrapped) = match (w, i) {
                (Some(w), Some(i)) if w < i => (w, true),
                (Some(w), None) => (w, true),
                (_, Some(i)) => (i, false),
                (None, None) => return,
            };
            let next = if wrapped {
                let step = p.wrapped(ctx, start, OPEN, CLOSE).not_ours_malformed(
                    || format!("{OPEN} does not hold <invoke name=…> elements"),
                    start + OPEN.len(),
                );
                settle(out, ctx, text.len(), start, step, |at| {
                    wrap_closes.find(at).map(|c| c + CLOSE.len())
                })
                .resume(start + OPEN.len())
            } else {
                let step = p
                    .invoke(ctx, start, true)
                    .and_then(|c, e| Step::Done(vec![c], e));
                settle(out, ctx, text.len(), start, step, |at| {
                    invoke_closes.find(at).map(|c| c + INVOKE_CLOSE.len())
                })
                .resume(start + INVOKE_OPEN.len())
            };
            match next {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(
            &ClaudeXml,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{
                "x":{"type":"number"},"y":{"type":"number"}}}}}]"#,
            ),
        )
    }

    #[test]
    fn wrapped_and_bare() {
        let t = "Adding.\n<function_calls>\n<invoke name=\"add\">\n<parameter name=\"x\">2</parameter>\n<parameter name=\"y\">3.5</parameter>\n</invoke>\n<invoke name=\"get_time\"></invoke>\n</function_calls>\nDone.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "\nDone.");
        let c = calls(&out[0]);
        assert_eq!(c[0].arguments, json!({"x": 2, "y": 3.5}));
        assert_eq!(c[1].name, "get_time");
        let t = "<invoke name=\"add\"><parameter name=\"x\">1</parameter><parameter name=\"y\">2</parameter></invoke>";
        assert_eq!(
            calls(&run(t, true)[0])[0].arguments,
            json!({"x": 1, "y": 2})
        );
    }

    #[test]
    fn prose_and_malformed() {
        assert!(run("Use <invoke name=\"x\"> to call things.", true).is_empty());
        assert!(run("<invoked name=\"x\">", true).is_empty());
        let out = run(
            "<function_calls>\n{\"name\": \"add\"}\n</function_calls>",
            true,
        );
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
        let t = "<function_calls><invoke name=\"add\"><parameter name=\"x\">1";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<function_calls><invoke name=\"a\"><parameter name=\"b\">".repeat(30_000),
            true,
        );
        let _ = run(&"<invoke name=\"a\">".repeat(60_000), true);
        let _ = run(&"<invoke name=\"".repeat(60_000), false);
    }
}
