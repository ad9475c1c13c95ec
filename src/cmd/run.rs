//! `hearth run`: the voice daemon. Capture → Listen → Stt → Agent → Tts → Playback, the
//! D-Bus face beside it, systemd's readiness and watchdog; or, with `--no-audio`, the agent
//! and the tools on D-Bus only.
//!
//! The steps: [`settings`] (flags over the config file), [`voice_parts`] (everything the
//! voice needs, checked before minutes go into loading the models), then [`serve_text_only`]
//! or [`serve_voice`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use hearth::audio::listen::{ListenConfig, VadKind};
use hearth::audio::{CaptureSource, PlaybackSink};
use hearth::bus::{BusAddress, Face, FaceOptions};
use hearth::config::BusKind;
use hearth::events::Events;
use hearth::pipeline::{RunSummary, VoiceOptions, VoiceTurn};
use hearth::satellite::SatelliteConfig;
use hearth::settings::{SettingsError, SttChoice};
use hearth::stt::{SttConfig, SttServer};
use hearth::supervisor::StageEvent;
use hearth::tools::ToolsMsg;
use hearth::tts::VoiceSource;
use hearth::wake::WakeConfig;
use hearth::{start_text, Flags, Settings, TextOptions, TextRuntime};
use tracing::Instrument;

#[derive(clap::Args)]
pub struct Args {
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one). Flags
    /// given here win over it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Read speech from this WAV file instead of a microphone; `-`: raw 16-bit
    /// little-endian mono PCM at 16 kHz on standard input (`arecord -f S16_LE -c 1 -r 16000`).
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
    /// The wake words, comma-separated (microWakeWord model names in the model directory, or
    /// .tflite paths; oww:NAME for openWakeWord's, CC BY-NC-SA 4.0); "none": every utterance
    /// is a request (push-to-talk, tests). Default: the config's [listen] wake, else okay_nabu.
    #[arg(long, value_name = "NAMES")]
    wake: Option<String>,
    /// Start from a board profile (pi5, pi4, jetson-orin-nano: threads, GPU layers, audio
    /// devices, GPIO chip, preset, whisper model); the config file's keys win over it.
    #[arg(long)]
    board: Option<String>,
}

/// Where the D-Bus face is served and what it shows.
struct FaceSetup {
    /// The bus (`None`: no face).
    bus: Option<BusAddress>,
    /// Whether the bus was asked for: an unreachable one is then an error.
    required: bool,
    /// The preset's name (the `Preset` property).
    preset: String,
    /// The `Muted` property, shared with the voice pipeline.
    muted: Arc<AtomicBool>,
    /// The event stream the face turns into signals.
    events: Events,
    /// `Listen()`, passed to the voice pipeline (`None`: no microphone).
    listen: Option<Arc<tokio::sync::Notify>>,
    /// `[bus]`'s bounds on tools registered over D-Bus.
    provider_limits: hearth::tools::ProviderLimits,
    /// `[bus] trusted_uids`.
    trusted_uids: Vec<u32>,
    /// `Announce()`, to the voice pipelines (`None`: nothing speaks).
    announcer: Option<hearth::announce::Announcer>,
}

/// One source of speech and where its replies go: the local microphone and speaker, or a
/// satellite.
struct Source {
    input: CaptureSource,
    output: PlaybackSink,
    listen_requests: Option<Arc<tokio::sync::Notify>>,
    bus_events: Events,
    satellite: Option<String>,
    room: Option<String>,
}

/// Everything the voice stages need, resolved and checked.
struct VoiceParts {
    /// The local microphone and speaker (`None` with `--no-audio`: satellites only).
    local: Option<(CaptureSource, PlaybackSink)>,
    /// The satellites (`[[satellite]]`).
    satellites: Vec<SatelliteConfig>,
    stt: SttConfig,
    /// `--stt-prompt` or `[stt] prompt`; `None`: the tools' vocabulary.
    stt_prompt: Option<String>,
    tts: VoiceSource,
    listen: ListenConfig,
    wake: Option<WakeConfig>,
    /// `[stt] phrases`.
    phrases: bool,
    /// The earcon and the bell.
    cues: hearth::audio::earcon::Cues,
    follow_up: Duration,
    conversation_idle: Duration,
    echo_cancel: bool,
}

