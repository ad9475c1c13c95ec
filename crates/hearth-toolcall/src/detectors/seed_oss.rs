//! `seed_oss`: ByteDance Seed-OSS `<seed:tool_call>` blocks.
//!
//! Seed-OSS-36B's template asks for, and the model emits:
//!
//! ```text
//! <seed:tool_call>
//! <function=get_weather>
//! <parameter=location>Barcelona, Spain</parameter>
//! <parameter=unit>celsius</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! The body is the `<function=…>` / `<parameter=…>` grammar of Qwen3-Coder (shared, see
//! `qwen3_coder`), with values usually inline rather than on their own lines; multi-line
//! values are allowed. Values are typed by the tool's schema. The template also allows
//! several functions in one block ("You can call multiple tools in one tool call").
//! Reasoning comes in `<seed:think>` (and `<seed:cot_budget_reflect>`) blocks, which the
//! framework handles. Edge cases: several blocks; a missing `</seed:tool_call>` after a
//! complete `</function>` is accepted; an unfinished block is `Pending` while streaming and
//! `Malformed` at end of output; a block whose content is not `<function=…>` is `Malformed`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::xml_call::detect_blocks;
use super::shared::xml_function::{parse_wrapped, FnParser};

pub struct SeedOss;

const OPEN: &str = "<seed:tool_call>";
const CLOSE: &str = "</seed:tool_call>";

impl Detector for SeedOss {
    fn name(&self) -> &str {
        "seed_oss"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = FnParser::new(text);
        detect_blocks(text, ctx, out, OPEN, CLOSE, |start| {
            // The wrapper only ever holds functions: other content is malformed.
            parse_wrapped(&mut p, ctx, start, OPEN, CLOSE).not_ours_malformed(
                || format!("{OPEN} does not hold a <function=…> block"),
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
            &SeedOss,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{
                "query":{"type":"string"},"limit":{"type":"integer"}}}}}]"#,
            ),
        )
    }

    #[test]
    fn single_and_multi() {
        let t = "<seed:think>Need a search.</seed:think>\n<seed:tool_call>\n<function=search>\n<parameter=query>rust lang</parameter>\n<parameter=limit>10</parameter>\n</function>\n</seed:tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.start, t.find("<seed:tool_call>").unwrap());
        assert_eq!(out[0].span.end, t.len());
        assert_eq!(
            calls(&out[0])[0].arguments,
            json!({"query": "rust lang", "limit": 10})
        );
        let t = "<seed:tool_call>\n<function=search>\n<parameter=query>a</parameter>\n</function>\n<function=search>\n<parameter=query>multi\nline</parameter>\n</function>\n</seed:tool_call>";
        let c = calls(&run(t, true)[0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].arguments, json!({"query": "multi\nline"}));
    }

    #[test]
    fn malformed_and_streaming() {
        let out = run(
            "<seed:tool_call>{\"name\": \"search\"}</seed:tool_call> x",
            true,
        );
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(
            out[0].span.end,
            "<seed:tool_call>{\"name\": \"search\"}</seed:tool_call>".len()
        );
        let t = "<seed:tool_call>\n<function=search>\n<parameter=query>a";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
        let t = "Ok <seed:tool_call>\n<function=search>\n</function>";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert_eq!(calls(&run(t, true)[0])[0].name, "search");
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<seed:tool_call>\n<function=a>\n<parameter=b>".repeat(40_000),
            true,
        );
        let _ = run(&"<seed:tool_call></seed:tool_call>".repeat(40_000), false);
        let _ = run(&"<seed:tool_call>".repeat(60_000), true);
    }
}
