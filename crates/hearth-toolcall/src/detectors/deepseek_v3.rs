//! `deepseek_v3`: DeepSeek-V3 (and V3-0324) tool calls, plus the token machinery the other
//! DeepSeek detectors (`deepseek_v31`, `deepseek_r1`) share.
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

use std::ops::Range;

use serde_json::Value;

use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::scan;

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

/// `<｜tool▁calls▁begin｜>`: opens a block of calls.
pub(crate) const CALLS_BEGIN: &str = "<\u{FF5C}tool\u{2581}calls\u{2581}begin\u{FF5C}>";
/// `<｜tool▁call▁begin｜>`: opens one call.
pub(crate) const CALL_BEGIN: &str = "<\u{FF5C}tool\u{2581}call\u{2581}begin\u{FF5C}>";

/// Which DeepSeek blocks a detector claims.
pub(crate) struct Dialect {
    /// Accept look-alike token spellings (ASCII bars, `_`/space/`\_` separators, the short
    /// `<｜tool▁calls｜>` opener, a call without `<｜tool▁call▁begin｜>`).
    pub lax_tokens: bool,
    /// Accept the V3 / R1 shape: `function<｜tool▁sep｜>NAME`, newline, fenced JSON.
    pub v3_shape: bool,
    /// Accept the V3.1 shape `NAME<｜tool▁sep｜>{…}`.
    pub v31_shape: bool,
}

const V3_DIALECT: Dialect = Dialect {
    lax_tokens: false,
    v3_shape: true,
    v31_shape: false,
};

/// The DeepSeek tool tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    CallsBegin,
    CallsEnd,
    CallBegin,
    CallEnd,
    Sep,
}

/// Result of matching one token at a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokMatch {
    Full {
        tok: Tok,
        end: usize,
        canonical: bool,
    },
    /// The text ends inside something that could still become a token.
    Partial,
    No,
}

enum Step {
    Partial,
    No,
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &[u8] {
        self.b.get(self.i..).unwrap_or(&[])
    }

    /// Consume the first alternative that matches; returns its index.
    fn eat_any(&mut self, alts: &[&[u8]]) -> Result<usize, Step> {
        let rest = self.rest();
        let mut partial = false;
        for (k, lit) in alts.iter().enumerate() {
            if rest.starts_with(lit) {
                self.i += lit.len();
                return Ok(k);
            }
            if lit.starts_with(rest) {
                partial = true;
            }
        }
        Err(if partial { Step::Partial } else { Step::No })
    }
}

const BARS: &[&[u8]] = &["\u{FF5C}".as_bytes(), b"|"];
const SEPS: &[&[u8]] = &["\u{2581}".as_bytes(), b"_", b" ", b"\\_"];

/// Match a DeepSeek tool token (canonical or look-alike) at byte `i`.
///
/// Look-alikes: ASCII `|` for either bar (only together with `▁` separators, so Kimi's
/// `<|tool_call_begin|>` is never mistaken for one), `_`, space or `\_` instead of `▁`, and
/// the short opener `<｜tool▁calls｜>` that llama.cpp also accepts.
pub(crate) fn match_tok(text: &str, i: usize) -> TokMatch {
    let mut c = Cursor {
        b: text.as_bytes(),
        i,
    };
    let mut ascii_bar = false;
    let mut odd_sep = false;
    macro_rules! step {
        ($e:expr) => {
            match $e {
                Ok(k) => k,
                Err(Step::Partial) => return TokMatch::Partial,
                Err(_) => return TokMatch::No,
            }
        };
    }
    step!(c.eat_any(&[b"<"]));
    ascii_bar |= step!(c.eat_any(BARS)) == 1;
    step!(c.eat_any(&[b"tool"]));
    odd_sep |= step!(c.eat_any(SEPS)) != 0;
    let word = step!(c.eat_any(&[b"calls", b"call", b"sep"]));
    let mut short = false;
    let tok = if word == 2 {
        Tok::Sep
    } else {
        // `<｜tool▁calls｜>`: the short opener.
        let bar_now = if word == 0 {
            match c.eat_any(BARS) {
                Ok(k) => Some(k),
                Err(Step::Partial) => return TokMatch::Partial,
                Err(_) => None,
            }
        } else {
            None
        };
        if let Some(k) = bar_now {
            ascii_bar |= k == 1;
            short = true;
            Tok::CallsBegin
        } else {
            odd_sep |= step!(c.eat_any(SEPS)) != 0;
            let which = step!(c.eat_any(&[b"begin", b"end"]));
            match (word, which) {
                (0, 0) => Tok::CallsBegin,
                (0, _) => Tok::CallsEnd,
                (_, 0) => Tok::CallBegin,
                _ => Tok::CallEnd,
            }
        }
    };
    if !short {
        ascii_bar |= step!(c.eat_any(BARS)) == 1;
    }
    step!(c.eat_any(&[b">"]));
    if ascii_bar && odd_sep {
        return TokMatch::No;
    }
    TokMatch::Full {
        tok,
        end: c.i,
        canonical: !ascii_bar && !odd_sep && !short,
    }
}

