//! The daemon's configuration file (TOML): which model, tools, devices and voice hearth uses,
//! and how it listens. Plain data: the command line turns it into each stage's settings, and
//! a flag given on the command line wins over the file.
//!
//! Where it is read from ([`locate`]): `--config FILE`; else `$HEARTH_CONFIG`; else
//! `hearth.toml` in systemd's `$CONFIGURATION_DIRECTORY` (the unit's `ConfigurationDirectory`);
//! else the user's `$XDG_CONFIG_HOME/hearth/hearth.toml` (`~/.config/hearth/hearth.toml`); else
//! `/etc/hearth/hearth.toml`. No file at all means the defaults; a file that was named but
//! does not exist is an error.
//!
//! Every key is checked: an unknown key (a typo), a wrong type or an impossible value is an
//! error naming the file, line and column, what was found and what is expected. Nothing is
//! skipped or guessed. `config/hearth.toml` in the repository documents every key.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file name looked for in the configuration directories.
pub(crate) const FILE_NAME: &str = "hearth.toml";

/// What can be wrong with a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file named by `--config` or `$HEARTH_CONFIG` is not there.
    #[error("the config file {0} does not exist: create it (config/hearth.toml in hearth's source is a documented example) or name another with --config")]
    Missing(PathBuf),
    /// The file cannot be read.
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not fit the schema.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// `--board` names no built-in profile.
    #[error("there is no board profile {name:?}: use one of {}", known.join(", "))]
    UnknownBoard {
        name: String,
        known: Vec<&'static str>,
    },
    /// A value is of the right type but cannot work.
    #[error("{path}: [{section}] {key} = {value}: {expected}")]
    Invalid {
        path: PathBuf,
        section: &'static str,
        key: &'static str,
        value: String,
        expected: &'static str,
    },
}

/// The whole file. Every section is optional; every key in it is too.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub agent: AgentSection,
    pub audio: AudioSection,
    pub listen: ListenSection,
    pub stt: SttSection,
    pub tts: TtsSection,
    pub mqtt: Option<MqttSection>,
    pub homeassistant: Option<HomeAssistantSection>,
    pub zigbee2mqtt: Zigbee2mqttSection,
    pub mqtt_discovery: MqttDiscoverySection,
    pub gpio: GpioSection,
    pub bus: BusSection,
    /// `[[satellite]]`: Wyoming satellites in other rooms.
    pub satellite: Vec<SatelliteSection>,
}

/// One `[[satellite]]`: a Wyoming satellite (`wyoming-satellite`) hearth runs the pipeline
/// of, connecting to it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SatelliteSection {
    /// Its name in logs, turns and events; unique.
    pub name: String,
    /// Where it listens: `tcp://HOST:PORT` (its `--uri`). None: found by zeroconf under
    /// `name` (its `--zeroconf-name`).
    pub url: Option<String>,
    /// The room it is in.
    pub room: Option<String>,
}

/// `[mqtt]`: the broker `[tool.mqtt]` tools publish to. Without this section a manifest
/// that uses `[tool.mqtt]` fails to load.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttSection {
    /// `mqtt://HOST[:PORT]` (plain TCP, 1883 by default) or `mqtts://HOST[:PORT]` (TLS, 8883
    /// by default; HOST must be the name the broker's certificate carries).
    pub url: String,
    /// The client id (default `hearth-<hostname>`); unique per broker.
    pub client_id: Option<String>,
    /// User name, if the broker asks for one.
    pub username: Option<String>,
    /// A file holding the password (one line; never in the config or a manifest).
    pub password_file: Option<PathBuf>,
    /// Keep-alive interval, seconds (default 30).
    pub keep_alive_s: Option<u64>,
    /// `mqtts://` only: the CA certificate(s) that signed the broker's certificate (PEM).
    /// Default: the system's CA store.
    pub ca_file: Option<PathBuf>,
    /// `mqtts://` only: a client certificate (PEM), for a broker that asks for one
    /// (mosquitto's `require_certificate true`). Goes with `client_key_file`.
    pub client_cert_file: Option<PathBuf>,
    /// `mqtts://` only: the client certificate's private key (PEM).
    pub client_key_file: Option<PathBuf>,
}

/// Where the broker is, from `[mqtt] url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddress {
    /// A name or address; an IPv6 one keeps its brackets (`[::1]`).
    pub host: String,
    pub port: u16,
    /// `mqtts://` (or `ssl://`): TLS, port 8883 by default.
    pub tls: bool,
}

