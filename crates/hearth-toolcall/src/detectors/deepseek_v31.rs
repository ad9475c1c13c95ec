//! `deepseek_v31`: DeepSeek-V3.1 / V3.1-Terminus tool calls.
//!
//! # Wire format
//!
//! The V3.1 chat template drops V3's call type and code fence: the name comes before
//! `<｜tool▁sep｜>` and the raw JSON arguments after it. Parallel calls follow each other
//! with nothing in between:
//!
//! ~~~text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"location": "Paris"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ~~~
//!
//! Bars are U+FF5C, separators U+2581. In thinking mode the calls come after `</think>`
//! (the framework's think handling deals with that).
//!
//! # What this detector accepts
//!
//! - one block with one or more calls → one `Found`; a bare `<｜tool▁call▁begin｜>` call;
//!   a block whose `<｜tool▁calls▁end｜>` never came (after the last complete call);
//! - the look-alike openers llama.cpp also accepts for V3.1 (`<｜tool_calls_begin｜>`,
//!   `<｜tool calls begin｜>`, `<｜tool\_calls\_begin｜>`, `<｜tool▁calls｜>`, ASCII bars with `▁`);
//! - whitespace around the name and the JSON; an empty argument slot means `{}`;
//! - bad JSON, a missing name or `<｜tool▁sep｜>` → `Malformed` with the reason; an
//!   unfinished block while streaming → `Pending`.
//!
//! Blocks in the V3 shape (`function<｜tool▁sep｜>NAME` + fenced JSON) are left whole to
//! `deepseek_v3` / `deepseek_r1`. A tool that is really named `function` still works: its
//! arguments start with `{` right after the separator, which the V3 shape never does.
//!
//! Sources: the DeepSeek-V3.1 chat template, vLLM's `deepseekv31` tool parser, SGLang's
//! `DeepSeekV31Detector`, llama.cpp `common/chat.cpp` (`common_chat_parse_deepseek_v3_1`).
//! The shared token scanner lives in `deepseek_v3.rs`.

use super::shared::deepseek_tokens::{detect_deepseek, Dialect, LAX_TRIGGERS};
use crate::detector::{DetectCtx, Detector, Found, Strictness};

pub struct DeepseekV31;

const DIALECT: Dialect = Dialect {
    lax_tokens: true,
    v3_shape: false,
    v31_shape: true,
};

impl Detector for DeepseekV31 {
    fn name(&self) -> &str {
        "deepseek_v31"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        LAX_TRIGGERS
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        detect_deepseek(text, ctx, out, &DIALECT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::detectors::shared::token_blocks::tests::{calls, reason, run};
    use serde_json::json;

    const TWO: &str = "Checking both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"Lisbon\", \"unit\": \"celsius\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";

    #[test]
    fn parallel_calls() {
        let out = run(&DeepseekV31, TWO, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![
                (
                    "get_weather".into(),
                    json!({"location": "Lisbon", "unit": "celsius"})
                ),
                ("get_time".into(), json!({}))
            ]
        );
        assert_eq!(&TWO[..out[0].span.start], "Checking both.");
        assert_eq!(out[0].span.end, TWO.len());
    }

    #[test]
    fn whitespace_and_lookalike_openers() {
        for opener in [
            "<｜tool▁calls▁begin｜>",
            "<｜tool calls begin｜>",
            "<｜tool_calls_begin｜>",
            "<|tool▁calls▁begin|>",
        ] {
            let t = format!("{opener}\n<｜tool▁call▁begin｜> set_light <｜tool▁sep｜>\n{{\"room\": \"hall\", \"on\": true}}\n<｜tool▁call▁end｜>\n<｜tool▁calls▁end｜>");
            let out = run(&DeepseekV31, &t, true);
            assert_eq!(
                calls(&out[0]),
                vec![("set_light".into(), json!({"room": "hall", "on": true}))],
                "{opener}"
            );
        }
    }

    #[test]
    fn tool_named_function_is_v31() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekV31, t, true);
        assert_eq!(calls(&out[0]), vec![("function".into(), json!({"a": 1}))]);
    }

    #[test]
    fn v3_shape_is_left_alone() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assert!(run(&DeepseekV31, t, true).is_empty());
        // ... even when its JSON is broken.
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{]\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assert!(run(&DeepseekV31, t, true).is_empty());
    }

    #[test]
    fn malformed_and_pending() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": Paris}<｜tool▁call▁end｜><｜tool▁calls▁end｜>Done.";
        let out = run(&DeepseekV31, t, true);
        let r = reason(&out[0]);
        assert!(
            r.contains("get_weather") && r.contains("malformed JSON"),
            "{r}"
        );
        assert_eq!(&t[out[0].span.end..], "Done.");
        let cut = &TWO[..TWO.len() - 30];
        let out = run(&DeepseekV31, cut, false);
        assert_eq!(out[0].kind, FoundKind::Pending);
        let out = run(&DeepseekV31, cut, true);
        assert!(matches!(
            out[0].kind,
            FoundKind::Calls(_) | FoundKind::Malformed { .. }
        ));
    }

    #[test]
    fn prose_and_mentions_produce_nothing() {
        assert!(run(&DeepseekV31, "DeepSeek uses special tool tokens.", true).is_empty());
        assert!(run(&DeepseekV31, "the <｜tool▁outputs▁begin｜> token", true).is_empty());
    }

    #[test]
    fn adversarial_input_is_fast() {
        for p in [
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{",
            "<｜tool▁call▁begin｜>x<｜tool▁sep｜>{]",
            "<|tool▁",
        ] {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&DeepseekV31, &t, true);
            let _ = run(&DeepseekV31, &t, false);
        }
    }
}
