//! The Python programs the tests and benches run as peers, each in the virtual environment
//! `scripts/setup --test` makes for it under `${XDG_CACHE_HOME:-$HOME/.cache}/hearth/peers/`
//! (never the system Python), and how a test finds that environment's interpreter: an
//! environment variable per venv overrides the place.
//!
//! Only `std`: `hearth-stt`'s tests, which do not depend on this crate, include this file by
//! path (`#[path = "../../hearth-testkit/src/venv.rs"]`).

use std::path::PathBuf;
use std::process::Command;

/// The fix a missing venv or package names.
pub const FIX: &str = "run scripts/setup --test";

/// A virtual environment of Python test peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Venv {
    /// `test-peers` (`$HEARTH_PEER_PYTHON`): wyoming 1.10.2 (the reference Wyoming client),
    /// wyoming-faster-whisper 3.8.1 (a third-party Wyoming ASR server), jinja2 (chat
    /// templates as Hugging Face renders them) and llama-cpp-python[server] 0.3.36 (an
    /// OpenAI-compatible server); their pins agree.
    Peers,
    /// `wyoming-satellite` (`$HEARTH_SATELLITE_PYTHON`): wyoming-satellite 1.0.0, which pins
    /// wyoming 1.4.1.
    Satellite,
    /// `wyoming-openwakeword` (`$HEARTH_OPENWAKEWORD_PYTHON`): wyoming-openwakeword 1.8.2,
    /// which pins wyoming 1.2.0 and needs NumPy 1.
    OpenWakeWord,
    /// `homeassistant` (`$HEARTH_HOMEASSISTANT_PYTHON`): Home Assistant 2024.3.3 (the newest
    /// that runs on Python 3.11) with `josepy<2`, without which its onboarding API fails; the
    /// real Home Assistant the tests start (`homeassistant.rs`), run as `python -m homeassistant`.
    HomeAssistant,
    /// `wyoming-piper` (`$HEARTH_PIPER_PYTHON`): wyoming-piper 2.5.2 on piper-tts 1.8 (the
    /// Piper add-on's text-to-speech server), which wants wyoming 1.11.
    Piper,
}

impl Venv {
    /// The folder's name under the peers directory.
    pub fn name(self) -> &'static str {
        match self {
            Venv::Peers => "test-peers",
            Venv::Satellite => "wyoming-satellite",
            Venv::OpenWakeWord => "wyoming-openwakeword",
            Venv::HomeAssistant => "homeassistant",
            Venv::Piper => "wyoming-piper",
        }
    }

    /// The environment variable naming another interpreter.
    pub fn env_var(self) -> &'static str {
        match self {
            Venv::Peers => "HEARTH_PEER_PYTHON",
            Venv::Satellite => "HEARTH_SATELLITE_PYTHON",
            Venv::OpenWakeWord => "HEARTH_OPENWAKEWORD_PYTHON",
            Venv::HomeAssistant => "HEARTH_HOMEASSISTANT_PYTHON",
            Venv::Piper => "HEARTH_PIPER_PYTHON",
        }
    }
}

/// Where `scripts/setup --test` puts the venvs: `$XDG_CACHE_HOME/hearth/peers`, else
/// `$HOME/.cache/hearth/peers` (empty values count as unset, as in the script).
pub fn peers_dir() -> PathBuf {
    let get = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let cache = get("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(get("HOME").unwrap_or_default()).join(".cache"));
    cache.join("hearth").join("peers")
}

/// The venv's interpreter: its environment variable ([`Venv::env_var`]) when set, else
/// `bin/python` in [`peers_dir`]`/NAME`.
pub fn python(venv: Venv) -> PathBuf {
    match std::env::var_os(venv.env_var()).filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => peers_dir().join(venv.name()).join("bin").join("python"),
    }
}

/// The venv's interpreter when it imports `module` (run from `/`: in the checkout the Rust
/// `wyoming/` crate's folder would pass for the Python package), else why not, with the fix.
pub fn require(venv: Venv, module: &str) -> Result<PathBuf, String> {
    let python = python(venv);
    let why = match Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .current_dir("/")
        .output()
    {
        Ok(out) if out.status.success() => return Ok(python),
        Ok(out) => String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string(),
        Err(e) => e.to_string(),
    };
    Err(format!(
        "{} cannot import {module} ({why}): {FIX} (it makes the venv {}; ${} names another python)",
        python.display(),
        peers_dir().join(venv.name()).display(),
        venv.env_var()
    ))
}
