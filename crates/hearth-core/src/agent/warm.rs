//! Warming the KV cache: the engine evaluates, ahead of the request, the prompt text the next
//! turn will begin with (the system prompt, the tools and the session's history, up to where
//! the request goes), so that a turn evaluates only its own words.
//!
//! With it, the lazy grammar of the tool set is compiled ahead (`EngineMsg::Compile`): the
//! first call a model writes is held to it at once, not after the tokenizer's trie is built.
//!
//! Warmed at start, before the agent answers anything (the first command after start is as
//! fast as the tenth); after every turn, for its session (the history as the next prompt
//! renders it: the model's call as the template writes it back, not as it was generated);
//! and when the tool set changes (a provider registered or left), for the latest session.
//! A history over `[agent] history_tokens` is cut back here ([`cut_back`]): the shorter
//! prompt goes to the cache's spare sequence, and the session keeps the cut only when it is
//! evaluated whole; until then its turns find the whole history still cached, and the next
//! warm-up takes the evaluation up where the last one stopped.
//! Those after start run on a task of their own, one at a time, as the agent actor decides
//! (`actor.rs`, which owns that state): one asked for while another runs replaces any still
//! waiting (only the latest matters), none starts while a turn runs (its end asks again), and
//! a turn that starts makes the one under way give way (its flag raised, the engine's prefill
//! cancelled), so a request never waits behind a prefill.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::messages::AgentError;
use super::session::{Change, Session};
use super::shared::{count_tokens, snapshot, Shared};
use crate::llm::{ChatMessage, EngineMsg, GenStats, StopReason};

/// Stands for the request while the next prompt is rendered; the prefix is what comes
/// before it. (Invisible separators around a name no request holds.)
const REQUEST_MARK: &str = "\u{2063}hearth-request\u{2063}";

/// Warm the next prompt of `session`, then the words prompt if that finished (logged if either
/// fails: a cold prompt is slower, not wrong). The agent runs this on a task of its own and
/// raises `give_way` when a turn starts.
pub(super) async fn between_turns(
    shared: &Shared,
    session: Option<(String, Session)>,
    give_way: &AtomicBool,
) {
    let session = session.as_ref().map(|(id, s)| (id.as_str(), s));
    let finished = match warm(shared, session, give_way).await {
        Ok(stats) => stats.is_some_and(|s| s.stop != Some(StopReason::Cancelled)),
        Err(e) => {
            tracing::warn!(error = %e, "the next prompt was not warmed");
            false
        }
    };
    // only after a warm-up that finished: one cancelled by a turn, or by the engine stopping
    // with hearth, leaves the engine to them
    if finished {
        if let Err(e) = words(shared, give_way).await {
            tracing::warn!(error = %e, "the words prompt was not warmed");
        }
    }
}

/// The prompt text a turn in `session` (its id and a copy of it as the agent keeps it;
/// `None`: a new one) will begin with, evaluated into
/// the engine's cache. `None` when there was nothing to warm: the prefix would not fit the
/// context untrimmed (the turn trims history, so it would begin differently), or the
/// template does not render the request's text as it is given.
pub(super) async fn warm(
    shared: &Shared,
    session: Option<(&str, &Session)>,
    give_way: &AtomicBool,
) -> Result<Option<GenStats>, AgentError> {
    let (registry, toolset) = snapshot(shared).await?;
    // the grammar a turn's first hop is held to once it begins a call, compiled ahead
    if let Some(lazy) = super::turn::lazy_grammar(shared, &registry.fingerprint(), &toolset)? {
        shared
            .engine
            .cast(EngineMsg::Compile(lazy.grammar.clone()))
            .map_err(|_| AgentError::Actor("engine"))?;
    }
    let history = session.map(|(_, s)| s.history.clone()).unwrap_or_default();
    let tools = registry.openai_tools();
    let Some(whole) = prefix_of(shared, &history, &tools).await? else {
        return Ok(None);
    };
    let cut = match session {
        Some((id, s)) => cut_back(shared, id, s.cutting.clone(), &history, &tools, whole.1).await?,
        None => None,
    };
    let (cut, (prefix, tokens)) = match cut {
        Some((at, kept)) => (Some(at), kept),
        None => (None, whole),
    };
    if tokens + shared.cfg.max_tokens > shared.n_ctx {
        return Ok(None);
    }
    if give_way.load(Ordering::SeqCst) {
        // a turn began meanwhile: its prompt goes first
        return Ok(None);
    }
    let stats = ractor::call!(shared.engine, EngineMsg::Prefill, prefix)
        .map_err(|_| AgentError::Actor("engine"))??;
    let finished = stats.stop != Some(StopReason::Cancelled);
    tracing::info!(
        tokens = stats.prompt_tokens,
        evaluated = stats.evaluated_tokens,
        ms = format!("{:.0}", stats.prompt_eval_ms),
        finished,
        "next prompt warmed"
    );
    if let (Some(n), Some((id, _)), true) = (cut, session, finished) {
        // made only of the history it was worked out on (no turn added meanwhile)
        shared.change_session(id, Change::Cut { history, n });
    }
    Ok(Some(stats))
}

