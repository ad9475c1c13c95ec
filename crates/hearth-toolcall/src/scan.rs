//! Shared scanning helpers for detectors: balanced JSON, call objects, typed XML values.
//!
//! Everything here is linear in its input and never panics on any `&str`.

use serde_json::{Map, Value};

use super::detector::{Candidate, DetectCtx};
use super::pyliteral;

/// Result of scanning for the end of a bracketed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// The value ends just before this byte offset.
    Complete(usize),
    /// The text ended inside the value.
    Incomplete,
    /// Brackets do not match; the scan stopped at this byte offset.
    Invalid(usize),
}

/// Maximum bracket nesting we follow. Deeper input is reported invalid, not recursed into.
pub const MAX_DEPTH: usize = 128;

/// Find the end of the JSON-ish value that starts with `{` or `[` at `start`, honouring
/// double-quoted strings (and, when `single_quotes`, Python's single-quoted strings).
/// Linear in the length scanned.
pub fn balanced_end(text: &str, start: usize, single_quotes: bool) -> Scan {
    let b = text.as_bytes();
    let mut stack: Vec<u8> = Vec::new();
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' | b'[' | b'(' => {
                if stack.len() >= MAX_DEPTH {
                    return Scan::Invalid(i);
                }
                stack.push(match c {
                    b'{' => b'}',
                    b'[' => b']',
                    _ => b')',
                });
            }
            b'}' | b']' | b')' => match stack.pop() {
                Some(want) if want == c => {
                    if stack.is_empty() {
                        return Scan::Complete(i + 1);
                    }
                }
                _ => return Scan::Invalid(i),
            },
            b'"' | b'\'' if c == b'"' || single_quotes => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Scan::Incomplete,
                        Some(b'\\') => i += 2,
                        Some(&q) if q == c => break,
                        Some(_) => i += 1,
                    }
                }
            }
            _ => {
                if stack.is_empty() {
                    // `start` did not point at an opening bracket.
                    return Scan::Invalid(i);
                }
            }
        }
        i += 1;
    }
    Scan::Incomplete
}

/// Skip ASCII/Unicode whitespace from `i`; returns the new offset.
pub fn skip_ws(text: &str, i: usize) -> usize {
    let rest = &text[i.min(text.len())..];
    text.len() - rest.trim_start().len()
}

/// True if `s` is empty or whitespace only.
pub fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// Decode arguments that arrived as a JSON-encoded string, once. Anything else is returned
/// as it is (validation reports non-objects).
pub fn decode_args(v: Value) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Value::Object(Map::new());
            }
            match serde_json::from_str::<Value>(t) {
                Ok(inner @ Value::Object(_)) => inner,
                _ => Value::String(s),
            }
        }
        other => other,
    }
}

/// Read one call from a JSON object in any of the common shapes:
/// `{"name", "arguments"|"parameters"}`, OpenAI's `{"type":"function","function":{…}}`,
/// `{"function": {"name", "arguments"}}`, Cohere's `{"tool_name", "parameters"}`, and the
/// fail-closed note's `{"tool", "arguments"}`. A model-emitted `id` / `tool_call_id` / `call_id`
/// is kept verbatim. A missing arguments key means "no arguments" (`{}`), never filled.
pub fn call_from_object(obj: &Map<String, Value>) -> Result<Candidate, String> {
    if let Some(Value::Object(f)) = obj.get("function") {
        let mut c = call_from_object(f)?;
        if c.id.is_none() {
            c.id = id_of(obj);
        }
        return Ok(c);
    }
    let name = ["name", "tool_name", "tool", "function"]
        .iter()
        .find_map(|k| obj.get(*k))
        .ok_or_else(|| "call object has no \"name\" key".to_string())?;
    let name = match name {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_string(),
        Value::String(_) => return Err("call object has an empty \"name\"".into()),
        other => {
            return Err(format!(
                "call name must be a string, got {}",
                type_name(other)
            ))
        }
    };
    let args = ["arguments", "parameters", "args"]
        .iter()
        .find_map(|k| obj.get(*k))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    Ok(Candidate {
        name,
        arguments: decode_args(args),
        id: id_of(obj),
    })
}

