//! The small-model hooks (rule 9, and the recovery from unfounded replies): what the hop
//! loop does when a small model goes wrong. Each hook is a named function that takes what
//! it needs and returns a decision ([`Hook`], or a plain value); the hop loop (`turn.rs`)
//! applies it and the hop's report names it in its `hook`.
//!
//! - the next hop's tool choice, with the overrides the hooks ask for: [`NextHop::take`]
//!   (a recovery retry, a re-asked tool, a follow-up held to a call, "force reply" after a
//!   nudge);
//! - recovery from a flagged hop: [`Recovery::advance`] (one retry that answers what went
//!   wrong, then give up);
//! - a nudge to answer, then a stop with words from the results: [`nudge`], its hint
//!   [`answer_hint`], and the reply built from results [`reply_from_results`];
//! - invalid arguments for a known tool: [`invalid_arguments`] (re-ask once);
//! - an echoed tool payload: [`is_echo`], [`echoed`] (a streamed sentence that echoes one is
//!   held back as it is generated: `reply::echo_sentence`);
//! - nothing speakable: [`no_answer`]; words no call founded, or that say what no result
//!   carries: [`unfounded`] (before calls, recover; after them, words from the results);
//! - the turn's first calls about what was said: [`grounding`], [`ungrounded`];
//! - the same call again: [`repeated_call`];
//! - the rest of a multi-part request: [`follow_up`], [`follow_up_done`] (the request's
//!   parts: `words::request_parts`).

use serde_json::Value;

use super::check::{opening_words, refers_back, ReplyCheck, Unfounded};
use super::generate::Guard;
use super::messages::{APOLOGY, NOTHING_DONE};
use super::reply::{sentences_of, speakable};
use super::words::request_parts;
use crate::llm::{ChatMessage, ToolChoice};
use crate::preset::Preset;
use crate::toolcall::{Rejected, ToolCall, ToolSet};
use crate::tools::{Registry, ToolOutcome, ToolStatus};

/// What a hook decided for a hop; the hop loop applies it (`TurnState::apply`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Hook {
    /// The hop was flagged for this: recover ([`Recovery::advance`]).
    Recover(Unfounded),
    /// The words after the turn's calls were flagged for this: answer with words built
    /// from the results instead ([`reply_from_results`]).
    FromResults(Unfounded),
    /// Nudge the model to answer (the second time: stop, see [`nudge`]). `what` names what
    /// was caught; `hint` is the message the model is given (none: the hop is generated
    /// again from the same messages, held to words).
    Nudge { what: String, hint: Option<String> },
    /// Ask again for a call to `tool`, once, with `message` (held to that tool's grammar
    /// when the preset has one).
    ReAsk { tool: String, message: String },
    /// End the turn with [`APOLOGY`].
    Apologize { hook: String },
    /// End the turn: the confirmations already spoken are the answer.
    Done { hook: String },
}

/// What the hooks asked of the next hop: one-shot overrides of the preset's tool choice.
#[derive(Debug, Clone, Default)]
pub(super) struct NextHop {
    /// A recovery retry's choice ([`Step::Retry`]).
    pub(super) retry: Option<ToolChoice>,
    /// A tool the hop must call: the caller's `force_tool`, or a re-asked tool's.
    pub(super) tool: Option<String>,
    /// A follow-up for the rest of a multi-part request: held to a tool call.
    pub(super) follow_up: bool,
    /// After a nudge: held to words ("force reply").
    pub(super) reply: bool,
}

impl NextHop {
    /// The tool choice of hop `hop`, and whether it is a follow-up. The first override that
    /// is set wins and is used up (a retry, a named tool, a follow-up, force reply; those
    /// after it wait for a later hop, the follow-up flag excepted); then words after tool
    /// results when the preset asks for them (`have_results`), else the preset's policy.
    pub(super) fn take(
        &mut self,
        preset: &Preset,
        hop: usize,
        have_results: bool,
    ) -> (ToolChoice, bool) {
        let follow_up = std::mem::take(&mut self.follow_up);
        let choice = if let Some(c) = self.retry.take() {
            c
        } else if let Some(name) = self.tool.take() {
            ToolChoice::Named(name)
        } else if follow_up {
            ToolChoice::Required
        } else if std::mem::take(&mut self.reply) || (preset.reply_after_tools && have_results) {
            ToolChoice::Reply
        } else {
            ToolChoice::for_hop(preset.tool_choice_policy, hop, None)
        };
        (choice, follow_up)
    }
}

/// How far a turn has gone to recover from a hop the checks flagged: one retry, then the
/// turn gives up. A retry that would render the same prompt under the same grammar as the
/// flagged hop is never made: decoding is greedy, so it would write the same words again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Nothing flagged yet.
    None,
    /// Asked again without the history (a small model copies what it sees there).
    Fresh,
    /// Asked again with the history (what "it" and "too" refer to), under a grammar.
    Forced,
}

/// What a flagged hop leads to.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// Ask again, under this choice.
    Retry(ToolChoice),
    /// Stop, saying this (the turn is not kept in the history).
    GiveUp(&'static str),
}

/// What the retry after a flagged hop can be: a grammar to hold it to a call, a history to
/// leave out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Retry {
    pub(super) has_grammar: bool,
    pub(super) has_history: bool,
}

