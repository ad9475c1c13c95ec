//! The Playback actor: plays [`Pcm`] replies to a sound card or a WAV file and reports
//! [`PlaybackEvent`]s.
//!
//! ```text
//! Play(Pcm) ─► resample to the output rate ─► pending ─(10 ms tick)─► ring ─► output callback
//!                                                                             (cpal, or the WAV
//!                                                                              writer thread)
//! ```
//!
//! A *reply* (a [`ReplyId`]) starts with its first [`PlaybackMsg::Play`] after idle and ends
//! with its [`PlaybackMsg::EndOfReply`] once everything queued has been played (then
//! `Stopped { interrupted: false }`), or with [`PlaybackMsg::Stop`] (barge-in: whatever is
//! queued is dropped, the output is silent at its next callback, then
//! `Stopped { interrupted: true }`). Its events carry its id. Without `EndOfReply` a reply
//! whose queue runs dry is only waiting for more speech: the output plays silence and no event
//! is sent. Audio of a reply that was stopped, arriving after the stop, is dropped: a `Play`
//! of another reply starts that one.
//!
//! Events go into an unbounded channel: they are few (at most one `Level` per 50 ms while
//! playing, plus `Started`/`Stopped` per reply), `Started`/`Stopped` must never be lost, and
//! the actor must never wait on whoever listens.
//!
//! The output side only ever sees the lock-free ring and a few atomics ([`Renderer`]): a
//! `Stop` bumps a flush generation; the callback, seeing it, discards the ring and
//! acknowledges; nothing new is queued until the acknowledgement, so nothing of the stopped
//! reply can follow it. `Started` is sent (on the next 10 ms tick) once the callback has taken
//! the reply's first sample.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::aec::{RenderLink, RenderTap};
use super::device::{self, DeviceSpec, Render};
use super::resample::{self, StreamResampler};
use super::wav::WavSink;
use super::AudioError;
use crate::voice::{i16_to_f32, Pcm, PlaybackEvent, ReplyId};

/// The actor's clock: pending audio moves into the ring and events are checked this often.
pub(crate) const TICK: Duration = Duration::from_millis(10);
/// How long an idle WAV writer sleeps at most before looking at the ring again (it is woken
/// as soon as there is something to write).
const IDLE_WAIT: Duration = Duration::from_millis(500);
/// `Level` events while playing, at most one per this many ticks.
const LEVEL_EVERY_TICKS: u64 = 5;
/// Seconds of audio the ring between the actor and the output holds.
const RING_SECS: f32 = 1.0;
/// A stop that the output has not acknowledged after this long is reported anyway.
const ACK_TIMEOUT: Duration = Duration::from_millis(500);

/// Where the audio goes.
#[derive(Debug, Clone, PartialEq)]
pub enum PlaybackSink {
    /// A mono 16-bit WAV file at `rate` Hz, created (truncated) at spawn; every reply of the
    /// actor's life is appended to it, and it is finalized when the actor stops (the header is
    /// also brought up to date whenever the output goes idle). `realtime` paces the writing
    /// like a sound card (10 ms blocks), so a `Stop` mid-reply cuts the file there; otherwise
    /// samples are written as fast as they come.
    Wav {
        /// The file.
        path: PathBuf,
        /// Its sample rate (Pcm of another rate is resampled).
        rate: u32,
        /// Pace the writing in real time.
        realtime: bool,
    },
    /// A sound card through cpal, at the device's rate.
    Device(DeviceSpec),
    /// 16-bit blocks over a channel, paced in real time like a sound card (a satellite's
    /// speaker, over the network).
    Stream(StreamOut),
}

/// Where a [`PlaybackSink::Stream`] sends what it plays, and at what rate.
#[derive(Debug, Clone)]
pub struct StreamOut {
    /// For messages ("satellite bedroom").
    pub name: String,
    /// The sample rate of the blocks (Pcm of another rate is resampled).
    pub rate: u32,
    /// Where the blocks go.
    pub blocks: mpsc::UnboundedSender<StreamBlock>,
}

impl PartialEq for StreamOut {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.rate == other.rate
            && self.blocks.same_channel(&other.blocks)
    }
}

