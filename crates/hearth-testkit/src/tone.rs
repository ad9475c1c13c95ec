//! How much of a sound is one tone: the cues' tests (the earcon's chime, the bell) find them
//! at the start of what a speaker got.

/// The share of the power of `samples` (at `rate` Hz) that is at `freq` Hz (Goertzel): about
/// 1 for a steady sine at `freq`, a few hundredths for speech.
pub fn share_at(samples: &[f32], rate: u32, freq: f32) -> f32 {
    let w = 2.0 * std::f32::consts::PI * freq / rate as f32;
    let (mut s1, mut s2) = (0f32, 0f32);
    for &v in samples {
        let s0 = v + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let tone = (s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2) * 2.0 / samples.len().max(1) as f32;
    let total: f32 = samples.iter().map(|v| v * v).sum();
    tone / total.max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sine_is_its_tone_and_not_another() {
        let sine: Vec<f32> = (0..1600)
            .map(|i| (2.0 * std::f32::consts::PI * 659.3 * i as f32 / 16_000.0).sin())
            .collect();
        assert!(share_at(&sine, 16_000, 659.3) > 0.9);
        assert!(share_at(&sine, 16_000, 1318.5) < 0.05);
    }
}
