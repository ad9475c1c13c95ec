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
//! [[tool]]
//! name = "set_light"
//! # [tool.parameters]: room (a string enum: "kitchen", "living room", …), on (a boolean)
//!
//! [[tool.intent]]
//! sentences = ["(turn|switch) {on} [the] {room} light[s]", "(turn|switch) [the] {room} light[s] {on}"]
//! slots.room = { lounge = "living room" }   # more phrases for a value (optional)
//!
//! [[tool]]
//! name = "set_lock"
//! [[tool.intent]]
//! sentences = ["lock [the] {door} door"]
//! args = { locked = true }                  # fixed arguments of this intent
//! [[tool.intent]]
//! sentences = ["unlock [the] {door} door"]
//! args = { locked = false }
//! ```
//!
//! # Templates
//!
//! - words, compared whole and case-insensitively, normalised as requests are (below);
//! - `(a|b c)`: one of the alternatives, each a sequence of words (alternatives may nest);
//! - `[x y]` a part that may be left out; `[a|b]` one of the alternatives or none;
//! - brackets may touch a word: `light[s]` is "light" or "lights", `(re|)start` is not
//!   allowed (an empty alternative: write `[re]start`);
//! - `{param}`: a slot that takes a value of the tool's parameter `param` (a word of its
//!   own, with spaces around it).
//!
//! A template expands to at most [`MAX_FORMS`] sentences. A template that does not parse,
//! can be empty, names a slot that is not a parameter, or leaves a `required` parameter
//! without a value (neither slotted nor in `args`) is an error when the manifest loads
//! ([`IntentError`]: each names the tool, the sentence and the fix).
//!
//! # Slots
//!
//! What a slot takes comes from its parameter's JSON Schema:
//! - a string with an `enum`: its values ("living room" is two words) and the phrases of
//!   `slots.<param>` (synonyms). A value said without its spaces ("livingroom", "bed room"
//!   for "bedroom") or with a plural "s" still matches; nothing looser;
//! - a boolean: the phrases of `slots.<param>` (`{ on = true, off = false }` when no table
//!   is given);
//! - a number or integer: digits ("21", "21.5", "21°C", "40%") or words ("twenty one",
//!   "twenty-one", "a hundred", "one hundred and five", "twenty one point five", "twenty
//!   and a half"), up to 999 in words; an integer must be whole, and `minimum`, `maximum`,
//!   `exclusiveMinimum`, `exclusiveMaximum` and an `enum` must hold, or nothing matches.
//!   `slots.<param>` may add phrases (`{ full = 100 }`);
//! - a string without `enum`: one or more words, kept as the transcript wrote them (a
//!   phrase of `slots.<param>` said there gives its value instead). A template with such
//!   a slot needs a word of its own to anchor it, and two of them may not touch.
//!
//! Objects and arrays cannot be slotted: give them in `args`. Values in `args` and
//! `slots` must be ones the parameter's schema accepts.
//!
//! # Requests
//!
//! A transcript is lower-cased; punctuation is dropped (a `.` inside a number stays:
//! "21.5"); hyphens split words ("living-room"); "°", "°C", "°F" read as "degrees" and
//! "%" as "percent"; apostrophes inside words stay ("it's"). Words that carry no command
//! may be left out at its ends: at the start "please", "hey", "okay", "ok", "so", "now",
//! "can you", "could you", "would you", "will you"; at the end "please", "thanks", "thank
//! you", "now", "again", "for me" (the fewest words left first). A request of more than
//! [`MAX_WORDS`] words matches nothing.
//!
//! # Matching
//!
//! A request matches a template's sentence when every one of its words is matched, in
//! order; whole words only, so "unlock" never matches "lock". Every template of every tool
//! is tried, and every required parameter must have a value. Exactly one distinct call
//! (tool and arguments, fixed `args` included) must come out; two or more is ambiguous,
//! and nothing matches. A free slot's words never end with an article ("set a timer"
//! names no timer "a", "set it past a timer" none "it past a"), and two calls that differ
//! only in one string value, one the other with words before it ("an egg", "egg": "set an
//! egg timer" read with and without the article as the sentence's), are one: the shorter.
//!
//! **Two commands in one.** A request that does not match as a whole is cut at "and",
//! "then", "also" and at `,` `.` `?` `!` `;` `:`, and every part must match on its own (a
//! part of only words like "thank you" is left out). A part that does not is tried with the
//! first words of the part before it ("turn on the kitchen light and the bedroom light" →
//! "turn on" + "the bedroom light") or the last words of the part after it ("switch on the
//! kitchen and the bedroom lights" → "switch on the kitchen" + "lights"), the fewest
//! borrowed words first, or, saying "it" or "them", as a follow-up of the parts before it
//! ("turn on the bedroom light and set it to 40 percent"). If one part matches nothing (or
//! two calls), nothing matches. The calls come in the order said; the same call twice is
//! made once. Whisper often writes "in" for "and": a request that matches nothing is read
//! with one "in" as "and" when that alone makes two calls and neither names a place ("turn
//! off the fairy lights in the porch light"). A request that is one
//! part after the cut ("and lock the front door", "thanks, lock the front door") is that
//! part's call.
//!
//! **Follow-ups.** A request that matches nothing alone may refer to what the session did
//! before it: "and the bedroom too", "turn it off again" (the calls of the turn before), or
//! "make it warmer" (an intent with a `step`, from the tool's latest call).
//! [`Intents::follow_up`] matches it against a [`Before`] (see `follow_up.rs`):
//!
//! ```toml
//! [[tool.intent]]
//! sentences = ["make it warmer", "turn [the] heating up"]
//! step = { temperature = 1 }                # added to the latest set_thermostat's value
//! ```

