//! The D-Bus face: other programs on the machine use hearth's agent and tools.
//!
//! Well-known name and interface `io.hearth.Agent1`, object `/io/hearth/Agent`:
//!
//! | member | |
//! |---|---|
//! | `Ask(s text) → s reply` | one turn of the agent; each caller (unique name) has its own conversation |
//! | `ListTools() → s json` | the tools on offer, as the OpenAI-style list chat templates take |
//! | `CallTool(s name, s arguments_json) → s result_json` | run one tool, through the same checks as the model's calls |
//! | `Cancel()` | stop the running turn |
//! | `RegisterTool(s spec_json)` | offer a tool (or an array of them) that hearth calls back on the caller |
//! | `Listen()` | the next thing said is a request, without the wake word (a button, another program) |
//! | `Announce(s text, s room)` | say `text` on the speakers of `room` (a satellite's), or everywhere for `""`: between turns, never over a reply |
//! | `State` (s, read) | `idle`, `listening`, `listening-for-request`, `thinking` or `speaking` |
//! | `Preset` (s, read) | the model preset |
//! | `Muted` (b, read/write) | when true, the microphone is ignored |
//! | `Bounds` (s, read) | how full each bounded container is: JSON `[{"name","len","cap"}]` |
//! | `Satellites` (s, read) | each satellite's connection and state: JSON `[{"name","connected","state"}]` |
//! | `Timers` (s, read) | the timers, alarms and reminders, soonest first, then those ringing: JSON `[{"kind","name","room","seconds_left","paused","ringing"}]` |
//! | `TimerFinished(s kind, s name, s room, t late_s)` | signal: a timer, alarm or reminder is done (`kind`: `timer`, `alarm`, `reminder`; `name`: a timer's name, an alarm's time, a reminder's words; `""` for none; `late_s` > 0 when it fell due while hearth was down) |
//! | `WakeDetected(s wake_word, s source)`, `Heard(s text, s source)`, `Replied(s text, s source)`, `ToolCalled(s name, s arguments, s result, s status)` | signals (`source`: the satellite that heard it, `""` for the local microphone or a D-Bus caller) |
//!
//! A tool provider serves `io.hearth.ToolProvider1.Call(s name, s arguments_json) → s` at
//! `/io/hearth/ToolProvider`; its tools are dropped when it leaves the bus.
//!
//! Errors are named: `io.hearth.Error.InvalidArguments` (bad JSON, a schema violation, a bad
//! tool spec), `…UnknownTool`, `…Busy` (a turn is running and the queue is full, or it did
//! not free up in time), `…ToolFailed` (the tool ran and failed), `…Failed` (the agent
//! failed). Every message says what was wrong and what to do.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use ractor::ActorRef;
use serde_json::Value;
use tracing::Instrument;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::Connection;

use crate::agent::{AgentError, AgentMsg, Ask};
use crate::events::{Activity, Event, Events};
use crate::toolcall::{Refused, ToolSpec};
use crate::tools::{ProviderLimits, ToolStatus, ToolsMsg};

/// The well-known name hearth owns.
pub const NAME: &str = "io.hearth.Agent1";
/// The object the interface is served at.
pub const PATH: &str = "/io/hearth/Agent";

/// Requests that may wait for a running turn (the agent's queue, shared with spoken turns);
/// more are refused with `Busy` at once.
pub use crate::agent::QUEUE_LIMIT;
/// How long an `Ask` waits in the agent's queue for its turn before it is refused with `Busy`.
pub(crate) const QUEUE_WAIT: Duration = Duration::from_secs(60);

/// The bus `hearth run` serves on (and `hearth doctor` checks): `flag` (`--bus`), else
/// `configured` (`[bus] bus`), else the system bus under systemd and the session bus
/// otherwise. The flag says whether it was chosen (an unreachable chosen bus is an error).
pub fn choose(
    flag: Option<crate::config::BusKind>,
    configured: Option<crate::config::BusKind>,
) -> (crate::config::BusKind, bool) {
    use crate::config::BusKind;
    match flag.or(configured) {
        Some(kind) => (kind, true),
        None if crate::systemd::under_systemd() => (BusKind::System, false),
        None => (BusKind::Session, false),
    }
}

