//! Any UTF-8 as `hearth.toml`: parsed and checked (`Config::parse`), laid over every built-in
//! board profile as `--board` does (`Config::over_board`: merge, serialise, parse again), then
//! resolved into settings as `hearth run` does at start, for every answer that needs neither
//! the file system nor the network (the preset when it is a built-in one, the bus, devices,
//! echo cancellation, provider limits, the speech server, the earcon's kind). Must hold: no
//! panic; an error is fine. Left out because they look at files: the model paths (a bare
//! file name is looked up in the working directory first), a preset file, the tools
//! directory and the connections of `[mqtt]` and `[homeassistant]` (their credential files).
#![no_main]

use std::ffi::OsString;
use std::path::Path;

use hearth::audio::earcon::Earcon;
use hearth::config::{Config, BOARDS};
use hearth::preset::Preset;
use hearth::settings::{Flags, Settings, SttChoice};
use libfuzzer_sys::fuzz_target;

/// The environment the settings see: a model directory, nothing else.
fn env(key: &str) -> Option<OsString> {
    (key == "HEARTH_MODEL_DIR").then(|| OsString::from("/nonexistent/hearth-fuzz/models"))
}

fn resolve(config: Config) {
    let path = Path::new("/etc/hearth/hearth.toml").to_path_buf();
    let s = Settings::with_env(Flags::default(), config, Some(path), env);
    if Preset::builtin_names().iter().any(|n| n == s.preset_name()) {
        let _ = s.preset();
    }
    let _ = s.bus();
    let _ = s.echo_cancel(true, true);
    let _ = s.device(s.mic());
    let _ = s.device(s.speaker());
    let _ = s.provider_limits();
    let _ = s.stt_prompt();
    if s.config.stt.server.is_some() {
        // the server branch names no file
        assert!(matches!(s.stt(), Ok(SttChoice::Server(_))));
    }
    if let Some(e) = &s.config.listen.earcon {
        let _ = Earcon::parse(e);
    }
    if let Some(m) = &s.config.mqtt {
        let _ = hearth::config::broker_address(&m.url);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("hearth.toml");
    let Ok(config) = Config::parse(text, path) else {
        return;
    };
    resolve(config);
    for (name, profile) in BOARDS {
        if let Ok(config) = Config::over_board(name, profile, Some((text, path))) {
            resolve(config);
        }
    }
});
