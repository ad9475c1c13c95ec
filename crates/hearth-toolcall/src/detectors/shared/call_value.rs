//! The `call:NAME{…}` notation of Gemma 4 and FunctionGemma: the tokens of a family member
//! ([`Dialect`]), one marked block ([`marked_at`]) and the tool answer a model invents after
//! it ([`swallow_invented_response`]), typing string arguments by the schema
//! ([`type_args`]), and the value grammar inside the braces ([`parse_call_body`]).
//!
//! Used by `gemma` (`<|tool_call>…<tool_call|>` with `<|"|>` strings, plus the bare and
//! fenced forms) and `functiongemma` (`<start_function_call>…` with `<escape>` strings).

use serde_json::{Map, Number, Value};

use crate::detector::{Candidate, DetectCtx, Found, FoundKind};
use crate::scan::{self, MAX_DEPTH};

use super::memo_find::Finder;

/// The word that opens a call.
pub(crate) const BARE: &str = "call:";

/// The tokens of one `call:NAME{…}` family member.
pub(crate) struct Dialect {
    /// Token opening a call block (`<|tool_call>`).
    pub open: &'static str,
    /// Token closing it (`<tool_call|>`).
    pub close: &'static str,
    /// Other tokens seen closing a block in real output (`<turn|>`).
    pub alt_close: &'static [&'static str],
    /// Stop tokens that follow the closer and belong to the call (`<|tool_response>`).
    pub trailer: &'static [&'static str],
    /// The string delimiter token (`<|"|>`, `<escape>`).
    pub quote: &'static str,
    /// Token ending a tool response (`<tool_response|>`): an answer the model invents
    /// after its call (`<|tool_response>response:NAME{…}<tool_response|>`) is swallowed.
    pub response_end: &'static str,
}

/// What scanning one construct decided, and where to continue.
pub(crate) enum Step {
    /// Maybe a found; continue scanning at this offset.
    Next(Option<Found>, usize),
    /// Maybe a found (Pending, or malformed to the end); nothing follows it.
    Stop(Option<Found>),
}

/// Scan the block whose open token starts at `start`. `opens` and `closes` find the
/// dialect's open and close tokens.
pub(crate) fn marked_at(
    d: &Dialect,
    text: &str,
    start: usize,
    ctx: &DetectCtx<'_>,
    opens: &mut Finder<'_>,
    closes: &mut Finder<'_>,
) -> Step {
    let after = start + d.open.len();
    // A string never runs into the next block.
    let limit = opens.next(after).unwrap_or(text.len());
    let limited = &text[..limit];
    let p = scan::skip_ws(limited, after);
    let rest = &limited[p..];
    let bad = |at: usize, name: Option<String>, reason: String, closes: &mut Finder<'_>| {
        invalid_block(d, text, start, at, limit, name, reason, ctx.eof, closes)
    };
    if !rest.starts_with(BARE) {
        if limit == text.len() && BARE.starts_with(rest) {
            return incomplete(d, text, start, None, ctx.eof);
        }
        return bad(
            p,
            None,
            format!("expected `call:NAME{{…}}` after {}", d.open),
            closes,
        );
    }
    match parse_call_body(limited, p, d.quote) {
        CallParse::Done { name, args, end } => {
            let cand = Candidate::new(name.clone(), type_args(ctx, &name, args));
            let q = scan::skip_ws(text, end);
            let tail = &text[q..];
            if let Some(tok) = std::iter::once(&d.close)
                .chain(d.alt_close)
                .find(|t| tail.starts_with(**t))
            {
                let span_end = absorb_trailer(d, text, q + tok.len());
                return Step::Next(Some(Found::call(start..span_end, cand)), span_end);
            }
            if tail.is_empty() {
                if ctx.eof {
                    // Unclosed at the very end: the stop token was not kept.
                    return Step::Next(Some(Found::call(start..end, cand)), end);
                }
                return Step::Stop(Some(Found::pending(start..text.len())));
            }
            let partial_closer = std::iter::once(&d.close)
                .chain(d.alt_close)
                .chain(d.trailer)
                .any(|t| t.len() > tail.len() && t.starts_with(tail));
            if partial_closer {
                if ctx.eof {
                    return Step::Next(Some(Found::call(start..text.len(), cand)), text.len());
                }
                return Step::Stop(Some(Found::pending(start..text.len())));
            }
            Step::Next(
                Some(Found::malformed(
                    start..end,
                    Some(name.clone()),
                    format!(
                        "missing {} after call:{name}{{…}} (other text follows the call)",
                        d.close
                    ),
                )),
                end,
            )
        }
        CallParse::Incomplete { name } => {
            if limit < text.len() {
                let reason = format!("unterminated call: the next {} starts inside it", d.open);
                return bad(limit, name, reason, closes);
            }
            incomplete(d, text, start, name, ctx.eof)
        }
        CallParse::Invalid { at, name, reason } => bad(at, name, reason, closes),
    }
}

