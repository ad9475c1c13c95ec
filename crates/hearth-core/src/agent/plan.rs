//! What a request is, decided once and in one place, before anything runs: from its words,
//! the session as it stands (a question waiting for its answer, the calls earlier turns ran)
//! and the tools. No engine, no tool and no lock: the turn acts on the [`Plan`]
//! (`turn.rs`). The voice path asks at the speaker's pause whether a local intent answers
//! what it heard (`actor.rs`'s `foresee`): that plan travels with the transcript through the
//! conductor and comes back with the request ([`Planned`]), and the turn acts on it without
//! planning again while the session and the tools are as they were.
//!
//! The order is the rule: an answer to the session's question first (a yes where none waits
//! is said to be one), then "what did you just do?" and "undo that", then a local intent
//! (a sentence template matched whole, else a follow-up to the earlier calls), then the
//! recogniser's near phrase asked about, and else the model.

use super::confirm::{self, Answer, Pending};
use super::hooks;
use super::recall::Recall;
use super::session::Session;
use crate::intent::Before;
use crate::toolcall::{ToolCall, ToolSet};
use crate::tools::Registry;

/// A request as the plan reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Request<'a> {
    pub(super) text: &'a str,
    /// The room it was said in, for a sentence that names none.
    pub(super) room: Option<&'a str>,
    /// The recogniser's near phrase ([`super::messages::Ask::heard_as`]).
    pub(super) heard_as: Option<&'a str>,
    /// A tool is forced on the model's first hop (`hearth ask --tool`): only an answer to a
    /// question is taken before the model.
    pub(super) forced: bool,
    /// The local intents are on (`[agent] intents`).
    pub(super) intents: bool,
}

/// What a turn does about a request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    /// A yes where no question waits for one: nothing runs, and that is said.
    Unasked,
    /// The answer (never [`Answer::Other`]) to the question the session's last turn asked.
    Answer { pending: Pending, answer: Answer },
    /// "What did you just do?", "undo that".
    Recall(Recall),
    /// The calls a local intent makes, each passing the tool set's check, and how it matched
    /// (`intent`: a sentence template whole; `intent-follow-up`: the earlier calls followed).
    Intent {
        calls: Vec<ToolCall>,
        how: &'static str,
    },
    /// Heard unsurely: the near phrase's calls, which wait for a yes to `question`.
    Unsure {
        calls: Vec<ToolCall>,
        question: String,
    },
    /// The model's hop loop.
    Model,
}

/// A request's plan, made before its turn (the voice path's check at the speaker's pause,
/// [`Foreseen::planned`]) and handed back with it ([`Ask::planned`]): the turn acts on it
/// instead of planning again, as long as it is of the same request, in the same session
/// unchanged since ([`Session::version`]), with the same tools.
///
/// [`Foreseen::planned`]: super::messages::Foreseen::planned
/// [`Ask::planned`]: super::messages::Ask::planned
#[derive(Debug, Clone, PartialEq)]
pub struct Planned(Box<PlannedFor>);

/// What [`Planned`] holds: the plan, and what it was made of.
#[derive(Debug, Clone, PartialEq)]
struct PlannedFor {
    session: String,
    version: u64,
    tools: String,
    text: String,
    room: Option<String>,
    heard_as: Option<String>,
    forced: bool,
    intents: bool,
    plan: Plan,
}

impl Planned {
    /// `plan`, made for `request` in `session` (called `id`) with the tools of `fingerprint`.
    pub(super) fn new(
        id: &str,
        session: &Session,
        fingerprint: String,
        request: &Request,
        plan: Plan,
    ) -> Planned {
        Planned(Box::new(PlannedFor {
            session: id.to_string(),
            version: session.version,
            tools: fingerprint,
            text: request.text.to_string(),
            room: request.room.map(str::to_string),
            heard_as: request.heard_as.map(str::to_string),
            forced: request.forced,
            intents: request.intents,
            plan,
        }))
    }

    /// The plan, when it was made for `request` in `session` (called `id`) as it is now,
    /// with the tools of `fingerprint`; `None` when anything differs.
    pub(super) fn plan_for(
        &self,
        id: &str,
        session: &Session,
        fingerprint: &str,
        request: &Request,
    ) -> Option<Plan> {
        let made = &self.0;
        let same = made.session == id
            && made.version == session.version
            && made.tools == fingerprint
            && made.text == request.text
            && made.room.as_deref() == request.room
            && made.heard_as.as_deref() == request.heard_as
            && made.forced == request.forced
            && made.intents == request.intents;
        same.then(|| made.plan.clone())
    }

