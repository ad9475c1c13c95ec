//! The agent: the LLM hop loop, as an actor.
//!
//! One turn: first the local intents ([`crate::intent`]): a request that a tool's sentence
//! templates (its own, and those its shape implies: `intent/derive.rs`) match whole (or, failing that, a follow-up to the calls the session ran before:
//! "turn it off again", "make it warmer", [`Before`]) runs those calls at once and is
//! answered with their confirmations (`say`, else the shape's), with no LLM hop ([`Handled::Intent`]). Otherwise the user's
//! text joins the session's history; each hop renders the chat template, generates (under a
//! grammar when the preset's `tool_choice_policy` asks for one), streams the output into the
//! parser chain, validates what it found, runs the valid calls and feeds the results back,
//! until the model answers in words or `max_hops` runs out.
//!
//! One turn runs at a time, and the agent owns the one queue of requests waiting for it
//! (spoken, D-Bus, CLI alike): each [`Ask`] carries its deadline ([`Ask::wait_up_to`]), waits
//! in arrival order up to it, and is refused with `Busy`, `QueueFull` ([`QUEUE_LIMIT`]) or
//! `WaitedTooLong` otherwise. Neither the bus nor the voice pipeline keeps a queue.
//!
//! Where the pieces are: this file, the actor and what it shares with its turns (rendering
//! to fit the context, running calls, keeping a turn in its session); `turn.rs`, the hop
//! loop (`run_turn`, `hop`, the turn's state); `hooks.rs`, the small-model hooks and the
//! recovery from flagged hops, each a function returning a decision; `generate.rs`, one
//! hop's streamed generation; `reply.rs`, what is said; `intent_turn.rs`, the intent path;
//! `check.rs`, the reply checks, with `reading.rs`, what a reply states as a reading and
//! what results carry; `history.rs`, what a turn leaves in its session.
//!
//! The ten rules, and where each lives:
//! 1. raw-first detection: the parser sees the raw output, think blocks included
//!    (`generate.rs` streams every token into [`Parser::stream`]);
//! 2. only [`Speakable`] text is returned as the reply (think, markup, JSON removed)
//!    (`reply.rs`; sentences sent as they settle in `generate.rs`);
//! 3. two phases: only calls that pass validation (allowlist + JSON Schema) run (`turn.rs`
//!    runs only `ParseOutput::calls`; the tools actor checks them again);
//! 4. per-preset detector chains: [`Preset::parser`];
//! 5. loose formats are allowlist-gated inside the parser ([`crate::toolcall`]);
//! 6. call ids round-trip into the tool messages verbatim (`TurnState::round_trip` in
//!    `turn.rs`);
//! 7. synthetic-user fallback when the template has no tool role or the call was not native
//!    ([`synthetic_results`], `TurnState::round_trip`);
//! 8. grammar per `tool_choice_policy` ([`crate::llm::ToolChoice::for_hop`], cached by
//!    fingerprint; the hooks' overrides of it: `NextHop` in `hooks.rs`);
//! 9. small-model hooks (`hooks.rs`, each a function returning a decision that `turn.rs`
//!    applies): a repeated identical call (hint, then stop), an echoed tool payload (never
//!    spoken; one nudge, then a reply built from the results), invalid, empty or
//!    schema-echo arguments for a known tool (re-ask once, held to that tool's grammar when
//!    the preset has one, then stop), hop exhaustion (a short spoken apology);
//! 10. telemetry per hop and call (parse mode, fallback, candidates, schema result, status)
//!     (the `hop` span and [`HopReport`] in `turn.rs`, the per-call events of `run_calls`).
//!
//! **Nothing claimed that was not done, nothing said that no result carries.** While no
//! call has run in a turn, every sentence the model writes is checked before it is spoken
//! ([`ReplyCheck`]): a claim of an action or a device state, a reading (a temperature, a
//! time, a date, a level, a number with a unit, a state of the home such as "is cold", a
//! yes or no to a question about the home: `reading.rs`), talk about functions or tools, a
//! reply repeated to a different request, or the request (or an earlier one) said back is
//! held back, with everything after it; so is a reply with nothing to speak.
//! The turn is then asked again once, in the way that answers what went wrong
//! (`Recovery` in `hooks.rs`): words that needed a call, or a call to a misnamed tool, held to a
//! call with the history (what "it" refers to); words copied from the history asked for
//! without it; nothing speakable, and a call nobody asked for, held to words; nothing at
//! all asked again without the history; never the same prompt again. A second flag
//! ends the turn. After calls, the model's words are checked against
//! what the turn's results carry (with the request and the calls' arguments): a number, a
//! time, a date or a state of the home that none of them carries, or the request said back,
//! is never spoken, and the turn answers with words built from the results instead. The
//! first calls of a turn run only when they are about what was said
//! ([`ReplyCheck::grounded`]): the request, or the turn before it when the request points
//! back at it ("turn it off", "and the bedroom too": [`check::refers_back`]). No call of
//! any hop runs with a value nobody said ([`crate::intent::unsupported`]: a number, an enum
//! value, a switch's direction); the other calls of its hop do, and the rest of the request
//! is asked for in a follow-up hop. When no call of the hop is left: before any call it is
//! recovered from like a claim, after calls the turn ends with what ran.
//! When nothing works, the turn says so ([`NOTHING_DONE`]) and is not kept in the history,
//! so one bad turn cannot teach the next; nor is a turn that answered nothing (an apology
//! and no call done), nor, ever, words that failed a check or what a flagged hop wrote
//! (`history.rs`). The turn reports what was caught (`unfounded`, and each hop's `hook`).
//!
//! A hop whose calls all succeeded and all have a confirmation (`say`, or their shape's:
//! "The bedroom temperature is 21.5 degrees.") speaks those at once
//! and skips the second LLM hop, unless the request asked for more than was called (more
//! clauses than calls, see [`clauses`]: "what time is it? and switch the light off"): then
//! a follow-up hop, held to a tool call, may call the next tool; a call already made, or
//! none, ends the turn with the confirmations. What a turn leaves in the session's history
//! is [`HistoryMode`]'s choice; the history is trimmed oldest-first when the prompt would
//! not fit the context.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::intent::{Before, IntentCall};
use crate::llm::{
    ChatMessage, ChatTemplate, EngineError, EngineMsg, GenStats, GrammarCache, GrammarError,
    TemplateCaps, TemplateError,
};
use crate::preset::{Preset, PresetError};
use crate::speech::Speakable;
use crate::toolcall::{Parser, Telemetry, ToolCall, ToolSet};
use crate::tools::{Registry, ToolOutcome, ToolStatus, ToolsMsg};

