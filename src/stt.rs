//! Stt: the speech recognition stage, a Wyoming client.
//!
//! Recognition runs in another process: by default a `hearth-stt` child (whisper-rs, its own
//! package: whisper.cpp and llama.cpp bundle different ggml copies that cannot share a
//! binary) spoken to over its stdin/stdout, or any Wyoming ASR server by TCP address (a
//! bigger box in the house, Home Assistant's `wyoming-faster-whisper`). A crash or a ggml
//! abort there never takes the agent down: the actor notices (a broken pipe, end of stream,
//! an unanswered `describe`, the child's exit), starts or reconnects it with backoff, and
//! retries the utterance it was working on once.
//!
//! ```text
//! Transcribe(Utterance) ──► transcribe, audio-start, audio-chunk…, audio-stop ──► server
//!            Heard ◄──────────────────────────────── transcript | error ◄──┘
//! ```
//!
//! While idle, a `describe` every [`SttConfig::health_every`] checks the server answers with
//! its `info` (every Wyoming server answers `describe`; `ping` is optional, and
//! `wyoming-faster-whisper` ignores it).
//!
//! Every wait has a total deadline, never one per event: an utterance gets
//! [`SttConfig::utterance_timeout`] for everything (sending its audio, waiting for the
//! transcript, a retry on a fresh connection), and a start or a probe its own limit for the
//! whole `describe` → `info` exchange. A server that sends `ping`s or other events forever, or
//! stops reading the audio, costs one utterance its deadline, never the Stt stage.
//!
//! A child's stdio is one long session. A TCP server gets one connection per utterance, as
//! Home Assistant's client does it: Wyoming ASR servers such as `wyoming-faster-whisper` close
//! the connection after each `transcript`, and a connection held open between utterances
//! would only find that out when the next one is sent.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use wyoming::{
    AudioChunk, AudioFormat, AudioStart, AudioStop, Describe, ErrorEvent, EventReader, Eventable,
    Info, Transcribe, Transcript,
};

use crate::intent::PhraseSet;
use crate::phrases::{expected_words, house_phrases};
use crate::tools::{Registry, ToolsMsg};
use crate::voice::{Heard, Hold, Utterance};

/// Samples per `audio-chunk` (64 ms at 16 kHz).
const CHUNK_SAMPLES: usize = 1024;

/// Lines of the child's stderr kept for error messages.
const STDERR_TAIL: usize = 12;

/// Default [`SttConfig::utterance_timeout`]: 30 s, fixed rather than scaled with the utterance.
/// What the recogniser has to do is bounded whatever the length: utterances are at most
/// `[listen] max_utterance_ms` (15 s by default) and whisper's window at most 30 s, which the
/// tiny and base models go through in a second or a few on the boards hearth targets
/// (kitchen.wav in 0.1 s, tiny.en, 2 threads). 30 s leaves room for a child restarted and its
/// model loaded again within the same utterance, and a person has given up on the reply long
/// before it passes.
pub(crate) const UTTERANCE_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the recogniser is.
#[derive(Debug, Clone, PartialEq)]
pub enum SttServer {
    /// Start `hearth-stt` as a child and speak Wyoming on its stdin/stdout.
    Spawn {
        /// The `hearth-stt` executable.
        program: PathBuf,
        /// The whisper.cpp model it loads (`--model`).
        model: PathBuf,
        /// More arguments (`--threads 2`, `--prompt "kitchen bedroom"`, ...).
        args: Vec<String>,
    },
    /// Connect to a Wyoming ASR server: `HOST:PORT` or `tcp://HOST:PORT`.
    Connect(String),
}

/// `hearth-stt` beside the running executable (an installed or `cargo build` layout), if
/// it is there.
pub(crate) fn beside_executable() -> Option<PathBuf> {
    crate::models::exe_dir()
        .map(|d| d.join("hearth-stt"))
        .filter(|p| p.is_file())
}

impl SttServer {
    /// Spawn `hearth-stt` with this model: the executable beside the running one if it is
    /// there (an installed or `cargo build` layout), else `hearth-stt` from `PATH`.
    pub fn spawn_default(model: PathBuf) -> SttServer {
        SttServer::Spawn {
            program: beside_executable().unwrap_or_else(|| PathBuf::from("hearth-stt")),
            model,
            args: Vec::new(),
        }
    }

    fn describe(&self) -> String {
        match self {
            SttServer::Spawn { program, .. } => program.display().to_string(),
            SttServer::Connect(addr) => format!("tcp://{}", tcp_addr(addr)),
        }
    }
}

fn tcp_addr(addr: &str) -> &str {
    addr.strip_prefix("tcp://").unwrap_or(addr)
}

