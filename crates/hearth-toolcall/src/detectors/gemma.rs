//! `gemma`: Google Gemma 4's native tool calls, plus two looser Gemma forms.
//!
//! # Wire format
//!
//! Gemma 4 (E2B, E4B, 26B A4B, 31B) writes each call as one block between two special
//! tokens, with its own object notation inside (not JSON):
//!
//! ```text
//! <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>
//! ```
//!
//! - `call:` then the function name (letters, digits, `_`, `-`, `.`), then `{…}`.
//! - Keys are bare (`location:`); the chat template's own declarations also quote keys with
//!   the string token (`{<|"|>3<|"|>:…}`), so a key quoted that way is accepted too.
//! - Strings are wrapped in the single token `<|"|>`; there is no escaping inside (the token
//!   cannot occur in a string). Numbers, `true`/`false` and `null` (Jinja renders Python's
//!   `None` as `None`) are bare. Objects `{k:v,…}` and lists `[v,…]` nest.
//! - Several calls are simply concatenated, one block each.
//! - After the last call the model emits `<|tool_response>`, where the engine stops it to
//!   run the tools; that token is part of the call and is included in the span. Run without
//!   that stop, it goes on to invent the answer, `response:NAME{…}<tool_response|>`; a
//!   complete invented answer right after a call joins the call's span (it is neither speech
//!   nor a call). Some Gemma 4 outputs close a call with `<turn|>` instead of
//!   `<tool_call|>` (seen by vLLM); that is accepted as the closer.
//!
//! Sources: the Gemma 4 chat template (`format_argument` macro and the `<|tool_call>call:`
//! rendering of assistant `tool_calls`), vLLM's `gemma4` tool parser and its tests
//! (`test_gemma4_tool_parser.py`, `test_gemma4_regex_and_bare_calls.py`), llama.cpp's
//! PEG `gemma4` format.
//!
//! # Decisions and edge cases
//!
//! - Fail closed: a bare word where a value belongs (`unit:celsius`), a trailing comma, a
//!   JSON-quoted string, a stray `:` after `<|tool_call>` are malformed (reported with the
//!   reason), never repaired. A block whose body is complete but whose closer is missing is
//!   accepted only at the end of the output (the server may have eaten the stop token);
//!   followed by other text it is malformed.
//! - A string value of a top-level argument whose tool schema declares a non-string type
//!   (`brightness:<|"|>50<|"|>` for an integer) is typed by the schema
//!   ([`scan::typed_value`]); without a schema, or for string parameters, it stays a string.
//! - A string never runs past the next `<|tool_call>`: an unterminated block is reported
//!   malformed up to the next block, which still parses.
//! - Streaming: an open block is `Pending` from its first byte.
//! - Not accepted (vLLM's lenient offline tier takes them): a stray colon,
//!   `<|tool_call>:call:f{…}` (malformed here), and `<call>f{…}` from a fragmented token
//!   (left as text).
//!
//! # Loose forms (found with `.loose()`: only allowlisted names run, only when no strict
//! format matched)
//!
//! - Bare `call:NAME{…}` without the `<|tool_call>` token, which Gemma 4 sometimes emits
//!   right after its thinking channel (`<channel|>call:bash{…}`) or on its own line. Only
//!   taken at the start of the text, after whitespace or right after `<channel|>`, and only
//!   when the whole `call:NAME{…}` parses; anything else is left as text.
//! - Gemma 3 has no tool tokens; one community prompt (popularised by Philipp Schmid's
//!   "Gemma function calling" guide) asks for a fenced block ```` ```tool_code ```` holding a
//!   Python call, `get_weather(location="Paris")`. Gemma 3's official prompts ask for a
//!   pythonic list `[f(a=1)]` or a JSON object instead, which the `pythonic` and `json`
//!   detectors handle. This detector takes a ```` ```tool_code ```` fence whose every
//!   non-blank line is exactly one keyword-argument call with literal values
//!   ([`pyliteral::parse_call`]); any other fence body (real code, `print(…)`, a list) is
//!   left alone. The fence masker lets `tool_code` fences through for this reason.
//!
//! The `call:NAME{…}` grammar is shared with `functiongemma` (same notation with `<escape>`
//! as the string token): see [`Dialect`], [`marked_at`] and [`parse_call_body`].