mod clock;
mod derive;
mod follow_up;
mod ground;
mod length;
mod numbers;
mod phrases;
mod said;
mod slot;
mod template;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use hearth_phrases::normalize;
use serde::Deserialize;
use serde_json::{Map, Value};

use normalize::{Piece, Word};
use slot::{Slot, SlotProblem};
use template::Token;

pub use clock::{parse_clock, say_time, Clock, Half};
pub(crate) use derive::{device_choices, direction_words};
pub use derive::{name_words, Shape};
pub use follow_up::Before;
pub use ground::{contradicts, unsupported, Unsupported};
pub(crate) use ground::{names_a_value, ASKS_A_STATE};
pub(crate) use length::is_length_unit;
pub use length::{parse_length, say_length};
pub(crate) use numbers::number_at;
pub use phrases::{Count, Part, PhraseForm, PhraseSet};
pub use slot::Vocabulary;

/// The words of `text` as intents compare them: lower case, punctuation gone, apostrophes
/// inside words kept ("that's", also when written `’`).
pub fn words(text: &str) -> Vec<String> {
    normalize::pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Word(w) => Some(w.key),
            Piece::Break => None,
        })
        .collect()
}

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
    /// A relative intent: per number parameter, how much to add to the value the tool's
    /// latest call in the session gave it ("make it warmer": `{ temperature = 1 }`). Its
    /// sentences match only after such a call; see `follow_up.rs`.
    #[serde(default)]
    pub step: Map<String, Value>,
}

/// A call a request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct IntentCall {
    pub tool: String,
    /// A JSON object, its keys in the order of the tool's parameters.
    pub arguments: Value,
}

/// Why a tool's intents do not compile. Each names the tool, the sentence (for a table, the
/// intent's first sentence) and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntentError {
    #[error("tool {tool:?}: intent sentence {sentence:?}: {problem}")]
    Template {
        tool: String,
        sentence: String,
        problem: String,
    },
    #[error("tool {tool:?}: an intent has no sentences: add `sentences = [\"…\"]` to it")]
    NoSentences { tool: String },
    #[error("tool {tool:?}: intent {sentence:?}: {place} names {name:?}, which is not a parameter of the tool: use one of {known}")]
    UnknownParameter {
        tool: String,
        sentence: String,
        place: String,
        name: String,
        known: String,
    },
    /// `problem` says the value and what the schema accepts.
    #[error("tool {tool:?}: intent {sentence:?}: {place} gives {param:?} {problem}")]
    BadValue {
        tool: String,
        sentence: String,
        place: String,
        param: String,
        problem: String,
    },
    #[error("tool {tool:?}: intent sentence {sentence:?}: the slot {{{param}}} is {kind}, which a slot cannot take (only a string, boolean, number or integer): set it in `args` instead")]
    Unslottable {
        tool: String,
        sentence: String,
        param: String,
        kind: String,
    },
    #[error("tool {tool:?}: intent sentence {sentence:?}: the boolean slot {{{param}}} has no words (`slots.{param}` is empty): add phrases, e.g. `slots.{param} = {{ on = true, off = false }}`, or remove the table for \"on\" and \"off\"")]
    NoWords {
        tool: String,
        sentence: String,
        param: String,
    },
    #[error("tool {tool:?}: intent {sentence:?}: `slots.{param}` has a phrase {phrase:?} with no words: write the words said")]
    EmptyPhrase {
        tool: String,
        sentence: String,
        param: String,
        phrase: String,
    },
    #[error("tool {tool:?}: intent {sentence:?}: `slots.{param}` is given but no sentence of this intent has a {{{param}}} slot: add the slot to a sentence, or move the table to the intent that has it")]
    UnusedSlots {
        tool: String,
        sentence: String,
        param: String,
    },
    #[error("tool {tool:?}: intent sentence {sentence:?}: {param:?} is both a slot and in `args`: keep one")]
    SlotAndArg {
        tool: String,
        sentence: String,
        param: String,
    },
    #[error("tool {tool:?}: intent {sentence:?}: `step` gives {param:?} {problem}")]
    BadStep {
        tool: String,
        sentence: String,
        param: String,
        problem: String,
    },
    #[error("tool {tool:?}: intent sentence {sentence:?} gives no value for the required parameter {param:?}: add a {{{param}}} slot to it or set {param:?} in `args`")]
    Unbound {
        tool: String,
        sentence: String,
        param: String,
    },
}

