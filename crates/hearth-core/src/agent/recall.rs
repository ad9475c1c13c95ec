//! "What did you just do?" and "undo that": answered from the session's last calls, with
//! no model. A person without a screen can check what hearth did (which tools ran, with
//! what, and what they returned), and take it back where every tool that ran declares its
//! way back (`[tool.inverse]` in its manifest) — never otherwise: a tool without one is
//! named, and nothing runs.

use serde_json::Value;

use super::intent_turn::{act, Confirmed};
use super::messages::{AgentError, Ask, CallReport, Handled, HopReport, Timings, Turn};
use super::session::Session;
use super::shared::{remember_turn, Shared};
use crate::speech::Speakable;
use crate::toolcall::{Telemetry, ToolSet};
use crate::tools::{Registry, ToolStatus};

/// What a request asks of the session's past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recall {
    /// "What did you just do?"
    WhatDid,
    /// "Undo that."
    Undo,
}

/// The requests that ask what hearth did (words as intents compare them, fillers off).
const WHAT_DID: &[&str] = &[
    "what did you do",
    "what did you just do",
    "what did you do just now",
    "what have you done",
    "what have you just done",
    "what was that",
    "what just happened",
    "what did you just change",
    "what was the last thing you did",
];

/// The requests that take the last calls back.
const UNDO: &[&str] = &[
    "undo",
    "undo that",
    "undo it",
    "undo the last thing",
    "undo what you just did",
    "take that back",
    "revert that",
    "put it back",
    "put it back how it was",
];

/// Words around such a request that do not change it.
const FILLER: &[&str] = &["ok", "okay", "hey", "so", "please", "now", "again"];

impl Recall {
    /// Which, if `text` is one of them.
    pub(super) fn of(text: &str) -> Option<Recall> {
        let words = crate::intent::words(text);
        let start = words
            .iter()
            .take_while(|w| FILLER.contains(&w.as_str()))
            .count();
        let end = words.len()
            - words[start..]
                .iter()
                .rev()
                .take_while(|w| FILLER.contains(&w.as_str()))
                .count();
        let said = words[start..end].join(" ");
        if WHAT_DID.contains(&said.as_str()) {
            Some(Recall::WhatDid)
        } else if UNDO.contains(&said.as_str()) {
            Some(Recall::Undo)
        } else {
            None
        }
    }
}

/// The turn for a recall request ([`super::plan::Plan::Recall`]).
pub(super) async fn recall_turn(
    shared: &Shared,
    registry: &Registry,
    toolset: &ToolSet,
    ask: &Ask,
    session: Session,
    recall: Recall,
) -> Result<Turn, AgentError> {
    tracing::info!(
        ?recall,
        calls = session.done.len(),
        "asked about the last calls"
    );
    match recall {
        Recall::WhatDid => {
            let reply = what_did(registry, toolset, &session.done);
            Ok(answered(shared, ask, session, reply))
        }
        Recall::Undo => match undo_calls(registry, toolset, &session.done) {
            Ok(calls) => {
                act(
                    shared,
                    registry,
                    ask,
                    session,
                    &calls,
                    "undo",
                    Confirmed::No,
                )
                .await
            }
            Err(why) => Ok(answered(shared, ask, session, why)),
        },
    }
}

/// "The last thing I did: the kitchen light is on.", from each call's confirmation; what
/// failed, said so.
fn what_did(registry: &Registry, toolset: &ToolSet, done: &[CallReport]) -> String {
    if done.is_empty() {
        return "I haven't done anything in this conversation yet.".into();
    }
    let said: Vec<String> = done
        .iter()
        .map(|c| {
            let confirmed = (c.status != ToolStatus::Error)
                .then(|| toolset.call(&c.id, &c.name, c.arguments.clone()).ok())
                .flatten()
                .and_then(|call| registry.confirmation(&call, &c.result));
            match (confirmed, c.status) {
                (Some(words), _) => words,
                (None, ToolStatus::Error) => {
                    format!("I tried {}, and it failed.", spoken_name(&c.name))
                }
                (None, _) => format!(
                    "I ran {}{}.",
                    spoken_name(&c.name),
                    with_values(&c.arguments)
                ),
            }
        })
        .collect();
    // said as what was done before, not as something done now
    let told = format!("The last thing I did: {}", lower_first(&said.join(" ")));
    Speakable::sanitize(&told)
        .map(|s| s.to_string())
        .unwrap_or_else(|| "I ran some tools, but I can't put what they did into words.".into())
}