/// `mqtt://HOST[:PORT]` (or `tcp://`; port 1883 by default) and `mqtts://HOST[:PORT]` (or
/// `ssl://`; TLS, port 8883 by default). An IPv6 host is written in brackets, and keeps
/// them: `mqtt://[::1]:1883` → `[::1]`, 1883.
pub fn broker_address(url: &str) -> Result<BrokerAddress, String> {
    let schemes = [
        ("mqtt://", false),
        ("tcp://", false),
        ("mqtts://", true),
        ("ssl://", true),
    ];
    let (rest, tls) = schemes
        .iter()
        .find_map(|(scheme, tls)| url.strip_prefix(scheme).map(|r| (r, *tls)))
        .ok_or_else(|| "expected mqtt://HOST[:PORT] (mqtts:// for TLS)".to_string())?;
    let rest = rest.trim_end_matches('/');
    let default_port = if tls { "8883" } else { "1883" };
    if rest.contains(['/', '@', '?']) {
        return Err("expected only a host and a port after the scheme (credentials go in username and password_file)".into());
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        if tls {
            // rumqttc hands the bracketed host to TLS as the server's name, which fails
            return Err("TLS to an IPv6 address is not supported: write the broker's DNS name (the one its certificate carries)".into());
        }
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| "an IPv6 host needs its closing `]`".to_string())?;
        if h.is_empty() {
            return Err("no host".into());
        }
        match after.strip_prefix(':') {
            Some(p) => (&rest[..h.len() + 2], p),
            None if after.is_empty() => (&rest[..h.len() + 2], default_port),
            None => return Err(format!("unexpected {after:?} after the host")),
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => (rest, default_port),
        }
    };
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("bad port {port:?}"))?;
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok(BrokerAddress {
        host: host.to_string(),
        port,
        tls,
    })
}

/// Why a TLS key of `[mqtt]` does not fit the rest of the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Misfit {
    /// Set for a plain `mqtt://` broker.
    NeedsTls,
    /// One of `client_cert_file` and `client_key_file` without the other.
    NeedsItsPair,
}

/// The first TLS key of `[mqtt]` that does not fit: its name, its file and why. The one rule
/// for both the config check (with the file's place) and the MQTT executor's TLS setup.
pub(crate) fn misfit(section: &MqttSection, tls: bool) -> Option<(&'static str, &Path, Misfit)> {
    let keys = [
        ("ca_file", &section.ca_file),
        ("client_cert_file", &section.client_cert_file),
        ("client_key_file", &section.client_key_file),
    ];
    let mut set = keys
        .into_iter()
        .filter_map(|(key, file)| Some((key, file.as_deref()?)));
    if !tls {
        return set.next().map(|(key, file)| (key, file, Misfit::NeedsTls));
    }
    match (&section.client_cert_file, &section.client_key_file) {
        (Some(file), None) => Some(("client_cert_file", file, Misfit::NeedsItsPair)),
        (None, Some(file)) => Some(("client_key_file", file, Misfit::NeedsItsPair)),
        _ => None,
    }
}

/// `[homeassistant]`: the Home Assistant `[tool.homeassistant]` tools talk to, and whose
/// exposed entities become tools (`discover`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeAssistantSection {
    /// The base URL, `http://homeassistant.local:8123`.
    pub url: String,
    /// A file holding a long-lived access token (Home Assistant: your profile → Security).
    pub token_file: PathBuf,
    /// Make tools of every entity exposed to Assist, by its names, aliases and area, and
    /// follow Home Assistant's changes (`crates/hearth-core/src/house/`). Default true.
    #[serde(default = "yes")]
    pub discover: bool,
    /// Seconds between two reads of the house with no change event to cause them (exposing
    /// an entity Home Assistant keeps no registry entry for fires none). Default 30.
    #[serde(default = "default_refresh_s")]
    pub refresh_s: u64,
}

fn default_refresh_s() -> u64 {
    30
}

fn yes() -> bool {
    true
}

/// `[zigbee2mqtt]`: the Zigbee2MQTT bridge on the `[mqtt]` broker whose devices and groups
/// become tools (`crates/hearth-core/src/house/`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Zigbee2mqttSection {
    /// Follow it. Default: when `[mqtt]` is set and `[homeassistant]` is not (a Home
    /// Assistant already offers those devices, as its household exposed them).
    pub enabled: Option<bool>,
    /// Its base topic (Zigbee2MQTT's `mqtt.base_topic`). Default `zigbee2mqtt`.
    pub base_topic: String,
}

impl Default for Zigbee2mqttSection {
    fn default() -> Self {
        Zigbee2mqttSection {
            enabled: None,
            base_topic: "zigbee2mqtt".into(),
        }
    }
}

/// `[mqtt_discovery]`: the components Tasmota, ESPHome and others announce on the `[mqtt]`
/// broker for Home Assistant (`<prefix>/<component>/…/config`), made into tools.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MqttDiscoverySection {
    /// Follow them. Default: when `[mqtt]` is set and `[homeassistant]` is not.
    pub enabled: Option<bool>,
    /// The discovery prefix. Default `homeassistant`.
    pub prefix: String,
}

