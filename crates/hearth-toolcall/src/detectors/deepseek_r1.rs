//! `deepseek_r1`: DeepSeek-R1, R1-0528 and the R1 distills.
//!
//! # Wire format
//!
//! R1 uses the V3 call shape: call type `function`, the name, then the JSON arguments in a
//! `json` code fence, inside the tool-calls block:
//!
//! ~~~text
//! <think>…</think>
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"location": "Paris"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ~~~
//!
//! # What this detector adds over `deepseek_v3`
//!
//! R1 and especially its quantised / distilled builds are sloppier with the markup, so this
//! detector also accepts:
//! - the unfenced form `function<｜tool▁sep｜>NAME\n{json}\n<｜tool▁call▁end｜>` (as listed in
//!   the LLxprt text-tool-call format notes);
//! - the opener spellings llama.cpp's R1 handler accepts: `<｜tool_calls_begin｜>`,
//!   `<｜tool calls begin｜>`, `<｜tool\_calls\_begin｜>` and the short `<｜tool▁calls｜>`;
//! - ASCII-bar look-alikes such as `<|tool▁calls▁begin|>` … `<|tool▁sep|>` …
//!   `<|tool▁call▁end|>` seen in logged outputs of templates that lost the fullwidth bars
//!   (ASCII bars are only accepted with the `▁` separators, so Kimi's `<|tool_call_begin|>`
//!   is never taken for one);
//! - a call written without its `<｜tool▁call▁begin｜>` inside a block (llama.cpp makes it
//!   optional too), and a block whose `<｜tool▁calls▁end｜>` never came.
//!
//! Broken calls are `Malformed` with the reason, unfinished ones `Pending` while streaming.
//! Blocks in the V3.1 shape (`NAME<｜tool▁sep｜>{json}`) are left to `deepseek_v31`.
//! The shared token scanner lives in `shared/deepseek_tokens.rs`.
//!
//! Sources: the DeepSeek-R1 / R1-0528 chat templates, llama.cpp `common/chat.cpp`
//! (`common_chat_parse_deepseek_r1` and its trigger list), vLLM/SGLang DeepSeek-V3 parsers.

use super::shared::deepseek_tokens::{detect_deepseek, Dialect, LAX_TRIGGERS};
use crate::detector::{DetectCtx, Detector, Found, Strictness};

pub struct DeepseekR1;

const DIALECT: Dialect = Dialect {
    lax_tokens: true,
    v3_shape: true,
    v31_shape: false,
};

impl Detector for DeepseekR1 {
    fn name(&self) -> &str {
        "deepseek_r1"
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

    #[test]
    fn canonical_fenced_call_after_think() {
        let t = "<think>\nThe user wants the weather.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekR1, t, true);
        assert_eq!(
            calls(&out[0]),
            vec![("get_weather".into(), json!({"location": "Paris"}))]
        );
        assert!(t[..out[0].span.start].ends_with("</think>\n\n"));
    }

    #[test]
    fn unfenced_variant() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n{\"location\": \"San Francisco\", \"unit\": \"celsius\"}\n<｜tool▁call▁end｜>";
        let out = run(&DeepseekR1, t, true);
        assert_eq!(
            calls(&out[0]),
            vec![(
                "get_weather".into(),
                json!({"location": "San Francisco", "unit": "celsius"})
            )]
        );
        assert_eq!(out[0].span, 0..t.len());
    }

    #[test]
    fn lookalike_spellings() {
        let ascii = "<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>search\n```json\n{\"query\": \"lipinski rule\"}\n```<|tool▁call▁end|><|tool▁calls▁end|>";
        let out = run(&DeepseekR1, ascii, true);
        assert_eq!(
            calls(&out[0]),
            vec![("search".into(), json!({"query": "lipinski rule"}))]
        );
        for opener in [
            "<｜tool_calls_begin｜>",
            "<｜tool calls begin｜>",
            "<｜tool\\_calls\\_begin｜>",
            "<｜tool▁calls｜>",
        ] {
            let t = format!("{opener}<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{{}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
            let out = run(&DeepseekR1, &t, true);
            assert_eq!(
                calls(&out[0]),
                vec![("get_time".into(), json!({}))],
                "{opener}"
            );
            assert_eq!(out[0].span, 0..t.len());
        }
        // Without <｜tool▁call▁begin｜>.
        let t = "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>get_date\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekR1, t, true);
        assert_eq!(calls(&out[0]), vec![("get_date".into(), json!({}))]);
    }

    #[test]
    fn kimi_tokens_are_not_r1() {
        let t = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
        assert!(run(&DeepseekR1, t, true).is_empty());
    }

    #[test]
    fn v31_shape_is_left_alone_and_errors_reported() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assert!(run(&DeepseekR1, t, true).is_empty());
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"x\": 1, \"y\": }\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekR1, t, true);
        assert!(reason(&out[0]).contains("malformed JSON"));
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"x\": 1, \"y\": 2}\n<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekR1, t, true);
        assert!(reason(&out[0]).contains("fence"), "{out:?}");
        let out = run(&DeepseekR1, &t[..60], false);
        assert_eq!(out[0].kind, FoundKind::Pending);
    }

    #[test]
    fn adversarial_input_is_fast() {
        for p in [
            "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>x\n{]",
            "<｜tool calls｜>",
            "<|tool▁calls▁begin|>function",
        ] {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&DeepseekR1, &t, true);
            let _ = run(&DeepseekR1, &t, false);
        }
    }
}
