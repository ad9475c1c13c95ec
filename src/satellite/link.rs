//! The connection to one satellite, kept for as long as hearth runs.
//!
//! One task does everything, in one `select!` loop, so no state is shared: it connects (and,
//! after a failure or a dropped connection, connects again after a backoff), greets the
//! satellite (`describe` → `info`, then `run-satellite`), writes its microphone into the
//! pipe Capture reads, sends the reply audio Playback plays and what the pipeline publishes,
//! and keeps the microphone's time: whenever the satellite streams nothing (it waits for
//! its own wake word, or is gone) the pipe gets silence, so an utterance cut off ends with
//! the hangover, as a speaker falling silent would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncWriteExt, BufReader, SimplexStream, WriteHalf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, Notify};
use wyoming::{
    AudioChunk, AudioFormat, AudioStart, AudioStop, Describe, Detection, Event as Wire,
    EventReader, Eventable, Info, PauseSatellite, PipelineStage, Played, RunPipeline, RunSatellite,
    Synthesize, Transcript,
};

use super::{SatelliteConfig, MAX_BACKOFF, MIC_RATE, MIN_BACKOFF, REPLY_RATE};
use crate::audio::StreamBlock;
use crate::events::{Event, Events};

/// Connecting, and the answer to `describe`, each wait this long at most.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the microphone's time is kept and a reply's end looked for.
const TICK: Duration = Duration::from_millis(50);
/// The satellite has stopped streaming once no audio came for this long: silence fills in
/// from then on. Never while it streams: a late chunk (Wi-Fi) must not put a pause inside
/// what someone says.
const STREAM_GAP: Duration = Duration::from_millis(400);
/// A reply's `audio-stop` is sent once Playback has had nothing to play for this long (it
/// runs dry between sentences now and then).
const REPLY_END: Duration = Duration::from_millis(400);
/// Undecodable events in a row before the connection is given up as out of step.
const MAX_BAD_EVENTS: u32 = 8;
/// A connection that lasted this long resets the backoff.
const STABLE: Duration = Duration::from_secs(10);

/// The satellite's end of the link while connected.
struct Connection {
    reader: EventReader<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    since: Instant,
    /// The satellite plays replies (its pipeline ends at `tts`).
    speaker: bool,
    bad_events: u32,
}

/// The microphone pipe, and the clock it keeps.
struct Mic {
    pipe: WriteHalf<SimplexStream>,
    /// When the clock says the pipe's first sample was; moved on by the satellite's audio
    /// (its pace is the microphone's), so that only the time it streams nothing is filled.
    started: Instant,
    /// Samples written so far.
    written: u64,
    /// When the satellite's audio last came.
    last_audio: Option<Instant>,
    /// A chunk in a format this cannot use was logged.
    warned_format: bool,
    /// Audio was dropped for a stalled pipe (logged once until the pipe takes audio again).
    stalled: bool,
}

impl Mic {
    /// Samples the clock says should have been written by now.
    fn due(&self, now: Instant) -> u64 {
        (now.saturating_duration_since(self.started).as_secs_f64() * f64::from(MIC_RATE)) as u64
    }

    async fn write(&mut self, samples: &[i16]) {
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        match tokio::time::timeout(Duration::from_secs(1), self.pipe.write_all(&bytes)).await {
            Ok(Ok(())) => {
                self.written += samples.len() as u64;
                self.stalled = false;
            }
            // Capture is not reading (starting, restarting): the audio is dropped, the clock
            // goes on
            _ => {
                if !self.stalled {
                    tracing::warn!("satellite audio dropped: the capture stage is not reading");
                }
                self.stalled = true;
                self.written = self.due(Instant::now());
            }
        }
    }

    /// The satellite's audio: written, and the clock set by it.
    async fn audio(&mut self, samples: &[i16], now: Instant) {
        self.write(samples).await;
        self.last_audio = Some(now);
        let written = Duration::from_secs_f64(self.written as f64 / f64::from(MIC_RATE));
        self.started = now.checked_sub(written).unwrap_or(self.started);
    }

    /// Silence up to the clock, once the satellite has stopped streaming.
    async fn keep_time(&mut self, now: Instant) {
        if self
            .last_audio
            .is_some_and(|t| now.saturating_duration_since(t) < STREAM_GAP)
        {
            return;
        }
        let due = self.due(now);
        if due > self.written {
            let n = (due - self.written).min(u64::from(MIC_RATE)) as usize;
            self.write(&vec![0; n]).await;
        }
    }

