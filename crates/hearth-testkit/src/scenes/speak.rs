// Speech for the scenes, 16 kHz mono f32: the Piper voice in-process (at a pace and a noise
// scale) and espeak-ng as a second, very different voice (its command-line program, 22050 Hz,
// resampled with hearth's resampler). Clips can be kept in a directory so that a second run
// hears exactly the same audio: Piper draws its variation from ONNX Runtime's random generator,
// which piper-rs gives no way to seed.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::mix::RATE;

/// What the espeak-ng program is called, and how to get it.
pub const ESPEAK: &str = "espeak-ng";
const ESPEAK_FIX: &str = "install it with scripts/setup (apt package espeak-ng)";

/// A voice and how it speaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Voice {
    /// The Piper voice (`TtsConfig::default_voice`) at `length_scale` (above 1 is slower) and
    /// `noise_scale` (how much each phoneme's sound varies).
    Piper { length_scale: f32, noise_scale: f32 },
    /// espeak-ng's `en-us` voice at `wpm` words a minute.
    Espeak { wpm: u32 },
}

/// Piper's paces, fast to slow.
pub const PIPER_PACES: [f32; 3] = [0.85, 1.0, 1.2];
/// Piper's noise scales (0.667 is the voice's own).
pub const PIPER_NOISE: [f32; 3] = [0.333, 0.667, 1.0];
/// espeak-ng's rates, fast to slow (175 is its default).
pub const ESPEAK_WPM: [u32; 3] = [210, 175, 140];

impl Voice {
    /// "piper" or "espeak-ng".
    pub fn name(&self) -> &'static str {
        match self {
            Voice::Piper { .. } => "piper",
            Voice::Espeak { .. } => "espeak-ng",
        }
    }

    /// "fast", "normal" or "slow".
    pub fn speed(&self) -> &'static str {
        let i = match *self {
            Voice::Piper { length_scale, .. } => PIPER_PACES
                .iter()
                .position(|&p| p == length_scale)
                .unwrap_or(1),
            Voice::Espeak { wpm } => ESPEAK_WPM.iter().position(|&w| w == wpm).unwrap_or(1),
        };
        ["fast", "normal", "slow"][i.min(2)]
    }

    /// The voice and its settings, e.g. "piper ×0.85 n0.667" or "espeak-ng 175 wpm".
    pub fn label(&self) -> String {
        match *self {
            Voice::Piper {
                length_scale,
                noise_scale,
            } => format!("piper ×{length_scale} n{noise_scale}"),
            Voice::Espeak { wpm } => format!("espeak-ng {wpm} wpm"),
        }
    }

    /// A name for files: no spaces or symbols.
    fn file_key(&self) -> String {
        match *self {
            Voice::Piper {
                length_scale,
                noise_scale,
            } => format!("piper-{length_scale}-{noise_scale}"),
            Voice::Espeak { wpm } => format!("espeak-{wpm}"),
        }
    }
}

/// Checks that espeak-ng runs.
pub fn check_espeak() -> Result<(), String> {
    match Command::new(ESPEAK).arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{ESPEAK} --version failed ({}): {}; {ESPEAK_FIX}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {ESPEAK} ({e}): {ESPEAK_FIX}")),
    }
}

/// `text` spoken by espeak-ng's `en-us` voice at `wpm`, through the WAV file `scratch`.
pub fn espeak(text: &str, wpm: u32, scratch: &Path) -> Result<Vec<f32>, String> {
    espeak_as("en-us", text, wpm, scratch)
}

