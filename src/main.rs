//! The `hearth` command line.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::collections::HashMap;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser as ClapParser, Subcommand};
use hearth::agent::Ask;
use hearth::models::{self, ModelError, ModelStatus};
use hearth::preset::Preset;
use hearth::supervisor::{start_text, TextOptions};
use hearth::toolcall::{known_tags, registry, Parser, Strictness, ToolSet};
use serde_json::{json, Value};

#[derive(ClapParser)]
#[command(name = "hearth", version, about = "On-device voice agent daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One turn from text: the model decides, tools run, the reply is printed.
    Ask(AskArgs),
    /// The voice daemon: listen, understand, act, answer out loud.
    #[cfg(feature = "tts")]
    Run(RunArgs),
    /// Parse raw model output into tool calls, reply and reasoning (JSON out).
    Parse(ParseArgs),
    /// List the tool-call parsers (wire-format detectors).
    Parsers,
    /// List the built-in model presets.
    Presets,
    /// Model files: download, locate, verify, list.
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Check the config, models, voice, audio devices, bus, tools and their connections;
    /// say what is wrong and how to fix it. Exit status 0 when all is well.
    Doctor(DoctorArgs),
}

#[derive(clap::Args)]
struct DoctorArgs {
    /// The configuration file (default: found as `hearth run` finds it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The board profile `hearth run --board` would use.
    #[arg(long)]
    board: Option<String>,
    /// The bus to check: session, system or none (default: as `hearth run` picks it).
    #[arg(long)]
    bus: Option<String>,
    /// Directory of tool manifests (default: as `hearth run` finds it).
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Print the findings as one JSON object.
    #[arg(long)]
    json: bool,
}

fn cmd_doctor(args: DoctorArgs) -> Result<ExitCode> {
    let bus = args
        .bus
        .as_deref()
        .map(str::parse::<hearth::config::BusKind>)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let opts = hearth::doctor::DoctorOptions {
        config: args.config,
        board: args.board,
        bus,
        tools: args.tools,
    };
    let report = runtime()?.block_on(hearth::doctor::examine(&opts));
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", hearth::doctor::render(&report))?;
    }
    Ok(if report.all_well() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[derive(clap::Args)]
struct AskArgs {
    /// What the user said.
    text: String,
    /// Model preset (see `hearth presets`) or a preset .toml file. Default: the config
    /// file's [agent] preset, else qwen2.5-coder.
    #[arg(long)]
    preset: Option<String>,
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of tool manifests (*.toml). Default: $HEARTH_TOOLS, else ./tools if present.
    #[arg(long)]
    tools: Option<std::path::PathBuf>,
    /// The model file (default: the preset's model in the model directory).
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Print one JSON object: reply, hops (raw, calls, telemetry), timings.
    #[arg(long)]
    json: bool,
    /// Override the preset's tool_choice_policy: auto, required_first_hop, required_always.
    #[arg(long)]
    policy: Option<String>,
    /// Hop 0 must call this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Context length in tokens (default: the config's, else 4096).
    #[arg(long)]
    n_ctx: Option<u32>,
    /// Do not keep the KV cache on disk between runs (every run evaluates the whole prompt).
    #[arg(long)]
    no_prompt_cache: bool,
}

#[cfg(feature = "tts")]
#[derive(clap::Args)]
struct RunArgs {
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one). Flags
    /// given here win over it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Read speech from this WAV file instead of a microphone.
    #[arg(long, conflicts_with = "mic")]
    input: Option<PathBuf>,
    /// Capture from this sound device (see cpal's names; default: the default input).
    #[arg(long)]
    mic: Option<String>,
    /// Write the spoken replies into this WAV file instead of a speaker.
    #[arg(long, conflicts_with = "speaker")]
    output: Option<PathBuf>,
    /// Play on this sound device (default: the default output).
    #[arg(long)]
    speaker: Option<String>,
    /// Process the input, answer, and exit when it ends (with --input).
    #[arg(long)]
    once: bool,
    /// Pace a WAV input in real time (as a microphone would deliver it).
    #[arg(long)]
    realtime: bool,
    /// The whisper.cpp model for hearth-stt. Default: $HEARTH_WHISPER_MODEL, else
    /// ggml-tiny.en.bin in the model directory.
    #[arg(long)]
    stt_model: Option<PathBuf>,
    /// Use this Wyoming ASR server (tcp://HOST:PORT) instead of spawning hearth-stt.
    #[arg(long)]
    stt: Option<String>,
    /// Words hearth-stt should expect (whisper's initial prompt). Default: the tools'
    /// vocabulary (the values their parameters enumerate, such as room names, and the
    /// nouns of their names); "" for none.
    #[arg(long)]
    stt_prompt: Option<String>,
    /// The Piper voice (.onnx, with its .onnx.json beside it). Default: en_US-joe-medium in
    /// the model directory.
    #[arg(long)]
    voice: Option<PathBuf>,
    /// Model preset (default: the config's [agent] preset, else qwen2.5-coder).
    #[arg(long)]
    preset: Option<String>,
    /// Directory of tool manifests. Default: $HEARTH_TOOLS, else ./tools if present.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// The LLM model file (default: the preset's model in the model directory).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Print each turn as one JSON line (heard, reply, calls, stage timings).
    #[arg(long)]
    json: bool,
    /// Serve the D-Bus face (io.hearth.Agent1) on this bus: session, system or none.
    /// Default: the config's [bus] bus, else the system bus under systemd and the session
    /// bus otherwise (when that bus cannot be reached, hearth runs without the face).
    #[arg(long)]
    bus: Option<String>,
    /// No microphone or speaker: serve the agent and the tools over D-Bus only.
    #[arg(long, conflicts_with_all = ["input", "mic", "output", "speaker", "once", "realtime"])]
    no_audio: bool,
    /// Start from a board profile (pi5, pi4, jetson-orin-nano: threads, GPU layers, audio
    /// devices, GPIO chip, preset, whisper model); the config file's keys win over it.
    #[arg(long)]
    board: Option<String>,
}

