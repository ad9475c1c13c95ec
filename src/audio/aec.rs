//! Acoustic echo cancellation: hearth knows what it plays, so it takes that out of what the
//! microphone hears, and the wake word, "stop" and a barge-in are heard while it speaks.
//!
//! ```text
//! Playback's output callback ──RenderTap (rtrb, output rate)──► RenderFeed: resample to 16 kHz
//!                                                                   │ render
//!                                                                   ▼
//! Capture ─Frame─► EchoFilter: high-pass ─► AEC3 (64-sample blocks) ─► Frame { samples: cleaned,
//!                                            echo: Some(EchoCancelled { linear, credit_db }) }
//! ```
//!
//! The canceller is WebRTC's AEC3 as ported to Rust by the `sonora` project: `sonora-aec3`'s
//! block processor, driven here directly so that its adaptive filters can be lengthened to
//! [`FILTER_BLOCKS`] (160 ms: a room's reverberant tail beyond AEC3's default 52 ms is then
//! cancelled too) and its linear filter's output kept. In front of it runs `sonora`'s
//! high-pass filter, as in WebRTC's audio processing module.
//!
//! Two outputs per frame: the *cleaned* frame (linear filter, then residual-echo suppression)
//! and the *linear* frame (the echo the adaptive filter predicts subtracted, nothing
//! suppressed: it keeps more of a user who talks over hearth, so the wake-word spotter always
//! takes it). Both run one block (4 ms) behind the input. Listen and speech recognition get
//! the cleaned frame, with a *credit* of [`AEC_CREDIT_DB`] off their playback gate, only while
//! the canceller has shown on this room's echo that it converged; until then they get the
//! linear frame and no credit, which is what they had without the canceller (AEC3's
//! suppressor alone also swallowed the user's voice over a reply in a room without echo).
//!
//! The render reference is tapped where Playback hands samples to the output (the cpal
//! callback, or the WAV writer), silence included, so the canceller sees what the speaker
//! plays with the output's own timing. The tap only copies into a preallocated lock-free
//! ring: the callback never allocates, locks or blocks. Resampling to 16 kHz happens on the
//! capture side ([`RenderFeed`]), off the audio callback. A Playback restart opens a new tap
//! ([`RenderLink::connect`]); the feed picks it up at its next frame.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sonora::high_pass_filter::HighPassFilter;
use sonora_aec3::block::Block;
use sonora_aec3::block_processor::BlockProcessor;
use sonora_aec3::config::EchoCanceller3Config;

use super::resample::StreamResampler;
use crate::voice::{EchoCancelled, Frame, SAMPLE_RATE};

/// AEC3's block: 4 ms at 16 kHz.
pub const BLOCK: usize = 64;
/// The adaptive filters' length in blocks: 40 (160 ms) instead of AEC3's 13 (52 ms).
pub(crate) const FILTER_BLOCKS: usize = 40;
/// AEC3 takes samples at 16-bit integer scale.
const SCALE: f32 = 32_768.0;
/// Seconds of output-rate audio the tap holds between the output callback and the capture
/// side (more than the capture side ever lags; beyond it samples are dropped and counted).
const TAP_SECS: u32 = 2;
/// Render audio waiting for capture (16 kHz samples), at most: 1 s. The capture side takes
/// what was played before each frame, so normally this holds one output callback's worth
/// (more while the capture side catches up after a stall: its frames wait in a channel too,
/// so that render must stay to keep the two streams aligned).
const RENDER_BACKLOG: usize = SAMPLE_RATE as usize;
/// Output-rate seconds of a new tap's backlog kept at the feed's first drain: what the output
/// played before capture started cannot be in the microphone's frames, and would put AEC3's
/// render buffer so far ahead that it overruns on every block.
const FRESH_KEEP_SECS: f32 = 0.064;
/// How often the ERLE is logged while hearth plays.
pub(crate) const ERLE_LOG_EVERY: Duration = Duration::from_secs(10);
/// A frame counts as "playing" for the ERLE when the render reference is above this RMS
/// (−50 dBFS).
const PLAYING_RMS: f32 = 0.003_16;
/// Once the canceller has converged, how far below the playback level the residual of
/// hearth's voice is taken to be (Listen's gate is lowered by this much): the cleaned
/// output's ERLE once converged is 30 dB and more (down to the room's noise floor); 20 dB
/// leaves room for a changing echo path.
pub(crate) const AEC_CREDIT_DB: f32 = 20.0;
/// Converged: over a window of this many playing frames (2 s), the linear filter alone took
/// out at least [`CONVERGED_LINEAR_DB`]. Until then Listen gets the linear output and keeps
/// its full playback gate (see [`EchoFilter::frame`]).
const CONVERGE_WINDOW_FRAMES: u64 = 62;
/// See [`CONVERGE_WINDOW_FRAMES`].
const CONVERGED_LINEAR_DB: f64 = 12.0;
/// Once converged, the filter is watched over short windows of this many playing frames
/// (128 ms): see [`EXPLAINED_AT_LEAST`].
const WATCH_WINDOW_FRAMES: u64 = 4;
/// A watch window in which the microphone holds less than this share of the linear filter's
/// echo estimate `y` (Σx·y / Σy² of the input `x`) means the echo path moved away from the
/// filter (the output's latency jumped, the speaker was moved): below one half, subtracting
/// the estimate adds more than it takes out. Listen goes back to its full gate at once,
/// since a leak of hearth's own voice is what the gate is for; and a single frame that
/// shows it gets no credit, so the frames before the window closes do not leak either.
/// Somebody talking over hearth barely lowers it (their voice is not correlated with the
/// estimate), where it would lower the ERLE.
const EXPLAINED_AT_LEAST: f64 = 0.5;
/// What the echo canceller refuses.
#[derive(Debug, thiserror::Error)]
pub enum AecError {
    /// A frame whose length is not a whole number of AEC3 blocks.
    #[error("echo canceller: a frame of {0} samples; it takes whole 64-sample blocks at 16 kHz (hearth's frames are 512)")]
    FrameSize(usize),
}

