//! The values that cross the voice pipeline's stage boundaries: frames of captured audio,
//! utterances, what was heard, synthesised speech and the playback events Listen needs for
//! barge-in. A stage imports these types, never another stage.
//!
//! ```text
//! Capture ─Frame─► Wake ─Frame─► Listen ─Utterance─► Stt ─Heard─► Agent ─Speakable─► Tts ─Pcm─► Playback
//!                                                                      (tagged ReplyId)          (tagged)
//!                   │WakeWord       ▲                                                             │
//!                   ▼               └──────────────────── PlaybackEvent ◄─────────────────────────┘
//! ```

use std::sync::Arc;
use std::time::Instant;

/// The pipeline's sample rate after capture: 16 kHz mono (what whisper and Silero take).
pub const SAMPLE_RATE: u32 = 16_000;

/// Samples in one [`Frame`]: 32 ms at 16 kHz (Silero VAD's window).
pub const FRAME_SAMPLES: usize = 512;

/// One fixed-size frame of captured audio: 16 kHz mono, `f32` in [-1, 1].
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Exactly [`FRAME_SAMPLES`] samples (with echo cancellation on: the cleaned signal).
    pub samples: Arc<[f32]>,
    /// What the echo canceller adds (`None` without echo cancellation).
    pub echo: Option<EchoCancelled>,
    /// Index of the first sample since capture started (16 kHz clock): the input's own
    /// time, which for a file source runs faster than the wall clock.
    pub start: u64,
    /// When the frame's last sample was captured (wall clock).
    pub at: Instant,
}

/// What the echo canceller adds to a frame it cleaned.
#[derive(Debug, Clone, PartialEq)]
pub struct EchoCancelled {
    /// The canceller's linear-filter output for the same samples (hearth's echo subtracted,
    /// nothing suppressed): it keeps more of a user talking over hearth, so the wake-word
    /// detector takes it.
    pub linear: Arc<[f32]>,
    /// How far below hearth's playback level what is left of its voice in the frame is taken
    /// to be, dB: 0 until the canceller has shown that it cancels this room's echo, then
    /// `audio::aec::AEC_CREDIT_DB`. Listen lowers its playback gate by this much.
    pub credit_db: f32,
}

impl Frame {
    /// The frame's time on the input clock, in seconds.
    pub fn start_secs(&self) -> f64 {
        self.start as f64 / f64::from(SAMPLE_RATE)
    }
}

/// One stretch of speech, from the first voiced frame (with a little lead-in) to the end of
/// the hangover: 16 kHz mono `f32`.
#[derive(Debug, Clone, PartialEq)]
pub struct Utterance {
    /// The samples, 16 kHz mono.
    pub samples: Arc<[f32]>,
    /// Input-clock index of the first sample.
    pub start: u64,
    /// Input-clock index where the speech ended (before the hangover).
    pub speech_end: u64,
    /// When the endpoint was decided (wall clock): the start of the reply's latency.
    pub endpointed_at: Instant,
}

impl Utterance {
    /// A whole clip as one utterance: speech to its last sample, endpointed now.
    pub fn whole(samples: Vec<f32>) -> Utterance {
        let n = samples.len() as u64;
        Utterance {
            samples: samples.into(),
            start: 0,
            speech_end: n,
            endpointed_at: Instant::now(),
        }
    }

    /// Length in seconds.
    pub fn secs(&self) -> f64 {
        self.samples.len() as f64 / f64::from(SAMPLE_RATE)
    }

    /// When the input-clock sample `at` (within or before the utterance) was captured, on
    /// the wall clock: the last sample was at `endpointed_at`. Exact for a live input or a
    /// WAV paced in real time.
    pub fn wall_time(&self, at: u64) -> Instant {
        let end = self.start + self.samples.len() as u64;
        let secs = end.saturating_sub(at) as f64 / f64::from(SAMPLE_RATE);
        self.endpointed_at
            .checked_sub(std::time::Duration::from_secs_f64(secs))
            .unwrap_or(self.endpointed_at)
    }

    /// The samples as 16-bit PCM (what the Wyoming protocol carries).
    pub fn pcm16(&self) -> Vec<i16> {
        self.samples.iter().map(|&s| f32_to_i16(s)).collect()
    }
}

