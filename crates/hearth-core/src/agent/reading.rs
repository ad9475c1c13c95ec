//! Readings: what a sentence states about the home that only a tool can know, and whether
//! the results of a turn carry it.
//!
//! Qwen2.5-Coder-0.5B, asked "How warm is it in the office?", answers "It is 10 degrees
//! Celsius." with no call; asked the time and a temperature, it reads the time and invents
//! the temperature. A sentence states a reading when it says:
//! - a number with a unit: "22 degrees", "40 %", "21,5 °C", "twenty-two percent";
//! - a number a reading is said to be: "the temperature is 22", "humidity is at 40";
//! - a time of day ("10:00", "ten o'clock", "2 PM", "it's noon") or a date ("today is
//!   Monday", "it's the 3rd of June");
//! - a state the home is in: "the bathroom is cold", "it's warm", "the window is open";
//! - a yes or no to a question about the home: "Is the front door locked?" "Yes.".
//!
//! A number after a modal is an offer, not a reading ("you can set it to 21 degrees"),
//! unless a form of "to be" comes between ("I can confirm it is 21 degrees") or it is a time
//! of day ("You can call me at 10:00 AM."); a question states nothing.
//!
//! Before any call of the turn, a sentence that states a reading is a claim
//! ([`states_reading`]). After calls, what the reply says must be what the turn's results
//! carry ([`Carried`]): every number (digits or words, times by hour and minute), every
//! weekday and month, and a state of the home only when a result reads something.

use std::collections::HashSet;

/// Units a reading is given in (durations are not: "in 5 minutes" reads nothing).
const UNITS: &[&str] = &[
    "degree",
    "degrees",
    "°",
    "celsius",
    "centigrade",
    "fahrenheit",
    "kelvin",
    "percent",
    "%",
    "watt",
    "watts",
    "kilowatt",
    "kilowatts",
    "kw",
    "kwh",
    "volt",
    "volts",
    "amp",
    "amps",
    "lux",
    "ppm",
    "hpa",
    "mbar",
    "millibar",
    "millibars",
    "decibel",
    "decibels",
    "db",
    "mph",
    "kph",
    "kmh",
    "litre",
    "litres",
    "liter",
    "liters",
    "gallon",
    "gallons",
];

/// What a reading is of: "the temperature is 22".
const READING_WORDS: &[&str] = &[
    "temperature",
    "humidity",
    "brightness",
    "level",
    "reading",
    "battery",
    "volume",
    "power",
    "usage",
    "pressure",
    "consumption",
    "thermostat",
    "heating",
];

/// Words after a number that make it a time of day.
pub(super) const CLOCK: &[&str] = &["am", "pm", "o'clock", "oclock"];

/// Forms of "to be" that assert (`'s` is split off as "is").
const BE: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "isn't", "aren't", "wasn't", "weren't",
];

/// Words that make what follows an offer or a possibility, not a reading.
const MODALS: &[&str] = &[
    "can", "could", "may", "might", "would", "should", "will", "shall", "can't", "cannot",
    "couldn't", "won't", "wouldn't", "i'll", "you'll", "we'll", "i'd", "you'd",
];

/// Words between "is" and a state that keep it a statement: "is currently cold".
const FILLER: &[&str] = &[
    "now",
    "already",
    "still",
    "not",
    "all",
    "currently",
    "quite",
    "very",
    "really",
    "a",
    "bit",
    "little",
    "rather",
    "too",
    "pretty",
    "fairly",
    "nice",
    "and",
    "so",
];

/// States a home, or a thing in it, is said to be in.
const STATES: &[&str] = &[
    "cold",
    "colder",
    "warm",
    "warmer",
    "hot",
    "hotter",
    "cool",
    "cooler",
    "chilly",
    "freezing",
    "humid",
    "dry",
    "stuffy",
    "comfortable",
    "dark",
    "darker",
    "bright",
    "brighter",
    "dim",
    "dimmer",
    "sunny",
    "rainy",
    "cloudy",
    "windy",
    "raining",
    "snowing",
    "open",
    "closed",
    "shut",
    "locked",
    "unlocked",
    "on",
    "off",
];

