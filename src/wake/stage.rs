//! The Wake stage: every captured frame goes through the wake-word spotters and then on, in
//! order, to whoever listens next (Listen). A detection is sent on its own channel *before*
//! the frame that completed it is passed on, so by the time anything downstream has seen a
//! frame, every wake word up to its end has been reported: the conductor can decide whether
//! an utterance was addressed to hearth by draining the wake channel first.
//!
//! Detection positions are on the input clock (the [`Frame::start`] of the frames fed),
//! whatever the spotter's own count: after a restart the stage starts counting from the
//! first frame it sees.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc;

use super::denoise::{self, Denoiser};
use super::{Detection, Library, MicroWakeWord, Spotter, WakeError, REFRACTORY_SAMPLES};
use crate::voice::{f32_to_i16, Captured, Frame, WakeWord};

/// Which wake words to listen for, and where TensorFlow Lite is.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeConfig {
    /// `libtensorflowlite_c.so` (used when a model is a `.tflite`).
    pub library: PathBuf,
    /// The models; at least one. A `.tflite` is a microWakeWord model with its `.json`
    /// beside it; an `.onnx` is an openWakeWord classifier with `melspectrogram.onnx` and
    /// `embedding_model.onnx` beside it (CC BY-NC-SA 4.0 models: never a default).
    pub models: Vec<PathBuf>,
    /// Every model fires over this instead of its own cutoff (`None`: the model's, e.g. 0.85
    /// for okay_nabu's windowed probability, 0.5 for an openWakeWord score).
    pub cutoff: Option<f32>,
    /// Noise suppression in front of the spotters ([`super::denoise`]).
    pub denoise: bool,
    /// A detection stands only when whisper's transcript has the wake word too
    /// ([`crate::conductor::wake_word::after_wake_word`]; `[listen] wake_check`, off by
    /// default: docs/measurements.md).
    pub check_transcript: bool,
}

/// Whether `model` is an openWakeWord classifier (by its extension).
fn is_oww(model: &Path) -> bool {
    model.extension().is_some_and(|e| e == "onnx")
}

impl WakeConfig {
    /// Every file the models need, each once: the TF Lite library (if a model is a
    /// `.tflite`), then each model and what goes beside it.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if self.models.iter().any(|m| !is_oww(m)) {
            files.push(self.library.clone());
        }
        for m in &self.models {
            let beside = if is_oww(m) {
                let dir = m.parent().unwrap_or(Path::new("."));
                vec![
                    dir.join(super::oww_files::MEL_FILE),
                    dir.join(super::oww_files::EMBEDDING_FILE),
                ]
            } else {
                vec![m.with_extension("json")]
            };
            for f in std::iter::once(m.clone()).chain(beside) {
                if !files.contains(&f) {
                    files.push(f);
                }
            }
        }
        files
    }

    /// Whether every file is there ([`WakeConfig::files`]), before anything is loaded: the
    /// first missing one is the error.
    pub fn check(&self) -> Result<(), WakeError> {
        for path in self.files() {
            if !path.is_file() {
                return Err(if is_oww(&path) {
                    WakeError::OwwMissing { path }
                } else {
                    WakeError::Missing { path }
                });
            }
        }
        Ok(())
    }

    /// The wake words as people say them ("Okay Nabu"): from a microWakeWord model's
    /// settings, from an openWakeWord model's file name.
    pub fn phrases(&self) -> Result<Vec<String>, WakeError> {
        self.models
            .iter()
            .map(|m| {
                if is_oww(m) {
                    let name = m.file_stem().unwrap_or_default().to_string_lossy();
                    Ok(super::spotter::phrase(&name))
                } else {
                    Ok(super::ModelSettings::load(&m.with_extension("json"))?.wake_word)
                }
            })
            .collect()
    }

    /// Loads every model (and TF Lite or ONNX Runtime as they need): what the stage runs,
    /// or the first error (naming the file and the fix).
    pub fn load(&self) -> Result<Vec<Spotter>, WakeError> {
        let mut lib = None;
        self.models
            .iter()
            .map(|m| {
                let mut spotter = if is_oww(m) {
                    load_oww(m)?
                } else {
                    let lib = match &lib {
                        Some(l) => l,
                        None => lib.insert(Library::open(&self.library)?),
                    };
                    Spotter::Micro(Box::new(MicroWakeWord::load(lib, m)?))
                };
                if let Some(c) = self.cutoff {
                    spotter.set_cutoff(c);
                }
                Ok(spotter)
            })
            .collect()
    }
}

fn load_oww(model: &Path) -> Result<Spotter, WakeError> {
    Ok(Spotter::Oww(Box::new(super::OpenWakeWord::load(model)?)))
}

/// The Wake stage's messages.
#[derive(Debug)]
pub enum WakeMsg {
    /// A frame from Capture, or the end of the input.
    Captured(Captured),
}

/// What the stage starts with.
pub struct WakeArgs {
    /// The wake words.
    pub config: WakeConfig,
    /// Where wake words heard go.
    pub heard: mpsc::UnboundedSender<WakeWord>,
    /// Where the frames go on to (Listen), in order, after their detections.
    pub frames: mpsc::Sender<Captured>,
}

