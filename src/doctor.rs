//! `hearth doctor`: checks what the daemon needs and says what is wrong and how to fix it.
//!
//! Each check gives a [`Finding`]: its area, a level (ok, warn, fail), what was found and,
//! when it is not ok, the fix. Nothing stops at the first problem: a broken config file is
//! reported and the defaults are examined, so one run lists everything. The report is all
//! well when no finding fails (warnings are things that may be intended).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::bus::BusAddress;
use crate::config::{BusKind, Config};
use crate::settings::{Flags, Settings, SttChoice};

/// How long a network check (broker, Home Assistant, a speech server, the bus) may take.
pub(crate) const NETWORK_TIMEOUT: Duration = Duration::from_secs(3);

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    /// Works, but may not be what was meant (no device by that name, nothing serving yet).
    Warn,
    /// Will not work.
    Fail,
}

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// What was checked: `config`, `model`, `whisper`, `voice`, `audio`, `bus`, `mqtt`, …
    pub area: &'static str,
    pub level: Level,
    /// What was found.
    pub what: String,
    /// How to fix it (None when ok).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    fn ok(area: &'static str, what: impl Into<String>) -> Finding {
        Finding {
            area,
            level: Level::Ok,
            what: what.into(),
            fix: None,
        }
    }

    fn warn(area: &'static str, what: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            area,
            level: Level::Warn,
            what: what.into(),
            fix: Some(fix.into()),
        }
    }

    fn fail(area: &'static str, what: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            area,
            level: Level::Fail,
            what: what.into(),
            fix: Some(fix.into()),
        }
    }
}

/// What to examine: the flags `hearth doctor` shares with `hearth run`, resolved by
/// [`crate::settings`] as `hearth run` resolves them.
#[derive(Debug, Clone, Default)]
pub struct DoctorOptions {
    /// `--config`.
    pub config: Option<PathBuf>,
    /// `--board`.
    pub board: Option<String>,
    /// `--bus` (session, system or none); default as `hearth run` picks it.
    pub bus: Option<BusKind>,
    /// `--tools`.
    pub tools: Option<PathBuf>,
}

/// Every finding, in the order checked.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    /// True when nothing failed.
    pub fn all_well(&self) -> bool {
        self.findings.iter().all(|f| f.level != Level::Fail)
    }
}

impl DoctorOptions {
    /// The command-line flags these options stand for.
    pub fn flags(&self) -> Flags {
        Flags {
            config: self.config.clone(),
            board: self.board.clone(),
            bus: self.bus,
            tools: self.tools.clone(),
            ..Flags::default()
        }
    }
}

/// Run every check, on the settings `hearth run` would resolve from the same flags.
pub async fn examine(opts: &DoctorOptions) -> Report {
    let mut out = Vec::new();
    let flags = opts.flags();
    let settings = match Settings::discover(flags.clone()) {
        Ok(s) => {
            out.push(match &s.config_path {
                Some(p) => Finding::ok("config", format!("{} is valid", p.display())),
                None => Finding::warn(
                    "config",
                    "no config file: the defaults are used",
                    "copy config/hearth.toml to /etc/hearth/hearth.toml (or ~/.config/hearth/hearth.toml) and edit it",
                ),
            });
            s
        }
        Err(e) => {
            out.push(Finding::fail(
                "config",
                e.to_string(),
                "correct the file at the place named (config/hearth.toml in hearth's source documents every key); the other checks use the defaults",
            ));
            Settings::new(flags, Config::default(), None)
        }
    };
    if let Err(e) = settings.model_dir() {
        out.push(Finding::fail(
            "models",
            e.to_string(),
            "set HEARTH_MODEL_DIR (systemd sets CACHE_DIRECTORY)",
        ));
    }
    let remote = check_remote(&settings, &mut out).await;
    check_llm(&settings, remote, &mut out);
    check_stt(&settings, &mut out).await;
    check_voice(&settings, &mut out).await;
    check_wake(&settings, &mut out);
    check_cues(&settings, &mut out);
    check_audio(&settings, &mut out);
    check_bus(&settings, &mut out).await;
    check_tools(&settings, &mut out).await;
    Report { findings: out }
}