    /// A chunk of the satellite's microphone, as 16 kHz mono samples (`None`: a format this
    /// cannot read, logged once).
    fn decode(&mut self, chunk: &AudioChunk, satellite: &str) -> Option<Vec<i16>> {
        let f = chunk.format;
        if f.width != 2 || f.channels == 0 || f.rate == 0 {
            if !self.warned_format {
                self.warned_format = true;
                tracing::warn!(satellite, rate = f.rate, width = f.width, channels = f.channels,
                    "satellite audio in a format hearth cannot read (it takes 16-bit PCM): dropped; run the satellite with --mic-command-width 2");
            }
            return None;
        }
        let channels = f.channels as usize;
        let first: Vec<f32> = chunk
            .audio
            .chunks_exact(2 * channels)
            .map(|frame| crate::voice::i16_to_f32(i16::from_le_bytes([frame[0], frame[1]])))
            .collect();
        let samples = if f.rate == MIC_RATE {
            first
        } else {
            crate::audio::resample::resample(&first, f.rate, MIC_RATE).ok()?
        };
        Some(samples.into_iter().map(crate::voice::f32_to_i16).collect())
    }
}

/// The reply audio on its way to the satellite.
#[derive(Default)]
struct Reply {
    /// `audio-start` was sent and `audio-stop` not yet.
    open: bool,
    /// Playback ran dry at this moment (the reply ends unless more comes soon).
    dry_since: Option<Instant>,
}

pub(super) struct Link {
    config: SatelliteConfig,
    mic: Mic,
    blocks: mpsc::UnboundedReceiver<StreamBlock>,
    listen: Arc<Notify>,
    events: broadcast::Receiver<Event>,
    global: Option<Events>,
    conn: Option<Connection>,
    reply: Reply,
    backoff: Duration,
    retry_at: Instant,
    /// Where zeroconf finds satellites (for one configured without an address).
    found: Option<super::discover::Found>,
    /// hearth's microphone mute: the satellite is paused while it holds.
    muted: Arc<AtomicBool>,
    /// `pause-satellite` was sent on this connection (and no `run-satellite` since).
    paused: bool,
    /// The last connection failure was logged (the next are not, until one succeeds).
    failing: bool,
    /// The pipeline's event stream is open (once it has ended, it is not waited on).
    publishing: bool,
}

/// What a link is connected to on hearth's side.
pub(super) struct Ends {
    /// The pipe Capture reads the microphone from.
    pub(super) pipe: WriteHalf<SimplexStream>,
    /// Playback's reply audio.
    pub(super) blocks: mpsc::UnboundedReceiver<StreamBlock>,
    /// Opened by a `run-pipeline` from `asr`.
    pub(super) listen: Arc<Notify>,
    /// What the satellite's pipeline publishes.
    pub(super) events: broadcast::Receiver<Event>,
    /// hearth's own event stream.
    pub(super) global: Option<Events>,
    /// Where zeroconf finds satellites.
    pub(super) found: Option<super::discover::Found>,
    /// hearth's microphone mute.
    pub(super) muted: Arc<AtomicBool>,
}

impl Link {
    pub(super) fn new(config: SatelliteConfig, ends: Ends) -> Self {
        let Ends {
            pipe,
            blocks,
            listen,
            events,
            global,
            found,
            muted,
        } = ends;
        let now = Instant::now();
        Link {
            config,
            mic: Mic {
                pipe,
                started: now,
                written: 0,
                last_audio: None,
                warned_format: false,
                stalled: false,
            },
            blocks,
            listen,
            events,
            global,
            conn: None,
            reply: Reply::default(),
            backoff: MIN_BACKOFF,
            retry_at: now,
            found,
            muted,
            paused: false,
            failing: false,
            publishing: true,
        }
    }

