// Transcripts as comparable words: normalising, repeated requests, mishearings.

use hearth_phrases::normalize::{TENS, UNITS};

/// Lower-case words with punctuation dropped, number words and numerals alike as numerals
/// ("Twenty-one point five" and "21.5" both give "21.5"), `%` as "percent", `°` as
/// "degrees", apostrophes dropped ("what's" → "whats").
pub fn words(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let digit = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(char::is_ascii_digit)
        };
        match c {
            '%' => spaced.push_str(" percent "),
            '°' => spaced.push_str(" degrees "),
            '\'' | '’' => {}
            '.' | ':' if digit(i.checked_sub(1)) && digit(Some(i + 1)) => spaced.push(c),
            c if c.is_alphanumeric() => spaced.extend(c.to_lowercase()),
            _ => spaced.push(' '),
        }
    }
    numerals(spaced.split_whitespace().map(str::to_string).collect())
}

/// Number words to numerals ("twenty one point five" → "21.5"); numerals in canonical form
/// ("19.0" → "19").
fn numerals(words: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        match spoken_number(&words[i..]) {
            Some((value, used)) => {
                out.push(value);
                i += used;
            }
            None => {
                out.push(canonical(&words[i]));
                i += 1;
            }
        }
    }
    out
}

fn canonical(word: &str) -> String {
    match word.parse::<f64>() {
        Ok(v) if word.chars().all(|c| c.is_ascii_digit() || c == '.') => format!("{v}"),
        _ => word.to_string(),
    }
}

/// A whole number from 0 to 100 spelled out at the start of `words`: its value and the words
/// it took.
fn spoken_integer(words: &[String]) -> Option<(u32, usize)> {
    let first = words.first()?.as_str();
    if first == "hundred" || (first == "a" && words.get(1).is_some_and(|w| w == "hundred")) {
        return Some((100, if first == "a" { 2 } else { 1 }));
    }
    if let Some(u) = UNITS.iter().position(|&u| u == first) {
        return Some((u as u32, 1));
    }
    let t = TENS.iter().position(|&t| t == first)? as u32;
    let unit = words
        .get(1)
        .and_then(|w| UNITS[1..10].iter().position(|&u| u == w));
    Some(match unit {
        Some(u) => (20 + 10 * t + u as u32 + 1, 2),
        None => (20 + 10 * t, 1),
    })
}

/// A spelled-out number (with "point" and digit words after it) at the start of `words`, as
/// a numeral, and the words it took. "one" alone is left a word (it is more often a pronoun).
fn spoken_number(words: &[String]) -> Option<(String, usize)> {
    let (whole, mut used) = spoken_integer(words)?;
    if used == 1 && words[0] == "one" && words.get(1).is_none_or(|w| w != "point") {
        return None;
    }
    let mut text = whole.to_string();
    if words.get(used).is_some_and(|w| w == "point") {
        let digits: String = words[used + 1..]
            .iter()
            .map_while(|w| UNITS[..10].iter().position(|&u| u == w))
            .map(|d| char::from(b'0' + d as u8))
            .collect();
        if !digits.is_empty() {
            used += 1 + digits.len();
            text = canonical(&format!("{text}.{digits}"));
        }
    }
    Some((text, used))
}

/// The words joined by single spaces.
pub fn plain(text: &str) -> String {
    words(text).join(" ")
}

/// Whether `heard` holds the request twice: `said`'s words appear twice in it, or a run of
/// three or more words is repeated back to back ("what time is it what time is it") where
/// `said` has no such repetition of its own.
pub fn duplicated(heard: &str, said: &str) -> bool {
    let (h, s) = (words(heard), words(said));
    if !s.is_empty() && occurrences(&h, &s) >= 2 {
        return true;
    }
    repeated_runs(&h)
        .iter()
        .any(|run| !has_back_to_back(&s, run))
}

/// Non-overlapping occurrences of `needle` in `hay`.
fn occurrences(hay: &[String], needle: &[String]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()] == *needle {
            n += 1;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    n
}

/// Every run of three or more words directly followed by itself.
fn repeated_runs(w: &[String]) -> Vec<Vec<String>> {
    let mut runs = Vec::new();
    for k in 3..=w.len() / 2 {
        for i in 0..=w.len() - 2 * k {
            if w[i..i + k] == w[i + k..i + 2 * k] {
                runs.push(w[i..i + k].to_vec());
            }
        }
    }
    runs
}

fn has_back_to_back(w: &[String], run: &[String]) -> bool {
    let k = run.len();
    (0..(w.len() + 1).saturating_sub(2 * k))
        .any(|i| w[i..i + k] == *run && w[i + k..i + 2 * k] == *run)
}

/// Whether `heard` is not `said` once both are normalised ([`words`]).
pub fn misheard(heard: &str, said: &str) -> bool {
    words(heard) != words(said)
}

/// Words a reply may open with before saying the request back ("Okay, lock the front door.").
const ECHO_OPENERS: [&str; 3] = ["okay", "ok", "sure"];

/// Whether `reply` is `request` said back: the reply, or one sentence of it, has the
/// request's words ([`words`]: case, punctuation and number words aside), once a leading
/// "okay"/"sure" is dropped from each.
pub fn echoed(reply: &str, request: &str) -> bool {
    let bare = |text: &str| {
        let w = words(text);
        let skip = w
            .iter()
            .take_while(|x| ECHO_OPENERS.contains(&x.as_str()))
            .count();
        w[skip..].to_vec()
    };
    let asked = bare(request);
    if asked.is_empty() {
        return false;
    }
    bare(reply) == asked || sentences(reply).into_iter().any(|s| bare(s) == asked)
}

/// The sentences of a text, each with its end mark (questions too); a full stop right before
/// a letter or digit ("21.5", "a.m.") does not end one.
pub fn sentences(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let ends = match c {
            b'!' | b'?' | b';' | b'\n' => true,
            b'.' => b.get(i + 1).is_none_or(|n| !n.is_ascii_alphanumeric()),
            _ => false,
        };
        if ends {
            out.push(&text[start..=i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out.retain(|s| !s.trim().is_empty());
    out
}
