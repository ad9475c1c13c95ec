//! A turn through the model: the hop loop. [`run_turn`] sets the turn up (tools, session,
//! the intent path first), runs [`hop`] until one ends the turn or `max_hops` runs out,
//! and ends it ([`TurnState::finish`]: the reply spoken and reported, the turn kept in its
//! session). One hop chooses the tool choice, renders, generates, parses and validates,
//! then runs the calls or checks the reply, and decides ([`HopOutcome`]); what a small
//! model gets wrong is decided by the hooks (`hooks.rs`) and applied here
//! ([`TurnState::apply`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use super::check::Earlier;
use super::check::{ReplyCheck, Unfounded};
use super::generate::{generate, Generated, Grammar, Guard};
use super::history;
use super::history::CallWire;
use super::hooks::{self, Hook, NextHop, Nudged, Recovery, Step};
use super::intent_turn::{act, answer_turn, unasked_turn, Confirmed};
use super::messages::{
    AgentError, Ask, CallReport, Handled, HopReport, Timings, Turn, APOLOGY, MODEL_UNAVAILABLE,
};
use super::plan::{plan, Plan, Request};
use super::reading::Carried;
use super::recall::recall_turn;
use super::reply::{confirmations, send_sentences, speakable, synthetic_results};
use super::session::{Change, Session};
use super::shared::{
    remember_turn, render_fitting, reply_check, run_calls, snapshot, Frame, Rendered, Shared,
};
use crate::intent::Before;
use crate::llm::{
    ChatMessage, ChatPrompt, GrammarError, GrammarShape, StopReason, ToolChoice, REPLY_LARK,
};
use crate::toolcall::{ToolCall, ToolSet};
use crate::tools::{Registry, ToolOutcome, ToolStatus};

/// How one hop ends.
pub(super) enum HopOutcome {
    /// Go on to the next hop (calls ran and their results go back, or a hook asked again).
    Continue,
    /// The turn is answered: the reply is kept in the session's history.
    Reply(Reply),
    /// The turn ends without an answer to keep: cancelled (nothing is said), or given up
    /// after a flagged hop (the words are said, but the turn is not kept, so one bad turn
    /// cannot teach the next).
    Stop(Stop),
}

/// A turn's answer.
pub(super) enum Reply {
    /// The model's own words; `streamed`: already sent to `speak` sentence by sentence.
    Model { text: String, streamed: bool },
    /// Words the loop chose (an apology, words from the results): still to be spoken.
    Said(String),
    /// The `say` confirmations already spoken are the whole answer.
    Confirmed,
}

/// Why a turn stopped without an answer to keep.
pub(super) enum Stop {
    Cancelled,
    /// Recovery gave up ([`Step::GiveUp`]), saying this.
    GaveUp(&'static str),
}

/// What a turn knows that does not change from hop to hop.
struct TurnCtx<'a> {
    shared: &'a Shared,
    ask: &'a Ask,
    cancel: &'a AtomicBool,
    t0: Instant,
    registry: Arc<Registry>,
    toolset: Arc<ToolSet>,
    tools_json: Value,
    fingerprint: String,
    check: Arc<ReplyCheck>,
    /// What the session said before: its requests and replies, for the repeat and echo
    /// checks.
    earlier: Earlier,
    /// What a first call of the turn must be about ([`hooks::grounding`]).
    context: String,
}

impl TurnCtx<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    fn has_grammar(&self) -> bool {
        self.shared.cfg.preset.grammar.is_some()
    }

    /// A hop's prompt as the engine takes it: the text, and the messages and tools it was
    /// rendered from (for a server that takes chat, not raw text).
    fn chat_prompt(&self, rendered: Rendered) -> (String, Arc<ChatPrompt>) {
        let chat = ChatPrompt {
            messages: rendered.messages,
            tools: rendered.tools,
            calls: self.shared.cfg.preset.grammar.clone(),
        };
        (rendered.text, Arc::new(chat))
    }

    fn guard<'a>(&'a self, carried: Option<&'a Carried>) -> Guard<'a> {
        Guard {
            check: &self.check,
            request: &self.ask.text,
            earlier: &self.earlier,
            carried,
        }
    }

    /// This hop's grammar for `choice` (rule 8: cached by the tools' fingerprint). A free
    /// hop before any call of the turn is held to the grammar once it begins a call to a
    /// known tool (the lazy grammar: the call's structure is forced, its arguments held to
    /// the schemas); after calls it stays free (a small model echoing a result as JSON
    /// must not be turned into a call).
    fn grammar(&self, choice: &ToolChoice, before_calls: bool) -> Result<Grammar, AgentError> {
        let preset = &self.shared.cfg.preset;
        let whole = |g: Option<Arc<str>>| Grammar {
            whole: g,
            lazy: None,
        };
        Ok(match (choice, &preset.grammar) {
            (ToolChoice::Auto, _) if before_calls => Grammar {
                whole: None,
                lazy: lazy_grammar(self.shared, &self.fingerprint, &self.toolset)?,
            },
            (ToolChoice::Auto, _) => Grammar::default(),
            (ToolChoice::Reply, _) => whole(Some(Arc::from(REPLY_LARK))),
            (_, Some(shape)) => whole(self.shared.grammars.get(
                &self.fingerprint,
                shape,
                &self.toolset,
                choice,
            )?),
            (_, None) => {
                return Err(GrammarError::NoShape {
                    preset: preset.name.clone(),
                    choice: choice_label(choice),
                }
                .into())
            }
        })
    }
}

