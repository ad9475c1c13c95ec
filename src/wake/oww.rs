//! [`OpenWakeWord`]: one openWakeWord classifier over a stream of 16 kHz audio, on ONNX Runtime.
//!
//! openWakeWord (0.4.0) is three networks in a row, all run here as its Python package runs
//! them in streaming use, one 80 ms chunk ([`CHUNK_SAMPLES`]) at a time:
//!
//! 1. `melspectrogram.onnx`: the chunk with the 480 samples before it (as `f32` of the `i16`
//!    values) gives 8 frames of 32 mel bands (5 for the very first chunk, which has no samples
//!    before it), each scaled `x / 10 + 2`. The frames join a history that starts as 76 frames
//!    of ones.
//! 2. `embedding_model.onnx`: the latest 76 frames give one 96-value embedding per chunk. The
//!    embedding history starts full of the embedding of silence (as the package starts from
//!    10 s of zeros).
//! 3. the classifier (`alexa.onnx`, ...): the latest 16 embeddings give the score, 0 to 1.
//!
//! As the package does, the first 5 scores of a stream are 0. A detection is a score over the
//! threshold (strictly; [`DEFAULT_THRESHOLD`], the package's usual 0.5, unless set), then
//! [`REFRACTORY_SAMPLES`] (2 s, as for microWakeWord) in which the model keeps running but
//! cannot fire.
//!
//! The files come from the PyPI wheel `openwakeword==0.4.0` through `scripts/fetch-models oww`
//! into `openwakeword/` of the model directory. The wheel's code is Apache-2.0 but its
//! pre-trained models are **CC BY-NC-SA 4.0: non-commercial use only**, which is why they are
//! never fetched or chosen by default.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::Tensor;

use super::spotter::phrase;
use super::{Detection, WakeError, REFRACTORY_SAMPLES};

/// Samples per step: openWakeWord scores every 80 ms of 16 kHz audio.
pub const CHUNK_SAMPLES: usize = 1280;
/// Samples of the previous audio the mel model sees before each chunk (3 hops of 160).
const CONTEXT_SAMPLES: usize = 480;
/// Mel bands per frame.
const MEL_BANDS: usize = 32;
/// Mel frames per embedding.
const MEL_WINDOW: usize = 76;
/// Values per embedding.
const EMBEDDING: usize = 96;
/// Scores at the start of a stream that count as 0 (the package's warm-up).
const WARM_UP: u64 = 5;
/// The score a detection must pass unless set otherwise.
pub(crate) const DEFAULT_THRESHOLD: f32 = 0.5;

pub use super::oww_files::OWW_DIR;
pub(crate) use super::oww_files::{EMBEDDING_FILE, MEL_FILE};

/// What a classifier is known by and when it fires.
#[derive(Debug, Clone, PartialEq)]
pub struct OwwSettings {
    /// The phrase, for people ("Hey Jarvis"), from the file name.
    pub wake_word: String,
    /// A score over this fires.
    pub threshold: f32,
}

/// One openWakeWord classifier with its own features, listening to a stream.
pub struct OpenWakeWord {
    model: PathBuf,
    settings: OwwSettings,
    mel: Net,
    embedding: Net,
    classifier: Net,
    /// Embeddings the classifier takes (16 for the published models).
    frames_in: usize,
    /// The embedding of silence the history starts with.
    silence: Vec<f32>,
    /// Samples of the chunk being gathered.
    pending: Vec<i16>,
    /// The last chunk's context and the chunk itself, as the mel model takes them.
    audio: VecDeque<f32>,
    /// The latest [`MEL_WINDOW`] mel frames, flat.
    mels: VecDeque<f32>,
    /// The latest `frames_in` embeddings, flat.
    embeddings: VecDeque<f32>,
    /// Chunks scored since the start.
    chunks: u64,
    /// The latest score.
    score: f32,
    /// Until this sample the model cannot fire (after a detection).
    quiet_until: Option<u64>,
}

impl std::fmt::Debug for OpenWakeWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenWakeWord")
            .field("model", &self.model)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// One ONNX model with one input and one output.
struct Net {
    path: PathBuf,
    session: Session,
}

impl Net {
    fn load(path: &Path) -> Result<Net, WakeError> {
        if !path.is_file() {
            return Err(WakeError::OwwMissing {
                path: path.to_path_buf(),
            });
        }
        let fail = |reason: String| WakeError::OwwModel {
            path: path.to_path_buf(),
            reason,
        };
        let session = crate::onnx::builder()
            .map_err(fail)?
            .with_intra_threads(1)
            .map_err(|e| fail(e.to_string()))?
            .with_inter_threads(1)
            .map_err(|e| fail(e.to_string()))?
            .commit_from_file(path)
            .map_err(|e| fail(e.to_string()))?;
        if session.inputs().len() != 1 || session.outputs().len() != 1 {
            return Err(WakeError::OwwModel {
                path: path.to_path_buf(),
                reason: "it does not have one input and one output".into(),
            });
        }
        Ok(Net {
            path: path.to_path_buf(),
            session,
        })
    }

