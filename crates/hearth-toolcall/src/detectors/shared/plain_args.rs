//! Arguments written as plain text rather than JSON or elements: the end of a name run
//! ([`name_end`]) and one quoted value ([`quoted_at`], [`Quoted`]).
//!
//! Used by `key_value` (`key value` pairs, quotes without escapes), `use_tag`
//! (`key="value"` attributes, backslash escapes) and `generic_xml` ([`name_end`]).

/// The end of the run of name bytes (`[A-Za-z0-9_.-]`) that starts at `i`.
pub(crate) fn name_end(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut j = i;
    while b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
    {
        j += 1;
    }
    j
}

/// A quoted value read by [`quoted_at`].
#[derive(Debug, PartialEq)]
pub(crate) enum Quoted {
    /// The value (quotes removed, escapes undone) and the offset just after the closing quote.
    Done(String, usize),
    /// The text ends before the closing quote.
    Unterminated,
    /// A backslash at this offset escapes something other than the quote or a backslash.
    BadEscape(usize),
}

/// The value quoted by the `"` or `'` at `i` (the caller checked it is one), ending at the
/// next same quote. With `escapes`, `\"`, `\'` and `\\` stand for the character after the
/// backslash and any other backslash is [`Quoted::BadEscape`] (`\n` or a Windows path is
/// not guessed at); without, a backslash is an ordinary character.
pub(crate) fn quoted_at(text: &str, i: usize, escapes: bool) -> Quoted {
    let Some(&q) = text.as_bytes().get(i) else {
        return Quoted::Unterminated;
    };
    let body = i + 1;
    let mut value = String::new();
    let mut chars = text[body..].char_indices();
    while let Some((o, c)) = chars.next() {
        if c == char::from(q) {
            return Quoted::Done(value, body + o + 1);
        }
        if escapes && c == '\\' {
            match chars.next() {
                None => return Quoted::Unterminated,
                Some((_, e @ ('"' | '\'' | '\\'))) => value.push(e),
                Some(_) => return Quoted::BadEscape(body + o),
            }
            continue;
        }
        value.push(c);
    }
    Quoted::Unterminated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quotes() {
        assert_eq!(name_end("read_file.v2-x path", 0), 14);
        assert_eq!(name_end("=x", 0), 0);
        assert_eq!(
            quoted_at(r#"a "x \"y\" \\ é" b"#, 2, true),
            Quoted::Done(r#"x "y" \ é"#.into(), 17)
        );
        assert_eq!(
            quoted_at(r"'C:\dir' x", 0, false),
            Quoted::Done(r"C:\dir".into(), 8)
        );
        assert_eq!(quoted_at(r"'C:\dir'", 0, true), Quoted::BadEscape(3));
        assert_eq!(quoted_at("\"abc", 0, true), Quoted::Unterminated);
        assert_eq!(quoted_at("\"abc\\", 0, true), Quoted::Unterminated);
        assert_eq!(
            quoted_at("'it\"s'", 0, true),
            Quoted::Done("it\"s".into(), 6)
        );
    }
}
