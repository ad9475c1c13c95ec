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
//! whisper state (compute buffers). The number of connections is capped, which bounds memory.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Semaphore};
use tracing::{debug, info, warn};
use wyoming::{
    AsrModel, AsrProgram, Attribution, AudioChunk, AudioStart, AudioStop, Describe, ErrorEvent,
    Event, EventReader, Eventable, Info, Limits, Ping, Pong, Transcribe, Transcript,
};

use crate::audio::Utterance;
use crate::recognizer::{Recognizer, TranscribeError};

/// Error codes sent in `error` events.
pub mod codes {
    /// An event that could not be read (bad header line, bad data block); the session goes on.
    pub const BAD_EVENT: &str = "bad-event";
    /// An event of a known type whose data is wrong (e.g. `audio-start` without `rate`).
    pub const BAD_REQUEST: &str = "bad-request";
    /// The stream is out of step (an announced length over the limit); the connection closes.
    pub const BAD_STREAM: &str = "bad-stream";
    /// `audio-chunk` or `audio-stop` without `audio-start`.
    pub const NOT_STARTED: &str = "audio-not-started";
    /// Audio in a format that cannot be decoded, or longer than the limit.
    pub const BAD_AUDIO: &str = "bad-audio";
    /// A language the model cannot transcribe.
    pub const LANGUAGE: &str = "unsupported-language";
    /// whisper.cpp failed.
    pub const FAILED: &str = "transcription-failed";
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Limits on what one event may bring.
    pub limits: Limits,
    /// Longest utterance accepted, in seconds.
    pub max_audio_seconds: f64,
    /// TCP connections served at once; more wait to be accepted.
    pub max_connections: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            limits: Limits::default(),
            max_audio_seconds: 60.0,
            max_connections: 16,
        }
    }
}

/// The server: the recogniser, the `info` it describes itself with, and its settings.
/// Cheap to clone (shared state).
#[derive(Clone)]
pub struct Server {
    recognizer: Arc<Mutex<Recognizer>>,
    info: Arc<Info>,
    config: ServerConfig,
}

impl Server {
    /// A server around a loaded recogniser.
    pub fn new(recognizer: Recognizer, config: ServerConfig) -> Self {
        let info = Arc::new(describe(&recognizer));
        Server {
            recognizer: Arc::new(Mutex::new(recognizer)),
            info,
            config,
        }
    }

    /// What `describe` answers.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Accepts TCP connections until the listener fails, each served by its own task.
    pub async fn serve_tcp(&self, listener: TcpListener) -> std::io::Result<()> {
        let slots = Arc::new(Semaphore::new(self.config.max_connections.max(1)));
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return Ok(()); // the semaphore is never closed
            };
            let (stream, peer) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) if is_transient(&e) => {
                    warn!("accept failed ({e}); retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let _ = stream.set_nodelay(true);
            let server = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                info!(%peer, "client connected");
                let (read, write) = stream.into_split();
                match server.serve_stream(read, write, Some(peer)).await {
                    Ok(()) => info!(%peer, "client disconnected"),
                    Err(e) => warn!(%peer, "session ended: {e}"),
                }
            });
        }
    }

    /// Serves one session on a byte stream (a TCP connection, stdin/stdout) until it ends.
    /// Returns `Ok` when the peer closes the stream between events.
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
        let mut events = EventReader::with_limits(BufReader::new(reader), self.config.limits);
        let mut session = Session::new(self.config.max_audio_seconds);
        loop {
            let event = match events.read_event().await {
                Ok(Some(event)) => event,
                Ok(None) => return Ok(()),
                Err(e) if e.is_recoverable() => {
                    debug!(?peer, "unreadable event: {e}");
                    send_error(&mut writer, codes::BAD_EVENT, e.to_string()).await?;
                    continue;
                }
                Err(wyoming::Error::Io(e)) => return Err(e.into()),
                Err(e) => {
                    // Best effort: the peer may already be gone.
                    let _ = send_error(&mut writer, codes::BAD_STREAM, e.to_string()).await;
                    return Err(e);
                }
            };
            let replies = self.handle(&mut session, event).await;
            for reply in replies {
                wyoming::write_event(&mut writer, &reply).await?;
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
                Ok(Some((utterance, language))) => self.transcribe(utterance, language).await,
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
        language: Option<String>,
    ) -> Result<Vec<Event>, (&'static str, String)> {
        let seconds = utterance.seconds();
        let mut recognizer = self.recognizer.clone().lock_owned().await;
        let job = tokio::task::spawn_blocking(move || {
            let samples = utterance
                .into_whisper_input()
                .map_err(|e| (codes::BAD_AUDIO, e.to_string()))?;
            recognizer
                .transcribe(&samples, language.as_deref())
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
            retried = t.retried,
            collapsed = t.collapsed,
            text = %t.text,
            "transcribed"
        );
        Ok(vec![Transcript {
            text: t.text,
            language: Some(t.language),
        }
        .to_event()])
    }
}

fn bad_request(e: wyoming::Error) -> (&'static str, String) {
    (codes::BAD_REQUEST, e.to_string())
}

async fn send_error<W: AsyncWrite + Unpin>(
    writer: &mut W,
    code: &str,
    text: String,
) -> Result<(), wyoming::Error> {
    let event = ErrorEvent {
        text,
        code: Some(code.into()),
    };
    wyoming::write_event(writer, &event.to_event()).await
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
        }],
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
    /// The language of the next transcript, from `transcribe`.
    language: Option<String>,
    max_audio_seconds: f64,
}

type Reply = Result<Vec<Event>, (&'static str, String)>;

impl Session {
    fn new(max_audio_seconds: f64) -> Self {
        Session {
            stream: Stream::Idle,
            language: None,
            max_audio_seconds,
        }
    }

    fn transcribe(&mut self, t: Transcribe) -> Vec<Event> {
        if let Some(name) = &t.name {
            debug!("transcribe asks for model `{name}`; this server has one model");
        }
        self.language = t.language;
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
        self.stream = Stream::Receiving(Utterance::new(self.max_audio_seconds));
        Ok(vec![])
    }

    fn chunk(&mut self, chunk: AudioChunk) -> Reply {
        match &mut self.stream {
            Stream::Receiving(utterance) => match utterance.push(&chunk.format, &chunk.audio) {
                Ok(()) => Ok(vec![]),
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

    fn fail_stream(&mut self) {
        self.stream = Stream::Discarding;
    }

    /// Ends the stream: the utterance and its language to transcribe, if there is one.
    #[allow(clippy::type_complexity)]
    fn stop(&mut self) -> Result<Option<(Utterance, Option<String>)>, (&'static str, String)> {
        match std::mem::replace(&mut self.stream, Stream::Idle) {
            Stream::Receiving(utterance) => Ok(Some((utterance, self.language.take()))),
            Stream::Discarding => {
                self.language = None;
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
        let mut s = Session::new(10.0);
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
        });
        s.start(AudioStart {
            format: wyoming::AudioFormat::SPEECH,
            timestamp: None,
        })
        .unwrap();
        s.chunk(chunk(16000)).unwrap();
        s.chunk(chunk(22050)).unwrap();
        let (u, lang) = s.stop().unwrap().unwrap();
        assert_eq!(lang.as_deref(), Some("en"));
        assert!(u.seconds() > 0.0);
        assert!(s.language.is_none());
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
}
