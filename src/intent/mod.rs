//! Local intents: sentences a tool manifest declares, matched before the model is asked.
//!
//! A household's commands are mostly a few shapes ("turn on the kitchen light", "lock the
//! front door", "set the thermostat to 21"). A request that one of a tool's templates
//! matches *completely* and *unambiguously* becomes that tool's call at once: no LLM hop,
//! an answer within milliseconds, and no chance for a small model to answer "done" without
//! doing it. Anything else goes to the model. When in doubt, nothing matches: a wrong match
//! could unlock a door.
//!
//! ```toml
//! [[tool.intent]]
//! sentences = ["(turn|switch) {on} [the] {room} light[s]", "(turn|switch) [the] {room} light[s] {on}"]
//! slots.room = { lounge = "living room" }   # more words for a value (optional)
//!
//! [[tool.intent]]
//! sentences = ["unlock [the] {door} door"]
//! args = { locked = false }                 # fixed arguments of this intent
//! ```
//!
//! **Templates.** Words; `(a|b c)` one of the alternatives; `[x]` or `[a|b]` a part that may
//! be left out; brackets may touch a word (`light[s]`: "light" or "lights"); `{param}` a slot
//! that takes a value of the tool's parameter `param`. A template expands to at most
//! [`template::MAX_FORMS`] sentences.
//!
//! **Slots** take their values from the parameter's JSON Schema:
//! - a string with an `enum`: its values ("living room" is two words), and the phrases
//!   `slots.<param>` adds. Said without the space ("livingroom", "bed room" for "bedroom")
//!   or with a plural `s`, a value still matches; nothing looser;
//! - a boolean: the words of `slots.<param>` (`{ on = true, off = false }` when not given);
//! - a number or integer: digits ("21", "21.5") or words ("twenty one", "a hundred",
//!   "twenty one point five", "twenty and a half"); an integer must be whole, and
//!   `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` hold;
//! - a string without `enum`: one or more words, whatever was said there.
//!
//! **Matching.** The transcript is lower-cased, punctuation dropped (a decimal point stays),
//! hyphens split, "°C" read as "degrees" and "%" as "percent", and words that carry no
//! command dropped from its ends ("please", "can you", "thanks", …). It must then be one of
//! a template's sentences, every word of it; every required parameter must get a value
//! (from a slot or `args`). All templates of all tools are tried: exactly one distinct call
//! must come out, else nothing matches. Words are whole words: "unlock" never matches
//! "lock".
//!
//! **Two commands in one.** A request that does not match as a whole is cut at "and",
//! "then", "also" and at punctuation, and every part must match on its own. A part that
//! does not is tried with the first words of the part before it ("turn on the kitchen light
//! and the bedroom light" → "turn on" + "the bedroom light") or the last words of the part
//! after it ("switch on the kitchen and the bedroom lights" → "switch on the kitchen" +
//! "lights"), the fewest borrowed words first. If one part matches nothing, nothing does.
//! The same call twice in one request is made once.

mod template;
mod text;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use template::Token;
use text::Piece;

/// The most words a request may have for intents to try it.
pub const MAX_WORDS: usize = 40;

/// One `[[tool.intent]]` table of a manifest.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentSpec {
    /// Sentence templates.
    pub sentences: Vec<String>,
    /// Fixed arguments this intent adds to every call it makes.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Per parameter, more phrases and the value each stands for.
    #[serde(default)]
    pub slots: BTreeMap<String, BTreeMap<String, Value>>,
}

/// A call a request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct IntentCall {
    pub tool: String,
    /// A JSON object.
    pub arguments: Value,
}

/// Why a tool's intents do not compile; each names the tool, the sentence or key, and the
/// fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntentError {
    #[error("tool {tool:?}: intent sentence {sentence:?}: {problem}")]
    Sentence {
        tool: String,
        sentence: String,
        problem: String,
    },
    #[error("tool {tool:?}: an intent has no sentences: add `sentences = [\"…\"]`")]
    NoSentences { tool: String },
    #[error("tool {tool:?}: intent {place} names {name:?}, which is not a parameter of the tool: use one of {known}")]
    UnknownParameter {
        tool: String,
        place: String,
        name: String,
        known: String,
    },
    #[error("tool {tool:?}: parameter {param:?}: {problem}")]
    Parameter {
        tool: String,
        param: String,
        problem: String,
    },
    #[error("tool {tool:?}: intent sentence {sentence:?} gives no value for the required parameter {param:?}: add a {{{param}}} slot or set it in `args`")]
    Unbound {
        tool: String,
        sentence: String,
        param: String,
    },
}

