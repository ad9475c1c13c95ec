//! Smart Turn v3.2 (ONNX) through ONNX Runtime: the probability that the speaker has finished
//! their turn, judged from the sound of the utterance so far (intonation and rhythm, no
//! transcript). A voice-activity detector only knows that the speaker paused; this model tells
//! a finished request ("turn on the kitchen light") from a pause part-way ("turn on the …").
//!
//! The model is a Whisper-style audio encoder with a classifier head. It sees the last 8 s
//! ([`WINDOW_SAMPLES`]) of 16 kHz audio, padded with silence in front when the utterance is
//! shorter, as an 80-band log-mel spectrogram: 25 ms Hann windows every 10 ms, 800 frames.
//! [`LogMel`] computes those features here, value for value as the reference does (pipecat's
//! numpy port of Whisper's feature extractor; `scripts/smart-turn-reference.py` checks it);
//! the model answers with a probability, and the turn is complete above
//! [`COMPLETE_THRESHOLD`]. The model expects the utterance as a voice-activity detector hands
//! it over at a short pause: the speech and the pause so far (about 200 ms).
//!
//! One decision costs about 45 ms on one thread of a 2-core AVX-512 VNNI x86 machine, idle or
//! with the other core busy (the features about 1.3 ms of it; `cargo run --release --example
//! smart_turn` measures it), whatever the utterance's length, so it is asked at a pause, not on
//! every frame. The feature buffers are allocated once, at [`SmartTurn::load`]. The model is
//! int8: on x86 without VNNI it runs with exact int8 products ([`crate::onnx::builder`]), and
//! [`SmartTurn::check_known_answer`] tells whether this CPU computes it as the reference does.
//! ONNX Runtime is the process's one instance, shared with the Piper voice and the Silero VAD
//! ([`crate::onnx::load`]).
//!
//! The file comes from the PyPI package `pipecat-ai==1.14.0`
//! (`pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx`, BSD-2-Clause; upstream it is
//! published in the Hugging Face repository `pipecat-ai/smart-turn-v3`); `scripts/fetch-models
//! turn` puts it in the model directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::TensorRef;
use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

use crate::voice::SAMPLE_RATE;

/// The model's file name in the model directory.
pub const SMART_TURN_FILE: &str = "smart-turn-v3.2-cpu.onnx";
/// A turn is complete when the model's probability is above this (the reference's cut).
pub(crate) const COMPLETE_THRESHOLD: f32 = 0.5;
/// The audio the model sees: the last 8 s at 16 kHz.
pub const WINDOW_SAMPLES: usize = 8 * SAMPLE_RATE as usize;
/// Mel bands of the features.
pub(crate) const N_MELS: usize = 80;
/// Frames of the features (10 ms apart).
pub(crate) const N_FRAMES: usize = 800;

/// The STFT window: 25 ms.
const N_FFT: usize = 400;
/// The STFT hop: 10 ms.
const HOP: usize = 160;
/// Frequency bins of one STFT frame.
const N_BINS: usize = N_FFT / 2 + 1;
/// Smallest mel energy before the logarithm.
const MEL_FLOOR: f64 = 1e-10;
/// Added to the variance when the audio is scaled to unit variance.
const NORM_EPS: f32 = 1e-7;
/// The features keep this many decades below their loudest value.
const DYNAMIC_RANGE: f64 = 8.0;
/// The model's input and output.
const INPUT: &str = "input_features";
const OUTPUT: &str = "logits";

