//! Listen: voice activity detection, end-of-utterance detection and barge-in.
//!
//! Two gates decide whether a frame is voiced ([`VadKind`]). The Silero VAD (the
//! daemon's default): the frame's speech probability reaches `speech_threshold` and its
//! level `min_level_dbfs`; the model runs only on frames more than [`SCORE_OVER_FLOOR_DB`]
//! over the noise floor ([`score`]). The energy gate: the level is `threshold_db` above
//! the noise floor (the quietest frame of the last 3 s) and above `min_level_dbfs`; it costs
//! a few multiplications per sample and is exact on clean speech and on speech in steady
//! noise, but music and knocks start utterances too and it loses commands in loud rooms
//! (`examples/vad_compare.rs` measures both). Speech starts after `onset_ms` of voiced
//! frames (with `preroll_ms` of audio before it kept, so the first consonant is not cut) and
//! ends after `hangover_ms` without a voiced frame.
//!
//! While hearth speaks (between Playback's `Started` and `Stopped`), speech must be sustained
//! for `barge_in_ms` and louder than the reply's own playback level by `echo_margin_db`
//! before it counts: hearth's voice leaking into the microphone does not interrupt itself.
//! Under that raised gate the user's quieter syllables drop out, so a run of speech may have
//! gaps of up to 160 ms, and once it is a barge-in the utterance reaches back (up to 960 ms)
//! over audio above the ordinary gate to where the user started: "turn on the kitchen light"
//! must not become "kitchen light". A barge-in is reported once ([`ListenEvent::BargeIn`])
//! and the speech goes on to become the next utterance.
//!
//! With echo cancellation on (the frames come through `audio::aec`), once the canceller has
//! converged each frame says how far below the playback level what is left of hearth's voice
//! is taken to be ([`EchoCancelled::credit_db`](crate::voice::EchoCancelled), 20 dB), and the
//! raised gate is that much lower: `echo_margin_db` applies to the residual. Speech must still
//! be sustained for `barge_in_ms`. Without echo cancellation, or before it has converged, the
//! gate is as above.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc::UnboundedSender;

use crate::voice::{
    Captured, Frame, ListenEvent, PlaybackEvent, Utterance, FRAME_SAMPLES, SAMPLE_RATE,
};

/// Milliseconds in one frame (32).
const FRAME_MS: u32 = (FRAME_SAMPLES as u32 * 1000) / SAMPLE_RATE;

/// Frames the noise floor looks back over (3 s).
const FLOOR_WINDOW_FRAMES: usize = 94;

/// A neural VAD scores only frames this far above the noise floor (steady noise
/// varies less from frame to frame; speech rises well above it).
pub(crate) const SCORE_OVER_FLOOR_DB: f32 = 2.0;

/// After this many frames not worth scoring in a row (320 ms), the neural VAD's state
/// is reset.
const RESET_AFTER_QUIET_FRAMES: u32 = 10;

/// Speech that began while hearth spoke is reported at a pause this short as well (as well as
/// at `early_ms`): "stop" is recognised and acted on without waiting for the usual pause.
const STOP_PAUSE_MS: u32 = 128;

/// `barge_in_ms` when wake words are on: speech over a reply then stops nothing unless it is
/// the wake word or "stop", and a short "stop" must start an utterance (128 ms).
pub(crate) const WAKE_BARGE_IN_MS: u32 = 128;

/// The default [`ListenConfig::early_ms`]: recognition starts after 128 ms of silence. Against
/// 256 it took about 130 ms off every turn's first voice on the daily set's spoken session,
/// with one more recognition in 57 requests started and dropped (docs/measurements.md).
pub(crate) const EARLY_MS: u32 = 128;

/// The default [`ListenConfig::phrase_end_ms`]: as `early_ms`: a whole house request that no
/// longer one continues ends its turn as soon as it is recognised at the pause. Ending every
/// request a local intent answers that soon split 4 of 57 requests said with a 400 ms pause
/// inside ("How long is left? … on the pasta timer"), hence `intent_end_ms` for those.
pub(crate) const PHRASE_END_MS: u32 = EARLY_MS;

/// While hearth speaks: the longest gap (under the raised gate) inside one run of the
/// user's speech.
const BARGE_GAP_MS: u32 = 160;

/// On a barge-in: how far before the first syllable that passed the raised gate the
/// utterance may reach back, over audio above the ordinary gate (the user's quieter first
/// words; with an echo, hearth's own voice, which is why it is capped).
const BARGE_LOOKBACK_MS: u32 = 960;

/// Which gate decides that a frame is speech.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum VadKind {
    /// Level over the adaptive noise floor (no model, a few operations per sample).
    #[default]
    Energy,
    /// The Silero VAD (feature `tts`: ONNX Runtime): a frame is speech when its probability
    /// reaches `speech_threshold` and its level `min_level_dbfs`.
    Silero {
        /// `silero_vad.onnx`.
        model: PathBuf,
        /// `libonnxruntime.so` (None: looked up as for the voice).
        ort_library: Option<PathBuf>,
    },
}

/// The end-of-turn model (feature `tts`: Smart Turn v3.2 on ONNX Runtime).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnModel {
    /// `smart-turn-v3.2-cpu.onnx`.
    pub model: PathBuf,
    /// `libonnxruntime.so` (None: looked up as for the voice).
    pub ort_library: Option<PathBuf>,
}

/// How much of the pause the end-of-turn model hears after the last voiced frame: it was
/// trained on utterances handed over at a 200 ms pause, and its answer for the same words
/// changes with the length of the silence after them.
pub const TURN_PAUSE_MS: u32 = 200;

