//! A JSON call value (one object or a list) after a marker token or tag: where the value
//! stands ([`json_at`], [`JsonAt`]), tokens around it ([`after_token`], [`absorb_tokens`],
//! [`is_partial`]), the found it makes ([`calls_found`], [`bracket_mismatch`], [`cut_off`],
//! [`name_hint`]), dropping a format's "no tool applies" pseudo-call
//! ([`without_pseudo_calls`]) and a cached search for several needles in turn ([`NextOf`]).
//!
//! Used by `granite`, `mistral`, `granite_20b_fc`, `command_r` and `apriel`.

use std::ops::Range;

use serde_json::Value;

use crate::detector::{Candidate, DetectCtx, Found};
use crate::scan::{self, Scan};

/// Where a JSON value after some marker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonAt {
    /// Only whitespace before the limit.
    Nothing,
    /// The first non-whitespace byte, at this offset, opens neither `{` nor `[`.
    NotJson(usize),
    /// A balanced value at `start..end`.
    Complete(usize, usize),
    /// A value starts at this offset and is cut off by the limit.
    Incomplete(usize),
    /// A value starts at `.0` and its brackets do not match; the scan stopped before `.1`.
    Invalid(usize, usize),
}

/// Look for a JSON object or list starting at the first non-whitespace byte at or after
/// `from`, not looking past `limit` (a char boundary, at most `text.len()`).
pub(crate) fn json_at(text: &str, from: usize, limit: usize) -> JsonAt {
    let Some(hay) = text.get(..limit.min(text.len())) else {
        return JsonAt::Nothing;
    };
    if from > hay.len() {
        return JsonAt::Nothing;
    }
    let start = scan::skip_ws(hay, from);
    match hay.as_bytes().get(start) {
        None => JsonAt::Nothing,
        Some(b'{' | b'[') => match scan::balanced_end(hay, start, false) {
            Scan::Complete(end) => JsonAt::Complete(start, end),
            Scan::Incomplete => JsonAt::Incomplete(start),
            Scan::Invalid(at) => JsonAt::Invalid(start, char_end(hay, at)),
        },
        Some(_) => JsonAt::NotJson(start),
    }
}

/// The offset just past the char that starts at (or contains) `at`.
pub(crate) fn char_end(text: &str, at: usize) -> usize {
    let mut end = (at + 1).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// If, after optional whitespace, `token` follows `pos`, the offset just past it.
pub(crate) fn after_token(text: &str, pos: usize, token: &str) -> Option<usize> {
    let p = scan::skip_ws(text, pos.min(text.len()));
    text[p..].starts_with(token).then_some(p + token.len())
}

/// Extend `end` over any of `tokens` that follow it (whitespace allowed in between), in any
/// order, each at most once.
pub(crate) fn absorb_tokens(text: &str, mut end: usize, tokens: &[&str]) -> usize {
    let mut used = vec![false; tokens.len()];
    loop {
        let next = tokens
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .find_map(|(i, t)| after_token(text, end, t).map(|e| (i, e)));
        match next {
            Some((i, e)) => {
                used[i] = true;
                end = e;
            }
            None => return end,
        }
    }
}

/// True if `rest` (after trimming leading whitespace) is non-empty and a proper prefix of
/// `token`: the token may be arriving in a stream.
pub(crate) fn is_partial(rest: &str, token: &str) -> bool {
    let r = rest.trim_start();
    !r.is_empty() && r.len() < token.len() && token.starts_with(r)
}

/// Parse a JSON slice holding a call object or a list of them; errors name the marker.
pub(crate) fn parse_calls(json: &str, marker: &str) -> Result<Vec<Candidate>, String> {
    let v: Value =
        serde_json::from_str(json).map_err(|e| format!("malformed JSON after {marker}: {e}"))?;
    scan::calls_from_json(&v).map_err(|e| format!("{marker}: {e}"))
}

/// The found for the call JSON `json` (one object or a list) after `marker`, over `span`:
/// the calls `keep` retains, or malformed with the parse error, named after the first
/// call-looking object.
pub(crate) fn calls_found(
    span: Range<usize>,
    json: &str,
    marker: &str,
    keep: impl FnOnce(Vec<Candidate>) -> Vec<Candidate>,
) -> Found {
    match parse_calls(json, marker) {
        Ok(calls) => Found::calls(span, keep(calls)),
        Err(reason) => Found::malformed(span, name_hint(json), reason),
    }
}

/// The reason for a JSON value at `s` whose brackets do not match ([`JsonAt::Invalid`]
/// stopped before `at`): `head` (what and where, e.g. `"malformed JSON after X: unbalanced
/// brackets"`) and the offending byte's offset within the value.
pub(crate) fn bracket_reason(head: &str, s: usize, at: usize) -> String {
    format!("{head} at byte {}", at - 1 - s)
}

/// Malformed over `start..at` for a call value at `s` whose brackets do not match at `at`
/// (see [`bracket_reason`]), named after its first call-looking object.
pub(crate) fn bracket_mismatch(text: &str, start: usize, s: usize, at: usize, head: &str) -> Found {
    Found::malformed(
        start..at,
        name_hint(&text[s..at]),
        bracket_reason(head, s, at),
    )
}

/// A construct over `span` that the text cut off: `Pending` (from its start to the end of
/// the text) while more text may come, otherwise malformed for `reason`.
pub(crate) fn cut_off(
    span: Range<usize>,
    text_len: usize,
    may_grow: bool,
    name: Option<String>,
    reason: &str,
) -> Found {
    if may_grow {
        Found::pending(span.start..text_len)
    } else {
        Found::malformed(span, name, reason)
    }
}

/// The name of the first call-looking object in a JSON slice, for malformed reports.
pub(crate) fn name_hint(json: &str) -> Option<String> {
    let v: Value = serde_json::from_str(json).ok()?;
    let first = match &v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    ["name", "tool_name"]
        .iter()
        .find_map(|k| first.get(*k)?.as_str().map(str::to_string))
}

/// The next occurrence of one needle, cached so that looking for several needles in turn
/// stays linear (a needle is searched again only once the cursor has passed its last hit).
pub(crate) struct NextOf<'n> {
    needle: &'n str,
    /// `Some(None)`: no occurrence at or after the last search point.
    hit: Option<Option<usize>>,
}

impl<'n> NextOf<'n> {
    pub(crate) fn new(needle: &'n str) -> Self {
        NextOf { needle, hit: None }
    }

    pub(crate) fn at_or_after(&mut self, text: &str, pos: usize) -> Option<usize> {
        match self.hit {
            Some(None) => return None,
            Some(Some(h)) if h >= pos => return Some(h),
            _ => {}
        }
        let h = scan::find_from(text, self.needle, pos);
        self.hit = Some(h);
        h
    }
}

/// Drop the candidates named `pseudo` (a format's "no tool applies" answer), unless the tool
/// set on offer really has a tool of that name.
pub(crate) fn without_pseudo_calls(
    calls: Vec<Candidate>,
    pseudo: &str,
    ctx: &DetectCtx<'_>,
) -> Vec<Candidate> {
    if !ctx.tools.is_unrestricted() && ctx.tools.contains(pseudo) {
        return calls;
    }
    calls.into_iter().filter(|c| c.name != pseudo).collect()
}