/// One expanded sentence of an intent.
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
    /// What a relative intent adds to the previous values (empty: not relative).
    step: Map<String, Value>,
}

/// One tool's compiled intents.
#[derive(Debug, Clone)]
pub struct ToolIntents {
    tool: String,
    /// The parameters in schema order: a call's arguments are written in it, as a model
    /// writes them.
    order: Vec<String>,
    /// Each parameter's JSON Schema.
    schemas: Map<String, Value>,
    intents: Vec<Compiled>,
    forms: Vec<Form>,
    /// Its calls give way to another tool's that the same words make (a tool made from a
    /// thing found in the house gives way to a manifest's: what a household wrote wins).
    yields: bool,
}

impl ToolIntents {
    /// These intents, giving way to any other tool's that the same words make.
    pub fn yielding(mut self) -> ToolIntents {
        self.yields = true;
        self
    }

    /// Compile a tool's `[[tool.intent]]` tables against its parameters' JSON Schema (an
    /// object schema: `properties`, `required`).
    pub fn compile(
        tool: &str,
        specs: &[IntentSpec],
        parameters: &Value,
    ) -> Result<ToolIntents, IntentError> {
        let schema = Schema::new(tool, parameters);
        let mut out = ToolIntents {
            yields: false,
            tool: tool.to_string(),
            order: schema.properties.keys().cloned().collect(),
            schemas: schema.properties.clone(),
            intents: Vec::new(),
            forms: Vec::new(),
        };
        for spec in specs {
            let (intent, forms) = schema.intent(spec)?;
            let index = out.intents.len();
            out.intents.push(intent);
            out.forms.extend(forms.into_iter().map(|tokens| Form {
                tokens,
                intent: index,
            }));
        }
        Ok(out)
    }

    /// These intents and `more`'s (the same tool's) as one set: hand-written and derived
    /// sentences are matched alike.
    pub fn and(mut self, more: &ToolIntents) -> ToolIntents {
        let offset = self.intents.len();
        self.intents.extend(more.intents.iter().cloned());
        self.forms.extend(more.forms.iter().map(|f| Form {
            tokens: f.tokens.clone(),
            intent: f.intent + offset,
        }));
        self
    }

    /// The tool these intents call.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Every sentence form of these intents, its slots as what they take.
    fn phrase_forms(&self) -> impl Iterator<Item = PhraseForm> + '_ {
        self.forms
            .iter()
            .map(|form| self.phrase_form(form.intent, &form.tokens, false))
    }

    /// `tokens` (of intent `intent`) as a form of the phrase set.
    fn phrase_form(&self, intent: usize, tokens: &[Token], follow_up: bool) -> PhraseForm {
        let slots = &self.intents[intent].slots;
        let parts = tokens
            .iter()
            .map(|t| match t {
                Token::Word(w) => Part::Word(w.clone()),
                Token::Slot(param) => Part::Slot {
                    param: param.clone(),
                    takes: slots
                        .get(param)
                        .map_or(Vocabulary::Words, slot::Slot::vocabulary),
                },
            })
            .collect();
        PhraseForm {
            source: self.tool.clone(),
            parts,
            follow_up,
            call: format!("{}#{intent}", self.tool),
        }
    }

    /// Add every distinct call a form makes of all of `words` to `found`, stopping once it
    /// holds two.
    fn calls(&self, words: &[Word], found: &mut Vec<IntentCall>) {
        for form in &self.forms {
            let intent = &self.intents[form.intent];
            if !intent.step.is_empty() {
                continue; // relative: only after a call it can step from
            }
            let mut bound = Vec::new();
            match_form(&form.tokens, words, intent, &mut bound, &mut |bound| {
                add_call(found, self.call(&Map::new(), intent, bound));
            });
            if found.len() > 1 {
                return;
            }
        }
    }

    /// The call an intent makes with these slot values, over the arguments `base` (a
    /// previous call's, for a follow-up).
    fn call(&self, base: &Map<String, Value>, intent: &Compiled, bound: &[Binding]) -> IntentCall {
        let mut given = base.clone();
        given.extend(intent.args.clone());
        for (name, value) in bound {
            given.insert(name.clone(), value.clone());
        }
        let mut args = Map::new();
        for name in &self.order {
            if let Some(v) = given.remove(name) {
                args.insert(name.clone(), v);
            }
        }
        IntentCall {
            tool: self.tool.clone(),
            arguments: Value::Object(args),
        }
    }
}

