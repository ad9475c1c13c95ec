//! `qwen25`: the strict `<tool_call>\n{json}\n</tool_call>` shape.
//!
//! This is exactly what the Qwen2.5 and Qwen3 chat templates render for an assistant tool
//! call (and what those models emit): the opening tag, one newline, one JSON object
//! `{"name": …, "arguments": {…}}`, one newline, the closing tag. Parallel calls are
//! several such blocks, usually separated by a newline.
//!
//! Only that shape is claimed: the block must be closed, its content must start with a
//! newline and end with a newline, and hold JSON. Anything looser (no newlines, unclosed at
//! end of output, a list) is left to `hermes`. A strict-shaped block whose JSON does not
//! parse is `Malformed`. While streaming, an unfinished block whose text so far still fits
//! the shape is `Pending`.

use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::shared::memo_find::Next;
use super::shared::tagged_blocks::{parse_hermes_body, CLOSE, OPEN};

pub struct Qwen25;

impl Detector for Qwen25 {
    fn name(&self) -> &str {
        "qwen25"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Next::new(text, OPEN);
        let mut closes = Next::new(text, CLOSE);
        let mut pos = 0;
        while let Some(o) = opens.find(pos) {
            let bs = o + OPEN.len();
            let next_close = closes.find(bs);
            let next_open = opens.find(bs);
            match (next_close, next_open) {
                (Some(c), n) if n.is_none_or(|n| c < n) => {
                    let body = &text[bs..c];
                    let end = c + CLOSE.len();
                    if strict_shape(body) {
                        out.push(match parse_hermes_body(body) {
                            Ok(calls) => Found::calls(o..end, calls),
                            Err(reason) => Found::malformed(o..end, None, reason),
                        });
                    }
                    pos = end;
                }
                (_, Some(n)) => pos = n,
                (Some(_), None) | (None, None) => {
                    if !ctx.eof && fits_so_far(&text[bs..]) {
                        out.push(Found::pending(o..text.len()));
                    }
                    return;
                }
            }
        }
    }
}

/// `\n{…}\n` (or `\n[…]\n`): newline after the open tag, newline before the close tag.
fn strict_shape(body: &str) -> bool {
    body.len() >= 2
        && body.starts_with('\n')
        && body.ends_with('\n')
        && body.trim_start().starts_with(['{', '['])
}

/// Could this unfinished content still become the strict shape?
fn fits_so_far(rest: &str) -> bool {
    match rest.strip_prefix('\n') {
        None => rest.is_empty(),
        Some(r) => {
            let r = &r[scan::skip_ws(r, 0)..];
            r.is_empty() || r.starts_with(['{', '['])
        }
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
        detect(&Qwen25, text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn strict_blocks_only() {
        let t = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        match &out[0].kind {
            FoundKind::Calls(c) => assert_eq!(c[0].arguments, json!({"location": "Oslo"})),
            k => panic!("{k:?}"),
        }
        assert_eq!(out[1].span.end, t.len());
        // not the strict shape
        assert!(run("<tool_call>{\"name\": \"a\"}</tool_call>", true).is_empty());
        assert!(run("<tool_call>\n{\"name\": \"a\"}</tool_call>", true).is_empty());
        assert!(run("<tool_call>\n{\"name\": \"a\"}\n", true).is_empty());
        assert!(run("<tool_call>\n<function=a>\n</function>\n</tool_call>", true).is_empty());
    }

    #[test]
    fn malformed_strict_block() {
        let out = run("<tool_call>\n{\"name\": \"a\", }\n</tool_call>", true);
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("malformed JSON"))
        );
    }

    #[test]
    fn streaming() {
        for t in [
            "ok <tool_call>",
            "<tool_call>\n",
            "<tool_call>\n{\"na",
            "<tool_call>\n{\"name\":\"a\"}\n</tool_",
        ] {
            assert_eq!(run(t, false).len(), 1, "{t}");
            assert!(run(t, true).is_empty(), "{t}");
        }
        assert!(run("<tool_call>{", false).is_empty());
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(&"<tool_call>\n{".repeat(100_000), true);
        let _ = run(&"<tool_call>\n</tool_call>".repeat(50_000), false);
        let _ = run(&"</tool_call>\n<tool_call>\n[".repeat(50_000), true);
    }
}
