//! The llama.cpp engine actor (feature `llm`): llama-cpp-2 in-process.
//!
//! The model and its context live on one dedicated OS thread (llama.cpp's work is blocking
//! and its context is not `Send`); the actor in front of it only queues jobs and raises a
//! cancel flag, so a `Cancel` message is handled at once even mid-generation. The worker
//! checks the flag before every decode: between generated tokens and between prompt chunks
//! of [`LlamaConfig::prompt_chunk`] tokens.
//!
//! **Prefix cache.** The worker remembers which tokens its KV cache holds, in
//! [`SEQUENCES`] sequences of one unified cache. A new prompt is compared token by token
//! with each; only the tokens after the longest common prefix are evaluated, so the system
//! prompt, the tool list and the earlier turns are not evaluated again. A prompt that
//! continues what a sequence holds is evaluated there; one that departs from it part-way (a
//! retry asked without the conversation, a history cut back by the warm-up) goes to the
//! least recently used sequence, from a copy of the shared prefix (cells shared, nothing
//! evaluated). A turn's first hop always continues the conversation, and a retry, a cut
//! history and the agent's words prompt each have a sequence of their own to go on in, so
//! the conversation is not the least recently used when a retry or a cut comes, and it is
//! still there for the prompt after it.
//!
//! **Grammar.** A request's Lark grammar is compiled by llguidance (once per distinct
//! grammar text, then cloned) and chained before the greedy sampler.
//!
//! **Draft.** A free hop whose output begins with the first token of a call's opener
//! (`{"name": "`) has the rest of it evaluated in one batch with that token; each drafted
//! token stands if it is the one the model chooses there, the rest leave the cache. The
//! output is the same as token by token; three or four decodes become one.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory, TokenParser};
use ractor::{Actor, ActorProcessingErr, ActorRef};

use hearth_core::llm::{
    CancelWatermark, EngineError, EngineInfo, EngineMsg, GenEvent, GenRequest, GenStats,
    LazyGrammar, StopReason, StopScanner,
};

/// Compiled grammars the worker keeps (llguidance parsers, as many as the agent's grammar
/// cache may hand it).
const PARSERS_KEPT: usize = hearth_core::llm::GRAMMARS_KEPT;

/// Sequences of the KV cache the worker keeps prompts in ([`place`]): the conversation, a
/// history being cut back, a retry asked without the history, and the words prompt (the
/// agent's retry held to words, shown no tools; kept recently used by its warm-ups). With
/// two, a turn's retry left the conversation the least recently used, and the warm-up's cut
/// history then overwrote it: the next turn evaluated 1,000 tokens of history again (25 s on
/// 2 cores, the daily session). One pool of cells: another sequence costs no memory.
const SEQUENCES: usize = 4;

/// How to load and run the model.
#[derive(Debug, Clone)]
pub struct LlamaConfig {
    pub model_path: PathBuf,
    /// Context length in tokens (prompt plus answer).
    pub n_ctx: u32,
    /// CPU threads for generation and prompt evaluation.
    pub n_threads: i32,
    /// Layers offloaded to the GPU (Jetson); 0 on CPU-only boards.
    pub n_gpu_layers: u32,
    /// Prompt tokens evaluated per decode call; the cancel flag is checked between calls.
    pub prompt_chunk: usize,
    /// A file that keeps the KV cache across processes (llama.cpp's state file), loaded at
    /// start so the system prompt and tool list are not evaluated again by the next process.
    /// Written by the first prefill that evaluates something new (the agent's warm-up at
    /// start: the system prompt and the tools, no history), never after a generation: it
    /// holds no word anyone said, and an SD card is not rewritten after every turn.
    pub prompt_cache: Option<PathBuf>,
}

/// Whether a finished job writes the prompt-cache file: only the first prefill, and only
/// when it evaluated something the file did not already hold.
#[derive(Default)]
struct CacheWrites {
    /// A prefill has run.
    prefilled: bool,
}

impl CacheWrites {
    /// Whether the prefill that just succeeded, having evaluated `evaluated` prompt tokens,
    /// writes the file.
    fn save_after_prefill(&mut self, evaluated: usize) -> bool {
        let first = !self.prefilled;
        self.prefilled = true;
        first && evaluated > 1
    }
}

impl LlamaConfig {
    pub fn new(model_path: PathBuf) -> Self {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        LlamaConfig {
            model_path,
            n_ctx: 4096,
            n_threads: i32::try_from(threads).unwrap_or(2),
            n_gpu_layers: 0,
            prompt_chunk: 64,
            prompt_cache: None,
        }
    }
}

/// Load a sequence's state file into sequence 0 of `ctx`; the tokens it holds, or none when
/// it is missing or does not fit this model and context (then the KV cache is cleared and
/// the file is rewritten later).
fn load_prompt_cache(ctx: &mut LlamaContext<'_>, path: &std::path::Path) -> Vec<LlamaToken> {
    if !path.is_file() {
        return Vec::new();
    }
    let t = Instant::now();
    match ctx.state_seq_load_file(path, 0, ctx.n_ctx() as usize) {
        Ok((tokens, _)) => {
            tracing::info!(path = %path.display(), tokens = tokens.len(), ms = ms(t), "prompt cache loaded");
            tokens
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "prompt cache not usable; it will be rewritten");
            ctx.clear_kv_cache();
            Vec::new()
        }
    }
}

/// Write a sequence's KV state atomically (a temporary file renamed into place); a failure
/// only costs speed, so it is logged, not returned.
fn save_prompt_cache(ctx: &LlamaContext<'_>, path: &std::path::Path, slot: &Slot) {
    let tokens = &slot.tokens;
    if tokens.is_empty() {
        return;
    }
    if let Some(dir) = path.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            tracing::warn!(path = %dir.display(), error = %e, "cannot create the prompt cache directory");
            return;
        }
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let saved = ctx
        .state_seq_save_file(&tmp, slot.seq, tokens)
        .map(|_| ())
        .map_err(|e| e.to_string())
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| e.to_string()));
    if let Err(e) = saved {
        let _ = std::fs::remove_file(&tmp);
        tracing::warn!(path = %path.display(), error = %e, "prompt cache not saved");
    }
}

