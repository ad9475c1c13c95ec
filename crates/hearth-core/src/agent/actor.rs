//! The agent actor: the one queue of requests (each waits up to its deadline, in arrival
//! order), one turn at a time on a task of its own, cancellation, and what it answers
//! without a turn (`Plan`, `Reset`, `Ping`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tracing::Instrument;

use super::intent_turn;
use super::messages::{AgentArgs, AgentError, AgentMsg, Ask, Foreseen, Turn, QUEUE_LIMIT};
use super::plan::{plan, Planned, Request};
use super::session::{Session, Sessions};
use super::shared::{build_shared, snapshot, Shared};
use super::turn::run_turn;
use super::warm;
use crate::llm::EngineMsg;
use crate::tools::ToolsMsg;

/// The agent actor's state.
pub struct AgentState {
    shared: Arc<Shared>,
    /// The latest turn: its cancel flag, its done flag (set before the reply is sent, so the
    /// caller's next Ask is never refused), and its task (a panicked turn is finished too).
    running: Option<TurnHandle>,
    /// The one turn queue: every request that waits for a turn (spoken, D-Bus, CLI), in the
    /// order it came, each with its deadline.
    queue: std::collections::VecDeque<Queued>,
    /// The queue's length, for [`crate::bounded::levels`].
    queued: crate::bounded::Gauge,
    /// The session of the latest turn: the one whose next prompt is warmed when the tools
    /// change.
    last_session: Option<String>,
    /// The warm-ups between turns.
    warming: Warming,
    /// The conversations: a turn or a warm-up starts with a copy of its session and sends
    /// back what it changes (`AgentMsg::Session`).
    sessions: Sessions,
}

/// The warm-ups after start (`warm::between_turns`): one at a time on a task of its own; the
/// latest asked for waits for it and for the turn under way, and a turn that starts makes the
/// one under way give way.
#[derive(Default)]
struct Warming {
    /// The one under way: its flag, raised when a turn starts.
    under_way: Option<Arc<AtomicBool>>,
    /// The session of the one asked for next (`Some(None)`: a new session's).
    next: Option<Option<String>>,
}

/// Tells the agent a task of its own has ended (`TurnDone`, `Warmed`) when dropped: at the
/// end of the task, or as it unwinds from a panic.
struct Ended(ActorRef<AgentMsg>, fn() -> AgentMsg);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.cast((self.1)());
    }
}

/// A request waiting for its turn.
struct Queued {
    ask: Ask,
    reply: RpcReplyPort<Result<Turn, AgentError>>,
    /// When it was queued (for the error when its deadline passes).
    since: Instant,
}

impl AgentState {
    /// Forget a turn that has ended, refuse queued requests whose deadline has passed (or
    /// whose caller has gone), and start the next one if no turn runs.
    fn pump(&mut self, myself: &ActorRef<AgentMsg>) {
        if self
            .running
            .as_ref()
            .is_some_and(|t| t.done.load(Ordering::SeqCst) || t.task.is_finished())
        {
            // the next turn of this session begins with what this one left (warmed below,
            // unless a queued turn starts first)
            if let Some(ended) = self.running.take() {
                self.want_warm(Some(ended.session));
            }
        }
        let now = Instant::now();
        let (waiting, expired): (Vec<Queued>, Vec<Queued>) = self
            .queue
            .drain(..)
            .filter(|q| !q.reply.is_closed())
            .partition(|q| q.ask.deadline > now);
        self.queue = waiting.into();
        for q in expired {
            let _ = q
                .reply
                .send(Err(AgentError::WaitedTooLong(q.since.elapsed())));
        }
        if self.running.is_none() {
            if let Some(next) = self.queue.pop_front() {
                self.start(next.ask, next.reply, myself);
            }
        }
        self.queued.set(self.queue.len());
        self.warm_if_idle(myself);
    }

    /// Ask for the next prompt of `session` to be warmed (a daemon's agent only), by
    /// [`warm_if_idle`](Self::warm_if_idle) once no turn or warm-up runs.
    fn want_warm(&mut self, session: Option<String>) {
        if self.shared.cfg.warm_next {
            self.warming.next = Some(session);
        }
    }

    /// Start the warm-up asked for, unless a turn or another warm-up runs.
    fn warm_if_idle(&mut self, myself: &ActorRef<AgentMsg>) {
        if self.running.is_some() || self.warming.under_way.is_some() {
            return;
        }
        let Some(next) = self.warming.next.take() else {
            return;
        };
        let session = next.map(|id| {
            let kept = self.sessions.peek(&id);
            (id, kept)
        });
        let give_way = Arc::new(AtomicBool::new(false));
        self.warming.under_way = Some(give_way.clone());
        let (shared, ended) = (
            self.shared.clone(),
            Ended(myself.clone(), || AgentMsg::Warmed),
        );
        tokio::spawn(
            async move {
                let _ended = ended;
                warm::between_turns(&shared, session, &give_way).await;
            }
            .instrument(tracing::info_span!("warm")),
        );
    }