impl Recovery {
    /// The next step after a hop flagged for `why`, and the hop's `hook` that says which.
    ///
    /// The one retry answers what went wrong: words that needed a call (a claim, a
    /// reading, tool talk, an order) and a call to a misnamed tool are held to a call, with
    /// the history (with no grammar to hold it: asked again without the history); words
    /// copied from the history (the request said back, a reply repeated) are asked for in
    /// words without it, else held to a call; nothing speakable, nothing at all, and a call
    /// about something nobody said are asked for in words, without the history that misled
    /// the model (asked for a call again, a small model makes the same guess or another). A
    /// retry in words is shown no tools (`shared::Frame::Words`). A second flag, or no retry
    /// that differs from the flagged hop, gives up.
    ///
    /// Asked again without the history but shown the tools, the 0.5B model ran no call in
    /// any of 94 such retries over a day's spoken sessions (after words repeated or said
    /// back, or nothing at all): it called something nobody asked for, and the turn said
    /// "Sorry, nothing was done." (docs/measurements.md).
    pub(super) fn advance(&mut self, why: Unfounded, can: Retry) -> (Step, String) {
        let label = why.label();
        let forced = can
            .has_grammar
            .then_some((Recovery::Forced, ToolChoice::Required));
        let fresh = can
            .has_history
            .then_some((Recovery::Fresh, ToolChoice::Auto));
        let words = Some((Recovery::Fresh, ToolChoice::Reply));
        let retry = match (*self, why) {
            (
                Recovery::None,
                Unfounded::Claim
                | Unfounded::Reading
                | Unfounded::ToolTalk
                | Unfounded::Misnamed
                | Unfounded::Order,
            ) => forced.or(fresh),
            (Recovery::None, Unfounded::Echo | Unfounded::Repeat) => {
                words.filter(|_| can.has_history).or(forced)
            }
            (Recovery::None, Unfounded::Silent | Unfounded::NoAnswer | Unfounded::Unasked) => words,
            _ => None,
        };
        match retry {
            Some((next, choice)) => {
                *self = next;
                let how = match (next, &choice) {
                    (Recovery::Forced, _) => "asked again for a tool call",
                    (_, ToolChoice::Reply) => "asked again for words",
                    _ => "asked again without the history",
                };
                (Step::Retry(choice), format!("{label}: {how}"))
            }
            None => (
                Step::GiveUp(give_up_words(why)),
                format!("{label}: nothing was done"),
            ),
        }
    }
}

/// What a hop is asked with, as a hash of its prompt and its grammars: two hops with the
/// same key write the same (decoding is greedy).
pub(super) fn hop_key(prompt: &str, grammar: &super::generate::Grammar) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    prompt.hash(&mut h);
    grammar.whole.hash(&mut h);
    grammar
        .lazy
        .as_ref()
        .map(|l| l.grammar.clone())
        .hash(&mut h);
    h.finish()
}

/// What a turn that gives up after `why` says: that nothing was done when a call was
/// wanted, else an apology.
pub(super) fn give_up_words(why: Unfounded) -> &'static str {
    match why {
        Unfounded::Claim | Unfounded::Unasked | Unfounded::Misnamed | Unfounded::Order => {
            NOTHING_DONE
        }
        Unfounded::ToolTalk
        | Unfounded::Repeat
        | Unfounded::NoAnswer
        | Unfounded::Silent
        | Unfounded::Reading
        | Unfounded::Echo => APOLOGY,
    }
}

/// What a nudge leads to.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Nudged {
    /// The first time: the next hop is held to words (with the hint, if any).
    Answer { hook: String },
    /// The second time: stop, saying `words`.
    Stop { hook: String, words: String },
}

/// A hook that wants the model to answer now: the first time (`nudged` false), a hint and
/// a reply-only hop; the second time, stop with words built from the results (or an
/// apology when there are none).
pub(super) fn nudge(nudged: bool, what: &str, outcomes: &[ToolOutcome]) -> Nudged {
    if !nudged {
        Nudged::Answer {
            hook: format!("{what}: nudged to answer"),
        }
    } else {
        Nudged::Stop {
            hook: format!("{what} again: stopped"),
            words: if outcomes.is_empty() {
                APOLOGY.to_string()
            } else {
                reply_from_results(outcomes)
            },
        }
    }
}

/// The hint a nudge gives: `lead`, the results so far, and the request to answer in words.
pub(super) fn answer_hint(lead: &str, outcomes: &[ToolOutcome]) -> String {
    let results: Vec<String> = outcomes
        .iter()
        .map(|o| format!("{} -> {}", o.name, o.result))
        .collect();
    if results.is_empty() {
        format!("(system: {lead} Answer the previous request in one short plain sentence.)")
    } else {
        format!(
            "(system: {lead} The tool results are: {}. Answer the previous request in one short plain sentence, without calling a tool.)",
            results.join("; ")
        )
    }
}

/// A known tool called with arguments that failed validation, or with malformed markup
/// (empty or schema-echo arguments are the usual small-model cases): re-ask once; when the
/// tool has already run in the turn, nudge to answer from its results; else stop.
/// `known` says whether a tool is in the tool set; `ran` lists the tools the turn ran.
pub(super) fn invalid_arguments(
    rejected: &[Rejected],
    known: impl Fn(&str) -> bool,
    reasked: bool,
    ran: &[String],
    outcomes: &[ToolOutcome],
) -> Option<Hook> {
    let name = rejected.iter().find_map(|r| {
        r.name
            .as_ref()
            .filter(|n| {
                known(n) && !r.reason.contains("reasoning") && !r.reason.contains("conflicting")
            })
            .cloned()
    })?;
    let has_run = ran.contains(&name);
    Some(if !reasked && !has_run {
        Hook::ReAsk {
            message: format!(
                "(system: the call to {name} had invalid arguments. Call {name} again with real values for its parameters.)"
            ),
            tool: name,
        }
    } else if has_run {
        Hook::Nudge {
            what: format!("called {name} again with invalid arguments"),
            hint: Some(answer_hint(&format!("{name} has already run."), outcomes)),
        }
    } else {
        Hook::Apologize {
            hook: format!("invalid arguments for {name} again: stopped"),
        }
    })
}

