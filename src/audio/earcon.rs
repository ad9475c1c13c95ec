//! Cues: short sounds that are no reply. The earcon tells the person speaking that hearth
//! heard its wake word (or `Listen()`) and is listening for the request (`[listen] earcon`:
//! `"chime"`, the default, made here: no file); the bell comes before what hearth says
//! unasked, an announcement or a timer ringing (`[audio] bell`: `"bell"`, the default). Either
//! may be `"none"` or a WAV file of at most [`MAX_SECS`].
//!
//! Playback plays them as *cues*, not replies (`PlaybackMsg::Cue`): no `Started`/`Stopped`
//! events, so neither Listen's playback gate nor the turn's state hears of them; with echo
//! cancellation on, the canceller takes them out of the microphone like anything played.

use std::path::{Path, PathBuf};

use super::wav;
use super::AudioError;
use crate::voice::{f32_to_i16, Cue, Pcm};

/// The longest cue file accepted, seconds (an earcon plays while the person goes on
/// speaking; the bell holds back what it announces).
pub(crate) const MAX_SECS: f32 = 2.0;

/// The rate the chime and the bell are made at.
const RATE: u32 = 16_000;
/// The chime's two notes (Hz, ms): a rising fifth, E6 then B6.
const CHIME_NOTES: [(f32, u32); 2] = [(1318.5, 70), (1975.5, 110)];
/// The chime's peak level (about −14 dBFS: heard, never louder than a reply).
const CHIME_PEAK: f32 = 0.2;
/// The bell's two notes (Hz, ms): a falling major third, E5 then C5, a doorbell's
/// ding-dong, lower and longer than the chime so the two are never confused.
const BELL_NOTES: [(f32, u32); 2] = [(659.3, 300), (523.3, 450)];
/// A struck bell's partials over its note (ratio, level): the inharmonic ones make it a bell.
const BELL_PARTIALS: [(f32, f32); 3] = [(1.0, 1.0), (2.76, 0.35), (5.4, 0.12)];
/// The bell's peak level (about −12 dBFS: it calls across a room, still under a reply).
const BELL_PEAK: f32 = 0.25;

/// The cues a voice pipeline plays (`None`: nothing for that one).
#[derive(Debug, Clone, Default)]
pub struct Cues {
    pub earcon: Option<Pcm>,
    pub bell: Option<Pcm>,
}

impl Cues {
    /// The sound for `cue`, if any.
    pub fn get(&self, cue: Cue) -> Option<&Pcm> {
        match cue {
            Cue::Earcon => self.earcon.as_ref(),
            Cue::Bell => self.bell.as_ref(),
        }
    }
}

/// What `[listen] earcon` or `[audio] bell` names.
#[derive(Debug, Clone, PartialEq)]
pub enum Earcon {
    /// No sound.
    None,
    /// hearth's own chime ([`chime`]).
    Chime,
    /// hearth's own bell ([`bell`]).
    Bell,
    /// A WAV file.
    File(PathBuf),
}

impl Earcon {
    /// `"chime"`, `"bell"`, `"none"` or a WAV file's path (relative: to the working
    /// directory).
    pub fn parse(value: &str) -> Earcon {
        match value.trim() {
            "none" => Earcon::None,
            "chime" => Earcon::Chime,
            "bell" => Earcon::Bell,
            path => Earcon::File(PathBuf::from(path)),
        }
    }

    /// The sound, or `None` for [`Earcon::None`]; a file is read and checked now.
    pub fn load(&self) -> Result<Option<Pcm>, AudioError> {
        match self {
            Earcon::None => Ok(None),
            Earcon::Chime => Ok(Some(chime())),
            Earcon::Bell => Ok(Some(bell())),
            Earcon::File(path) => load_file(path).map(Some),
        }
    }
}

/// Two short sine notes with soft edges (5 ms in, an exponential fade out), 180 ms in all.
pub fn chime() -> Pcm {
    notes(&CHIME_NOTES, &[(1.0, 1.0)], CHIME_PEAK)
}

/// Two struck bell notes, ding-dong, 750 ms in all.
pub fn bell() -> Pcm {
    notes(&BELL_NOTES, &BELL_PARTIALS, BELL_PEAK)
}

/// `tones` one after the other (Hz, ms), each made of `partials` (ratio to its note, level),
/// 5 ms in and an exponential fade out, peaking under `peak`.
fn notes(tones: &[(f32, u32)], partials: &[(f32, f32)], peak: f32) -> Pcm {
    let rate = RATE as f32;
    let total: f32 = partials.iter().map(|(_, level)| level).sum();
    let mut samples = Vec::new();
    for &(freq, ms) in tones {
        let n = (rate * ms as f32 / 1000.0) as usize;
        let attack = (rate * 0.005) as usize;
        for i in 0..n {
            let t = i as f32 / rate;
            let rise = (i as f32 / attack as f32).min(1.0);
            let fall = (-4.0 * i as f32 / n as f32).exp();
            let wave: f32 = partials
                .iter()
                .map(|&(ratio, level)| {
                    level * (2.0 * std::f32::consts::PI * freq * ratio * t).sin()
                })
                .sum();
            samples.push(f32_to_i16(peak * rise * fall * wave / total));
        }
    }
    Pcm {
        samples: samples.into(),
        rate: RATE,
    }
}

/// A WAV file as a cue: downmixed to mono, at most [`MAX_SECS`].
fn load_file(path: &Path) -> Result<Pcm, AudioError> {
    let clip = wav::read_mono(path)?;
    let secs = clip.samples.len() as f32 / clip.rate as f32;
    if secs > MAX_SECS {
        return Err(AudioError::UnsupportedWav {
            path: path.to_path_buf(),
            reason: format!(
                "{secs:.1} s long; a cue is a moment's sound: give one of at most {MAX_SECS} s"
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
        assert_eq!(c.rate, RATE);
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
    fn the_bell_is_lower_longer_and_louder_than_the_chime_and_ends_in_silence() {
        let (b, c) = (bell(), chime());
        let secs = b.samples.len() as f32 / b.rate as f32;
        assert!((0.7..0.8).contains(&secs), "{secs}");
        let peak = |p: &Pcm| {
            p.samples
                .iter()
                .map(|s| s.unsigned_abs())
                .max()
                .unwrap_or(0)
        };
        assert!(peak(&b) > peak(&c) && peak(&b) <= 8192, "{}", peak(&b));
        // its pitch: zero crossings over the first note (E5, 659 Hz) against the chime's E6
        let crossings = |p: &Pcm, ms: usize| {
            let n = p.rate as usize * ms / 1000;
            p.samples[..n]
                .windows(2)
                .filter(|w| (w[0] < 0) != (w[1] < 0))
                .count()
        };
        assert!(crossings(&b, 60) < crossings(&c, 60), "the bell is lower");
        let last = b.samples[b.samples.len() - 16..]
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0);
        assert!(last < 300, "{last}");
    }

    #[test]
    fn names_and_files() {
        assert_eq!(Earcon::parse("none"), Earcon::None);
        assert_eq!(Earcon::parse(" chime "), Earcon::Chime);
        assert_eq!(Earcon::parse("bell"), Earcon::Bell);
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
