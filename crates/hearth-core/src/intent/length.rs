//! A timer's length as people say it, and as hearth says it back.
//!
//! [`parse_length`] reads parts of a number and a unit, joined by "and" or commas or
//! nothing: "ten minutes", "8 min", "1 hour 30 minutes", "an hour and a half", "one and a
//! half hours", "a minute and a half", "half an hour", "90 seconds". Numbers are digits or
//! words, as the intents read them. Anything else in the text (a word that is neither a
//! number, a unit nor a joint) makes it no length at all: "for my mum" is not one.
//! [`say_length`] gives the reply's words: "8 minutes", "1 hour and 30 minutes".

use std::time::Duration;

use super::numbers::number_at;

/// The seconds a unit word stands for.
fn unit(w: &str) -> Option<u64> {
    match w {
        "hour" | "hours" | "hr" | "hrs" | "h" => Some(3600),
        "minute" | "minutes" | "min" | "mins" | "m" => Some(60),
        "second" | "seconds" | "sec" | "secs" | "s" => Some(1),
        _ => None,
    }
}

/// Whether `w` is a unit of a length ("minutes", "sec", "h").
pub(crate) fn is_length_unit(w: &str) -> bool {
    unit(w).is_some()
}

/// The words of `text`, lower-cased, split at spaces, hyphens and commas.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-' || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end_matches(['.', '?', '!']).to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The length `text` says, whole; `None` when any of it is not a length or it comes to
/// nothing.
pub fn parse_length(text: &str) -> Option<Duration> {
    let w = words(text);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    let mut i = 0;
    let mut millis = 0f64;
    let mut parts = 0;
    while i < w.len() {
        if w[i] == "and" && parts > 0 {
            i += 1;
            continue;
        }
        // "half an hour", "half a minute"
        if let ["half", "a" | "an", u, ..] = w[i..] {
            let secs = unit(u)?;
            millis += secs as f64 * 500.0;
            (i, parts) = (i + 3, parts + 1);
            continue;
        }
        let (n, taken) = match w[i] {
            "a" | "an" | "another" => (1.0, 1),
            _ => number_at(&w[i..])?,
        };
        let secs = unit(w.get(i + taken)?)?;
        millis += n * secs as f64 * 1000.0;
        i += taken + 1;
        parts += 1;
        // "an hour and a half"
        if let ["and", "a", "half", ..] = w[i..] {
            millis += secs as f64 * 500.0;
            i += 3;
        }
    }
    (millis >= 1.0).then(|| Duration::from_millis(millis.round() as u64))
}

/// `d` as a reply says it, to the second: "1 hour and 30 minutes", "45 seconds".
pub fn say_length(d: Duration) -> String {
    let s = d.as_secs() + u64::from(d.subsec_millis() >= 500);
    let parts: Vec<String> = [
        (s / 3600, "hour"),
        (s / 60 % 60, "minute"),
        (s % 60, "second"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, u)| format!("{n} {u}{}", if n == 1 { "" } else { "s" }))
    .collect();
    match parts.split_last() {
        None => "0 seconds".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_as_people_say_them() {
        let min = |m: u64| Some(Duration::from_secs(m * 60));
        for (said, want) in [
            ("ten minutes", min(10)),
            ("10 minutes", min(10)),
            ("8 min", min(8)),
            ("a minute", min(1)),
            ("an hour", min(60)),
            ("an hour and a half", min(90)),
            ("one and a half hours", min(90)),
            ("1 hour 30 minutes", min(90)),
            ("one hour and thirty minutes", min(90)),
            ("1 hour, 30 minutes", min(90)),
            ("half an hour", min(30)),
            ("two and a half minutes", Some(Duration::from_secs(150))),
            ("a minute and a half", Some(Duration::from_secs(90))),
            ("ninety seconds", Some(Duration::from_secs(90))),
            ("twenty-five minutes", min(25)),
            ("2 hours and 5 seconds", Some(Duration::from_secs(7205))),
            ("1.5 hours", min(90)),
            ("Ten minutes.", min(10)),
        ] {
            assert_eq!(parse_length(said), want, "{said:?}");
        }
    }

    #[test]
    fn what_is_not_a_length_is_none() {
        for said in [
            "",
            "minutes",
            "ten",
            "for my mum",
            "ten minutes for the pasta",
            "and ten minutes",
            "zero minutes",
            "half an apple",
            "a long day",
            "a while",
        ] {
            assert_eq!(parse_length(said), None, "{said:?}");
        }
    }

    #[test]
    fn lengths_as_hearth_says_them() {
        for (secs, want) in [
            (0, "0 seconds"),
            (1, "1 second"),
            (45, "45 seconds"),
            (60, "1 minute"),
            (480, "8 minutes"),
            (5400, "1 hour and 30 minutes"),
            (3661, "1 hour, 1 minute and 1 second"),
            (7200, "2 hours"),
        ] {
            assert_eq!(say_length(Duration::from_secs(secs)), want, "{secs}");
        }
        assert_eq!(say_length(Duration::from_millis(59_600)), "1 minute");
    }
}
