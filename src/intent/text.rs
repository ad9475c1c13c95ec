//! Words as intents compare them: transcripts and templates normalised alike, and spoken
//! numbers.

/// Leading words that carry no command ("please turn on …", "can you lock …"); each is
/// dropped, again and again, from the start of a request.
const SKIP_LEADING: &[&[&str]] = &[
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

/// Trailing words that carry no command ("… please", "… for me").
const SKIP_TRAILING: &[&[&str]] = &[
    &["please"],
    &["thanks"],
    &["thank", "you"],
    &["now"],
    &["for", "me"],
];

/// A piece of a normalised request: a word, or a break where the text had `,` `.` `?` `!`
/// `;` or `:` (where two commands may meet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Word(String),
    Break,
}

/// Lower-case words and breaks: punctuation removed (a dot inside a number stays:
/// "21.5"), hyphens split words, "°"/"°C" become "degrees" and "%" "percent",
/// apostrophes inside words stay ("it's").
pub(super) fn pieces(text: &str) -> Vec<Piece> {
    let spaced = text
        .to_lowercase()
        .replace("°c", " degrees ")
        .replace("°f", " degrees ")
        .replace('°', " degrees ")
        .replace('%', " percent ");
    let chars: Vec<char> = spaced.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<Piece>| {
        let w = word.trim_matches('\'');
        if !w.is_empty() {
            out.push(Piece::Word(w.to_string()));
        }
        word.clear();
    };
    for (i, &c) in chars.iter().enumerate() {
        let digit_at = |j: usize| chars.get(j).is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric()
            || c == '\''
            || (c == '.' && i > 0 && digit_at(i - 1) && digit_at(i + 1))
        {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        if matches!(c, ',' | '.' | '?' | '!' | ';' | ':')
            && out.last().is_some_and(|p| *p != Piece::Break)
        {
            out.push(Piece::Break);
        }
    }
    flush(&mut word, &mut out);
    while out.last() == Some(&Piece::Break) {
        out.pop();
    }
    out
}

/// The words of `text`, breaks left out.
pub(super) fn words(text: &str) -> Vec<String> {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Word(w) => Some(w),
            Piece::Break => None,
        })
        .collect()
}

/// `words` without the leading and trailing words that carry no command.
pub(super) fn trim_skip_words(mut words: &[String]) -> &[String] {
    loop {
        let before = words.len();
        for skip in SKIP_LEADING {
            if starts_with(words, skip) && words.len() > skip.len() {
                words = &words[skip.len()..];
            }
        }
        for skip in SKIP_TRAILING {
            if ends_with(words, skip) && words.len() > skip.len() {
                words = &words[..words.len() - skip.len()];
            }
        }
        if words.len() == before {
            return words;
        }
    }
}

fn starts_with(words: &[String], prefix: &[&str]) -> bool {
    words.len() >= prefix.len() && words.iter().zip(prefix).all(|(w, p)| w == p)
}

fn ends_with(words: &[String], suffix: &[&str]) -> bool {
    words.len() >= suffix.len()
        && words[words.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(w, p)| w == p)
}

/// Words that end one command and may start the next: "… and lock the door".
pub(super) fn is_joiner(word: &str) -> bool {
    matches!(word, "and" | "then" | "also")
}

const UNITS: [&str; 20] = [
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

const TENS: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// A number said in `words`, all of them: digits ("21", "21.5"), or words ("twenty one",
/// "a hundred", "one hundred and five", "twenty one point five", "twenty and a half").
pub(super) fn number(words: &[String]) -> Option<f64> {
    if let [w] = words {
        if let Ok(x) = w.parse::<f64>() {
            return x.is_finite().then_some(x);
        }
    }
    if let Some(p) = words.iter().position(|w| w == "point") {
        let whole = integer(&words[..p])?;
        let digits: Option<String> = words[p + 1..]
            .iter()
            .map(|w| unit(w).filter(|&d| d < 10).map(|d| d.to_string()))
            .collect();
        let digits = digits.filter(|d| !d.is_empty())?;
        return format!("{whole}.{digits}").parse().ok();
    }
    if words.len() > 3
        && words[words.len() - 3..]
            .iter()
            .map(String::as_str)
            .eq(["and", "a", "half"])
    {
        return integer(&words[..words.len() - 3]).map(|n| n as f64 + 0.5);
    }
    integer(words).map(|n| n as f64)
}

fn unit(w: &str) -> Option<u64> {
    UNITS.iter().position(|u| *u == w).map(|i| i as u64)
}

fn tens(w: &str) -> Option<u64> {
    TENS.iter()
        .position(|t| *t == w)
        .map(|i| 20 + 10 * i as u64)
}

/// A whole number in words, all of them, up to 999: "twenty one", "a hundred and five".
fn integer(words: &[String]) -> Option<u64> {
    if let [w] = words {
        if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) {
            return w.parse().ok();
        }
    }
    let (hundreds, rest) = match words.iter().position(|w| w == "hundred") {
        Some(h) => {
            let n = match &words[..h] {
                [w] if w == "a" => 1,
                [w] => unit(w).filter(|&u| (1..10).contains(&u))?,
                _ => return None,
            };
            let rest = &words[h + 1..];
            let rest = match rest.first() {
                Some(w) if w == "and" && rest.len() > 1 => &rest[1..],
                _ => rest,
            };
            (n * 100, rest)
        }
        None => (0, words),
    };
    let below = match rest {
        [] if hundreds > 0 => 0,
        [w] => unit(w).or_else(|| tens(w))?,
        [t, u] => tens(t)? + unit(u).filter(|&u| (1..10).contains(&u))?,
        _ => return None,
    };
    Some(hundreds + below)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        words(s)
    }

    #[test]
    fn normalising_keeps_decimals_and_contractions() {
        assert_eq!(
            w("Set it to 21.5°C, please!"),
            ["set", "it", "to", "21.5", "degrees", "please"]
        );
        assert_eq!(
            w("What's the living-room light at? 40%"),
            ["what's", "the", "living", "room", "light", "at", "40", "percent"]
        );
        assert_eq!(
            pieces("Lights off. Lock the door"),
            [
                Piece::Word("lights".into()),
                Piece::Word("off".into()),
                Piece::Break,
                Piece::Word("lock".into()),
                Piece::Word("the".into()),
                Piece::Word("door".into()),
            ]
        );
        assert!(pieces("?!..,").is_empty());
    }

    #[test]
    fn skip_words_go_from_both_ends() {
        let t = w("Hey, could you please turn on the light for me, thanks");
        assert_eq!(trim_skip_words(&t), w("turn on the light"));
        // never the whole request
        assert_eq!(trim_skip_words(&w("thank you")), w("thank you"));
    }

    #[test]
    fn numbers_in_words_and_digits() {
        for (said, n) in [
            ("21", 21.0),
            ("21.5", 21.5),
            ("twenty one", 21.0),
            ("twenty", 20.0),
            ("nineteen", 19.0),
            ("zero", 0.0),
            ("a hundred", 100.0),
            ("one hundred and five", 105.0),
            ("twenty one point five", 21.5),
            ("twenty and a half", 20.5),
        ] {
            assert_eq!(number(&w(said)), Some(n), "{said}");
        }
        for said in [
            "one one",
            "twenty twenty",
            "five twenty",
            "point five",
            "and a half",
            "hundred",
            "",
            "twenty one one",
        ] {
            assert_eq!(number(&w(said)), None, "{said}");
        }
    }
}
