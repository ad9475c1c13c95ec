//! The house's phrase set: every request the local intents answer, as sentence forms whose
//! slots keep their vocabulary unexpanded (five rooms and a hundred levels stay 5 + 101
//! entries of a form, not 505 sentences). It is what a recogniser held to what the house
//! understands decodes against, and what `hearth phrases` prints and samples.
//!
//! Built from the loaded tools' intents (their own sentences and those their schemas imply),
//! so it follows the tools: a registry rebuilt when a provider registers has a new one; the
//! stop words join it as fixed phrases. The follow-ups ("and the bedroom too", "turn it off
//! again": parts of these forms said after a turn) are forms of it too, marked. A number
//! slot lists the parameter's own range in every form, also where the form names another
//! unit ("… 22 f" is drawn, though 22 °F is below a 10–30 °C thermostat's range).

use std::collections::HashSet;
use std::fmt;

use hearth_phrases::Grammar;

use super::slot::Vocabulary;

/// The units a length is said in, for a recogniser's grammar.
const UNITS: [&str; 6] = ["second", "seconds", "minute", "minutes", "hour", "hours"];

/// How a time of day says its half, for a recogniser's grammar.
const HALVES: [&str; 2] = ["am", "pm"];

/// Lengths said without a number in digits (whisper writes "for one hour" in words).
const LENGTHS: [&str; 10] = [
    "a second",
    "a minute",
    "an hour",
    "one second",
    "one minute",
    "one hour",
    "half a minute",
    "half an hour",
    "a minute and a half",
    "an hour and a half",
];

/// One part of a sentence form.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A word said as it is.
    Word(String),
    /// A slot: a value of the tool's parameter `param`, said as `takes` lists.
    Slot { param: String, takes: Vocabulary },
}

/// One sentence form: its words and slots, where it comes from (a tool's name), and whether
/// it is a follow-up (understood only after a turn whose calls it refers to).
#[derive(Debug, Clone, PartialEq)]
pub struct PhraseForm {
    pub source: String,
    pub parts: Vec<Part>,
    pub follow_up: bool,
    /// Which call it makes: forms of one intent share it ("dim the {name} to
    /// {brightness}" and "brighten the {name} to {brightness}"), so that a recogniser may
    /// mend one into the other ([`hearth_phrases::Grammar::calls`]); a fixed phrase's is
    /// its own.
    pub call: String,
}

/// How many sentences a set or a form stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Sentences of the forms whose slots are all listed (a number slot: each number once,
    /// in digits).
    pub sentences: u128,
    /// Forms with a slot that takes any words or any number: not counted in `sentences`.
    pub open_forms: usize,
}

/// The phrase set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhraseSet {
    forms: Vec<PhraseForm>,
    /// Sources of fixed phrases whose words decide which way something goes, besides the
    /// intents' way-deciding words (the answers' "yes" and "no").
    guarded: Vec<String>,
}

impl PhraseSet {
    pub fn new(forms: Vec<PhraseForm>) -> PhraseSet {
        PhraseSet {
            forms,
            guarded: Vec::new(),
        }
    }

    /// These and `phrases`, each a form of fixed words from `source`, their words guarded
    /// where no other form has them: a recogniser held to the set never writes one the open
    /// transcript lacks (the answers to a question: "Guess so." heard "S-S-O." is not made a
    /// "yes"; "do it" keeps its "do" guarded, not the "it" of "turn it off").
    pub(crate) fn and_guarded(mut self, source: &str, phrases: &[&str]) -> PhraseSet {
        self.guarded.push(source.to_string());
        self.and_fixed(source, phrases)
    }

    /// These and `phrases`, each a form of fixed words from `source` (the stop words).
    pub(crate) fn and_fixed(mut self, source: &str, phrases: &[&str]) -> PhraseSet {
        self.forms.extend(phrases.iter().map(|p| {
            PhraseForm {
                source: source.to_string(),
                parts: p
                    .split_whitespace()
                    .map(|w| Part::Word(w.to_string()))
                    .collect(),
                follow_up: false,
                call: format!("{source}: {p}"),
            }
        }));
        self
    }

    /// Its forms, tool by tool in the registry's order.
    pub fn forms(&self) -> &[PhraseForm] {
        &self.forms
    }

    /// How many sentences it stands for.
    pub fn count(&self) -> Count {
        self.forms.iter().fold(Count::default(), |mut c, f| {
            match f.sentences() {
                Some(n) => c.sentences = c.sentences.saturating_add(n),
                None => c.open_forms += 1,
            }
            c
        })
    }