/// True if a JSON object has the shape of a call: a string name key plus (optionally) an
/// arguments key, and no keys foreign to a call. Loose detectors use this so ordinary JSON
/// data in a reply is not mistaken for a call.
pub fn looks_like_call(obj: &Map<String, Value>) -> bool {
    if let Some(Value::Object(f)) = obj.get("function") {
        return looks_like_call(f)
            && obj.keys().all(|k| {
                matches!(
                    k.as_str(),
                    "function" | "type" | "id" | "tool_call_id" | "call_id"
                )
            });
    }
    let has_name = ["name", "tool_name", "tool"]
        .iter()
        .any(|k| matches!(obj.get(*k), Some(Value::String(_))));
    has_name
        && obj.keys().all(|k| {
            matches!(
                k.as_str(),
                "name"
                    | "tool_name"
                    | "tool"
                    | "arguments"
                    | "parameters"
                    | "args"
                    | "id"
                    | "tool_call_id"
                    | "call_id"
                    | "type"
            )
        })
}

fn id_of(obj: &Map<String, Value>) -> Option<String> {
    ["id", "tool_call_id", "call_id"]
        .iter()
        .find_map(|k| match obj.get(*k) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
}

/// Human name of a JSON type, for error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parse a JSON value holding one call object or a list of call objects.
pub fn calls_from_json(v: &Value) -> Result<Vec<Candidate>, String> {
    match v {
        Value::Object(o) => Ok(vec![call_from_object(o)?]),
        Value::Array(items) => {
            if items.is_empty() {
                return Err("empty list of calls".into());
            }
            items
                .iter()
                .map(|it| match it {
                    Value::Object(o) => call_from_object(o),
                    other => Err(format!("call must be an object, got {}", type_name(other))),
                })
                .collect()
        }
        other => Err(format!(
            "expected a call object or a list of them, got {}",
            type_name(other)
        )),
    }
}

/// Parse `s` as JSON and read calls from it; the error names the problem.
pub fn parse_calls_json(s: &str) -> Result<Vec<Candidate>, String> {
    let v: Value = serde_json::from_str(s.trim()).map_err(|e| format!("malformed JSON: {e}"))?;
    calls_from_json(&v)
}

/// Parse a JSON object of arguments; a JSON-encoded string of an object is decoded once.
pub fn parse_args_json(s: &str) -> Result<Value, String> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let v: Value = serde_json::from_str(t).map_err(|e| format!("malformed JSON arguments: {e}"))?;
    Ok(decode_args(v))
}

/// Type one textual parameter value (XML-style formats) by the tool's JSON Schema:
/// strings stay verbatim; numbers, booleans, null, objects and arrays are parsed. A value
/// that does not parse as its declared type is kept as a string, so validation fails with
/// a clear reason rather than the value being guessed. Without a schema, JSON is tried and
/// text stays text.
pub fn typed_value(raw: &str, schema: Option<&Value>) -> Value {
    let text = strip_one_newline(raw);
    let types = schema.map(schema_types).unwrap_or_default();
    if types.is_empty() {
        return untyped_value(text);
    }
    for t in &types {
        match *t {
            "string" => {}
            "integer" | "number" => {
                if let Ok(v @ Value::Number(_)) = serde_json::from_str::<Value>(text.trim()) {
                    return v;
                }
            }
            "boolean" => match text.trim() {
                "true" | "True" => return Value::Bool(true),
                "false" | "False" => return Value::Bool(false),
                _ => {}
            },
            "null" => {
                if matches!(text.trim(), "null" | "None") {
                    return Value::Null;
                }
            }
            "object" | "array" => {
                if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
                    if v.is_object() || v.is_array() {
                        return v;
                    }
                }
                if let Ok(v) = pyliteral::parse_literal(text.trim()) {
                    if v.is_object() || v.is_array() {
                        return v;
                    }
                }
            }
            _ => {}
        }
    }
    Value::String(text.to_string())
}