/// What the user said, from Stt.
#[derive(Debug, Clone, PartialEq)]
pub struct Heard {
    /// The transcript, trimmed.
    pub text: String,
    /// When the utterance was endpointed (carried through for the latency breakdown).
    pub endpointed_at: Instant,
    /// Time spent in speech recognition, ms.
    pub stt_ms: f64,
    /// How the recogniser held the transcript to the house's phrase set, when it did.
    pub phrase_pass: Option<wyoming::PhrasePass>,
    /// How the transcript stands against the house's phrase set (held to the set only): a
    /// whole request that no longer one continues may end its turn at a short pause, one that
    /// a longer request may continue when the end-of-turn model hears it finished.
    pub whole: hearth_phrases::Whole,
}

/// A chunk of synthesised speech: mono 16-bit PCM at the voice's own rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Pcm {
    /// Mono samples.
    pub samples: Arc<[i16]>,
    /// Sample rate in Hz (e.g. 22050 for a Piper medium voice).
    pub rate: u32,
}

impl Pcm {
    /// Length in seconds.
    pub fn secs(&self) -> f64 {
        if self.rate == 0 {
            return 0.0;
        }
        self.samples.len() as f64 / f64::from(self.rate)
    }

    /// Seconds before the first audible sample (|x| above [`AUDIBLE`], about −40 dBFS):
    /// voices start with a little silence, which is not yet an answer. The whole length
    /// when nothing is audible.
    pub fn leading_silence_secs(&self) -> f64 {
        if self.rate == 0 {
            return 0.0;
        }
        let first = self
            .samples
            .iter()
            .position(|&s| s.unsigned_abs() > AUDIBLE)
            .unwrap_or(self.samples.len());
        first as f64 / f64::from(self.rate)
    }
}

impl Pcm {
    /// This chunk without its leading silence beyond `keep_secs` before the first audible
    /// sample (a reply's first chunk: the silence Piper puts before a sentence is time the
    /// listener waits for nothing; between sentences it is a pause and stays). All of it
    /// when nothing is audible.
    pub fn without_leading_silence(self, keep_secs: f64) -> Pcm {
        let lead = (self.leading_silence_secs() * f64::from(self.rate)).round() as usize;
        let keep = (keep_secs * f64::from(self.rate)).round() as usize;
        let cut = lead.saturating_sub(keep);
        if cut == 0 || lead >= self.samples.len() {
            return self;
        }
        Pcm {
            samples: self.samples[cut..].into(),
            rate: self.rate,
        }
    }
}

/// How much of the silence before a reply's first audible sample is kept: enough for the
/// sound's onset below [`AUDIBLE`], not a wait.
pub const REPLY_LEAD_KEEP_SECS: f64 = 0.01;

/// The 16-bit amplitude above which a sample counts as audible (1 % of full scale).
pub const AUDIBLE: u16 = 328;

/// Which reply a sentence, its audio and its playback belong to: unique in the process, so
/// that whoever waits for a reply's end is never answered by an earlier one's, and audio of
/// a reply that was stopped is never played after the stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyId(u64);

impl ReplyId {
    /// A reply id not given out before in this process.
    pub fn fresh() -> ReplyId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ReplyId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl std::fmt::Display for ReplyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reply {}", self.0)
    }
}

/// What Playback reports, for Listen (barge-in gating) and the turn's timings.
#[derive(Debug, Clone, PartialEq)]
pub enum PlaybackEvent {
    /// The first sample of a reply reached the output.
    Started { reply: ReplyId, at: Instant },
    /// The output level of what is playing now (RMS over the last block, 0..1): Listen
    /// gates barge-in on it so hearth's own voice does not interrupt itself.
    Level { rms: f32 },
    /// Playback ended: the queue ran dry, or it was stopped (`interrupted`, e.g. a barge-in).
    Stopped {
        reply: ReplyId,
        at: Instant,
        interrupted: bool,
    },
}

/// Clamp-convert a float sample to 16-bit PCM.
pub fn f32_to_i16(s: f32) -> i16 {
    let v = (s.clamp(-1.0, 1.0) * 32767.0).round();
    v as i16
}

/// Convert a 16-bit PCM sample to float in [-1, 1].
pub fn i16_to_f32(s: i16) -> f32 {
    f32::from(s) / 32768.0
}

