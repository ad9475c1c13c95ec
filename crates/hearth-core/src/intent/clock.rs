//! A time of day as people say it ("7", "7 am", "seven thirty pm", "7:30", "half past six",
//! "quarter to eight", "noon", "midnight", "19:00"), and as hearth says it back ("7:30 PM").
//!
//! [`parse_clock`] reads the whole text or nothing: "7 tomorrow" is no time. A time said
//! without "am" or "pm" keeps that open ([`Clock::half`] is `None`) when it could be either
//! (1 to 12 o'clock): what it means is decided where it is used ([`Clock::times`]).

use jiff::civil::Time;

use super::numbers::number_at;

/// Morning or afternoon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    Am,
    Pm,
}

/// A time of day as said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// 1 to 12.
    pub hour: u8,
    pub minute: u8,
    /// `None`: said without "am"/"pm" (either).
    pub half: Option<Half>,
}

impl Clock {
    /// From a 24-hour time: unambiguous.
    fn from_24(hour: u8, minute: u8) -> Clock {
        let half = if hour < 12 { Half::Am } else { Half::Pm };
        let hour = match hour % 12 {
            0 => 12,
            h => h,
        };
        Clock {
            hour,
            minute,
            half: Some(half),
        }
    }

    /// From an hour as said (0 to 23) and what was said after it.
    fn said(hour: u8, minute: u8, half: Option<Half>) -> Option<Clock> {
        if minute > 59 {
            return None;
        }
        match (hour, half) {
            (1..=12, h) => Some(Clock {
                hour,
                minute,
                half: h,
            }),
            (0 | 13..=23, None) => Some(Clock::from_24(hour, minute)),
            _ => None,
        }
    }

    /// The times of day it can mean: one, or two (morning and evening) when said without
    /// "am" or "pm".
    pub fn times(self) -> Vec<Time> {
        let base = self.hour % 12;
        let at = |h: u8| Time::new(h as i8, self.minute as i8, 0, 0).ok();
        match self.half {
            Some(Half::Am) => at(base).into_iter().collect(),
            Some(Half::Pm) => at(base + 12).into_iter().collect(),
            None => [at(base), at(base + 12)].into_iter().flatten().collect(),
        }
    }

    /// As hearth says it: "7:00 AM", "7:30" (either half), "12:00 PM".
    pub fn say(self) -> String {
        let half = match self.half {
            Some(Half::Am) => " AM",
            Some(Half::Pm) => " PM",
            None => "",
        };
        format!("{}:{:02}{half}", self.hour, self.minute)
    }
}

/// How `t` is said: "7:00 AM".
pub fn say_time(t: Time) -> String {
    Clock::from_24(t.hour() as u8, t.minute() as u8).say()
}