/// True when a reply only repeats a tool payload (JSON, a `<tool_response>`, or a result
/// verbatim) instead of answering: such text is never spoken.
pub(crate) fn is_echo(raw: &str, reply: &str, outcomes: &[ToolOutcome]) -> bool {
    let t = raw.trim();
    if t.contains("<tool_response>") || t.contains("tool results —") {
        return true;
    }
    let json_like =
        (t.starts_with('{') || t.starts_with('[')) && serde_json::from_str::<Value>(t).is_ok();
    let fenced_json = t.starts_with("```") && reply.trim().is_empty();
    json_like
        || fenced_json
        || (!outcomes.is_empty() && reply.trim().is_empty())
        || outcomes
            .iter()
            .any(|o| o.result.len() > 12 && t.trim_matches('"') == o.result.trim())
}

/// A hop after calls whose words only echo a tool payload ([`is_echo`]): nudge. (Before
/// any result there is no payload to echo: JSON then is a call that failed to parse.)
pub(super) fn echoed(hop: usize, raw: &str, said: &str, outcomes: &[ToolOutcome]) -> Option<Hook> {
    (hop > 0 && !outcomes.is_empty() && is_echo(raw, said, outcomes)).then(|| Hook::Nudge {
        what: "echoed the tool payload".to_string(),
        hint: Some(answer_hint("Do not repeat the tool output.", outcomes)),
    })
}

/// Nothing to say: JSON only, or a call to a tool that does not exist (a small model's way
/// to tell a joke is `{"name": "Joke", …}`), or nothing at all. Before any call
/// (`checking`): recover from `why` ([`unspeakable`]). After calls: asked again with the
/// results, held to words; a hint would only be parroted back.
pub(super) fn no_answer(said: &str, checking: bool, why: Unfounded) -> Option<Hook> {
    if !said.is_empty() {
        None
    } else if checking {
        Some(Hook::Recover(why))
    } else {
        Some(Hook::Nudge {
            what: "nothing speakable".to_string(),
            hint: None,
        })
    }
}

/// Words a tool's name is made of that say nothing of what it is about.
const GENERIC_NAME_WORDS: &[&str] = &[
    "set", "get", "is", "do", "make", "run", "call", "check", "read", "turn", "switch", "toggle",
    "current", "update", "change", "the", "a", "to", "of", "on", "off",
];

/// Why a hop's output has nothing to speak: it wrote nothing at all
/// ([`Unfounded::Silent`]), a call to a misnamed tool ([`Unfounded::Misnamed`], see
/// [`misnamed`]), or something else unspeakable ([`Unfounded::NoAnswer`]).
pub(super) fn unspeakable(raw: &str, rejected: &[Rejected], tools: &ToolSet) -> Unfounded {
    if raw.trim().is_empty() {
        Unfounded::Silent
    } else if misnamed(rejected, tools) {
        Unfounded::Misnamed
    } else {
        Unfounded::NoAnswer
    }
}

/// Whether a call the parser rejected names a tool that does not exist but shares a word
/// with one that does (`lock` or `lock_glass_door` for `set_lock`): the model meant a call.
/// A name like nothing offered (`Joke`) is not.
pub(super) fn misnamed(rejected: &[Rejected], tools: &ToolSet) -> bool {
    let words = |name: &str| -> Vec<String> {
        crate::intent::name_words(name)
            .into_iter()
            .filter(|w| !GENERIC_NAME_WORDS.contains(&w.as_str()))
            .collect()
    };
    let known: Vec<String> = tools.names().flat_map(words).collect();
    rejected
        .iter()
        .filter_map(|r| r.name.as_deref())
        .filter(|n| !tools.contains(n))
        .any(|n| words(n).iter().any(|w| known.contains(w)))
}

/// Words checked before they count as the answer: the sentence the stream held back
/// (`held`), else the first of `said` the guard flags. Before any call of the turn,
/// recover (ask again); after calls, answer from the results instead: words that say what
/// no result carries, or the request back, are never the answer.
pub(super) fn unfounded(guard: &Guard<'_>, held: Option<Unfounded>, said: &str) -> Option<Hook> {
    let why = held.or_else(|| {
        sentences_of(said)
            .iter()
            .find_map(|s| guard.check(s.as_str()))
    })?;
    Some(flagged(why, guard.before_calls()))
}

/// A reply built from results when the model only echoed them: plain words, no JSON.
pub(super) fn reply_from_results(outcomes: &[ToolOutcome]) -> String {
    let ok: Vec<&ToolOutcome> = outcomes
        .iter()
        .filter(|o| o.status != ToolStatus::Error)
        .collect();
    if ok.is_empty() {
        return APOLOGY.to_string();
    }
    let said: Vec<String> = ok
        .iter()
        .map(|o| result_words(&o.result))
        .filter(|s| !s.is_empty())
        .collect();
    if said.is_empty() {
        return "Done.".to_string();
    }
    let text = format!("{}.", said.join(", ").trim_end_matches('.'));
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// A tool result as words: a JSON object's scalar fields as `key: value`, else the
/// sanitised text.
fn result_words(result: &str) -> String {
    let words = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        _ => None,
    };
    match serde_json::from_str::<Value>(result.trim()) {
        Ok(Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| words(v).map(|w| format!("{}: {w}", k.replace('_', " "))))
            .collect::<Vec<_>>()
            .join(", "),
        Ok(Value::Array(a)) => a.iter().filter_map(words).collect::<Vec<_>>().join(", "),
        Ok(v) => words(&v).unwrap_or_default(),
        Err(_) => speakable(result),
    }
}

/// What a first call of the turn must be about: the request, or, when the request points
/// back ([`refers_back`]: "turn it off", "and the bedroom too"), the request and the turn
/// before it.
pub(super) fn grounding(request: &str, history: &[ChatMessage]) -> String {
    if refers_back(request) {
        format!("{request} {}", last_turn_text(history))
    } else {
        request.to_string()
    }
}