/// Which bus to serve on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusAddress {
    /// The user's session bus (development, a desktop).
    Session,
    /// The system bus (the systemd service; needs the policy file).
    System,
    /// A bus at an explicit address (`unix:path=…`; tests, a private bus).
    Address(String),
}

impl std::fmt::Display for BusAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusAddress::Session => f.write_str("session bus"),
            BusAddress::System => f.write_str("system bus"),
            BusAddress::Address(a) => write!(f, "bus at {a}"),
        }
    }
}

/// Why the face could not be served.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("cannot connect to the {bus}: {source} (is a D-Bus daemon running? for the session bus, DBUS_SESSION_BUS_ADDRESS must be set; `hearth run --bus none` runs without D-Bus)")]
    Connect {
        bus: BusAddress,
        #[source]
        source: zbus::Error,
    },
    #[error("cannot own {NAME} on the {bus}: {reason}")]
    Name { bus: BusAddress, reason: String },
    #[error("the {0} actor did not answer")]
    Actor(&'static str),
}

/// The errors the face's methods return, as named D-Bus errors (`io.hearth.Error.*`).
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "io.hearth.Error")]
pub(crate) enum FaceError {
    #[zbus(error)]
    ZBus(zbus::Error),
    /// Bad JSON, arguments that break the tool's schema, a bad tool spec.
    InvalidArguments(String),
    /// No tool by that name.
    UnknownTool(String),
    /// A turn is running (and the queue is full, or it did not free up in time).
    Busy(String),
    /// The tool ran and failed (the message is its error).
    ToolFailed(String),
    /// The agent failed (the model, a template); the message names the fix.
    Failed(String),
    /// A call that waits for a person's yes (its tool's `confirm`), asked by a caller that
    /// is not trusted to skip it.
    NeedsConfirmation(String),
}

/// What the face needs from the rest of hearth.
pub struct FaceOptions {
    /// The bus to serve on.
    pub bus: BusAddress,
    /// The preset's name (the `Preset` property).
    pub preset: String,
    /// True when the voice pipeline runs: hearth is `listening` between turns, not `idle`.
    pub voice: bool,
    /// The microphone mute shared with the voice pipeline (the `Muted` property).
    pub muted: Arc<AtomicBool>,
    /// `Listen()` wakes the voice pipeline through this (`None`: no microphone).
    pub listen: Option<Arc<tokio::sync::Notify>>,
    /// What `RegisterTool` callers may add to everyone's prompt.
    pub provider_limits: ProviderLimits,
    /// Users whose `CallTool` runs calls that otherwise wait for a yes (`[bus] trusted_uids`).
    pub trusted_uids: Vec<u32>,
    /// `Announce` goes through this (`None`: nothing speaks, `--no-audio`).
    pub announcer: Option<crate::announce::Announcer>,
    /// The timers (the `Timers` property; `None`: this process keeps none).
    pub timers: Option<ActorRef<crate::timers::TimersMsg>>,
}