/// A parameter and the value a slot gave it.
type Binding = (String, Value);

/// What a slot takes.
#[derive(Debug, Clone)]
enum Slot {
    /// Phrases (as words) and the value each stands for.
    Phrases(Vec<(Vec<String>, Value)>),
    /// A number, within bounds.
    Number(NumberRange),
    /// One or more words, as said.
    Words,
}

#[derive(Debug, Clone, Default)]
struct NumberRange {
    integer: bool,
    min: Option<(f64, bool)>,
    max: Option<(f64, bool)>,
}

impl NumberRange {
    fn admits(&self, x: f64) -> bool {
        let whole = !self.integer || x.fract() == 0.0;
        let above = self
            .min
            .is_none_or(|(m, exclusive)| if exclusive { x > m } else { x >= m });
        let below = self
            .max
            .is_none_or(|(m, exclusive)| if exclusive { x < m } else { x <= m });
        whole && above && below
    }
}

/// One expanded sentence of an intent, with what its call is built from.
#[derive(Debug, Clone)]
struct Form {
    tokens: Vec<Token>,
    /// Index into the tool's intents (for their fixed `args` and slots).
    intent: usize,
}

/// One compiled intent of a tool.
#[derive(Debug, Clone)]
struct Compiled {
    args: Map<String, Value>,
    slots: BTreeMap<String, Slot>,
}

/// One tool's compiled intents.
#[derive(Debug, Clone)]
pub struct ToolIntents {
    tool: String,
    /// The parameters in schema order: a call's arguments are written in it, as a model
    /// writes them.
    order: Vec<String>,
    intents: Vec<Compiled>,
    forms: Vec<Form>,
}

impl ToolIntents {
    /// Compile a tool's `[[tool.intent]]` tables against its parameters' JSON Schema.
    pub fn compile(
        tool: &str,
        specs: &[IntentSpec],
        parameters: &Value,
    ) -> Result<ToolIntents, IntentError> {
        let properties = parameters
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let known = || {
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            if names.is_empty() {
                "none (the tool takes no parameters)".to_string()
            } else {
                names.join(", ")
            }
        };
        let unknown = |place: &str, name: &str| IntentError::UnknownParameter {
            tool: tool.into(),
            place: place.into(),
            name: name.into(),
            known: known(),
        };
        let mut out = ToolIntents {
            tool: tool.to_string(),
            order: properties.keys().cloned().collect(),
            intents: Vec::new(),
            forms: Vec::new(),
        };
        for spec in specs {
            if spec.sentences.is_empty() {
                return Err(IntentError::NoSentences { tool: tool.into() });
            }
            for (name, value) in &spec.args {
                let schema = properties.get(name).ok_or_else(|| unknown("args", name))?;
                check_value(tool, name, schema, value)?;
            }
            let mut slots = BTreeMap::new();
            for name in spec.slots.keys() {
                properties.get(name).ok_or_else(|| unknown("slots", name))?;
            }
            let index = out.intents.len();
            for sentence in &spec.sentences {
                let sentence_error = |problem: String| IntentError::Sentence {
                    tool: tool.into(),
                    sentence: sentence.clone(),
                    problem,
                };
                let forms = template::expand(sentence).map_err(sentence_error)?;
                for form in &forms {
                    for token in form {
                        let Token::Slot(name) = token else { continue };
                        let schema = properties.get(name).ok_or_else(|| {
                            unknown(&format!("sentence {sentence:?}: slot"), name)
                        })?;
                        if !slots.contains_key(name) {
                            let extra = spec.slots.get(name).cloned().unwrap_or_default();
                            slots.insert(name.clone(), slot(tool, name, schema, &extra)?);
                        }
                    }
                    let bound = |p: &String| {
                        spec.args.contains_key(p)
                            || form.iter().any(|t| *t == Token::Slot(p.clone()))
                    };
                    if let Some(param) = required.iter().find(|p| !bound(p)) {
                        return Err(IntentError::Unbound {
                            tool: tool.into(),
                            sentence: sentence.clone(),
                            param: param.clone(),
                        });
                    }
                }
                out.forms.extend(forms.into_iter().map(|tokens| Form {
                    tokens,
                    intent: index,
                }));
            }
            out.intents.push(Compiled {
                args: spec.args.clone(),
                slots,
            });
        }
        Ok(out)
    }