/// The echo canceller for 16 kHz mono: [`render`](Self::render) what was played,
/// [`process`](Self::process) each captured frame. `Send`, so a task or actor can own it.
pub struct EchoCanceller {
    aec: BlockProcessor,
    high_pass: HighPassFilter,
    /// The high-passed frame (one channel, as the filter takes it).
    hp: Vec<Vec<f32>>,
    /// Played audio not yet given to AEC3 (16 kHz, at integer scale).
    render: VecDeque<f32>,
    render_block: Block,
    capture_block: Block,
    linear_block: Block,
    clean: Vec<f32>,
    linear: Vec<f32>,
    /// Whether AEC3 has been given any render yet (until then it does not touch the
    /// capture, and the input is passed on one block late here, as AEC3 does it after).
    rendering: bool,
    /// The previous high-passed block (scaled), for that.
    held: [f32; BLOCK],
    /// The previous high-passed block (unscaled): the input of the linear output AEC3
    /// gives for the current one.
    last_input: [f32; BLOCK],
    erle: ErleMeter,
    /// The current convergence window.
    window: ErleMeter,
    /// The current watch window (see [`WATCH_WINDOW_FRAMES`]).
    watch: ErleMeter,
    /// Whether the filter has converged on this room's echo.
    converged: bool,
    /// Whether the last frame's echo estimate was not in its input (see
    /// [`EXPLAINED_AT_LEAST`]): no credit for it.
    vetoed: bool,
    /// For the debug log: render blocks given to AEC3, capture blocks, the most render
    /// blocks one frame had waiting.
    fed_blocks: u64,
    capture_blocks: u64,
    max_waiting: usize,
}

impl std::fmt::Debug for EchoCanceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EchoCanceller")
            .field("render_pending", &self.render.len())
            .finish_non_exhaustive()
    }
}

impl Default for EchoCanceller {
    fn default() -> Self {
        Self::new()
    }
}

impl EchoCanceller {
    /// A canceller with hearth's settings (AEC3's defaults, filters of [`FILTER_BLOCKS`],
    /// linear output on).
    pub fn new() -> EchoCanceller {
        let mut config = EchoCanceller3Config::default();
        config.filter.refined.length_blocks = FILTER_BLOCKS;
        config.filter.coarse.length_blocks = FILTER_BLOCKS;
        config.filter.export_linear_aec_output = true;
        let rate = SAMPLE_RATE as usize;
        EchoCanceller {
            aec: BlockProcessor::new(&config, rate, 1, 1),
            high_pass: HighPassFilter::new(SAMPLE_RATE as i32, 1),
            hp: vec![Vec::with_capacity(crate::voice::FRAME_SAMPLES)],
            render: VecDeque::with_capacity(RENDER_BACKLOG),
            render_block: Block::new(1, 1),
            capture_block: Block::new(1, 1),
            linear_block: Block::new(1, 1),
            clean: Vec::with_capacity(crate::voice::FRAME_SAMPLES),
            linear: Vec::with_capacity(crate::voice::FRAME_SAMPLES),
            rendering: false,
            held: [0.0; BLOCK],
            last_input: [0.0; BLOCK],
            erle: ErleMeter::default(),
            window: ErleMeter::default(),
            watch: ErleMeter::default(),
            converged: false,
            vetoed: false,
            fed_blocks: 0,
            capture_blocks: 0,
            max_waiting: 0,
        }
    }

    /// What was played, 16 kHz mono in [-1, 1], in the order it reached the output. It is
    /// given to AEC3 spread over the next captured frame's blocks.
    pub fn render(&mut self, played: &[f32]) {
        let over = (self.render.len() + played.len()).saturating_sub(RENDER_BACKLOG);
        self.render.drain(..over.min(self.render.len()));
        let skip = played.len().saturating_sub(RENDER_BACKLOG);
        self.render
            .extend(played[skip..].iter().map(|&s| s * SCALE));
    }