impl Default for MqttDiscoverySection {
    fn default() -> Self {
        MqttDiscoverySection {
            enabled: None,
            prefix: "homeassistant".into(),
        }
    }
}

/// `[gpio]`: the GPIO chip `[tool.gpio]` tools use when they name none.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpioSection {
    /// A chip path (`/dev/gpiochip0`), name (`gpiochip0`) or label (`pinctrl-rp1`). Default:
    /// the board profile's; else a line is looked up by name on every chip.
    pub chip: Option<String>,
}

/// `[bus]`: the D-Bus face.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BusSection {
    /// `session` or `system` (default: `system` under systemd, else `session`); `none`
    /// serves no D-Bus face.
    pub bus: Option<BusKind>,
    /// Tools registered with `RegisterTool`, all callers together (default 16).
    pub registered_tools_max: Option<usize>,
    /// Tools one caller may register (default 8).
    pub tools_per_caller_max: Option<usize>,
    /// Characters of a registered tool's description (default 400).
    pub description_max_chars: Option<usize>,
    /// Bytes of a registered tool's parameter schema, as compact JSON (default 4096).
    pub schema_max_bytes: Option<usize>,
    /// Users (uids) whose `CallTool` may run a call that otherwise waits for a person's yes
    /// (a tool's `confirm`); default none.
    pub trusted_uids: Vec<u32>,
}

/// Which message bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BusKind {
    Session,
    System,
    None,
}

impl std::str::FromStr for BusKind {
    type Err = String;

    /// `session`, `system` or `none` (as `--bus` takes it).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "session" => Ok(BusKind::Session),
            "system" => Ok(BusKind::System),
            "none" => Ok(BusKind::None),
            other => Err(format!("--bus {other:?}: use session, system or none")),
        }
    }
}

/// `[agent]`: the model and the tools.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSection {
    /// A built-in preset name (`hearth presets`) or a preset `.toml` file.
    pub preset: Option<String>,
    /// The GGUF model file (default: the preset's model in the model directory).
    pub model: Option<PathBuf>,
    /// The directory of tool manifests (`*.toml`).
    pub tools: Option<PathBuf>,
    /// Context length in tokens.
    pub n_ctx: Option<u32>,
    /// CPU threads for the model (default: llama.cpp's choice).
    pub threads: Option<u32>,
    /// Model layers offloaded to the GPU (needs a build with the `cuda` feature; 0 = CPU).
    pub gpu_layers: Option<u32>,
    /// A conversation is forgotten after this many seconds without a turn.
    pub conversation_idle_s: Option<u64>,
    /// What each turn leaves in the conversation's history (`calls`, `full`, `none`).
    pub history: Option<HistoryMode>,
    /// Try the tools' local intents (`[[tool.intent]]`) before the model.
    pub intents: Option<bool>,
    /// No model hop starts once a turn has run this many seconds (default 6).
    pub turn_budget_s: Option<f64>,
    /// A conversation's history is cut back (oldest turns first, by half of this) once it
    /// holds more than this many tokens (default 1024).
    pub history_tokens: Option<usize>,
    /// Where the model runs: `llama` (in hearth, the default) or `openai` (`[agent.openai]`).
    pub engine: Option<EngineKind>,
    /// `[agent.openai]`: the server of `engine = "openai"`.
    pub openai: Option<OpenAiSection>,
}

/// `[agent] engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Llama,
    OpenAi,
}

/// `[agent.openai]`: a model on another machine, behind an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    /// The server, `http://HOST:PORT` (with or without `/v1`).
    pub url: String,
    /// The `model` each request names (a server serving one model ignores it).
    pub model: Option<String>,
    /// A file holding the API key (readable by hearth alone).
    pub api_key_file: Option<PathBuf>,
    /// Seconds to connect before the server counts as down (default 3).
    pub connect_timeout_s: Option<f64>,
    /// Seconds without data (the first token's wait too) before giving up (default 15).
    pub read_timeout_s: Option<f64>,
    /// What grammars the server takes: `none` (default) or `llguidance`.
    pub grammar: Option<RemoteGrammar>,
}

/// `[agent.openai] grammar`: the constrained-decoding grammars a server takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RemoteGrammar {
    /// None are sent (llama-cpp-python takes GBNF only, and a Lark grammar ends its process).
    #[default]
    None,
    /// hearth's Lark grammars, prefixed `%llguidance {}` (llama.cpp's `llama-server` built
    /// with `-DLLAMA_LLGUIDANCE=ON`).
    Llguidance,
}

