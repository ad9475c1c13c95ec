//! The Wyoming ASR server: sessions on stdio or TCP connections, one recogniser shared by all.
//!
//! A session answers `describe` with `info`, `ping` with `pong`, and for `transcribe` (optional:
//! it sets the language of the next utterance), `audio-start`, `audio-chunk`s and `audio-stop`
//! answers with a `transcript`. Anything wrong in a session is answered with an `error` event
//! and the session goes on; only a stream that is out of step (an announced length over the
//! limit, a cut connection) ends it. Other event types are ignored, as Wyoming peers do.
//!
//! Concurrency: TCP connections are served concurrently (each reads and buffers its own audio),
//! and the model runs one utterance at a time behind a fair (first come, first served) async
//! mutex, on tokio's blocking pool. On the small boards hearth targets whisper.cpp already uses
//! every core for one utterance; two at once would each take twice as long, so the first
//! speaker would wait longer for nothing, and every concurrent utterance would need its own
//! whisper state (compute buffers).
//!
//! # Bounds on a TCP connection
//!
//! The server runs for months next to clients it does not control, so nothing a client does or
//! fails to do holds memory or a slot for ever ([`ServerConfig`] has the numbers):
//!
//! - **Idle timeout.** A read that waits [`ServerConfig::idle_timeout`] without receiving a
//!   byte ends the connection, whether the client is between events, inside an audio stream,
//!   or stalled half-way through an event; so does a write the client does not read for as
//!   long. The client is sent a `timeout` `error` event first (best effort). Time spent
//!   waiting for the model does not count.
//! - **Connections.** At most [`ServerConfig::max_connections`] are served at once. When all
//!   are taken and another client arrives, the one idle the longest (no audio stream open,
//!   nothing being transcribed for it) is closed for it, with a `server-busy` `error` event;
//!   failing that, a stalled stream: one that has sent nothing for
//!   [`crate::conns::STALLED_STREAM`], or has been open longer than
//!   [`ServerConfig::max_audio_seconds`] plus that (a client trickling bytes to keep its
//!   slot). A connection mid-utterance or waiting for its transcript is never closed for a newcomer:
//!   the newcomer waits until one ends or turns idle. So connections that were opened and
//!   forgotten (a crashed client, a port scan, a satellite that reconnects without closing)
//!   cannot keep a client out, not even for the idle timeout, and the speech of someone
//!   talking now is never dropped for a client that has not said anything yet. Closing idle
//!   ones only after the idle timeout would keep a newcomer waiting up to that long; refusing
//!   the newcomer instead would let forgotten connections lock everybody out.
//! - **Audio.** One utterance takes at most [`ServerConfig::max_audio_bytes`] of PCM as sent,
//!   whatever rate, width and channel count `audio-start` announces, and at most
//!   [`ServerConfig::max_audio_seconds`]. The chunk that would go over is refused: the client
//!   gets an `audio-too-long` `error` event naming the limit, the utterance is dropped, and on
//!   TCP the connection is closed (the client is still sending audio that nobody will
//!   transcribe). On stdio (hearth's child, one session for the life of the process) the rest
//!   of the stream is dropped until `audio-stop` and the session goes on. No event may carry a
//!   payload over the audio limit (one that announces more gets `bad-stream`, naming the
//!   limit, and the connection closes without the payload being read), and header lines and
//!   data blocks are capped at 64 KiB ([`ServerConfig::limits`]): what one connection holds is
//!   bounded by these.
//!
//! Only the TCP listener applies the idle timeout and the connection cap: on stdio the one
//! client is hearth, which keeps its child's session open between utterances on purpose.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tracing::{debug, info, warn};
use wyoming::{
    AsrModel, AsrProgram, Attribution, AudioChunk, AudioStart, AudioStop, Describe, ErrorEvent,
    Event, EventReader, Eventable, Info, Limits, PhrasePass, Phrases, PhrasesLoaded, Ping, Pong,
    Transcribe, Transcript,
};

use crate::audio::{AudioError, Utterance};
use crate::conns::{is_idle_timeout, ConnHandle, IdleReader, Phase, Registry};
use crate::recognizer::{Recognizer, TranscribeError};
use hearth_phrases::{Grammar, Matcher};