mod check;
pub mod confirm;
mod generate;
mod history;
mod hooks;
mod intent_turn;
mod reading;
mod reply;
mod turn;
mod warm;
mod words;

pub use check::{small_talk, Earlier, ReplyCheck, Unfounded};
pub use history::HistoryMode;
pub use hooks::is_echo;
pub use reply::synthetic_results;
pub use words::{clauses, request_parts};

use turn::run_turn;

/// The default system prompt: short, because a 0.5B model reads it every turn.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are hearth, a voice assistant in a home. \
Answer in one short, plain sentence. When the request needs a tool, call it.";

/// How long a turn may run before no further hop starts ([`AgentConfig::turn_budget`];
/// `[agent] turn_budget_s`).
pub const TURN_BUDGET: std::time::Duration = std::time::Duration::from_secs(6);

/// Tokens of history a session keeps before the oldest turns are cut
/// ([`AgentConfig::history_tokens`]). The system prompt and tools come to ~800 tokens with
/// the demo home; generation slows as the context grows (a 40-token warm-up took ~0.7 s at
/// 830 tokens of context and ~1.3 s at 2,000, on 2 cores).
pub const HISTORY_TOKENS: usize = 1024;

/// What is said when the loop runs out of hops or a hook stops it.
pub const APOLOGY: &str = "Sorry, I couldn't finish that.";

/// What is said when the model claimed an action and no retry carried one out.
pub const NOTHING_DONE: &str = "Sorry, nothing was done.";

