//! The Tts stage: a Piper voice in this process (piper-rs), or a Wyoming text-to-speech server.
//!
//! ```text
//! Agent ─Speakable─► TtsActor ─TtsEvent::Audio(Pcm), SentenceDone─► (Playback)
//! ```
//!
//! The actor takes only [`Speakable`] text (one sentence per message, as the agent's
//! `SentenceSplitter` cuts it, tagged with the reply it belongs to) and synthesises the sentences in order, one at a time, on a
//! dedicated worker thread: synthesis is blocking work and never runs on the async runtime.
//! piper-rs cannot stream (it returns a whole sentence's samples from one ONNX run), and a
//! server's sentence is taken whole as well ([`ServerVoice`]), so each sentence goes out as
//! **one** [`crate::voice::TtsEvent::Audio`] chunk the moment it exists, followed by
//! [`crate::voice::TtsEvent::SentenceDone`] with its timings; the next sentence is already being synthesised
//! while Playback plays that one. A short sentence spoken lately (a tool's confirmation: "The
//! kitchen light is on.") is kept with its audio, a bounded few, and played again at once.
//!
//! [`TtsMsg::Cancel`] drops every queued sentence at once. The sentence being synthesised cannot
//! be interrupted inside its ONNX run (piper-rs gives no handle on it), so it finishes in the
//! background (one sentence: ~0.1–0.5 s) and its audio is discarded: after `Cancel`, no audio
//! of a sentence spoken before it is ever sent.
//!
//! What a Piper voice needs at run time, each found before anything is loaded, so that a missing
//! piece is a clear [`TtsError`] naming the file and the fix, never a hang or a panic:
//! - the voice: `<name>.onnx` and `<name>.onnx.json` ([`TtsConfig::default_voice`] looks in
//!   the model directory, [`crate::models::model_dir`]; `scripts/fetch-models` puts
//!   [`DEFAULT_VOICE`] there);
//! - the ONNX Runtime shared library, found and test-loaded by [`crate::onnx`] (ort
//!   2.0.0-rc.12 deadlocks on a library it cannot load);
//! - espeak-ng's data (phoneme tables and dictionaries; [`find_espeak_data`]), handed to the
//!   espeak-ng that piper-rs compiles in through `PIPER_ESPEAKNG_DATA_DIRECTORY`.
//!
//! Both the ONNX Runtime library and espeak-ng are process-wide: the first voice loaded fixes
//! which library and which data directory the process uses. espeak-ng is not thread-safe, so
//! voices in one process synthesise one at a time.
//!
//! Licence: piper-rs compiles in espeak-ng (GPL-3.0), so a binary built with the `piper` feature
//! is GPL-3.0 as a whole. Without it the voice is a Wyoming text-to-speech server's
//! ([`ServerVoice`], `[tts] server`), in a separate program.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::speech::Speakable;
use crate::voice::{Pcm, ReplyId};

/// The default voice's file stem: Piper en_US-joe-medium (22050 Hz), fetched by
/// `scripts/fetch-models`.
pub(crate) const DEFAULT_VOICE: &str = "en_US-joe-medium";
/// The environment variable naming the directory that holds `espeak-ng-data` (piper-rs's
/// convention).
pub(crate) const ESPEAK_DATA_ENV: &str = "PIPER_ESPEAKNG_DATA_DIRECTORY";
/// The espeak-ng data directory's own name.
pub(crate) const ESPEAK_DATA_DIR: &str = "espeak-ng-data";

/// What to say when espeak-ng data is missing.
const ESPEAK_FIX: &str = "install Debian's espeak-ng-data package (scripts/setup), or set PIPER_ESPEAKNG_DATA_DIRECTORY to the directory that holds espeak-ng-data";

