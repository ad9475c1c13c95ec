//! Downmixing to mono and rubato resampling: whole clips ([`resample`]) and streams
//! ([`StreamResampler`], fed in pieces of any size, for devices and stdin).
//!
//! Both use rubato's FFT resampler (a fixed ratio is what it is made for) and trim its startup
//! delay, so a signal keeps its timing: output sample `i` is input time `i / to`.

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Indexing, Resampler};

use super::AudioError;

/// Lowest sample rate accepted.
pub const MIN_RATE: u32 = 1_000;
/// Highest sample rate accepted.
pub const MAX_RATE: u32 = 384_000;

/// Input frames per FFT chunk.
const CHUNK: usize = 1024;

/// Checks that `rate` is one this module converts.
pub(crate) fn check_rate(rate: u32) -> Result<(), AudioError> {
    if (MIN_RATE..=MAX_RATE).contains(&rate) {
        Ok(())
    } else {
        Err(AudioError::Rate(rate))
    }
}

/// Averages interleaved frames of `channels` samples into mono, appending to `out`. A trailing
/// partial frame is ignored.
pub(crate) fn downmix_into(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    match channels {
        0 => {}
        1 => out.extend_from_slice(interleaved),
        n => {
            let scale = 1.0 / n as f32;
            out.extend(
                interleaved
                    .chunks_exact(n)
                    .map(|f| f.iter().sum::<f32>() * scale),
            );
        }
    }
}

/// Interleaved frames averaged into mono.
pub(crate) fn downmix(interleaved: &[f32], channels: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(interleaved.len() / channels.max(1));
    downmix_into(interleaved, channels, &mut out);
    out
}

/// A chunk of synthesised speech as floats in [-1, 1), resampled to `rate` Hz (a voice's
/// 22,050 Hz for whisper's 16,000).
pub fn pcm_at(pcm: &crate::voice::Pcm, rate: u32) -> Result<Vec<f32>, AudioError> {
    let samples: Vec<f32> = pcm
        .samples
        .iter()
        .map(|&s| crate::voice::i16_to_f32(s))
        .collect();
    resample(&samples, pcm.rate, rate)
}

/// Resamples a whole mono clip from `from` Hz to `to` Hz: `ceil(len × to / from)` samples out.
pub fn resample(samples: &[f32], from: u32, to: u32) -> Result<Vec<f32>, AudioError> {
    check_rate(from)?;
    check_rate(to)?;
    if from == to || samples.is_empty() {
        return Ok(samples.to_vec());
    }
    let failed = |reason: String| AudioError::Resample { from, to, reason };
    let input =
        InterleavedSlice::new(samples, 1, samples.len()).map_err(|e| failed(e.to_string()))?;
    let mut resampler = Fft::<f32>::new(from as usize, to as usize, CHUNK, 1, FixedSync::Input)
        .map_err(|e| failed(e.to_string()))?;
    let output = resampler
        .process_all(&input, samples.len(), None)
        .map_err(|e| failed(e.to_string()))?;
    Ok(output.take_data())
}

/// A mono stream resampler: push pieces of any length, get what is ready; [`finish`] flushes
/// the tail. Over a whole stream it produces `ceil(n × to / from)` samples for `n` in, aligned
/// like [`resample`] (the startup delay is trimmed). Equal rates pass straight through.
///
/// [`finish`]: StreamResampler::finish
pub(crate) struct StreamResampler {
    from: u32,
    to: u32,
    inner: Option<Inner>,
}

struct Inner {
    fft: Fft<f32>,
    /// Input waiting for a whole chunk.
    pending: Vec<f32>,
    /// One chunk's output.
    scratch: Vec<f32>,
    /// Output frames still to drop (the resampler's delay).
    to_trim: usize,
    /// Input samples pushed since the start.
    total_in: u64,
    /// Output samples handed out since the start.
    total_out: u64,
}

impl StreamResampler {
    /// A resampler from `from` Hz to `to` Hz.
    pub fn new(from: u32, to: u32) -> Result<Self, AudioError> {
        check_rate(from)?;
        check_rate(to)?;
        let inner = if from == to {
            None
        } else {
            let fft = Fft::<f32>::new(from as usize, to as usize, CHUNK, 1, FixedSync::Input)
                .map_err(|e| AudioError::Resample {
                    from,
                    to,
                    reason: e.to_string(),
                })?;
            let to_trim = fft.output_delay();
            let scratch = vec![0.0; fft.output_frames_max()];
            Some(Inner {
                pending: Vec::with_capacity(fft.input_frames_max() * 2),
                scratch,
                fft,
                to_trim,
                total_in: 0,
                total_out: 0,
            })
        };
        Ok(StreamResampler { from, to, inner })
    }

    /// Input rate.
    pub(crate) fn input_rate(&self) -> u32 {
        self.from
    }

    /// Feeds `input`; appends whatever output is ready to `out`.
    pub fn push(&mut self, input: &[f32], out: &mut Vec<f32>) -> Result<(), AudioError> {
        let Some(inner) = self.inner.as_mut() else {
            out.extend_from_slice(input);
            return Ok(());
        };
        inner.total_in += input.len() as u64;
        inner.pending.extend_from_slice(input);
        let (from, to) = (self.from, self.to);
        loop {
            let need = inner.fft.input_frames_next();
            if inner.pending.len() < need {
                break;
            }
            inner.chunk(from, to, need, None, out)?;
        }
        Ok(())
    }