/// The lazy grammar of a free hop over `toolset` ([`crate::llm::LazyGrammar`]), when the
/// preset has a wire format and there are tools; bare JSON calls too when the preset reads
/// them.
pub(super) fn lazy_grammar(
    shared: &Shared,
    fingerprint: &str,
    toolset: &ToolSet,
) -> Result<Option<Arc<crate::llm::LazyGrammar>>, AgentError> {
    let preset = &shared.cfg.preset;
    let Some(shape) = preset.grammar.as_ref().filter(|_| !toolset.is_empty()) else {
        return Ok(None);
    };
    let bare = preset.parsers.iter().any(|p| p == "json");
    Ok(Some(shared.grammars.lazy(
        fingerprint,
        shape,
        toolset,
        bare,
    )?))
}

/// What a turn changes from hop to hop.
struct TurnState {
    /// The session's history (trimmed oldest-first when the prompt would not fit).
    history: Vec<ChatMessage>,
    before: Before,
    /// The warm-up's cut under way, kept for the session as it was.
    cutting: Option<(usize, ChatMessage)>,
    /// Calls this turn holds for a yes (a tool's `confirm`), kept in the session.
    pending: Option<super::confirm::Pending>,
    /// The session's last calls, kept for "what did you just do?" until this turn makes its
    /// own.
    done: Vec<CallReport>,
    /// This turn's messages, the request first.
    msgs: Vec<ChatMessage>,
    hops: Vec<HopReport>,
    timings: Timings,
    /// What the hooks asked of the next hop.
    next: NextHop,
    /// Recovering from a flagged reply: where it stands, and what was caught first.
    recovery: Recovery,
    unfounded: Option<Unfounded>,
    /// The turn's calls so far ([`hooks::call_key`]) and the tools they named.
    seen_calls: Vec<String>,
    ran_tools: Vec<String>,
    /// The re-ask and the nudge are used once per turn.
    reasked: bool,
    nudged: bool,
    /// The latest hop's tool results.
    last_outcomes: Vec<ToolOutcome>,
    /// What the turn's results (and the request, and the arguments of the calls that
    /// succeeded) carry: what the model's words after the calls may say.
    carried: Carried,
    /// The results no `say` confirmation spoke: what words from the results are built of.
    unsaid: Vec<ToolOutcome>,
    /// `say` confirmations already sent to `speak`, in order.
    confirmed: Vec<String>,
    /// Indices into `msgs` of what a flagged hop wrote and the hint after it: shown to the
    /// model in this turn, never kept in the session.
    unkept: Vec<usize>,
    /// The latest hop's prompt and grammar ([`hooks::hop_key`]), and, after a recovery
    /// asked for a retry, those of the hop it recovers from.
    asked: Option<u64>,
    retrying_from: Option<u64>,
}

/// The request as the model reads it. Said in a room (a satellite's) and naming none of
/// the rooms the tools know, it says the room: "turn on the light (said in the bedroom)";
/// the room is then also what a call may be about ([`hooks::grounding`]). A request that
/// names a room ("the kitchen light", said in the bedroom) is left as it is, and so is any
/// request when no tool has a room parameter.
fn request_in_room(ask: &Ask, tools: &Value) -> String {
    let room = ask.room.as_deref().map(str::trim).filter(|r| !r.is_empty());
    let (Some(room), Some(rooms)) = (room, crate::intent::known_rooms(tools)) else {
        return ask.text.clone();
    };
    if crate::intent::names_room(&ask.text, &rooms) {
        return ask.text.clone();
    }
    format!("{} (said in the {room})", ask.text.trim_end())
}

