//! The event stream: what several parties care about. The voice
//! pipeline, the agent and the D-Bus face publish here; the D-Bus face turns the events
//! into signals and its `State` property, and anyone else may subscribe (telemetry).
//!
//! A `tokio::sync::broadcast` channel: publishing never blocks and never fails for want of
//! listeners; a listener that falls behind by more than [`CAPACITY`] events is told how
//! many it missed.

use serde::Serialize;
use tokio::sync::broadcast;

/// Events kept for a slow listener before it starts missing them.
pub(crate) const CAPACITY: usize = 256;

/// What hearth is doing (the D-Bus `State` property).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activity {
    /// Nothing: no microphone (`--no-audio`) and no turn running.
    Idle,
    /// Waiting for speech (with wake words on: for a wake word).
    Listening,
    /// A wake word was heard (or `Listen()` called): waiting for the request.
    ListeningForRequest,
    /// A turn is running (recognising, generating, calling tools).
    Thinking,
    /// Playing a reply.
    Speaking,
}

impl Activity {
    /// `idle`, `listening`, `listening-for-request`, `thinking` or `speaking`.
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Idle => "idle",
            Activity::Listening => "listening",
            Activity::ListeningForRequest => "listening-for-request",
            Activity::Thinking => "thinking",
            Activity::Speaking => "speaking",
        }
    }
}

/// One event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// What hearth is doing changed.
    Activity { activity: Activity },
    /// A wake word was heard.
    WakeDetected { wake_word: String },
    /// Speech was recognised (the transcript a turn starts from).
    Heard { text: String },
    /// A turn's reply (sanitised text, as spoken or returned).
    Replied { text: String },
    /// What a satellite's voice pipeline published (its wake words, what it heard, its
    /// replies, its activity), as that satellite's.
    Satellite { satellite: String, what: Box<Event> },
    /// A satellite connected, or its connection ended.
    SatelliteLink { satellite: String, connected: bool },
    /// A timer, alarm or reminder is done: its kind (`timer`, `alarm`, `reminder`), its
    /// name (a timer's, `""` for none; an alarm's time, "7:00 AM"; a reminder's words), the
    /// room it was set in (`""`: none), and how late it rang (seconds; more than 0 when it
    /// fell due while hearth was down).
    TimerFinished {
        kind: String,
        name: String,
        room: String,
        late_s: u64,
    },
    /// A tool ran (for the model, or for a `CallTool` caller).
    ToolCalled {
        name: String,
        /// The arguments, as JSON text.
        arguments: String,
        /// The output text, or the error message.
        result: String,
        /// `ok`, `empty` or `error`.
        status: String,
    },
}

/// The publishing side (cheap to clone). `subscribe()` gives a receiver.
pub type Events = broadcast::Sender<Event>;

/// A new event stream.
pub fn channel() -> Events {
    broadcast::channel(CAPACITY).0
}

/// Publish `event` if there is a stream (no listener is fine).
pub fn publish(events: Option<&Events>, event: Event) {
    if let Some(tx) = events {
        let _ = tx.send(event);
    }
}

impl Event {
    /// The event of one tool outcome.
    pub fn tool_called(o: &crate::tools::ToolOutcome) -> Event {
        Event::ToolCalled {
            name: o.name.clone(),
            arguments: o.arguments.to_string(),
            result: o.result.clone(),
            status: o.status.as_str().to_string(),
        }
    }
}