use serde_json::{Map, Number, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::pyliteral;
use crate::scan::{self, MAX_DEPTH};

pub struct Gemma;

/// Gemma 4's string delimiter token.
pub(crate) const GEMMA4_QUOTE: &str = "<|\"|>";

const GEMMA4: Dialect = Dialect {
    open: "<|tool_call>",
    close: "<tool_call|>",
    alt_close: &["<turn|>"],
    trailer: &["<|tool_response>"],
    quote: GEMMA4_QUOTE,
    response_end: "<tool_response|>",
};

const BARE: &str = "call:";
const FENCE: &str = "```tool_code";

impl Detector for Gemma {
    fn name(&self) -> &str {
        "gemma"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // "call:" for the bare form: a partial trigger at the end of a stream is held back,
        // so a bare call is never spoken before it is recognised (costs at most a token of
        // delay when prose ends in "c").
        &["<|tool_call>", "call:", "```tool_code"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Finder::new(text, GEMMA4.open);
        let mut closes = Finder::new(text, GEMMA4.close);
        let mut bares = Finder::new(text, BARE);
        let mut fences = Finder::new(text, FENCE);
        let mut response_ends = Finder::new(text, GEMMA4.response_end);
        let mut bare_on = true;
        // The filtered searches below skip rejected candidates; their answers are cached
        // (as `(from, answer)`) so no candidate is looked at twice.
        let mut bare_cache: Option<(usize, Option<usize>)> = None;
        let mut fence_cache: Option<(usize, Option<usize>)> = None;
        let mut pos = 0;
        while pos < text.len() {
            let m = opens.next(pos);
            let b = if bare_on {
                cached(&mut bare_cache, pos, |from| {
                    next_bare(text, &mut bares, from)
                })
            } else {
                None
            };
            let f = cached(&mut fence_cache, pos, |from| {
                next_fence(text, &mut fences, from)
            });
            let first = [m, b, f].into_iter().flatten().min();
            let Some(at) = first else { break };
            let step = if m == Some(at) {
                let step = marked_at(&GEMMA4, text, at, ctx, &mut opens, &mut closes);
                swallow_invented_response(&GEMMA4, text, step, &mut opens, &mut response_ends)
            } else if b == Some(at) {
                match bare_at(text, at, ctx, &mut opens) {
                    BareStep::Step(s) => s,
                    BareStep::GiveUp => {
                        bare_on = false;
                        Step::Next(None, at + BARE.len())
                    }
                }
            } else {
                fence_at(text, at, ctx)
            };
            match step {
                Step::Next(found, resume) => {
                    out.extend(found);
                    pos = resume.max(at + 1);
                    while pos < text.len() && !text.is_char_boundary(pos) {
                        pos += 1;
                    }
                }
                Step::Stop(found) => {
                    out.extend(found);
                    break;
                }
            }
        }
    }
}

/// Answer "first accepted candidate at or after `from`" from the cache when it still holds.
fn cached(
    cache: &mut Option<(usize, Option<usize>)>,
    from: usize,
    find: impl FnOnce(usize) -> Option<usize>,
) -> Option<usize> {
    if let Some((searched, answer)) = *cache {
        match answer {
            Some(p) if searched <= from && p >= from => return Some(p),
            None if searched <= from => return None,
            _ => {}
        }
    }
    let answer = find(from);
    *cache = Some((from, answer));
    answer
}

// ---------------------------------------------------------------------------------------
// Shared with functiongemma: one marked `call:NAME{…}` block.
// ---------------------------------------------------------------------------------------

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

/// Next occurrence of a fixed needle, cached so repeated queries stay linear overall.
pub(crate) struct Finder<'a> {
    hay: &'a str,
    needle: &'static str,
    /// Last answer: the occurrence found searching from `from`, or `None` if there was none.
    cached: Option<(usize, Option<usize>)>,
}

impl<'a> Finder<'a> {
    pub(crate) fn new(hay: &'a str, needle: &'static str) -> Self {
        Finder {
            hay,
            needle,
            cached: None,
        }
    }

    /// The first occurrence at or after `from`.
    pub(crate) fn next(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.cached {
            match found {
                Some(p) if p >= from && searched <= from => return Some(p),
                None if searched <= from => return None,
                _ => {}
            }
        }
        let found = scan::find_from(self.hay, self.needle, from);
        self.cached = Some((from, found));
        found
    }
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
fn absorb_trailer(d: &Dialect, text: &str, end: usize) -> usize {
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

// ---------------------------------------------------------------------------------------
// Loose forms: bare `call:NAME{…}` and ```tool_code fences.
// ---------------------------------------------------------------------------------------

/// The next `call:` at or after `from` that may start a bare call: at the start of the
/// text, after whitespace, or right after Gemma's `<channel|>`.
fn next_bare(text: &str, bares: &mut Finder<'_>, mut from: usize) -> Option<usize> {
    loop {
        let p = bares.next(from)?;
        let before = &text[..p];
        let ok = before.is_empty()
            || before.ends_with(|c: char| c.is_whitespace())
            || before.ends_with("<channel|>");
        // the name may not have arrived yet: a `call:` ending the text is still a start
        let name_follows = text
            .as_bytes()
            .get(p + BARE.len())
            .is_none_or(|c| c.is_ascii_alphabetic() || *c == b'_');
        if ok && name_follows {
            return Some(p);
        }
        from = p + BARE.len();
    }
}

enum BareStep {
    Step(Step),
    /// Incomplete at the end of the output: no more bare calls are looked for.
    GiveUp,
}

fn bare_at(text: &str, at: usize, ctx: &DetectCtx<'_>, opens: &mut Finder<'_>) -> BareStep {
    let limit = opens.next(at).unwrap_or(text.len());
    let limited = &text[..limit];
    match parse_call_body(limited, at, GEMMA4_QUOTE) {
        CallParse::Done { name, args, end } => {
            let cand = Candidate::new(name.clone(), type_args(ctx, &name, args));
            let q = scan::skip_ws(text, end);
            let span_end = if text[q..].starts_with(GEMMA4.close) {
                absorb_trailer(&GEMMA4, text, q + GEMMA4.close.len())
            } else {
                absorb_trailer(&GEMMA4, text, end)
            };
            BareStep::Step(Step::Next(
                Some(Found::call(at..span_end, cand).loose()),
                span_end,
            ))
        }
        CallParse::Incomplete { .. } if limit < text.len() => {
            BareStep::Step(Step::Next(None, limit))
        }
        CallParse::Incomplete { .. } => {
            if ctx.eof {
                BareStep::GiveUp
            } else {
                BareStep::Step(Step::Stop(Some(Found::pending(at..text.len()).loose())))
            }
        }
        CallParse::Invalid { at: stop, .. } => {
            BareStep::Step(Step::Next(None, stop.min(limit).max(at + BARE.len())))
        }
    }
}

/// The next ```` ```tool_code ```` opener at a line start, at or after `from`.
fn next_fence(text: &str, fences: &mut Finder<'_>, mut from: usize) -> Option<usize> {
    loop {
        let p = fences.next(from)?;
        if at_line_start(text, 0, p) {
            return Some(p);
        }
        from = p + FENCE.len();
    }
}

fn fence_at(text: &str, at: usize, ctx: &DetectCtx<'_>) -> Step {
    let info_start = at + FENCE.len();
    let Some(nl) = scan::find_from(text, "\n", info_start) else {
        return pending_or_skip(text, at, info_start, ctx.eof);
    };
    if !text[info_start..nl].trim().is_empty() {
        return Step::Next(None, nl);
    }
    let body_start = nl + 1;
    // The closing fence: ``` at the start of a line.
    let mut from = body_start;
    let close = loop {
        let Some(c) = scan::find_from(text, "```", from) else {
            break None;
        };
        if at_line_start(text, body_start, c) {
            break Some(c);
        }
        from = c + 3;
    };
    let Some(close) = close else {
        return pending_or_skip(text, at, body_start, ctx.eof);
    };
    let end = close + 3;
    let body = &text[body_start..close];
    let mut calls = Vec::new();
    for line in body.lines().filter(|l| !scan::is_blank(l)) {
        match pyliteral::parse_call(line) {
            Ok(c) => calls.push(Candidate::new(c.name, Value::Object(c.arguments))),
            Err(_) => return Step::Next(None, end),
        }
    }
    if calls.is_empty() {
        return Step::Next(None, end);
    }
    Step::Next(Some(Found::calls(at..end, calls).loose()), end)
}

/// True if only spaces or tabs stand between `p` and the start of its line (or `floor`).
/// Walks back over blanks only, so repeated calls stay linear.
fn at_line_start(text: &str, floor: usize, p: usize) -> bool {
    let b = text.as_bytes();
    let mut i = p;
    while i > floor && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i == floor || b[i - 1] == b'\n'
}

fn pending_or_skip(text: &str, at: usize, resume: usize, eof: bool) -> Step {
    if eof {
        Step::Next(None, resume)
    } else {
        Step::Stop(Some(Found::pending(at..text.len()).loose()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{
        check_spans, detect_any, megabyte_of_each, named_args as calls, reason,
    };
    use crate::validate::ToolSet;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"set_light","parameters":{"type":"object",
            "properties":{"room":{"type":"string"},"on":{"type":"boolean"},
            "brightness":{"type":"integer"}}}}}]"#,
        )
        .unwrap()
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect_any(&Gemma, text, eof);
        check_spans(text, &out);
        out
    }

    /// None of `texts` holds a call once the output is complete.
    fn no_call_at_end(texts: &[&str]) {
        for t in texts {
            assert!(run(t, true).is_empty(), "{t}");
        }
    }

    /// `t` is pending while streaming and yields nothing at the end.
    fn pending_then_nothing(t: &str) {
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert!(run(t, true).is_empty());
    }

    #[test]
    fn single_call() {
        let t = r#"Let me check. <|tool_call>call:get_weather{location:<|"|>Paris, France<|"|>}<tool_call|>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.clone()], &t[14..]);
        assert!(!out[0].loose);
        assert_eq!(
            calls(&out[0]),
            vec![("get_weather".into(), json!({"location": "Paris, France"}))]
        );
    }

    #[test]
    fn typed_values_and_nesting() {
        let t = r#"<|tool_call>call:f{n:42,x:-3.5,e:1e-05,ok:true,no:false,z:null,w:None,o:{inner:<|"|>v<|"|>,<|"|>3<|"|>:<|"|>three<|"|>},l:[<|"|>a]b<|"|>,1,[true]],empty:{},el:[]}<tool_call|>"#;
        let out = run(t, true);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"n":42,"x":-3.5,"e":1e-05,"ok":true,"no":false,"z":null,"w":null,
                   "o":{"inner":"v","3":"three"},"l":["a]b",1,[true]],"empty":{},"el":[]})
        );
    }

    #[test]
    fn strings_are_verbatim() {
        let t = "<|tool_call>call:send{text:<|\"|>Say \"hi\", {ok}: [1]\n\\n<|\"|>}<tool_call|>";
        let out = run(t, true);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"text": "Say \"hi\", {ok}: [1]\n\\n"})
        );
    }

    #[test]
    fn parallel_calls_and_trailer() {
        let t =
            "<|tool_call>call:a{}<tool_call|><|tool_call>call:b{x:1}<tool_call|><|tool_response>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].span.end, t.len());
        assert_eq!(calls(&out[1]), vec![("b".into(), json!({"x": 1}))]);
    }

    #[test]
    fn invented_response_joins_the_call() {
        let t = "<|tool_call>call:get_time{}<tool_call|><|tool_response>response:get_time{value:<|\"|>noon<|\"|>}<tool_response|>It is noon.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "It is noon.");
    }

    #[test]
    fn whitespace_and_turn_closer() {
        let t = "<|tool_call>\ncall:get_time{ }\n<turn|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))]);
        let t = "<|tool_call>call:a{ k : 1 , j:<|\"|>v<|\"|> }<tool_call|>";
        assert_eq!(calls(&run(t, true)[0])[0].1, json!({"k":1,"j":"v"}));
    }

    #[test]
    fn names_with_dots_and_dashes() {
        let t = "<|tool_call>call:fs.read-file{path:<|\"|>/a<|\"|>}<tool_call|>";
        assert_eq!(calls(&run(t, true)[0])[0].0, "fs.read-file");
    }

    #[test]
    fn schema_types_string_numbers() {
        let ts = tools();
        let ctx = DetectCtx {
            eof: true,
            tools: &ts,
        };
        let mut out = Vec::new();
        let t = r#"<|tool_call>call:set_light{room:<|"|>42<|"|>,on:<|"|>true<|"|>,brightness:<|"|>50<|"|>}<tool_call|>"#;
        Gemma.detect(t, &ctx, &mut out);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"room":"42","on":true,"brightness":50})
        );
        // without a schema a quoted number stays a string
        assert_eq!(
            calls(&run(r#"<|tool_call>call:x{n:<|"|>5<|"|>}<tool_call|>"#, true)[0])[0].1,
            json!({"n":"5"})
        );
    }

    #[test]
    fn unclosed_at_end() {
        let t = r#"<|tool_call>call:get_time{}"#;
        let out = run(t, true);
        assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))]);
        let out = run(t, false);
        assert_eq!(out[0].kind, FoundKind::Pending);
        // partial closer at the end
        let t = "<|tool_call>call:get_time{}<tool_ca";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert_eq!(run(t, true)[0].span, 0..t.len());
        // other text after the body: malformed
        let t = "<|tool_call>call:get_time{} and more";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("missing <tool_call|>"));
        assert_eq!(out[0].span.end, 27);
    }

    #[test]
    fn streaming_pending() {
        for t in [
            "Hi <|tool_call>",
            "Hi <|tool_call>ca",
            "Hi <|tool_call>call:get_wea",
            "Hi <|tool_call>call:get_weather{location:<|\"|>Par",
            "Hi <|tool_call>call:get_weather{location:<|\"",
            "Hi <|tool_call>call:f{n:12",
            "Hi <|tool_call>call:f{n:[1,{a:",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(out[0].span, 3..t.len());
            let out = run(t, true);
            assert!(reason(&out[0]).contains("unterminated"), "{t}");
        }
    }

    #[test]
    fn malformed_reasons() {
        let cases = [
            (
                "<|tool_call>call:get_weather{location:Paris}<tool_call|>",
                "unquoted value `Paris`",
            ),
            (
                "<|tool_call>call:f{a:\"x\"}<tool_call|>",
                "JSON-quoted string",
            ),
            ("<|tool_call>call:f{a:1,}<tool_call|>", "trailing `,`"),
            (
                "<|tool_call>call:f{a:1 b:2}<tool_call|>",
                "expected `,` or `}`",
            ),
            ("<|tool_call>call:f{a:1,a:2}<tool_call|>", "given twice"),
            ("<|tool_call>call:f{a}<tool_call|>", "expected `:`"),
            (
                "<|tool_call>call:f{a:}<tool_call|>",
                "missing value for key `a`",
            ),
            (
                "<|tool_call>:call:f{}<tool_call|>",
                "expected `call:NAME{…}`",
            ),
            ("<|tool_call>call:{a:1}<tool_call|>", "function name"),
            ("<|tool_call>call:f(a=1)<tool_call|>", "expected `{`"),
            (
                "<|tool_call>{\"name\":\"f\"}<tool_call|>",
                "expected `call:NAME{…}`",
            ),
        ];
        for (t, want) in cases {
            let out = run(t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].span, 0..t.len(), "{t}");
            let r = reason(&out[0]);
            assert!(r.contains(want), "{t}: {r}");
        }
    }

    #[test]
    fn malformed_block_does_not_swallow_the_next() {
        let t =
            "<|tool_call>call:a{x:<|\"|>oops<tool_call|> then <|tool_call>call:b{y:1}<tool_call|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(reason(&out[0]).contains("unterminated"));
        assert_eq!(calls(&out[1]), vec![("b".into(), json!({"y": 1}))]);
        let t = "<|tool_call>call:a{x:bad}<tool_call|> ok <|tool_call>call:b{}<tool_call|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(
            &t[out[0].span.clone()],
            "<|tool_call>call:a{x:bad}<tool_call|>"
        );
    }

    #[test]
    fn invalid_without_closer_while_streaming_is_pending() {
        let t = "<|tool_call>call:a{x:bad";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        let t = "<|tool_call>call:a{x:bad,";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert!(reason(&run(t, true)[0]).contains("unquoted"));
    }

    #[test]
    fn bare_calls_are_loose() {
        let t = "<|channel>thought\nNeed the file.<channel|>call:bash{command:<|\"|>ls -la<|\"|>}";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(out[0].loose);
        assert_eq!(
            calls(&out[0]),
            vec![("bash".into(), json!({"command": "ls -la"}))]
        );
        let t = "Sure.\ncall:get_time{}";
        let out = run(t, true);
        assert!(out[0].loose);
        assert_eq!(&t[out[0].span.clone()], "call:get_time{}");
    }

    #[test]
    fn bare_prose_is_not_a_call() {
        no_call_at_end(&[
            "Please call: 555-1234 {today}",
            "I will call:you{later}",
            "recall:x{}",
            "Use call:f{a:b} maybe",
            "<start_function_call>call:get_time{}<end_function_call>",
        ]);
        // incomplete bare call: pending while streaming, nothing at the end
        pending_then_nothing("ok call:get_weather{location:<|\"|>Par");
    }

    #[test]
    fn tool_code_fence() {
        let t = "Checking.\n```tool_code\nget_weather(location=\"Paris\", days=2)\n```\nDone.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(out[0].loose);
        assert_eq!(
            &t[out[0].span.clone()],
            "```tool_code\nget_weather(location=\"Paris\", days=2)\n```"
        );
        assert_eq!(
            calls(&out[0]),
            vec![(
                "get_weather".into(),
                json!({"location": "Paris", "days": 2})
            )]
        );
        let t = "```tool_code\nget_time()\nget_date()\n```";
        assert_eq!(calls(&run(t, true)[0]).len(), 2);
        no_call_at_end(&[
            "```tool_code\nprint(default_api.get_time())\n```",
            "```tool_code\nimport os\nos.system('x')\n```",
            "```tool_code\nf(1)\n```",
            "```tool_codex\nf()\n```",
            "x ```tool_code\nf()\n```",
        ]);
        pending_then_nothing("```tool_code\nget_time(");
    }

    #[test]
    fn unicode_everywhere() {
        let t = "Ça va ☕ <|tool_call>call:send{text:<|\"|>héllo ☕<|\"|>,to:<|\"|>Zoë<|\"|>}<tool_call|> ✓";
        let out = run(t, true);
        assert_eq!(calls(&out[0])[0].1, json!({"text":"héllo ☕","to":"Zoë"}));
        // truncated at every char boundary: never panics, spans valid
        for (i, _) in t.char_indices() {
            run(&t[..i], false);
            run(&t[..i], true);
        }
    }

    #[test]
    fn deep_nesting_is_malformed() {
        let t = format!(
            "<|tool_call>call:f{{a:{}1{}}}<tool_call|>",
            "[".repeat(500),
            "]".repeat(500)
        );
        let out = run(&t, true);
        assert!(reason(&out[0]).contains("nested too deeply"));
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        let pieces = [
            "<|tool_call>",
            "<|tool_call>call:f{a:<|\"|>",
            "call:x{a:<|\"|>",
            "<|tool_call>call:f{a:[{b:",
            "<tool_call|>",
            " call:f{",
            "```tool_code\n",
            "<|\"|>",
            "{[",
        ];
        megabyte_of_each(&pieces, run);
        let mixed: String = pieces.iter().cycle().take(200_000).copied().collect();
        run(&mixed, true);
        run(&mixed, false);
    }
}