/// Error codes sent in `error` events.
pub(crate) mod codes {
    /// An event that could not be read (bad header line, bad data block); the session goes on.
    pub const BAD_EVENT: &str = "bad-event";
    /// An event of a known type whose data is wrong (e.g. `audio-start` without `rate`).
    pub const BAD_REQUEST: &str = "bad-request";
    /// The stream is out of step (an announced length over the limit); the connection closes.
    pub const BAD_STREAM: &str = "bad-stream";
    /// `audio-chunk` or `audio-stop` without `audio-start`.
    pub const NOT_STARTED: &str = "audio-not-started";
    /// Audio in a format that cannot be decoded.
    pub const BAD_AUDIO: &str = "bad-audio";
    /// The utterance went over the audio limit (bytes or seconds): it is dropped, and on TCP
    /// the connection closes.
    pub const AUDIO_LIMIT: &str = "audio-too-long";
    /// Nothing received (or nothing read by the client) for the idle timeout: the connection
    /// closes.
    pub const TIMEOUT: &str = "timeout";
    /// Closed to make room for a new client: every slot was taken and this one was idle the
    /// longest (or stalled inside an audio stream).
    pub const BUSY: &str = "server-busy";
    /// A language the model cannot transcribe.
    pub const LANGUAGE: &str = "unsupported-language";
    /// whisper.cpp failed.
    pub const FAILED: &str = "transcription-failed";
    /// A `phrases` event whose set cannot be used (not JSON of a grammar, a bad form, an id
    /// that is not its contents').
    pub const BAD_PHRASES: &str = "bad-phrases";
    /// `transcribe` names a phrase set the server does not hold: send it with `phrases`.
    pub const UNKNOWN_PHRASES: &str = "unknown-phrases";
}

/// Phrase sets a server holds at once (clients' sets by id; the oldest goes first).
pub const MAX_PHRASE_SETS: usize = 4;

/// Default [`ServerConfig::max_audio_bytes`]: 2 MiB, 65 s of 16 kHz 16-bit mono (what hearth and
/// Wyoming satellites send; 30 s, whisper's window, with room to spare), 21 s of 48 kHz 16-bit
/// mono, 11 s of 44.1 kHz 16-bit stereo.
pub const DEFAULT_MAX_AUDIO_BYTES: usize = 2 * 1024 * 1024;
/// Default [`ServerConfig::max_audio_seconds`].
pub const DEFAULT_MAX_AUDIO_SECONDS: f64 = 60.0;
/// Default [`ServerConfig::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 16;
/// Default [`ServerConfig::idle_timeout`]: 30 s. A live client sends audio every 100 ms or so
/// while it streams and reads its transcript at once; one that keeps a connection open between
/// utterances probes it more often than this (hearth: every 10 s).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest header line and data block of a client's event: ASR requests are a few hundred
/// bytes.
pub const MAX_REQUEST_JSON: usize = 64 * 1024;

/// How long the reason for closing (an `error` event) may take to write.
const CLOSE_WRITE: Duration = Duration::from_secs(1);
/// After the audio limit or a stream out of step, what the client still sends is read and
/// dropped for up to this long (and [`LINGER_BYTES`]) before the socket closes: closing with
/// unread data would answer with a reset, which can destroy the `error` event on its way to
/// a client that is still writing.
const LINGER: Duration = Duration::from_secs(2);
/// See [`LINGER`].
const LINGER_BYTES: u64 = 16 * 1024 * 1024;
/// How often a newcomer waiting for a slot looks again for a connection to close (one may
/// turn idle, or a stream stall, without anyone being told).
const RECHECK: Duration = Duration::from_millis(250);

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Limits on what one event may bring. The payload limit in force is the smaller of
    /// `limits.max_payload` and [`max_audio_bytes`](Self::max_audio_bytes).
    pub limits: Limits,
    /// Longest utterance accepted, in seconds of audio.
    pub max_audio_seconds: f64,
    /// Most PCM bytes accepted for one utterance (as sent, before decoding).
    pub max_audio_bytes: usize,
    /// TCP connections served at once; when all are taken, a newcomer closes the one idle the
    /// longest, or waits (the module doc says which and why).
    pub max_connections: usize,
    /// A TCP connection that sends nothing (or reads nothing of what is sent to it) for this
    /// long is closed.
    pub idle_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            limits: Limits {
                max_header: MAX_REQUEST_JSON,
                max_data: MAX_REQUEST_JSON,
                ..Limits::default()
            },
            max_audio_seconds: DEFAULT_MAX_AUDIO_SECONDS,
            max_audio_bytes: DEFAULT_MAX_AUDIO_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

impl ServerConfig {
    /// The limits the event reader applies: [`limits`](Self::limits) with the payload capped
    /// at the audio limit (no chunk can be longer than a whole utterance).
    pub fn reader_limits(&self) -> Limits {
        Limits {
            max_payload: self.limits.max_payload.min(self.max_audio_bytes),
            ..self.limits
        }
    }
}

/// How a session ended, when it ended by the protocol's rules rather than an I/O error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The client closed the stream between events.
    Closed,
    /// Nothing received for the idle timeout; `mid_event` if part of an event had come.
    Idle { mid_event: bool },
    /// The client did not read what was sent to it for the idle timeout.
    NotReading,
    /// Closed to make room for a newcomer.
    Evicted,
    /// The utterance went over the audio limit (TCP).
    AudioLimit,
}