    /// The input's dimensions (-1 where free).
    fn input_shape(&self) -> Vec<i64> {
        self.session.inputs()[0]
            .dtype()
            .tensor_shape()
            .map(|s| s.to_vec())
            .unwrap_or_default()
    }

    /// Runs the model on `data` shaped `shape`; the output's values into `out` (cleared).
    fn run(
        &mut self,
        shape: &[usize],
        data: Vec<f32>,
        out: &mut Vec<f32>,
    ) -> Result<(), WakeError> {
        let fail = |e: ort::Error| WakeError::OwwInvoke {
            path: self.path.clone(),
            reason: e.to_string(),
        };
        let input = Tensor::from_array((shape.to_vec(), data)).map_err(fail)?;
        let result = self.session.run(ort::inputs![input]).map_err(fail)?;
        let (_, values) = result[0].try_extract_tensor::<f32>().map_err(fail)?;
        out.clear();
        out.extend_from_slice(values);
        Ok(())
    }
}

impl OpenWakeWord {
    /// Loads `<dir>/<name>.onnx` with the feature models beside it, `dir` usually the model
    /// directory's `openwakeword/`.
    pub fn in_dir(dir: &Path, name: &str) -> Result<OpenWakeWord, WakeError> {
        OpenWakeWord::load(&dir.join(format!("{name}.onnx")))
    }

    /// Loads the classifier `model` and [`MEL_FILE`] and [`EMBEDDING_FILE`] from its folder, on
    /// ONNX Runtime (the process's, else the one [`crate::onnx::find_library`] finds for it).
    pub fn load(model: &Path) -> Result<OpenWakeWord, WakeError> {
        let dir = model.parent().unwrap_or(Path::new("."));
        for f in [
            dir.join(MEL_FILE),
            dir.join(EMBEDDING_FILE),
            model.to_path_buf(),
        ] {
            if !f.is_file() {
                return Err(WakeError::OwwMissing { path: f });
            }
        }
        let library = crate::onnx::find_library(
            None,
            |k| std::env::var_os(k),
            &crate::onnx::search_dirs(model),
        )?;
        crate::onnx::load(&library)?;
        let mut mel = Net::load(&dir.join(MEL_FILE))?;
        let mut embedding = Net::load(&dir.join(EMBEDDING_FILE))?;
        let classifier = Net::load(model)?;
        let shape = classifier.input_shape();
        let frames_in = match shape.as_slice() {
            [_, n, e] if *n > 0 && *e == EMBEDDING as i64 => *n as usize,
            _ => {
                return Err(WakeError::OwwModel {
                    path: model.to_path_buf(),
                    reason: format!(
                        "its input is {shape:?}, not [1, frames, {EMBEDDING}] embeddings: not an openWakeWord classifier"
                    ),
                })
            }
        };
        // the embedding of silence: every mel frame of zeros is the same frame
        let mut out = Vec::new();
        mel.run(
            &[1, CONTEXT_SAMPLES + CHUNK_SAMPLES],
            vec![0.0; CONTEXT_SAMPLES + CHUNK_SAMPLES],
            &mut out,
        )?;
        if out.len() < MEL_BANDS || out.len() % MEL_BANDS != 0 {
            return Err(WakeError::OwwModel {
                path: mel.path.clone(),
                reason: format!("it gave {} values, not frames of {MEL_BANDS}", out.len()),
            });
        }
        let frame: Vec<f32> = out[..MEL_BANDS].iter().map(|&x| scale(x)).collect();
        let window: Vec<f32> = frame
            .iter()
            .copied()
            .cycle()
            .take(MEL_WINDOW * MEL_BANDS)
            .collect();
        let mut silence = Vec::new();
        embedding.run(&[1, MEL_WINDOW, MEL_BANDS, 1], window, &mut silence)?;
        if silence.len() != EMBEDDING {
            return Err(WakeError::OwwModel {
                path: embedding.path.clone(),
                reason: format!("it gave {} values, not {EMBEDDING}", silence.len()),
            });
        }
        let name = model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut oww = OpenWakeWord {
            model: model.to_path_buf(),
            settings: OwwSettings {
                wake_word: phrase(&name),
                threshold: DEFAULT_THRESHOLD,
            },
            mel,
            embedding,
            classifier,
            frames_in,
            silence,
            pending: Vec::with_capacity(CHUNK_SAMPLES),
            audio: VecDeque::with_capacity(CONTEXT_SAMPLES + CHUNK_SAMPLES),
            mels: VecDeque::with_capacity(MEL_WINDOW * MEL_BANDS),
            embeddings: VecDeque::with_capacity(frames_in * EMBEDDING),
            chunks: 0,
            score: 0.0,
            quiet_until: None,
        };
        oww.reset();
        Ok(oww)
    }