fn incomplete(d: &Dialect, text: &str, start: usize, name: Option<String>, eof: bool) -> Step {
    if eof {
        Step::Stop(Some(Found::malformed(
            start..text.len(),
            name,
            format!(
                "unterminated {} block: the output ended inside the call",
                d.open
            ),
        )))
    } else {
        Step::Stop(Some(Found::pending(start..text.len())))
    }
}

/// A block that does not parse: report it up to its closer (or the next block).
#[allow(clippy::too_many_arguments)]
fn invalid_block(
    d: &Dialect,
    text: &str,
    start: usize,
    at: usize,
    limit: usize,
    name: Option<String>,
    reason: String,
    eof: bool,
    closes: &mut Finder<'_>,
) -> Step {
    let reason = format!("malformed {} block: {reason}", d.open);
    let close = closes.next(at.max(start)).filter(|&c| c < limit);
    if let Some(c) = close {
        let end = absorb_trailer(d, text, c + d.close.len());
        return Step::Next(Some(Found::malformed(start..end, name, reason)), end);
    }
    if limit < text.len() {
        return Step::Next(Some(Found::malformed(start..limit, name, reason)), limit);
    }
    if eof {
        Step::Stop(Some(Found::malformed(start..text.len(), name, reason)))
    } else {
        // The closer may still come.
        Step::Stop(Some(Found::pending(start..text.len())))
    }
}

/// Run without its stop sequence, a model goes on to invent the tool's answer right after
/// the stop token: `<|tool_response>response:NAME{…}<tool_response|>`. A complete invented
/// answer is neither speech nor a call: it joins the call's span.
pub(crate) fn swallow_invented_response(
    d: &Dialect,
    text: &str,
    step: Step,
    opens: &mut Finder<'_>,
    response_ends: &mut Finder<'_>,
) -> Step {
    let Step::Next(Some(mut f), resume) = step else {
        return step;
    };
    let after_stop = d.trailer.iter().any(|t| text[..f.span.end].ends_with(*t));
    if after_stop
        && matches!(f.kind, FoundKind::Calls(_))
        && text[f.span.end..].starts_with("response:")
    {
        let next_call = opens.next(f.span.end).unwrap_or(text.len());
        if let Some(e) = response_ends.next(f.span.end).filter(|&e| e < next_call) {
            f.span.end = e + d.response_end.len();
        }
    }
    let resume = resume.max(f.span.end);
    Step::Next(Some(f), resume)
}

/// Extend a span over a stop token that follows the call (after optional whitespace).
pub(crate) fn absorb_trailer(d: &Dialect, text: &str, end: usize) -> usize {
    let q = scan::skip_ws(text, end);
    match d.trailer.iter().find(|t| text[q..].starts_with(**t)) {
        Some(t) => q + t.len(),
        None => end,
    }
}