/// How the Stt actor reaches and watches its recogniser.
#[derive(Debug, Clone)]
pub struct SttConfig {
    /// The recogniser.
    pub server: SttServer,
    /// Language asked for in `transcribe` (None: the server's default).
    pub language: Option<String>,
    /// Model asked for in `transcribe` (None: the server's choice).
    pub model_name: Option<String>,
    /// How long a start may take: spawning, loading the model, answering `describe`.
    pub start_timeout: Duration,
    /// How long one utterance may take in all: reaching the recogniser, sending the audio,
    /// waiting for the transcript, and the one retry on a fresh connection (a restarted child)
    /// when the first was lost. Events that are not the answer (`ping`, a streaming server's
    /// partial transcripts) do not extend it. `[stt] timeout_s`.
    pub utterance_timeout: Duration,
    /// Idle health check period (`describe`); `Duration::ZERO` turns it off.
    pub health_every: Duration,
    /// First wait before restarting after a failed start; doubles up to `backoff_max`.
    pub backoff_min: Duration,
    /// Longest wait between restarts.
    pub backoff_max: Duration,
    /// Where the house's phrase set comes from, for a server that holds transcripts to it
    /// (hearth-stt); `None`: open transcripts only.
    pub phrases: Option<PhraseSource>,
}

/// The house's phrase set's makings: the tools (their intents; followed as they change),
/// fixed phrases (the stop words), the answers to a question (yes, no) and the phrases that
/// may lead a request (the wake words).
#[derive(Debug, Clone)]
pub struct PhraseSource {
    pub tools: ActorRef<ToolsMsg>,
    pub fixed: &'static [&'static str],
    pub lead: Vec<String>,
    /// Whether the set carries the words to expect (the wake words, then the tools'
    /// [`Registry::vocabulary`]) as the recogniser's prompt, so that they follow the tools
    /// (the house found after the recogniser started, a device added). `false` when
    /// `[stt] prompt` names the words.
    pub expect: bool,
}

/// The largest phrase set sent (its JSON): hearth-stt's default limit on an event's payload
/// (`--max-audio-bytes`); a bigger event would end the connection. The demo home's is 0.6 MB.
pub(crate) const MAX_PHRASES_BYTES: usize = 2 * 1024 * 1024;

impl PhraseSource {
    /// The set for `registry`.
    fn phrases(&self, registry: &Registry) -> Result<SttPhrases, SttError> {
        let set = house_phrases(registry, self.fixed);
        let prompt = self.expect.then(|| expected_words(&self.lead, registry));
        let phrases = SttPhrases::of(&set, self.lead.clone(), prompt)?;
        if phrases.grammar.len() > MAX_PHRASES_BYTES {
            return Err(SttError::Actor(format!(
                "the house's phrase set is {} bytes as JSON, over the {MAX_PHRASES_BYTES} a \
                 recogniser takes in one event ({} forms): fewer sentences per tool, or \
                 `[stt] phrases = false`",
                phrases.grammar.len(),
                phrases.forms
            )));
        }
        Ok(phrases)
    }

    /// The set for `registry`, or `None` (said in the log: transcripts are then open ones).
    fn phrases_or_warn(&self, registry: &Registry) -> Option<Arc<SttPhrases>> {
        match self.phrases(registry) {
            Ok(p) => {
                tracing::info!(id = %p.id, forms = p.forms, bytes = p.grammar.len(), "the house's phrase set");
                Some(Arc::new(p))
            }
            Err(e) => {
                tracing::warn!(error = %e, "no phrase set: transcripts are open ones");
                None
            }
        }
    }
}

/// The house's phrase set as it goes to the recogniser, and followed here (whether a
/// transcript is a whole request that no longer one continues).
#[derive(Debug, Clone)]
pub(crate) struct SttPhrases {
    /// Its id (the grammar's contents').
    pub id: String,
    /// The grammar as JSON.
    pub grammar: Vec<u8>,
    /// Its sentence forms.
    pub forms: usize,
    matcher: hearth_phrases::Matcher,
}

impl SttPhrases {
    /// The set, with `lead` (the wake words) allowed before a request, and `prompt` the
    /// words the recogniser is to expect with it.
    pub fn of(
        set: &PhraseSet,
        lead: Vec<String>,
        prompt: Option<String>,
    ) -> Result<SttPhrases, SttError> {
        let mut grammar = set.grammar();
        grammar.lead = lead;
        grammar.prompt = prompt.filter(|p| !p.trim().is_empty());
        let json = serde_json::to_vec(&grammar)
            .map_err(|e| SttError::Actor(format!("the phrase set could not be written: {e}")))?;
        let matcher = hearth_phrases::Matcher::new(&grammar)
            .map_err(|e| SttError::Actor(format!("the phrase set cannot be followed: {e}")))?;
        Ok(SttPhrases {
            id: grammar.id(),
            grammar: json,
            forms: grammar.forms.len(),
            matcher,
        })
    }

    /// How `text` as a whole stands against the set: a request that ends there, one a longer
    /// request of the set may continue, or neither.
    pub fn whole(&self, text: &str) -> hearth_phrases::Whole {
        self.matcher.whole(text)
    }
}

impl SttConfig {
    /// Defaults for a server: 60 s to start, 30 s per utterance ([`UTTERANCE_TIMEOUT`]), a
    /// probe every 10 s, restart backoff 0.2 s doubling to 10 s.
    pub fn new(server: SttServer) -> SttConfig {
        SttConfig {
            server,
            language: None,
            model_name: None,
            start_timeout: Duration::from_secs(60),
            utterance_timeout: UTTERANCE_TIMEOUT,
            health_every: Duration::from_secs(10),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(10),
            phrases: None,
        }
    }
}

