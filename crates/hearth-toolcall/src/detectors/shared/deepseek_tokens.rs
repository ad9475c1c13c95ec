//! The DeepSeek tool tokens and the block scanner built on them: matching the canonical
//! tokens and their look-alike spellings ([`match_tok`]), parsing blocks of calls in the V3 /
//! R1 shape and the V3.1 shape, and pushing the blocks a [`Dialect`] claims
//! ([`detect_deepseek`]).
//!
//! Used by `deepseek_v3` (canonical tokens, V3 shape), `deepseek_v31` (V3.1 shape, lax
//! tokens) and `deepseek_r1` (V3 shape, lax tokens).

use serde_json::Value;

use crate::detector::{Candidate, DetectCtx, Found};
use crate::scan;

use super::token_blocks::{describe, Boundary, Outcome};

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

/// Every DeepSeek tool token starts with one of these (fullwidth bar, or ASCII bar + `▁`).
pub(crate) const LAX_TRIGGERS: &[&str] = &["<\u{FF5C}tool", "<|tool\u{2581}"];

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

struct Block {
    start: usize,
    end: usize,
    outcome: Outcome,
    canonical: bool,
    has_v3: bool,
    has_v31: bool,
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

    pub(crate) const CALLS_END: &str = "<\u{FF5C}tool\u{2581}calls\u{2581}end\u{FF5C}>";
    pub(crate) const CALL_END: &str = "<\u{FF5C}tool\u{2581}call\u{2581}end\u{FF5C}>";
    pub(crate) const SEP: &str = "<\u{FF5C}tool\u{2581}sep\u{FF5C}>";

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
}