/// How Listen decides what is speech.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenConfig {
    /// The speech gate.
    pub vad: VadKind,
    /// With the Silero VAD: the speech probability from which a frame is speech.
    pub speech_threshold: f32,
    /// A frame is voiced this many dB above the noise floor.
    pub threshold_db: f32,
    /// ... and never below this level (dBFS), however quiet the room.
    pub min_level_dbfs: f32,
    /// Voiced time before speech is said to start.
    pub onset_ms: u32,
    /// Audio kept before the onset and put at the utterance's start.
    pub preroll_ms: u32,
    /// Silence after speech that ends the utterance (the end-of-utterance hangover).
    pub hangover_ms: u32,
    /// Silence after speech that reports a pause ([`ListenEvent::Pause`]), so recognition
    /// can start before the hangover is over (speech begun while hearth spoke is also
    /// reported after [`STOP_PAUSE_MS`], for "stop"). 0, or not below `hangover_ms`: no
    /// pauses.
    pub early_ms: u32,
    /// Silence after a request a local intent answers (recognised at the pause) that ends its
    /// turn, before the hangover. Not below `hangover_ms`: the hangover ends every turn.
    pub intent_end_ms: u32,
    /// The same for a request that is a whole request of the house's phrase set that no
    /// longer request of it continues ("lock the front door", not "set the thermostat to
    /// 20", which "degrees" may follow). Not below `intent_end_ms`: as that.
    pub phrase_end_ms: u32,
    /// Speech shorter than this is a noise, not an utterance (dropped, logged).
    pub min_speech_ms: u32,
    /// An utterance is cut here even if the speaker goes on.
    pub max_utterance_ms: u32,
    /// While hearth speaks: sustained speech for this long is a barge-in.
    pub barge_in_ms: u32,
    /// While hearth speaks: the microphone must be this many dB above the playback level
    /// (with echo cancellation converged: above the playback level less the frame's
    /// `credit_db`).
    pub echo_margin_db: f32,
    /// The end-of-turn model asked at the pause (`early_ms`): a finished request ends the
    /// utterance there instead of after the whole hangover. `None`: silence alone ends it.
    pub end_of_turn: Option<TurnModel>,
    /// What the end-of-turn model's "finished" ends.
    pub turn_ends: TurnEnds,
}

/// What the end-of-turn model's "finished" ends ([`ListenConfig::turn_ends`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TurnEnds {
    /// The utterance, at the pause, whatever was said (`end_of_turn = "smart-turn"`).
    #[default]
    Any,
    /// Nothing by itself: the model is asked only when the conductor asks
    /// ([`ListenMsg::AskFinished`]: for a whole request of the house's phrase set that a
    /// local intent answers, where the silence alone would wait for more), once the pause
    /// is [`TURN_PAUSE_MS`] long, and a "finished" is reported ([`ListenEvent::Finished`])
    /// (`end_of_turn = "smart-turn-house"`). Asked then, it does not take a core from the
    /// recognition of every pause; recognition still starts at `early_ms`.
    HouseRequests,
}

impl Default for ListenConfig {
    fn default() -> Self {
        ListenConfig {
            vad: VadKind::Energy,
            speech_threshold: 0.5,
            threshold_db: 12.0,
            min_level_dbfs: -50.0,
            onset_ms: 96,
            preroll_ms: 320,
            hangover_ms: 640,
            early_ms: EARLY_MS,
            intent_end_ms: 576,
            phrase_end_ms: PHRASE_END_MS,
            min_speech_ms: 200,
            max_utterance_ms: 15_000,
            barge_in_ms: 288,
            echo_margin_db: 6.0,
            end_of_turn: None,
            turn_ends: TurnEnds::Any,
        }
    }
}

impl ListenConfig {
    /// The same, with the end-of-turn model asked at the pause: recognition then starts at
    /// the pause the model hears ([`TURN_PAUSE_MS`]) when `early_ms` is shorter, so that it
    /// is asked at all.
    pub fn with_end_of_turn(self, model: TurnModel) -> ListenConfig {
        ListenConfig {
            early_ms: self.early_ms.max(TURN_PAUSE_MS),
            end_of_turn: Some(model),
            turn_ends: TurnEnds::Any,
            ..self
        }
    }

    /// The same, with the end-of-turn model asked only when the conductor asks, and its
    /// "finished" reported ([`TurnEnds::HouseRequests`]): `early_ms` stays as it is.
    pub fn with_house_end_of_turn(self, model: TurnModel) -> ListenConfig {
        ListenConfig {
            end_of_turn: Some(model),
            turn_ends: TurnEnds::HouseRequests,
            ..self
        }
    }
}

/// Level of a frame in dBFS (RMS; −120 for silence).
pub(crate) fn level_dbfs(samples: &[f32]) -> f32 {
    let rms = crate::voice::rms(samples);
    if rms <= 1e-6 {
        -120.0
    } else {
        20.0 * rms.log10()
    }
}

fn frames(ms: u32) -> usize {
    ms.div_ceil(FRAME_MS).max(1) as usize
}

/// The gate and endpointer: frames in, events out. Pure logic, no I/O.
#[derive(Debug)]
pub struct Endpointer {
    config: ListenConfig,
    floor_db: Option<f32>,
    /// Levels of the frames in the floor window.
    levels: VecDeque<f32>,
    /// Recent frames while silent (pre-roll and onset candidates).
    recent: VecDeque<Frame>,
    /// Voiced frames in the run that may become speech.
    voiced_run: usize,
    /// Frames since that run's first voiced frame (its gaps included).
    run_len: usize,
    /// Unvoiced frames since the run's last voiced frame.
    gap: usize,
    speech: Option<Speech>,
    /// Playback: Some(level in dBFS) while hearth speaks.
    playing: Option<f32>,
    /// The echo canceller's credit for the current frame, dB (0 without it).
    echo_credit_db: f32,
}

#[derive(Debug)]
struct Speech {
    samples: Vec<f32>,
    start: u64,
    first_voiced: u64,
    last_voiced_end: u64,
    silent_run: usize,
    barged: bool,
    /// A pause was reported since the last voiced frame.
    paused: bool,
}

impl Endpointer {
    /// An endpointer with this config.
    pub fn new(config: ListenConfig) -> Endpointer {
        Endpointer {
            config,
            floor_db: None,
            levels: VecDeque::with_capacity(FLOOR_WINDOW_FRAMES + 1),
            recent: VecDeque::new(),
            voiced_run: 0,
            run_len: 0,
            gap: 0,
            speech: None,
            playing: None,
            echo_credit_db: 0.0,
        }
    }

