//! What a `{param}` slot takes, from the parameter's JSON Schema, and the values it reads
//! from a request's words.

use std::collections::BTreeMap;

use serde_json::Value;

use super::normalize::{self, Word};
use super::numbers::{self, MAX_NUMBER_WORDS};

/// A phrase a slot takes and the value it stands for.
#[derive(Debug, Clone)]
struct Phrase {
    /// Its words' keys.
    words: Vec<String>,
    /// Its words run together ("livingroom"): how near misses are compared.
    joined: String,
    value: Value,
}

/// What a slot takes, listed for a recogniser: the house's words for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Vocabulary {
    /// One of these phrases (an enum's values and synonyms, a boolean's words).
    Phrases(Vec<String>),
    /// One of these numbers (in digits or words), or one of the phrases.
    Numbers {
        numbers: Vec<f64>,
        phrases: Vec<String>,
    },
    /// Any number (the schema bounds it on no side, or allows more than
    /// [`MAX_NUMBERS`]), or one of the phrases.
    AnyNumber { phrases: Vec<String> },
    /// Any words (a string without an enum).
    Words,
    /// A length of time as said ("ten minutes", "an hour and a half"): a string of
    /// `"format": "length"`.
    Length,
    /// A time of day as said ("7 am", "half past six"): a string of `"format": "clock"`.
    Clock,
}

/// The most numbers a slot's vocabulary lists one by one.
pub(crate) const MAX_NUMBERS: usize = 1001;

/// What a slot takes besides its phrases.
#[derive(Debug, Clone)]
enum Open {
    /// Nothing: only the phrases (an enum, a boolean).
    Closed,
    /// A number the parameter accepts.
    Number(Accepts),
    /// One or more words, as said (a string without an enum).
    Words,
    /// A length of time or a time of day, given as hearth says it back ("1 hour and 30
    /// minutes", "7:00 AM").
    Said(Reading),
}

/// What a string slot reads from the words said, beyond words: its `"format"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// `"format": "length"`: a length of time ([`super::parse_length`]).
    Length,
    /// `"format": "clock"`: a time of day ([`super::parse_clock`]).
    Clock,
}

/// The most words a length or a time said takes ("one hour thirty minutes and forty five
/// seconds").
const MAX_READING_WORDS: usize = 12;

impl Reading {
    /// The reading a string parameter's schema asks for, if any.
    pub(super) fn of(schema: &Value) -> Option<Reading> {
        match schema.get("format").and_then(Value::as_str) {
            Some("length") => Some(Reading::Length),
            Some("clock") => Some(Reading::Clock),
            _ => None,
        }
    }

    /// `text` read whole, as hearth says it back; `None` when it is not one.
    pub(super) fn read(self, text: &str) -> Option<String> {
        match self {
            Reading::Length => super::parse_length(text).map(super::say_length),
            Reading::Clock => super::parse_clock(text).map(super::Clock::say),
        }
    }

    /// Every reading `words` give from their start: how many words, and what they say.
    pub(super) fn at(self, words: &[Word]) -> Vec<(usize, String)> {
        let mut said = String::new();
        let mut out = Vec::new();
        for (k, w) in words.iter().take(MAX_READING_WORDS).enumerate() {
            if k > 0 {
                said.push(' ');
            }
            said.push_str(&w.key);
            if let Some(v) = self.read(&said) {
                out.push((k + 1, v));
            }
        }
        out
    }
}

/// One parameter's slot.
#[derive(Debug, Clone)]
pub(super) struct Slot {
    phrases: Vec<Phrase>,
    /// Whether a phrase also matches said without its spaces or with a plural "s" (string
    /// enums).
    near: bool,
    /// The longest phrase, run together, in bytes.
    longest: usize,
    open: Open,
}

/// Why a parameter cannot be a slot, or a value is not one it accepts.
#[derive(Debug)]
pub(super) enum SlotProblem {
    /// A type a slot cannot take (object, array, none).
    Unslottable(String),
    /// A boolean whose `slots` table is empty.
    NoWords,
    /// A phrase with no words.
    EmptyPhrase(String),
    /// A value the schema would not accept: what it expects.
    BadValue(Value, String),
}

/// The parameter's type: `"type"`, or the one type besides "null" of a list, or "string"
/// for an enum of strings without a type.
pub(super) fn kind(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => {
            let mut real = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            match (real.next(), real.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        }
        None => {
            let values = schema.get("enum").and_then(Value::as_array)?;
            values.iter().all(Value::is_string).then_some("string")
        }
        Some(_) => None,
    }
}