/// `[agent] engine = "openai"`: the way to the model, whether the server answers, and
/// where the chat template comes from. True when the model runs on that server (the local
/// model file is then only where the template may come from).
async fn check_remote(settings: &Settings, out: &mut Vec<Finding>) -> bool {
    use crate::llm::openai::{self, RemoteGrammar, TemplateSource};
    use crate::supervisor::EngineChoice;
    let Ok(EngineChoice::OpenAi(remote)) = settings.engine() else {
        return false;
    };
    out.push(Finding::ok(
        "llm",
        format!("the model runs on a server: {}", remote.path()),
    ));
    if remote.grammar == RemoteGrammar::None {
        out.push(Finding::warn(
            "grammar",
            "grammars are not sent to the LLM server: a call's syntax and arguments are not forced as in process (the parser and each tool's schema still check every call)",
            "with llama.cpp's llama-server built with -DLLAMA_LLGUIDANCE=ON, set [agent.openai] grammar = \"llguidance\"",
        ));
    }
    let contact = match openai::contact(&remote).await {
        Ok(c) => c,
        Err(e) => {
            out.push(Finding::fail(
                "llm server",
                e.to_string(),
                "fix [agent.openai] api_key_file",
            ));
            return true;
        }
    };
    out.push(match &contact.models {
        Ok(models) => Finding::ok(
            "llm server",
            format!("{} answers, serving {}", remote.url, models.join(", ")),
        ),
        Err(e) => Finding::fail(
            "llm server",
            e.to_string(),
            "start the server (hearth starts without it: its local intents work, a request for the model is answered with an apology)",
        ),
    });
    let cfg = match settings
        .preset()
        .and_then(|p| settings.text_options(p, false))
    {
        Ok(opts) => crate::supervisor::remote_config(&opts, &remote),
        // the preset's failure is its own finding
        Err(_) => return true,
    };
    out.push(match openai::engine_info(&cfg, &contact) {
        Ok((_, TemplateSource::Server)) => Finding::ok("chat template", "the server's"),
        Ok((_, TemplateSource::Gguf(p))) => Finding::ok(
            "chat template",
            format!("from {} (its metadata only)", p.display()),
        ),
        Ok((_, TemplateSource::Preset)) => Finding::ok("chat template", "the preset's own"),
        Err(e) => Finding::fail(
            "chat template",
            e.to_string(),
            "put the model's GGUF in the model directory, or name it with [agent] model",
        ),
    });
    true
}

fn check_llm(settings: &Settings, remote: bool, out: &mut Vec<Finding>) {
    let name = settings.preset_name();
    let preset = match settings.preset() {
        Ok(p) => {
            out.push(Finding::ok("preset", format!("{name} loads")));
            p
        }
        Err(e) => {
            out.push(Finding::fail(
                "preset",
                e.to_string(),
                "name a built-in preset (`hearth presets`) or a valid preset file in [agent] preset",
            ));
            return;
        }
    };
    if remote {
        // the model file is the server's business; the template's source was checked
        return;
    }
    match settings.llm_model() {
        Ok(Some(m)) => {
            out.push(if m.is_file() {
                Finding::ok(
                    "model",
                    format!(
                        "{} is there (named in the config; not hash-checked)",
                        m.display()
                    ),
                )
            } else {
                Finding::fail(
                    "model",
                    format!("{} is missing", m.display()),
                    "fix [agent] model, or remove it to use the preset's model",
                )
            });
            return;
        }
        // no model directory: reported as such
        Err(_) => return,
        Ok(None) => {}
    }
    let Some(source) = &preset.model else {
        out.push(Finding::fail(
            "model",
            format!("preset {name} names no model file"),
            "set [agent] model in the config",
        ));
        return;
    };
    let Ok(dir) = settings.model_dir() else {
        return;
    };
    let path = dir.join(&source.file);
    out.push(match crate::models::verify(&path, &source.sha256) {
        Ok(()) => Finding::ok("model", format!("{} (sha256 checked)", path.display())),
        Err(e) => Finding::fail(
            "model",
            e.to_string(),
            format!("run `hearth models pull {name}` (as the user hearth runs as)"),
        ),
    });
}

/// The fix for a missing model file: the exact `hearth models pull NAME` that puts `path` in
/// place when a name does ([`crate::models::pull_name`]), else `other`.
fn pull_fix(settings: &Settings, path: &Path, other: &str) -> String {
    match settings
        .model_dir()
        .ok()
        .and_then(|dir| crate::models::pull_name(path, dir))
    {
        Some(name) => {
            format!("run `hearth models pull {name}` (as the user hearth runs as), or {other}")
        }
        None => other.to_string(),
    }
}

