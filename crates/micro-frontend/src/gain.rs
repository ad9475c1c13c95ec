//! Per-channel noise suppression and per-channel automatic gain control (PCAN).

/// Fractional bits of the noise-reduction smoothing coefficients.
const NOISE_REDUCTION_BITS: u32 = 14;
/// Fractional bits of the signal-to-noise ratio PCAN computes.
const PCAN_SNR_BITS: u32 = 12;
/// Fractional bits of PCAN's output.
const PCAN_OUTPUT_BITS: u32 = 6;
/// Octaves the gain table spans (one interval per bit of a 32-bit noise estimate).
const WIDE_DYNAMIC_BITS: usize = 32;
/// Three quadratic coefficients per interval from 2 up, plus the two exact entries for 0 and 1.
const GAIN_LUT_SIZE: usize = 4 * WIDE_DYNAMIC_BITS - 3;

/// Converts a Q14 fraction given as a float to its integer, truncating (as the reference does).
fn q14(x: f32) -> u32 {
    (x * (1u32 << NOISE_REDUCTION_BITS) as f32) as u16 as u32
}

/// Tracks a slow running estimate of each channel's noise floor and subtracts it, keeping at
/// least a fixed fraction of the signal.
#[derive(Clone, Debug)]
pub(crate) struct NoiseReduction {
    smoothing_bits: u32,
    even_smoothing: u32,
    odd_smoothing: u32,
    min_signal_remaining: u32,
    /// Noise estimate per channel, scaled up by `smoothing_bits`.
    pub(crate) estimate: Vec<u32>,
}

impl NoiseReduction {
    pub(crate) fn new(
        num_channels: usize,
        smoothing_bits: u32,
        even_smoothing: f32,
        odd_smoothing: f32,
        min_signal_remaining: f32,
    ) -> Self {
        Self {
            smoothing_bits,
            even_smoothing: q14(even_smoothing),
            odd_smoothing: q14(odd_smoothing),
            min_signal_remaining: q14(min_signal_remaining),
            estimate: vec![0; num_channels],
        }
    }

    pub(crate) fn apply(&mut self, signal: &mut [u32]) {
        let one = 1u64 << NOISE_REDUCTION_BITS;
        for (i, (value, estimate)) in signal.iter_mut().zip(self.estimate.iter_mut()).enumerate() {
            let smoothing = u64::from(if i % 2 == 0 {
                self.even_smoothing
            } else {
                self.odd_smoothing
            });
            let scaled_up = value.wrapping_shl(self.smoothing_bits);
            let updated = ((u64::from(scaled_up) * smoothing
                + u64::from(*estimate) * (one - smoothing))
                >> NOISE_REDUCTION_BITS) as u32;
            *estimate = updated;
            let noise = updated.min(scaled_up);
            let floor = ((u64::from(*value) * u64::from(self.min_signal_remaining))
                >> NOISE_REDUCTION_BITS) as u32;
            let subtracted = (scaled_up - noise) >> self.smoothing_bits;
            *value = subtracted.max(floor);
        }
    }

    pub(crate) fn reset(&mut self) {
        self.estimate.fill(0);
    }
}

/// Per-channel energy normalisation: divides each channel by a power of its noise estimate
/// (looked up in a piecewise-quadratic table), then compresses the result.
#[derive(Clone, Debug)]
pub(crate) struct Pcan {
    gain_lut: [i16; GAIN_LUT_SIZE],
    snr_shift: u32,
}

impl Pcan {
    /// `smoothing_bits` is the noise estimate's scale; `input_correction_bits` how far the
    /// filterbank output is from the scale the gain is defined on.
    pub(crate) fn new(
        strength: f32,
        offset: f32,
        gain_bits: u32,
        smoothing_bits: u32,
        input_correction_bits: u32,
    ) -> Self {
        let input_bits = smoothing_bits.saturating_sub(input_correction_bits);
        let gain = |x: u32| -> i16 {
            let x = x as f32 / (1u32 << input_bits) as f32;
            let g = (1u32 << gain_bits) as f32 * (x + offset).powf(-strength);
            if g > f32::from(i16::MAX) {
                i16::MAX
            } else {
                (g + 0.5) as i16
            }
        };
        let mut gain_lut = [0i16; GAIN_LUT_SIZE];
        gain_lut[0] = gain(0);
        gain_lut[1] = gain(1);
        for interval in 2..=WIDE_DYNAMIC_BITS {
            let x0 = 1u32 << (interval - 1);
            let x1 = x0 + (x0 >> 1);
            let x2 = if interval == WIDE_DYNAMIC_BITS {
                x0 + (x0 - 1)
            } else {
                2 * x0
            };
            let (y0, y1, y2) = (gain(x0), gain(x1), gain(x2));
            let diff1 = i32::from(y1) - i32::from(y0);
            let diff2 = i32::from(y2) - i32::from(y0);
            let a1 = 4 * diff1 - diff2;
            let a2 = diff2 - a1;
            let base = 4 * interval - 6;
            gain_lut[base] = y0;
            gain_lut[base + 1] = a1 as i16;
            gain_lut[base + 2] = a2 as i16;
        }
        Self {
            gain_lut,
            snr_shift: gain_bits
                .saturating_sub(input_correction_bits)
                .saturating_sub(PCAN_SNR_BITS),
        }
    }

    /// The gain for a noise estimate `x`: exact for 0..=2, otherwise a quadratic in the position
    /// within `x`'s octave.
    fn gain(&self, x: u32) -> i16 {
        if x <= 2 {
            return self.gain_lut[x as usize];
        }
        let interval = 32 - x.leading_zeros();
        let base = (4 * interval - 6) as usize;
        let frac = i32::from(
            (if interval < 11 {
                x << (11 - interval)
            } else {
                x >> (interval - 11)
            } & 0x3FF) as i16,
        );
        let (c0, c1, c2) = (
            i32::from(self.gain_lut[base]),
            i32::from(self.gain_lut[base + 1]),
            i32::from(self.gain_lut[base + 2]),
        );
        let mut result = (c2 * frac) >> 5;
        result = result.wrapping_add(c1.wrapping_shl(5));
        result = result.wrapping_mul(frac);
        result = result.wrapping_add(1 << 14) >> 15;
        result.wrapping_add(c0) as i16
    }

    /// Compresses a Q12 signal-to-noise ratio into the Q6 output: quadratic below 2, linear
    /// (minus one) above.
    fn shrink(x: u32) -> u32 {
        if x < (2 << PCAN_SNR_BITS) {
            (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS)
        } else {
            (x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1 << PCAN_OUTPUT_BITS)
        }
    }

    pub(crate) fn apply(&self, signal: &mut [u32], noise_estimate: &[u32]) {
        for (value, &noise) in signal.iter_mut().zip(noise_estimate) {
            let gain = u64::from(self.gain(noise) as i32 as u32);
            let snr = ((u64::from(*value) * gain) >> self.snr_shift) as u32;
            *value = Self::shrink(snr);
        }
    }
}