/// What a [`PlaybackSink::Stream`] sends.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamBlock {
    /// 10 ms of what plays now, mono.
    Audio(Vec<i16>),
    /// Nothing more to play for now (sent once when the output runs dry after audio).
    Idle,
}

/// What the Playback actor is spawned with.
pub struct PlaybackArgs {
    /// The output.
    pub sink: PlaybackSink,
    /// Where [`PlaybackEvent`]s go.
    pub events: mpsc::UnboundedSender<PlaybackEvent>,
    /// Echo cancellation's render reference: every sample the output plays (silence
    /// included) goes into a tap connected through this link. `None`: no tap.
    pub echo_tap: Option<RenderLink>,
    /// How loud: each chunk is scaled by its gain as it is queued.
    pub volume: crate::voice::Volume,
}

/// Messages to the [`Playback`] actor.
pub enum PlaybackMsg {
    /// Queue a chunk of `reply` (starts it when idle; dropped when `reply` was stopped).
    Play { reply: ReplyId, pcm: Pcm },
    /// `reply` is complete: `Stopped { interrupted: false }` once it has played (nothing,
    /// when it is not the reply under way).
    EndOfReply { reply: ReplyId },
    /// Barge-in: drop everything queued, silence the output, `Stopped { interrupted: true }`
    /// (a stop with no reply under way sends no event).
    Stop,
    /// `Stop`, and `reply`'s audio that comes after is dropped, even when none of it had
    /// come yet (Tts may still be sending what it synthesised before it was cancelled).
    Cut(ReplyId),
    /// A short sound that is not a reply (the earcon): queued at once, with no events; not
    /// played while a reply is under way (stop the reply first). A reply that follows it
    /// starts once it has played.
    Cue(Pcm),
    /// Counters and the output's format.
    Stats(RpcReplyPort<PlaybackStats>),
    /// The actor's own clock (sent by the actor to itself every [`TICK`] while it has
    /// something to play or a stop to confirm); harmless if sent by others.
    Tick,
}

/// Counters of the Playback actor.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackStats {
    /// The output, "host:device" or the WAV file's path.
    pub output: String,
    /// The output's sample rate.
    pub rate: u32,
    /// Output-rate samples taken by the output (played or discarded by a stop).
    pub consumed: u64,
    /// Output-rate samples queued so far.
    pub queued: u64,
    /// Replies that played to their end.
    pub replies_finished: u64,
    /// Replies stopped.
    pub replies_stopped: u64,
    /// `Play` chunks rejected (bad sample rate).
    pub rejected: u64,
    /// Time from the last `Stop` to the output's acknowledgement (its next callback).
    pub last_stop_latency: Option<Duration>,
}

/// The state the output side shares with the actor: atomics only.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Bumped by a stop: the output discards the ring.
    flush_gen: AtomicU64,
    /// The last flush generation the output has carried out.
    flush_ack: AtomicU64,
    /// Samples taken out of the ring (played or flushed).
    consumed: AtomicU64,
    /// RMS of the output's last block with audio, as `f32` bits.
    level: AtomicU32,
}

/// The output's end of the ring. Lives in the cpal callback (or the WAV writer thread): it
/// never blocks and never allocates.
pub(crate) struct Renderer {
    ring: rtrb::Consumer<f32>,
    shared: Arc<Shared>,
    seen_gen: u64,
    /// Where what is played goes for the echo canceller.
    tap: Option<RenderTap>,
}

impl Renderer {
    fn new(ring: rtrb::Consumer<f32>, shared: Arc<Shared>, tap: Option<RenderTap>) -> Self {
        Renderer {
            ring,
            shared,
            seen_gen: 0,
            tap,
        }
    }

    /// Carries out a pending flush.
    fn flush_if_asked(&mut self) {
        let gen = self.shared.flush_gen.load(Ordering::Acquire);
        if gen != self.seen_gen {
            let n = self.ring.slots();
            if let Ok(chunk) = self.ring.read_chunk(n) {
                chunk.commit_all();
            }
            self.shared.consumed.fetch_add(n as u64, Ordering::AcqRel);
            self.seen_gen = gen;
            self.shared.flush_ack.store(gen, Ordering::Release);
        }
    }

