//! Wiring: starts the actors and hands out their addresses, and keeps them running.
//!
//! Text mode (engine, tools, agent) is started by [`start_text`]. The voice stages (see
//! `pipeline`) run under a [`StageSupervisor`]: it starts them in order, each linked to it,
//! and when one dies restarts it with backoff (none the first time, then doubling from
//! 200 ms to 10 s; a stage that ran a minute is healthy again) while the others keep
//! running. What it does is reported as [`StageEvent`]s: `Ready` once every stage is up,
//! `Degraded` while one is down (what systemd's readiness and status follow).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::mpsc::UnboundedSender;

use crate::agent::{Agent, AgentArgs, AgentConfig, AgentError, AgentMsg};
use crate::llm::{EngineError, EngineMsg};
use crate::models::ModelError;
use crate::preset::Preset;
use crate::timers::{Timers, TimersArgs, TimersMsg};
use crate::tools::{Registry, ToolsActor, ToolsError, ToolsMsg};

/// What text mode needs.
#[derive(Debug, Clone)]
pub struct TextOptions {
    pub preset: Preset,
    /// A directory of `*.toml` tool manifests (built-ins only when None).
    pub tools_dir: Option<PathBuf>,
    /// The model file; None = the preset's model in the model directory.
    pub model: Option<PathBuf>,
    pub n_ctx: u32,
    pub threads: Option<i32>,
    /// Keep the KV cache in this file across processes (see `LlamaConfig::prompt_cache`).
    pub prompt_cache: Option<PathBuf>,
    /// Model layers on the GPU (a `cuda` build; 0 = CPU only).
    pub gpu_layers: u32,
    /// What the tools' executors connect to (the broker, Home Assistant, GPIO, D-Bus).
    pub backends: std::sync::Arc<crate::tools::Backends>,
    /// Where the agent publishes tool calls and replies (the D-Bus face's signals).
    pub events: Option<crate::events::Events>,
    /// What each turn leaves in its session's history.
    pub history: crate::agent::HistoryMode,
    /// Try the tools' local intents before the model.
    pub intents: bool,
    /// No model hop starts once a turn has run this long ([`crate::agent::TURN_BUDGET`]).
    pub turn_budget: std::time::Duration,
    /// Warm the next prompt after each turn and when the tools change (a daemon: yes; one
    /// command and exit: no). The start-up warm-up happens either way.
    pub warm_next: bool,
    /// History tokens a session keeps before its oldest turns are cut
    /// ([`crate::agent::HISTORY_TOKENS`]).
    pub history_tokens: usize,
    /// Where the model runs (`[agent] engine`).
    pub engine: EngineChoice,
    /// hearth's state directory: the timers are kept there (`None`: this process keeps
    /// none, and the timer tools say so).
    pub timers: Option<PathBuf>,
    /// Home Assistant, whose exposed entities become tools (`[homeassistant] discover`).
    pub house: Option<crate::house::HouseWatch>,
    /// What the `[mqtt]` broker announces that becomes tools (Zigbee2MQTT, discovery).
    pub mqtt_house: Option<crate::house::MqttWatch>,
    /// Follow the house's changes for as long as hearth runs (a daemon); else read it once
    /// at start (one command and exit).
    pub follow_house: bool,
}

/// Where the model runs.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineChoice {
    /// llama.cpp in this process (feature `llm`).
    Llama,
    /// An OpenAI-compatible server ([`crate::llm::openai`]); its context is `n_ctx`, its
    /// chat template the server's or the local model file's (`model`, else the preset's).
    OpenAi(crate::llm::openai::OpenAiConfig),
}