/// The server: the recogniser, the `info` it describes itself with, and its settings.
/// Cheap to clone (shared state).
#[derive(Clone)]
pub struct Server {
    recognizer: Arc<Mutex<Recognizer>>,
    info: Arc<Info>,
    config: ServerConfig,
    /// Phrase sets by id, the latest loaded last.
    phrases: Arc<std::sync::Mutex<PhraseSets>>,
}

/// The phrase sets a server holds, by id, the latest loaded last.
type PhraseSets = Vec<(String, Arc<HeldSet>)>;

/// A phrase set as held: followed as a [`Matcher`], and the words it says to expect (its
/// grammar's `prompt`: the decoder is primed with them for its requests).
struct HeldSet {
    matcher: Matcher,
    prompt: Option<String>,
}

impl Server {
    /// A server around a loaded recogniser.
    pub fn new(recognizer: Recognizer, config: ServerConfig) -> Self {
        let info = Arc::new(describe(&recognizer));
        Server {
            recognizer: Arc::new(Mutex::new(recognizer)),
            info,
            config,
            phrases: Arc::default(),
        }
    }

    /// Loads a phrase set for later requests to name; answers with its id and size.
    fn load_phrases(&self, p: Phrases) -> Reply {
        // a client on a connection per utterance sends its set each time: parsed once
        if let Ok(held) = self.phrase_set(&p.id) {
            return Ok(vec![PhrasesLoaded {
                id: p.id,
                forms: held.matcher.forms(),
            }
            .to_event()]);
        }
        let bad = |why: String| (codes::BAD_PHRASES, format!("phrase set {}: {why}", p.id));
        let grammar: Grammar = serde_json::from_slice(&p.grammar).map_err(|e| {
            bad(format!(
                "the payload is not a phrase grammar ({e}); send JSON with `lists` and `forms`"
            ))
        })?;
        let id = grammar.id();
        if id != p.id {
            return Err(bad(format!(
                "the id is not its contents' ({id}); send the id the grammar's contents give"
            )));
        }
        let matcher = Matcher::new(&grammar).map_err(|e| bad(e.to_string()))?;
        let mut sets = self
            .phrases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sets.retain(|(held, _)| *held != id);
        if sets.len() >= MAX_PHRASE_SETS {
            sets.remove(0);
        }
        let prompt = grammar.prompt.filter(|p| !p.trim().is_empty());
        sets.push((id.clone(), Arc::new(HeldSet { matcher, prompt })));
        info!(id, forms = grammar.forms.len(), "phrase set loaded");
        Ok(vec![PhrasesLoaded {
            id,
            forms: grammar.forms.len(),
        }
        .to_event()])
    }

    /// The phrase set `id` names, if held.
    fn phrase_set(&self, id: &str) -> Result<Arc<HeldSet>, (&'static str, String)> {
        let sets = self
            .phrases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sets.iter()
            .find(|(held, _)| held == id)
            .map(|(_, m)| m.clone())
            .ok_or_else(|| {
                (
                    codes::UNKNOWN_PHRASES,
                    format!(
                        "phrase set {id} is not loaded (the server holds the last \
                         {MAX_PHRASE_SETS}): send it with a `phrases` event, then transcribe again"
                    ),
                )
            })
    }

