//! One sentence as a voice says it: a sentence that holds an address (URL, file path,
//! e-mail address, domain name) or a table row is not said at all; markdown symbols go;
//! whitespace becomes single spaces.

/// The sentence to say, or `None` when nothing of it is words for a listener.
pub(super) fn polish(sentence: &str) -> Option<String> {
    if sentence.contains('|') || sentence.split_whitespace().any(is_address) {
        return None;
    }
    let text = strip_markdown(sentence);
    let text = tidy(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    text.chars().any(char::is_alphanumeric).then_some(text)
}

/// No space before a full stop, comma, `!`, `?` or `;` (left where markup was removed: "is
/// <b>42</b>." → "is 42.").
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '.' | ',' | '!' | '?' | ';') && out.ends_with(' ') {
            out.pop();
        }
        out.push(c);
    }
    out
}

/// A URL, a file path, an e-mail address or a domain name: read out, it is noise at best and
/// a secret at worst (a token in a query string, a user name in a home directory, a host
/// on the home network). "24/7", "km/h", "and/or", "e.g." and "21.5" are words.
fn is_address(token: &str) -> bool {
    let t = token.trim_matches(|c: char| {
        matches!(
            c,
            '"' | '\'' | '(' | ')' | '<' | '>' | ',' | ';' | '!' | '?' | '.' | ':'
        )
    });
    let b = t.as_bytes();
    let lower = t.to_ascii_lowercase();
    let drive =
        b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    let rooted = t.starts_with('/')
        && b.get(1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    t.contains("://")
        || lower.starts_with("www.")
        || t.contains('\\')
        || drive
        || rooted
        || ["~/", "./", "../"].iter().any(|p| t.starts_with(p))
        || is_relative_file(t)
        || is_email(t)
        || is_domain(t)
}

/// `admin@home.lan`: a name, `@`, and a host with a letter in it ("3 @ 2 euros" is not one).
fn is_email(t: &str) -> bool {
    let Some((name, host)) = t.split_once('@') else {
        return false;
    };
    let name_ok =
        name.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
    let host_ok = host.starts_with(|c: char| c.is_ascii_alphanumeric())
        && host.chars().any(|c| c.is_ascii_alphabetic());
    name_ok && host_ok
}

/// Top-level domains a capitalised name may end in (`Hearth.Local`); any other must be in
/// lower case (so "Mr.Smith" is not a domain).
const TLDS: &[&str] = &[
    "local",
    "lan",
    "home",
    "internal",
    "arpa",
    "localdomain",
    "localhost",
    "corp",
    "intranet",
    "com",
    "net",
    "org",
    "io",
    "dev",
    "app",
    "ai",
    "info",
    "biz",
    "edu",
    "gov",
];

/// `hearth.local`, `api.example.com`, `Vendor.com`: two or more dot-separated labels of
/// letters, digits and `-`, the last (the top-level domain) two or more letters, in lower
/// case unless it is a known one. "e.g", "p.m", "21.5", "Mr.Smith" and "wait...yes" are not.
fn is_domain(t: &str) -> bool {
    let mut labels = t.split('.');
    let Some(tld) = labels.next_back() else {
        return false;
    };
    let mut count = 1;
    for label in labels {
        count += 1;
        if label.is_empty()
            || !label
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-')
        {
            return false;
        }
    }
    let known = TLDS.iter().any(|k| tld.eq_ignore_ascii_case(k));
    count >= 2 && tld.len() >= 2 && (tld.bytes().all(|c| c.is_ascii_lowercase()) || known)
}

/// `src/main.rs`, `docs/setup.md:12`: a path with a slash whose last part has a file
/// extension (letters first).
fn is_relative_file(t: &str) -> bool {
    let Some((dir, file)) = t.rsplit_once('/') else {
        return false;
    };
    let file = file.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
    !dir.is_empty()
        && file.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// Markdown a voice should not read: heading marks, bullets, quote marks, emphasis,
/// escapes and stray backticks.
fn strip_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let t = line.trim_start().trim_start_matches('#').trim_start();
        let t = ["- ", "* ", "+ ", "> "]
            .iter()
            .find_map(|b| t.strip_prefix(b))
            .unwrap_or(t);
        out.extend(t.chars().filter(|c| !matches!(c, '*' | '\\' | '`')));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_not_words() {
        for a in [
            "https://x.example/a",
            "www.example.com",
            "/etc/hearth/token.",
            "~/notes.txt",
            "C:\\Users\\x",
            "src/main.rs:12.",
            "(file:///var/x)",
            "admin@home.lan",
            "JUNO.ops@family.net.",
            "api.example.com",
            "hearth.local,",
            "Vendor.com",
            "Hearth.Local",
            "(support@hearth.dev)",
        ] {
            assert!(is_address(a), "{a:?}");
        }
        for w in [
            "24/7",
            "km/h",
            "and/or",
            "50/50",
            "1,250.75",
            "p.m.",
            "/",
            "3/4.",
            "e.g.",
            "U.S.",
            "3.11.2",
            "Mr.Smith",
            "wait...yes",
            "@",
            "Mon.",
            "21.5",
        ] {
            assert!(!is_address(w), "{w:?}");
        }
    }

    #[test]
    fn markdown_goes() {
        assert_eq!(
            polish("## **Hot** today\n- yes").as_deref(),
            Some("Hot today yes")
        );
        assert_eq!(polish("| a | b |"), None);
        assert_eq!(polish(" . "), None);
        assert_eq!(polish("It is  42 .").as_deref(), Some("It is 42."));
    }
}
