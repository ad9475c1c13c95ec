//! A scripted engine: speaks [`EngineMsg`] like the llama.cpp engine but replays fixed
//! outputs, in order, one per generation. The hop loop's unit tests drive the agent with it
//! (fallback path, id round trip, loop and echo hooks, cancellation) in addition to the
//! real-model tests. It records every request so tests can assert on prompts and grammars.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::engine::{
    CancelWatermark, EngineError, EngineInfo, EngineMsg, GenEvent, GenStats, StopReason,
};

/// What a scripted generation was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub prompt: String,
    pub grammar: Option<String>,
    /// The lazy grammar's text, when the hop had one (the scripted outputs never follow it).
    pub lazy: Option<String>,
}

/// Arguments of the scripted engine.
#[derive(Debug, Clone)]
pub struct Script {
    /// One output per generation, in order; when they run out, generation yields "".
    pub outputs: Vec<String>,
    /// Characters per streamed chunk.
    pub chunk_chars: usize,
    /// Pause between chunks (lets tests cancel mid-generation).
    pub chunk_delay: Duration,
    /// The chat template the engine reports (the GGUF's, in the real engine).
    pub chat_template: Option<String>,
    pub n_ctx: usize,
    /// Prompts it says it keeps cached side by side (`EngineInfo::sequences`): 4, as the
    /// model in process; 1, as a remote server.
    pub sequences: usize,
    /// Every request, for assertions.
    pub recorded: Arc<Mutex<Vec<Recorded>>>,
    /// Every prompt prefilled ([`EngineMsg::Prefill`]), in order.
    pub prefilled: Arc<Mutex<Vec<String>>>,
    /// Every grammar compiled ahead ([`EngineMsg::Compile`]), in order.
    pub compiled: Arc<Mutex<Vec<String>>>,
    /// Start the outputs again when they run out (a soak test's endless turns).
    pub repeat: bool,
    /// Record requests and prefills (off for a soak test: the records would grow).
    pub record: bool,
    /// How long a prefill takes; one cancelled meanwhile ends `Cancelled`, as the real
    /// engine's does between prompt chunks.
    pub prefill_delay: Duration,
}

impl Script {
    pub fn new<S: Into<String>>(outputs: impl IntoIterator<Item = S>) -> Self {
        Script {
            outputs: outputs.into_iter().map(Into::into).collect(),
            chunk_chars: 3,
            chunk_delay: Duration::ZERO,
            chat_template: None,
            n_ctx: 4096,
            sequences: 4,
            recorded: Arc::new(Mutex::new(Vec::new())),
            prefilled: Arc::new(Mutex::new(Vec::new())),
            compiled: Arc::new(Mutex::new(Vec::new())),
            repeat: false,
            record: true,
            prefill_delay: Duration::ZERO,
        }
    }
}

pub struct ScriptState {
    outputs: VecDeque<String>,
    script: Script,
    cancel: CancelWatermark,
}

/// The scripted engine actor.
pub struct ScriptedEngine;

impl Actor for ScriptedEngine {
    type Msg = EngineMsg;
    type State = ScriptState;
    type Arguments = Script;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        script: Script,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ScriptState {
            outputs: script.outputs.iter().cloned().collect(),
            script,
            cancel: CancelWatermark::new(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            EngineMsg::Generate(req) => {
                let id = state.cancel.issue();
                if state.script.record {
                    if let Ok(mut r) = state.script.recorded.lock() {
                        r.push(Recorded {
                            prompt: req.prompt.clone(),
                            grammar: req.grammar.as_deref().map(str::to_string),
                            lazy: req.lazy.as_ref().map(|l| l.grammar.to_string()),
                        });
                    }
                }
                if state.outputs.is_empty() && state.script.repeat {
                    state.outputs = state.script.outputs.iter().cloned().collect();
                }
                let text = state.outputs.pop_front().unwrap_or_default();
                let cancel = state.cancel.clone();
                let chunk = state.script.chunk_chars.max(1);
                let delay = state.script.chunk_delay;
                let prompt_tokens = req.prompt.len() / 4;
                tokio::spawn(async move {
                    let chars: Vec<char> = text.chars().collect();
                    let mut stats = GenStats {
                        prompt_tokens,
                        evaluated_tokens: prompt_tokens,
                        grammar: req.grammar.is_some(),
                        ..GenStats::default()
                    };
                    let mut reason = StopReason::EndOfTurn;
                    for piece in chars.chunks(chunk) {
                        if cancel.is_cancelled(id) {
                            reason = StopReason::Cancelled;
                            break;
                        }
                        if req.halt.load(std::sync::atomic::Ordering::Relaxed) {
                            reason = StopReason::Halted;
                            break;
                        }
                        let _ = req.events.send(GenEvent::Text(piece.iter().collect()));
                        stats.generated_tokens += 1;
                        if !delay.is_zero() {
                            tokio::time::sleep(delay).await;
                        }
                    }
                    stats.stop = Some(reason);
                    let _ = req.events.send(GenEvent::Done(Ok(stats)));
                });
            }
            EngineMsg::Prefill(prompt, reply) => {
                let id = state.cancel.issue();
                let prompt_tokens = prompt.len() / 4;
                if state.script.record {
                    if let Ok(mut r) = state.script.prefilled.lock() {
                        r.push(prompt);
                    }
                }
                let (cancel, delay) = (state.cancel.clone(), state.script.prefill_delay);
                tokio::spawn(async move {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    let stop = cancel.is_cancelled(id).then_some(StopReason::Cancelled);
                    let _ = reply.send(Ok(GenStats {
                        prompt_tokens,
                        evaluated_tokens: prompt_tokens,
                        stop,
                        ..GenStats::default()
                    }));
                });
            }
            EngineMsg::Cancel => state.cancel.cancel_all(),
            EngineMsg::Compile(grammar) => {
                if let Ok(mut c) = state.script.compiled.lock() {
                    c.push(grammar.to_string());
                }
            }
            EngineMsg::CountTokens(text, reply) => {
                let _ = reply.send(text.len() / 4);
            }
            EngineMsg::Info(reply) => {
                let _ = reply.send(EngineInfo {
                    chat_template: state.script.chat_template.clone(),
                    bos_token: String::new(),
                    eos_token: "<|im_end|>".into(),
                    n_ctx: state.script.n_ctx,
                    model: "scripted".into(),
                    sequences: state.script.sequences,
                });
            }
        }
        Ok(())
    }
}

impl ScriptedEngine {
    /// Spawn a scripted engine.
    pub async fn spawn(script: Script) -> Result<ActorRef<EngineMsg>, EngineError> {
        Actor::spawn(None, ScriptedEngine, script)
            .await
            .map(|(a, _)| a)
            .map_err(|_| EngineError::Gone)
    }
}
