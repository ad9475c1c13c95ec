//! The turns that need no model, once the plan ([`super::plan`]) has chosen one: a local
//! intent's calls run at once and are answered with their `say` (`act`), an answer to the
//! session's question runs or drops what it held, and a yes where none was asked is said to
//! be one.

use std::time::Instant;

use super::confirm;
use super::hooks::reply_from_results;
use super::messages::{AgentError, Ask, CallReport, Handled, HopReport, Timings, Turn};
use super::reply::{confirmations, send_sentences, sentences_of, speakable, synthetic_results};
use super::session::Session;
use super::shared::{call_wire, remember_turn, run_calls, Shared};
use crate::llm::{ChatMessage, GenStats};
use crate::speech::Speakable;
use crate::toolcall::{Telemetry, ToolCall};
use crate::tools::Registry;

/// Whether calls already have their yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Confirmed {
    /// They run only if no tool's `confirm` holds them; held ones are asked about.
    No,
    /// They are the held calls a yes answered: they run.
    Yes,
    /// A no answered the question: nothing runs, and that is said.
    Declined,
    /// A yes with no question waiting for it (none asked, or asked too long ago): nothing
    /// runs, and that is said.
    Unasked,
    /// A yes to a question that asks which: the session's question is asked again.
    Again,
    /// They are what a request heard unsurely may have meant: none runs, all wait for a
    /// yes to this question, in their own words ([`super::hooks::shall_i`]).
    Unsure(String),
}