/// A file beside its `.sha256` stamp: present, and matching the stamp when there is one.
fn stamped_file(area: &'static str, path: &Path, fix: &str) -> Finding {
    if !path.is_file() {
        return Finding::fail(area, format!("{} is missing", path.display()), fix);
    }
    let stamp = PathBuf::from(format!("{}.sha256", path.display()));
    match std::fs::read_to_string(&stamp) {
        Ok(sha) => match crate::models::verify(path, sha.trim()) {
            Ok(()) => Finding::ok(area, format!("{} (sha256 checked)", path.display())),
            Err(e) => Finding::fail(area, e.to_string(), fix),
        },
        Err(_) => Finding::ok(
            area,
            format!("{} is there (no sha256 stamp to check)", path.display()),
        ),
    }
}

async fn check_stt(settings: &Settings, out: &mut Vec<Finding>) {
    let model = match settings.stt() {
        Ok(SttChoice::Server(server)) => {
            out.push(check_stt_server(&server).await);
            return;
        }
        Ok(SttChoice::Child { model, .. }) => model,
        Err(crate::settings::SettingsError::SpeechModel(
            e @ crate::speech_models::ResolveError::Name(_),
        )) => {
            out.push(Finding::fail(
                "whisper",
                e.to_string(),
                "fix [stt] model (or --stt-model, $HEARTH_WHISPER_MODEL)",
            ));
            return;
        }
        // no model directory: reported as such
        Err(_) => return,
    };
    let fix = match crate::speech_models::by_file(&model) {
        Some(m) => format!(
            "run `hearth models pull {}` (as the user hearth runs as)",
            m.full_name()
        ),
        None => "run `hearth models pull whisper:tiny.en` (or another of `hearth models list`) and name it in [stt] model (or $HEARTH_WHISPER_MODEL)".to_string(),
    };
    out.push(stamped_file("whisper", &model, &fix));
    let beside = crate::stt::beside_executable();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("hearth-stt"))
            .find(|p| p.is_file())
    });
    out.push(match beside.or(on_path) {
        Some(p) => Finding::ok("whisper", format!("hearth-stt is {}", p.display())),
        None => Finding::fail(
            "whisper",
            "hearth-stt is neither beside hearth nor on PATH",
            "build it (cargo build --release -p hearth-stt) and install it beside hearth",
        ),
    });
}

/// A Wyoming speech server: does it accept a connection in time?
async fn check_stt_server(server: &str) -> Finding {
    let addr = server.strip_prefix("tcp://").unwrap_or(server).to_string();
    let reach = tokio::time::timeout(NETWORK_TIMEOUT, tokio::net::TcpStream::connect(addr)).await;
    match reach {
        Ok(Ok(_)) => Finding::ok(
            "whisper",
            format!("the speech server {server} accepts connections"),
        ),
        Ok(Err(e)) => Finding::fail(
            "whisper",
            format!("cannot reach the speech server {server}: {e}"),
            "start it, or fix [stt] server",
        ),
        Err(_) => Finding::fail(
            "whisper",
            format!(
                "the speech server {server} did not answer within {} s",
                NETWORK_TIMEOUT.as_secs()
            ),
            "check the address and the network, or fix [stt] server",
        ),
    }
}