/// The bus `hearth run` serves on, and whether it was asked for (an unreachable bus is
/// then an error) or is the default (hearth runs on without the face).
#[cfg(feature = "tts")]
fn bus_choice(
    flag: Option<&str>,
    config: &hearth::config::BusSection,
) -> Result<(Option<hearth::bus::BusAddress>, bool)> {
    use hearth::bus::BusAddress;
    use hearth::config::BusKind;
    let flag = flag
        .map(str::parse::<BusKind>)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let (kind, explicit) = hearth::bus::choose(flag, config.bus);
    Ok((
        match kind {
            BusKind::Session => Some(BusAddress::Session),
            BusKind::System => Some(BusAddress::System),
            BusKind::None => None,
        },
        explicit,
    ))
}

/// A bare file name (`ggml-base.en.bin`, as board profiles give them) is in the model
/// directory; any other path is taken as it is.
#[cfg(feature = "tts")]
fn in_model_dir(p: PathBuf) -> Result<PathBuf> {
    Ok(models::in_dir(&p, &models::model_dir()?))
}

/// Serve the D-Bus face on `bus` (if any) and start systemd's watchdog over the text actors
/// and the face. A bus that cannot be reached is an error when `required`, else a warning
/// and hearth runs on without the face.
#[cfg(feature = "tts")]
async fn serve_and_watch(
    text: &hearth::supervisor::TextRuntime,
    bus: Option<hearth::bus::BusAddress>,
    required: bool,
    face_opts: impl FnOnce(hearth::bus::BusAddress) -> hearth::bus::FaceOptions,
    events: hearth::events::Events,
) -> Result<(
    Option<hearth::bus::Face>,
    Option<tokio::task::JoinHandle<()>>,
)> {
    let face = match bus {
        None => None,
        Some(bus) => {
            let served = hearth::bus::serve(
                face_opts(bus),
                text.agent.clone(),
                text.tools.clone(),
                events,
            )
            .await;
            match served {
                Ok(f) => Some(f),
                Err(e) if required => return Err(e.into()),
                Err(e) => {
                    tracing::warn!(error = %e, "running without the D-Bus face (choose one with --bus, or --bus none)");
                    None
                }
            }
        }
    };
    let mut probes = text.probes();
    if let Some(f) = &face {
        probes.push(("bus", f.probe()));
    }
    let dog = hearth::systemd::Watchdog::from_env(probes).map(hearth::systemd::spawn_watchdog);
    Ok((face, dog))
}