    /// Takes up to `max` samples into `out` (no padding): for the WAV writer.
    fn take(&mut self, max: usize, out: &mut Vec<f32>) {
        out.clear();
        self.flush_if_asked();
        let n = self.ring.slots().min(max);
        self.render(n, |_, s| out.push(s));
    }
}

impl Render for Renderer {
    /// Fills `frames` output frames: `put(i, sample)` for each, silence where the ring is dry.
    fn render(&mut self, frames: usize, mut put: impl FnMut(usize, f32)) {
        self.flush_if_asked();
        let n = self.ring.slots().min(frames);
        let mut sum = 0.0f32;
        if let Ok(chunk) = self.ring.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            for (i, &s) in a.iter().chain(b.iter()).enumerate() {
                put(i, s);
                sum += s * s;
            }
            if let Some(tap) = self.tap.as_mut() {
                tap.push(a);
                tap.push(b);
            }
            chunk.commit_all();
        }
        for i in n..frames {
            put(i, 0.0);
        }
        if let Some(tap) = self.tap.as_mut() {
            tap.push_silence(frames - n);
        }
        if n > 0 {
            self.shared.consumed.fetch_add(n as u64, Ordering::AcqRel);
            let rms = (sum / n as f32).sqrt();
            self.shared.level.store(rms.to_bits(), Ordering::Relaxed);
        }
    }
}

/// The output: a device stream or the WAV writer thread, kept alive on a thread of its own
/// (which also keeps blocking driver calls off the async runtime).
struct Output {
    label: String,
    rate: u32,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<(), AudioError>>>,
}

impl Output {
    /// Wake the output's thread: a WAV writer sleeps while there is nothing to write.
    fn wake(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    fn open(
        sink: &PlaybackSink,
        shared: Arc<Shared>,
        echo_tap: Option<RenderLink>,
    ) -> Result<(Output, rtrb::Producer<f32>), AudioError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let thread_stop = Arc::clone(&stop);
        let sink_owned = sink.clone();
        let thread = std::thread::Builder::new()
            .name("hearth-playback".into())
            .spawn(move || match sink_owned {
                PlaybackSink::Device(spec) => {
                    let opened = device::open_output(&spec, RING_SECS, |ring, rate| {
                        let tap = echo_tap.map(|link| link.connect(rate));
                        Renderer::new(ring, shared, tap)
                    });
                    match opened {
                        Ok((stream, producer, info)) => {
                            let _ = tx.send(Ok((producer, info.device, info.rate)));
                            while !thread_stop.load(Ordering::Acquire) {
                                std::thread::park_timeout(Duration::from_millis(50));
                            }
                            drop(stream);
                            Ok(())
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            Ok(())
                        }
                    }
                }
                PlaybackSink::Wav {
                    path,
                    rate,
                    realtime,
                } => {
                    let wav = match WavSink::create(path, rate) {
                        Ok(w) => w,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return Ok(());
                        }
                    };
                    let capacity = ((rate as f32 * RING_SECS) as usize).max(4096);
                    let (producer, consumer) = rtrb::RingBuffer::new(capacity);
                    let label = wav.path().display().to_string();
                    let _ = tx.send(Ok((producer, label, rate)));
                    let tap = echo_tap.map(|link| link.connect(rate));
                    let renderer = Renderer::new(consumer, shared, tap);
                    write_blocks(wav, renderer, realtime, &thread_stop)
                }
                PlaybackSink::Stream(out) => {
                    let capacity = ((out.rate as f32 * RING_SECS) as usize).max(4096);
                    let (producer, consumer) = rtrb::RingBuffer::new(capacity);
                    let _ = tx.send(Ok((producer, out.name.clone(), out.rate)));
                    let tap = echo_tap.map(|link| link.connect(out.rate));
                    let renderer = Renderer::new(consumer, shared, tap);
                    write_blocks(out, renderer, true, &thread_stop)
                }
            })
            .map_err(|e| AudioError::Worker(format!("cannot start the playback thread: {e}")))?;
        let (producer, label, rate) = rx
            .recv()
            .map_err(|_| AudioError::Worker("the playback thread died while opening".into()))??;
        Ok((
            Output {
                label,
                rate,
                stop,
                thread: Some(thread),
            },
            producer,
        ))
    }

    async fn close(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            match tokio::task::spawn_blocking(move || thread.join()).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => {
                    tracing::error!(output = %self.label, error = %e, "playback output failed")
                }
                _ => tracing::error!(output = %self.label, "the playback thread panicked"),
            }
        }
    }
}