/// `[audio]`: the sound devices.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AudioSection {
    /// Capture device: a name as `hearth run --mic` takes it (`default`,
    /// `pulseaudio:NAME`, `alsa:hw:CARD=…`).
    pub mic: Option<String>,
    /// Playback device, named the same way.
    pub speaker: Option<String>,
    /// Device buffer per callback, ms (default 20).
    pub buffer_ms: Option<u32>,
    /// Acoustic echo cancellation: hearth's own output taken out of the microphone signal
    /// (default: on when both input and output are sound devices).
    pub echo_cancel: Option<bool>,
    /// The sound before hearth says something unasked (an announcement, a timer ringing):
    /// `"bell"` (default), `"chime"`, `"none"`, or a WAV file of at most 2 s.
    pub bell: Option<String>,
}

/// `[listen]`: voice activity detection, endpointing, barge-in. Unset keys keep the
/// defaults of `hearth::audio::listen::ListenConfig`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListenSection {
    /// The speech detector: `silero` (the default) or `energy`.
    pub vad: Option<Vad>,
    /// The Silero model (default: `silero_vad.onnx` in the model directory).
    pub silero_model: Option<PathBuf>,
    /// What ends a turn: `silence` (the default) or `smart-turn`.
    pub end_of_turn: Option<EndOfTurn>,
    /// The Smart Turn model (default: `smart-turn-v3.2-cpu.onnx` in the model directory).
    pub smart_turn_model: Option<PathBuf>,
    /// Silero: the speech probability from which a frame is speech (0.5).
    pub speech_threshold: Option<f32>,
    pub threshold_db: Option<f32>,
    pub min_level_dbfs: Option<f32>,
    pub onset_ms: Option<u32>,
    pub preroll_ms: Option<u32>,
    pub hangover_ms: Option<u32>,
    pub early_ms: Option<u32>,
    pub intent_end_ms: Option<u32>,
    pub phrase_end_ms: Option<u32>,
    pub min_speech_ms: Option<u32>,
    pub max_utterance_ms: Option<u32>,
    pub barge_in_ms: Option<u32>,
    pub echo_margin_db: Option<f32>,
    /// The wake words (microWakeWord model names in the model directory, or `.tflite`
    /// paths; `"oww:alexa"` for an openWakeWord model, CC BY-NC-SA 4.0); `[]`: every utterance
    /// is a request. Default: `["okay_nabu"]`.
    pub wake: Option<Vec<String>>,
    /// After a reply has played, seconds in which a request needs no wake word (0: none).
    pub follow_up_s: Option<f32>,
    /// The windowed probability over which a wake word fires, for every model (default: each
    /// model's own, 0.85 for okay_nabu); lower hears more wake words and more that are not.
    pub wake_cutoff: Option<f32>,
    /// Noise suppression in front of the wake-word detectors (default on; it helps okay_nabu
    /// in noise, hurts hey_jarvis: docs/measurements.md).
    pub wake_denoise: Option<bool>,
    /// A wake detection stands only when whisper's transcript has the wake word too (default
    /// off: with tiny.en it dropped more real wake words than near misses; docs/measurements.md).
    pub wake_check: Option<bool>,
    /// The sound when a wake word or `Listen()` is heard: `"chime"` (default), `"none"`, or
    /// a WAV file of at most 2 s.
    pub earcon: Option<String>,
}

/// `[listen] vad`: which detector decides what is speech.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vad {
    /// The Silero VAD (a small neural network through ONNX Runtime): ignores music, knocks
    /// and machines, and finds speech in loud rooms (`examples/vad_compare.rs`).
    Silero,
    /// Level over the room's noise floor: no model, but sounds that are not speech start
    /// utterances too.
    Energy,
}

/// `[listen] end_of_turn`: what ends a turn. `smart-turn-house` is the default: it asks the
/// model only where a local intent would otherwise wait `intent_end_ms`, and on the spoken
/// sessions it ended those turns sooner with the same right answers (docs/measurements.md,
/// "Smart Turn for the house's requests, by default"). `smart-turn` is not: asked at every
/// pause, it cut people off mid-sentence (`cargo bench --bench turn`: on the voice's
/// requests with a 400 ms pause put between two words it ended 79 % of them in the pause).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndOfTurn {
    /// Smart Turn v3.2 (a small audio model through ONNX Runtime) asked at the first pause
    /// (`early_ms`): a finished request ends there, a pause part-way waits for the hangover.
    SmartTurn,
    /// Smart Turn asked only about a whole request of the house's phrase set that a local
    /// intent answers and that a longer request may continue ("set a timer for ten minutes",
    /// which "called pasta" may follow), once it is recognised: heard finished, its turn ends
    /// then instead of after `intent_end_ms`. Every other turn ends as with `silence`.
    #[default]
    SmartTurnHouse,
    /// The hangover alone: `hangover_ms` of silence after speech.
    Silence,
}

