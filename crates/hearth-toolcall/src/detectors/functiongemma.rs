//! `functiongemma`: Google FunctionGemma (the 270M Gemma 3 function-calling model).
//!
//! # Wire format
//!
//! ```text
//! <start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}<end_function_call>
//! ```
//!
//! Same notation as Gemma 4 (see [`super::gemma`]), with other tokens:
//! - `<start_function_call>` / `<end_function_call>` around each call; parallel calls are
//!   consecutive blocks.
//! - `<escape>` delimits every string value (and quoted keys); no escaping inside.
//!   Numbers, `true`/`false` and `null` are bare (`{temperature:15}` in Google's own
//!   function-response example), objects and lists nest.
//! - `<start_function_response>` is the extra stop token after a call; when present it is
//!   part of the call's span. A model run without that stop sequence goes on to invent the
//!   tool's answer, `<start_function_response>response:NAME{…}<end_function_response>`;
//!   such a complete invented response right after a call is swallowed into the call's span
//!   (it is neither speech nor a call).
//!
//! Sources: Google's FunctionGemma "formatting and best practices" guide (control tokens,
//! `<escape>` delimiter, declaration/call/response examples), vLLM's `functiongemma` tool
//! parser and its tests, traces of fine-tuned FunctionGemma output.
//!
//! # Decisions and edge cases
//!
//! - The small model often wraps numbers and booleans in `<escape>` too
//!   (`count:<escape>42<escape>`). vLLM reads those as JSON; here such a string is typed
//!   only when the tool's schema declares the parameter non-string
//!   (`shared::call_value::type_args`); otherwise it stays a string.
//! - Everything else follows `gemma`: fail closed on unquoted words, trailing commas,
//!   JSON quotes; a complete body without `<end_function_call>` is accepted only at the end
//!   of the output; streaming reports an open block as `Pending`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};

use super::shared::call_value::{marked_at, swallow_invented_response, Dialect, Step};
use super::shared::memo_find::Finder;

pub struct Functiongemma;

const FUNCTIONGEMMA: Dialect = Dialect {
    open: "<start_function_call>",
    close: "<end_function_call>",
    alt_close: &[],
    trailer: &["<start_function_response>"],
    quote: "<escape>",
    response_end: "<end_function_response>",
};

impl Detector for Functiongemma {
    fn name(&self) -> &str {
        "functiongemma"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["<start_function_call>"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let d = &FUNCTIONGEMMA;
        let mut opens = Finder::new(text, d.open);
        let mut closes = Finder::new(text, d.close);
        let mut response_ends = Finder::new(text, d.response_end);
        let mut pos = 0;
        while let Some(at) = opens.next(pos) {
            let step = marked_at(d, text, at, ctx, &mut opens, &mut closes);
            match swallow_invented_response(d, text, step, &mut opens, &mut response_ends) {
                Step::Next(found, resume) => {
                    out.extend(found);
                    pos = resume.max(at + 1);
                }
                Step::Stop(found) => {
                    out.extend(found);
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{
        check_spans, detect, megabyte_of_each, named_args as calls, reason,
    };
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run_with(text: &str, eof: bool, tools: &ToolSet) -> Vec<Found> {
        let out = detect(&Functiongemma, text, eof, tools);
        check_spans(text, &out);
        out
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        run_with(text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn single_and_parallel() {
        let t = "<start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}<end_function_call>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(
            calls(&out[0]),
            vec![(
                "get_current_weather".into(),
                json!({"location": "Tokyo, Japan"})
            )]
        );
        let t = "<start_function_call>call:get_weather{city:<escape>Tokyo<escape>}<end_function_call><start_function_call>call:get_stock_price{symbol:<escape>GOOG<escape>,n:3}<end_function_call><start_function_response>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].span.end, t.len());
        assert_eq!(calls(&out[1])[0].1, json!({"symbol": "GOOG", "n": 3}));
    }

    #[test]
    fn nested_values() {
        let t = "<start_function_call>call:f{o:{a:<escape>x<escape>,b:[1,true,<escape>y<escape>]},z:null}<end_function_call>";
        assert_eq!(
            calls(&run(t, true)[0])[0].1,
            json!({"o": {"a": "x", "b": [1, true, "y"]}, "z": null})
        );
    }

    #[test]
    fn escaped_numbers_follow_the_schema() {
        let tools = ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"search","parameters":{"type":"object",
            "properties":{"query":{"type":"string"},"limit":{"type":"integer"}}}}}]"#,
        )
        .unwrap();
        let t = "<start_function_call>call:search{query:<escape>42<escape>,limit:<escape>10<escape>}<end_function_call>";
        let out = run_with(t, true, &tools);
        assert_eq!(calls(&out[0])[0].1, json!({"query": "42", "limit": 10}));
    }

    #[test]
    fn invented_response_is_swallowed() {
        let t = "<start_function_call>call:get_time{}<end_function_call><start_function_response>response:get_time{value:<escape>noon<escape>}<end_function_response>It is noon.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "It is noon.");
        // a response that never ends is left alone
        let t = "<start_function_call>call:get_time{}<end_function_call><start_function_response>response:get_time{";
        let out = run(t, true);
        assert_eq!(&t[out[0].span.end..], "response:get_time{");
    }

    #[test]
    fn streaming_and_unclosed() {
        for t in [
            "Ok <start_function_call>",
            "Ok <start_function_call>call:get_weather{city:<escape>Tok",
            "Ok <start_function_call>call:get_weather{city:<esc",
            "Ok <start_function_call>call:get_time{}",
            "Ok <start_function_call>call:get_time{}<end_func",
        ] {
            let out = run(t, false);
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(out[0].span, 3..t.len());
        }
        let out = run("<start_function_call>call:get_time{}", true);
        assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))]);
        let out = run(
            "<start_function_call>call:get_weather{city:<escape>Tok",
            true,
        );
        assert!(reason(&out[0]).contains("unterminated"));
    }

    #[test]
    fn malformed() {
        let t = "<start_function_call>call:get_weather{city:Tokyo}<end_function_call>";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("unquoted value `Tokyo`"));
        assert_eq!(out[0].span, 0..t.len());
        // Gemma 4's quote token is not FunctionGemma's
        let t = "<start_function_call>call:f{a:<|\"|>x<|\"|>}<end_function_call>";
        assert!(reason(&run(t, true)[0]).contains("missing value"));
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        megabyte_of_each(&[
            "<start_function_call>",
            "<start_function_call>call:f{a:<escape>",
            "<start_function_call>call:f{}<end_function_call><start_function_response>response:",
            "<end_function_call>",
            "<escape>{[",
        ], run);
    }
}
