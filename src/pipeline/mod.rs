//! The voice pipeline: wires Capture → Listen → Stt → Agent → Tts → Playback around a
//! running text runtime (engine, tools, agent), and runs the turns. Only this module and
//! `supervisor` know the graph; the stages only know the types of `voice`.
//!
//! ```text
//! Capture ─Captured─► [fwd] ─► Wake ─► [fwd] ─► Listen ─ListenEvent─► Conductor ─► Stt ─Heard─► Agent
//!                                 │WakeWord           ▲            ▲     │ BargeIn: Playback Stop, Tts Cancel, Agent Cancel
//!                                 └───────────────────┼────────────┘     │ (sentence ends)
//!                      PlaybackEvent ◄────────────────┴── Playback ◄─Pcm─[fwd]─ Tts ◄─Speakable─┘
//! ```
//!
//! - [`stages`]: the stages under one supervisor, restarted where that makes sense, their
//!   current addresses, and the forwarding between them (Tts's audio goes straight to
//!   Playback, tagged with its reply);
//! - [`driver`]: runs a [`crate::conductor::Conductor`] (the core's: the turns of one audio
//!   source, one at a time, as a state machine fed `Input`s and answering `Action`s; whether
//!   an utterance is a request is its `attention`, "stop" its `stop`) against the stages and
//!   the agent.
//!
//! Recognition starts early: when Listen reports a pause (`early_ms` of silence), the
//! speech so far goes to Stt while the endpointer waits out its hangover; if the utterance
//! then ends with nothing more said, that transcript is used and the hangover has hidden
//! the recognition time. When that transcript is a request a local intent answers (the
//! agent plans it, [`crate::agent::plan_ahead`]), the turn ends after
//! `[listen] intent_end_ms` of silence, without the rest of the hangover (after
//! `[listen] phrase_end_ms`, sooner, when it is a whole request of the house's phrase set
//! that no longer one continues, or one that a longer one may continue and the end-of-turn
//! model hears finished (`end_of_turn = "smart-turn-house"`, Listen's `Finished`):
//! [`crate::voice::Heard::whole`]), and the first
//! sentence its turn will say, when the agent knows it before any call runs
//! ([`crate::agent::Foreseen`]), is synthesised meanwhile; any other request
//! is asked at once, held ([`crate::agent::Ask::held`]), and stands only if the utterance
//! ends with the same words. Speech that resumes first (Listen's `Resumed`) drops both;
//! speech that resumes after a turn ended at its pause is the rest of the same request,
//! answered next. Each turn logs its stage timings (see [`TurnTimings`]).

mod driver;
mod stages;

pub use crate::conductor::{TurnTimings, VoiceTurn};

use std::future::Future;
use std::time::Duration;

use ractor::ActorRef;
use tokio::sync::mpsc;

use crate::agent::AgentMsg;
use crate::audio::listen::ListenConfig;
use crate::audio::{CaptureSource, PlaybackSink};
use crate::stt::SttConfig;
use crate::supervisor::StageEvent;
use crate::tts::VoiceSource;

/// What the voice pipeline needs besides the text runtime.
pub struct VoiceOptions {
    /// Where the audio comes from.
    pub input: CaptureSource,
    /// Where the replies go.
    pub output: PlaybackSink,
    /// The recogniser.
    pub stt: SttConfig,
    /// The voice.
    pub tts: VoiceSource,
    /// Endpointing and barge-in.
    pub listen: ListenConfig,
    /// Stop when the input ends (after the last reply has played).
    pub once: bool,
    /// Where the supervisor's reports go (stages started, died, restarted; ready or
    /// degraded): readiness for systemd, and tests.
    pub events: Option<mpsc::UnboundedSender<StageEvent>>,
    /// A turn that starts this long after the previous one ended starts a new conversation
    /// (the agent forgets the earlier turns); within it, "and the bedroom too" follows on.
    pub conversation_idle: Duration,
    /// Where what was heard and what hearth is doing are published (the D-Bus face).
    pub bus_events: Option<crate::events::Events>,
    /// While true, utterances are dropped unheard (the D-Bus `Muted` property).
    pub muted: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The wake words (`None`: every utterance is a request).
    pub wake: Option<crate::wake::WakeConfig>,
    /// The earcon, played when a wake word or `Listen()` is heard, and the bell, before an
    /// announcement.
    pub cues: crate::audio::earcon::Cues,
    /// After a reply has played, how long a request needs no wake word (zero: never).
    pub follow_up: Duration,
    /// `Listen()` over D-Bus: the next utterance is a request without the wake word.
    pub listen_requests: Option<std::sync::Arc<tokio::sync::Notify>>,
    /// Acoustic echo cancellation: what Playback plays is taken out of the captured frames
    /// before Wake and Listen see them, and Listen's playback gate is relaxed to match.
    pub echo_cancel: bool,
    /// The satellite this pipeline serves (`None`: the local microphone): its turns are in
    /// agent sessions of their own (`voice-NAME-N`).
    pub satellite: Option<String>,
    /// The room the microphone is in: a request that names no room is about this one
    /// ("turn on the light"), when a local intent takes it.
    pub room: Option<String>,
    /// Announcements to say between turns ([`crate::announce`]).
    pub announcements: Option<mpsc::UnboundedReceiver<String>>,
    /// How loud replies play (shared with the volume tools).
    pub volume: crate::voice::Volume,
}