    /// The calls of the local intent that answers the request with no model, if one does.
    pub(super) fn intent_calls(&self) -> Option<&[ToolCall]> {
        match &self.0.plan {
            Plan::Intent { calls, .. } => Some(calls),
            _ => None,
        }
    }
}

#[cfg(test)]
impl Planned {
    /// A plan of `text` in an empty session, for the tests that hand one through.
    pub(crate) fn sample(text: &str) -> Planned {
        let request = Request {
            text,
            room: None,
            heard_as: None,
            forced: false,
            intents: true,
        };
        let session = Session::default();
        Planned::new("voice-1", &session, String::new(), &request, Plan::Model)
    }
}

/// What `request` is in `session`, with `registry` and `every_tool` (the tool set a sentence
/// reaches: every tool, not only those the model is shown).
pub(super) fn plan(
    request: &Request,
    session: &Session,
    registry: &Registry,
    every_tool: &ToolSet,
) -> Plan {
    match &session.pending {
        Some(pending) => match confirm::answer(pending, request.text) {
            Answer::Other => {}
            answer => {
                return Plan::Answer {
                    pending: pending.clone(),
                    answer,
                }
            }
        },
        None if confirm::read("", request.text) == Answer::Yes => return Plan::Unasked,
        None => {}
    }
    if request.forced {
        return Plan::Model;
    }
    if let Some(recall) = Recall::of(request.text) {
        return Plan::Recall(recall);
    }
    if !request.intents {
        return Plan::Model;
    }
    let before = &session.before;
    if let Some((calls, how)) =
        intent_calls(registry, every_tool, request.text, before, request.room)
    {
        return Plan::Intent { calls, how };
    }
    request
        .heard_as
        .filter(|_| !hooks::asks_to_know(request.text))
        .and_then(|near| intent_calls(registry, every_tool, near, before, request.room))
        .and_then(|(calls, _)| {
            let question = hooks::shall_i(registry, &calls)?;
            Some(Plan::Unsure { calls, question })
        })
        .unwrap_or(Plan::Model)
}