/// The voice as `hearth run` makes it: a Piper voice's files, ONNX Runtime and espeak-ng's
/// data for its language ([`crate::tts::TtsConfig::resolve`]), or a text-to-speech server
/// speaking a word; then the VAD and end-of-turn models, on ONNX Runtime.
async fn check_voice(settings: &Settings, out: &mut Vec<Finding>) {
    use crate::tts::VoiceSource;
    let source = match settings.voice() {
        Ok(t) => t,
        Err(e) => {
            out.push(Finding::fail(
                "voice",
                e.to_string(),
                "set HEARTH_MODEL_DIR, or name a Piper voice in [tts] voice",
            ));
            return;
        }
    };
    let resolved = match &source {
        VoiceSource::Piper(_) if !cfg!(feature = "piper") => {
            out.push(Finding::fail(
                "voice",
                crate::tts::TtsError::NoPiper.to_string(),
                "set [tts] server, or build with the piper feature",
            ));
            None
        }
        VoiceSource::Piper(tts) => check_piper_voice(settings, tts, out),
        VoiceSource::Server(server) => {
            out.push(check_tts_server(server).await);
            None
        }
    };
    // the library the VAD and the end of turn load: the Piper voice's, else looked up
    let library = match &resolved {
        Some(r) => Ok(r.ort_library.clone()),
        None => settings
            .model_dir()
            .map_err(|e| e.to_string())
            .and_then(|dir| {
                let near = dir.join(crate::onnx::ORT_LIB_FILE);
                settings.onnx_runtime(&near).map_err(|e| e.to_string())
            }),
    };
    // a Piper voice's check reported the library already
    let piper = cfg!(feature = "piper") && matches!(source, VoiceSource::Piper(_));
    if !piper {
        out.push(match &library {
            Ok(p) => Finding::ok("onnxruntime", p.display().to_string()),
            Err(e) => Finding::fail(
                "onnxruntime",
                e.clone(),
                "hearth models pull, or set [tts] onnxruntime",
            ),
        });
    }
    // no model directory (Err): reported as such
    if let Ok(Some(v)) = settings.vad_model() {
        out.push(stamped_file(
            "vad",
            &v,
            &pull_fix(settings, &v, "set [listen] vad = \"energy\""),
        ));
    }
    if let Ok(Some(t)) = settings.turn_model() {
        let found = stamped_file(
            "end of turn",
            &t,
            &pull_fix(settings, &t, "set [listen] end_of_turn = \"silence\""),
        );
        let usable = found.level == Level::Ok;
        out.push(found);
        // no library: reported above as "onnxruntime"
        if let (true, Ok(library)) = (usable, &library) {
            out.push(check_turn_answer(&t, library));
        }
    }
}

/// A Piper voice: its files, ONNX Runtime and espeak-ng's data; what it resolves to when
/// all are there.
fn check_piper_voice(
    settings: &Settings,
    tts: &crate::tts::TtsConfig,
    out: &mut Vec<Finding>,
) -> Option<crate::tts::Resolved> {
    use crate::tts::TtsError;
    out.push(stamped_file(
        "voice",
        &tts.model,
        &pull_fix(settings, &tts.model, "name a Piper voice in [tts] voice"),
    ));
    let resolved = tts.resolve();
    if let Err(e @ (TtsError::VoiceMissing { .. } | TtsError::VoiceConfig { .. })) = &resolved {
        // the .onnx is reported above; this is its .onnx.json
        if tts.model.is_file() {
            out.push(Finding::fail(
                "voice",
                e.to_string(),
                pull_fix(
                    settings,
                    &tts.config,
                    "put the voice's .onnx.json beside its .onnx",
                ),
            ));
        }
    }
    let ort_fix = &match settings.model_dir() {
        Ok(dir) => pull_fix(
            settings,
            &dir.join(crate::onnx::ORT_LIB_FILE),
            "set [tts] onnxruntime",
        ),
        Err(_) => "set [tts] onnxruntime".to_string(),
    };
    out.push(match &resolved {
        Ok(r) => Finding::ok("onnxruntime", r.ort_library.display().to_string()),
        Err(TtsError::Runtime(e)) => Finding::fail("onnxruntime", e.to_string(), ort_fix),
        Err(_) => match settings.onnx_runtime(&tts.model) {
            Ok(p) => Finding::ok("onnxruntime", p.display().to_string()),
            Err(e) => Finding::fail("onnxruntime", e.to_string(), ort_fix),
        },
    });
    let espeak_fix = "apt install espeak-ng-data, or set [tts] espeak_data";
    out.push(match &resolved {
        Ok(r) => Finding::ok("espeak-ng", format!("data in {}", r.espeak_data.display())),
        Err(e @ TtsError::EspeakMissing { .. }) => {
            Finding::fail("espeak-ng", e.to_string(), espeak_fix)
        }
        // the voice's language is unknown (its files are missing): English
        Err(_) => match crate::tts::find_espeak_data(
            tts.espeak_data.as_deref(),
            |k| std::env::var_os(k),
            crate::models::exe_dir().as_deref(),
            "en",
        ) {
            Ok(p) => Finding::ok("espeak-ng", format!("data in {}", p.display())),
            Err(e) => Finding::fail("espeak-ng", e.to_string(), espeak_fix),
        },
    });
    resolved.ok()
}