/// One turn: the intent path first, then hops until one ends the turn or `max_hops` runs
/// out (the outcome stays `Continue`: an apology).
pub(super) async fn run_turn(
    shared: &Shared,
    ask: Ask,
    mut session: Session,
    cancel: &AtomicBool,
) -> Result<Turn, AgentError> {
    let t0 = Instant::now();
    if ask.refused() {
        return Ok(Turn::cancelled(Handled::Llm, Timings::default()));
    }
    let (registry, toolset) = snapshot(shared).await?;
    let tools_json = registry.openai_tools();
    let fingerprint = registry.fingerprint();
    // sentences reach every tool; the model, only those it is shown (`toolset`)
    let every_tool = registry.toolset();
    let request = Request {
        text: &ask.text,
        room: ask.room.as_deref(),
        heard_as: ask.heard_as.as_deref(),
        forced: ask.force_tool.is_some(),
        intents: shared.cfg.intents,
    };
    // the plan made before the turn, while it holds; else made now
    let before = ask.planned.as_ref();
    let planned =
        match before.and_then(|p| p.plan_for(&ask.session, &session, &fingerprint, &request)) {
            Some(planned) => {
                tracing::info!("the plan made at the pause holds");
                planned
            }
            None => {
                if before.is_some() {
                    tracing::info!(
                        "planned again: the request, session or tools changed since the pause"
                    );
                }
                plan(&request, &session, &registry, &every_tool)
            }
        };
    // the session's question is answered now, or no longer waits
    let asked = session.pending.take();
    if asked.is_some() && !matches!(planned, Plan::Answer { .. }) {
        tracing::info!("not an answer: the held calls are dropped");
        // dropped for good, also when this turn keeps nothing
        if ask.hold.is_none() {
            shared.change_session(&ask.session, Change::QuestionDropped);
        }
    }
    match planned {
        Plan::Unasked => return unasked_turn(shared, &registry, &ask, session).await,
        Plan::Answer { pending, answer } => {
            return answer_turn(shared, &registry, &ask, session, pending, answer).await
        }
        Plan::Recall(recall) => {
            return recall_turn(shared, &registry, &every_tool, &ask, session, recall).await
        }
        Plan::Intent { calls, how } => {
            return act(shared, &registry, &ask, session, &calls, how, Confirmed::No).await
        }
        Plan::Unsure { calls, question } => {
            let near = ask.heard_as.as_deref().unwrap_or_default();
            tracing::info!(heard = %ask.text, near, "heard unsurely: the near request is asked about");
            let unsure = Confirmed::Unsure(question);
            return act(shared, &registry, &ask, session, &calls, "heard as", unsure).await;
        }
        Plan::Model => {}
    }
    // the request as the model reads it (and what a call may be about)
    let model_request = request_in_room(&ask, &tools_json);
    let ctx = TurnCtx {
        check: reply_check(shared, &registry, &fingerprint),
        context: hooks::grounding(&model_request, &session.history),
        earlier: Earlier::of(&session.history),
        shared,
        ask: &ask,
        cancel,
        t0,
        registry,
        toolset,
        tools_json,
        fingerprint,
    };
    let mut st = TurnState::new(&ask, model_request, session);
    let mut outcome = HopOutcome::Continue;
    for n in 0..shared.cfg.max_hops {
        if n > 0 && t0.elapsed() >= shared.cfg.turn_budget {
            tracing::info!(
                hops = n,
                budget_ms = shared.cfg.turn_budget.as_millis() as u64,
                "the turn ran out of time: it answers with what it has"
            );
            if let Some(last) = st.hops.last_mut() {
                last.hook
                    .get_or_insert_with(|| "out of time: answered with what it has".into());
            }
            outcome = HopOutcome::Reply(st.answer_so_far());
            break;
        }
        outcome = hop(&ctx, &mut st, n).await?;
        if !matches!(outcome, HopOutcome::Continue) {
            break;
        }
    }
    // a speculative turn is kept only once it stands
    if !ask.go_ahead().await {
        outcome = HopOutcome::Stop(Stop::Cancelled);
    }
    Ok(st.finish(&ctx, outcome))
}