/// How long a spoken request waits for a turn already running (a D-Bus `Ask`).
pub(crate) const BUSY_WAIT: Duration = Duration::from_secs(30);

/// The default [`VoiceOptions::follow_up`]: five seconds.
pub(crate) const FOLLOW_UP: Duration = Duration::from_secs(5);

/// The default [`VoiceOptions::conversation_idle`]: two minutes.
pub const CONVERSATION_IDLE: Duration = Duration::from_secs(120);

/// Why the pipeline failed to start or run.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Tts(#[from] crate::tts::TtsError),
    #[error(transparent)]
    Audio(#[from] crate::audio::AudioError),
    #[error("the {0} stage failed to start: {1}")]
    Spawn(&'static str, String),
    #[error("the {0} stage stopped and cannot be restarted ({1}); run hearth again")]
    Died(&'static str, String),
}

/// What a run of the pipeline answered: its turns go to `on_turn` one by one and are not
/// kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Turns heard (answered, or failed).
    pub turns: usize,
    /// Of those, turns whose speech could not be recognised.
    pub failed: usize,
}

/// Run the voice pipeline until the input ends (`once`), a stage dies for good, or
/// `shutdown` completes (SIGTERM: the turn under way ends first, then every stage is
/// stopped in order and the WAV sink finalised). Each turn goes to `on_turn`.
pub async fn run(
    agent: ActorRef<AgentMsg>,
    opts: VoiceOptions,
    on_turn: impl Fn(&VoiceTurn),
    shutdown: impl Future<Output = ()> + Send,
) -> Result<RunSummary, PipelineError> {
    let VoiceOptions {
        input,
        output,
        stt,
        tts,
        listen,
        once,
        events,
        conversation_idle,
        bus_events,
        muted,
        wake,
        cues,
        follow_up,
        listen_requests,
        echo_cancel,
        satellite,
        room,
        announcements,
        volume,
    } = opts;
    let attention = crate::conductor::attention::Attention::new(wake.is_some(), follow_up);
    let wake_check = wake.as_ref().is_some_and(|w| w.check_transcript);
    let intent_end = (listen.early_ms > 0 && listen.intent_end_ms < listen.hangover_ms)
        .then(|| Duration::from_millis(u64::from(listen.intent_end_ms)));
    let phrase_end = intent_end
        .filter(|_| listen.phrase_end_ms < listen.intent_end_ms)
        .map(|_| Duration::from_millis(u64::from(listen.phrase_end_ms)));
    let ask_finished = intent_end.is_some()
        && listen.end_of_turn.is_some()
        && listen.turn_ends == crate::audio::listen::TurnEnds::HouseRequests;
    let (stages, outputs) =
        stages::Stages::start(input, (output, volume), stt, tts, listen, wake, echo_cancel).await?;
    let policy = crate::conductor::Policy {
        once,
        intent_end,
        phrase_end,
        ask_finished,
        wake_check,
        conversation_idle,
        muted,
        sessions: match satellite {
            Some(name) => format!("voice-{name}"),
            None => "voice".to_string(),
        },
    };
    let wiring = driver::Wiring {
        events,
        bus_events,
        listen_requests,
        cues,
        room,
        announcements,
    };
    let conductor = crate::conductor::Conductor::new(policy, attention);
    let turns = driver::Driver::new(agent, &stages, outputs, conductor, wiring)
        .run(on_turn, shutdown)
        .await;
    stages.stop().await;
    turns
}
