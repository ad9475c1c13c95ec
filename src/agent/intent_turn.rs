//! The intent path: a request that a tool's sentence templates match whole (or a
//! follow-up to the session's earlier calls, [`crate::intent::Before`]) runs those calls at
//! once and is answered with their `say`, with no LLM hop.

use std::time::Instant;

use super::hooks::reply_from_results;
use super::reply::{confirmations, send_sentences, speakable, synthetic_results};
use super::{
    call_wire, remember_turn, run_calls, AgentError, Ask, CallReport, Handled, HopReport, Session,
    Shared, Timings, Turn,
};
use crate::intent::Before;
use crate::llm::{ChatMessage, GenStats};
use crate::toolcall::{Telemetry, ToolCall, ToolSet};
use crate::tools::Registry;

/// A request a local intent matches whole: its calls run at once with no LLM hop, and the
/// tools' `say` confirmations are the answer (words from the results when a call failed).
/// `None` when no intent matches, or a matched call does not pass the tool set's check.
pub(super) async fn intent_turn(
    shared: &Shared,
    registry: &Registry,
    toolset: &ToolSet,
    ask: &Ask,
    session: Session,
) -> Result<Option<Turn>, AgentError> {
    let t0 = Instant::now();
    let Some((calls, parse_mode)) = intent_calls(registry, toolset, &ask.text, &session.before)
    else {
        return Ok(None);
    };
    let mut timings = Timings::default();
    if !ask.go_ahead().await {
        return Ok(Some(Turn::cancelled(Handled::Intent, timings)));
    }
    let outcomes = run_calls(shared, &calls, &mut timings, t0).await?;
    let reply = match confirmations(registry, &calls, &outcomes) {
        Some(said) => speakable(&said.join(" ")),
        None => reply_from_results(&outcomes),
    };
    if let Some(tx) = &ask.speak {
        send_sentences(tx, &reply);
    }
    let reports: Vec<CallReport> = outcomes.iter().map(CallReport::from).collect();
    let mut turn_msgs = vec![ChatMessage::user(ask.text.clone())];
    turn_msgs.push(call_wire(shared).message(&reports));
    turn_msgs.push(ChatMessage::user(synthetic_results(&outcomes)));
    turn_msgs.push(ChatMessage::assistant(reply.clone()));
    remember_turn(shared, &ask.session, session, turn_msgs, &reports, &reply);
    timings.total = t0.elapsed().as_secs_f64() * 1e3;
    Ok(Some(Turn {
        path: Handled::Intent,
        reply,
        hops: vec![HopReport {
            raw: String::new(),
            calls: reports,
            telemetry: Telemetry {
                parse_mode: parse_mode.into(),
                fallback_used: false,
                candidate_count: calls.len(),
                schema_validation: "pass".into(),
            },
            rejected: Vec::new(),
            tool_choice: "intent".into(),
            hook: None,
            stats: GenStats::default(),
        }],
        timings_ms: timings,
        cancelled: false,
        unfounded: None,
    }))
}

/// The calls a local intent makes of `text` (a sentence template's whole match, else a
/// follow-up to `before`), each passing the tool set's check, and how it was matched; `None`
/// when no intent matches or a call does not pass (the model answers instead).
pub(super) fn intent_calls(
    registry: &Registry,
    toolset: &ToolSet,
    text: &str,
    before: &Before,
) -> Option<(Vec<ToolCall>, &'static str)> {
    let intents = registry.intents();
    let (found, parse_mode) = match intents.recognize(text) {
        Some(found) => (found, "intent"),
        None => (intents.follow_up(text, before)?, "intent-follow-up"),
    };
    let mut calls: Vec<ToolCall> = Vec::with_capacity(found.len());
    for (i, c) in found.into_iter().enumerate() {
        match toolset.call(format!("{}_{i}", c.tool), &c.tool, c.arguments) {
            Ok(call) => calls.push(call),
            Err(verdict) => {
                tracing::warn!(tool = %c.tool, ?verdict, "an intent's call does not pass the check: the model answers instead");
                return None;
            }
        }
    }
    Some((calls, parse_mode))
}
