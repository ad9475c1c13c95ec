//! The Capture actor: audio from a WAV file, raw PCM (stdin) or a sound card, as fixed
//! 16 kHz mono [`Frame`]s of [`FRAME_SAMPLES`] samples, then [`Captured::End`].
//!
//! ```text
//! WAV file ──────────────► read, downmix, resample ─┐
//! stdin (s16le mono) ────► decode, stream-resample ─┼─► cut 512 ─► Captured::Frame … End
//! cpal callback ─► ring ─► worker thread: downmix, stream-resample ─┘
//! ```
//!
//! The output is a *bounded* `tokio::sync::mpsc` channel, so a stalled consumer costs bounded
//! memory:
//! - file and stdin sources wait for room (back-pressure: nothing is ever dropped, an unpaced
//!   file simply goes at the consumer's speed);
//! - a device cannot wait (the sound card keeps talking): when the channel is full the newest
//!   frame is dropped and counted, and when the worker falls behind the callback's ring fills
//!   and the callback counts the samples it could not store. Both counters are in
//!   [`CaptureStats`] and each loss is logged as a warning (at most once a second).
//!
//! A frame's `start` is its first sample's index on the 16 kHz input clock since `Start`.
//! The last frame of a file or stdin is padded with silence to [`FRAME_SAMPLES`], so a source
//! of `n` samples (at 16 kHz) gives `ceil(n / 512)` frames. `End` follows the last frame, and
//! also follows a `Stop`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::device::{self, DeviceSpec};
use super::resample::{self, StreamResampler};
use super::{wav, AudioError};
use crate::voice::{i16_to_f32, Captured, Frame, FRAME_SAMPLES, SAMPLE_RATE};

/// Seconds of device audio the callback's ring holds.
const RING_SECS: f32 = 2.0;
/// How long the device worker sleeps when the ring is empty.
const POLL: Duration = Duration::from_millis(5);

/// Where the audio comes from.
pub enum CaptureSource {
    /// A WAV file of any common format. `realtime`: frames come at the pace of the audio
    /// (32 ms each) instead of as fast as the consumer takes them.
    Wav {
        /// The file.
        path: PathBuf,
        /// Pace the frames in real time.
        realtime: bool,
    },
    /// Raw 16-bit little-endian mono PCM at `rate` Hz from a reader (stdin:
    /// [`CaptureSource::stdin`]). Read once: a second `Start` is an error.
    Raw {
        /// What it is, for messages ("stdin").
        name: String,
        /// The reader; taken by the first `Start`.
        reader: Option<Box<dyn AsyncRead + Send + Unpin>>,
        /// Its sample rate.
        rate: u32,
    },
    /// A sound card through cpal.
    Device(DeviceSpec),
}

impl CaptureSource {
    /// A WAV file.
    pub fn wav(path: impl Into<PathBuf>, realtime: bool) -> Self {
        CaptureSource::Wav {
            path: path.into(),
            realtime,
        }
    }

    /// Raw 16-bit little-endian mono PCM at `rate` Hz on stdin (e.g.
    /// `arecord -f S16_LE -c 1 -r 16000 | hearth …`).
    pub fn stdin(rate: u32) -> Self {
        Self::reader("stdin", tokio::io::stdin(), rate)
    }

    /// Raw 16-bit little-endian mono PCM at `rate` Hz from any reader.
    pub fn reader(
        name: impl Into<String>,
        reader: impl AsyncRead + Send + Unpin + 'static,
        rate: u32,
    ) -> Self {
        CaptureSource::Raw {
            name: name.into(),
            reader: Some(Box::new(reader)),
            rate,
        }
    }

    /// A sound card.
    pub fn device(spec: DeviceSpec) -> Self {
        CaptureSource::Device(spec)
    }

    fn describe(&self) -> String {
        match self {
            CaptureSource::Wav { path, .. } => path.display().to_string(),
            CaptureSource::Raw { name, .. } => name.clone(),
            CaptureSource::Device(spec) => spec.to_string(),
        }
    }
}

