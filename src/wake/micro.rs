//! [`MicroWakeWord`]: one microWakeWord model over a stream of 16 kHz audio.
//!
//! As `pymicro-wakeword` runs it: features from [`micro_frontend::Frontend`] (one frame per
//! 10 ms); every `stride` frames (3, the input tensor's second dimension) one inference, the
//! frames not overlapping; the raw probability (`u8 / 256`) into a window of the last
//! `sliding_window_size`; a detection when the window is full and its mean is over
//! `probability_cutoff` (strictly). Added here: after a detection, [`REFRACTORY_SAMPLES`] (2 s)
//! in which the model keeps running (its streaming state stays current) but cannot fire; then
//! the window starts empty.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use micro_frontend::{
    Features, Frontend, FEATURE_SCALE, NUM_FEATURES, STEP_SAMPLES, WINDOW_SAMPLES,
};
use serde::Deserialize;

use super::tflite::{Interpreter, Library};
use super::WakeError;

/// The input tensor's quantisation (the same in every microWakeWord model): `f ≈ (q + 128) ×
/// INPUT_SCALE`.
const INPUT_SCALE: f32 = 0.101_960_786;
const INPUT_ZERO_POINT: i32 = -128;

/// The output's quantisation: `p = u8 / 256`.
const OUTPUT_SCALE: f32 = 1.0 / 256.0;

/// After a detection: 2 s of 16 kHz audio in which the model does not fire again.
pub const REFRACTORY_SAMPLES: u64 = 2 * micro_frontend::SAMPLE_RATE as u64;

/// A model's settings file (`<name>.json`, beside the `.tflite`): what hearth reads of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelSettings {
    /// The phrase, for people ("Okay Nabu").
    pub wake_word: String,
    /// The `micro` section.
    pub micro: MicroSettings,
}

/// The `micro` section of a model's settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MicroSettings {
    /// The windowed mean probability must be over this to fire.
    pub probability_cutoff: f32,
    /// How many of the latest probabilities are averaged.
    pub sliding_window_size: usize,
}

impl ModelSettings {
    /// Reads and checks a settings file.
    pub fn load(path: &Path) -> Result<ModelSettings, WakeError> {
        let failed = |reason: String| WakeError::Settings {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
        let settings: ModelSettings =
            serde_json::from_str(&text).map_err(|e| failed(e.to_string()))?;
        if settings.micro.sliding_window_size == 0 {
            return Err(failed("micro.sliding_window_size is 0".into()));
        }
        if !(0.0..=1.0).contains(&settings.micro.probability_cutoff) {
            return Err(failed(format!(
                "micro.probability_cutoff {} is not between 0 and 1",
                settings.micro.probability_cutoff
            )));
        }
        Ok(settings)
    }
}

/// The wake word was heard.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The model's phrase (its settings' `wake_word`).
    pub wake_word: String,
    /// The windowed mean probability that passed the cutoff.
    pub probability: f32,
    /// Samples since the stream began (or the last [`MicroWakeWord::reset`]) up to the end of
    /// the last feature frame of the inference that fired.
    pub at_sample: u64,
}

/// One microWakeWord model listening to a stream.
#[derive(Debug)]
pub struct MicroWakeWord {
    lib: Arc<Library>,
    model: PathBuf,
    settings: ModelSettings,
    interpreter: Interpreter,
    frontend: Frontend,
    /// Frames gathered for the next inference, quantised (`stride × 40` when full).
    input: Vec<i8>,
    stride: usize,
    window: VecDeque<f32>,
    /// Feature frames made since the start.
    frames: u64,
    /// Until this sample the model cannot fire (after a detection).
    quiet_until: Option<u64>,
}

impl MicroWakeWord {
    /// Loads the model `<dir>/<name>.tflite` and its settings `<dir>/<name>.json` on `lib`.
    pub fn in_dir(lib: &Arc<Library>, dir: &Path, name: &str) -> Result<MicroWakeWord, WakeError> {
        MicroWakeWord::load(lib, &dir.join(format!("{name}.tflite")))
    }

    /// Loads the model at `model` (a `.tflite`) and its settings beside it (the same name with
    /// `.json`).
    pub fn load(lib: &Arc<Library>, model: &Path) -> Result<MicroWakeWord, WakeError> {
        let settings = ModelSettings::load(&model.with_extension("json"))?;
        let interpreter = Interpreter::new(lib, model)?;
        let bytes = interpreter.input_len();
        if bytes % NUM_FEATURES != 0 {
            return Err(WakeError::Model {
                path: model.to_path_buf(),
                reason: format!(
                    "its input is {bytes} bytes, not a whole number of {NUM_FEATURES}-feature frames"
                ),
            });
        }
        Ok(MicroWakeWord {
            lib: Arc::clone(lib),
            model: model.to_path_buf(),
            stride: bytes / NUM_FEATURES,
            input: Vec::with_capacity(bytes),
            window: VecDeque::with_capacity(settings.micro.sliding_window_size),
            settings,
            interpreter,
            frontend: Frontend::new(),
            frames: 0,
            quiet_until: None,
        })
    }