/// The served face: the connection and the tasks that follow the events and the bus.
pub struct Face {
    connection: Connection,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Face {
    /// The connection the face is served on (its unique name, for tests and logs).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// A watchdog probe: `org.freedesktop.DBus.Peer.Ping` sent to hearth's own name through
    /// the bus daemon (the daemon and the face's dispatch both answer, or it fails).
    pub fn probe(&self) -> crate::systemd::Probe {
        let connection = self.connection.clone();
        crate::systemd::probe(move || {
            let connection = connection.clone();
            async move {
                let me = connection
                    .unique_name()
                    .map(|n| n.to_string())
                    .ok_or_else(|| "the connection has no unique name".to_string())?;
                connection
                    .call_method(
                        Some(me.as_str()),
                        PATH,
                        Some("org.freedesktop.DBus.Peer"),
                        "Ping",
                        &(),
                    )
                    .await
                    .map(|_| ())
                    .map_err(|e| crate::tools::dbus::error_text(&e))
            }
        })
    }
}

impl Drop for Face {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Serve `io.hearth.Agent1` on `opts.bus`: own the name, answer calls, turn `events` into
/// signals, drop the tools and conversations of callers that leave the bus.
pub async fn serve(
    opts: FaceOptions,
    agent: ActorRef<AgentMsg>,
    tools: ActorRef<ToolsMsg>,
    events: Events,
) -> Result<Face, BusError> {
    let idle = if opts.voice {
        Activity::Listening
    } else {
        Activity::Idle
    };
    let agent_face = AgentFace {
        agent: agent.clone(),
        tools: tools.clone(),
        events: events.clone(),
        activity: Arc::new(Mutex::new(idle)),
        idle,
        muted: opts.muted,
        listen: opts.listen,
        announcer: opts.announcer,
        timers: opts.timers,
        satellites: Default::default(),
        preset: opts.preset,
        provider_limits: opts.provider_limits,
        trusted_uids: opts.trusted_uids,
        next_call: AtomicU64::new(0),
    };
    let bus = opts.bus.clone();
    let connect_err = |source| BusError::Connect {
        bus: bus.clone(),
        source,
    };
    let builder = match &opts.bus {
        BusAddress::Session => zbus::connection::Builder::session(),
        BusAddress::System => zbus::connection::Builder::system(),
        BusAddress::Address(a) => zbus::connection::Builder::address(a.as_str()),
    };
    // the object first, then the name: a caller who sees the name finds the object
    let connection = builder
        .serve_at(PATH, agent_face)
        .build()
        .await
        .map_err(connect_err)?;
    if let Err(e) = connection
        .request_name_with_flags(NAME, zbus::fdo::RequestNameFlags::DO_NOT_QUEUE)
        .await
    {
        let reason = match &e {
            zbus::Error::NameTaken => format!(
                "another process owns it (is hearth already running? `busctl {}status {NAME}` names it)",
                if opts.bus == BusAddress::Session {
                    "--user "
                } else {
                    ""
                }
            ),
            zbus::Error::MethodError(name, _, _) if name.as_str().ends_with("AccessDenied") => {
                "the bus policy does not allow it: install systemd/io.hearth.Agent1.conf into /usr/share/dbus-1/system.d/ and run hearth as the `hearth` user".to_string()
            }
            other => crate::tools::dbus::error_text(other),
        };
        return Err(BusError::Name { bus, reason });
    }
    tracing::info!(bus = %opts.bus, name = NAME, path = PATH, unique = ?connection.unique_name().map(|n| n.to_string()), "D-Bus face served");

    // registered providers are called back on this connection
    let registry =
        ractor::call!(tools, ToolsMsg::Snapshot).map_err(|_| BusError::Actor("tools"))?;
    registry.backends().serve_providers(connection.clone());

    let mut tasks = Vec::new();
    tasks.push(tokio::spawn(forward_events(
        connection.clone(),
        events.subscribe(),
    )));
    let proxy = zbus::fdo::DBusProxy::new(&connection)
        .await
        .map_err(connect_err)?;
    let owners = proxy
        .receive_name_owner_changed()
        .await
        .map_err(connect_err)?;
    tasks.push(tokio::spawn(forget_departed(owners, agent, tools)));
    Ok(Face { connection, tasks })
}

/// The `io.hearth.Agent1` object.
struct AgentFace {
    agent: ActorRef<AgentMsg>,
    tools: ActorRef<ToolsMsg>,
    events: Events,
    activity: Arc<Mutex<Activity>>,
    /// What hearth is doing between turns.
    idle: Activity,
    muted: Arc<AtomicBool>,
    listen: Option<Arc<tokio::sync::Notify>>,
    announcer: Option<crate::announce::Announcer>,
    timers: Option<ActorRef<crate::timers::TimersMsg>>,
    /// Each satellite's connection and activity (the `Satellites` property).
    satellites: Arc<Mutex<std::collections::BTreeMap<String, SatelliteState>>>,
    preset: String,
    provider_limits: ProviderLimits,
    trusted_uids: Vec<u32>,
    /// Ids for `CallTool` calls.
    next_call: AtomicU64,
}

#[zbus::interface(name = "io.hearth.Agent1")]
impl AgentFace {
    /// One turn: the model decides, tools run, the reply comes back (sanitised text).
    async fn ask(
        &self,
        #[zbus(header)] header: Header<'_>,
        text: String,
    ) -> Result<String, FaceError> {
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err(FaceError::InvalidArguments(
                "Ask: the text is empty: say what you want, e.g. \"turn on the kitchen light\""
                    .into(),
            ));
        }
        let session = caller(&header);
        let span = tracing::info_span!("bus_ask", %session);
        self.set_activity(Activity::Thinking);
        // the agent's one queue: behind a running turn (spoken or another Ask) this waits
        // up to QUEUE_WAIT, or is refused at once when the queue is full
        let ask = Ask::new(session, text).wait_up_to(QUEUE_WAIT);
        let out = crate::agent::ask(&self.agent, ask).instrument(span).await;
        self.set_activity(self.idle);
        match out {
            Ok(turn) => Ok(turn.reply),
            Err(e @ (AgentError::Busy | AgentError::QueueFull | AgentError::WaitedTooLong(_))) => {
                Err(busy(e.to_string()))
            }
            Err(e) => Err(FaceError::Failed(format!("Ask: {e}"))),
        }
    }

