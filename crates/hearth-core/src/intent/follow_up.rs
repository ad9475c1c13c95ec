//! Follow-ups: a request that only makes sense after the turn before it, matched against
//! the calls that turn ran.
//!
//! - **Something else, the same way**: "and the bedroom too", "what about the back door?".
//!   With "and", "also", "what about" or "how about" before it, or "too", "as well" or
//!   "also" after it, a request that is a part of one of the previous calls' templates
//!   (holding a slot) repeats that call with the part's values: after `set_light(kitchen,
//!   off)`, "and the bedroom too" is `set_light(bedroom, off)`. Only templates whose fixed
//!   `args` the previous call had ("unlock" stays "unlock"), and only a call that differs
//!   from the one before.
//! - **"it" / "them" for what the turn before was about**: "turn it off again", "lock it",
//!   "set it to 60 percent". A template of any tool matches when "it" stands for a part of
//!   it holding slots, each of which the previous calls gave one value its schema accepts
//!   ("it" after `get_lock(garage)` is the garage door, so "lock it" is `set_lock(garage,
//!   locked)`).
//!
//! - **A step from the last value**: "make it warmer", "turn it down". An intent with a
//!   `step` (`step = { temperature = 1 }`) matches only here: its call is the tool's latest
//!   call in the session with the step added to each stepped parameter, and the result must
//!   be one the schema accepts ("warmer" at the maximum matches nothing). hearth knows only
//!   what it set itself: a value changed by other means since is not seen.
//!
//! A slot that takes any words is never filled this way. Exactly one distinct call must come
//! out, as for any request; when the previous calls gave a parameter two values ("turn on
//! the kitchen and the bedroom lights", then "turn it off") it is not guessed, and the model
//! answers.

use std::collections::HashSet;

use serde_json::{Map, Number, Value};

use super::normalize::{self, Word};
use super::slot::{self, Vocabulary};
use super::template::Token;
use super::{match_form, Binding, IntentCall, Intents, PhraseForm, ToolIntents, MAX_WORDS};

/// Words before a request that mark it as a follow-up.
const BEFORE: &[&[&str]] = &[&["and"], &["also"], &["what", "about"], &["how", "about"]];

/// Words after a request that mark it as a follow-up.
const AFTER: &[&[&str]] = &[&["too"], &["as", "well"], &["also"]];

/// Words that stand for what the turn before was about.
const PRONOUNS: &[&str] = &["it", "them"];

/// The longest part of a template a follow-up in the phrase set says again or says "it"
/// for: a slot and a word or two around it ("the back door", "the bedroom light"). The
/// follow-ups the intents understand may be longer (and may name numbers); with every such
/// part, the demo home's set would grow twentyfold, past what one event may carry.
const SAID_PART: usize = 3;

/// The longest request with "it" in the phrase set, in words ("set it to 60 percent",
/// "turn it off"): a template's every wording with "it" would be 20,000 forms for the demo
/// home's lights alone ("adjust it down at 62"), and the longer ones are not how a household
/// refers back.
const SAID_WITH_IT: usize = 5;

/// What a session did before a request: what follow-ups refer to. Bounded: one turn's
/// calls and one call per tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Before {
    /// The calls of the latest turn that ran any.
    pub(super) last_turn: Vec<IntentCall>,
    /// Each tool's latest call, the most recent last.
    pub(super) latest: Vec<IntentCall>,
}

impl Before {
    /// A turn ran `calls` (a turn that ran none leaves what came before).
    pub fn record(&mut self, calls: Vec<IntentCall>) {
        if calls.is_empty() {
            return;
        }
        for call in &calls {
            self.latest.retain(|c| c.tool != call.tool);
            self.latest.push(call.clone());
        }
        self.last_turn = calls;
    }
}