/// Errors of the Tts stage. Each message names the file or setting and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TtsError {
    /// No model directory to find the default voice in.
    #[error(transparent)]
    ModelDir(#[from] crate::models::ModelError),
    /// ONNX Runtime cannot be found or loaded.
    #[error(transparent)]
    Runtime(#[from] crate::onnx::OnnxError),
    /// A voice file (`.onnx` or `.onnx.json`) is not there.
    #[error("Piper voice file {} is missing: {fix}", path.display())]
    VoiceMissing {
        /// The file looked for.
        path: PathBuf,
        /// How to get it.
        fix: String,
    },
    /// The voice's `.onnx.json` cannot be read or is not a Piper voice config.
    #[error("Piper voice config {} is unusable: {cause}; use the .onnx.json that belongs to the voice (`hearth models pull voice:en_US-joe-medium` fetches the default one)", path.display())]
    VoiceConfig {
        /// The config file.
        path: PathBuf,
        /// What is wrong.
        cause: String,
    },
    /// espeak-ng's data is not where it was looked for (or lacks a file the voice needs).
    #[error("espeak-ng data not found: {problem}; {ESPEAK_FIX}")]
    EspeakMissing {
        /// What was looked for and where.
        problem: String,
    },
    /// ONNX Runtime rejected the voice model.
    #[error("cannot load the Piper voice {}: {cause}; the file may be damaged: fetch it again (`hearth models pull`)", path.display())]
    ModelLoad {
        /// The `.onnx` file.
        path: PathBuf,
        /// ONNX Runtime's error.
        cause: String,
    },
    /// Synthesising one sentence failed (phonemisation or inference).
    #[error("speech synthesis failed: {0}")]
    Synthesis(String),
    /// The worker thread could not be started, or is gone.
    #[error("the TTS worker thread {0}; restart hearth")]
    Worker(String),
    /// The text-to-speech server (`[tts] server`) did not speak.
    #[error("the text-to-speech server {uri}: {problem}; check that it runs and that [tts] server names it (wyoming-piper listens on tcp://HOST:10200), and that [tts] voice is a voice it has")]
    Server {
        /// The server as configured.
        uri: String,
        /// What went wrong.
        problem: String,
    },
    /// A Piper voice was asked of a build without it.
    #[error("this hearth was built without Piper voices (the `piper` feature): set [tts] server to a Wyoming text-to-speech server (wyoming-piper, Home Assistant's Piper add-on), or build with the `piper` feature")]
    NoPiper,
}

/// How to make a voice: its files, and where its run-time pieces are.
#[derive(Debug, Clone, PartialEq)]
pub struct TtsConfig {
    /// The voice model, `<name>.onnx`.
    pub model: PathBuf,
    /// The voice config, `<name>.onnx.json`.
    pub config: PathBuf,
    /// The directory holding `espeak-ng-data` (or that directory itself); `None`: look in the
    /// usual places ([`find_espeak_data`]).
    pub espeak_data: Option<PathBuf>,
    /// The ONNX Runtime library file; `None`: look in the usual places
    /// ([`crate::onnx::find_library`]).
    pub ort_library: Option<PathBuf>,
    /// ONNX Runtime intra-op threads; `None`: ONNX Runtime's default (one per core).
    pub threads: Option<usize>,
    /// Speaking rate: phoneme length scale (1.0 is the voice's own pace, above is slower);
    /// `None`: the voice config's value.
    pub length_scale: Option<f32>,
    /// Variation in how each phoneme sounds (Piper's `noise_scale`; 0 is the same sound every
    /// time, the default voices use about 0.667); `None`: the voice config's value.
    pub noise_scale: Option<f32>,
    /// Variation in how long each phoneme lasts (Piper's `noise_w`; 0 is none, about 0.8 is
    /// usual); `None`: the voice config's value.
    pub noise_w: Option<f32>,
}

impl TtsConfig {
    /// The voice `model` (`<name>.onnx`) with its config beside it (`<name>.onnx.json`) and
    /// everything else looked up.
    pub fn new(model: impl Into<PathBuf>) -> Self {
        let model = model.into();
        let mut config = model.clone().into_os_string();
        config.push(".json");
        TtsConfig {
            model,
            config: PathBuf::from(config),
            espeak_data: None,
            ort_library: None,
            threads: None,
            length_scale: None,
            noise_scale: None,
            noise_w: None,
        }
    }

    /// [`DEFAULT_VOICE`] in the model directory ([`crate::models::model_dir`]). The files are
    /// not checked here: [`Voice::load`] does, with the fix in its error.
    pub fn default_voice() -> Result<Self, TtsError> {
        let dir = crate::models::model_dir()?;
        Ok(Self::new(dir.join(format!("{DEFAULT_VOICE}.onnx"))))
    }
}

/// What [`TtsConfig::resolve`] found: everything a voice needs, checked without loading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The ONNX Runtime library file to load.
    pub ort_library: PathBuf,
    /// The directory holding `espeak-ng-data`.
    pub espeak_data: PathBuf,
    /// The voice's sample rate (from its `.onnx.json`).
    pub sample_rate: u32,
    /// The voice's espeak-ng voice (from its `.onnx.json`).
    pub espeak_voice: String,
}

