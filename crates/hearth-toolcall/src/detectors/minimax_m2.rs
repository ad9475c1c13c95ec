//! `minimax_m2`: MiniMax-M2 `<minimax:tool_call>` blocks of `<invoke>` elements.
//!
//! MiniMax-M2 (and M2.1/M2.5) emit, after an optional `<think>` block:
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="location">San Francisco, CA</parameter>
//! <parameter name="unit">celsius</parameter>
//! </invoke>
//! <invoke name="get_time">
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! One block holds every parallel call. Values are raw text (objects and arrays as JSON),
//! one newline stripped on each side, typed by the tool's JSON Schema. Names may be quoted
//! with `"` or `'`. Newlines between elements are optional (some deployments emit the whole
//! block on one line). Edge cases: a value may contain `</parameter>` as text (a closer only
//! counts when followed by `<parameter` or `</invoke>`); an `<invoke>` with no parameters is a
//! call with `{}`; a missing `</minimax:tool_call>` after complete invokes is accepted; a
//! block holding anything but invokes, a duplicate parameter or a missing closer is
//! `Malformed`; an unfinished block is `Pending` while streaming.
//!
//! The `<invoke>` grammar is shared with `claude_xml` (see `shared::xml_invoke`).

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::xml_call::detect_blocks;
use super::shared::xml_invoke::InvokeParser;

pub struct MinimaxM2;

const OPEN: &str = "<minimax:tool_call>";
const CLOSE: &str = "</minimax:tool_call>";

impl Detector for MinimaxM2 {
    fn name(&self) -> &str {
        "minimax_m2"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = InvokeParser::new(text);
        detect_blocks(text, ctx, out, OPEN, CLOSE, |start| {
            p.wrapped(ctx, start, OPEN, CLOSE).not_ours_malformed(
                || format!("{OPEN} does not hold <invoke name=…> elements"),
                start + OPEN.len(),
            )
        });
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
            &MinimaxM2,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"todowrite","parameters":{"type":"object","properties":{
                "todos":{"type":"array"},"force":{"type":"boolean"},"note":{"type":"string"}}}}}]"#,
            ),
        )
    }

    #[test]
    fn parallel_invokes_typed() {
        let t = "<think>plan</think>\nOn it.\n<minimax:tool_call>\n<invoke name=\"todowrite\">\n<parameter name=\"todos\">[{\"content\": \"a\"}]</parameter>\n<parameter name=\"force\">true</parameter>\n</invoke>\n<invoke name='get_time'>\n</invoke>\n</minimax:tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.start, t.find("<minimax:tool_call>").unwrap());
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(
            c[0].arguments,
            json!({"todos": [{"content": "a"}], "force": true})
        );
        assert_eq!(c[1].name, "get_time");
        assert_eq!(c[1].arguments, json!({}));
    }

    #[test]
    fn one_line_and_literal_closer() {
        let t = "<minimax:tool_call><invoke name=\"todowrite\"><parameter name=\"note\">a</parameter>b</parameter></invoke></minimax:tool_call>";
        assert_eq!(
            calls(&run(t, true)[0])[0].arguments,
            json!({"note": "a</parameter>b"})
        );
    }

    #[test]
    fn malformed_and_streaming() {
        let t = "<minimax:tool_call>\n<tool_name>x</tool_name>\n</minimax:tool_call>";
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
        let t = "<minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"k\">1</parameter>\n<parameter name=\"k\">2</parameter>\n</invoke>\n</minimax:tool_call>";
        assert!(
            matches!(&run(t, true)[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("twice"))
        );
        let t = "x <minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"k\">1";
        assert_eq!(run(t, false), vec![Found::pending(2..t.len())]);
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<minimax:tool_call><invoke name=\"a\"><parameter name=\"b\">".repeat(30_000),
            true,
        );
        let _ = run(&"<minimax:tool_call><invoke name=\"".repeat(50_000), false);
        let _ = run(
            &format!(
                "<minimax:tool_call><invoke name=\"a\">{}",
                "<parameter name=\"b\"></parameter>x".repeat(50_000)
            ),
            true,
        );
    }
}