fn untyped_value(text: &str) -> Value {
    let t = text.trim();
    match serde_json::from_str::<Value>(t) {
        Ok(v @ (Value::Object(_) | Value::Array(_) | Value::Number(_) | Value::Bool(_))) => v,
        _ => Value::String(text.to_string()),
    }
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => {
            if schema.get("enum").is_some() || schema.get("const").is_some() {
                vec!["string"]
            } else {
                Vec::new()
            }
        }
    }
}

/// XML formats put values on their own line: drop exactly one leading and one trailing newline.
fn strip_one_newline(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// Type a parameter of `tool` by its schema through the detector context.
pub fn typed_param(ctx: &DetectCtx<'_>, tool: &str, param: &str, raw: &str) -> Value {
    typed_value(raw, ctx.param_schema(tool, param))
}

/// Decode the five XML entities (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`); other text is kept.
pub fn xml_unescape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('&') {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// If the text around `span` is a markdown code fence holding only that span
/// (```` ```json\n{…}\n``` ````), widen the span to cover the fence markers.
pub fn widen_over_fence(text: &str, start: usize, end: usize) -> (usize, usize) {
    let before = text[..start].trim_end_matches([' ', '\t', '\r', '\n']);
    let line_start = before.rfind('\n').map(|p| p + 1).unwrap_or(0);
    let opener = &before[line_start..];
    let Some(lang) = opener.trim_start().strip_prefix("```") else {
        return (start, end);
    };
    if !lang
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return (start, end);
    }
    let after = &text[end..];
    let trimmed = after.trim_start_matches([' ', '\t', '\r', '\n']);
    if let Some(rest) = trimmed.strip_prefix("```") {
        let close_end = text.len() - rest.len();
        let fence_start = line_start + (opener.len() - opener.trim_start().len());
        return (fence_start, close_end);
    }
    (start, end)
}

/// Iterate over the byte offsets of every occurrence of `needle` in `hay`, non-overlapping.
pub fn find_all<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes())
}

/// Find `needle` in `hay` at or after `from`.
pub fn find_from(hay: &str, needle: &str, from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    let h = &hay.as_bytes()[from..];
    let n = needle.as_bytes();
    let Some((&first, rest)) = n.split_first() else {
        return Some(from);
    };
    // Detectors ask for the next of a short fixed marker again and again: a first-byte
    // scan costs nothing to set up (a memmem searcher per call does). Each candidate
    // position costs at most `needle.len()` byte comparisons.
    let mut i = 0;
    while let Some(p) = memchr::memchr(first, &h[i..]) {
        let at = i + p;
        if h[at + 1..].starts_with(rest) {
            return Some(from + at);
        }
        i = at + 1;
    }
    None
}

