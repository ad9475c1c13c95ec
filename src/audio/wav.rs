//! WAV files: read any common WAV (8/16/24/32-bit integer or 32-bit float PCM, any rate, any
//! channel count) as mono `f32` and resample it to 16 kHz; write mono 16-bit WAV.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::{resample, AudioError};
use crate::voice::SAMPLE_RATE;

/// Most channels accepted.
pub const MAX_CHANNELS: u16 = 64;

/// A WAV file's samples downmixed to mono, at the file's own rate.
#[derive(Debug, Clone, PartialEq)]
pub struct MonoClip {
    /// Mono samples in [-1, 1].
    pub samples: Vec<f32>,
    /// The file's sample rate.
    pub rate: u32,
    /// The file's channel count (before downmixing).
    pub channels: u16,
}

fn hound_error(path: &Path, e: hound::Error) -> AudioError {
    let path = path.to_path_buf();
    match e {
        hound::Error::IoError(source) => AudioError::Io { path, source },
        hound::Error::FormatError(reason) => AudioError::NotWav {
            path,
            reason: reason.to_string(),
        },
        hound::Error::Unsupported => AudioError::UnsupportedWav {
            path,
            reason: "a sample encoding hound does not decode (e.g. compressed or extensible)"
                .into(),
        },
        hound::Error::TooWide => AudioError::UnsupportedWav {
            path,
            reason: "samples wider than 32 bits".into(),
        },
        hound::Error::InvalidSampleFormat => AudioError::UnsupportedWav {
            path,
            reason: "the header's sample format and bit depth do not fit together".into(),
        },
        other => AudioError::NotWav {
            path,
            reason: other.to_string(),
        },
    }
}

/// Reads a WAV file and downmixes it to mono (channels averaged), at the file's own rate.
pub fn read_mono(path: impl AsRef<Path>) -> Result<MonoClip, AudioError> {
    let path = path.as_ref();
    let reader = hound::WavReader::open(path).map_err(|e| hound_error(path, e))?;
    let spec = reader.spec();
    let unsupported = |reason: String| AudioError::UnsupportedWav {
        path: path.to_path_buf(),
        reason,
    };
    if spec.channels == 0 || spec.channels > MAX_CHANNELS {
        return Err(unsupported(format!(
            "{} channels (1 to {MAX_CHANNELS} are read)",
            spec.channels
        )));
    }
    if resample::check_rate(spec.sample_rate).is_err() {
        return Err(unsupported(format!(
            "sample rate {} Hz ({} to {} Hz are read)",
            spec.sample_rate,
            resample::MIN_RATE,
            resample::MAX_RATE
        )));
    }
    let interleaved: Vec<f32> = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => reader
            .into_samples::<f32>()
            .collect::<Result<_, _>>()
            .map_err(|e| hound_error(path, e))?,
        (hound::SampleFormat::Int, bits @ (8 | 16 | 24 | 32)) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            reader
                .into_samples::<i32>()
                .map(|s| s.map(|v| v as f32 * scale))
                .collect::<Result<_, _>>()
                .map_err(|e| hound_error(path, e))?
        }
        (format, bits) => {
            return Err(unsupported(format!(
                "{bits}-bit {}",
                match format {
                    hound::SampleFormat::Float => "float",
                    hound::SampleFormat::Int => "integer",
                }
            )))
        }
    };
    Ok(MonoClip {
        samples: resample::downmix(&interleaved, usize::from(spec.channels)),
        rate: spec.sample_rate,
        channels: spec.channels,
    })
}

/// Reads a WAV file as 16 kHz mono `f32` (the pipeline's format): downmixed, then resampled
/// with rubato. `ceil(frames × 16000 / rate)` samples.
pub fn read_16k_mono(path: impl AsRef<Path>) -> Result<Vec<f32>, AudioError> {
    let clip = read_mono(path)?;
    resample::resample(&clip.samples, clip.rate, SAMPLE_RATE)
}

/// A mono 16-bit WAV file being written. Samples are appended as they come; [`flush`] makes
/// the header describe everything written so far (the file is then valid even if the process
/// dies later), [`finalize`] closes it. Dropping it finalizes too (errors then only logged).
///
/// [`flush`]: WavSink::flush
/// [`finalize`]: WavSink::finalize
pub struct WavSink {
    path: PathBuf,
    rate: u32,
    writer: Option<hound::WavWriter<BufWriter<File>>>,
    written: u64,
}