    /// What `describe` answers.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// The settings it serves with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Accepts TCP connections until the listener fails, each served by its own task, at most
    /// [`ServerConfig::max_connections`] at once (the module doc says what happens at the cap).
    pub async fn serve_tcp(&self, listener: TcpListener) -> std::io::Result<()> {
        let max = self.config.max_connections.max(1);
        let slots = Arc::new(Semaphore::new(max));
        // A stream open longer than the longest utterance takes to say is stalled.
        let longest = Duration::try_from_secs_f64(self.config.max_audio_seconds)
            .unwrap_or(Duration::MAX)
            .saturating_add(crate::conns::STALLED_STREAM);
        let registry = Registry::new(longest);
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) if is_transient(&e) => {
                    warn!("accept failed ({e}); retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let slot = match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => match make_room(&slots, &registry, max, peer).await {
                    Some(slot) => slot,
                    None => return Ok(()), // the semaphore is never closed
                },
            };
            let _ = stream.set_nodelay(true);
            let conn = registry.register(peer);
            let server = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                info!(%peer, "client connected");
                let (read, mut write) = stream.into_split();
                let reader = IdleReader::new(read, server.config.idle_timeout);
                let ended = server
                    .session(reader, &mut write, Some(peer), Some(&conn))
                    .await;
                drop(conn); // out of the table before the slot is given back
                log_end(peer, ended, server.config.idle_timeout);
            });
        }
    }

    /// Serves one session on a byte stream (stdin/stdout) until it ends, without the idle
    /// timeout or the connection cap of [`serve_tcp`](Self::serve_tcp). Returns `Ok` when the
    /// peer closes the stream between events.
    pub async fn serve_stream<R, W>(
        &self,
        reader: R,
        mut writer: W,
        peer: Option<SocketAddr>,
    ) -> Result<(), wyoming::Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        self.session(reader, &mut writer, peer, None)
            .await
            .map(|_| ())
    }

    /// The session loop. `conn`: a TCP connection's entry in the table (eviction, writes
    /// bounded by the idle timeout, closing at the audio limit); `None` on stdio.
    async fn session<R, W>(
        &self,
        reader: R,
        writer: &mut W,
        peer: Option<SocketAddr>,
        conn: Option<&ConnHandle>,
    ) -> Result<End, wyoming::Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let tcp = conn.is_some();
        let write_limit = tcp.then_some(self.config.idle_timeout);
        let mut events =
            EventReader::with_limits(BufReader::new(reader), self.config.reader_limits());
        let mut session = Session::new(
            self.config.max_audio_seconds,
            self.config.max_audio_bytes,
            tcp,
        );
        loop {
            let read = tokio::select! {
                biased;
                () = evicted(conn) => {
                    let text = format!(
                        "closing this connection to make room for a new client: it was the \
                         one idle the longest (or stalled in an audio stream), and all {} \
                         connections of this server were taken (hearth-stt --max-connections); \
                         connect again when there is something to send",
                        self.config.max_connections
                    );
                    close(&mut events, writer, codes::BUSY, text, false).await;
                    return Ok(End::Evicted);
                }
                read = events.read_event() => read,
            };
            let event = match read {
                Ok(Some(event)) => event,
                Ok(None) => return Ok(End::Closed),
                Err(e) if e.is_recoverable() => {
                    debug!(?peer, "unreadable event: {e}");
                    let reply = error_event(codes::BAD_EVENT, e.to_string());
                    if send(writer, &[reply], write_limit).await? {
                        continue;
                    }
                    return Ok(End::NotReading);
                }
                Err(wyoming::Error::Io(e)) if is_idle_timeout(&e) => {
                    let mid_event = events.is_mid_event();
                    let text = format!(
                        "{}: closing the connection (hearth-stt --idle-timeout)",
                        idle_what(mid_event, self.config.idle_timeout)
                    );
                    close(&mut events, writer, codes::TIMEOUT, text, false).await;
                    return Ok(End::Idle { mid_event });
                }
                Err(wyoming::Error::Io(e)) => return Err(e.into()),
                Err(wyoming::Error::TooLong {
                    part: wyoming::Part::Payload,
                    length,
                    limit,
                }) if limit == self.config.max_audio_bytes => {
                    // Out of step like any announced length over the limit (the payload is not
                    // read), but the limit is the audio limit: say so.
                    let text = format!(
                        "an event's payload of {length} bytes is over the limit of {limit} bytes \
                         of audio per utterance (hearth-stt --max-audio-bytes): send the audio \
                         in chunks of a fraction of a second; closing the connection"
                    );
                    close(&mut events, writer, codes::BAD_STREAM, text, tcp).await;
                    return Ok(End::AudioLimit);
                }
                Err(e) => {
                    close(&mut events, writer, codes::BAD_STREAM, e.to_string(), tcp).await;
                    return Err(e);
                }
            };
            // Waiting for the model is not idle; anything else keeps the phase it had, but
            // a connection chosen to make room while this event arrived closes as chosen.
            let busy = if AudioStop::is(&event) && session.is_receiving() {
                Phase::Transcribing
            } else {
                session.phase()
            };
            if conn.is_some_and(|c| !c.set_phase(busy)) {
                continue; // `evicted` resolves at once
            }
            let replies = self.handle(&mut session, event).await;
            if !send(writer, &replies, write_limit).await? {
                return Ok(End::NotReading);
            }
            if session.overran && tcp {
                linger(&mut events, writer).await;
                return Ok(End::AudioLimit);
            }
            session.overran = false;
            if let Some(c) = conn {
                c.set_phase(session.phase());
            }
        }
    }

    /// One event of a session; returns the events to send back.
    async fn handle(&self, session: &mut Session, event: Event) -> Vec<Event> {
        let kind = event.kind.clone();
        let result = match kind.as_str() {
            Describe::TYPE => Ok(vec![self.info.to_event()]),
            Ping::TYPE => Ping::from_event(event)
                .map(|ping| vec![Pong { text: ping.text }.to_event()])
                .map_err(bad_request),
            Transcribe::TYPE => Transcribe::from_event(event)
                .map(|t| session.transcribe(t))
                .map_err(bad_request),
            Phrases::TYPE => Phrases::from_event(event)
                .map_err(bad_request)
                .and_then(|p| self.load_phrases(p)),
            AudioStart::TYPE => match AudioStart::from_event(event) {
                Ok(start) => session.start(start),
                Err(e) => {
                    session.stream = Stream::Discarding;
                    Err(bad_request(e))
                }
            },
            AudioChunk::TYPE => match AudioChunk::from_event(event) {
                Ok(chunk) => session.chunk(chunk),
                Err(e) => {
                    session.fail_stream();
                    Err(bad_request(e))
                }
            },
            AudioStop::TYPE => match session.stop() {
                Ok(Some((utterance, request))) => self.transcribe(utterance, request).await,
                Ok(None) => Ok(vec![]),
                Err(e) => Err(e),
            },
            other => {
                debug!("ignoring a `{other}` event");
                Ok(vec![])
            }
        };
        match result {
            Ok(replies) => replies,
            Err((code, text)) => {
                debug!(code, "{text}");
                vec![ErrorEvent {
                    text,
                    code: Some(code.into()),
                }
                .to_event()]
            }
        }
    }

    /// Runs one utterance through the model (waiting for it if another is being transcribed).
    async fn transcribe(
        &self,
        utterance: Utterance,
        request: Transcribe,
    ) -> Result<Vec<Event>, (&'static str, String)> {
        let seconds = utterance.seconds();
        let phrases = match &request.phrases {
            Some(id) => Some(self.phrase_set(id)?),
            None => None,
        };
        let language = request.language;
        let mut recognizer = self.recognizer.clone().lock_owned().await;
        let job = tokio::task::spawn_blocking(move || {
            let samples = utterance
                .into_whisper_input()
                .map_err(|e| (codes::BAD_AUDIO, e.to_string()))?;
            let matcher = phrases.as_ref().map(|p| &p.matcher);
            let prompt = phrases.as_ref().and_then(|p| p.prompt.as_deref());
            recognizer
                .transcribe(&samples, language.as_deref(), matcher, prompt)
                .map_err(|e| match e {
                    TranscribeError::Language { .. } => (codes::LANGUAGE, e.to_string()),
                    TranscribeError::Whisper(_) => (codes::FAILED, e.to_string()),
                })
        });
        let t = match job.await {
            Ok(result) => result?,
            Err(e) => return Err((codes::FAILED, format!("the transcription task failed: {e}"))),
        };
        info!(
            audio_s = format_args!("{seconds:.2}"),
            audio_ctx = t.audio_ctx,
            whisper_ms = t.elapsed.as_millis() as u64,
            threads = t.threads,
            retried = t.retried,
            collapsed = t.collapsed,
            chars = t.text.chars().count(),
            phrase_ms = t.phrase.as_ref().map(|p| p.elapsed.as_millis() as u64),
            phrase_taken = t.phrase.as_ref().map(|p| p.taken),
            "transcribed"
        );
        // the words themselves only when asked for (see `init_logging`)
        info!(target: "transcript", text = %t.text, "what was transcribed");
        Ok(vec![Transcript {
            text: t.text,
            language: Some(t.language),
            phrase_pass: t.phrase.map(|p| PhrasePass {
                open: p.open,
                phrase: p.phrase,
                open_logprob: p.open_logprob,
                phrase_logprob: p.phrase_logprob.is_finite().then_some(p.phrase_logprob),
                way_contrast: p.way_contrast.filter(|c| c.is_finite()),
                taken: p.taken,
                near: p.near,
                steps: p.steps,
                ms: p.elapsed.as_secs_f64() * 1e3,
            }),
        }
        .to_event()])
    }
}