/// `[stt]`: speech recognition.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SttSection {
    /// The whisper.cpp model for the `hearth-stt` child.
    pub model: Option<PathBuf>,
    /// A Wyoming ASR server (`tcp://HOST:PORT`) to use instead of the child.
    pub server: Option<String>,
    /// Words to expect (whisper's initial prompt); default: the tools' vocabulary.
    pub prompt: Option<String>,
    /// Hold transcripts to the house's phrase set where the audio supports it (default
    /// true; a server that does not take phrase sets gives open transcripts either way).
    pub phrases: Option<bool>,
    /// Language asked for (`en`).
    pub language: Option<String>,
    /// CPU threads for `hearth-stt`.
    pub threads: Option<u32>,
    /// Seconds one utterance may take in all (sending it, waiting for the transcript, a retry)
    /// before Stt gives up on it (default `hearth::stt::UTTERANCE_TIMEOUT`).
    pub timeout_s: Option<u32>,
}

/// `[tts]`: the voice.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TtsSection {
    /// The Piper voice (`.onnx`, with its `.onnx.json` beside it); with `server`, the
    /// server's name for the voice.
    pub voice: Option<PathBuf>,
    /// A Wyoming text-to-speech server (`tcp://HOST:PORT`) to speak with instead of a Piper
    /// voice in this process.
    pub server: Option<String>,
    /// `libonnxruntime.so` (default: looked up).
    pub onnxruntime: Option<PathBuf>,
    /// The directory holding `espeak-ng-data` (default: looked up).
    pub espeak_data: Option<PathBuf>,
    /// Speaking rate: 1.0 is the voice's own pace, above is slower.
    pub length_scale: Option<f32>,
}

impl Config {
    /// Parse and check a configuration's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| line_column(text, s.start))
                .unwrap_or((1, 1));
            ConfigError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        config.check(path)?;
        Ok(config)
    }

    /// Read, parse and check a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::parse(&read(path)?, path)
    }

    /// The file [`locate`] finds (defaults when there is none) and where it came from.
    pub fn discover(explicit: Option<&Path>) -> Result<(Config, Option<PathBuf>), ConfigError> {
        Self::discover_on(explicit, None)
    }

    /// Like [`discover`](Self::discover), over a board profile (`--board pi5`): the
    /// profile is the base and the file's keys win over it, key by key.
    pub fn discover_on(
        explicit: Option<&Path>,
        board: Option<&str>,
    ) -> Result<(Config, Option<PathBuf>), ConfigError> {
        let path = locate(explicit, |k| std::env::var_os(k), |p| p.is_file())?;
        let text = match &path {
            Some(p) => Some(read(p)?),
            None => None,
        };
        let config = match (board, &text, &path) {
            (Some(b), text, path) => {
                let profile = board_profile(b)?;
                let file = path.clone().unwrap_or_default();
                Config::over_board(b, profile, text.as_deref().map(|t| (t, file.as_path())))?
            }
            (None, Some(t), Some(p)) => Config::parse(t, p)?,
            _ => Config::default(),
        };
        Ok((config, path))
    }

    /// A board profile's text with a file's text over it (`(text, path)`), both checked.
    pub fn over_board(
        name: &str,
        profile: &str,
        file: Option<(&str, &Path)>,
    ) -> Result<Config, ConfigError> {
        let profile_path = PathBuf::from(format!("hardware/{name}.toml"));
        let base_config = Config::parse(profile, &profile_path)?;
        let Some((text, path)) = file else {
            return Ok(base_config);
        };
        let over_config = Config::parse(text, path)?;
        let table = |t: &str, p: &Path| {
            t.parse::<toml::Table>().map_err(|e| ConfigError::Parse {
                path: p.to_path_buf(),
                line: 1,
                column: 1,
                message: e.to_string(),
            })
        };
        let mut base = table(profile, &profile_path)?;
        let over = table(text, path)?;
        // the file's speech server replaces the profile's whisper model
        if over_config.stt.server.is_some() {
            if let Some(toml::Value::Table(stt)) = base.get_mut("stt") {
                stt.remove("model");
            }
        }
        merge(&mut base, over);
        let merged = toml::to_string(&base).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: e.to_string(),
        })?;
        Config::parse(&merged, path)
    }

    /// Values that parse but cannot work: the first one found, with its file.
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let first = listen_problem(&self.listen)
            .or_else(|| tts_problem(&self.tts))
            .or_else(|| stt_problem(&self.stt))
            .or_else(|| {
                self.tts
                    .server
                    .as_deref()
                    .and_then(|s| server_problem("tts", s))
            })
            .or_else(|| self.mqtt.as_ref().and_then(mqtt_problem))
            .or_else(|| self.homeassistant.as_ref().and_then(homeassistant_problem))
            .or_else(|| audio_problem(&self.audio))
            .or_else(|| satellite_problem(&self.satellite))
            .or_else(|| agent_problem(&self.agent));
        match first {
            None => Ok(()),
            Some(Problem {
                section,
                key,
                value,
                expected,
            }) => Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                section,
                key,
                value,
                expected,
            }),
        }
    }
}