    /// The tool these intents call.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Every call a form of these intents makes of all of `words`.
    fn calls(&self, words: &[String], found: &mut Vec<IntentCall>) {
        for form in &self.forms {
            let intent = &self.intents[form.intent];
            let mut bound = Vec::new();
            match_form(&form.tokens, words, intent, &mut bound, &mut |bound| {
                let mut given = intent.args.clone();
                for (name, value) in bound {
                    given.insert(name.clone(), value.clone());
                }
                let mut args = Map::new();
                for name in &self.order {
                    if let Some(v) = given.remove(name) {
                        args.insert(name.clone(), v);
                    }
                }
                let call = IntentCall {
                    tool: self.tool.clone(),
                    arguments: Value::Object(args),
                };
                if !found.contains(&call) {
                    found.push(call);
                }
            });
        }
    }
}

/// What `schema` lets a slot take, with `extra` phrases.
fn slot(
    tool: &str,
    param: &str,
    schema: &Value,
    extra: &BTreeMap<String, Value>,
) -> Result<Slot, IntentError> {
    let problem = |problem: String| IntentError::Parameter {
        tool: tool.into(),
        param: param.into(),
        problem,
    };
    for value in extra.values() {
        check_value(tool, param, schema, value)?;
    }
    let mut phrases: Vec<(Vec<String>, Value)> = extra
        .iter()
        .map(|(said, v)| (text::words(said), v.clone()))
        .collect();
    if phrases.iter().any(|(w, _)| w.is_empty()) {
        return Err(problem("a phrase under `slots` has no words".into()));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => {
            if phrases.is_empty() {
                phrases = vec![(vec!["on".into()], Value::Bool(true)), (vec!["off".into()], Value::Bool(false))];
            }
            Ok(Slot::Phrases(phrases))
        }
        Some("string") => match schema.get("enum").and_then(Value::as_array) {
            Some(values) => {
                for v in values {
                    let Some(s) = v.as_str() else {
                        return Err(problem("its enum holds a value that is not a string: a slot takes string enums".into()));
                    };
                    phrases.push((text::words(s), v.clone()));
                }
                Ok(Slot::Phrases(phrases))
            }
            None => Ok(Slot::Words),
        },
        Some(kind @ ("number" | "integer")) => {
            let bound = |key: &str, exclusive: bool| schema.get(key).and_then(Value::as_f64).map(|x| (x, exclusive));
            Ok(Slot::Number(NumberRange {
                integer: kind == "integer",
                min: bound("exclusiveMinimum", true).or(bound("minimum", false)),
                max: bound("exclusiveMaximum", true).or(bound("maximum", false)),
            }))
        }
        other => Err(problem(format!(
            "a slot takes a string, boolean, number or integer parameter, not {}: set it in `args` instead",
            other.unwrap_or("one without a type")
        ))),
    }
}

/// `value` as the parameter's schema would take it (type and enum; numbers within bounds).
fn check_value(tool: &str, param: &str, schema: &Value, value: &Value) -> Result<(), IntentError> {
    let fits = match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => value.is_boolean(),
        Some("string") => value.is_string(),
        Some("integer") => value.as_f64().is_some_and(|x| x.fract() == 0.0),
        Some("number") => value.is_number(),
        _ => true,
    };
    let listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|e| e.contains(value));
    if fits && listed {
        Ok(())
    } else {
        Err(IntentError::Parameter {
            tool: tool.into(),
            param: param.into(),
            problem: format!("{value} is not a value it takes (its schema: {schema})"),
        })
    }
}

/// Match `tokens` against all of `words`, calling `done` with the bound values of each way
/// that works.
fn match_form(
    tokens: &[Token],
    words: &[String],
    intent: &Compiled,
    bound: &mut Vec<Binding>,
    done: &mut dyn FnMut(&[Binding]),
) {
    let Some((first, rest)) = tokens.split_first() else {
        if words.is_empty() {
            done(bound);
        }
        return;
    };
    match first {
        Token::Word(w) => {
            if words.first() == Some(w) {
                match_form(rest, &words[1..], intent, bound, done);
            }
        }
        Token::Slot(name) => {
            let Some(slot) = intent.slots.get(name) else {
                return;
            };
            for (taken, value) in slot_values(slot, words) {
                let clash = bound.iter().any(|(n, v)| n == name && *v != value);
                if clash {
                    continue;
                }
                bound.push((name.clone(), value));
                match_form(rest, &words[taken..], intent, bound, done);
                bound.pop();
            }
        }
    }
}