/// Why Smart Turn cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SmartTurnError {
    /// The model file is not there.
    #[error("the Smart Turn model {0} is missing: run `hearth models pull turn:smart-turn-v3.2`, or set [listen] end_of_turn = \"silence\"")]
    Missing(PathBuf),
    /// ONNX Runtime itself cannot be found or loaded.
    #[error(transparent)]
    Runtime(#[from] crate::onnx::OnnxError),
    /// ONNX Runtime rejected the model.
    #[error("cannot load the Smart Turn model {path}: {cause}; the file may be damaged or another model: fetch it again (`hearth models pull turn:smart-turn-v3.2`)")]
    Load {
        /// The model file.
        path: PathBuf,
        /// ONNX Runtime's error, or what is wrong with the model.
        cause: String,
    },
    /// The features could not be computed (a bug: the FFT buffers are sized at construction).
    #[error(
        "computing the Smart Turn features failed: {0}; this is a bug in hearth, please report it"
    )]
    Features(String),
    /// The model failed on an utterance.
    #[error("the Smart Turn model failed on an utterance: {0}")]
    Inference(String),
    /// The model's answer on the known input is not the reference's: this CPU computes it
    /// differently (see [`crate::onnx::builder`]).
    #[error("the Smart Turn model answers {got:.3} on its known input where the reference answers {want:.3}: ONNX Runtime computes it differently on this CPU, so its end-of-turn decisions cannot be trusted; hearth ends turns at the silence instead. Set [listen] end_of_turn = \"silence\" to say so, and report the CPU (lscpu) and the ONNX Runtime library to hearth's developers")]
    Disagrees {
        /// The probability the model gave.
        got: f32,
        /// The reference's.
        want: f32,
    },
}

/// A loaded Smart Turn model with its feature buffers.
pub struct SmartTurn {
    session: Session,
    features: LogMel,
}

impl std::fmt::Debug for SmartTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmartTurn").finish_non_exhaustive()
    }
}

impl SmartTurn {
    /// Load `model` on ONNX Runtime from `ort_library` (blocking: tens of ms).
    pub fn load(model: &Path, ort_library: &Path) -> Result<SmartTurn, SmartTurnError> {
        if !model.is_file() {
            return Err(SmartTurnError::Missing(model.to_path_buf()));
        }
        crate::onnx::load(ort_library)?;
        let session = open(model).map_err(|cause| SmartTurnError::Load {
            path: model.to_path_buf(),
            cause,
        })?;
        Ok(SmartTurn {
            session,
            features: LogMel::new(),
        })
    }

    /// The probability (0..1) that the turn is complete, for the 16 kHz mono audio of the
    /// utterance so far (only its last 8 s count). Complete means above
    /// [`COMPLETE_THRESHOLD`] ([`SmartTurn::is_complete`]).
    pub fn complete_prob(&mut self, audio: &[f32]) -> Result<f32, SmartTurnError> {
        let fail = |e: ort::Error| SmartTurnError::Inference(e.to_string());
        let features = self.features.compute(audio)?;
        let x = TensorRef::from_array_view(([1usize, N_MELS, N_FRAMES], features)).map_err(fail)?;
        let out = self.session.run(ort::inputs![INPUT => x]).map_err(fail)?;
        let logits = out
            .get(OUTPUT)
            .ok_or_else(|| SmartTurnError::Inference(format!("no output {OUTPUT:?}")))?;
        let (_, p) = logits.try_extract_tensor::<f32>().map_err(fail)?;
        p.first()
            .copied()
            .ok_or_else(|| SmartTurnError::Inference("the model gave no probability".to_string()))
    }

    /// Whether the turn is complete: [`SmartTurn::complete_prob`] above
    /// [`COMPLETE_THRESHOLD`].
    pub fn is_complete(&mut self, audio: &[f32]) -> Result<bool, SmartTurnError> {
        Ok(self.complete_prob(audio)? > COMPLETE_THRESHOLD)
    }

    /// The model's answer on [`probe_signal`], checked against the reference's
    /// ([`PROBE_PROBABILITY`], within [`PROBE_TOLERANCE`]): the probability, or
    /// [`SmartTurnError::Disagrees`] when this CPU computes the model differently. One
    /// decision's cost; `hearth run` asks it once at load, `hearth doctor` every time.
    pub fn check_known_answer(&mut self) -> Result<f32, SmartTurnError> {
        let got = self.complete_prob(&probe_signal())?;
        judge_known_answer(got)
    }
}

/// `got`, the model's answer on [`probe_signal`], if it is the reference's.
fn judge_known_answer(got: f32) -> Result<f32, SmartTurnError> {
    if (got - PROBE_PROBABILITY).abs() > PROBE_TOLERANCE || got.is_nan() {
        return Err(SmartTurnError::Disagrees {
            got,
            want: PROBE_PROBABILITY,
        });
    }
    Ok(got)
}