/// Put `call` in `found` unless it is there. Two calls that differ only in one string
/// argument, one value the other with words before it ("an egg" and "egg": "set an egg
/// timer" read by "set {an} {name} timer" and by "set {name} timer"), are one: the other
/// reading took those words as the sentence's own, and its shorter value stays.
///
/// Two readings of the same words where one names a thing whole are one too, that one:
/// "open the garage door" read with the door's name ("garage door") and with the tool's own
/// noun and no name; "the kitchen lights" read as the light named so and as the kitchen's
/// lights ([`names_more`]).
fn add_call(found: &mut Vec<IntentCall>, call: IntentCall) {
    let better = |a: &IntentCall, b: &IntentCall| has_words_before(b, a) || names_more(a, b);
    if let Some(worse) = found.iter().position(|f| better(&call, f)) {
        found[worse] = call;
    } else if !found.iter().any(|f| *f == call || better(f, &call)) {
        found.push(call);
    }
}

/// Whether `a` reads the words `b` reads with a thing's name said whole: the same tool, and
/// `a` has every argument `b` has plus string ones (`b` took the name's words as its
/// template's noun), or `a` has one string argument `b` lacks whose value begins with the
/// room `b` has in its place ([`ROOM_PARAMETERS`]; `b` took the name as a room and the
/// tool's noun).
fn names_more(a: &IntentCall, b: &IntentCall) -> bool {
    let (Some(x), Some(y)) = (a.arguments.as_object(), b.arguments.as_object()) else {
        return false;
    };
    if a.tool != b.tool || x == y {
        return false;
    }
    let only_a: Vec<(&String, &Value)> = x.iter().filter(|(k, _)| !y.contains_key(*k)).collect();
    let only_b: Vec<(&String, &Value)> = y.iter().filter(|(k, _)| !x.contains_key(*k)).collect();
    let shared_agree = x
        .iter()
        .filter(|(k, _)| y.contains_key(*k))
        .all(|(k, v)| y.get(k) == Some(v));
    if !shared_agree || only_a.is_empty() || !only_a.iter().all(|(_, v)| v.is_string()) {
        return false;
    }
    match only_b.as_slice() {
        [] => true,
        [(room, Value::String(room_said))] if ROOM_PARAMETERS.contains(&room.as_str()) => {
            matches!(only_a.as_slice(), [(_, Value::String(name))]
                if name.strip_prefix(room_said.as_str()).is_some_and(|rest| rest.starts_with(' ')))
        }
        _ => false,
    }
}

/// Whether `a` is `b` but for one string argument whose value is `b`'s with words before it.
fn has_words_before(a: &IntentCall, b: &IntentCall) -> bool {
    let (Some(x), Some(y)) = (a.arguments.as_object(), b.arguments.as_object()) else {
        return false;
    };
    if a.tool != b.tool || x.len() != y.len() {
        return false;
    }
    let mut differ = x.iter().filter(|(k, v)| y.get(*k) != Some(*v));
    let (Some((key, longer)), None) = (differ.next(), differ.next()) else {
        return false;
    };
    match (longer.as_str(), y.get(key).and_then(Value::as_str)) {
        (Some(longer), Some(shorter)) => longer
            .strip_suffix(shorter)
            .is_some_and(|before| before.ends_with(' ')),
        _ => false,
    }
}

/// A tool's parameters, as intents are compiled against them.
struct Schema<'a> {
    tool: &'a str,
    properties: Map<String, Value>,
    required: Vec<String>,
}