/// Find the next `<` at or after `from` where a token of one of `kinds` starts.
fn next_tok(text: &str, from: usize, kinds: &[Tok]) -> Option<(usize, Tok, usize, bool)> {
    let b = text.as_bytes();
    let mut at = from;
    while at < b.len() {
        let p = at + memchr::memchr(b'<', b.get(at..)?)?;
        if let TokMatch::Full {
            tok,
            end,
            canonical,
        } = match_tok(text, p)
        {
            if kinds.contains(&tok) {
                return Some((p, tok, end, canonical));
            }
        }
        at = p + 1;
    }
    None
}

/// The two call shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `function<｜tool▁sep｜>NAME`, newline, JSON in a `json` code fence (V3, R1).
    V3,
    /// `NAME<｜tool▁sep｜>{…}` (V3.1).
    V31,
}

enum CallRes {
    Ok {
        cand: Candidate,
        end: usize,
        shape: Shape,
        canonical: bool,
    },
    Incomplete,
    Fail {
        name: Option<String>,
        reason: String,
        at: usize,
        shape: Option<Shape>,
    },
}

/// Longest plausible function name / type word, in bytes.
const NAME_MAX: usize = 256;

fn fail(name: Option<&str>, reason: impl Into<String>, at: usize, shape: Option<Shape>) -> CallRes {
    CallRes::Fail {
        name: name.map(str::to_string),
        reason: reason.into(),
        at,
        shape,
    }
}

/// What the text holds at `at`, for error messages: its first characters in backticks, or
/// "end of text". Shared by every detector in this group.
pub(crate) fn describe(text: &str, at: usize) -> String {
    let rest = text.get(at..).unwrap_or("");
    if rest.is_empty() {
        return "end of text".to_string();
    }
    let snippet: String = rest.chars().take(24).collect();
    format!("`{snippet}`")
}