/// A text-to-speech server: does it speak, in the voice named?
async fn check_tts_server(server: &crate::tts::ServerConfig) -> Finding {
    match crate::tts::ServerVoice::load(server.clone()).await {
        Ok(voice) => Finding::ok(
            "voice",
            format!(
                "the text-to-speech server {} speaks ({}, {} Hz)",
                server.uri,
                server.voice.as_deref().unwrap_or("its default voice"),
                voice.info().sample_rate
            ),
        ),
        Err(e) => Finding::fail(
            "voice",
            e.to_string(),
            "start the server, or fix [tts] server and [tts] voice",
        ),
    }
}

/// Whether the end-of-turn model answers its known input as the reference does on this CPU
/// ([`crate::audio::smart_turn::SmartTurn::check_known_answer`]), as `hearth run` asks at load.
fn check_turn_answer(model: &Path, library: &Path) -> Finding {
    use crate::audio::smart_turn::{SmartTurn, SmartTurnError};
    let answer = SmartTurn::load(model, library).and_then(|mut t| t.check_known_answer());
    match answer {
        Ok(p) => Finding::ok(
            "end of turn",
            format!(
                "answers its known input as the reference does on this CPU ({p:.3}{})",
                if crate::onnx::int8_products_saturate() {
                    "; exact int8 products, as this CPU has no VNNI"
                } else {
                    ""
                }
            ),
        ),
        Err(e @ SmartTurnError::Disagrees { .. }) => Finding::warn(
            "end of turn",
            e.to_string(),
            "set [listen] end_of_turn = \"silence\" (hearth already ends turns at the silence on this CPU)",
        ),
        Err(e) => Finding::fail(
            "end of turn",
            e.to_string(),
            "fetch it again: hearth models pull turn:smart-turn-v3.2",
        ),
    }
}

/// The wake words: each model and its settings (sha256 against the stamp), the TensorFlow
/// Lite library, and every model loaded on it as `hearth run` loads them.
fn check_wake(settings: &Settings, out: &mut Vec<Finding>) {
    const OTHER: &str = "choose other wake words with [listen] wake ([] listens without one)";
    let wake = match settings.wake() {
        Ok(Some(w)) => w,
        Ok(None) => {
            out.push(Finding::ok(
                "wake",
                "no wake word ([listen] wake = []): every utterance is a request",
            ));
            return;
        }
        // no model directory: reported as such
        Err(_) => return,
    };
    let findings: Vec<Finding> = wake
        .files()
        .iter()
        .map(|f| stamped_file("wake", f, &pull_fix(settings, f, OTHER)))
        .collect();
    let missing = findings.iter().any(|f| f.level == Level::Fail);
    out.extend(findings);
    if missing {
        return;
    }
    out.push(match wake.load() {
        Ok(detectors) => {
            let names: Vec<&str> = detectors.iter().map(|d| d.wake_word()).collect();
            Finding::ok(
                "wake",
                format!("listening for {} (the models load)", names.join(", ")),
            )
        }
        Err(e) => Finding::fail(
            "wake",
            e.to_string(),
            format!("run `hearth models pull` (it fetches every file the configuration names), or {OTHER}"),
        ),
    });
}

/// The cues (`[listen] earcon`, `[audio] bell`): read as `hearth run` reads them.
fn check_cues(settings: &Settings, out: &mut Vec<Finding>) {
    out.push(cue_finding(
        ("earcon", "[listen] earcon", "chime"),
        settings.earcon(),
        "acknowledges a wake word",
    ));
    out.push(cue_finding(
        ("bell", "[audio] bell", "bell"),
        settings.bell(),
        "before an announcement or a timer ringing",
    ));
}