/// How the agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub preset: Preset,
    pub system_prompt: String,
    pub max_hops: usize,
    /// No hop starts once a turn has run this long: the turn answers with what it has
    /// (its confirmations, words from its results, or an apology). A turn so bounded holds
    /// the requests behind it for at most this and the one hop under way.
    pub turn_budget: std::time::Duration,
    /// Tokens the model may write per hop.
    pub max_tokens: usize,
    /// Where tool calls and replies are published (the D-Bus face's signals).
    pub events: Option<crate::events::Events>,
    /// What each turn leaves in its session's history.
    pub history: HistoryMode,
    /// Try the tools' local intents before the model (`false`: every request goes to the
    /// model).
    pub intents: bool,
    /// Warm the next prompt after each turn and when the tools change (`agent/warm.rs`); the
    /// start-up warm-up happens either way.
    pub warm_next: bool,
    /// A session's history is cut back, oldest turns first, once it holds more than this
    /// many tokens (`[agent] history_tokens`; [`HISTORY_TOKENS`]): by half of it, in the
    /// warm-up after a turn, and only once the cut prompt is evaluated. Without `warm_next`
    /// only the context bounds it (a turn drops what does not fit).
    pub history_tokens: usize,
}

impl AgentConfig {
    pub fn new(preset: Preset) -> Self {
        AgentConfig {
            preset,
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            max_hops: 4,
            turn_budget: TURN_BUDGET,
            max_tokens: 128,
            events: None,
            history: HistoryMode::default(),
            intents: true,
            warm_next: true,
            history_tokens: HISTORY_TOKENS,
        }
    }
}

/// One request to the agent.
#[derive(Debug)]
pub struct Ask {
    pub session: String,
    pub text: String,
    /// Hop 0 must call this tool (held by the grammar).
    pub force_tool: Option<String>,
    /// Where to send the reply sentence by sentence, as soon as each is settled (the voice
    /// path speaks the first while the model writes the rest). Only `Speakable` goes here.
    pub speak: Option<mpsc::UnboundedSender<Speakable>>,
    /// The latest time this request's turn may start. While another turn runs it waits in
    /// the agent's queue until then ([`Ask::wait_up_to`]); by default it does not wait.
    pub deadline: Instant,
    /// A speculative request ([`Ask::held`]): the decision whether it stands.
    pub hold: Option<tokio::sync::watch::Receiver<Option<bool>>>,
    /// The asker said yes beforehand (`hearth ask --yes`): calls a tool's `confirm` holds
    /// run at once.
    pub confirmed: bool,
}

/// The agent's one message enum.
pub enum AgentMsg {
    /// Run one turn; the reply comes when the turn ends.
    Ask(Ask, RpcReplyPort<Result<Turn, AgentError>>),
    /// Stop the running turn (generation is cancelled at once; no tool starts after).
    Cancel,
    /// Forget a session's history.
    Reset(String),
    /// Whether a request would be answered by a local intent in this session now, with no
    /// model (the voice path ends a turn at a pause on such a request): session, text.
    IsIntent(String, String, RpcReplyPort<bool>),
    /// Answer at once (the watchdog's liveness check).
    Ping(RpcReplyPort<()>),
    /// The running turn has ended (sent by its task): the next queued request starts.
    TurnDone,
    /// The tool set changed (from the tools actor's port): the next prompt is warmed again.
    ToolsChanged,
    /// A queued request's deadline has come: it is refused if its turn has not started.
    Expire,
}

/// A call as the turn reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallReport {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    pub status: ToolStatus,
    pub result: String,
}

/// One hop of a turn.
#[derive(Debug, Clone, Serialize)]
pub struct HopReport {
    /// The model's raw output.
    pub raw: String,
    pub calls: Vec<CallReport>,
    pub telemetry: Telemetry,
    /// Candidates that did not become calls, and why.
    pub rejected: Vec<crate::toolcall::Rejected>,
    /// The grammar choice of this hop: `auto`, `required` or `tool:<name>`.
    pub tool_choice: String,
    /// A small-model hook that fired on this hop, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    pub stats: GenStats,
}

/// Time spent, in milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub prompt_eval: f64,
    pub generation: f64,
    pub tools: f64,
    pub total: f64,
    /// From the request to the end of the first executed tool call, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_to_tool: Option<f64>,
}