/// The model's probability for [`probe_signal`], as the reference computes it
/// (`tests/corpus/smart_turn/features.json`, case `synthetic_short`; a test keeps the two
/// equal). Where int8 products saturate (AVX2 without the exact products) the model said
/// 0.986 here, and 0.026 for a finished command.
pub const PROBE_PROBABILITY: f32 = 0.849_800_35;
/// How far the answer on [`probe_signal`] may stray from [`PROBE_PROBABILITY`]: rounding
/// differs by less than 1e-4 between CPUs; a miscomputed model by more than 0.1.
pub const PROBE_TOLERANCE: f32 = 0.01;

/// The known input: one second of a 220 Hz tone swelling at 3 Hz, a quiet 1870 Hz tone and
/// white noise from a 64-bit LCG (the reference script builds the same samples), so the
/// check needs no audio file.
pub fn probe_signal() -> Vec<f32> {
    synthetic(SAMPLE_RATE as usize)
}

/// `n` samples of the known signal (see [`probe_signal`]).
fn synthetic(n: usize) -> Vec<f32> {
    let tau = 2.0 * std::f64::consts::PI;
    let mut state = 0u64;
    (0..n)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            let t = i as f64 / f64::from(SAMPLE_RATE);
            let swell = 0.5 + 0.5 * (tau * 3.0 * t).sin();
            let mut v = 0.3 * (tau * 220.0 * t).sin() * swell;
            v += 0.1 * (tau * 1870.0 * t).sin() + 0.05 * noise;
            v as f32
        })
        .collect()
}

/// A session on `model` as the reference opens it (one thread, sequential, every graph
/// optimisation), checked to have Smart Turn v3's input and output.
fn open(model: &Path) -> Result<Session, String> {
    let session = crate::onnx::builder()?
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(|e| e.to_string())?
        .with_parallel_execution(false)
        .map_err(|e| e.to_string())?
        .with_intra_threads(1)
        .map_err(|e| e.to_string())?
        .with_inter_threads(1)
        .map_err(|e| e.to_string())?
        .commit_from_file(model)
        .map_err(|e| e.to_string())?;
    let inputs: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
    let outputs: Vec<&str> = session.outputs().iter().map(|o| o.name()).collect();
    if inputs != [INPUT] || outputs != [OUTPUT] {
        return Err(format!(
            "its inputs are {inputs:?} and outputs {outputs:?}, not Smart Turn v3's [{INPUT:?}] and [{OUTPUT:?}]"
        ));
    }
    Ok(session)
}

/// Whisper's log-mel features as Smart Turn v3 computes them, with its buffers.
///
/// The steps, in the reference's order and precision: keep the last 8 s of the audio (zeros in
/// front when shorter); scale that window to zero mean and unit variance (in `f32`, the padding
/// included); reflect-pad it by half a window at each end; for each 10 ms hop a periodic Hann
/// window of 400 samples, a real FFT and the power spectrum (in `f64`); Slaney-normalised
/// triangular mel filters (Slaney's mel scale, 0 to 8 kHz); `log10` of the energies floored at
/// 1e-10; the last frame dropped; everything raised to at least 8 below the maximum; then
/// `(x + 4) / 4`.
pub struct LogMel {
    fft: Arc<dyn RealToComplex<f64>>,
    hann: Vec<f64>,
    filters: Vec<MelFilter>,
    /// The scaled window with half a window of reflection at each end.
    signal: Vec<f64>,
    frame: Vec<f64>,
    spectrum: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
    power: Vec<f64>,
    /// `log10` of the mel energies, band after band.
    log: Vec<f64>,
    out: Vec<f32>,
}

impl Default for LogMel {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LogMel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogMel").finish_non_exhaustive()
    }
}

impl LogMel {
    /// The FFT plan, window, filterbank and buffers (about 2 MB).
    pub fn new() -> LogMel {
        let fft = RealFftPlanner::<f64>::new().plan_fft_forward(N_FFT);
        let spectrum = fft.make_output_vec();
        let scratch = fft.make_scratch_vec();
        LogMel {
            fft,
            hann: periodic_hann(N_FFT),
            filters: mel_filters(),
            signal: vec![0.0; WINDOW_SAMPLES + N_FFT],
            frame: vec![0.0; N_FFT],
            spectrum,
            scratch,
            power: vec![0.0; N_BINS],
            log: vec![0.0; N_MELS * N_FRAMES],
            out: vec![0.0; N_MELS * N_FRAMES],
        }
    }

