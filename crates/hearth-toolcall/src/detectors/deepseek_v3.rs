//! `deepseek_v3`: DeepSeek-V3 (and V3-0324) tool calls. The token machinery it shares with
//! the other DeepSeek detectors (`deepseek_v31`, `deepseek_r1`) is in
//! `shared::deepseek_tokens`.
//!
//! # Wire format
//!
//! The official V3 chat template renders an assistant tool call as
//!
//! ~~~text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"location": "Paris"}
//! ```<｜tool▁call▁end｜>
//! <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time
//! ```json
//! {}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ~~~
//!
//! The bars are FULLWIDTH VERTICAL LINE (U+FF5C) and the word separators LOWER ONE EIGHTH
//! BLOCK (U+2581); every marker is one special token. `function` is the call type (the only
//! one there is), the name runs to the end of its line, and the arguments are a JSON object
//! inside a markdown `json` code fence. Parallel calls follow each other (the template puts a
//! newline between them) inside one `<｜tool▁calls▁begin｜>` … `<｜tool▁calls▁end｜>` block.
//!
//! # What this detector accepts
//!
//! - one block with one or more calls → one `Found` with every call, in order;
//! - the fence is optional (`function<｜tool▁sep｜>NAME\n{json}\n<｜tool▁call▁end｜>` is seen in
//!   the wild, e.g. the LLxprt format notes), and an empty argument slot means `{}`;
//! - a missing `<｜tool▁calls▁end｜>` after the last complete call (models often stop on EOS
//!   right after the last `<｜tool▁call▁end｜>`), and a bare `<｜tool▁call▁begin｜>` call with no
//!   surrounding block;
//! - arguments sent as a JSON-encoded string are decoded once;
//! - anything that breaks inside the block (bad JSON, no name, no `<｜tool▁sep｜>`, an
//!   unterminated fence) is `Malformed` with the reason; while streaming an unfinished block
//!   is `Pending`, and so is broken markup whose end is not known yet.
//!
//! The arguments are cut at the next tool token, not at a balanced bracket: the tokens never
//! occur inside JSON, and this keeps every span the same however much of a streamed output
//! has arrived (a property test checks that what is settled for a prefix stays settled).
//!
//! It only claims blocks written with the canonical tokens in the V3 shape. The shape
//! `NAME<｜tool▁sep｜>{json}` belongs to `deepseek_v31`, and look-alike spellings of the
//! tokens (ASCII bars, `_` or spaces instead of `▁`, a missing `<｜tool▁call▁begin｜>`) to
//! `deepseek_r1`: such blocks are skipped whole, never half-claimed, so the detectors do
//! not fight over a block in auto mode.
//!
//! Sources: the DeepSeek-V3 chat template (tokenizer_config.json), vLLM's and SGLang's
//! DeepSeek-V3 parsers, llama.cpp `common/chat.cpp` (DeepSeek R1/V3 handlers, which make the
//! closing fence optional and list the look-alike openers).

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::deepseek_tokens::{detect_deepseek, Dialect, CALLS_BEGIN, CALL_BEGIN};

pub struct DeepseekV3;