impl TtsConfig {
    /// Check, without loading anything, that everything the voice needs is there: the voice
    /// files, its config's sample rate and espeak voice, espeak-ng's data for that voice and
    /// the ONNX Runtime library. The first missing piece is the error, naming the file and
    /// the fix. Quick (file checks only), so it is also what a health check can call.
    pub fn resolve(&self) -> Result<Resolved, TtsError> {
        check_voice_file(&self.model)?;
        check_voice_file(&self.config)?;
        let bad = |cause: String| TtsError::VoiceConfig {
            path: self.config.clone(),
            cause,
        };
        let text = std::fs::read_to_string(&self.config).map_err(|e| bad(e.to_string()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let sample_rate = json
            .pointer("/audio/sample_rate")
            .and_then(serde_json::Value::as_u64)
            .and_then(|r| u32::try_from(r).ok())
            .filter(|&r| r > 0)
            .ok_or_else(|| bad("no audio.sample_rate (a positive integer)".to_string()))?;
        let espeak_voice = json
            .pointer("/espeak/voice")
            .and_then(serde_json::Value::as_str)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| bad("no espeak.voice (e.g. \"en-us\")".to_string()))?
            .to_string();
        let env = |k: &str| std::env::var_os(k);
        let espeak_data = find_espeak_data(
            self.espeak_data.as_deref(),
            env,
            crate::models::exe_dir().as_deref(),
            &espeak_voice,
        )?;
        let ort_library = crate::onnx::find_library(
            self.ort_library.as_deref(),
            env,
            &crate::onnx::search_dirs(&self.model),
        )?;
        Ok(Resolved {
            ort_library,
            espeak_data,
            sample_rate,
            espeak_voice,
        })
    }
}

/// What to say when a voice file is missing.
fn voice_fix(path: &Path) -> String {
    let is_default = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(DEFAULT_VOICE));
    if is_default {
        "run `hearth models pull voice:en_US-joe-medium`, or set HEARTH_MODEL_DIR to the directory that holds it".to_string()
    } else {
        "put the Piper voice's .onnx and .onnx.json side by side there, or name another voice"
            .to_string()
    }
}

/// Check that a voice file exists and is a file.
pub(crate) fn check_voice_file(path: &Path) -> Result<(), TtsError> {
    if path.is_file() {
        Ok(())
    } else {
        Err(TtsError::VoiceMissing {
            path: path.to_path_buf(),
            fix: voice_fix(path),
        })
    }
}

/// The files espeak-ng cannot start without (inside `espeak-ng-data`).
const ESPEAK_CORE_FILES: [&str; 4] = ["phontab", "phonindex", "phondata", "intonations"];