/// llama.cpp allows one backend per process.
fn backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|reason| EngineError::Llama {
            stage: "initialising the backend",
            reason: reason.clone(),
        })
}

enum Job {
    Generate {
        id: u64,
        req: GenRequest,
    },
    Prefill {
        id: u64,
        prompt: String,
        reply: ractor::RpcReplyPort<Result<GenStats, EngineError>>,
    },
    Count(String, ractor::RpcReplyPort<usize>),
    Compile(Arc<str>),
}

/// The engine actor's state: the queue to the worker, the cancel watermark and the worker.
pub struct LlamaState {
    jobs: std_mpsc::Sender<Job>,
    cancel: CancelWatermark,
    info: EngineInfo,
    worker: Option<std::thread::JoinHandle<()>>,
}

/// The llama.cpp engine actor.
pub struct LlamaEngine;

impl LlamaEngine {
    /// Spawn the engine and wait until the model is loaded.
    pub async fn spawn(cfg: LlamaConfig) -> Result<ActorRef<EngineMsg>, EngineError> {
        let path = cfg.model_path.display().to_string();
        let (actor, _handle) = Actor::spawn(None, LlamaEngine, cfg)
            .await
            .map_err(|e| match e {
                // the worker's own error, as it is (it names the file and the fix)
                ractor::SpawnErr::StartupFailed(inner) => match inner.downcast::<EngineError>() {
                    Ok(engine) => *engine,
                    Err(other) => EngineError::Load {
                        path,
                        reason: other.to_string(),
                    },
                },
                other => EngineError::Load {
                    path,
                    reason: other.to_string(),
                },
            })?;
        Ok(actor)
    }
}

impl Actor for LlamaEngine {
    type Msg = EngineMsg;
    type State = LlamaState;
    type Arguments = LlamaConfig;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        cfg: LlamaConfig,
    ) -> Result<Self::State, ActorProcessingErr> {
        let (jobs, rx) = std_mpsc::channel();
        let cancel = CancelWatermark::new();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let watermark = cancel.clone();
        let thread = std::thread::Builder::new()
            .name("llama".into())
            .spawn(move || worker(cfg, rx, watermark, ready_tx))
            .map_err(|e| EngineError::Llama {
                stage: "starting the worker thread",
                reason: e.to_string(),
            })?;
        let info = ready_rx.await.map_err(|_| EngineError::Gone)??;
        Ok(LlamaState {
            jobs,
            cancel,
            info,
            worker: Some(thread),
        })
    }

    /// Every job is cancelled and the worker thread joined: the process may exit without
    /// llama.cpp's teardown racing a decode still running (a prefill after the last turn).
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.cancel.cancel_all();
        // the worker's queue closes once this is its last sender: it ends after the job
        // under way, which the watermark cuts short
        state.jobs = std_mpsc::channel().0;
        if let Some(worker) = state.worker.take() {
            if tokio::task::spawn_blocking(move || worker.join())
                .await
                .is_err()
            {
                tracing::warn!("the llama worker thread could not be joined");
            }
        }
        Ok(())
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
                if let Err(std_mpsc::SendError(Job::Generate { req, .. })) =
                    state.jobs.send(Job::Generate { id, req })
                {
                    let _ = req.events.send(GenEvent::Done(Err(EngineError::Gone)));
                }
            }
            EngineMsg::Prefill(prompt, reply) => {
                let id = state.cancel.issue();
                if let Err(std_mpsc::SendError(Job::Prefill { reply, .. })) =
                    state.jobs.send(Job::Prefill { id, prompt, reply })
                {
                    let _ = reply.send(Err(EngineError::Gone));
                }
            }
            EngineMsg::Cancel => state.cancel.cancel_all(),
            EngineMsg::CountTokens(text, reply) => {
                let _ = state.jobs.send(Job::Count(text, reply));
            }
            EngineMsg::Compile(grammar) => {
                let _ = state.jobs.send(Job::Compile(grammar));
            }
            EngineMsg::Info(reply) => {
                let _ = reply.send(state.info.clone());
            }
        }
        Ok(())
    }
}

fn llama_err(stage: &'static str) -> impl Fn(String) -> EngineError {
    move |reason| EngineError::Llama { stage, reason }
}