fn bad_request(e: wyoming::Error) -> (&'static str, String) {
    (codes::BAD_REQUEST, e.to_string())
}

fn error_event(code: &str, text: String) -> Event {
    ErrorEvent {
        text,
        code: Some(code.into()),
    }
    .to_event()
}

/// Resolves once a TCP connection has been chosen to make room; never on stdio.
async fn evicted(conn: Option<&ConnHandle>) {
    match conn {
        Some(conn) => conn.evicted().await,
        None => std::future::pending().await,
    }
}

/// Writes `events`. With a limit, `Ok(false)` when the client did not take them in that
/// time (it reads nothing, and the socket's buffers are full).
async fn send<W: AsyncWrite + Unpin>(
    writer: &mut W,
    events: &[Event],
    limit: Option<Duration>,
) -> Result<bool, wyoming::Error> {
    let write_all = async {
        for event in events {
            wyoming::write_event(&mut *writer, event).await?;
        }
        Ok::<(), wyoming::Error>(())
    };
    match limit {
        _ if events.is_empty() => Ok(true),
        None => write_all.await.map(|()| true),
        Some(limit) => match tokio::time::timeout(limit, write_all).await {
            Ok(written) => written.map(|()| true),
            Err(_) => Ok(false),
        },
    }
}

/// Ends a session the server chose to end: an `error` event saying why (best effort, within
/// [`CLOSE_WRITE`]), then our side shut; with `drain`, what the client still sends is read
/// and dropped for a moment first ([`linger`]).
async fn close<R, W>(
    events: &mut EventReader<BufReader<R>>,
    writer: &mut W,
    code: &str,
    text: String,
    drain: bool,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    debug!(code, "{text}");
    let reason = error_event(code, text);
    let _ = tokio::time::timeout(CLOSE_WRITE, wyoming::write_event(&mut *writer, &reason)).await;
    if drain {
        linger(events, writer).await;
    } else {
        let _ = tokio::time::timeout(CLOSE_WRITE, writer.shutdown()).await;
    }
}