impl Slot {
    /// The slot of a parameter with this `schema`, taking the `extra` phrases too.
    pub(super) fn new(
        schema: &Value,
        extra: Option<&BTreeMap<String, Value>>,
    ) -> Result<Slot, SlotProblem> {
        let mut phrases = Vec::new();
        for (said, value) in extra.into_iter().flatten() {
            accepts(schema, value)?;
            phrases.push(phrase(said, value.clone())?);
        }
        let kind = kind(schema);
        let open = match kind {
            Some("boolean") => boolean(&mut phrases, extra)?,
            Some("string") => string(&mut phrases, schema)?,
            Some("number" | "integer") => Open::Number(Accepts::new(schema)),
            other => {
                return Err(SlotProblem::Unslottable(
                    other.unwrap_or("untyped").to_string(),
                ))
            }
        };
        let longest = phrases.iter().map(|p| p.joined.len()).max().unwrap_or(0);
        Ok(Slot {
            near: kind == Some("string") && matches!(open, Open::Closed),
            phrases,
            longest,
            open,
        })
    }

    /// What it takes, as a recogniser's vocabulary ([`Vocabulary`]).
    pub(super) fn vocabulary(&self) -> Vocabulary {
        let mut phrases: Vec<String> = Vec::new();
        for p in &self.phrases {
            let said = p.words.join(" ");
            if !phrases.contains(&said) {
                phrases.push(said);
            }
        }
        match &self.open {
            Open::Closed => Vocabulary::Phrases(phrases),
            Open::Words => Vocabulary::Words,
            Open::Said(Reading::Length) => Vocabulary::Length,
            Open::Said(Reading::Clock) => Vocabulary::Clock,
            Open::Number(accepts) => match accepts.values() {
                Some(numbers) => Vocabulary::Numbers { numbers, phrases },
                None => Vocabulary::AnyNumber { phrases },
            },
        }
    }