    /// The features of `audio` (16 kHz mono): [`N_MELS`] rows of [`N_FRAMES`] values.
    pub fn compute(&mut self, audio: &[f32]) -> Result<&[f32], SmartTurnError> {
        self.load_window(audio);
        for t in 0..N_FRAMES {
            self.frame_energies(t)?;
        }
        self.scale();
        Ok(&self.out)
    }

    /// The last [`WINDOW_SAMPLES`] of `audio`, zeros in front, scaled to zero mean and unit
    /// variance, into `signal` between the reflections.
    fn load_window(&mut self, audio: &[f32]) {
        let tail = &audio[audio.len().saturating_sub(WINDOW_SAMPLES)..];
        let pad = WINDOW_SAMPLES - tail.len();
        let (mean, std) = mean_and_std(tail, pad);
        let edge = N_FFT / 2;
        let body = &mut self.signal[edge..edge + WINDOW_SAMPLES];
        body[..pad].fill(f64::from((0.0 - mean) / std));
        for (s, &x) in body[pad..].iter_mut().zip(tail) {
            *s = f64::from((x - mean) / std);
        }
        reflect_edges(&mut self.signal, edge);
    }

    /// `log10` of the mel energies of frame `t` into column `t` of `log`.
    fn frame_energies(&mut self, t: usize) -> Result<(), SmartTurnError> {
        let samples = &self.signal[t * HOP..t * HOP + N_FFT];
        for ((f, s), w) in self.frame.iter_mut().zip(samples).zip(&self.hann) {
            *f = s * w;
        }
        self.fft
            .process_with_scratch(&mut self.frame, &mut self.spectrum, &mut self.scratch)
            .map_err(|e| SmartTurnError::Features(e.to_string()))?;
        for (p, c) in self.power.iter_mut().zip(&self.spectrum) {
            *p = c.norm_sqr();
        }
        for (m, filter) in self.filters.iter().enumerate() {
            self.log[m * N_FRAMES + t] = filter.energy(&self.power).max(MEL_FLOOR).log10();
        }
        Ok(())
    }

    /// Clamp `log` to [`DYNAMIC_RANGE`] below its maximum and rescale it into `out`.
    fn scale(&mut self) {
        let max = self.log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let floor = max - DYNAMIC_RANGE;
        for (o, &l) in self.out.iter_mut().zip(&self.log) {
            *o = ((l.max(floor) + 4.0) / 4.0) as f32;
        }
    }
}

/// The mean and standard deviation (with [`NORM_EPS`] added to the variance) of `pad` zeros
/// followed by `tail`, rounded to `f32` as the reference holds them.
fn mean_and_std(tail: &[f32], pad: usize) -> (f32, f32) {
    let n = (tail.len() + pad) as f64;
    let mean = tail.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let squares: f64 = tail.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum();
    let var = (squares + pad as f64 * mean * mean) / n;
    (mean as f32, ((var as f32) + NORM_EPS).sqrt())
}

/// Fill the `edge` samples at each end of `signal` with the reflection of its inside (the
/// edge sample itself not repeated: numpy's "reflect").
fn reflect_edges(signal: &mut [f64], edge: usize) {
    let last = signal.len() - edge - 1;
    for j in 1..=edge {
        signal[edge - j] = signal[edge + j];
        signal[last + j] = signal[last - j];
    }
}

/// The periodic Hann window of `n` samples (numpy's `hanning(n + 1)[:-1]`, its formula).
fn periodic_hann(n: usize) -> Vec<f64> {
    let m = n as f64;
    (0..n)
        .map(|k| 0.5 + 0.5 * (std::f64::consts::PI * (2.0 * k as f64 - m) / m).cos())
        .collect()
}

/// One triangular mel filter: its weights over consecutive FFT bins from `first`.
struct MelFilter {
    first: usize,
    weights: Vec<f64>,
}

impl MelFilter {
    /// The filter's nonzero span of `dense` (weights for every bin).
    fn from_dense(dense: &[f64]) -> MelFilter {
        let first = dense.iter().position(|&w| w != 0.0).unwrap_or(0);
        let end = dense
            .iter()
            .rposition(|&w| w != 0.0)
            .map_or(first, |i| i + 1);
        MelFilter {
            first,
            weights: dense[first..end].to_vec(),
        }
    }