/// The rate `--output FILE` is written at when a text-to-speech server speaks: a Piper medium
/// voice's, what wyoming-piper sends.
const SERVER_VOICE_RATE: u32 = 22050;

/// `hearth run`: exit 0 when every turn went well (or on a signal), 1 when a turn failed.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.once && args.input.is_none() {
        bail!("--once needs --input WAV (a microphone never ends)");
    }
    let settings = settings(&args)?;
    let (kind, required) = settings.bus();
    let bus = match kind {
        BusKind::Session => Some(BusAddress::Session),
        BusKind::System => Some(BusAddress::System),
        BusKind::None => None,
    };
    let satellites = settings.satellites()?;
    if args.no_audio && bus.is_none() && satellites.is_empty() {
        bail!("--no-audio with no bus and no [[satellite]] leaves nothing to serve: use --bus session or --bus system");
    }
    let backends = Arc::new(hearth::tools::Backends::from_config(&settings.config)?);
    let events = hearth::events::channel();
    // the prompt-cache file keeps the warmed system prompt and tools: READY comes at once
    let mut opts = settings.text_options(settings.preset()?, true)?;
    opts.backends = backends;
    opts.events = Some(events.clone());
    // the daemon keeps the timers (`hearth ask` sets none: nothing would ring them)
    opts.timers = settings.state_dir().map(Path::to_path_buf);
    if opts.timers.is_none() {
        tracing::warn!("no state directory (HEARTH_STATE_DIR, STATE_DIRECTORY, XDG_STATE_HOME or HOME): no timers");
    }
    let face = FaceSetup {
        bus,
        required,
        preset: opts.preset.name.clone(),
        muted: Arc::new(AtomicBool::new(false)),
        events,
        listen: (!args.no_audio).then(|| Arc::new(tokio::sync::Notify::new())),
        provider_limits: settings.provider_limits(),
        trusted_uids: settings.config.bus.trusted_uids.clone(),
        announcer: (!args.no_audio || !satellites.is_empty())
            .then(hearth::announce::Announcer::new),
    };
    let rt = super::runtime()?;
    let volume = hearth::voice::Volume::default();
    if !args.no_audio || !satellites.is_empty() {
        // something speaks: "louder", "stop listening for an hour"
        opts.backends.serve_controls(hearth::tools::Controls::new(
            volume.clone(),
            face.muted.clone(),
        ));
    }
    if args.no_audio && satellites.is_empty() {
        // the face is all there is to serve: a bus that cannot be reached is an error
        let face = FaceSetup {
            required: true,
            ..face
        };
        return rt.block_on(serve_text_only(opts, face));
    }
    let voice = voice_parts(&args, &settings, satellites)?;
    let answered = rt.block_on(serve_voice(
        opts,
        face,
        (voice, volume),
        args.once,
        args.json,
    ))?;
    Ok(if answered.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The flags over the configuration file (and the board profile under it).
fn settings(args: &Args) -> Result<Settings> {
    // `--bus` is read after the configuration, so a broken file is the first error
    let bus = args.bus.as_deref().map(hearth::settings::parse_bus);
    let mut settings = Settings::discover(Flags {
        config: args.config.clone(),
        board: args.board.clone(),
        preset: args.preset.clone(),
        model: args.model.clone(),
        tools: args.tools.clone(),
        bus: None,
        n_ctx: None,
        stt: args.stt.clone(),
        stt_model: args.stt_model.clone(),
        stt_prompt: args.stt_prompt.clone(),
        voice: args.voice.clone(),
        mic: args.mic.clone(),
        speaker: args.speaker.clone(),
        wake: args.wake.as_deref().map(wake_words),
    })?;
    if let Some(p) = &settings.config_path {
        tracing::info!(config = %p.display(), "configuration read");
    }
    if let Some(b) = &args.board {
        tracing::info!(board = %b, "board profile applied");
    }
    settings.flags.bus = bus.transpose()?;
    Ok(settings)
}

/// `--wake`: comma-separated names; `none` (or nothing) for no wake word.
fn wake_words(flag: &str) -> Vec<String> {
    let names = flag.split(',').map(str::trim).filter(|n| !n.is_empty());
    names
        .filter(|n| !n.eq_ignore_ascii_case("none"))
        .map(String::from)
        .collect()
}

/// What the voice needs, checked before minutes go into loading the models: the input and
/// output, the voice (its files, espeak-ng data and ONNX Runtime), speech recognition (the
/// whisper model) and the detector (the Silero model).
fn voice_parts(
    args: &Args,
    settings: &Settings,
    satellites: Vec<SatelliteConfig>,
) -> Result<VoiceParts> {
    let input = match &args.input {
        Some(p) if p.as_os_str() == "-" => CaptureSource::stdin(hearth::voice::SAMPLE_RATE),
        Some(p) => CaptureSource::Wav {
            path: p.clone(),
            realtime: args.realtime,
        },
        None => CaptureSource::Device(settings.device(settings.mic())),
    };
    let tts = settings.voice()?;
    // a server's rate is known once it speaks: the file is written at a Piper voice's
    // (Playback converts whatever comes)
    let rate = tts.check()?.unwrap_or(SERVER_VOICE_RATE);
    let output = match &args.output {
        Some(p) => PlaybackSink::Wav {
            path: p.clone(),
            rate,
            realtime: false,
        },
        None => PlaybackSink::Device(settings.device(settings.speaker())),
    };
    let mut stt = match settings.stt()? {
        SttChoice::Server(addr) => SttConfig::new(SttServer::Connect(addr)),
        SttChoice::Child { model, threads } => {
            if !model.is_file() {
                return Err(SettingsError::WhisperMissing(model).into());
            }
            let mut server = SttServer::spawn_default(model);
            if let (SttServer::Spawn { args: a, .. }, Some(n)) = (&mut server, threads) {
                a.extend(["--threads".to_string(), n.to_string()]);
            }
            SttConfig::new(server)
        }
    };
    stt.language = settings.config.stt.language.clone();
    stt.utterance_timeout = settings.stt_timeout();
    let listen = settings.listen()?;
    if let VadKind::Silero { model, .. } = &listen.vad {
        if !model.is_file() {
            bail!(hearth::audio::silero::VadError::Missing(model.clone()));
        }
    }
    if let Some(turn) = &listen.end_of_turn {
        if !turn.model.is_file() {
            bail!(hearth::audio::smart_turn::SmartTurnError::Missing(
                turn.model.clone()
            ));
        }
    }
    let wake = settings.wake()?;
    if let Some(w) = &wake {
        w.check()?;
    }
    let echo_cancel = settings.echo_cancel(
        matches!(input, CaptureSource::Device(_)),
        matches!(output, PlaybackSink::Device(_)),
    );
    Ok(VoiceParts {
        echo_cancel,
        local: (!args.no_audio).then_some((input, output)),
        satellites,
        stt,
        stt_prompt: settings.stt_prompt(),
        phrases: settings.config.stt.phrases.unwrap_or(true),
        tts,
        listen,
        wake,
        cues: settings.cues()?,
        follow_up: settings.follow_up(),
        conversation_idle: settings.conversation_idle(),
    })
}

/// `--no-audio`: the text actors and the face until a signal.
async fn serve_text_only(opts: TextOptions, face: FaceSetup) -> Result<ExitCode> {
    hearth::systemd::status("loading the model");
    let text = start_text(opts).await?;
    let (served, dog) = serve_and_watch(&text, face, false).await?;
    hearth::systemd::ready("serving the agent on D-Bus (no audio)");
    let why = shutdown_signal()?.await;
    tracing::info!(signal = why, "stopping");
    stop_serving(text, served, dog).await;
    Ok(ExitCode::SUCCESS)
}

/// The text actors, the face and the voice pipelines (the local microphone's, each
/// satellite's) until the local input ends (`--once`) or a signal; how many turns were
/// heard, and failed.
async fn serve_voice(
    opts: TextOptions,
    face: FaceSetup,
    (mut voice, volume): (VoiceParts, hearth::voice::Volume),
    once: bool,
    json: bool,
) -> Result<RunSummary> {
    hearth::systemd::status("loading the models");
    let text = start_text(opts).await?;
    let muted = face.muted.clone();
    let events = face.events.clone();
    let listen_requests = face.listen.clone();
    let announcer = face.announcer.clone().unwrap_or_default();
    let (served, dog) = serve_and_watch(&text, face, true).await?;
    let stage_tx = follow_readiness();
    expect_the_tools_words(&text, &mut voice).await?;
    hold_to_the_house_phrases(&text, &mut voice)?;
    // more than one pipeline: one recogniser serves them all, one decode at a time
    let pipelines = usize::from(voice.local.is_some()) + voice.satellites.len();
    let mut _shared_stt = None;
    if pipelines > 1 {
        if let Some((shared, server)) = hearth::stt_shared::share(&voice.stt.server).await? {
            voice.stt.server = server;
            _shared_stt = Some(shared);
        }
    }
    // one source's pipeline: its microphone and speaker, its room, where it publishes
    let options = |src: Source| VoiceOptions {
        input: src.input,
        output: src.output,
        stt: voice.stt.clone(),
        tts: voice.tts.clone(),
        listen: voice.listen.clone(),
        once,
        conversation_idle: voice.conversation_idle,
        events: Some(stage_tx.clone()),
        bus_events: Some(src.bus_events),
        muted: muted.clone(),
        wake: voice.wake.clone(),
        cues: voice.cues.clone(),
        follow_up: voice.follow_up,
        listen_requests: src.listen_requests,
        // a satellite does its own, if any: its playback is not heard here
        echo_cancel: voice.echo_cancel && src.satellite.is_none(),
        announcements: Some(announcer.subscribe(src.room.clone())),
        satellite: src.satellite,
        room: src.room,
        volume: volume.clone(),
    };
    // one signal (or the end of the local input) ends every pipeline
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    };
    let signal = shutdown_signal()?;
    let signal_tx = stop_tx.clone();
    tokio::spawn(async move {
        let why = signal.await;
        tracing::info!(signal = why, "stopping");
        let _ = signal_tx.send(true);
    });
    let mut pipelines = tokio::task::JoinSet::new();
    // kept until every pipeline is over: dropping one ends its connection
    let mut links = Vec::new();
    if let Some((input, output)) = voice.local.take() {
        let opts = options(Source {
            input,
            output,
            listen_requests,
            bus_events: events.clone(),
            satellite: None,
            room: None,
        });
        let agent = text.agent.clone();
        let stop_tx = stop_tx.clone();
        let stopped = stopped();
        pipelines.spawn(async move {
            let on_turn = |t: &VoiceTurn| print_turn(t, None, json);
            let turns = hearth::pipeline::run(agent, opts, on_turn, stopped).await;
            // the local input ended (`--once`): the satellites stop too
            let _ = stop_tx.send(true);
            turns
        });
    }
    let discovery = discover(&voice.satellites);
    let found = discovery.as_ref().map(|d| d.found());
    for sat in std::mem::take(&mut voice.satellites) {
        let sat = hearth::satellite::start(sat, found.clone(), Some(events.clone()), muted.clone());
        let name = sat.name.clone();
        let opts = options(Source {
            input: sat.input,
            output: sat.output,
            listen_requests: Some(sat.listen),
            bus_events: sat.events,
            satellite: Some(name.clone()),
            room: sat.room,
        });
        links.push(sat.link);
        let agent = text.agent.clone();
        let stopped = stopped();
        let span = tracing::info_span!("satellite", name = %name);
        pipelines.spawn(
            async move {
                let on_turn = |t: &VoiceTurn| print_turn(t, Some(&name), json);
                hearth::pipeline::run(agent, opts, on_turn, stopped).await
            }
            .instrument(span),
        );
    }
    let mut summary = RunSummary::default();
    let mut failure = None;
    // in the order they end: the first failure ends the others at once
    while let Some(p) = pipelines.join_next().await {
        match p {
            Ok(Ok(s)) => {
                summary.turns += s.turns;
                summary.failed += s.failed;
            }
            Ok(Err(e)) => {
                // one pipeline's failure ends the others: hearth exits and systemd restarts it
                let _ = stop_tx.send(true);
                failure.get_or_insert(anyhow::Error::from(e));
            }
            Err(e) => {
                let _ = stop_tx.send(true);
                failure.get_or_insert(anyhow::anyhow!("a voice pipeline panicked: {e}"));
            }
        }
    }
    drop(links);
    drop(discovery);
    stop_serving(text, served, dog).await;
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// Browsing by zeroconf, when a satellite is configured by name alone; a failure is logged
/// (those satellites are then never reached) and the others run.
fn discover(satellites: &[SatelliteConfig]) -> Option<hearth::satellite::discover::Discovery> {
    let unplaced: std::collections::BTreeSet<String> = satellites
        .iter()
        .filter(|s| s.address.is_none())
        .map(|s| s.name.clone())
        .collect();
    if unplaced.is_empty() {
        return None;
    }
    match hearth::satellite::discover::Discovery::start(unplaced) {
        Ok(d) => Some(d),
        Err(e) => {
            tracing::error!(error = %e, "satellites without a url will not be reached");
            None
        }
    }
}

/// Readiness follows the voice stages: READY once every one is up, then STATUS as they go
/// down and come back. The sender is the pipeline's stage-event channel.
fn follow_readiness() -> tokio::sync::mpsc::UnboundedSender<StageEvent> {
    let (stage_tx, mut stage_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut ready = false;
        while let Some(e) = stage_rx.recv().await {
            match e {
                StageEvent::Ready if !ready => {
                    ready = true;
                    hearth::systemd::ready("listening");
                }
                StageEvent::Ready => hearth::systemd::status("listening"),
                StageEvent::Degraded { stage } => hearth::systemd::status(&format!(
                    "degraded: the {stage} stage is down, restarting"
                )),
                _ => {}
            }
        }
    });
    stage_tx
}

