//! Client audio to whisper's input: PCM of any rate, width and channel count, as `audio-chunk`
//! payloads say, becomes 16 kHz mono `f32` in [-1, 1].
//!
//! Samples are little-endian signed integers of 1 to 4 bytes, as the Wyoming reference
//! implementation reads them (8-bit too is signed there). Channels are averaged. Each chunk is
//! decoded in its own format as it arrives; the utterance is resampled once, at `audio-stop`,
//! with rubato's FFT resampler (a fixed ratio on a clip held in memory is what it is made for).

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler};
use wyoming::AudioFormat;

/// whisper's sample rate.
pub const WHISPER_RATE: u32 = 16_000;

/// Lowest sample rate accepted.
pub const MIN_RATE: u32 = 1_000;
/// Highest sample rate accepted.
pub const MAX_RATE: u32 = 384_000;
/// Most channels accepted.
pub const MAX_CHANNELS: u32 = 64;

/// Frames per FFT chunk of the resampler.
const RESAMPLE_CHUNK: usize = 1024;

/// What is wrong with client audio.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// A sample width other than 1, 2, 3 or 4 bytes.
    #[error("unsupported sample width {0} bytes: 1, 2, 3 or 4 (signed little-endian PCM)")]
    Width(u32),
    /// No channels, or too many.
    #[error("unsupported channel count {0}: 1 to {MAX_CHANNELS}")]
    Channels(u32),
    /// A sample rate out of range.
    #[error("unsupported sample rate {0} Hz: {MIN_RATE} to {MAX_RATE}")]
    Rate(u32),
    /// A payload that ends inside a frame.
    #[error("an audio-chunk payload of {len} bytes is not a whole number of {frame}-byte frames")]
    PartialFrame {
        /// Payload length.
        len: usize,
        /// Bytes per frame (width × channels).
        frame: u64,
    },
    /// More audio than the server takes for one utterance, in seconds.
    #[error("the utterance is longer than the limit of {limit_seconds} s")]
    TooLong {
        /// The limit.
        limit_seconds: f64,
    },
    /// More audio than the server takes for one utterance, in bytes of PCM as sent.
    #[error("the utterance's audio is over the limit of {limit_bytes} bytes")]
    TooManyBytes {
        /// The limit.
        limit_bytes: usize,
    },
    /// The resampler could not be built or failed.
    #[error("resampling {from} Hz to {WHISPER_RATE} Hz failed: {reason}")]
    Resample {
        /// The input rate.
        from: u32,
        /// rubato's message.
        reason: String,
    },
}

/// Checks that `format` is one this module decodes.
pub fn check_format(format: &AudioFormat) -> Result<(), AudioError> {
    if !(1..=4).contains(&format.width) {
        return Err(AudioError::Width(format.width));
    }
    if !(1..=MAX_CHANNELS).contains(&format.channels) {
        return Err(AudioError::Channels(format.channels));
    }
    if !(MIN_RATE..=MAX_RATE).contains(&format.rate) {
        return Err(AudioError::Rate(format.rate));
    }
    Ok(())
}

/// Decodes interleaved PCM in `format` to mono `f32` (channels averaged), appending to `out`.
pub fn decode_mono(
    bytes: &[u8],
    format: &AudioFormat,
    out: &mut Vec<f32>,
) -> Result<(), AudioError> {
    check_format(format)?;
    let width = format.width as usize;
    let channels = format.channels as usize;
    let frame = width * channels;
    if !bytes.len().is_multiple_of(frame) {
        return Err(AudioError::PartialFrame {
            len: bytes.len(),
            frame: frame as u64,
        });
    }
    let scale = 1.0 / (channels as f32 * (1u64 << (8 * width - 1)) as f32);
    out.reserve(bytes.len() / frame);
    for frame_bytes in bytes.chunks_exact(frame) {
        let sum: i64 = frame_bytes
            .chunks_exact(width)
            .map(|s| sample(s) as i64)
            .sum();
        out.push(sum as f32 * scale);
    }
    Ok(())
}

/// One signed little-endian sample of 1 to 4 bytes, sign-extended.
fn sample(bytes: &[u8]) -> i32 {
    let mut word = [0u8; 4];
    word[4 - bytes.len()..].copy_from_slice(bytes);
    // The sample sits in the top bytes; the arithmetic shift sign-extends it.
    i32::from_le_bytes(word) >> (8 * (4 - bytes.len()))
}

