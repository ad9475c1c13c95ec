//! Finding markers and JSON values in text, with plain loops that stay fast in debug builds:
//! [`ws`], [`find_byte`], [`find_str`], the memoised [`Finder`], a marker still arriving
//! ([`is_partial_of`]) and how a JSON arguments object ends ([`args_end`], [`ArgsEnd`]).
//!
//! Used by the JSON-based detectors: `json` (via [`super::json_object`]), `llama32`,
//! `llama31_function`, `functionary_v32`, `phi4`, `lfm2`, `pythonic`, `xlam` and
//! `tool_request`.

use crate::scan::{self, Scan};

/// True if `rest` is non-empty and a proper prefix of one of `markers`: while streaming,
/// that marker may still be arriving.
pub(crate) fn is_partial_of(rest: &str, markers: &[&str]) -> bool {
    !rest.is_empty()
        && markers
            .iter()
            .any(|m| m.len() > rest.len() && m.starts_with(rest))
}

/// Skip ASCII whitespace from `i` (a plain loop, cheap in debug builds too).
pub(crate) fn ws(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut i = i.min(b.len());
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The first offset in `from..to` whose byte satisfies `pred`. A plain loop on purpose:
/// `memchr` is slow in debug builds when matches are dense (`[[[[…`).
pub(crate) fn find_byte(
    b: &[u8],
    from: usize,
    to: usize,
    pred: impl Fn(u8) -> bool,
) -> Option<usize> {
    b.get(from..to.min(b.len()))?
        .iter()
        .position(|&c| pred(c))
        .map(|p| from + p)
}

/// The first occurrence of a short `needle` at or after `from`: a plain loop on the first
/// byte (fast in debug builds, where `memmem` is slow when matches are dense); the needles
/// here are short markers, so the work stays linear.
pub(crate) fn find_str(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    let mut i = from;
    while let Some(p) = find_byte(h, i, h.len(), |c| c == first) {
        if h.get(p..p + n.len()) == Some(n) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// A memoised forward search for one needle, so that repeated look-ups from increasing
/// offsets cost linear time in total (a miss is remembered, a hit is reused).
pub(crate) struct Finder<'a> {
    needle: &'a str,
    searched_from: Option<usize>,
    hit: Option<usize>,
}

impl<'a> Finder<'a> {
    pub fn new(needle: &'a str) -> Self {
        Finder {
            needle,
            searched_from: None,
            hit: None,
        }
    }

    /// The first occurrence of the needle at or after `from`.
    pub fn next(&mut self, hay: &str, from: usize) -> Option<usize> {
        // Reuse the last answer when it is still right: callers search from increasing
        // offsets, which keeps the total work linear.
        if let Some(done_from) = self.searched_from.filter(|d| *d <= from) {
            match self.hit {
                Some(h) if h >= from => return Some(h),
                None if done_from <= from => return None,
                _ => {}
            }
        }
        self.searched_from = Some(from);
        self.hit = find_str(hay, self.needle, from);
        self.hit
    }
}

/// How the JSON arguments opening at `j` end.
pub(crate) enum ArgsEnd {
    /// They close just before this byte.
    Complete(usize),
    /// The text ends inside them while streaming.
    Pending,
    /// Broken: the malformed span ends here, for this reason.
    Malformed(usize, String),
}

/// Scan the JSON arguments object whose `{` is at `j`.
pub(crate) fn args_end(text: &str, j: usize, eof: bool) -> ArgsEnd {
    match scan::balanced_end(text, j, false) {
        Scan::Complete(e) => ArgsEnd::Complete(e),
        Scan::Incomplete if !eof => ArgsEnd::Pending,
        Scan::Incomplete => ArgsEnd::Malformed(
            text.len(),
            "unterminated arguments (the text ends inside it)".into(),
        ),
        Scan::Invalid(at) => ArgsEnd::Malformed(
            (at + 1).min(text.len()),
            format!("mismatched bracket at byte {} of the arguments", at - j),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finder_is_memoised() {
        let hay = "a.b..c";
        let mut f = Finder::new(".");
        assert_eq!(f.next(hay, 0), Some(1));
        assert_eq!(f.next(hay, 1), Some(1));
        assert_eq!(f.next(hay, 2), Some(3));
        assert_eq!(f.next(hay, 5), None);
        assert_eq!(f.next(hay, 6), None);
        assert_eq!(f.next(hay, 0), Some(1));
    }
}
