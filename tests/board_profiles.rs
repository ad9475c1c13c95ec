//! The board profiles in `hardware/` (`hearth run --board NAME`): each is a valid hearth.toml
//! (the same checked schema), is the one built into the binary, and sets what a board must:
//! CPU threads that leave a core free, GPU layers (only the Jetson has a GPU llama.cpp uses), an
//! ALSA microphone and speaker, the GPIO chip by label, a built-in preset and a whisper model
//! by bare file name.

use std::path::{Path, PathBuf};

use hearth::config::{Config, BOARDS};
use hearth::preset::Preset;

/// What each board is: its name, CPU cores and the label of its 40-pin header's GPIO chip.
const EXPECTED: [(&str, u32, &str); 3] = [
    ("pi5", 4, "pinctrl-rp1"),
    ("pi4", 4, "pinctrl-bcm2711"),
    ("jetson-orin-nano", 6, "tegra234-gpio"),
];

fn profile_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("hardware")
        .join(format!("{name}.toml"))
}

fn load(name: &str) -> (String, Config) {
    let path = profile_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let config = Config::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    (text, config)
}

/// A plain file name: what the profile means to be looked up in the model directory.
fn is_bare(p: &Path) -> bool {
    p.components().count() == 1 && !p.is_absolute()
}

#[test]
fn every_profile_file_is_built_in_and_every_built_in_has_its_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    files.sort();
    let mut built_in: Vec<String> = BOARDS.iter().map(|(n, _)| n.to_string()).collect();
    built_in.sort();
    assert_eq!(files, built_in, "hardware/*.toml and config::BOARDS differ");
    let mut expected: Vec<String> = EXPECTED.iter().map(|(n, _, _)| n.to_string()).collect();
    expected.sort();
    assert_eq!(files, expected);
    for (name, embedded) in BOARDS {
        let (text, _) = load(name);
        assert_eq!(
            *embedded, text,
            "the profile built into hearth differs from hardware/{name}.toml (rebuild)"
        );
    }
}

#[test]
fn each_profile_parses_and_sets_what_a_board_must() {
    let builtin_presets = Preset::builtin_names();
    for (name, cores, chip) in EXPECTED {
        let (_, c) = load(name);
        let ctx = format!("hardware/{name}.toml");

        // threads: set, and at least one core left for audio and the OS
        let threads = c
            .agent
            .threads
            .unwrap_or_else(|| panic!("{ctx}: [agent] threads"));
        assert!(
            (1..cores).contains(&threads),
            "{ctx}: [agent] threads = {threads} of {cores} cores"
        );
        let stt_threads = c
            .stt
            .threads
            .unwrap_or_else(|| panic!("{ctx}: [stt] threads"));
        assert!(
            (1..cores).contains(&stt_threads),
            "{ctx}: [stt] threads = {stt_threads} of {cores} cores"
        );

        // GPU layers: said explicitly on every board
        assert!(c.agent.gpu_layers.is_some(), "{ctx}: [agent] gpu_layers");

        // the GPIO chip by its label, not a gpiochip number
        assert_eq!(c.gpio.chip.as_deref(), Some(chip), "{ctx}: [gpio] chip");

        // a built-in preset; a model file, if named, by bare file name
        let preset = c
            .agent
            .preset
            .as_deref()
            .unwrap_or_else(|| panic!("{ctx}: [agent] preset"));
        assert!(
            builtin_presets.iter().any(|p| p == preset),
            "{ctx}: preset {preset:?} is not one of {builtin_presets:?}"
        );
        Preset::load(preset).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        if let Some(m) = &c.agent.model {
            assert!(
                is_bare(m),
                "{ctx}: [agent] model {} is not a bare file name",
                m.display()
            );
            assert!(
                m.to_string_lossy().ends_with(".gguf"),
                "{ctx}: [agent] model {}",
                m.display()
            );
        } else {
            let p = Preset::load(preset).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert!(
                p.model.is_some(),
                "{ctx}: preset {preset} names no model file, so the profile must set [agent] model"
            );
        }

        // an English whisper model by bare file name, one `hearth models pull whisper:NAME`
        // fetches and checks; no Wyoming server in a profile
        let stt = c
            .stt
            .model
            .as_deref()
            .unwrap_or_else(|| panic!("{ctx}: [stt] model"));
        let stt_name = stt.to_string_lossy();
        assert!(is_bare(stt), "{ctx}: [stt] model {stt_name}");
        let entry = hearth::speech_models::by_file(stt).unwrap_or_else(|| {
            panic!("{ctx}: [stt] model {stt_name} is not in models/whisper.toml")
        });
        assert!(entry.name.contains(".en"), "{ctx}: [stt] model {stt_name}");
        assert!(
            text_of(name).contains(&format!("hearth models pull {}", entry.full_name())),
            "{ctx}: say how to fetch {stt_name}"
        );
        assert!(c.stt.server.is_none(), "{ctx}: [stt] server");

        // sound devices named on ALSA: a system service has no PulseAudio/PipeWire
        for (key, dev) in [("mic", &c.audio.mic), ("speaker", &c.audio.speaker)] {
            let dev = dev
                .as_deref()
                .unwrap_or_else(|| panic!("{ctx}: [audio] {key}"));
            assert!(
                dev.starts_with("alsa:") && dev.contains("CARD="),
                "{ctx}: [audio] {key} = {dev:?}: name an ALSA card"
            );
        }
    }
}

#[test]
fn only_the_jetson_offloads_layers_to_the_gpu() {
    for (name, _, _) in EXPECTED {
        let (text, c) = load(name);
        let layers = c.agent.gpu_layers.unwrap_or(0);
        if name == "jetson-orin-nano" {
            assert!(
                layers >= 99,
                "{name}: gpu_layers = {layers}, expected all layers (99)"
            );
            assert!(
                text.contains("--features cuda"),
                "{name}: the profile must say that it needs a build with --features cuda"
            );
        } else {
            assert_eq!(
                layers, 0,
                "{name}: a Raspberry Pi has no GPU llama.cpp can use"
            );
        }
    }
}

#[test]
fn whisper_models_follow_the_boards_speed() {
    let model = |name: &str| {
        load(name)
            .1
            .stt
            .model
            .map(|m| m.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    assert_eq!(model("pi4"), "ggml-tiny.en.bin");
    assert_eq!(model("pi5"), "ggml-base.en-q8_0.bin");
    assert_eq!(model("jetson-orin-nano"), "ggml-base.en.bin");
}

fn text_of(name: &str) -> String {
    load(name).0
}

#[test]
fn a_users_file_wins_over_the_profile_key_by_key() {
    for (name, _, chip) in EXPECTED {
        let (text, base) = load(name);
        let user = "[audio]\nmic = \"alsa:plughw:CARD=Mine,DEV=0\"\n\n[agent]\ntools = \"/etc/hearth/tools\"\n";
        let merged = Config::over_board(
            name,
            &text,
            Some((user, Path::new("/etc/hearth/hearth.toml"))),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            merged.audio.mic.as_deref(),
            Some("alsa:plughw:CARD=Mine,DEV=0")
        );
        assert_eq!(
            merged.audio.speaker, base.audio.speaker,
            "{name}: speaker kept"
        );
        assert_eq!(
            merged.agent.tools.as_deref(),
            Some(Path::new("/etc/hearth/tools"))
        );
        assert_eq!(
            merged.agent.threads, base.agent.threads,
            "{name}: threads kept"
        );
        assert_eq!(merged.gpio.chip.as_deref(), Some(chip));
    }
}