/// The words of `text`, lower-cased, split at spaces and hyphens, "a.m." as "am".
fn words(text: &str) -> Vec<String> {
    let text = text
        .to_lowercase()
        .replace("a.m.", " am ")
        .replace("p.m.", " pm ")
        .replace("a.m", " am ")
        .replace("p.m", " pm ");
    text.split(|c: char| c.is_whitespace() || c == '-' || c == ',')
        .map(|w| w.trim_end_matches(['.', '?', '!']))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The time of day `text` says, whole; `None` when any of it is not one.
pub fn parse_clock(text: &str) -> Option<Clock> {
    let mut w = words(text);
    // "o'clock" at the end
    if w.last()
        .is_some_and(|l| matches!(l.as_str(), "o'clock" | "oclock"))
    {
        w.pop();
    }
    // "am"/"pm" at the end, as a word, as two ("a m"), or stuck to the number ("7pm")
    let mut half = None;
    match w.as_slice() {
        [.., a, m] if m == "m" && (a == "a" || a == "p") => {
            half = Some(if a == "a" { Half::Am } else { Half::Pm });
            w.truncate(w.len() - 2);
        }
        [.., last] if last == "am" || last == "pm" => {
            half = Some(if last == "am" { Half::Am } else { Half::Pm });
            w.pop();
        }
        [.., last] if last.ends_with("am") || last.ends_with("pm") => {
            let (n, h) = last.split_at(last.len() - 2);
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == ':') {
                half = Some(if h == "am" { Half::Am } else { Half::Pm });
                let n = n.to_string();
                w.pop();
                w.push(n);
            }
        }
        _ => {}
    }
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["noon" | "midday"] if half.is_none() => return Some(Clock::from_24(12, 0)),
        ["midnight"] if half.is_none() => return Some(Clock::from_24(0, 0)),
        [] => return None,
        _ => {}
    }
    // "half past six", "quarter past 7", "quarter to eight", "ten past six", "20 to 8";
    // "half pass six" as whisper writes it
    let past = |x: &str| x == "past" || x == "pass";
    if let Some(i) = w.iter().position(|x| past(x) || *x == "to") {
        let (before, after) = (&w[..i], &w[i + 1..]);
        let minutes = match before {
            ["half"] => 30,
            ["quarter"] | ["a", "quarter"] => 15,
            _ => {
                let (n, k) = number_at(before)?;
                let rest = &before[k..];
                if !(rest.is_empty() || matches!(rest, ["minutes"] | ["minute"]))
                    || n.fract() != 0.0
                {
                    return None;
                }
                n as i64
            }
        };
        let (h, k) = number_at(after)?;
        if k != after.len() || h.fract() != 0.0 || !(1.0..=12.0).contains(&h) || minutes >= 60 {
            return None;
        }
        let h = h as u8;
        return if past(w[i]) {
            Clock::said(h, minutes as u8, half)
        } else {
            let hour = if h == 1 { 12 } else { h - 1 };
            Clock::said(hour, (60 - minutes) as u8, half)
        };
    }
    // "7:30"; "630", "1045" (whisper writes "six thirty" so)
    if let [one] = w.as_slice() {
        if let Some((h, m)) = one.split_once(':') {
            let (h, m): (u8, u8) = (h.parse().ok()?, m.parse().ok()?);
            if m.to_string().len() > 2 || one.len() - one.find(':')? != 3 {
                return None;
            }
            return Clock::said(h, m, half).filter(|c| half.is_none() || c.hour <= 12);
        }
        if (3..=4).contains(&one.len()) && one.bytes().all(|b| b.is_ascii_digit()) {
            let (h, m) = one.split_at(one.len() - 2);
            let (h, m): (u8, u8) = (h.parse().ok()?, m.parse().ok()?);
            return Clock::said(h, m, half).filter(|c| half.is_none() || c.hour <= 12);
        }
    }
    // whisper writes "six thirty" as "6th 30" too: an ordinal hour, with minutes after it
    // (alone, "the 6th" is a day)
    let mut w = w;
    if let [hour, _minutes] = w.as_slice() {
        let bare = hour.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &hour[bare.len()..];
        if !bare.is_empty()
            && bare.bytes().all(|b| b.is_ascii_digit())
            && matches!(suffix, "st" | "nd" | "rd" | "th")
        {
            w[0] = bare;
        }
    }
    // "7", "seven thirty", "7 30", "seven oh five"
    let (h, k) = number_at(&w)?;
    if h.fract() != 0.0 || !(0.0..=23.0).contains(&h) {
        return None;
    }
    let rest = &w[k..];
    let minute = match rest {
        [] => 0.0,
        ["oh" | "o", more @ ..] => {
            let (m, j) = number_at(more)?;
            if j != more.len() || !(1.0..=9.0).contains(&m) {
                return None;
            }
            m
        }
        _ => {
            let (m, j) = number_at(rest)?;
            if j != rest.len() || !(10.0..=59.0).contains(&m) {
                return None;
            }
            m
        }
    };
    if minute.fract() != 0.0 {
        return None;
    }
    Clock::said(h as u8, minute as u8, half)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Option<String> {
        parse_clock(text).map(Clock::say)
    }

    #[test]
    fn times_of_day_as_people_say_them() {
        for (text, want) in [
            ("7", "7:00"),
            ("seven", "7:00"),
            ("7 am", "7:00 AM"),
            ("7 a.m.", "7:00 AM"),
            ("7am", "7:00 AM"),
            ("seven p m", "7:00 PM"),
            ("6:30 pm", "6:30 PM"),
            ("6:30pm", "6:30 PM"),
            ("seven thirty", "7:30"),
            ("seven thirty pm", "7:30 PM"),
            ("7 45", "7:45"),
            ("6th 30", "6:30"),
            ("630", "6:30"),
            ("1045 pm", "10:45 PM"),
            ("1900", "7:00 PM"),
            ("6th", "none"),
            ("6th 5", "none"),
            ("1375", "none"),
            ("630 tomorrow", "none"),
            ("seven oh five", "7:05"),
            ("half past six", "6:30"),
            ("half, pass 6", "6:30"),
            ("quarter past 7 pm", "7:15 PM"),
            ("a quarter to eight", "7:45"),
            ("quarter to one", "12:45"),
            ("twenty to eight", "7:40"),
            ("ten past six in", "none"),
            ("noon", "12:00 PM"),
            ("midnight", "12:00 AM"),
            ("19:00", "7:00 PM"),
            ("0:15", "12:15 AM"),
            ("7 o'clock", "7:00"),
            ("eleven o'clock at night", "none"),
            ("23", "11:00 PM"),
            ("25", "none"),
            ("7:75", "none"),
            ("13 pm", "none"),
            ("tomorrow", "none"),
            ("7 tomorrow", "none"),
            ("a while", "none"),
        ] {
            assert_eq!(
                said(text).unwrap_or_else(|| "none".into()),
                want,
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_time_without_am_or_pm_means_either() {
        let c = parse_clock("7:30").unwrap();
        assert_eq!(
            c.times(),
            [
                Time::new(7, 30, 0, 0).unwrap(),
                Time::new(19, 30, 0, 0).unwrap()
            ]
        );
        assert_eq!(
            parse_clock("7:30 pm").unwrap().times(),
            [Time::new(19, 30, 0, 0).unwrap()]
        );
        assert_eq!(
            parse_clock("12 am").unwrap().times(),
            [Time::new(0, 0, 0, 0).unwrap()]
        );
        assert_eq!(say_time(Time::new(0, 5, 0, 0).unwrap()), "12:05 AM");
        // what hearth says reads back as the same time
        for text in ["7:00 AM", "7:30", "12:00 PM"] {
            assert_eq!(said(text).as_deref(), Some(text));
        }
    }
}
