//! JSON calls between a pair of tags: [`detect_tagged_json`] finds every `OPEN json CLOSE`
//! block for the given tag pairs, where the JSON is a call object or a list of them.
//!
//! Used by `jamba` (`<tool_calls>…</tool_calls>`) and `nemotron` (`<TOOLCALL>…</TOOLCALL>`).

use serde_json::Value;

use crate::detector::{DetectCtx, Found};
use crate::scan::{self, Scan};

use super::memo_find::Finder;

/// Find every `OPEN json CLOSE` block for the given tag pairs (at most 4), where the JSON
/// is a call object or a list of them.
pub(crate) fn detect_tagged_json(
    tags: &[(&'static str, &'static str)],
    text: &str,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
) {
    let mut opens: Vec<Finder<'_>> = tags.iter().map(|t| Finder::new(text, t.0)).collect();
    let mut closes: Vec<Finder<'_>> = tags.iter().map(|t| Finder::new(text, t.1)).collect();
    let mut pos = 0;
    while pos < text.len() {
        let next = (0..tags.len())
            .filter_map(|k| opens[k].next(pos).map(|p| (p, k)))
            .min();
        let Some((start, k)) = next else { break };
        let (open, close) = tags[k];
        // The next block of any kind bounds this one.
        let after = start + open.len();
        let limit = opens
            .iter_mut()
            .filter_map(|f| f.next(after))
            .min()
            .unwrap_or(text.len());
        let close_at = closes[k].next(after).filter(|&c| c < limit);
        let (found, resume) = block(open, close, text, start, after, limit, close_at, ctx.eof);
        out.push(found);
        match resume {
            Some(r) => pos = r.max(start + 1),
            None => break,
        }
    }
}

/// One block. Returns the found and where to continue (`None`: nothing follows it).
///
/// Every decision depends only on text that cannot change as more arrives (or is deferred
/// with `Pending`), so streaming and one-shot parses agree.
#[allow(clippy::too_many_arguments)]
fn block(
    open: &str,
    close: &str,
    text: &str,
    start: usize,
    after: usize,
    limit: usize,
    close_at: Option<usize>,
    eof: bool,
) -> (Found, Option<usize>) {
    let malformed = |end: usize, reason: String| Found::malformed(start..end, None, reason);
    // Where a broken block ends: its closer, else the next block, else (at the end of the
    // output) the end of the text; while streaming the closer may still come.
    let broken = |reason: String| -> (Found, Option<usize>) {
        if let Some(c) = close_at {
            let end = c + close.len();
            (malformed(end, reason), Some(end))
        } else if limit < text.len() {
            (malformed(limit, reason), Some(limit))
        } else if eof {
            (malformed(text.len(), reason), None)
        } else {
            (Found::pending(start..text.len()), None)
        }
    };
    let region_end = close_at.unwrap_or(limit);
    let p = scan::skip_ws(&text[..region_end], after);
    if p == region_end {
        let reason = if close_at.is_some() || limit < text.len() {
            format!("empty {open} block")
        } else {
            format!("unterminated {open} block: the output ended inside it")
        };
        return broken(reason);
    }
    if !matches!(text.as_bytes()[p], b'{' | b'[') {
        return broken(format!("expected a JSON list of calls after {open}"));
    }
    match scan::balanced_end(&text[..region_end], p, false) {
        Scan::Complete(e) => {
            let q = scan::skip_ws(text, e);
            let tail = &text[q..];
            let accept = |end: usize| -> (Found, Option<usize>) {
                let f = match parse_block(&text[p..e], open) {
                    Ok(calls) => Found::calls(start..end, calls),
                    Err(err) => malformed(end, err),
                };
                (f, Some(end))
            };
            if tail.starts_with(close) {
                return accept(q + close.len());
            }
            if tail.is_empty() || (tail.len() < close.len() && close.starts_with(tail)) {
                // Unclosed at the very end: the stop token was not kept.
                return if eof {
                    accept(text.len())
                } else {
                    (Found::pending(start..text.len()), None)
                };
            }
            let reason = format!("missing {close} after the JSON in {open} (other text follows)");
            (malformed(e, reason), Some(e))
        }
        _ if close_at.is_some() => {
            // Closed but unbalanced: serde names the problem.
            let reason = match parse_block(&text[p..region_end], open) {
                Err(e) => e,
                Ok(_) => format!("malformed JSON in {open}: unbalanced brackets before {close}"),
            };
            broken(reason)
        }
        Scan::Incomplete => {
            let reason = if limit < text.len() {
                format!("unterminated JSON in {open}: the next block starts inside it")
            } else {
                format!("unterminated JSON in {open}: the output ended inside it")
            };
            broken(reason)
        }
        Scan::Invalid(at) => broken(format!(
            "malformed JSON in {open}: brackets do not match at byte {at}"
        )),
    }
}

/// A call object, a list of them, or an empty list (no calls).
fn parse_block(json: &str, open: &str) -> Result<Vec<crate::detector::Candidate>, String> {
    let v: Value =
        serde_json::from_str(json.trim()).map_err(|e| format!("malformed JSON in {open}: {e}"))?;
    if matches!(&v, Value::Array(a) if a.is_empty()) {
        return Ok(Vec::new());
    }
    scan::calls_from_json(&v).map_err(|e| format!("{e} (in {open})"))
}