    /// Cleans one captured frame (16 kHz mono, a whole number of 64-sample blocks: hearth's
    /// 512). Returns the cleaned frame and the linear filter's output, each as long as `mic`
    /// and one block (4 ms) behind it: AEC3's own latency. Until something has been rendered,
    /// both are the high-passed input (as late).
    pub fn process(&mut self, mic: &[f32]) -> Result<(&[f32], &[f32]), AecError> {
        if mic.is_empty() || !mic.len().is_multiple_of(BLOCK) {
            return Err(AecError::FrameSize(mic.len()));
        }
        let blocks = mic.len() / BLOCK;
        self.hp[0].clear();
        self.hp[0].extend_from_slice(mic);
        self.high_pass.process_channels(&mut self.hp);
        self.clean.clear();
        self.linear.clear();
        // The render queued since the last frame goes in spread over this frame's blocks,
        // so AEC3 sees render and capture alternate as they happened, not in bursts.
        let available = self.render.len() / BLOCK;
        self.max_waiting = self.max_waiting.max(available);
        self.fed_blocks += available as u64;
        self.capture_blocks += blocks as u64;
        let mut fed = 0;
        let mut render_energy = 0.0f64;
        let mut estimated = Estimate::default();
        for i in 0..blocks {
            let due = (available * (i + 1)).div_ceil(blocks);
            while fed < due {
                let dst = self.render_block.view_mut(0, 0);
                for (d, s) in dst.iter_mut().zip(self.render.drain(..BLOCK)) {
                    *d = s;
                    render_energy += f64::from(s / SCALE).powi(2);
                }
                self.aec.buffer_render(&self.render_block);
                self.rendering = true;
                fed += 1;
            }
            let input = &self.hp[0][i * BLOCK..(i + 1) * BLOCK];
            let raw = &mic[i * BLOCK..(i + 1) * BLOCK];
            let saturated = raw.iter().any(|s| s.abs() >= 0.999);
            for (d, &s) in self.capture_block.view_mut(0, 0).iter_mut().zip(input) {
                *d = s * SCALE;
            }
            if self.rendering {
                self.aec.process_capture(
                    false,
                    saturated,
                    Some(&mut self.linear_block),
                    &mut self.capture_block,
                );
            } else {
                // nothing played yet: the input one block late, as AEC3 will pass it
                let block = self.capture_block.view_mut(0, 0);
                for (b, h) in block.iter_mut().zip(self.held.iter_mut()) {
                    std::mem::swap(b, h);
                }
                self.linear_block.view_mut(0, 0).copy_from_slice(block);
            }
            // the filter's echo estimate: the input the linear output was made from (a
            // block earlier) less that output; how much of the input it explains
            for (&x, &l) in self.last_input.iter().zip(self.linear_block.view(0, 0)) {
                let estimate = f64::from(x - l / SCALE);
                estimated.cross += f64::from(x) * estimate;
                estimated.energy += estimate * estimate;
            }
            self.last_input.copy_from_slice(input);
            self.clean
                .extend(self.capture_block.view(0, 0).iter().map(|s| s / SCALE));
            self.linear
                .extend(self.linear_block.view(0, 0).iter().map(|s| s / SCALE));
        }
        let render_rms = if fed == 0 {
            0.0
        } else {
            (render_energy / (fed * BLOCK) as f64).sqrt() as f32
        };
        // the frame's energies, once, into each meter (while something audible plays)
        if let Some(f) = ErleMeter::of_frame(
            render_rms,
            &self.hp[0],
            &self.clean,
            &self.linear,
            estimated,
        ) {
            for meter in [&mut self.erle, &mut self.window, &mut self.watch] {
                meter.add(&f);
            }
        }
        // a frame whose own estimate is not in the microphone gets no credit, converged or
        // not: the first frames after the echo path moved, before a watch window shows it
        self.vetoed = render_rms >= PLAYING_RMS && estimated.explained() < EXPLAINED_AT_LEAST;
        self.judge_convergence();
        Ok((&self.clean, &self.linear))
    }

    /// The echo return loss enhancement measured since the last call (and the meter
    /// restarted), over the frames during which something audible was played; `None` if
    /// nothing was.
    pub(crate) fn take_erle(&mut self) -> Option<Erle> {
        let m = std::mem::take(&mut self.erle);
        if m.frames == 0 || m.out <= 0.0 || m.linear <= 0.0 {
            return None;
        }
        Some(Erle {
            db: 10.0 * (m.mic / m.out).log10() as f32,
            linear_db: 10.0 * (m.mic / m.linear).log10() as f32,
            secs: m.samples as f32 / SAMPLE_RATE as f32,
        })
    }

    /// Gains convergence over a full window ([`CONVERGE_WINDOW_FRAMES`]); loses it on a
    /// watch window whose echo estimate was not in the microphone.
    fn judge_convergence(&mut self) {
        if self.watch.frames >= WATCH_WINDOW_FRAMES {
            let w = std::mem::take(&mut self.watch);
            let explained = w.explained();
            if self.converged && explained < EXPLAINED_AT_LEAST {
                self.lose_convergence(format!(
                    "its echo estimate explains {explained:.2} of what it predicts"
                ));
                return;
            }
        }
        if self.window.frames >= CONVERGE_WINDOW_FRAMES {
            let w = std::mem::take(&mut self.window);
            let linear_db = w.linear_erle_db();
            if !self.converged && linear_db >= CONVERGED_LINEAR_DB {
                self.converged = true;
                self.watch = ErleMeter::default();
                tracing::info!(
                    linear_erle_db = format!("{linear_db:.1}"),
                    delay_ms = self.delay_ms(),
                    "echo canceller converged: Listen's playback gate is lowered by {AEC_CREDIT_DB} dB"
                );
            }
        }
    }

    fn lose_convergence(&mut self, why: String) {
        self.reset_convergence();
        tracing::info!(
            why,
            "echo canceller lost the echo: Listen's full playback gate until it converges again"
        );
    }