/// Wait for SIGTERM (systemd's stop) or Ctrl-C.
#[cfg(feature = "tts")]
/// SIGTERM or Ctrl-C, whichever comes first: both handlers are installed now, so a signal
/// that arrives before the future is polled is not lost.
fn shutdown_signal() -> Result<impl std::future::Future<Output = &'static str> + Send> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "Ctrl-C",
        }
    })
}

#[cfg(feature = "tts")]
fn cmd_run(args: RunArgs) -> Result<ExitCode> {
    use hearth::audio::{CaptureSource, DeviceSpec, PlaybackSink};
    use hearth::pipeline::{run, VoiceOptions};
    use hearth::stt::{SttConfig, SttServer};
    use hearth::tools::ToolsMsg;
    use hearth::tts::TtsConfig;

    if args.once && args.input.is_none() {
        bail!("--once needs --input WAV (a microphone never ends)");
    }
    let (mut config, config_path) =
        hearth::config::Config::discover_on(args.config.as_deref(), args.board.as_deref())?;
    if let Some(p) = &config_path {
        tracing::info!(config = %p.display(), "configuration read");
    }
    if let Some(b) = &args.board {
        tracing::info!(board = %b, "board profile applied");
    }
    config.stt.model = config.stt.model.take().map(in_model_dir).transpose()?;
    config.tts.voice = config.tts.voice.take().map(in_model_dir).transpose()?;
    config.agent.model = config.agent.model.take().map(in_model_dir).transpose()?;
    let (bus, bus_explicit) = bus_choice(args.bus.as_deref(), &config.bus)?;
    if args.no_audio && bus.is_none() {
        bail!("--no-audio with no bus leaves nothing to serve: use --bus session or --bus system");
    }
    let backends = std::sync::Arc::new(hearth::tools::Backends::from_config(&config)?);
    let events = hearth::events::channel();
    let muted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut opts = text_options(
        agent_preset(args.preset.as_deref(), &config.agent)?,
        &config.agent,
        args.tools.clone(),
        args.model.clone(),
        None,
        true,
    )?;
    opts.backends = backends;
    opts.events = Some(events.clone());
    let preset_name = opts.preset.name.clone();
    let rt = runtime()?;
    if args.no_audio {
        return rt.block_on(async {
            hearth::systemd::status("loading the model");
            let text = start_text(opts).await?;
            // the face is all there is to serve: a bus that cannot be reached is an error
            let face_opts = |bus| hearth::bus::FaceOptions {
                bus,
                preset: preset_name,
                voice: false,
                muted,
            };
            let (face, _dog) = serve_and_watch(&text, bus, true, face_opts, events).await?;
            hearth::systemd::ready("serving the agent on D-Bus (no audio)");
            let why = shutdown_signal()?.await;
            tracing::info!(signal = why, "stopping");
            hearth::systemd::stopping();
            drop(face);
            anyhow::Ok(ExitCode::SUCCESS)
        });
    }
    let device = |name: Option<&String>| {
        let mut spec = match name.map(String::as_str) {
            None | Some("default") => DeviceSpec::default_device(),
            Some(n) => DeviceSpec::named(n.to_string()),
        };
        spec.buffer_ms = config.audio.buffer_ms;
        spec
    };
    let input = match &args.input {
        Some(p) => CaptureSource::Wav {
            path: p.clone(),
            realtime: args.realtime,
        },
        None => CaptureSource::Device(device(args.mic.as_ref().or(config.audio.mic.as_ref()))),
    };
    // what the voice needs, checked before minutes go into loading the models
    let mut tts = match args.voice.as_ref().or(config.tts.voice.as_ref()) {
        Some(v) => TtsConfig::new(v.clone()),
        None => TtsConfig::default_voice()?,
    };
    tts.ort_library = config.tts.onnxruntime.clone();
    tts.espeak_data = config.tts.espeak_data.clone();
    tts.length_scale = config.tts.length_scale;
    let voice = tts.resolve()?;
    let output = match &args.output {
        Some(p) => PlaybackSink::Wav {
            path: p.clone(),
            rate: voice.sample_rate,
            realtime: false,
        },
        None => PlaybackSink::Device(device(
            args.speaker.as_ref().or(config.audio.speaker.as_ref()),
        )),
    };
    let server = args.stt.as_ref().or(config.stt.server.as_ref());
    let mut stt = match server {
        // a --stt-model on the command line means the child, whatever the file says
        Some(addr) if args.stt_model.is_none() || args.stt.is_some() => {
            SttConfig::new(SttServer::Connect(addr.clone()))
        }
        _ => {
            let model = match args.stt_model.clone().or(config.stt.model.clone()) {
                Some(m) => m,
                None => match std::env::var_os("HEARTH_WHISPER_MODEL") {
                    Some(m) => PathBuf::from(m),
                    None => models::model_dir()?.join("ggml-tiny.en.bin"),
                },
            };
            if !model.is_file() {
                bail!(
                    "the whisper model {} is missing: run scripts/fetch-models, or name one \
                     with --stt-model FILE ([stt] model in the config, or $HEARTH_WHISPER_MODEL)",
                    model.display()
                );
            }
            let mut server = SttServer::spawn_default(model);
            if let SttServer::Spawn { args: a, .. } = &mut server {
                if let Some(n) = config.stt.threads {
                    a.extend(["--threads".to_string(), n.to_string()]);
                }
            }
            SttConfig::new(server)
        }
    };
    stt.language = config.stt.language.clone();
    let stt_prompt = args.stt_prompt.clone().or(config.stt.prompt.clone());
    let listen = listen_config(&config.listen, config.tts.onnxruntime.as_ref())?;
    if let hearth::audio::listen::VadKind::Silero { model, .. } = &listen.vad {
        // checked now, not after minutes of loading the models
        if !model.is_file() {
            bail!(hearth::audio::silero::VadError::Missing(model.clone()));
        }
    }
    let conversation_idle = config
        .agent
        .conversation_idle_s
        .map(std::time::Duration::from_secs)
        .unwrap_or(hearth::pipeline::CONVERSATION_IDLE);
    let json = args.json;
    let turns = rt.block_on(async {
        hearth::systemd::status("loading the models");
        let text = start_text(opts).await?;
        let face_opts = |bus| hearth::bus::FaceOptions {
            bus,
            preset: preset_name,
            voice: true,
            muted: muted.clone(),
        };
        let (face, _dog) =
            serve_and_watch(&text, bus, bus_explicit, face_opts, events.clone()).await?;
        // readiness follows the voice stages: READY once every one is up
        let (stage_tx, mut stage_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut ready = false;
            while let Some(e) = stage_rx.recv().await {
                match e {
                    hearth::supervisor::StageEvent::Ready if !ready => {
                        ready = true;
                        hearth::systemd::ready("listening");
                    }
                    hearth::supervisor::StageEvent::Ready => hearth::systemd::status("listening"),
                    hearth::supervisor::StageEvent::Degraded { stage } => hearth::systemd::status(
                        &format!("degraded: the {stage} stage is down, restarting"),
                    ),
                    _ => {}
                }
            }
        });
        if let SttServer::Spawn { args: stt_args, .. } = &mut stt.server {
            let prompt = match &stt_prompt {
                Some(p) => p.clone(),
                None => ractor::call!(text.tools, ToolsMsg::Snapshot)
                    .map_err(|e| anyhow::anyhow!("the tools actor did not answer: {e}"))?
                    .vocabulary()
                    .join(", "),
            };
            if !prompt.trim().is_empty() {
                tracing::info!(%prompt, "speech recognition expects the tools' words");
                stt_args.extend(["--prompt".to_string(), prompt]);
            }
        }
        let voice = VoiceOptions {
            input,
            output,
            stt,
            tts,
            listen,
            once: args.once,
            conversation_idle,
            events: Some(stage_tx),
            bus_events: Some(events.clone()),
            muted,
        };
        let signal = shutdown_signal()?;
        let shutdown = async move {
            let why = signal.await;
            tracing::info!(signal = why, "stopping");
        };
        let on_turn = |t: &hearth::pipeline::VoiceTurn| {
            let mut out = std::io::stdout().lock();
            if json {
                let _ = serde_json::to_writer(&mut out, t);
                let _ = writeln!(out);
            } else {
                let reply = t.turn.as_ref().map(|t| t.reply.as_str()).unwrap_or("");
                let _ = writeln!(out, "heard: {}\nreply: {reply}", t.heard);
                if let Some(e) = &t.error {
                    let _ = writeln!(out, "error: {e}");
                }
            }
            let _ = out.flush();
        };
        // a signal ends the turn under way, then every stage stops in order
        let turns = run(text.agent.clone(), voice, on_turn, shutdown).await?;
        hearth::systemd::stopping();
        drop(face);
        anyhow::Ok(turns)
    })?;
    let failed = turns.iter().any(|t| t.error.is_some());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The preset when neither the command line nor the config names one.
