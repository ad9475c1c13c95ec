//! Transcripts and templates as intents compare them: normalised words, the breaks between
//! commands, and the words that carry no command.

/// Words that carry no command at the start of a request ("please turn on …", "can you
/// lock …"); any run of them may be left out.
pub const SKIP_LEADING: &[&[&str]] = &[
    &["please"],
    &["hey"],
    &["okay"],
    &["ok"],
    &["so"],
    &["now"],
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
];

/// Words that carry no command at the end of a request ("… please", "… for me").
pub const SKIP_TRAILING: &[&[&str]] = &[
    &["please"],
    &["thanks"],
    &["thank", "you"],
    &["now"],
    &["again"],
    &["for", "me"],
];

/// Words where one command ends and the next may begin ("… and lock the door").
pub const JOINERS: &[&str] = &["and", "then", "also"];

/// The words a slot of any words never ends with: an article goes before its noun, so "set
/// a timer" names no timer "a", and "set it past a timer" none "it past a".
pub const ARTICLES: &[&str] = &["a", "an", "the"];

/// Number words below twenty, each at its value.
pub const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

/// The tens' words from twenty, in order.
pub const TENS: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// Whether `key` is a word that says an amount ("six", "twenty", "hundred", "half",
/// "quarter").
pub fn is_number_word(key: &str) -> bool {
    UNITS.contains(&key) || TENS.contains(&key) || matches!(key, "hundred" | "half" | "quarter")
}

/// Where one text's words differ from another's: between two words both keep (their longest
/// common run, in order), the first's words left `out` and how many the second `put_in`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gap {
    pub out: Vec<String>,
    pub put_in: usize,
}

/// The gaps between `from`'s and `to`'s word keys, in order. "is in the pasta timer" →
/// "resume the pasta timer": one, `out` "is", "in", one word put in.
pub fn gaps(from: &str, to: &str) -> Vec<Gap> {
    let (a, b) = (keys(from), keys(to));
    // kept[i][j]: the most words a[i..] and b[j..] have in common, in order
    let mut kept = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            kept[i][j] = if a[i] == b[j] {
                kept[i + 1][j + 1] + 1
            } else {
                kept[i + 1][j].max(kept[i][j + 1])
            };
        }
    }
    let mut gaps = Vec::new();
    let mut gap = Gap::default();
    let (mut i, mut j) = (0, 0);
    loop {
        let done = i == a.len() && j == b.len();
        if done || (i < a.len() && j < b.len() && a[i] == b[j]) {
            if !gap.out.is_empty() || gap.put_in > 0 {
                gaps.push(std::mem::take(&mut gap));
            }
            if done {
                return gaps;
            }
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || kept[i][j + 1] >= kept[i + 1][j]) {
            gap.put_in += 1;
            j += 1;
        } else {
            gap.out.push(a[i].clone());
            i += 1;
        }
    }
}

/// A word of a request: `key` is what templates compare (lower case), `said` the word as the
/// transcript wrote it (what a free-text slot keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub key: String,
    pub said: String,
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.key
    }
}

/// A piece of a normalised request: a word, or a break where the text had `,` `.` `?` `!`
/// `;` or `:` (where two commands may meet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Word(Word),
    Break,
}

/// `text` as words and breaks: lower-case keys, punctuation removed (a `.` or `:` between
/// digits stays: "21.5", "7:30"), hyphens split words, "°"/"°C"/"°F" read as "degrees" and
/// "%" as "percent", apostrophes inside words kept ("it's", also when written `’`).
pub fn pieces(text: &str) -> Vec<Piece> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Splitter::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let digit_at = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(char::is_ascii_digit)
        };
        if c.is_alphanumeric() {
            out.push(c);
        } else if matches!(c, '\'' | '’' | 'ʼ') {
            out.push('\'');
        } else if matches!(c, '.' | ':') && digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) {
            out.push(c);
        } else if c == '°' {
            out.word("degrees");
            let unit = chars.get(i + 1).is_some_and(|u| "cCfF".contains(*u));
            if unit && !chars.get(i + 2).is_some_and(|n| n.is_alphanumeric()) {
                i += 1;
            }
        } else if c == '%' {
            out.word("percent");
        } else {
            out.end_word();
            if matches!(c, ',' | '.' | '?' | '!' | ';' | ':') {
                out.brk();
            }
        }
        i += 1;
    }
    out.finish()
}

/// The words of `text`, breaks left out.
pub fn words(text: &str) -> Vec<Word> {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Word(w) => Some(w),
            Piece::Break => None,
        })
        .collect()
}

/// The word keys of `text` (how a template's words are compared).
pub fn keys(text: &str) -> Vec<String> {
    words(text).into_iter().map(|w| w.key).collect()
}

/// Builds pieces a character at a time.
#[derive(Default)]
struct Splitter {
    out: Vec<Piece>,
    key: String,
    said: String,
}

impl Splitter {
    fn push(&mut self, c: char) {
        self.key.extend(c.to_lowercase());
        self.said.push(c);
    }

    fn word(&mut self, w: &str) {
        self.end_word();
        self.key.push_str(w);
        self.said.push_str(w);
        self.end_word();
    }