/// One hop: choose the tool choice, render, generate, parse and validate, then check the
/// reply or run the calls, and decide.
async fn hop(ctx: &TurnCtx<'_>, st: &mut TurnState, n: usize) -> Result<HopOutcome, AgentError> {
    if ctx.cancelled() {
        return Ok(HopOutcome::Stop(Stop::Cancelled));
    }
    let preset = &ctx.shared.cfg.preset;
    let (choice, in_follow_up) = st.next.take(preset, n, !st.last_outcomes.is_empty());
    let grammar = ctx.grammar(&choice, st.checking())?;
    let prompt = st.render(ctx, &choice).await?;
    // decoding is greedy: a retry asked exactly as the flagged hop would write it again
    let asked = hooks::hop_key(&prompt.text, &grammar);
    if let Some(why) = st.unfounded.filter(|_| st.retrying_from == Some(asked)) {
        tracing::info!("the retry would be the flagged hop again: given up");
        if let Some(last) = st.hops.last_mut() {
            last.hook = Some(format!(
                "{}: the retry would be the same: nothing was done",
                why.label()
            ));
        }
        return Ok(HopOutcome::Stop(Stop::GaveUp(hooks::give_up_words(why))));
    }
    st.asked = Some(asked);
    let span = tracing::info_span!("hop", hop = n, choice = %choice_label(&choice));
    async {
        // what the model says in words is checked: while no call has run in the turn, for
        // claims; after calls, against what their results carry
        let checking = st.checking();
        let carried = (!checking).then(|| st.carried.clone());
        let guard = ctx.guard(carried.as_ref());
        let speak = ctx.ask.speak.as_ref();
        let generated = generate(
            ctx.shared,
            ctx.chat_prompt(prompt),
            grammar,
            &ctx.toolset,
            speak,
            &st.last_outcomes,
            &guard,
        )
        .await;
        let g = match generated {
            Ok(g) => g,
            Err(AgentError::Engine(e)) if e.is_unavailable() => {
                return Ok(st.without_model(&e, choice_label(&choice)));
            }
            Err(e) => return Err(e),
        };
        st.timings.prompt_eval += g.stats.prompt_eval_ms;
        st.timings.generation += g.stats.generation_ms;
        let t = &g.parsed.telemetry;
        tracing::info!(
            parse_mode = %t.parse_mode,
            fallback_used = t.fallback_used,
            candidate_count = t.candidate_count,
            schema_validation = %t.schema_validation,
            calls = g.parsed.calls.len(),
            "hop parsed"
        );
        let mut report = HopReport {
            raw: g.raw.clone(),
            calls: Vec::new(),
            telemetry: g.parsed.telemetry.clone(),
            rejected: g.parsed.rejected.clone(),
            tool_choice: choice_label(&choice),
            hook: None,
            stats: g.stats.clone(),
        };
        let outcome = if g.stats.stop == Some(StopReason::Cancelled) || ctx.cancelled() {
            HopOutcome::Stop(Stop::Cancelled)
        } else if let Some(done) =
            hooks::follow_up_done(in_follow_up, &g.parsed.calls, &st.seen_calls)
        {
            st.apply(ctx, done, &mut report, &g.raw)
        } else if g.parsed.calls.is_empty() {
            st.words(ctx, n, &g, &guard, &mut report)
        } else {
            st.calls(ctx, n, &g, checking, &mut report).await?
        };
        st.hops.push(report);
        Ok(outcome)
    }
    .instrument(span)
    .await
}

impl TurnState {
    /// `request`: the request as the model reads it ([`request_in_room`]).
    fn new(ask: &Ask, request: String, session: Session) -> Self {
        let Session {
            history,
            before,
            cutting,
            pending: _,
            done,
            version: _,
        } = session;
        let mut carried = Carried::default();
        carried.said(&ask.text);
        TurnState {
            history,
            before,
            cutting,
            pending: None,
            done,
            msgs: vec![ChatMessage::user(request)],
            hops: Vec::new(),
            timings: Timings::default(),
            next: NextHop {
                tool: ask.force_tool.clone(),
                ..NextHop::default()
            },
            recovery: Recovery::None,
            unfounded: None,
            seen_calls: Vec::new(),
            ran_tools: Vec::new(),
            reasked: false,
            nudged: false,
            last_outcomes: Vec::new(),
            carried,
            unsaid: Vec::new(),
            confirmed: Vec::new(),
            unkept: Vec::new(),
            asked: None,
            retrying_from: None,
        }
    }

    /// No call has run in the turn: what the model says in words is checked.
    fn checking(&self) -> bool {
        self.ran_tools.is_empty() && self.confirmed.is_empty()
    }

    /// The prompt for the next hop, under `choice`: a recovery retry asked fresh has no
    /// history (what misled the model); any other hop has it (what "it" and "too" refer
    /// to). A fresh retry held to words before any call has run is shown no tools, under the
    /// words prompt ([`Frame::Words`]): it can call nothing, and nothing has been done.
    async fn render(
        &mut self,
        ctx: &TurnCtx<'_>,
        choice: &ToolChoice,
    ) -> Result<Rendered, AgentError> {
        let fresh = self.recovery == Recovery::Fresh;
        let frame = if fresh && *choice == ToolChoice::Reply && self.checking() {
            Frame::Words
        } else {
            Frame::Tools(&ctx.tools_json)
        };
        let mut none = Vec::new();
        let history = if fresh { &mut none } else { &mut self.history };
        render_fitting(ctx.shared, frame, history, &self.msgs).await
    }

