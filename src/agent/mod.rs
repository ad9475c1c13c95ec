//! The agent: the LLM hop loop, as an actor.
//!
//! One turn: first the local intents ([`crate::intent`]): a request that a tool's sentence
//! templates match whole (or, failing that, a follow-up to the calls the session ran before:
//! "turn it off again", "make it warmer", [`Before`]) runs those calls at once and is
//! answered with their `say`, with no LLM hop ([`Handled::Intent`]). Otherwise the user's
//! text joins the session's history; each hop renders the chat template, generates (under a
//! grammar when the preset's `tool_choice_policy` asks for one), streams the output into the
//! parser chain, validates what it found, runs the valid calls and feeds the results back,
//! until the model answers in words or `max_hops` runs out.
//!
//! The ten rules, and where each lives:
//! 1. raw-first detection: the parser sees the raw output, think blocks included;
//! 2. only [`Speakable`] text is returned as the reply (think, markup, JSON removed);
//! 3. two phases: only calls that pass validation (allowlist + JSON Schema) run;
//! 4. per-preset detector chains: [`Preset::parser`];
//! 5. loose formats are allowlist-gated inside the parser;
//! 6. call ids round-trip into the tool messages verbatim;
//! 7. synthetic-user fallback when the template has no tool role or the call was not native;
//! 8. grammar per `tool_choice_policy` ([`ToolChoice::for_hop`], cached by fingerprint);
//! 9. small-model hooks: a repeated identical call (hint, then stop), an echoed tool payload
//!    (never spoken; one nudge, then a reply built from the results), invalid, empty or
//!    schema-echo arguments for a known tool (re-ask once, held to that tool's grammar when
//!    the preset has one, then stop), hop exhaustion (a short spoken apology);
//! 10. telemetry per hop and call (parse mode, fallback, candidates, schema result, status).
//!
//! **Nothing claimed that was not done.** While no call has run in a turn, every sentence
//! the model writes is checked before it is spoken ([`ReplyCheck`]): a claim of an action or
//! a device state, talk about functions or tools, or a reply repeated to a different
//! request is held back, with everything after it; so is a reply with nothing to speak.
//! The turn is then asked again without the history that misled the model (held to words
//! when it had nothing to say); if that is flagged too, held to a tool call, with the
//! history back for what "it" refers to. The first calls of a turn run only when they are
//! about what was said ([`ReplyCheck::grounded`]): the request, or the turn before it when
//! the request points back at it ("turn it off", "and the bedroom too":
//! [`check::refers_back`]).
//! When nothing works, the turn says so ([`NOTHING_DONE`]) and is not kept in the history,
//! so one bad turn cannot teach the next. The turn reports what was caught (`unfounded`,
//! and each hop's `hook`).
//!
//! A hop whose calls all succeeded and all have a `say` confirmation speaks those at once
//! and skips the second LLM hop, unless the request asked for more than was called (more
//! clauses than calls, see [`clauses`]: "what time is it? and switch the light off"): then
//! a follow-up hop, held to a tool call, may call the next tool; a call already made, or
//! none, ends the turn with the confirmations. What a turn leaves in the session's history
//! is [`HistoryMode`]'s choice; the history is trimmed oldest-first when the prompt would
//! not fit the context.

use std::collections::HashMap;
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
    ChatMessage, ChatTemplate, EngineError, EngineMsg, GenEvent, GenRequest, GenStats,
    GrammarCache, GrammarError, StopReason, TemplateCaps, TemplateError, ToolChoice, REPLY_LARK,
};
use crate::preset::{Preset, PresetError};
use crate::speech::{SentenceSplitter, Speakable};
use crate::toolcall::{Parser, StreamEvent, Telemetry, ToolCall, ToolSet, Verdict};
use crate::tools::{Registry, ToolOutcome, ToolStatus, ToolsMsg};

mod check;
mod history;

pub use check::{ReplyCheck, Unfounded};
pub use history::HistoryMode;

/// The default system prompt: short, because a 0.5B model reads it every turn.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are hearth, a voice assistant in a home. \
Answer in one short, plain sentence. When the request needs a tool, call it.";

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
    /// Tokens the model may write per hop.
    pub max_tokens: usize,
    /// Where tool calls and replies are published (the D-Bus face's signals).
    pub events: Option<crate::events::Events>,
    /// What each turn leaves in its session's history.
    pub history: HistoryMode,
    /// Try the tools' local intents before the model (`false`: every request goes to the
    /// model).
    pub intents: bool,
}