/// The directory that holds `espeak-ng-data` (what `PIPER_ESPEAKNG_DATA_DIRECTORY` names),
/// checked to have espeak-ng's core files and the dictionary of `language` (an espeak voice
/// such as `en-us`: needs `en_dict`).
///
/// Looks, in order: `explicit` (the holding directory or `espeak-ng-data` itself; must be
/// complete); `$PIPER_ESPEAKNG_DATA_DIRECTORY` when set (must be complete); the multiarch
/// `/usr/lib/<triple>` directories that exist (Debian's `espeak-ng-data` package), `/usr/share`,
/// `/usr/local/share`; `exe_dir`. Missing data is [`TtsError::EspeakMissing`] naming the files.
pub(crate) fn find_espeak_data(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
    exe_dir: Option<&Path>,
    language: &str,
) -> Result<PathBuf, TtsError> {
    let dict = format!(
        "{}_dict",
        language.split(['-', '_']).next().unwrap_or(language)
    );
    // the holding directory for a path given as either the holder or espeak-ng-data itself
    let holder = |p: &Path| -> PathBuf {
        if p.file_name().is_some_and(|n| n == ESPEAK_DATA_DIR) && !p.join(ESPEAK_DATA_DIR).is_dir()
        {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            p.to_path_buf()
        }
    };
    let check = |holder: &Path| -> Result<(), String> {
        let data = holder.join(ESPEAK_DATA_DIR);
        if !data.is_dir() {
            return Err(format!("no directory {}", data.display()));
        }
        for f in ESPEAK_CORE_FILES.iter().copied().chain([dict.as_str()]) {
            let p = data.join(f);
            if !p.is_file() {
                return Err(format!("{} is missing", p.display()));
            }
        }
        Ok(())
    };
    if let Some(p) = explicit {
        let h = holder(p);
        return check(&h)
            .map(|()| h)
            .map_err(|problem| TtsError::EspeakMissing {
                problem: format!("the configured espeak-ng data directory is unusable: {problem}"),
            });
    }
    if let Some(v) = env(ESPEAK_DATA_ENV).filter(|v| !v.is_empty()) {
        let h = holder(Path::new(&v));
        return check(&h)
            .map(|()| h)
            .map_err(|problem| TtsError::EspeakMissing {
                problem: format!("{ESPEAK_DATA_ENV} is set, but {problem}"),
            });
    }
    let mut candidates: Vec<PathBuf> = crate::onnx::multiarch_lib_dirs();
    candidates.push(PathBuf::from("/usr/share"));
    candidates.push(PathBuf::from("/usr/local/share"));
    candidates.extend(exe_dir.map(Path::to_path_buf));
    let mut problems = Vec::new();
    for c in &candidates {
        match check(c) {
            Ok(()) => return Ok(c.clone()),
            // a directory that is there but incomplete is worth naming; absent ones are listed
            Err(p) if c.join(ESPEAK_DATA_DIR).is_dir() => problems.push(p),
            Err(_) => {}
        }
    }
    let looked = candidates
        .iter()
        .map(|c| c.join(ESPEAK_DATA_DIR).display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut problem =
        format!("looked for {looked} (with {dict} for the voice's language {language:?})");
    if !problems.is_empty() {
        problem.push_str(&format!("; {}", problems.join("; ")));
    }
    Err(TtsError::EspeakMissing { problem })
}

/// What a loaded voice is.
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceInfo {
    /// The voice model file.
    pub model: PathBuf,
    /// Its output sample rate in Hz (22050 for a Piper medium voice).
    pub sample_rate: u32,
    /// The espeak-ng voice used for phonemes (e.g. `en-us`).
    pub espeak_voice: String,
}

/// One synthesised sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesis {
    /// The speech, mono 16-bit at the voice's rate.
    pub pcm: Pcm,
    /// Time spent synthesising, ms.
    pub synth_ms: f64,
}

impl Synthesis {
    /// Real-time factor: synthesis time over audio time (below 1 is faster than real time).
    pub fn rtf(&self) -> f64 {
        let secs = self.pcm.secs();
        if secs > 0.0 {
            self.synth_ms / 1000.0 / secs
        } else {
            0.0
        }
    }
}

/// Messages to the [`TtsActor`].
#[derive(Debug)]
pub enum TtsMsg {
    /// Queue a sentence of `reply`; sentences are spoken in the order they arrive.
    Speak { reply: ReplyId, sentence: Speakable },
    /// Synthesise a sentence a reply is about to say and keep its audio (the sentences
    /// spoken lately), so that its `Speak` plays at once; nothing is sent. A short sentence
    /// only: a long one would not be kept.
    Prepare(Speakable),
    /// Drop every queued sentence and the audio of the one being synthesised.
    Cancel,
    /// What the voice is (its sample rate, ...).
    Info(ractor::RpcReplyPort<VoiceInfo>),
}