    /// The tools on offer: `[{"type":"function","function":{"name","description","parameters"}}]`.
    async fn list_tools(&self) -> Result<String, FaceError> {
        let registry = ractor::call!(self.tools, ToolsMsg::Snapshot).map_err(|_| {
            FaceError::Failed("ListTools: the tools actor is not answering; restart hearth".into())
        })?;
        Ok(registry.listed_tools().to_string())
    }

    /// Run one tool with JSON arguments, checked like a model's call (the allowlist, then
    /// the tool's JSON Schema; nothing runs otherwise). Returns
    /// `{"status":"ok"|"empty","result":"…"}`.
    async fn call_tool(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] connection: &Connection,
        name: String,
        arguments_json: String,
    ) -> Result<String, FaceError> {
        let arguments: Value = serde_json::from_str(&arguments_json).map_err(|e| {
            FaceError::InvalidArguments(format!(
                "CallTool {name}: arguments_json is not valid JSON ({e}): give a JSON object, e.g. '{{\"room\":\"kitchen\"}}' ('{{}}' for none)"
            ))
        })?;
        if !arguments.is_object() {
            return Err(FaceError::InvalidArguments(format!(
                "CallTool {name}: arguments_json must be a JSON object, got {}: e.g. '{{\"room\":\"kitchen\"}}' ('{{}}' for none)",
                crate::toolcall::scan::type_name(&arguments)
            )));
        }
        let registry = ractor::call!(self.tools, ToolsMsg::Snapshot).map_err(|_| {
            FaceError::Failed("CallTool: the tools actor is not answering; restart hearth".into())
        })?;
        let id = format!("dbus_{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        let call = match registry.toolset().call(id, &name, arguments) {
            Ok(call) => call,
            Err(Refused::UnknownTool) => {
                return Err(FaceError::UnknownTool(format!(
                    "no tool is named {name:?}: the tools are {} (ListTools describes them)",
                    registry.names().collect::<Vec<_>>().join(", ")
                )))
            }
            Err(Refused::Invalid(reason)) => {
                return Err(FaceError::InvalidArguments(format!(
                    "CallTool {name}: {reason} (ListTools gives its schema)"
                )))
            }
        };
        if let Some(question) = registry.question(&call) {
            self.may_skip_the_yes(&header, connection, &name, &question)
                .await?;
        }
        let outcomes = ractor::call!(self.tools, |reply| ToolsMsg::CallAll {
            calls: vec![call],
            room: None,
            reply
        })
        .map_err(|_| {
            FaceError::Failed("CallTool: the tools actor is not answering; restart hearth".into())
        })?;
        let Some(outcome) = outcomes.into_iter().next() else {
            return Err(FaceError::Failed(format!(
                "CallTool {name}: no outcome came back"
            )));
        };
        crate::events::publish(Some(&self.events), Event::tool_called(&outcome));
        match outcome.status {
            ToolStatus::Error => Err(FaceError::ToolFailed(outcome.result)),
            status => Ok(serde_json::json!({
                "status": status.as_str(),
                "result": outcome.result,
            })
            .to_string()),
        }
    }