    /// The word so far, less apostrophes at its ends (quotes).
    fn end_word(&mut self) {
        let key = self.key.trim_matches('\'');
        if !key.is_empty() {
            let said = self.said.trim_matches('\'');
            self.out.push(Piece::Word(Word {
                key: key.to_string(),
                said: said.to_string(),
            }));
        }
        self.key.clear();
        self.said.clear();
    }

    fn brk(&mut self) {
        if self.out.last().is_some_and(|p| *p != Piece::Break) {
            self.out.push(Piece::Break);
        }
    }

    fn finish(mut self) -> Vec<Piece> {
        self.end_word();
        while self.out.last() == Some(&Piece::Break) {
            self.out.pop();
        }
        self.out
    }
}

/// Whether `word` joins two commands.
pub fn is_joiner(word: &str) -> bool {
    JOINERS.contains(&word)
}

/// The ways `words` may be read with words that carry no command left out of its ends,
/// fewest words first (the whole of `words` last).
pub fn trimmings(words: &[Word]) -> Vec<&[Word]> {
    let mut starts = vec![0];
    let mut s = 0;
    while let Some(skip) = SKIP_LEADING.iter().find(|k| starts_with(&words[s..], k)) {
        s += skip.len();
        starts.push(s);
    }
    let mut ends = vec![words.len()];
    let mut e = words.len();
    while let Some(skip) = SKIP_TRAILING.iter().find(|k| ends_with(&words[..e], k)) {
        e -= skip.len();
        ends.push(e);
    }
    let mut out: Vec<&[Word]> = Vec::new();
    for &s in &starts {
        for &e in ends.iter().filter(|&&e| e > s) {
            out.push(&words[s..e]);
        }
    }
    out.sort_by_key(|w| w.len());
    out
}

/// Whether `words` are only words that carry no command ("thank you").
pub fn only_skip_words(words: &[Word]) -> bool {
    let mut rest = words;
    while let Some(k) = SKIP_LEADING
        .iter()
        .chain(SKIP_TRAILING)
        .find(|k| starts_with(rest, k))
    {
        rest = &rest[k.len()..];
    }
    rest.is_empty()
}

fn starts_with(words: &[Word], prefix: &[&str]) -> bool {
    words.len() >= prefix.len() && words.iter().zip(prefix).all(|(w, p)| w.key == *p)
}

fn ends_with(words: &[Word], suffix: &[&str]) -> bool {
    words.len() >= suffix.len()
        && words[words.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(w, p)| w.key == *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Vec<String> {
        keys(s)
    }

    fn strs(words: &[Word]) -> Vec<&str> {
        words.iter().map(|w| w.key.as_str()).collect()
    }

    #[test]
    fn normalising_keeps_decimals_contractions_and_units() {
        assert_eq!(
            k("Set it to 21.5°C, please!"),
            ["set", "it", "to", "21.5", "degrees", "please"]
        );
        assert_eq!(k("21°"), ["21", "degrees"]);
        assert_eq!(k("70°F."), ["70", "degrees"]);
        assert_eq!(k("21 °C"), ["21", "degrees"]);
        assert_eq!(k("21°cold"), ["21", "degrees", "cold"]);
        assert_eq!(
            k("What's the living-room light at? 40%"),
            ["what's", "the", "living", "room", "light", "at", "40", "percent"]
        );
        assert_eq!(k("It’s on at 7:30"), ["it's", "on", "at", "7:30"]);
        assert_eq!(k("'quoted' words"), ["quoted", "words"]);
        assert_eq!(k("Ends at 5."), ["ends", "at", "5"]);
        assert_eq!(k("ÉCLAIRS über"), ["éclairs", "über"]);
        assert_eq!(
            pieces("Lights off. Lock the door"),
            [
                Piece::Word(Word {
                    key: "lights".into(),
                    said: "Lights".into()
                }),
                Piece::Word(Word {
                    key: "off".into(),
                    said: "off".into()
                }),
                Piece::Break,
                Piece::Word(Word {
                    key: "lock".into(),
                    said: "Lock".into()
                }),
                Piece::Word(Word {
                    key: "the".into(),
                    said: "the".into()
                }),
                Piece::Word(Word {
                    key: "door".into(),
                    said: "door".into()
                }),
            ]
        );
        assert!(pieces("?!..,").is_empty());
        assert!(pieces("").is_empty());
    }

    #[test]
    fn skip_words_may_be_left_out_at_both_ends_fewest_words_first() {
        let w = words("Hey, could you please turn on the light for me, thanks");
        let t = trimmings(&w);
        assert_eq!(strs(t[0]), ["turn", "on", "the", "light"]);
        assert_eq!(strs(t[t.len() - 1]), strs(&w));
        assert!(t.windows(2).all(|p| p[0].len() <= p[1].len()));
        // a request of only skip words is never read as nothing
        let w = words("thank you");
        assert!(trimmings(&w).iter().all(|t| !t.is_empty()));
        // in the middle they stay
        let w = words("turn please on the light");
        assert_eq!(trimmings(&w).len(), 1);
        assert!(only_skip_words(&words("Thank you.")));
        assert!(only_skip_words(&words("ok thanks")));
        assert!(!only_skip_words(&words("thanks for the light")));
    }
}