/// The recogniser holds transcripts to the house's phrase set (`[stt] phrases`, on unless
/// `false`): made from the tools' intents and the stop words, with the wake words allowed
/// before a request, and made again as the tools change (see [`hearth::stt::PhraseSource`]).
fn hold_to_the_house_phrases(text: &TextRuntime, voice: &mut VoiceParts) -> Result<()> {
    if !voice.phrases {
        return Ok(());
    }
    let lead = match &voice.wake {
        Some(w) => w.phrases()?,
        None => Vec::new(),
    };
    voice.stt.phrases = Some(hearth::stt::PhraseSource {
        tools: text.tools.clone(),
        fixed: hearth::conductor::stop::STOP_PHRASES,
        lead,
        expect: voice.stt_prompt.is_none(),
    });
    Ok(())
}

/// A `hearth-stt` child gets whisper's initial prompt: `--stt-prompt` / `[stt] prompt`, else
/// the wake words and the tools' vocabulary (a request said in the same breath as the wake
/// word is recognised with it, and whisper spells "Okay Nabu" right only when told to
/// expect it: the conductor takes it off the transcript); nothing when that is empty.
async fn expect_the_tools_words(text: &TextRuntime, voice: &mut VoiceParts) -> Result<()> {
    let SttServer::Spawn { args, .. } = &mut voice.stt.server else {
        return Ok(());
    };
    let prompt = match &voice.stt_prompt {
        Some(p) => p.clone(),
        None => {
            let wake = match &voice.wake {
                Some(w) => w.phrases()?,
                None => Vec::new(),
            };
            let tools = ractor::call!(text.tools, ToolsMsg::Snapshot)
                .map_err(|e| anyhow::anyhow!("the tools actor did not answer: {e}"))?;
            hearth::phrases::expected_words(&wake, &tools)
        }
    };
    if !prompt.trim().is_empty() {
        tracing::info!(
            words = prompt.split(", ").count(),
            "speech recognition expects the tools' words"
        );
        args.extend(["--prompt".to_string(), prompt]);
    }
    Ok(())
}