    /// The model's settings.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// Fire when the windowed mean is over `cutoff` instead of the model's own cutoff (a
    /// sensitivity: lower hears more wake words and more that are not).
    pub(crate) fn set_cutoff(&mut self, cutoff: f32) {
        self.settings.micro.probability_cutoff = cutoff;
    }

    /// The mean of the latest probabilities, once the window is full (none during the
    /// refractory period after a detection): how close the stream is to the cutoff.
    pub fn window_mean(&self) -> Option<f32> {
        let size = self.settings.micro.sliding_window_size;
        (self.window.len() == size && size > 0)
            .then(|| self.window.iter().sum::<f32>() / size as f32)
    }

    /// Feature frames per inference (3 for the published models).
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Feeds 16 kHz mono samples, in any chunk sizes; returns the first detection they complete.
    /// (Within one call at most one detection is possible: the refractory period is longer than
    /// any sensible chunk.)
    pub fn process(&mut self, samples: &[i16]) -> Result<Option<Detection>, WakeError> {
        let mut found = None;
        for frame in self.frontend.process(samples) {
            self.frames += 1;
            quantise_into(&frame, &mut self.input);
            if self.input.len() < self.stride * NUM_FEATURES {
                continue;
            }
            let raw = self.interpreter.invoke(&self.input)?;
            self.input.clear();
            let at_sample = (self.frames - 1) * STEP_SAMPLES as u64 + WINDOW_SAMPLES as u64;
            if let Some(hit) = self.push(f32::from(raw) * OUTPUT_SCALE, at_sample) {
                found.get_or_insert(hit);
            }
        }
        Ok(found)
    }

    /// One probability at `at_sample`: the window, the cutoff, the refractory period.
    fn push(&mut self, p: f32, at_sample: u64) -> Option<Detection> {
        if let Some(until) = self.quiet_until {
            if at_sample < until {
                return None;
            }
            self.quiet_until = None;
            self.window.clear();
        }
        let size = self.settings.micro.sliding_window_size;
        if self.window.len() == size {
            self.window.pop_front();
        }
        self.window.push_back(p);
        if self.window.len() < size {
            return None;
        }
        let mean = self.window.iter().sum::<f32>() / size as f32;
        if mean <= self.settings.micro.probability_cutoff {
            return None;
        }
        self.quiet_until = Some(at_sample + REFRACTORY_SAMPLES);
        Some(Detection {
            wake_word: self.settings.wake_word.clone(),
            probability: mean,
            at_sample,
        })
    }

    /// Starts over as on a new stream: the frontend, the window, the sample count and the
    /// model's streaming state (its interpreter is recreated: the state lives in resource
    /// variables that only a new interpreter clears).
    pub fn reset(&mut self) -> Result<(), WakeError> {
        self.interpreter = Interpreter::new(&self.lib, &self.model)?;
        self.frontend.reset();
        self.input.clear();
        self.window.clear();
        self.frames = 0;
        self.quiet_until = None;
        Ok(())
    }
}

/// Appends one frame's features quantised to the model's int8 input:
/// `q = clamp(round(f / scale) - 128)` with `f = u16 × FEATURE_SCALE`.
fn quantise_into(frame: &Features, out: &mut Vec<i8>) {
    out.extend(frame.iter().map(|&v| quantise(v)));
}

fn quantise(v: u16) -> i8 {
    let f = f32::from(v) * FEATURE_SCALE;
    let q = (f / INPUT_SCALE).round_ties_even() as i32 + INPUT_ZERO_POINT;
    q.clamp(i32::from(i8::MIN), i32::from(i8::MAX)) as i8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantise_matches_the_input_tensor() {
        assert_eq!(quantise(0), -128);
        // 26.0 / (26/255) = 255 → 127, the top of the range; anything above clamps.
        assert_eq!(quantise(666), 127); // 666 × 0.0390625 = 26.016
        assert_eq!(quantise(u16::MAX), 127);
        // 10.0 → 98.08 → 98 − 128 = −30
        assert_eq!(quantise(256), -30);
    }

    #[test]
    fn settings_read_the_micro_section() {
        let dir = std::env::temp_dir().join(format!("hearth-wake-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("alexa.json");
        std::fs::write(
            &path,
            r#"{"type":"micro","wake_word":"Alexa","author":"x","model":"alexa.tflite",
               "trained_languages":["en"],"version":2,
               "micro":{"probability_cutoff":0.9,"sliding_window_size":5,"feature_step_size":10,
                        "tensor_arena_size":22348,"minimum_esphome_version":"2024.7.0"}}"#,
        )
        .unwrap();
        let s = ModelSettings::load(&path).unwrap();
        assert_eq!(s.wake_word, "Alexa");
        assert_eq!(s.micro.probability_cutoff, 0.9);
        assert_eq!(s.micro.sliding_window_size, 5);

        std::fs::write(&path, r#"{"wake_word":"Alexa"}"#).unwrap();
        let e = ModelSettings::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("alexa.json") && e.contains("hearth models pull"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_library_names_the_file_and_the_fix() {
        let e = Library::open(Path::new("/nonexistent/libtensorflowlite_c.so"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/libtensorflowlite_c.so") && e.contains("hearth models pull"),
            "{e}"
        );
    }
}
