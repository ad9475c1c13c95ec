//! `json`: a bare call object anywhere in the reply (loose).
//!
//! What it looks like:
//!
//! ````text
//! {"name": "get_weather", "arguments": {"location": "Paris"}}
//! ```json
//! {
//!   "name": "set_light",
//!   "arguments": {"room": "kitchen", "on": true}
//! }
//! ```
//! ````
//!
//! Who emits it: any model told to "answer with a JSON object" (the fail-closed note's
//! `{"tool": …, "arguments": …}`), models whose template wraps calls in tags they forget
//! to write, and Qwen2.5-Coder-0.5B with its own template, which answers with a
//! pretty-printed call in a ```` ```json ```` fence (see `shared/models/README.md`).
//! Shapes accepted are those of [`scan::call_from_object`]: `{"name", "arguments"|"parameters"}`,
//! OpenAI's `{"type":"function","function":{…}}`, `{"tool_name", "parameters"}`,
//! `{"tool", "arguments"}`.
//!
//! Conservative rules, because this runs on prose:
//! - only an object that starts like JSON (`{` then a `"key"`) is looked at, and only at
//!   top level: an object nested inside other JSON (`{"data": {"name": …}}`) is skipped
//!   with its parent, and arrays of objects (`[{…}]`) are left whole to `xlam`;
//! - an object right after another format's opening marker (`<minimax:tool_call>{…}`,
//!   `<function_call>`, `[TOOL_CALLS]`) is that format's payload: its own strict detector
//!   judges it (also when it calls it malformed), so it is skipped here;
//! - the object must pass [`scan::looks_like_call`] (no foreign keys), its name must be an
//!   identifier, and it must carry an arguments key unless it is the entire reply;
//! - a fenced object has its span widened over the fence so the fence markers leave the reply;
//! - an object that opens with a call key (`{"name"`, `{"arguments"`, …) but is not valid
//!   JSON is reported malformed (with the serde error); other broken JSON is ignored;
//! - while streaming, an unfinished object whose first key is (a prefix of) a call key is
//!   pending from its `{`.
//!
//! Edge cases: arguments given as a JSON-encoded string are decoded once; a model-emitted
//! `id` is kept; data objects such as `{"name": "Alice", "age": 3}` are not calls.
//!
//! The object helpers are shared with the other JSON-based detectors of this group
//! (llama32, xlam, phi4, lfm2, tool_request, functionary_v32, llama31_function): see
//! `shared::json_object` and `shared::json_finder`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan::{self, Scan};

use super::shared::json_object::{
    after_wrapper_tag, guess_name, loose_call, object_head, parse_object, skip_object_array, widen,
    Head, Whole,
};

pub struct Json;

