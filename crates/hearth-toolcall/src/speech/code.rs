//! Code and data in a reply: fenced blocks, inline code that holds markup, JSON payloads.

use crate::scan::{balanced_end, Scan};

/// Drop fenced code blocks (```` ``` ```` or `~~~`), closed or not, and inline code that
/// holds markup or data. While streaming, an inline span that may still close holds the
/// text from its backtick, and so does a run of backticks or tildes at the end, which may
/// still grow into a fence.
pub(super) fn remove_code(s: &str, eof: bool) -> String {
    let s = if eof {
        s
    } else {
        s.trim_end_matches(['`', '~'])
    };
    remove_inline_code(&remove_fenced(s), eof)
}

/// Fenced blocks become a space; an unclosed one takes the rest of the text.
fn remove_fenced(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let next = [rest.find("```"), rest.find("~~~")]
            .into_iter()
            .flatten()
            .min();
        let Some(p) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..p]);
        let fence = &rest[p..p + 3];
        let after = &rest[p + 3..];
        match after.find(fence) {
            Some(q) => {
                out.push(' ');
                rest = &after[q + 3..];
            }
            None => break,
        }
    }
    out
}

/// Inline code: plain words are kept (`lights`), code that looks like markup or data goes.
/// At the end of the output an unmatched backtick is dropped and its text kept.
fn remove_inline_code(s: &str, eof: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut parts = s.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let rest: Vec<&str> = parts.collect();
    let mut i = 0;
    while i < rest.len() {
        if i + 1 < rest.len() {
            let code = rest[i];
            if !code.contains(['<', '>', '{', '}', '[', ']', '|', '(', ')', '=']) {
                out.push_str(code);
            }
            out.push_str(rest[i + 1]);
            i += 2;
        } else {
            if eof {
                out.push_str(rest[i]);
            }
            i += 1;
        }
    }
    out
}

/// Drop raw JSON payloads: every `{…}` and every `[…]` holding JSON-ish content, and an
/// unclosed `{` with everything after it (a truncated payload). While streaming, a `[` not
/// closed yet holds the text from there.
pub(super) fn remove_json(s: &str, eof: bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                out.push_str(&s[copied..i]);
                let Scan::Complete(e) = balanced_end(s, i, false) else {
                    // unbalanced: the rest is a broken payload
                    return out;
                };
                i = e;
                copied = i;
            }
            b'[' => match balanced_end(s, i, false) {
                Scan::Complete(e) => {
                    if s[i..e].contains(['{', '"', '(', ':', '=']) {
                        out.push_str(&s[copied..i]);
                        copied = e;
                    }
                    i = e;
                }
                Scan::Incomplete if !eof => {
                    out.push_str(&s[copied..i]);
                    return out;
                }
                _ => i += 1,
            },
            _ => i += 1,
        }
    }
    out.push_str(&s[copied..]);
    out
}
