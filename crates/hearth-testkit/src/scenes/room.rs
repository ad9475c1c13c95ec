// The room a bench's speech is heard in: room noise (`noise::room`, brown with pink 3 dB
// under it) at a signal-to-noise ratio, and reverberation (sox's `reverb`, a living room).
// Pure helpers only; `talk.rs` (feature `tts`) runs sox.

use super::mix::{active_level, from_db, scale};
use super::noise;

/// The speech's active level when it is mixed into room noise, dBFS (as `benches/wake.rs`
/// sets it).
pub const SPEECH_DBFS: f64 = -26.0;

/// sox's effects for the room's reverberation: half a second of silence after the speech
/// (for the tail to ring into), then `reverb` at 50 % reverberance, 50 % high-frequency
/// damping, a 50 % room scale, 100 % stereo depth (mono here) and a 10 ms pre-delay, the
/// dry sound kept: a living room heard from a few metres.
pub const REVERB: [&str; 9] = ["pad", "0", "0.5", "reverb", "50", "50", "50", "100", "10"];

/// Where the speech is heard.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Room {
    /// Room noise this many dB under the speech's active level (`None`: no room noise).
    pub snr_db: Option<f64>,
    /// The speech through [`REVERB`].
    pub reverb: bool,
}

/// An SNR as `--snr` takes it: a number of dB from -10 to 60.
pub fn parse_snr(v: &str) -> Result<f64, String> {
    let db: f64 = v.parse().map_err(|e| format!("--snr {v:?}: {e}"))?;
    if !(-10.0..=60.0).contains(&db) {
        return Err(format!("--snr {v}: from -10 to 60 dB"));
    }
    Ok(db)
}

impl Room {
    /// "room noise at 20 dB SNR, reverb", or "quiet" for neither.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(snr) = self.snr_db {
            parts.push(format!("room noise at {snr} dB SNR"));
        }
        if self.reverb {
            parts.push("reverb".to_string());
        }
        if parts.is_empty() {
            return "quiet".into();
        }
        parts.join(", ")
    }

    /// The sox effects on each clip, if any.
    pub fn effect(&self) -> Option<Vec<String>> {
        self.reverb
            .then(|| REVERB.iter().map(|s| s.to_string()).collect())
    }

    /// The room noise's RMS level, dBFS, with the speech at [`SPEECH_DBFS`].
    pub fn noise_dbfs(&self) -> Option<f64> {
        self.snr_db.map(|snr| SPEECH_DBFS - snr)
    }

    /// `n` samples of the room's noise (seeded), if it has any.
    pub fn bed(&self, n: usize, seed: u64) -> Option<Vec<f32>> {
        self.noise_dbfs().map(|dbfs| noise::room(n, dbfs, seed))
    }
}

/// Scales `clip` to active level `dbfs` (silence stays silence).
pub fn set_active_level(clip: &mut [f32], dbfs: f64) {
    if let Some(level) = active_level(clip) {
        scale(clip, from_db(dbfs) / level);
    }
}

/// Scales `after` (a clip through an effect) back to the active level `before` had.
pub fn keep_level(before: &[f32], after: &mut [f32]) {
    if let (Some(was), Some(is)) = (active_level(before), active_level(after)) {
        scale(after, was / is);
    }
}