/// The calls a local intent makes of `text` (a sentence template's whole match, with the
/// `room` it was said in where it names none, else a follow-up to `before`), each passing
/// the tool set's check, and how it was matched; `None` when no intent matches or a call
/// does not pass (the model answers instead).
fn intent_calls(
    registry: &Registry,
    toolset: &ToolSet,
    text: &str,
    before: &Before,
    room: Option<&str>,
) -> Option<(Vec<ToolCall>, &'static str)> {
    let intents = registry.intents();
    let (found, how) = match intents.recognize_in(text, room) {
        Some(found) => (found, "intent"),
        None => (intents.follow_up(text, before)?, "intent-follow-up"),
    };
    let mut calls: Vec<ToolCall> = Vec::with_capacity(found.len());
    for (i, c) in found.into_iter().enumerate() {
        match toolset.call(format!("{}_{i}", c.tool), &c.tool, c.arguments) {
            Ok(call) => calls.push(call),
            Err(refused) => {
                tracing::warn!(tool = %c.tool, ?refused, "an intent's call does not pass the check: the model answers instead");
                return None;
            }
        }
    }
    Some((calls, how))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn demo() -> Registry {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
        Registry::load_dir(dir).expect("the demo tools load")
    }

    fn request(text: &str) -> Request<'_> {
        Request {
            text,
            room: None,
            heard_as: None,
            forced: false,
            intents: true,
        }
    }

    fn plan_of(request: &Request, session: &Session) -> Plan {
        let registry = demo();
        plan(request, session, &registry, &registry.toolset())
    }

    fn unlock_pending(asked: Instant) -> Pending {
        let call = ToolSet::unrestricted()
            .call(
                "set_lock_0",
                "set_lock",
                json!({"door": "front", "locked": false}),
            )
            .expect("the arguments are a JSON object");
        Pending {
            calls: vec![call],
            question: "Unlock the front door?".into(),
            asked,
            choices: Vec::new(),
        }
    }

    fn names(plan: &Plan) -> Vec<String> {
        match plan {
            Plan::Intent { calls, .. } | Plan::Unsure { calls, .. } => {
                calls.iter().map(|c| c.name().to_string()).collect()
            }
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_sentence_of_a_tool_is_planned_as_its_calls_and_a_remark_as_the_model() {
        let session = Session::default();
        let on = plan_of(&request("turn on the kitchen light"), &session);
        assert!(matches!(on, Plan::Intent { how: "intent", .. }), "{on:?}");
        assert_eq!(names(&on), ["set_light"]);
        assert!(matches!(
            plan_of(&request("I had a long day."), &session),
            Plan::Model
        ));
    }

    #[test]
    fn the_intents_off_or_a_forced_tool_leave_a_sentence_to_the_model() {
        let session = Session::default();
        let off = Request {
            intents: false,
            ..request("turn on the kitchen light")
        };
        assert!(matches!(plan_of(&off, &session), Plan::Model));
        let forced = Request {
            forced: true,
            ..request("what did you just do")
        };
        assert!(matches!(plan_of(&forced, &session), Plan::Model));
        // a recall is no intent: it is planned with the intents off too
        let recall = Request {
            intents: false,
            ..request("what did you just do")
        };
        assert!(matches!(
            plan_of(&recall, &session),
            Plan::Recall(Recall::WhatDid)
        ));
    }

    #[test]
    fn a_waiting_question_takes_its_answer_first_and_lets_any_other_request_through() {
        let session = Session {
            pending: Some(unlock_pending(Instant::now())),
            ..Session::default()
        };
        assert!(matches!(
            plan_of(&request("yes"), &session),
            Plan::Answer {
                answer: Answer::Yes,
                ..
            }
        ));
        assert!(matches!(
            plan_of(&request("no, leave it"), &session),
            Plan::Answer {
                answer: Answer::No,
                ..
            }
        ));
        // even with a tool forced, the answer is the answer
        let forced = Request {
            forced: true,
            ..request("yes")
        };
        assert!(matches!(plan_of(&forced, &session), Plan::Answer { .. }));
        // another request is that request
        let other = plan_of(&request("turn on the kitchen light"), &session);
        assert_eq!(names(&other), ["set_light"]);
        // a question asked too long ago waits for nothing, and a yes then is unasked
        let old = Session {
            pending: Some(unlock_pending(
                Instant::now() - confirm::WINDOW - Duration::from_secs(1),
            )),
            ..Session::default()
        };
        assert!(matches!(plan_of(&request("yes"), &old), Plan::Model));
        assert!(matches!(
            plan_of(&request("yes"), &Session::default()),
            Plan::Unasked
        ));
    }

    #[test]
    fn a_near_phrase_is_asked_about_only_when_the_transcript_is_no_request() {
        let session = Session::default();
        let unsure = Request {
            heard_as: Some("turn on the kitchen light"),
            ..request("turn on the kitten light")
        };
        let asked = plan_of(&unsure, &session);
        match &asked {
            Plan::Unsure { question, .. } => assert!(question.starts_with("Shall I"), "{question}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(names(&asked), ["set_light"]);
        // the transcript is a request itself: that one runs
        let sure = Request {
            heard_as: Some("turn off the kitchen light"),
            ..request("turn on the kitchen light")
        };
        assert!(matches!(plan_of(&sure, &session), Plan::Intent { .. }));
        // a question is not turned into a deed
        let question = Request {
            heard_as: Some("turn on the kitchen light"),
            ..request("is the kitten light on?")
        };
        assert!(matches!(plan_of(&question, &session), Plan::Model));
    }

    #[test]
    fn a_plan_made_before_holds_only_for_the_same_request_session_and_tools() {
        let registry = demo();
        let text = "turn on the kitchen light";
        let session = Session::default();
        let made = |request: &Request, session: &Session| {
            let plan = plan(request, session, &registry, &registry.toolset());
            Planned::new("voice-1", session, registry.fingerprint(), request, plan)
        };
        let planned = made(&request(text), &session);
        let reused =
            planned
                .clone()
                .plan_for("voice-1", &session, &registry.fingerprint(), &request(text));
        assert!(
            matches!(reused, Some(Plan::Intent { .. })),
            "the same request, session and tools: {reused:?}"
        );
        let fingerprint = registry.fingerprint();
        let near = Request {
            heard_as: Some("turn off the kitchen light"),
            ..request(text)
        };
        let kept = Session {
            version: session.version + 1,
            ..Session::default()
        };
        for (why, id, session, tools, request) in [
            (
                "another session",
                "voice-2",
                &session,
                fingerprint.as_str(),
                request(text),
            ),
            (
                "the session changed",
                "voice-1",
                &kept,
                fingerprint.as_str(),
                request(text),
            ),
            ("other tools", "voice-1", &session, "other", request(text)),
            (
                "other words",
                "voice-1",
                &session,
                fingerprint.as_str(),
                request("turn off the kitchen light"),
            ),
            (
                "a near phrase",
                "voice-1",
                &session,
                fingerprint.as_str(),
                near,
            ),
        ] {
            let again = planned.plan_for(id, session, tools, &request);
            assert!(again.is_none(), "{why}: {again:?}");
        }
    }
}
