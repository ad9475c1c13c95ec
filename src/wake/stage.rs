//! The Wake stage: every captured frame goes through the wake-word detectors and then on, in
//! order, to whoever listens next (Listen). A detection is sent on its own channel *before*
//! the frame that completed it is passed on, so by the time anything downstream has seen a
//! frame, every wake word up to its end has been reported: the conductor can decide whether
//! an utterance was addressed to hearth by draining the wake channel first.
//!
//! Detection positions are on the input clock (the [`Frame::start`] of the frames fed),
//! whatever the detector's own count: after a restart the stage starts counting from the
//! first frame it sees.

use std::path::PathBuf;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc;

use super::{Library, MicroWakeWord, WakeError};
use crate::voice::{f32_to_i16, Captured, Frame, WakeWord};

/// Which wake words to listen for, and where TensorFlow Lite is.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeConfig {
    /// `libtensorflowlite_c.so`.
    pub library: PathBuf,
    /// The models (`.tflite`, each with its `.json` beside it); at least one.
    pub models: Vec<PathBuf>,
}

impl WakeConfig {
    /// Whether every file is there (the library, each model and its settings), before
    /// anything is loaded: the first missing one is the error.
    pub fn check(&self) -> Result<(), WakeError> {
        let settings = self.models.iter().map(|m| m.with_extension("json"));
        let files = std::iter::once(self.library.clone())
            .chain(self.models.iter().cloned())
            .chain(settings);
        for path in files {
            if !path.is_file() {
                return Err(WakeError::Missing { path });
            }
        }
        Ok(())
    }

    /// The wake words as people say them ("Okay Nabu"), from the models' settings.
    pub fn phrases(&self) -> Result<Vec<String>, WakeError> {
        self.models
            .iter()
            .map(|m| Ok(super::Settings::load(&m.with_extension("json"))?.wake_word))
            .collect()
    }

    /// Loads the library and every model: what the stage runs, or the first error (naming
    /// the file and the fix).
    pub fn load(&self) -> Result<Vec<MicroWakeWord>, WakeError> {
        let lib = Library::open(&self.library)?;
        self.models
            .iter()
            .map(|m| MicroWakeWord::load(&lib, m))
            .collect()
    }
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

/// The stage's state: the detectors and where their count began on the input clock.
pub struct WakeState {
    detectors: Vec<MicroWakeWord>,
    /// Input-clock index of the first sample the detectors were fed (since the last reset).
    base: Option<u64>,
    pcm: Vec<i16>,
    heard: mpsc::UnboundedSender<WakeWord>,
    frames: mpsc::Sender<Captured>,
}

impl WakeState {
    /// Feeds one frame to every detector; the wake words it completed.
    fn detect(&mut self, frame: &Frame) -> Result<Vec<WakeWord>, WakeError> {
        let base = *self.base.get_or_insert(frame.start);
        self.pcm.clear();
        // with echo cancellation on, the linear filter's output: it keeps more of a user
        // talking over hearth than the suppressed output does (src/audio/aec.rs)
        let samples = frame.echo.as_ref().map_or(&frame.samples, |e| &e.linear);
        self.pcm.extend(samples.iter().map(|&s| f32_to_i16(s)));
        let mut found = Vec::new();
        for d in &mut self.detectors {
            if let Some(hit) = d.process(&self.pcm)? {
                found.push(WakeWord {
                    name: hit.wake_word,
                    probability: hit.probability,
                    end: base + hit.at_sample,
                    at: Instant::now(),
                });
            }
        }
        Ok(found)
    }

    /// The input ended: the next frames (a reopened input) start a new stream.
    fn reset(&mut self) -> Result<(), WakeError> {
        self.base = None;
        self.detectors.iter_mut().try_for_each(MicroWakeWord::reset)
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
        let detectors = args.config.load()?;
        for d in &detectors {
            tracing::info!(wake_word = %d.settings().wake_word, "listening for the wake word");
        }
        Ok(WakeState {
            detectors,
            base: None,
            pcm: Vec::with_capacity(crate::voice::FRAME_SAMPLES),
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
