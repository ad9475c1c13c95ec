//! What every turn shares with the actor ([`Shared`]: the configuration, the engine and
//! tools, the chat template and parser, the caches, the sessions), and the work all turns do
//! with it: rendering a prompt that fits, running calls, keeping a turn in its session.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use ractor::ActorRef;
use serde_json::Value;

use super::check::ReplyCheck;
use super::history;
use super::messages::{
    AgentArgs, AgentConfig, AgentError, AgentMsg, CallReport, SessionChange, Timings,
};
use super::session::{Change, Session};
use crate::intent::IntentCall;
use crate::llm::{ChatMessage, ChatTemplate, EngineMsg, GrammarCache, TemplateCaps};
use crate::preset::Preset;
use crate::toolcall::{Parser, ToolCall, ToolSet};
use crate::tools::{Registry, ToolOutcome, ToolStatus, ToolsMsg};

/// Compiled tool sets the agent keeps, by the tools' fingerprint: the current one and the
/// few before it (a tool set that changes again and again must not grow the cache).
pub(crate) const TOOLSETS_KEPT: usize = 4;

/// Everything a turn needs, shared by the actor and its turn tasks.
pub(super) struct Shared {
    pub(super) cfg: AgentConfig,
    pub(super) engine: ActorRef<EngineMsg>,
    pub(super) tools: ActorRef<ToolsMsg>,
    pub(super) template: ChatTemplate,
    pub(super) caps: TemplateCaps,
    pub(super) parser: Parser,
    pub(super) n_ctx: usize,
    /// Prompts the engine keeps cached side by side ([`crate::llm::EngineInfo::sequences`]).
    pub(super) sequences: usize,
    pub(super) grammars: GrammarCache,
    /// Compiled tool sets by registry fingerprint, the [`TOOLSETS_KEPT`] used last.
    pub(super) toolsets: Mutex<crate::bounded::Lru<String, Arc<ToolSet>>>,
    /// The agent actor, which owns the sessions: a turn's changes go to it.
    pub(super) agent: ActorRef<AgentMsg>,
    /// The reply checks of the latest tool set, by its fingerprint.
    pub(super) checks: Mutex<Option<(String, Arc<ReplyCheck>)>>,
    /// Replies caught by the checks since start (each turn counts once).
    pub(super) unfounded: std::sync::atomic::AtomicU64,
}

impl Shared {
    /// Send what a turn or a warm-up changed of session `id` to the agent, which owns the
    /// sessions (an agent gone has no sessions to keep).
    pub(super) fn change_session(&self, id: &str, change: Change) {
        let id = id.to_string();
        let _ = self
            .agent
            .cast(AgentMsg::Session(SessionChange { id, change }));
    }
}

pub(super) async fn build_shared(
    args: AgentArgs,
    agent: ActorRef<AgentMsg>,
) -> Result<Shared, AgentError> {
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
        sequences: info.sequences,
        engine: args.engine,
        tools: args.tools,
        cfg: args.cfg,
        grammars: GrammarCache::new(),
        toolsets: Mutex::new(crate::bounded::Lru::new("agent.toolsets", TOOLSETS_KEPT)),
        agent,
        checks: Mutex::new(None),
        unfounded: std::sync::atomic::AtomicU64::new(0),
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
pub(super) async fn snapshot(shared: &Shared) -> Result<(Arc<Registry>, Arc<ToolSet>), AgentError> {
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
            let s = Arc::new(reg.model_toolset().unwrap_or_else(|e| {
                // a subset of a valid tool set is one: not reached
                tracing::error!(error = %e, "the model's tools do not form a tool set");
                ToolSet::empty()
            }));
            if let Ok(mut m) = shared.toolsets.lock() {
                m.put(fp, s.clone());
            }
            s
        }
    };
    Ok((reg, set))
}

/// The tokens `text` comes to in the engine's tokenizer.
pub(super) async fn count_tokens(shared: &Shared, text: &str) -> Result<usize, AgentError> {
    ractor::call!(shared.engine, EngineMsg::CountTokens, text.to_string())
        .map_err(|_| AgentError::Actor("engine"))
}

/// A hop's prompt: rendered with the chat template, and the messages and tools it was
/// rendered from.
pub(super) struct Rendered {
    pub(super) text: String,
    pub(super) messages: Vec<ChatMessage>,
    /// The tools the prompt shows (an empty list: none).
    pub(super) tools: Value,
}

/// What a hop's prompt opens with: the system prompt and the tools it shows.
pub(super) enum Frame<'a> {
    /// The system prompt and the turn's tools: every hop but a retry held to words.
    Tools(&'a Value),
    /// The words prompt and no tools ([`AgentConfig::words_prompt`]).
    ///
    /// [`AgentConfig::words_prompt`]: super::messages::AgentConfig::words_prompt
    Words,
}

/// Render the prompt, dropping the oldest history messages until it fits the context.
pub(super) async fn render_fitting(
    shared: &Shared,
    frame: Frame<'_>,
    history: &mut Vec<ChatMessage>,
    turn: &[ChatMessage],
) -> Result<Rendered, AgentError> {
    let (system, tools) = match frame {
        Frame::Tools(tools) => (&shared.cfg.system_prompt, tools.clone()),
        Frame::Words => (&shared.cfg.words_prompt, Value::Array(Vec::new())),
    };
    loop {
        let mut msgs = Vec::with_capacity(history.len() + turn.len() + 1);
        msgs.push(ChatMessage::system(system.clone()));
        msgs.extend(history.iter().cloned());
        msgs.extend(turn.iter().cloned());
        let prompt = shared.template.render(&msgs, Some(&tools), true)?;
        let tokens = count_tokens(shared, &prompt).await?;
        if tokens + shared.cfg.max_tokens <= shared.n_ctx {
            return Ok(Rendered {
                text: prompt,
                messages: msgs,
                tools,
            });
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

/// Run a hop's calls (in parallel, results in call order), time them and publish each; no
/// calls (all held for a yes, or declined): nothing is asked of the tools, nothing timed.
/// `room`: where the request was said.
pub(super) async fn run_calls(
    shared: &Shared,
    calls: &[ToolCall],
    room: Option<&str>,
    timings: &mut Timings,
    t0: Instant,
) -> Result<Vec<ToolOutcome>, AgentError> {
    if calls.is_empty() {
        return Ok(Vec::new());
    }
    let t_tools = Instant::now();
    let outcomes = ractor::call!(shared.tools, |r| ToolsMsg::CallAll {
        calls: calls.to_vec(),
        room: room.map(str::to_string),
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
pub(super) fn remember_turn(
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
    if !calls.is_empty() {
        session.done = calls.to_vec();
    }
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
    shared.change_session(id, Change::Keep(session));
}

/// The reply checks for `registry`, built once per tool set.
pub(super) fn reply_check(
    shared: &Shared,
    registry: &Registry,
    fingerprint: &str,
) -> Arc<ReplyCheck> {
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
pub(super) fn call_wire(shared: &Shared) -> history::CallWire<'_> {
    let preset = &shared.cfg.preset;
    match &preset.grammar {
        Some(shape) if !(preset.tool_role && shared.caps.tool_role) => {
            history::CallWire::Markup(shape)
        }
        _ => history::CallWire::Structured,
    }
}
