//! The `<tool_call>…</tool_call>` block: its tags ([`OPEN`], [`CLOSE`]), the scanner that
//! finds every block and hands its content to a format's parser
//! ([`scan_tool_call_blocks`]), reading that content as JSON calls ([`parse_hermes_body`])
//! and naming the markup in JSON errors ([`json_reason`]).
//!
//! Used by `hermes` (the JSON body), `qwen25` (strict newline-wrapped shape) and `granite4`
//! (relaxed payload); the tags also by `qwen3_coder` and `glm45`, and [`json_reason`] by
//! `generic_xml`.

use crate::detector::{Candidate, DetectCtx, Found};
use crate::scan::{self, Scan};

use super::markers::preview;
use super::memo_find::Next;

/// The opening tag shared by hermes, qwen25, granite4, qwen3_coder, glm45 and generic XML.
pub(crate) const OPEN: &str = "<tool_call>";
/// The closing tag of [`OPEN`].
pub(crate) const CLOSE: &str = "</tool_call>";

/// Parse the content of one `<tool_call>` block as JSON call(s).
pub(crate) fn parse_hermes_body(body: &str) -> Result<Vec<Candidate>, String> {
    let t = body.trim();
    if t.is_empty() {
        return Err("empty <tool_call> block".into());
    }
    if !t.starts_with(['{', '[']) {
        return Err(format!(
            "<tool_call> does not hold JSON (it starts with {:?})",
            preview(t)
        ));
    }
    scan::parse_calls_json(t).map_err(|e| json_reason(&e, "<tool_call>"))
}

/// Reword a `scan::parse_calls_json` error so it names the markup it came from.
pub(crate) fn json_reason(e: &str, tag: &str) -> String {
    if let Some(rest) = e.strip_prefix("malformed JSON: ") {
        format!("malformed JSON in {tag}: {rest}")
    } else if let Some(rest) = e.strip_prefix("malformed JSON arguments: ") {
        format!("malformed JSON in {tag}: {rest}")
    } else {
        format!("{e} in {tag}")
    }
}

/// Find every `<tool_call>…</tool_call>` block and read its content with `parse`.
///
/// A block ends at the next `</tool_call>`, or is unclosed when the next `<tool_call>` or the
/// end of text comes first. Closed blocks are parsed whole. Unclosed blocks are accepted when
/// their JSON value is complete and either the next block follows or the output ended
/// (`ctx.eof`); while streaming an unfinished block at the end is `Pending`.
pub(crate) fn scan_tool_call_blocks(
    text: &str,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
    parse: fn(&str) -> Result<Vec<Candidate>, String>,
) {
    let mut opens = Next::new(text, OPEN);
    let mut closes = Next::new(text, CLOSE);
    let mut pos = 0;
    while let Some(o) = opens.find(pos) {
        let bs = o + OPEN.len();
        let next_close = closes.find(bs);
        let next_open = opens.find(bs);
        let (r, closed) = match (next_close, next_open) {
            (Some(c), Some(n)) if n < c => (n, false),
            (Some(c), _) => (c, true),
            (None, Some(n)) => (n, false),
            (None, None) => (text.len(), false),
        };
        let body = &text[bs..r];
        if closed {
            let end = r + CLOSE.len();
            out.push(found(o..end, parse(body)));
            pos = end;
            continue;
        }
        let at_end = r == text.len();
        if at_end && !ctx.eof {
            out.push(Found::pending(o..text.len()));
            return;
        }
        let j = scan::skip_ws(text, bs);
        let starts_json = text[j..r].starts_with(['{', '[']);
        if !starts_json {
            if at_end {
                // Prose mentioning the tag, or another format's unclosed markup.
                return;
            }
            out.push(found(o..r, parse(body)));
            pos = r;
            continue;
        }
        match scan::balanced_end(&text[..r], j, false) {
            Scan::Complete(e) => {
                out.push(found(o..e, parse(&text[bs..e])));
                pos = e;
            }
            Scan::Incomplete | Scan::Invalid(_) => {
                let reason = match parse(body) {
                    Err(e) => format!("{e} (unclosed <tool_call>)"),
                    Ok(_) => "unclosed <tool_call>".to_string(),
                };
                out.push(Found::malformed(o..r, None, reason));
                pos = r;
            }
        }
    }
}

fn found(span: std::ops::Range<usize>, r: Result<Vec<Candidate>, String>) -> Found {
    match r {
        Ok(calls) => Found::calls(span, calls),
        Err(reason) => Found::malformed(span, None, reason),
    }
}