impl Intents {
    /// The call a follow-up `text` asks for after what the session did `before`; `None`
    /// unless exactly one distinct call comes out.
    pub fn follow_up(&self, text: &str, before: &Before) -> Option<Vec<IntentCall>> {
        if before.latest.is_empty() || self.tools.is_empty() {
            return None;
        }
        let words = normalize::words(text);
        if words.is_empty() || words.len() > MAX_WORDS {
            return None;
        }
        let (rest, marked) = unmarked(&words);
        let trimmings = normalize::trimmings(rest);
        for same_length in trimmings.chunk_by(|a, b| a.len() == b.len()) {
            let mut found = Vec::new();
            for words in same_length {
                if marked {
                    self.changed(words, &before.last_turn, &mut found);
                }
                self.pronoun(words, &before.last_turn, &mut found);
                self.stepped(words, &before.latest, &mut found);
            }
            match found.len() {
                0 => {}
                1 => return Some(found),
                _ => return None,
            }
        }
        None
    }

    /// A part of a previous call's template said with other values: that call with them.
    fn changed(&self, words: &[Word], before: &[IntentCall], found: &mut Vec<IntentCall>) {
        for previous in before {
            let Some(args) = previous.arguments.as_object() else {
                continue;
            };
            let Some(tool) = self.tools.iter().find(|t| t.tool == previous.tool) else {
                continue;
            };
            for form in &tool.forms {
                let intent = &tool.intents[form.intent];
                if !intent.step.is_empty()
                    || intent.args.iter().any(|(k, v)| args.get(k) != Some(v))
                {
                    continue;
                }
                for (i, j) in spans(&form.tokens, |name| tool.closed(form.intent, name)) {
                    let mut bound = Vec::new();
                    match_form(
                        &form.tokens[i..j],
                        words,
                        intent,
                        &mut bound,
                        &mut |bound| {
                            let call = tool.call(args, intent, bound);
                            if call != *previous && !found.contains(&call) {
                                found.push(call);
                            }
                        },
                    );
                }
            }
        }
    }

    /// A template with "it" (or "them") for a part of it whose slots the previous calls
    /// fill. Where the previous calls' own tools make such a call, the others' do not count:
    /// "turn them off" after the bedroom's lights went on is the lights, not also the
    /// bedroom's switches and fans, whose `area` the lights' call fills as well.
    fn pronoun(&self, words: &[Word], before: &[IntentCall], found: &mut Vec<IntentCall>) {
        let mut said = words.iter().filter(|w| PRONOUNS.contains(&w.key.as_str()));
        let (Some(pronoun), None) = (said.next(), said.next()) else {
            return;
        };
        let mut mine = Vec::new();
        self.pronoun_calls(words, pronoun, before, &mut mine);
        let same_tool = |c: &IntentCall| before.iter().any(|b| b.tool == c.tool);
        if mine.iter().any(same_tool) {
            mine.retain(same_tool);
        }
        for call in mine {
            super::add_call(found, call);
        }
    }

    /// Every call [`Self::pronoun`] weighs: `pronoun` in place of a part of a template.
    fn pronoun_calls(
        &self,
        words: &[Word],
        pronoun: &Word,
        before: &[IntentCall],
        found: &mut Vec<IntentCall>,
    ) {
        for tool in &self.tools {
            for form in &tool.forms {
                let intent = &tool.intents[form.intent];
                if !intent.step.is_empty() {
                    continue;
                }
                for (i, j) in spans(&form.tokens, |name| tool.closed(form.intent, name)) {
                    let Some(mut bound) = tool.bound_by(&form.tokens[i..j], before) else {
                        continue;
                    };
                    let mut tokens = form.tokens[..i].to_vec();
                    tokens.push(Token::Word(pronoun.key.clone()));
                    tokens.extend_from_slice(&form.tokens[j..]);
                    match_form(&tokens, words, intent, &mut bound, &mut |bound| {
                        // "them" for "the lights in the bedroom" and for "the lights": the
                        // reading that keeps what the turn before named is the one
                        super::add_call(found, tool.call(&Map::new(), intent, bound));
                    });
                }
            }
        }
    }