/// What can go wrong in speech recognition.
#[derive(Debug, thiserror::Error)]
pub enum SttError {
    /// The whisper model to hand to `hearth-stt` does not exist.
    #[error("the speech recognition model {} does not exist: {}, or point [stt] model (or --stt-model) at a whisper.cpp ggml file such as ggml-tiny.en.bin", .0.display(), crate::speech_models::how_to_get(.0))]
    ModelMissing(PathBuf),
    /// `hearth-stt` could not be started.
    #[error("cannot start the speech recogniser {program}: {source}. Build it with `cargo build --release -p hearth-stt` (it installs beside `hearth`), or set [stt] program")]
    Spawn {
        /// The executable.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TCP server could not be reached.
    #[error("cannot connect to the Wyoming ASR server at {addr}: {source}. Is it running and listening there?")]
    Connect {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The recogniser went away: the child exited, or the stream ended or broke.
    #[error("the speech recogniser {server} went away ({why}){log}")]
    Lost {
        /// Which.
        server: String,
        /// What was seen: end of stream, broken pipe, exit status.
        why: String,
        /// The last lines of the child's stderr, if any (starts with a newline).
        log: String,
    },
    /// No answer in time (starting, or answering a probe).
    #[error("the speech recogniser {server} did not answer within {} s while {during}", secs_text(*.secs))]
    Timeout {
        /// Which.
        server: String,
        /// What it was doing.
        during: &'static str,
        /// The limit.
        secs: f64,
    },
    /// One utterance was not transcribed within [`SttConfig::utterance_timeout`].
    #[error("the speech recogniser {server} did not transcribe the utterance within {} s ([stt] timeout_s); it was {during}{others}. Check that it is running and not overloaded (its log), try a smaller model, or raise [stt] timeout_s", secs_text(*.secs))]
    UtteranceTimeout {
        /// Which.
        server: String,
        /// The deadline.
        secs: f64,
        /// What the exchange was doing when it passed.
        during: &'static str,
        /// The events the server sent that were not the answer, if any (starts with `; `).
        others: String,
    },
    /// The server's `info` offers no speech recognition.
    #[error("{0} answered `describe` without a speech recognition program: it is not a Wyoming ASR server")]
    NoAsr(String),
    /// The server answered the utterance with an `error` event.
    #[error("the speech recogniser failed on this utterance: {text}{}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Server {
        /// Its message.
        text: String,
        /// Its code.
        code: Option<String>,
    },
    /// A protocol error on the stream (the stream is no longer in step).
    #[error("Wyoming protocol error from {server}: {source}")]
    Protocol {
        /// Which.
        server: String,
        /// What.
        source: wyoming::Error,
    },
    /// The actor is gone.
    #[error("the Stt actor is not running: {0}")]
    Actor(String),
}

impl SttError {
    /// True when the connection is unusable after this error (restart and maybe retry).
    fn connection_lost(&self) -> bool {
        matches!(
            self,
            SttError::Lost { .. }
                | SttError::Timeout { .. }
                | SttError::UtteranceTimeout { .. }
                | SttError::Protocol { .. }
        )
    }
}

/// Seconds for a message: `30`, `0.5`.
fn secs_text(secs: f64) -> String {
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs:.1}")
    }
}

/// How far one utterance's exchange got: what the error says when its deadline passes.
#[derive(Debug)]
struct Progress {
    /// What it was doing.
    during: &'static str,
    /// Events received that were not the answer (`ping`, partial transcripts, ...).
    others: u64,
    /// The type of the last of them.
    last_other: Option<String>,
}

impl Progress {
    fn new() -> Self {
        Progress {
            during: "reaching it",
            others: 0,
            last_other: None,
        }
    }

    fn timeout(&self, server: String, limit: Duration) -> SttError {
        let others = match &self.last_other {
            Some(kind) => format!(
                "; meanwhile it sent {} event{} that {} not the answer (the last: `{kind}`)",
                self.others,
                if self.others == 1 { "" } else { "s" },
                if self.others == 1 { "was" } else { "were" },
            ),
            None => String::new(),
        };
        SttError::UtteranceTimeout {
            server,
            secs: limit.as_secs_f64(),
            during: self.during,
            others,
        }
    }
}

/// The recogniser as the health check sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SttHealth {
    /// The server (executable or address).
    pub server: String,
    /// The child's process id (spawned servers).
    pub pid: Option<u32>,
    /// Restarts so far (after a lost child or connection; a TCP server's planned
    /// connection per utterance is not one).
    pub restarts: u32,
    /// The `describe` → `info` round trip, ms (with a TCP server: connecting included).
    pub probe_ms: f64,
    /// The model names the server's `info` lists.
    pub models: Vec<String>,
}

/// Messages to the [`Stt`] actor.
pub enum SttMsg {
    /// Transcribe one utterance, held to the house's phrase set or not.
    Transcribe(Utterance, Hold, RpcReplyPort<Result<Heard, SttError>>),
    /// Probe the server now (restarting it if needed) and report.
    Health(RpcReplyPort<Result<SttHealth, SttError>>),
    /// Timer: the idle health check.
    Tick,
    /// The tools changed: the house's phrase set is made again.
    ToolsChanged(Arc<Registry>),
}

/// Transcribe one request through the actor.
pub async fn transcribe(stt: &ActorRef<SttMsg>, utterance: Utterance) -> Result<Heard, SttError> {
    transcribe_as(stt, utterance, Hold::House).await
}

