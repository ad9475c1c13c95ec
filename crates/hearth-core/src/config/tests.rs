//! The configuration file's tests: every key read, every problem named with its fix.

use super::*;
use std::collections::{BTreeSet, HashMap};

/// The keys of `[section]` as the code reads them: the list serde gives with an unknown
/// key's error.
fn keys_of(section: &str) -> BTreeSet<String> {
    let text = match section {
        "" => "not_a_key = 0\n".to_string(),
        _ => format!("[{section}]\nnot_a_key = 0\n"),
    };
    let e = toml::from_str::<Config>(&text).expect_err("an unknown key is an error");
    let e = e.to_string();
    let (_, expected) = e
        .split_once("expected one of ")
        .or_else(|| e.split_once("expected "))
        .unwrap_or_else(|| panic!("[{section}]: no list of keys in {e}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The guide's key list (docs/guide.md, "Configuration"): a line
/// `- `[section]`: `key`, `key` (a note), …` per section.
fn guide_keys() -> Vec<(String, BTreeSet<String>)> {
    let guide = include_str!("../../../../docs/guide.md");
    guide
        .lines()
        .filter_map(|l| l.strip_prefix("- `["))
        .filter_map(|l| l.split_once("]`: "))
        .map(|(section, keys)| {
            let keys = keys
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                .map(str::to_string)
                .collect();
            (section.to_string(), keys)
        })
        .collect()
}

#[test]
fn the_guide_lists_every_key_the_code_reads_and_no_other() {
    let listed = guide_keys();
    // `[[satellite]]`, an array of tables, is listed as such; `[agent.openai]` is a
    // table inside `[agent]`
    let sections: BTreeSet<String> = listed
        .iter()
        .map(|(s, _)| s.trim_matches(['[', ']']).to_string())
        .filter(|s| !s.contains('.'))
        .collect();
    assert_eq!(
        sections,
        keys_of(""),
        "docs/guide.md's sections of hearth.toml"
    );
    assert!(keys_of("gpio").contains("chip"), "the key list is read");
    for (section, keys) in listed {
        assert_eq!(
            keys,
            keys_of(&section),
            "docs/guide.md's keys of [{section}] differ from the code's"
        );
    }
}

#[test]
fn broker_addresses() {
    let at = |host: &str, port, tls| BrokerAddress {
        host: host.into(),
        port,
        tls,
    };
    assert_eq!(broker_address("mqtt://h").unwrap(), at("h", 1883, false));
    assert_eq!(
        broker_address("tcp://h:1884/").unwrap(),
        at("h", 1884, false)
    );
    assert_eq!(
        broker_address("mqtt://[::1]:9").unwrap(),
        at("[::1]", 9, false)
    );
    assert_eq!(
        broker_address("mqtt://[::1]").unwrap(),
        at("[::1]", 1883, false)
    );
    assert_eq!(broker_address("mqtts://h").unwrap(), at("h", 8883, true));
    assert_eq!(
        broker_address("ssl://broker.lan:8884").unwrap(),
        at("broker.lan", 8884, true)
    );
    let e = broker_address("mqtts://[::1]:8883").unwrap_err();
    assert!(e.contains("IPv6") && e.contains("DNS name"), "{e}");
    assert!(broker_address("mqtts://").is_err());
    assert!(broker_address("http://h").is_err());
    assert!(broker_address("mqtt://:1").is_err());
    assert!(broker_address("mqtt://h:x").is_err());
    assert!(broker_address("mqtt://u:p@h").is_err());
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("hearth.toml"))
}

#[test]
fn the_documented_example_is_valid_and_sets_what_it_says() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/hearth.toml"
    ));
    let c = Config::load(path).unwrap();
    assert_eq!(c.agent.preset.as_deref(), Some("qwen2.5-coder"));
    assert_eq!(c.listen.hangover_ms, Some(640));
    assert_eq!(c.audio.mic.as_deref(), Some("default"));
}

#[test]
fn empty_is_the_defaults() {
    assert_eq!(parse("").unwrap(), Config::default());
    assert_eq!(parse("[listen]\n").unwrap(), Config::default());
}