/// One turn on stdout: a JSON line (with `"satellite"` when a satellite heard it), or
/// `heard:`/`reply:` (and `error:`) lines.
fn print_turn(t: &VoiceTurn, satellite: Option<&str>, json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let mut value = serde_json::to_value(t).unwrap_or_default();
        if let (Some(name), Some(fields)) = (satellite, value.as_object_mut()) {
            fields.insert("satellite".into(), name.into());
        }
        let _ = serde_json::to_writer(&mut out, &value);
        let _ = writeln!(out);
    } else {
        let reply = t.turn.as_ref().map(|t| t.reply.as_str()).unwrap_or("");
        if let Some(name) = satellite {
            let _ = writeln!(out, "satellite: {name}");
        }
        let _ = writeln!(out, "heard: {}\nreply: {reply}", t.heard);
        if let Some(e) = &t.error {
            let _ = writeln!(out, "error: {e}");
        }
    }
    let _ = out.flush();
}

/// Tell systemd hearth is stopping, close the face, end the watchdog (its probes would take
/// the actors' stopping for a hang), then stop the text actors and wait for them.
async fn stop_serving(
    text: TextRuntime,
    served: Option<Face>,
    dog: Option<tokio::task::JoinHandle<()>>,
) {
    hearth::systemd::stopping();
    drop(served);
    if let Some(dog) = dog {
        dog.abort();
    }
    text.stop().await;
}