    /// Flushes the tail: the rest of the input (padded with silence inside the resampler)
    /// comes out, so the stream's total output is `ceil(n × to / from)`. The resampler is then
    /// ready for a new stream.
    pub fn finish(&mut self, out: &mut Vec<f32>) -> Result<(), AudioError> {
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        let (from, to) = (self.from, self.to);
        let expected = (inner.total_in as u128 * u128::from(to)).div_ceil(u128::from(from)) as u64;
        // the partial chunk, then silence until the expected length is out
        let mut guard = 0;
        while inner.total_out < expected {
            let need = inner.fft.input_frames_next();
            let have = inner.pending.len().min(need);
            let cap = (expected - inner.total_out) as usize;
            inner.chunk(from, to, have, Some(cap), out)?;
            guard += 1;
            if guard > 10_000 {
                return Err(AudioError::Resample {
                    from,
                    to,
                    reason: "the resampler produced no output while flushing".into(),
                });
            }
        }
        inner.fft.reset();
        inner.pending.clear();
        inner.to_trim = inner.fft.output_delay();
        inner.total_in = 0;
        inner.total_out = 0;
        Ok(())
    }
}

impl Inner {
    /// Processes one chunk of `take` pending frames (fewer than a full chunk is padded with
    /// silence), appending at most `cap` trimmed output frames to `out`.
    fn chunk(
        &mut self,
        from: u32,
        to: u32,
        take: usize,
        cap: Option<usize>,
        out: &mut Vec<f32>,
    ) -> Result<(), AudioError> {
        let failed = |reason: String| AudioError::Resample { from, to, reason };
        let need = self.fft.input_frames_next();
        let take = take.min(need);
        // a short (final) chunk: rubato pads it with silence when told its length
        let indexing = (take < need).then(|| Indexing::new().partial_len(take));
        let adapter = InterleavedSlice::new(&self.pending[..take], 1, take)
            .map_err(|e| failed(e.to_string()))?;
        let frames_out = self.scratch.len();
        let mut out_adapter = InterleavedSlice::new_mut(&mut self.scratch, 1, frames_out)
            .map_err(|e| failed(e.to_string()))?;
        let (_consumed, produced) = self
            .fft
            .process_into_buffer(&adapter, &mut out_adapter, indexing.as_ref())
            .map_err(|e| failed(e.to_string()))?;
        self.pending.drain(..take);
        let trim = self.to_trim.min(produced);
        self.to_trim -= trim;
        let mut ready = &self.scratch[trim..produced];
        if let Some(cap) = cap {
            ready = &ready[..ready.len().min(cap)];
        }
        out.extend_from_slice(ready);
        self.total_out += ready.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(freq: f32, rate: u32, n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (i as f32 * freq * std::f32::consts::TAU / rate as f32).sin() * 0.5)
            .collect()
    }

    fn rising_crossings(s: &[f32]) -> usize {
        s.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count()
    }

    #[test]
    fn downmix_averages() {
        assert_eq!(downmix(&[1.0, 0.0, 0.5, 0.5, 0.2], 2), [0.5, 0.5]);
        assert_eq!(downmix(&[0.1, 0.2], 1), [0.1, 0.2]);
        assert!(downmix(&[0.1, 0.2], 0).is_empty());
    }

    #[test]
    fn whole_clip_keeps_length_and_pitch() {
        let out = resample(&tone(440.0, 22050, 22050), 22050, 16000).unwrap();
        assert_eq!(out.len(), 16000);
        let crossings = rising_crossings(&out[2000..14000]);
        assert!((crossings as f64 - 330.0).abs() <= 2.0, "{crossings}");
    }

    #[test]
    fn rejects_bad_rates() {
        assert!(matches!(
            resample(&[0.0], 0, 16000),
            Err(AudioError::Rate(0))
        ));
        assert!(matches!(
            StreamResampler::new(16000, 10_000_000),
            Err(AudioError::Rate(10_000_000))
        ));
    }

    #[test]
    fn stream_matches_the_whole_clip_in_any_piece_sizes() {
        for (from, to) in [
            (48000, 16000),
            (22050, 48000),
            (44100, 16000),
            (16000, 16000),
        ] {
            let input = tone(300.0, from, from as usize * 3 / 2 + 17);
            let whole = resample(&input, from, to).unwrap();
            let mut r = StreamResampler::new(from, to).unwrap();
            let mut out = Vec::new();
            let mut rest = &input[..];
            let mut step = 1;
            while !rest.is_empty() {
                let n = step.min(rest.len());
                r.push(&rest[..n], &mut out).unwrap();
                rest = &rest[n..];
                step = step * 3 + 1;
            }
            r.finish(&mut out).unwrap();
            assert_eq!(out.len(), whole.len(), "{from}->{to}");
            let diff = out
                .iter()
                .zip(&whole)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-3, "{from}->{to}: {diff}");
            // and again after finish: a fresh stream
            let mut again = Vec::new();
            r.push(&input, &mut again).unwrap();
            r.finish(&mut again).unwrap();
            assert_eq!(again.len(), whole.len());
        }
    }
}