    /// A relative intent's sentence: the tool's latest call (in `latest`) stepped.
    fn stepped(&self, words: &[Word], latest: &[IntentCall], found: &mut Vec<IntentCall>) {
        for tool in &self.tools {
            let Some(base) = latest.iter().find(|c| c.tool == tool.tool) else {
                continue;
            };
            let Some(args) = base.arguments.as_object() else {
                continue;
            };
            for form in &tool.forms {
                let intent = &tool.intents[form.intent];
                if intent.step.is_empty() {
                    continue;
                }
                let mut bound = Vec::new();
                match_form(&form.tokens, words, intent, &mut bound, &mut |bound| {
                    let call = tool.call(args, intent, bound);
                    if let Some(call) = tool.step(call, &intent.step) {
                        if !found.contains(&call) {
                            found.push(call);
                        }
                    }
                });
            }
        }
    }
}

impl ToolIntents {
    /// The follow-ups these intents answer, as forms of the phrase set (what a recogniser
    /// held to the house's words may hear after a turn): each short part of a template
    /// whose slots name things (a room, a door: listed values, not numbers or on/off),
    /// marked ("and the back door too", "what about the bedroom light"), and each template
    /// with "it" or "them" for such a part ("turn it off"). A relative intent's templates
    /// ("make it warmer") are forms of the set already. Each form once.
    pub(super) fn follow_up_forms(&self) -> Vec<PhraseForm> {
        let mut seen: HashSet<Vec<Token>> = HashSet::new();
        let mut out = Vec::new();
        let mut add = |intent: usize, tokens: Vec<Token>| {
            if !seen.contains(&tokens) {
                out.push(self.phrase_form(intent, &tokens, true));
                seen.insert(tokens);
            }
        };
        let things = self.thing_slots();
        for form in &self.forms {
            if !self.intents[form.intent].step.is_empty() {
                continue;
            }
            let spans = spans(&form.tokens, |name| things[form.intent].contains(name));
            for (i, j) in spans
                .into_iter()
                .filter(|&(i, j)| names(&form.tokens, i, j))
            {
                let part = &form.tokens[i..j];
                for marked in marked_forms(part) {
                    add(form.intent, marked);
                }
                if form.tokens.len() - (j - i) + 1 > SAID_WITH_IT {
                    continue;
                }
                for pronoun in PRONOUNS {
                    let mut tokens = form.tokens[..i].to_vec();
                    tokens.push(Token::Word(pronoun.to_string()));
                    tokens.extend_from_slice(&form.tokens[j..]);
                    add(form.intent, tokens);
                }
            }
        }
        out
    }

    /// Per intent, its slots that name things: listed values none of which decides a way
    /// (a room, a door; not a number, not on/off).
    fn thing_slots(&self) -> Vec<HashSet<&str>> {
        let directions = super::direction_words();
        let names_a_thing = |slot: &slot::Slot| {
            matches!(slot.vocabulary(), Vocabulary::Phrases(p)
                if !p.iter().any(|w| directions.contains(&w.as_str())))
        };
        self.intents
            .iter()
            .map(|intent| {
                let slots = intent.slots.iter().filter(|(_, slot)| names_a_thing(slot));
                slots.map(|(name, _)| name.as_str()).collect()
            })
            .collect()
    }

    /// `call` with `step` added to its values; `None` when one is missing or the sum is not
    /// one the schema accepts.
    fn step(&self, mut call: IntentCall, step: &Map<String, Value>) -> Option<IntentCall> {
        let args = call.arguments.as_object_mut()?;
        for (name, by) in step {
            let sum = add(args.get(name)?, by)?;
            slot::accepts(self.schemas.get(name)?, &sum).ok()?;
            args.insert(name.clone(), sum);
        }
        Some(call)
    }

    /// Whether the slot `name` of intent `intent` takes only listed values or numbers (not
    /// any words).
    fn closed(&self, intent: usize, name: &str) -> bool {
        self.intents[intent]
            .slots
            .get(name)
            .is_some_and(|s| !s.is_free())
    }