    /// Stop the running turn (generation stops; no further tool starts).
    async fn cancel(&self) -> Result<(), FaceError> {
        self.agent.cast(AgentMsg::Cancel).map_err(|_| {
            FaceError::Failed("Cancel: the agent is not answering; restart hearth".into())
        })
    }

    /// Offer tools served by the caller: `{"name","description","parameters"}` (or the
    /// OpenAI `{"type":"function","function":{…}}` form), or an array of them. hearth calls
    /// `io.hearth.ToolProvider1.Call` on the caller at `/io/hearth/ToolProvider`.
    async fn register_tool(
        &self,
        #[zbus(header)] header: Header<'_>,
        spec_json: String,
    ) -> Result<(), FaceError> {
        let owner = caller(&header);
        let specs = parse_specs(&spec_json).map_err(FaceError::InvalidArguments)?;
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let out = ractor::call!(self.tools, |reply| ToolsMsg::Register {
            owner: owner.clone(),
            specs,
            limits: self.provider_limits,
            reply
        })
        .map_err(|_| {
            FaceError::Failed(
                "RegisterTool: the tools actor is not answering; restart hearth".into(),
            )
        })?;
        out.map_err(|e| FaceError::InvalidArguments(format!("RegisterTool: {e}")))?;
        tracing::info!(%owner, tools = ?names, "tools registered over D-Bus");
        Ok(())
    }

    /// The next thing said is a request, without the wake word (what a button or another
    /// program does); while hearth speaks, its reply stops first.
    async fn listen(&self) -> Result<(), FaceError> {
        match &self.listen {
            Some(wake) => {
                wake.notify_one();
                Ok(())
            }
            None => Err(FaceError::Failed(
                "Listen: hearth runs without a microphone (--no-audio): run it with audio to listen"
                    .into(),
            )),
        }
    }

    /// Say `text` (no turn: nothing runs) on the speakers of `room` (a satellite's `room`),
    /// or on every one for `""`: between turns, after the reply under way, never over it.
    async fn announce(&self, text: String, room: String) -> Result<(), FaceError> {
        let Some(announcer) = &self.announcer else {
            return Err(FaceError::Failed(
                "Announce: hearth runs without a speaker (--no-audio and no [[satellite]])".into(),
            ));
        };
        match announcer.announce(&text, &room) {
            Ok(n) => {
                tracing::info!(%room, speakers = n, "announcement over D-Bus");
                Ok(())
            }
            Err(e @ crate::announce::AnnounceError::NoSpeaker) => {
                Err(FaceError::Failed(format!("Announce: {e}")))
            }
            Err(e) => Err(FaceError::InvalidArguments(format!("Announce: {e}"))),
        }
    }

    /// `idle`, `listening`, `listening-for-request`, `thinking` or `speaking`.
    #[zbus(property)]
    async fn state(&self) -> String {
        self.activity
            .lock()
            .map(|a| a.as_str())
            .unwrap_or("idle")
            .to_string()
    }

    /// The model preset.
    #[zbus(property)]
    async fn preset(&self) -> String {
        self.preset.clone()
    }

    /// How full each bounded container of the process is (agent sessions and queue, cached
    /// tool sets and grammars, registered tools, utterances waiting, ...): a JSON array of
    /// `{"name","len","cap"}`. For soak tests and a look at a daemon that has run for months.
    #[zbus(property(emits_changed_signal = "false"))]
    async fn bounds(&self) -> String {
        serde_json::to_string(&crate::bounded::levels()).unwrap_or_else(|_| "[]".into())
    }

    /// True while the microphone is ignored.
    #[zbus(property)]
    async fn muted(&self) -> bool {
        self.muted.load(Ordering::SeqCst)
    }

    #[zbus(property)]
    async fn set_muted(&self, muted: bool) {
        self.muted.store(muted, Ordering::SeqCst);
        tracing::info!(muted, "microphone mute set over D-Bus");
    }