/// Start the ringer (when this process keeps timers), serve the D-Bus face (if there is
/// a bus) and start systemd's watchdog over the text actors and the face. A bus that
/// cannot be reached is an error when it was asked for, else a warning and hearth runs on
/// without the face.
async fn serve_and_watch(
    text: &TextRuntime,
    face: FaceSetup,
    voice: bool,
) -> Result<(Option<Face>, Option<tokio::task::JoinHandle<()>>)> {
    if let Some(timers) = &text.timers {
        hearth::timers::spawn_ringer(
            timers.clone(),
            face.announcer.clone(),
            Some(face.events.clone()),
            hearth::timers::Ringing::default(),
        );
    }
    let served = match face.bus {
        None => None,
        Some(bus) => {
            let options = FaceOptions {
                bus,
                preset: face.preset,
                voice,
                muted: face.muted,
                listen: face.listen,
                provider_limits: face.provider_limits,
                trusted_uids: face.trusted_uids.clone(),
                announcer: face.announcer.clone(),
                timers: text.timers.clone(),
            };
            let served =
                hearth::bus::serve(options, text.agent.clone(), text.tools.clone(), face.events)
                    .await;
            match served {
                Ok(f) => Some(f),
                Err(e) if face.required => return Err(e.into()),
                Err(e) => {
                    tracing::warn!(error = %e, "running without the D-Bus face (choose one with --bus, or --bus none)");
                    None
                }
            }
        }
    };
    let mut probes = text.probes();
    if let Some(f) = &served {
        probes.push(("bus", f.probe()));
    }
    let dog = hearth::systemd::Watchdog::from_env(probes).map(hearth::systemd::spawn_watchdog);
    Ok((served, dog))
}

/// SIGTERM (systemd's stop) or Ctrl-C, whichever comes first: both handlers are installed
/// now, so a signal that arrives before the future is polled is not lost.
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