/// Where a satellite listens, from its `url` (`tcp://HOST:PORT` → `HOST:PORT`).
pub fn satellite_address(url: &str) -> Option<String> {
    let rest = url.strip_prefix("tcp://")?;
    let (host, port) = rest.rsplit_once(':')?;
    (!host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)).then(|| rest.to_string())
}

/// A satellite whose url is no `tcp://HOST:PORT`, or whose name is empty or taken.
fn satellite_problem(satellites: &[SatelliteSection]) -> Option<Problem> {
    for (i, sat) in satellites.iter().enumerate() {
        if let Some(url) = sat
            .url
            .as_deref()
            .filter(|u| satellite_address(u).is_none())
        {
            let expected = "tcp://HOST:PORT, where the satellite listens (its --uri)";
            return problem("satellite", "url", format!("{url:?}"), expected);
        }
        let taken = satellites[..i].iter().any(|s| s.name == sat.name);
        if sat.name.trim().is_empty() || taken {
            let expected = "a name of its own: each [[satellite]] has a different, non-empty name";
            return problem("satellite", "name", format!("{:?}", sat.name), expected);
        }
    }
    None
}

/// A value that parses but cannot work: where it is, as written, and what is expected.
struct Problem {
    section: &'static str,
    key: &'static str,
    value: String,
    expected: &'static str,
}

fn problem(
    section: &'static str,
    key: &'static str,
    value: String,
    expected: &'static str,
) -> Option<Problem> {
    Some(Problem {
        section,
        key,
        value,
        expected,
    })
}