    /// The values the previous calls give the slots among `tokens`: each slot's parameter
    /// must have exactly one value there, one this tool's schema accepts.
    fn bound_by(&self, tokens: &[Token], before: &[IntentCall]) -> Option<Vec<Binding>> {
        let mut bound: Vec<Binding> = Vec::new();
        for token in tokens {
            let Token::Slot(name) = token else { continue };
            if bound.iter().any(|(n, _)| n == name) {
                continue;
            }
            let mut values = before
                .iter()
                .filter_map(|c| c.arguments.get(name))
                .collect::<Vec<_>>();
            values.dedup();
            let ([value], Some(schema)) = (values.as_slice(), self.schemas.get(name)) else {
                return None;
            };
            slot::accepts(schema, value).ok()?;
            bound.push((name.clone(), (*value).clone()));
        }
        Some(bound)
    }
}

/// `a + b`: whole when both are (or the sum is), rounded to a millionth otherwise, so that
/// 21.5 + 0.5 is 22 and not 21.999….
fn add(a: &Value, b: &Value) -> Option<Value> {
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        return a.checked_add(b).map(Value::from);
    }
    let sum = ((a.as_f64()? + b.as_f64()?) * 1e6).round() / 1e6;
    if sum.fract() == 0.0 && sum.abs() < 1e15 {
        return Some(Value::from(sum as i64));
    }
    Number::from_f64(sum).map(Value::Number)
}

/// `words` without the words that mark a follow-up at its ends, and whether there were any.
fn unmarked(words: &[Word]) -> (&[Word], bool) {
    let is =
        |w: &[Word], k: &[&str]| w.len() == k.len() && w.iter().zip(k).all(|(w, k)| w.key == *k);
    let mut rest = words;
    let mut marked = false;
    while let Some(k) = BEFORE
        .iter()
        .find(|k| rest.len() > k.len() && is(&rest[..k.len()], k))
    {
        rest = &rest[k.len()..];
        marked = true;
    }
    while let Some(k) = AFTER
        .iter()
        .find(|k| rest.len() > k.len() && is(&rest[rest.len() - k.len()..], k))
    {
        rest = &rest[..rest.len() - k.len()];
        marked = true;
    }
    (rest, marked)
}

/// Whether `tokens[i..j]` is said as a thing is named: its slot with the "the" before it, a
/// word after it or not ("the back door", "the bedroom"), at most [`SAID_PART`] tokens; not
/// a verb's part ("turn the bedroom") nor a name without its "the" ("the it").
fn names(tokens: &[Token], i: usize, j: usize) -> bool {
    let slot = |t: Option<&Token>| matches!(t, Some(Token::Slot(_)));
    let the = |t: Option<&Token>| matches!(t, Some(Token::Word(w)) if w == "the");
    let part = &tokens[i..j];
    let starts = (slot(part.first()) && !(i > 0 && the(tokens.get(i - 1))))
        || (the(part.first()) && slot(part.get(1)));
    let ends = slot(part.last()) || (part.len() >= 2 && slot(part.get(part.len() - 2)));
    part.len() <= SAID_PART && starts && ends
}

/// `part` with the words that mark a follow-up: each word before it, each word after it,
/// and "and … too" / "and … as well", the ways a household says one.
fn marked_forms(part: &[Token]) -> Vec<Vec<Token>> {
    let words = |w: &[&str]| {
        w.iter()
            .map(|w| Token::Word(w.to_string()))
            .collect::<Vec<_>>()
    };
    let around = |before: &[&str], after: &[&str]| {
        let mut tokens = words(before);
        tokens.extend_from_slice(part);
        tokens.extend(words(after));
        tokens
    };
    let mut out: Vec<Vec<Token>> = BEFORE.iter().map(|b| around(b, &[])).collect();
    out.extend(AFTER.iter().map(|a| around(&[], a)));
    out.push(around(&["and"], &["too"]));
    out.push(around(&["and"], &["as", "well"]));
    out
}

/// The spans `(start, end)` of `tokens` that hold at least one slot, all of them `closed`.
fn spans(tokens: &[Token], closed: impl Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        let mut has_slot = false;
        for j in i + 1..=tokens.len() {
            if let Token::Slot(name) = &tokens[j - 1] {
                if !closed(name) {
                    break;
                }
                has_slot = true;
            }
            if has_slot {
                out.push((i, j));
            }
        }
    }
    out
}