/// Type top-level string arguments by the tool's schema when it declares a non-string
/// type; everything else stays as written.
pub(crate) fn type_args(ctx: &DetectCtx<'_>, tool: &str, args: Map<String, Value>) -> Value {
    let mut out = Map::with_capacity(args.len());
    for (k, v) in args {
        let v = match v {
            Value::String(s) => match ctx.param_schema(tool, &k) {
                Some(schema) => match scan::typed_value(&s, Some(schema)) {
                    Value::String(_) => Value::String(s),
                    typed => typed,
                },
                None => Value::String(s),
            },
            other => other,
        };
        out.insert(k, v);
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------
// The `call:NAME{…}` value grammar.
// ---------------------------------------------------------------------------------------

/// Result of parsing `call:NAME{…}`.
#[derive(Debug, PartialEq)]
pub(crate) enum CallParse {
    /// Parsed; the call ends just before `end` (after its closing `}`).
    Done {
        name: String,
        args: Map<String, Value>,
        end: usize,
    },
    /// The text ended inside the call.
    Incomplete { name: Option<String> },
    /// Not valid; parsing stopped at `at`.
    Invalid {
        at: usize,
        name: Option<String>,
        reason: String,
    },
}

/// Parse `call:NAME{k:v,…}` starting exactly at `start` (which must point at `call:`),
/// with `quote` as the string delimiter token. Linear in the text scanned; nesting is
/// bounded by [`MAX_DEPTH`].
pub(crate) fn parse_call_body(text: &str, start: usize, quote: &str) -> CallParse {
    let Some(rest) = text.get(start..) else {
        return CallParse::Incomplete { name: None };
    };
    if !rest.starts_with(BARE) {
        return CallParse::Invalid {
            at: start,
            name: None,
            reason: "expected `call:`".into(),
        };
    }
    let name_start = start + BARE.len();
    let b = text.as_bytes();
    let mut i = name_start;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-' | b'.')) {
        i += 1;
    }
    if i == b.len() {
        return CallParse::Incomplete {
            name: (i > name_start).then(|| text[name_start..i].to_string()),
        };
    }
    let name = &text[name_start..i];
    if !scan::is_ident(name) {
        return CallParse::Invalid {
            at: name_start,
            name: None,
            reason: "missing or invalid function name after `call:`".into(),
        };
    }
    if b[i] != b'{' {
        return CallParse::Invalid {
            at: i,
            name: Some(name.to_string()),
            reason: format!("expected `{{` after call:{name}"),
        };
    }
    let mut p = ValueParser { t: text, i, quote };
    match p.object(0) {
        Ok(args) => CallParse::Done {
            name: name.to_string(),
            args,
            end: p.i,
        },
        Err(PErr::Incomplete) => CallParse::Incomplete {
            name: Some(name.to_string()),
        },
        Err(PErr::Invalid(at, reason)) => CallParse::Invalid {
            at,
            name: Some(name.to_string()),
            reason: format!("in the arguments of {name} at byte {at}: {reason}"),
        },
    }
}

enum PErr {
    Incomplete,
    Invalid(usize, String),
}

type PResult<T> = Result<T, PErr>;

struct ValueParser<'a> {
    t: &'a str,
    i: usize,
    quote: &'a str,
}