/// `[listen]`: durations above 0, a hangover shorter than the longest utterance, levels and
/// the speech probability in range.
fn listen_problem(l: &ListenSection) -> Option<Problem> {
    let positive_ms: [(&'static str, Option<u32>); 5] = [
        ("onset_ms", l.onset_ms),
        ("hangover_ms", l.hangover_ms),
        ("min_speech_ms", l.min_speech_ms),
        ("max_utterance_ms", l.max_utterance_ms),
        ("barge_in_ms", l.barge_in_ms),
    ];
    if let Some((key, _)) = positive_ms.iter().find(|(_, v)| *v == Some(0)) {
        return problem("listen", key, "0".into(), "expected a duration above 0 ms");
    }
    if let (Some(h), Some(m)) = (l.hangover_ms, l.max_utterance_ms) {
        if h >= m {
            return problem(
                "listen",
                "hangover_ms",
                h.to_string(),
                "expected less than max_utterance_ms (an utterance could never end by a pause)",
            );
        }
    }
    for (key, v) in [
        ("threshold_db", l.threshold_db),
        ("echo_margin_db", l.echo_margin_db),
    ] {
        if let Some(v) = v.filter(|v| !(0.0..=60.0).contains(v)) {
            return problem("listen", key, v.to_string(), "expected 0 to 60 dB");
        }
    }
    if let Some(v) = l.follow_up_s.filter(|v| !(0.0..=60.0).contains(v)) {
        return problem(
            "listen",
            "follow_up_s",
            v.to_string(),
            "expected 0 (no follow-up) to 60 seconds",
        );
    }
    if let Some(v) = l.wake_cutoff.filter(|v| !(*v > 0.0 && *v < 1.0)) {
        return problem(
            "listen",
            "wake_cutoff",
            v.to_string(),
            "expected a probability between 0 and 1 (the models' own are 0.85 to 0.97)",
        );
    }
    if let Some(w) = l.wake.iter().flatten().find(|w| w.trim().is_empty()) {
        return problem(
            "listen",
            "wake",
            format!("{w:?}"),
            "expected wake-word names such as \"okay_nabu\" (or [] for none)",
        );
    }
    if let Some(e) = l.earcon.as_ref().filter(|e| e.trim().is_empty()) {
        return problem(
            "listen",
            "earcon",
            format!("{e:?}"),
            "expected \"chime\", \"none\" or the path of a WAV file",
        );
    }
    if let Some(v) = l.min_level_dbfs.filter(|v| !(-120.0..=0.0).contains(v)) {
        return problem(
            "listen",
            "min_level_dbfs",
            v.to_string(),
            "expected -120 to 0 dBFS",
        );
    }
    if let Some(v) = l
        .speech_threshold
        .filter(|v| !(0.0..=1.0).contains(v) || *v == 0.0)
    {
        return problem(
            "listen",
            "speech_threshold",
            v.to_string(),
            "expected a probability above 0 and at most 1 (0.5 is the default)",
        );
    }
    None
}

/// `[tts]`: a pace the voice can take.
fn tts_problem(t: &TtsSection) -> Option<Problem> {
    let v = t.length_scale.filter(|v| !(0.25..=4.0).contains(v))?;
    problem(
        "tts",
        "length_scale",
        v.to_string(),
        "expected 0.25 to 4.0 (1.0 is the voice's own pace)",
    )
}

/// `[stt]`: a server address with a port, not both a server and a model, a timeout above 0.
fn stt_problem(stt: &SttSection) -> Option<Problem> {
    if stt.timeout_s == Some(0) {
        return problem(
            "stt",
            "timeout_s",
            "0".into(),
            "expected a number of seconds above 0",
        );
    }
    let s = stt.server.as_ref()?;
    if let Some(p) = server_problem("stt", s) {
        return Some(p);
    }
    if stt.model.is_some() {
        return problem(
            "stt",
            "model",
            "(set)".into(),
            "expected either model (a hearth-stt child) or server (a Wyoming server), not both",
        );
    }
    None
}

/// `[SECTION] server`: a Wyoming server's address with a port.
fn server_problem(section: &'static str, s: &str) -> Option<Problem> {
    let addr = s.strip_prefix("tcp://").unwrap_or(s);
    let port_ok = addr
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if port_ok {
        return None;
    }
    problem(
        section,
        "server",
        format!("{s:?}"),
        "expected a Wyoming server address, tcp://HOST:PORT",
    )
}

/// `[mqtt]`: a broker address, TLS keys only with TLS and in pairs, a keep-alive.
fn mqtt_problem(m: &MqttSection) -> Option<Problem> {
    let Ok(broker) = broker_address(&m.url) else {
        return problem(
            "mqtt",
            "url",
            format!("{:?}", m.url),
            "expected mqtt://HOST[:PORT], or mqtts://HOST[:PORT] for TLS",
        );
    };
    match misfit(m, broker.tls) {
        Some((key, file, Misfit::NeedsTls)) => {
            return problem(
                "mqtt",
                key,
                format!("{:?}", file.display().to_string()),
                "only with TLS: write url = \"mqtts://HOST\" (port 8883 by default)",
            );
        }
        Some((key, _, Misfit::NeedsItsPair)) => {
            return problem(
                "mqtt",
                key,
                "(set)".into(),
                "client_cert_file and client_key_file together (the certificate and its key)",
            );
        }
        None => {}
    }
    if m.keep_alive_s == Some(0) {
        return problem(
            "mqtt",
            "keep_alive_s",
            "0".into(),
            "expected at least 1 second (30 is the default)",
        );
    }
    None
}

/// `[homeassistant]`: an http(s) base URL with a host.
fn homeassistant_problem(h: &HomeAssistantSection) -> Option<Problem> {
    let u = h.url.as_str();
    let rest = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"));
    if rest.is_none_or(|r| r.trim_end_matches('/').is_empty()) {
        return problem(
            "homeassistant",
            "url",
            format!("{u:?}"),
            "expected http://HOST:8123 (or https://…), Home Assistant's base URL",
        );
    }
    None
}

/// `[audio]`: a buffer above 0 ms; a bell that names something.
fn audio_problem(a: &AudioSection) -> Option<Problem> {
    if a.buffer_ms == Some(0) {
        return problem(
            "audio",
            "buffer_ms",
            "0".into(),
            "expected a buffer above 0 ms (20 is the default)",
        );
    }
    if let Some(b) = a.bell.as_ref().filter(|b| b.trim().is_empty()) {
        return problem(
            "audio",
            "bell",
            format!("{b:?}"),
            "expected \"bell\", \"chime\", \"none\" or the path of a WAV file",
        );
    }
    None
}

/// `[agent]`: a context that holds at least the tool list; a turn budget a hop fits in.
fn agent_problem(a: &AgentSection) -> Option<Problem> {
    if let Some(n) = a.n_ctx.filter(|n| *n < 512) {
        return problem(
            "agent",
            "n_ctx",
            n.to_string(),
            "expected at least 512 tokens (the tool list alone takes about 500)",
        );
    }
    if let Some(n) = a.history_tokens.filter(|n| *n < 64) {
        return problem(
            "agent",
            "history_tokens",
            n.to_string(),
            "expected at least 64 tokens (one turn takes about 40; `history = \"none\"` keeps none)",
        );
    }
    if let Some(p) = openai_problem(a) {
        return Some(p);
    }
    let s = a
        .turn_budget_s
        .filter(|s| !(s.is_finite() && (0.5..=600.0).contains(s)))?;
    problem(
        "agent",
        "turn_budget_s",
        s.to_string(),
        "expected 0.5 to 600 seconds (6 is the default: one short hop fits in it, a second one only when the first was quick)",
    )
}

/// `engine = "openai"` with its table; `[agent.openai]`: an http(s) URL with a host, timeouts
/// a request can live with.
fn openai_problem(a: &AgentSection) -> Option<Problem> {
    let Some(o) = &a.openai else {
        let expected = "an [agent.openai] table naming the server: url = \"http://HOST:PORT\"";
        let remote = a.engine == Some(EngineKind::OpenAi);
        return remote
            .then(|| problem("agent", "engine", "\"openai\"".into(), expected))
            .flatten();
    };
    let u = o.url.trim();
    let rest = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"));
    if rest.is_none_or(|r| r.trim_end_matches('/').is_empty()) {
        return problem(
            "agent.openai",
            "url",
            format!("{u:?}"),
            "expected http://HOST:PORT (or https://…), the OpenAI-compatible server's address",
        );
    }
    for (key, v) in [
        ("connect_timeout_s", o.connect_timeout_s),
        ("read_timeout_s", o.read_timeout_s),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && (0.1..=600.0).contains(v))) {
            return problem(
                "agent.openai",
                key,
                v.to_string(),
                "expected 0.1 to 600 seconds",
            );
        }
    }
    None
}

