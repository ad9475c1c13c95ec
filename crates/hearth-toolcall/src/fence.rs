//! Markdown code masking: quoted example code is never parsed as a call.
//!
//! Fenced blocks (```` ``` ````/`~~~`) and inline `code` spans are replaced by spaces of
//! the same byte length before detectors run, so spans still index the original text.
//! One exception: a fence that *is* a call rather than quotes one: info string `tool_call`
//! or `tool_code`, or an info string that is empty or `json` around a body that starts with
//! `{` or `[` (how Qwen2.5-Coder and xLAM emit calls). Loose detectors still only dispatch
//! allowlisted names from those.

use std::borrow::Cow;
use std::ops::Range;

/// Code ranges, plus where code starts that is still open at the end of the text (an
/// unclosed fence, or a backtick whose inline span may still close): while streaming,
/// text from there on is undecided.
pub fn scan_code(text: &str) -> (Vec<Range<usize>>, Option<usize>) {
    let b = text.as_bytes();
    if memchr::memchr2(b'`', b'~', b).is_none() {
        return (Vec::new(), None);
    }
    let mut open_from: Option<usize> = None;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'`' && c != b'~' {
            i += 1;
            continue;
        }
        let run = b[i..].iter().take_while(|&&x| x == c).count();
        if run >= 3 {
            // fenced block: info string to end of line, body until a closing run of >= run
            let info_end = memchr::memchr(b'\n', &b[i + run..])
                .map(|p| i + run + p)
                .unwrap_or(b.len());
            let info = text[i + run..info_end].trim();
            let body_start = (info_end + 1).min(b.len());
            let (body_end, close_end) = find_fence_close(b, body_start, c, run);
            if close_end == b.len() && body_end == b.len() {
                open_from.get_or_insert(i);
            }
            let body = text.get(body_start..body_end).unwrap_or("");
            if !is_call_fence(info, body) {
                out.push(i..close_end);
            }
            i = close_end.max(i + run);
        } else if c == b'`' {
            // inline code: same-length backtick run closes it, on the same paragraph
            let open = run;
            let mut j = i + open;
            let mut closed = None;
            let mut paragraph_ended = false;
            while j < b.len() {
                if b[j] == b'\n' && b.get(j + 1) == Some(&b'\n') {
                    paragraph_ended = true;
                    break;
                }
                if b[j] == b'`' {
                    let r = b[j..].iter().take_while(|&&x| x == b'`').count();
                    if r == open {
                        closed = Some(j + r);
                        break;
                    }
                    j += r;
                    continue;
                }
                j += 1;
            }
            match closed {
                Some(end) => {
                    if end == b.len() {
                        // the closing run touches the end: more backticks may yet make it
                        // a different run that no longer closes this span
                        open_from.get_or_insert(i);
                    }
                    out.push(i..end);
                    i = end;
                }
                None => {
                    if !paragraph_ended {
                        open_from.get_or_insert(i);
                    }
                    i += open;
                }
            }
        } else {
            i += run;
        }
    }
    (out, open_from)
}

fn find_fence_close(b: &[u8], from: usize, c: u8, run: usize) -> (usize, usize) {
    let mut j = from;
    while j < b.len() {
        if b[j] == c {
            let r = b[j..].iter().take_while(|&&x| x == c).count();
            if r >= run {
                return (j, j + r);
            }
            j += r;
        } else {
            j += 1;
        }
    }
    (b.len(), b.len())
}

fn is_call_fence(info: &str, body: &str) -> bool {
    let lang = info
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match lang.as_str() {
        "tool_call" | "tool_code" => true,
        // a call object, or a list of call objects (not `[TOOL_CALLS]…` or pythonic examples)
        "" | "json" => {
            let t = body.trim_start();
            t.starts_with('{')
                || t.strip_prefix('[')
                    .is_some_and(|r| r.trim_start().starts_with('{'))
        }
        _ => false,
    }
}

/// The text with code ranges blanked out (same byte length, same char boundaries), the
/// masked ranges, and where still-open code starts.
pub fn mask_with_ranges(text: &str) -> (Cow<'_, str>, Vec<Range<usize>>, Option<usize>) {
    let (ranges, open_from) = scan_code(text);
    if ranges.is_empty() {
        return (Cow::Borrowed(text), ranges, open_from);
    }
    let mut bytes = text.as_bytes().to_vec();
    for r in &ranges {
        for x in &mut bytes[r.clone()] {
            // Keep newlines so line-based formats still see line starts.
            if *x != b'\n' {
                *x = b' ';
            }
        }
    }
    // Every range starts and ends on an ASCII byte, so whole characters were replaced.
    match String::from_utf8(bytes) {
        Ok(s) => (Cow::Owned(s), ranges, open_from),
        Err(_) => (Cow::Borrowed(text), Vec::new(), open_from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text with code ranges blanked out.
    fn mask(text: &str) -> Cow<'_, str> {
        mask_with_ranges(text).0
    }

    #[test]
    fn masks_example_code_keeps_call_fences() {
        let t = "Example:\n```python\nget_time()\n```\nand `<tool_call>{}</tool_call>` done";
        let m = mask(t);
        assert_eq!(m.len(), t.len());
        assert!(!m.contains("get_time"));
        assert!(!m.contains("<tool_call>"));
        assert!(m.contains("done"));
        let call = "```json\n{\"name\": \"get_time\", \"arguments\": {}}\n```";
        assert_eq!(mask(call), call);
        let xml = "```\n<tool_call>{}</tool_call>\n```";
        assert!(!mask(xml).contains("tool_call"));
        let mistral = "```\n[TOOL_CALLS]get_time[ARGS]{}\n```";
        assert!(!mask(mistral).contains("TOOL_CALLS"));
        let xlam = "```json\n[{\"name\": \"get_time\"}]\n```";
        assert_eq!(mask(xlam), xlam);
        assert_eq!(scan_code("a `b").1, Some(2));
        assert_eq!(scan_code("a `b` c").1, None);
        assert_eq!(scan_code("a `b`").1, Some(2));
        assert_eq!(scan_code("```json\n{").1, Some(0));
    }

    #[test]
    fn unclosed_fence_masks_to_end_and_multibyte_is_safe() {
        let t = "a ```py\nprint('é☕')";
        let m = mask(t);
        assert!(!m.contains("print"));
        assert_eq!(m.len(), t.len());
        assert_eq!(mask("`é`"), "    ");
    }
}
