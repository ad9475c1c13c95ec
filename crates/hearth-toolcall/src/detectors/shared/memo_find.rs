//! Memoised "next occurrence of a needle" searches for scanners whose queries only move
//! forward, so that asking again after each construct keeps a whole scan linear:
//! [`Next`] (plain) and [`NextWhere`] (only occurrences a predicate accepts, such as a
//! closing tag that is structural by what follows it).
//!
//! Used by `hermes`, `qwen25`, `qwen3_coder`, `glm45`, `minimax_m2`, `claude_xml`,
//! `generic_xml` and the shared XML and `<tool_call>` helpers.

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