/// Parse one call starting at `i` (just after `<｜tool▁call▁begin｜>`, or at `function` for the
/// R1 variant without it). Ends after `<｜tool▁call▁end｜>`.
fn parse_call(text: &str, i: usize) -> CallRes {
    let b = text.as_bytes();
    let mut canonical = true;
    // The type word (V3) or the name (V3.1) runs to the next `<`.
    let window_end = (i + NAME_MAX).min(b.len());
    let lt = b
        .get(i..window_end)
        .and_then(|w| memchr::memchr(b'<', w))
        .map(|p| p + i);
    let Some(lt) = lt else {
        if window_end == b.len() {
            return CallRes::Incomplete;
        }
        return fail(
            None,
            "expected `<｜tool▁sep｜>` after the call type or name",
            i,
            None,
        );
    };
    let sep_end = match match_tok(text, lt) {
        TokMatch::Full {
            tok: Tok::Sep,
            end,
            canonical: c,
        } => {
            canonical &= c;
            end
        }
        TokMatch::Partial => return CallRes::Incomplete,
        _ => {
            let head = text.get(i..lt).unwrap_or("").trim();
            let name = (!head.is_empty()).then_some(head);
            return fail(
                name,
                format!(
                    "expected `<｜tool▁sep｜>` after the call type or name, found {}",
                    describe(text, lt)
                ),
                lt,
                None,
            );
        }
    };
    let head = text.get(i..lt).unwrap_or("").trim();
    let after = scan::skip_ws(text, sep_end);
    if after >= b.len() {
        return CallRes::Incomplete;
    }
    let shape = if head == "function" && b.get(after) != Some(&b'{') {
        Shape::V3
    } else {
        Shape::V31
    };
    let (name, args_from) = match shape {
        Shape::V31 => (head, sep_end),
        Shape::V3 => {
            // The name runs to the end of its line (or to the fence / JSON / next token).
            let w_end = (sep_end + NAME_MAX).min(b.len());
            let stop = b
                .get(sep_end..w_end)
                .and_then(|w| {
                    w.iter()
                        .position(|&c| matches!(c, b'\n' | b'\r' | b'{' | b'<' | b'`'))
                })
                .map(|p| p + sep_end);
            let Some(stop) = stop else {
                if w_end == b.len() {
                    return CallRes::Incomplete;
                }
                return fail(None, "function name line is too long", sep_end, Some(shape));
            };
            (text.get(sep_end..stop).unwrap_or("").trim(), stop)
        }
    };
    if name.is_empty() {
        return fail(None, "missing function name", args_from, Some(shape));
    }
    if !scan::is_ident(name) {
        return fail(
            Some(name),
            format!("invalid function name `{name}`"),
            args_from,
            Some(shape),
        );
    }
    match parse_args(text, args_from) {
        ArgsRes::Ok {
            args,
            end,
            canonical: c,
        } => CallRes::Ok {
            cand: Candidate::new(name, args),
            end,
            shape,
            canonical: canonical && c,
        },
        ArgsRes::Incomplete => CallRes::Incomplete,
        ArgsRes::Fail { reason, at } => fail(Some(name), reason, at, Some(shape)),
    }
}

enum ArgsRes {
    Ok {
        args: Value,
        end: usize,
        canonical: bool,
    },
    Incomplete,
    Fail {
        reason: String,
        at: usize,
    },
}

/// Arguments: an optional `json` code fence, a JSON object (or nothing, meaning `{}`),
/// the closing fence, then `<｜tool▁call▁end｜>`.
fn parse_args(text: &str, from: usize) -> ArgsRes {
    let b = text.as_bytes();
    let mut i = scan::skip_ws(text, from);
    let mut fenced = false;
    if b.get(i..).is_some_and(|r| r.starts_with(b"```")) {
        fenced = true;
        i += 3;
        // Info string: letters only (`json`), then the line break.
        while b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            i += 1;
        }
        i = scan::skip_ws(text, i);
    } else if b.get(i) == Some(&b'`') && b.len() - i < 3 && b"```".starts_with(&b[i..]) {
        return ArgsRes::Incomplete;
    }
    // The arguments run to the next DeepSeek token, which must end the call. Cutting at
    // the token (not at a balanced bracket) keeps the span the same however much of the
    // output has arrived: these tokens never occur inside JSON.
    let Some((p, tok, end, canonical)) = next_tok(
        text,
        i,
        &[
            Tok::CallEnd,
            Tok::CallsEnd,
            Tok::CallBegin,
            Tok::CallsBegin,
            Tok::Sep,
        ],
    ) else {
        return ArgsRes::Incomplete;
    };
    let mut body = text.get(i..p).unwrap_or("").trim_end();
    if fenced {
        match body.strip_suffix("```") {
            Some(inner) => body = inner,
            None => {
                return ArgsRes::Fail {
                    reason: "the ```json fence around the arguments is not closed".into(),
                    at: p,
                }
            }
        }
    }
    if tok != Tok::CallEnd {
        return ArgsRes::Fail {
            reason: format!(
                "expected `<｜tool▁call▁end｜>` after the arguments, found {}",
                describe(text, p)
            ),
            at: p,
        };
    }
    if !body.is_empty() && !matches!(body.as_bytes()[0], b'{' | b'[' | b'"') {
        return ArgsRes::Fail {
            reason: format!("expected JSON arguments, found {}", describe(text, i)),
            at: p,
        };
    }
    // Nothing between the name and the end token means no arguments.
    match scan::parse_args_json(body) {
        Ok(args) => ArgsRes::Ok {
            args,
            end,
            canonical,
        },
        Err(reason) => ArgsRes::Fail { reason, at: p },
    }
}

