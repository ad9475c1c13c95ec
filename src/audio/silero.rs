//! Silero VAD (v6, ONNX) through ONNX Runtime: the probability that a 32 ms frame is speech.
//!
//! The model takes 512 new samples at 16 kHz (one [`Frame`](crate::voice::Frame)) with the
//! 64 samples before them as context, and carries a recurrent state from frame to frame;
//! both are kept here. It runs on one thread: about 0.1–0.2 ms a frame on a 2-core x86
//! machine (`cargo run --release --example vad_compare` measures it). ONNX Runtime is the
//! process's one instance, shared with the Piper voice ([`crate::onnx::load`]).
//!
//! The file comes from the PyPI package `silero-vad==6.2.3` (`silero_vad/data/silero_vad.onnx`,
//! MIT); `scripts/fetch-models vad` puts it in the model directory.

use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::Tensor;

use crate::voice::{FRAME_SAMPLES, SAMPLE_RATE};

/// The model's file name in the model directory.
pub const SILERO_FILE: &str = "silero_vad.onnx";

/// Samples of the previous frame the model sees before each new one.
const CONTEXT: usize = 64;
/// The recurrent state: [2, 1, 128].
const STATE: usize = 2 * 128;

/// Why the Silero VAD cannot run.
#[derive(Debug, thiserror::Error)]
pub enum VadError {
    /// The model file is not there.
    #[error("the Silero VAD model {0} is missing: run `hearth models pull vad:silero`, or set [listen] vad = \"energy\"")]
    Missing(PathBuf),
    /// ONNX Runtime itself cannot be found or loaded.
    #[error(transparent)]
    Runtime(#[from] crate::onnx::OnnxError),
    /// ONNX Runtime rejected the model.
    #[error("cannot load the Silero VAD model {path}: {cause}; the file may be damaged: fetch it again (`hearth models pull vad:silero`)")]
    Load {
        /// The model file.
        path: PathBuf,
        /// ONNX Runtime's error.
        cause: String,
    },
    /// A frame could not be scored.
    #[error("the Silero VAD failed on a frame: {0}")]
    Inference(String),
}

/// A loaded Silero VAD with its running state.
pub struct Silero {
    session: Session,
    state: Vec<f32>,
    context: [f32; CONTEXT],
}

impl std::fmt::Debug for Silero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Silero").finish_non_exhaustive()
    }
}

impl Silero {
    /// Load `model` on ONNX Runtime from `ort_library` (blocking: tens of ms).
    pub fn load(model: &Path, ort_library: &Path) -> Result<Silero, VadError> {
        if !model.is_file() {
            return Err(VadError::Missing(model.to_path_buf()));
        }
        crate::onnx::load(ort_library)?;
        let load = |cause: String| VadError::Load {
            path: model.to_path_buf(),
            cause,
        };
        let session = crate::onnx::builder()
            .map_err(load)?
            .with_intra_threads(1)
            .map_err(|e| load(e.to_string()))?
            .with_inter_threads(1)
            .map_err(|e| load(e.to_string()))?
            .commit_from_file(model)
            .map_err(|e| load(e.to_string()))?;
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        if names != ["input", "state", "sr"] {
            return Err(load(format!(
                "its inputs are {names:?}, not Silero v5/v6's [\"input\", \"state\", \"sr\"]"
            )));
        }
        Ok(Silero {
            session,
            state: vec![0.0; STATE],
            context: [0.0; CONTEXT],
        })
    }

    /// Forget the audio so far (a new stream).
    pub fn reset(&mut self) {
        self.state.iter_mut().for_each(|s| *s = 0.0);
        self.context = [0.0; CONTEXT];
    }

    /// The probability (0..1) that this frame of [`FRAME_SAMPLES`] samples at 16 kHz is
    /// speech. A shorter frame (the last of a file) is padded with silence.
    pub fn speech_prob(&mut self, frame: &[f32]) -> Result<f32, VadError> {
        let fail = |e: ort::Error| VadError::Inference(e.to_string());
        // the tensor owns its data: one fresh buffer a frame, context then the new samples
        let mut input = Vec::with_capacity(CONTEXT + FRAME_SAMPLES);
        input.extend_from_slice(&self.context);
        let n = frame.len().min(FRAME_SAMPLES);
        input.extend_from_slice(&frame[..n]);
        input.resize(CONTEXT + FRAME_SAMPLES, 0.0);
        self.context
            .copy_from_slice(&input[FRAME_SAMPLES..FRAME_SAMPLES + CONTEXT]);
        let x = Tensor::from_array(([1usize, CONTEXT + FRAME_SAMPLES], input)).map_err(fail)?;
        let state = Tensor::from_array(([2usize, 1, 128], self.state.clone())).map_err(fail)?;
        let sr = Tensor::from_array(((), vec![i64::from(SAMPLE_RATE)])).map_err(fail)?;
        let out = self
            .session
            .run(ort::inputs!["input" => x, "state" => state, "sr" => sr])
            .map_err(fail)?;
        let (_, p) = out["output"].try_extract_tensor::<f32>().map_err(fail)?;
        let p = p.first().copied().unwrap_or(0.0);
        let (_, next) = out["stateN"].try_extract_tensor::<f32>().map_err(fail)?;
        if next.len() == STATE {
            self.state.copy_from_slice(next);
        }
        Ok(p)
    }
}