    /// Whether a neural VAD need score this frame: it is above the minimum level and
    /// more than [`SCORE_OVER_FLOOR_DB`] above the noise floor (so far).
    pub(crate) fn worth_scoring(&self, samples: &[f32]) -> bool {
        let db = level_dbfs(samples);
        db > self.config.min_level_dbfs
            && db > self.floor_db.unwrap_or(-120.0) + SCORE_OVER_FLOOR_DB
    }

    /// Playback started or stopped, or reported its level.
    pub fn playback(&mut self, event: &PlaybackEvent) {
        match event {
            PlaybackEvent::Started { .. } => {
                self.playing = Some(self.playing.unwrap_or(-120.0));
            }
            PlaybackEvent::Level { rms } => {
                if self.playing.is_some() {
                    self.playing = Some(level_dbfs(&[*rms]));
                }
            }
            PlaybackEvent::Stopped { .. } => self.playing = None,
        }
    }

    /// Is a frame at `db` speech? With a speech probability (a neural VAD), the model
    /// decides and the level need only pass the absolute minimum; without, the level must
    /// stand `threshold_db` over the noise floor. Either way, while hearth speaks the level
    /// must also be `echo_margin_db` over its own playback.
    fn voiced(&self, db: f32, speech_prob: Option<f32>) -> bool {
        let mut gate = match speech_prob {
            Some(_) => self.config.min_level_dbfs,
            None => self.ordinary_gate(),
        };
        if let Some(play_db) = self.playing {
            let residual_db = play_db - self.echo_credit_db;
            gate = gate.max(residual_db + self.config.echo_margin_db);
        }
        db > gate && speech_prob.is_none_or(|p| p >= self.config.speech_threshold)
    }

    /// The energy gate's gate when nothing plays: `threshold_db` over the noise floor,
    /// and at least `min_level_dbfs`.
    fn ordinary_gate(&self) -> f32 {
        let floor = self.floor_db.unwrap_or(-90.0);
        (floor + self.config.threshold_db).max(self.config.min_level_dbfs)
    }

    /// Minimum statistics: the floor is the quietest frame of the last few seconds. It is
    /// right from the first frame (a file that starts with speech, a room that starts noisy)
    /// and follows a room that gets louder within the window.
    fn track_floor(&mut self, db: f32) {
        self.levels.push_back(db);
        while self.levels.len() > FLOOR_WINDOW_FRAMES {
            self.levels.pop_front();
        }
        self.floor_db = self.levels.iter().copied().reduce(f32::min);
    }

    /// Frames before the current run (kept in `recent`) where the user was already
    /// speaking: above the ordinary gate (as if nothing played), short gaps allowed, at most
    /// `BARGE_LOOKBACK_MS`.
    fn lookback(&self) -> usize {
        let gate = self.ordinary_gate();
        let (max, gap_ok) = (frames(BARGE_LOOKBACK_MS), frames(BARGE_GAP_MS));
        let mut i = self.recent.len().saturating_sub(self.run_len);
        let (mut back, mut gap) = (0, 0);
        while i > 0 && back + gap < max {
            i -= 1;
            if level_dbfs(&self.recent[i].samples) > gate {
                back += gap + 1;
                gap = 0;
            } else if gap < gap_ok {
                gap += 1;
            } else {
                break;
            }
        }
        back
    }

    /// One frame in; what it completes out (`SpeechStarted`, `BargeIn`, `Utterance`).
    pub fn push(&mut self, frame: Frame) -> Vec<ListenEvent> {
        self.push_scored(frame, None)
    }

    /// [`Endpointer::push`] with the frame's speech probability from a neural VAD.
    pub fn push_scored(&mut self, frame: Frame, speech_prob: Option<f32>) -> Vec<ListenEvent> {
        let mut out = Vec::new();
        let db = level_dbfs(&frame.samples);
        self.track_floor(db);
        self.echo_credit_db = frame.echo.as_ref().map_or(0.0, |e| e.credit_db);
        let voiced = self.voiced(db, speech_prob);
        let end = frame.start + frame.samples.len() as u64;

        if let Some(speech) = &mut self.speech {
            speech.samples.extend_from_slice(&frame.samples);
            if voiced {
                if std::mem::take(&mut speech.paused) {
                    out.push(ListenEvent::Resumed {
                        start: speech.start,
                    });
                }
                speech.last_voiced_end = end;
                speech.silent_run = 0;
            } else {
                speech.silent_run += 1;
            }
            let long = speech.samples.len() as u64
                >= u64::from(self.config.max_utterance_ms) * u64::from(SAMPLE_RATE) / 1000;
            let early = self.config.early_ms;
            let paused = speech.silent_run == frames(early)
                || (speech.barged && speech.silent_run == frames(STOP_PAUSE_MS.min(early)));
            if early > 0
                && early < self.config.hangover_ms
                && paused
                && !long
                && voiced_ms(speech) >= u64::from(self.config.min_speech_ms)
            {
                speech.paused = true;
                out.push(ListenEvent::Pause(Utterance {
                    samples: speech.samples.as_slice().into(),
                    start: speech.start,
                    speech_end: speech.last_voiced_end,
                    endpointed_at: frame.at,
                }));
            }
            if speech.silent_run >= frames(self.config.hangover_ms) || long {
                if long {
                    tracing::warn!(
                        max_ms = self.config.max_utterance_ms,
                        "utterance cut at its longest"
                    );
                }
                out.extend(self.finish(frame.at));
            }
            return out;
        }

        // silent: keep the pre-roll, watch for an onset
        let barge = self.playing.is_some();
        // While hearth speaks, the gate sits above its own voice and the user's quieter
        // syllables fall under it: a run of speech may have gaps of up to `BARGE_GAP_MS`,
        // so the barge-in's utterance starts where the user started, not at its last
        // unbroken stretch.
        let gap_ok = if barge { frames(BARGE_GAP_MS) } else { 0 };
        self.recent.push_back(frame);
        let keep = frames(self.config.preroll_ms)
            + frames(BARGE_LOOKBACK_MS)
            + frames(self.config.barge_in_ms) * (1 + frames(BARGE_GAP_MS));
        while self.recent.len() > keep {
            self.recent.pop_front();
        }
        if voiced {
            self.voiced_run += 1;
            self.run_len += 1 + self.gap;
            self.gap = 0;
        } else if self.voiced_run > 0 && self.gap < gap_ok {
            self.gap += 1;
        } else {
            self.voiced_run = 0;
            self.run_len = 0;
            self.gap = 0;
        }
        let need = if barge {
            frames(self.config.barge_in_ms)
        } else {
            frames(self.config.onset_ms)
        };
        if self.voiced_run >= need {
            if barge {
                self.run_len += self.lookback();
            }
            let lead = (self.run_len + frames(self.config.preroll_ms)).min(self.recent.len());
            let from = self.recent.len() - lead;
            let mut samples = Vec::with_capacity(lead * FRAME_SAMPLES * 4);
            let mut start = None;
            let mut at = None;
            for f in self.recent.drain(..).skip(from) {
                start.get_or_insert(f.start);
                at = Some(f.at);
                samples.extend_from_slice(&f.samples);
            }
            let start = start.unwrap_or(0);
            let first_voiced = end - (self.run_len * FRAME_SAMPLES) as u64;
            let at = at.unwrap_or_else(Instant::now);
            self.voiced_run = 0;
            self.run_len = 0;
            self.gap = 0;
            self.speech = Some(Speech {
                samples,
                start,
                first_voiced,
                last_voiced_end: end,
                silent_run: 0,
                barged: barge,
                paused: false,
            });
            out.push(ListenEvent::SpeechStarted { at });
            if barge {
                tracing::info!(echo_credit_db = self.echo_credit_db, "barge-in");
                out.push(ListenEvent::BargeIn { at });
            }
        }
        out
    }

