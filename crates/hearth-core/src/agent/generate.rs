//! One hop's generation: the engine's output streamed into the parser chain (rule 1: the
//! parser sees the raw output), settled reply text sent on sentence by sentence, each
//! sentence checked first: while no call has run in the turn, for claims; after calls, for
//! what the results do not carry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::check::Earlier;
use super::check::{ReplyCheck, Unfounded};
use super::messages::AgentError;
use super::reading::Carried;
use super::reply::echo_sentence;
use super::shared::Shared;
use crate::llm::{
    ChatPrompt, EngineError, EngineMsg, GenEvent, GenRequest, GenStats, LazyGrammar, StopReason,
    REPLY_LARK,
};
use crate::speech::{SentenceSplitter, Speakable};
use crate::toolcall::{ParseOutput, StreamEvent, ToolSet};
use crate::tools::ToolOutcome;

/// What a hop's output is held to: a grammar for all of it, or one for the call it may
/// begin ([`LazyGrammar`]), or neither.
#[derive(Debug, Clone, Default)]
pub(super) struct Grammar {
    pub(super) whole: Option<Arc<str>>,
    pub(super) lazy: Option<Arc<LazyGrammar>>,
}

/// What one hop generated.
pub(super) struct Generated {
    /// The model's raw output.
    pub(super) raw: String,
    pub(super) parsed: ParseOutput,
    pub(super) stats: GenStats,
    /// Whether any of it was sent to `speak`.
    pub(super) spoke: bool,
    /// The first sentence the guard held back, and why (it and all after it were not
    /// spoken).
    pub(super) held: Option<Unfounded>,
}

/// What a hop's streamed sentences are checked against: before any call of the turn, the
/// claims ([`ReplyCheck::check`]); after calls, what the results carry
/// ([`ReplyCheck::after_calls`]).
pub(super) struct Guard<'a> {
    pub(super) check: &'a ReplyCheck,
    pub(super) request: &'a str,
    pub(super) earlier: &'a Earlier,
    /// What the turn's results carry, once a call has run; `None` while none has.
    pub(super) carried: Option<&'a Carried>,
}

impl Guard<'_> {
    pub(super) fn check(&self, sentence: &str) -> Option<Unfounded> {
        match self.carried {
            None => self.check.check(sentence, self.request, self.earlier),
            Some(carried) => self
                .check
                .after_calls(sentence, self.request, self.earlier, carried),
        }
    }

    /// No call has run in the turn: a flagged sentence is recovered from by asking again.
    pub(super) fn before_calls(&self) -> bool {
        self.carried.is_none()
    }
}

/// Generate one hop, streaming the output through the parser; settled reply text goes out
/// sentence by sentence on `speak`, unless it echoes a tool payload or `guard` flags it
/// (then it and everything after it are held back).
pub(super) async fn generate(
    shared: &Shared,
    (prompt, chat): (String, Arc<ChatPrompt>),
    grammar: Grammar,
    tools: &ToolSet,
    speak: Option<&mpsc::UnboundedSender<Speakable>>,
    outcomes: &[ToolOutcome],
    guard: &Guard<'_>,
) -> Result<Generated, AgentError> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    // held to words, a hop whose words were held back has nothing more to give
    let words_only = grammar.whole.as_deref() == Some(REPLY_LARK);
    let halt = Arc::new(AtomicBool::new(false));
    shared
        .engine
        .cast(EngineMsg::Generate(GenRequest {
            prompt,
            chat: Some(chat),
            grammar: grammar.whole,
            lazy: grammar.lazy,
            max_tokens: shared.cfg.max_tokens,
            stop: shared.cfg.preset.stop.clone(),
            events: tx,
            halt: halt.clone(),
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
        match guard.check(s.as_str()) {
            Some(why) => {
                tracing::warn!(why = why.label(), "sentence held back");
                tracing::warn!(target: crate::logs::TRANSCRIPT, sentence = %s.as_str(), "the sentence held back");
                *held = Some(why);
                if words_only {
                    halt.store(true, Ordering::Relaxed);
                }
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
                // held to words before any call, a sentence that has begun to talk of tools
                // will be held back however it ends: stop writing it (a run-on list of the
                // tools took 4.2 s to its 128th token)
                let unfinished_talk = words_only
                    && held.is_none()
                    && guard.before_calls()
                    && guard.check.talks_of_tools(&raw);
                if unfinished_talk {
                    tracing::warn!(
                        why = Unfounded::ToolTalk.label(),
                        "sentence held back before its end"
                    );
                    held = Some(Unfounded::ToolTalk);
                    halt.store(true, Ordering::Relaxed);
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