    /// The filter's energy in a power spectrum of [`N_BINS`] bins.
    fn energy(&self, power: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(&power[self.first..])
            .map(|(w, p)| w * p)
            .sum()
    }
}

/// Slaney-normalised triangular filters, equally spaced on Slaney's mel scale from 0 Hz to
/// half the sample rate, over the FFT's bins (librosa's `mel(htk=False, norm="slaney")`).
fn mel_filters() -> Vec<MelFilter> {
    let nyquist = SAMPLE_RATE / 2;
    let edges: Vec<f64> = linspace(hz_to_mel(0.0), hz_to_mel(f64::from(nyquist)), N_MELS + 2)
        .into_iter()
        .map(mel_to_hz)
        .collect();
    let bins = linspace(0.0, f64::from(nyquist), N_BINS);
    edges
        .windows(3)
        .map(|e| {
            let (lo, mid, hi) = (e[0], e[1], e[2]);
            let norm = 2.0 / (hi - lo);
            let dense: Vec<f64> = bins
                .iter()
                .map(|&f| {
                    let rising = -(lo - f) / (mid - lo);
                    let falling = (hi - f) / (hi - mid);
                    rising.min(falling).max(0.0) * norm
                })
                .collect();
            MelFilter::from_dense(&dense)
        })
        .collect()
}

/// `n` values from `start` to `stop` inclusive, computed as numpy's `linspace` does.
fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    let step = (stop - start) / (n - 1) as f64;
    (0..n)
        .map(|i| {
            if i == n - 1 {
                stop
            } else {
                i as f64 * step + start
            }
        })
        .collect()
}

/// Hertz to Slaney's mel scale: linear below 1 kHz, logarithmic above.
fn hz_to_mel(hz: f64) -> f64 {
    if hz >= 1000.0 {
        15.0 + (hz / 1000.0).ln() * (27.0 / 6.4f64.ln())
    } else {
        3.0 * hz / 200.0
    }
}

/// Slaney's mel scale to hertz.
fn mel_to_hz(mel: f64) -> f64 {
    if mel >= 15.0 {
        1000.0 * ((6.4f64.ln() / 27.0) * (mel - 15.0)).exp()
    } else {
        200.0 * mel / 3.0
    }
}

#[cfg(test)]
mod tests {
    //! The features against pipecat's, value for value (tests/corpus/smart_turn/features.json,
    //! written by scripts/smart-turn-reference.py), and the real model against the reference and
    //! on a finished and an unfinished command. The real-model test needs `scripts/fetch-models
    //! turn tts`; `HEARTH_SKIP_REAL_MODEL=1` skips it locally (CI never sets it).

    use super::*;

    /// The model's features for `audio`, with fresh buffers.
    fn log_mel(audio: &[f32]) -> Result<Vec<f32>, SmartTurnError> {
        Ok(LogMel::new().compute(audio)?.to_vec())
    }
    use serde_json::Value;

    /// Most a feature may differ from the reference's (the log-mel scale: about -1.5..1.5).
    const FEATURE_TOLERANCE: f64 = 1e-4;
    /// Most the probability may differ from the reference's.
    const PROB_TOLERANCE: f32 = 1e-3;

