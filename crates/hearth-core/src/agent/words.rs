//! A request's words, roughly: its parts (sentences cut at "and" / "then") and plural nouns
//! made singular. The checks, the hooks and the readings all read requests this way.

/// How many things a request asks for, roughly: the number of [`request_parts`]. A hop
/// that called fewer tools than this gets a follow-up hop.
pub fn clauses(text: &str) -> usize {
    request_parts(text).len()
}

/// The parts of a request, roughly: its sentences, each cut at "and" or "then" between two
/// words ("What time is it? Please switch off the lights." → "What time is it", "Please
/// switch off the lights"; "turn on the kitchen and the bedroom light" → "turn on the
/// kitchen", "the bedroom light"). Trimmed substrings; parts without a letter or digit are
/// left out.
pub fn request_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for sentence in text.split(['.', '?', '!', ';']) {
        // words with their byte ranges in the sentence
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for (i, c) in sentence.char_indices().chain([(sentence.len(), ' ')]) {
            let in_word = c.is_alphanumeric() || c == '\'';
            match (in_word, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    words.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        let mut from = 0;
        for (n, &(a, b)) in words.iter().enumerate() {
            let w = &sentence[a..b];
            let joins = w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("then");
            if joins && n > 0 && n + 1 < words.len() {
                parts.push(&sentence[from..a]);
                from = b;
            }
        }
        parts.push(&sentence[from..]);
    }
    parts
        .into_iter()
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == ','))
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .collect()
}

/// A plural's singular, roughly: "lights" → "light" (not "is", "glass").
pub(super) fn singular(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem,
        _ => w,
    }
}