    /// Queue `ask` behind the running turn, or refuse it: it may not wait, or the queue is
    /// full.
    fn enqueue(
        &mut self,
        ask: Ask,
        reply: RpcReplyPort<Result<Turn, AgentError>>,
        myself: &ActorRef<AgentMsg>,
    ) {
        let now = Instant::now();
        if ask.deadline <= now {
            let _ = reply.send(Err(AgentError::Busy));
            return;
        }
        if self.queue.len() >= QUEUE_LIMIT {
            let _ = reply.send(Err(AgentError::QueueFull));
            return;
        }
        tracing::info!(
            waiting = self.queue.len() + 1,
            "another turn is running; this request waits for it"
        );
        myself.send_after(ask.deadline - now, || AgentMsg::Expire);
        self.queue.push_back(Queued {
            ask,
            reply,
            since: now,
        });
        self.queued.set(self.queue.len());
    }

    /// Run `ask`'s turn on a task of its own; it reports `TurnDone` when it has ended.
    fn start(
        &mut self,
        ask: Ask,
        reply: RpcReplyPort<Result<Turn, AgentError>>,
        myself: &ActorRef<AgentMsg>,
    ) {
        let cancel = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let shared = self.shared.clone();
        let session = self.sessions.get(&ask.session);
        self.last_session = Some(ask.session.clone());
        let session_of_turn = ask.session.clone();
        if let Some(hold) = ask.hold.clone() {
            drop_when_refused(hold, cancel.clone(), done.clone(), shared.engine.clone());
        }
        // a warm-up under way gives way: what it evaluated stays cached, the rest is the
        // turn's to evaluate (or, for a history being cut back, the next warm-up's)
        if let Some(give_way) = &self.warming.under_way {
            give_way.store(true, Ordering::SeqCst);
            let _ = shared.engine.cast(EngineMsg::Cancel);
        }
        let span = tracing::info_span!("turn", session = %ask.session);
        // a spoken turn's reply is published by its voice pipeline, as it is spoken
        let publish_reply = ask.speak.is_none();
        let (flag, finished, myself) = (cancel.clone(), done.clone(), myself.clone());
        let task = tokio::spawn(
            async move {
                // the queue moves on when this task ends, however it ends (a panic too)
                let _done = Ended(myself, || AgentMsg::TurnDone);
                let out = run_turn(&shared, ask, session, &flag).await;
                match &out {
                    Err(e) => tracing::warn!(error = %e, "turn failed"),
                    Ok(turn) if publish_reply && !turn.reply.is_empty() => crate::events::publish(
                        shared.cfg.events.as_ref(),
                        crate::events::Event::Replied {
                            text: turn.reply.clone(),
                        },
                    ),
                    Ok(_) => {}
                }
                finished.store(true, Ordering::SeqCst);
                let _ = reply.send(out);
            }
            .instrument(span),
        );
        self.running = Some(TurnHandle {
            session: session_of_turn,
            cancel,
            done,
            task,
        });
    }
}

/// A speculative turn refused while it runs stops at once, as a cancelled one: its flag is
/// raised and the engine's job cancelled (only while the turn has not ended: the job may be
/// the next turn's by then).
fn drop_when_refused(
    mut hold: tokio::sync::watch::Receiver<Option<bool>>,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    engine: ractor::ActorRef<EngineMsg>,
) {
    tokio::spawn(async move {
        let decided = hold.wait_for(Option::is_some).await.map(|d| *d);
        if !matches!(decided, Ok(Some(true))) && !done.load(Ordering::SeqCst) {
            cancel.store(true, Ordering::SeqCst);
            let _ = engine.cast(EngineMsg::Cancel);
        }
    });
}