/// The output side of a sink that is written to rather than called back (a WAV file, a
/// stream of blocks).
trait BlockWriter {
    fn rate(&self) -> u32;
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError>;
    /// The ring ran dry after audio.
    fn idle(&mut self) -> Result<(), AudioError>;
    fn finish(self) -> Result<(), AudioError>;
}

/// A WAV file: its header is brought up to date whenever it goes idle.
impl BlockWriter for WavSink {
    fn rate(&self) -> u32 {
        WavSink::rate(self)
    }
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        self.write_f32(samples)
    }
    fn idle(&mut self) -> Result<(), AudioError> {
        self.flush()
    }
    fn finish(self) -> Result<(), AudioError> {
        self.finalize()
    }
}

/// A stream: nobody listening any more is no error (a satellite reconnects on its own).
impl BlockWriter for StreamOut {
    fn rate(&self) -> u32 {
        self.rate
    }
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        let block = samples
            .iter()
            .map(|&s| crate::voice::f32_to_i16(s))
            .collect();
        let _ = self.blocks.send(StreamBlock::Audio(block));
        Ok(())
    }
    fn idle(&mut self) -> Result<(), AudioError> {
        let _ = self.blocks.send(StreamBlock::Idle);
        Ok(())
    }
    fn finish(mut self) -> Result<(), AudioError> {
        self.idle()
    }
}

/// The writer thread of a WAV or stream sink. Writes what the ring holds, in 10 ms blocks
/// when `realtime`; tells the writer whenever it goes idle; finishes it at the end.
fn write_blocks(
    mut wav: impl BlockWriter,
    mut renderer: Renderer,
    realtime: bool,
    stop: &AtomicBool,
) -> Result<(), AudioError> {
    let block = (wav.rate() as usize / 100).max(1);
    let mut buf = Vec::with_capacity(block.max(4096));
    let mut dirty = false;
    let mut t0 = Instant::now();
    let mut ticks: u32 = 0;
    while !stop.load(Ordering::Acquire) {
        let max = if realtime { block } else { buf.capacity() };
        renderer.take(max, &mut buf);
        if buf.is_empty() {
            renderer.flush_if_asked();
            if dirty {
                wav.idle()?;
                dirty = false;
            }
            // Idle: sleep until the actor queues speech or asks for a stop (it unparks this
            // thread: `Output::wake`); the timeout only bounds a missed wake. Real-time
            // pacing starts afresh with the next reply.
            std::thread::park_timeout(IDLE_WAIT);
            t0 = Instant::now();
            ticks = 0;
            continue;
        }
        wav.write(&buf)?;
        dirty = true;
        if realtime {
            ticks = ticks.wrapping_add(1);
            let next = t0 + TICK * ticks;
            let now = Instant::now();
            if next > now {
                std::thread::park_timeout(next - now);
            } else if now - next > Duration::from_millis(200) {
                // fell far behind (a stalled machine): do not burst to catch up
                ticks = ((now - t0).as_millis() / TICK.as_millis()) as u32;
            }
        }
    }
    wav.finish()
}

/// The current reply.
struct Reply {
    id: ReplyId,
    /// Index (in queue order) of its first sample.
    start: u64,
    started: bool,
    /// Index one past its last sample, once `EndOfReply` came.
    end: Option<u64>,
}

/// A stop the output has not yet acknowledged.
struct Stopping {
    gen: u64,
    since: Instant,
    /// The reply stopped (`None`: a cue alone, cut silently: nobody waits for its end).
    reply: Option<ReplyId>,
    /// Its `Stopped` was sent (acknowledged, or given up waiting for).
    reported: bool,
}