/// The prompt a retry held to words begins with (the words prompt, no tools, no history:
/// `shared::Frame::Words`), evaluated into a sequence of the cache of its own, so that such
/// a retry evaluates only the request: at start (with `warm_next`), and after each warm-up
/// that finished, where it costs one token and keeps the sequence from being the least recently used (a
/// retry without the history or a cut history would overwrite it). Not with an engine that
/// keeps one prompt cached (a remote server: `Shared::sequences`).
pub(super) async fn words(shared: &Shared, give_way: &AtomicBool) -> Result<(), AgentError> {
    // an engine that keeps one prompt (a remote server) would drop the conversation for it
    if shared.sequences < 2 || give_way.load(Ordering::SeqCst) {
        return Ok(());
    }
    let none = Value::Array(Vec::new());
    let Some(prefix) = prefix_under(shared, &shared.cfg.words_prompt, Vec::new(), &none)? else {
        return Ok(());
    };
    let stats = match ractor::call!(shared.engine, EngineMsg::Prefill, prefix) {
        Ok(r) => r?,
        // hearth is stopping: the engine stopped after the warm-up before this one
        Err(_) if shared.engine.get_status() != ractor::ActorStatus::Running => {
            tracing::debug!("the engine has stopped: the words prompt is not warmed");
            return Ok(());
        }
        Err(_) => return Err(AgentError::Actor("engine")),
    };
    tracing::info!(
        tokens = stats.prompt_tokens,
        evaluated = stats.evaluated_tokens,
        ms = format!("{:.0}", stats.prompt_eval_ms),
        "the words prompt warmed"
    );
    Ok(())
}

/// Where `session`'s `history` is cut back, once it holds more than `[agent]
/// history_tokens` (`whole`: the tokens of the prompt with all of it), and the prompt that
/// cut leaves with its tokens: the cut under way (`under_way`, as the session holds it) while
/// what it keeps is within the bound
/// (a warm-up cancelled part-way by a request is taken up where it stopped: the prompt is
/// the same), else the fewest oldest turns that leave at most half the bound (whole turns,
/// from a request on). `None`: the history is within bounds.
async fn cut_back(
    shared: &Shared,
    session: &str,
    under_way: Option<(usize, ChatMessage)>,
    history: &[ChatMessage],
    tools: &Value,
    whole: usize,
) -> Result<Option<(usize, (String, usize))>, AgentError> {
    let bound = shared.cfg.history_tokens;
    let Some((_, base)) = prefix_of(shared, &[], tools).await? else {
        return Ok(None);
    };
    if whole.saturating_sub(base) <= bound {
        return Ok(None);
    }
    // the prompt with the history from message `at` on, if that history is within `limit`
    let within = |at: usize, limit: usize| async move {
        let kept = prefix_of(shared, &history[at..], tools).await?;
        Ok::<_, AgentError>(kept.filter(|(_, n)| n.saturating_sub(base) <= limit))
    };
    if let Some((at, first)) = under_way {
        if history.get(at) == Some(&first) {
            if let Some(kept) = within(at, bound).await? {
                return Ok(Some((at, kept)));
            }
        }
    }
    let starts: Vec<usize> = (1..history.len())
        .filter(|&i| history[i].role == "user")
        .collect();
    let mut cut = None;
    for &at in &starts {
        if let Some(kept) = within(at, bound / 2).await? {
            cut = Some((at, kept));
            break;
        }
    }
    // no whole turns leave so little: all but the last turn go
    if cut.is_none() {
        if let Some(&at) = starts.last() {
            cut = within(at, usize::MAX).await?.map(|kept| (at, kept));
        }
    }
    if let Some((at, _)) = &cut {
        shared.change_session(session, Change::Cutting(*at, history[*at].clone()));
    }
    Ok(cut)
}

/// The prompt text a turn after `history` begins with, and its tokens; `None` when the
/// template does not render the request's text as it is given.
async fn prefix_of(
    shared: &Shared,
    history: &[ChatMessage],
    tools: &Value,
) -> Result<Option<(String, usize)>, AgentError> {
    match next_prefix(shared, history.to_vec(), tools)? {
        Some(p) => {
            let n = count_tokens(shared, &p).await?;
            Ok(Some((p, n)))
        }
        None => Ok(None),
    }
}

/// The rendered prompt of a turn after `history`, up to where its request goes.
fn next_prefix(
    shared: &Shared,
    history: Vec<ChatMessage>,
    tools: &Value,
) -> Result<Option<String>, AgentError> {
    prefix_under(shared, &shared.cfg.system_prompt, history, tools)
}

/// The rendered prompt under `system` after `history`, up to where its request goes.
fn prefix_under(
    shared: &Shared,
    system: &str,
    history: Vec<ChatMessage>,
    tools: &Value,
) -> Result<Option<String>, AgentError> {
    let mut msgs = Vec::with_capacity(history.len() + 2);
    msgs.push(ChatMessage::system(system.to_string()));
    msgs.extend(history);
    msgs.push(ChatMessage::user(REQUEST_MARK));
    let mut prompt = shared.template.render(&msgs, Some(tools), true)?;
    Ok(prompt.find(REQUEST_MARK).map(|at| {
        prompt.truncate(at);
        prompt
    }))
}