fn worker(
    cfg: LlamaConfig,
    jobs: std_mpsc::Receiver<Job>,
    cancel: CancelWatermark,
    ready: tokio::sync::oneshot::Sender<Result<EngineInfo, EngineError>>,
) {
    let loaded = (|| {
        let backend = backend()?;
        if !cfg.model_path.is_file() {
            return Err(EngineError::Load {
                path: cfg.model_path.display().to_string(),
                reason: "no such file".into(),
            });
        }
        let params = LlamaModelParams::default().with_n_gpu_layers(cfg.n_gpu_layers);
        let model = LlamaModel::load_from_file(backend, &cfg.model_path, &params).map_err(|e| {
            EngineError::Load {
                path: cfg.model_path.display().to_string(),
                reason: e.to_string(),
            }
        })?;
        Ok((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let ctx_params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(cfg.n_ctx))
        .with_n_batch(cfg.n_ctx)
        .with_n_threads(cfg.n_threads)
        .with_n_threads_batch(cfg.n_threads)
        // one pool of cells for all sequences: a copied prefix shares its cells
        .with_n_seq_max(SEQUENCES as u32)
        .with_kv_unified(true);
    let ctx = match model.new_context(backend, ctx_params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(EngineError::Load {
                path: cfg.model_path.display().to_string(),
                reason: format!("creating a context of {} tokens: {e}", cfg.n_ctx),
            }));
            return;
        }
    };
    let piece = |t: LlamaToken| {
        String::from_utf8_lossy(&model.vocab().token_to_piece(t, true, None)).into_owned()
    };
    let info = EngineInfo {
        chat_template: model.meta_val_str("tokenizer.chat_template").ok(),
        bos_token: piece(model.vocab().bos()),
        eos_token: piece(model.vocab().eos()),
        n_ctx: ctx.n_ctx() as usize,
        model: cfg.model_path.display().to_string(),
        sequences: SEQUENCES,
    };
    tracing::info!(model = %info.model, n_ctx = info.n_ctx, "model loaded");
    if ready.send(Ok(info)).is_err() {
        return;
    }
    let mut ctx = ctx;
    let mut slots: Vec<Slot> = (0..SEQUENCES)
        .map(|seq| Slot {
            seq: i32::try_from(seq).unwrap_or(0),
            tokens: Vec::new(),
            used: 0,
        })
        .collect();
    slots[0].tokens = cfg
        .prompt_cache
        .as_deref()
        .map(|p| load_prompt_cache(&mut ctx, p))
        .unwrap_or_default();
    let mut w = Worker {
        model: &model,
        ctx,
        cfg: &cfg,
        slots,
        active: 0,
        jobs: 0,
        factory: None,
        parsers: crate::bounded::Lru::new("llm.parsers", PARSERS_KEPT),
        cancel,
        threads: cfg.n_threads,
    };
    let mut cache = CacheWrites::default();
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Count(text, reply) => {
                let _ = reply.send(w.tokenize(&text).len());
            }
            Job::Compile(grammar) => {
                let t = Instant::now();
                match w.compile(&grammar) {
                    Ok(true) => tracing::debug!(ms = ms(t), "grammar compiled ahead"),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(error = %e, "the grammar compiled ahead failed"),
                }
            }
            Job::Generate { id, req } => {
                let events = req.events.clone();
                let span = tracing::info_span!("generate", id);
                let _g = span.enter();
                let result = w.generate(id, req);
                if let Err(e) = &result {
                    tracing::warn!(error = %e, "generation failed");
                }
                let _ = events.send(GenEvent::Done(result));
            }
            Job::Prefill { id, prompt, reply } => {
                let span = tracing::info_span!("prefill", id);
                let _g = span.enter();
                let result = w.prefill(id, &prompt);
                match &result {
                    Err(e) => tracing::warn!(error = %e, "prefill failed"),
                    Ok(stats) => {
                        let save = cache.save_after_prefill(stats.evaluated_tokens);
                        if let (Some(p), true) = (&cfg.prompt_cache, save) {
                            save_prompt_cache(&w.ctx, p, &w.slots[w.active]);
                        }
                    }
                }
                let _ = reply.send(result);
            }
        }
    }
}

struct Worker<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    cfg: &'m LlamaConfig,
    /// The KV cache's sequences and the tokens each holds.
    slots: Vec<Slot>,
    /// The slot the latest job evaluated into.
    active: usize,
    /// Jobs evaluated so far (which slot was used last).
    jobs: u64,
    factory: Option<ParserFactory>,
    /// Compiled grammars, the [`PARSERS_KEPT`] used last.
    parsers: crate::bounded::Lru<Arc<str>, TokenParser>,
    cancel: CancelWatermark,
    /// The threads the context decodes on now ([`Worker::use_free_cores`]).
    threads: i32,
}