/// Shuts our side, then reads and drops what the client still sends, until it closes too or
/// for [`LINGER`] ([`LINGER_BYTES`] at most), so the last event sent is not lost to a reset.
async fn linger<R, W>(events: &mut EventReader<BufReader<R>>, writer: &mut W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let _ = tokio::time::timeout(CLOSE_WRITE, writer.shutdown()).await;
    let drain = async {
        let mut sink = vec![0u8; 16 * 1024];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match events.get_mut().read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n as u64),
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// What an idle timeout found, for the client and the log.
fn idle_what(mid_event: bool, limit: Duration) -> String {
    let secs = limit.as_secs_f64();
    if mid_event {
        format!("the rest of an event did not come within {secs} s")
    } else {
        format!("no data from the client for {secs} s")
    }
}

/// Logs the end of a TCP session at the level it deserves: a client's ordinary comings and
/// goings and the closing of idle connections are not warnings.
fn log_end(peer: SocketAddr, ended: Result<End, wyoming::Error>, idle: Duration) {
    match ended {
        Ok(End::Closed) => info!(%peer, "client disconnected"),
        Ok(End::Idle { mid_event }) => {
            debug!(%peer, "{}: connection closed", idle_what(mid_event, idle));
        }
        Ok(End::NotReading) => debug!(
            %peer,
            "the client read nothing for {} s: connection closed",
            idle.as_secs_f64()
        ),
        Ok(End::Evicted) => debug!(%peer, "connection closed to make room for a new client"),
        Ok(End::AudioLimit) => {
            info!(%peer, "connection closed: its utterance went over the audio limit");
        }
        Err(e) => warn!(%peer, "session ended: {e}"),
    }
}

/// Waits for a slot for a newcomer when all are taken, closing the connection idle the
/// longest (or a stalled stream) to make one; if there is none, looks again every
/// [`RECHECK`] until a slot frees. `None` only if the semaphore was closed (it never is).
async fn make_room(
    slots: &Arc<Semaphore>,
    registry: &Registry,
    max: usize,
    newcomer: SocketAddr,
) -> Option<OwnedSemaphorePermit> {
    let mut told = false;
    loop {
        match registry.evict_one(tokio::time::Instant::now()) {
            Some(e) => info!(
                peer = %e.peer,
                %newcomer,
                quiet_s = format_args!("{:.1}", e.quiet_for.as_secs_f64()),
                "all {max} connections taken: closing the one {} the longest for a new client",
                if e.phase == Phase::Idle { "idle" } else { "stalled" }
            ),
            None if !told => {
                told = true;
                info!(
                    %newcomer,
                    "all {max} connections are busy with utterances: the new client waits"
                );
            }
            None => {}
        }
        tokio::select! {
            slot = slots.clone().acquire_owned() => return slot.ok(),
            () = tokio::time::sleep(RECHECK) => {}
        }
    }
}

/// Accept errors that pass (out of file descriptors, a connection reset before accept).
fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock | OutOfMemory
    ) || e
        .raw_os_error()
        .is_some_and(|code| code == 24 || code == 23) // EMFILE, ENFILE
}

/// The `info` for a recogniser: one program, `hearth-stt`, with its one model.
pub fn describe(recognizer: &Recognizer) -> Info {
    let model_name = recognizer
        .model_path()
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let model_name = model_name
        .strip_suffix(".bin")
        .unwrap_or(&model_name)
        .to_string();
    let kind = if recognizer.is_multilingual() {
        "multilingual"
    } else {
        "English-only"
    };
    Info {
        asr: vec![AsrProgram {
            name: "hearth-stt".into(),
            attribution: Attribution {
                name: "hearth, on whisper.cpp by ggml-org".into(),
                url: "https://github.com/ggml-org/whisper.cpp".into(),
            },
            installed: true,
            description: Some(format!(
                "whisper.cpp {} speech recognition for hearth",
                whisper_rs::WHISPER_CPP_VERSION
            )),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            models: vec![AsrModel {
                name: model_name,
                attribution: Attribution {
                    name: "OpenAI".into(),
                    url: "https://github.com/openai/whisper".into(),
                },
                installed: true,
                description: Some(format!(
                    "whisper {} ({kind}), ggml",
                    recognizer.model_type()
                )),
                version: None,
                languages: recognizer.languages(),
            }],
            supports_transcript_streaming: false,
            requires_external_vad: true,
            supports_phrases: true,
        }],
        satellite: None,
    }
}