/// Resamples mono audio from `from` Hz to 16 kHz.
pub fn resample_to_whisper(samples: &[f32], from: u32) -> Result<Vec<f32>, AudioError> {
    if from == WHISPER_RATE || samples.is_empty() {
        return Ok(samples.to_vec());
    }
    let failed = |reason: String| AudioError::Resample { from, reason };
    let input =
        InterleavedSlice::new(samples, 1, samples.len()).map_err(|e| failed(e.to_string()))?;
    let mut resampler = Fft::<f32>::new(
        from as usize,
        WHISPER_RATE as usize,
        RESAMPLE_CHUNK,
        1,
        FixedSync::Input,
    )
    .map_err(|e| failed(e.to_string()))?;
    let output = resampler
        .process_all(&input, samples.len(), None)
        .map_err(|e| failed(e.to_string()))?;
    Ok(output.take_data())
}

/// The audio of one utterance, collected chunk by chunk: mono samples in runs of one rate (a
/// client may change format between chunks; each chunk says its own).
///
/// Two limits hold, whichever comes first: `max_seconds` of audio, and `max_bytes` of PCM as the
/// client sent it. The seconds bound what whisper is given (at 16 kHz); the bytes bound what the
/// connection holds whatever rate, width and channel count the client announces (at 384 kHz,
/// 4-byte samples and 64 channels a minute of audio is 5.9 GB). Decoded to mono `f32`, `max_bytes`
/// of PCM take at most `4 × max_bytes` (1-byte mono samples; 2 × for 16-bit mono).
#[derive(Debug)]
pub struct Utterance {
    runs: Vec<(u32, Vec<f32>)>,
    seconds: f64,
    bytes: usize,
    max_seconds: f64,
    max_bytes: usize,
}

impl Utterance {
    /// An empty utterance that takes at most `max_seconds` of audio and `max_bytes` of PCM.
    pub fn new(max_seconds: f64, max_bytes: usize) -> Self {
        Utterance {
            runs: Vec::new(),
            seconds: 0.0,
            bytes: 0,
            max_seconds,
            max_bytes,
        }
    }

    /// Appends one chunk of PCM in `format`. A chunk that would take the utterance over either
    /// limit is refused whole (nothing of it is kept).
    pub fn push(&mut self, format: &AudioFormat, bytes: &[u8]) -> Result<(), AudioError> {
        check_format(format)?;
        let total_bytes = self.bytes.saturating_add(bytes.len());
        if total_bytes > self.max_bytes {
            return Err(AudioError::TooManyBytes {
                limit_bytes: self.max_bytes,
            });
        }
        let frames = bytes.len() as u64 / format.bytes_per_frame().max(1);
        let seconds = self.seconds + frames as f64 / f64::from(format.rate);
        if seconds > self.max_seconds {
            return Err(AudioError::TooLong {
                limit_seconds: self.max_seconds,
            });
        }
        match self.runs.last_mut() {
            Some((rate, samples)) if *rate == format.rate => decode_mono(bytes, format, samples)?,
            _ => {
                let mut samples = Vec::new();
                decode_mono(bytes, format, &mut samples)?;
                self.runs.push((format.rate, samples));
            }
        }
        self.seconds = seconds;
        self.bytes = total_bytes;
        Ok(())
    }

