// Speaking as a named speaker of `voices::CAST` (Piper in-process; espeak-ng, flite and sox
// as programs), and putting the speech in a `room::Room`'s reverberation. Every program and
// voice is checked before the first word: a missing one fails the run with the install
// command (espeak-ng and flite would otherwise speak with another voice without a word).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::mix::RATE;
use super::room::{keep_level, Room};
use super::speak::{espeak_as, piper_say, piper_voice, write_f32_wav, ESPEAK};
use super::voices::{espeak_has, flite_has, Cast, Engine};

pub const SOX: &str = "sox";
pub const FLITE: &str = "flite";

/// How to get a program the scenes run.
fn fix(program: &str) -> String {
    format!("install it with scripts/setup --test (apt-get install -y {program})")
}

/// What `program args` prints (stdout, then stderr), or why it did not run or failed.
fn ask<S: AsRef<std::ffi::OsStr>>(program: &str, args: &[S]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program} ({e}): {}", fix(program)))?;
    if !out.status.success() {
        let args: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
        return Err(format!(
            "{program} {} failed ({}): {}; {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            fix(program)
        ));
    }
    Ok(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// Checks that `cast` can speak here: its program and voice, and sox for a pitch shift.
pub fn check_cast(cast: &Cast) -> Result<(), String> {
    match cast.engine {
        Engine::Piper { .. } => {}
        Engine::Espeak { voice, .. } => {
            let voices = ask(ESPEAK, &["--voices"])?;
            let variants = ask(ESPEAK, &["--voices=variant"])?;
            if !espeak_has(&voices, &variants, voice) {
                return Err(format!(
                    "{ESPEAK} has no voice {voice:?} (`{ESPEAK} --voices` and `--voices=variant` \
                     list them): install apt package espeak-ng-data (scripts/setup)"
                ));
            }
        }
        Engine::Flite { voice, .. } => {
            if !flite_has(&ask(FLITE, &["-lv"])?, voice) {
                return Err(format!(
                    "{FLITE} has no voice {voice:?} (`{FLITE} -lv`): {}",
                    fix(FLITE)
                ));
            }
        }
    }
    if cast.effect().is_some() {
        check_sox()?;
    }
    Ok(())
}

/// Checks that sox runs.
pub fn check_sox() -> Result<(), String> {
    ask(SOX, &["--version"]).map(drop)
}

/// Checks what `room` needs (sox for reverberation).
pub fn check_room(room: &Room) -> Result<(), String> {
    match room.effect() {
        Some(_) => check_sox(),
        None => Ok(()),
    }
}

/// `clip` (16 kHz) through the sox `effects`, by way of two WAV files in `dir`, at the
/// active level it had.
pub fn sox(clip: &[f32], effects: &[String], dir: &Path) -> Result<Vec<f32>, String> {
    let (from, to) = (dir.join("sox-in.wav"), dir.join("sox-out.wav"));
    write_f32_wav(&from, clip)?;
    let mut args = vec![from.into_os_string(), to.clone().into_os_string()];
    args.extend(effects.iter().map(Into::into));
    ask(SOX, &args)?;
    let mut samples = read_16k(&to, SOX)?;
    keep_level(clip, &mut samples);
    Ok(samples)
}

/// A WAV file `program` wrote, 16 kHz mono.
fn read_16k(path: &Path, program: &str) -> Result<Vec<f32>, String> {
    let clip = hearth::audio::wav::read_mono(path)
        .map_err(|e| format!("reading what {program} wrote: {e}"))?;
    hearth::audio::resample::resample(&clip.samples, clip.rate, RATE).map_err(|e| e.to_string())
}

/// `text` spoken by flite's voice `voice` at duration stretch `stretch`, through the WAV file
/// `scratch`, 16 kHz.
pub fn flite(voice: &str, text: &str, stretch: f32, scratch: &Path) -> Result<Vec<f32>, String> {
    let stretch = format!("duration_stretch={stretch}");
    let args: [&std::ffi::OsStr; 8] = [
        "-voice".as_ref(),
        voice.as_ref(),
        "--setf".as_ref(),
        stretch.as_ref(),
        "-t".as_ref(),
        text.as_ref(),
        "-o".as_ref(),
        scratch.as_os_str(),
    ];
    ask(FLITE, &args)?;
    read_16k(scratch, FLITE)
}

/// `clip` in `room`'s reverberation (as it is without), its active level kept.
pub fn in_room(room: &Room, clip: Vec<f32>, dir: &Path) -> Result<Vec<f32>, String> {
    match room.effect() {
        Some(effects) => sox(&clip, &effects, dir),
        None => Ok(clip),
    }
}

/// A speaker of the cast, ready: the Piper voice loaded once per pace.
pub struct Talker {
    cast: Cast,
    piper: Vec<hearth::tts::Voice>,
    /// Where the programs' WAV files go.
    dir: PathBuf,
}

impl Talker {
    /// `cast`, checked (and Piper loaded), its scratch files in `dir`.
    pub fn load(cast: &Cast, dir: &Path) -> Result<Talker, String> {
        check_cast(cast)?;
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let piper = match cast.engine {
            Engine::Piper {
                length_scales,
                noise_scale,
            } => length_scales
                .iter()
                .map(|&l| piper_voice(l, noise_scale))
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        Ok(Talker {
            cast: *cast,
            piper,
            dir: dir.to_path_buf(),
        })
    }

    /// `text` at the pace for utterance `i` (the three in turn), 16 kHz mono.
    pub fn speak(&mut self, i: usize, text: &str) -> Result<Vec<f32>, String> {
        let pace = i % 3;
        let scratch = self.dir.join("voice.wav");
        let clip = match self.cast.engine {
            Engine::Piper { .. } => piper_say(&mut self.piper[pace], text)?,
            Engine::Espeak { voice, wpm } => espeak_as(voice, text, wpm[pace], &scratch)?,
            Engine::Flite { voice, stretch } => flite(voice, text, stretch[pace], &scratch)?,
        };
        match self.cast.effect() {
            Some(effects) => sox(&clip, &effects, &self.dir),
            None => Ok(clip),
        }
    }
}