    /// Its wire form for a recogniser: each distinct slot vocabulary one list, shared by the
    /// forms that use it. A slot that takes any number or one of some words is two forms.
    pub fn grammar(&self) -> Grammar {
        let mut lists: Vec<Vec<String>> = Vec::new();
        let mut list_of = |values: Vec<String>| -> String {
            let i = match lists.iter().position(|l| *l == values) {
                Some(i) => i,
                None => {
                    lists.push(values);
                    lists.len() - 1
                }
            };
            format!("{{{i}}}")
        };
        let mut forms = Vec::new();
        let mut call_keys: Vec<&str> = Vec::new();
        let mut calls = Vec::new();
        for form in self.forms.iter().filter(|f| !f.opens_at_once()) {
            // each part's ways of being written; a form is written once per combination
            let mut written = vec![String::new()];
            for part in &form.parts {
                let ways: Vec<String> = match part {
                    Part::Word(w) => vec![w.clone()],
                    Part::Slot { takes, .. } => match takes {
                        Vocabulary::Phrases(p) if p.is_empty() => Vec::new(),
                        Vocabulary::Phrases(p) => vec![list_of(p.clone())],
                        Vocabulary::Numbers { numbers, phrases } => {
                            let values: Vec<String> = numbers
                                .iter()
                                .map(|x| number(*x))
                                .chain(phrases.iter().cloned())
                                .collect();
                            if values.is_empty() {
                                Vec::new()
                            } else {
                                vec![list_of(values)]
                            }
                        }
                        Vocabulary::AnyNumber { phrases } if phrases.is_empty() => {
                            vec!["{number}".into()]
                        }
                        Vocabulary::AnyNumber { phrases } => {
                            vec!["{number}".into(), list_of(phrases.clone())]
                        }
                        Vocabulary::Words => vec!["{words}".into()],
                        Vocabulary::Length => {
                            let unit = list_of(UNITS.iter().map(|u| u.to_string()).collect());
                            let fixed = list_of(LENGTHS.iter().map(|l| l.to_string()).collect());
                            vec![
                                format!("{{number}} {unit}"),
                                format!("{{number}} {unit} {{number}} {unit}"),
                                format!("{{number}} {unit} and {{number}} {unit}"),
                                format!("{{number}} and a half {unit}"),
                                fixed,
                            ]
                        }
                        Vocabulary::Clock => {
                            let half = list_of(HALVES.iter().map(|u| u.to_string()).collect());
                            vec![
                                "{number}".into(),
                                format!("{{number}} {half}"),
                                "{number} {number}".into(),
                                format!("{{number}} {{number}} {half}"),
                                "{number} o'clock".into(),
                                "half past {number}".into(),
                                "quarter past {number}".into(),
                                "quarter to {number}".into(),
                                "noon".into(),
                                "midnight".into(),
                            ]
                        }
                    },
                };
                written = written
                    .iter()
                    .flat_map(|w| ways.iter().map(move |x| format!("{w} {x}")))
                    .collect();
            }
            let call = match call_keys.iter().position(|k| *k == form.call) {
                Some(i) => i,
                None => {
                    call_keys.push(&form.call);
                    call_keys.len() - 1
                }
            } as u32;
            for w in written {
                let w = w.trim().to_string();
                // (a form written twice in a row, by the same call, once)
                if forms.last() != Some(&w) || calls.last() != Some(&call) {
                    forms.push(w);
                    calls.push(call);
                }
            }
        }
        let ways: Vec<String> = super::derive::direction_words()
            .into_iter()
            .map(String::from)
            .collect();
        Grammar {
            lists,
            forms,
            guarded: ways.iter().cloned().chain(self.own_guarded()).collect(),
            ways,
            calls,
            ..Grammar::default()
        }
    }

    /// The words of [`PhraseSet::and_guarded`]'s phrases that no other form has.
    fn own_guarded(&self) -> Vec<String> {
        let guarded = |f: &&PhraseForm| self.guarded.contains(&f.source);
        let forms = self.forms.iter();
        let elsewhere: HashSet<&str> = forms
            .clone()
            .filter(|f| !guarded(f))
            .flat_map(PhraseForm::words)
            .collect();
        let mut out: Vec<String> = Vec::new();
        for w in forms.filter(guarded).flat_map(PhraseForm::words) {
            if !elsewhere.contains(w) && !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
        out
    }

    /// `n` requests drawn from it (a form at random, then each slot's value at random;
    /// follow-ups left out, as they need a turn before them), with their forms' sources;
    /// the same `seed` draws the same sentences. A slot that takes any words is said as `…`.
    pub fn sample(&self, n: usize, seed: u64) -> Vec<(&str, String)> {
        let mut rng = XorShift::new(seed);
        let requests: Vec<&PhraseForm> = self.forms.iter().filter(|f| !f.follow_up).collect();
        if requests.is_empty() {
            return Vec::new();
        }
        (0..n)
            .map(|_| {
                let form = requests[rng.below(requests.len())];
                (form.source.as_str(), form.say(&mut rng))
            })
            .collect()
    }
}

impl PhraseForm {
    /// Whether any words may follow its first word ("(set|start) {name} timer for {length}",
    /// for "set roast timer" with whisper's article dropped). Such a form is left out of the
    /// recogniser's grammar: nearly any transcript that begins with the word would be a
    /// request of the set, and the phrase pass would spend its steps there instead of on the
    /// mends it makes ("Set it past a timer" → "Set a pasta timer": not found in 60 steps
    /// with it, in 38 without). The intents still understand it.
    fn opens_at_once(&self) -> bool {
        matches!(
            self.parts.as_slice(),
            [
                Part::Word(_),
                Part::Slot {
                    takes: Vocabulary::Words,
                    ..
                },
                ..
            ]
        )
    }