    /// Whether the linear filter is known to cancel this room's echo (see
    /// [`CONVERGE_WINDOW_FRAMES`]).
    pub fn converged(&self) -> bool {
        self.converged
    }

    /// How far below the playback level the residual of hearth's voice in the last frame is
    /// taken to be, dB: [`AEC_CREDIT_DB`] once the canceller has converged, unless the
    /// frame's own echo estimate was not in it; 0 otherwise.
    pub fn credit_db(&self) -> f32 {
        if self.converged() && !self.vetoed {
            AEC_CREDIT_DB
        } else {
            0.0
        }
    }

    /// A new output (another echo path, another clock): convergence must be shown again.
    pub(crate) fn reset_convergence(&mut self) {
        self.converged = false;
        self.window = ErleMeter::default();
        self.watch = ErleMeter::default();
    }

    /// The delay between render and capture AEC3 has estimated, ms.
    pub(crate) fn delay_ms(&self) -> i32 {
        self.aec.get_metrics().delay_ms
    }
}

/// Echo return loss enhancement over a stretch of playback: microphone energy (high-passed)
/// over output energy, in dB. The user's speech over the reply counts as part of both, so
/// this is a lower bound of the canceller's own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Erle {
    /// Of the cleaned output (linear filter and residual-echo suppression).
    pub db: f32,
    /// Of the linear filter's output alone.
    pub linear_db: f32,
    /// Seconds of playback it was measured over.
    pub secs: f32,
}

/// Energies summed over the frames with audible render.
#[derive(Debug, Default)]
struct ErleMeter {
    mic: f64,
    out: f64,
    linear: f64,
    estimated: Estimate,
    frames: u64,
    samples: u64,
}

/// The linear filter's echo estimate `y` against the input `x` it was taken from.
#[derive(Debug, Default, Clone, Copy)]
struct Estimate {
    /// Σ x·y.
    cross: f64,
    /// Σ y².
    energy: f64,
}

impl Estimate {
    /// Σx·y / Σy²: see [`EXPLAINED_AT_LEAST`].
    fn explained(&self) -> f64 {
        self.cross / self.energy.max(1e-12)
    }
}

impl ErleMeter {
    /// One frame's energies, or `None` when the render was under [`PLAYING_RMS`].
    fn of_frame(
        render_rms: f32,
        mic: &[f32],
        out: &[f32],
        linear: &[f32],
        estimated: Estimate,
    ) -> Option<ErleMeter> {
        if render_rms < PLAYING_RMS {
            return None;
        }
        let energy = |x: &[f32]| x.iter().map(|&s| f64::from(s) * f64::from(s)).sum::<f64>();
        Some(ErleMeter {
            mic: energy(mic),
            out: energy(out),
            linear: energy(linear),
            estimated,
            frames: 1,
            samples: mic.len() as u64,
        })
    }

    fn add(&mut self, f: &ErleMeter) {
        self.mic += f.mic;
        self.out += f.out;
        self.linear += f.linear;
        self.estimated.cross += f.estimated.cross;
        self.estimated.energy += f.estimated.energy;
        self.frames += f.frames;
        self.samples += f.samples;
    }

    /// What the linear filter took out, dB.
    fn linear_erle_db(&self) -> f64 {
        10.0 * (self.mic / self.linear.max(1e-12)).log10()
    }

    /// How much of the filter's echo estimate is in the input: Σx·y / Σy². About 1 while
    /// the filter models the echo, whoever else talks (their voice is not correlated with
    /// the estimate); well under 1 once the echo path has moved away from it (the estimate
    /// is then of an echo that is not there).
    fn explained(&self) -> f64 {
        self.estimated.explained()
    }
}

/// A tap's reading end and the output's sample rate.
type NewTap = (rtrb::Consumer<f32>, u32);

/// Where Playback's outputs get their [`RenderTap`] and the capture side its [`RenderFeed`]:
/// cloned into both. Each output (a Playback restart opens a new one) connects anew.
#[derive(Clone, Default)]
pub struct RenderLink {
    /// The newest tap's other end and its sample rate, until the feed takes it.
    next: Arc<Mutex<Option<NewTap>>>,
    /// Samples the taps could not hand on (the capture side fell behind by [`TAP_SECS`]).
    dropped: Arc<AtomicU64>,
}