    /// Seconds of audio received.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Bytes of PCM received.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The whole utterance at 16 kHz.
    pub fn into_whisper_input(self) -> Result<Vec<f32>, AudioError> {
        let mut out = Vec::with_capacity((self.seconds * f64::from(WHISPER_RATE)) as usize + 1);
        for (rate, samples) in self.runs {
            out.extend(resample_to_whisper(&samples, rate)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(rate: u32, width: u32, channels: u32) -> AudioFormat {
        AudioFormat {
            rate,
            width,
            channels,
        }
    }

    #[test]
    fn decodes_every_width_signed() {
        let mut out = Vec::new();
        decode_mono(&[0x80, 0x7f, 0x00], &fmt(16000, 1, 1), &mut out).unwrap();
        assert_eq!(out, [-1.0, 127.0 / 128.0, 0.0]);
        out.clear();
        decode_mono(&[0x00, 0x80, 0xff, 0x7f], &fmt(16000, 2, 1), &mut out).unwrap();
        assert_eq!(out, [-1.0, 32767.0 / 32768.0]);
        out.clear();
        decode_mono(&[0x00, 0x00, 0xc0], &fmt(16000, 3, 1), &mut out).unwrap();
        assert_eq!(out, [-0.5]);
        out.clear();
        decode_mono(&0x4000_0000i32.to_le_bytes(), &fmt(16000, 4, 1), &mut out).unwrap();
        assert_eq!(out, [0.5]);
    }

    #[test]
    fn averages_channels() {
        let mut out = Vec::new();
        let stereo: Vec<u8> = [16384i16, -16384, 16384, 16384]
            .iter()
            .flat_map(|s| s.to_le_bytes())
            .collect();
        decode_mono(&stereo, &fmt(16000, 2, 2), &mut out).unwrap();
        assert_eq!(out, [0.0, 0.5]);
    }

    #[test]
    fn rejects_bad_formats_and_partial_frames() {
        let mut out = Vec::new();
        assert!(matches!(
            decode_mono(&[0; 4], &fmt(16000, 5, 1), &mut out),
            Err(AudioError::Width(5))
        ));
        assert!(matches!(
            decode_mono(&[0; 4], &fmt(16000, 2, 0), &mut out),
            Err(AudioError::Channels(0))
        ));
        assert!(matches!(
            decode_mono(&[0; 4], &fmt(0, 2, 1), &mut out),
            Err(AudioError::Rate(0))
        ));
        assert!(matches!(
            decode_mono(&[0; 5], &fmt(16000, 2, 2), &mut out),
            Err(AudioError::PartialFrame { len: 5, frame: 4 })
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn resamples_to_16k_keeping_length_and_pitch() {
        // One second of a 440 Hz tone at 22050 Hz.
        let tone: Vec<f32> = (0..22050)
            .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / 22050.0).sin() * 0.5)
            .collect();
        let out = resample_to_whisper(&tone, 22050).unwrap();
        assert!((out.len() as i64 - 16000).abs() <= 1, "{}", out.len());
        // Count rising zero crossings in the middle: ~440 per second.
        let mid = &out[2000..14000];
        let crossings = mid.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        let expected = 440.0 * 12000.0 / 16000.0;
        assert!((crossings as f64 - expected).abs() <= 2.0, "{crossings}");
        let peak = mid.iter().fold(0f32, |m, s| m.max(s.abs()));
        assert!((peak - 0.5).abs() < 0.02, "{peak}");
    }

    #[test]
    fn utterance_collects_runs_and_enforces_the_limit() {
        let mut u = Utterance::new(1.0, usize::MAX);
        let half_second_16k = vec![0u8; 16000]; // 8000 frames of 16-bit mono
        u.push(&fmt(16000, 2, 1), &half_second_16k).unwrap();
        let quarter_second_8k = vec![0u8; 4000];
        u.push(&fmt(8000, 2, 1), &quarter_second_8k).unwrap();
        assert!((u.seconds() - 0.75).abs() < 1e-9);
        assert!(matches!(
            u.push(&fmt(16000, 2, 1), &half_second_16k),
            Err(AudioError::TooLong { .. })
        ));
        let out = u.into_whisper_input().unwrap();
        assert!((out.len() as i64 - 12000).abs() <= 2, "{}", out.len());
    }

    #[test]
    fn the_byte_limit_holds_whatever_the_rate() {
        // 10 000 bytes: at 384 kHz, 32-bit, 64 channels that is well under the 60 s limit.
        let mut u = Utterance::new(60.0, 10_000);
        let wide = fmt(384_000, 4, 64);
        u.push(&wide, &[0; 4096]).unwrap();
        u.push(&wide, &[0; 4096]).unwrap();
        assert_eq!(u.bytes(), 8192);
        // The next chunk would make 12 288 bytes: refused whole, the utterance unchanged.
        let err = u.push(&wide, &[0; 4096]).unwrap_err();
        assert!(
            matches!(
                err,
                AudioError::TooManyBytes {
                    limit_bytes: 10_000
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("10000 bytes"), "{err}");
        assert_eq!(u.bytes(), 8192);
        // Exactly up to the limit is still taken.
        u.push(&fmt(16_000, 2, 1), &[0; 1808]).unwrap();
        assert_eq!(u.bytes(), 10_000);
    }
}
