// Levels and mixing: a sound's RMS, speech's active level, and speech laid over noise at a
// chosen signal-to-noise ratio.
//
// The SNR here is the speech's *active* level over the noise's RMS where the speech is:
// `20·log10(active(speech) / rms(noise under the speech))`. The active level is a simplified
// ITU-T P.56: the RMS over the 10 ms frames no more than `ACTIVE_RANGE_DB` under the loudest
// one, so the pauses around and inside an utterance do not lower it (a plain RMS would, and
// the same utterance with more silence around it would then be mixed louder).

/// 16 kHz: what the wake-word models take.
pub const RATE: u32 = 16_000;

/// 10 ms at [`RATE`]: the frame of the active level (and the chunk a microphone delivers).
pub const FRAME: usize = 160;

/// Frames quieter than the loudest one by more than this are pauses.
pub const ACTIVE_RANGE_DB: f64 = 30.0;

/// Frames quieter than this (dBFS) are silence whatever the loudest one is.
pub const SILENCE_DBFS: f64 = -90.0;

/// Root mean square (0 for nothing).
pub fn rms(x: &[f32]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|&s| f64::from(s) * f64::from(s)).sum::<f64>() / x.len() as f64).sqrt()
}

/// A linear level in dB (full scale = 1.0); -inf for 0.
pub fn to_db(level: f64) -> f64 {
    20.0 * level.log10()
}

/// A level in dB as a linear factor.
pub fn from_db(db: f64) -> f64 {
    10f64.powf(db / 20.0)
}

/// The speech's active level (linear RMS over its active 10 ms frames), or None when every
/// frame is silence.
pub fn active_level(x: &[f32]) -> Option<f64> {
    let powers: Vec<f64> = x.chunks(FRAME).map(|f| rms(f).powi(2)).collect();
    let loudest = powers.iter().copied().fold(0.0, f64::max);
    let floor = (loudest * from_db(-ACTIVE_RANGE_DB).powi(2)).max(from_db(SILENCE_DBFS).powi(2));
    let active: Vec<f64> = powers.into_iter().filter(|&p| p >= floor).collect();
    if loudest < floor || active.is_empty() {
        return None;
    }
    Some((active.iter().sum::<f64>() / active.len() as f64).sqrt())
}

/// Multiplies every sample by `gain`.
pub fn scale(x: &mut [f32], gain: f64) {
    for s in x {
        *s = (f64::from(*s) * gain) as f32;
    }
}

/// Scales `x` to RMS `dbfs` (silence stays silence).
pub fn set_level(x: &mut [f32], dbfs: f64) {
    let level = rms(x);
    if level > 0.0 {
        scale(x, from_db(dbfs) / level);
    }
}

/// Speech laid over a noise bed.
#[derive(Debug, Clone)]
pub struct Mix {
    /// Speech plus noise (not clipped: see [`Mix::clipped`]).
    pub samples: Vec<f32>,
    /// Where the speech is: `start..end` samples.
    pub speech: std::ops::Range<usize>,
    /// What the speech was multiplied by.
    pub speech_gain: f64,
    /// What the noise was multiplied by (0 without noise).
    pub noise_gain: f64,
}

impl Mix {
    /// Samples beyond full scale (they will clip as 16-bit audio).
    pub fn clipped(&self) -> usize {
        self.samples.iter().filter(|s| s.abs() > 1.0).count()
    }

    /// The mix as 16-bit samples (clamped).
    pub fn to_i16(&self) -> Vec<i16> {
        to_i16(&self.samples)
    }
}

/// Float samples as 16-bit (clamped, rounded).
pub fn to_i16(x: &[f32]) -> Vec<i16> {
    x.iter()
        .map(|&s| (f64::from(s).clamp(-1.0, 1.0) * 32767.0).round() as i16)
        .collect()
}

/// `speech` at active level `speech_dbfs`, starting `at` samples into `noise`, with the noise
/// scaled so that the SNR under the speech is `snr_db` (`None`: no noise at all, the speech
/// alone over silence as long as `noise`). `noise` must reach past the speech's end.
pub fn mix_at_snr(
    speech: &[f32],
    noise: &[f32],
    at: usize,
    speech_dbfs: f64,
    snr_db: Option<f64>,
) -> Result<Mix, String> {
    let end = at + speech.len();
    if end > noise.len() {
        return Err(format!(
            "the noise ({} samples) ends before the speech does ({end})",
            noise.len()
        ));
    }
    let level = active_level(speech).ok_or("the speech is silent")?;
    let speech_gain = from_db(speech_dbfs) / level;
    let noise_gain = match snr_db {
        None => 0.0,
        Some(snr) => {
            let under = rms(&noise[at..end]);
            if under == 0.0 {
                return Err("the noise is silent under the speech".into());
            }
            from_db(speech_dbfs - snr) / under
        }
    };
    let mut samples: Vec<f32> = noise
        .iter()
        .map(|&n| (f64::from(n) * noise_gain) as f32)
        .collect();
    for (out, &s) in samples[at..end].iter_mut().zip(speech) {
        *out = (f64::from(*out) + f64::from(s) * speech_gain) as f32;
    }
    Ok(Mix {
        samples,
        speech: at..end,
        speech_gain,
        noise_gain,
    })
}

/// Adds `x` into `into` starting at sample `at` (growing `into` if needed).
pub fn add_at(into: &mut Vec<f32>, at: usize, x: &[f32]) {
    if into.len() < at + x.len() {
        into.resize(at + x.len(), 0.0);
    }
    for (o, &s) in into[at..].iter_mut().zip(x) {
        *o += s;
    }
}