impl std::fmt::Debug for RenderLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderLink")
            .field("dropped", &self.dropped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RenderLink {
    /// A link with no tap yet.
    pub fn new() -> RenderLink {
        RenderLink::default()
    }

    /// A tap for an output that plays at `rate` Hz (called when the output opens, not in its
    /// callback: this allocates the ring). The feed switches to it at its next frame.
    pub fn connect(&self, rate: u32) -> RenderTap {
        let capacity = (rate.max(1) * TAP_SECS) as usize;
        let (tx, rx) = rtrb::RingBuffer::new(capacity);
        match self.next.lock() {
            Ok(mut next) => *next = Some((rx, rate)),
            Err(poisoned) => *poisoned.into_inner() = Some((rx, rate)),
        }
        RenderTap {
            ring: tx,
            dropped: Arc::clone(&self.dropped),
        }
    }

    /// The capture side's end.
    pub fn feed(&self) -> RenderFeed {
        RenderFeed {
            link: self.clone(),
            ring: None,
            resampler: None,
            fresh: false,
            counted: 0,
            chunk: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Everything in the newest tap, at the output's rate (tests).
    #[cfg(test)]
    pub(crate) fn take_tapped(&self) -> Vec<f32> {
        let mut out = Vec::new();
        if let Some((ring, _)) = self.next.lock().unwrap().as_mut() {
            while let Ok(s) = ring.pop() {
                out.push(s);
            }
        }
        out
    }

    /// Samples dropped because the capture side did not take them in time.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The output side's end: every sample the output plays, silence included. Never blocks,
/// never allocates: what does not fit is dropped and counted.
pub struct RenderTap {
    ring: rtrb::Producer<f32>,
    dropped: Arc<AtomicU64>,
}

impl RenderTap {
    /// Samples that were played.
    pub fn push(&mut self, played: &[f32]) {
        let n = self.ring.slots().min(played.len());
        if let Ok(chunk) = self.ring.write_chunk_uninit(n) {
            chunk.fill_from_iter(played[..n].iter().copied());
        }
        self.count_dropped(played.len() - n);
    }

    /// `n` samples of silence were played.
    pub(crate) fn push_silence(&mut self, n: usize) {
        let fit = self.ring.slots().min(n);
        if let Ok(chunk) = self.ring.write_chunk_uninit(fit) {
            chunk.fill_from_iter(std::iter::repeat(0.0));
        }
        self.count_dropped(n - fit);
    }

    fn count_dropped(&self, n: usize) {
        if n > 0 {
            self.dropped.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// The capture side's end of the render tap: takes what was played, resamples it to
/// 16 kHz and hands it to the canceller.
pub struct RenderFeed {
    link: RenderLink,
    ring: Option<rtrb::Consumer<f32>>,
    resampler: Option<StreamResampler>,
    /// The ring was just connected: its backlog goes at the first drain.
    fresh: bool,
    /// The link's dropped samples already accounted for: those of a new tap before its first
    /// drain (the output opens before capture starts, and that backlog goes anyway) and
    /// those [`RenderFeed::newly_dropped`] has reported.
    counted: u64,
    chunk: Vec<f32>,
    out: Vec<f32>,
}

impl RenderFeed {
    /// Samples the tap dropped since the last call because the capture side fell behind.
    pub(crate) fn newly_dropped(&mut self) -> u64 {
        let dropped = self.link.dropped();
        let new = dropped.saturating_sub(self.counted);
        self.counted = dropped;
        new
    }

    /// Everything played since the last call, into `aec`.
    pub(crate) fn drain_into(&mut self, aec: &mut EchoCanceller) {
        if let Ok(mut next) = self.link.next.try_lock() {
            if let Some((ring, rate)) = next.take() {
                match StreamResampler::new(rate, SAMPLE_RATE) {
                    Ok(r) => {
                        self.ring = Some(ring);
                        self.resampler = Some(r);
                        self.fresh = true;
                        aec.reset_convergence();
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "echo cancellation: the output's rate cannot be resampled; the canceller gets no reference");
                        self.ring = None;
                    }
                }
            }
        }
        let (Some(ring), Some(resampler)) = (self.ring.as_mut(), self.resampler.as_mut()) else {
            return;
        };
        let mut n = ring.slots();
        if std::mem::take(&mut self.fresh) {
            let keep = (resampler.input_rate() as f32 * FRESH_KEEP_SECS) as usize;
            if let Ok(stale) = ring.read_chunk(n.saturating_sub(keep)) {
                stale.commit_all();
            }
            n = ring.slots();
            self.counted = self.link.dropped();
        }
        if n == 0 {
            return;
        }
        self.chunk.clear();
        if let Ok(chunk) = ring.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            self.chunk.extend_from_slice(a);
            self.chunk.extend_from_slice(b);
            chunk.commit_all();
        }
        self.out.clear();
        if let Err(e) = resampler.push(&self.chunk, &mut self.out) {
            tracing::warn!(error = %e, "echo cancellation: resampling the render reference failed");
            return;
        }
        aec.render(&self.out);
    }
}

/// The canceller as the capture side runs it: each [`Frame`] in, the frame cleaned out (its
/// `echo` set), the render reference drained before each, the ERLE logged every
/// [`ERLE_LOG_EVERY`] while hearth plays.
pub struct EchoFilter {
    aec: EchoCanceller,
    feed: RenderFeed,
    last_log: Instant,
    last_debug: Instant,
}

impl EchoFilter {
    /// A filter whose reference comes through `link`.
    pub fn new(link: &RenderLink) -> EchoFilter {
        EchoFilter {
            aec: EchoCanceller::new(),
            feed: link.feed(),
            last_log: Instant::now(),
            last_debug: Instant::now(),
        }
    }

    /// One captured frame, cleaned (a frame of the wrong size passes unchanged, logged).
    pub fn frame(&mut self, frame: Frame) -> Frame {
        self.feed.drain_into(&mut self.aec);
        let processed = self
            .aec
            .process(&frame.samples)
            .map(|(clean, linear)| (Arc::<[f32]>::from(clean), Arc::<[f32]>::from(linear)));
        let out = match processed {
            Ok((clean, linear)) => {
                // Listen and speech recognition: the suppressed output once the filter has
                // converged; before, the linear output (the microphone less what the filter
                // predicts, never suppressed), since AEC3's suppressor, working from a rough
                // echo estimate, also took the user's voice over a reply in a room without
                // echo: never worse than without the canceller
                let samples = if self.aec.converged() {
                    clean
                } else {
                    Arc::clone(&linear)
                };
                Frame {
                    samples,
                    echo: Some(EchoCancelled {
                        linear,
                        credit_db: self.aec.credit_db(),
                    }),
                    ..frame
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "frame passed without echo cancellation");
                frame
            }
        };
        if self.last_debug.elapsed() >= Duration::from_secs(1) {
            self.last_debug = Instant::now();
            tracing::debug!(
                render_blocks = self.aec.fed_blocks,
                capture_blocks = self.aec.capture_blocks,
                max_waiting = self.aec.max_waiting,
                delay_ms = self.aec.delay_ms(),
                "echo canceller"
            );
            self.aec.fed_blocks = 0;
            self.aec.capture_blocks = 0;
            self.aec.max_waiting = 0;
        }
        if self.last_log.elapsed() >= ERLE_LOG_EVERY {
            self.last_log = Instant::now();
            if let Some(erle) = self.aec.take_erle() {
                tracing::info!(
                    erle_db = format!("{:.1}", erle.db),
                    linear_erle_db = format!("{:.1}", erle.linear_db),
                    playing_s = format!("{:.1}", erle.secs),
                    delay_ms = self.aec.delay_ms(),
                    "echo cancellation"
                );
            }
            let dropped = self.feed.newly_dropped();
            if dropped > 0 {
                tracing::warn!(
                    samples = dropped,
                    "echo cancellation: render reference dropped (the capture side fell behind)"
                );
            }
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::voice::FRAME_SAMPLES;

    /// Allocations made on the current thread while counting is on.
    mod alloc_count {
        use std::alloc::{GlobalAlloc, Layout, System};
        use std::cell::Cell;

        pub(crate) struct Counting;

        thread_local! {
            static ON: Cell<bool> = const { Cell::new(false) };
            static COUNT: Cell<u64> = const { Cell::new(0) };
        }

        unsafe impl GlobalAlloc for Counting {
            unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                let _ = ON.try_with(|on| {
                    if on.get() {
                        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
                    }
                });
                // SAFETY: the caller's layout is passed on unchanged
                unsafe { System.alloc(layout) }
            }

            unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                // SAFETY: the pointer came from System.alloc with this layout
                unsafe { System.dealloc(ptr, layout) }
            }
        }

        pub fn count(f: impl FnOnce()) -> u64 {
            COUNT.with(|c| c.set(0));
            ON.with(|on| on.set(true));
            f();
            ON.with(|on| on.set(false));
            COUNT.with(|c| c.get())
        }
    }

    #[global_allocator]
    static ALLOC: alloc_count::Counting = alloc_count::Counting;

    /// How many heap allocations `f` makes on this thread.
    pub(crate) fn allocations(f: impl FnOnce()) -> u64 {
        alloc_count::count(f)
    }

    /// A deterministic noise source (xorshift), uniform in [-1, 1).
    struct Noise(u64);

    impl Noise {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
    }

    /// A far end that sounds like speech to AEC3: noise shaped by a slow syllable envelope
    /// and a two-pole resonance, at about −20 dBFS.
    fn far_end(n: usize) -> Vec<f32> {
        let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
        let (mut y1, mut y2) = (0.0f32, 0.0f32);
        (0..n)
            .map(|i| {
                let t = i as f32 / SAMPLE_RATE as f32;
                let env = 0.55 + 0.45 * (std::f32::consts::TAU * 3.0 * t).sin();
                let y = noise.next() + 1.6 * y1 - 0.8 * y2;
                y2 = y1;
                y1 = y;
                0.04 * env * y
            })
            .collect()
    }

    /// The room: a direct path after `delay` samples at `gain`, then a decaying noise tail
    /// (60 dB over 150 ms) 10 dB below it.
    fn echo_path(delay: usize, gain: f32) -> Vec<f32> {
        let tail = SAMPLE_RATE as usize * 150 / 1000;
        let mut noise = Noise(42);
        let mut h = vec![0.0; delay + 1 + tail];
        h[delay] = gain;
        for k in 1..=tail {
            let decay = 10f32.powf(-3.0 * k as f32 / tail as f32);
            h[delay + k] += gain * 0.316 * 0.1 * decay * noise.next();
        }
        h
    }

    fn convolve(x: &[f32], h: &[f32]) -> Vec<f32> {
        let taps: Vec<(usize, f32)> = h
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| *v != 0.0)
            .collect();
        (0..x.len())
            .map(|n| {
                taps.iter()
                    .filter(|(k, _)| *k <= n)
                    .map(|(k, v)| v * x[n - k])
                    .sum()
            })
            .collect()
    }

    fn energy(x: &[f32]) -> f64 {
        x.iter().map(|&s| f64::from(s) * f64::from(s)).sum()
    }

    #[test]
    fn a_delayed_attenuated_echo_with_a_tail_is_removed_by_more_than_20_db() {
        let secs = 12;
        let far = far_end(SAMPLE_RATE as usize * secs);
        // 60 ms to the microphone, 3 dB down
        let mic = convolve(&far, &echo_path(960, 0.7));
        let mut aec = EchoCanceller::new();
        let (mut mic_e, mut out_e, mut lin_e) = (0.0, 0.0, 0.0);
        for (i, (f, m)) in far
            .chunks(FRAME_SAMPLES)
            .zip(mic.chunks(FRAME_SAMPLES))
            .enumerate()
        {
            aec.render(f);
            let (clean, linear) = aec.process(m).unwrap();
            assert_eq!((clean.len(), linear.len()), (FRAME_SAMPLES, FRAME_SAMPLES));
            // after 6 s of convergence
            if i * FRAME_SAMPLES >= 6 * SAMPLE_RATE as usize {
                mic_e += energy(m);
                out_e += energy(clean);
                lin_e += energy(linear);
            }
        }
        let erle = 10.0 * (mic_e / out_e).log10();
        let linear_erle = 10.0 * (mic_e / lin_e).log10();
        assert!(erle > 20.0, "ERLE {erle:.1} dB");
        // the linear filter alone takes most of it too
        assert!(linear_erle > 10.0, "linear ERLE {linear_erle:.1} dB");
        let measured = aec.take_erle().unwrap();
        assert!(measured.db > 20.0, "{measured:?}");
        // converged: Listen may lower its gate
        assert_eq!(aec.credit_db(), AEC_CREDIT_DB);
    }

    /// Plays `far` into `aec` against `mic`, frame by frame; whether the canceller was
    /// converged after each frame, and the credit it gave the frame.
    fn converged_frames(aec: &mut EchoCanceller, far: &[f32], mic: &[f32]) -> Vec<(bool, f32)> {
        far.chunks(FRAME_SAMPLES)
            .zip(mic.chunks(FRAME_SAMPLES))
            .map(|(f, m)| {
                aec.render(f);
                aec.process(m).unwrap();
                (aec.converged(), aec.credit_db())
            })
            .collect()
    }

    #[test]
    fn the_credit_is_withdrawn_at_once_when_the_echo_delay_jumps() {
        // 8 s of a 60 ms echo, then the output's latency drops to 32 ms (PulseAudio's
        // loopback did this in CI and hearth heard itself under the lowered gate)
        let rate = SAMPLE_RATE as usize;
        let far = far_end(rate * 12);
        let before = convolve(&far, &echo_path(960, 0.7));
        let after = convolve(&far, &echo_path(512, 0.7));
        let jump = rate * 8;
        let mic: Vec<f32> = before[..jump]
            .iter()
            .chain(&after[jump..])
            .copied()
            .collect();
        let mut aec = EchoCanceller::new();
        let frames = converged_frames(&mut aec, &far, &mic);
        let at_jump = jump / FRAME_SAMPLES;
        assert!(frames[at_jump - 1].0, "not converged on the first path");
        let lost = frames[at_jump..].iter().position(|f| !f.0).unwrap();
        // the watch window the jump fell in, or the next (4 frames each)
        assert!(lost <= 8, "converged {lost} frames after the jump");
        // and before, the frames whose estimate was not in the microphone got no credit
        let credited = frames[at_jump..].iter().filter(|f| f.1 > 0.0).count();
        assert!(
            credited <= 1,
            "{credited} frames after the jump got the credit"
        );
    }

    #[test]
    fn somebody_talking_over_the_echo_keeps_the_credit() {
        // converged on a 60 ms echo; then a user as loud as the echo talks for 3 s
        let rate = SAMPLE_RATE as usize;
        let far = far_end(rate * 12);
        let echo = convolve(&far, &echo_path(960, 0.7));
        let mut user = Noise(7);
        let talk = rate * 8..rate * 11;
        let level = (energy(&echo) / echo.len() as f64).sqrt() as f32 * 3f32.sqrt();
        let mic: Vec<f32> = echo
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if talk.contains(&i) {
                    e + level * user.next()
                } else {
                    *e
                }
            })
            .collect();
        let mut aec = EchoCanceller::new();
        let frames = converged_frames(&mut aec, &far, &mic);
        let (from, to) = (talk.start / FRAME_SAMPLES, talk.end / FRAME_SAMPLES);
        assert!(frames[from - 1].0, "not converged before the user spoke");
        let kept = frames[from..to].iter().filter(|f| f.0).count();
        assert_eq!(kept, to - from, "convergence was lost under double talk");
        // a frame now and then loses it (the user's voice disturbs the filter too)
        let credited = frames[from..to].iter().filter(|f| f.1 > 0.0).count();
        assert!(
            credited * 10 >= (to - from) * 9,
            "{credited} of {} frames credited",
            to - from
        );
    }

    #[test]
    fn a_silent_microphone_under_playback_stays_silent_and_finite() {
        // a null sink's monitor, a muted microphone: exact zeros while hearth plays, then a
        // user alone
        let far = far_end(SAMPLE_RATE as usize * 12);
        let mut near = Noise(11);
        let mut aec = EchoCanceller::new();
        let mut worst = 0f32;
        let mut near_e = (0.0, 0.0);
        for (i, f) in far.chunks(FRAME_SAMPLES).enumerate() {
            aec.render(f);
            let talking = i * FRAME_SAMPLES >= 8 * SAMPLE_RATE as usize;
            let mic: Vec<f32> = (0..FRAME_SAMPLES)
                .map(|_| if talking { 0.05 * near.next() } else { 0.0 })
                .collect();
            let (clean, linear) = aec.process(&mic).unwrap();
            for &s in clean.iter().chain(linear) {
                assert!(s.is_finite(), "frame {i}: {s}");
                worst = worst.max(s.abs());
            }
            if talking {
                near_e.0 += energy(&mic);
                near_e.1 += energy(linear);
            }
        }
        assert!(worst <= 1.0, "an output sample of {worst}");
        // the user alone comes through the linear output
        let kept = 10.0 * (near_e.1 / near_e.0).log10();
        assert!(kept > -3.0, "{kept:.1} dB of the user kept");
    }

    #[test]
    fn with_nothing_played_the_near_end_passes_unchanged() {
        // a user speaking (the kitchen fixture), nobody else
        let kitchen = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/kitchen.wav");
        let near = crate::audio::wav::read_16k_mono(kitchen).unwrap();
        let near = &near[..near.len() / FRAME_SAMPLES * FRAME_SAMPLES];
        // what the canceller's own high-pass filter alone makes of it
        let mut hp = HighPassFilter::new(SAMPLE_RATE as i32, 1);
        let mut reference = vec![near.to_vec()];
        hp.process_channels(&mut reference);
        let reference = &reference[0];
        for silence_rendered in [false, true] {
            let mut aec = EchoCanceller::new();
            let mut out = Vec::new();
            for f in near.chunks(FRAME_SAMPLES) {
                if silence_rendered {
                    aec.render(&[0.0; FRAME_SAMPLES]);
                }
                let (clean, linear) = aec.process(f).unwrap();
                assert_eq!(clean.len(), linear.len());
                out.extend_from_slice(clean);
            }
            // the speech keeps its level (the high-pass filter takes only what is below
            // speech) ...
            let gain_db = 10.0 * (energy(&out) / energy(near)).log10();
            assert!(
                gain_db.abs() < 1.0,
                "gain {gain_db:.2} dB (rendered silence: {silence_rendered})"
            );
            // ... and differs from the high-passed input, one block later, by less than -30 dB
            // (one block behind: the canceller's latency)
            let diff: Vec<f32> = out[BLOCK..]
                .iter()
                .zip(reference)
                .map(|(a, b)| a - b)
                .collect();
            let err_db = 10.0 * (energy(&diff) / energy(reference)).log10();
            assert!(
                err_db < -30.0,
                "difference {err_db:.1} dB (rendered silence: {silence_rendered})"
            );
            assert!(aec.take_erle().is_none());
        }
    }

    #[test]
    fn a_frame_that_is_not_whole_blocks_is_refused() {
        let mut aec = EchoCanceller::new();
        assert!(matches!(
            aec.process(&[0.0; 100]),
            Err(AecError::FrameSize(100))
        ));
        assert!(matches!(aec.process(&[]), Err(AecError::FrameSize(0))));
        assert!(aec.process(&[0.0; 128]).is_ok());
    }

    #[test]
    fn the_tap_never_allocates_and_drops_what_does_not_fit() {
        let link = RenderLink::new();
        let mut tap = link.connect(1000);
        let played = [0.25f32; 300];
        let n = allocations(|| {
            for _ in 0..6 {
                tap.push(&played);
                tap.push_silence(100);
            }
        });
        assert_eq!(n, 0, "the tap allocated");
        // 2 s at 1 kHz fit, the rest was dropped and counted
        assert_eq!(link.dropped(), 6 * 400 - 2000);
        // the feed's first drain drops the backlog from before capture started ...
        let mut feed = link.feed();
        let mut aec = EchoCanceller::new();
        feed.drain_into(&mut aec);
        assert_eq!(aec.render.len(), 0);
        // (what the tap dropped before it is not the capture side falling behind)
        assert_eq!(feed.newly_dropped(), 0);
        // ... and then takes what is played, resampled to 16 kHz
        tap.push(&[0.25; 1500]);
        feed.drain_into(&mut aec);
        assert!(aec.render.len() > 8_000, "{}", aec.render.len());
        assert!(aec.render.len() <= RENDER_BACKLOG);
        // a capture side that falls behind by more than the tap holds: the rest is reported once
        tap.push(&[0.25; 2500]);
        assert_eq!(feed.newly_dropped(), 500);
        assert_eq!(feed.newly_dropped(), 0);
    }

    #[test]
    fn the_filter_switches_to_a_new_tap_and_cleans_frames() {
        let link = RenderLink::new();
        let mut filter = EchoFilter::new(&link);
        let frame = |start: u64| Frame {
            samples: vec![0.01f32; FRAME_SAMPLES].into(),
            echo: None,
            start,
            at: Instant::now(),
        };
        let out = filter.frame(frame(0));
        assert_eq!(out.start, 0);
        assert_eq!(out.samples.len(), FRAME_SAMPLES);
        let echo = out.echo.as_ref().unwrap();
        assert_eq!(echo.linear.len(), FRAME_SAMPLES);
        // nothing played: no credit for Listen
        assert_eq!(echo.credit_db, 0.0);
        // a restarted output: its tap replaces the first one
        let _old = link.connect(48_000);
        let mut new = link.connect(16_000);
        new.push(&[0.1; 1024]);
        let _ = filter.frame(frame(512));
        assert!(filter.feed.ring.is_some());
        assert_eq!(
            filter.feed.resampler.as_ref().map(|r| r.input_rate()),
            Some(16_000)
        );
    }
}