/// What the Capture actor is spawned with.
pub struct CaptureArgs {
    /// The source.
    pub source: CaptureSource,
    /// Where frames go (bounded: see the module docs; 64 frames ≈ 2 s is a good size).
    pub out: mpsc::Sender<Captured>,
}

/// Messages to the [`Capture`] actor.
pub enum CaptureMsg {
    /// Start (or restart) capturing. Replies with what was opened, or why not (a missing
    /// device lists those that exist). Starting a running capture changes nothing.
    Start(RpcReplyPort<Result<CaptureInfo, AudioError>>),
    /// Stop capturing; `End` follows the frames already sent.
    Stop,
    /// Counters.
    Stats(RpcReplyPort<CaptureStats>),
}

/// What a `Start` opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureInfo {
    /// The file, "stdin" or "host:device".
    pub source: String,
    /// The source's own sample rate (resampled to 16 kHz).
    pub rate: u32,
    /// The source's channel count (downmixed to mono).
    pub channels: u16,
}

/// Counters of the Capture actor, since it was spawned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Frames sent.
    pub frames: u64,
    /// Frames dropped because the channel was full (device sources only).
    pub frames_dropped: u64,
    /// Device samples (at the device's rate, all channels) the callback could not store
    /// because the worker fell behind.
    pub samples_dropped: u64,
    /// Whether a source is running now.
    pub running: bool,
}

#[derive(Debug, Default)]
struct Counters {
    frames: AtomicU64,
    frames_dropped: AtomicU64,
    samples_dropped: Arc<AtomicU64>,
}

/// Cuts a 16 kHz stream into frames.
struct Cutter {
    buf: Vec<f32>,
    next_start: u64,
}

impl Cutter {
    fn new() -> Self {
        Cutter {
            buf: Vec::with_capacity(FRAME_SAMPLES * 4),
            next_start: 0,
        }
    }

    fn frame(&mut self, samples: &[f32]) -> Frame {
        let f = Frame {
            samples: samples.into(),
            echo: None,
            start: self.next_start,
            at: Instant::now(),
        };
        self.next_start += FRAME_SAMPLES as u64;
        f
    }

    /// Appends samples; returns the whole frames now ready.
    fn push(&mut self, samples: &[f32]) -> Vec<Frame> {
        self.buf.extend_from_slice(samples);
        let whole = self.buf.len() / FRAME_SAMPLES * FRAME_SAMPLES;
        let taken: Vec<f32> = self.buf.drain(..whole).collect();
        taken
            .chunks_exact(FRAME_SAMPLES)
            .map(|c| self.frame(c))
            .collect()
    }

    /// The last, partial frame padded with silence, if any samples are left.
    fn finish(&mut self) -> Option<Frame> {
        if self.buf.is_empty() {
            return None;
        }
        let mut last = std::mem::take(&mut self.buf);
        last.resize(FRAME_SAMPLES, 0.0);
        Some(self.frame(&last))
    }
}

/// A running source.
enum Running {
    Task(JoinHandle<()>),
    Device {
        stop: Arc<AtomicBool>,
        thread: std::thread::JoinHandle<()>,
    },
}

impl Running {
    fn is_finished(&self) -> bool {
        match self {
            Running::Task(t) => t.is_finished(),
            Running::Device { thread, .. } => thread.is_finished(),
        }
    }
}

/// The Capture actor's state.
pub struct CaptureState {
    source: CaptureSource,
    out: mpsc::Sender<Captured>,
    counters: Arc<Counters>,
    running: Option<(Running, CaptureInfo, Arc<AtomicBool>)>,
}

/// Sends `End` once per run, without ever making the caller wait.
fn send_end(out: &mpsc::Sender<Captured>, end_sent: &AtomicBool) {
    if end_sent.swap(true, Ordering::AcqRel) {
        return;
    }
    match out.try_send(Captured::End) {
        Ok(()) | Err(TrySendError::Closed(_)) => {}
        Err(TrySendError::Full(end)) => {
            let out = out.clone();
            tokio::spawn(async move {
                let _ = out.send(end).await;
            });
        }
    }
}