/// The outcome of one block (section, construct). Shared by every detector in this group.
pub(crate) enum Outcome {
    Calls(Vec<Candidate>),
    Malformed(Option<String>, String),
    Pending,
}

impl Outcome {
    /// A block that ended: its calls, or malformed for `empty` when it holds none.
    pub(crate) fn calls_or(calls: Vec<Candidate>, empty: &str) -> Self {
        if calls.is_empty() {
            Outcome::Malformed(None, empty.into())
        } else {
            Outcome::Calls(calls)
        }
    }

    /// A call that failed: the reason is led by `what` (`"Kimi tool call"`) and the call's
    /// name when known.
    pub(crate) fn failed(what: &str, name: Option<String>, reason: &str) -> Self {
        let reason = match &name {
            Some(n) => format!("{what} `{n}`: {reason}"),
            None => format!("{what}: {reason}"),
        };
        Outcome::Malformed(name, reason)
    }

    /// The found over `span`, through [`settle`].
    pub(crate) fn into_found(self, span: Range<usize>, text_len: usize, eof: bool) -> Found {
        let found = match self {
            Outcome::Calls(calls) => Found::calls(span, calls),
            Outcome::Malformed(name, reason) => Found::malformed(span, name, reason),
            Outcome::Pending => Found::pending(span),
        };
        settle(found, text_len, eof)
    }
}

struct Block {
    start: usize,
    end: usize,
    outcome: Outcome,
    canonical: bool,
    has_v3: bool,
    has_v31: bool,
}

/// Remembers the next block boundary (a block's end token or a new opener, as
/// `(start, token, end)`) so recovery after a failure never rescans the same stretch of
/// text. Shared by every token-delimited detector in this group.
pub(crate) struct Boundary<T> {
    from: usize,
    found: Option<(usize, T, usize)>,
    valid: bool,
}

impl<T: Copy> Boundary<T> {
    pub(crate) fn new() -> Self {
        Boundary {
            from: 0,
            found: None,
            valid: false,
        }
    }

    /// The boundary at or after `from`; `find(from)` searches for it when the memo does not
    /// cover `from` (queries must not go backwards past the memo's start).
    pub(crate) fn next(
        &mut self,
        from: usize,
        find: impl FnOnce(usize) -> Option<(usize, T, usize)>,
    ) -> Option<(usize, T, usize)> {
        let covered = self.valid
            && from >= self.from
            && match self.found {
                Some((p, _, _)) => from <= p,
                None => true,
            };
        if !covered {
            self.from = from;
            self.found = find(from);
            self.valid = true;
        }
        self.found
    }
}

/// Where a broken block ends: its `<｜tool▁calls▁end｜>`, else the broken call's
/// `<｜tool▁call▁end｜>`, else just before the next block, else the end of the text.
fn recover_end(text: &str, from: usize, eof: bool, bound: &mut Boundary<Tok>) -> usize {
    let boundary = bound.next(from, |from| {
        next_tok(text, from, &[Tok::CallsEnd, Tok::CallsBegin]).map(|(p, t, e, _)| (p, t, e))
    });
    if let Some((_, Tok::CallsEnd, e)) = boundary {
        return e;
    }
    if boundary.is_none() && !eof {
        // The block's end token may still arrive: not settled yet.
        return text.len();
    }
    let limit = boundary.map(|b| b.0).unwrap_or(text.len());
    if let Some((p, _, e, _)) = next_tok(text, from, &[Tok::CallEnd, Tok::CallsBegin]) {
        if p < limit {
            return e;
        }
    }
    limit
}