/// One cue's finding: `(area, key, its own sound)` (the key's last word is the area), the
/// sound as read, what it is for.
fn cue_finding(
    (area, key, own): (&'static str, &str, &str),
    sound: Result<Option<crate::voice::Pcm>, crate::settings::SettingsError>,
    what: &str,
) -> Finding {
    match sound {
        Ok(Some(pcm)) => Finding::ok(area, format!("{:.2} s {what}", pcm.secs())),
        Ok(None) => Finding::ok(area, format!("none ({key} = \"none\")")),
        Err(e) => Finding::fail(
            area,
            e.to_string(),
            format!("give a WAV file of at most 2 s, or {area} = \"{own}\" or \"none\""),
        ),
    }
}

fn check_audio(settings: &Settings, out: &mut Vec<Finding>) {
    for (input, kind, named) in [
        (true, "capture", settings.mic()),
        (false, "playback", settings.speaker()),
    ] {
        let spec = settings.device(named);
        match crate::audio::device_names(&spec, input) {
            Ok(names) if names.is_empty() => out.push(Finding::fail(
                "audio",
                format!("no {kind} device"),
                "plug in a USB microphone/speaker; under systemd the unit needs DeviceAllow=char-alsa and the audio group",
            )),
            Ok(names) => {
                let wanted = named.unwrap_or("default");
                let id = wanted.split_once(':').map(|(_, id)| id).unwrap_or(wanted);
                let found = wanted == "default" || names.iter().any(|n| n.contains(id));
                out.push(if found {
                    Finding::ok("audio", format!("{kind} {wanted:?} among {} device(s)", names.len()))
                } else {
                    Finding::warn(
                        "audio",
                        format!("no {kind} device named {wanted:?}; there are: {}", names.join(", ")),
                        "set [audio] mic/speaker to one of those names",
                    )
                });
            }
            Err(e @ crate::audio::AudioError::NoDeviceSupport) => {
                out.push(Finding::warn(
                    "audio",
                    e.to_string(),
                    "fine for `hearth run --no-audio`; for a microphone, rebuild with default features",
                ));
                return;
            }
            Err(e) => out.push(Finding::fail("audio", e.to_string(), "check the sound devices (arecord -l, aplay -l)")),
        }
    }
}

async fn check_bus(settings: &Settings, out: &mut Vec<Finding>) {
    let (kind, _) = settings.bus();
    let (address, builder) = match kind {
        BusKind::None => {
            out.push(Finding::ok("bus", "no D-Bus face (bus = \"none\")"));
            return;
        }
        BusKind::Session => (BusAddress::Session, zbus::connection::Builder::session()),
        BusKind::System => (BusAddress::System, zbus::connection::Builder::system()),
    };
    let conn = match tokio::time::timeout(NETWORK_TIMEOUT, builder.build()).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            out.push(Finding::fail(
                "bus",
                format!("cannot connect to the {address}: {e}"),
                "start D-Bus (apt install dbus), or run hearth with --bus none",
            ));
            return;
        }
        Err(_) => {
            out.push(Finding::fail(
                "bus",
                format!("the {address} did not answer"),
                "check dbus-daemon",
            ));
            return;
        }
    };
    out.push(Finding::ok("bus", format!("the {address} answers")));
    if kind == BusKind::System {
        let installed = ["/usr/share/dbus-1/system.d", "/etc/dbus-1/system.d"]
            .iter()
            .any(|d| Path::new(d).join("io.hearth.Agent1.conf").is_file());
        out.push(if installed {
            Finding::ok("bus", "the io.hearth.Agent1 policy is installed")
        } else {
            Finding::fail("bus", "no io.hearth.Agent1 policy in /usr/share/dbus-1/system.d", "install systemd/io.hearth.Agent1.conf there (systemd/install does) and reload dbus")
        });
    }
    let owner = match (
        zbus::fdo::DBusProxy::new(&conn).await,
        zbus::names::BusName::from_static_str(crate::bus::NAME),
    ) {
        (Ok(p), Ok(name)) => p.get_name_owner(name).await.ok(),
        _ => None,
    };
    out.push(match owner {
        Some(o) => Finding::ok("bus", format!("{} is served (by {o})", crate::bus::NAME)),
        None => Finding::warn(
            "bus",
            format!("nothing serves {} yet", crate::bus::NAME),
            "start hearth (systemctl start hearth, or hearth run)",
        ),
    });
}