impl Detector for Json {
    fn name(&self) -> &str {
        "json"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Loose
    }
    fn triggers(&self) -> &[&str] {
        &["{"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let whole = Whole::of(text);
        let mut last_end = 0;
        let mut i = 0;
        for (s, &c) in text.as_bytes().iter().enumerate() {
            if (c != b'{' && c != b'[') || s < i {
                continue;
            }
            if c == b'[' {
                // A JSON array of objects is the `xlam` detector's; skip it whole.
                i = skip_object_array(text, s).unwrap_or(s + 1);
                continue;
            }
            let head = object_head(text, s);
            if head == Head::NotJson {
                i = s + 1;
                continue;
            }
            if after_wrapper_tag(text, s) {
                // Another format's payload: skip it whole.
                i = match scan::balanced_end(text, s, false) {
                    Scan::Complete(e) => e,
                    Scan::Invalid(at) => at + 1,
                    Scan::Incomplete => break,
                };
                continue;
            }
            match scan::balanced_end(text, s, false) {
                Scan::Complete(e) => {
                    let (a, z) = widen(text, s, e, last_end);
                    match parse_object(&text[s..e]) {
                        Ok(obj) => {
                            if let Some(c) = loose_call(&obj, whole.covers(a, z)) {
                                out.push(Found::call(a..z, c));
                                last_end = z;
                            }
                        }
                        Err(reason) if head == Head::Call => {
                            out.push(Found::malformed(
                                a..z,
                                guess_name(&text[s..e]),
                                format!("malformed JSON call object: {reason}"),
                            ));
                            last_end = z;
                        }
                        Err(_) => {}
                    }
                    i = e;
                }
                Scan::Invalid(at) => {
                    let end = (at + 1).min(text.len());
                    if head == Head::Call {
                        out.push(Found::malformed(
                            s..end,
                            guess_name(&text[s..end]),
                            format!(
                                "malformed JSON call object: mismatched bracket at byte {}",
                                at - s
                            ),
                        ));
                        last_end = end;
                    }
                    i = end.max(s + 1);
                }
                Scan::Incomplete => {
                    if !ctx.eof {
                        if head != Head::Other {
                            out.push(Found::pending(s..text.len()));
                        }
                    } else if head == Head::Call {
                        out.push(Found::malformed(
                            s..text.len(),
                            guess_name(&text[s..]),
                            "malformed JSON call object: unterminated object (the text ends inside it)",
                        ));
                    }
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
    use crate::scan::testing::{calls, detect_any, megabyte_of_each};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Json, text, eof)
    }

    #[test]
    fn bare_object_in_prose() {
        let t = r#"Sure. {"name": "get_weather", "arguments": {"location": "Paris"}} One moment."#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            &t[out[0].span.clone()],
            r#"{"name": "get_weather", "arguments": {"location": "Paris"}}"#
        );
        assert_eq!(calls(&out[0])[0].arguments, json!({"location": "Paris"}));
    }

    #[test]
    fn qwen_coder_fenced_pretty_printed() {
        let t = "```json\n{\n  \"name\": \"set_light\",\n  \"arguments\": {\n    \"room\": \"kitchen\",\n    \"on\": true\n  }\n}\n```";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(calls(&out[0])[0].name, "set_light");
    }

    #[test]
    fn nested_and_data_objects_are_not_calls() {
        assert!(run(r#"{"data": {"name": "x", "arguments": {}}}"#, true).is_empty());
        assert!(run(r#"Here: {"name": "Alice", "age": 3}"#, true).is_empty());
        assert!(run(r#"Here: {"name": "Alice"} ok"#, true).is_empty());
        assert!(run("Use {braces} and {} freely.", true).is_empty());
        for t in [
            "<minimax:tool_call>{\"name\": \"get_time\", \"parameters\": {}}</minimax:tool_call>",
            "<seed:tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</seed:tool_call>",
            "[TOOL_CALLS] {\"name\": \"get_time\", \"arguments\": {}}",
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
        assert_eq!(
            run(
                "<think>hm</think>{\"name\": \"get_time\", \"arguments\": {}}",
                true
            )
            .len(),
            1
        );
        assert_eq!(
            run("[1] {\"name\": \"get_time\", \"arguments\": {}}", true).len(),
            1
        );
        assert!(run(r#"{"name": "not a name", "arguments": {}}"#, true).is_empty());
        assert!(run(r#"[{"name": "get_time", "arguments": {}},]"#, true).is_empty());
        assert!(run(r#"[{"name": "get_time", "arguments": {}}]"#, true).is_empty());
        assert_eq!(
            run(r#"[see] {"name": "get_time", "arguments": {}}"#, true).len(),
            1
        );
    }

    #[test]
    fn whole_reply_needs_no_arguments_key() {
        let out = run("{\"name\": \"get_time\"}<|im_end|>", true);
        assert_eq!(calls(&out[0])[0].name, "get_time");
    }

    #[test]
    fn openai_wrapper_and_string_arguments() {
        let t = r#"{"type": "function", "id": "call_7", "function": {"name": "add", "arguments": "{\"x\": 1, \"y\": 2}"}}"#;
        let out = run(t, true);
        let c = &calls(&out[0])[0];
        assert_eq!(c.arguments, json!({"x": 1, "y": 2}));
        assert_eq!(c.id.as_deref(), Some("call_7"));
    }

    #[test]
    fn malformed_call_json_is_reported() {
        let out = run(
            r#"{"name": "get_weather", "arguments": {"location": "Paris",}}"#,
            true,
        );
        match &out[0].kind {
            FoundKind::Malformed { name, reason } => {
                assert_eq!(name.as_deref(), Some("get_weather"));
                assert!(reason.contains("malformed JSON"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let out = run(
            r#"{"name": "get_weather", "arguments": {"location": "Paris"]}"#,
            true,
        );
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn streaming_pending_and_eof() {
        let t = r#"One moment {"name": "get_wea"#;
        let out = run(t, false);
        assert_eq!(out, vec![Found::pending(11..t.len())]);
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(run("Hi {", false), vec![Found::pending(3..4)]);
        assert_eq!(run("Hi {\"na", false), vec![Found::pending(3..7)]);
        assert!(run("Hi {\"data\": 1", false).is_empty());
        assert!(run("Hi {", true).is_empty());
    }

    #[test]
    fn two_objects() {
        let t =
            r#"{"name": "get_time", "arguments": {}} and {"name": "get_date", "arguments": {}}"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(out[0].span.end <= out[1].span.start);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "{",
                "{\"",
                "{\"name\": ",
                "{\"a\": [",
                "}{",
                "{\"name\":\"x\",\"arguments\":{}}",
            ],
            run,
        );
    }
}