    /// Until the task is aborted.
    pub(super) async fn run(mut self) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.conn.is_none() && Instant::now() >= self.retry_at {
                self.connect().await;
            }
            tokio::select! {
                read = next_event(self.conn.as_mut()) => self.on_read(read).await,
                Some(block) = self.blocks.recv() => self.on_block(block).await,
                event = self.events.recv(), if self.publishing => self.on_published(event).await,
                _ = tick.tick() => self.on_tick().await,
            }
        }
    }

    /// Where to connect now: the configured address, or where zeroconf found it.
    fn address(&self) -> Result<String, String> {
        if let Some(a) = &self.config.address {
            return Ok(a.clone());
        }
        let found = self
            .found
            .as_ref()
            .and_then(|f| f.borrow().get(&self.config.name).cloned());
        found.ok_or_else(|| {
            format!(
                "it has not announced itself by zeroconf under {:?} (its --zeroconf-name)",
                self.config.name
            )
        })
    }

    async fn connect(&mut self) {
        let name = self.config.name.as_str();
        let address = self.address();
        let connected = match &address {
            Ok(a) => handshake(a).await,
            Err(e) => Err(e.clone()),
        };
        let address = address.unwrap_or_default();
        match connected {
            Ok((conn, info)) => {
                let sat = info.satellite;
                tracing::info!(
                    satellite = name,
                    %address,
                    their_name = sat.as_ref().map(|s| s.name.as_str()),
                    area = sat.as_ref().and_then(|s| s.area.as_deref()),
                    "satellite connected"
                );
                self.conn = Some(conn);
                self.failing = false;
                // the handshake ran it; paused again at the next tick if muted
                self.paused = false;
                self.link_changed(true);
            }
            Err(e) => {
                if !self.failing {
                    tracing::warn!(satellite = name, %address, error = %e,
                        "cannot reach the satellite: trying again, with a growing wait up to 30 s");
                }
                self.failing = true;
                self.retry_later();
            }
        }
    }

    /// hearth's event stream hears of the connection (the D-Bus `Satellites` property).
    fn link_changed(&self, connected: bool) {
        let satellite = self.config.name.clone();
        let event = Event::SatelliteLink {
            satellite,
            connected,
        };
        crate::events::publish(self.global.as_ref(), event);
    }

    fn retry_later(&mut self) {
        self.retry_at = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
    }

    /// The connection is over: the next attempt comes after the backoff.
    fn disconnect(&mut self, why: &str) {
        if let Some(conn) = self.conn.take() {
            tracing::warn!(satellite = %self.config.name, why, "satellite disconnected: connecting again");
            if conn.since.elapsed() >= STABLE {
                self.backoff = MIN_BACKOFF;
            }
            self.link_changed(false);
        }
        self.reply = Reply::default();
        self.retry_later();
    }

    async fn on_read(&mut self, read: Result<Option<Wire>, wyoming::Error>) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        match read {
            Ok(Some(event)) => {
                conn.bad_events = 0;
                self.on_event(event).await;
            }
            Ok(None) => self.disconnect("it closed the connection"),
            Err(e) if e.is_recoverable() && conn.bad_events < MAX_BAD_EVENTS => {
                conn.bad_events += 1;
                tracing::warn!(satellite = %self.config.name, error = %e, "an event from the satellite could not be read: skipped");
            }
            Err(e) => self.disconnect(&format!("its stream cannot be read: {e}")),
        }
    }

    async fn on_event(&mut self, event: Wire) {
        let name = self.config.name.clone();
        if AudioChunk::is(&event) {
            match AudioChunk::from_event(event) {
                Ok(chunk) => {
                    if let Some(samples) = self.mic.decode(&chunk, &name) {
                        self.mic.audio(&samples, Instant::now()).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(satellite = %name, error = %e, "a bad audio chunk: skipped")
                }
            }
        } else if RunPipeline::is(&event) {
            match RunPipeline::from_event(event) {
                Ok(run) => {
                    tracing::info!(satellite = %name, start = ?run.start_stage, end = ?run.end_stage, "the satellite runs a pipeline");
                    if let Some(conn) = self.conn.as_mut() {
                        conn.speaker = run.end_stage == PipelineStage::Tts;
                    }
                    // it heard its own wake word: what follows is the request
                    if run.start_stage != PipelineStage::Wake {
                        self.listen.notify_one();
                    }
                }
                Err(e) => {
                    tracing::warn!(satellite = %name, error = %e, "a bad run-pipeline: skipped")
                }
            }
        } else if Played::is(&event) {
            tracing::debug!(satellite = %name, "the satellite played the reply");
        } else {
            tracing::debug!(satellite = %name, event = %event.kind, "satellite event");
        }
    }

    /// Reply audio from Playback: to the satellite if it plays replies, else dropped.
    async fn on_block(&mut self, block: StreamBlock) {
        let Some(conn) = self.conn.as_mut().filter(|c| c.speaker) else {
            return;
        };
        let format = AudioFormat {
            rate: REPLY_RATE,
            width: 2,
            channels: 1,
        };
        let mut out = Vec::new();
        match block {
            StreamBlock::Audio(samples) => {
                if !self.reply.open {
                    self.reply.open = true;
                    out.push(
                        AudioStart {
                            format,
                            timestamp: None,
                        }
                        .to_event(),
                    );
                }
                self.reply.dry_since = None;
                out.push(
                    AudioChunk {
                        format,
                        timestamp: None,
                        audio: samples.iter().flat_map(|s| s.to_le_bytes()).collect(),
                    }
                    .to_event(),
                );
            }
            StreamBlock::Idle => {
                self.reply.dry_since.get_or_insert_with(Instant::now);
            }
        }
        let sent = send(conn, &out).await;
        if let Err(e) = sent {
            self.disconnect(&format!("writing to it failed: {e}"));
        }
    }

    /// What the satellite's pipeline published: the satellite hears of what concerns it,
    /// and hearth's own stream of all of it.
    async fn on_published(&mut self, event: Result<Event, broadcast::error::RecvError>) {
        let event = match event {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(satellite = %self.config.name, missed = n, "satellite events missed");
                return;
            }
            // the pipeline has ended (the task is aborted soon after): nothing more comes
            Err(broadcast::error::RecvError::Closed) => {
                self.publishing = false;
                return;
            }
        };
        let wire = match &event {
            Event::Heard { text } => Some(
                Transcript {
                    text: text.clone(),
                    language: None,
                    phrase_pass: None,
                }
                .to_event(),
            ),
            Event::Replied { text } => Some(
                Synthesize {
                    text: text.clone(),
                    voice: None,
                }
                .to_event(),
            ),
            Event::WakeDetected { wake_word } => Some(
                Detection {
                    name: Some(wake_word.clone()),
                    timestamp: None,
                }
                .to_event(),
            ),
            _ => None,
        };
        let satellite = self.config.name.clone();
        let what = Box::new(event);
        crate::events::publish(self.global.as_ref(), Event::Satellite { satellite, what });
        if let (Some(wire), Some(conn)) = (wire, self.conn.as_mut()) {
            if let Err(e) = send(conn, &[wire]).await {
                self.disconnect(&format!("writing to it failed: {e}"));
            }
        }
    }

    async fn on_tick(&mut self) {
        let now = Instant::now();
        self.mic.keep_time(now).await;
        self.follow_mute().await;
        let ended = self
            .reply
            .dry_since
            .is_some_and(|t| now.saturating_duration_since(t) >= REPLY_END);
        if ended && self.reply.open {
            self.reply = Reply::default();
            if let Some(conn) = self.conn.as_mut() {
                if let Err(e) = send(conn, &[AudioStop::default().to_event()]).await {
                    self.disconnect(&format!("writing to it failed: {e}"));
                }
            }
        }
    }
}