impl AgentConfig {
    pub fn new(preset: Preset) -> Self {
        AgentConfig {
            preset,
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            max_hops: 4,
            max_tokens: 128,
            events: None,
            history: HistoryMode::default(),
            intents: true,
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
}

/// The agent's one message enum.
pub enum AgentMsg {
    /// Run one turn; the reply comes when the turn ends.
    Ask(Ask, RpcReplyPort<Result<Turn, AgentError>>),
    /// Stop the running turn (generation is cancelled at once; no tool starts after).
    Cancel,
    /// Forget a session's history.
    Reset(String),
    /// Answer at once (the watchdog's liveness check).
    Ping(RpcReplyPort<()>),
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

/// Why a turn failed outright (hooks and exhausted hops are not failures: they apologise).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("a turn is already running; wait for it or cancel it")]
    Busy,
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
    toolsets: Mutex<HashMap<String, Arc<ToolSet>>>,
    sessions: Mutex<HashMap<String, Session>>,
    /// The reply checks of the latest tool set, by its fingerprint.
    checks: Mutex<Option<(String, Arc<ReplyCheck>)>>,
    /// Replies caught by the checks since start (each turn counts once).
    unfounded: std::sync::atomic::AtomicU64,
}

/// What a conversation keeps between its turns.
#[derive(Debug, Clone, Default)]
struct Session {
    /// What the model is shown of earlier turns ([`HistoryMode`]).
    history: Vec<ChatMessage>,
    /// The calls earlier turns ran, for follow-ups the intents resolve ("turn it off
    /// again", "make it warmer").
    before: Before,
}

/// The agent actor's state.
pub struct AgentState {
    shared: Arc<Shared>,
    /// The latest turn: its cancel flag, its done flag (set before the reply is sent, so the
    /// caller's next Ask is never refused), and its task (a panicked turn is finished too).
    running: Option<TurnHandle>,
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

/// Send `ask` to an agent and wait for its turn.
pub async fn ask(agent: &ActorRef<AgentMsg>, ask: Ask) -> Result<Turn, AgentError> {
    ractor::call!(agent, AgentMsg::Ask, ask).map_err(|_| AgentError::Actor("agent"))?
}

/// Like [`ask`], but while another turn runs (`Busy`: a spoken turn and a D-Bus `Ask` share
/// the agent) ask again every 100 ms for up to `wait`. `make` builds each attempt's request.
pub async fn ask_when_free(
    agent: &ActorRef<AgentMsg>,
    make: impl Fn() -> Ask,
    wait: std::time::Duration,
) -> Result<Turn, AgentError> {
    let deadline = Instant::now() + wait;
    let mut waited = false;
    loop {
        match ask(agent, make()).await {
            Err(AgentError::Busy) if Instant::now() < deadline => {
                if !waited {
                    tracing::info!("another turn is running; this request waits for it");
                    waited = true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            out => return out,
        }
    }
}

impl Ask {
    /// A request in `session`, with no forced tool.
    pub fn new(session: impl Into<String>, text: impl Into<String>) -> Self {
        Ask {
            session: session.into(),
            text: text.into(),
            force_tool: None,
            speak: None,
        }
    }
}

impl Actor for Agent {
    type Msg = AgentMsg;
    type State = AgentState;
    type Arguments = AgentArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: AgentArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let shared = build_shared(args).await?;
        Ok(AgentState {
            shared: Arc::new(shared),
            running: None,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AgentMsg::Ask(ask, reply) => {
                let busy = state
                    .running
                    .as_ref()
                    .is_some_and(|t| !t.done.load(Ordering::SeqCst) && !t.task.is_finished());
                if busy {
                    let _ = reply.send(Err(AgentError::Busy));
                    return Ok(());
                }
                let cancel = Arc::new(AtomicBool::new(false));
                let done = Arc::new(AtomicBool::new(false));
                let shared = state.shared.clone();
                let span = tracing::info_span!("turn", session = %ask.session);
                let (flag, finished) = (cancel.clone(), done.clone());
                let task = tokio::spawn(
                    async move {
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
                        let _ = reply.send(out);
                    }
                    .instrument(span),
                );
                state.running = Some(TurnHandle { cancel, done, task });
            }
            AgentMsg::Cancel => {
                if let Some(t) = &state.running {
                    t.cancel.store(true, Ordering::SeqCst);
                }
                let _ = state.shared.engine.cast(EngineMsg::Cancel);
            }
            AgentMsg::Reset(session) => {
                if let Ok(mut s) = state.shared.sessions.lock() {
                    s.remove(&session);
                }
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
    let parser = args.cfg.preset.parser()?;
    Ok(Shared {
        parser,
        template,
        caps,
        n_ctx: info.n_ctx,
        engine: args.engine,
        tools: args.tools,
        cfg: args.cfg,
        grammars: GrammarCache::new(),
        toolsets: Mutex::new(HashMap::new()),
        sessions: Mutex::new(HashMap::new()),
        checks: Mutex::new(None),
        unfounded: std::sync::atomic::AtomicU64::new(0),
    })
}

/// The spoken text of a reply (sanitised), or "".
fn speakable(text: &str) -> String {
    Speakable::sanitize(text)
        .map(Speakable::into_string)
        .unwrap_or_default()
}

/// The synthetic user message that carries tool results when there is no tool role.
pub fn synthetic_results(outcomes: &[ToolOutcome]) -> String {
    let parts: Vec<String> = outcomes
        .iter()
        .map(|o| {
            format!(
                "{} -> {}",
                o.name,
                serde_json::Value::String(o.result.clone())
            )
        })
        .collect();
    format!(
        "(system: tool results — {}. Now answer the previous request in one short sentence.)",
        parts.join("; ")
    )
}

/// True when a reply only repeats a tool payload (JSON, a `<tool_response>`, or a result
/// verbatim) instead of answering: such text is never spoken.
pub fn is_echo(raw: &str, reply: &str, outcomes: &[ToolOutcome]) -> bool {
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

/// A streamed sentence that only parrots the loop's own messages or a tool result: it is
/// held back (the hooks decide what to say instead).
fn echo_sentence(sentence: &str, outcomes: &[ToolOutcome]) -> bool {
    let t = sentence.trim();
    t.contains("(system:")
        || t.contains("tool results —")
        || outcomes.iter().any(|o| {
            o.result.len() > 12
                && t.trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
                    == o.result.trim()
        })
}

/// A reply built from results when the model only echoed them: plain words, no JSON.
fn reply_from_results(outcomes: &[ToolOutcome]) -> String {
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

fn choice_label(c: &ToolChoice) -> String {
    match c {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::Reply => "reply".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Named(n) => format!("tool:{n}"),
    }
}

/// `text`'s sentences, sanitised.
fn sentences_of(text: &str) -> Vec<Speakable> {
    let mut sentences = SentenceSplitter::new();
    let mut out = sentences.push(text);
    out.extend(sentences.finish());
    out
}

/// Send `text` to `speak` sentence by sentence.
fn send_sentences(tx: &mpsc::UnboundedSender<Speakable>, text: &str) {
    for s in sentences_of(text) {
        let _ = tx.send(s);
    }
}

/// How many things a request asks for, roughly: the number of [`request_parts`]. A hop
/// that called fewer tools than this gets a follow-up hop.
pub fn clauses(text: &str) -> usize {
    request_parts(text).len()
}

/// The parts of a request, roughly: its sentences, each cut at "and" or "then" between two
/// words ("What time is it? Please switch off the lights." → "What time is it", "Please
/// switch off the lights"; "turn on the kitchen and the bedroom light" → "turn on the
/// kitchen", "the bedroom light"). Trimmed substrings; parts without a letter or digit are
/// left out.
pub fn request_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for sentence in text.split(['.', '?', '!', ';']) {
        // words with their byte ranges in the sentence
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for (i, c) in sentence.char_indices().chain([(sentence.len(), ' ')]) {
            let in_word = c.is_alphanumeric() || c == '\'';
            match (in_word, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    words.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        let mut from = 0;
        for (n, &(a, b)) in words.iter().enumerate() {
            let w = &sentence[a..b];
            let joins = w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("then");
            if joins && n > 0 && n + 1 < words.len() {
                parts.push(&sentence[from..a]);
                from = b;
            }
        }
        parts.push(&sentence[from..]);
    }
    parts
        .into_iter()
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == ','))
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .collect()
}

fn call_key(c: &ToolCall) -> String {
    format!("{}{}", c.name, c.arguments)
}

async fn snapshot(shared: &Shared) -> Result<(Arc<Registry>, Arc<ToolSet>), AgentError> {
    let reg =
        ractor::call!(shared.tools, ToolsMsg::Snapshot).map_err(|_| AgentError::Actor("tools"))?;
    let fp = reg.fingerprint();
    let cached = shared
        .toolsets
        .lock()
        .ok()
        .and_then(|m| m.get(&fp).cloned());
    let set = match cached {
        Some(s) => s,
        None => {
            let s = Arc::new(reg.toolset());
            if let Ok(mut m) = shared.toolsets.lock() {
                m.insert(fp, s.clone());
            }
            s
        }
    };
    Ok((reg, set))
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
        let tokens = ractor::call!(shared.engine, EngineMsg::CountTokens, prompt.clone())
            .map_err(|_| AgentError::Actor("engine"))?;
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

/// What one hop generated.
struct Generated {
    /// The model's raw output.
    raw: String,
    parsed: crate::toolcall::ParseOutput,
    stats: GenStats,
    /// Whether any of it was sent to `speak`.
    spoke: bool,
    /// The first sentence the guard held back, and why (it and all after it were not
    /// spoken).
    held: Option<Unfounded>,
}

/// What a hop's streamed sentences are checked against while no call has run in the turn.
struct Guard<'a> {
    check: &'a ReplyCheck,
    request: &'a str,
    earlier: &'a [(String, String)],
}

impl Guard<'_> {
    fn check(&self, sentence: &str) -> Option<Unfounded> {
        self.check.check(sentence, self.request, self.earlier)
    }
}

/// Generate one hop, streaming the output through the parser; settled reply text goes out
/// sentence by sentence on `speak`, unless it echoes a tool payload or `guard` flags it
/// (then it and everything after it are held back).
async fn generate(
    shared: &Shared,
    prompt: String,
    grammar: Option<Arc<str>>,
    tools: &ToolSet,
    speak: Option<&mpsc::UnboundedSender<Speakable>>,
    outcomes: &[ToolOutcome],
    guard: Option<&Guard<'_>>,
) -> Result<Generated, AgentError> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    shared
        .engine
        .cast(EngineMsg::Generate(GenRequest {
            prompt,
            grammar,
            max_tokens: shared.cfg.max_tokens,
            stop: shared.cfg.preset.stop.clone(),
            events: tx,
        }))
        .map_err(|_| AgentError::Actor("engine"))?;
    let mut stream = shared.parser.stream(tools);
    let mut raw = String::new();
    let mut sentences = SentenceSplitter::new();
    let mut spoke = false;
    let mut held: Option<Unfounded> = None;
    let say_one = |s: Speakable, spoke: &mut bool, held: &mut Option<Unfounded>| {
        let Some(tx) = speak else { return };
        if held.is_some() || echo_sentence(s.as_str(), outcomes) {
            return;
        }
        match guard.and_then(|g| g.check(s.as_str())) {
            Some(why) => {
                tracing::warn!(sentence = %s.as_str(), why = why.label(), "sentence held back");
                *held = Some(why);
            }
            None => *spoke |= tx.send(s).is_ok(),
        }
    };
    let stats = loop {
        match rx.recv().await {
            Some(GenEvent::Text(t)) => {
                raw.push_str(&t);
                for e in stream.push(&t) {
                    if let StreamEvent::Text(t) = e {
                        for s in sentences.push(&t) {
                            say_one(s, &mut spoke, &mut held);
                        }
                    }
                }
            }
            Some(GenEvent::Done(r)) => break r?,
            None => return Err(AgentError::Engine(EngineError::Gone)),
        }
    };
    let (events, parsed) = stream.finish();
    if stats.stop != Some(StopReason::Cancelled) {
        for e in events {
            if let StreamEvent::Text(t) = e {
                for s in sentences.push(&t) {
                    say_one(s, &mut spoke, &mut held);
                }
            }
        }
        if let Some(last) = sentences.finish() {
            say_one(last, &mut spoke, &mut held);
        }
    }
    Ok(Generated {
        raw,
        parsed,
        stats,
        spoke,
        held,
    })
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

/// Run a hop's calls (in parallel, results in call order), time them and publish each.
async fn run_calls(
    shared: &Shared,
    calls: &[ToolCall],
    timings: &mut Timings,
    t0: Instant,
) -> Result<Vec<ToolOutcome>, AgentError> {
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

/// The spoken confirmations of a hop's calls, when every call succeeded and has one.
fn confirmations(
    registry: &Registry,
    calls: &[ToolCall],
    outcomes: &[ToolOutcome],
) -> Option<Vec<String>> {
    let said: Option<Vec<String>> = calls
        .iter()
        .zip(outcomes)
        .map(|(c, o)| {
            (o.status != ToolStatus::Error)
                .then(|| registry.confirmation(c, &o.result))
                .flatten()
        })
        .collect();
    said.filter(|v| !v.is_empty())
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
    if let Ok(mut s) = shared.sessions.lock() {
        s.insert(id.to_string(), session);
    }
}

/// A request a local intent matches whole: its calls run at once with no LLM hop, and the
/// tools' `say` confirmations are the answer (words from the results when a call failed).
/// `None` when no intent matches, or a matched call does not pass the tool set's check.
async fn intent_turn(
    shared: &Shared,
    registry: &Registry,
    toolset: &ToolSet,
    ask: &Ask,
    session: Session,
) -> Result<Option<Turn>, AgentError> {
    let t0 = Instant::now();
    let intents = registry.intents();
    let (found, parse_mode) = match intents.recognize(&ask.text) {
        Some(found) => (found, "intent"),
        None => match intents.follow_up(&ask.text, &session.before) {
            Some(found) => (found, "intent-follow-up"),
            None => return Ok(None),
        },
    };
    let calls: Vec<ToolCall> = found
        .into_iter()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: format!("{}_{i}", c.tool),
            name: c.tool,
            arguments: c.arguments,
        })
        .collect();
    for c in &calls {
        let verdict = toolset.check(&c.name, &c.arguments);
        if verdict != Verdict::Valid {
            tracing::warn!(tool = %c.name, ?verdict, "an intent's call does not pass the check: the model answers instead");
            return Ok(None);
        }
    }
    let mut timings = Timings::default();
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

/// The session's earlier (request, reply) pairs: each user request with the words the
/// assistant last said to it.
fn earlier_replies(history: &[ChatMessage]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut request: Option<&str> = None;
    for m in history {
        match m.role.as_str() {
            "user" if !m.content.starts_with("(system:") => request = Some(&m.content),
            "assistant" if m.tool_calls.is_empty() && !m.content.contains("<tool_call>") => {
                if let Some(r) = request {
                    pairs.push((r.to_string(), m.content.clone()));
                }
            }
            _ => {}
        }
    }
    pairs
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

/// How far a turn has gone to recover from a hop the checks flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// Nothing flagged yet.
    None,
    /// Asked again without the history (a small model copies what it sees there): free to
    /// answer or call, or held to words when the model had nothing to say.
    Fresh,
    /// Asked again with the history, held to a tool call.
    Forced,
}

/// What a flagged hop leads to.
enum Step {
    /// Ask again, under this choice.
    Retry(ToolChoice),
    /// Stop, saying this.
    GiveUp(&'static str),
}

impl Recovery {
    /// The next step after a hop flagged for `why` (the hop's hook says which).
    fn advance(&mut self, why: Unfounded, has_grammar: bool, report: &mut HopReport) -> Step {
        let label = why.label();
        match *self {
            Recovery::None => {
                *self = Recovery::Fresh;
                report.hook = Some(format!("{label}: asked again without the history"));
                Step::Retry(match why {
                    Unfounded::NoAnswer => ToolChoice::Reply,
                    _ => ToolChoice::Auto,
                })
            }
            Recovery::Fresh if has_grammar => {
                *self = Recovery::Forced;
                report.hook = Some(format!("{label}: asked again for a tool call"));
                Step::Retry(ToolChoice::Required)
            }
            _ => {
                report.hook = Some(format!("{label}: nothing was done"));
                Step::GiveUp(match why {
                    Unfounded::Claim | Unfounded::Unasked => NOTHING_DONE,
                    Unfounded::ToolTalk | Unfounded::Repeat | Unfounded::NoAnswer => APOLOGY,
                })
            }
        }
    }
}

/// The last turn of a history, as text: its request and what the assistant wrote (calls
/// included). A follow-up ("and the bedroom too") is about what it names.
fn last_turn_text(history: &[ChatMessage]) -> String {
    let start = history
        .iter()
        .rposition(|m| m.role == "user" && !m.content.starts_with("(system:"))
        .unwrap_or(history.len());
    history[start..]
        .iter()
        .flat_map(|m| {
            std::iter::once(m.content.as_str())
                .chain(m.tool_calls.iter().map(|c| c.function.name.as_str()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn run_turn(shared: &Shared, ask: Ask, cancel: &AtomicBool) -> Result<Turn, AgentError> {
    let t0 = Instant::now();
    let (registry, toolset) = snapshot(shared).await?;
    let tools_json = registry.openai_tools();
    let fingerprint = registry.fingerprint();
    let session = shared
        .sessions
        .lock()
        .ok()
        .and_then(|s| s.get(&ask.session).cloned())
        .unwrap_or_default();
    if ask.force_tool.is_none() && shared.cfg.intents {
        if let Some(turn) = intent_turn(shared, &registry, &toolset, &ask, session.clone()).await? {
            return Ok(turn);
        }
    }
    let Session {
        mut history,
        before,
    } = session;
    let mut turn_msgs = vec![ChatMessage::user(ask.text.clone())];
    let check = reply_check(shared, &registry, &fingerprint);
    let earlier = earlier_replies(&history);
    // recovering from a flagged reply: where it stands, what was caught first, and whether
    // the turn gave up (a turn that gave up is not kept in the history)
    let mut recovery = Recovery::None;
    let mut unfounded: Option<Unfounded> = None;
    let mut gave_up = false;
    let mut retry_choice: Option<ToolChoice> = None;
    // what a first call of the turn must be about: the request, or the turn before it when
    // the request points back at it
    let context = if check::refers_back(&ask.text) {
        format!("{} {}", ask.text, last_turn_text(&history))
    } else {
        ask.text.clone()
    };
    let mut hops: Vec<HopReport> = Vec::new();
    let mut timings = Timings::default();
    let mut seen_calls: Vec<String> = Vec::new();
    let mut ran_tools: Vec<String> = Vec::new();
    let mut reasked = false;
    let mut nudged = false;
    let mut force_reply = false;
    let mut forced = ask.force_tool.clone();
    let mut last_outcomes: Vec<ToolOutcome> = Vec::new();
    let mut reply: Option<String> = None;
    // True when the reply is the last hop's own text, already spoken sentence by sentence.
    let mut reply_streamed = false;
    let mut cancelled = false;
    // `say` confirmations already sent to `speak`, in order
    let mut confirmed: Vec<String> = Vec::new();
    // the next hop is a follow-up for the rest of a multi-part request
    let mut follow_up = false;
    let preset = &shared.cfg.preset;

    // A flagged hop: ask again (its messages dropped), or give up saying so.
    macro_rules! recover {
        ($why:expr, $report:expr) => {{
            let why: Unfounded = $why;
            unfounded.get_or_insert(why);
            let step = recovery.advance(why, preset.grammar.is_some(), &mut $report);
            hops.push($report);
            match step {
                Step::Retry(choice) => {
                    retry_choice = Some(choice);
                    turn_msgs.truncate(1);
                    continue;
                }
                Step::GiveUp(words) => {
                    reply = Some(words.to_string());
                    reply_streamed = false;
                    gave_up = true;
                    break;
                }
            }
        }};
    }

    // After a nudge: None goes on to the next hop; Some(words) ends the turn with them.
    macro_rules! settle {
        ($done:expr) => {
            match $done {
                None => continue,
                Some(words) => {
                    reply = Some(words);
                    break;
                }
            }
        };
    }

    for hop in 0..shared.cfg.max_hops {
        if cancel.load(Ordering::SeqCst) {
            cancelled = true;
            break;
        }
        let in_follow_up = std::mem::take(&mut follow_up);
        let choice = if let Some(c) = retry_choice.take() {
            c
        } else if let Some(name) = forced.take() {
            ToolChoice::Named(name)
        } else if in_follow_up {
            ToolChoice::Required
        } else if std::mem::take(&mut force_reply)
            || (preset.reply_after_tools && !last_outcomes.is_empty())
        {
            ToolChoice::Reply
        } else {
            ToolChoice::for_hop(preset.tool_choice_policy, hop, None)
        };
        let grammar = match (&choice, &preset.grammar) {
            (ToolChoice::Auto, _) => None,
            (ToolChoice::Reply, _) => Some(Arc::from(REPLY_LARK)),
            (_, Some(shape)) => shared
                .grammars
                .get(&fingerprint, shape, &toolset, &choice)?,
            (_, None) => {
                return Err(GrammarError::NoShape {
                    preset: preset.name.clone(),
                    choice: choice_label(&choice),
                }
                .into())
            }
        };
        // the first retry is asked without the history that misled it; held to a call,
        // the model cannot answer in words, so the last retry has the history back (what
        // "it" and "too" refer to)
        let prompt = if recovery == Recovery::Fresh {
            render_fitting(shared, &mut Vec::new(), &turn_msgs, &tools_json).await?
        } else {
            render_fitting(shared, &mut history, &turn_msgs, &tools_json).await?
        };
        let span = tracing::info_span!("hop", hop, choice = %choice_label(&choice));
        // while no call has run in the turn, what the model says in words is checked
        let guard = (ran_tools.is_empty() && confirmed.is_empty()).then_some(Guard {
            check: &check,
            request: &ask.text,
            earlier: &earlier,
        });
        let Generated {
            raw,
            parsed,
            stats,
            spoke,
            held,
        } = generate(
            shared,
            prompt,
            grammar,
            &toolset,
            ask.speak.as_ref(),
            &last_outcomes,
            guard.as_ref(),
        )
        .instrument(span.clone())
        .await?;
        let _g = span.enter();
        timings.prompt_eval += stats.prompt_eval_ms;
        timings.generation += stats.generation_ms;
        tracing::info!(
            parse_mode = %parsed.telemetry.parse_mode,
            fallback_used = parsed.telemetry.fallback_used,
            candidate_count = parsed.telemetry.candidate_count,
            schema_validation = %parsed.telemetry.schema_validation,
            calls = parsed.calls.len(),
            "hop parsed"
        );
        let mut report = HopReport {
            raw: raw.clone(),
            calls: Vec::new(),
            telemetry: parsed.telemetry.clone(),
            rejected: parsed.rejected.clone(),
            tool_choice: choice_label(&choice),
            hook: None,
            stats: stats.clone(),
        };
        if stats.stop == Some(StopReason::Cancelled) || cancel.load(Ordering::SeqCst) {
            cancelled = true;
            hops.push(report);
            break;
        }

        // A hook that wants the model to answer now: the first time, a hint and a
        // reply-only hop; the second time, stop with words built from the results (or an
        // apology when there are none).
        // With no hint, the hop is generated again from the same messages, held to words.
        let mut nudge =
            |report: &mut HopReport, what: &str, hint: Option<String>| -> Option<String> {
                if !nudged {
                    nudged = true;
                    force_reply = true;
                    report.hook = Some(format!("{what}: nudged to answer"));
                    if let Some(hint) = hint {
                        turn_msgs.push(ChatMessage::assistant(raw.trim().to_string()));
                        turn_msgs.push(ChatMessage::user(hint));
                    }
                    None
                } else {
                    report.hook = Some(format!("{what} again: stopped"));
                    Some(if last_outcomes.is_empty() {
                        APOLOGY.to_string()
                    } else {
                        reply_from_results(&last_outcomes)
                    })
                }
            };
        let answer_hint = |lead: &str| {
            let results: Vec<String> = last_outcomes
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
        };

        if in_follow_up
            && (parsed.calls.is_empty()
                || parsed
                    .calls
                    .iter()
                    .all(|c| seen_calls.contains(&call_key(c))))
        {
            // nothing more was asked for: the confirmations are the answer
            report.hook = Some("follow-up called nothing new: done".to_string());
            hops.push(report);
            reply = Some(String::new());
            reply_streamed = true;
            break;
        }

        if parsed.calls.is_empty() {
            // A known tool called with arguments that failed validation, or with malformed
            // markup (empty or schema-echo arguments are the usual small-model cases).
            let bad_args = parsed.rejected.iter().find_map(|r| {
                r.name
                    .as_ref()
                    .filter(|n| {
                        toolset.contains(n)
                            && !r.reason.contains("reasoning")
                            && !r.reason.contains("conflicting")
                    })
                    .cloned()
            });
            if let Some(name) = bad_args {
                if !reasked && !ran_tools.contains(&name) {
                    // Re-ask once, held to that tool's grammar when the preset has one.
                    reasked = true;
                    report.hook = Some(format!("invalid arguments for {name}: re-asked once"));
                    turn_msgs.push(ChatMessage::assistant(raw.trim().to_string()));
                    turn_msgs.push(ChatMessage::user(format!(
                        "(system: the call to {name} had invalid arguments. Call {name} again with real values for its parameters.)"
                    )));
                    if preset.grammar.is_some() {
                        forced = Some(name);
                    }
                    hops.push(report);
                    continue;
                }
                if ran_tools.contains(&name) {
                    let hint = answer_hint(&format!("{name} has already run."));
                    let done = nudge(
                        &mut report,
                        &format!("called {name} again with invalid arguments"),
                        Some(hint),
                    );
                    hops.push(report);
                    settle!(done);
                }
                report.hook = Some(format!("invalid arguments for {name} again: stopped"));
                hops.push(report);
                reply = Some(APOLOGY.to_string());
                break;
            }
            let said = speakable(&parsed.reply);
            if hop > 0 && is_echo(&raw, &said, &last_outcomes) {
                let hint = answer_hint("Do not repeat the tool output.");
                let done = nudge(&mut report, "echoed the tool payload", Some(hint));
                hops.push(report);
                settle!(done);
            }
            if said.is_empty() {
                // Nothing to say: JSON only, or a call to a tool that does not exist (a small
                // model's way to tell a joke is `{"name": "Joke", …}`). Before any call: asked
                // again without the history, held to words. After calls: asked again with
                // the results, held to words; a hint would only be parroted back.
                if guard.is_some() {
                    recover!(Unfounded::NoAnswer, report);
                }
                let done = nudge(&mut report, "nothing speakable", None);
                hops.push(report);
                settle!(done);
            }
            // words with no call behind them: checked before they count as the answer
            let flagged = guard.as_ref().and_then(|g| {
                held.or_else(|| sentences_of(&said).iter().find_map(|s| g.check(s.as_str())))
            });
            if let Some(why) = flagged {
                recover!(why, report);
            }
            turn_msgs.push(ChatMessage::assistant(parsed.reply.trim().to_string()));
            hops.push(report);
            reply = Some(said);
            reply_streamed = spoke && held.is_none();
            break;
        }

        // The turn's first calls run only when they are about what was said (a retry
        // asked without the history: about the request itself); a tool the caller named is
        // the caller's choice.
        if guard.is_some() && ask.force_tool.is_none() {
            let about = if recovery == Recovery::Fresh {
                &ask.text
            } else {
                &context
            };
            if !parsed
                .calls
                .iter()
                .all(|c| check.grounded(&c.name, &c.arguments, about))
            {
                recover!(Unfounded::Unasked, report);
            }
        }

        // The same call(s) again: nudge once, then stop.
        let keys: Vec<String> = parsed.calls.iter().map(call_key).collect();
        if keys.iter().all(|k| seen_calls.contains(k)) {
            let hint = answer_hint("That call was already made; do not call it again.");
            let done = nudge(&mut report, "repeated an identical call", Some(hint));
            hops.push(report);
            settle!(done);
        }
        seen_calls.extend(keys);
        ran_tools.extend(parsed.calls.iter().map(|c| c.name.clone()));

        if cancel.load(Ordering::SeqCst) {
            cancelled = true;
            hops.push(report);
            break;
        }
        let outcomes = run_calls(shared, &parsed.calls, &mut timings, t0).await?;
        report.calls = outcomes.iter().map(CallReport::from).collect();
        hops.push(report);

        // Round trip: the template's tool role with ids when it has one and the call was
        // native markup; otherwise the synthetic user message.
        let structured = shared.cfg.preset.tool_role && shared.caps.tool_role && parsed.native;
        if structured {
            turn_msgs.push(ChatMessage::assistant_calls(
                parsed.reply.trim().to_string(),
                parsed
                    .calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone())),
            ));
            for o in &outcomes {
                turn_msgs.push(ChatMessage::tool(
                    o.id.clone(),
                    o.name.clone(),
                    o.result.clone(),
                ));
            }
        } else {
            turn_msgs.push(ChatMessage::assistant(raw.trim().to_string()));
            turn_msgs.push(ChatMessage::user(synthetic_results(&outcomes)));
        }

        // Spoken confirmations: every call succeeded and has one → no second hop.
        if let Some(said) = confirmations(&registry, &parsed.calls, &outcomes) {
            let text = speakable(&said.join(" "));
            // spoken now: a follow-up hop may still run
            if let Some(tx) = &ask.speak {
                send_sentences(tx, &text);
            }
            confirmed.push(text);
            let asked = clauses(&ask.text);
            if asked > seen_calls.len() && hop + 1 < shared.cfg.max_hops && preset.grammar.is_some()
            {
                tracing::info!(
                    clauses = asked,
                    calls = seen_calls.len(),
                    "the request asked for more: a follow-up hop"
                );
                // the rest of the request, as the user's next words: a small model
                // answers the last message
                let rest = request_parts(&ask.text)[seen_calls.len()..].join(". ");
                turn_msgs.push(ChatMessage::user(format!("{rest}.")));
                follow_up = true;
                last_outcomes = outcomes;
                continue;
            }
            reply = Some(String::new());
            reply_streamed = true;
            break;
        }
        last_outcomes = outcomes;
    }
    if !confirmed.is_empty() && !cancelled {
        turn_msgs.push(ChatMessage::assistant(confirmed.join(" ")));
    }

    let reply = if cancelled {
        String::new()
    } else {
        reply.unwrap_or_else(|| {
            tracing::warn!(hops = hops.len(), "hop limit reached");
            APOLOGY.to_string()
        })
    };
    if let (Some(tx), false, false) = (&ask.speak, cancelled, reply_streamed) {
        // Words that did not come from the model's stream: words from the results, an
        // apology.
        send_sentences(tx, &reply);
    }
    // the confirmations spoken along the way come first
    let reply = match (cancelled, confirmed.is_empty(), reply.is_empty()) {
        (false, false, true) => confirmed.join(" "),
        (false, false, false) => format!("{} {reply}", confirmed.join(" ")),
        _ => reply,
    };
    if !cancelled && !gave_up {
        let calls: Vec<CallReport> = hops.iter().flat_map(|h| h.calls.iter().cloned()).collect();
        let session = Session { history, before };
        remember_turn(shared, &ask.session, session, turn_msgs, &calls, &reply);
    }
    if let Some(why) = unfounded {
        let count = shared.unfounded.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::warn!(
            why = why.label(),
            gave_up,
            count,
            "a reply in words was not founded on a call"
        );
    }
    timings.total = t0.elapsed().as_secs_f64() * 1e3;
    Ok(Turn {
        path: Handled::Llm,
        reply,
        hops,
        timings_ms: timings,
        cancelled,
        unfounded: unfounded.map(|u| u.label().to_string()),
    })
}
