//! The agent's face: what it is asked ([`Ask`], [`AgentMsg`]), what a turn returns
//! ([`Turn`] and its reports), how it fails ([`AgentError`]), its configuration, and the
//! two calls other parts of hearth make ([`ask`], [`plan_ahead`]).

use std::time::Instant;

use ractor::{ActorRef, RpcReplyPort};
use serde::Serialize;
use tokio::sync::mpsc;

use super::plan::Planned;
pub use super::report::CallReport;
use crate::config::HistoryMode;
use crate::llm::{EngineError, EngineMsg, GenStats, GrammarError, TemplateError};
use crate::preset::{Preset, PresetError};
use crate::speech::Speakable;
use crate::toolcall::Telemetry;
use crate::tools::{ToolOutcome, ToolsMsg};

/// The default system prompt: short, because a 0.5B model reads it every turn.
pub(crate) const DEFAULT_SYSTEM_PROMPT: &str = "You are hearth, a voice assistant in a home. \
Answer in one short, plain sentence. When the request needs a tool, call it.";

/// The system prompt of a hop asked again for words after the turn's first hop was flagged
/// (a call about something nobody asked for, nothing or nothing speakable written, words
/// copied from the conversation): it is shown no tools, so it can call none. Under the tool list a small model held to words writes about the tools
/// ("You may call the get_time …") or says the request back; told that nothing will be
/// done, it answers the person (`hearth ask` on the daily set's remarks, docs/measurements.md).
pub(crate) const DEFAULT_WORDS_PROMPT: &str = "You are hearth, a voice assistant in a home. \
No tool fits what the person just said, so nothing will be done. Reply kindly in a few words, \
and do not offer to do anything.";

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

/// What is said when the model's server is down, too slow or answers garbage
/// ([`EngineError::is_unavailable`]) and the turn has nothing else to say.
pub const MODEL_UNAVAILABLE: &str = "Sorry, I can't reach the language model right now.";

/// What the agent is spawned with.
pub struct AgentArgs {
    pub cfg: AgentConfig,
    pub engine: ActorRef<EngineMsg>,
    pub tools: ActorRef<ToolsMsg>,
}

/// Requests that may wait for a running turn; more are refused at once
/// ([`AgentError::QueueFull`]).
pub const QUEUE_LIMIT: usize = 8;

/// How the agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub preset: Preset,
    pub system_prompt: String,
    /// The system prompt of a retry held to words, shown no tools
    /// ([`DEFAULT_WORDS_PROMPT`]).
    pub words_prompt: String,
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
            words_prompt: DEFAULT_WORDS_PROMPT.to_string(),
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
    /// The room it was said in (a satellite's): a request that names no room is about this
    /// one ("turn on the light" to the bedroom's satellite), when a local intent takes it.
    pub room: Option<String>,
    /// What the speech may also have said: the recogniser's near phrase, a request of the
    /// house a word or two away from `text` that the audio did not quite support. When `text`
    /// is no request a local intent takes and this is, the turn asks whether it was meant.
    pub heard_as: Option<String>,
    /// The plan the agent made of this request before its turn ([`Foreseen::planned`]):
    /// acted on while it holds, made again otherwise.
    pub planned: Option<Planned>,
}

/// The agent's one message enum.
pub enum AgentMsg {
    /// Run one turn; the reply comes when the turn ends.
    Ask(Ask, RpcReplyPort<Result<Turn, AgentError>>),
    /// Stop the running turn (generation is cancelled at once; no tool starts after).
    Cancel,
    /// Stop this session's turn if it is the one running, and drop its requests that wait
    /// (a voice source's "stop": another source's turn runs on).
    CancelSession(String),
    /// Forget a session's history.
    Reset(String),
    /// Plan a request at the speaker's pause, before its turn: the plan, to come back with
    /// its [`Ask`], whether a local intent answers it with no model (the voice path ends a
    /// turn at a pause on such a request) and what its turn would say first: session, text,
    /// the room it was said in, when its turn would begin (`None`: now).
    Plan(
        String,
        String,
        Option<String>,
        Option<Instant>,
        RpcReplyPort<Foreseen>,
    ),
    /// Answer at once (the watchdog's liveness check).
    Ping(RpcReplyPort<()>),
    /// The running turn has ended (sent by its task): the next queued request starts.
    TurnDone,
    /// The tool set changed (from the tools actor's port): the next prompt is warmed again.
    ToolsChanged,
    /// A queued request's deadline has come: it is refused if its turn has not started.
    Expire,
    /// The warm-up under way has ended (sent by its task): the one asked for next may start.
    Warmed,
    /// What a turn or a warm-up changed of a session (sent by their tasks): the actor owns
    /// the sessions.
    Session(SessionChange),
}

/// A change to one session, as a turn's or a warm-up's task sends it to the agent.
#[derive(Debug)]
pub struct SessionChange {
    pub(super) id: String,
    pub(super) change: super::session::Change,
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
    pub(super) fn cancelled(path: Handled, timings_ms: Timings) -> Turn {
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
    #[error("the request was stopped before its turn began")]
    Cancelled,
    #[error("the model has no chat template and the preset sets none; add `chat_template` to the preset")]
    NoTemplate,
    #[error("the prompt does not fit the context even without history ({tokens} tokens of {n_ctx}); shorten the system prompt or tools, or raise n_ctx")]
    TooLong { tokens: usize, n_ctx: usize },
}

/// The plan an agent makes of `text` in `session` now, whether a local intent answers it, and
/// what its turn would say first if it began `at` (the voice pipeline's question at a pause).
pub async fn plan_ahead(
    agent: &ActorRef<AgentMsg>,
    session: &str,
    text: &str,
    room: Option<String>,
    at: Option<Instant>,
) -> Result<Foreseen, AgentError> {
    ractor::call!(
        agent,
        AgentMsg::Plan,
        session.to_string(),
        text.to_string(),
        room,
        at
    )
    .map_err(|_| AgentError::Actor("agent"))
}

/// What the agent foresees of a request before its turn ([`plan_ahead`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Foreseen {
    /// A local intent answers it, with no model.
    pub intent: bool,
    /// The first sentence that turn says, when it is known before any call runs (every call
    /// runs at once and no confirmation reads its result): the voice can be made ready for it
    /// while the turn waits for the end of speech.
    pub first: Option<crate::speech::Speakable>,
    /// The plan made of it, to hand back with its [`Ask`] so that its turn does not plan it
    /// again.
    pub planned: Option<Planned>,
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
            room: None,
            heard_as: None,
            planned: None,
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