impl Worker<'_> {
    fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        // The chat template prints any BOS itself (HF convention); special tokens are parsed.
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    fn cancelled(&self, id: u64) -> bool {
        self.cancel.is_cancelled(id)
    }

    /// Compiles `grammar` into the parsers kept, unless it is there already (`Ok(false)`).
    fn compile(&mut self, grammar: &Arc<str>) -> Result<bool, EngineError> {
        if self.parsers.contains(grammar) {
            return Ok(false);
        }
        self.grammar_matcher(grammar).map(|_| true)
    }

    fn grammar_matcher(&mut self, grammar: &Arc<str>) -> Result<Matcher, EngineError> {
        if self.factory.is_none() {
            let t = Instant::now();
            let env = LlamaSampler::llguidance_tok_env(self.model);
            let mut f =
                ParserFactory::new_simple(&env).map_err(|e| EngineError::Grammar(e.to_string()))?;
            f.quiet();
            tracing::debug!(
                ms = t.elapsed().as_secs_f64() * 1e3,
                "llguidance token env built"
            );
            self.factory = Some(f);
        }
        let parser = match self.parsers.get(grammar) {
            Some(p) => p.deep_clone(),
            None => {
                let factory = self.factory.as_ref().ok_or(EngineError::Gone)?;
                let p = factory
                    .create_parser(TopLevelGrammar::from_lark(grammar.to_string()))
                    .map_err(|e| EngineError::Grammar(e.to_string()))?;
                self.parsers.put(grammar.clone(), p.deep_clone());
                p
            }
        };
        Ok(Matcher::new(Ok(parser)))
    }

    /// A matcher for the lazy `grammar` that has consumed what was generated so far
    /// (`tokens`), or `None` when the grammar does not accept them.
    fn lazy_matcher(
        &mut self,
        grammar: &Arc<str>,
        tokens: &[LlamaToken],
    ) -> Result<Option<Matcher>, EngineError> {
        let mut m = self.grammar_matcher(grammar)?;
        let ids: Vec<u32> = tokens.iter().map(|t| t.0.cast_unsigned()).collect();
        let n = m.try_consume_tokens(&ids).map_err(grammar_err)?;
        Ok((n == ids.len()).then_some(m))
    }

    /// One step under a grammar: the tokens it forces (fast-forward), else the most likely
    /// token the grammar allows followed by whatever the grammar forces after it, all
    /// evaluated in one batch; and how many of them were forced.
    fn grammar_step(
        &self,
        m: &mut Matcher,
        logits_idx: i32,
    ) -> Result<(Vec<LlamaToken>, usize), EngineError> {
        let forced = self.forced(m)?;
        if !forced.is_empty() {
            let n = forced.len();
            return Ok((forced, n));
        }
        let mask = m.compute_mask().map_err(grammar_err)?;
        let logits = self.ctx.get_logits_ith(logits_idx);
        let best = logits
            .iter()
            .enumerate()
            .filter(|(i, _)| mask.is_allowed(*i as u32))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i);
        let Some(best) = best else {
            return Err(EngineError::Grammar(
                "the grammar allows no token here (the model's vocabulary cannot continue it)"
                    .into(),
            ));
        };
        let token = LlamaToken(i32::try_from(best).unwrap_or(i32::MAX));
        if self.model.vocab().is_eog(token) {
            return Ok((vec![token], 0));
        }
        m.consume_token(best as u32).map_err(grammar_err)?;
        let mut next = vec![token];
        if !m.is_stopped() {
            next.extend(self.forced(m)?);
        }
        let n = next.len() - 1;
        Ok((next, n))
    }

    /// The tokens the grammar forces next, consumed. Forced bytes are tokenized with the
    /// model's tokenizer; the last token is held back because it might merge with what
    /// follows, so the model's own tokenization is kept.
    fn forced(&self, m: &mut Matcher) -> Result<Vec<LlamaToken>, EngineError> {
        let ff = m.compute_ff_bytes();
        if ff.is_empty() {
            return Ok(Vec::new());
        }
        let mut toks = self.model.vocab().tokenize(&ff, false, true);
        toks.pop();
        toks.truncate(MAX_FORCED);
        if toks.is_empty() {
            return Ok(toks);
        }
        let ids: Vec<u32> = toks.iter().map(|t| t.0.cast_unsigned()).collect();
        let n = m.try_consume_tokens(&ids).map_err(grammar_err)?;
        toks.truncate(n);
        Ok(toks)
    }

    /// Evaluates `prompt` into sequence 0 (after what it shares with the cache) and stops:
    /// nothing is sampled.
    fn prefill(&mut self, id: u64, prompt: &str) -> Result<GenStats, EngineError> {
        let t0 = Instant::now();
        let mut stats = GenStats::default();
        let tokens = self.tokenize(prompt);
        self.check_fits(&tokens, 0)?;
        let evaluated = self.evaluate(id, &tokens, &mut stats, t0, Work::Warm)?;
        if evaluated.is_none() {
            stats.stop = Some(StopReason::Cancelled);
        }
        tracing::debug!(?stats, "prefill done");
        Ok(stats)
    }

    fn check_fits(&self, tokens: &[LlamaToken], max_tokens: usize) -> Result<(), EngineError> {
        let n_ctx = self.ctx.n_ctx() as usize;
        if tokens.is_empty() || tokens.len() + max_tokens > n_ctx {
            return Err(EngineError::ContextOverflow {
                prompt_tokens: tokens.len(),
                max_tokens,
                n_ctx,
            });
        }
        Ok(())
    }

    /// Evaluates `tokens` into a sequence ([`place`]), reusing the prefix they share with
    /// what is cached (at least the last token is evaluated, for its logits); that slot is
    /// then the active one. The batch that held the last token, or `None` if the job was
    /// cancelled first.
    fn evaluate(
        &mut self,
        id: u64,
        tokens: &[LlamaToken],
        stats: &mut GenStats,
        t0: Instant,
        work: Work,
    ) -> Result<Option<LlamaBatch<'static>>, EngineError> {
        stats.prompt_tokens = tokens.len();
        let held: Vec<&[LlamaToken]> = self.slots.iter().map(|s| s.tokens.as_slice()).collect();
        let uses: Vec<u64> = self.slots.iter().map(|s| s.used).collect();
        let at = place(&held, &uses, tokens);
        self.reuse(at)?;
        self.jobs += 1;
        self.active = at.target;
        self.slots[at.target].used = self.jobs;
        let seq = self.slots[at.target].seq;
        let start = self.slots[at.target].tokens.len();
        stats.cached_tokens = start;
        stats.evaluated_tokens = tokens.len() - start;
        let chunk = self.cfg.prompt_chunk.max(1);
        let mut batch = LlamaBatch::new(chunk, 1);
        let mut pos = start;
        while pos < tokens.len() {
            if work == Work::Warm {
                crate::cpu::wait_ahead(|| self.cancelled(id));
            }
            if self.cancelled(id) {
                stats.prompt_eval_ms = ms(t0);
                return Ok(None);
            }
            let end = (pos + chunk).min(tokens.len());
            batch.clear();
            for (i, &t) in tokens[pos..end].iter().enumerate() {
                let p = pos + i;
                batch
                    .add(t, to_pos(p)?, &[seq], p + 1 == tokens.len())
                    .map_err(|e| llama_err("filling a batch")(e.to_string()))?;
            }
            self.decode(&mut batch, "evaluating the prompt")?;
            self.slots[at.target]
                .tokens
                .extend_from_slice(&tokens[pos..end]);
            pos = end;
        }
        stats.prompt_eval_ms = ms(t0);
        Ok(Some(batch))
    }

    /// Makes the KV cache hold `at.common` tokens of the prompt in `at.target`: the target's
    /// tail beyond them removed, or (another slot holding them) the target emptied and the
    /// prefix copied in from `at.source`.
    fn reuse(&mut self, at: Placement) -> Result<(), EngineError> {
        let target_seq = self.slots[at.target].seq;
        if at.source == at.target {
            return self.trim(at.target, at.common);
        }
        self.forget(at.target)?;
        if at.common > 0 {
            let source_seq = self.slots[at.source].seq;
            self.ctx
                .copy_kv_cache_seq(
                    source_seq,
                    target_seq,
                    Some(0),
                    u32::try_from(at.common).ok(),
                )
                .map_err(|e| llama_err("copying a prefix in the KV cache")(e.to_string()))?;
            let prefix = self.slots[at.source].tokens[..at.common].to_vec();
            self.slots[at.target].tokens = prefix;
        }
        Ok(())
    }

    /// The most likely token at batch index `idx` (what the greedy sampler would choose).
    fn argmax(&self, idx: i32) -> LlamaToken {
        let best = self
            .ctx
            .get_logits_ith(idx)
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i);
        LlamaToken(i32::try_from(best).unwrap_or(i32::MAX))
    }

    /// Keeps the first `keep` tokens of `slot` (what a prompt does not share, or the rest of
    /// a draft the model did not choose, leaves the cache); emptied when llama.cpp cannot
    /// cut the sequence there.
    fn trim(&mut self, slot: usize, keep: usize) -> Result<(), EngineError> {
        if keep >= self.slots[slot].tokens.len() {
            return Ok(());
        }
        let seq = u32::try_from(self.slots[slot].seq).ok();
        let ok = self
            .ctx
            .clear_kv_cache_seq(seq, u32::try_from(keep).ok(), None)
            .map_err(|e| llama_err("trimming the KV cache")(e.to_string()))?;
        if ok {
            self.slots[slot].tokens.truncate(keep);
            Ok(())
        } else {
            self.forget(slot)
        }
    }

    /// Empties a slot's sequence.
    fn forget(&mut self, slot: usize) -> Result<(), EngineError> {
        let seq = u32::try_from(self.slots[slot].seq).ok();
        self.ctx
            .clear_kv_cache_seq(seq, None, None)
            .map_err(|e| llama_err("clearing a sequence of the KV cache")(e.to_string()))?;
        self.slots[slot].tokens.clear();
        Ok(())
    }

    /// Decodes `batch` into the active slot, once no speech is being synthesised
    /// ([`crate::cpu::give_way`]). When the cache has no cell left for it, the other slots
    /// are emptied one by one, the least recently used first ([`eviction_order`]: a retry's
    /// or a cut history's before the conversation), until it fits.
    fn decode(
        &mut self,
        batch: &mut LlamaBatch<'_>,
        stage: &'static str,
    ) -> Result<(), EngineError> {
        // speech being synthesised goes first (two cores: `crate::cpu`)
        let waited = crate::cpu::give_way();
        if waited >= std::time::Duration::from_millis(1) {
            tracing::trace!(ms = waited.as_secs_f64() * 1e3, "gave way to speech");
        }
        self.use_free_cores();
        let mut spare: Option<std::vec::IntoIter<usize>> = None;
        loop {
            match self.ctx.decode(batch) {
                Err(llama_cpp_2::DecodeError::NoKvCacheSlot) => {
                    let order = spare.get_or_insert_with(|| {
                        let held: Vec<usize> = self.slots.iter().map(|s| s.tokens.len()).collect();
                        let used: Vec<u64> = self.slots.iter().map(|s| s.used).collect();
                        eviction_order(&held, &used, self.active).into_iter()
                    });
                    let Some(slot) = order.next() else {
                        return Err(llama_err(stage)("the KV cache is full".to_string()));
                    };
                    tracing::debug!(
                        slot,
                        "the KV cache is full: the least recently used sequence is emptied"
                    );
                    self.forget(slot)?;
                }
                r => return r.map_err(|e| llama_err(stage)(e.to_string())),
            }
        }
    }

    /// Runs the next decodes on the cores other programs leave free, at most the configured
    /// threads: llama.cpp's threads wait for each other after every step, so one held off its
    /// core by another program holds the rest up (`hearth_cores`).
    fn use_free_cores(&mut self) {
        let max = usize::try_from(self.cfg.n_threads).unwrap_or(1);
        let free = i32::try_from(hearth_cores::threads(max)).unwrap_or(1);
        if free != self.threads {
            tracing::debug!(threads = free, "the model runs on the cores left free");
            self.ctx.set_n_threads(free, free);
            self.threads = free;
        }
    }

    fn generate(&mut self, id: u64, req: GenRequest) -> Result<GenStats, EngineError> {
        let t0 = Instant::now();
        let mut stats = GenStats {
            grammar: req.grammar.is_some(),
            ..GenStats::default()
        };
        if self.cancelled(id) {
            stats.stop = Some(StopReason::Cancelled);
            return Ok(stats);
        }
        let tokens = self.tokenize(&req.prompt);
        self.check_fits(&tokens, req.max_tokens)?;
        let mut matcher = match &req.grammar {
            Some(g) => Some(self.grammar_matcher(g)?),
            None => None,
        };
        let mut lazy = LazyStart::new(req.lazy.clone().filter(|_| matcher.is_none()));
        let mut sampler = LlamaSampler::greedy();
        let Some(batch) = self.evaluate(id, &tokens, &mut stats, t0, Work::Turn)? else {
            stats.stop = Some(StopReason::Cancelled);
            return Ok(stats);
        };

        let t_gen = Instant::now();
        let mut stop = StopScanner::new(req.stop.clone());
        let mut pending: Vec<u8> = Vec::new();
        let mut logits_idx = batch.n_tokens() - 1;
        let mut batch = LlamaBatch::new(GEN_BATCH, 1);
        // the openers of a call, one drafted once the output begins with its first token
        let mut drafts: Vec<Vec<LlamaToken>> = req
            .lazy
            .iter()
            .filter(|_| matcher.is_none())
            .flat_map(|l| l.openers())
            .map(|o| self.tokenize(o))
            .filter(|d| (2..=MAX_DRAFT).contains(&d.len()))
            .collect();
        let mut ahead = Ahead::default();
        let mut reason = StopReason::MaxTokens;
        let mut sample_s = 0.0;
        while stats.generated_tokens < req.max_tokens {
            if self.cancelled(id) {
                reason = StopReason::Cancelled;
                break;
            }
            if req.halt.load(std::sync::atomic::Ordering::Relaxed) {
                reason = StopReason::Halted;
                break;
            }
            let ts = Instant::now();
            let from_draft = ahead.tokens.pop_front();
            let (mut next, mut forced) = match (from_draft, matcher.as_mut()) {
                // the model's own choice, verified when the draft was evaluated
                (Some(t), _) => (vec![t], 0),
                (None, Some(m)) => self.grammar_step(m, logits_idx)?,
                (None, None) => (vec![sampler.sample(&self.ctx, logits_idx)], 0),
            };
            sample_s += ts.elapsed().as_secs_f64();
            if tracing::enabled!(tracing::Level::TRACE) {
                let pieces: Vec<String> = next
                    .iter()
                    .map(|&t| {
                        String::from_utf8_lossy(&self.model.vocab().token_to_piece(t, true, None))
                            .into_owned()
                    })
                    .collect();
                tracing::trace!(ms = ms(t_gen), forced, ?pieces, "step");
            }
            if stats.generated_tokens == 0 {
                stats.first_token_ms = ms(t0);
            }
            if next.iter().any(|&t| self.model.vocab().is_eog(t)) || next.is_empty() {
                reason = StopReason::EndOfTurn;
                break;
            }
            if let Some(grammar) = lazy.push(self.model, &next) {
                // the output has begun a call: held to the grammar from here on
                match self.lazy_matcher(&grammar, lazy.tokens()) {
                    Ok(Some(mut m)) => {
                        if !m.is_stopped() {
                            let more = self.forced(&mut m)?;
                            forced += more.len();
                            next.extend(more);
                        }
                        stats.grammar = true;
                        matcher = Some(m);
                    }
                    Ok(None) => {
                        tracing::debug!("the call as begun does not fit the grammar: left free");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the lazy grammar failed: the call is left free")
                    }
                }
            }
            stats.generated_tokens += next.len();
            stats.forced_tokens += forced;
            for &t in &next {
                pending.extend(self.model.vocab().token_to_piece(t, true, None));
            }
            let text = take_utf8(&mut pending);
            if !text.is_empty() {
                let (out, hit) = stop.push(&text);
                if !out.is_empty() {
                    let _ = req.events.send(GenEvent::Text(out));
                }
                if hit {
                    reason = StopReason::StopString;
                    break;
                }
            }
            // A grammar that is complete allows only end-of-turn: stop without a decode.
            if matcher.as_ref().is_some_and(Matcher::is_stopped) {
                reason = StopReason::EndOfTurn;
                break;
            }
            // a drafted token is in the cache already, its logits in the last batch
            let fresh = &next[usize::from(from_draft.is_some())..];
            if fresh.is_empty() {
                logits_idx = ahead.logits;
                ahead.logits += 1;
                continue;
            }
            if from_draft.is_some() {
                // the grammar took over inside the draft: the rest of it is not the output
                let keep = self.slots[self.active].tokens.len() - ahead.tokens.len();
                self.trim(self.active, keep)?;
                ahead.tokens.clear();
            }
            let drafted = std::mem::take(&mut drafts)
                .into_iter()
                .find(|d| matcher.is_none() && next[..] == d[..1])
                .map(|d| d[1..].to_vec())
                .unwrap_or_default();
            batch.clear();
            let (seq, held) = (
                self.slots[self.active].seq,
                self.slots[self.active].tokens.len(),
            );
            let evaluated: Vec<LlamaToken> = fresh.iter().chain(&drafted).copied().collect();
            for (i, &t) in evaluated.iter().enumerate() {
                let logits = i + 1 >= fresh.len();
                batch
                    .add(t, to_pos(held + i)?, &[seq], logits)
                    .map_err(|e| llama_err("filling a batch")(e.to_string()))?;
            }
            self.decode(&mut batch, "generating")?;
            self.slots[self.active].tokens.extend_from_slice(&evaluated);
            logits_idx = i32::try_from(fresh.len()).unwrap_or(i32::MAX) - 1;
            if !drafted.is_empty() {
                // the draft stands as far as each of its tokens is the one the model chose
                let kept = drafted
                    .iter()
                    .enumerate()
                    .take_while(|&(j, t)| self.argmax(logits_idx + j as i32) == *t)
                    .count();
                let keep = self.slots[self.active].tokens.len() - (drafted.len() - kept);
                self.trim(self.active, keep)?;
                tracing::trace!(drafted = drafted.len(), kept, "the call's opener drafted");
                stats.drafted_tokens += kept;
                ahead = Ahead {
                    tokens: drafted[..kept].iter().copied().collect(),
                    logits: logits_idx + 1,
                };
            }
        }
        if reason != StopReason::StopString {
            let mut tail = stop.finish();
            tail.push_str(&String::from_utf8_lossy(&pending));
            if !tail.is_empty() {
                let _ = req.events.send(GenEvent::Text(tail));
            }
        }
        stats.generation_ms = ms(t_gen);
        stats.sample_ms = sample_s * 1e3;
        stats.stop = Some(reason);
        tracing::debug!(?stats, "generation done");
        Ok(stats)
    }
}

