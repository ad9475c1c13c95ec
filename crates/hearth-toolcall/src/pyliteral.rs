//! A small parser for Python literals and pythonic call lists (`[f(a=1, b='x'), g()]`).
//!
//! Only literals are accepted: strings, numbers, True/False/None, lists, tuples, dicts.
//! Nothing is evaluated. Recursion is bounded by [`scan::MAX_DEPTH`](super::scan::MAX_DEPTH).

use serde_json::{Map, Number, Value};

use super::scan::MAX_DEPTH;

/// One pythonic call: `name(k=v, …)`.
#[derive(Debug, Clone, PartialEq)]
pub struct PyCall {
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// Parse a complete Python literal.
pub fn parse_literal(s: &str) -> Result<Value, String> {
    let mut p = P {
        s: s.as_bytes(),
        src: s,
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after the value at byte {}", p.i));
    }
    Ok(v)
}

/// Parse `[call, call, …]` exactly (surrounding whitespace allowed). Returns the calls.
pub fn parse_call_list(s: &str) -> Result<Vec<PyCall>, String> {
    let mut p = P {
        s: s.as_bytes(),
        src: s,
        i: 0,
    };
    p.ws();
    p.expect(b'[')?;
    let mut calls = Vec::new();
    loop {
        p.ws();
        if p.eat(b']') {
            break;
        }
        calls.push(p.call()?);
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.expect(b']')?;
        break;
    }
    p.ws();
    if p.i != p.s.len() {
        return Err(format!(
            "unexpected text after the call list at byte {}",
            p.i
        ));
    }
    if calls.is_empty() {
        return Err("empty call list".into());
    }
    Ok(calls)
}

/// Parse one call `name(k=v, …)` exactly.
pub fn parse_call(s: &str) -> Result<PyCall, String> {
    let mut p = P {
        s: s.as_bytes(),
        src: s,
        i: 0,
    };
    p.ws();
    let c = p.call()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after the call at byte {}", p.i));
    }
    Ok(c)
}