impl WavSink {
    /// Creates (or truncates) `path` for mono 16-bit samples at `rate` Hz.
    pub fn create(path: impl Into<PathBuf>, rate: u32) -> Result<Self, AudioError> {
        let path = path.into();
        resample::check_rate(rate)?;
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let writer = hound::WavWriter::create(&path, spec).map_err(|e| match e {
            hound::Error::IoError(source) => AudioError::Io {
                path: path.clone(),
                source,
            },
            other => AudioError::WavWrite {
                path: path.clone(),
                reason: other.to_string(),
            },
        })?;
        Ok(WavSink {
            path,
            rate,
            writer: Some(writer),
            written: 0,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its sample rate.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Samples written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn write_error(&self, e: hound::Error) -> AudioError {
        AudioError::WavWrite {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    fn writer(&mut self) -> Result<&mut hound::WavWriter<BufWriter<File>>, AudioError> {
        let path = self.path.clone();
        self.writer.as_mut().ok_or(AudioError::WavWrite {
            path,
            reason: "the file was already finalized".into(),
        })
    }

    /// Appends 16-bit samples.
    pub fn write_i16(&mut self, samples: &[i16]) -> Result<(), AudioError> {
        let writer = self.writer()?;
        let mut result = Ok(());
        for &s in samples {
            if let Err(e) = writer.write_sample(s) {
                result = Err(e);
                break;
            }
        }
        result.map_err(|e| self.write_error(e))?;
        self.written += samples.len() as u64;
        Ok(())
    }

    /// Appends float samples (clamped and converted to 16 bits).
    pub fn write_f32(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        let writer = self.writer()?;
        let mut result = Ok(());
        for &s in samples {
            if let Err(e) = writer.write_sample(crate::voice::f32_to_i16(s)) {
                result = Err(e);
                break;
            }
        }
        result.map_err(|e| self.write_error(e))?;
        self.written += samples.len() as u64;
        Ok(())
    }

    /// Updates the header to cover everything written so far and flushes to the OS.
    pub fn flush(&mut self) -> Result<(), AudioError> {
        let writer = self.writer()?;
        writer.flush().map_err(|e| self.write_error(e))
    }

    /// Writes the final header and closes the file.
    pub fn finalize(mut self) -> Result<(), AudioError> {
        self.finalize_inner()
    }

    fn finalize_inner(&mut self) -> Result<(), AudioError> {
        match self.writer.take() {
            Some(w) => w.finalize().map_err(|e| self.write_error(e)),
            None => Ok(()),
        }
    }
}

impl Drop for WavSink {
    fn drop(&mut self) {
        if let Err(e) = self.finalize_inner() {
            tracing::error!(error = %e, "finalizing the WAV sink on drop failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hearth-wav-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    const KITCHEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/kitchen.wav");

    #[test]
    fn kitchen_wav_has_the_right_duration_at_16k() {
        let clip = read_mono(KITCHEN).unwrap();
        assert_eq!((clip.rate, clip.channels), (22050, 1));
        let frames = clip.samples.len();
        let out = read_16k_mono(KITCHEN).unwrap();
        let expected = (frames * 16000).div_ceil(22050);
        assert_eq!(out.len(), expected);
        let secs = out.len() as f64 / 16000.0;
        assert!((secs - frames as f64 / 22050.0).abs() < 1e-3, "{secs}");
        // speech, not silence, and in range
        assert!(crate::voice::rms(&out) > 0.01);
        assert!(out.iter().all(|s| s.abs() <= 1.0));
    }

    #[test]
    fn stereo_48k_is_downmixed_and_keeps_its_pitch() {
        let path = tmp("stereo48k.wav");
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 48000,
            bits_per_sample: 24,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(&path, spec).unwrap();
        let full = (1i32 << 23) as f32;
        for i in 0..48000 {
            let t = i as f32 / 48000.0;
            let s = (t * 1000.0 * std::f32::consts::TAU).sin() * 0.5;
            // the left channel has the tone, the right one its copy plus a DC offset that
            // must average out to half
            w.write_sample((s * full) as i32).unwrap();
            w.write_sample(((s + 0.2) * full) as i32).unwrap();
        }
        w.finalize().unwrap();
        let out = read_16k_mono(&path).unwrap();
        assert_eq!(out.len(), 16000);
        let mid = &out[1000..15000];
        let mean: f32 = mid.iter().sum::<f32>() / mid.len() as f32;
        assert!((mean - 0.1).abs() < 0.01, "{mean}");
        let crossings = mid
            .windows(2)
            .filter(|w| w[0] < mean && w[1] >= mean)
            .count();
        // 1000 Hz over 14000 samples at 16 kHz: 875 cycles
        assert!((crossings as i64 - 875).abs() <= 2, "{crossings}");
        let peak = mid.iter().fold(0f32, |m, s| m.max((s - mean).abs()));
        assert!((peak - 0.5).abs() < 0.02, "{peak}");
    }

    #[test]
    fn sink_writes_a_file_hound_reads_back() {
        let path = tmp("sink.wav");
        let mut sink = WavSink::create(&path, 22050).unwrap();
        sink.write_i16(&[0, 1000, -1000, i16::MAX]).unwrap();
        sink.flush().unwrap();
        // valid mid-run, after a flush
        let r = hound::WavReader::open(&path).unwrap();
        assert_eq!(r.len(), 4);
        sink.write_f32(&[0.5, -2.0]).unwrap();
        assert_eq!(sink.written(), 6);
        sink.finalize().unwrap();
        let mut r = hound::WavReader::open(&path).unwrap();
        let spec = r.spec();
        assert_eq!(
            (spec.channels, spec.sample_rate, spec.bits_per_sample),
            (1, 22050, 16)
        );
        let s: Vec<i16> = r.samples::<i16>().map(Result::unwrap).collect();
        assert_eq!(s, [0, 1000, -1000, i16::MAX, 16384, -32767]);
    }

    #[test]
    fn sink_finalizes_on_drop() {
        let path = tmp("dropped.wav");
        {
            let mut sink = WavSink::create(&path, 16000).unwrap();
            sink.write_i16(&[7; 100]).unwrap();
        }
        assert_eq!(hound::WavReader::open(&path).unwrap().len(), 100);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let missing = tmp("no-such-file.wav");
        let e = read_16k_mono(&missing).unwrap_err();
        assert!(matches!(e, AudioError::Io { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("no-such-file.wav") && msg.contains("No such file"),
            "{msg}"
        );

        let text = tmp("text.wav");
        std::fs::write(&text, "this is not audio at all, just some text").unwrap();
        let e = read_16k_mono(&text).unwrap_err();
        assert!(matches!(e, AudioError::NotWav { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("text.wav") && msg.contains("not a WAV file"),
            "{msg}"
        );

        // 64-bit float: a real WAV in a format this module does not read
        let f64wav = tmp("f64.wav");
        let mut bytes = Vec::new();
        let data: Vec<u8> = (0..4).flat_map(|_| 0.25f64.to_le_bytes()).collect();
        bytes.extend_from_slice(b"RIFF");
        bytes.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(b"WAVEfmt ");
        bytes.extend_from_slice(&16u32.to_le_bytes());
        bytes.extend_from_slice(&3u16.to_le_bytes()); // IEEE float
        bytes.extend_from_slice(&1u16.to_le_bytes());
        bytes.extend_from_slice(&16000u32.to_le_bytes());
        bytes.extend_from_slice(&(16000u32 * 8).to_le_bytes());
        bytes.extend_from_slice(&8u16.to_le_bytes());
        bytes.extend_from_slice(&64u16.to_le_bytes());
        bytes.extend_from_slice(b"data");
        bytes.extend_from_slice(&(data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&data);
        std::fs::write(&f64wav, bytes).unwrap();
        let e = read_16k_mono(&f64wav).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(
                e,
                AudioError::UnsupportedWav { .. } | AudioError::NotWav { .. }
            ),
            "{e:?}"
        );
        assert!(msg.contains("f64.wav"), "{msg}");

        let e = WavSink::create(tmp("x.wav"), 0).map(|_| ()).unwrap_err();
        assert!(matches!(e, AudioError::Rate(0)), "{e:?}");
        let e = WavSink::create("/nonexistent-dir/x.wav", 16000)
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/x.wav"), "{e}");
    }
}