/// Which path handled a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Handled {
    /// A local intent matched the whole request, or resolved it as a follow-up to the
    /// session's earlier calls: its calls ran with no LLM hop.
    Intent,
    /// The model's hop loop.
    Llm,
}

/// The outcome of one turn.
#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    /// Which path handled it.
    pub path: Handled,
    /// What to say: always sanitised ([`Speakable`]); empty when cancelled.
    pub reply: String,
    pub hops: Vec<HopReport>,
    pub timings_ms: Timings,
    pub cancelled: bool,
    /// A reply the model gave in words that was not spoken as it was (see
    /// [`Unfounded`]): the first one caught in this turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfounded: Option<String>,
}

impl Turn {
    /// A turn that stopped before it did or said anything.
    fn cancelled(path: Handled, timings_ms: Timings) -> Turn {
        Turn {
            path,
            reply: String::new(),
            hops: Vec::new(),
            timings_ms,
            cancelled: true,
            unfounded: None,
        }
    }
}

/// Why a turn failed outright (hooks and exhausted hops are not failures: they apologise).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("a turn is already running; wait for it or cancel it")]
    Busy,
    #[error("a turn is running and {QUEUE_LIMIT} requests are already waiting; ask again later")]
    QueueFull,
    #[error("the turns before this request did not finish within {} s; ask again later", .0.as_secs())]
    WaitedTooLong(std::time::Duration),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Grammar(#[from] GrammarError),
    #[error(transparent)]
    Preset(#[from] PresetError),
    #[error("the {0} actor is not answering; restart hearth")]
    Actor(&'static str),
    #[error("the model has no chat template and the preset sets none; add `chat_template` to the preset")]
    NoTemplate,
    #[error("the prompt does not fit the context even without history ({tokens} tokens of {n_ctx}); shorten the system prompt or tools, or raise n_ctx")]
    TooLong { tokens: usize, n_ctx: usize },
}

/// Everything a turn needs, shared by the actor and its turn tasks.
struct Shared {
    cfg: AgentConfig,
    engine: ActorRef<EngineMsg>,
    tools: ActorRef<ToolsMsg>,
    template: ChatTemplate,
    caps: TemplateCaps,
    parser: Parser,
    n_ctx: usize,
    grammars: GrammarCache,
    /// Compiled tool sets by registry fingerprint, the [`TOOLSETS_KEPT`] used last.
    toolsets: Mutex<crate::bounded::Lru<String, Arc<ToolSet>>>,
    /// The conversations, the latest [`SESSIONS_KEPT`] (the least recently used is forgotten).
    sessions: Mutex<crate::bounded::Lru<String, Session>>,
    /// The reply checks of the latest tool set, by its fingerprint.
    checks: Mutex<Option<(String, Arc<ReplyCheck>)>>,
    /// Replies caught by the checks since start (each turn counts once).
    unfounded: std::sync::atomic::AtomicU64,
    /// The session of the latest turn: the one whose next prompt is warmed when the tools
    /// change.
    last_session: Mutex<Option<String>>,
    /// Turns running (their tasks not yet ended): no warm-up starts meanwhile.
    turns: std::sync::atomic::AtomicUsize,
    /// The warm-up under way and the one asked for after it ([`warm::in_background`]).
    warming: Mutex<warm::Warming>,
}

/// The sessions, the one way they are read and written (a poisoned lock is taken over: a
/// panicked turn leaves at worst one session half-updated).
impl Shared {
    fn sessions(&self) -> std::sync::MutexGuard<'_, crate::bounded::Lru<String, Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of `id`'s session (empty when unknown), which becomes the most recently used.
    fn session(&self, id: &str) -> Session {
        self.sessions().get(id).cloned().unwrap_or_default()
    }

    /// `f` of `id`'s session, without marking it used (a look, not a turn).
    fn peek_session<T: Default>(&self, id: &str, f: impl FnOnce(&Session) -> T) -> T {
        self.sessions().peek(id).map(f).unwrap_or_default()
    }

    /// Keep `session` as `id`'s (the least recently used goes beyond [`SESSIONS_KEPT`]).
    fn keep_session(&self, id: &str, session: Session) {
        self.sessions().put(id.to_string(), session);
    }

    /// `f` of `id`'s session, changed in place (nothing when it is unknown), without marking
    /// it used.
    fn change_session<T: Default>(&self, id: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let mut sessions = self.sessions();
        let Some(mut session) = sessions.peek(id).cloned() else {
            return T::default();
        };
        let out = f(&mut session);
        sessions.put(id.to_string(), session);
        out
    }

    fn forget_session(&self, id: &str) {
        self.sessions().pop(id);
    }
}

/// What a conversation keeps between its turns.
#[derive(Debug, Clone, Default)]
struct Session {
    /// What the model is shown of earlier turns ([`HistoryMode`]).
    history: Vec<ChatMessage>,
    /// The calls earlier turns ran, for follow-ups the intents resolve ("turn it off
    /// again", "make it warmer").
    before: Before,
    /// The cut of the history the warm-up is evaluating: where the kept part begins, and
    /// the message there (the cut is stale once another is there).
    cutting: Option<(usize, ChatMessage)>,
    /// Calls waiting for a yes to the question the last turn asked ([`confirm`]).
    pending: Option<confirm::Pending>,
}

/// Conversations the agent keeps (voice conversations, D-Bus and CLI sessions alike); a new
/// one beyond them forgets the least recently used, history and follow-up context.
pub const SESSIONS_KEPT: usize = 32;

/// Compiled tool sets the agent keeps, by the tools' fingerprint: the current one and the
/// few before it (a tool set that changes again and again must not grow the cache).
pub const TOOLSETS_KEPT: usize = 4;

/// Requests that may wait for a running turn; more are refused at once
/// ([`AgentError::QueueFull`]).
pub const QUEUE_LIMIT: usize = 8;

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
}

/// Tells the agent its turn has ended when dropped: at the end of the turn's task, or as
/// it unwinds from a panic.
struct TurnEnded(ActorRef<AgentMsg>);

impl Drop for TurnEnded {
    fn drop(&mut self) {
        let _ = self.0.cast(AgentMsg::TurnDone);
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
            self.running = None;
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
        if let Ok(mut last) = shared.last_session.lock() {
            *last = Some(ask.session.clone());
        }
        let session = ask.session.clone();
        if let Some(hold) = ask.hold.clone() {
            drop_when_refused(hold, cancel.clone(), done.clone(), shared.engine.clone());
        }
        shared.turns.fetch_add(1, Ordering::SeqCst);
        // a warm-up under way gives way: what it evaluated stays cached, the rest is the
        // turn's to evaluate (or, for a history being cut back, the next warm-up's)
        if warm::under_way(&shared) {
            let _ = shared.engine.cast(EngineMsg::Cancel);
        }
        let span = tracing::info_span!("turn", session = %ask.session);
        let (flag, finished, myself) = (cancel.clone(), done.clone(), myself.clone());
        let task = tokio::spawn(
            async move {
                // the queue moves on when this task ends, however it ends (a panic too)
                let _done = TurnEnded(myself);
                let out = run_turn(&shared, ask, &flag).await;
                match &out {
                    Err(e) => tracing::warn!(error = %e, "turn failed"),
                    Ok(turn) if !turn.reply.is_empty() => crate::events::publish(
                        shared.cfg.events.as_ref(),
                        crate::events::Event::Replied {
                            text: turn.reply.clone(),
                        },
                    ),
                    Ok(_) => {}
                }
                finished.store(true, Ordering::SeqCst);
                shared.turns.fetch_sub(1, Ordering::SeqCst);
                let _ = reply.send(out);
                // the next turn of this session begins with what this one left
                if shared.cfg.warm_next {
                    warm::in_background(&shared, Some(session));
                }
            }
            .instrument(span),
        );
        self.running = Some(TurnHandle { cancel, done, task });
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
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

/// The agent actor.
pub struct Agent;

/// What the agent is spawned with.
pub struct AgentArgs {
    pub cfg: AgentConfig,
    pub engine: ActorRef<EngineMsg>,
    pub tools: ActorRef<ToolsMsg>,
}

impl Agent {
    /// Spawn the agent; it asks the engine for the model's template and context size.
    pub async fn spawn(args: AgentArgs) -> Result<ActorRef<AgentMsg>, AgentError> {
        let (actor, _) = Actor::spawn(None, Agent, args)
            .await
            .map_err(|_| AgentError::Actor("agent"))?;
        Ok(actor)
    }
}

/// Whether `text` would be answered by a local intent in `session` now (false when the
/// intents are off, or the tools cannot be reached: the model would answer).
async fn is_intent(shared: &Shared, session: &str, text: &str) -> bool {
    if !shared.cfg.intents {
        return false;
    }
    let Ok((registry, toolset)) = snapshot(shared).await else {
        return false;
    };
    let before = shared.peek_session(session, |s| s.before.clone());
    intent_turn::intent_calls(&registry, &toolset, text, &before).is_some()
}

/// Whether an agent would answer `text` in `session` with a local intent, now.
pub async fn would_use_intent(
    agent: &ActorRef<AgentMsg>,
    session: &str,
    text: &str,
) -> Result<bool, AgentError> {
    ractor::call!(
        agent,
        AgentMsg::IsIntent,
        session.to_string(),
        text.to_string()
    )
    .map_err(|_| AgentError::Actor("agent"))
}

/// Send `ask` to an agent and wait for its turn.
pub async fn ask(agent: &ActorRef<AgentMsg>, ask: Ask) -> Result<Turn, AgentError> {
    ractor::call!(agent, AgentMsg::Ask, ask).map_err(|_| AgentError::Actor("agent"))?
}

impl Ask {
    /// A request in `session`, with no forced tool.
    pub fn new(session: impl Into<String>, text: impl Into<String>) -> Self {
        Ask {
            session: session.into(),
            text: text.into(),
            force_tool: None,
            speak: None,
            deadline: Instant::now(),
            hold: None,
            confirmed: false,
        }
    }

    /// While another turn runs, wait up to `wait` in the agent's queue for this one to start
    /// (a spoken request and a D-Bus `Ask` wait for each other).
    pub fn wait_up_to(mut self, wait: std::time::Duration) -> Self {
        self.deadline = Instant::now() + wait;
        self
    }

    /// A speculative request (the voice path's, started at the speaker's pause before the
    /// request is known to be complete): the model may write, but no call runs and nothing
    /// is kept in the session until `decision` says `Some(true)`; `Some(false)`, or the
    /// sender dropped, ends the turn as cancelled. Its sentences wait in `speak` meanwhile.
    pub fn held(mut self, decision: tokio::sync::watch::Receiver<Option<bool>>) -> Self {
        self.hold = Some(decision);
        self
    }

    /// A speculative request already refused: its turn has nothing to do.
    pub(crate) fn refused(&self) -> bool {
        self.hold
            .as_ref()
            .is_some_and(|h| *h.borrow() == Some(false) || h.has_changed().is_err())
    }

    /// Whether the turn may act (run a call, keep itself in the session): at once for a
    /// request that is not speculative, else once it is decided.
    pub(crate) async fn go_ahead(&self) -> bool {
        let Some(hold) = &self.hold else {
            return true;
        };
        let mut hold = hold.clone();
        let decided = hold.wait_for(Option::is_some).await.map(|d| *d);
        let go = matches!(decided, Ok(Some(true)));
        if !go {
            tracing::info!("the speculative request was dropped: nothing done, nothing kept");
        }
        go
    }
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
        let shared = build_shared(args).await?;
        // the first turn after start is as fast as the later ones: the system prompt and
        // the tools are evaluated now, before the agent answers anything
        if let Err(e) = warm::warm(&shared, None).await {
            tracing::warn!(error = %e, "the prompt was not warmed at start");
        }
        let _ = shared.tools.cast(ToolsMsg::Subscribe(Box::new(move |port| {
            port.subscribe(myself, |_| Some(AgentMsg::ToolsChanged));
        })));
        Ok(AgentState {
            shared: Arc::new(shared),
            running: None,
            queue: std::collections::VecDeque::new(),
            queued: crate::bounded::Gauge::new("agent.queue", QUEUE_LIMIT),
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
            AgentMsg::ToolsChanged if state.shared.cfg.warm_next => {
                let session = state
                    .shared
                    .last_session
                    .lock()
                    .ok()
                    .and_then(|s| s.clone());
                warm::in_background(&state.shared, session);
            }
            AgentMsg::ToolsChanged => {}
            AgentMsg::Cancel => {
                if let Some(t) = &state.running {
                    t.cancel.store(true, Ordering::SeqCst);
                }
                let _ = state.shared.engine.cast(EngineMsg::Cancel);
            }
            AgentMsg::Reset(session) => {
                state.shared.forget_session(&session);
            }
            AgentMsg::IsIntent(session, text, reply) => {
                let shared = state.shared.clone();
                tokio::spawn(async move {
                    let _ = reply.send(is_intent(&shared, &session, &text).await);
                });
            }
            AgentMsg::Ping(reply) => {
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}

async fn build_shared(args: AgentArgs) -> Result<Shared, AgentError> {
    let info =
        ractor::call!(args.engine, EngineMsg::Info).map_err(|_| AgentError::Actor("engine"))?;
    let source = args
        .cfg
        .preset
        .chat_template
        .clone()
        .or(info.chat_template)
        .ok_or(AgentError::NoTemplate)?;
    let template = ChatTemplate::new(&source, &info.bos_token, &info.eos_token)?;
    let caps = TemplateCaps::probe(&template);
    tracing::info!(?caps, "chat template probed");
    let parser = reply_parser(&args.cfg.preset, &template)?;
    Ok(Shared {
        parser,
        template,
        caps,
        n_ctx: info.n_ctx,
        engine: args.engine,
        tools: args.tools,
        cfg: args.cfg,
        grammars: GrammarCache::new(),
        toolsets: Mutex::new(crate::bounded::Lru::new("agent.toolsets", TOOLSETS_KEPT)),
        sessions: Mutex::new(crate::bounded::Lru::new("agent.sessions", SESSIONS_KEPT)),
        checks: Mutex::new(None),
        unfounded: std::sync::atomic::AtomicU64::new(0),
        last_session: Mutex::new(None),
        turns: std::sync::atomic::AtomicUsize::new(0),
        warming: Mutex::new(warm::Warming::default()),
    })
}

/// The preset's parser, told what the chat template says about reasoning: when the turn the
/// template opens for the model leaves a think block open (DeepSeek-R1's `<think>\n`), the
/// output begins inside it, whatever the preset says, and that pair joins the preset's own.
/// Then nothing before the close tag reaches the speech, not even while streaming.
fn reply_parser(preset: &Preset, template: &ChatTemplate) -> Result<Parser, AgentError> {
    let opened = template
        .generation_prompt()
        .and_then(|g| crate::toolcall::left_open(&g, &crate::toolcall::known_tags()).cloned());
    let Some(pair) = opened else {
        return Ok(preset.parser()?);
    };
    if preset.start_in_think != Some(true) {
        tracing::info!(
            preset = %preset.name,
            close = %pair.close,
            "the chat template opens a think block: each reply starts as reasoning until its close tag"
        );
    }
    let mut preset = preset.clone();
    if !preset.think.contains(&pair) {
        preset.think.push(pair);
    }
    preset.start_in_think = Some(true);
    Ok(preset.parser()?)
}

/// The tools as they are now, and their tool set (cached by fingerprint).
async fn snapshot(shared: &Shared) -> Result<(Arc<Registry>, Arc<ToolSet>), AgentError> {
    let reg =
        ractor::call!(shared.tools, ToolsMsg::Snapshot).map_err(|_| AgentError::Actor("tools"))?;
    let fp = reg.fingerprint();
    let cached = shared
        .toolsets
        .lock()
        .ok()
        .and_then(|mut m| m.get(&fp).cloned());
    let set = match cached {
        Some(s) => s,
        None => {
            let s = Arc::new(reg.toolset());
            if let Ok(mut m) = shared.toolsets.lock() {
                m.put(fp, s.clone());
            }
            s
        }
    };
    Ok((reg, set))
}

/// The tokens `text` comes to in the engine's tokenizer.
async fn count_tokens(shared: &Shared, text: &str) -> Result<usize, AgentError> {
    ractor::call!(shared.engine, EngineMsg::CountTokens, text.to_string())
        .map_err(|_| AgentError::Actor("engine"))
}

/// Render the prompt, dropping the oldest history messages until it fits the context.
async fn render_fitting(
    shared: &Shared,
    history: &mut Vec<ChatMessage>,
    turn: &[ChatMessage],
    tools: &Value,
) -> Result<String, AgentError> {
    loop {
        let mut msgs = Vec::with_capacity(history.len() + turn.len() + 1);
        msgs.push(ChatMessage::system(shared.cfg.system_prompt.clone()));
        msgs.extend(history.iter().cloned());
        msgs.extend(turn.iter().cloned());
        let prompt = shared.template.render(&msgs, Some(tools), true)?;
        let tokens = count_tokens(shared, &prompt).await?;
        if tokens + shared.cfg.max_tokens <= shared.n_ctx {
            return Ok(prompt);
        }
        if history.is_empty() {
            return Err(AgentError::TooLong {
                tokens,
                n_ctx: shared.n_ctx,
            });
        }
        // Oldest first, and never leave a tool result without the call before it.
        history.remove(0);
        while history.first().is_some_and(|m| m.role != "user") {
            history.remove(0);
        }
        tracing::debug!(left = history.len(), "history trimmed to fit the context");
    }
}

impl From<&ToolOutcome> for CallReport {
    fn from(o: &ToolOutcome) -> Self {
        CallReport {
            id: o.id.clone(),
            name: o.name.clone(),
            arguments: o.arguments.clone(),
            status: o.status,
            result: o.result.clone(),
        }
    }
}

/// Run a hop's calls (in parallel, results in call order), time them and publish each; no
/// calls (all held for a yes, or declined): nothing is asked of the tools, nothing timed.
async fn run_calls(
    shared: &Shared,
    calls: &[ToolCall],
    timings: &mut Timings,
    t0: Instant,
) -> Result<Vec<ToolOutcome>, AgentError> {
    if calls.is_empty() {
        return Ok(Vec::new());
    }
    let t_tools = Instant::now();
    let outcomes = ractor::call!(shared.tools, |r| ToolsMsg::CallAll {
        calls: calls.to_vec(),
        reply: r
    })
    .map_err(|_| AgentError::Actor("tools"))?;
    timings.tools += t_tools.elapsed().as_secs_f64() * 1e3;
    timings
        .text_to_tool
        .get_or_insert_with(|| t0.elapsed().as_secs_f64() * 1e3);
    for o in &outcomes {
        tracing::info!(tool = %o.name, id = %o.id, status = ?o.status, "tool result");
        crate::events::publish(
            shared.cfg.events.as_ref(),
            crate::events::Event::tool_called(o),
        );
    }
    Ok(outcomes)
}

/// Keep a finished turn in its session: in the history, as [`HistoryMode`] says, and the
/// calls that did not fail for follow-ups.
fn remember_turn(
    shared: &Shared,
    id: &str,
    mut session: Session,
    turn_msgs: Vec<ChatMessage>,
    calls: &[CallReport],
    reply: &str,
) {
    session.history.extend(history::remember(
        shared.cfg.history,
        turn_msgs,
        calls,
        reply,
        &call_wire(shared),
    ));
    session.before.record(
        calls
            .iter()
            .filter(|c| c.status != ToolStatus::Error)
            .map(|c| IntentCall {
                tool: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect(),
    );
    shared.keep_session(id, session);
}

/// The reply checks for `registry`, built once per tool set.
fn reply_check(shared: &Shared, registry: &Registry, fingerprint: &str) -> Arc<ReplyCheck> {
    let Ok(mut slot) = shared.checks.lock() else {
        return Arc::new(ReplyCheck::new(registry));
    };
    match &*slot {
        Some((fp, check)) if fp == fingerprint => check.clone(),
        _ => {
            let check = Arc::new(ReplyCheck::new(registry));
            *slot = Some((fingerprint.to_string(), check.clone()));
            check
        }
    }
}

/// How this session's calls are written on an assistant message: the template's tool-call
/// field when the results go back in its tool role, else the preset's call markup.
fn call_wire(shared: &Shared) -> history::CallWire<'_> {
    let preset = &shared.cfg.preset;
    match &preset.grammar {
        Some(shape) if !(preset.tool_role && shared.caps.tool_role) => {
            history::CallWire::Markup(shape)
        }
        _ => history::CallWire::Structured,
    }
}
