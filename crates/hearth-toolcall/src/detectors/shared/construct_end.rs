//! Finishing a marker-delimited construct: [`close_construct`] decides, from what follows
//! its payload, whether it ends at its closing marker, is still pending, or is malformed.
//!
//! Used by `lfm2` and `phi4`.

use crate::detector::{Candidate, Found};

use super::json_finder::{is_partial_of, ws};

/// Finish a marker-delimited construct `start..e` whose payload was `parsed`: it ends at
/// the `close` marker if that follows (after whitespace). Without it: pending while
/// streaming at the end of the text; accepted at the end of the output; otherwise
/// accepted as is when `unclosed_ok`, else malformed.
pub(crate) fn close_construct(
    text: &str,
    start: usize,
    e: usize,
    eof: bool,
    close: &str,
    parsed: Result<Vec<Candidate>, String>,
    unclosed_ok: bool,
) -> Found {
    let k = ws(text, e);
    let rest = text.get(k..).unwrap_or("");
    if !eof && is_partial_of(rest, &[close]) {
        return Found::pending(start..text.len());
    }
    let end = if rest.starts_with(close) {
        k + close.len()
    } else if k >= text.len() {
        if !eof {
            return Found::pending(start..text.len());
        }
        e
    } else if unclosed_ok {
        e
    } else {
        let reason = match parsed {
            Err(r) => r,
            Ok(_) => format!("missing {close} after the call"),
        };
        return Found::malformed(start..e, None, reason);
    };
    match parsed {
        Ok(calls) => Found::calls(start..end, calls),
        Err(reason) => Found::malformed(start..end, None, reason),
    }
}