/// Root mean square of a block of float samples (0 for an empty block).
pub fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len() as f64).sqrt() as f32
}

/// A wake word heard by the Wake stage.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeWord {
    /// The phrase, for people ("Okay Nabu").
    pub name: String,
    /// The detector's windowed probability when it fired.
    pub probability: f32,
    /// Input-clock index where the wake word ended: a request said in the same breath
    /// begins here.
    pub end: u64,
    /// When it was detected (wall clock).
    pub at: Instant,
}

/// What Capture sends downstream: frames, then `End` once the source is over.
#[derive(Debug, Clone, PartialEq)]
pub enum Captured {
    /// One frame of audio.
    Frame(Frame),
    /// The source ended: a file or stdin ran out (the last frame was padded with silence to
    /// [`FRAME_SAMPLES`]), or the capture was stopped. No frame follows until the next start.
    End,
}

/// What Listen emits.
#[derive(Debug, Clone, PartialEq)]
pub enum ListenEvent {
    /// Speech started (the user is talking; e.g. to show "listening").
    SpeechStarted { at: Instant },
    /// Speech while hearth was speaking: stop playback, cancel generation.
    BargeIn { at: Instant },
    /// The speaker paused (`early_ms` without speech): the utterance so far, to start
    /// recognising it before the endpoint is sure. The `Utterance` that follows the hangover
    /// has the same `start` and `speech_end` if nothing more was said; if speech resumes,
    /// this one is superseded.
    Pause(Utterance),
    /// Speech resumed after a [`ListenEvent::Pause`] (the utterance with this `start`): what
    /// was recognised at that pause is not the whole request.
    Resumed { start: u64 },
    /// The end-of-turn model, asked (`hearth::audio::listen::ListenMsg::AskFinished`), heard
    /// the utterance with this `start` finished at the pause after `speech_end`: the whole
    /// request of the house in it may end its turn there.
    Finished { start: u64, speech_end: u64 },
    /// A complete utterance.
    Utterance(Utterance),
    /// The input ended (after any last utterance).
    End,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_silence_ends_at_the_first_audible_sample() {
        let mut samples = vec![0i16; 100];
        samples.extend([-200, 300, -2000, 5]);
        let pcm = Pcm {
            samples: samples.into(),
            rate: 1000,
        };
        assert_eq!(pcm.leading_silence_secs(), 0.102);
        let quiet = Pcm {
            samples: vec![10i16; 50].into(),
            rate: 1000,
        };
        assert_eq!(quiet.leading_silence_secs(), 0.05);
    }

    #[test]
    fn a_replys_leading_silence_is_cut_to_what_is_kept() {
        let mut samples = vec![0i16; 100];
        samples.extend([-200, 300, -2000, 5]);
        let pcm = Pcm {
            samples: samples.into(),
            rate: 1000,
        };
        let cut = pcm.clone().without_leading_silence(0.01);
        assert_eq!(cut.samples.len(), 12);
        assert_eq!(cut.leading_silence_secs(), 0.01);
        assert_eq!(cut.samples[10], -2000);
        // nothing audible, or less silence than kept: unchanged
        let quiet = Pcm {
            samples: vec![10i16; 50].into(),
            rate: 1000,
        };
        assert_eq!(quiet.clone().without_leading_silence(0.01), quiet);
        assert_eq!(cut.clone().without_leading_silence(0.02), cut);
    }

    #[test]
    fn conversions_clamp_and_round_trip() {
        assert_eq!(f32_to_i16(2.0), 32767);
        assert_eq!(f32_to_i16(-2.0), -32767);
        assert_eq!(f32_to_i16(0.0), 0);
        for s in [-32768i16, -1000, 0, 1, 12345, 32767] {
            let back = f32_to_i16(i16_to_f32(s));
            assert!((i32::from(back) - i32::from(s)).abs() <= 1, "{s} -> {back}");
        }
    }