/// The ways a slot can take words from the start of `words`: how many, and the value.
fn slot_values(slot: &Slot, words: &[String]) -> Vec<(usize, Value)> {
    let mut out = Vec::new();
    match slot {
        Slot::Phrases(phrases) => {
            for k in 1..=words.len().min(4) {
                let said: String = words[..k].concat();
                for (phrase, value) in phrases {
                    let key = phrase.concat();
                    if (said == key || said == format!("{key}s"))
                        && !out.contains(&(k, value.clone()))
                    {
                        out.push((k, value.clone()));
                    }
                }
            }
        }
        Slot::Number(range) => {
            for k in 1..=words.len().min(8) {
                if let Some(x) = text::number(&words[..k]).filter(|&x| range.admits(x)) {
                    out.push((k, number_value(x)));
                }
            }
        }
        Slot::Words => {
            for k in 1..=words.len() {
                out.push((k, Value::String(words[..k].join(" "))));
            }
        }
    }
    out
}

/// A number as JSON: whole numbers as integers (21, not 21.0).
fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// Every tool's intents.
#[derive(Debug, Clone, Default)]
pub struct Intents {
    tools: Vec<std::sync::Arc<ToolIntents>>,
}

impl Intents {
    /// The intents of these tools.
    pub fn new(tools: Vec<std::sync::Arc<ToolIntents>>) -> Intents {
        Intents { tools }
    }

    /// True when no tool has intents.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The calls `text` asks for, in the order said; `None` unless the whole request (or
    /// each of its parts) matches exactly one call.
    pub fn recognize(&self, text: &str) -> Option<Vec<IntentCall>> {
        if self.tools.is_empty() {
            return None;
        }
        let pieces = text::pieces(text);
        let all: Vec<String> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Word(w) => Some(w.clone()),
                Piece::Break => None,
            })
            .collect();
        if all.is_empty() || all.len() > MAX_WORDS {
            return None;
        }
        if let Some(call) = self.one_call(&all) {
            return Some(vec![call]);
        }
        self.parts(&pieces)
    }

    /// The one call all of `words` (less skip words) asks for.
    fn one_call(&self, words: &[String]) -> Option<IntentCall> {
        let words = text::trim_skip_words(words);
        let mut found = Vec::new();
        for tool in &self.tools {
            tool.calls(words, &mut found);
            if found.len() > 1 {
                return None;
            }
        }
        found.pop()
    }

    /// A request cut into parts, each matched alone or with words borrowed from its
    /// neighbours.
    fn parts(&self, pieces: &[Piece]) -> Option<Vec<IntentCall>> {
        let parts = split(pieces);
        if parts.len() < 2 {
            return None;
        }
        let mut calls: Vec<IntentCall> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| parts[j].as_slice());
            let after = parts.get(i + 1).map(Vec::as_slice);
            let call = self
                .one_call(part)
                .or_else(|| self.borrowing(part, before, after))?;
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
        Some(calls)
    }

    /// `part` with the fewest words borrowed from the start of `before` or the end of
    /// `after` that make it match.
    fn borrowing(
        &self,
        part: &[String],
        before: Option<&[String]>,
        after: Option<&[String]>,
    ) -> Option<IntentCall> {
        let longest = before
            .map_or(0, <[String]>::len)
            .max(after.map_or(0, <[String]>::len));
        for n in 1..longest {
            if let Some(b) = before.filter(|b| n < b.len()) {
                let words: Vec<String> = b[..n].iter().chain(part).cloned().collect();
                if let Some(call) = self.one_call(&words) {
                    return Some(call);
                }
            }
            if let Some(a) = after.filter(|a| n < a.len()) {
                let words: Vec<String> = part.iter().chain(&a[a.len() - n..]).cloned().collect();
                if let Some(call) = self.one_call(&words) {
                    return Some(call);
                }
            }
        }
        None
    }
}

/// A request's parts: cut at breaks and at "and", "then", "also" between words.
fn split(pieces: &[Piece]) -> Vec<Vec<String>> {
    let mut parts: Vec<Vec<String>> = vec![Vec::new()];
    for piece in pieces {
        let cut = match piece {
            Piece::Break => true,
            Piece::Word(w) => text::is_joiner(w),
        };
        match (cut, piece) {
            (true, _) => {
                if parts.last().is_some_and(|p| !p.is_empty()) {
                    parts.push(Vec::new());
                }
            }
            (false, Piece::Word(w)) => {
                if let Some(last) = parts.last_mut() {
                    last.push(w.clone());
                }
            }
            (false, Piece::Break) => {}
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests;
