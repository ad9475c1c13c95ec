//! `xlam`: Salesforce xLAM / Hammer JSON call lists (loose).
//!
//! What it looks like (xLAM model cards and prompt template, the vLLM `xlam` parser and
//! its tests, SGLang's detector list):
//!
//! ````text
//! [{"name": "get_weather", "arguments": {"location": "Paris"}}, {"name": "get_time", "arguments": {}}]
//! ```json
//! [{"name": "get_time", "arguments": {}}]
//! ```
//! {"tool_calls": [{"name": "get_weather", "arguments": {"location": "Paris"}}]}
//! {"name": "get_time", "arguments": {}}
//! ````
//!
//! - xLAM-2 and Hammer answer with a JSON array of `{"name", "arguments"}` objects, often
//!   alone, sometimes in a ```` ```json ```` fence (the span is widened over the fence) or
//!   after a short sentence.
//! - The first xLAM releases (xLAM-1b/7b-fc-r) were prompted to answer
//!   `{"tool_calls": [ … ]}`; an empty list there means "no call": it is reported as a
//!   construct holding no calls, so the JSON leaves the reply (an empty
//!   [`FoundKind::Calls`](crate::detector::FoundKind::Calls)).
//! - A single call object counts only when it is the entire reply (the `json` detector
//!   covers single objects elsewhere in prose).
//!
//! Conservative rules, because this runs on prose: the array must start `[` `{` `"key"`,
//! sit at top level (not inside other JSON, not indexing `x[…]`), and every element must be
//! a call by [`scan::looks_like_call`] with an identifier name and an arguments key (the key
//! may be missing only when the list is the entire reply). Data arrays such as
//! `[{"name": "Alice", "age": 3}]` are ignored. An array that opens with a call key but is
//! broken JSON is reported malformed with the serde error; while streaming an unfinished
//! one is pending from its `[`.

use serde_json::{Map, Value};

use super::shared::json_finder::{is_partial_of, ws};
use super::shared::json_object::{
    after_wrapper_tag, guess_name, loose_call, object_head, parse_object, widen, Head, Whole,
};
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan::{self, Scan};

pub struct Xlam;