/// Watches a free generation for the start of a call a [`LazyGrammar`] holds.
struct LazyStart {
    grammar: Option<Arc<LazyGrammar>>,
    /// The output so far, and its tokens, while it is not known whether it begins a call.
    text: String,
    tokens: Vec<LlamaToken>,
}

impl LazyStart {
    fn new(grammar: Option<Arc<LazyGrammar>>) -> Self {
        LazyStart {
            grammar,
            text: String::new(),
            tokens: Vec::new(),
        }
    }

    /// Adds the step's tokens; the grammar's text when the output has just begun a call it
    /// holds (once: after that, and once the output is known not to, it watches no more).
    /// Control tokens and blanks before the output's first word are not watched (a small
    /// model may open a call with `<|im_start|>\n` instead of its call tag): the grammar
    /// starts after them.
    fn push(&mut self, model: &LlamaModel, next: &[LlamaToken]) -> Option<Arc<str>> {
        let grammar = self.grammar.as_ref()?;
        for &t in next {
            let text = model.vocab().token_to_piece(t, false, None);
            if self.tokens.is_empty() && text.trim_ascii().is_empty() {
                continue;
            }
            self.tokens.push(t);
            self.text.push_str(&String::from_utf8_lossy(&text));
        }
        if self.tokens.is_empty() {
            return None;
        }
        let begun = grammar.begins(&self.text)?;
        let held = begun.then(|| grammar.grammar.clone());
        self.grammar = None;
        held
    }