    /// Where the pause after the speech (`start`, `speech_end`) stands: still on, with the
    /// utterance so far once at least `ms` of it has passed (what the end-of-turn model
    /// hears), or over (speech went on, or the utterance ended).
    pub(crate) fn pause_of(&self, start: u64, speech_end: u64, ms: u32) -> PauseOf {
        let Some(speech) = (self.speech.as_ref())
            .filter(|s| s.start == start && s.last_voiced_end == speech_end && s.silent_run > 0)
        else {
            return PauseOf::Over;
        };
        if speech.silent_run < frames(ms) {
            return PauseOf::Shorter;
        }
        PauseOf::Long(Utterance {
            samples: speech.samples.as_slice().into(),
            start: speech.start,
            speech_end: speech.last_voiced_end,
            endpointed_at: Instant::now(),
        })
    }

    /// The speech under way is a finished turn (the end-of-turn model said so at a pause):
    /// its utterance now, without waiting for the rest of the hangover. Nothing when no
    /// speech is under way.
    pub(crate) fn end_turn(&mut self, at: Instant) -> Option<ListenEvent> {
        self.finish(at)
    }

    /// The input ended: an utterance under way is complete.
    pub fn end(&mut self) -> Vec<ListenEvent> {
        let mut out: Vec<ListenEvent> = self.finish(Instant::now()).into_iter().collect();
        self.recent.clear();
        self.voiced_run = 0;
        self.run_len = 0;
        self.gap = 0;
        out.push(ListenEvent::End);
        out
    }

    fn finish(&mut self, at: Instant) -> Option<ListenEvent> {
        let speech = self.speech.take()?;
        let voiced_ms = voiced_ms(&speech);
        if voiced_ms < u64::from(self.config.min_speech_ms) {
            tracing::debug!(voiced_ms, "too short for an utterance; dropped");
            return None;
        }
        tracing::info!(
            start_s = speech.start as f64 / f64::from(SAMPLE_RATE),
            secs = speech.samples.len() as f64 / f64::from(SAMPLE_RATE),
            barge_in = speech.barged,
            "utterance"
        );
        Some(ListenEvent::Utterance(Utterance {
            samples: speech.samples.into(),
            start: speech.start,
            speech_end: speech.last_voiced_end,
            endpointed_at: at,
        }))
    }
}

/// From the first voiced frame to the end of the last, ms.
fn voiced_ms(speech: &Speech) -> u64 {
    (speech.last_voiced_end - speech.first_voiced) * 1000 / u64::from(SAMPLE_RATE)
}

/// [`Endpointer::pause_of`]: where a pause stands.
#[derive(Debug)]
pub(crate) enum PauseOf {
    /// Not yet this long.
    Shorter,
    /// At least this long: the utterance so far.
    Long(Utterance),
    /// Speech went on, or the utterance ended.
    Over,
}

/// Messages to the [`Listen`] actor.
pub enum ListenMsg {
    /// Captured audio (a frame, or the end of the input).
    Captured(Captured),
    /// What Playback reports (barge-in gating).
    Playback(PlaybackEvent),
    /// Ask the end-of-turn model ([`TurnEnds::HouseRequests`]) whether the speech of the
    /// utterance Listen started at `start`, which ended at `speech_end`, is finished, once
    /// the pause after it is [`TURN_PAUSE_MS`] long: [`ListenEvent::Finished`] if it is.
    /// Nothing when speech went on, the utterance ended, or there is no model.
    AskFinished { start: u64, speech_end: u64 },
}

/// The Listen actor. Arguments: the config and where its events go.
pub struct Listen;

/// [`Listen`]'s arguments.
pub struct ListenArgs {
    /// Detection settings.
    pub config: ListenConfig,
    /// Where events go.
    pub events: UnboundedSender<ListenEvent>,
}

/// The neural VAD the actor runs, if the config asks for one.
type Neural = crate::audio::silero::Silero;

/// The end-of-turn model the actor runs, if the config asks for one.
type EndOfTurnModel = crate::audio::smart_turn::SmartTurn;