    #[test]
    fn rms_of_known_signals() {
        assert_eq!(rms(&[]), 0.0);
        assert!((rms(&[0.5, -0.5, 0.5, -0.5]) - 0.5).abs() < 1e-6);
        let sine: Vec<f32> = (0..16000)
            .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / 16000.0).sin())
            .collect();
        assert!((rms(&sine) - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-3);
    }

    #[test]
    fn lengths() {
        let u = Utterance {
            samples: vec![0.0; 32000].into(),
            start: 0,
            speech_end: 30000,
            endpointed_at: Instant::now(),
        };
        assert_eq!(u.secs(), 2.0);
        assert_eq!(u.pcm16().len(), 32000);
        let p = Pcm {
            samples: vec![0; 22050].into(),
            rate: 22050,
        };
        assert_eq!(p.secs(), 1.0);
        assert_eq!(
            Pcm {
                samples: vec![0; 5].into(),
                rate: 0
            }
            .secs(),
            0.0
        );
    }
}

/// How loud hearth speaks: a level from 0 (silent) to [`Volume::MAX`], shared by every
/// Playback of the process and the volume tools (cheap to clone). Each step is 3 dB; the
/// top level plays the voice as synthesised.
#[derive(Debug, Clone)]
pub struct Volume(Arc<std::sync::atomic::AtomicU8>);

impl Default for Volume {
    fn default() -> Self {
        Volume::new(Volume::MAX)
    }
}

impl Volume {
    /// The loudest level: the voice as synthesised.
    pub const MAX: u8 = 10;

    pub fn new(level: u8) -> Volume {
        Volume(Arc::new(std::sync::atomic::AtomicU8::new(
            level.min(Volume::MAX),
        )))
    }

    pub fn level(&self) -> u8 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Set the level (above [`Volume::MAX`]: the maximum); the level set.
    pub fn set(&self, level: u8) -> u8 {
        let level = level.min(Volume::MAX);
        self.0.store(level, std::sync::atomic::Ordering::Relaxed);
        level
    }

    /// The factor samples are multiplied by: 0 at level 0, else 3 dB per step below the top.
    pub fn gain(&self) -> f32 {
        match self.level() {
            0 => 0.0,
            l => 10f32.powf(-3.0 * f32::from(Volume::MAX - l) / 20.0),
        }
    }
}

/// Which cue to play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// hearth heard that it was addressed (a wake word, `Listen()`).
    Earcon,
    /// hearth is about to say something unasked (an announcement, a timer ringing).
    Bell,
}

/// What the Tts stage sends downstream, in order, each tagged with the reply its sentence
/// belongs to. Sentences dropped by a cancel send nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum TtsEvent {
    /// Speech, as soon as it exists: one chunk per sentence (piper-rs does not stream). A
    /// reply's first chunk comes without the voice's leading silence beyond
    /// [`REPLY_LEAD_KEEP_SECS`]: the listener waits for nothing.
    Audio { reply: ReplyId, pcm: Pcm },
    /// A sentence is finished: its audio (if any) went out just before this.
    SentenceDone {
        reply: ReplyId,
        /// The sentence's number, counting every `Speak` since the actor started (from 0).
        index: u64,
        /// Its length in characters.
        chars: usize,
        /// Seconds of audio it gave.
        audio_secs: f64,
        /// Time spent synthesising it, ms.
        synth_ms: f64,
        /// Its audio's silence before the first audible sample, ms.
        lead_ms: f64,
    },
    /// A sentence could not be synthesised (the actor goes on with the next).
    Failed {
        reply: ReplyId,
        /// The sentence's number.
        index: u64,
        /// Why (the Tts stage's error, as text).
        error: String,
    },
}

/// Whether a transcript is held to the house's phrase set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// A request: held to the set where the audio supports it (when there is a set).
    House,
    /// Open only: speech over a reply, checked for "stop" (the phrase pass's time is not
    /// spent on hearth's own echo).
    Open,
}

#[cfg(test)]
mod volume_tests {
    use super::Volume;

    #[test]
    fn each_step_is_3_db_and_zero_is_silence() {
        let v = Volume::default();
        assert_eq!((v.level(), v.gain()), (10, 1.0));
        assert_eq!(v.set(12), 10);
        v.set(8);
        assert!((20.0 * v.gain().log10() + 6.0).abs() < 1e-4, "{}", v.gain());
        v.set(0);
        assert_eq!(v.gain(), 0.0);
        // one shared level
        let other = v.clone();
        other.set(5);
        assert_eq!(v.level(), 5);
    }
}