    /// Each satellite (`[[satellite]]`): whether it is connected, and what its pipeline is
    /// doing (as `State`): JSON `[{"name","connected","state"}]`.
    #[zbus(property)]
    async fn satellites(&self) -> String {
        let satellites = self.satellites.lock().map(|m| {
            m.iter()
                .map(|(name, s)| {
                    serde_json::json!({"name": name, "connected": s.connected, "state": s.activity.as_str()})
                })
                .collect::<Vec<_>>()
        });
        serde_json::to_string(&satellites.unwrap_or_default()).unwrap_or_else(|_| "[]".into())
    }

    /// The timers, alarms and reminders, soonest first, then those ringing: JSON
    /// `[{"kind","name","room","seconds_left","paused","ringing"}]` (`name` as in
    /// `TimerFinished`; `name`, `room`: `""` for none); `[]` when this process keeps none.
    #[zbus(property)]
    async fn timers(&self) -> String {
        let Some(timers) = &self.timers else {
            return "[]".into();
        };
        let now = crate::timers::now_ms();
        let listed = ractor::call!(timers, crate::timers::TimersMsg::List).unwrap_or_default();
        let ringing = ractor::call!(timers, crate::timers::TimersMsg::Ringing).unwrap_or_default();
        let entry = |t: &crate::timers::Timer, ringing: bool| {
            serde_json::json!({
                "kind": t.kind().as_str(),
                "name": t.what(),
                "room": t.room.clone().unwrap_or_default(),
                "seconds_left": t.left_ms(now).div_ceil(1000),
                "paused": matches!(t.run, crate::timers::Run::Paused { .. }),
                "ringing": ringing,
            })
        };
        let all: Vec<Value> = listed
            .iter()
            .map(|t| entry(t, false))
            .chain(ringing.iter().map(|t| entry(t, true)))
            .collect();
        serde_json::to_string(&all).unwrap_or_else(|_| "[]".into())
    }

    /// A timer, alarm or reminder is done (`kind`, `name` as in the `Timers` property;
    /// `room`: `""` for none; `late_s`: how late it rang, more than 0 when it fell due while
    /// hearth was down).
    #[zbus(signal)]
    async fn timer_finished(
        emitter: &SignalEmitter<'_>,
        kind: &str,
        name: &str,
        room: &str,
        late_s: u64,
    ) -> zbus::Result<()>;

    /// A wake word was heard: hearth listens for the request. `source`: the satellite that
    /// heard it (`""`: the local microphone).
    #[zbus(signal)]
    async fn wake_detected(
        emitter: &SignalEmitter<'_>,
        wake_word: &str,
        source: &str,
    ) -> zbus::Result<()>;