impl Link {
    /// Pause the satellite while hearth is muted, run it again after.
    async fn follow_mute(&mut self) {
        let muted = self.muted.load(Ordering::SeqCst);
        let Some(conn) = self.conn.as_mut().filter(|_| muted != self.paused) else {
            return;
        };
        let event = match muted {
            true => PauseSatellite {}.to_event(),
            false => RunSatellite {}.to_event(),
        };
        tracing::info!(satellite = %self.config.name, paused = muted, "muted: the satellite follows");
        match send(conn, &[event]).await {
            Ok(()) => self.paused = muted,
            Err(e) => self.disconnect(&format!("writing to it failed: {e}")),
        }
    }
}

/// The next event from the satellite (never, while not connected).
async fn next_event(conn: Option<&mut Connection>) -> Result<Option<Wire>, wyoming::Error> {
    match conn {
        Some(c) => c.reader.read_event().await,
        None => std::future::pending().await,
    }
}

async fn send(conn: &mut Connection, events: &[Wire]) -> Result<(), wyoming::Error> {
    for e in events {
        wyoming::write_event(&mut conn.writer, e).await?;
    }
    Ok(())
}

/// Connect, ask what it is, and start it.
async fn handshake(address: &str) -> Result<(Connection, Info), String> {
    let stream = tokio::time::timeout(HANDSHAKE_TIMEOUT, TcpStream::connect(address))
        .await
        .map_err(|_| "connecting timed out".to_string())?
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let (read, writer) = stream.into_split();
    let mut conn = Connection {
        reader: EventReader::new(BufReader::new(read)),
        writer,
        since: Instant::now(),
        speaker: false,
        bad_events: 0,
    };
    send(&mut conn, &[Describe {}.to_event()])
        .await
        .map_err(|e| e.to_string())?;
    let info = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        loop {
            match conn.reader.read_event().await {
                Ok(Some(e)) if Info::is(&e) => {
                    return Info::from_event(e).map_err(|e| e.to_string())
                }
                Ok(Some(_)) => continue,
                Ok(None) => return Err("it closed the connection".to_string()),
                Err(e) if e.is_recoverable() => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
    })
    .await
    .map_err(|_| "no answer to describe: is it a Wyoming satellite?".to_string())??;
    if info.satellite.is_none() {
        return Err("it is a Wyoming server but no satellite (its info has no satellite)".into());
    }
    send(&mut conn, &[RunSatellite {}.to_event()])
        .await
        .map_err(|e| e.to_string())?;
    Ok((conn, info))
}