/// Where a session's audio stream is.
#[derive(Debug)]
enum Stream {
    /// No stream open.
    Idle,
    /// Between `audio-start` and `audio-stop`.
    Receiving(Utterance),
    /// A stream that failed (bad format, too long, chunks without a start): its chunks are
    /// dropped silently until `audio-stop` (the client was already told once).
    Discarding,
}

/// One client's state between events.
#[derive(Debug)]
struct Session {
    stream: Stream,
    /// The next transcript's request (language, phrase set), from `transcribe`.
    request: Transcribe,
    max_audio_seconds: f64,
    max_audio_bytes: usize,
    /// Going over the audio limit closes the connection (TCP); else the rest of the stream
    /// is dropped until `audio-stop` (stdio). Only the wording of the error depends on it.
    closes_on_overrun: bool,
    /// The last chunk went over the audio limit (the caller closes a TCP connection).
    overran: bool,
}

type Reply = Result<Vec<Event>, (&'static str, String)>;

impl Session {
    fn new(max_audio_seconds: f64, max_audio_bytes: usize, closes_on_overrun: bool) -> Self {
        Session {
            stream: Stream::Idle,
            request: Transcribe::default(),
            max_audio_seconds,
            max_audio_bytes,
            closes_on_overrun,
            overran: false,
        }
    }

    /// The phase the accept loop sees between events.
    fn phase(&self) -> Phase {
        match self.stream {
            Stream::Idle => Phase::Idle,
            Stream::Receiving(_) | Stream::Discarding => Phase::Streaming,
        }
    }

    /// True inside a stream whose audio will be transcribed at `audio-stop`.
    fn is_receiving(&self) -> bool {
        matches!(self.stream, Stream::Receiving(_))
    }

    fn transcribe(&mut self, t: Transcribe) -> Vec<Event> {
        if let Some(name) = &t.name {
            debug!("transcribe asks for model `{name}`; this server has one model");
        }
        self.request = t;
        vec![]
    }

    fn start(&mut self, start: AudioStart) -> Reply {
        if matches!(self.stream, Stream::Receiving(_)) {
            warn!("audio-start inside an open stream: the earlier audio is dropped");
        }
        if let Err(e) = crate::audio::check_format(&start.format) {
            self.stream = Stream::Discarding;
            return Err((codes::BAD_AUDIO, e.to_string()));
        }
        self.stream =
            Stream::Receiving(Utterance::new(self.max_audio_seconds, self.max_audio_bytes));
        Ok(vec![])
    }

    fn chunk(&mut self, chunk: AudioChunk) -> Reply {
        match &mut self.stream {
            Stream::Receiving(utterance) => match utterance.push(&chunk.format, &chunk.audio) {
                Ok(()) => Ok(vec![]),
                Err(e @ (AudioError::TooManyBytes { .. } | AudioError::TooLong { .. })) => {
                    self.stream = Stream::Discarding;
                    self.overran = true;
                    Err((codes::AUDIO_LIMIT, self.over_limit(&e)))
                }
                Err(e) => {
                    self.stream = Stream::Discarding;
                    Err((codes::BAD_AUDIO, e.to_string()))
                }
            },
            Stream::Discarding => Ok(vec![]),
            Stream::Idle => {
                self.stream = Stream::Discarding;
                Err((
                    codes::NOT_STARTED,
                    "audio-chunk without audio-start: send audio-start first; \
                     chunks are dropped until audio-stop"
                        .into(),
                ))
            }
        }
    }

    /// The `error` text for an utterance over the limit: which limit, its flag, and what
    /// happens now.
    fn over_limit(&self, e: &AudioError) -> String {
        let flag = match e {
            AudioError::TooManyBytes { .. } => {
                "hearth-stt --max-audio-bytes, in bytes of PCM whatever the format"
            }
            _ => "hearth-stt --max-seconds",
        };
        let then = if self.closes_on_overrun {
            "closing the connection"
        } else {
            "its remaining chunks are ignored until audio-stop"
        };
        format!("{e} ({flag}): the utterance is dropped; send shorter utterances; {then}")
    }

    fn fail_stream(&mut self) {
        self.stream = Stream::Discarding;
    }

    /// Ends the stream: the utterance and its language to transcribe, if there is one.
    #[allow(clippy::type_complexity)]
    fn stop(&mut self) -> Result<Option<(Utterance, Transcribe)>, (&'static str, String)> {
        match std::mem::replace(&mut self.stream, Stream::Idle) {
            Stream::Receiving(utterance) => {
                Ok(Some((utterance, std::mem::take(&mut self.request))))
            }
            Stream::Discarding => {
                self.request = Transcribe::default();
                Ok(None)
            }
            Stream::Idle => Err((codes::NOT_STARTED, "audio-stop without audio-start".into())),
        }
    }
}

/// Where to serve: `stdio://` or `tcp://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeUri {
    /// One session on standard input and output.
    Stdio,
    /// A TCP listener on `HOST:PORT` (port 0: any free port).
    Tcp(String),
}