    /// The classifier's phrase and threshold.
    pub fn settings(&self) -> &OwwSettings {
        &self.settings
    }

    /// Fire over `threshold` instead of [`DEFAULT_THRESHOLD`].
    pub(crate) fn set_threshold(&mut self, threshold: f32) {
        self.settings.threshold = threshold;
    }

    /// The latest score (0 before the first chunk and during the warm-up).
    pub fn score(&self) -> f32 {
        self.score
    }

    /// Chunks scored since the start (or the last [`OpenWakeWord::reset`]).
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Feeds 16 kHz mono samples, in any chunk sizes (scored every [`CHUNK_SAMPLES`]); returns
    /// the first detection they complete.
    pub fn process(&mut self, samples: &[i16]) -> Result<Option<Detection>, WakeError> {
        let mut found = None;
        let mut rest = samples;
        while !rest.is_empty() {
            let take = (CHUNK_SAMPLES - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == CHUNK_SAMPLES {
                if let Some(hit) = self.chunk()? {
                    found.get_or_insert(hit);
                }
                self.pending.clear();
            }
        }
        Ok(found)
    }

    /// Feeds samples and returns the score of every whole chunk they complete (for tests and
    /// measurements; detections are not made).
    pub fn scores(&mut self, samples: &[i16]) -> Result<Vec<f32>, WakeError> {
        let mut scores = Vec::new();
        for s in samples.chunks(CHUNK_SAMPLES) {
            let before = self.chunks;
            self.process(s)?;
            if self.chunks > before {
                scores.push(self.score);
            }
        }
        Ok(scores)
    }

    /// One whole chunk in `pending`: features, score, detection.
    fn chunk(&mut self) -> Result<Option<Detection>, WakeError> {
        // 1. mel frames of the chunk and its context
        self.audio
            .extend(self.pending.iter().map(|&s| f32::from(s)));
        while self.audio.len() > CONTEXT_SAMPLES + CHUNK_SAMPLES {
            self.audio.pop_front();
        }
        let mut out = Vec::new();
        let audio: Vec<f32> = self.audio.iter().copied().collect();
        self.mel.run(&[1, audio.len()], audio, &mut out)?;
        self.mels.extend(out.iter().map(|&x| scale(x)));
        while self.mels.len() > MEL_WINDOW * MEL_BANDS {
            self.mels.pop_front();
        }
        // 2. one embedding of the latest 76 frames
        let window: Vec<f32> = self.mels.iter().copied().collect();
        self.embedding
            .run(&[1, MEL_WINDOW, MEL_BANDS, 1], window, &mut out)?;
        if out.len() != EMBEDDING {
            return Err(WakeError::OwwInvoke {
                path: self.embedding.path.clone(),
                reason: format!("it gave {} values, not {EMBEDDING}", out.len()),
            });
        }
        self.embeddings.extend(out.iter().copied());
        while self.embeddings.len() > self.frames_in * EMBEDDING {
            self.embeddings.pop_front();
        }
        // 3. the score of the latest embeddings
        let input: Vec<f32> = self.embeddings.iter().copied().collect();
        self.classifier
            .run(&[1, self.frames_in, EMBEDDING], input, &mut out)?;
        self.chunks += 1;
        let raw = out.first().copied().unwrap_or(0.0);
        self.score = if self.chunks <= WARM_UP { 0.0 } else { raw };
        let at_sample = self.chunks * CHUNK_SAMPLES as u64;
        if let Some(until) = self.quiet_until {
            if at_sample < until {
                return Ok(None);
            }
            self.quiet_until = None;
        }
        if self.score <= self.settings.threshold {
            return Ok(None);
        }
        self.quiet_until = Some(at_sample + REFRACTORY_SAMPLES);
        Ok(Some(Detection {
            wake_word: self.settings.wake_word.clone(),
            probability: self.score,
            at_sample,
        }))
    }

    /// Starts over as on a new stream (the networks keep no state between chunks).
    pub fn reset(&mut self) {
        self.pending.clear();
        self.audio.clear();
        self.mels.clear();
        self.mels
            .extend(std::iter::repeat_n(1.0, MEL_WINDOW * MEL_BANDS));
        self.embeddings.clear();
        for _ in 0..self.frames_in {
            self.embeddings.extend(self.silence.iter().copied());
        }
        self.chunks = 0;
        self.score = 0.0;
        self.quiet_until = None;
    }
}

/// openWakeWord's scaling of the mel model's output, to match the features its embedding
/// model was trained on.
fn scale(x: f32) -> f32 {
    x / 10.0 + 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_names_the_file_the_fix_and_the_licence() {
        let e = OpenWakeWord::load(Path::new("/nonexistent/openwakeword/alexa.onnx"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/openwakeword/melspectrogram.onnx")
                && e.contains("hearth models pull")
                && e.contains("CC BY-NC-SA"),
            "{e}"
        );
    }
}