impl ValueParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.t.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn invalid<T>(&self, reason: impl Into<String>) -> PResult<T> {
        Err(PErr::Invalid(self.i, reason.into()))
    }

    /// Describe what is at the cursor, for error messages.
    fn found(&self) -> String {
        match self.t.get(self.i..).and_then(|r| r.chars().next()) {
            Some(c) => format!("`{c}`"),
            None => "end of text".into(),
        }
    }

    /// `{k:v,…}` with the cursor on `{`.
    fn object(&mut self, depth: usize) -> PResult<Map<String, Value>> {
        let mut m = Map::new();
        if self.open(depth, b'}')? {
            return Ok(m);
        }
        loop {
            self.ws();
            let key_at = self.i;
            let key = self.key()?;
            self.ws();
            match self.peek() {
                None => return Err(PErr::Incomplete),
                Some(b':') => self.i += 1,
                _ => {
                    return self.invalid(format!(
                        "expected `:` after key `{}`, found {}",
                        short(&key),
                        self.found()
                    ))
                }
            }
            self.ws();
            let v = self.value(depth, Some(&key))?;
            if m.insert(key.clone(), v).is_some() {
                return Err(PErr::Invalid(
                    key_at,
                    format!("key `{}` given twice", short(&key)),
                ));
            }
            self.ws();
            if self.comma_or_close(b'}')? {
                return Ok(m);
            }
        }
    }

    /// `[v,…]` with the cursor on `[`.
    fn array(&mut self, depth: usize) -> PResult<Vec<Value>> {
        let mut items = Vec::new();
        if self.open(depth, b']')? {
            return Ok(items);
        }
        loop {
            self.ws();
            items.push(self.value(depth, None)?);
            self.ws();
            if self.comma_or_close(b']')? {
                return Ok(items);
            }
        }
    }

    /// Enter a `{…}` or `[…]` at `depth` with the cursor on its opener: true when it
    /// is empty, closing at once with `close` (consumed).
    fn open(&mut self, depth: usize, close: u8) -> PResult<bool> {
        if depth >= MAX_DEPTH {
            return self.invalid("values nested too deeply");
        }
        self.i += 1;
        self.ws();
        match self.peek() {
            None => Err(PErr::Incomplete),
            Some(c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// After an item of a container that ends with `close`: false past a `,`,
    /// true past the closer.
    fn comma_or_close(&mut self, close: u8) -> PResult<bool> {
        match self.peek() {
            None => Err(PErr::Incomplete),
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            _ => self.invalid(format!(
                "expected `,` or `{}`, found {}",
                close as char,
                self.found()
            )),
        }
    }

    /// At the cursor: the string token, or its unfinished start at the end of the text.
    fn at_quote(&self) -> PResult<bool> {
        let rest = &self.t[self.i..];
        if rest.starts_with(self.quote) {
            return Ok(true);
        }
        if !rest.is_empty() && rest.len() < self.quote.len() && self.quote.starts_with(rest) {
            return Err(PErr::Incomplete);
        }
        Ok(false)
    }

    /// A quoted string with the cursor on its opening token.
    fn string(&mut self) -> PResult<String> {
        let from = self.i + self.quote.len();
        match scan::find_from(self.t, self.quote, from) {
            Some(end) => {
                self.i = end + self.quote.len();
                Ok(self.t[from..end].to_string())
            }
            None => Err(PErr::Incomplete),
        }
    }

    fn key(&mut self) -> PResult<String> {
        if self.at_quote()? {
            return self.string();
        }
        let start = self.i;
        let b = self.t.as_bytes();
        while self.i < b.len() && !is_stop_byte(b[self.i]) {
            self.i += 1;
        }
        if self.i == b.len() {
            return Err(PErr::Incomplete);
        }
        if self.i == start {
            return self.invalid(match b[self.i] {
                b',' | b'}' => "trailing `,` or empty key".to_string(),
                b'"' => format!(
                    "JSON-quoted key (keys are bare or wrapped in {})",
                    self.quote
                ),
                _ => format!("expected a key, found {}", self.found()),
            });
        }
        Ok(self.t[start..self.i].to_string())
    }

    fn value(&mut self, depth: usize, key: Option<&str>) -> PResult<Value> {
        match self.peek() {
            None => return Err(PErr::Incomplete),
            Some(b'{') => return self.object(depth + 1).map(Value::Object),
            Some(b'[') => return self.array(depth + 1).map(Value::Array),
            Some(b'"') => {
                return self.invalid(format!(
                    "JSON-quoted string (strings must be wrapped in {})",
                    self.quote
                ))
            }
            _ => {}
        }
        if self.at_quote()? {
            return self.string().map(Value::String);
        }
        let start = self.i;
        let b = self.t.as_bytes();
        while self.i < b.len() && !is_stop_byte(b[self.i]) {
            self.i += 1;
        }
        if self.i == b.len() {
            // The bare value may still be growing.
            return Err(PErr::Incomplete);
        }
        let tok = &self.t[start..self.i];
        if tok.is_empty() {
            let what = match key {
                Some(k) => format!(
                    "missing value for key `{}`, found {}",
                    short(k),
                    self.found()
                ),
                None => format!("missing list item, found {}", self.found()),
            };
            return self.invalid(what);
        }
        match bare_literal(tok) {
            Some(v) => Ok(v),
            None => Err(PErr::Invalid(
                start,
                format!(
                    "unquoted value `{}` (strings must be wrapped in {}; bare values are numbers, true, false, null)",
                    short(tok),
                    self.quote
                ),
            )),
        }
    }
}

/// At most 40 characters of `s`, for error messages.
fn short(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Bytes that end a bare key or value.
fn is_stop_byte(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b':' | b',' | b'{' | b'}' | b'[' | b']' | b'<' | b'"')
}

/// A bare number, boolean or null.
fn bare_literal(tok: &str) -> Option<Value> {
    match tok {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "null" | "None" => return Some(Value::Null),
        _ => {}
    }
    if let Ok(n) = serde_json::from_str::<Number>(tok) {
        return Some(Value::Number(n));
    }
    // Python renders floats JSON cannot read: `5.`, `.5`, `+1`.
    let numeric = tok.bytes().any(|c| c.is_ascii_digit())
        && tok
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'e' | b'E'));
    if numeric {
        if let Some(n) = tok.parse::<f64>().ok().and_then(Number::from_f64) {
            return Some(Value::Number(n));
        }
    }
    None
}
