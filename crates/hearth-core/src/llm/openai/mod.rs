//! The remote engine (`[agent] engine = "openai"`): an actor speaking [`EngineMsg`] against
//! an OpenAI-compatible server on another machine (llama.cpp's `llama-server`,
//! llama-cpp-python's server), in a build with or without the `llm` feature.
//!
//! **Raw completions.** The agent renders the prompt with the model's chat template as it
//! does for llama.cpp in process; it goes to `POST /v1/completions` as it is (`stream: true`,
//! greedy, the preset's stop strings, `max_tokens`), and the text streams back into the same
//! raw-first parser chain: what the model wrote is parsed and every call validated exactly as
//! in process.
//!
//! **Chat** where the server has no raw completions (a 404 there moves the engine to chat
//! for good, said once; [`Api::Chat`] starts there): the messages and tools the prompt was
//! rendered from ([`ChatPrompt`]) go to `POST /v1/chat/completions`; the content streams
//! into the parser as the raw text does, and the calls the server parsed natively are
//! written after it in the model's own call form (the preset's `[grammar]`), so the same
//! parser and schemas check them. No grammar and no warm-up on this path.
//!
//! **Grammar.** `[agent.openai] grammar` says what the server takes. `"llguidance"`: a
//! `llama-server` built with llguidance (`-DLLAMA_LLGUIDANCE=ON`), which takes hearth's Lark
//! grammars as they are, prefixed `%llguidance {}`; the lazy grammar of a free hop (held once
//! a call begins) has no server form and is not sent. `"none"` (the default): nothing is sent.
//! llama-cpp-python takes only GBNF, and a Lark grammar sent to it ends its process (0.3.36:
//! "failed to parse grammar", then the server is gone). What is lost without a grammar: the
//! forcing of the call's syntax and of its arguments by the tool's schema; the parser and the
//! schema validation still hold every call. Said at start.
//!
//! **Chat template.** The server's when it reports one (llama.cpp's `GET /props`); else the
//! model's GGUF on this machine (the preset's file in the model directory, or `[agent]
//! model`), whose metadata alone is read ([`super::gguf`]); else a preset's own
//! `chat_template`; else start-up fails naming the fixes ([`EngineError::NoTemplate`]).
//!
//! **Token counts** come from the server's tokenizer (`/extras/tokenize/count` of
//! llama-cpp-python, `/tokenize` of llama.cpp); where it has neither, or does not answer,
//! they are estimated as one token per [`BYTES_PER_TOKEN`] bytes (more than a BPE tokenizer
//! gives for English, so what the estimate fits, fits).
//!
//! **Prefill** (the agent's warm-up) is a one-token completion of the prefix: the servers
//! keep the last prompt's KV cache and reuse its longest common prefix. Skipped while the
//! server is known to be down. **Compile** has nothing to do.
//!
//! **Down, slow, garbage.** The actor starts whether the server answers or not (the local
//! intents need no model), its `Info` always answers (the watchdog asks it), and every
//! request opens its connection anew (a pooled one the server closed is not reused), so
//! hearth works again as soon as the server is back. A request that cannot connect within
//! `connect_timeout_s`, gets no data for `read_timeout_s`, or gets garbage or an error ends
//! with an [`EngineError`] naming the URL and the fix ([`EngineError::is_unavailable`]): the
//! agent answers that turn with an apology and logs it once. The server going down and coming
//! back are logged at info.
//!
//! **One request at a time; cancel.** Jobs run in order on one task; each request's blocking
//! I/O runs on a thread of its own. `Cancel` (and a generation's `halt`) end the generation
//! at once for the agent (`Done` with `Cancelled`), and its connection is dropped at the
//! next read (the next streamed chunk, or the read timeout): the server sees the stream
//! closed and stops. The next job does not wait for that.

mod client;
mod sse;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use self::client::{Client, Flow, Tokenizer};
use super::engine::{
    CancelWatermark, ChatPrompt, EngineError, EngineInfo, EngineMsg, GenEvent, GenRequest,
    GenStats, StopReason, StopScanner,
};
pub use crate::config::RemoteGrammar;

/// Seconds to connect before the server counts as down (`[agent.openai] connect_timeout_s`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Seconds without data (the first token included) before a request is given up
/// (`[agent.openai] read_timeout_s`).
pub const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// A token count asked of the server is estimated instead after this long.
const COUNT_WITHIN: Duration = Duration::from_secs(3);
/// The estimate's bytes per token where the server cannot count.
pub const BYTES_PER_TOKEN: usize = 3;

/// The raw completions endpoint: the rendered prompt in, the model's text out.
const COMPLETIONS: &str = "/v1/completions";
/// The chat endpoint: messages and tools in, text and native calls out.
const CHAT_COMPLETIONS: &str = "/v1/chat/completions";

