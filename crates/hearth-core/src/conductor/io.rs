//! The conductor's vocabulary: what it is told ([`Input`]), what it asks for ([`Action`]),
//! the work it hands out ([`Job`], through the [`Outbox`]), and what it is configured with.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::report::VoiceTurn;
use crate::agent::{Planned, Turn};
use crate::events::Event;
use crate::speech::Speakable;
use crate::voice::Cue;
use crate::voice::Hold;
use crate::voice::TtsEvent;
use crate::voice::{Heard, ListenEvent, PlaybackEvent, ReplyId, Utterance, WakeWord};

/// A piece of work the conductor asked the driver for (a recognition, an intent check, an
/// agent turn); its results come back with the same id. Results of work the conductor no
/// longer waits for are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Job(u64);

/// What the conductor is told.
#[derive(Debug)]
pub enum Input {
    /// From Listen.
    Listen(ListenEvent),
    /// Listen is gone (the run ends once nothing is left to answer).
    ListenClosed,
    /// A wake word (fed before the Listen event of the frame that completed it).
    Wake(WakeWord),
    /// `Listen()` over D-Bus: the next utterance is a request.
    ListenCalled,
    /// A recognition ([`Action::Recognise`]) ended.
    Heard {
        job: Job,
        heard: Result<Heard, String>,
    },
    /// An intent check ([`Action::CheckIntent`]) ended: whether a local intent answers, and
    /// the first sentence its turn says when that is known already.
    Intent {
        job: Job,
        intent: bool,
        first: Option<Speakable>,
        /// The agent's plan of the request, handed back with its [`Action::Ask`].
        planned: Option<Planned>,
    },
    /// The agent settled a sentence of its turn ([`Action::Ask`]); `None`: it will send no
    /// more.
    Sentence {
        job: Job,
        sentence: Option<Speakable>,
    },
    /// The agent's turn ended.
    Answered {
        job: Job,
        turn: Result<Turn, String>,
    },
    /// From Tts (its audio goes to Playback, not here).
    Tts(TtsEvent),
    /// Tts's events ended.
    TtsClosed,
    /// From Playback.
    Playback(PlaybackEvent),
    /// A stage died and is being restarted: what it held of the reply is lost.
    StageDied(&'static str),
    /// A stage died for good: the run ends (the driver has the error).
    Failed,
    /// [`super::Conductor::deadline`] has come.
    Tick,
    /// Stop (SIGTERM).
    Shutdown,
    /// Something to say that is no reply (`Announce` on D-Bus): said between turns, after
    /// the reply under way, never over it.
    Announce(String),
}

/// What the conductor asks the driver to do.
#[derive(Debug)]
pub enum Action {
    /// Recognise `utterance`; the result comes back as [`Input::Heard`].
    Recognise {
        job: Job,
        utterance: Utterance,
        hold: Hold,
    },
    /// Whether a local intent answers `request`: [`Input::Intent`].
    CheckIntent {
        job: Job,
        session: String,
        request: String,
        /// When its turn ends if a local intent answers it and speech does not go on
        /// (`None`: only the hangover ends turns).
        ends_at: Option<Instant>,
    },
    /// Ask the agent: [`Input::Sentence`]s, then [`Input::Answered`]. `held`: a speculative
    /// turn, which does nothing that lasts until [`Action::GoAhead`].
    Ask {
        job: Job,
        session: String,
        request: String,
        held: bool,
        /// What the speech may also have said ([`crate::agent::Ask::heard_as`]).
        heard_as: Option<String>,
        /// The agent's plan of the request, made at the pause ([`Input::Intent`]).
        planned: Option<Planned>,
    },
    /// A held turn stands (`true`) or is refused (`false`).
    GoAhead { job: Job, go: bool },
    /// Drop a recognition or intent check no longer waited for.
    Abort(Job),
    /// Ask Listen's end-of-turn model whether the speech of the utterance Listen started at
    /// `start`, ended at `speech_end`, is finished: [`ListenEvent::Finished`] if it is.
    AskFinished { start: u64, speech_end: u64 },
    /// Synthesise a sentence of `reply` (its audio goes to Playback).
    Speak { reply: ReplyId, sentence: Speakable },
    /// Synthesise a sentence a turn about to start will say, and keep it for then (nothing
    /// plays).
    Prepare(Speakable),
    /// Everything of `reply` is synthesised: Playback reports when it has played.
    EndOfReply(ReplyId),
    /// Stop what is being said and generated: the reply in Playback (and any of its audio
    /// still on its way), Tts's queue, the agent's turn.
    StopReply(ReplyId),
    /// Cancel the agent's turn (a stage died for good: it cannot be spoken).
    CancelTurn,
    /// Play a cue: the earcon (hearth heard that it was addressed) or the bell (an
    /// announcement follows).
    Cue(Cue),
    /// Publish on the D-Bus face.
    Publish(Event),
    /// A turn is over: report it.
    Turn(Box<VoiceTurn>),
}

/// What the conductor needs to know of the configuration.
pub struct Policy {
    /// Stop when the input ends (after the last reply has played).
    pub once: bool,
    /// Silence after a request a local intent answers that ends its turn (`None`: the
    /// hangover ends every turn).
    pub intent_end: Option<Duration>,
    /// The same after a whole request of the house's phrase set that no longer request of it
    /// continues, or that the end-of-turn model hears finished (`Heard::whole`): shorter
    /// (`None`: as `intent_end`).
    pub phrase_end: Option<Duration>,
    /// Ask Listen's end-of-turn model about a request that a longer one may continue
    /// (`[listen] end_of_turn = "smart-turn-house"`, where a turn may end early at all).
    pub ask_finished: bool,
    /// A wake word stands only when the transcript has it too (`[listen] wake_check`).
    pub wake_check: bool,
    /// A turn this long after the previous one starts a new conversation.
    pub conversation_idle: Duration,
    /// While true, utterances are dropped unheard (the D-Bus `Muted` property).
    pub muted: Arc<AtomicBool>,
    /// The agent sessions' prefix: `voice` for the local microphone, `voice-NAME` for a
    /// satellite (each source has conversations of its own).
    pub sessions: String,
}

/// An utterance heard, before it is judged.
#[derive(Debug, Clone)]
pub(super) enum Incoming {
    /// To be judged by `Attention`.
    Heard(Utterance),
    /// Speech that went on after a turn ended at its pause: the rest of a request already
    /// addressed to hearth.
    Continued(Utterance),
}

impl Incoming {
    pub(super) fn utterance(&self) -> &Utterance {
        match self {
            Incoming::Heard(u) | Incoming::Continued(u) => u,
        }
    }
}

/// What the conductor answers to one input, and the numbering of the work it asks for.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    actions: Vec<Action>,
    last_job: u64,
}

impl Outbox {
    pub(super) fn push(&mut self, action: Action) {
        self.actions.push(action);
    }

    /// An id for a piece of work not asked for before.
    pub(super) fn job(&mut self) -> Job {
        self.last_job += 1;
        Job(self.last_job)
    }

    /// Ask for `utterance` to be recognised: the job its transcript comes back with.
    pub(super) fn recognise(&mut self, utterance: Utterance, hold: Hold) -> Job {
        let job = self.job();
        self.push(Action::Recognise {
            job,
            utterance,
            hold,
        });
        job
    }

    /// What was asked for since the last call.
    pub(super) fn take(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }
}