/// States that come in pairs: a result that reads one side decides which a reply may say.
const SIDES: &[&[&str]] = &[
    &["on", "off"],
    &["locked", "unlocked"],
    &["open", "closed", "shut"],
];

/// What a home is made of: a sentence about one of these is about the home.
const HOUSE: &[&str] = &[
    "house",
    "home",
    "flat",
    "apartment",
    "room",
    "inside",
    "indoors",
    "outside",
    "outdoors",
    "kitchen",
    "bedroom",
    "bathroom",
    "office",
    "hallway",
    "hall",
    "living",
    "lounge",
    "garage",
    "attic",
    "basement",
    "cellar",
    "garden",
    "yard",
    "porch",
    "door",
    "window",
    "light",
    "lamp",
    "heating",
    "heater",
    "thermostat",
    "temperature",
    "humidity",
    "air",
    "weather",
    "fridge",
    "freezer",
    "oven",
    "blind",
    "curtain",
    "fan",
    "lock",
];

/// Who is not the home: "you are warm", "I am cold".
const PEOPLE: &[&str] = &["i", "you", "we", "he", "she", "me", "us"];

/// Words that stand for what was just asked about: "It's cold."
const PRONOUNS: &[&str] = &["it", "they", "everything", "both", "all"];

/// The first words of a question that a yes or no answers: "Is the door locked?"
const YES_NO_QUESTIONS: &[&str] = &[
    "is", "are", "was", "were", "does", "do", "did", "has", "have", "isn't", "aren't", "doesn't",
];

const YES_NO: &[&str] = &["yes", "no", "yeah", "yep", "nope", "nah"];

const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words that make a weekday or a month a date of now: "today is Monday".
const DATE_WORDS: &[&str] = &["today", "tomorrow", "yesterday", "tonight", "date"];

/// Two numbers are the same when they differ by less than this.
const SAME: f64 = 1e-6;

/// A number as a sentence says it.
#[derive(Debug, Clone, PartialEq)]
enum Num {
    /// A value, with every way its digits may be read ("1,5": 1.5; "1,500": 1500 or 1.5).
    Value(Vec<f64>),
    /// A time of day: the hour as said, the minutes if said, and whether after noon, if said.
    Time {
        hour: u32,
        minute: Option<u32>,
        pm: Option<bool>,
    },
}

impl Num {
    /// A time's hour on a 24-hour clock, when the time says which half of the day.
    fn hour24(hour: u32, pm: Option<bool>) -> Option<u32> {
        match pm {
            Some(true) if hour < 12 => Some(hour + 12),
            Some(false) if hour == 12 => Some(0),
            Some(_) => Some(hour),
            None if hour >= 13 || hour == 0 => Some(hour),
            None => None,
        }
    }
}

/// A number found in a sentence: the token it starts at, the one after it, and the number.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    at: usize,
    end: usize,
    num: Num,
}