impl Detector for Xlam {
    fn name(&self) -> &str {
        "xlam"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Loose
    }
    fn triggers(&self) -> &[&str] {
        &["[", "{"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let whole = Whole::of(text);
        let b = text.as_bytes();
        let mut cursor = 0;
        let mut last_end = 0;
        for (s, &c) in b.iter().enumerate() {
            if s < cursor || (c != b'[' && c != b'{') {
                continue;
            }
            let step = if b[s] == b'[' {
                array_at(text, s, ctx.eof, whole, last_end)
            } else {
                object_at(text, s, ctx.eof, whole, last_end)
            };
            match step {
                Step::Skip(next) => cursor = next.max(s + 1),
                Step::Found(f) => {
                    cursor = f.span.end.max(s + 1);
                    last_end = f.span.end;
                    out.push(f);
                }
                Step::Last(f) => {
                    out.extend(f);
                    return;
                }
            }
        }
    }
}

enum Step {
    Skip(usize),
    Found(Found),
    /// The rest of the text is inside an unterminated value (pending, malformed or nothing).
    Last(Option<Found>),
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Skip another format's payload at `s` whole.
fn skip_whole(text: &str, s: usize) -> Step {
    match scan::balanced_end(text, s, false) {
        Scan::Complete(e) => Step::Skip(e),
        Scan::Invalid(at) => Step::Skip(at + 1),
        Scan::Incomplete => Step::Last(None),
    }
}

/// Calls from the elements of a JSON array, if every element is a call.
fn calls_of(items: &[Value], whole: bool) -> Option<Vec<Candidate>> {
    if items.is_empty() {
        return None;
    }
    items
        .iter()
        .map(|it| match it {
            Value::Object(o) => loose_call(o, whole),
            _ => None,
        })
        .collect()
}

fn array_at(text: &str, s: usize, eof: bool, whole: Whole, floor: usize) -> Step {
    let b = text.as_bytes();
    if s > 0 && b.get(s - 1).is_some_and(|c| is_name_byte(*c)) {
        // `functools[…]`, `items[…]`: another format's prefix or an index, not a bare list.
        return Step::Skip(s + 1);
    }
    let j = ws(text, s + 1);
    let head = match b.get(j) {
        None if !eof => return Step::Last(Some(Found::pending(s..text.len()))),
        Some(b'{') => object_head(text, j),
        _ => return Step::Skip(s + 1),
    };
    if head == Head::NotJson {
        return Step::Skip(s + 1);
    }
    if after_wrapper_tag(text, s) {
        return skip_whole(text, s);
    }
    match scan::balanced_end(text, s, false) {
        Scan::Complete(e) => {
            let (a, z) = widen(text, s, e, floor);
            match serde_json::from_str::<Value>(&text[s..e]) {
                Ok(Value::Array(items)) => match calls_of(&items, whole.covers(a, z)) {
                    Some(calls) => Step::Found(Found::calls(a..z, calls)),
                    None => Step::Skip(e),
                },
                Ok(_) => Step::Skip(e),
                Err(err) if head == Head::Call => Step::Found(Found::malformed(
                    a..z,
                    guess_name(&text[s..e]),
                    format!("malformed JSON call list: {err}"),
                )),
                Err(_) => Step::Skip(e),
            }
        }
        Scan::Invalid(at) => {
            let end = (at + 1).min(text.len());
            if head == Head::Call {
                Step::Found(Found::malformed(
                    s..end,
                    guess_name(&text[s..end]),
                    format!(
                        "malformed JSON call list: mismatched bracket at byte {}",
                        at - s
                    ),
                ))
            } else {
                Step::Skip(end)
            }
        }
        Scan::Incomplete => Step::Last(incomplete(text, s, eof, head, "call list")),
    }
}

fn incomplete(text: &str, s: usize, eof: bool, head: Head, what: &str) -> Option<Found> {
    if !eof {
        (head != Head::Other).then(|| Found::pending(s..text.len()))
    } else {
        (head == Head::Call).then(|| {
            Found::malformed(
                s..text.len(),
                guess_name(&text[s..]),
                format!("malformed JSON {what}: unterminated (the text ends inside it)"),
            )
        })
    }
}

/// Whether the `{` at `s` opens with the `"tool_calls"` key (xLAM v1): `(yes, maybe)`,
/// where `maybe` means the text ends inside that key.
fn tool_calls_head(text: &str, s: usize) -> (bool, bool) {
    const KEY: &str = "\"tool_calls\"";
    let rest = text.get(ws(text, s + 1)..).unwrap_or("");
    (rest.starts_with(KEY), is_partial_of(rest, &[KEY]))
}

/// `{"tool_calls": [...]}` (optionally with a `"thought"`): the calls, or `None` if the
/// object is not that wrapper. An empty list yields `Some(vec![])`.
fn wrapped_calls(obj: &Map<String, Value>) -> Option<Vec<Candidate>> {
    let Some(Value::Array(items)) = obj.get("tool_calls") else {
        return None;
    };
    if !obj.keys().all(|k| k == "tool_calls" || k == "thought") {
        return None;
    }
    if items.is_empty() {
        return Some(Vec::new());
    }
    calls_of(items, true)
}

fn object_at(text: &str, s: usize, eof: bool, whole: Whole, floor: usize) -> Step {
    let (wrapper, maybe_wrapper) = tool_calls_head(text, s);
    let head = match object_head(text, s) {
        Head::NotJson => return Step::Skip(s + 1),
        _ if after_wrapper_tag(text, s) => return skip_whole(text, s),
        _ if wrapper => Head::Call,
        h => h,
    };
    match scan::balanced_end(text, s, false) {
        Scan::Complete(e) => {
            let (a, z) = widen(text, s, e, floor);
            match parse_object(&text[s..e]) {
                Ok(obj) => {
                    if let Some(calls) = wrapped_calls(&obj) {
                        // An empty list is xLAM's "no call": markup holding no calls.
                        return Step::Found(Found::calls(a..z, calls));
                    }
                    match whole.covers(a, z).then(|| loose_call(&obj, true)).flatten() {
                        Some(c) => Step::Found(Found::call(a..z, c)),
                        None => Step::Skip(e),
                    }
                }
                Err(err) if wrapper => Step::Found(Found::malformed(
                    a..z,
                    guess_name(&text[s..e]),
                    format!("malformed JSON tool_calls object: {err}"),
                )),
                Err(_) => Step::Skip(e),
            }
        }
        Scan::Invalid(at) => Step::Skip(at + 1),
        Scan::Incomplete => {
            // Single objects in prose are the `json` detector's; only the whole reply or
            // the tool_calls wrapper is held back here.
            if maybe_wrapper && !eof {
                return Step::Last(Some(Found::pending(s..text.len())));
            }
            let ours = wrapper || whole.lead >= s;
            Step::Last(if ours {
                incomplete(text, s, eof, head, "call object")
            } else {
                None
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{detect_any, megabyte_of_each, names};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Xlam, text, eof)
    }

    #[test]
    fn array_alone_and_in_prose() {
        let t = r#"[{"name": "get_weather", "arguments": {"location": "Paris"}}, {"name": "get_time", "arguments": {}}]"#;
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(names(&out[0]), ["get_weather", "get_time"]);
        let t = format!("Calling now: {t} ok");
        assert_eq!(names(&run(&t, true)[0]), ["get_weather", "get_time"]);
    }

    #[test]
    fn fenced_array_widens() {
        let t = "Sure.\n```json\n[\n  {\"name\": \"get_time\", \"arguments\": {}}\n]\n```\n";
        let out = run(t, true);
        assert_eq!(
            &t[out[0].span.clone()],
            "```json\n[\n  {\"name\": \"get_time\", \"arguments\": {}}\n]\n```"
        );
    }

    #[test]
    fn v1_wrapper() {
        let t = r#"{"tool_calls": [{"name": "add", "arguments": {"x": 1, "y": 2}}]}"#;
        let out = run(t, true);
        match &out[0].kind {
            FoundKind::Calls(c) => assert_eq!(c[0].arguments, json!({"x": 1, "y": 2})),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            run(r#"{"tool_calls": []}"#, true),
            vec![Found::calls(0..18, vec![])]
        );
    }

    #[test]
    fn single_object_only_when_whole() {
        assert_eq!(
            names(&run(r#"{"name": "get_time", "arguments": {}}"#, true)[0]),
            ["get_time"]
        );
        assert!(run(r#"Try {"name": "get_time", "arguments": {}} maybe"#, true).is_empty());
    }

    #[test]
    fn data_is_not_a_call() {
        for t in [
            r#"[{"name": "Alice", "age": 3}]"#,
            r#"Results: [{"name": "Alice"}, {"name": "Bob"}] done"#,
            r#"{"items": [{"name": "get_time", "arguments": {}}]}"#,
            "[1, 2, 3] and [see below] and [{}]",
            r#"x = data[{"name": "a", "arguments": {}}]"#,
            r#"<function_call> [{"name": "get_time", "arguments": {}}]"#,
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
    }

    #[test]
    fn malformed_and_streaming() {
        let out = run(r#"[{"name": "get_time", "arguments": {},}]"#, true);
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), .. } if n == "get_time")
        );
        let t = r#"[{"name": "get_time", "argum"#;
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(run("Ok [", false), vec![Found::pending(3..4)]);
        assert!(run("Ok [", true).is_empty());
        assert_eq!(run("{\"tool_c", false), vec![Found::pending(0..8)]);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "[{",
                "[",
                "{",
                "[{\"name\": ",
                "[{\"name\":\"a\",\"arguments\":{}}]",
                "{\"tool_calls\": [",
            ],
            run,
        );
    }
}