fn parse_block(
    text: &str,
    start: usize,
    first: Tok,
    first_end: usize,
    eof: bool,
    bound: &mut Boundary<Tok>,
) -> Block {
    let b = text.as_bytes();
    let sectioned = first == Tok::CallsBegin;
    let mut blk = Block {
        start,
        end: text.len(),
        outcome: Outcome::Pending,
        canonical: true,
        has_v3: false,
        has_v31: false,
    };
    let mut calls: Vec<Candidate> = Vec::new();
    // Position after the last complete element (opener or call).
    let mut i = if sectioned { first_end } else { start };
    let finish_calls = |blk: &mut Block, calls: Vec<Candidate>, end: usize| {
        blk.end = end;
        blk.outcome = Outcome::calls_or(calls, "DeepSeek tool-call block holds no calls");
    };
    loop {
        let j = scan::skip_ws(text, i);
        if j >= b.len() {
            if !eof {
                blk.outcome = Outcome::Pending;
                blk.end = b.len();
            } else {
                finish_calls(&mut blk, calls, i);
            }
            return blk;
        }
        let call_start = match match_tok(text, j) {
            TokMatch::Full {
                tok: Tok::CallBegin,
                end,
                canonical,
            } => {
                blk.canonical &= canonical;
                Some(end)
            }
            TokMatch::Full {
                tok: Tok::CallsEnd,
                end,
                canonical,
            } => {
                blk.canonical &= canonical;
                finish_calls(&mut blk, calls, end);
                return blk;
            }
            TokMatch::Partial if !eof => {
                blk.outcome = Outcome::Pending;
                blk.end = b.len();
                return blk;
            }
            _ => None,
        };
        let call_start = match call_start {
            Some(s) => s,
            // R1 variant: `function<｜tool▁sep｜>…` with no `<｜tool▁call▁begin｜>`.
            None if sectioned && b.get(j..).is_some_and(|r| r.starts_with(b"function")) => {
                blk.canonical = false;
                j
            }
            None if sectioned && !eof && b"function".starts_with(&b[j..]) => {
                blk.outcome = Outcome::Pending;
                blk.end = b.len();
                return blk;
            }
            None => {
                if calls.is_empty() {
                    // An opener followed by something else entirely.
                    blk.end = first_end;
                    blk.outcome = Outcome::Malformed(
                        None,
                        format!(
                            "expected `<｜tool▁call▁begin｜>` after `<｜tool▁calls▁begin｜>`, found {}",
                            describe(text, j)
                        ),
                    );
                } else {
                    // The block was not closed; it ends after its last call.
                    blk.end = i;
                    blk.outcome = Outcome::Calls(calls);
                }
                return blk;
            }
        };
        match parse_call(text, call_start) {
            CallRes::Ok {
                cand,
                end,
                shape,
                canonical,
            } => {
                blk.canonical &= canonical;
                match shape {
                    Shape::V3 => blk.has_v3 = true,
                    Shape::V31 => blk.has_v31 = true,
                }
                calls.push(cand);
                i = end;
            }
            CallRes::Incomplete => {
                if eof {
                    blk.outcome = Outcome::Malformed(
                        None,
                        "DeepSeek tool call is cut off: the text ends inside the call".into(),
                    );
                } else {
                    blk.outcome = Outcome::Pending;
                }
                blk.end = b.len();
                // Name the call if we got that far.
                if let (true, Some(name)) = (eof, cut_off_name(text, call_start)) {
                    blk.outcome = Outcome::Malformed(
                        Some(name),
                        "DeepSeek tool call is cut off: the text ends inside the call".into(),
                    );
                }
                return blk;
            }
            CallRes::Fail {
                name,
                reason,
                at,
                shape,
            } => {
                match shape {
                    Some(Shape::V3) => blk.has_v3 = true,
                    Some(Shape::V31) => blk.has_v31 = true,
                    None => {}
                }
                blk.end = if sectioned {
                    recover_end(text, at, eof, bound)
                } else {
                    // A bare call ends at its own `<｜tool▁call▁end｜>`.
                    match next_tok(text, at, &[Tok::CallEnd, Tok::CallBegin, Tok::CallsBegin]) {
                        Some((_, Tok::CallEnd, e, _)) => e,
                        Some((p, _, _, _)) => p,
                        None => b.len(),
                    }
                }
                .max(at.min(b.len()))
                .max(start + 1);
                blk.outcome = Outcome::failed("DeepSeek tool call", name, &reason);
                return blk;
            }
        }
    }
}