    fn tokens(&self) -> &[LlamaToken] {
        &self.tokens
    }
}

/// One sequence of the KV cache.
struct Slot {
    seq: i32,
    /// The tokens whose KV entries sit in this sequence, in order.
    tokens: Vec<LlamaToken>,
    /// The job that last used it (0: none).
    used: u64,
}

/// Whom a prompt's evaluation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// A turn: someone waits for its reply.
    Turn,
    /// The next turn's prompt, evaluated ahead of it (a prefill): it waits while the voice
    /// works ([`crate::cpu::wait_ahead`]).
    Warm,
}

/// Where a prompt is evaluated ([`place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Placement {
    /// The slot it is evaluated into.
    target: usize,
    /// The slot the reused prefix is in (`target`, unless it is copied over).
    source: usize,
    /// Tokens of the prompt already in the cache (never all: the last is evaluated for its
    /// logits).
    common: usize,
}

/// Where `prompt` goes, given the tokens each slot holds and when each was last used: the
/// slot sharing its longest prefix with it, if the prompt continues all that slot holds (or
/// departs from it only at its last token); otherwise the least recently used slot, from a
/// copy of that prefix (in place when it is that slot). Every turn's first hop continues the
/// conversation, so a retry asked without it, or a history being cut back, overwrites the
/// other slot (an earlier retry, a stale history) and never the conversation, however much
/// the new prompt shares with the other slot or however long that is.
fn place(held: &[&[LlamaToken]], used: &[u64], prompt: &[LlamaToken]) -> Placement {
    let shared = |h: &[LlamaToken]| {
        h.iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count()
            .min(prompt.len().saturating_sub(1))
    };
    let best = (0..held.len())
        .max_by_key(|&i| (shared(held[i]), used[i], std::cmp::Reverse(i)))
        .unwrap_or(0);
    let common = shared(held[best]);
    if held[best].len() <= common + 1 {
        return Placement {
            target: best,
            source: best,
            common,
        };
    }
    let target = (0..held.len())
        .min_by_key(|&i| (used[i], i))
        .unwrap_or(best);
    // of the slots sharing as much, the target itself: nothing is copied
    let source = if shared(held[target]) == common {
        target
    } else {
        best
    };
    Placement {
        target,
        source,
        common,
    }
}