/// Lower-case tokens of `text`: words ("it's" gives "it", "is"), numbers with their inner
/// `.`, `,` and `:` ("21,5", "10:00"), and `%`, `°` alone; "a.m." becomes "am".
fn tokens(text: &str) -> Vec<String> {
    let text = text
        .to_lowercase()
        .replace("a.m.", "am")
        .replace("p.m.", "pm")
        .replace('’', "'");
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], '.' | ',' | ':')
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c.is_alphabetic() {
            while i < chars.len()
                && (chars[i].is_alphabetic()
                    || (chars[i] == '\'' && chars.get(i + 1).is_some_and(|c| c.is_alphabetic())))
            {
                i += 1;
            }
            let w: String = chars[start..i].iter().collect();
            match w.strip_suffix("'s") {
                Some(stem) if !stem.is_empty() => {
                    out.push(stem.to_string());
                    out.push("is".to_string());
                }
                _ => out.push(w),
            }
        } else {
            if c == '%' || c == '°' {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// The values digits may stand for: "21.5"; "21,5" (a decimal comma); "1,500" (a
/// thousands comma, or a decimal one).
fn digit_values(t: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut add = |s: &str| {
        if let Ok(x) = s.parse::<f64>() {
            if x.is_finite() && !out.iter().any(|y: &f64| (y - x).abs() < SAME) {
                out.push(x);
            }
        }
    };
    if t.contains(',') {
        if t.matches(',').count() == 1 && !t.contains('.') {
            add(&t.replace(',', "."));
        }
        let groups: Vec<&str> = t.split(',').collect();
        let thousands = groups.iter().skip(1).all(|g| g.len() == 3) && groups[0].len() <= 3;
        if thousands {
            add(&t.replace(',', ""));
        }
    } else {
        add(t);
    }
    out
}

/// "10:05" as hour and minute.
fn clock_digits(t: &str) -> Option<(u32, u32)> {
    let (h, m) = t.split_once(':')?;
    let hour: u32 = h.parse().ok()?;
    let minute: u32 = m.parse().ok()?;
    (m.len() == 2 && hour <= 24 && minute < 60).then_some((hour, minute))
}

/// A number said in words at the start of `t` (as intents read them: "twenty two", "a
/// hundred and five", "twenty one point five"), and how many tokens it takes; digits are
/// read by the caller.
fn words_number(t: &[String]) -> Option<(f64, usize)> {
    if t.first()
        .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    crate::intent::number_at(t)
}

/// Every number in `t`, in order.
fn numbers(t: &[String]) -> Vec<Found> {
    let next_is = |k: usize, words: &[&str]| t.get(k).is_some_and(|w| words.contains(&w.as_str()));
    let pm_at = |k: usize| match t.get(k).map(String::as_str) {
        Some("pm") => Some(true),
        Some("am") => Some(false),
        _ => None,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let w = t[i].as_str();
        if w.starts_with(|c: char| c.is_ascii_digit()) {
            let mut end = i + 1;
            if next_is(end, &["st", "nd", "rd", "th"]) {
                end += 1;
            }
            let num = if let Some((hour, minute)) = clock_digits(w) {
                let pm = pm_at(end);
                if pm.is_some() {
                    end += 1;
                }
                Num::Time {
                    hour,
                    minute: Some(minute),
                    pm,
                }
            } else {
                let values = digit_values(w);
                let hour = values
                    .first()
                    .copied()
                    .filter(|h| h.fract() == 0.0 && *h <= 24.0);
                match hour {
                    Some(h) if next_is(end, CLOCK) => {
                        let pm = pm_at(end);
                        end += 1;
                        Num::Time {
                            hour: h as u32,
                            minute: None,
                            pm,
                        }
                    }
                    _ => Num::Value(values),
                }
            };
            out.push(Found { at: i, end, num });
            i = end;
            continue;
        }
        if let Some((x, n)) = words_number(&t[i..]) {
            let end = i + n;
            // "one" alone is mostly a pronoun ("the one in the kitchen")
            let lone_one = w == "one" && n == 1;
            let measured = next_is(end, UNITS) || next_is(end, CLOCK) || next_is(end, &["per"]);
            if !lone_one || measured {
                let num = if next_is(end, CLOCK) && x.fract() == 0.0 && x <= 24.0 {
                    Num::Time {
                        hour: x as u32,
                        minute: None,
                        pm: pm_at(end),
                    }
                } else {
                    Num::Value(vec![x])
                };
                let end = if next_is(end, CLOCK) { end + 1 } else { end };
                out.push(Found { at: i, end, num });
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Whether the number `f` is offered rather than stated: a modal before it with no form of
/// "to be" between ("you can set it to 21 degrees"). A time of day is never offered: "You can
/// call me at 10:00 AM." to "What time is it?" is a reading.
fn offered(t: &[String], f: &Found) -> bool {
    !matches!(f.num, Num::Time { .. })
        && t[..f.at]
            .iter()
            .rposition(|w| MODALS.contains(&w.as_str()))
            .is_some_and(|m| !t[m + 1..f.at].iter().any(|w| BE.contains(&w.as_str())))
}

/// Words a request that asks for something begins with.
const ASKING: &[&str] = &["what", "how", "which", "when", "is", "are", "does", "do"];

fn is_question(sentence: &str) -> bool {
    sentence.trim_end().ends_with('?')
}

/// A word, singular ("lights" → "light").
fn one(w: &str) -> &str {
    super::words::singular(w)
}

/// Whether a word names the home or one of its tools (`subjects`).
fn homely(w: &str, subjects: &HashSet<String>) -> bool {
    let w = one(w);
    HOUSE.contains(&w) || subjects.contains(w)
}

/// The states asserted of the home: for each "… is (filler)* STATE" whose subject (the
/// words before "is") names the home or a tool's subject, or is "it" when `request` is
/// about the home, the state; never of a person ("you are warm"). The state a yes-or-no
/// question asks about counts as one ([`asked_state`]).
fn home_states(t: &[String], request: &[String], subjects: &HashSet<String>) -> Vec<String> {
    let about_home = request
        .iter()
        .any(|w| homely(w, subjects) || STATES.contains(&w.as_str()));
    let asked = asked_state(request, subjects);
    let mut out = Vec::new();
    for (i, w) in t.iter().enumerate() {
        if !BE.contains(&w.as_str()) {
            continue;
        }
        let Some(state) = t[i + 1..]
            .iter()
            .find(|y| !FILLER.contains(&y.as_str()))
            .filter(|y| STATES.contains(&y.as_str()) || asked == Some(y.as_str()))
        else {
            continue;
        };
        let subject = &t[..i];
        if subject.iter().any(|x| PEOPLE.contains(&x.as_str())) {
            continue;
        }
        let of_home = subject.iter().any(|x| homely(x, subjects))
            || (subject.iter().any(|x| PRONOUNS.contains(&x.as_str())) && about_home);
        if of_home {
            out.push(state.clone());
        }
    }
    out
}

/// The state a yes-or-no question asks of the home, when it ends with a word of its own:
/// "is the egg timer running" → "running", which said back ("The egg timer is not
/// running.") is a reading as much as "locked" is. Not a word of the home, a person, "to
/// be" or [`FILLER`].
fn asked_state<'a>(request: &'a [String], subjects: &HashSet<String>) -> Option<&'a str> {
    let (first, last) = (request.first()?.as_str(), request.last()?.as_str());
    let asks = YES_NO_QUESTIONS.contains(&first) && request.len() > 2;
    let own =
        !homely(last, subjects) && ![PEOPLE, BE, FILLER].iter().any(|list| list.contains(&last));
    (asks && own).then_some(last)
}

/// Whether `sentence`, said while no call has run in the turn, states a reading (see the
/// module doc). `request` is what the user asked; `subjects` the words that tie a sentence
/// to the session's tools.
pub(super) fn states_reading(sentence: &str, request: &str, subjects: &HashSet<String>) -> bool {
    let t = tokens(sentence);
    let asked = tokens(request);
    if yes_no_about_home(&t, &asked, subjects) {
        return true;
    }
    // a bare number given as what is asked for: "What's the fan set to?" "It is 3."
    let asks_a_value = (is_question(request)
        || asked.first().is_some_and(|w| ASKING.contains(&w.as_str())))
        && numbers(&asked).is_empty();
    let value_asked_for = |t: &[String], at: usize| {
        let before = |k: usize| at.checked_sub(k).and_then(|i| t.get(i)).map(String::as_str);
        asks_a_value
            && (before(1).is_some_and(|w| BE.contains(&w))
                || (matches!(before(1), Some("at" | "to"))
                    && before(2).is_some_and(|w| BE.contains(&w))))
    };
    if is_question(sentence) {
        return false;
    }
    let measured = numbers(&t).into_iter().any(|f| {
        if offered(&t, &f) {
            return false;
        }
        let unit = t[f.end..]
            .iter()
            .take(2)
            .any(|w| UNITS.contains(&w.as_str()))
            || (t.get(f.end).is_some_and(|w| w == "per")
                && t.get(f.end + 1).is_some_and(|w| w == "cent"));
        let of_reading = t[..f.at].iter().enumerate().any(|(r, w)| {
            READING_WORDS.contains(&w.as_str())
                && t[r + 1..f.at].iter().any(|b| BE.contains(&b.as_str()))
        });
        matches!(f.num, Num::Time { .. }) || unit || of_reading || value_asked_for(&t, f.at)
    });
    measured
        || said_clock_word(&t)
        || said_date(&t)
        || !home_states(&t, &asked, subjects).is_empty()
}

/// "It's noon.", "It is midnight.": a time with no number.
fn said_clock_word(t: &[String]) -> bool {
    t.windows(2)
        .any(|p| BE.contains(&p[0].as_str()) && matches!(p[1].as_str(), "noon" | "midnight"))
}

/// A weekday or month stated as now: "Today is Monday", "It's June 3rd", "the date is …".
fn said_date(t: &[String]) -> bool {
    let named = date_names(t);
    if named.is_empty() {
        return false;
    }
    let dated = t.iter().any(|w| DATE_WORDS.contains(&w.as_str()));
    let it_is = t.windows(3).any(|p| {
        p[0] == "it" && BE.contains(&p[1].as_str()) && (named.contains(&p[2]) || p[2] == "the")
    });
    dated || it_is
}

/// The weekday and month names in `t` ("may" only beside a number: "May 3", "3 May").
fn date_names(t: &[String]) -> Vec<String> {
    let digits =
        |k: Option<&String>| k.is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    t.iter()
        .enumerate()
        .filter(|(i, w)| {
            WEEKDAYS.contains(&w.as_str())
                || (MONTHS.contains(&w.as_str())
                    && (*w != "may"
                        || digits(t.get(i + 1))
                        || i.checked_sub(1).is_some_and(|p| digits(t.get(p)))))
        })
        .map(|(_, w)| w.clone())
        .collect()
}

/// "Yes." or "No, …" to a yes-or-no question about the home ("Is the front door locked?").
fn yes_no_about_home(t: &[String], asked: &[String], subjects: &HashSet<String>) -> bool {
    let answers = t
        .iter()
        .find(|w| !matches!(w.as_str(), "oh" | "well" | "um" | "uh"))
        .is_some_and(|w| YES_NO.contains(&w.as_str()));
    let question = asked
        .first()
        .is_some_and(|w| YES_NO_QUESTIONS.contains(&w.as_str()))
        && !asked.get(1).is_some_and(|w| PEOPLE.contains(&w.as_str()));
    let about_home = asked
        .iter()
        .any(|w| homely(w, subjects) || STATES.contains(&w.as_str()));
    answers && question && about_home
}

/// What the results of a turn carry, for the reply after them: their numbers, times,
/// weekdays and months, and words. The request and the arguments of the calls that
/// succeeded carry their numbers, times and dates too ("dim the kitchen to 40" → "The
/// kitchen light is at 40 percent."), but no state: "is the door locked?" reads nothing.
#[derive(Debug, Clone, Default)]
pub(super) struct Carried {
    values: Vec<f64>,
    /// (hour on a 12-hour clock, hour on a 24-hour clock if known, minute).
    times: Vec<(u32, Option<u32>, u32)>,
    /// Weekday and month names, and words that begin one ("Sun", "Nov").
    names: HashSet<String>,
    /// Months of ISO dates ("2026-11-22" → 11).
    months: Vec<u32>,
    /// Every word of the results.
    words: HashSet<String>,
    /// Whether a result read anything: a number, a time.
    reads: bool,
}

impl Carried {
    /// Add a tool's result.
    pub(super) fn result(&mut self, text: &str) {
        let t = tokens(text);
        self.reads |= !numbers(&t).is_empty();
        self.words.extend(t.iter().cloned());
        self.said(text);
    }

    /// Add words whose numbers, times and dates may be said again: the request, a call's
    /// arguments.
    pub(super) fn said(&mut self, text: &str) {
        let t = tokens(text);
        for f in numbers(&t) {
            match f.num {
                Num::Value(v) => self.values.extend(v),
                Num::Time { hour, minute, pm } => {
                    let h24 = Num::hour24(hour, pm);
                    let h12 = hour % 12;
                    self.values.extend(
                        [Some(hour), h24, Some(h12), (h12 == 0).then_some(12), minute]
                            .into_iter()
                            .flatten()
                            .map(f64::from),
                    );
                    if let Some(m) = minute {
                        self.times.push((h12, h24, m));
                    }
                }
            }
        }
        for w in &t {
            let begins_a_name = WEEKDAYS
                .iter()
                .chain(MONTHS)
                .any(|n| n.starts_with(w.as_str()));
            if w.len() >= 3 && begins_a_name {
                self.names.insert(w.clone());
            }
        }
        self.months.extend(iso_months(text));
    }

    fn has_value(&self, x: f64) -> bool {
        self.values.iter().any(|v| (v - x).abs() < SAME)
    }

    fn has_time(&self, hour: u32, minute: Option<u32>, pm: Option<bool>) -> bool {
        let h24 = Num::hour24(hour, pm);
        let same_half = |known: Option<u32>| match (h24, known) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let by_time = self.times.iter().any(|&(h12, known, m)| {
            h12 == hour % 12 && minute.is_none_or(|x| x == m) && same_half(known)
        });
        // an hour said alone: "It's 2 PM" to a result of 14
        let by_hour = minute.is_none()
            && (self.has_value(f64::from(hour))
                || h24.is_some_and(|h| self.has_value(f64::from(h))));
        by_time || by_hour
    }

    /// Whether `name` (a weekday or month) is carried: by name, by its first three letters,
    /// or, a month, by an ISO date's number.
    fn has_name(&self, name: &str) -> bool {
        let month = MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1);
        self.names.contains(name)
            || self.names.contains(&name[..3.min(name.len())])
            || month.is_some_and(|m| self.months.contains(&m))
    }

    /// Whether `sentence`, said after the turn's calls, states something these do not
    /// carry: a number, a time, a weekday or month, or a state of the home when nothing
    /// read one (or the other side of one a result read: "locked" when it read "unlocked").
    pub(super) fn lacks(&self, sentence: &str, request: &str, subjects: &HashSet<String>) -> bool {
        let t = tokens(sentence);
        if is_question(sentence) {
            return false;
        }
        let number_lacking = numbers(&t).into_iter().any(|f| {
            !offered(&t, &f)
                && match f.num {
                    Num::Value(v) => !v.iter().any(|x| self.has_value(*x)),
                    Num::Time { hour, minute, pm } => !self.has_time(hour, minute, pm),
                }
        });
        let clock_lacking = said_clock_word(&t) && self.times.is_empty();
        let date_lacking = date_names(&t).iter().any(|n| !self.has_name(n));
        let state_lacking = home_states(&t, &tokens(request), subjects)
            .iter()
            .any(|s| !self.carries_state(s));
        number_lacking || clock_lacking || date_lacking || state_lacking
    }

    /// A state the results read: its side when they read one of its pair, else any reading.
    fn carries_state(&self, state: &str) -> bool {
        if self.words.contains(state) {
            return true;
        }
        match SIDES.iter().find(|side| side.contains(&state)) {
            // the other side was read: "locked" when the result says "unlocked"
            Some(side) if side.iter().any(|s| self.words.contains(*s)) => false,
            // an action's state: the call did it, its confirmation says so
            Some(_) => true,
            None => self.reads,
        }
    }
}

/// The months of ISO dates in `text` ("2026-11-22" → 11).
fn iso_months(text: &str) -> Vec<u32> {
    let b = text.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    (0..b.len().saturating_sub(9))
        .filter(|&i| {
            digits(&b[i..i + 4])
                && b[i + 4] == b'-'
                && digits(&b[i + 5..i + 7])
                && b[i + 7] == b'-'
                && digits(&b[i + 8..i + 10])
        })
        .filter_map(|i| std::str::from_utf8(&b[i + 5..i + 7]).ok()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> HashSet<String> {
        HashSet::new()
    }

    fn reading(sentence: &str, request: &str) -> bool {
        states_reading(sentence, request, &none())
    }

    fn lacks(results: &[&str], sentence: &str, request: &str) -> bool {
        let mut carried = Carried::default();
        for r in results {
            carried.result(r);
        }
        carried.said(request);
        carried.lacks(sentence, request, &none())
    }

    #[test]
    fn tokens_keep_numbers_times_and_units_whole() {
        assert_eq!(
            tokens("It's 21,5 °C at 10:00 a.m., 40% — twenty-two."),
            ["it", "is", "21,5", "°", "c", "at", "10:00", "am", "40", "%", "twenty", "two"]
        );
        assert_eq!(digit_values("21,5"), [21.5]);
        assert_eq!(digit_values("1,500"), [1.5, 1500.0]);
        assert_eq!(digit_values("21.5"), [21.5]);
    }

    #[test]
    fn numbers_in_digits_and_words_and_times() {
        let n = |s: &str| -> Vec<Num> { numbers(&tokens(s)).into_iter().map(|f| f.num).collect() };
        assert_eq!(n("twenty-two degrees"), [Num::Value(vec![22.0])]);
        assert_eq!(n("a hundred and five"), [Num::Value(vec![105.0])]);
        assert_eq!(n("one hundred and five"), [Num::Value(vec![105.0])]);
        assert_eq!(n("twenty one point five"), [Num::Value(vec![21.5])]);
        assert_eq!(n("the one in the kitchen"), []);
        assert_eq!(n("one degree"), [Num::Value(vec![1.0])]);
        assert_eq!(
            n("10:00 AM"),
            [Num::Time {
                hour: 10,
                minute: Some(0),
                pm: Some(false)
            }]
        );
        assert_eq!(
            n("ten o'clock"),
            [Num::Time {
                hour: 10,
                minute: None,
                pm: None
            }]
        );
        assert_eq!(
            n("June 3rd, 2026"),
            [Num::Value(vec![3.0]), Num::Value(vec![2026.0])]
        );
    }

    #[test]
    fn invented_readings_before_a_call_are_readings() {
        for (sentence, request) in [
            (
                "The temperature in the bedroom is 22 degrees Celsius.",
                "What is the temperature in the bedroom?",
            ),
            ("It is 10 degrees Celsius.", "How warm is it in the office?"),
            (
                "The bathroom is currently cold.",
                "Is it cold in the bathroom right now?",
            ),
            ("It's cold.", "Is it cold in the bathroom right now?"),
            (
                "The current time is 10:00 AM and the temperature is 22.",
                "What time is it and how warm is it in the kitchen?",
            ),
            ("It's ten o'clock.", "what time is it"),
            ("It is noon.", "what time is it"),
            ("Today is Monday.", "what day is it"),
            ("It's June 3rd.", "what's the date"),
            ("The humidity is at 40.", "how humid is it"),
            (
                "The kitchen is at twenty-two percent.",
                "how bright is the kitchen",
            ),
            ("The window is open.", "is the window open"),
            ("Yes.", "Is the front door locked?"),
            ("No, it isn't.", "is it cold in the bedroom"),
            (
                "I can confirm the thermostat is at 21 degrees.",
                "thermostat?",
            ),
            ("It's 21,5 °C inside.", "how warm is it"),
            // a time is never an offer (espeak-ng session, 2026-11-27, heard "What time is
            // it to help?")
            ("You can call me at 10:00 AM.", "What time is it to help?"),
            ("I can tell you it's 7 PM.", "what time is it"),
            (
                "The light in the kitchen is dimmer than the light in the living room.",
                "is the mag more light.",
            ),
            // the question's own state said back
            (
                "The kitchen fan is not spinning.",
                "is the kitchen fan spinning",
            ),
        ] {
            assert!(reading(sentence, request), "{sentence} / {request}");
        }
        // of a tool's subject (flite session, 2026-11-29: "running" heard "rounding")
        let timer = HashSet::from(["timer".to_string()]);
        assert!(states_reading(
            "The egg timer is not rounding.",
            "is the egg timer rounding,",
            &timer
        ));
        assert!(!states_reading(
            "The film is not boring.",
            "is the film boring",
            &timer
        ));
    }

    #[test]
    fn answers_that_state_no_reading_are_not_readings() {
        for (sentence, request) in [
            ("You're welcome!", "thanks"),
            ("Why did the lamp smile? It was lit.", "tell me a joke"),
            ("I can turn lights on and off.", "what can you do"),
            (
                "You can turn on the kitchen light, set the thermostat to 21.5 degrees, and lock the front door.",
                "What can you do?",
            ),
            ("You could set it to 40 percent.", "how bright"),
            ("Would you like it at 22 degrees?", "make it warm"),
            ("It is a lovely day.", "hello"),
            ("It's up to you.", "should I"),
            ("I'm sorry you're cold.", "I am cold"),
            ("You are warm.", "am I warm"),
            ("I will remind you in 5 minutes.", "remind me"),
            ("Answer 3.", "question 3"),
            ("One.", "first question"),
            ("Yes, I can.", "can you dim lights?"),
            ("Yes, I do.", "do you like music?"),
            ("Have a nice Monday!", "bye"),
            ("Sure, maybe later.", "is it late"),
            ("2 plus 2 is 4.", "what is 2 plus 2?"),
            ("It is 3 of them.", "tell me a story"),
        ] {
            assert!(!reading(sentence, request), "{sentence} / {request}");
        }
    }

    #[test]
    fn a_bare_number_given_as_what_was_asked_for_is_a_reading() {
        // a misheard question ("What's the thermostat set to?"), answered with a number
        for (sentence, request) in [
            (
                "The verma stats set to is 100.",
                "What's the verma stats set to?",
            ),
            ("It is at 5.", "what level is the fan at"),
            ("The fan speed is 3.", "How fast is the fan?"),
        ] {
            assert!(reading(sentence, request), "{sentence} / {request}");
        }
    }

    #[test]
    fn after_calls_what_the_results_carry_may_be_said() {
        for (results, sentence, request) in [
            (
                &["thermostat 21 degrees"][..],
                "The thermostat is at 21 degrees.",
                "thermostat?",
            ),
            (&["21,5"], "It is 21.5 degrees.", "how warm is it"),
            (
                &["10:00"],
                "The current time is 10:00 AM.",
                "what time is it",
            ),
            (&["2:05 PM"], "It's 14:05.", "what time is it"),
            (
                &["14:05"],
                "It's five past two, 2:05 PM.",
                "what time is it",
            ),
            (&["14:00"], "It's 2 PM.", "time?"),
            (
                &["Sunday, 22 November 2026"],
                "Today is Sunday, November 22nd, 2026.",
                "date?",
            ),
            (&["2026-11-22"], "It is November 22.", "date?"),
            (
                &[r#"{"unread": 3}"#],
                "You have three unread mails.",
                "mail?",
            ),
            (
                &["ok"],
                "The kitchen light is at 40 percent.",
                "dim the kitchen to 40",
            ),
            (
                &["bathroom 15 degrees"],
                "The bathroom is cold.",
                "is it cold in the bathroom",
            ),
            (
                &["front unlocked"],
                "The front door is unlocked.",
                "is the front door locked",
            ),
            (&["ok"], "The front door is locked.", "lock the front door"),
            (&["18"], "Would you like it at 21 degrees?", "warm?"),
            (&["18"], "You could set it to 21 degrees.", "warm?"),
            (&["anything"], "You're welcome!", "thanks"),
        ] {
            assert!(
                !lacks(results, sentence, request),
                "{sentence} after {results:?}"
            );
        }
    }

    #[test]
    fn after_calls_what_no_result_carries_is_lacking() {
        for (results, sentence, request) in [
            (
                &["10:00 AM"][..],
                "The current time is 10:00 AM and the temperature is 22 degrees.",
                "What time is it and how warm is it in the kitchen?",
            ),
            (
                &["thermostat 21 degrees"],
                "It's twenty-two degrees.",
                "how warm is it",
            ),
            (&["kitchen light on"], "It's 10:30.", "what time is it"),
            (&["10:00"], "It's 10:30.", "what time is it"),
            (&["2:05 PM"], "It's 2:05 AM.", "what time is it"),
            (&["kitchen light on"], "It's noon.", "lights"),
            (
                &["Sunday, 22 November 2026"],
                "Today is Monday.",
                "what day is it",
            ),
            (
                &["kitchen light on"],
                "The bathroom is cold.",
                "is it cold in the bathroom",
            ),
            (
                &["front unlocked"],
                "The front door is locked.",
                "is the front door locked",
            ),
        ] {
            assert!(
                lacks(results, sentence, request),
                "{sentence} after {results:?}"
            );
        }
    }
}
