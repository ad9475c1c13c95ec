//! Spoken numbers: digits as a transcript writes them, or words.

use hearth_phrases::normalize::{TENS, UNITS};

/// The most words a number may take ("nine hundred and ninety nine point five five").
pub(super) const MAX_NUMBER_WORDS: usize = 10;

/// The number all of `words` say: digits ("21", "21.5"), or words up to 999 ("twenty
/// one", "a hundred", "one hundred and five", "twenty one point five", "twenty and a
/// half", "21 and a half").
pub(super) fn number<S: AsRef<str>>(words: &[S]) -> Option<f64> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    if let [w] = words[..] {
        if let Some(x) = digits(w) {
            return Some(x);
        }
    }
    if let Some(p) = words.iter().position(|w| *w == "point") {
        return decimal(&words[..p], &words[p + 1..]);
    }
    if let [whole @ .., "and", "a", "half"] = &words[..] {
        return whole_number(whole).map(|n| n as f64 + 0.5);
    }
    whole_number(&words).map(|n| n as f64)
}

/// The longest run of words at the start of `words` that says a number (as [`number`]
/// reads it), and how many words it takes.
pub(crate) fn number_at<S: AsRef<str>>(words: &[S]) -> Option<(f64, usize)> {
    (1..=words.len().min(MAX_NUMBER_WORDS))
        .rev()
        .find_map(|k| number(&words[..k]).map(|x| (x, k)))
}

/// Digits with at most one decimal point: "21", "21.5" (not "1e5", "inf", ".5").
fn digits(w: &str) -> Option<f64> {
    let (whole, fraction) = w.split_once('.').unwrap_or((w, "0"));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(whole) && all_digits(fraction)) {
        return None;
    }
    w.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// "twenty one" + "point" + "five": the digits after the point said one by one.
fn decimal(whole: &[&str], after: &[&str]) -> Option<f64> {
    let whole = whole_number(whole)?;
    let digits: Option<String> = after
        .iter()
        .map(|w| unit(w).filter(|&d| d < 10).map(|d| d.to_string()))
        .collect();
    let digits = digits.filter(|d| !d.is_empty())?;
    format!("{whole}.{digits}").parse().ok()
}

fn unit(w: &str) -> Option<u64> {
    UNITS.iter().position(|u| *u == w).map(|i| i as u64)
}

fn tens(w: &str) -> Option<u64> {
    TENS.iter()
        .position(|t| *t == w)
        .map(|i| 20 + 10 * i as u64)
}

/// A whole number, all of `words`: digits, or words up to 999 ("a hundred and five").
fn whole_number(words: &[&str]) -> Option<u64> {
    if let [w] = words {
        if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) {
            return w.parse().ok();
        }
    }
    let (hundreds, rest) = match words.iter().position(|w| *w == "hundred") {
        Some(h) => (100 * hundreds(&words[..h])?, after_and(&words[h + 1..])),
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

/// The count before "hundred": "a", or one to nine.
fn hundreds(words: &[&str]) -> Option<u64> {
    match words {
        ["a"] => Some(1),
        [w] => unit(w).filter(|&u| (1..10).contains(&u)),
        _ => None,
    }
}

/// The words after "hundred", less an "and" before more ("a hundred and five").
fn after_and<'a, 'b>(rest: &'a [&'b str]) -> &'a [&'b str] {
    match rest {
        ["and", more @ ..] if !more.is_empty() => more,
        _ => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(s: &str) -> Option<f64> {
        number(&super::super::normalize::keys(s))
    }

    #[test]
    fn numbers_in_words_and_digits() {
        for (text, n) in [
            ("21", 21.0),
            ("21.5", 21.5),
            ("0", 0.0),
            ("twenty one", 21.0),
            ("twenty-one", 21.0),
            ("twenty", 20.0),
            ("eleven", 11.0),
            ("nineteen", 19.0),
            ("zero", 0.0),
            ("a hundred", 100.0),
            ("one hundred", 100.0),
            ("one hundred and five", 105.0),
            ("two hundred fifty", 250.0),
            ("twenty one point five", 21.5),
            ("zero point two five", 0.25),
            ("twenty and a half", 20.5),
            ("21 and a half", 21.5),
        ] {
            assert_eq!(said(text), Some(n), "{text}");
        }
    }

    #[test]
    fn not_numbers() {
        for text in [
            "one one",
            "twenty twenty",
            "five twenty",
            "twenty zero",
            "point five",
            "twenty point",
            "twenty point twelve",
            "and a half",
            "hundred",
            "ten hundred",
            "",
            "twenty one one",
            "1e5",
            "inf",
            "nan",
            "a",
            "1 2",
        ] {
            assert_eq!(said(text), None, "{text}");
        }
        assert_eq!(number(&["1e400"]), None);
        assert_eq!(number(&[".5"]), None);
        assert_eq!(number(&["5."]), None);
        assert_eq!(number(&["1.2.3"]), None);
    }
}