const DEFAULT_PRESET: &str = "qwen2.5-coder";

/// `[listen]` over the defaults; the detector is the Silero VAD unless `vad = "energy"`.
#[cfg(feature = "tts")]
fn listen_config(
    l: &hearth::config::ListenSection,
    ort_library: Option<&PathBuf>,
) -> Result<hearth::audio::listen::ListenConfig> {
    use hearth::audio::listen::VadKind;
    use hearth::config::Vad;
    let vad = match l.vad.unwrap_or(Vad::Silero) {
        Vad::Energy => VadKind::Energy,
        Vad::Silero => VadKind::Silero {
            model: match &l.silero_model {
                Some(m) => m.clone(),
                None => models::model_dir()?.join(hearth::audio::silero::SILERO_FILE),
            },
            ort_library: ort_library.cloned(),
        },
    };
    let mut c = hearth::audio::listen::ListenConfig {
        vad,
        ..Default::default()
    };
    if let Some(t) = l.speech_threshold {
        c.speech_threshold = t;
    }
    let set_f = |v: &mut f32, o: Option<f32>| *v = o.unwrap_or(*v);
    let set_u = |v: &mut u32, o: Option<u32>| *v = o.unwrap_or(*v);
    set_f(&mut c.threshold_db, l.threshold_db);
    set_f(&mut c.min_level_dbfs, l.min_level_dbfs);
    set_f(&mut c.echo_margin_db, l.echo_margin_db);
    set_u(&mut c.onset_ms, l.onset_ms);
    set_u(&mut c.preroll_ms, l.preroll_ms);
    set_u(&mut c.hangover_ms, l.hangover_ms);
    set_u(&mut c.early_ms, l.early_ms);
    set_u(&mut c.min_speech_ms, l.min_speech_ms);
    set_u(&mut c.max_utterance_ms, l.max_utterance_ms);
    set_u(&mut c.barge_in_ms, l.barge_in_ms);
    Ok(c)
}

