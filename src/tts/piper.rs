//! A Piper voice in this process (the `piper` feature): piper-rs on ONNX Runtime, with the
//! espeak-ng it compiles in; loaded once per configuration and shared by the pipelines that
//! speak with it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use piper_rs::{ModelConfig, Piper};
use tracing::{debug, info, warn};

use super::{Synthesis, TtsConfig, TtsError, VoiceInfo, ESPEAK_DATA_ENV};
use crate::voice::{f32_to_i16, Pcm};

/// A loaded Piper voice: synthesises one sentence at a time (blocking).
pub struct Voice {
    piper: Piper,
    info: VoiceInfo,
    length_scale: Option<f32>,
    noise_scale: Option<f32>,
    noise_w: Option<f32>,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice").field("info", &self.info).finish()
    }
}

impl Voice {
    /// Load the voice (blocking: ~1 s; call it from a blocking context). Checks, in this
    /// order and before loading anything, the voice files, the espeak-ng data and the
    /// ONNX Runtime library; each missing piece is an error naming it and the fix.
    pub fn load(cfg: &TtsConfig) -> Result<Voice, TtsError> {
        let found = cfg.resolve()?;
        let bad = |cause: String| TtsError::VoiceConfig {
            path: cfg.config.clone(),
            cause,
        };
        let text = std::fs::read_to_string(&cfg.config).map_err(|e| bad(e.to_string()))?;
        let config: ModelConfig = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let info = VoiceInfo {
            model: cfg.model.clone(),
            sample_rate: found.sample_rate,
            espeak_voice: found.espeak_voice.clone(),
        };
        // ONNX Runtime first: a library that does not load fails here, before espeak-ng's
        // data directory is fixed for the process
        let (ort_library, ort_version) = crate::onnx::load(&found.ort_library)?;
        use_espeak_data(&found.espeak_data);

        let started = Instant::now();
        let session = build_session(cfg)?;
        let piper = Piper::from_session(session, config);
        info!(
            model = %cfg.model.display(),
            rate = info.sample_rate,
            espeak_voice = %info.espeak_voice,
            ort = %ort_library.display(),
            ort_version = %ort_version,
            espeak_data = %found.espeak_data.display(),
            load_ms = started.elapsed().as_secs_f64() * 1000.0,
            "Piper voice loaded"
        );
        Ok(Voice {
            piper,
            info,
            length_scale: cfg.length_scale,
            noise_scale: cfg.noise_scale,
            noise_w: cfg.noise_w,
        })
    }

    /// What the voice is.
    pub fn info(&self) -> &VoiceInfo {
        &self.info
    }

    /// Synthesise `text` (blocking). The text should be one sentence; any text works.
    pub fn synthesize(&mut self, text: &str) -> Result<Synthesis, TtsError> {
        let started = Instant::now();
        let (length_scale, noise_scale, noise_w) =
            (self.length_scale, self.noise_scale, self.noise_w);
        let piper = &mut self.piper;
        // espeak-ng is one process-wide C library and not thread-safe: two voices
        // phonemising at once corrupt its voice list. One synthesis at a time per process.
        let _espeak = ESPEAK_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        // piper-rs unwraps in places; a panic there must not take the worker down
        let out = catch_unwind(AssertUnwindSafe(|| {
            piper.create(text, false, None, length_scale, noise_scale, noise_w)
        }))
        .map_err(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            TtsError::Synthesis(format!("piper-rs panicked: {msg}"))
        })?
        .map_err(|e| TtsError::Synthesis(e.to_string()))?;
        let (samples, rate) = out;
        let samples: Arc<[i16]> = samples.iter().map(|&s| f32_to_i16(s)).collect();
        Ok(Synthesis {
            pcm: Pcm { samples, rate },
            synth_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

/// Held while a voice synthesises (see [`Voice::synthesize`]).
static ESPEAK_LOCK: Mutex<()> = Mutex::new(());

/// A voice the process's pipelines share.
pub(super) type SharedVoice = Arc<Mutex<Voice>>;

/// Where one configuration's voice is kept once loaded; its lock is held while it loads.
type Slot = Arc<Mutex<std::sync::Weak<Mutex<Voice>>>>;

/// The voices loaded in this process, by configuration: every pipeline that speaks with
/// the same voice (the local microphone's, each satellite's) shares one, one model in
/// memory. Sharing costs nothing in speed: synthesis is one at a time per process
/// anyway ([`ESPEAK_LOCK`]). A voice no pipeline holds any more is dropped.
static LOADED: Mutex<Vec<(TtsConfig, Slot)>> = Mutex::new(Vec::new());

/// The voice `cfg` makes: the one loaded already, else loaded now (blocking: ~1 s). Two
/// pipelines starting at once with one voice load it once (the second waits on its
/// slot); another voice's load does not wait.
pub(super) fn shared_voice(cfg: &TtsConfig) -> Result<SharedVoice, TtsError> {
    let slot = {
        let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        // a slot nobody uses and whose voice is gone
        loaded.retain(|(_, slot)| {
            Arc::strong_count(slot) > 1
                || slot.lock().map(|w| w.strong_count() > 0).unwrap_or(false)
        });
        match loaded.iter().find(|(c, _)| c == cfg) {
            Some((_, slot)) => slot.clone(),
            None => {
                let slot = Slot::default();
                loaded.push((cfg.clone(), slot.clone()));
                slot
            }
        }
    };
    let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(voice) = held.upgrade() {
        debug!(model = %cfg.model.display(), "Piper voice shared");
        return Ok(voice);
    }
    let voice = Arc::new(Mutex::new(Voice::load(cfg)?));
    *held = Arc::downgrade(&voice);
    Ok(voice)
}

fn build_session(cfg: &TtsConfig) -> Result<ort::session::Session, TtsError> {
    let err = |e: String| TtsError::ModelLoad {
        path: cfg.model.clone(),
        cause: e,
    };
    let mut builder = crate::onnx::builder().map_err(err)?;
    if let Some(n) = cfg.threads.filter(|&n| n > 0) {
        builder = builder
            .with_intra_threads(n)
            .map_err(|e| err(e.to_string()))?;
    }
    builder
        .commit_from_file(&cfg.model)
        .map_err(|e| err(e.to_string()))
}

/// The espeak-ng data directory this process uses (espeak-ng initialises once).
static ESPEAK_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Point the bundled espeak-ng at `dir` (through `PIPER_ESPEAKNG_DATA_DIRECTORY`, the only
/// way piper-rs takes it) before its first use.
fn use_espeak_data(dir: &Path) {
    let first = ESPEAK_DIR.get_or_init(|| {
        if std::env::var_os(ESPEAK_DATA_ENV).as_deref() != Some(dir.as_os_str()) {
            // Before espeak-ng's first use, once per process.
            std::env::set_var(ESPEAK_DATA_ENV, dir);
        }
        dir.to_path_buf()
    });
    if first != dir {
        warn!(
            using = %first.display(),
            asked = %dir.display(),
            "espeak-ng is already set up in this process: keeping the first data directory"
        );
    }
}