    /// A hop that called nothing: the hooks for a model that failed to call or to answer,
    /// else its words are the answer.
    fn words(
        &mut self,
        ctx: &TurnCtx<'_>,
        n: usize,
        g: &Generated,
        guard: &Guard<'_>,
        report: &mut HopReport,
    ) -> HopOutcome {
        let said = speakable(&g.parsed.reply);
        let outcomes = &self.last_outcomes;
        let known = |name: &str| ctx.toolset.contains(name);
        let hook = hooks::invalid_arguments(
            &g.parsed.rejected,
            known,
            self.reasked,
            &self.ran_tools,
            outcomes,
        )
        .or_else(|| hooks::echoed(n, &g.raw, &said, outcomes))
        .or_else(|| {
            let why = hooks::unspeakable(&g.raw, &g.parsed.rejected, &ctx.toolset);
            hooks::no_answer(&said, guard.before_calls(), why)
        })
        .or_else(|| hooks::unfounded(guard, g.held, &said));
        if let Some(hook) = hook {
            return self.apply(ctx, hook, report, &g.raw);
        }
        self.msgs
            .push(ChatMessage::assistant(g.parsed.reply.trim().to_string()));
        HopOutcome::Reply(Reply::Model {
            text: said,
            streamed: g.spoke && g.held.is_none(),
        })
    }