/// The Playback actor's state.
pub struct PlaybackState {
    output: Output,
    ring: rtrb::Producer<f32>,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<PlaybackEvent>,
    pending: VecDeque<f32>,
    resampler: Option<StreamResampler>,
    scratch_in: Vec<f32>,
    scratch_out: Vec<f32>,
    /// Samples pushed into the ring so far.
    pushed: u64,
    reply: Option<Reply>,
    /// The last reply stopped: its audio that comes after the stop is dropped.
    cut: Option<ReplyId>,
    /// A stop waiting for the output's acknowledgement: generation, when, the reply stopped
    /// (none: a cue alone, cut silently), and whether its `Stopped` was reported.
    stopping: Option<Stopping>,
    gen: u64,
    ticks: u64,
    tick_task: Option<JoinHandle<()>>,
    stats: PlaybackStats,
    volume: crate::voice::Volume,
}

impl PlaybackState {
    fn emit(&self, event: PlaybackEvent) {
        if self.events.send(event).is_err() {
            tracing::debug!("playback event dropped: nobody listens");
        }
    }

    /// Moves pending samples into the ring, as many as fit.
    fn feed(&mut self) {
        if self.stopping.is_some() {
            return;
        }
        let n = self.ring.slots().min(self.pending.len());
        if n == 0 {
            return;
        }
        if let Ok(chunk) = self.ring.write_chunk_uninit(n) {
            let written = chunk.fill_from_iter(self.pending.drain(..n));
            self.pushed += written as u64;
            self.stats.queued = self.pushed;
        }
        self.output.wake();
    }

    /// Index the next queued sample will have.
    fn queue_end(&self) -> u64 {
        self.pushed + self.pending.len() as u64
    }

    fn play(&mut self, reply: ReplyId, pcm: Pcm) {
        if pcm.samples.is_empty() {
            return;
        }
        if self.cut == Some(reply) {
            tracing::debug!(%reply, "audio of a stopped reply dropped");
            return;
        }
        if let Err(e) = resample::check_rate(pcm.rate) {
            self.stats.rejected += 1;
            tracing::error!(error = %e, "Pcm chunk dropped");
            return;
        }
        match &self.reply {
            Some(r) if r.id != reply => {
                // the conductor ends a reply before it starts the next: this is a slip
                tracing::warn!(playing = %r.id, %reply, "audio of another reply joins the one playing");
            }
            Some(_) => {}
            None => {
                self.reply = Some(Reply {
                    id: reply,
                    start: self.queue_end(),
                    started: false,
                    end: None,
                })
            }
        }
        if self
            .resampler
            .as_ref()
            .is_none_or(|r| r.input_rate() != pcm.rate)
        {
            self.finish_resampler();
            match StreamResampler::new(pcm.rate, self.output.rate) {
                Ok(r) => self.resampler = Some(r),
                Err(e) => {
                    self.stats.rejected += 1;
                    tracing::error!(error = %e, "Pcm chunk dropped");
                    return;
                }
            }
        }
        self.scratch_in.clear();
        let gain = self.volume.gain();
        self.scratch_in
            .extend(pcm.samples.iter().map(|&s| i16_to_f32(s) * gain));
        self.scratch_out.clear();
        if let Some(r) = self.resampler.as_mut() {
            if let Err(e) = r.push(&self.scratch_in, &mut self.scratch_out) {
                tracing::error!(error = %e, "resampling speech failed; chunk dropped");
                self.stats.rejected += 1;
            }
        }
        self.pending.extend(self.scratch_out.drain(..));
        self.feed();
    }

    fn finish_resampler(&mut self) {
        if let Some(mut r) = self.resampler.take() {
            self.scratch_out.clear();
            if let Err(e) = r.finish(&mut self.scratch_out) {
                tracing::error!(error = %e, "resampling the end of speech failed");
            }
            self.pending.extend(self.scratch_out.drain(..));
        }
    }

    fn end_of_reply(&mut self, reply: ReplyId) {
        if self
            .reply
            .as_ref()
            .is_none_or(|r| r.id != reply || r.end.is_some())
        {
            return;
        }
        self.finish_resampler();
        let end = self.queue_end();
        if let Some(reply) = self.reply.as_mut() {
            reply.end = Some(end);
        }
        self.feed();
        self.check();
    }

    fn stop(&mut self) {
        let reply = self.reply.take().map(|r| r.id);
        let cue = !self.pending.is_empty();
        self.pending.clear();
        self.resampler = None;
        if reply.is_some() {
            self.cut = reply;
        }
        if reply.is_none() && !cue {
            return;
        }
        self.gen += 1;
        self.shared.flush_gen.store(self.gen, Ordering::Release);
        // a cue alone is cut silently: nobody waits for its end
        self.stopping = Some(Stopping {
            gen: self.gen,
            since: Instant::now(),
            reply,
            reported: reply.is_none(),
        });
        self.output.wake();
        if reply.is_some() {
            self.stats.replies_stopped += 1;
        }
        self.check();
    }