async fn run_file(
    samples: Vec<f32>,
    realtime: bool,
    out: mpsc::Sender<Captured>,
    counters: Arc<Counters>,
    end_sent: Arc<AtomicBool>,
) {
    let t0 = tokio::time::Instant::now();
    let mut cutter = Cutter::new();
    let frames = cutter.push(&samples).into_iter().chain(cutter.finish());
    for frame in frames {
        if realtime {
            let end = frame.start + FRAME_SAMPLES as u64;
            let due = t0 + Duration::from_secs_f64(end as f64 / f64::from(SAMPLE_RATE));
            tokio::time::sleep_until(due).await;
        }
        let frame = Frame {
            at: Instant::now(),
            ..frame
        };
        if out.send(Captured::Frame(frame)).await.is_err() {
            return;
        }
        counters.frames.fetch_add(1, Ordering::Relaxed);
    }
    send_end(&out, &end_sent);
}

async fn run_raw(
    name: String,
    mut reader: Box<dyn AsyncRead + Send + Unpin>,
    mut resampler: StreamResampler,
    out: mpsc::Sender<Captured>,
    counters: Arc<Counters>,
    end_sent: Arc<AtomicBool>,
) {
    let mut cutter = Cutter::new();
    let mut bytes = vec![0u8; 8192];
    let mut carry: Option<u8> = None;
    let mut mono = Vec::with_capacity(4096);
    let mut at16k = Vec::with_capacity(4096);
    loop {
        let n = match reader.read(&mut bytes).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(source) => {
                let e = AudioError::Raw {
                    what: name.clone(),
                    source,
                };
                tracing::error!(error = %e, "capture ends early");
                break;
            }
        };
        mono.clear();
        let mut data = &bytes[..n];
        if let Some(lo) = carry.take() {
            mono.push(i16_to_f32(i16::from_le_bytes([lo, data[0]])));
            data = &data[1..];
        }
        let pairs = data.chunks_exact(2);
        if let [odd] = pairs.remainder() {
            carry = Some(*odd);
        }
        mono.extend(pairs.map(|p| i16_to_f32(i16::from_le_bytes([p[0], p[1]]))));
        at16k.clear();
        if let Err(e) = resampler.push(&mono, &mut at16k) {
            tracing::error!(error = %e, source = %name, "capture ends early");
            break;
        }
        for frame in cutter.push(&at16k) {
            if out.send(Captured::Frame(frame)).await.is_err() {
                return;
            }
            counters.frames.fetch_add(1, Ordering::Relaxed);
        }
    }
    if carry.is_some() {
        tracing::warn!(source = %name, "raw PCM ended in the middle of a sample; the odd byte is ignored");
    }
    at16k.clear();
    if let Err(e) = resampler.finish(&mut at16k) {
        tracing::error!(error = %e, source = %name, "resampling the end of the input failed");
    }
    let frames = cutter.push(&at16k).into_iter().chain(cutter.finish());
    for frame in frames {
        if out.send(Captured::Frame(frame)).await.is_err() {
            return;
        }
        counters.frames.fetch_add(1, Ordering::Relaxed);
    }
    send_end(&out, &end_sent);
}

/// Logs losses at most once a second.
struct LossLog {
    last: Option<Instant>,
    seen_samples: u64,
    seen_frames: u64,
}

impl LossLog {
    fn check(&mut self, counters: &Counters, source: &str) {
        let samples = counters.samples_dropped.load(Ordering::Relaxed);
        let frames = counters.frames_dropped.load(Ordering::Relaxed);
        if samples == self.seen_samples && frames == self.seen_frames {
            return;
        }
        if self
            .last
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        tracing::warn!(
            source,
            samples_dropped = samples - self.seen_samples,
            frames_dropped = frames - self.seen_frames,
            total_samples_dropped = samples,
            total_frames_dropped = frames,
            "capture is losing audio: the consumer or the worker falls behind"
        );
        self.seen_samples = samples;
        self.seen_frames = frames;
        self.last = Some(Instant::now());
    }
}