impl TextOptions {
    pub fn new(preset: Preset) -> Self {
        TextOptions {
            preset,
            tools_dir: None,
            model: None,
            n_ctx: 4096,
            threads: None,
            prompt_cache: None,
            gpu_layers: 0,
            backends: std::sync::Arc::new(crate::tools::Backends::none()),
            events: None,
            history: crate::agent::HistoryMode::default(),
            warm_next: true,
            intents: true,
            turn_budget: crate::agent::TURN_BUDGET,
            history_tokens: crate::agent::HISTORY_TOKENS,
            engine: EngineChoice::Llama,
            timers: None,
            house: None,
            mqtt_house: None,
            follow_house: true,
        }
    }
}

/// The running actors.
pub struct TextRuntime {
    pub agent: ActorRef<AgentMsg>,
    pub engine: ActorRef<EngineMsg>,
    pub tools: ActorRef<ToolsMsg>,
    /// The timers, when this process keeps them ([`TextOptions::timers`]).
    pub timers: Option<ActorRef<TimersMsg>>,
    /// The tasks following the house ([`TextOptions::house`], [`TextOptions::mqtt_house`]).
    pub house: Vec<tokio::task::JoinHandle<()>>,
}

/// Why start-up failed; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("preset {0:?} names no model file; give one with --model FILE or add a [model] table (file, url, sha256) to the preset")]
    NoModel(String),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tools(#[from] ToolsError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("the {0} actor failed to start: {1}")]
    Spawn(&'static str, String),
    #[error("this build has no LLM engine in process (built without the `llm` feature); rebuild with default features, or use a model on another machine: [agent] engine = \"openai\"")]
    NoEngine,
}

/// The model file for `opts`: explicit, else the preset's in the model directory (checked).
pub fn model_path(opts: &TextOptions) -> Result<PathBuf, StartError> {
    if let Some(p) = &opts.model {
        return Ok(p.clone());
    }
    let source = opts
        .preset
        .model
        .as_ref()
        .ok_or_else(|| StartError::NoModel(opts.preset.name.clone()))?;
    Ok(crate::models::locate(source)?)
}

/// Where one-shot commands keep the KV cache for `model`: beside the model directory,
/// named by the model's identity (the preset's sha256, else size and mtime) and the context
/// length, so a different model or context never loads a stale state.
pub fn prompt_cache_path(opts: &TextOptions, model: &std::path::Path) -> Option<PathBuf> {
    let stem = model.file_stem()?.to_string_lossy().into_owned();
    let identity = match (&opts.model, &opts.preset.model) {
        (None, Some(src)) => src.sha256.chars().take(16).collect::<String>(),
        _ => {
            let meta = std::fs::metadata(model).ok()?;
            let mtime = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_secs();
            format!("{}-{mtime}", meta.len())
        }
    };
    let dir = crate::models::model_dir().ok()?.join("prompt-cache");
    Some(dir.join(format!("{stem}-{identity}-ctx{}.kv", opts.n_ctx)))
}

/// Start the tools actor from a manifest directory (or built-ins only), its executors
/// running against `backends`.
pub(crate) async fn start_tools(
    dir: Option<&std::path::Path>,
    backends: std::sync::Arc<crate::tools::Backends>,
) -> Result<ActorRef<ToolsMsg>, StartError> {
    let registry = match dir {
        Some(d) => Registry::load(d, backends)?,
        None => Registry::builtins_with(backends)?,
    };
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .map_err(|e| StartError::Spawn("tools", e.to_string()))?;
    Ok(tools)
}

/// The timers kept in `dir`, or `None` with a log line when they cannot be (another
/// process keeps them: the timer tools then say so).
async fn start_timers(dir: &std::path::Path) -> Option<ActorRef<TimersMsg>> {
    let store = crate::timers::Store::in_dir(dir);
    match Actor::spawn(None, Timers, TimersArgs { store }).await {
        Ok((timers, _)) => Some(timers),
        Err(e) => {
            tracing::warn!(error = %e, "no timers in this process");
            None
        }
    }
}

/// Start the timers (when kept), the engine (model loaded), the tools and the agent.
pub async fn start_text(opts: TextOptions) -> Result<TextRuntime, StartError> {
    let timers = match &opts.timers {
        Some(dir) => start_timers(dir).await,
        None => None,
    };
    if let Some(t) = &timers {
        opts.backends.serve_timers(t.clone());
    }
    let tools = start_tools(opts.tools_dir.as_deref(), opts.backends.clone()).await?;
    let house = start_house(
        opts.house.clone(),
        opts.mqtt_house.clone(),
        opts.follow_house,
        opts.backends.clone(),
        &tools,
    )
    .await;
    let engine = start_engine(&opts).await?;
    let mut cfg = AgentConfig::new(opts.preset.clone());
    cfg.events = opts.events.clone();
    cfg.history = opts.history;
    cfg.intents = opts.intents;
    cfg.turn_budget = opts.turn_budget;
    cfg.warm_next = opts.warm_next;
    cfg.history_tokens = opts.history_tokens;
    let agent = Agent::spawn(AgentArgs {
        cfg,
        engine: engine.clone(),
        tools: tools.clone(),
    })
    .await?;
    Ok(TextRuntime {
        agent,
        engine,
        tools,
        timers,
        house,
    })
}

/// The house's tools: Home Assistant followed by a task (a daemon) or read once now (one
/// command), the broker's announcements followed by a task (a one-shot command waits a moment
/// for what the broker kept). A source away is never a failed start: a warning, and the task
/// keeps trying.
async fn start_house(
    house: Option<crate::house::HouseWatch>,
    mqtt_house: Option<crate::house::MqttWatch>,
    follow: bool,
    backends: std::sync::Arc<crate::tools::Backends>,
    tools: &ActorRef<ToolsMsg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let hub = crate::house::Hub::new(tools.clone());
    let mut tasks = Vec::new();
    let mqtt = mqtt_house.is_some();
    if let Some(watch) = mqtt_house {
        tasks.push(tokio::spawn(crate::house::watch_mqtt(
            watch,
            backends,
            hub.clone(),
        )));
    }
    if let Some(watch) = house {
        if follow {
            tasks.push(tokio::spawn(crate::house::watch_home_assistant(
                watch,
                hub.clone(),
            )));
        } else if let Err(e) = crate::house::offer_once(&watch, &hub).await {
            tracing::warn!(error = %e, "the house's things are not offered this time");
        }
    }
    if mqtt && !follow {
        hub.first_offer(ONE_SHOT_ANNOUNCEMENTS).await;
    }
    tasks
}

/// `registry` with the house's tools, each source read once (what `hearth devices` and
/// `hearth phrases` show): a tools actor started for it, the house offered, a snapshot, and
/// everything stopped again. A source that cannot be read is a warning, as at a start.
pub async fn offered_with_house(
    registry: Registry,
    house: Option<crate::house::HouseWatch>,
    mqtt_house: Option<crate::house::MqttWatch>,
) -> Result<std::sync::Arc<Registry>, StartError> {
    let backends = registry.backends().clone();
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .map_err(|e| StartError::Spawn("tools", e.to_string()))?;
    let tasks = start_house(house, mqtt_house, false, backends, &tools).await;
    let registry = ractor::call!(tools, ToolsMsg::Snapshot)
        .map_err(|e| StartError::Spawn("tools", e.to_string()));
    for task in tasks {
        task.abort();
    }
    tools.stop(None);
    registry
}

/// How long a one-shot command waits for the broker's retained announcements.
const ONE_SHOT_ANNOUNCEMENTS: Duration = Duration::from_secs(2);

impl TextRuntime {
    /// Stop the agent, the tools and the engine, and wait for them (the engine's worker
    /// thread included): nothing is left running when the process exits. The running turn
    /// is cancelled first, so no further tool starts; calls already running finish (see
    /// [`crate::tools::STOP_GRACE`]) before the tools' connections close.
    pub async fn stop(&self) {
        let _ = self.agent.cast(AgentMsg::Cancel);
        for task in &self.house {
            task.abort();
        }
        let actor_wait = Duration::from_secs(5);
        let tools_wait = crate::tools::STOP_GRACE + Duration::from_secs(2);
        let timers = self
            .timers
            .iter()
            .map(|t| ("timers", t.get_cell(), actor_wait));
        for (name, cell, wait) in [
            ("agent", self.agent.get_cell(), actor_wait),
            ("tools", self.tools.get_cell(), tools_wait),
            ("engine", self.engine.get_cell(), actor_wait),
        ]
        .into_iter()
        .chain(timers)
        {
            if cell.stop_and_wait(None, Some(wait)).await.is_err() {
                tracing::warn!(
                    actor = name,
                    wait_s = wait.as_secs(),
                    "did not stop in time"
                );
            }
        }
    }

    /// Liveness checks for the watchdog: each actor answers a message (the agent a ping,
    /// the tools a snapshot, the engine its info).
    pub fn probes(&self) -> Vec<(&'static str, crate::systemd::Probe)> {
        let agent = self.agent.clone();
        let tools = self.tools.clone();
        let engine = self.engine.clone();
        vec![
            (
                "agent",
                crate::systemd::probe(move || {
                    let agent = agent.clone();
                    async move { ractor::call!(agent, AgentMsg::Ping) }
                }),
            ),
            (
                "tools",
                crate::systemd::probe(move || {
                    let tools = tools.clone();
                    async move { ractor::call!(tools, ToolsMsg::Snapshot).map(|_| ()) }
                }),
            ),
            (
                "engine",
                crate::systemd::probe(move || {
                    let engine = engine.clone();
                    async move { ractor::call!(engine, EngineMsg::Info).map(|_| ()) }
                }),
            ),
        ]
    }
}

/// The engine `opts.engine` names, started.
async fn start_engine(opts: &TextOptions) -> Result<ActorRef<EngineMsg>, StartError> {
    match &opts.engine {
        EngineChoice::Llama => start_llama(opts).await,
        EngineChoice::OpenAi(remote) => {
            let cfg = remote_config(opts, remote);
            Ok(crate::llm::openai::OpenAiEngine::spawn(cfg).await?)
        }
    }
}

/// The remote engine's configuration with what the text options add: the context, the
/// preset's own template, the local model file.
pub(crate) fn remote_config(
    opts: &TextOptions,
    remote: &crate::llm::openai::OpenAiConfig,
) -> crate::llm::openai::OpenAiConfig {
    let mut cfg = remote.clone();
    cfg.n_ctx = opts.n_ctx as usize;
    cfg.preset_template = opts.preset.chat_template.is_some();
    if cfg.gguf.is_none() {
        cfg.gguf = local_gguf(opts);
    }
    cfg
}

/// The model file the remote engine reads the chat template from when the server reports
/// none: the one named, else the preset's in the model directory (not checked: only its
/// metadata is read).
fn local_gguf(opts: &TextOptions) -> Option<PathBuf> {
    if let Some(m) = &opts.model {
        return Some(m.clone());
    }
    let file = &opts.preset.model.as_ref()?.file;
    Some(crate::models::model_dir().ok()?.join(file))
}

#[cfg(feature = "llm")]
async fn start_llama(opts: &TextOptions) -> Result<ActorRef<EngineMsg>, StartError> {
    use crate::llm::llama::{LlamaConfig, LlamaEngine};
    let mut cfg = LlamaConfig::new(model_path(opts)?);
    cfg.n_ctx = opts.n_ctx;
    if let Some(t) = opts.threads {
        cfg.n_threads = t;
    }
    cfg.prompt_cache = opts.prompt_cache.clone();
    cfg.n_gpu_layers = opts.gpu_layers;
    Ok(LlamaEngine::spawn(cfg).await?)
}

#[cfg(not(feature = "llm"))]
async fn start_llama(_opts: &TextOptions) -> Result<ActorRef<EngineMsg>, StartError> {
    Err(StartError::NoEngine)
}

/// The first restart of a stage waits this long after the second failure (the first is
/// immediate); each further one twice as long, up to [`MAX_BACKOFF`].
pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait before a restart.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A stage that ran this long before it died is restarted at once again.
pub(crate) const STABLE_AFTER: Duration = Duration::from_secs(60);

/// Starts one stage linked to the supervisor (the argument) and returns its cell. It also
/// hands the new address to whoever talks to the stage.
pub(crate) type StartFn = Box<
    dyn Fn(ActorCell) -> Pin<Box<dyn Future<Output = Result<ActorCell, String>> + Send>>
        + Send
        + Sync,
>;

/// A stage to supervise.
pub(crate) struct StageSpec {
    /// Its name in logs and events ("tts").
    pub name: &'static str,
    /// Restart it when it dies. A stage that cannot resume where it was (a WAV file
    /// source would start over) is not restarted: its death is reported and ends the run.
    pub restart: bool,
    /// How to start it.
    pub start: StartFn,
}

/// What the supervisor reports.
#[derive(Debug, Clone)]
pub enum StageEvent {
    /// A stage is up (`restarts`: how many times it was restarted so far).
    Started {
        stage: &'static str,
        cell: ActorCell,
        restarts: u32,
    },
    /// A stage died; it restarts after `restart_in`, or never (None).
    Died {
        stage: &'static str,
        reason: String,
        restart_in: Option<Duration>,
    },
    /// A restart failed; it is tried again after `retry_in`.
    RestartFailed {
        stage: &'static str,
        reason: String,
        retry_in: Duration,
    },
    /// Every stage is up.
    Ready,
    /// A stage is down.
    Degraded { stage: &'static str },
}

/// Messages to the [`StageSupervisor`].
pub(crate) enum SupervisorMsg {
    /// Start these stages in order; the reply is the first failure (stage, reason), if any.
    Start(
        Vec<StageSpec>,
        RpcReplyPort<Result<(), (&'static str, String)>>,
    ),
    /// Restart the stage at this index (sent to itself after the backoff).
    Restart(usize),
    /// Stop restarting: the run is ending and the stages are being stopped on purpose.
    Shutdown(RpcReplyPort<()>),
}

/// The supervisor of the voice stages. Its argument is where its [`StageEvent`]s go.
pub(crate) struct StageSupervisor;

struct Slot {
    spec: StageSpec,
    cell: Option<ActorCell>,
    restarts: u32,
    backoff: Duration,
    started_at: Instant,
}

/// [`StageSupervisor`]'s state.
pub(crate) struct SupervisorState {
    slots: Vec<Slot>,
    stopping: bool,
    events: UnboundedSender<StageEvent>,
}

impl SupervisorState {
    fn emit(&self, e: StageEvent) {
        let _ = self.events.send(e);
    }

    fn all_up(&self) -> bool {
        self.slots.iter().all(|s| s.cell.is_some())
    }
}

impl Actor for StageSupervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = UnboundedSender<StageEvent>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        events: UnboundedSender<StageEvent>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(SupervisorState {
            slots: Vec::new(),
            stopping: false,
            events,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Start(specs, reply) => {
                for spec in specs {
                    match (spec.start)(myself.get_cell()).await {
                        Ok(cell) => {
                            tracing::info!(stage = spec.name, "stage started");
                            state.emit(StageEvent::Started {
                                stage: spec.name,
                                cell: cell.clone(),
                                restarts: 0,
                            });
                            state.slots.push(Slot {
                                spec,
                                cell: Some(cell),
                                restarts: 0,
                                backoff: Duration::ZERO,
                                started_at: Instant::now(),
                            });
                        }
                        Err(e) => {
                            let _ = reply.send(Err((spec.name, e)));
                            return Ok(());
                        }
                    }
                }
                state.emit(StageEvent::Ready);
                let _ = reply.send(Ok(()));
            }
            SupervisorMsg::Restart(i) => {
                if state.stopping {
                    return Ok(());
                }
                let Some(slot) = state.slots.get_mut(i) else {
                    return Ok(());
                };
                if slot.cell.is_some() {
                    return Ok(());
                }
                let name = slot.spec.name;
                match (slot.spec.start)(myself.get_cell()).await {
                    Ok(cell) => {
                        slot.cell = Some(cell.clone());
                        slot.restarts += 1;
                        slot.started_at = Instant::now();
                        let restarts = slot.restarts;
                        tracing::info!(stage = name, restarts, "stage restarted");
                        state.emit(StageEvent::Started {
                            stage: name,
                            cell,
                            restarts,
                        });
                        if state.all_up() {
                            state.emit(StageEvent::Ready);
                        }
                    }
                    Err(e) => {
                        let retry_in = next_backoff(&mut slot.backoff);
                        tracing::warn!(stage = name, error = %e, ?retry_in, "restart failed");
                        state.emit(StageEvent::RestartFailed {
                            stage: name,
                            reason: e,
                            retry_in,
                        });
                        myself.send_after(retry_in, move || SupervisorMsg::Restart(i));
                    }
                }
            }
            SupervisorMsg::Shutdown(reply) => {
                state.stopping = true;
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, reason) = match event {
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, reason.unwrap_or_else(|| "it stopped".to_string()))
            }
            SupervisionEvent::ActorFailed(cell, e) => (cell, e.to_string()),
            _ => return Ok(()),
        };
        if state.stopping {
            return Ok(());
        }
        let id = cell.get_id();
        let Some(i) = state
            .slots
            .iter()
            .position(|s| s.cell.as_ref().is_some_and(|c| c.get_id() == id))
        else {
            return Ok(());
        };
        let slot = &mut state.slots[i];
        slot.cell = None;
        let name = slot.spec.name;
        if !slot.spec.restart {
            tracing::error!(stage = name, %reason, "stage died and cannot be restarted");
            state.emit(StageEvent::Died {
                stage: name,
                reason,
                restart_in: None,
            });
            state.emit(StageEvent::Degraded { stage: name });
            return Ok(());
        }
        if slot.started_at.elapsed() >= STABLE_AFTER {
            slot.backoff = Duration::ZERO;
        }
        let delay = next_backoff(&mut slot.backoff);
        tracing::warn!(stage = name, %reason, restart_in = ?delay, "stage died; restarting it");
        state.emit(StageEvent::Died {
            stage: name,
            reason,
            restart_in: Some(delay),
        });
        state.emit(StageEvent::Degraded { stage: name });
        myself.send_after(delay, move || SupervisorMsg::Restart(i));
        Ok(())
    }
}

/// The wait before this restart; doubles the next one (0, then 200 ms, 400 ms, … 10 s).
fn next_backoff(backoff: &mut Duration) -> Duration {
    let now = *backoff;
    *backoff = (now * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_at_zero_and_doubles_to_the_cap() {
        let mut b = Duration::ZERO;
        let waits: Vec<u64> = (0..9)
            .map(|_| next_backoff(&mut b).as_millis() as u64)
            .collect();
        assert_eq!(waits, [0, 200, 400, 800, 1600, 3200, 6400, 10000, 10000]);
    }

    /// A stage that counts its starts and dies on a message.
    struct Fragile;

    impl Actor for Fragile {
        type Msg = bool;
        type State = ();
        type Arguments = ();

        async fn pre_start(
            &self,
            _myself: ActorRef<bool>,
            _: (),
        ) -> Result<(), ActorProcessingErr> {
            Ok(())
        }

        async fn handle(
            &self,
            _myself: ActorRef<bool>,
            fail: bool,
            _: &mut (),
        ) -> Result<(), ActorProcessingErr> {
            if fail {
                return Err("asked to fail".into());
            }
            Ok(())
        }
    }

    fn fragile(
        name: &'static str,
        restart: bool,
        current: std::sync::Arc<std::sync::Mutex<Option<ActorRef<bool>>>>,
    ) -> StageSpec {
        StageSpec {
            name,
            restart,
            start: Box::new(move |sup| {
                let current = current.clone();
                Box::pin(async move {
                    let (r, _) = Actor::spawn_linked(None, Fragile, (), sup)
                        .await
                        .map_err(|e| e.to_string())?;
                    *current.lock().unwrap() = Some(r.clone());
                    Ok(r.get_cell())
                })
            }),
        }
    }

    #[tokio::test]
    async fn a_dead_stage_is_restarted_and_the_others_keep_running() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (sup, _) = Actor::spawn(None, StageSupervisor, tx).await.unwrap();
        let a = std::sync::Arc::new(std::sync::Mutex::new(None));
        let b = std::sync::Arc::new(std::sync::Mutex::new(None));
        let once = std::sync::Arc::new(std::sync::Mutex::new(None));
        let specs = vec![
            fragile("a", true, a.clone()),
            fragile("b", true, b.clone()),
            fragile("once", false, once.clone()),
        ];
        ractor::call!(sup, SupervisorMsg::Start, specs)
            .unwrap()
            .unwrap();
        let mut names = Vec::new();
        loop {
            match rx.recv().await.unwrap() {
                StageEvent::Started { stage, .. } => names.push(stage),
                StageEvent::Ready => break,
                e => panic!("{e:?}"),
            }
        }
        assert_eq!(names, ["a", "b", "once"]);
        let b_before = b.lock().unwrap().clone().unwrap();

        // a fails: restarted at once, b untouched
        let first = a.lock().unwrap().clone().unwrap();
        first.cast(true).unwrap();
        let mut seen = Vec::new();
        loop {
            let e = rx.recv().await.unwrap();
            let ready = matches!(e, StageEvent::Ready);
            seen.push(
                format!("{e:?}")
                    .split([' ', '(', '{'])
                    .next()
                    .unwrap()
                    .to_string(),
            );
            if let StageEvent::Died { restart_in, .. } = &e {
                assert_eq!(*restart_in, Some(Duration::ZERO));
            }
            if let StageEvent::Started {
                stage, restarts, ..
            } = &e
            {
                assert_eq!((*stage, *restarts), ("a", 1));
            }
            if ready {
                break;
            }
        }
        assert_eq!(seen, ["Died", "Degraded", "Started", "Ready"]);
        let second = a.lock().unwrap().clone().unwrap();
        assert_ne!(first.get_id(), second.get_id());
        assert_eq!(
            b.lock().unwrap().clone().unwrap().get_id(),
            b_before.get_id()
        );
        assert!(b_before.cast(false).is_ok());

        // a fails again soon: this time after the backoff
        second.cast(true).unwrap();
        match rx.recv().await.unwrap() {
            StageEvent::Died { restart_in, .. } => assert_eq!(restart_in, Some(MIN_BACKOFF)),
            e => panic!("{e:?}"),
        }

        // a stage that is not restarted is reported dead for good
        once.lock().unwrap().clone().unwrap().cast(true).unwrap();
        let died_for_good = loop {
            match rx.recv().await.unwrap() {
                StageEvent::Died {
                    stage: "once",
                    restart_in,
                    ..
                } => break restart_in,
                _ => continue,
            }
        };
        assert_eq!(died_for_good, None);

        // shutting down: stopping the stages restarts nothing
        ractor::call!(sup, SupervisorMsg::Shutdown).unwrap();
        b_before.stop(None);
        tokio::time::sleep(Duration::from_millis(300)).await;
        while let Ok(e) = rx.try_recv() {
            assert!(
                !matches!(
                    e,
                    StageEvent::Started { stage: "b", .. } | StageEvent::Died { stage: "b", .. }
                ),
                "{e:?}"
            );
        }
        sup.stop(None);
    }
}