    /// Queues a cue ([`PlaybackMsg::Cue`]), resampled to the output's rate.
    fn cue(&mut self, pcm: Pcm) {
        if self.reply.is_some() {
            tracing::debug!("a cue during a reply is not played");
            return;
        }
        let gain = self.volume.gain();
        let samples: Vec<f32> = pcm.samples.iter().map(|&s| i16_to_f32(s) * gain).collect();
        match resample::resample(&samples, pcm.rate, self.output.rate) {
            Ok(at_rate) => {
                self.pending.extend(at_rate);
                self.feed();
            }
            Err(e) => {
                self.stats.rejected += 1;
                tracing::error!(error = %e, "cue dropped");
            }
        }
    }

    /// Sends whatever events are due.
    fn check(&mut self) {
        let now = Instant::now();
        if let Some(stop) = self.stopping.as_mut() {
            let acked = self.shared.flush_ack.load(Ordering::Acquire) >= stop.gen;
            let late = now - stop.since > ACK_TIMEOUT;
            if acked {
                let latency = now - stop.since;
                self.stats.last_stop_latency = Some(latency);
                tracing::debug!(latency_ms = latency.as_secs_f64() * 1e3, "playback stopped");
            } else if late && !stop.reported {
                tracing::warn!(output = %self.output.label, "the output has not taken the stop after {ACK_TIMEOUT:?} (stalled device?)");
            }
            let report = (acked || late) && !stop.reported;
            stop.reported |= report;
            if let (true, Some(reply)) = (report, stop.reply) {
                self.emit(PlaybackEvent::Stopped {
                    reply,
                    at: now,
                    interrupted: true,
                });
            }
            if acked {
                self.stopping = None;
            }
            return;
        }
        let consumed = self.shared.consumed.load(Ordering::Acquire);
        self.stats.consumed = consumed;
        let Some(reply) = self.reply.as_mut() else {
            return;
        };
        let mut events = Vec::new();
        if !reply.started && consumed > reply.start {
            reply.started = true;
            events.push(PlaybackEvent::Started {
                reply: reply.id,
                at: now,
            });
        }
        let finished = reply.end.is_some_and(|end| consumed >= end);
        if reply.started && !finished && self.ticks.is_multiple_of(LEVEL_EVERY_TICKS) {
            let rms = f32::from_bits(self.shared.level.load(Ordering::Relaxed));
            events.push(PlaybackEvent::Level { rms });
        }
        if finished {
            let (started, id) = (reply.started, reply.id);
            self.reply = None;
            self.stats.replies_finished += 1;
            // a reply without a single sample never started: nothing to report
            if started {
                events.push(PlaybackEvent::Stopped {
                    reply: id,
                    at: now,
                    interrupted: false,
                });
            }
        }
        for e in events {
            self.emit(e);
        }
    }
}

/// The Playback actor. Spawning it opens the output (an error names the device or file and
/// the fix).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use hearth::audio::{Playback, PlaybackArgs, PlaybackMsg, PlaybackSink};
/// use hearth::voice::Pcm;
/// use ractor::Actor;
///
/// let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let sink = PlaybackSink::Wav { path: "reply.wav".into(), rate: 22050, realtime: false };
/// let args = PlaybackArgs { sink, events, echo_tap: None, volume: Default::default() };
/// let (playback, handle) = Actor::spawn(None, Playback, args).await?;
/// let reply = hearth::voice::ReplyId::fresh();
/// let pcm = Pcm { samples: vec![0i16; 22050].into(), rate: 22050 };
/// playback.cast(PlaybackMsg::Play { reply, pcm })?;
/// playback.cast(PlaybackMsg::EndOfReply { reply })?;
/// while let Some(event) = rx.recv().await {
///     if matches!(event, hearth::voice::PlaybackEvent::Stopped { .. }) { break; }
/// }
/// playback.stop(None);
/// handle.await?;
/// # Ok(())
/// # }
/// ```
pub struct Playback;