/// Where a pipeline's speech comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum VoiceSource {
    /// A Piper voice in this process (the `piper` feature).
    Piper(TtsConfig),
    /// A Wyoming text-to-speech server (`[tts] server`).
    Server(ServerConfig),
}

impl From<TtsConfig> for VoiceSource {
    fn from(piper: TtsConfig) -> Self {
        VoiceSource::Piper(piper)
    }
}

impl VoiceSource {
    /// What can be checked before anything loads: a Piper voice's files, espeak-ng data and
    /// ONNX Runtime ([`TtsConfig::resolve`]), and its sample rate; a server is checked when
    /// its voice loads (`None`: its rate is not known before).
    pub fn check(&self) -> Result<Option<u32>, TtsError> {
        match self {
            VoiceSource::Piper(_) if !cfg!(feature = "piper") => Err(TtsError::NoPiper),
            VoiceSource::Piper(piper) => Ok(Some(piper.resolve()?.sample_rate)),
            VoiceSource::Server(_) => Ok(None),
        }
    }
}

mod actor;
#[cfg(feature = "piper")]
mod piper;
mod server;

pub use actor::TtsActor;
#[cfg(feature = "piper")]
pub use piper::Voice;
pub use server::{ServerConfig, ServerVoice};

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hearth-tts-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn config_puts_the_json_beside_the_model() {
        let c = TtsConfig::new("/m/en_US-joe-medium.onnx");
        assert_eq!(c.config, PathBuf::from("/m/en_US-joe-medium.onnx.json"));
    }

    #[test]
    fn espeak_data_lookup_checks_the_files() {
        let d = tmp("espeak");
        let data = d.join(ESPEAK_DATA_DIR);
        std::fs::create_dir_all(&data).unwrap();
        for f in ESPEAK_CORE_FILES {
            std::fs::write(data.join(f), b"x").unwrap();
        }
        // no dictionary for the language: named
        let err = find_espeak_data(Some(&d), env_of(&[]), None, "en-us").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("en_dict is missing"), "{text}");
        assert!(
            text.contains("PIPER_ESPEAKNG_DATA_DIRECTORY") && text.contains("espeak-ng-data"),
            "{text}"
        );
        std::fs::write(data.join("en_dict"), b"x").unwrap();
        // the holder or espeak-ng-data itself
        assert_eq!(
            find_espeak_data(Some(&d), env_of(&[]), None, "en-us").unwrap(),
            d
        );
        assert_eq!(
            find_espeak_data(Some(&data), env_of(&[]), None, "en").unwrap(),
            d
        );
        // the environment variable, when set, must be right
        let err = find_espeak_data(
            None,
            env_of(&[(ESPEAK_DATA_ENV, "/nonexistent")]),
            None,
            "en-us",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/espeak-ng-data"),
            "{err}"
        );
        assert_eq!(
            find_espeak_data(
                None,
                env_of(&[(ESPEAK_DATA_ENV, d.to_str().unwrap())]),
                None,
                "en-us"
            )
            .unwrap(),
            d
        );
    }

    #[test]
    fn missing_voice_file_names_the_fix() {
        let err = check_voice_file(Path::new("/nonexistent/en_US-joe-medium.onnx")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/en_US-joe-medium.onnx"),
            "{text}"
        );
        assert!(
            text.contains("hearth models pull voice:en_US-joe-medium"),
            "{text}"
        );
        let text = check_voice_file(Path::new("/x/other.onnx"))
            .unwrap_err()
            .to_string();
        assert!(!text.contains("models pull"), "{text}");
    }

    #[test]
    fn rtf_is_synthesis_over_audio_time() {
        let s = Synthesis {
            pcm: Pcm {
                samples: vec![0; 22050].into(),
                rate: 22050,
            },
            synth_ms: 250.0,
        };
        assert!((s.rtf() - 0.25).abs() < 1e-9);
    }
}