    /// Its fixed words (not its slots).
    fn words(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Word(w) => Some(w.as_str()),
            Part::Slot { .. } => None,
        })
    }

    /// The sentences it stands for, or `None` when a slot takes any words or any number.
    pub fn sentences(&self) -> Option<u128> {
        self.parts.iter().try_fold(1u128, |n, p| {
            let k = match p {
                Part::Word(_) => 1,
                Part::Slot { takes, .. } => match takes {
                    Vocabulary::Phrases(p) => p.len(),
                    Vocabulary::Numbers { numbers, phrases } => numbers.len() + phrases.len(),
                    Vocabulary::AnyNumber { .. }
                    | Vocabulary::Words
                    | Vocabulary::Length
                    | Vocabulary::Clock => return None,
                },
            };
            Some(n.saturating_mul(k as u128))
        })
    }

    /// One sentence of the form, its slots' values drawn from `rng`.
    fn say(&self, rng: &mut XorShift) -> String {
        let words: Vec<String> = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Word(w) => w.clone(),
                Part::Slot { takes, .. } => match takes {
                    Vocabulary::Phrases(p) => pick(p, rng).unwrap_or_default(),
                    Vocabulary::Numbers { numbers, phrases } => {
                        let k = rng.below(numbers.len() + phrases.len());
                        match numbers.get(k) {
                            Some(x) => number(*x),
                            None => phrases[k - numbers.len()].clone(),
                        }
                    }
                    Vocabulary::AnyNumber { .. } => number(rng.below(101) as f64),
                    Vocabulary::Words => "…".to_string(),
                    Vocabulary::Length => format!("{} minutes", number(1.0 + rng.below(59) as f64)),
                    Vocabulary::Clock => format!("{} am", number(1.0 + rng.below(12) as f64)),
                },
            })
            .collect();
        words.join(" ")
    }
}

/// The form with each slot as what it takes: `turn on the {room: kitchen | living room}
/// light`, `{level: 0–100}`, `{name: …}`.
impl fmt::Display for PhraseForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match p {
                Part::Word(w) => f.write_str(w)?,
                Part::Slot { param, takes } => {
                    let listed = match takes {
                        Vocabulary::Phrases(p) => p.join(" | "),
                        Vocabulary::Numbers { numbers, phrases } => {
                            let range = match (numbers.first(), numbers.last()) {
                                (Some(a), Some(b)) if numbers.len() > 2 => {
                                    format!("{}–{}", number(*a), number(*b))
                                }
                                _ => numbers
                                    .iter()
                                    .map(|x| number(*x))
                                    .collect::<Vec<_>>()
                                    .join(" | "),
                            };
                            std::iter::once(range)
                                .chain(phrases.iter().cloned())
                                .collect::<Vec<_>>()
                                .join(" | ")
                        }
                        Vocabulary::AnyNumber { phrases } => std::iter::once("any number".into())
                            .chain(phrases.iter().cloned())
                            .collect::<Vec<String>>()
                            .join(" | "),
                        Vocabulary::Words => "…".into(),
                        Vocabulary::Length => "a length of time".into(),
                        Vocabulary::Clock => "a time of day".into(),
                    };
                    write!(f, "{{{param}: {listed}}}")?;
                }
            }
        }
        Ok(())
    }
}

fn pick(items: &[String], rng: &mut XorShift) -> Option<String> {
    (!items.is_empty()).then(|| items[rng.below(items.len())].clone())
}

/// A number as a transcript writes it: "21", "21.5".
fn number(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// A small deterministic generator for samples (xorshift64*): the same seed, the same draw.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        XorShift(seed.max(1))
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        if n == 0 {
            0
        } else {
            (x % n as u64) as usize
        }
    }
}