/// The last turn of a history, as text: its request, the results and what the assistant
/// said, with the names of the tools it called. A follow-up ("and the bedroom too") is
/// about what it names. A call the model wrote as text is left out: its keys are not words
/// anyone said (`"on": false` says "on").
fn last_turn_text(history: &[ChatMessage]) -> String {
    let start = history
        .iter()
        .rposition(|m| m.role == "user" && !m.content.starts_with("(system:"))
        .unwrap_or(history.len());
    let written_call = |m: &ChatMessage| {
        let t = m.content.trim_start();
        m.role == "assistant" && (t.starts_with('{') || t.starts_with('<') || t.starts_with('['))
    };
    history[start..]
        .iter()
        .flat_map(|m| {
            let words = (!written_call(m)).then_some(m.content.as_str());
            words
                .into_iter()
                .chain(m.tool_calls.iter().map(|c| c.function.name.as_str()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The turn's first calls run only when they are about `about` ([`grounding`]; a retry
/// asked without the history: the request itself): when `applies` (no call has run, and
/// the caller named no tool) and a call is not, recover.
pub(super) fn ungrounded(
    applies: bool,
    check: &ReplyCheck,
    calls: &[ToolCall],
    about: &str,
) -> Option<Hook> {
    let grounded = |c: &ToolCall| check.grounded(c.name(), c.arguments(), about);
    (applies && !calls.iter().all(grounded)).then_some(Hook::Recover(Unfounded::Unasked))
}

/// The calls of a hop that carry a value nothing said supports
/// ([`crate::intent::unsupported`] against the tool's schema in `registry`: "living room
/// on" for "turn off the kitchen and living room lights", 10 degrees after "22.5"), by
/// index. None of them runs, whichever hop made it; the others of the hop do. `forced`:
/// the caller named the tool, and its values are the caller's.
pub(super) fn unsupported_calls(
    registry: &Registry,
    calls: &[ToolCall],
    about: &str,
    forced: bool,
) -> Vec<usize> {
    if forced {
        return Vec::new();
    }
    calls
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let parameters = &registry.get(c.name())?.spec.parameters;
            let value = crate::intent::unsupported(parameters, c.arguments(), about)?;
            tracing::info!(tool = %c.name(), value = %value, "a call's value is not in the request: not run");
            Some(i)
        })
        .collect()
}

/// Question words a request that asks to know something begins with ("what does a
/// thermostat do?"), besides those of a yes/no question about a state ("is it too dark?":
/// [`crate::intent::ASKS_A_STATE`]): such a request is answered, never asked back.
const WH_WORDS: &[&str] = &[
    "what", "what's", "whats", "when", "where", "which", "who", "whose", "how", "why",
];

/// The question hearth asks instead of refusing the hop's calls, when it would rather ask:
/// no call has run in the turn and the caller named no tool (`checking`); every call was
/// held back only for a value the request did not say (`dropped` holds them all: "It's too
/// dark in the hallway." → the hallway light on, "on" not said) and that it says no other
/// value for ([`crate::intent::contradicts`]: "turn off the light" is never asked back as
/// "turn on"); each is about something the request names ([`ReplyCheck::grounded`]); the
/// request does not ask to know something ([`WH_WORDS`]); no device or place was chosen for
/// the household ([`super::which::open_choices`]: that is asked as which); and every call can be said in
/// its tool's own words ([`crate::intent::Intents::said_as`]). A yes runs them
/// ([`super::confirm`]).
pub(super) fn ask_back(
    checking: bool,
    registry: &Registry,
    check: &ReplyCheck,
    calls: &[ToolCall],
    dropped: &[usize],
    request: &str,
) -> Option<String> {
    if !checking || calls.is_empty() || dropped.len() != calls.len() {
        return None;
    }
    if asks_to_know(request) {
        return None;
    }
    for c in calls {
        let parameters = &registry.get(c.name())?.spec.parameters;
        let contradicted = crate::intent::contradicts(parameters, c.arguments(), request);
        let chosen_for_them = c.arguments().as_object().is_some_and(|args| {
            super::which::open_choices(parameters, args, request)
                .next()
                .is_some()
        });
        if contradicted || chosen_for_them || !check.grounded(c.name(), c.arguments(), request) {
            return None;
        }
    }
    shall_i(registry, calls)
}

/// Whether `request` opens by asking to know something ([`WH_WORDS`], or a yes/no question
/// about a state): such a request is never answered with a question of what to do.
pub(super) fn asks_to_know(request: &str) -> bool {
    opening_words(request).into_iter().next().is_some_and(|w| {
        WH_WORDS.contains(&w.as_str()) || crate::intent::ASKS_A_STATE.contains(&w.as_str())
    })
}

/// "Shall I …?" with `calls` said back in their tools' own words ([`Intents::said_as`]);
/// `None` when one has no sentence that says it.
///
/// [`Intents::said_as`]: crate::intent::Intents::said_as
pub(super) fn shall_i(registry: &Registry, calls: &[ToolCall]) -> Option<String> {
    let said: Option<Vec<String>> = calls
        .iter()
        .map(|c| registry.intents().said_as(c.name(), c.arguments()))
        .collect();
    Some(format!("Shall I {}?", said?.join(" and ")))
}

/// Every call of a hop carries a value nothing said supports ([`unsupported_calls`]):
/// before any call has run the turn recovers, after, it ends with what did run.
pub(super) fn unsupported_value(all: bool, before_calls: bool) -> Option<Hook> {
    all.then(|| flagged(Unfounded::Unasked, before_calls))
}

/// What a flagged hop leads to: before any call of the turn, recovery (asked again); after
/// calls, an answer from the results.
fn flagged(why: Unfounded, before_calls: bool) -> Hook {
    if before_calls {
        Hook::Recover(why)
    } else {
        Hook::FromResults(why)
    }
}

/// A call's identity for spotting repeats: its name and arguments.
pub(super) fn call_key(c: &ToolCall) -> String {
    format!("{}{}", c.name(), c.arguments())
}

/// The same call(s) as before in the turn (`seen`: their [`call_key`]s): nudge once, then
/// stop.
pub(super) fn repeated_call(
    calls: &[ToolCall],
    seen: &[String],
    outcomes: &[ToolOutcome],
) -> Option<Hook> {
    calls
        .iter()
        .all(|c| seen.contains(&call_key(c)))
        .then(|| Hook::Nudge {
            what: "repeated an identical call".to_string(),
            hint: Some(answer_hint(
                "That call was already made; do not call it again.",
                outcomes,
            )),
        })
}

/// After a hop whose calls were all confirmed: when the request asked for more than the
/// `made` calls (`words::clauses`) and a hop is left (`hop_left`) under a preset with a grammar,
/// the rest of the request as the user's next words (a small model answers the last
/// message), for a follow-up hop held to a tool call.
pub(super) fn follow_up(
    request: &str,
    made: usize,
    hop_left: bool,
    has_grammar: bool,
) -> Option<String> {
    let parts = request_parts(request);
    (parts.len() > made && hop_left && has_grammar)
        .then(|| format!("{}.", parts[made..].join(". ")))
}

/// A follow-up hop (`in_follow_up`) that called nothing, or only calls already made:
/// nothing more was asked for, the confirmations are the answer.
pub(super) fn follow_up_done(
    in_follow_up: bool,
    calls: &[ToolCall],
    seen: &[String],
) -> Option<Hook> {
    (in_follow_up && calls.iter().all(|c| seen.contains(&call_key(c)))).then(|| Hook::Done {
        hook: "follow-up called nothing new: done".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::check::Earlier;
    use crate::agent::reading::Carried;
    use crate::preset::ToolChoicePolicy;
    use crate::tools::Registry;
    use serde_json::json;

    fn outcome(name: &str, status: ToolStatus, result: &str) -> ToolOutcome {
        ToolOutcome {
            id: format!("{name}_0"),
            name: name.to_string(),
            arguments: json!({}),
            status,
            result: result.to_string(),
            elapsed_ms: 0.0,
        }
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        crate::toolcall::ToolSet::unrestricted()
            .call(format!("{name}_0"), name, arguments)
            .expect("the arguments are a JSON object")
    }

    fn demo() -> ReplyCheck {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
        ReplyCheck::new(&Registry::load_dir(dir).expect("the demo tools load"))
    }

    fn preset() -> Preset {
        Preset::load("qwen2.5-coder").expect("a built-in preset")
    }

    fn hook_of(n: Nudged) -> String {
        match n {
            Nudged::Answer { hook } | Nudged::Stop { hook, .. } => hook,
        }
    }

    #[test]
    fn the_next_hop_takes_the_first_override_and_keeps_the_rest() {
        let p = preset();
        let policy = |hop| ToolChoice::for_hop(p.tool_choice_policy, hop, None);
        let mut next = NextHop::default();
        assert_eq!(next.take(&p, 1, false), (policy(1), false));

        // a retry comes first; a pending "force reply" waits for the hop after it
        next.retry = Some(ToolChoice::Required);
        next.reply = true;
        assert_eq!(next.take(&p, 1, false), (ToolChoice::Required, false));
        assert_eq!(next.take(&p, 2, false), (ToolChoice::Reply, false));
        assert_eq!(next.take(&p, 3, false), (policy(3), false));

        // a named tool, then a follow-up held to a call
        next.tool = Some("set_light".into());
        assert_eq!(
            next.take(&p, 0, false),
            (ToolChoice::Named("set_light".into()), false)
        );
        next.follow_up = true;
        assert_eq!(next.take(&p, 1, true), (ToolChoice::Required, true));
        assert!(!next.follow_up);

        // words after results when the preset asks for them
        let mut words = p.clone();
        words.reply_after_tools = true;
        words.tool_choice_policy = ToolChoicePolicy::RequiredAlways;
        assert_eq!(next.take(&words, 1, true), (ToolChoice::Reply, false));
        assert_eq!(next.take(&words, 1, false), (ToolChoice::Required, false));
    }

    #[test]
    fn recovery_retries_once_by_what_went_wrong_then_gives_up() {
        let can = |has_grammar, has_history| Retry {
            has_grammar,
            has_history,
        };
        let first = |why, c| Recovery::None.advance(why, c);
        // words that needed a call: held to one, with the history
        let (step, hook) = first(Unfounded::Claim, can(true, true));
        assert_eq!(step, Step::Retry(ToolChoice::Required));
        assert_eq!(
            hook,
            "claimed an action no call carried out: asked again for a tool call"
        );
        for why in [
            Unfounded::Reading,
            Unfounded::ToolTalk,
            Unfounded::Misnamed,
            Unfounded::Order,
        ] {
            assert_eq!(
                first(why, can(true, false)).0,
                Step::Retry(ToolChoice::Required)
            );
        }
        // no grammar: asked without the history, or, with none to leave out, given up
        assert_eq!(
            first(Unfounded::Claim, can(false, true)).0,
            Step::Retry(ToolChoice::Auto)
        );
        assert_eq!(
            first(Unfounded::Claim, can(false, false)).0,
            Step::GiveUp(NOTHING_DONE)
        );
        // words copied from the history: asked for words without it, else held to a call
        let (step, hook) = first(Unfounded::Echo, can(true, true));
        assert_eq!(step, Step::Retry(ToolChoice::Reply));
        assert!(hook.ends_with(": asked again for words"), "{hook}");
        let mut r = Recovery::None;
        r.advance(Unfounded::Repeat, can(true, true));
        assert_eq!(r, Recovery::Fresh, "without the history");
        assert_eq!(
            first(Unfounded::Repeat, can(true, false)).0,
            Step::Retry(ToolChoice::Required)
        );
        // nothing to say: held to words
        let (step, hook) = first(Unfounded::NoAnswer, can(false, false));
        assert_eq!(step, Step::Retry(ToolChoice::Reply));
        assert!(hook.ends_with(": asked again for words"), "{hook}");
        // nothing at all, and a call nobody asked for: asked for words, without the history
        // that misled the model
        for (why, c) in [Unfounded::Silent, Unfounded::Unasked]
            .into_iter()
            .flat_map(|why| [(why, can(true, true)), (why, can(true, false))])
        {
            let mut r = Recovery::None;
            assert_eq!(r.advance(why, c).0, Step::Retry(ToolChoice::Reply));
            assert_eq!(r, Recovery::Fresh);
        }

        // one retry: whatever is flagged next gives up
        for start in [Unfounded::Claim, Unfounded::Echo, Unfounded::NoAnswer] {
            let mut r = Recovery::None;
            r.advance(start, can(true, true));
            assert_ne!(r, Recovery::None);
            let (step, hook) = r.advance(Unfounded::Unasked, can(true, true));
            assert_eq!(step, Step::GiveUp(NOTHING_DONE));
            assert!(hook.ends_with(": nothing was done"));
            let (step, _) = r.advance(Unfounded::ToolTalk, can(true, true));
            assert_eq!(step, Step::GiveUp(APOLOGY));
        }
    }

    #[test]
    fn a_misnamed_tool_is_one_named_like_a_real_one() {
        let tools = ToolSet::from_openai_value(&serde_json::json!([
            {"type": "function", "function": {"name": "set_lock", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
        ]))
        .unwrap();
        let rejected = |name: &str| {
            [Rejected {
                name: Some(name.to_string()),
                reason: "unknown tool".into(),
            }]
        };
        assert!(misnamed(&rejected("lock"), &tools));
        assert!(misnamed(&rejected("lock_glass_door"), &tools));
        assert!(misnamed(&rejected("time-now"), &tools));
        assert!(
            misnamed(&rejected("currentTime"), &tools),
            "camel case is two words"
        );
        assert!(!misnamed(&rejected("Joke"), &tools));
        assert!(
            !misnamed(&rejected("set_mood"), &tools),
            "a verb alone is no likeness"
        );
        assert!(
            !misnamed(&rejected("set_lock"), &tools),
            "a known tool is not misnamed"
        );
        assert!(!misnamed(&[], &tools));
        assert_eq!(unspeakable(" \n", &[], &tools), Unfounded::Silent);
        assert_eq!(
            unspeakable("{\"name\": \"lock\"}", &rejected("lock"), &tools),
            Unfounded::Misnamed
        );
        assert_eq!(
            unspeakable("{\"name\": \"Joke\"}", &rejected("Joke"), &tools),
            Unfounded::NoAnswer
        );
    }

    #[test]
    fn a_nudge_answers_once_then_stops_with_words_from_the_results() {
        assert_eq!(
            nudge(false, "echoed the tool payload", &[]),
            Nudged::Answer {
                hook: "echoed the tool payload: nudged to answer".into()
            }
        );
        assert_eq!(
            nudge(true, "repeated an identical call", &[]),
            Nudged::Stop {
                hook: "repeated an identical call again: stopped".into(),
                words: APOLOGY.into()
            }
        );
        let results = [outcome("get_time", ToolStatus::Ok, "14:05")];
        let stop = nudge(true, "x", &results);
        assert_eq!(
            stop,
            Nudged::Stop {
                hook: "x again: stopped".into(),
                words: "14:05.".into()
            }
        );
        assert_eq!(hook_of(stop), "x again: stopped");
    }

    #[test]
    fn an_answer_hint_carries_the_results() {
        assert_eq!(
            answer_hint("Do not repeat the tool output.", &[]),
            "(system: Do not repeat the tool output. Answer the previous request in one short plain sentence.)"
        );
        let hint = answer_hint(
            "Lead.",
            &[
                outcome("get_time", ToolStatus::Ok, "14:05"),
                outcome("get_date", ToolStatus::Ok, "Monday"),
            ],
        );
        assert!(hint.contains("The tool results are: get_time -> 14:05; get_date -> Monday."));
        assert!(hint.ends_with("without calling a tool.)"));
    }

    #[test]
    fn invalid_arguments_for_a_known_tool_are_reasked_once() {
        let known = |n: &str| n == "set_light";
        let bad = |name: &str, reason: &str| Rejected {
            name: Some(name.to_string()),
            reason: reason.to_string(),
        };
        let rejected = [bad("set_light", "schema: missing room")];
        let Some(Hook::ReAsk { tool, message }) =
            invalid_arguments(&rejected, known, false, &[], &[])
        else {
            panic!("a re-ask");
        };
        assert_eq!(tool, "set_light");
        assert!(message.contains("Call set_light again with real values"));
        assert_eq!(
            invalid_arguments(&rejected, known, true, &[], &[]),
            Some(Hook::Apologize {
                hook: "invalid arguments for set_light again: stopped".into()
            })
        );
        let ran = ["set_light".to_string()];
        let Some(Hook::Nudge { what, hint }) =
            invalid_arguments(&rejected, known, false, &ran, &[])
        else {
            panic!("a nudge");
        };
        assert_eq!(what, "called set_light again with invalid arguments");
        assert!(hint.is_some_and(|h| h.contains("set_light has already run.")));
        // unknown tools, calls inside reasoning and conflicting formats are not re-asked
        for r in [
            bad("tell_joke", "unknown tool"),
            bad("set_light", "inside reasoning"),
            bad("set_light", "conflicting formats"),
        ] {
            assert_eq!(invalid_arguments(&[r], known, false, &[], &[]), None);
        }
    }

    #[test]
    fn echoes_of_tool_payloads_are_caught() {
        let results = [outcome(
            "get_weather",
            ToolStatus::Ok,
            "sunny and 21 degrees",
        )];
        assert!(is_echo("{\"temp\": 21}", "", &[]));
        assert!(is_echo("<tool_response>x</tool_response>", "x", &[]));
        assert!(is_echo(
            "\"sunny and 21 degrees\"",
            "sunny and 21 degrees",
            &results
        ));
        assert!(is_echo("```json\n{}\n```", "", &[]));
        assert!(!is_echo("It is sunny.", "It is sunny.", &results));

        use crate::agent::reply::echo_sentence;
        assert!(echo_sentence("(system: tool results — x)", &[]));
        assert!(echo_sentence("sunny and 21 degrees.", &results));
        assert!(!echo_sentence("It is sunny today.", &results));

        assert!(echoed(0, "{\"a\": 1}", "", &[]).is_none(), "not on hop 0");
        let Some(Hook::Nudge { what, hint }) = echoed(1, "{\"a\": 1}", "", &results) else {
            panic!("a nudge");
        };
        assert_eq!(what, "echoed the tool payload");
        assert!(hint.is_some_and(|h| h.contains("Do not repeat the tool output.")));
    }

    #[test]
    fn nothing_speakable_recovers_before_a_call_and_nudges_after() {
        assert_eq!(no_answer("Hello.", true, Unfounded::NoAnswer), None);
        assert_eq!(
            no_answer("", true, Unfounded::NoAnswer),
            Some(Hook::Recover(Unfounded::NoAnswer))
        );
        assert_eq!(
            no_answer("", true, Unfounded::Misnamed),
            Some(Hook::Recover(Unfounded::Misnamed))
        );
        assert_eq!(
            no_answer("", false, Unfounded::Misnamed),
            Some(Hook::Nudge {
                what: "nothing speakable".into(),
                hint: None
            })
        );
    }

    #[test]
    fn words_no_call_founded_are_recovered_from() {
        let check = demo();
        let earlier = Earlier::default();
        let guard = Guard {
            check: &check,
            request: "Turn on the office light.",
            earlier: &earlier,
            carried: None,
        };
        assert_eq!(
            unfounded(&guard, None, "Sure. The office light is on."),
            Some(Hook::Recover(Unfounded::Claim))
        );
        assert_eq!(
            unfounded(&guard, Some(Unfounded::ToolTalk), "Hello."),
            Some(Hook::Recover(Unfounded::ToolTalk)),
            "what the stream held back decides"
        );
        assert_eq!(unfounded(&guard, None, "Good night, sleep well."), None);
        // a time no call read is a reading, not an answer
        assert_eq!(
            unfounded(&guard, None, "It is three o'clock."),
            Some(Hook::Recover(Unfounded::Reading))
        );
        assert_eq!(
            unfounded(&guard, None, "Okay, turn on the office light."),
            Some(Hook::Recover(Unfounded::Echo))
        );
    }

    fn carried(results: &[&str], request: &str) -> Carried {
        let mut c = Carried::default();
        for r in results {
            c.result(r);
        }
        c.said(request);
        c
    }

    #[test]
    fn words_after_calls_that_no_result_carries_are_answered_from_the_results() {
        let check = demo();
        let earlier = Earlier::default();
        let request = "What time is it and how warm is it in the kitchen?";
        let read = carried(&["10:00 AM", "kitchen 21 degrees"], request);
        let guard = Guard {
            check: &check,
            request,
            earlier: &earlier,
            carried: Some(&read),
        };
        assert!(!guard.before_calls());
        assert_eq!(
            unfounded(
                &guard,
                None,
                "The current time is 10:00 AM and the temperature is 22 degrees."
            ),
            Some(Hook::FromResults(Unfounded::Reading))
        );
        assert_eq!(
            unfounded(&guard, None, "What time is it?"),
            Some(Hook::FromResults(Unfounded::Echo)),
            "a part of the request said back"
        );
        // what the results carry may be said, and so may words that read nothing
        for fine in [
            "It's 10:00 AM and 21 degrees in the kitchen.",
            "It is ten o'clock, and the kitchen is at twenty-one degrees.",
            "You're welcome!",
        ] {
            assert_eq!(unfounded(&guard, None, fine), None, "{fine}");
        }
        // a claim after a call is the call's to make: not checked as before one
        let lit = carried(&["office light on"], "Turn on the office light.");
        let after = Guard {
            carried: Some(&lit),
            request: "Turn on the office light.",
            ..guard
        };
        assert_eq!(unfounded(&after, None, "The office light is on."), None);
        let thermostat = carried(&["thermostat 21 degrees"], "what is the thermostat at?");
        let after = Guard {
            carried: Some(&thermostat),
            request: "what is the thermostat at?",
            ..after
        };
        assert_eq!(
            unfounded(&after, None, "The thermostat is at 21 degrees."),
            None
        );
        assert_eq!(
            unfounded(&after, None, "The thermostat is at 22 degrees."),
            Some(Hook::FromResults(Unfounded::Reading))
        );
    }

    #[test]
    fn replies_from_results_are_plain_words() {
        assert_eq!(
            reply_from_results(&[outcome(
                "t",
                ToolStatus::Ok,
                r#"{"temp_c": 21, "sunny": true}"#
            )]),
            "Temp c: 21, sunny: yes."
        );
        assert_eq!(
            reply_from_results(&[outcome("t", ToolStatus::Ok, "[\"a\", 2]")]),
            "A, 2."
        );
        assert_eq!(
            reply_from_results(&[outcome("t", ToolStatus::Empty, "")]),
            "Done."
        );
        assert_eq!(
            reply_from_results(&[outcome("t", ToolStatus::Error, "boom")]),
            APOLOGY
        );
        assert_eq!(result_words("it is **warm**"), "it is warm");
    }

    #[test]
    fn first_calls_are_grounded_on_the_request_or_the_turn_it_points_back_at() {
        let history = vec![
            ChatMessage::user("turn on the kitchen light"),
            ChatMessage::assistant_calls(
                String::new(),
                [(
                    "c0".to_string(),
                    "set_light".to_string(),
                    json!({"room": "kitchen", "on": true}),
                )],
            ),
            ChatMessage::user("(system: tool results — ok)"),
        ];
        assert_eq!(grounding("good morning", &history), "good morning");
        let context = grounding("turn it off again", &history);
        assert!(context.starts_with("turn it off again turn on the kitchen light"));
        assert!(context.contains("set_light"));

        let check = demo();
        let kitchen = [call("set_light", json!({"room": "kitchen", "on": false}))];
        assert_eq!(ungrounded(true, &check, &kitchen, &context), None);
        assert_eq!(
            ungrounded(true, &check, &kitchen, "turn it off again"),
            Some(Hook::Recover(Unfounded::Unasked))
        );
        assert_eq!(
            ungrounded(false, &check, &kitchen, "tell me a joke"),
            None,
            "after a call, or a tool the caller named"
        );

        // a call the model wrote as text lends its keys to nothing: "on" was not said
        let written = vec![
            ChatMessage::user("turn off the bathroom light"),
            ChatMessage::assistant(
                "{\"name\": \"set_light\", \"arguments\": {\"room\": \"bathroom\", \"on\": false}}",
            ),
            ChatMessage::user("(system: tool results — bathroom light off)"),
            ChatMessage::assistant("The bathroom light is off."),
        ];
        let context = grounding("and the living room too", &written);
        assert_eq!(
            context,
            "and the living room too turn off the bathroom light (system: tool results — bathroom light off) The bathroom light is off."
        );
    }

    #[test]
    fn a_remark_that_only_sounds_like_it_points_back_borrows_no_value() {
        // the espeak-ng session's "It's too dark in the hallway." after a temperature was
        // set: "it" and "too" point at nothing, and 21 was said by no one this turn
        let history = vec![
            ChatMessage::user("set the thermostat to 21 degrees"),
            ChatMessage::assistant("The heating is set to 21 degrees."),
        ];
        let remark = "It's too dark in the hallway.";
        assert_eq!(grounding(remark, &history), remark);
        let thermostat = json!({"type": "object", "required": ["temperature"],
            "properties": {"temperature": {"type": "number", "minimum": 10, "maximum": 30}}});
        let call = json!({"temperature": 21});
        assert!(
            crate::intent::unsupported(&thermostat, &call, &grounding(remark, &history)).is_some()
        );
        // what does point back may take the turn's values
        let again = grounding("set it to the same again", &history);
        assert!(crate::intent::unsupported(&thermostat, &call, &again).is_none());
    }

    #[test]
    fn a_call_about_what_was_said_with_a_value_nobody_said_is_asked_about() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
        let registry = Registry::load_dir(dir).expect("the demo tools load");
        let check = ReplyCheck::new(&registry);
        let on = [call("set_light", json!({"room": "bathroom", "on": true}))];
        let ask = |checking: bool, dropped: &[usize], request: &str| {
            ask_back(checking, &registry, &check, &on, dropped, request)
        };
        assert_eq!(
            ask(true, &[0], "It's too dark in the bathroom.").as_deref(),
            Some("Shall I turn on the bathroom light?")
        );
        // after a call ran, or with a call that was not held back, it is not asked
        assert_eq!(ask(false, &[0], "It's too dark in the bathroom."), None);
        assert_eq!(ask(true, &[], "It's too dark in the bathroom."), None);
        // a call about nothing the request names is refused, not asked
        assert_eq!(ask(true, &[0], "It's too dark in here."), None);
        // a request that says the other way is not asked the call's way
        assert_eq!(ask(true, &[0], "Switch the bathroom light off."), None);
        // a request that asks to know is answered
        assert_eq!(ask(true, &[0], "Is the bathroom light on?"), None);
        assert_eq!(ask(true, &[0], "What does the bathroom light do?"), None);
        // two calls: one question
        let two = [
            on[0].clone(),
            call("set_lock", json!({"door": "back", "locked": true})),
        ];
        let asked = ask_back(
            true,
            &registry,
            &check,
            &two,
            &[0, 1],
            "The bathroom and the back door, please.",
        );
        assert_eq!(
            asked.as_deref(),
            Some("Shall I turn on the bathroom light and lock the back door?")
        );
    }

    #[test]
    fn the_same_call_again_is_nudged() {
        let c = call("get_time", json!({}));
        let seen = vec![call_key(&c)];
        assert_eq!(repeated_call(std::slice::from_ref(&c), &[], &[]), None);
        let Some(Hook::Nudge { what, .. }) = repeated_call(std::slice::from_ref(&c), &seen, &[])
        else {
            panic!("a nudge");
        };
        assert_eq!(what, "repeated an identical call");
        let other = call("get_date", json!({}));
        assert_eq!(repeated_call(&[c, other], &seen, &[]), None);
    }

    #[test]
    fn the_rest_of_a_multi_part_request_gets_a_follow_up() {
        let asked = "What time is it? Switch off the kitchen light.";
        assert_eq!(crate::agent::words::clauses(asked), 2);
        assert_eq!(
            request_parts(asked),
            ["What time is it", "Switch off the kitchen light"]
        );
        assert_eq!(
            follow_up(asked, 1, true, true).as_deref(),
            Some("Switch off the kitchen light.")
        );
        assert_eq!(follow_up(asked, 2, true, true), None, "all called");
        assert_eq!(follow_up(asked, 1, false, true), None, "no hop left");
        assert_eq!(follow_up(asked, 1, true, false), None, "no grammar");

        let c = call("get_time", json!({}));
        let seen = vec![call_key(&c)];
        assert_eq!(follow_up_done(false, &[], &seen), None);
        let done = Some(Hook::Done {
            hook: "follow-up called nothing new: done".into(),
        });
        assert_eq!(follow_up_done(true, &[], &seen), done);
        assert_eq!(follow_up_done(true, &[c], &seen), done);
        let new = call("set_light", json!({"room": "kitchen", "on": false}));
        assert_eq!(follow_up_done(true, &[new], &seen), None);
    }
}