impl<'a> Schema<'a> {
    fn new(tool: &'a str, parameters: &Value) -> Schema<'a> {
        let properties = parameters
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required = parameters
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        Schema {
            tool,
            properties,
            required,
        }
    }

    /// One `[[tool.intent]]` table, checked, and its sentences' forms.
    fn intent(&self, spec: &IntentSpec) -> Result<(Compiled, Vec<Vec<Token>>), IntentError> {
        let Some(first) = spec.sentences.first() else {
            return Err(IntentError::NoSentences {
                tool: self.tool.into(),
            });
        };
        for (name, value) in &spec.args {
            let schema = self.param(first, "`args`", name)?;
            slot::accepts(schema, value).map_err(|p| self.slot_error(first, "`args`", name, p))?;
        }
        for name in spec.slots.keys() {
            self.param(first, "`slots`", name)?;
        }
        for (name, step) in &spec.step {
            self.step(spec, first, name, step)?;
        }
        let mut slots = BTreeMap::new();
        let mut forms = Vec::new();
        for sentence in &spec.sentences {
            for form in template::expand(sentence).map_err(|p| self.template(sentence, p))? {
                self.form(spec, sentence, &form, &mut slots)?;
                forms.push(form);
            }
        }
        if let Some(unused) = spec.slots.keys().find(|n| !slots.contains_key(*n)) {
            return Err(IntentError::UnusedSlots {
                tool: self.tool.into(),
                sentence: first.clone(),
                param: unused.clone(),
            });
        }
        let (args, step) = (spec.args.clone(), spec.step.clone());
        Ok((Compiled { args, slots, step }, forms))
    }

    /// Check one `step` entry: a number the parameter (a number or integer, neither in
    /// `args` nor a slot) can change by.
    fn step(
        &self,
        spec: &IntentSpec,
        first: &str,
        name: &str,
        step: &Value,
    ) -> Result<(), IntentError> {
        let schema = self.param(first, "`step`", name)?;
        let bad = |problem: &str| IntentError::BadStep {
            tool: self.tool.into(),
            sentence: first.into(),
            param: name.into(),
            problem: problem.into(),
        };
        let kind = slot::kind(schema);
        if !matches!(kind, Some("number" | "integer")) {
            return Err(bad("a step, but it is not a number parameter: step only numbers, and give other values in `args`"));
        }
        let whole = step.as_i64().is_some();
        match step.as_f64() {
            None | Some(0.0) => {
                return Err(bad("a step that is not a number other than 0: write e.g. `step = { temperature = 1 }` (or -1 for down)"))
            }
            Some(_) if kind == Some("integer") && !whole => {
                return Err(bad("a step that is not whole, but the parameter is an integer: use a whole number"))
            }
            Some(_) => {}
        }
        if spec.args.contains_key(name) {
            return Err(bad("a step, but it is also in `args`: keep one"));
        }
        Ok(())
    }

    /// Check one form of `sentence`, adding the slots it uses to `slots`.
    fn form(
        &self,
        spec: &IntentSpec,
        sentence: &str,
        form: &[Token],
        slots: &mut BTreeMap<String, Slot>,
    ) -> Result<(), IntentError> {
        for token in form {
            let Token::Slot(name) = token else { continue };
            let schema = self.param(sentence, "a slot", name)?;
            if spec.step.contains_key(name) {
                return Err(IntentError::BadStep {
                    tool: self.tool.into(),
                    sentence: sentence.into(),
                    param: name.clone(),
                    problem: "a step, but it is also a slot: keep one".into(),
                });
            }
            if spec.args.contains_key(name) {
                return Err(IntentError::SlotAndArg {
                    tool: self.tool.into(),
                    sentence: sentence.into(),
                    param: name.clone(),
                });
            }
            if !slots.contains_key(name) {
                let slot = Slot::new(schema, spec.slots.get(name))
                    .map_err(|p| self.slot_error(sentence, &format!("`slots.{name}`"), name, p))?;
                slots.insert(name.clone(), slot);
            }
        }
        // a relative intent takes what it does not say from the call it steps from
        let bound = |p: &String| {
            !spec.step.is_empty()
                || spec.args.contains_key(p)
                || form.iter().any(|t| matches!(t, Token::Slot(s) if s == p))
        };
        if let Some(param) = self.required.iter().find(|p| !bound(p)) {
            return Err(IntentError::Unbound {
                tool: self.tool.into(),
                sentence: sentence.into(),
                param: param.clone(),
            });
        }
        anchored(form, slots).map_err(|p| self.template(sentence, p))
    }

    /// The schema of the parameter `name`, which `sentence`'s `place` names.
    fn param(&self, sentence: &str, place: &str, name: &str) -> Result<&Value, IntentError> {
        self.properties
            .get(name)
            .ok_or_else(|| IntentError::UnknownParameter {
                tool: self.tool.into(),
                sentence: sentence.into(),
                place: place.into(),
                name: name.into(),
                known: self.known(),
            })
    }

    /// The parameters' names, for an error.
    fn known(&self) -> String {
        if self.properties.is_empty() {
            return "none (the tool takes no parameters)".into();
        }
        let names: Vec<&str> = self.properties.keys().map(String::as_str).collect();
        names.join(", ")
    }

    fn template(&self, sentence: &str, problem: String) -> IntentError {
        IntentError::Template {
            tool: self.tool.into(),
            sentence: sentence.into(),
            problem,
        }
    }

    fn slot_error(&self, sentence: &str, place: &str, param: &str, p: SlotProblem) -> IntentError {
        let (tool, sentence, param) = (self.tool.into(), sentence.into(), param.into());
        match p {
            SlotProblem::Unslottable(kind) => IntentError::Unslottable {
                tool,
                sentence,
                param,
                kind,
            },
            SlotProblem::NoWords => IntentError::NoWords {
                tool,
                sentence,
                param,
            },
            SlotProblem::EmptyPhrase(phrase) => IntentError::EmptyPhrase {
                tool,
                sentence,
                param,
                phrase,
            },
            SlotProblem::BadValue(value, expected) => IntentError::BadValue {
                tool,
                sentence,
                place: place.into(),
                param,
                problem: format!(
                    "the value {value}, which its schema does not accept: use {expected}"
                ),
            },
        }
    }
}

/// A form's free-text slots (strings without an enum) need a word in the form to anchor
/// them, and may not touch each other.
fn anchored(form: &[Token], slots: &BTreeMap<String, Slot>) -> Result<(), String> {
    let free = |t: &Token| matches!(t, Token::Slot(n) if slots.get(n).is_some_and(Slot::is_free));
    if !form.iter().any(free) {
        return Ok(());
    }
    if !form.iter().any(|t| matches!(t, Token::Word(_))) {
        return Err("a slot that takes any words needs words around it that are always said, e.g. \"remind me to {text}\"".into());
    }
    if form.windows(2).any(|w| free(&w[0]) && free(&w[1])) {
        return Err("two slots that take any words touch, so where one ends is anyone's guess: put a word between them".into());
    }
    Ok(())
}

/// A parameter and the value a slot gave it.
type Binding = (String, Value);

/// Match `tokens` against all of `words`, calling `done` with the slot values of each way
/// that works.
fn match_form(
    tokens: &[Token],
    words: &[Word],
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
            if let Some((_, more)) = words.split_first().filter(|(said, _)| said.key == *w) {
                match_form(rest, more, intent, bound, done);
            }
        }
        Token::Slot(name) => {
            let Some(slot) = intent.slots.get(name) else {
                return;
            };
            for (taken, value) in slot.values(words) {
                if bound.iter().any(|(n, v)| n == name && *v != value) {
                    continue;
                }
                bound.push((name.clone(), value));
                match_form(rest, &words[taken..], intent, bound, done);
                bound.pop();
            }
        }
    }
}