/// Which endpoint carries a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Raw completions ([`COMPLETIONS`]); a server without them (HTTP 404) moves the engine
    /// to chat for the rest of the process, said once in the log.
    Completions,
    /// Chat ([`CHAT_COMPLETIONS`]) from the start.
    Chat,
}

/// Where and how to reach the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The server's address, `http://HOST:PORT` (with or without `/v1`).
    pub url: String,
    /// The `model` each request names (a server that serves several picks by it).
    pub model: Option<String>,
    /// A file holding the API key, sent as `Authorization: Bearer`.
    pub api_key_file: Option<PathBuf>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// What grammars the server takes.
    pub grammar: RemoteGrammar,
    /// The context the agent fits prompts in (`[agent] n_ctx`; the server's own when it
    /// reports a smaller one).
    pub n_ctx: usize,
    /// The model's GGUF on this machine, read for its chat template and end tokens when the
    /// server does not report them.
    pub gguf: Option<PathBuf>,
    /// The preset gives its own chat template (then none is needed from here).
    pub preset_template: bool,
    /// The endpoint tried first (`Completions`: chat only where the server has no raw
    /// completions).
    pub api: Api,
}

impl OpenAiConfig {
    pub fn new(url: impl Into<String>) -> Self {
        OpenAiConfig {
            url: url.into(),
            model: None,
            api_key_file: None,
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout: READ_TIMEOUT,
            grammar: RemoteGrammar::None,
            n_ctx: 4096,
            gguf: None,
            preset_template: false,
            api: Api::Completions,
        }
    }

    /// The way to the model, as `hearth doctor` and the start-up log say it.
    pub fn path(&self) -> String {
        let grammar = match self.grammar {
            RemoteGrammar::None => "grammars not sent",
            RemoteGrammar::Llguidance => "grammars sent as llguidance Lark",
        };
        let api = match self.api {
            Api::Completions => "raw completions (/v1/completions; chat if the server has none)",
            Api::Chat => "chat with native tool calls (/v1/chat/completions)",
        };
        format!("{}: {api}, {grammar}", client::root_of(&self.url))
    }
}

/// A token estimate of `text` where the server cannot count ([`BYTES_PER_TOKEN`]).
fn estimate(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// Whether the server failed the latest request: its going down and coming back are logged
/// once each; while it is down, token counts are estimated and warm-ups skipped.
struct Link {
    url: String,
    down: AtomicBool,
}

impl Link {
    fn answered(&self) {
        if self.down.swap(false, Ordering::SeqCst) {
            tracing::info!(url = %self.url, "the LLM server answers again");
        }
    }

    fn failed(&self, e: &EngineError) {
        if e.is_unavailable() && !self.down.swap(true, Ordering::SeqCst) {
            tracing::info!(url = %self.url, error = %e, "the LLM server stopped answering");
        }
    }

    fn is_down(&self) -> bool {
        self.down.load(Ordering::SeqCst)
    }
}

/// What the start-up learned of the server.
pub struct Contact {
    /// `GET /v1/models`: the models it serves, or why it did not answer.
    pub models: Result<Vec<String>, EngineError>,
    /// llama.cpp's `GET /props`, where the server has it.
    pub props: Option<Value>,
}

/// Ask the server what it runs (its models, and llama.cpp's props): at start and by
/// `hearth doctor`.
pub async fn contact(cfg: &OpenAiConfig) -> Result<Contact, EngineError> {
    Ok(first_contact(Arc::new(Client::of(cfg)?)).await)
}

async fn first_contact(client: Arc<Client>) -> Contact {
    let within = client.connect + client.read;
    let asked = blocking(move || {
        let models = client.models(within);
        let props = match &models {
            Ok(_) => client.props(within).ok().flatten(),
            Err(_) => None,
        };
        Contact { models, props }
    })
    .await;
    asked.unwrap_or(Contact {
        models: Err(EngineError::Gone),
        props: None,
    })
}

/// Where the chat template came from.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateSource {
    Server,
    Gguf(PathBuf),
    Preset,
}