struct TurnHandle {
    session: String,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

/// The agent actor.
pub struct Agent;

impl Agent {
    /// Spawn the agent; it asks the engine for the model's template and context size.
    pub async fn spawn(args: AgentArgs) -> Result<ActorRef<AgentMsg>, AgentError> {
        let (actor, _) = Actor::spawn(None, Agent, args)
            .await
            .map_err(|_| AgentError::Actor("agent"))?;
        Ok(actor)
    }
}

/// Whether `text` would be answered by a local intent in `session` now, and what it would
/// say first if its turn began `at` (nothing when the intents are off, or the tools cannot
/// be reached: the model would answer).
async fn foresee(
    shared: &Shared,
    id: &str,
    session: Session,
    text: &str,
    room: Option<&str>,
    at: Option<Instant>,
) -> Foreseen {
    if !shared.cfg.intents {
        return Foreseen::default();
    }
    let Ok((registry, _)) = snapshot(shared).await else {
        return Foreseen::default();
    };
    let request = Request {
        text,
        room,
        heard_as: None,
        forced: false,
        intents: shared.cfg.intents,
    };
    let made = plan(&request, &session, &registry, &registry.toolset());
    let planned = Planned::new(id, &session, registry.fingerprint(), &request, made);
    let first = match planned.intent_calls() {
        Some(calls) => intent_turn::first_sentence(&registry, calls, &wall_clock(at)).await,
        None => None,
    };
    Foreseen {
        intent: planned.intent_calls().is_some(),
        first,
        planned: Some(planned),
    }
}

/// The wall clock's time at `at` (`None`: now).
fn wall_clock(at: Option<Instant>) -> jiff::Zoned {
    let now = jiff::Zoned::now();
    let ahead = at.map_or(std::time::Duration::ZERO, |t| {
        t.saturating_duration_since(Instant::now())
    });
    now.checked_add(ahead).unwrap_or(now)
}

impl Actor for Agent {
    type Msg = AgentMsg;
    type State = AgentState;
    type Arguments = AgentArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: AgentArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let shared = build_shared(args, myself.clone()).await?;
        // the first turn after start is as fast as the later ones: the system prompt and
        // the tools are evaluated now, before the agent answers anything
        let no_turn_yet = AtomicBool::new(false);
        if let Err(e) = warm::warm(&shared, None, &no_turn_yet).await {
            tracing::warn!(error = %e, "the prompt was not warmed at start");
        }
        // a long-running agent's retries in words evaluate only their request (one turn,
        // as `hearth ask` asks, would pay for it and rarely use it)
        if shared.cfg.warm_next {
            if let Err(e) = warm::words(&shared, &no_turn_yet).await {
                tracing::warn!(error = %e, "the words prompt was not warmed at start");
            }
        }
        let _ = shared.tools.cast(ToolsMsg::Subscribe(Box::new(move |port| {
            port.subscribe(myself, |_| Some(AgentMsg::ToolsChanged));
        })));
        Ok(AgentState {
            shared: Arc::new(shared),
            running: None,
            queue: std::collections::VecDeque::new(),
            queued: crate::bounded::Gauge::new("agent.queue", QUEUE_LIMIT),
            last_session: None,
            warming: Warming::default(),
            sessions: Sessions::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AgentMsg::Ask(ask, reply) => {
                state.pump(&myself);
                if state.running.is_none() {
                    state.start(ask, reply, &myself);
                } else {
                    state.enqueue(ask, reply, &myself);
                }
            }
            AgentMsg::TurnDone | AgentMsg::Expire => state.pump(&myself),
            AgentMsg::Warmed => {
                state.warming.under_way = None;
                state.warm_if_idle(&myself);
            }
            AgentMsg::ToolsChanged => {
                let session = state.last_session.clone();
                state.want_warm(session);
                state.warm_if_idle(&myself);
            }
            AgentMsg::Cancel => {
                if let Some(t) = &state.running {
                    t.cancel.store(true, Ordering::SeqCst);
                }
                let _ = state.shared.engine.cast(EngineMsg::Cancel);
            }
            AgentMsg::CancelSession(session) => {
                if let Some(t) = state.running.as_ref().filter(|t| t.session == session) {
                    t.cancel.store(true, Ordering::SeqCst);
                    let _ = state.shared.engine.cast(EngineMsg::Cancel);
                }
                let (dropped, waiting): (Vec<Queued>, Vec<Queued>) = state
                    .queue
                    .drain(..)
                    .partition(|q| q.ask.session == session);
                state.queue = waiting.into();
                state.queued.set(state.queue.len());
                for q in dropped {
                    let _ = q.reply.send(Err(AgentError::Cancelled));
                }
            }
            AgentMsg::Reset(session) => state.sessions.forget(&session),
            AgentMsg::Session(c) => state.sessions.apply(&c.id, c.change),
            AgentMsg::Plan(id, text, room, at, reply) => {
                let shared = state.shared.clone();
                let session = state.sessions.peek(&id);
                tokio::spawn(async move {
                    let room = room.as_deref();
                    let _ = reply.send(foresee(&shared, &id, session, &text, room, at).await);
                });
            }
            AgentMsg::Ping(reply) => {
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}
