//! The audio features microWakeWord models take: TensorFlow Lite Micro's audio frontend
//! (`tensorflow/lite/experimental/microfrontend`), reproduced in pure fixed-point Rust with the
//! configuration the `pymicro-features` 2.0.2 package uses, so the output equals that package's
//! value for value.
//!
//! Per 10 ms of 16 kHz mono audio, one frame of 40 `u16` features:
//!
//! 1. a 30 ms Hann window (Q12 coefficients) over the last 480 samples;
//! 2. the window scaled up to use the full 16 bits, then a 512-point KissFFT-style Q15 real FFT;
//! 3. power spectrum into 40 mel channels from 125 to 7500 Hz (12-bit triangular weights), then
//!    an integer square root, undoing the earlier scaling;
//! 4. noise reduction: a running per-channel noise estimate (smoothing 0.025 on even channels,
//!    0.06 on odd ones, 10 bits of extra precision) is subtracted, keeping at least 5 %;
//! 5. PCAN gain control: each channel divided by `(noise + 80)^0.95` (21-bit gain) and compressed;
//! 6. a fixed-point natural log, scaled by 2^6 and saturated to 16 bits.
//!
//! ```
//! use micro_frontend::{Frontend, FEATURE_SCALE, NUM_FEATURES};
//! let mut frontend = Frontend::new();
//! let frames = frontend.process(&[0i16; 16_000]);
//! assert_eq!(frames.len(), 98); // the first frame after 480 samples, then one per 160
//! let model_input: Vec<f32> = frames[0].iter().map(|&f| f32::from(f) * FEATURE_SCALE).collect();
//! assert_eq!(model_input.len(), NUM_FEATURES);
//! ```

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod fft;
mod filterbank;
mod gain;
mod log_scale;

use fft::{Cpx, RealFft};
use filterbank::{Filterbank, FILTERBANK_BITS};
use gain::{NoiseReduction, Pcan};

/// Sample rate the frontend expects, in Hz.
pub const SAMPLE_RATE: u32 = 16_000;
/// Features per frame (mel channels).
pub const NUM_FEATURES: usize = 40;
/// Samples per window (30 ms).
pub const WINDOW_SAMPLES: usize = 480;
/// Samples between frames (10 ms).
pub const STEP_SAMPLES: usize = 160;
/// Multiplying a feature by this gives the float microWakeWord's input quantiser expects.
pub const FEATURE_SCALE: f32 = 0.0390625;

/// One frame of features.
pub type Features = [u16; NUM_FEATURES];

/// Fractional bits of the window coefficients.
const WINDOW_BITS: u32 = 12;
const FFT_SIZE: usize = WINDOW_SAMPLES.next_power_of_two();
const LOWER_BAND_HZ: f32 = 125.0;
const UPPER_BAND_HZ: f32 = 7500.0;
const SMOOTHING_BITS: u32 = 10;
const EVEN_SMOOTHING: f32 = 0.025;
const ODD_SMOOTHING: f32 = 0.06;
const MIN_SIGNAL_REMAINING: f32 = 0.05;
const PCAN_STRENGTH: f32 = 0.95;
const PCAN_OFFSET: f32 = 80.0;
const PCAN_GAIN_BITS: u32 = 21;
const LOG_SCALE_SHIFT: u32 = 6;

/// Bits by which the filterbank output sits below the scale the later stages assume: the FFT's
/// size against the filterbank weights' precision.
const CORRECTION_BITS: u32 = FFT_SIZE.trailing_zeros() - FILTERBANK_BITS / 2;