/// The preset named on the command line, else by the config's `[agent]`, else the default.
fn agent_preset(flag: Option<&str>, agent: &hearth::config::AgentSection) -> Result<Preset> {
    let name = flag.or(agent.preset.as_deref()).unwrap_or(DEFAULT_PRESET);
    Ok(Preset::load(name)?)
}

/// Text-mode options: the command line's tools, model and context over the config's
/// `[agent]` (tools default to `default_tools_dir`, the model to the preset's), the
/// config's threads, and the on-disk KV cache when `prompt_cache`.
fn text_options(
    preset: Preset,
    agent: &hearth::config::AgentSection,
    tools: Option<PathBuf>,
    model: Option<PathBuf>,
    n_ctx: Option<u32>,
    prompt_cache: bool,
) -> Result<TextOptions> {
    let mut opts = TextOptions::new(preset);
    opts.tools_dir = tools.or(agent.tools.clone()).or_else(default_tools_dir);
    opts.model = model.or(agent.model.clone());
    if let Some(n) = n_ctx.or(agent.n_ctx) {
        opts.n_ctx = n;
    }
    opts.threads = agent.threads.map(|n| n as i32);
    opts.gpu_layers = agent.gpu_layers.unwrap_or(0);
    opts.history = agent.history.unwrap_or_default();
    opts.intents = agent.intents.unwrap_or(true);
    if prompt_cache {
        let model = hearth::supervisor::model_path(&opts)?;
        opts.prompt_cache = hearth::supervisor::prompt_cache_path(&opts, &model);
        opts.model = Some(model);
    }
    Ok(opts)
}