/// Transcribe one utterance through the actor, held as `hold` says.
pub async fn transcribe_as(
    stt: &ActorRef<SttMsg>,
    utterance: Utterance,
    hold: Hold,
) -> Result<Heard, SttError> {
    ractor::call!(stt, SttMsg::Transcribe, utterance, hold)
        .map_err(|e| SttError::Actor(e.to_string()))?
}

/// Ask the actor for a health report.
pub async fn health(stt: &ActorRef<SttMsg>) -> Result<SttHealth, SttError> {
    ractor::call!(stt, SttMsg::Health).map_err(|e| SttError::Actor(e.to_string()))?
}

/// The Stt actor. Its argument is the [`SttConfig`]; it starts the server in `pre_start`,
/// so a recogniser that cannot start fails the spawn with the reason.
pub struct Stt;

/// The actor's state.
pub struct SttState {
    config: SttConfig,
    conn: Option<Conn>,
    /// The house's phrase set as it stands.
    phrases: Option<Arc<SttPhrases>>,
    /// The last connection was lost (not closed as planned): the next start is a restart.
    lost: bool,
    restarts: u32,
    failed_starts: u32,
}

type Reader = EventReader<BufReader<Box<dyn AsyncRead + Send + Unpin>>>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// One live connection to a recogniser.
struct Conn {
    reader: Reader,
    writer: Writer,
    child: Option<tokio::process::Child>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task reading the child's stderr (done at the pipe's end).
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    models: Vec<String>,
    /// The server takes phrase sets (hearth-stt's `info` says so).
    takes_phrases: bool,
    /// The phrase set this connection's server has loaded (its id), or refused.
    phrases: Option<(String, bool)>,
}

impl Conn {
    fn log_tail(&self) -> String {
        let tail = match self.stderr.lock() {
            Ok(t) => t.iter().cloned().collect::<Vec<_>>(),
            Err(_) => Vec::new(),
        };
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its last log lines:\n{}", tail.join("\n"))
        }
    }

    /// Why the stream ended: the child's exit status if it has exited.
    async fn why_gone(&mut self, seen: &str) -> String {
        if let Some(child) = &mut self.child {
            // give a dying child a moment to be reaped
            if let Ok(Ok(status)) =
                tokio::time::timeout(Duration::from_millis(500), child.wait()).await
            {
                // and its last words read, so the error can quote them
                if let Some(task) = self.stderr_task.take() {
                    let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
                }
                return format!("{seen}; it exited with {status}");
            }
        }
        seen.to_string()
    }
}

