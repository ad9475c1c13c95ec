//! `granite4`: IBM Granite 4.0's `<tool_call>` format, including its unquoted-key payloads.
//!
//! Granite 4.0 (micro, tiny, small, h-variants, Nano) uses the ChatML-style wrapper: its chat
//! template tells the model to return `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`
//! per call and renders past calls that way, followed by `<|end_of_text|>`. Observed
//! differences from plain hermes output:
//! - `arguments` is often a JSON-encoded string (`"arguments": "{\"city\": \"Paris\"}"`); it is
//!   decoded once;
//! - the small Nano models write the object with unquoted keys and a bare function name,
//!   `{name: get_time, arguments: {"timezone": "Asia/Tokyo"}}` (EdgeVox calls this Granite 4's
//!   "unquoted JSON"), or Python-literal dicts with single quotes / `True`;
//! - under a strong tool prompt they sometimes write a pythonic call inside the block,
//!   `get_time(timezone="Asia/Tokyo")`.
//!
//! All of these are read by a strict grammar, never by repair: keys may be bare identifiers,
//! the value of `name` may be a bare identifier, every other value must be a JSON/Python
//! literal. Anything else is `Malformed` with the JSON error. The block handling (several
//! blocks, unclosed at end of output only when `ctx.eof`, `Pending` while streaming) is the
//! shared `<tool_call>` scanner of `hermes`.