/// The device worker: opens the stream on its own thread (reporting the result), then moves
/// audio from the callback's ring to frames until told to stop.
fn run_device(
    spec: DeviceSpec,
    out: mpsc::Sender<Captured>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    opened: std::sync::mpsc::SyncSender<Result<CaptureInfo, AudioError>>,
) {
    let (stream, mut ring, info) =
        match device::open_input(&spec, RING_SECS, Arc::clone(&counters.samples_dropped)) {
            Ok(o) => o,
            Err(e) => {
                let _ = opened.send(Err(e));
                return;
            }
        };
    let channels = usize::from(info.channels.max(1));
    let mut resampler = match StreamResampler::new(info.rate, SAMPLE_RATE) {
        Ok(r) => r,
        Err(e) => {
            let _ = opened.send(Err(e));
            return;
        }
    };
    let label = info.device.clone();
    let _ = opened.send(Ok(CaptureInfo {
        source: info.device,
        rate: info.rate,
        channels: info.channels,
    }));
    let mut cutter = Cutter::new();
    let mut interleaved = Vec::with_capacity(ring.buffer().capacity());
    let mut mono = Vec::new();
    let mut at16k = Vec::new();
    let mut losses = LossLog {
        last: None,
        seen_samples: 0,
        seen_frames: 0,
    };
    while !stop.load(Ordering::Acquire) {
        let n = ring.slots();
        if n == 0 {
            std::thread::park_timeout(POLL);
            continue;
        }
        interleaved.clear();
        if let Ok(chunk) = ring.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            interleaved.extend_from_slice(a);
            interleaved.extend_from_slice(b);
            chunk.commit_all();
        }
        mono.clear();
        resample::downmix_into(&interleaved, channels, &mut mono);
        at16k.clear();
        if let Err(e) = resampler.push(&mono, &mut at16k) {
            tracing::error!(error = %e, device = %label, "capture stops");
            break;
        }
        for frame in cutter.push(&at16k) {
            match out.try_send(Captured::Frame(frame)) {
                Ok(()) => {
                    counters.frames.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Full(_)) => {
                    counters.frames_dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Closed(_)) => {
                    drop(stream);
                    return;
                }
            }
        }
        losses.check(&counters, &label);
    }
    drop(stream);
    losses.last = None;
    losses.check(&counters, &label);
}

impl CaptureState {
    async fn start(&mut self) -> Result<CaptureInfo, AudioError> {
        if let Some((running, info, _)) = &self.running {
            if !running.is_finished() {
                return Ok(info.clone());
            }
        }
        self.running = None;
        let end_sent = Arc::new(AtomicBool::new(false));
        let out = self.out.clone();
        let counters = Arc::clone(&self.counters);
        let (running, info) = match &mut self.source {
            CaptureSource::Wav { path, realtime } => {
                let p = path.clone();
                let clip = tokio::task::spawn_blocking(move || wav::read_mono(p))
                    .await
                    .map_err(|e| AudioError::Worker(e.to_string()))??;
                let info = CaptureInfo {
                    source: path.display().to_string(),
                    rate: clip.rate,
                    channels: clip.channels,
                };
                let samples = resample::resample(&clip.samples, clip.rate, SAMPLE_RATE)?;
                let task = tokio::spawn(
                    run_file(samples, *realtime, out, counters, Arc::clone(&end_sent))
                        .in_current_span(),
                );
                (Running::Task(task), info)
            }
            CaptureSource::Raw { name, reader, rate } => {
                let resampler = StreamResampler::new(*rate, SAMPLE_RATE)?;
                let reader = reader
                    .take()
                    .ok_or_else(|| AudioError::SourceConsumed(name.clone()))?;
                let info = CaptureInfo {
                    source: name.clone(),
                    rate: *rate,
                    channels: 1,
                };
                let task = tokio::spawn(
                    run_raw(
                        name.clone(),
                        reader,
                        resampler,
                        out,
                        counters,
                        Arc::clone(&end_sent),
                    )
                    .in_current_span(),
                );
                (Running::Task(task), info)
            }
            CaptureSource::Device(spec) => {
                let stop = Arc::new(AtomicBool::new(false));
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                let spec = spec.clone();
                let thread_stop = Arc::clone(&stop);
                let span = tracing::Span::current();
                let thread = std::thread::Builder::new()
                    .name("hearth-capture".into())
                    .spawn(move || {
                        let _source = span.enter();
                        run_device(spec, out, counters, thread_stop, tx)
                    })
                    .map_err(|e| {
                        AudioError::Worker(format!("cannot start the capture thread: {e}"))
                    })?;
                let info = tokio::task::spawn_blocking(move || rx.recv())
                    .await
                    .map_err(|e| AudioError::Worker(e.to_string()))?
                    .map_err(|_| {
                        AudioError::Worker("the capture thread died while opening".into())
                    })??;
                (Running::Device { stop, thread }, info)
            }
        };
        tracing::info!(source = %info.source, rate = info.rate, channels = info.channels, "capture started");
        self.running = Some((running, info.clone(), end_sent));
        Ok(info)
    }