/// The slots to empty when the cache is full, in order: those other than `active` that hold
/// tokens (`held`: how many), the least recently `used` first.
fn eviction_order(held: &[usize], used: &[u64], active: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..held.len())
        .filter(|&i| i != active && held[i] > 0)
        .collect();
    order.sort_by_key(|&i| (used.get(i).copied().unwrap_or(0), i));
    order
}

fn grammar_err(e: impl std::fmt::Display) -> EngineError {
    EngineError::Grammar(e.to_string())
}

/// At most this many forced tokens are evaluated in one batch.
const MAX_FORCED: usize = 64;

/// At most this many tokens of a call's opener are drafted.
const MAX_DRAFT: usize = 16;

/// The batch a generation step is evaluated in: the sampled token and what the grammar
/// forces after it, or a drafted opener.
const GEN_BATCH: usize = 1 + MAX_FORCED + MAX_DRAFT;

/// Drafted tokens the model was found to choose, evaluated already, not yet output.
#[derive(Default)]
struct Ahead {
    tokens: std::collections::VecDeque<LlamaToken>,
    /// The batch index of the logits after the first of them.
    logits: i32,
}

fn to_pos(p: usize) -> Result<i32, EngineError> {
    i32::try_from(p).map_err(|_| EngineError::Llama {
        stage: "positioning a token",
        reason: format!("position {p} exceeds i32"),
    })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Take the longest valid UTF-8 prefix out of `buf`, leaving an incomplete tail; invalid
/// bytes become U+FFFD rather than stalling the stream.
fn take_utf8(buf: &mut Vec<u8>) -> String {
    match std::str::from_utf8(buf) {
        Ok(s) => {
            let s = s.to_string();
            buf.clear();
            s
        }
        Err(e) if e.error_len().is_none() => {
            let good = e.valid_up_to();
            let s = String::from_utf8_lossy(&buf[..good]).into_owned();
            buf.drain(..good);
            s
        }
        Err(_) => {
            let s = String::from_utf8_lossy(buf).into_owned();
            buf.clear();
            s
        }
    }
}

#[cfg(test)]
mod cache_tests;

#[cfg(test)]
mod tests {
    use super::{eviction_order, place, take_utf8, LlamaToken, Placement};

    fn toks(ids: &[i32]) -> Vec<LlamaToken> {
        ids.iter().map(|&i| LlamaToken(i)).collect()
    }

    fn at(target: usize, source: usize, common: usize) -> Placement {
        Placement {
            target,
            source,
            common,
        }
    }

    #[test]
    fn a_full_cache_empties_the_least_recently_used_sequence_first() {
        // slot 1 active (a retry), the conversation in slot 0 used just before it, a cut
        // history in slot 2 and the words prompt in slot 3 earlier, slot 4 empty
        let order = eviction_order(&[2980, 40, 1500, 50, 0], &[9, 10, 5, 7, 1], 1);
        assert_eq!(order, [2, 3, 0], "never the active slot, nor an empty one");
        assert!(eviction_order(&[10], &[1], 0).is_empty());
    }

    #[test]
    fn a_prompt_that_continues_a_sequence_is_evaluated_there() {
        let (conversation, other) = (toks(&[1, 2, 3, 4]), toks(&[1, 2, 9]));
        let placed = place(
            &[&conversation, &other],
            &[1, 2],
            &toks(&[1, 2, 3, 4, 5, 6]),
        );
        assert_eq!(placed, at(0, 0, 4));
        // the same prompt again: its last token is evaluated once more, in place
        let placed = place(&[&conversation, &other], &[1, 2], &conversation);
        assert_eq!(placed, at(0, 0, 3));
        // an empty cache
        let placed = place(&[&[], &[]], &[0, 0], &toks(&[1, 2]));
        assert_eq!(placed, at(0, 0, 0));
    }

    #[test]
    fn a_prompt_that_departs_from_the_conversation_leaves_it_cached() {
        // system prompt 1 2, then the conversation 3 4 5 in slot 0; a retry without it
        let conversation = toks(&[1, 2, 3, 4, 5]);
        let placed = place(&[&conversation, &[]], &[1, 0], &toks(&[1, 2, 7, 8]));
        assert_eq!(placed, at(1, 0, 2));
        // then the conversation again, in slot 0 still
        let retry = toks(&[1, 2, 7, 8, 9]);
        let placed = place(
            &[&conversation, &retry],
            &[1, 2],
            &toks(&[1, 2, 3, 4, 5, 6]),
        );
        assert_eq!(placed, at(0, 0, 5));
    }

    #[test]
    fn a_retry_never_evicts_the_conversation_for_an_earlier_retry() {
        // system prompt 1 2; an earlier retry 7 8 in slot 1; the conversation 3 4 5 6 in
        // slot 0, used since by the turn's first hop
        let (conversation, retry) = (toks(&[1, 2, 3, 4, 5, 6]), toks(&[1, 2, 7, 8]));
        // a new retry shares more with the earlier one (1 2 7) than with the conversation:
        // the earlier retry is trimmed, the conversation kept
        let placed = place(&[&conversation, &retry], &[2, 1], &toks(&[1, 2, 7, 9]));
        assert_eq!(placed, at(1, 1, 3));
    }

    #[test]
    fn a_retry_never_evicts_the_conversation_for_a_longer_stale_history() {
        // the history was cut: the conversation goes on in slot 1 (1 2 5 6), and slot 0
        // still holds the longer history from before the cut
        let (stale, conversation) = (toks(&[1, 2, 3, 4, 5, 6, 7, 8]), toks(&[1, 2, 5, 6]));
        let placed = place(&[&stale, &conversation], &[1, 2], &toks(&[1, 2, 9]));
        assert_eq!(placed, at(0, 0, 2));
        // and a prompt that goes on from the conversation stays there
        let placed = place(&[&stale, &conversation], &[1, 2], &toks(&[1, 2, 5, 6, 9]));
        assert_eq!(placed, at(1, 1, 4));
    }

    #[test]
    fn a_history_cut_back_goes_beside_the_conversation() {
        // the conversation 1 2 3 4 5 6 in slot 0 (used last), an old retry in slot 1; the
        // warm-up evaluates the history cut back to its last turn: 1 2 5 6
        let (conversation, retry) = (toks(&[1, 2, 3, 4, 5, 6]), toks(&[1, 2, 7]));
        let placed = place(&[&conversation, &retry], &[2, 1], &toks(&[1, 2, 5, 6]));
        assert_eq!(placed, at(1, 1, 2));
        // two slots sharing as much: the least recently used is trimmed in place
        let (a, b) = (toks(&[1, 2, 3, 3]), toks(&[1, 2, 4, 4]));
        let placed = place(&[&a, &b], &[1, 2], &toks(&[1, 2, 5]));
        assert_eq!(placed, at(0, 0, 2));
    }

    #[test]
    fn neither_a_retry_nor_the_cut_after_it_evicts_the_conversation() {
        // the conversation 1 2 3 4 5 6 in slot 0, used by a turn's first hop (3); the
        // warm-up's cut history 1 2 5 half evaluated in slot 1 before the turn (2); an old
        // retry in slot 2 (1)
        let (conversation, cut, old) = (
            toks(&[1, 2, 3, 4, 5, 6]),
            toks(&[1, 2, 5]),
            toks(&[1, 2, 8]),
        );
        // the turn's retry without the history: the oldest slot, not the conversation
        let placed = place(
            &[&conversation, &cut, &old],
            &[3, 2, 1],
            &toks(&[1, 2, 7, 8]),
        );
        assert_eq!(placed, at(2, 2, 2));
        // the warm-up goes on with the cut where it stopped
        let retry = toks(&[1, 2, 7, 8]);
        let placed = place(
            &[&conversation, &cut, &retry],
            &[3, 2, 4],
            &toks(&[1, 2, 5, 6]),
        );
        assert_eq!(placed, at(1, 1, 3));
        // the cut lost to a retry: the warm-up begins it again beside both
        let placed = place(
            &[&conversation, &retry, &old],
            &[3, 4, 1],
            &toks(&[1, 2, 5, 6]),
        );
        assert_eq!(placed, at(2, 2, 2));
    }

    #[test]
    fn utf8_tail_is_held() {
        let mut b = "hé".as_bytes().to_vec();
        b.push(0xE2);
        b.push(0x82);
        assert_eq!(take_utf8(&mut b), "hé");
        assert_eq!(b, vec![0xE2, 0x82]);
        b.push(0xAC);
        assert_eq!(take_utf8(&mut b), "€");
        assert!(b.is_empty());
    }
}