    /// Speech was recognised (`source` as for `WakeDetected`).
    #[zbus(signal)]
    async fn heard(emitter: &SignalEmitter<'_>, text: &str, source: &str) -> zbus::Result<()>;

    /// A turn's reply (`source`: the satellite it was said to; `""`: the local microphone or
    /// a D-Bus caller).
    #[zbus(signal)]
    async fn replied(emitter: &SignalEmitter<'_>, text: &str, source: &str) -> zbus::Result<()>;

    /// A tool ran: its name, JSON arguments, result text and status (ok, empty, error).
    #[zbus(signal)]
    async fn tool_called(
        emitter: &SignalEmitter<'_>,
        name: &str,
        arguments: &str,
        result: &str,
        status: &str,
    ) -> zbus::Result<()>;
}

/// A satellite as the `Satellites` property shows it.
#[derive(Debug, Clone, Copy)]
struct SatelliteState {
    connected: bool,
    activity: Activity,
}

impl AgentFace {
    /// Change what the `Satellites` property shows of `name`.
    fn satellite_changed(&self, name: &str, change: impl FnOnce(&mut SatelliteState)) {
        if let Ok(mut m) = self.satellites.lock() {
            let s = m.entry(name.to_string()).or_insert(SatelliteState {
                connected: true,
                activity: Activity::Listening,
            });
            change(s);
        }
    }

    /// `CallTool` of a call that waits for a person's yes: only a caller whose uid is in
    /// `[bus] trusted_uids` runs it; anyone else is told to `Ask` (hearth asks the person).
    async fn may_skip_the_yes(
        &self,
        header: &Header<'_>,
        connection: &Connection,
        name: &str,
        question: &str,
    ) -> Result<(), FaceError> {
        let uid = match header.sender() {
            Some(sender) if !self.trusted_uids.is_empty() => {
                let proxy = zbus::fdo::DBusProxy::new(connection).await?;
                proxy
                    .get_connection_unix_user(sender.clone().into())
                    .await
                    .ok()
            }
            _ => None,
        };
        if uid.is_some_and(|u| self.trusted_uids.contains(&u)) {
            tracing::info!(
                tool = name,
                uid,
                "a trusted caller runs a call that waits for a yes"
            );
            return Ok(());
        }
        Err(FaceError::NeedsConfirmation(format!(
            "CallTool {name}: this call waits for a person's yes (the tool's `confirm`; hearth \
             would ask {question:?}): use Ask, which asks the person first, or list the \
             caller's uid{} in [bus] trusted_uids",
            uid.map(|u| format!(" ({u})")).unwrap_or_default()
        )))
    }

    /// Publish a change of what hearth is doing (the event stream updates `State`).
    fn set_activity(&self, activity: Activity) {
        crate::events::publish(Some(&self.events), Event::Activity { activity });
    }
}

fn busy(why: String) -> FaceError {
    FaceError::Busy(format!(
        "{why}: try again shortly, or Cancel the running turn"
    ))
}

/// The caller's unique name (its session and provider identity).
fn caller(header: &Header<'_>) -> String {
    header
        .sender()
        .map(|s| s.to_string())
        .unwrap_or_else(|| "dbus".to_string())
}

/// Tool specs from `RegisterTool`'s JSON, checked like a manifest's tools: what the face
/// runs on every `spec_json` before the tools actor sees it (public for `fuzz/`).
pub fn parse_specs(spec_json: &str) -> Result<Vec<ToolSpec>, String> {
    let value: Value = serde_json::from_str(spec_json).map_err(|e| {
        format!("RegisterTool: spec_json is not valid JSON ({e}): give {{\"name\":…,\"description\":…,\"parameters\":{{…JSON Schema…}}}}")
    })?;
    let items = match value {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => return Err("RegisterTool: the array of tools is empty".into()),
        one => vec![one],
    };
    items.into_iter().map(parse_spec).collect()
}

fn parse_spec(value: Value) -> Result<ToolSpec, String> {
    let value = match value {
        Value::Object(mut m) if m.get("type").and_then(Value::as_str) == Some("function") => {
            m.remove("function").unwrap_or(Value::Null)
        }
        v => v,
    };
    let Value::Object(mut m) = value else {
        return Err("RegisterTool: a tool spec must be a JSON object {\"name\",\"description\",\"parameters\"}".into());
    };
    let name = match m.remove("name") {
        Some(Value::String(n)) => n,
        _ => return Err("RegisterTool: the spec has no \"name\" string".into()),
    };
    if !crate::tools::valid_name(&name) {
        return Err(format!(
            "RegisterTool: tool name {name:?} is not usable: use 1-64 letters, digits, `_` or `-`"
        ));
    }
    let description = match m.remove("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => d.trim().to_string(),
        _ => {
            return Err(format!(
                "RegisterTool {name}: give a \"description\" saying in a few words what it does (the model reads it)"
            ))
        }
    };
    let parameters = m
        .remove("parameters")
        .unwrap_or_else(crate::tools::no_parameters);
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "RegisterTool {name}: \"parameters\" must be an object schema ({{\"type\":\"object\",\"properties\":{{…}}}})"
        ));
    }
    if let Some(k) = m.keys().next() {
        return Err(format!(
            "RegisterTool {name}: unknown key {k:?}: a spec has name, description and parameters"
        ));
    }
    Ok(ToolSpec {
        name,
        description,
        parameters,
    })
}

