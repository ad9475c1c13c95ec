//! The earcon: a short sound that tells the person speaking that hearth heard its wake word
//! (or `Listen()`) and is listening for the request. `[listen] earcon`: `"chime"` (the
//! default, made here: no file), `"none"`, or a WAV file of at most [`MAX_SECS`].
//!
//! Playback plays it as a *cue*, not a reply (`PlaybackMsg::Cue`): no `Started`/`Stopped`
//! events, so neither Listen's playback gate nor the turn's state hears of it; with echo
//! cancellation on, the canceller takes it out of the microphone like anything played.

use std::path::{Path, PathBuf};

use super::wav;
use super::AudioError;
use crate::voice::{f32_to_i16, Pcm};

/// The longest earcon file accepted, seconds (it plays while the person goes on speaking).
pub(crate) const MAX_SECS: f32 = 2.0;

/// The rate the chime is made at.
const CHIME_RATE: u32 = 16_000;
/// The chime's two notes (Hz, ms): a rising fifth, E6 then B6.
const CHIME_NOTES: [(f32, u32); 2] = [(1318.5, 70), (1975.5, 110)];
/// The chime's peak level (about −14 dBFS: heard, never louder than a reply).
const CHIME_PEAK: f32 = 0.2;

/// What `[listen] earcon` names.
#[derive(Debug, Clone, PartialEq)]
pub enum Earcon {
    /// No sound.
    None,
    /// hearth's own chime ([`chime`]).
    Chime,
    /// A WAV file.
    File(PathBuf),
}

impl Earcon {
    /// `"chime"`, `"none"` or a WAV file's path (relative: to the working directory).
    pub fn parse(value: &str) -> Earcon {
        match value.trim() {
            "none" => Earcon::None,
            "chime" => Earcon::Chime,
            path => Earcon::File(PathBuf::from(path)),
        }
    }

    /// The sound, or `None` for [`Earcon::None`]; a file is read and checked now.
    pub fn load(&self) -> Result<Option<Pcm>, AudioError> {
        match self {
            Earcon::None => Ok(None),
            Earcon::Chime => Ok(Some(chime())),
            Earcon::File(path) => load_file(path).map(Some),
        }
    }
}

/// Two short sine notes with soft edges (5 ms in, an exponential fade out), 180 ms in all.
pub fn chime() -> Pcm {
    let rate = CHIME_RATE as f32;
    let mut samples = Vec::new();
    for (freq, ms) in CHIME_NOTES {
        let n = (rate * ms as f32 / 1000.0) as usize;
        let attack = (rate * 0.005) as usize;
        for i in 0..n {
            let t = i as f32 / rate;
            let rise = (i as f32 / attack as f32).min(1.0);
            let fall = (-4.0 * i as f32 / n as f32).exp();
            let s = CHIME_PEAK * rise * fall * (2.0 * std::f32::consts::PI * freq * t).sin();
            samples.push(f32_to_i16(s));
        }
    }
    Pcm {
        samples: samples.into(),
        rate: CHIME_RATE,
    }
}

/// A WAV file as an earcon: downmixed to mono, at most [`MAX_SECS`].
fn load_file(path: &Path) -> Result<Pcm, AudioError> {
    let clip = wav::read_mono(path)?;
    let secs = clip.samples.len() as f32 / clip.rate as f32;
    if secs > MAX_SECS {
        return Err(AudioError::UnsupportedWav {
            path: path.to_path_buf(),
            reason: format!(
                "{secs:.1} s long; an earcon plays while the person goes on speaking: give one \
                 of at most {MAX_SECS} s, or [listen] earcon = \"chime\""
            ),
        });
    }
    Ok(Pcm {
        samples: clip.samples.iter().map(|&s| f32_to_i16(s)).collect(),
        rate: clip.rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chime_is_short_soft_and_ends_in_silence() {
        let c = chime();
        assert_eq!(c.rate, CHIME_RATE);
        let secs = c.samples.len() as f32 / c.rate as f32;
        assert!((0.15..0.25).contains(&secs), "{secs}");
        let peak = c
            .samples
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0);
        assert!(peak > 3000 && peak < 7000, "{peak}");
        let last = c.samples[c.samples.len() - 16..]
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0);
        assert!(last < 200, "{last}");
    }

    #[test]
    fn names_and_files() {
        assert_eq!(Earcon::parse("none"), Earcon::None);
        assert_eq!(Earcon::parse(" chime "), Earcon::Chime);
        assert_eq!(
            Earcon::parse("/usr/share/sounds/ding.wav"),
            Earcon::File("/usr/share/sounds/ding.wav".into())
        );
        assert_eq!(Earcon::None.load().unwrap(), None);
        assert!(Earcon::Chime.load().unwrap().is_some());
    }

    #[test]
    fn a_file_is_read_and_one_too_long_or_missing_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("hearth-earcon-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, secs: f32| {
            let path = dir.join(name);
            let mut w = wav::WavSink::create(&path, 22_050).unwrap();
            w.write_i16(&vec![1000i16; (22_050.0 * secs) as usize])
                .unwrap();
            w.finalize().unwrap();
            path
        };
        let ok = Earcon::File(write("short.wav", 0.3))
            .load()
            .unwrap()
            .unwrap();
        assert_eq!(ok.rate, 22_050);
        assert_eq!(ok.samples.len(), 6615);
        let long = write("long.wav", 3.0);
        let e = Earcon::File(long.clone()).load().unwrap_err().to_string();
        assert!(
            e.contains(&long.display().to_string()) && e.contains("at most 2 s"),
            "{e}"
        );
        let missing = dir.join("missing.wav");
        let e = Earcon::File(missing.clone())
            .load()
            .unwrap_err()
            .to_string();
        assert!(e.contains(&missing.display().to_string()), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