impl Actor for Playback {
    type Msg = PlaybackMsg;
    type State = PlaybackState;
    type Arguments = PlaybackArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: PlaybackArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let shared = Arc::new(Shared::default());
        let sink = args.sink.clone();
        let echo_tap = args.echo_tap.clone();
        let opened = {
            let shared = Arc::clone(&shared);
            tokio::task::spawn_blocking(move || Output::open(&sink, shared, echo_tap)).await
        };
        let (output, ring) = match opened {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "playback cannot open its output");
                return Err(e.into());
            }
            Err(e) => return Err(AudioError::Worker(e.to_string()).into()),
        };
        tracing::info!(output = %output.label, rate = output.rate, "playback ready");
        let stats = PlaybackStats {
            output: output.label.clone(),
            rate: output.rate,
            consumed: 0,
            queued: 0,
            replies_finished: 0,
            replies_stopped: 0,
            rejected: 0,
            last_stop_latency: None,
        };
        Ok(PlaybackState {
            output,
            ring,
            shared,
            volume: args.volume,
            events: args.events,
            pending: VecDeque::new(),
            resampler: None,
            scratch_in: Vec::new(),
            scratch_out: Vec::new(),
            pushed: 0,
            reply: None,
            cut: None,
            stopping: None,
            gen: 0,
            ticks: 0,
            tick_task: None,
            stats,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            PlaybackMsg::Play { reply, pcm } => state.play(reply, pcm),
            PlaybackMsg::EndOfReply { reply } => state.end_of_reply(reply),
            PlaybackMsg::Stop => state.stop(),
            PlaybackMsg::Cut(reply) => {
                state.stop();
                state.cut = Some(reply);
            }
            PlaybackMsg::Cue(pcm) => state.cue(pcm),
            PlaybackMsg::Tick => {
                state.ticks += 1;
                state.feed();
                state.check();
            }
            PlaybackMsg::Stats(reply) => {
                state.stats.consumed = state.shared.consumed.load(Ordering::Acquire);
                if reply.send(state.stats.clone()).is_err() {
                    tracing::debug!("playback stats: the caller is gone");
                }
            }
        }
        // The clock runs only while there is something to play or a stop to confirm: an
        // idle speaker costs the actor nothing.
        let busy = state.reply.is_some() || state.stopping.is_some() || !state.pending.is_empty();
        match (&state.tick_task, busy) {
            (None, true) => {
                state.tick_task = Some(myself.send_interval(TICK, || PlaybackMsg::Tick));
            }
            (Some(_), false) => {
                if let Some(t) = state.tick_task.take() {
                    t.abort();
                }
            }
            _ => {}
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(t) = state.tick_task.take() {
            t.abort();
        }
        if let Some(reply) = state.reply.as_ref().map(|r| r.id) {
            state.emit(PlaybackEvent::Stopped {
                reply,
                at: Instant::now(),
                interrupted: true,
            });
        }
        state.output.close().await;
        tracing::info!(output = %state.output.label, "playback closed");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::aec::tests::allocations;

    #[test]
    fn the_output_callback_taps_every_sample_it_plays_without_allocating() {
        let shared = Arc::new(Shared::default());
        let (mut producer, consumer) = rtrb::RingBuffer::new(4096);
        let link = RenderLink::new();
        let mut renderer = Renderer::new(consumer, shared, Some(link.connect(16_000)));
        for i in 0..300 {
            producer.push(i as f32 / 1000.0).unwrap();
        }
        let mut played = [1.0f32; 768];
        let n = allocations(|| {
            // 300 queued samples, then silence: a callback asking for 512
            renderer.render(512, |i, s| played[i] = s);
            renderer.render(256, |i, s| played[512 + i] = s);
        });
        assert_eq!(n, 0, "the output callback allocated");
        // what the canceller's feed gets: the 768 samples played, silence included
        let tapped = link.take_tapped();
        assert_eq!(tapped.len(), 768);
        assert_eq!(&tapped[..], &played[..]);
        assert_eq!(tapped[299], 0.299);
        assert!(tapped[300..].iter().all(|&s| s == 0.0));
        assert_eq!(link.dropped(), 0);
    }
}