    async fn stop(&mut self) {
        let Some((running, info, end_sent)) = self.running.take() else {
            return;
        };
        match running {
            Running::Task(task) => {
                task.abort();
                // wait until it is really gone, so no frame can follow the End
                let _ = task.await;
            }
            Running::Device { stop, thread } => {
                stop.store(true, Ordering::Release);
                thread.thread().unpark();
                if tokio::task::spawn_blocking(move || thread.join())
                    .await
                    .map(|r| r.is_err())
                    .unwrap_or(true)
                {
                    tracing::error!(source = %info.source, "the capture thread panicked");
                }
            }
        }
        send_end(&self.out, &end_sent);
        tracing::info!(source = %info.source, "capture stopped");
    }

    fn stats(&self) -> CaptureStats {
        CaptureStats {
            frames: self.counters.frames.load(Ordering::Relaxed),
            frames_dropped: self.counters.frames_dropped.load(Ordering::Relaxed),
            samples_dropped: self.counters.samples_dropped.load(Ordering::Relaxed),
            running: self
                .running
                .as_ref()
                .is_some_and(|(r, ..)| !r.is_finished()),
        }
    }
}

/// The Capture actor.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use hearth::audio::{Capture, CaptureArgs, CaptureMsg, CaptureSource};
/// use hearth::voice::Captured;
/// use ractor::Actor;
///
/// let (out, mut frames) = tokio::sync::mpsc::channel(64);
/// let source = CaptureSource::wav("kitchen.wav", false);
/// let (capture, handle) = Actor::spawn(None, Capture, CaptureArgs { source, out }).await?;
/// ractor::call!(capture, CaptureMsg::Start)??;
/// while let Some(Captured::Frame(frame)) = frames.recv().await {
///     println!("{:.2} s", frame.start_secs());
/// }
/// capture.stop(None);
/// handle.await?;
/// # Ok(())
/// # }
/// ```
pub struct Capture;

impl Actor for Capture {
    type Msg = CaptureMsg;
    type State = CaptureState;
    type Arguments = CaptureArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: CaptureArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        tracing::debug!(source = %args.source.describe(), "capture actor ready");
        Ok(CaptureState {
            source: args.source,
            out: args.out,
            counters: Arc::new(Counters::default()),
            running: None,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            CaptureMsg::Start(reply) => {
                let result = state.start().await;
                if let Err(e) = &result {
                    tracing::error!(source = %state.source.describe(), error = %e, "capture cannot start");
                }
                if reply.send(result).is_err() {
                    tracing::debug!("capture start: the caller is gone");
                }
            }
            CaptureMsg::Stop => state.stop().await,
            CaptureMsg::Stats(reply) => {
                if reply.send(state.stats()).is_err() {
                    tracing::debug!("capture stats: the caller is gone");
                }
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.stop().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutter_pads_the_last_frame_and_numbers_starts() {
        let mut c = Cutter::new();
        let a = c.push(&vec![0.5; 700]);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].start, 0);
        let b = c.push(&vec![0.25; 400]);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].start, 512);
        assert_eq!(b[0].samples[0], 0.5);
        assert_eq!(b[0].samples[511], 0.25);
        let last = c.finish().unwrap();
        assert_eq!(last.start, 1024);
        assert_eq!(last.samples.len(), FRAME_SAMPLES);
        assert_eq!(last.samples[75], 0.25);
        assert_eq!(last.samples[76], 0.0);
        assert!(c.finish().is_none());
    }
}
