//! What a turn leaves in its session's history, for the turns after it.
//!
//! A 0.5B model copies what it sees. Given whole earlier turns (the call, the results as
//! the synthetic "(system: tool results … answer in one short sentence)" message, the
//! spoken confirmation), it soon answers a new command with a confirmation-shaped sentence
//! and no call. What it needs from earlier turns is what was asked and what was done, so
//! that "and the bedroom too" or "turn it off again" can be resolved: [`HistoryMode::Calls`]
//! keeps, per turn, the request and the calls in the model's own wire format (or the reply,
//! for a turn that called nothing). Measured with `cargo bench --bench session` (see
//! docs/measurements.md, "The demo evening").
//!
//! No bad turn teaches the next: a reply that failed a check is never kept (the hop loop
//! keeps only words that passed, and drops what a flagged hop wrote and the hint after it
//! from the turn's messages), and a turn that answered nothing is not kept at all
//! ([`answered`]), nor one that gave up.

use super::messages::{CallReport, APOLOGY, NOTHING_DONE};
use crate::llm::python_json;
use crate::llm::ChatMessage;
use crate::preset::GrammarShape;
use crate::tools::ToolStatus;

pub use crate::config::HistoryMode;

/// How calls are written on an assistant message.
pub(crate) enum CallWire<'a> {
    /// The template's own tool-call field (`tool_calls`).
    Structured,
    /// Markup text in the preset's grammar shape: each call's `{"name": …, "arguments": …}`
    /// between its prefix and suffix (`<tool_call>\n` … `\n</tool_call>`).
    Markup(&'a GrammarShape),
}

impl CallWire<'_> {
    /// An assistant message carrying `calls`.
    pub(crate) fn message(&self, calls: &[CallReport]) -> ChatMessage {
        match self {
            CallWire::Structured => ChatMessage::assistant_calls(
                String::new(),
                calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone())),
            ),
            CallWire::Markup(shape) => ChatMessage::assistant(
                calls
                    .iter()
                    .map(|c| {
                        // as the model writes it: `{"name": "…", "arguments": {…}}`
                        let mut body = serde_json::Map::new();
                        body.insert("name".into(), c.name.clone().into());
                        body.insert(shape.arguments_key.clone(), c.arguments.clone());
                        let body = python_json(&serde_json::Value::Object(body), None);
                        format!("{}{body}{}", shape.prefix, shape.suffix)
                    })
                    .collect::<Vec<_>>()
                    .join(&shape.separator),
            ),
        }
    }
}

/// Whether a finished turn answered anything a later turn may build on: a call that did not
/// fail, or words that are not an apology ([`APOLOGY`], [`NOTHING_DONE`]). A turn that
/// answered nothing is not kept: an apology in the history is a reply to copy.
pub(crate) fn answered(reply: &str, calls: &[CallReport]) -> bool {
    let did = calls.iter().any(|c| c.status != ToolStatus::Error);
    let said =
        !reply.trim().is_empty() && !reply.ends_with(APOLOGY) && !reply.ends_with(NOTHING_DONE);
    did || said
}

/// The messages a finished turn adds to the history: `turn` is every message the turn
/// used (its request first), `calls` the calls that ran, `reply` what was said.
pub(crate) fn remember(
    mode: HistoryMode,
    turn: Vec<ChatMessage>,
    calls: &[CallReport],
    reply: &str,
    wire: &CallWire<'_>,
) -> Vec<ChatMessage> {
    match mode {
        HistoryMode::Full => turn,
        HistoryMode::None => Vec::new(),
        HistoryMode::Calls => {
            let mut kept: Vec<ChatMessage> = turn.into_iter().take(1).collect();
            if calls.is_empty() {
                kept.push(ChatMessage::assistant(reply.to_string()));
            } else {
                kept.push(wire.message(calls));
            }
            kept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(room: &str) -> CallReport {
        CallReport {
            id: "set_light_0".into(),
            name: "set_light".into(),
            arguments: json!({"room": room, "on": true}),
            status: ToolStatus::Ok,
            result: format!("{room} light on"),
        }
    }

    fn turn() -> Vec<ChatMessage> {
        vec![
            ChatMessage::user("turn on the kitchen light"),
            ChatMessage::assistant("<tool_call>…</tool_call>"),
            ChatMessage::user("(system: tool results — …)"),
            ChatMessage::assistant("The kitchen light is on."),
        ]
    }

    fn qwen() -> GrammarShape {
        GrammarShape {
            prefix: "<tool_call>\n".into(),
            suffix: "\n</tool_call>".into(),
            separator: "\n".into(),
            arguments_key: "arguments".into(),
        }
    }

    #[test]
    fn calls_mode_keeps_the_request_and_the_calls_only() {
        let kept = remember(
            HistoryMode::Calls,
            turn(),
            &[call("kitchen")],
            "The kitchen light is on.",
            &CallWire::Markup(&qwen()),
        );
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].content, "turn on the kitchen light");
        assert_eq!(
            kept[1].content,
            "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}}\n</tool_call>"
        );
    }

    #[test]
    fn a_turn_without_calls_keeps_its_reply() {
        let kept = remember(
            HistoryMode::Calls,
            vec![ChatMessage::user("tell me a joke")],
            &[],
            "Why did the tomato blush?",
            &CallWire::Markup(&qwen()),
        );
        assert_eq!(kept[1].role, "assistant");
        assert_eq!(kept[1].content, "Why did the tomato blush?");
    }

    #[test]
    fn full_and_none() {
        assert_eq!(
            remember(
                HistoryMode::Full,
                turn(),
                &[],
                "",
                &CallWire::Markup(&qwen())
            ),
            turn()
        );
        assert!(remember(
            HistoryMode::None,
            turn(),
            &[],
            "",
            &CallWire::Markup(&qwen())
        )
        .is_empty());
        assert_eq!("calls".parse::<HistoryMode>(), Ok(HistoryMode::Calls));
        assert!("all"
            .parse::<HistoryMode>()
            .unwrap_err()
            .contains("\"full\""));
    }

    #[test]
    fn a_turn_that_answered_nothing_is_not_worth_keeping() {
        assert!(answered("Why did the tomato blush?", &[]));
        assert!(answered(APOLOGY, &[call("kitchen")]), "a call was made");
        for nothing in [APOLOGY, NOTHING_DONE, "", "  "] {
            assert!(!answered(nothing, &[]), "{nothing:?}");
        }
        let failed = CallReport {
            status: ToolStatus::Error,
            ..call("kitchen")
        };
        assert!(!answered(APOLOGY, std::slice::from_ref(&failed)));
        assert!(answered("The light did not answer.", &[failed]));
    }

    #[test]
    fn structured_calls_use_the_tool_call_field() {
        let m = CallWire::Structured.message(&[call("bedroom")]);
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].function.name, "set_light");
    }
}