    fn reference() -> Value {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/smart_turn/features.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: the reference is missing; write it with scripts/smart-turn-reference.py (its header says how)",
                path.display()
            )
        });
        serde_json::from_str(&text).expect("the reference is JSON")
    }

    fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|x| x.as_f64().expect("a number"))
            .collect()
    }

    /// kitchen.wav ("Turn on the kitchen light.") as hearth reads it: 16 kHz mono.
    fn kitchen() -> Vec<f32> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/audio/kitchen.wav");
        crate::audio::wav::read_16k_mono(path).expect("kitchen.wav reads")
    }

    /// The audio of a reference case, built as the script builds it.
    fn case_audio(reference: &Value, name: &str, kitchen: &[f32]) -> Vec<f32> {
        let count = |k: &str| reference[k].as_u64().expect("a count") as usize;
        let pause = vec![0.0; count("pause_samples")];
        let rate = SAMPLE_RATE as usize;
        match name {
            // the whole command, then a 200 ms pause: what a VAD hands over at the first pause
            "kitchen_pause" => [kitchen, &pause].concat(),
            // "Turn on the", cut in the gap before "kitchen" (0.62 s), then the same pause:
            // a speaker who stopped mid-request
            "kitchen_cut_pause" => [&kitchen[..count("cut_samples")], &pause].concat(),
            "synthetic_short" => synthetic(rate),
            "synthetic_long" => synthetic(rate * 19 / 2),
            other => panic!("unknown reference case {other}"),
        }
    }

    /// The reference's cases: (name, audio, probability, feature summary).
    fn cases(reference: &Value) -> Vec<(String, Vec<f32>, f32, Value)> {
        let kitchen = kitchen();
        let want = &reference["kitchen_16k"];
        let bytes: Vec<u8> = kitchen.iter().flat_map(|s| s.to_le_bytes()).collect();
        let digest: String = {
            use sha2::{Digest, Sha256};
            Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        assert_eq!(
            (kitchen.len() as u64, digest.as_str()),
            (want["samples"].as_u64().expect("samples"), want["sha256"].as_str().expect("sha256")),
            "kitchen.wav no longer reads as the reference's 16 kHz samples (the resampler changed?): \
             write the reference again (scripts/smart-turn-reference.py)"
        );
        reference["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| {
                let name = c["name"].as_str().expect("a name").to_string();
                let audio = case_audio(reference, &name, &kitchen);
                let p = c["probability"].as_f64().expect("a probability") as f32;
                (name, audio, p, c["features"].clone())
            })
            .collect()
    }

    /// The largest difference between `features` and the reference's summary of its own.
    fn max_error(features: &[f32], summary: &Value) -> f64 {
        let stride = summary["stride"].as_u64().expect("stride") as usize;
        let sampled = features.iter().step_by(stride).map(|&v| f64::from(v));
        let rows = features
            .chunks(N_FRAMES)
            .map(|r| r.iter().map(|&v| f64::from(v)).sum::<f64>() / N_FRAMES as f64);
        let cols = (0..N_FRAMES).map(|t| {
            (0..N_MELS)
                .map(|m| f64::from(features[m * N_FRAMES + t]))
                .sum::<f64>()
                / N_MELS as f64
        });
        let mut worst = 0.0f64;
        for (mine, key) in [
            (sampled.collect::<Vec<_>>(), "values"),
            (rows.collect(), "row_means"),
            (cols.collect(), "col_means"),
        ] {
            let theirs = floats(&summary[key]);
            assert_eq!(mine.len(), theirs.len(), "{key}: lengths differ");
            for (a, b) in mine.iter().zip(&theirs) {
                worst = worst.max((a - b).abs());
            }
        }
        worst
    }

    #[test]
    fn features_match_the_reference_value_for_value() {
        let reference = reference();
        let mut mel = LogMel::new();
        let mut worst = 0.0f64;
        for (name, audio, _, summary) in cases(&reference) {
            let error = max_error(mel.compute(&audio).expect("features"), &summary);
            eprintln!("{name}: largest feature error {error:.2e}");
            assert!(
                error < FEATURE_TOLERANCE,
                "{name}: a feature differs from the reference by {error:e}"
            );
            worst = worst.max(error);
        }
        eprintln!("largest feature error over all cases: {worst:.2e}");
    }

    #[test]
    fn the_known_answer_is_the_references() {
        let reference = reference();
        let case = reference["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|c| c["name"] == "synthetic_short")
            .expect("the reference has the probe's case");
        let want = case["probability"].as_f64().expect("a probability") as f32;
        assert_eq!(PROBE_PROBABILITY, want);
        assert_eq!(probe_signal(), synthetic(SAMPLE_RATE as usize));
    }

    #[test]
    fn an_answer_off_the_reference_is_a_disagreement_naming_the_fix() {
        // what the model answered on an AVX2 CPU with saturating int8 products
        let e = judge_known_answer(0.986).expect_err("0.986 is not 0.850");
        assert!(matches!(e, SmartTurnError::Disagrees { .. }), "{e:?}");
        assert!(e.to_string().contains("end_of_turn = \"silence\""), "{e}");
        assert!(judge_known_answer(f32::NAN).is_err());
        assert_eq!(judge_known_answer(0.8499).expect("within rounding"), 0.8499);
    }

    #[test]
    fn silence_is_the_floor_everywhere() {
        for audio in [vec![], vec![0.0; SAMPLE_RATE as usize]] {
            let features = log_mel(&audio).expect("features");
            assert_eq!(features.len(), N_MELS * N_FRAMES);
            // log10 of the 1e-10 floor is -10, and (-10 + 4) / 4 = -1.5
            assert!(features.iter().all(|&v| v == -1.5), "{:?}", &features[..4]);
        }
    }

    #[test]
    fn only_the_last_eight_seconds_count() {
        let tail = synthetic(WINDOW_SAMPLES);
        let mut longer = vec![0.9; SAMPLE_RATE as usize];
        longer.extend_from_slice(&tail);
        assert_eq!(
            log_mel(&longer).expect("features"),
            log_mel(&tail).expect("features")
        );
    }

    #[test]
    fn a_missing_model_names_the_fix() {
        let missing = Path::new("/nonexistent/smart-turn-v3.2-cpu.onnx");
        let e = SmartTurn::load(missing, Path::new("/nonexistent/libonnxruntime.so"))
            .expect_err("no model");
        assert!(matches!(e, SmartTurnError::Missing(_)), "{e:?}");
        assert!(e.to_string().contains("hearth models pull turn:"), "{e}");
    }

    /// `model` loaded on the ONNX Runtime found for it, or None when skipping is asked for;
    /// missing, they fail the test.
    fn real_model(model: &Path) -> Option<SmartTurn> {
        let found = crate::onnx::find_library(
            None,
            |k| std::env::var_os(k),
            &crate::onnx::search_dirs(model),
        )
        .map_err(SmartTurnError::from)
        .and_then(|lib| SmartTurn::load(model, &lib));
        match found {
            Ok(turn) => Some(turn),
            Err(e) if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") => {
                eprintln!("skipping a real-model test (HEARTH_SKIP_REAL_MODEL=1): {e}");
                None
            }
            Err(e) => panic!("{e}\n(run scripts/fetch-models turn tts, or set HEARTH_SKIP_REAL_MODEL=1 to skip locally)"),
        }
    }

    #[test]
    fn real_model_hears_a_finished_command_and_agrees_with_the_reference() {
        let dir = crate::models::model_dir().expect("a model directory");
        let Some(mut turn) = real_model(&dir.join(SMART_TURN_FILE)) else {
            return;
        };
        let reference = reference();
        let mut prob = std::collections::HashMap::new();
        for (name, audio, want, _) in cases(&reference) {
            let p = turn.complete_prob(&audio).expect("a decision");
            eprintln!(
                "{name}: P(complete) {p:.5}, reference {want:.5}, error {:.2e}",
                (p - want).abs()
            );
            assert!(
                (p - want).abs() < PROB_TOLERANCE,
                "{name}: {p} against the reference's {want}"
            );
            prob.insert(name, p);
        }
        // "Turn on the kitchen light." and a 200 ms pause: finished
        let whole = prob["kitchen_pause"];
        assert!(
            whole > COMPLETE_THRESHOLD,
            "the whole command scored {whole}"
        );
        // "Turn on the" and the same pause: the request has no object yet
        let cut = prob["kitchen_cut_pause"];
        assert!(cut < COMPLETE_THRESHOLD, "the cut command scored {cut}");
        // and the check `hearth run` and `hearth doctor` make agrees on this CPU
        let known = turn
            .check_known_answer()
            .expect("the known answer on this CPU");
        assert!(
            (known - PROBE_PROBABILITY).abs() < PROB_TOLERANCE,
            "{known}"
        );
    }

    #[test]
    fn a_damaged_model_is_refused_naming_the_fix() {
        let dir = std::env::temp_dir().join(format!("hearth-smart-turn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let model = dir.join(SMART_TURN_FILE);
        std::fs::write(&model, b"not an ONNX model").expect("the file is written");
        let lib = crate::onnx::find_library(
            None,
            |k| std::env::var_os(k),
            &[crate::models::model_dir().expect("a model directory")],
        );
        let result = lib.map(|lib| SmartTurn::load(&model, &lib));
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Ok(Err(e @ SmartTurnError::Load { .. })) => {
                assert!(e.to_string().contains("hearth models pull turn:"), "{e}")
            }
            Ok(other) => panic!("a damaged model loaded or failed otherwise: {other:?}"),
            Err(e) if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") => {
                eprintln!("skipping (HEARTH_SKIP_REAL_MODEL=1): {e}");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
