//! Memoised "next occurrence of a needle" searches for scanners whose queries only move
//! forward, so that asking again after each construct keeps a whole scan linear:
//! [`Next`] (plain), [`NextWhere`] (only occurrences a predicate accepts, such as a
//! closing tag that is structural by what follows it) and [`Finder`] (plain, for static
//! needles).
//!
//! Used by `hermes`, `qwen25`, `qwen3_coder`, `glm45`, `minimax_m2`, `claude_xml`,
//! `generic_xml`, `use_tag` and the shared XML and `<tool_call>` helpers; [`Finder`] by
//! `gemma`, `functiongemma`, `gigachat3`, `jamba` and `nemotron` (through the shared
//! `call_value` and `tagged_json` helpers) and `key_value`.

use crate::scan;

/// Memoised "next occurrence of `needle` at or after `q`" for monotone queries: every
/// byte of the text is searched at most once over all queries, so scanners that ask
/// again after each construct stay linear.
pub(crate) struct Next<'a> {
    hay: &'a str,
    needle: &'a str,
    from: usize,
    at: Option<usize>,
    valid: bool,
}

impl<'a> Next<'a> {
    pub(crate) fn new(hay: &'a str, needle: &'a str) -> Self {
        Next {
            hay,
            needle,
            from: 0,
            at: None,
            valid: false,
        }
    }

    pub(crate) fn find(&mut self, q: usize) -> Option<usize> {
        if self.valid && q >= self.from && self.at.is_none_or(|a| q <= a) {
            return self.at;
        }
        let r = scan::find_from(self.hay, self.needle, q);
        self.from = q;
        self.at = r;
        self.valid = true;
        r
    }
}

/// Memoised "next occurrence of `needle` at or after `q` that satisfies `ok`" (a closing tag
/// that is structural by what follows it). Whether a candidate qualifies depends only on
/// its position, so the memo of [`Next`] stays valid.
pub(crate) struct NextWhere<'a, F: Fn(&str, usize) -> bool> {
    next: Next<'a>,
    ok: F,
    from: usize,
    at: Option<usize>,
    valid: bool,
}

impl<'a, F: Fn(&str, usize) -> bool> NextWhere<'a, F> {
    pub(crate) fn new(hay: &'a str, needle: &'a str, ok: F) -> Self {
        NextWhere {
            next: Next::new(hay, needle),
            ok,
            from: 0,
            at: None,
            valid: false,
        }
    }

    pub(crate) fn find(&mut self, q: usize) -> Option<usize> {
        if self.valid && q >= self.from && self.at.is_none_or(|a| q <= a) {
            return self.at;
        }
        let mut p = q;
        let r = loop {
            match self.next.find(p) {
                None => break None,
                Some(c) if (self.ok)(self.next.hay, c) => break Some(c),
                Some(c) => p = c + self.next.needle.len(),
            }
        };
        self.from = q;
        self.at = r;
        self.valid = true;
        r
    }
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