use serde_json::{Map, Number, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::pyliteral;
use crate::scan::{self, MAX_DEPTH};

use super::shared::tagged_blocks::{json_reason, parse_hermes_body, scan_tool_call_blocks, OPEN};

pub struct Granite4;

impl Detector for Granite4 {
    fn name(&self) -> &str {
        "granite4"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        scan_tool_call_blocks(text, ctx, out, parse_granite_body);
    }
}

/// JSON first (the documented format); then the relaxed object / Python literal; then a
/// pythonic call. The JSON error is reported when nothing fits.
fn parse_granite_body(body: &str) -> Result<Vec<Candidate>, String> {
    let json_err = match parse_hermes_body(body) {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    let t = body.trim();
    if t.starts_with(['{', '[']) {
        if let Ok(v) = parse_relaxed(t) {
            return scan::calls_from_json(&v).map_err(|e| json_reason(&e, "<tool_call>"));
        }
        return Err(json_err);
    }
    if let Ok(calls) = pyliteral::parse_call_list(t) {
        return Ok(calls.into_iter().map(py_candidate).collect());
    }
    if let Ok(c) = pyliteral::parse_call(t) {
        return Ok(vec![py_candidate(c)]);
    }
    Err(json_err)
}

fn py_candidate(c: pyliteral::PyCall) -> Candidate {
    Candidate::new(c.name, Value::Object(c.arguments))
}

/// Parse Granite's relaxed object notation: JSON/Python literals, plus bare-identifier keys
/// and a bare-identifier value for the call's `name`. No trailing commas, no comments.
fn parse_relaxed(s: &str) -> Result<Value, String> {
    let mut p = Relaxed {
        s: s.as_bytes(),
        src: s,
        i: 0,
    };
    let v = p.value(0, false)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at byte {}", p.i));
    }
    Ok(v)
}

struct Relaxed<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl Relaxed<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn bare(&mut self) -> &str {
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        {
            self.i += 1;
        }
        &self.src[start..self.i]
    }

    /// One value. `bare_ok`: a bare identifier is accepted as a string (the `name` slot).
    fn value(&mut self, depth: usize, bare_ok: bool) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        self.ws();
        match self.s.get(self.i) {
            None => Err("unexpected end".into()),
            Some(b'{') => {
                self.i += 1;
                self.object(depth)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b']') {
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1, false)?);
                    self.ws();
                    if !self.eat(b',') {
                        self.ws();
                        return if self.eat(b']') {
                            Ok(Value::Array(items))
                        } else {
                            Err(format!("expected ',' or ']' at byte {}", self.i))
                        };
                    }
                }
            }
            Some(b'"') | Some(b'\'') => self.string().map(Value::String),
            Some(c) if c.is_ascii_digit() || *c == b'-' => self.number(),
            Some(_) => {
                let at = self.i;
                let w = self.bare();
                match w {
                    "true" | "True" => Ok(Value::Bool(true)),
                    "false" | "False" => Ok(Value::Bool(false)),
                    "null" | "None" => Ok(Value::Null),
                    "" => Err(format!("unexpected character at byte {at}")),
                    w if bare_ok && scan::is_ident(w) => Ok(Value::String(w.to_string())),
                    w => Err(format!("bare word {w:?} is not a value")),
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        let mut m = Map::new();
        self.ws();
        if self.eat(b'}') {
            return Ok(Value::Object(m));
        }
        loop {
            self.ws();
            let key = match self.s.get(self.i) {
                Some(b'"') | Some(b'\'') => self.string()?,
                _ => {
                    let k = self.bare().to_string();
                    if !scan::is_ident(&k) {
                        return Err(format!("expected a key at byte {}", self.i));
                    }
                    k
                }
            };
            self.ws();
            if !self.eat(b':') {
                return Err(format!("expected ':' at byte {}", self.i));
            }
            let bare_ok = depth == 0 && matches!(key.as_str(), "name" | "function" | "tool_name");
            let v = self.value(depth + 1, bare_ok)?;
            if m.insert(key.clone(), v).is_some() {
                return Err(format!("key {key:?} given twice"));
            }
            self.ws();
            if !self.eat(b',') {
                self.ws();
                return if self.eat(b'}') {
                    Ok(Value::Object(m))
                } else {
                    Err(format!("expected ',' or '}}' at byte {}", self.i))
                };
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.i += 1;
        }
        let t = &self.src[start..self.i];
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        t.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("{t:?} is not a number"))
    }

    /// A double-quoted (JSON) or single-quoted (Python) string.
    fn string(&mut self) -> Result<String, String> {
        let start = self.i;
        let Some(&q) = self.s.get(start) else {
            return Err("expected a string".into());
        };
        let mut i = start + 1;
        loop {
            match self.s.get(i) {
                None => return Err("unterminated string".into()),
                Some(b'\\') => i += 2,
                Some(&c) if c == q => break,
                Some(_) => i += 1,
            }
        }
        let lit = self.src.get(start..=i).ok_or("bad string")?;
        self.i = i + 1;
        let v = if q == b'"' {
            serde_json::from_str::<String>(lit).map_err(|e| e.to_string())?
        } else {
            match pyliteral::parse_literal(lit)? {
                Value::String(s) => s,
                _ => return Err("bad string".into()),
            }
        };
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::detect;
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(&Granite4, text, eof, &ToolSet::unrestricted())
    }

    fn one_call(text: &str) -> Candidate {
        let out = run(text, true);
        assert_eq!(out.len(), 1, "{out:?}");
        match &out[0].kind {
            FoundKind::Calls(c) if c.len() == 1 => c[0].clone(),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn documented_shape() {
        let c = one_call("<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Bengaluru\"}}\n</tool_call><|end_of_text|>");
        assert_eq!(c.name, "get_current_weather");
        assert_eq!(c.arguments, json!({"city": "Bengaluru"}));
        let c = one_call(
            r#"<tool_call> {"name": "find_bbox", "arguments": "{\"coordinate_type\": \"latlong\"}"} </tool_call>"#,
        );
        assert_eq!(c.arguments, json!({"coordinate_type": "latlong"}));
    }

    #[test]
    fn unquoted_keys_and_bare_name() {
        let c = one_call("<tool_call>\n{name: get_time, arguments: {\"timezone\": \"Asia/Tokyo\"}}\n</tool_call>");
        assert_eq!(c.name, "get_time");
        assert_eq!(c.arguments, json!({"timezone": "Asia/Tokyo"}));
        let c = one_call("<tool_call>{'name': 'set_light', 'arguments': {'room': 'kitchen', 'on': True}}</tool_call>");
        assert_eq!(c.arguments, json!({"room": "kitchen", "on": true}));
        let c = one_call("<tool_call>{name: \"add\", arguments: {x: 1, y: 2.5}}</tool_call>");
        assert_eq!(c.arguments, json!({"x": 1, "y": 2.5}));
    }

    #[test]
    fn pythonic_inside() {
        let c = one_call("<tool_call>get_time(timezone=\"Asia/Tokyo\")</tool_call>");
        assert_eq!(c.name, "get_time");
        assert_eq!(c.arguments, json!({"timezone": "Asia/Tokyo"}));
    }

    #[test]
    fn bare_values_other_than_name_are_rejected() {
        let out = run(
            "<tool_call>{name: get_weather, arguments: {\"location\": \"Paris\",}}</tool_call>",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { .. }),
            "no trailing commas"
        );
        let out = run(
            "<tool_call>{name: get_weather, arguments: {location: Paris}}</tool_call>",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("malformed JSON"))
        );
        let out = run("<tool_call>hello there</tool_call>", true);
        assert!(matches!(&out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn streaming_and_unclosed() {
        let t = "<tool_call>\n{name: get_time, arguments: {}}";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(one_call(t).name, "get_time");
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(&"<tool_call>{name: ".repeat(80_000), true);
        let _ = run(
            &format!("<tool_call>{}</tool_call>", "{a:".repeat(200_000)),
            true,
        );
        let _ = run(&"<tool_call>{'a".repeat(80_000), true);
        let _ = run(&"<tool_call>f(</tool_call>".repeat(50_000), true);
    }
}