/// One view of the microphone and the spotters that hear it.
struct View {
    spotters: Vec<Spotter>,
    /// Noise suppression of what the spotters hear (src/wake/denoise.rs), if on.
    denoiser: Option<Denoiser>,
    pcm: Vec<i16>,
}

impl View {
    fn new(config: &WakeConfig) -> Result<View, WakeError> {
        Ok(View {
            spotters: config.load()?,
            denoiser: config.denoise.then(|| Denoiser::new(denoise::LEVEL)),
            pcm: Vec::with_capacity(crate::voice::FRAME_SAMPLES),
        })
    }

    /// Feeds `samples` to every spotter: (the model's index, what it found).
    fn hear(&mut self, samples: &[f32]) -> Result<Vec<(usize, Detection)>, WakeError> {
        self.pcm.clear();
        match self.denoiser.as_mut() {
            Some(d) => d.process(samples, &mut self.pcm),
            None => self.pcm.extend(samples.iter().map(|&s| f32_to_i16(s))),
        }
        let mut found = Vec::new();
        for (i, d) in self.spotters.iter_mut().enumerate() {
            if let Some(hit) = d.process(&self.pcm)? {
                found.push((i, hit));
            }
        }
        Ok(found)
    }

    fn reset(&mut self) -> Result<(), WakeError> {
        if let Some(d) = self.denoiser.as_mut() {
            d.reset();
        }
        self.spotters.iter_mut().try_for_each(Spotter::reset)
    }
}

/// The stage's state: the spotters and where their count began on the input clock.
///
/// With echo cancellation on, each model listens twice: to the canceller's linear output
/// (the microphone less the echo the filter predicts, nothing suppressed) and to its
/// suppressed output. While hearth speaks and someone talks over it, each loses the wake word
/// where the other keeps it (`cargo bench --bench echo`: "Okay Nabu" said over hearth's own
/// voice at equal level was heard 63.9 % of the time on the linear output alone, 69.4 % on the
/// suppressed one, 75.0 % on either; 6 dB under it 63.9 %, 47.2 %, 66.7 %; no activation on
/// its own voice in any). One detection per model per refractory period counts.
pub struct WakeState {
    /// The linear output (or the frame as captured, without a canceller).
    linear: View,
    /// The suppressed output, with a canceller.
    suppressed: View,
    /// Input-clock index of the first sample the spotters were fed (since the last reset).
    base: Option<u64>,
    /// Per model, where its last wake word ended (input clock).
    last: Vec<Option<u64>>,
    heard: mpsc::UnboundedSender<WakeWord>,
    frames: mpsc::Sender<Captured>,
}

impl WakeState {
    /// Feeds one frame to every spotter; the wake words it completed.
    fn detect(&mut self, frame: &Frame) -> Result<Vec<WakeWord>, WakeError> {
        let base = *self.base.get_or_insert(frame.start);
        let mut hits = match &frame.echo {
            Some(e) => {
                let mut hits = self.linear.hear(&e.linear)?;
                hits.extend(self.suppressed.hear(&frame.samples)?);
                hits
            }
            None => self.linear.hear(&frame.samples)?,
        };
        hits.sort_by_key(|(_, hit)| hit.at_sample);
        let mut found = Vec::new();
        for (i, hit) in hits {
            let end = base + hit.at_sample;
            let last = &mut self.last[i];
            if last.is_some_and(|l| end < l + REFRACTORY_SAMPLES) {
                continue;
            }
            *last = Some(end);
            found.push(WakeWord {
                name: hit.wake_word,
                probability: hit.probability,
                end,
                at: Instant::now(),
            });
        }
        Ok(found)
    }

    /// The input ended: the next frames (a reopened input) start a new stream.
    fn reset(&mut self) -> Result<(), WakeError> {
        self.base = None;
        self.last.iter_mut().for_each(|l| *l = None);
        self.linear.reset()?;
        self.suppressed.reset()
    }
}

/// The Wake actor.
pub struct Wake;

impl Actor for Wake {
    type Msg = WakeMsg;
    type State = WakeState;
    type Arguments = WakeArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<Self::Msg>,
        args: WakeArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let linear = View::new(&args.config)?;
        let suppressed = View::new(&args.config)?;
        for d in &linear.spotters {
            tracing::info!(wake_word = %d.wake_word(), "listening for the wake word");
        }
        Ok(WakeState {
            last: vec![None; linear.spotters.len()],
            linear,
            suppressed,
            base: None,
            heard: args.heard,
            frames: args.frames,
        })
    }

    async fn handle(
        &self,
        _me: ActorRef<Self::Msg>,
        msg: WakeMsg,
        state: &mut WakeState,
    ) -> Result<(), ActorProcessingErr> {
        let WakeMsg::Captured(c) = msg;
        match &c {
            Captured::Frame(frame) => {
                for w in state.detect(frame)? {
                    tracing::info!(wake_word = %w.name, p = w.probability, "wake word");
                    let _ = state.heard.send(w);
                }
            }
            Captured::End => state.reset()?,
        }
        // Listen gone (the run is ending): nothing downstream to pass the frame to
        let _ = state.frames.send(c).await;
        Ok(())
    }
}