/// Best-effort name of a call that was cut off (for the rejection report only).
fn cut_off_name(text: &str, call_start: usize) -> Option<String> {
    let (_, _, sep_end, _) = next_tok(text, call_start, &[Tok::Sep])?;
    let head = text.get(call_start..sep_end)?;
    let head = head.split('<').next()?.trim();
    let name = if head == "function" {
        let rest = text.get(sep_end..)?;
        rest.split(['\n', '\r', '`', '{', '<']).next()?.trim()
    } else {
        head
    };
    (scan::is_ident(name)).then(|| name.to_string())
}

/// While streaming, broken markup whose span runs to the end of the text is not settled
/// yet (its closer may still arrive and move the span's end): report it `Pending`, never a
/// premature `Malformed`. Shared by every detector in this group.
pub(crate) fn settle(found: Found, text_len: usize, eof: bool) -> Found {
    if !eof && found.span.end >= text_len && matches!(found.kind, FoundKind::Malformed { .. }) {
        return Found::pending(found.span);
    }
    found
}

/// Run the shared DeepSeek scanner and push the blocks `dialect` claims.
pub(crate) fn detect_deepseek(
    text: &str,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
    dialect: &Dialect,
) {
    let mut bound = Boundary::new();
    let mut pos = 0;
    while let Some((start, tok, end, canonical)) =
        next_tok(text, pos, &[Tok::CallsBegin, Tok::CallBegin])
    {
        let mut blk = parse_block(text, start, tok, end, ctx.eof, &mut bound);
        blk.canonical &= canonical;
        pos = blk.end.max(start + 1);
        let mine = (blk.canonical || dialect.lax_tokens)
            && (!blk.has_v3 || dialect.v3_shape)
            && (!blk.has_v31 || dialect.v31_shape);
        if !mine {
            continue;
        }
        out.push(
            blk.outcome
                .into_found(blk.start..blk.end, text.len(), ctx.eof),
        );
        if blk.end >= text.len() {
            break;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const CALLS_END: &str = "<\u{FF5C}tool\u{2581}calls\u{2581}end\u{FF5C}>";
    const CALL_END: &str = "<\u{FF5C}tool\u{2581}call\u{2581}end\u{FF5C}>";
    const SEP: &str = "<\u{FF5C}tool\u{2581}sep\u{FF5C}>";
    use crate::detector::FoundKind;
    use crate::validate::ToolSet;
    use serde_json::json;

    pub(crate) fn run(d: &dyn Detector, text: &str, eof: bool) -> Vec<Found> {
        let tools = ToolSet::unrestricted();
        let ctx = DetectCtx { eof, tools: &tools };
        let mut out = Vec::new();
        d.detect(text, &ctx, &mut out);
        for f in &out {
            assert!(
                f.span.start < f.span.end && f.span.end <= text.len(),
                "{f:?}"
            );
            assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
        }
        for w in out.windows(2) {
            assert!(w[0].span.end <= w[1].span.start, "overlap: {out:?}");
        }
        out
    }

    pub(crate) fn calls(f: &Found) -> Vec<(String, Value)> {
        match &f.kind {
            FoundKind::Calls(c) => c
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect(),
            other => panic!("expected calls, got {other:?}"),
        }
    }

    pub(crate) fn reason(f: &Found) -> String {
        match &f.kind {
            FoundKind::Malformed { reason, .. } => reason.clone(),
            other => panic!("expected malformed, got {other:?}"),
        }
    }

    const ONE: &str = "Let me check.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";

    #[test]
    fn tokens_match_canonical_and_lookalikes() {
        for (t, tok, canon) in [
            (CALLS_BEGIN, Tok::CallsBegin, true),
            (CALLS_END, Tok::CallsEnd, true),
            (CALL_BEGIN, Tok::CallBegin, true),
            (CALL_END, Tok::CallEnd, true),
            (SEP, Tok::Sep, true),
            ("<｜tool_calls_begin｜>", Tok::CallsBegin, false),
            ("<｜tool calls begin｜>", Tok::CallsBegin, false),
            ("<｜tool\\_calls\\_begin｜>", Tok::CallsBegin, false),
            ("<｜tool▁calls｜>", Tok::CallsBegin, false),
            ("<|tool▁calls▁begin|>", Tok::CallsBegin, false),
            ("<|tool▁sep|>", Tok::Sep, false),
        ] {
            assert_eq!(
                match_tok(t, 0),
                TokMatch::Full {
                    tok,
                    end: t.len(),
                    canonical: canon
                },
                "{t}"
            );
        }
        // Kimi's tokens are not DeepSeek look-alikes.
        assert_eq!(match_tok("<|tool_call_begin|>", 0), TokMatch::No);
        assert_eq!(match_tok("<|tool_calls_section_begin|>", 0), TokMatch::No);
        assert_eq!(match_tok("<｜tool▁call▁en", 0), TokMatch::Partial);
        assert_eq!(match_tok("<｜tool▁outputs▁begin｜>", 0), TokMatch::No);
    }

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

    /// Fragments of every format in this group, for the streaming property below.
    pub(crate) const SOUP: &[&str] = &[
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
        "<｜tool calls begin｜>",
        "<|tool▁calls▁begin|>",
        "<|tool▁sep|>",
        "<｜tool▁calls｜>",
        "function",
        "get_time",
        "get_weather\n",
        "```json\n",
        "```",
        "\n",
        " ",
        "{}",
        "{\"a\": [1, \"}\"]}",
        "{",
        "}",
        "]",
        "\"",
        "<｜DSML｜function_calls>",
        "</｜DSML｜function_calls>",
        "<｜DSML｜tool_calls>",
        "</｜DSML｜tool_calls>",
        "<｜DSML｜invoke name=\"get_time\">",
        "</｜DSML｜invoke>",
        "<｜DSML｜parameter name=\"a\" string=\"true\">",
        "<｜DSML｜parameter name=\"b\" string=\"false\">",
        "</｜DSML｜parameter>",
        "<|DSML|invoke name=\"x\">",
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_end|>",
        "<|tool_call_begin|>",
        "<|tool_call_end|>",
        "<|tool_call_argument_begin|>",
        "functions.get_time:0",
        "<|channel|>",
        "<|message|>",
        "<|end|>",
        "<|start|>",
        "<|start|>assistant",
        "commentary",
        " to=functions.get_time",
        " to=browser.search",
        " <|constrain|>json",
        "<|call|>",
        "<|return|>",
        "analysis",
        "Hi é",
    ];

    /// The streaming contract: anything a detector reports as settled (not `Pending`) for a
    /// prefix of the output is reported the same way for the whole output.
    pub(crate) fn check_settled_is_final(d: &dyn Detector, text: &str) -> Result<(), String> {
        let full = run(d, text, true);
        for k in (1..text.len()).filter(|&k| text.is_char_boundary(k)) {
            let prefix = &text[..k];
            for f in run(d, prefix, false) {
                if f.kind == FoundKind::Pending {
                    assert_eq!(
                        f.span.end,
                        prefix.len(),
                        "{}: pending must run to the end: {prefix:?}",
                        d.name()
                    );
                    continue;
                }
                // Reasons may quote text that is still arriving; spans, calls and the
                // malformed verdict may not change.
                let same = |g: &Found| {
                    g.span == f.span
                        && match (&g.kind, &f.kind) {
                            (FoundKind::Malformed { .. }, FoundKind::Malformed { .. }) => true,
                            (a, b) => a == b,
                        }
                };
                if !full.iter().any(same) {
                    return Err(format!(
                        "{}: prefix {prefix:?} settled {f:?}, full text {text:?} gave {full:?}",
                        d.name()
                    ));
                }
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, failure_persistence: None, .. Default::default() })]
        #[test]
        fn settled_founds_are_final(v in proptest::collection::vec(proptest::sample::select(SOUP), 0..16)) {
            let text = v.concat();
            let dets: [&dyn Detector; 6] = [
                &DeepseekV3,
                &super::super::deepseek_v31::DeepseekV31,
                &super::super::deepseek_r1::DeepseekR1,
                &super::super::deepseek_dsml::DeepseekDsml,
                &super::super::kimi_k2::KimiK2,
                &super::super::harmony::Harmony,
            ];
            for d in dets {
                if let Err(e) = check_settled_is_final(d, &text) {
                    proptest::prop_assert!(false, "{}", e);
                }
            }
        }
    }
}