    /// How `value` is said in this slot: its first phrase, else the number or the words
    /// themselves when the slot takes them; `None` when the slot cannot say it.
    pub(super) fn said_as(&self, value: &Value) -> Option<String> {
        if let Some(p) = self.phrases.iter().find(|p| p.value == *value) {
            return Some(p.words.join(" "));
        }
        match (&self.open, value) {
            (Open::Number(accepts), Value::Number(n)) => {
                let x = n.as_f64().filter(|&x| accepts.number(x))?;
                Some(number_value(x).to_string())
            }
            (Open::Said(_) | Open::Words, Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// Whether it takes any words (a string without an enum).
    pub(super) fn is_free(&self) -> bool {
        matches!(self.open, Open::Words)
    }

    /// Each way the slot can take words from the start of `words`: how many, and the value.
    pub(super) fn values(&self, words: &[Word]) -> Vec<(usize, Value)> {
        let mut out = self.phrase_values(words);
        match &self.open {
            Open::Closed => {}
            Open::Number(accepts) => {
                for k in 1..=words.len().min(MAX_NUMBER_WORDS) {
                    let x = numbers::number(&words[..k]).filter(|&x| accepts.number(x));
                    if let Some(x) = x.filter(|_| !out.iter().any(|(n, _)| *n == k)) {
                        out.push((k, number_value(x)));
                    }
                }
            }
            Open::Said(reading) => {
                for (k, v) in reading.at(words) {
                    if !out.iter().any(|(n, _)| *n == k) {
                        out.push((k, Value::String(v)));
                    }
                }
            }
            Open::Words => {
                for k in 1..=words.len() {
                    let dangling = normalize::ARTICLES.contains(&words[k - 1].key.as_str());
                    if !dangling && !out.iter().any(|(n, _)| *n == k) {
                        let said: Vec<&str> = words[..k].iter().map(|w| w.said.as_str()).collect();
                        out.push((k, Value::String(said.join(" "))));
                    }
                }
            }
        }
        out
    }

    /// The phrases said at the start of `words`: exactly, or (for string enums) without
    /// their spaces or with a plural "s".
    fn phrase_values(&self, words: &[Word]) -> Vec<(usize, Value)> {
        let mut out: Vec<(usize, Value)> = Vec::new();
        let mut joined = String::new();
        for (k, word) in words.iter().enumerate() {
            joined.push_str(&word.key);
            if joined.len() > self.longest + 1 {
                break;
            }
            for p in &self.phrases {
                let exact =
                    p.words.len() == k + 1 && p.words.iter().zip(words).all(|(a, b)| *a == b.key);
                let near = self.near
                    && (joined == p.joined || joined.strip_suffix('s') == Some(p.joined.as_str()));
                let seen = out.iter().any(|(n, v)| *n == k + 1 && *v == p.value);
                if (exact || near) && !seen {
                    out.push((k + 1, p.value.clone()));
                }
            }
        }
        out
    }
}

/// A boolean's phrases: the `slots` table's, else "on" and "off".
fn boolean(
    phrases: &mut Vec<Phrase>,
    extra: Option<&BTreeMap<String, Value>>,
) -> Result<Open, SlotProblem> {
    match extra {
        Some(table) if table.is_empty() => Err(SlotProblem::NoWords),
        Some(_) => Ok(Open::Closed),
        None => {
            phrases.push(phrase("on", Value::Bool(true))?);
            phrases.push(phrase("off", Value::Bool(false))?);
            Ok(Open::Closed)
        }
    }
}

/// A string's phrases: its enum's values, if it has one; else it takes what its format
/// reads ([`Reading`]: a length of time, a time of day) or any words.
fn string(phrases: &mut Vec<Phrase>, schema: &Value) -> Result<Open, SlotProblem> {
    let Some(values) = schema.get("enum").and_then(Value::as_array) else {
        return Ok(Reading::of(schema).map_or(Open::Words, Open::Said));
    };
    for v in values {
        let Some(s) = v.as_str() else {
            return Err(SlotProblem::BadValue(
                v.clone(),
                "a slot takes an enum of strings".into(),
            ));
        };
        phrases.push(phrase(s, v.clone())?);
    }
    Ok(Open::Closed)
}

fn phrase(said: &str, value: Value) -> Result<Phrase, SlotProblem> {
    let words = normalize::keys(said);
    if words.is_empty() {
        return Err(SlotProblem::EmptyPhrase(said.to_string()));
    }
    Ok(Phrase {
        joined: words.concat(),
        words,
        value,
    })
}

/// A number as JSON: whole numbers as integers (21, not 21.0).
fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// The numbers a parameter accepts: whole for an integer, within its bounds, one of its
/// enum if it has one.
#[derive(Debug, Clone, Default)]
struct Accepts {
    integer: bool,
    /// A bound and whether it is exclusive.
    min: Option<(f64, bool)>,
    max: Option<(f64, bool)>,
    one_of: Option<Vec<f64>>,
}

impl Accepts {
    /// The numbers it accepts one by one, when they are few enough: an `enum`'s, else
    /// whole numbers (and halves, for a `number`) between both bounds.
    fn values(&self) -> Option<Vec<f64>> {
        if let Some(listed) = &self.one_of {
            return Some(listed.iter().copied().filter(|x| self.number(*x)).collect());
        }
        let (low, high) = (self.min?.0, self.max?.0);
        let step = if self.integer { 1.0 } else { 0.5 };
        let first = (low / step).ceil() * step;
        let steps = ((high - first) / step).floor();
        if !(0.0..MAX_NUMBERS as f64).contains(&steps) {
            return None;
        }
        Some(
            (0..=steps as usize)
                .map(|i| first + i as f64 * step)
                .filter(|x| self.number(*x))
                .collect(),
        )
    }

    fn new(schema: &Value) -> Accepts {
        Accepts {
            integer: kind(schema) == Some("integer"),
            min: bound(schema, "minimum", "exclusiveMinimum"),
            max: bound(schema, "maximum", "exclusiveMaximum"),
            one_of: schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| e.iter().filter_map(Value::as_f64).collect()),
        }
    }

    fn number(&self, x: f64) -> bool {
        let whole = !self.integer || x.fract() == 0.0;
        let above = self
            .min
            .is_none_or(|(m, exclusive)| if exclusive { x > m } else { x >= m });
        let below = self
            .max
            .is_none_or(|(m, exclusive)| if exclusive { x < m } else { x <= m });
        let listed = self.one_of.as_ref().is_none_or(|e| e.contains(&x));
        x.is_finite() && whole && above && below && listed
    }
}

/// A bound: `exclusive` as a number (JSON Schema 2019+), else `inclusive`, exclusive when
/// `exclusive` is `true` (draft 4).
fn bound(schema: &Value, inclusive: &str, exclusive: &str) -> Option<(f64, bool)> {
    match schema.get(exclusive) {
        Some(Value::Number(n)) => n.as_f64().map(|x| (x, true)),
        Some(Value::Bool(true)) => schema.get(inclusive)?.as_f64().map(|x| (x, true)),
        _ => schema.get(inclusive)?.as_f64().map(|x| (x, false)),
    }
}

/// Whether the parameter's `schema` would accept `value` (its type, enum and bounds).
pub(super) fn accepts(schema: &Value, value: &Value) -> Result<(), SlotProblem> {
    let fits = match kind(schema) {
        Some("boolean") => value.is_boolean(),
        Some("string") => value.is_string(),
        Some("integer" | "number") => value
            .as_f64()
            .is_some_and(|x| Accepts::new(schema).number(x)),
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        _ => true,
    };
    let listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|e| e.contains(value));
    if fits && listed {
        return Ok(());
    }
    Err(SlotProblem::BadValue(value.clone(), expected(schema)))
}

/// What a schema accepts, in words: "one of \"a\", \"b\"", "an integer from 0 to 100".
fn expected(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", listed.join(", "));
    }
    let kind = kind(schema).unwrap_or("value");
    let a = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let mut out = format!("{a} {kind}");
    for (key, word) in [
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ] {
        if let Some(x) = schema.get(key).filter(|x| x.is_number()) {
            out.push_str(&format!(" {word} {x}"));
        }
    }
    out
}