impl Detector for DeepseekV3 {
    fn name(&self) -> &str {
        "deepseek_v3"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[CALLS_BEGIN, CALL_BEGIN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        detect_deepseek(text, ctx, out, &V3_DIALECT);
    }
}

const V3_DIALECT: Dialect = Dialect {
    lax_tokens: false,
    v3_shape: true,
    v31_shape: false,
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::detector::FoundKind;
    use crate::detectors::shared::deepseek_tokens::tests::{CALL_END, SEP};
    use crate::detectors::shared::token_blocks::tests::{calls, reason, run};
    use serde_json::json;

    const ONE: &str = "Let me check.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";

    #[test]
    fn single_call() {
        let out = run(&DeepseekV3, ONE, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![("get_weather".into(), json!({"location": "Paris"}))]
        );
        assert_eq!(&ONE[..out[0].span.start], "Let me check.\n");
        assert_eq!(out[0].span.end, ONE.len());
    }

    #[test]
    fn parallel_calls_with_newline_between() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Oslo\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekV3, t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![
                ("get_weather".into(), json!({"location": "Oslo"})),
                ("get_time".into(), json!({}))
            ]
        );
    }

    #[test]
    fn unfenced_and_unclosed_block() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n{\"x\": 1, \"y\": 2}\n<｜tool▁call▁end｜>";
        let out = run(&DeepseekV3, t, true);
        assert_eq!(
            calls(&out[0]),
            vec![("add".into(), json!({"x": 1, "y": 2}))]
        );
        // Streaming: the block may still grow.
        let out = run(&DeepseekV3, t, false);
        assert_eq!(out[0].kind, FoundKind::Pending);
        assert_eq!(out[0].span, 0..t.len());
    }

    #[test]
    fn streaming_prefixes_are_pending() {
        for cut in 1..ONE.len() {
            if !ONE.is_char_boundary(cut) {
                continue;
            }
            let t = &ONE[..cut];
            let out = run(&DeepseekV3, t, false);
            let start = ONE.find('<').unwrap();
            if cut < start + CALLS_BEGIN.len() {
                continue; // the framework holds back a partial trigger
            }
            assert_eq!(out.len(), 1, "{t:?}: {out:?}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t:?}");
            assert_eq!(out[0].span, start..t.len());
        }
    }

    #[test]
    fn malformed_json_is_reported() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\",}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> ok";
        let out = run(&DeepseekV3, t, true);
        assert_eq!(out.len(), 1);
        let r = reason(&out[0]);
        assert!(
            r.contains("get_weather") && r.contains("malformed JSON"),
            "{r}"
        );
        assert_eq!(&t[out[0].span.end..], " ok");
        let t2 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": [\"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> ok";
        let out = run(&DeepseekV3, t2, true);
        assert!(reason(&out[0]).contains("malformed JSON"), "{:?}", out);
        assert_eq!(&t2[out[0].span.end..], " ok");
    }

    #[test]
    fn cut_off_at_eof_is_malformed() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Par";
        let out = run(&DeepseekV3, t, true);
        assert!(reason(&out[0]).contains("cut off"));
        match &out[0].kind {
            FoundKind::Malformed { name, .. } => assert_eq!(name.as_deref(), Some("get_weather")),
            _ => unreachable!(),
        }
    }

    #[test]
    fn other_dialects_are_skipped_whole() {
        // V3.1 shape: not V3's.
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assert!(run(&DeepseekV3, t, true).is_empty());
        // Look-alike tokens: R1's.
        let t = "<｜tool calls begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assert!(
            run(&DeepseekV3, t, true).is_empty(),
            "{:?}",
            run(&DeepseekV3, t, true)
        );
    }

    #[test]
    fn missing_sep_and_name() {
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekV3, t, true);
        assert!(reason(&out[0]).contains("tool▁sep"), "{out:?}");
        assert_eq!(out[0].span, 0..t.len());
        let t = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let out = run(&DeepseekV3, t, true);
        assert!(reason(&out[0]).contains("missing function name"), "{out:?}");
    }

    #[test]
    fn empty_block_and_opener_then_prose() {
        let t = "a <｜tool▁calls▁begin｜><｜tool▁calls▁end｜> b";
        let out = run(&DeepseekV3, t, true);
        assert!(reason(&out[0]).contains("no calls"));
        let t = "a <｜tool▁calls▁begin｜> never mind. b";
        let out = run(&DeepseekV3, t, true);
        assert!(reason(&out[0]).contains("expected"));
        assert_eq!(&t[out[0].span.clone()], CALLS_BEGIN);
    }

    #[test]
    fn two_blocks_and_bare_call() {
        let t = format!("{ONE} and {}", &ONE["Let me check.\n".len()..]);
        let out = run(&DeepseekV3, &t, true);
        assert_eq!(out.len(), 2);
        let bare = "x <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_date\n```json\n{}\n```<｜tool▁call▁end｜> y";
        let out = run(&DeepseekV3, bare, true);
        assert_eq!(calls(&out[0]), vec![("get_date".into(), json!({}))]);
        assert_eq!(&bare[out[0].span.end..], " y");
    }

    #[test]
    fn adversarial_input_is_fast() {
        let pieces = [
            CALLS_BEGIN,
            CALL_BEGIN,
            "function",
            SEP,
            "x\n```json\n{",
            "\"a\":[",
            CALL_END,
            "<",
            "<｜tool▁",
            "}",
        ];
        for p in pieces {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&DeepseekV3, &t, true);
            let _ = run(&DeepseekV3, &t, false);
        }
        let mut t = String::new();
        while t.len() < 1_000_000 {
            t.push_str(CALLS_BEGIN);
            t.push_str(CALL_BEGIN);
            t.push_str("function");
            t.push_str(SEP);
            t.push_str("x\n{\"a\": ]");
            t.push_str(CALL_BEGIN);
        }
        let _ = run(&DeepseekV3, &t, true);
    }
}