async fn check_tools(settings: &Settings, out: &mut Vec<Finding>) {
    let config = &settings.config;
    let backends = match crate::tools::Backends::from_config(config) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            out.push(Finding::fail(
                "tools",
                e.to_string(),
                "fix the file named in the config",
            ));
            Arc::new(crate::tools::Backends::none())
        }
    };
    let dir = settings.tools_dir();
    let registry = match &dir {
        None => {
            out.push(Finding::warn(
                "tools",
                "no tools directory: only the built-in tools",
                "set [agent] tools (e.g. /etc/hearth/tools) and copy manifests from tools/examples",
            ));
            None
        }
        Some(d) => match crate::tools::Registry::load(d, backends.clone()) {
            Ok(r) => {
                out.push(Finding::ok(
                    "tools",
                    format!("{} tools from {}", r.len(), d.display()),
                ));
                Some(r)
            }
            Err(e) => {
                out.push(Finding::fail(
                    "tools",
                    e.to_string(),
                    "fix the manifest named",
                ));
                None
            }
        },
    };
    if let Some(m) = &backends.mqtt {
        let over = if m.uses_tls() { " over TLS" } else { "" };
        out.push(match m.probe(NETWORK_TIMEOUT).await {
            Ok(()) => Finding::ok(
                "mqtt",
                format!("the broker at {} accepts hearth's connection{over}", m.address()),
            ),
            Err(e) => Finding::fail(
                "mqtt",
                e,
                if m.uses_tls() {
                    "start the broker or fix [mqtt] url, username, password_file and the TLS files (ca_file, client_cert_file, client_key_file)"
                } else {
                    "start the broker or fix [mqtt] url, username and password_file"
                },
            ),
        });
    }
    if let Some(h) = &backends.homeassistant {
        out.push(match h.probe(NETWORK_TIMEOUT).await {
            Ok(msg) => Finding::ok("homeassistant", msg),
            Err(e) => Finding::fail("homeassistant", e, "fix [homeassistant] url and token_file"),
        });
    }
    if let Some(section) = &config.homeassistant {
        out.push(house(section).await);
    }
    let uses_gpio = config.gpio.chip.is_some()
        || registry
            .as_ref()
            .is_some_and(|r| r.tools().iter().any(|t| t.executor.kind() == "gpio"));
    if uses_gpio {
        out.push(match backends.gpio.probe() {
            Ok(chips) => Finding::ok("gpio", chips.join("; ")),
            Err(e) => Finding::fail("gpio", e, "run on a board with GPIO, add the user to the gpio group (the unit does), or remove the gpio tools"),
        });
    }
}

/// What reading the house from Home Assistant finds (`[homeassistant] discover`): how many
/// things, tools and areas, and what was left out; or why it cannot be read (a server down
/// at start is this line, and `hearth run` keeps trying).
async fn house(section: &crate::config::HomeAssistantSection) -> Finding {
    let watch = match crate::house::HouseWatch::from_config(section) {
        Ok(Some(w)) => w,
        Ok(None) => {
            return Finding::ok(
                "house",
                "[homeassistant] discover = false: only the manifests' tools",
            )
        }
        Err(e) => return Finding::fail("house", e.to_string(), "fix [homeassistant] token_file"),
    };
    match tokio::time::timeout(NETWORK_TIMEOUT * 4, crate::house::read_once(&watch)).await {
        Err(_) => Finding::fail(
            "house",
            format!("Home Assistant at {} did not answer the registries in time", watch.url),
            "check that Home Assistant is running; hearth run keeps trying",
        ),
        Ok(Err(e)) => Finding::fail(
            "house",
            e.to_string(),
            "the token's user must be an administrator to read the registries; hearth run keeps trying meanwhile",
        ),
        Ok(Ok(found)) => {
            let tools = crate::house::tools(&found.things).len();
            let mut what = format!(
                "{} things exposed to Assist make {tools} tools, in {} areas",
                found.things.len(),
                found.areas.len()
            );
            if let Some(first) = found.left.first() {
                what.push_str(&format!(
                    "; {} exposed entities left out ({}: {}; `hearth devices` lists them)",
                    found.left.len(),
                    first.entity_id,
                    first.reason
                ));
            }
            if found.things.is_empty() {
                Finding::warn(
                    "house",
                    what,
                    "expose entities to Assist in Home Assistant (Settings → Voice assistants → Expose)",
                )
            } else {
                Finding::ok("house", what)
            }
        }
    }
}

/// The report as text: one line per finding, the fix indented below.
pub fn render(report: &Report) -> String {
    let mut s = String::new();
    for f in &report.findings {
        let tag = match f.level {
            Level::Ok => " ok ",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        s.push_str(&format!("[{tag}] {:<13} {}\n", f.area, f.what));
        if let Some(fix) = &f.fix {
            s.push_str(&format!("       {:<13} fix: {fix}\n", ""));
        }
    }
    s.push_str(if report.all_well() {
        "all well\n"
    } else {
        "something is wrong: see FAIL above\n"
    });
    s
}