/// What some words ask for.
#[derive(Debug)]
enum Outcome {
    Nothing,
    One(IntentCall),
    /// Two or more distinct calls: ambiguous.
    Many,
}

/// Every tool's intents.
#[derive(Debug, Clone, Default)]
pub struct Intents {
    tools: Vec<Arc<ToolIntents>>,
}

/// The parameters a request's room fills when it names none ([`Intents::recognize_in`]).
pub const ROOM_PARAMETERS: &[&str] = &["room", "area", "location", "zone"];

/// The rooms an OpenAI tools list knows: the enumerated values of its room parameters
/// ([`ROOM_PARAMETERS`]); `None` when no tool has a room parameter.
pub fn known_rooms(tools: &Value) -> Option<Vec<String>> {
    let mut found = false;
    let mut rooms = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        let props = tool
            .pointer("/function/parameters/properties")
            .and_then(Value::as_object);
        for (name, schema) in props.into_iter().flatten() {
            if !ROOM_PARAMETERS.contains(&name.as_str()) {
                continue;
            }
            found = true;
            let values = schema.get("enum").and_then(Value::as_array);
            rooms.extend(
                values
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
        }
    }
    found.then_some(rooms)
}

/// Whether `text` names one of `rooms`, word for word ("the living room light" names
/// "living room").
pub fn names_room(text: &str, rooms: &[String]) -> bool {
    let words = |t: &str| -> Vec<String> {
        normalize::pieces(t)
            .into_iter()
            .filter_map(|p| match p {
                Piece::Word(w) => Some(w.key),
                Piece::Break => None,
            })
            .collect()
    };
    let said = words(text);
    rooms.iter().any(|room| {
        let room = words(room);
        !room.is_empty() && said.windows(room.len()).any(|w| w == room.as_slice())
    })
}