impl Actor for Stt {
    type Msg = SttMsg;
    type State = SttState;
    type Arguments = SttConfig;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        config: SttConfig,
    ) -> Result<Self::State, ActorProcessingErr> {
        let conn = start(&config).await?;
        tracing::info!(server = %config.server.describe(), pid = ?conn.child.as_ref().and_then(|c| c.id()), models = ?conn.models, "stt ready");
        if !config.health_every.is_zero() {
            myself.send_interval(config.health_every, || SttMsg::Tick);
        }
        let mut phrases = None;
        if let Some(source) = &config.phrases {
            match ractor::call!(source.tools, ToolsMsg::Snapshot) {
                Ok(registry) => phrases = source.phrases_or_warn(&registry),
                Err(e) => {
                    tracing::warn!(error = %e, "the tools actor did not answer: no phrase set until the tools change")
                }
            }
            let _ = source.tools.cast(ToolsMsg::Subscribe(Box::new(move |port| {
                port.subscribe(myself, |r| Some(SttMsg::ToolsChanged(r)));
            })));
        }
        let mut state = SttState {
            config,
            conn: Some(conn),
            phrases,
            lost: false,
            restarts: 0,
            failed_starts: 0,
        };
        // a TCP server was only checked: each utterance gets its own connection
        state.close_tcp();
        Ok(state)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SttMsg::Transcribe(utterance, hold, reply) => {
                let result = state.transcribe(&utterance, hold).await;
                if reply.send(result).is_err() {
                    tracing::warn!("transcript dropped: the caller is gone");
                }
            }
            SttMsg::Health(reply) => {
                let result = state.check().await;
                let _ = reply.send(result);
            }
            SttMsg::Tick => {
                if let Err(e) = state.check().await {
                    tracing::warn!(error = %e, "stt health check failed; will retry");
                }
            }
            SttMsg::ToolsChanged(registry) => state.follow(&registry),
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(mut conn) = state.conn.take() {
            if let Some(child) = &mut conn.child {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
        Ok(())
    }
}

impl SttState {
    /// The live connection, starting the server first (after the backoff) if there is none.
    async fn conn(&mut self) -> Result<&mut Conn, SttError> {
        if self.conn.is_none() {
            if self.failed_starts > 0 {
                let wait = backoff(&self.config, self.failed_starts);
                tracing::info!(
                    wait_ms = wait.as_millis() as u64,
                    "stt: waiting before restart"
                );
                tokio::time::sleep(wait).await;
            }
            match start(&self.config).await {
                Ok(conn) => {
                    self.failed_starts = 0;
                    if self.lost {
                        self.lost = false;
                        self.restarts += 1;
                        tracing::warn!(restarts = self.restarts, pid = ?conn.child.as_ref().and_then(|c| c.id()), "stt restarted");
                    }
                    self.conn = Some(conn);
                }
                Err(e) => {
                    self.failed_starts = self.failed_starts.saturating_add(1);
                    return Err(e);
                }
            }
        }
        match self.conn.as_mut() {
            Some(c) => Ok(c),
            None => Err(SttError::Actor("no connection after a start".into())),
        }
    }

    /// Drop a lost connection (killing a child): the next start counts as a restart.
    async fn drop_conn(&mut self) {
        self.lost = true;
        if let Some(mut conn) = self.conn.take() {
            if let Some(child) = &mut conn.child {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }

    /// Makes the phrase set again for the tools as they now are.
    fn follow(&mut self, registry: &Registry) {
        if let Some(source) = &self.config.phrases {
            self.phrases = source.phrases_or_warn(registry);
        }
    }

    async fn transcribe(&mut self, utterance: &Utterance, hold: Hold) -> Result<Heard, SttError> {
        let span = tracing::info_span!("stt", secs = utterance.secs());
        let _enter = span.enter();
        // the next prompt's warm-up waits meanwhile (two cores: `crate::cpu`)
        let _recognising = crate::cpu::recognising();
        let started = Instant::now();
        let limit = self.config.utterance_timeout;
        let deadline = tokio::time::Instant::now() + limit;
        let pcm = utterance.pcm16();
        let mut progress = Progress::new();
        let mut last = None;
        // one retry on a fresh connection when the recogniser went away under us; both
        // attempts (and the restart between them) within the one deadline
        for attempt in 0..2 {
            let config = self.config.clone();
            let phrases = self.phrases.clone().filter(|_| hold == Hold::House);
            progress.during = "reaching it";
            let attempted = tokio::time::timeout_at(deadline, async {
                let conn = self.conn().await?;
                let ask = Ask {
                    config: &config,
                    phrases: phrases.as_deref(),
                };
                Ok::<_, SttError>(exchange(conn, ask, &pcm, &mut progress).await)
            })
            .await;
            let exchanged = match attempted {
                Ok(Ok(exchanged)) => exchanged,
                Ok(Err(start_failed)) => return Err(start_failed),
                Err(_) => {
                    let e = progress.timeout(config.server.describe(), limit);
                    tracing::warn!(error = %e, attempt, "stt: utterance deadline passed; dropping the connection");
                    // the stream is out of step, and a child may be stuck: start afresh (a
                    // start cut short by the deadline left nothing to drop)
                    if self.conn.is_some() {
                        self.drop_conn().await;
                    }
                    return Err(e);
                }
            };
            match exchanged {
                Ok(transcript) => {
                    self.close_tcp();
                    let stt_ms = started.elapsed().as_secs_f64() * 1e3;
                    let text = transcript.text.trim().to_string();
                    let pass = transcript.phrase_pass;
                    tracing::info!(
                        stt_ms,
                        chars = text.chars().count(),
                        attempt,
                        phrase_taken = pass.as_ref().map(|p| p.taken),
                        phrase_ms = pass.as_ref().map(|p| p.ms),
                        "heard"
                    );
                    tracing::info!(target: crate::logs::TRANSCRIPT, %text, open = pass.as_ref().map(|p| p.open.as_str()), "what was heard");
                    let whole = phrases.as_ref().map(|p| p.whole(&text)).unwrap_or_default();
                    return Ok(Heard {
                        text,
                        endpointed_at: utterance.endpointed_at,
                        stt_ms,
                        phrase_pass: pass,
                        whole,
                    });
                }
                Err(e) if e.connection_lost() => {
                    tracing::warn!(error = %e, attempt, "stt connection lost; restarting");
                    self.drop_conn().await;
                    last = Some(e);
                }
                Err(e) => {
                    self.close_tcp();
                    return Err(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| SttError::Actor("no attempt made".into())))
    }

    /// A TCP server's connection ends with its utterance (or probe): closed as planned,
    /// not lost. A child's stdio stays open.
    fn close_tcp(&mut self) {
        if matches!(self.config.server, SttServer::Connect(_)) {
            self.conn = None;
        }
    }

    /// Health: the server answers `describe` with `info` (a child must also still be
    /// running); restarts (reconnects) it otherwise.
    async fn check(&mut self) -> Result<SttHealth, SttError> {
        let config = self.config.clone();
        for attempt in 0..2 {
            let t = Instant::now();
            // a connection started just now has answered `describe` in its handshake
            let fresh = self.conn.is_none();
            let conn = self.conn().await?;
            let probed = if fresh {
                Ok(())
            } else {
                probe(conn, &config).await
            };
            match probed {
                Ok(()) => {
                    let probe_ms = t.elapsed().as_secs_f64() * 1e3;
                    let pid = conn.child.as_ref().and_then(|c| c.id());
                    let models = conn.models.clone();
                    self.close_tcp();
                    return Ok(SttHealth {
                        server: config.server.describe(),
                        pid,
                        restarts: self.restarts,
                        probe_ms,
                        models,
                    });
                }
                Err(e) if attempt == 0 => {
                    tracing::warn!(error = %e, "stt does not answer describe; restarting");
                    self.drop_conn().await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(SttError::Actor("health check gave up".into()))
    }
}

fn backoff(config: &SttConfig, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
    config
        .backoff_min
        .saturating_mul(factor)
        .min(config.backoff_max)
}

/// Start (spawn or connect) and handshake: `describe` → `info` with an ASR program.
async fn start(config: &SttConfig) -> Result<Conn, SttError> {
    let server = config.server.describe();
    let mut conn = match &config.server {
        SttServer::Spawn {
            program,
            model,
            args,
        } => {
            if !model.is_file() {
                return Err(SttError::ModelMissing(model.clone()));
            }
            let mut cmd = tokio::process::Command::new(program);
            cmd.arg("--model")
                .arg(model)
                .arg("--uri")
                .arg("stdio://")
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            let mut child = cmd.spawn().map_err(|source| SttError::Spawn {
                program: server.clone(),
                source,
            })?;
            if let Some(pid) = child.id() {
                // its recognising is this program's work, not another's load on the model's cores
                hearth_cores::count_as_ours(pid);
            }
            let (Some(stdin), Some(stdout), Some(stderr)) =
                (child.stdin.take(), child.stdout.take(), child.stderr.take())
            else {
                return Err(SttError::Lost {
                    server,
                    why: "its stdio could not be captured".into(),
                    log: String::new(),
                });
            };
            let tail = Arc::new(Mutex::new(VecDeque::new()));
            let stderr_task = forward_stderr(stderr, Arc::clone(&tail), child.id());
            let read: Box<dyn AsyncRead + Send + Unpin> = Box::new(stdout);
            Conn {
                reader: EventReader::new(BufReader::new(read)),
                writer: Box::new(stdin),
                child: Some(child),
                stderr: tail,
                stderr_task: Some(stderr_task),
                models: Vec::new(),
                takes_phrases: false,
                phrases: None,
            }
        }
        SttServer::Connect(addr) => {
            let addr = tcp_addr(addr).to_string();
            let stream =
                tokio::time::timeout(config.start_timeout, tokio::net::TcpStream::connect(&addr))
                    .await
                    .map_err(|_| SttError::Timeout {
                        server: server.clone(),
                        during: "connecting",
                        secs: config.start_timeout.as_secs_f64(),
                    })?
                    .map_err(|source| SttError::Connect {
                        addr: addr.clone(),
                        source,
                    })?;
            let _ = stream.set_nodelay(true);
            let (read, write) = stream.into_split();
            let read: Box<dyn AsyncRead + Send + Unpin> = Box::new(read);
            Conn {
                reader: EventReader::new(BufReader::new(read)),
                writer: Box::new(write),
                child: None,
                stderr: Arc::new(Mutex::new(VecDeque::new())),
                stderr_task: None,
                models: Vec::new(),
                takes_phrases: false,
                phrases: None,
            }
        }
    };
    let info = describe(&mut conn, &server, config.start_timeout, "starting up").await?;
    if info.asr.is_empty() {
        return Err(SttError::NoAsr(server));
    }
    conn.models = info
        .asr
        .iter()
        .flat_map(|p| p.models.iter().map(|m| m.name.clone()))
        .collect();
    conn.takes_phrases = info.asr.iter().any(|p| p.supports_phrases);
    Ok(conn)
}

/// The child's stderr, line by line, into the log (and the tail kept for errors).
fn forward_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    pid: Option<u32>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(target: "hearth_stt", pid = ?pid, "{line}");
            if let Ok(mut t) = tail.lock() {
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        }
    })
}

async fn send(conn: &mut Conn, server: &str, event: &wyoming::Event) -> Result<(), SttError> {
    match wyoming::write_event(&mut conn.writer, event).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let why = conn.why_gone(&format!("writing failed: {e}")).await;
            Err(SttError::Lost {
                server: server.to_string(),
                why,
                log: conn.log_tail(),
            })
        }
    }
}

/// The next event. No time limit of its own: every caller bounds its whole exchange.
async fn recv(conn: &mut Conn, server: &str) -> Result<wyoming::Event, SttError> {
    match conn.reader.read_event().await {
        Ok(Some(event)) => Ok(event),
        Ok(None) => {
            let why = conn.why_gone("end of stream").await;
            Err(SttError::Lost {
                server: server.to_string(),
                why,
                log: conn.log_tail(),
            })
        }
        Err(wyoming::Error::Io(e)) => {
            let why = conn.why_gone(&format!("reading failed: {e}")).await;
            Err(SttError::Lost {
                server: server.to_string(),
                why,
                log: conn.log_tail(),
            })
        }
        Err(source) => Err(SttError::Protocol {
            server: server.to_string(),
            source,
        }),
    }
}

/// One utterance: transcribe, audio-start, chunks, audio-stop; then wait for the answer. No
/// time limit of its own: the caller's deadline covers it, and `progress` says where it was.
async fn exchange(
    conn: &mut Conn,
    Ask { config, phrases }: Ask<'_>,
    pcm: &[i16],
    progress: &mut Progress,
) -> Result<Transcript, SttError> {
    let server = config.server.describe();
    let phrases = match phrases {
        Some(p) if conn.takes_phrases => {
            progress.during = "loading the phrase set";
            load_phrases(conn, &server, p).await?
        }
        _ => None,
    };
    progress.during = "sending the audio";
    let format = AudioFormat::SPEECH;
    let ask = Transcribe {
        name: config.model_name.clone(),
        language: config.language.clone(),
        phrases,
    };
    send(conn, &server, &ask.to_event()).await?;
    send(
        conn,
        &server,
        &AudioStart {
            format,
            timestamp: Some(0),
        }
        .to_event(),
    )
    .await?;
    let mut sent = 0u64;
    for chunk in pcm.chunks(CHUNK_SAMPLES) {
        let audio: Vec<u8> = chunk.iter().flat_map(|s| s.to_le_bytes()).collect();
        let event = AudioChunk {
            format,
            timestamp: Some(sent * 1000 / u64::from(format.rate)),
            audio,
        }
        .to_event();
        send(conn, &server, &event).await?;
        sent += chunk.len() as u64;
    }
    let stop = AudioStop {
        timestamp: Some(sent * 1000 / u64::from(format.rate)),
    };
    send(conn, &server, &stop.to_event()).await?;
    progress.during = "waiting for the transcript";
    loop {
        let event = recv(conn, &server).await?;
        if Transcript::is(&event) {
            return Transcript::from_event(event)
                .map_err(|source| SttError::Protocol { server, source });
        }
        if ErrorEvent::is(&event) {
            let e = ErrorEvent::from_event(event)
                .map_err(|source| SttError::Protocol { server, source })?;
            return Err(SttError::Server {
                text: e.text,
                code: e.code,
            });
        }
        // transcript-start/-chunk (streaming servers), ping: not the answer (logged once: a
        // server may send them without end, and the deadline deals with that)
        if progress.others == 0 {
            tracing::debug!(kind = %event.kind, "stt: not the transcript yet; waiting on");
        }
        progress.others += 1;
        progress.last_other = Some(event.kind);
    }
}

/// What one utterance is asked with.
struct Ask<'a> {
    config: &'a SttConfig,
    phrases: Option<&'a SttPhrases>,
}

/// Sends the phrase set unless this connection's server has it (or refused it); the id to
/// name in `transcribe`, or `None` when the server refused it (said in the log, once per
/// set and connection: the transcripts are then open ones).
async fn load_phrases(
    conn: &mut Conn,
    server: &str,
    phrases: &SttPhrases,
) -> Result<Option<String>, SttError> {
    match &conn.phrases {
        Some((id, loaded)) if *id == phrases.id => return Ok(loaded.then(|| id.clone())),
        _ => {}
    }
    let event = wyoming::Phrases {
        id: phrases.id.clone(),
        grammar: phrases.grammar.clone(),
    };
    send(conn, server, &event.to_event()).await?;
    loop {
        let event = recv(conn, server).await?;
        if wyoming::PhrasesLoaded::is(&event) {
            tracing::debug!(id = %phrases.id, forms = phrases.forms, "the recogniser holds the phrase set");
            conn.phrases = Some((phrases.id.clone(), true));
            return Ok(Some(phrases.id.clone()));
        }
        if ErrorEvent::is(&event) {
            let e = ErrorEvent::from_event(event).map_err(|source| SttError::Protocol {
                server: server.to_string(),
                source,
            })?;
            tracing::warn!(
                id = %phrases.id,
                code = e.code.as_deref().unwrap_or(""),
                "the recogniser refused the house's phrase set: {}; transcripts stay open \
                 ones (check that hearth and hearth-stt are the same version)",
                e.text
            );
            conn.phrases = Some((phrases.id.clone(), false));
            return Ok(None);
        }
        tracing::debug!(kind = %event.kind, "stt: not the phrase set's answer; waiting on");
    }
}

/// `describe` → `info` within `limit` in all, skipping any other event (a late transcript
/// chunk, say): a server that sends other events without end still fails in time.
async fn describe(
    conn: &mut Conn,
    server: &str,
    limit: Duration,
    during: &'static str,
) -> Result<Info, SttError> {
    let exchange = async {
        send(conn, server, &Describe {}.to_event()).await?;
        let mut ignored = 0u64;
        loop {
            let event = recv(conn, server).await?;
            if Info::is(&event) {
                return Info::from_event(event).map_err(|source| SttError::Protocol {
                    server: server.to_string(),
                    source,
                });
            }
            if ignored == 0 {
                tracing::debug!(kind = %event.kind, "stt: ignoring an event before info");
            }
            ignored += 1;
        }
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(answered) => answered,
        Err(_) => Err(SttError::Timeout {
            server: server.to_string(),
            during,
            secs: limit.as_secs_f64(),
        }),
    }
}

/// The health probe: a child must still be running, and the server must answer `describe`
/// within 5 s.
async fn probe(conn: &mut Conn, config: &SttConfig) -> Result<(), SttError> {
    let server = config.server.describe();
    if let Some(child) = &mut conn.child {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(SttError::Lost {
                server,
                why: format!("it exited with {status}"),
                log: conn.log_tail(),
            });
        }
    }
    describe(conn, &server, Duration::from_secs(5), "answering describe").await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let c = SttConfig::new(SttServer::Connect("127.0.0.1:1".into()));
        assert_eq!(backoff(&c, 1), Duration::from_millis(200));
        assert_eq!(backoff(&c, 2), Duration::from_millis(400));
        assert_eq!(backoff(&c, 4), Duration::from_millis(1600));
        assert_eq!(backoff(&c, 40), Duration::from_secs(10));
    }

    #[test]
    fn addresses() {
        assert_eq!(tcp_addr("tcp://127.0.0.1:10300"), "127.0.0.1:10300");
        assert_eq!(tcp_addr("host:1"), "host:1");
        assert_eq!(
            SttServer::Connect("h:1".into()).describe(),
            "tcp://h:1".to_string()
        );
    }

    #[tokio::test]
    async fn missing_model_and_program_are_clear_errors() {
        let c = SttConfig::new(SttServer::Spawn {
            program: "hearth-stt".into(),
            model: "/nonexistent/ggml-tiny.en.bin".into(),
            args: vec![],
        });
        let e = Actor::spawn(None, Stt, c).await.unwrap_err().to_string();
        assert!(
            e.contains("/nonexistent/ggml-tiny.en.bin") && e.contains("[stt] model"),
            "{e}"
        );
        assert!(e.contains("`hearth models pull whisper:tiny.en`"), "{e}");

        let model = std::env::temp_dir().join(format!("hearth-stt-model-{}", std::process::id()));
        std::fs::write(&model, b"x").unwrap();
        let c = SttConfig::new(SttServer::Spawn {
            program: "/nonexistent/hearth-stt".into(),
            model: model.clone(),
            args: vec![],
        });
        let e = Actor::spawn(None, Stt, c).await.unwrap_err().to_string();
        assert!(
            e.contains("/nonexistent/hearth-stt")
                && e.contains("cargo build --release -p hearth-stt"),
            "{e}"
        );
        let _ = std::fs::remove_file(model);
    }

    /// A fake Wyoming ASR server on loopback that answers nothing but `ping`s: after
    /// `audio-stop`, or with `from_describe` already instead of the `info` of the handshake,
    /// one every 5 ms for as long as the connection lasts (20 s at most). Its address.
    async fn pinging_server(from_describe: bool) -> String {
        use wyoming::{AsrModel, AsrProgram, Attribution, Ping};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let attribution = Attribution {
            name: "test".into(),
            url: "http://localhost".into(),
        };
        let info = Info {
            asr: vec![AsrProgram {
                name: "pinger".into(),
                attribution: attribution.clone(),
                installed: true,
                description: None,
                version: None,
                models: vec![AsrModel {
                    name: "pings-only".into(),
                    attribution,
                    installed: true,
                    description: None,
                    version: None,
                    languages: vec!["en".into()],
                }],
                supports_transcript_streaming: false,
                requires_external_vad: true,
                supports_phrases: false,
            }],
            satellite: None,
        }
        .to_event();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let info = info.clone();
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut events = EventReader::new(BufReader::new(read));
                    while let Ok(Some(event)) = events.read_event().await {
                        if Describe::is(&event) && !from_describe {
                            let _ = wyoming::write_event(&mut write, &info).await;
                            continue;
                        }
                        if Describe::is(&event) || AudioStop::is(&event) {
                            let ping = Ping { text: None }.to_event();
                            let until = Instant::now() + Duration::from_secs(20);
                            while Instant::now() < until {
                                if wyoming::write_event(&mut write, &ping).await.is_err() {
                                    return;
                                }
                                tokio::time::sleep(Duration::from_millis(5)).await;
                            }
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_only_pings_costs_an_utterance_its_deadline_not_the_stage() {
        let addr = pinging_server(false).await;
        let mut c = SttConfig::new(SttServer::Connect(format!("tcp://{addr}")));
        c.health_every = Duration::ZERO;
        c.utterance_timeout = Duration::from_secs(1);
        let (actor, handle) = Actor::spawn(None, Stt, c).await.unwrap();
        for _ in 0..2 {
            let t = Instant::now();
            let utterance = Utterance::whole(vec![0.0; 8000]);
            let e = tokio::time::timeout(Duration::from_secs(10), transcribe(&actor, utterance))
                .await
                .expect("a server sending pings for ever held the Stt stage")
                .unwrap_err();
            let waited = t.elapsed();
            assert!(
                waited >= Duration::from_millis(950) && waited < Duration::from_secs(5),
                "{waited:?}"
            );
            assert!(matches!(e, SttError::UtteranceTimeout { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("tcp://{addr}"))
                    && msg.contains("within 1 s ([stt] timeout_s)")
                    && msg.contains("waiting for the transcript")
                    && msg.contains("(the last: `ping`)")
                    && msg.contains("raise [stt] timeout_s"),
                "{msg}"
            );
        }
        actor.stop(None);
        handle.await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_answers_describe_with_pings_fails_the_start_in_time() {
        let addr = pinging_server(true).await;
        let mut c = SttConfig::new(SttServer::Connect(format!("tcp://{addr}")));
        c.start_timeout = Duration::from_secs(1);
        let t = Instant::now();
        let e = tokio::time::timeout(Duration::from_secs(10), Actor::spawn(None, Stt, c))
            .await
            .expect("a server sending pings for ever held the start")
            .unwrap_err()
            .to_string();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(
            e.contains(&format!("tcp://{addr}"))
                && e.contains("did not answer within 1 s while starting up"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn nobody_listening_is_a_clear_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let c = SttConfig::new(SttServer::Connect(format!("tcp://{addr}")));
        let e = Actor::spawn(None, Stt, c).await.unwrap_err().to_string();
        assert!(
            e.contains(&addr.to_string()) && e.contains("Is it running"),
            "{e}"
        );
    }
}