#[test]
fn a_typo_is_an_error_with_line_column_and_the_valid_keys() {
    let e = parse("[agent]\npreset = \"qwen2.5-coder\"\n\n[listen]\nhangover = 500\n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("hearth.toml:5:1: "), "{msg}");
    assert!(msg.contains("unknown field `hangover`"), "{msg}");
    assert!(msg.contains("hangover_ms"), "{msg}");
}

#[test]
fn a_wrong_type_names_what_is_expected() {
    let e = parse("[listen]\nhangover_ms = \"long\"\n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("hearth.toml:2:15: "), "{msg}");
    assert!(msg.contains("u32") || msg.contains("integer"), "{msg}");
}

#[test]
fn broken_toml_points_at_the_place() {
    let e = parse("[audio]\nmic = \"default\nspeaker = \"x\"\n").unwrap_err();
    match e {
        ConfigError::Parse { line, .. } => assert_eq!(line, 2, "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn impossible_values_are_named_with_what_is_expected() {
    for (text, want) in [
        ("[listen]\nhangover_ms = 0\n", "[listen] hangover_ms = 0"),
        (
            "[listen]\nhangover_ms = 900\nmax_utterance_ms = 800\n",
            "less than max_utterance_ms",
        ),
        ("[listen]\nthreshold_db = -3.0\n", "0 to 60 dB"),
        ("[stt]\nserver = \"kitchen-box\"\n", "tcp://HOST:PORT"),
        (
            "[stt]\nserver = \"tcp://box:10300\"\nmodel = \"/m.bin\"\n",
            "not both",
        ),
        ("[stt]\ntimeout_s = 0\n", "[stt] timeout_s = 0"),
        ("[tts]\nlength_scale = 9.0\n", "0.25 to 4.0"),
        ("[listen]\nspeech_threshold = 1.5\n", "a probability"),
        ("[listen]\nwake_cutoff = 1.0\n", "between 0 and 1"),
        ("[listen]\nearcon = \" \"\n", "\"chime\", \"none\""),
        ("[audio]\nbell = \"\"\n", "\"bell\", \"chime\", \"none\""),
        (
            "[listen]\nfollow_up_s = -1.0\n",
            "0 (no follow-up) to 60 seconds",
        ),
        ("[listen]\nwake = [\"\"]\n", "wake-word names"),
        ("[listen]\nvad = \"neural\"\n", "unknown variant `neural`"),
        ("[agent]\nn_ctx = 100\n", "at least 512"),
        (
            "[[satellite]]\nname = \"bedroom\"\nurl = \"bedroom:10700\"\n",
            "tcp://HOST:PORT",
        ),
        (
            "[[satellite]]\nname = \"a\"\nurl = \"tcp://h:1\"\n[[satellite]]\nname = \"a\"\nurl = \"tcp://h:2\"\n",
            "a name of its own",
        ),
        ("[agent]\nturn_budget_s = 0.0\n", "0.5 to 600 seconds"),
        ("[agent]\nhistory_tokens = 10\n", "at least 64 tokens"),
        ("[audio]\nbuffer_ms = 0\n", "above 0 ms"),
        ("[agent]\nengine = \"openai\"\n", "an [agent.openai] table"),
        ("[agent]\nengine = \"vllm\"\n", "unknown variant `vllm`"),
        ("[agent.openai]\nurl = \"gpu-box:8080\"\n", "http://HOST:PORT"),
        (
            "[agent.openai]\nurl = \"http://h:1\"\nread_timeout_s = 0.0\n",
            "[agent.openai] read_timeout_s = 0: expected 0.1 to 600 seconds",
        ),
        (
            "[agent.openai]\nurl = \"http://h:1\"\ngrammar = \"gbnf\"\n",
            "unknown variant `gbnf`",
        ),
    ] {
        let msg = parse(text).unwrap_err().to_string();
        assert!(msg.contains(want), "{text:?}: {msg}");
    }
    assert!(parse("[stt]\nserver = \"tcp://10.0.0.2:10300\"\n").is_ok());
    assert!(parse("[stt]\nserver = \"box.local:10300\"\n").is_ok());
    assert_eq!(
        parse("[stt]\ntimeout_s = 45\n").unwrap().stt.timeout_s,
        Some(45)
    );
}

#[test]
fn locate_follows_the_documented_order() {
    let env = |pairs: &[(&str, &str)]| {
        let m: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k: &str| m.get(k).cloned()
    };
    let all = |_: &Path| true;
    let none = |_: &Path| false;
    // explicit wins, and must exist
    assert_eq!(
        locate(
            Some(Path::new("/x.toml")),
            env(&[("HEARTH_CONFIG", "/y")]),
            all
        )
        .unwrap(),
        Some(PathBuf::from("/x.toml"))
    );
    assert!(matches!(
        locate(Some(Path::new("/x.toml")), env(&[]), none),
        Err(ConfigError::Missing(_))
    ));
    assert!(matches!(
        locate(None, env(&[("HEARTH_CONFIG", "/y.toml")]), none),
        Err(ConfigError::Missing(_))
    ));
    // systemd's directory, then the user's, then /etc
    let e = env(&[
        ("CONFIGURATION_DIRECTORY", "/etc/hearth:/other"),
        ("XDG_CONFIG_HOME", "/home/u/.config"),
    ]);
    assert_eq!(
        locate(None, &e, all).unwrap(),
        Some(PathBuf::from("/etc/hearth/hearth.toml"))
    );
    assert_eq!(
        locate(None, &e, |p: &Path| p.starts_with("/home")).unwrap(),
        Some(PathBuf::from("/home/u/.config/hearth/hearth.toml"))
    );
    assert_eq!(
        locate(None, env(&[("HOME", "/home/v")]), |p: &Path| p
            .starts_with("/home"))
        .unwrap(),
        Some(PathBuf::from("/home/v/.config/hearth/hearth.toml"))
    );
    assert_eq!(
        locate(None, env(&[("HOME", "/home/v")]), |p: &Path| p
            .starts_with("/etc"))
        .unwrap(),
        Some(PathBuf::from("/etc/hearth/hearth.toml"))
    );
    // nothing anywhere: the defaults
    assert_eq!(locate(None, env(&[]), none).unwrap(), None);
}

#[test]
fn line_column_counts_characters() {
    assert_eq!(line_column("ab\ncdé\nf", 0), (1, 1));
    assert_eq!(line_column("ab\ncdé\nf", 3), (2, 1));
    assert_eq!(line_column("ab\ncdé\nf", 8), (3, 1));
    assert_eq!(line_column("ab\ncdé\nf", 7), (2, 4));
}

#[test]
fn a_board_profile_is_the_base_and_the_file_wins_key_by_key() {
    let profile = "[agent]\nthreads = 3\ngpu_layers = 0\npreset = \"qwen2.5-coder\"\n[stt]\nmodel = \"ggml-base.en.bin\"\nthreads = 3\n[gpio]\nchip = \"pinctrl-rp1\"\n";
    let file = "[agent]\nthreads = 2\n[mqtt]\nurl = \"mqtt://broker:1884\"\n";
    let c = Config::over_board(
        "pi5",
        profile,
        Some((file, Path::new("/etc/hearth/hearth.toml"))),
    )
    .unwrap();
    assert_eq!(c.agent.threads, Some(2), "the file wins");
    assert_eq!(c.agent.gpu_layers, Some(0), "the profile's other keys stay");
    assert_eq!(c.agent.preset.as_deref(), Some("qwen2.5-coder"));
    assert_eq!(c.stt.model, Some(PathBuf::from("ggml-base.en.bin")));
    assert_eq!(c.gpio.chip.as_deref(), Some("pinctrl-rp1"));
    assert_eq!(c.mqtt.unwrap().url, "mqtt://broker:1884");
    // a speech server in the file replaces the profile's whisper model (not "both")
    let c = Config::over_board(
        "pi5",
        profile,
        Some(("[stt]\nserver = \"tcp://box:10300\"\n", Path::new("f.toml"))),
    )
    .unwrap();
    assert_eq!(c.stt.model, None);
    assert_eq!(c.stt.threads, Some(3));
    // the file's own errors keep their line and column
    let e = Config::over_board(
        "pi5",
        profile,
        Some(("\n[agent]\nthread = 2\n", Path::new("f.toml"))),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("f.toml:3:1"), "{e}");
    // every built-in profile parses alone
    for (name, text) in BOARDS {
        Config::over_board(name, text, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let e = board_profile("pi3").unwrap_err().to_string();
    assert!(e.contains("pi5, pi4, jetson-orin-nano"), "{e}");
}

#[test]
fn device_sections_are_checked() {
    let e = parse("[mqtt]\nurl = \"http://broker\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("[mqtt] url") && e.contains("mqtt://HOST"), "{e}");
    let e = parse("[mqtt]\nurl = \"mqtt://b\"\nkeep_alive_s = 0\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("keep_alive_s"), "{e}");
    let e = parse("[mqtt]\nurl = \"mqtt://b\"\nca_file = \"/etc/hearth/ca.pem\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[mqtt] ca_file") && e.contains("mqtts://HOST"),
        "{e}"
    );
    let e = parse("[mqtt]\nurl = \"mqtts://b\"\nclient_key_file = \"/k.pem\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[mqtt] client_key_file") && e.contains("together"),
        "{e}"
    );
    let c = parse("[mqtt]\nurl = \"mqtts://b\"\nca_file = \"/etc/hearth/ca.pem\"\n").unwrap();
    assert_eq!(
        c.mqtt.unwrap().ca_file.as_deref(),
        Some(Path::new("/etc/hearth/ca.pem"))
    );
    let e = parse("[homeassistant]\nurl = \"ha.local:8123\"\ntoken_file = \"/t\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("http://HOST:8123"), "{e}");
    let e = parse("[homeassistant]\nurl = \"http://ha:8123\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("token_file"), "{e}");
    let e = parse("[bus]\nbus = \"desktop\"\n").unwrap_err().to_string();
    assert!(e.contains("session") && e.contains("system"), "{e}");
    let c = parse(
        "[mqtt]\nurl = \"mqtt://10.0.0.2\"\n[bus]\nbus = \"none\"\n[gpio]\nchip = \"gpiochip0\"\n",
    )
    .unwrap();
    assert_eq!(c.bus.bus, Some(BusKind::None));
    assert_eq!(c.gpio.chip.as_deref(), Some("gpiochip0"));
}