/// Load the end-of-turn model the config names.
fn load_end_of_turn(config: &ListenConfig) -> Result<Option<EndOfTurnModel>, ActorProcessingErr> {
    let Some(m) = &config.end_of_turn else {
        return Ok(None);
    };
    {
        let library = match &m.ort_library {
            Some(l) => l.clone(),
            None => crate::onnx::find_library(
                None,
                |k| std::env::var_os(k),
                &crate::onnx::search_dirs(&m.model),
            )?,
        };
        let mut turn = crate::audio::smart_turn::SmartTurn::load(&m.model, &library)?;
        // a model this CPU computes differently would end turns at random: the silence
        // decides instead, and the log and `hearth doctor` say why
        match turn.check_known_answer() {
            Ok(p) => {
                tracing::info!(model = %m.model.display(), known_answer = p, "end-of-turn model loaded");
                Ok(Some(turn))
            }
            Err(e @ crate::audio::smart_turn::SmartTurnError::Disagrees { .. }) => {
                tracing::error!(model = %m.model.display(), "{e}");
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Load the VAD the config names (none for the energy gate).
fn load_vad(config: &ListenConfig) -> Result<Option<Neural>, ActorProcessingErr> {
    match &config.vad {
        VadKind::Energy => Ok(None),
        VadKind::Silero { model, ort_library } => {
            let library = match ort_library {
                Some(l) => l.clone(),
                None => crate::onnx::find_library(
                    None,
                    |k| std::env::var_os(k),
                    &crate::onnx::search_dirs(model),
                )?,
            };
            let vad = crate::audio::silero::Silero::load(model, &library)?;
            tracing::info!(model = %model.display(), "Silero VAD loaded");
            Ok(Some(vad))
        }
    }
}

/// A frame's speech probability from the Silero VAD, run only where it can matter: a frame
/// under the minimum level, or within [`SCORE_OVER_FLOOR_DB`] of the room's noise floor (a
/// quiet room, a steady fan), cannot start speech, so it scores 0 without running the model
/// (which costs about 0.5 ms a frame when it wakes cold). After 320 ms of such frames the
/// model starts afresh; a quiet syllable inside speech keeps its state (`quiet` counts the
/// frames skipped in a row).
pub fn score(
    endpointer: &Endpointer,
    vad: &mut crate::audio::silero::Silero,
    quiet: &mut u32,
    samples: &[f32],
) -> Result<f32, crate::audio::silero::VadError> {
    if !endpointer.worth_scoring(samples) {
        *quiet = quiet.saturating_add(1);
        if *quiet == RESET_AFTER_QUIET_FRAMES {
            vad.reset();
        }
        return Ok(0.0);
    }
    *quiet = 0;
    vad.speech_prob(samples)
}

/// The Listen actor's state.
pub struct ListenState {
    endpointer: Endpointer,
    events: UnboundedSender<ListenEvent>,
    neural: Option<Neural>,
    /// Frames the neural VAD failed on (each judged by level instead).
    vad_failures: u64,
    /// Frames in a row the neural VAD was not run on (see [`score`]).
    quiet: u32,
    end_of_turn: Option<EndOfTurnModel>,
    /// The speech (start, end) the end-of-turn model is asked about once its pause is long
    /// enough ([`ListenMsg::AskFinished`]).
    asked: Option<(u64, u64)>,
}

impl Actor for Listen {
    type Msg = ListenMsg;
    type State = ListenState;
    type Arguments = ListenArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: ListenArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let neural = load_vad(&args.config)?;
        let end_of_turn = load_end_of_turn(&args.config)?;
        Ok(ListenState {
            endpointer: Endpointer::new(args.config),
            events: args.events,
            neural,
            vad_failures: 0,
            quiet: 0,
            end_of_turn,
            asked: None,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let out = match msg {
            ListenMsg::Captured(Captured::Frame(frame)) => {
                let prob = state.speech_prob(&frame);
                let mut out = state.endpointer.push_scored(frame, prob);
                state.end_of_turn(&mut out);
                out
            }
            ListenMsg::Captured(Captured::End) => state.endpointer.end(),
            ListenMsg::Playback(event) => {
                state.endpointer.playback(&event);
                Vec::new()
            }
            ListenMsg::AskFinished { start, speech_end } => {
                let asked = state.end_of_turn.is_some()
                    && state.endpointer.config.turn_ends == TurnEnds::HouseRequests;
                state.asked = asked.then_some((start, speech_end));
                let mut out = Vec::new();
                state.end_of_turn(&mut out);
                out
            }
        };
        for event in out {
            if state.events.send(event).is_err() {
                tracing::warn!("listen event dropped: nobody is listening");
            }
        }
        Ok(())
    }
}

impl ListenState {
    /// At the pause, the end-of-turn model's word: it ends the turn there
    /// ([`TurnEnds::Any`]), or, when it was asked for, is reported
    /// ([`TurnEnds::HouseRequests`]).
    fn end_of_turn(&mut self, out: &mut Vec<ListenEvent>) {
        if self.end_of_turn.is_none() {
            return;
        }
        match self.endpointer.config.turn_ends {
            TurnEnds::Any => {
                let finished = out.iter().any(|e| match e {
                    ListenEvent::Pause(u) => self.turn_is_finished(u),
                    _ => false,
                });
                if finished {
                    out.extend(self.endpointer.end_turn(Instant::now()));
                }
            }
            TurnEnds::HouseRequests => {
                let Some((start, speech_end)) = self.asked else {
                    return;
                };
                let u = match self.endpointer.pause_of(start, speech_end, TURN_PAUSE_MS) {
                    PauseOf::Shorter => return,
                    PauseOf::Over => return self.asked = None,
                    PauseOf::Long(u) => u,
                };
                self.asked = None;
                if self.turn_is_finished(&u) {
                    out.push(ListenEvent::Finished { start, speech_end });
                }
            }
        }
    }

    /// Whether the end-of-turn model hears a finished turn in the speech before a pause of
    /// at least [`TURN_PAUSE_MS`] (of which it hears that much). False without the model, at
    /// a shorter pause (the one for "stop" over a reply), or when the model fails (logged:
    /// the hangover then ends the utterance, as without it).
    fn turn_is_finished(&mut self, u: &Utterance) -> bool {
        if let Some(model) = self.end_of_turn.as_mut() {
            let pause = u64::from(TURN_PAUSE_MS) * u64::from(SAMPLE_RATE) / 1000;
            let spoken = u.speech_end.saturating_sub(u.start);
            if (u.start + u.samples.len() as u64).saturating_sub(u.speech_end) < pause {
                return false;
            }
            let heard = ((spoken + pause) as usize).min(u.samples.len());
            let t = Instant::now();
            return match model.complete_prob(&u.samples[..heard]) {
                Ok(p) => {
                    let finished = p > crate::audio::smart_turn::COMPLETE_THRESHOLD;
                    tracing::info!(
                        p = format!("{p:.2}"),
                        ms = format!("{:.0}", t.elapsed().as_secs_f64() * 1e3),
                        finished,
                        "end of turn?"
                    );
                    finished
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the end-of-turn model failed: the hangover ends the utterance");
                    false
                }
            };
        }
        let _ = u;
        false
    }

    /// The neural VAD's speech probability for a frame (None without one; 0 for a
    /// frame it is not run on, see [`score`]). A frame it fails on is judged by its level
    /// instead, and the failure is logged (the first, then every 100th).
    fn speech_prob(&mut self, frame: &Frame) -> Option<f32> {
        if let Some(vad) = self.neural.as_mut() {
            let t = std::time::Instant::now();
            match score(&self.endpointer, vad, &mut self.quiet, &frame.samples) {
                Ok(p) => {
                    tracing::trace!(
                        p,
                        us = t.elapsed().as_secs_f64() * 1e6,
                        db = level_dbfs(&frame.samples),
                        start = frame.start,
                        "vad"
                    );
                    return Some(p);
                }
                Err(e) => {
                    self.vad_failures += 1;
                    if self.vad_failures % 100 == 1 {
                        tracing::warn!(error = %e, failures = self.vad_failures, "the VAD failed on a frame; judging it by its level");
                    }
                    return None;
                }
            }
        }
        let _ = frame;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voice::ReplyId;
    use std::sync::Arc;

    const KITCHEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/kitchen.wav");
    const LONG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/long.wav");

    /// Deterministic white noise at a given RMS.
    fn noise(n: usize, rms: f32, seed: &mut u64) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = ((*seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0;
                u * rms * 3f32.sqrt()
            })
            .collect()
    }

    fn run(e: &mut Endpointer, signal: &[f32]) -> Vec<ListenEvent> {
        run_cancelled(e, signal, None)
    }

    /// [`run`] on frames that came through an echo canceller giving this credit.
    fn run_cancelled(
        e: &mut Endpointer,
        signal: &[f32],
        credit_db: Option<f32>,
    ) -> Vec<ListenEvent> {
        let mut out = Vec::new();
        for (i, chunk) in signal.chunks(FRAME_SAMPLES).enumerate() {
            let mut s = chunk.to_vec();
            s.resize(FRAME_SAMPLES, 0.0);
            let echo = credit_db.map(|credit_db| crate::voice::EchoCancelled {
                linear: Arc::from(s.clone()),
                credit_db,
            });
            out.extend(e.push(Frame {
                samples: Arc::from(s),
                echo,
                start: (i * FRAME_SAMPLES) as u64,
                at: Instant::now(),
            }));
        }
        out.extend(e.end());
        out
    }

    fn barge_ins(events: &[ListenEvent]) -> usize {
        events
            .iter()
            .filter(|e| matches!(e, ListenEvent::BargeIn { .. }))
            .count()
    }

    fn utterances(events: &[ListenEvent]) -> Vec<&Utterance> {
        events
            .iter()
            .filter_map(|e| match e {
                ListenEvent::Utterance(u) => Some(u),
                _ => None,
            })
            .collect()
    }

    fn speech(path: &str) -> Vec<f32> {
        crate::audio::wav::read_16k_mono(path).unwrap()
    }

    /// `silence` s of background, the clip, `silence` s of background.
    fn padded(clip: &[f32], background_rms: f32, silence: f32) -> (Vec<f32>, usize) {
        let mut seed = 7;
        let pad = (silence * SAMPLE_RATE as f32) as usize;
        let mut s = noise(pad, background_rms, &mut seed);
        let at = s.len();
        let bg = noise(clip.len(), background_rms, &mut seed);
        s.extend(clip.iter().zip(bg).map(|(a, b)| a + b));
        s.extend(noise(pad, background_rms, &mut seed));
        (s, at)
    }

    #[test]
    fn one_utterance_around_the_speech_over_silence_and_over_noise() {
        for path in [KITCHEN, LONG] {
            let clip = speech(path);
            for bg in [0.0, 0.003, 0.01] {
                let (signal, at) = padded(&clip, bg, 1.5);
                let mut e = Endpointer::new(ListenConfig::default());
                let events = run(&mut e, &signal);
                let u = utterances(&events);
                assert_eq!(u.len(), 1, "{path} over noise {bg}: {events:?}");
                let u = u[0];
                let (s, end) = (u.start as usize, u.speech_end as usize);
                // starts before the speech (pre-roll) but not long before
                assert!(s <= at && at - s < 8000, "{path} {bg}: start {s} vs {at}");
                // speech end is within the clip's last 0.3 s .. its end + a frame
                let clip_end = at + clip.len();
                assert!(
                    end <= clip_end + FRAME_SAMPLES && end + 4800 >= clip_end,
                    "{path} {bg}: end {end} vs {clip_end}"
                );
                assert!(matches!(events.last(), Some(ListenEvent::End)));
            }
        }
    }

    #[test]
    fn two_commands_with_a_pause_are_two_utterances_and_clicks_are_not() {
        let clip = speech(KITCHEN);
        let mut signal = vec![0.0; 8000];
        signal.extend(&clip);
        signal.extend(vec![0.0; 24000]); // 1.5 s pause
                                         // a 40 ms click: too short to be speech
        signal.extend(std::iter::repeat_n(0.5, 640));
        signal.extend(vec![0.0; 24000]);
        signal.extend(&clip);
        signal.extend(vec![0.0; 16000]);
        let mut e = Endpointer::new(ListenConfig::default());
        let events = run(&mut e, &signal);
        assert_eq!(utterances(&events).len(), 2, "{events:?}");
        assert!(!events
            .iter()
            .any(|e| matches!(e, ListenEvent::BargeIn { .. })));
    }

    #[test]
    fn a_pause_comes_before_its_utterance_with_the_same_speech() {
        let clip = speech(KITCHEN);
        let mut signal = vec![0.0; 8000];
        signal.extend(&clip);
        signal.extend(vec![0.0; 16000]);
        let mut e = Endpointer::new(ListenConfig::default());
        let events = run(&mut e, &signal);
        let pauses: Vec<&Utterance> = events
            .iter()
            .filter_map(|e| match e {
                ListenEvent::Pause(u) => Some(u),
                _ => None,
            })
            .collect();
        let u = utterances(&events);
        assert_eq!(u.len(), 1, "{events:?}");
        // the last pause is the final utterance, cut shorter: same speech, less silence
        let p = pauses.last().expect("a pause before the endpoint");
        assert_eq!((p.start, p.speech_end), (u[0].start, u[0].speech_end));
        assert!(p.samples.len() < u[0].samples.len());
        assert_eq!(p.samples[..], u[0].samples[..p.samples.len()]);
        let pause_at = events
            .iter()
            .position(|e| matches!(e, ListenEvent::Pause(x) if x == *p));
        let utt_at = events
            .iter()
            .position(|e| matches!(e, ListenEvent::Utterance(_)));
        assert!(pause_at < utt_at);
        // silence after the speech: (early_ms / 32 ms) frames
        let silent = p.start + p.samples.len() as u64 - p.speech_end;
        let early = ListenConfig::default().early_ms;
        assert_eq!(silent, u64::from(early / FRAME_MS) * FRAME_SAMPLES as u64);
        // no pauses when early_ms is off
        let mut e = Endpointer::new(ListenConfig {
            early_ms: 0,
            ..ListenConfig::default()
        });
        let events = run(&mut e, &signal);
        assert!(!events.iter().any(|e| matches!(e, ListenEvent::Pause(_))));
    }

    /// The command, 400 ms of silence (a pause, under the 640 ms hangover), the command
    /// again, then a second of silence.
    fn said_twice_with_a_pause() -> Vec<f32> {
        let clip = speech(KITCHEN);
        let mut signal = vec![0.0; 8000];
        signal.extend(&clip);
        signal.extend(vec![0.0; 6400]);
        signal.extend(&clip);
        signal.extend(vec![0.0; 16000]);
        signal
    }

    #[test]
    fn a_pause_stands_until_speech_goes_on_or_the_utterance_ends() {
        let signal = said_twice_with_a_pause();
        let mut e = Endpointer::new(ListenConfig::default());
        // at each frame of each pause: the speech it follows, and where that pause stands
        // (1: shorter than the model's pause, 2: long enough, 0: over), and where the
        // first pause stands
        let (mut first, mut seen) = (None, Vec::new());
        for (i, chunk) in signal.chunks(FRAME_SAMPLES).enumerate() {
            let mut s = chunk.to_vec();
            s.resize(FRAME_SAMPLES, 0.0);
            let events = e.push(Frame {
                samples: Arc::from(s),
                echo: None,
                start: (i * FRAME_SAMPLES) as u64,
                at: Instant::now(),
            });
            for ev in &events {
                if let ListenEvent::Pause(u) = ev {
                    first.get_or_insert((u.start, u.speech_end));
                }
            }
            if let Some((start, end)) = first {
                seen.push(match e.pause_of(start, end, TURN_PAUSE_MS) {
                    PauseOf::Shorter => 1,
                    PauseOf::Long(u) => {
                        let silent = u.start + u.samples.len() as u64 - u.speech_end;
                        assert!(silent >= u64::from(TURN_PAUSE_MS * SAMPLE_RATE / 1000));
                        assert_eq!((u.start, u.speech_end), (start, end));
                        2
                    }
                    PauseOf::Over => 0,
                });
            }
        }
        // from the pause (early_ms in): shorter, then long enough, then over for good when
        // the speech goes on
        let early = (ListenConfig::default().early_ms / FRAME_MS) as usize;
        let long = TURN_PAUSE_MS.div_ceil(FRAME_MS) as usize;
        assert!(seen[..long - early].iter().all(|&x| x == 1), "{seen:?}");
        let over = seen.iter().position(|&x| x == 0).expect("speech went on");
        assert!(over > long - early && seen[long - early..over].iter().all(|&x| x == 2));
        assert!(seen[over..].iter().all(|&x| x == 0), "{seen:?}");
        // another speech's pause is not this one's
        assert!(matches!(e.pause_of(0, 1, TURN_PAUSE_MS), PauseOf::Over));
    }

    #[test]
    fn speech_that_goes_on_after_a_pause_is_reported_before_the_next_pause() {
        let signal = said_twice_with_a_pause();
        let mut e = Endpointer::new(ListenConfig::default());
        let events = run(&mut e, &signal);
        let u = utterances(&events);
        assert_eq!(u.len(), 1, "one utterance: {events:?}");
        // every Resumed follows a Pause of the same utterance, and comes before the next one
        let mut paused = false;
        let mut resumed = 0;
        for ev in &events {
            match ev {
                ListenEvent::Pause(p) => {
                    assert!(!paused, "two pauses without speech between: {events:?}");
                    assert_eq!(p.start, u[0].start);
                    paused = true;
                }
                ListenEvent::Resumed { start } => {
                    assert!(paused, "resumed without a pause: {events:?}");
                    assert_eq!(*start, u[0].start);
                    paused = false;
                    resumed += 1;
                }
                _ => {}
            }
        }
        assert!(resumed >= 1, "the 400 ms pause was not followed by Resumed");
        assert!(paused, "the last pause is the utterance's end");
    }

    #[test]
    fn a_file_that_is_all_speech_is_one_utterance() {
        for path in [KITCHEN, LONG] {
            let clip = speech(path);
            let mut e = Endpointer::new(ListenConfig::default());
            let events = run(&mut e, &clip);
            let u = utterances(&events);
            assert_eq!(u.len(), 1, "{path}: {events:?}");
            assert!(
                u[0].samples.len() + 2 * FRAME_SAMPLES >= clip.len(),
                "{path}"
            );
        }
    }

    #[test]
    fn speech_at_the_end_of_the_input_is_finished_by_end() {
        let clip = speech(KITCHEN);
        let mut signal = vec![0.0; 8000];
        signal.extend(&clip);
        let mut e = Endpointer::new(ListenConfig::default());
        let events = run(&mut e, &signal);
        assert_eq!(utterances(&events).len(), 1, "{events:?}");
    }

    #[test]
    fn barge_in_needs_speech_louder_than_the_echo_and_sustained() {
        let clip = speech(KITCHEN);
        let clip_db = level_dbfs(&clip);
        // hearth speaks at a level like the user's: its echo (same level) does not barge in
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level {
            rms: 10f32.powf(clip_db / 20.0),
        });
        let mut signal = vec![0.0; 8000];
        signal.extend(&clip);
        let echo = run(&mut e, &signal);
        assert!(
            !echo
                .iter()
                .any(|e| matches!(e, ListenEvent::BargeIn { .. })),
            "{echo:?}"
        );

        // a louder user over a quiet reply does, once, and the speech becomes an utterance
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level { rms: 0.005 });
        let events = run(&mut e, &signal);
        let barges = barge_ins(&events);
        assert_eq!(barges, 1, "{events:?}");
        assert_eq!(utterances(&events).len(), 1);

        // after playback stopped, the same speech is an ordinary utterance
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Stopped {
            reply: ReplyId::fresh(),
            at: Instant::now(),
            interrupted: false,
        });
        let events = run(&mut e, &signal);
        assert!(!events
            .iter()
            .any(|e| matches!(e, ListenEvent::BargeIn { .. })));
        assert_eq!(utterances(&events).len(), 1);

        // with a converged echo canceller the gate applies to the residual: the user at the
        // level of the reply is heard over it (sustained: a barge-in), ...
        let credit = Some(crate::audio::aec::AEC_CREDIT_DB);
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level {
            rms: 10f32.powf(clip_db / 20.0),
        });
        let events = run_cancelled(&mut e, &signal, credit);
        assert_eq!(barge_ins(&events), 1, "{events:?}");
        // ... but not before it has converged (no credit yet) ...
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level {
            rms: 10f32.powf(clip_db / 20.0),
        });
        let events = run_cancelled(&mut e, &signal, Some(0.0));
        assert_eq!(barge_ins(&events), 0, "{events:?}");
        // ... and a reply 30 dB louder than the user still gates it
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level {
            rms: 10f32.powf((clip_db + 30.0) / 20.0),
        });
        let events = run_cancelled(&mut e, &signal, credit);
        assert_eq!(barge_ins(&events), 0, "{events:?}");
    }

    #[test]
    fn a_barge_in_utterance_starts_where_the_user_started() {
        // The reply plays loud: only the user's louder syllables pass the raised gate, with
        // gaps between them (here four 32 ms frames at -12 dBFS, then three at -30 dBFS,
        // under the gate of -20 + 6 dB). No unbroken stretch is long enough for a barge-in,
        // yet it is sustained speech; and the utterance must hold its first, quieter word,
        // or "turn on the kitchen light" is heard as "on the kitchen light".
        let mut seed = 3;
        let mut signal = vec![0.0; 8000];
        let first = signal.len();
        // a first word too quiet for the raised gate (but well above the room's floor)
        signal.extend(noise(12 * FRAME_SAMPLES, 0.03, &mut seed));
        signal.extend(vec![0.0; 2 * FRAME_SAMPLES]);
        for _ in 0..5 {
            signal.extend(noise(4 * FRAME_SAMPLES, 0.25, &mut seed));
            signal.extend(noise(3 * FRAME_SAMPLES, 0.03, &mut seed));
        }
        signal.extend(vec![0.0; 16000]);
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level { rms: 0.1 });
        let events = run(&mut e, &signal);
        let barges = barge_ins(&events);
        assert_eq!(barges, 1, "{events:?}");
        let u = utterances(&events);
        assert_eq!(u.len(), 1, "{events:?}");
        assert!(
            u[0].start <= first as u64,
            "the utterance starts at {} but the speech at {first}",
            u[0].start
        );

        // gaps longer than that are separate noises, not one run of speech
        let mut signal = vec![0.0; 8000];
        for _ in 0..5 {
            signal.extend(noise(4 * FRAME_SAMPLES, 0.25, &mut seed));
            signal.extend(noise(8 * FRAME_SAMPLES, 0.03, &mut seed));
        }
        let mut e = Endpointer::new(ListenConfig::default());
        e.playback(&PlaybackEvent::Started {
            reply: ReplyId::fresh(),
            at: Instant::now(),
        });
        e.playback(&PlaybackEvent::Level { rms: 0.1 });
        let events = run(&mut e, &signal);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ListenEvent::BargeIn { .. })),
            "{events:?}"
        );
    }

    #[test]
    fn silence_alone_is_nothing_and_levels() {
        let mut e = Endpointer::new(ListenConfig::default());
        let events = run(&mut e, &vec![0.0; 64000]);
        assert_eq!(events, [ListenEvent::End]);
        assert_eq!(level_dbfs(&[0.0; 10]), -120.0);
        assert!((level_dbfs(&[0.5, -0.5]) - (-6.02)).abs() < 0.01);
    }
}