impl Intents {
    /// The intents of these tools.
    pub fn new(tools: Vec<Arc<ToolIntents>>) -> Intents {
        Intents { tools }
    }

    /// The house's phrase set: every sentence form of every tool's intents, then the
    /// follow-ups they answer after a turn ("and the bedroom too", "turn it off").
    pub fn phrases(&self) -> PhraseSet {
        let requests = self.tools.iter().flat_map(|t| t.phrase_forms());
        let follow_ups = self.tools.iter().flat_map(|t| t.follow_up_forms());
        PhraseSet::new(requests.chain(follow_ups).collect())
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
        let pieces = normalize::pieces(text);
        let words: Vec<Word> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Word(w) => Some(w.clone()),
                Piece::Break => None,
            })
            .collect();
        if words.is_empty() || words.len() > MAX_WORDS {
            return None;
        }
        match self.outcome(&words) {
            Outcome::One(call) => Some(vec![call]),
            Outcome::Many => None,
            Outcome::Nothing => self
                .parts(&pieces)
                .or_else(|| self.in_heard_for_and(&pieces)),
        }
    }

    /// A request that matches nothing, read with one of its "in"s as "and": whisper often
    /// writes "in" for a spoken "and" ("turn off the fairy lights in the porch light"). Taken
    /// only where exactly one "in" so read makes every part match ([`Intents::parts`]), into
    /// two calls or more of which none names a place: after "in" a place is what a household
    /// says ("the lamp in the living room" is one lamp, not the lamp and the room's lights).
    fn in_heard_for_and(&self, pieces: &[Piece]) -> Option<Vec<IntentCall>> {
        let names_a_place = |c: &IntentCall| {
            c.arguments
                .as_object()
                .is_some_and(|args| ROOM_PARAMETERS.iter().any(|p| args.contains_key(*p)))
        };
        let mut found = None;
        for (at, piece) in pieces.iter().enumerate() {
            if !matches!(piece, Piece::Word(w) if w.key == "in") {
                continue;
            }
            let mut read = pieces.to_vec();
            read[at] = Piece::Word(Word {
                key: "and".into(),
                said: "and".into(),
            });
            let Some(calls) = self.parts(&read) else {
                continue;
            };
            if calls.len() < 2 || calls.iter().any(names_a_place) {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(calls);
        }
        found
    }

    /// [`recognize`](Self::recognize), and for a request said in `room` (a satellite's)
    /// that names no room ("turn on the light"): the one call it makes with the room's
    /// words put in at one place, which fill a room parameter ([`ROOM_PARAMETERS`]) with
    /// exactly the room ("turn on the bedroom light"). Nothing when no place, or more than
    /// one call, does: a room said ("the kitchen light") always wins, since the request
    /// then matches as it is; and no other parameter is guessed ("lock the door" said in
    /// the garage locks no door).
    pub fn recognize_in(&self, text: &str, room: Option<&str>) -> Option<Vec<IntentCall>> {
        if let Some(found) = self.recognize(text) {
            return Some(found);
        }
        let room = room.map(str::trim).filter(|r| !r.is_empty())?;
        let words: Vec<String> = normalize::pieces(text)
            .into_iter()
            .filter_map(|p| match p {
                Piece::Word(w) => Some(w.said),
                Piece::Break => None,
            })
            .collect();
        if words.is_empty() || words.len() + 1 > MAX_WORDS {
            return None;
        }
        let fills_room = |c: &IntentCall| {
            let args = c.arguments.as_object().into_iter().flatten();
            args.filter(|(name, _)| ROOM_PARAMETERS.contains(&name.as_str()))
                .any(|(_, v)| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(room)))
        };
        let mut found: Option<IntentCall> = None;
        for at in 0..=words.len() {
            let mut said = words[..at].to_vec();
            said.push(room.to_string());
            said.extend_from_slice(&words[at..]);
            let Some(calls) = self.recognize(&said.join(" ")) else {
                continue;
            };
            let [call] = calls.as_slice() else {
                return None;
            };
            if !fills_room(call) {
                continue;
            }
            match &found {
                Some(other) if other != call => return None,
                _ => found = Some(call.clone()),
            }
        }
        found.map(|c| vec![c])
    }

    /// What all of `words` ask for, read with the fewest words that carry no command first.
    ///
    /// A call of a tool that yields ([`ToolIntents::yielding`]) counts only when no other
    /// tool's does: a manifest's "kitchen light" wins over the house's.
    fn outcome(&self, words: &[Word]) -> Outcome {
        let trimmings = normalize::trimmings(words);
        for same_length in trimmings.chunk_by(|a, b| a.len() == b.len()) {
            let mut found = Vec::new();
            let mut yielding = Vec::new();
            for words in same_length {
                for tool in &self.tools {
                    let into = if tool.yields {
                        &mut yielding
                    } else {
                        &mut found
                    };
                    tool.calls(words, into);
                    if found.len() > 1 {
                        return Outcome::Many;
                    }
                }
            }
            if found.is_empty() {
                found = yielding;
            }
            match found.len() {
                0 => continue,
                1 => return found.pop().map_or(Outcome::Nothing, Outcome::One),
                _ => return Outcome::Many,
            }
        }
        Outcome::Nothing
    }

    /// A request cut into parts, each matched alone or with words borrowed from its
    /// neighbours.
    fn parts(&self, pieces: &[Piece]) -> Option<Vec<IntentCall>> {
        let mut parts = split(pieces);
        parts.retain(|p| !normalize::only_skip_words(p));
        if let [part] = parts.as_slice() {
            // one command with a joiner or a break around it: "and lock the door", "thanks,
            // lock the door"
            return match self.outcome(part) {
                Outcome::One(call) => Some(vec![call]),
                _ => None,
            };
        }
        if parts.is_empty() {
            return None;
        }
        let mut calls: Vec<IntentCall> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| parts[j].as_slice());
            let after = parts.get(i + 1).map(Vec::as_slice);
            let call = match self.outcome(part) {
                Outcome::One(call) => call,
                Outcome::Many => return None,
                Outcome::Nothing => self
                    .borrowing(part, before, after)
                    .or_else(|| self.of_the_parts_before(part, &calls))?,
            };
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
        Some(calls)
    }

    /// The call a part that says "it" or "them" makes of what the parts before it called
    /// ("turn on the bedroom light and set it to 40 percent"): the follow-up it would be
    /// after a turn that made those calls ([`Intents::follow_up`]).
    fn of_the_parts_before(&self, part: &[Word], earlier: &[IntentCall]) -> Option<IntentCall> {
        let mut before = Before::default();
        before.record(earlier.to_vec());
        let said: Vec<&str> = part.iter().map(|w| w.said.as_str()).collect();
        match self.follow_up(&said.join(" "), &before)?.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// The call `part` makes with the fewest words borrowed from the start of `before` or
    /// the end of `after`; `None` if none does, or two different calls do.
    fn borrowing(
        &self,
        part: &[Word],
        before: Option<&[Word]>,
        after: Option<&[Word]>,
    ) -> Option<IntentCall> {
        let len = |w: Option<&[Word]>| w.map_or(0, <[Word]>::len);
        for n in 1..len(before).max(len(after)) {
            let prefixed = before
                .filter(|b| n < b.len())
                .map(|b| self.outcome(&[&b[..n], part].concat()));
            let suffixed = after
                .filter(|a| n < a.len())
                .map(|a| self.outcome(&[part, &a[a.len() - n..]].concat()));
            match (prefixed, suffixed) {
                (Some(Outcome::Many), _) | (_, Some(Outcome::Many)) => return None,
                (Some(Outcome::One(a)), Some(Outcome::One(b))) if a != b => return None,
                (Some(Outcome::One(call)), _) | (_, Some(Outcome::One(call))) => return Some(call),
                _ => {}
            }
        }
        None
    }
}

/// A request's parts: cut at breaks and at "and", "then", "also".
fn split(pieces: &[Piece]) -> Vec<Vec<Word>> {
    let mut parts: Vec<Vec<Word>> = vec![Vec::new()];
    for piece in pieces {
        match piece {
            Piece::Word(w) if !normalize::is_joiner(&w.key) => {
                if let Some(last) = parts.last_mut() {
                    last.push(w.clone());
                }
            }
            _ => {
                if parts.last().is_some_and(|p| !p.is_empty()) {
                    parts.push(Vec::new());
                }
            }
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}