impl std::str::FromStr for ServeUri {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "stdio://" {
            return Ok(ServeUri::Stdio);
        }
        if let Some(addr) = s.strip_prefix("tcp://") {
            let addr = addr.trim_end_matches('/');
            let port_ok = addr
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if port_ok {
                return Ok(ServeUri::Tcp(addr.to_string()));
            }
            return Err(format!(
                "`{s}`: a tcp URI needs a host and a port, e.g. tcp://127.0.0.1:10300"
            ));
        }
        Err(format!(
            "`{s}`: use stdio:// or tcp://HOST:PORT (e.g. tcp://0.0.0.0:10300)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_uris() {
        assert_eq!("stdio://".parse(), Ok(ServeUri::Stdio));
        assert_eq!(
            "tcp://127.0.0.1:10300".parse(),
            Ok(ServeUri::Tcp("127.0.0.1:10300".into()))
        );
        assert_eq!("tcp://[::1]:0".parse(), Ok(ServeUri::Tcp("[::1]:0".into())));
        for bad in [
            "tcp://localhost",
            "tcp://:10",
            "unix:///tmp/x",
            "stdio",
            "tcp://h:99999",
        ] {
            assert!(bad.parse::<ServeUri>().is_err(), "{bad}");
        }
    }

    fn chunk(rate: u32) -> AudioChunk {
        AudioChunk {
            format: wyoming::AudioFormat {
                rate,
                width: 2,
                channels: 1,
            },
            timestamp: None,
            audio: vec![0; 320],
        }
    }

    #[test]
    fn session_state_machine() {
        let mut s = Session::new(10.0, usize::MAX, false);
        // Stray chunk: one error, then silence until audio-stop, which ends the stray stream.
        assert_eq!(s.chunk(chunk(16000)).unwrap_err().0, codes::NOT_STARTED);
        assert!(s.chunk(chunk(16000)).unwrap().is_empty());
        assert!(s.stop().unwrap().is_none());
        // audio-stop with nothing open.
        assert_eq!(s.stop().unwrap_err().0, codes::NOT_STARTED);
        // A normal stream with a language from transcribe, used once.
        s.transcribe(Transcribe {
            name: None,
            language: Some("en".into()),
            phrases: Some("0123456789abcdef".into()),
        });
        s.start(AudioStart {
            format: wyoming::AudioFormat::SPEECH,
            timestamp: None,
        })
        .unwrap();
        s.chunk(chunk(16000)).unwrap();
        s.chunk(chunk(22050)).unwrap();
        let (u, request) = s.stop().unwrap().unwrap();
        assert_eq!(request.language.as_deref(), Some("en"));
        assert_eq!(request.phrases.as_deref(), Some("0123456789abcdef"));
        assert!(u.seconds() > 0.0);
        assert_eq!(s.request, Transcribe::default());
        // A bad format at audio-start.
        let err = s
            .start(AudioStart {
                format: wyoming::AudioFormat {
                    rate: 16000,
                    width: 7,
                    channels: 1,
                },
                timestamp: None,
            })
            .unwrap_err();
        assert_eq!(err.0, codes::BAD_AUDIO);
        assert!(s.chunk(chunk(16000)).unwrap().is_empty());
        assert!(s.stop().unwrap().is_none());
    }

    #[test]
    fn a_chunk_over_the_byte_limit_ends_the_utterance_with_an_error() {
        let start = AudioStart {
            format: wyoming::AudioFormat::SPEECH,
            timestamp: None,
        };
        // 320-byte chunks against a 1000-byte limit: the fourth goes over.
        let mut s = Session::new(60.0, 1000, true);
        s.start(start).unwrap();
        for _ in 0..3 {
            s.chunk(chunk(16000)).unwrap();
            assert!(!s.overran);
        }
        assert_eq!(s.phase(), Phase::Streaming);
        let (code, text) = s.chunk(chunk(16000)).unwrap_err();
        assert_eq!(code, codes::AUDIO_LIMIT);
        assert!(s.overran);
        assert!(
            text.contains("1000 bytes")
                && text.contains("--max-audio-bytes")
                && text.contains("closing the connection"),
            "{text}"
        );
        // Dropped: nothing to transcribe at audio-stop.
        assert!(s.chunk(chunk(16000)).unwrap().is_empty());
        assert!(s.stop().unwrap().is_none());
        assert_eq!(s.phase(), Phase::Idle);

        // On stdio the session goes on; the seconds limit words its own flag.
        let mut s = Session::new(0.015, usize::MAX, false);
        s.start(start).unwrap();
        s.chunk(chunk(16000)).unwrap(); // 10 ms
        let (code, text) = s.chunk(chunk(16000)).unwrap_err();
        assert_eq!(code, codes::AUDIO_LIMIT);
        assert!(
            text.contains("--max-seconds") && text.contains("ignored until audio-stop"),
            "{text}"
        );
    }
}