/// The model's facts for the agent: the template from the server, else the GGUF here.
pub fn engine_info(
    cfg: &OpenAiConfig,
    contact: &Contact,
) -> Result<(EngineInfo, TemplateSource), EngineError> {
    let root = client::root_of(&cfg.url);
    let prop = |k: &str| {
        contact
            .props
            .as_ref()
            .and_then(|p| p.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let gguf = cfg
        .gguf
        .as_ref()
        .filter(|p| p.is_file())
        .map(|p| (p, super::gguf::read_meta(p)));
    let from_file = gguf.as_ref().and_then(|(_, m)| m.as_ref().ok());
    let (template, source) = match (prop("chat_template"), from_file) {
        (Some(t), _) => (Some(t), TemplateSource::Server),
        (None, Some(m)) if m.chat_template.is_some() => (
            m.chat_template.clone(),
            TemplateSource::Gguf(
                gguf.as_ref()
                    .map(|(p, _)| p.to_path_buf())
                    .unwrap_or_default(),
            ),
        ),
        (None, _) if cfg.preset_template => (None, TemplateSource::Preset),
        (None, _) => {
            let server = match &contact.models {
                Err(e) => format!("the server did not answer ({e})"),
                Ok(_) if contact.props.is_some() => "the server reports none in /props".into(),
                Ok(_) => {
                    "the server does not report one (it has no /props: llama-cpp-python)".into()
                }
            };
            let file = match (&cfg.gguf, &gguf) {
                (None, _) => "no model file is known to read it from".to_string(),
                (Some(p), None) => format!("the model file {} is not on this machine", p.display()),
                (Some(p), Some((_, Err(e)))) => format!("the model file {} {e}", p.display()),
                (Some(p), Some((_, Ok(_)))) => format!("the model file {} has none", p.display()),
            };
            return Err(EngineError::NoTemplate {
                url: root,
                why: format!("{server}, and {file}; put the model's GGUF there (`hearth models pull <preset>`: only its metadata is read) or name it with `[agent] model`, or give the preset a `chat_template`"),
            });
        }
    };
    let n_ctx = contact
        .props
        .as_ref()
        .and_then(|p| {
            p.get("default_generation_settings")
                .and_then(|d| d.get("n_ctx"))
                .or_else(|| p.get("n_ctx"))
        })
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0)
        .map_or(cfg.n_ctx, |n| n.min(cfg.n_ctx));
    let token = |k: &str, of_file: fn(&super::gguf::ModelMeta) -> Option<String>| {
        prop(k)
            .or_else(|| from_file.and_then(of_file))
            .unwrap_or_default()
    };
    let model = match (&contact.models, &cfg.model) {
        (_, Some(m)) => m.clone(),
        (Ok(ids), None) => ids.first().cloned().unwrap_or_default(),
        (Err(_), None) => String::new(),
    };
    Ok((
        EngineInfo {
            chat_template: template,
            bos_token: token("bos_token", |m| m.bos_token.clone()),
            eos_token: token("eos_token", |m| m.eos_token.clone()),
            n_ctx,
            model: format!("{model} at {root}"),
            sequences: 1,
        },
        source,
    ))
}

/// Run `f` on a thread of its own (blocking I/O that a cancel must not wait for); `None`
/// when no thread could be started (logged).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("openai".into())
        .spawn(move || {
            let _ = tx.send(f());
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no thread for a request to the LLM server");
        return None;
    }
    rx.await.ok()
}

/// Where a generation's events go: text while it runs, then `Done` once, whoever ends it
/// (the request's thread, or a cancel before it).
#[derive(Clone)]
struct Gate(Arc<Mutex<Option<mpsc::UnboundedSender<GenEvent>>>>);

impl Gate {
    fn new(tx: mpsc::UnboundedSender<GenEvent>) -> Self {
        Gate(Arc::new(Mutex::new(Some(tx))))
    }

    fn text(&self, t: String) {
        let g = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(tx) = g.as_ref() {
            let _ = tx.send(GenEvent::Text(t));
        }
    }

    fn done(&self, r: Result<GenStats, EngineError>) {
        let mut g = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(tx) = g.take() {
            let _ = tx.send(GenEvent::Done(r));
        }
    }
}

enum Job {
    Generate {
        id: u64,
        req: GenRequest,
    },
    Prefill {
        id: u64,
        prompt: String,
        reply: RpcReplyPort<Result<GenStats, EngineError>>,
    },
    Count(String, RpcReplyPort<usize>),
}

/// What the jobs share: the server, the cancel watermark (and its wake-up), the link.
struct Runner {
    client: Arc<Client>,
    cfg: Arc<OpenAiConfig>,
    cancel: CancelWatermark,
    cancels: watch::Receiver<u64>,
    link: Arc<Link>,
    tokenizer: Tokenizer,
    /// The endpoint in use.
    api: Api,
}

fn cancelled_stats() -> GenStats {
    GenStats {
        stop: Some(StopReason::Cancelled),
        ..GenStats::default()
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Runner {
    async fn run(mut self, mut jobs: mpsc::UnboundedReceiver<Job>) {
        while let Some(job) = jobs.recv().await {
            match job {
                Job::Generate { id, req } => {
                    let span = tracing::info_span!("generate", id, remote = true);
                    self.generate(id, req).instrument(span).await;
                }
                Job::Prefill { id, prompt, reply } => {
                    let span = tracing::info_span!("prefill", id, remote = true);
                    let r = self.prefill(id, prompt).instrument(span).await;
                    let _ = reply.send(r);
                }
                Job::Count(text, reply) => {
                    let n = self.count(text).await;
                    let _ = reply.send(n);
                }
            }
        }
    }

    /// The request body of a completion.
    fn body(
        &self,
        prompt: &str,
        max_tokens: usize,
        stop: &[String],
        grammar: Option<&str>,
    ) -> Value {
        let mut b = json!({
            "prompt": prompt,
            "stream": true,
            "max_tokens": max_tokens,
            // greedy, no penalty: what the in-process engine does
            "temperature": 0.0,
            "repeat_penalty": 1.0,
            "stop": stop,
        });
        if let Some(m) = &self.cfg.model {
            b["model"] = json!(m);
        }
        if let (RemoteGrammar::Llguidance, Some(g)) = (self.cfg.grammar, grammar) {
            b["grammar"] = json!(format!("%llguidance {{}}\n{g}"));
        }
        b
    }

    /// Resolves once job `id` is cancelled.
    async fn cancelled(&mut self, id: u64) {
        loop {
            if self.cancel.is_cancelled(id) {
                return;
            }
            if self.cancels.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    async fn generate(&mut self, id: u64, req: GenRequest) {
        let gate = Gate::new(req.events.clone());
        if self.cancel.is_cancelled(id) {
            gate.done(Ok(cancelled_stats()));
            return;
        }
        let mut result = self.request(id, &req, &gate).await;
        if req.chat.is_some() && self.moved_to_chat(&result) {
            result = self.request(id, &req, &gate).await;
        }
        match &result {
            Ok(s) if s.stop != Some(StopReason::Cancelled) => self.link.answered(),
            Ok(_) => {}
            Err(e) => {
                self.link.failed(e);
                tracing::debug!(error = %e, "generation failed");
            }
        }
        gate.done(result);
    }

    /// Whether `result` says the server has no raw completions: then chat from now on
    /// (said once), and true.
    fn moved_to_chat<T>(&mut self, result: &Result<T, EngineError>) -> bool {
        let missing =
            matches!(result, Err(EngineError::NoEndpoint { path, .. }) if path == COMPLETIONS);
        if !missing || self.api == Api::Chat {
            return false;
        }
        self.api = Api::Chat;
        tracing::info!(
            url = %self.client.root,
            "the LLM server has no raw completions: chat with native tool calls (/v1/chat/completions) from now on; calls the server parses are handed to the parser in the model's own call form"
        );
        true
    }

    /// One request for `req` on the endpoint in use, streamed to `gate`; a cancel ends it
    /// at once.
    async fn request(
        &mut self,
        id: u64,
        req: &GenRequest,
        gate: &Gate,
    ) -> Result<GenStats, EngineError> {
        let sending = match (self.api, &req.chat) {
            (Api::Chat, Some(chat)) => Sending {
                path: CHAT_COMPLETIONS,
                body: chat_body(chat, req.max_tokens, &req.stop, self.cfg.model.as_deref()),
                native: Some(chat.calls.clone()),
                grammar: false,
            },
            // a request with no messages (a bench's raw prompt) can only be sent raw
            _ => {
                let body = self.body(
                    &req.prompt,
                    req.max_tokens,
                    &req.stop,
                    req.grammar.as_deref(),
                );
                Sending {
                    path: COMPLETIONS,
                    grammar: body.get("grammar").is_some(),
                    body,
                    native: None,
                }
            }
        };
        let (client, cancel, halt, out) = (
            self.client.clone(),
            self.cancel.clone(),
            req.halt.clone(),
            gate.clone(),
        );
        let (stops, max_tokens) = (req.stop.clone(), req.max_tokens);
        let request = blocking(move || {
            stream_generation(
                &client,
                &sending,
                (stops, max_tokens),
                || {
                    if cancel.is_cancelled(id) {
                        Some(StopReason::Cancelled)
                    } else if halt.load(Ordering::Relaxed) {
                        Some(StopReason::Halted)
                    } else {
                        None
                    }
                },
                &out,
            )
        });
        tokio::select! {
            r = request => r.unwrap_or(Err(EngineError::Gone)),
            () = self.cancelled(id) => Ok(cancelled_stats()),
        }
    }

    async fn prefill(&mut self, id: u64, prompt: String) -> Result<GenStats, EngineError> {
        if self.cancel.is_cancelled(id) || self.link.is_down() || self.api == Api::Chat {
            // down: the next request finds out whether it is back; chat has no raw prefix
            return Ok(cancelled_stats());
        }
        let body = self.body(&prompt, 1, &[], None);
        let (client, cancel) = (self.client.clone(), self.cancel.clone());
        let started = Instant::now();
        let request = blocking(move || {
            let mut usage = sse::Usage::default();
            client
                .stream(
                    COMPLETIONS,
                    &body,
                    || cancel.is_cancelled(id),
                    |c| {
                        merge(&mut usage, c.usage);
                        Flow::More
                    },
                )
                .map(|()| usage)
        });
        let usage = tokio::select! {
            r = request => r.unwrap_or(Err(EngineError::Gone)),
            () = self.cancelled(id) => return Ok(cancelled_stats()),
        };
        if self.moved_to_chat(&usage) {
            return Ok(cancelled_stats());
        }
        let usage = match usage {
            Ok(u) => {
                self.link.answered();
                u
            }
            Err(e) => {
                self.link.failed(&e);
                return Err(e);
            }
        };
        let prompt_tokens = usage.prompt_tokens.unwrap_or_else(|| estimate(&prompt));
        let cached = usage.cached_tokens.unwrap_or(0);
        Ok(GenStats {
            prompt_tokens,
            cached_tokens: cached,
            evaluated_tokens: prompt_tokens.saturating_sub(cached),
            prompt_eval_ms: usage.prompt_ms.unwrap_or_else(|| ms(started)),
            ..GenStats::default()
        })
    }

    async fn count(&mut self, text: String) -> usize {
        let guess = estimate(&text);
        if self.link.is_down() || self.tokenizer == Tokenizer::None {
            return guess;
        }
        let (client, mut way) = (self.client.clone(), self.tokenizer);
        let within = COUNT_WITHIN.min(self.cfg.read_timeout);
        let asked = blocking(move || (client.count_tokens(&text, within, &mut way), way)).await;
        let Some((counted, way)) = asked else {
            return guess;
        };
        self.tokenizer = way;
        match counted {
            Ok(Some(n)) => {
                self.link.answered();
                n
            }
            Ok(None) => {
                tracing::info!(
                    bytes_per_token = BYTES_PER_TOKEN,
                    "the LLM server has no tokenize endpoint: token counts are estimated"
                );
                guess
            }
            Err(e) => {
                self.link.failed(&e);
                tracing::debug!(error = %e, "token count estimated");
                guess
            }
        }
    }
}

fn merge(into: &mut sse::Usage, u: sse::Usage) {
    into.prompt_tokens = u.prompt_tokens.or(into.prompt_tokens);
    into.completion_tokens = u.completion_tokens.or(into.completion_tokens);
    into.cached_tokens = u.cached_tokens.or(into.cached_tokens);
    into.prompt_ms = u.prompt_ms.or(into.prompt_ms);
}

/// The request body of a chat completion: the messages (a call's arguments as JSON
/// text, as OpenAI's API has them) and the tools; greedy, as `body`. No grammar: a chat
/// request has no raw text to hold to one.
fn chat_body(chat: &ChatPrompt, max_tokens: usize, stop: &[String], model: Option<&str>) -> Value {
    let mut messages = serde_json::to_value(&chat.messages).unwrap_or_else(|_| json!([]));
    for m in messages.as_array_mut().into_iter().flatten() {
        let calls = m.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.into_iter().flatten() {
            if let Some(args) = call.pointer_mut("/function/arguments") {
                if !args.is_string() {
                    *args = Value::String(args.to_string());
                }
            }
        }
    }
    let mut b = json!({
        "messages": messages,
        "stream": true,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stop": stop,
    });
    if chat.tools.as_array().is_some_and(|t| !t.is_empty()) {
        b["tools"] = chat.tools.clone();
    }
    if let Some(m) = model {
        b["model"] = json!(m);
    }
    b
}

/// What a generation's thread sends, and how it reads the answer.
struct Sending {
    path: &'static str,
    body: Value,
    /// Chat: the form native calls are handed to the parser in (the preset's call form, or
    /// none known); `None` for raw completions.
    native: Option<Option<super::GrammarShape>>,
    /// The body holds a grammar.
    grammar: bool,
}

/// One streamed generation, on its own thread: text through the stop scanner to `out`,
/// native calls (a chat answer's) after it in the model's own call form, the figures back.
/// `stopped` says between reads whether the agent wants no more.
fn stream_generation(
    client: &Client,
    sending: &Sending,
    (stops, max_tokens): (Vec<String>, usize),
    stopped: impl Fn() -> Option<StopReason>,
    out: &Gate,
) -> Result<GenStats, EngineError> {
    let started = Instant::now();
    let mut stats = GenStats {
        grammar: sending.grammar,
        ..GenStats::default()
    };
    let mut scanner = StopScanner::new(stops);
    let (mut finish, mut usage, mut hit) = (None::<String>, sse::Usage::default(), false);
    let mut over = false;
    let mut first = None;
    let mut calls = sse::Calls::default();
    client.stream(
        sending.path,
        &sending.body,
        || stopped().is_some(),
        |chunk| {
            merge(&mut usage, chunk.usage);
            if chunk.finish.is_some() {
                finish = chunk.finish;
            }
            if chunk.text.is_empty() && chunk.calls.is_empty() {
                return Flow::More;
            }
            first.get_or_insert_with(|| ms(started));
            stats.generated_tokens += 1;
            calls.add(chunk.calls);
            if chunk.text.is_empty() {
                return Flow::More;
            }
            let (text, at_stop) = scanner.push(&chunk.text);
            if !text.is_empty() {
                out.text(text);
            }
            if at_stop {
                hit = true;
                return Flow::Enough;
            }
            // a server that writes far past max_tokens (about a chunk a token) is stopped
            if stats.generated_tokens > 2 * max_tokens + 16 {
                over = true;
                return Flow::Enough;
            }
            match stopped() {
                Some(_) => Flow::Enough,
                None => Flow::More,
            }
        },
    )?;
    let reason = match stopped() {
        Some(r) => r,
        None if hit => StopReason::StopString,
        None => {
            let tail = scanner.finish();
            if !tail.is_empty() {
                out.text(tail);
            }
            if over || finish.as_deref() == Some("length") {
                StopReason::MaxTokens
            } else {
                StopReason::EndOfTurn
            }
        }
    };
    if !matches!(reason, StopReason::Cancelled | StopReason::Halted) && !calls.0.is_empty() {
        let form = sending.native.as_ref().and_then(Option::as_ref);
        let written = written_calls(&calls, form).map_err(|what| EngineError::BadAnswer {
            url: client.root.clone(),
            what,
        })?;
        out.text(written);
    }
    let first = first.unwrap_or_else(|| ms(started));
    stats.first_token_ms = first;
    // the server's own time when it says it; else the wait for the first token
    stats.prompt_eval_ms = usage.prompt_ms.unwrap_or(first);
    stats.generation_ms = (ms(started) - first).max(0.0);
    stats.generated_tokens = usage.completion_tokens.unwrap_or(stats.generated_tokens);
    stats.prompt_tokens = usage.prompt_tokens.unwrap_or(0);
    stats.cached_tokens = usage.cached_tokens.unwrap_or(0);
    stats.evaluated_tokens = stats.prompt_tokens.saturating_sub(stats.cached_tokens);
    stats.stop = Some(reason);
    Ok(stats)
}

/// Native calls as the model writes them (`form`: the preset's `[grammar]`), for the
/// parser to read and the schemas to check as any other output. Arguments that are no JSON
/// go as a string, which no schema of an object passes: the call is rejected, named, not
/// lost.
fn written_calls(calls: &sse::Calls, form: Option<&super::GrammarShape>) -> Result<String, String> {
    let Some(form) = form else {
        let names: Vec<&str> = calls.0.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
                "answered with native tool calls ({}), and the preset gives no call form ([grammar]) to hand them to the parser in; use a server with raw completions (/v1/completions), or a preset with [grammar]",
                names.join(", ")
            ));
    };
    let written: Vec<String> = calls
        .0
        .iter()
        .map(|(name, args)| {
            let args = if args.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.clone()))
            };
            format!(
                "{}{{\"name\": {}, {}: {args}}}{}",
                form.prefix,
                json!(name),
                json!(form.arguments_key),
                form.suffix
            )
        })
        .collect();
    Ok(written.join(&form.separator))
}