/// True if `s` is a plausible function name: letters, digits, `_`, `-`, `.`, not starting
/// with a digit, at most 128 bytes.
pub fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn balanced_handles_strings_and_nesting() {
        let t = r#"x {"a": "}]", "b": [1, {"c": 2}]} y"#;
        assert_eq!(balanced_end(t, 2, false), Scan::Complete(t.len() - 2));
        assert_eq!(balanced_end("{\"a\": [1, 2}", 0, false), Scan::Invalid(11));
        assert_eq!(balanced_end("{\"a\": [1, 2", 0, false), Scan::Incomplete);
        assert_eq!(balanced_end("{'a': '}'}", 0, true), Scan::Complete(10));
    }

    #[test]
    fn deep_nesting_is_invalid_not_a_crash() {
        let t = "[".repeat(10_000);
        assert!(matches!(balanced_end(&t, 0, false), Scan::Invalid(_)));
    }

    #[test]
    fn call_shapes() {
        let c = parse_calls_json(r#"{"name":"a","parameters":{"x":1}}"#).unwrap();
        assert_eq!(c[0].arguments, json!({"x":1}));
        let c = parse_calls_json(
            r#"{"type":"function","id":"call_1","function":{"name":"a","arguments":"{\"x\":1}"}}"#,
        )
        .unwrap();
        assert_eq!(c[0].arguments, json!({"x":1}));
        assert_eq!(c[0].id.as_deref(), Some("call_1"));
        assert!(parse_calls_json(r#"{"nom":"a"}"#).is_err());
        assert!(parse_calls_json(r#"{"name":"a", "arguments": {]}"#)
            .unwrap_err()
            .contains("malformed JSON"));
    }

    #[test]
    fn typed_values_follow_schema() {
        let int = json!({"type":"integer"});
        assert_eq!(typed_value("\n42\n", Some(&int)), json!(42));
        assert_eq!(typed_value("forty", Some(&int)), json!("forty"));
        assert_eq!(
            typed_value("True", Some(&json!({"type":"boolean"}))),
            json!(true)
        );
        assert_eq!(
            typed_value("007", Some(&json!({"type":"string"}))),
            json!("007")
        );
        assert_eq!(
            typed_value("{'a': 1}", Some(&json!({"type":"object"}))),
            json!({"a":1})
        );
        assert_eq!(typed_value("12", None), json!(12));
        assert_eq!(typed_value("Paris", None), json!("Paris"));
    }

    #[test]
    fn fence_widening() {
        let t = "Sure:\n```json\n{\"a\":1}\n```\nok";
        let s = t.find('{').unwrap();
        let e = t.find('}').unwrap() + 1;
        let (a, b) = widen_over_fence(t, s, e);
        assert_eq!(&t[a..b], "```json\n{\"a\":1}\n```");
    }
}

/// Helpers shared by the detectors' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind};
    use crate::validate::ToolSet;
    use serde_json::Value;

    /// Run one detector over `text` (the whole output when `eof`) with `tools` on offer.
    pub(crate) fn detect(d: &dyn Detector, text: &str, eof: bool, tools: &ToolSet) -> Vec<Found> {
        let ctx = DetectCtx { eof, tools };
        let mut out = Vec::new();
        d.detect(text, &ctx, &mut out);
        out
    }

    /// Run one detector over `text` with every tool allowed (`ToolSet::unrestricted`).
    pub(crate) fn detect_any(d: &dyn Detector, text: &str, eof: bool) -> Vec<Found> {
        detect(d, text, eof, &ToolSet::unrestricted())
    }

    /// Assert that the spans of `out` are non-empty, in order, disjoint, inside `text`
    /// and on char boundaries.
    pub(crate) fn check_spans(text: &str, out: &[Found]) {
        let mut last = 0;
        for f in out {
            assert!(f.span.start >= last && f.span.start < f.span.end && f.span.end <= text.len());
            assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
            last = f.span.end;
        }
    }

    /// Feed `run` each unit repeated to about a megabyte, at the end and then while
    /// streaming: adversarial input must neither panic nor take long.
    pub(crate) fn megabyte_of_each(units: &[&str], run: impl Fn(&str, bool) -> Vec<Found>) {
        for unit in units {
            let t = unit.repeat(1_000_000 / unit.len());
            run(&t, true);
            run(&t, false);
        }
    }

    /// A tool set from an OpenAI-style `tools` JSON fixture.
    pub(crate) fn tools(json: &str) -> ToolSet {
        ToolSet::from_openai_json(json).unwrap()
    }

    /// The calls of a found; panics if it is not `Calls`.
    pub(crate) fn calls(f: &Found) -> Vec<Candidate> {
        match &f.kind {
            FoundKind::Calls(c) => c.clone(),
            k => panic!("expected calls, got {k:?}"),
        }
    }

    /// The name and arguments of each call of a found; panics if it is not `Calls`.
    pub(crate) fn named_args(f: &Found) -> Vec<(String, Value)> {
        calls(f)
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect()
    }

    /// The name and arguments of the first call of a found; panics if it is not `Calls`.
    pub(crate) fn first_call(f: &Found) -> (String, Value) {
        named_args(f).swap_remove(0)
    }

    /// The names of the calls of a found; panics if it is not `Calls`.
    pub(crate) fn names(f: &Found) -> Vec<String> {
        calls(f).into_iter().map(|c| c.name).collect()
    }

    /// The reason of a malformed found; panics if it is not `Malformed`.
    pub(crate) fn reason(f: &Found) -> String {
        match &f.kind {
            FoundKind::Malformed { reason, .. } => reason.clone(),
            k => panic!("expected malformed, got {k:?}"),
        }
    }
}