/// The calls that take `done` back: each tool's declared inverse over its call's arguments,
/// checked like any call; or, when one of them has none (or its inverse does not render to
/// a valid call), why nothing runs.
fn undo_calls(
    registry: &Registry,
    toolset: &ToolSet,
    done: &[CallReport],
) -> Result<Vec<crate::toolcall::ToolCall>, String> {
    let ran: Vec<&CallReport> = done
        .iter()
        .filter(|c| c.status != ToolStatus::Error)
        .collect();
    if ran.is_empty() {
        return Err("There is nothing to undo.".into());
    }
    let mut calls = Vec::new();
    for (i, c) in ran.iter().enumerate() {
        let Some(inverse) = registry.get(&c.name).and_then(|t| t.inverse.as_ref()) else {
            return Err(format!(
                "I can't undo that: {} has no way back declared, so I changed nothing.",
                spoken_name(&c.name)
            ));
        };
        let arguments = inverse.arguments_for(&c.arguments).map_err(|e| {
            tracing::warn!(tool = %c.name, error = %e, "an inverse did not render");
            format!(
                "I can't undo {}: its way back does not fit the call, so I changed nothing.",
                spoken_name(&c.name)
            )
        })?;
        let tool = inverse.tool.as_deref().unwrap_or(&c.name);
        let call = toolset
            .call(format!("undo_{i}"), tool, arguments)
            .map_err(|e| {
                tracing::warn!(tool, error = ?e, "an inverse call is not valid");
                format!(
                    "I can't undo {}: its way back is not a valid call, so I changed nothing.",
                    spoken_name(&c.name)
                )
            })?;
        calls.push(call);
    }
    Ok(calls)
}

/// "the kitchen light is on." from "The kitchen light is on."
fn lower_first(s: &str) -> String {
    if s.starts_with("I ") {
        return s.to_string();
    }
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// "set light" for `set_light`.
fn spoken_name(name: &str) -> String {
    name.replace(['_', '-'], " ")
}

/// " with room kitchen, on yes", or nothing for no arguments.
fn with_values(arguments: &Value) -> String {
    let Some(m) = arguments.as_object().filter(|m| !m.is_empty()) else {
        return String::new();
    };
    let each: Vec<String> = m
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Bool(true) => "yes".into(),
                Value::Bool(false) => "no".into(),
                other => other.to_string(),
            };
            format!("{} {v}", k.replace('_', " "))
        })
        .collect();
    format!(" with {}", each.join(", "))
}

/// A turn that answers in words and runs nothing (kept in the session like any turn).
fn answered(shared: &Shared, ask: &Ask, session: Session, reply: String) -> Turn {
    if let Some(tx) = &ask.speak {
        super::reply::send_sentences(tx, &reply);
    }
    let msgs = vec![
        crate::llm::ChatMessage::user(ask.text.clone()),
        crate::llm::ChatMessage::assistant(reply.clone()),
    ];
    remember_turn(shared, &ask.session, session, msgs, &[], &reply);
    Turn {
        path: Handled::Intent,
        reply,
        hops: vec![HopReport {
            raw: String::new(),
            calls: Vec::new(),
            telemetry: Telemetry {
                parse_mode: "recall".into(),
                fallback_used: false,
                candidate_count: 0,
                schema_validation: "pass".into(),
            },
            rejected: Vec::new(),
            tool_choice: "intent".into(),
            hook: None,
            stats: Default::default(),
        }],
        timings_ms: Timings::default(),
        cancelled: false,
        unfounded: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_requests_are_known_and_nothing_else_is() {
        assert_eq!(Recall::of("What did you just do?"), Some(Recall::WhatDid));
        assert_eq!(
            Recall::of("okay, what have you done"),
            Some(Recall::WhatDid)
        );
        assert_eq!(Recall::of("Undo that, please."), Some(Recall::Undo));
        assert_eq!(Recall::of("put it back"), Some(Recall::Undo));
        assert_eq!(Recall::of("what did you do yesterday"), None);
        assert_eq!(Recall::of("undo the lock on the front door"), None);
        assert_eq!(Recall::of("turn it off"), None);
    }

    #[test]
    fn values_are_said_in_words() {
        assert_eq!(
            with_values(&serde_json::json!({"room": "kitchen", "on": true})),
            " with room kitchen, on yes"
        );
        assert_eq!(with_values(&serde_json::json!({})), "");
        assert_eq!(spoken_name("set_light"), "set light");
    }
}