struct P<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while let Some(c) = self.s.get(self.i) {
            if c.is_ascii_whitespace() {
                self.i += 1;
            } else {
                break;
            }
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

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "expected '{}' at byte {}, found {}",
                c as char,
                self.i,
                self.s
                    .get(self.i)
                    .map(|b| format!("'{}'", *b as char))
                    .unwrap_or_else(|| "end of text".into())
            ))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            let ok = c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-';
            if !ok {
                break;
            }
            self.i += 1;
        }
        if start == self.i || self.s[start].is_ascii_digit() {
            return Err(format!("expected a name at byte {start}"));
        }
        Ok(self.src[start..self.i].to_string())
    }

    fn call(&mut self) -> Result<PyCall, String> {
        let name = self.ident()?;
        self.ws();
        self.expect(b'(')?;
        let mut args = Map::new();
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let save = self.i;
            let key = match self.ident() {
                Ok(k) => k,
                Err(_) => {
                    self.i = save;
                    return Err(format!(
                        "positional argument in call to {name} at byte {save}: only keyword arguments name their parameter"
                    ));
                }
            };
            self.ws();
            if !self.eat(b'=') {
                return Err(format!(
                    "positional argument in call to {name} at byte {save}: only keyword arguments name their parameter"
                ));
            }
            self.ws();
            let v = self.value(1)?;
            if args.insert(key.clone(), v).is_some() {
                return Err(format!("argument {key} given twice in call to {name}"));
            }
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b')')?;
            break;
        }
        Ok(PyCall {
            name,
            arguments: args,
        })
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("values nested too deeply".into());
        }
        self.ws();
        match self.s.get(self.i) {
            None => Err("expected a value, found end of text".into()),
            Some(b'\'') | Some(b'"') => self.string().map(Value::String),
            Some(b'[') => {
                self.i += 1;
                self.seq(b']', depth)
            }
            Some(b'(') => {
                self.i += 1;
                self.seq(b')', depth)
            }
            Some(b'{') => {
                self.i += 1;
                self.dict(depth)
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'+' || *c == b'.' => {
                self.number()
            }
            Some(_) => {
                let start = self.i;
                while let Some(&c) = self.s.get(self.i) {
                    if c.is_ascii_alphanumeric() || c == b'_' {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                match &self.src[start..self.i] {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::Null),
                    "" => Err(format!("unexpected character at byte {start}")),
                    w => Err(format!(
                        "'{w}' is not a literal (only strings, numbers, True/False/None, lists and dicts)"
                    )),
                }
            }
        }
    }

    fn seq(&mut self, close: u8, depth: usize) -> Result<Value, String> {
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(close)?;
            return Ok(Value::Array(items));
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        let mut m = Map::new();
        loop {
            self.ws();
            if self.eat(b'}') {
                return Ok(Value::Object(m));
            }
            let k = match self.value(depth + 1)? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err("dict keys must be strings or numbers".into()),
            };
            self.ws();
            self.expect(b':')?;
            let v = self.value(depth + 1)?;
            m.insert(k, v);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b'}')?;
            return Ok(Value::Object(m));
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'_') {
                self.i += 1;
            } else {
                break;
            }
        }
        let text: String = self.src[start..self.i]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let text = text.strip_prefix('+').unwrap_or(&text);
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(format!("'{text}' is not a number")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let q = self.s[self.i];
        let triple = self.s.get(self.i..self.i + 3) == Some(&[q, q, q][..]);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err("unterminated string".into());
            };
            if c == q {
                if !triple {
                    self.i += 1;
                    return Ok(out);
                }
                if self.s.get(self.i..self.i + 3) == Some(&[q, q, q][..]) {
                    self.i += 3;
                    return Ok(out);
                }
            }
            if c == b'\\' {
                let Some(&e) = self.s.get(self.i + 1) else {
                    return Err("unterminated string".into());
                };
                self.i += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'\\' => out.push('\\'),
                    b'\'' => out.push('\''),
                    b'"' => out.push('"'),
                    b'u' => {
                        let hex = self.src.get(self.i..self.i + 4).ok_or("bad \\u escape")?;
                        let cp = u32::from_str_radix(hex, 16).map_err(|_| "bad \\u escape")?;
                        out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                        self.i += 4;
                    }
                    b'\n' => {}
                    other => {
                        out.push('\\');
                        // keep the escaped character (may start a multi-byte char)
                        self.i -= 1;
                        let _ = other;
                    }
                }
                continue;
            }
            // copy one whole UTF-8 character
            let ch_len = utf8_len(c);
            let end = (self.i + ch_len).min(self.s.len());
            out.push_str(self.src.get(self.i..end).unwrap_or("\u{fffd}"));
            self.i = end;
        }
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literals() {
        assert_eq!(
            parse_literal("{'a': [1, 2.5, -3], 'b': (True, None), \"c\": 'x\\'y'}").unwrap(),
            json!({"a": [1, 2.5, -3], "b": [true, null], "c": "x'y"})
        );
        assert!(parse_literal("os.system('x')").is_err());
        assert!(parse_literal(&"[".repeat(500)).is_err());
    }

    #[test]
    fn call_lists() {
        let c = parse_call_list("[get_weather(city='Paris', days=3), get_time()]").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, "get_weather");
        assert_eq!(
            Value::Object(c[0].arguments.clone()),
            json!({"city":"Paris","days":3})
        );
        assert_eq!(c[1].arguments.len(), 0);
        assert!(parse_call_list("[f(1)]")
            .unwrap_err()
            .contains("positional"));
        assert!(parse_call_list("[click here](http://x)").is_err());
        assert!(parse_call_list("[]").is_err());
    }

    #[test]
    fn unicode_strings() {
        assert_eq!(parse_literal("'café ☕'").unwrap(), json!("café ☕"));
    }
}
