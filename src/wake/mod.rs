//! Wake-word detection with microWakeWord models, and the Wake stage that runs them on every
//! captured frame ([`stage`]).
//!
//! A microWakeWord model is a streaming TensorFlow Lite network: every 30 ms it takes three
//! frames of [`micro_frontend`] features (40 channels each, quantised to int8) and gives the
//! probability that the wake word has just ended. [`MicroWakeWord`] feeds it 16 kHz audio,
//! averages the last `sliding_window_size` probabilities and reports a [`Detection`] when the
//! mean passes the model's cutoff, then stays quiet for a refractory period.
//!
//! The network runs in TensorFlow Lite's C library (`libtensorflowlite_c.so`), loaded at run time
//! ([`tflite`]); the models, their settings (`<name>.json`) and the library come from
//! `hearth models pull wake:NAME lib:tflite` (upstream, or the PyPI wheel `pymicro-wakeword` 2.5.0; TF Lite 2.17.1) into the model
//! directory ([`crate::models::model_dir`]).
//!
//! A second engine, [`oww`]: openWakeWord's ONNX models (mel spectrogram, speech embedding, a
//! classifier per wake word) on ONNX Runtime, from `hearth models pull oww:NAME oww:features`. Its pre-trained
//! models are CC BY-NC-SA 4.0 (non-commercial use only): never a default.

pub mod denoise;
mod spotter;
/// openWakeWord's file names (known without the `tts` feature, for checks).
pub(crate) mod oww_files {
    /// The folder of the model directory the `oww:` models fill.
    pub const OWW_DIR: &str = "openwakeword";
    /// The mel-spectrogram model's file name.
    pub(crate) const MEL_FILE: &str = "melspectrogram.onnx";
    /// The embedding model's file name.
    pub(crate) const EMBEDDING_FILE: &str = "embedding_model.onnx";
}
mod micro;
pub mod oww;
mod stage;
mod tflite;

use std::path::PathBuf;

pub use denoise::Denoiser;
pub use micro::{Detection, MicroWakeWord, ModelSettings, REFRACTORY_SAMPLES};
pub use oww::{OpenWakeWord, OwwSettings};
pub use spotter::Spotter;
pub use stage::{Wake, WakeArgs, WakeConfig, WakeMsg};
pub use tflite::{Library, LIBRARY_NAME};

/// What went wrong loading or running a wake-word model. Each names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum WakeError {
    /// A file the wake words need is not there.
    #[error("the wake-word file {} is missing: run `hearth models pull` (it fetches the wake words the configuration names), or choose other wake words with [listen] wake (wake = [] listens without one)", path.display())]
    Missing { path: PathBuf },
    /// The TensorFlow Lite C library could not be loaded, or lacks a function.
    #[error("cannot load the TensorFlow Lite library {}: {reason} (run `hearth models pull lib:tflite`)", path.display())]
    Library { path: PathBuf, reason: String },
    /// The model's settings (`<name>.json`) could not be read or parsed.
    #[error("cannot read the wake-word settings {}: {reason} (`hearth models pull` fetches it again)", path.display())]
    Settings { path: PathBuf, reason: String },
    /// TensorFlow Lite refused the model file, or the model is not a microWakeWord model.
    #[error("cannot load the wake-word model {}: {reason} (`hearth models pull` fetches it again)", path.display())]
    Model { path: PathBuf, reason: String },
    /// Running the model failed.
    #[error("the wake-word model {} failed: {reason} (`hearth models pull` restores it)", path.display())]
    Invoke { path: PathBuf, reason: String },
    /// An openWakeWord file is not there.
    #[error("the openWakeWord file {} is missing: run `hearth models pull` (its pre-trained models are CC BY-NC-SA 4.0: non-commercial use only), or choose microWakeWord models with [listen] wake", path.display())]
    OwwMissing { path: PathBuf },
    /// ONNX Runtime refused an openWakeWord model, or it is not the model expected.
    #[error("cannot load the openWakeWord model {}: {reason} (`hearth models pull` restores it)", path.display())]
    OwwModel { path: PathBuf, reason: String },
    /// Running an openWakeWord model failed.
    #[error("the openWakeWord model {} failed: {reason} (`hearth models pull` restores it)", path.display())]
    OwwInvoke { path: PathBuf, reason: String },
    /// ONNX Runtime (for openWakeWord) cannot be found or loaded.
    #[error(transparent)]
    Runtime(#[from] crate::onnx::OnnxError),
}