/// The async runtime of a command: two workers (the machines are small).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn default_tools_dir() -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("HEARTH_TOOLS") {
        return Some(d.into());
    }
    let local = std::path::PathBuf::from("tools");
    local.is_dir().then_some(local)
}

fn cmd_ask(args: AskArgs) -> Result<ExitCode> {
    let (config, _) = hearth::config::Config::discover(args.config.as_deref())?;
    let mut preset = agent_preset(args.preset.as_deref(), &config.agent)?;
    if let Some(p) = &args.policy {
        preset.tool_choice_policy =
            serde_json::from_value(Value::String(p.clone())).with_context(|| {
                format!("--policy {p:?}: use auto, required_first_hop or required_always")
            })?;
    }
    let mut opts = text_options(
        preset,
        &config.agent,
        args.tools.clone(),
        args.model.clone(),
        args.n_ctx,
        !args.no_prompt_cache,
    )?;
    // tools that publish to the broker or call Home Assistant work from `ask` too
    opts.backends = std::sync::Arc::new(hearth::tools::Backends::from_config(&config)?);
    let rt = runtime()?;
    let json = args.json;
    let turn = rt.block_on(async {
        let text = start_text(opts).await?;
        let mut request = Ask::new("cli", args.text.clone());
        request.force_tool = args.tool.clone();
        // Without --json, print each sentence as soon as it is settled, as speech would.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        if !json {
            request.speak = Some(tx);
        } else {
            drop(tx);
        }
        let printer = tokio::spawn(async move {
            let mut out = std::io::stdout();
            while let Some(sentence) = rx.recv().await {
                let _ = writeln!(out, "{sentence}");
                let _ = out.flush();
            }
        });
        let turn = hearth::agent::ask(&text.agent, request).await?;
        printer.await.context("printing the reply")?;
        anyhow::Ok(turn)
    })?;
    if json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &turn)?;
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Download a preset's model file (resumes a partial download; checks its sha256).
    Pull {
        /// A preset name (see `hearth presets`) or a preset .toml file with a [model] section.
        preset: String,
        /// Store the file here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Download from this URL instead of the preset's (e.g. a mirror); the sha256 must match.
        #[arg(long)]
        url: Option<String>,
    },
    /// Print the path of a preset's model file; exit 1 if it is missing or corrupt.
    Path {
        /// A preset name or a preset .toml file.
        preset: String,
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Hash a preset's model file (whatever its stamp says); exit 1 if missing or corrupt.
    Verify {
        /// A preset name or a preset .toml file.
        preset: String,
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// List the built-in presets' model files and whether each is present.
    List {
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct ParseArgs {
    /// Detector chain: `auto` (every detector) or names in priority order, comma-separated.
    #[arg(long)]
    parsers: Option<String>,
    /// A preset name (see `hearth presets`) or a preset .toml file: its chain and think tags.
    #[arg(long)]
    preset: Option<String>,
    /// OpenAI-style tools list (JSON file): the allowlist and argument schemas.
    #[arg(long)]
    tools: Option<std::path::PathBuf>,
    /// Read one JSON object per stdin line: {"raw": "...", "tools": [...]}.
    #[arg(long)]
    jsonl: bool,
    /// Parse each input N times and report the median time as parse_us.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
}

fn main() -> ExitCode {
    // Logs on stderr: colours only for a terminal; under systemd (stderr is the journal)
    // no timestamp either, as journald stamps each line itself.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        logs.without_time().init();
    } else {
        logs.init();
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ask(args) => cmd_ask(args),
        #[cfg(feature = "tts")]
        Command::Run(args) => cmd_run(args),
        Command::Parse(args) => cmd_parse(args),
        Command::Parsers => cmd_parsers(),
        Command::Presets => cmd_presets(),
        Command::Models { command } => cmd_models(command),
        Command::Doctor(args) => cmd_doctor(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hearth: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn cmd_parsers() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for d in registry().all() {
        let kind = match d.strictness() {
            Strictness::Strict => "strict",
            Strictness::Loose => "loose",
        };
        writeln!(out, "{:<18} {kind}", d.name())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_presets() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for p in Preset::builtins()? {
        writeln!(out, "{:<20} {}", p.name, p.description)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_models(command: ModelsCommand) -> Result<ExitCode> {
    let dir_or_default = |dir: Option<PathBuf>| -> Result<PathBuf> {
        Ok(match dir {
            Some(d) => d,
            None => models::model_dir()?,
        })
    };
    match command {
        ModelsCommand::Pull { preset, dir, url } => {
            let preset = Preset::load(&preset)?;
            let mut source = models::source_of(&preset)?.clone();
            if let Some(url) = url {
                source.url = url;
            }
            let dir = dir_or_default(dir)?;
            let path = models::pull(&source, &dir, std::io::stderr().is_terminal())?;
            writeln!(std::io::stdout().lock(), "{}", path.display())?;
            Ok(ExitCode::SUCCESS)
        }
        ModelsCommand::Path { preset, dir } => {
            let preset = Preset::load(&preset)?;
            let source = models::source_of(&preset)?;
            let dir = dir_or_default(dir)?;
            model_outcome(models::locate_in(source, &dir).map(|p| p.display().to_string()))
        }
        ModelsCommand::Verify { preset, dir } => {
            let preset = Preset::load(&preset)?;
            let source = models::source_of(&preset)?;
            let path = dir_or_default(dir)?.join(&source.file);
            model_outcome(
                models::verify(&path, &source.sha256)
                    .map(|()| format!("{}: sha256 {} ok", path.display(), source.sha256)),
            )
        }
        ModelsCommand::List { dir } => {
            let dir = dir_or_default(dir)?;
            let mut out = std::io::stdout().lock();
            for p in Preset::builtins()? {
                let Some(source) = &p.model else {
                    writeln!(
                        out,
                        "{:<20} {:<45} no model file in the preset",
                        p.name, "-"
                    )?;
                    continue;
                };
                let state = match models::status(source, &dir)? {
                    ModelStatus::Verified => "present".to_string(),
                    ModelStatus::Unverified => "present (not verified yet)".to_string(),
                    ModelStatus::Missing { partial: None } => "missing".to_string(),
                    ModelStatus::Missing {
                        partial: Some(bytes),
                    } => format!("missing (partial download: {bytes} bytes)"),
                };
                writeln!(out, "{:<20} {:<45} {state}", p.name, source.file)?;
            }
            writeln!(out, "model directory: {}", dir.display())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Print a found/verified model's line (exit 0); a missing or corrupt one is an error line
/// (exit 1); anything else is fatal (exit 2).
fn model_outcome(result: std::result::Result<String, ModelError>) -> Result<ExitCode> {
    match result {
        Ok(line) => {
            writeln!(std::io::stdout().lock(), "{line}")?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ (ModelError::Missing { .. } | ModelError::Corrupt { .. })) => {
            eprintln!("hearth: error: {e}");
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}

fn build_parser(args: &ParseArgs) -> Result<Parser> {
    let preset = match &args.preset {
        Some(p) => Some(Preset::load(p)?),
        None => None,
    };
    Ok(match (&args.parsers, &preset) {
        (Some(names), _) => {
            let names: Vec<&str> = names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            let (think, start) = match &preset {
                Some(p) => (p.think.clone(), p.start_in_think),
                None => (known_tags(), None),
            };
            Parser::from_names(&registry(), &names, think, start).context("--parsers")?
        }
        (None, Some(p)) => p.parser()?,
        (None, None) => Parser::auto(),
    })
}

fn load_tools(path: &std::path::Path) -> Result<ToolSet> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read tools file {}", path.display()))?;
    ToolSet::from_openai_json(&text).with_context(|| format!("tools file {}", path.display()))
}

/// Parse `raw` `repeat` times; the output object with the median time.
fn run_one(parser: &Parser, tools: &ToolSet, raw: &str, repeat: u32) -> Value {
    let mut times = Vec::with_capacity(repeat as usize);
    let mut out = None;
    for _ in 0..repeat {
        let t = Instant::now();
        let o = parser.parse(raw, tools);
        times.push(t.elapsed().as_secs_f64() * 1e6);
        out = Some(o);
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let mut v = serde_json::to_value(out).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("parse_us".into(), json!((median * 1000.0).round() / 1000.0));
    }
    v
}

fn cmd_parse(args: ParseArgs) -> Result<ExitCode> {
    let parser = build_parser(&args)?;
    let default_tools = match &args.tools {
        Some(p) => load_tools(p)?,
        None => ToolSet::unrestricted(),
    };
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read stdin")?;
    let mut stdout = std::io::stdout().lock();
    if !args.jsonl {
        let raw = match std::str::from_utf8(&input) {
            Ok(s) => s,
            Err(e) => bail!(
                "stdin is not valid UTF-8 (invalid byte at offset {}): hearth parse reads the model's text output as UTF-8",
                e.valid_up_to()
            ),
        };
        let v = run_one(&parser, &default_tools, raw, args.repeat);
        writeln!(stdout, "{v}")?;
        return Ok(ExitCode::SUCCESS);
    }

    let mut failed = false;
    let mut tool_cache: HashMap<String, ToolSet> = HashMap::new();
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let v = match jsonl_line(
            line,
            n,
            &parser,
            &default_tools,
            &mut tool_cache,
            args.repeat,
        ) {
            Ok(v) => v,
            Err(msg) => {
                failed = true;
                json!({ "error": msg })
            }
        };
        writeln!(stdout, "{v}")?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn jsonl_line(
    line: &[u8],
    n: usize,
    parser: &Parser,
    default_tools: &ToolSet,
    cache: &mut HashMap<String, ToolSet>,
    repeat: u32,
) -> std::result::Result<Value, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| {
        format!(
            "line {n}: not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    if text.trim().is_empty() {
        return Err(format!(
            "line {n}: empty line (expected {{\"raw\": \"…\", \"tools\": […]}})"
        ));
    }
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("line {n}: not valid JSON: {e}"))?;
    let raw = v.get("raw").and_then(Value::as_str).ok_or_else(|| {
        format!(
            "line {n}: missing string field \"raw\" (expected {{\"raw\": \"…\", \"tools\": […]}})"
        )
    })?;
    let tools = match v.get("tools") {
        None | Some(Value::Null) => default_tools.clone(),
        Some(t) => {
            let key = t.to_string();
            match cache.get(&key) {
                Some(ts) => ts.clone(),
                None => {
                    let ts = ToolSet::from_openai_value(t)
                        .map_err(|e| format!("line {n}: tools: {e}"))?;
                    cache.insert(key, ts.clone());
                    ts
                }
            }
        }
    };
    Ok(run_one(parser, &tools, raw, repeat))
}