/// Index of the highest set bit plus one (0 for 0).
fn bit_length(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// The streaming feature extractor: feed it audio in any chunk sizes, get every completed frame.
#[derive(Clone, Debug)]
pub struct Frontend {
    window: Vec<i16>,
    /// The last samples received, `used` of them valid.
    input: Vec<i16>,
    used: usize,
    /// The windowed (and then rescaled) frame.
    windowed: Vec<i16>,
    fft: RealFft,
    spectrum: Vec<Cpx>,
    energy: Vec<u32>,
    filterbank: Filterbank,
    channels: [u32; NUM_FEATURES],
    noise: NoiseReduction,
    pcan: Pcan,
}

impl Default for Frontend {
    fn default() -> Self {
        Self::new()
    }
}

impl Frontend {
    /// A frontend with microWakeWord's configuration (see the crate documentation).
    pub fn new() -> Self {
        let arg = std::f32::consts::PI * 2.0 / WINDOW_SAMPLES as f32;
        let scale = (1u32 << WINDOW_BITS) as f32;
        let window = (0..WINDOW_SAMPLES)
            .map(|i| {
                let hann = 0.5 - 0.5 * (arg * (i as f32 + 0.5)).cos();
                (hann * scale + 0.5).floor() as i16
            })
            .collect();
        let filterbank = Filterbank::new(
            NUM_FEATURES,
            LOWER_BAND_HZ,
            UPPER_BAND_HZ,
            SAMPLE_RATE,
            FFT_SIZE / 2 + 1,
        );
        let (start, end) = filterbank.bins();
        Self {
            window,
            input: vec![0; WINDOW_SAMPLES],
            used: 0,
            windowed: vec![0; WINDOW_SAMPLES],
            fft: RealFft::new(FFT_SIZE),
            spectrum: vec![Cpx::default(); FFT_SIZE / 2 + 1],
            energy: vec![0; end.saturating_sub(start)],
            filterbank,
            channels: [0; NUM_FEATURES],
            noise: NoiseReduction::new(
                NUM_FEATURES,
                SMOOTHING_BITS,
                EVEN_SMOOTHING,
                ODD_SMOOTHING,
                MIN_SIGNAL_REMAINING,
            ),
            pcan: Pcan::new(
                PCAN_STRENGTH,
                PCAN_OFFSET,
                PCAN_GAIN_BITS,
                SMOOTHING_BITS,
                CORRECTION_BITS,
            ),
        }
    }

    /// Feeds 16 kHz mono samples; returns the frames completed by them, oldest first. Samples
    /// that do not complete a frame yet are kept for the next call.
    pub fn process(&mut self, samples: &[i16]) -> Vec<Features> {
        let mut frames = Vec::with_capacity(
            (self.used + samples.len()).saturating_sub(WINDOW_SAMPLES) / STEP_SAMPLES + 1,
        );
        let mut rest = samples;
        while !rest.is_empty() {
            let take = (WINDOW_SAMPLES - self.used).min(rest.len());
            let (head, tail) = rest.split_at(take);
            self.input[self.used..self.used + take].copy_from_slice(head);
            self.used += take;
            rest = tail;
            if self.used == WINDOW_SAMPLES {
                frames.push(self.frame());
                self.input.copy_within(STEP_SAMPLES.., 0);
                self.used -= STEP_SAMPLES;
            }
        }
        frames
    }

    /// Forgets buffered samples and the noise estimates: the next call starts as on a new
    /// frontend.
    pub fn reset(&mut self) {
        self.input.fill(0);
        self.used = 0;
        self.filterbank.reset();
        self.noise.reset();
    }

    /// Computes the features of the full window in `input`.
    fn frame(&mut self) -> Features {
        let mut max_abs: i16 = 0;
        for ((out, &x), &w) in self.windowed.iter_mut().zip(&self.input).zip(&self.window) {
            let v = ((i32::from(x) * i32::from(w)) >> WINDOW_BITS) as i16;
            *out = v;
            max_abs = max_abs.max(v.wrapping_abs());
        }

        // Use as much of the FFT's 16 bits as the loudest sample allows.
        let shift = 15 - bit_length(max_abs as u32).min(15);
        for v in &mut self.windowed {
            *v = ((*v as u16 as u32) << shift) as u16 as i16;
        }
        self.fft.forward(&self.windowed, &mut self.spectrum);

        let (start, _) = self.filterbank.bins();
        for (e, c) in self.energy.iter_mut().zip(self.spectrum.iter().skip(start)) {
            let (re, im) = (i32::from(c.re), i32::from(c.im));
            *e = (re * re).wrapping_add(im * im) as u32;
        }
        self.filterbank.accumulate(&self.energy);
        self.filterbank.sqrt_into(shift, &mut self.channels);

        self.noise.apply(&mut self.channels);
        self.pcan.apply(&mut self.channels, &self.noise.estimate);

        let mut features = [0u16; NUM_FEATURES];
        log_scale::apply(
            &self.channels,
            CORRECTION_BITS,
            LOG_SCALE_SHIFT,
            &mut features,
        );
        features
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_every_step_after_the_first_window() {
        let mut frontend = Frontend::new();
        assert!(frontend.process(&[0; WINDOW_SAMPLES - 1]).is_empty());
        assert_eq!(frontend.process(&[0; 1]).len(), 1);
        assert!(frontend.process(&[0; STEP_SAMPLES - 1]).is_empty());
        assert_eq!(frontend.process(&[0; 1 + 2 * STEP_SAMPLES]).len(), 3);
    }

    #[test]
    fn extreme_input_does_not_panic() {
        let mut frontend = Frontend::new();
        let mut loud = vec![i16::MIN; 4000];
        loud.extend(std::iter::repeat_n(i16::MAX, 4000));
        loud.extend((0..4000).map(|i| if i % 2 == 0 { i16::MIN } else { i16::MAX }));
        assert_eq!(frontend.process(&loud).len(), (12_000 - 480) / 160 + 1);
    }
}