/// The actor's state.
pub struct OpenAiState {
    jobs: mpsc::UnboundedSender<Job>,
    cancel: CancelWatermark,
    cancels: watch::Sender<u64>,
    info: EngineInfo,
}

/// The remote engine actor.
pub struct OpenAiEngine;

impl OpenAiEngine {
    /// Spawn the engine: it asks the server what it runs, but starts whether it answers or
    /// not. Fails only on what no server could mend (the API key file, no chat template).
    pub async fn spawn(cfg: OpenAiConfig) -> Result<ActorRef<EngineMsg>, EngineError> {
        let (actor, _) = Actor::spawn(None, OpenAiEngine, cfg)
            .await
            .map_err(|e| match e {
                ractor::SpawnErr::StartupFailed(inner) => match inner.downcast::<EngineError>() {
                    Ok(engine) => *engine,
                    Err(other) => {
                        tracing::warn!(error = %other, "the remote engine did not start");
                        EngineError::Gone
                    }
                },
                _ => EngineError::Gone,
            })?;
        Ok(actor)
    }
}

impl Actor for OpenAiEngine {
    type Msg = EngineMsg;
    type State = OpenAiState;
    type Arguments = OpenAiConfig;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        cfg: OpenAiConfig,
    ) -> Result<Self::State, ActorProcessingErr> {
        let client = Arc::new(Client::of(&cfg)?);
        let contact = first_contact(client.clone()).await;
        let (info, source) = engine_info(&cfg, &contact)?;
        let link = Arc::new(Link {
            url: client.root.clone(),
            down: AtomicBool::new(contact.models.is_err()),
        });
        match &contact.models {
            Ok(models) => tracing::info!(?models, "the LLM server answers"),
            Err(e) => {
                tracing::warn!(error = %e, "the LLM server is not answering at start: hearth starts without it (local intents work; a request for the model is answered with an apology until it is back)");
            }
        }
        tracing::info!(
            engine = "openai",
            path = %cfg.path(),
            template = ?source,
            n_ctx = info.n_ctx,
            "remote LLM engine"
        );
        if cfg.grammar == RemoteGrammar::None {
            tracing::info!("grammars are not sent to the LLM server ([agent.openai] grammar = \"none\"): a call's syntax and arguments are not forced; the parser and each tool's schema still check every call");
        }
        let (jobs, rx) = mpsc::unbounded_channel();
        let cancel = CancelWatermark::new();
        let (cancels, cancels_rx) = watch::channel(0u64);
        let api = cfg.api;
        let runner = Runner {
            client,
            cfg: Arc::new(cfg),
            cancel: cancel.clone(),
            cancels: cancels_rx,
            link,
            tokenizer: Tokenizer::Unknown,
            api,
        };
        tokio::spawn(runner.run(rx).instrument(tracing::info_span!("remote_llm")));
        Ok(OpenAiState {
            jobs,
            cancel,
            cancels,
            info,
        })
    }

    /// Whatever is under way is cancelled: the runner ends once its queue closes.
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.cancel.cancel_all();
        state.cancels.send_modify(|n| *n += 1);
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
                if let Err(mpsc::error::SendError(Job::Generate { req, .. })) =
                    state.jobs.send(Job::Generate { id, req })
                {
                    let _ = req.events.send(GenEvent::Done(Err(EngineError::Gone)));
                }
            }
            EngineMsg::Prefill(prompt, reply) => {
                let id = state.cancel.issue();
                if let Err(mpsc::error::SendError(Job::Prefill { reply, .. })) =
                    state.jobs.send(Job::Prefill { id, prompt, reply })
                {
                    let _ = reply.send(Err(EngineError::Gone));
                }
            }
            EngineMsg::Cancel => {
                state.cancel.cancel_all();
                state.cancels.send_modify(|n| *n += 1);
            }
            EngineMsg::CountTokens(text, reply) => {
                if let Err(mpsc::error::SendError(Job::Count(text, reply))) =
                    state.jobs.send(Job::Count(text, reply))
                {
                    let _ = reply.send(estimate(&text));
                }
            }
            // the server compiles what it is sent, when it is sent
            EngineMsg::Compile(_) => {}
            EngineMsg::Info(reply) => {
                let _ = reply.send(state.info.clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(models: Result<Vec<String>, EngineError>, props: Option<Value>) -> Contact {
        Contact { models, props }
    }

    #[test]
    fn the_template_is_the_server_s_else_the_file_s_else_the_preset_s() {
        let mut cfg = OpenAiConfig::new("http://gpu-box:8080/v1");
        let props = json!({
            "chat_template": "{{ messages }}",
            "bos_token": "<s>",
            "eos_token": "</s>",
            "default_generation_settings": {"n_ctx": 2048},
        });
        let (info, source) =
            engine_info(&cfg, &contact(Ok(vec!["qwen".into()]), Some(props))).unwrap();
        assert_eq!(source, TemplateSource::Server);
        assert_eq!(info.chat_template.as_deref(), Some("{{ messages }}"));
        assert_eq!(
            (info.bos_token.as_str(), info.eos_token.as_str()),
            ("<s>", "</s>")
        );
        assert_eq!(info.n_ctx, 2048, "the server's smaller context");
        assert_eq!(info.model, "qwen at http://gpu-box:8080");

        // llama-cpp-python: no /props; a preset that brings its own template needs no file
        cfg.preset_template = true;
        let (info, source) = engine_info(&cfg, &contact(Ok(vec![]), None)).unwrap();
        assert_eq!(
            (source, info.chat_template, info.n_ctx),
            (TemplateSource::Preset, None, 4096)
        );

        // none at all: start-up fails, saying what was tried and what to do
        cfg.preset_template = false;
        cfg.gguf = Some(PathBuf::from("/nonexistent/model.gguf"));
        let down = EngineError::Unreachable {
            url: "http://gpu-box:8080".into(),
            reason: "connection refused".into(),
        };
        let e = engine_info(&cfg, &contact(Err(down), None))
            .unwrap_err()
            .to_string();
        for want in [
            "http://gpu-box:8080",
            "did not answer",
            "/nonexistent/model.gguf is not on this machine",
            "hearth models pull",
            "chat_template",
        ] {
            assert!(e.contains(want), "{want}: {e}");
        }
        let e = engine_info(&cfg, &contact(Ok(vec![]), None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no /props"), "{e}");
    }

    #[test]
    fn the_way_to_the_model_names_the_server_and_the_grammar() {
        let mut cfg = OpenAiConfig::new("http://gpu-box:8080/v1/");
        assert_eq!(
            cfg.path(),
            "http://gpu-box:8080: raw completions (/v1/completions; chat if the server has none), grammars not sent"
        );
        cfg.grammar = RemoteGrammar::Llguidance;
        assert!(cfg.path().ends_with("grammars sent as llguidance Lark"));
        cfg.api = Api::Chat;
        assert!(cfg
            .path()
            .contains("chat with native tool calls (/v1/chat/completions)"));
        assert_eq!(estimate("abcdefg"), 3);
        assert_eq!(estimate(""), 0);
    }

    #[test]
    fn native_calls_are_written_in_the_model_s_own_call_form() {
        let mut calls = sse::Calls::default();
        calls.add(vec![
            sse::CallPiece {
                index: 0,
                name: Some("set_light".into()),
                arguments: "{\"room\": \"kit".into(),
            },
            sse::CallPiece {
                index: 0,
                name: Some("set_light".into()),
                arguments: "chen\", \"on\": true}".into(),
            },
            sse::CallPiece {
                index: 1,
                name: Some("get_time".into()),
                arguments: String::new(),
            },
        ]);
        let hermes = super::super::GrammarShape {
            prefix: "<tool_call>\n".into(),
            suffix: "\n</tool_call>".into(),
            separator: "\n".into(),
            arguments_key: "arguments".into(),
        };
        assert_eq!(
            written_calls(&calls, Some(&hermes)).unwrap(),
            "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\":\"kitchen\",\"on\":true}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"
        );
        // arguments that are no JSON stay a string (the schema rejects it, by name)
        let mut broken = sse::Calls::default();
        broken.add(vec![sse::CallPiece {
            index: 0,
            name: Some("set_light".into()),
            arguments: "{\"room\": ".into(),
        }]);
        let w = written_calls(&broken, Some(&hermes)).unwrap();
        assert!(w.contains(r#""arguments": "{\"room\": ""#), "{w}");
        // no call form: an error naming the calls and the fix
        let e = written_calls(&calls, None).unwrap_err();
        assert!(
            e.contains("set_light, get_time") && e.contains("[grammar]"),
            "{e}"
        );
    }

    #[test]
    fn a_chat_body_carries_the_messages_with_arguments_as_json_text() {
        use crate::llm::ChatMessage;
        let chat = ChatPrompt {
            messages: vec![
                ChatMessage::system("be brief"),
                ChatMessage::user("turn on the kitchen light"),
                ChatMessage::assistant_calls(
                    String::new(),
                    [(
                        "call_1".to_string(),
                        "set_light".to_string(),
                        json!({"room": "kitchen", "on": true}),
                    )],
                ),
            ],
            tools: json!([{"type": "function", "function": {"name": "set_light"}}]),
            calls: None,
        };
        let b = chat_body(&chat, 64, &["<|im_end|>".to_string()], Some("qwen"));
        let m = &b["messages"];
        assert_eq!(
            (m[0]["role"].as_str(), m[1]["content"].as_str()),
            (Some("system"), Some("turn on the kitchen light"))
        );
        let args = &m[2]["tool_calls"][0]["function"]["arguments"];
        let text = args.as_str().unwrap_or_else(|| panic!("not text: {args}"));
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            json!({"room": "kitchen", "on": true})
        );
        assert_eq!(b["tools"][0]["function"]["name"], "set_light");
        assert_eq!(
            (
                b["model"].clone(),
                b["max_tokens"].clone(),
                b["stream"].clone()
            ),
            (json!("qwen"), json!(64), json!(true))
        );
        assert!(b.get("prompt").is_none() && b.get("grammar").is_none());
        // no tools: no `tools` key (some servers refuse an empty list)
        let bare = ChatPrompt {
            tools: json!([]),
            ..chat
        };
        assert!(chat_body(&bare, 64, &[], None).get("tools").is_none());
    }
}