/// Turn events into signals and the `State` property.
async fn forward_events(connection: Connection, mut rx: tokio::sync::broadcast::Receiver<Event>) {
    let iface = match connection
        .object_server()
        .interface::<_, AgentFace>(PATH)
        .await
    {
        Ok(i) => i,
        Err(e) => {
            tracing::error!(error = %e, "the D-Bus face's object is missing: no signals");
            return;
        }
    };
    loop {
        let event = match rx.recv().await {
            Ok(e) => e,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(
                    missed = n,
                    "the D-Bus face fell behind the events: signals were missed"
                );
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let emitter = iface.signal_emitter();
        let sent = match &event {
            Event::Activity { activity } => {
                let face = iface.get().await;
                let changed = face
                    .activity
                    .lock()
                    .map(|mut a| std::mem::replace(&mut *a, *activity) != *activity)
                    .unwrap_or(false);
                if changed {
                    face.state_changed(emitter).await
                } else {
                    Ok(())
                }
            }
            Event::WakeDetected { wake_word } => {
                AgentFace::wake_detected(emitter, wake_word, "").await
            }
            Event::Heard { text } => AgentFace::heard(emitter, text, "").await,
            Event::Replied { text } => AgentFace::replied(emitter, text, "").await,
            Event::Satellite { satellite, what } => match what.as_ref() {
                Event::WakeDetected { wake_word } => {
                    AgentFace::wake_detected(emitter, wake_word, satellite).await
                }
                Event::Heard { text } => AgentFace::heard(emitter, text, satellite).await,
                Event::Replied { text } => AgentFace::replied(emitter, text, satellite).await,
                Event::Activity { activity } => {
                    let face = iface.get().await;
                    face.satellite_changed(satellite, |s| s.activity = *activity);
                    face.satellites_changed(emitter).await
                }
                _ => Ok(()),
            },
            Event::SatelliteLink {
                satellite,
                connected,
            } => {
                let face = iface.get().await;
                face.satellite_changed(satellite, |s| s.connected = *connected);
                face.satellites_changed(emitter).await
            }
            Event::ToolCalled {
                name,
                arguments,
                result,
                status,
            } => AgentFace::tool_called(emitter, name, arguments, result, status).await,
            Event::TimerFinished {
                kind,
                name,
                room,
                late_s,
            } => AgentFace::timer_finished(emitter, kind, name, room, *late_s).await,
        };
        if let Err(e) = sent {
            tracing::warn!(error = %e, "cannot emit a D-Bus signal");
        }
    }
}

/// When a unique name leaves the bus: drop the tools it registered and its conversation.
async fn forget_departed(
    mut owners: zbus::fdo::NameOwnerChangedStream,
    agent: ActorRef<AgentMsg>,
    tools: ActorRef<ToolsMsg>,
) {
    while let Some(signal) = owners.next().await {
        let Ok(args) = signal.args() else { continue };
        let name = args.name().to_string();
        if !name.starts_with(':') || args.new_owner().is_some() {
            continue;
        }
        let _ = tools.cast(ToolsMsg::DropOwner {
            owner: name.clone(),
            reply: None,
        });
        let _ = agent.cast(AgentMsg::Reset(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_parse_in_both_forms_and_arrays() {
        let one = parse_specs(
            r#"{"name":"dim","description":"Dim the lights.","parameters":{"type":"object","properties":{"level":{"type":"integer"}}}}"#,
        )
        .unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].name, "dim");
        let openai = parse_specs(
            r#"[{"type":"function","function":{"name":"a","description":"A."}},{"name":"b","description":"B."}]"#,
        )
        .unwrap();
        assert_eq!(openai.len(), 2);
        assert_eq!(openai[0].parameters, crate::tools::no_parameters());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let cases = [
            ("not json", "not valid JSON"),
            ("[]", "empty"),
            ("42", "must be a JSON object"),
            (r#"{"description":"x"}"#, "no \"name\""),
            (r#"{"name":"rm -rf","description":"x"}"#, "not usable"),
            (r#"{"name":"a","description":"  "}"#, "description"),
            (
                r#"{"name":"a","description":"x","parameters":{"type":"string"}}"#,
                "object schema",
            ),
            (
                r#"{"name":"a","description":"x","colour":"red"}"#,
                "unknown key \"colour\"",
            ),
        ];
        for (spec, want) in cases {
            let e = parse_specs(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
        let _ = json!({});
    }
}