/// Runs `calls` (those a tool's `confirm` holds wait for a yes, unless `confirmed`) and
/// answers with their confirmations and the question for the held ones; keeps the turn and
/// the held calls in the session.
pub(super) async fn act(
    shared: &Shared,
    registry: &Registry,
    ask: &Ask,
    mut session: Session,
    calls: &[ToolCall],
    how: &str,
    confirmed: Confirmed,
) -> Result<Turn, AgentError> {
    let t0 = Instant::now();
    let mut timings = Timings::default();
    if !ask.go_ahead().await {
        return Ok(Turn::cancelled(Handled::Intent, timings));
    }
    let (now, held) = match &confirmed {
        Confirmed::Yes => (calls.to_vec(), Vec::new()),
        Confirmed::No => confirm::split(registry, calls, ask.confirmed),
        Confirmed::Declined | Confirmed::Unasked | Confirmed::Again | Confirmed::Unsure(_) => {
            (Vec::new(), Vec::new())
        }
    };
    let outcomes = run_calls(shared, &now, ask.room.as_deref(), &mut timings, t0).await?;
    let mut reply = match (now.is_empty(), confirmations(registry, &now, &outcomes)) {
        (true, _) if confirmed == Confirmed::Declined => confirm::DECLINED.to_string(),
        (true, _) if confirmed == Confirmed::Unasked => confirm::UNASKED.to_string(),
        (true, _) if confirmed == Confirmed::Again => session
            .pending
            .as_ref()
            .map(|p| p.question.clone())
            .unwrap_or_default(),
        (true, _) => String::new(),
        (false, Some(said)) => speakable(&said.join(" ")),
        (false, None) => reply_from_results(&outcomes),
    };
    let mut hook = (confirmed == Confirmed::Again)
        .then(|| session.pending.as_ref().map(confirm::Pending::hook))
        .flatten();
    let pending = match confirmed {
        Confirmed::Unsure(question) => Some(confirm::asking(calls.to_vec(), question)),
        _ if !held.is_empty() => Some(confirm::hold(held)),
        _ => None,
    };
    if let Some(pending) = pending {
        hook = Some(pending.hook());
        reply = [reply.as_str(), pending.question.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        session.pending = Some(pending);
    }
    if let Some(tx) = &ask.speak {
        send_sentences(tx, &reply);
    }
    let reports: Vec<CallReport> = outcomes.iter().map(CallReport::from).collect();
    let mut turn_msgs = vec![ChatMessage::user(ask.text.clone())];
    if !reports.is_empty() {
        turn_msgs.push(call_wire(shared).message(&reports));
        turn_msgs.push(ChatMessage::user(synthetic_results(&outcomes)));
    }
    turn_msgs.push(ChatMessage::assistant(reply.clone()));
    remember_turn(shared, &ask.session, session, turn_msgs, &reports, &reply);
    timings.total = t0.elapsed().as_secs_f64() * 1e3;
    Ok(Turn {
        path: Handled::Intent,
        reply,
        hops: vec![HopReport {
            raw: String::new(),
            calls: reports,
            telemetry: Telemetry {
                parse_mode: how.into(),
                fallback_used: false,
                candidate_count: calls.len(),
                schema_validation: "pass".into(),
            },
            rejected: Vec::new(),
            tool_choice: "intent".into(),
            hook,
            stats: GenStats::default(),
        }],
        timings_ms: timings,
        cancelled: false,
        unfounded: None,
    })
}

/// The turn for an answer to the question the session's last turn asked ([`Plan::Answer`]):
/// a yes runs the held calls, a choice its call, a no is answered, and a yes to a question
/// that asks which asks it again. `session` is the session without its question.
///
/// [`Plan::Answer`]: super::plan::Plan::Answer
pub(super) async fn answer_turn(
    shared: &Shared,
    registry: &Registry,
    ask: &Ask,
    session: Session,
    pending: confirm::Pending,
    answer: confirm::Answer,
) -> Result<Turn, AgentError> {
    let chosen = match answer {
        confirm::Answer::Chose(i) => pending.choices.get(i),
        _ => None,
    };
    let (calls, how, confirmed) = match (answer, chosen) {
        (confirm::Answer::Chose(_), Some((choice, call))) => {
            tracing::info!(question = %pending.question, %choice, "a choice: its call runs");
            (std::slice::from_ref(call), "chosen", Confirmed::No)
        }
        (confirm::Answer::Yes, _) => {
            tracing::info!(question = %pending.question, "a yes: the held calls run");
            (&pending.calls[..], "confirmed", Confirmed::Yes)
        }
        // (`Other` is no answer: the plan never makes it one)
        (confirm::Answer::No | confirm::Answer::Other, _) => {
            tracing::info!(question = %pending.question, "a no: nothing was done");
            (&[][..], "declined", Confirmed::Declined)
        }
        // a yes to which (or a choice that is not one): the question is asked again
        (confirm::Answer::Again | confirm::Answer::Chose(_), _) => {
            tracing::info!(question = %pending.question, "a yes to which: asked again");
            let mut kept = session;
            kept.pending = Some(confirm::Pending {
                asked: std::time::Instant::now(),
                ..pending.clone()
            });
            return act(
                shared,
                registry,
                ask,
                kept,
                &[],
                "asked again",
                Confirmed::Again,
            )
            .await;
        }
    };
    act(shared, registry, ask, session, calls, how, confirmed).await
}

/// The turn for a yes where no question waits for one ([`Plan::Unasked`]): nothing runs,
/// and that is said ([`confirm::UNASKED`]).
///
/// [`Plan::Unasked`]: super::plan::Plan::Unasked
pub(super) async fn unasked_turn(
    shared: &Shared,
    registry: &Registry,
    ask: &Ask,
    session: Session,
) -> Result<Turn, AgentError> {
    tracing::info!("a yes with no question waiting: nothing to run");
    act(
        shared,
        registry,
        ask,
        session,
        &[],
        "unasked",
        Confirmed::Unasked,
    )
    .await
}

/// The first sentence a turn that runs `calls` at `at` says if they do as asked, when it is
/// known before they run: every call runs at once (none waits for a yes) and each
/// confirmation is foreseen ([`Registry::foreseen_confirmation`]). `None` otherwise.
pub(super) async fn first_sentence(
    registry: &Registry,
    calls: &[ToolCall],
    at: &jiff::Zoned,
) -> Option<Speakable> {
    let (now, held) = confirm::split(registry, calls, false);
    if now.is_empty() || !held.is_empty() {
        return None;
    }
    let mut said = Vec::new();
    for call in &now {
        said.push(registry.foreseen_confirmation(call, at).await?);
    }
    sentences_of(&speakable(&said.join(" "))).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolcall::ToolSet;
    use serde_json::{json, Value};

    fn demo() -> Registry {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
        Registry::load_dir(dir).expect("the demo tools load")
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolSet::unrestricted()
            .call(format!("{name}_0"), name, arguments)
            .expect("the arguments are a JSON object")
    }

    fn first(calls: &[ToolCall]) -> Option<String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime.block_on(first_at(calls, &jiff::Zoned::now()))
    }

    async fn first_at(calls: &[ToolCall], at: &jiff::Zoned) -> Option<String> {
        let said = first_sentence(&demo(), calls, at).await;
        said.map(|s| s.as_str().to_string())
    }

    #[test]
    fn the_first_sentence_is_foreseen_only_when_no_result_or_yes_changes_it() {
        let on = call("set_light", json!({"room": "kitchen", "on": true}));
        assert_eq!(
            first(std::slice::from_ref(&on)).as_deref(),
            Some("The kitchen light is on.")
        );
        // two calls: their confirmations are one reply, its first sentence is the first's
        let lock = call("set_lock", json!({"door": "front", "locked": true}));
        assert_eq!(
            first(&[on.clone(), lock]).as_deref(),
            Some("The kitchen light is on.")
        );
        // a reading says its result: not known before the call
        assert_eq!(
            first(&[call("get_light", json!({"room": "kitchen"}))]),
            None
        );
        // an unlock waits for a yes: a question comes first, not the confirmation
        let unlock = call("set_lock", json!({"door": "front", "locked": false}));
        assert_eq!(first(&[on, unlock]), None);
        assert_eq!(first(&[]), None);
        // the clock foresees its result: the time now
        let time = first(&[call("get_time", json!({}))]).expect("the time is foreseen");
        let clock = time.strip_prefix("It's ").and_then(|t| t.strip_suffix('.'));
        assert!(
            clock.is_some_and(|t| t.ends_with(" AM") || t.ends_with(" PM")),
            "{time}"
        );
    }

    #[tokio::test]
    async fn the_clock_is_foreseen_as_it_will_read_when_the_turn_begins() {
        let calls = [call("get_time", json!({}))];
        let noon = jiff::civil::date(2026, 12, 7)
            .at(11, 59, 59, 900_000_000)
            .to_zoned(jiff::tz::TimeZone::UTC)
            .expect("a time");
        assert_eq!(
            first_at(&calls, &noon).await.as_deref(),
            Some("It's 11:59 AM.")
        );
        let later = noon
            .checked_add(std::time::Duration::from_millis(200))
            .expect("a time");
        assert_eq!(
            first_at(&calls, &later).await.as_deref(),
            Some("It's 12:00 PM.")
        );
    }
}