/// `text` spoken by the espeak-ng voice `voice` (`-v`: "en-us", or a variant such as
/// "en-us+f3", a female voice) at `wpm`, through the WAV file `scratch`, 16 kHz.
pub fn espeak_as(voice: &str, text: &str, wpm: u32, scratch: &Path) -> Result<Vec<f32>, String> {
    let out = Command::new(ESPEAK)
        .args(["-v", voice, "-s", &wpm.to_string(), "-w"])
        .arg(scratch)
        .arg("--")
        .arg(text)
        .output()
        .map_err(|e| format!("cannot run {ESPEAK} ({e}): {ESPEAK_FIX}"))?;
    if !out.status.success() {
        return Err(format!(
            "{ESPEAK} failed on {text:?} ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let clip = hearth::audio::wav::read_mono(scratch)
        .map_err(|e| format!("reading what {ESPEAK} said: {e}"))?;
    hearth::audio::resample::resample(&clip.samples, clip.rate, RATE).map_err(|e| e.to_string())
}

/// Speaks with any [`Voice`], keeping one Piper voice loaded (the last one used: loading takes
/// about a second, so speak one voice's clips together).
pub struct Speaker {
    piper: Option<(Voice, hearth::tts::Voice)>,
    scratch: PathBuf,
}

impl Speaker {
    /// A speaker whose espeak-ng output goes through files in `scratch_dir`.
    pub fn new(scratch_dir: &Path) -> Result<Speaker, String> {
        std::fs::create_dir_all(scratch_dir)
            .map_err(|e| format!("creating {}: {e}", scratch_dir.display()))?;
        Ok(Speaker {
            piper: None,
            scratch: scratch_dir.join(format!("espeak-{}.wav", std::process::id())),
        })
    }

    /// `text` spoken by `voice`, 16 kHz.
    pub fn speak(&mut self, voice: Voice, text: &str) -> Result<Vec<f32>, String> {
        match voice {
            Voice::Espeak { wpm } => espeak(text, wpm, &self.scratch),
            Voice::Piper {
                length_scale,
                noise_scale,
            } => {
                if self.piper.as_ref().map(|(v, _)| *v) != Some(voice) {
                    self.piper = None; // one loaded voice at a time
                    self.piper = Some((voice, piper_voice(length_scale, Some(noise_scale))?));
                }
                let Some((_, piper)) = self.piper.as_mut() else {
                    return Err("the Piper voice did not load".into());
                };
                piper_say(piper, text)
            }
        }
    }
}

/// The Piper voice (`TtsConfig::default_voice`) loaded at `length_scale` and `noise_scale`
/// (`None`: the voice's own).
pub fn piper_voice(
    length_scale: f32,
    noise_scale: Option<f32>,
) -> Result<hearth::tts::Voice, String> {
    let fix =
        |e: hearth::tts::TtsError| format!("{e} (run scripts/setup and scripts/fetch-models)");
    let mut config = hearth::tts::TtsConfig::default_voice().map_err(fix)?;
    config.length_scale = Some(length_scale);
    config.noise_scale = noise_scale;
    hearth::tts::Voice::load(&config).map_err(fix)
}

/// `text` spoken by a loaded Piper voice, 16 kHz.
pub fn piper_say(piper: &mut hearth::tts::Voice, text: &str) -> Result<Vec<f32>, String> {
    let said = piper
        .synthesize(text)
        .map_err(|e| format!("speaking {text:?}: {e}"))?;
    hearth::audio::resample::pcm_at(&said.pcm, RATE).map_err(|e| e.to_string())
}

impl Drop for Speaker {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.scratch);
    }
}

/// Clips kept as 32-bit float WAVs under a directory, one folder per voice, named by a hash
/// of the text (FNV-1a, stable across builds), so a re-run reuses them exactly.
pub struct ClipCache {
    dir: PathBuf,
    /// Ignore what is there (and overwrite it).
    pub fresh: bool,
    /// Clips made / found this run.
    pub made: usize,
    pub found: usize,
}

impl ClipCache {
    pub fn new(dir: &Path, fresh: bool) -> ClipCache {
        ClipCache {
            dir: dir.to_path_buf(),
            fresh,
            made: 0,
            found: 0,
        }
    }

    /// Where `text` by `voice` is kept.
    pub fn path(&self, voice: Voice, text: &str) -> PathBuf {
        self.dir
            .join(voice.file_key())
            .join(format!("{:016x}.wav", fnv1a(text.as_bytes())))
    }

    /// The clip, from the cache or spoken now (and kept).
    pub fn get(
        &mut self,
        speaker: &mut Speaker,
        voice: Voice,
        text: &str,
    ) -> Result<Vec<f32>, String> {
        let path = self.path(voice, text);
        if !self.fresh {
            if let Ok(clip) = hearth::audio::wav::read_mono(&path) {
                if clip.rate == RATE {
                    self.found += 1;
                    return Ok(clip.samples);
                }
            }
        }
        let samples = speaker.speak(voice, text)?;
        write_f32_wav(&path, &samples)?;
        self.made += 1;
        Ok(samples)
    }
}

/// FNV-1a, 64 bits.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Writes 16 kHz mono samples as a 32-bit float WAV (exact: reading it back gives the same
/// samples), through a temporary file renamed into place.
pub fn write_f32_wav(path: &Path, samples: &[f32]) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
    }
    let tmp = path.with_extension("part");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: RATE,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(&tmp, spec).map_err(|e| failed(&e))?;
    for &s in samples {
        w.write_sample(s).map_err(|e| failed(&e))?;
    }
    w.finalize().map_err(|e| failed(&e))?;
    std::fs::rename(&tmp, path).map_err(|e| failed(&e))
}