/// A file's text; a missing file is [`ConfigError::Missing`].
fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ConfigError::Missing(path.to_path_buf())
        } else {
            ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// `over`'s keys into `base`: tables merge key by key, any other value replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The board profiles built into hearth (`hearth run --board NAME`), from `hardware/`:
/// each is a base configuration in this file's schema, its reasoning in comments.
pub const BOARDS: &[(&str, &str)] = &[
    ("pi5", include_str!("../../../hardware/pi5.toml")),
    ("pi4", include_str!("../../../hardware/pi4.toml")),
    (
        "jetson-orin-nano",
        include_str!("../../../hardware/jetson-orin-nano.toml"),
    ),
];

/// A built-in board profile's text.
pub fn board_profile(name: &str) -> Result<&'static str, ConfigError> {
    BOARDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| ConfigError::UnknownBoard {
            name: name.to_string(),
            known: BOARDS.iter().map(|(n, _)| *n).collect(),
        })
}

/// Where the configuration is: the explicit path (must exist), `$HEARTH_CONFIG` (must
/// exist), then the first existing of `$CONFIGURATION_DIRECTORY/hearth.toml`,
/// `$XDG_CONFIG_HOME/hearth/hearth.toml` (or `$HOME/.config/hearth/hearth.toml`) and
/// `/etc/hearth/hearth.toml`. The environment and the file test are passed in (tests).
pub fn locate(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
    exists: impl Fn(&Path) -> bool,
) -> Result<Option<PathBuf>, ConfigError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(p) = explicit {
        return if exists(p) {
            Ok(Some(p.to_path_buf()))
        } else {
            Err(ConfigError::Missing(p.to_path_buf()))
        };
    }
    if let Some(p) = get("HEARTH_CONFIG") {
        let p = PathBuf::from(p);
        return if exists(&p) {
            Ok(Some(p))
        } else {
            Err(ConfigError::Missing(p))
        };
    }
    let mut candidates = Vec::new();
    if let Some(d) = get("CONFIGURATION_DIRECTORY") {
        // systemd lists several directories colon-separated; hearth's is the first
        let first = d.to_string_lossy().split(':').next().map(PathBuf::from);
        candidates.extend(first.map(|d| d.join(FILE_NAME)));
    }
    if let Some(d) = get("XDG_CONFIG_HOME") {
        candidates.push(PathBuf::from(d).join("hearth").join(FILE_NAME));
    } else if let Some(h) = get("HOME") {
        candidates.push(PathBuf::from(h).join(".config/hearth").join(FILE_NAME));
    }
    candidates.push(PathBuf::from("/etc/hearth").join(FILE_NAME));
    Ok(candidates.into_iter().find(|p| exists(p)))
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, col)
}

/// `[llm] history`: how much of each turn the agent's session keeps (what each mode keeps and
/// why: `agent::history`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum HistoryMode {
    /// The request, then the calls as the model writes them, or the reply when nothing was
    /// called.
    #[default]
    Calls,
    /// Every message of the turn: calls, results, confirmations, hints.
    Full,
    /// Nothing: every turn starts afresh.
    None,
}

impl std::str::FromStr for HistoryMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "calls" => Ok(HistoryMode::Calls),
            "full" => Ok(HistoryMode::Full),
            "none" => Ok(HistoryMode::None),
            _ => Err(format!(
                "unknown history mode {s:?}: use \"calls\", \"full\" or \"none\""
            )),
        }
    }
}

#[cfg(test)]
mod tests;