    /// A hop with valid calls: grounded and new, they run (rules 3 and 6/7), all but those
    /// with a value nobody said; all confirmed, they are the answer, unless the request
    /// asked for more.
    async fn calls(
        &mut self,
        ctx: &TurnCtx<'_>,
        n: usize,
        g: &Generated,
        checking: bool,
        report: &mut HopReport,
    ) -> Result<HopOutcome, AgentError> {
        // a retry asked without the history must be about the request itself; a tool the
        // caller named is the caller's choice
        let about = if self.recovery == Recovery::Fresh {
            &ctx.ask.text
        } else {
            &ctx.context
        };
        let forced = ctx.ask.force_tool.is_some();
        let dropped = hooks::unsupported_calls(&ctx.registry, &g.parsed.calls, about, forced);
        let question = hooks::ask_back(
            checking && !forced,
            &ctx.registry,
            &ctx.check,
            &g.parsed.calls,
            &dropped,
            about,
        );
        if let Some(question) = question {
            let pending = super::confirm::asking(g.parsed.calls.clone(), question);
            return Ok(self.end_asking(ctx, pending, Vec::new(), report));
        }
        let which = super::which::ask_which(
            checking && !forced,
            (&ctx.registry, &ctx.toolset, &ctx.check),
            &g.parsed.calls,
            &dropped,
            about,
        );
        if let Some((question, choices)) = which {
            let pending = super::confirm::asking_which(question, choices);
            return Ok(self.end_asking(ctx, pending, Vec::new(), report));
        }
        let calls: Vec<ToolCall> = g
            .parsed
            .calls
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, c)| c.clone())
            .collect();
        let hook = hooks::ungrounded(checking && !forced, &ctx.check, &g.parsed.calls, about)
            .or_else(|| hooks::unsupported_value(calls.is_empty(), checking))
            .or_else(|| hooks::repeated_call(&calls, &self.seen_calls, &self.last_outcomes));
        if let Some(hook) = hook {
            return Ok(self.apply(ctx, hook, report, &g.raw));
        }
        if !dropped.is_empty() {
            self.unfounded.get_or_insert(Unfounded::Unasked);
            report.hook = Some(format!(
                "{}: {} of {} calls not run",
                Unfounded::Unasked.label(),
                dropped.len(),
                g.parsed.calls.len()
            ));
        }
        self.seen_calls.extend(calls.iter().map(hooks::call_key));
        self.ran_tools
            .extend(calls.iter().map(|c| c.name().to_string()));
        if ctx.cancelled() || !ctx.ask.go_ahead().await {
            return Ok(HopOutcome::Stop(Stop::Cancelled));
        }
        let (calls, held) = super::confirm::split(&ctx.registry, &calls, ctx.ask.confirmed);
        if !held.is_empty() {
            return self.ask_first(ctx, calls, held, report).await;
        }
        let room = ctx.ask.room.as_deref();
        let outcomes = run_calls(ctx.shared, &calls, room, &mut self.timings, ctx.t0).await?;
        report.calls = outcomes.iter().map(CallReport::from).collect();
        for o in outcomes.iter().filter(|o| o.status != ToolStatus::Error) {
            self.carried.result(&o.result);
            self.carried.said(&o.arguments.to_string());
        }
        self.round_trip(ctx, g, &calls, &outcomes);
        // spoken confirmations: every call succeeded and has one → no second hop
        let Some(said) = confirmations(&ctx.registry, &calls, &outcomes) else {
            self.unsaid.extend(outcomes.iter().cloned());
            self.last_outcomes = outcomes;
            return Ok(HopOutcome::Continue);
        };
        let text = speakable(&said.join(" "));
        // spoken now: a follow-up hop may still run
        if let Some(tx) = &ctx.ask.speak {
            send_sentences(tx, &text);
        }
        self.confirmed.push(text);
        let hop_left = n + 1 < ctx.shared.cfg.max_hops;
        let made = self.seen_calls.len();
        match hooks::follow_up(&ctx.ask.text, made, hop_left, ctx.has_grammar()) {
            Some(rest) => {
                tracing::info!(
                    clauses = super::words::clauses(&ctx.ask.text),
                    calls = made,
                    "the request asked for more: a follow-up hop"
                );
                self.msgs.push(ChatMessage::user(rest));
                self.next.follow_up = true;
                self.last_outcomes = outcomes;
                Ok(HopOutcome::Continue)
            }
            None => Ok(HopOutcome::Reply(Reply::Confirmed)),
        }
    }

    /// A hop with calls a tool's `confirm` holds: the others run, and the turn ends with
    /// their confirmations and the question; the session keeps the held calls for a yes.
    async fn ask_first(
        &mut self,
        ctx: &TurnCtx<'_>,
        now: Vec<ToolCall>,
        held: Vec<(ToolCall, String)>,
        report: &mut HopReport,
    ) -> Result<HopOutcome, AgentError> {
        let room = ctx.ask.room.as_deref();
        let outcomes = run_calls(ctx.shared, &now, room, &mut self.timings, ctx.t0).await?;
        report.calls = outcomes.iter().map(CallReport::from).collect();
        let said = confirmations(&ctx.registry, &now, &outcomes).unwrap_or_default();
        Ok(self.end_asking(ctx, super::confirm::hold(held), said, report))
    }

    /// The turn ends with `said` and the question `pending` asks; the session keeps its
    /// calls for a yes (a tool's `confirm`, or a call hearth asks about rather than refuse:
    /// [`hooks::ask_back`]).
    fn end_asking(
        &mut self,
        ctx: &TurnCtx<'_>,
        pending: super::confirm::Pending,
        mut said: Vec<String>,
        report: &mut HopReport,
    ) -> HopOutcome {
        report.hook = Some(pending.hook());
        said.push(pending.question.clone());
        let text = speakable(&said.join(" "));
        if let Some(tx) = &ctx.ask.speak {
            send_sentences(tx, &text);
        }
        self.confirmed.push(text);
        self.pending = Some(pending);
        HopOutcome::Reply(Reply::Confirmed)
    }

    /// The results go back: the template's tool role with ids when it has one and the call
    /// was native markup; otherwise the synthetic user message.
    fn round_trip(
        &mut self,
        ctx: &TurnCtx<'_>,
        g: &Generated,
        calls: &[ToolCall],
        outcomes: &[ToolOutcome],
    ) {
        let parsed = &g.parsed;
        let structured =
            ctx.shared.cfg.preset.tool_role && ctx.shared.caps.tool_role && parsed.native;
        if structured {
            self.msgs.push(ChatMessage::assistant_calls(
                parsed.reply.trim().to_string(),
                calls.iter().map(|c| {
                    (
                        c.id().to_string(),
                        c.name().to_string(),
                        c.arguments().clone(),
                    )
                }),
            ));
            for o in outcomes {
                self.msgs.push(ChatMessage::tool(
                    o.id.clone(),
                    o.name.clone(),
                    o.result.clone(),
                ));
            }
        } else {
            // what the model wrote, less any call that did not run (then the calls that
            // ran, in its wire format, else as bare JSON, one a line)
            let wrote = if calls.len() == parsed.calls.len() {
                ChatMessage::assistant(g.raw.trim().to_string())
            } else {
                let bare = GrammarShape {
                    prefix: String::new(),
                    suffix: String::new(),
                    separator: "\n".into(),
                    arguments_key: "arguments".into(),
                };
                let shape = ctx.shared.cfg.preset.grammar.as_ref().unwrap_or(&bare);
                let ran: Vec<CallReport> = outcomes.iter().map(CallReport::from).collect();
                CallWire::Markup(shape).message(&ran)
            };
            self.msgs.push(wrote);
            self.msgs
                .push(ChatMessage::user(synthetic_results(outcomes)));
        }
    }

    /// Apply a hook's decision to this hop (its `report` names the hook; `raw` is what the
    /// model wrote).
    fn apply(
        &mut self,
        ctx: &TurnCtx<'_>,
        hook: Hook,
        report: &mut HopReport,
        raw: &str,
    ) -> HopOutcome {
        match hook {
            Hook::Recover(why) => self.recover(why, ctx.has_grammar(), report),
            Hook::FromResults(why) => {
                self.unfounded.get_or_insert(why);
                report.hook = Some(format!("{}: answered from the results", why.label()));
                HopOutcome::Reply(self.answer_so_far())
            }
            Hook::Nudge { what, hint } => self.nudge(&what, hint, raw, report),
            Hook::ReAsk { tool, message } => {
                self.reasked = true;
                report.hook = Some(format!("invalid arguments for {tool}: re-asked once"));
                self.flagged(ChatMessage::assistant(raw.trim().to_string()));
                self.flagged(ChatMessage::user(message));
                if ctx.has_grammar() {
                    self.next.tool = Some(tool);
                }
                HopOutcome::Continue
            }
            Hook::Apologize { hook } => {
                report.hook = Some(hook);
                HopOutcome::Reply(Reply::Said(APOLOGY.to_string()))
            }
            Hook::Done { hook } => {
                report.hook = Some(hook);
                HopOutcome::Reply(Reply::Confirmed)
            }
        }
    }

    /// The model's server failed this hop (down, slow, or garbage: the engine's error names
    /// it and the fix): the turn answers with what it has, else says the model cannot be
    /// reached. Logged here, once per turn.
    fn without_model(&mut self, e: &crate::llm::EngineError, tool_choice: String) -> HopOutcome {
        tracing::warn!(error = %e, "the model did not answer: the turn ends without it");
        self.hops.push(HopReport {
            raw: String::new(),
            calls: Vec::new(),
            telemetry: crate::toolcall::Telemetry {
                parse_mode: "none".into(),
                fallback_used: false,
                candidate_count: 0,
                schema_validation: "none".into(),
            },
            rejected: Vec::new(),
            tool_choice,
            hook: Some(format!("model unavailable: {e}")),
            stats: crate::llm::GenStats::default(),
        });
        if self.checking() {
            HopOutcome::Stop(Stop::GaveUp(MODEL_UNAVAILABLE))
        } else {
            HopOutcome::Reply(self.answer_so_far())
        }
    }

    /// What the turn can say without another hop: words from the results no confirmation
    /// spoke, else the confirmations already spoken, else an apology.
    fn answer_so_far(&self) -> Reply {
        if !self.unsaid.is_empty() {
            Reply::Said(hooks::reply_from_results(&self.unsaid))
        } else if !self.confirmed.is_empty() {
            Reply::Confirmed
        } else {
            Reply::Said(APOLOGY.to_string())
        }
    }

    /// A message of a flagged hop (what it wrote, the hint after it): the model sees it in
    /// this turn, the session never keeps it.
    fn flagged(&mut self, message: ChatMessage) {
        self.unkept.push(self.msgs.len());
        self.msgs.push(message);
    }

    /// A flagged hop: ask again (its messages dropped), or give up saying so.
    fn recover(&mut self, why: Unfounded, has_grammar: bool, report: &mut HopReport) -> HopOutcome {
        self.unfounded.get_or_insert(why);
        let can = hooks::Retry {
            has_grammar,
            has_history: !self.history.is_empty(),
        };
        let (step, hook) = self.recovery.advance(why, can);
        report.hook = Some(hook);
        match step {
            Step::Retry(choice) => {
                self.retrying_from = self.asked;
                self.next.retry = Some(choice);
                self.msgs.truncate(1);
                self.unkept.retain(|&i| i < 1);
                HopOutcome::Continue
            }
            Step::GiveUp(words) => HopOutcome::Stop(Stop::GaveUp(words)),
        }
    }

    /// Nudge the model to answer (with `hint` after its `raw` output, if any), or, nudged
    /// before, end the turn with words from the results.
    fn nudge(
        &mut self,
        what: &str,
        hint: Option<String>,
        raw: &str,
        report: &mut HopReport,
    ) -> HopOutcome {
        match hooks::nudge(self.nudged, what, &self.last_outcomes) {
            Nudged::Answer { hook } => {
                self.nudged = true;
                self.next.reply = true;
                report.hook = Some(hook);
                if let Some(hint) = hint {
                    self.flagged(ChatMessage::assistant(raw.trim().to_string()));
                    self.flagged(ChatMessage::user(hint));
                }
                HopOutcome::Continue
            }
            Nudged::Stop { hook, words } => {
                report.hook = Some(hook);
                HopOutcome::Reply(Reply::Said(words))
            }
        }
    }

    /// End the turn after its last hop's `outcome` (`Continue`: the hops ran out): speak
    /// what was not spoken yet, keep the turn in its session unless it stopped, report it.
    fn finish(mut self, ctx: &TurnCtx<'_>, outcome: HopOutcome) -> Turn {
        let (reply, streamed, cancelled, gave_up) = match outcome {
            HopOutcome::Continue => {
                tracing::warn!(hops = self.hops.len(), "hop limit reached");
                (APOLOGY.to_string(), false, false, false)
            }
            HopOutcome::Reply(Reply::Model { text, streamed }) => (text, streamed, false, false),
            HopOutcome::Reply(Reply::Said(words)) => (words, false, false, false),
            HopOutcome::Reply(Reply::Confirmed) => (String::new(), true, false, false),
            HopOutcome::Stop(Stop::Cancelled) => (String::new(), false, true, false),
            HopOutcome::Stop(Stop::GaveUp(words)) => (words.to_string(), false, false, true),
        };
        if !self.confirmed.is_empty() && !cancelled {
            self.msgs
                .push(ChatMessage::assistant(self.confirmed.join(" ")));
        }
        if let (Some(tx), false, false) = (&ctx.ask.speak, cancelled, streamed) {
            // Words that did not come from the model's stream: words from the results, an
            // apology.
            send_sentences(tx, &reply);
        }
        // the confirmations spoken along the way come first
        let reply = match (cancelled, self.confirmed.is_empty(), reply.is_empty()) {
            (false, false, true) => self.confirmed.join(" "),
            (false, false, false) => format!("{} {reply}", self.confirmed.join(" ")),
            _ => reply,
        };
        let calls: Vec<CallReport> = self
            .hops
            .iter()
            .flat_map(|h| h.calls.iter().cloned())
            .collect();
        // a turn that gave up, or answered nothing, is not kept: it would teach the next
        if !cancelled && !gave_up && history::answered(&reply, &calls) {
            let session = Session {
                history: self.history,
                before: self.before,
                cutting: self.cutting,
                pending: self.pending,
                done: self.done,
                // the store gives it its version when it is kept
                version: 0,
            };
            let unkept = &self.unkept;
            let msgs = self
                .msgs
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !unkept.contains(i))
                .map(|(_, m)| m)
                .collect();
            remember_turn(ctx.shared, &ctx.ask.session, session, msgs, &calls, &reply);
        }
        if let Some(why) = self.unfounded {
            let count = ctx.shared.unfounded.fetch_add(1, Ordering::Relaxed) + 1;
            // a warning in the journal only when the turn gave up: a catch the turn went on
            // from is the check doing its work
            if gave_up {
                tracing::warn!(
                    why = why.label(),
                    gave_up,
                    count,
                    "a reply in words was not founded on a call"
                );
            } else {
                tracing::info!(
                    why = why.label(),
                    gave_up,
                    count,
                    "a reply in words was not founded on a call"
                );
            }
        }
        self.timings.total = ctx.t0.elapsed().as_secs_f64() * 1e3;
        Turn {
            path: Handled::Llm,
            reply,
            hops: self.hops,
            timings_ms: self.timings,
            cancelled,
            unfounded: self.unfounded.map(|u| u.label().to_string()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Value {
        serde_json::json!([
            {"type": "function", "function": {"name": "set_light", "parameters": {
                "type": "object",
                "properties": {
                    "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom"]},
                    "on": {"type": "boolean"}
                }
            }}},
            {"type": "function", "function": {"name": "get_time", "parameters": {
                "type": "object", "properties": {}
            }}}
        ])
    }

    fn said(text: &str, room: Option<&str>) -> Ask {
        let mut ask = Ask::new("s", text);
        ask.room = room.map(str::to_string);
        ask
    }

    #[test]
    fn a_request_naming_no_room_carries_the_room_it_was_said_in() {
        let t = tools();
        let in_room = |text: &str, room| request_in_room(&said(text, room), &t);
        assert_eq!(
            in_room("turn on the light", Some("bedroom")),
            "turn on the light (said in the bedroom)"
        );
        // a room named wins, word for word ("living room", not "room")
        assert_eq!(
            in_room("turn on the kitchen light", Some("bedroom")),
            "turn on the kitchen light"
        );
        assert_eq!(
            in_room("is the Living Room light on?", Some("bedroom")),
            "is the Living Room light on?"
        );
        assert_eq!(
            in_room("is the light in this room on?", Some("bedroom")),
            "is the light in this room on? (said in the bedroom)"
        );
        // not said to a room, or no tool has a room
        assert_eq!(in_room("turn on the light", None), "turn on the light");
        assert_eq!(in_room("turn on the light", Some(" ")), "turn on the light");
        let no_rooms = serde_json::json!([tools()[1].clone()]);
        assert_eq!(
            request_in_room(&said("what time is it", Some("bedroom")), &no_rooms),
            "what time is it"
        );
    }
}
