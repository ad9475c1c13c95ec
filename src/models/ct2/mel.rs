//! Whisper's mel filters, which a CTranslate2 folder does not carry, computed as librosa does.

use super::{N_FFT, SAMPLE_RATE};

/// librosa's `filters.mel(sr=16000, n_fft=400, n_mels=n_mels)` (Slaney mel scale and area
/// norm, f32), as whisper's `mel_filters.npz` holds it: `[n_mels][201]`, row-major.
///
/// Bit for bit as numpy computes it: the triangles in f64, stored into the f32 array, then
/// `weights *= enorm` multiplied in f64 and rounded back to f32. numpy's `maximum(0, x)` returns
/// `x` on a tie, so the first filter's first value is -0.0, as in the file.
pub(super) fn mel_filters(n_mels: usize) -> Vec<f32> {
    let bins = N_FFT / 2 + 1;
    // np.fft.rfftfreq(400, 1/16000)
    let step = 1.0 / (N_FFT as f64 * (1.0 / SAMPLE_RATE));
    let fft: Vec<f64> = (0..bins).map(|k| k as f64 * step).collect();
    let mel_f = mel_frequencies(n_mels + 2, 0.0, SAMPLE_RATE / 2.0);
    let mut weights = Vec::with_capacity(n_mels * bins);
    for i in 0..n_mels {
        let (lo, mid, hi) = (mel_f[i], mel_f[i + 1], mel_f[i + 2]);
        let enorm = 2.0 / (hi - lo);
        for &f in &fft {
            let lower = -(lo - f) / (mid - lo);
            let upper = (hi - f) / (hi - mid);
            let smaller = if lower < upper { lower } else { upper };
            let tri = if 0.0 > smaller { 0.0 } else { smaller } as f32;
            weights.push((f64::from(tri) * enorm) as f32);
        }
    }
    weights
}

/// librosa's `mel_frequencies(n, fmin, fmax)` on the Slaney scale: `n` frequencies evenly
/// spaced in mels (numpy's `linspace`: `i * step + start`, the last exactly `stop`).
fn mel_frequencies(n: usize, fmin: f64, fmax: f64) -> Vec<f64> {
    let (lo, hi) = (hz_to_mel(fmin), hz_to_mel(fmax));
    let step = (hi - lo) / (n - 1) as f64;
    (0..n)
        .map(|i| if i + 1 == n { hi } else { i as f64 * step + lo })
        .map(mel_to_hz)
        .collect()
}

/// The Slaney scale: linear below 1 kHz (200/3 Hz a mel), logarithmic above.
const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(f: f64) -> f64 {
    let min_log_mel = MIN_LOG_HZ / F_SP;
    if f >= MIN_LOG_HZ {
        min_log_mel + (f / MIN_LOG_HZ).ln() / log_step()
    } else {
        f / F_SP
    }
}

fn mel_to_hz(m: f64) -> f64 {
    let min_log_mel = MIN_LOG_HZ / F_SP;
    if m >= min_log_mel {
        MIN_LOG_HZ * (log_step() * (m - min_log_mel)).exp()
    } else {
        F_SP * m
    }
}
