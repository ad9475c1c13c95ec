//! The conductor: the voice turns of one audio source, one at a time, as a state machine.
//! It is fed each [`Input`] (what Listen, Wake, Stt, the agent, Tts and Playback report, and
//! the clock) and answers with [`Action`]s (recognise this, ask that, speak, stop); it holds
//! no addresses, spawns nothing and never waits. The driver (the hearth crate's
//! `pipeline::driver`) runs the actions and feeds their results back, so the turn logic is
//! tested here without actors. A second microphone is a second `Conductor`.
//!
//! Between turns ([`Phase::Idle`]) it waits for an utterance addressed to hearth
//! ([`Attention`] decides, from the wake words heard, which are requests; recognition starts
//! early at a pause). A turn recognises the request ([`Phase::Recognising`], after any check
//! of a wake word said alone before it: [`Phase::Checking`]), asks the agent, and follows the
//! reply with a [`Progress`] until it has played or was interrupted ([`Phase::Replying`]).
//! The reply's audio goes from Tts to Playback directly, tagged with its [`ReplyId`]: the
//! conductor sees only that a sentence was synthesised and the reply's playback events. An
//! utterance heard during a turn is answered after it, if it is a request; utterances dropped
//! meanwhile (too many, too old) are owned up to before the next turn ([`Phase::Notice`]).
//!
//! With wake words on, speech over a reply does not stop it (the television, people talking):
//! a wake word does, or `Listen()`, or "stop" at the speaker's first pause. The driver feeds
//! each wake word before the Listen event of the frame that completed it, so an utterance is
//! never judged before its wake word is known.
//!
//! Shutdown: between turns it ends the run at once; during a reply it stops it as a barge-in
//! would and waits for the agent to end its turn (a tool already running finishes).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::agent::Planned;
use crate::events::{Activity, Event};
use crate::logs::TRANSCRIPT;
use crate::speech::Speakable;
use crate::voice::{
    Cue, Heard, Hold, ListenEvent, PlaybackEvent, ReplyId, TtsEvent, Utterance, WakeWord,
    SAMPLE_RATE,
};
use attention::{request_text, Admit, Attention};
use hearth_phrases::normalize::{self, only_skip_words};
use pending::Pending;
use progress::{Clock, Progress};

pub mod attention;
mod io;
mod pause;
mod pending;
mod progress;
mod reply;
mod report;
pub mod stop;
#[cfg(test)]
mod tests;
pub mod wake_word;

pub use io::{Action, Input, Job, Policy};
use io::{Incoming, Outbox};
use pause::{Checked, EarlyEnd, Pause, Transcript, Verdict};
use reply::{Asked, Reply};
pub use report::{TurnTimings, VoiceTurn};

/// What hearth says when utterances heard during a long turn were dropped unanswered (too
/// many, or too old by the time their turn could come): the person is told, not left waiting.
const MISSED: &str = "Sorry, I missed that.";

/// How long a notice may take to be synthesised and played before the conductor goes on.
const NOTICE_WAIT: Duration = Duration::from_secs(10);

/// A notice being said ([`Phase::Notice`]'s fields, handed to [`Conductor::notice`]).
struct Notice {
    reply: ReplyId,
    until: Instant,
    then: Option<Incoming>,
    listen: bool,
}

/// Where the conductor is.
enum Phase {
    /// Between turns: waiting for an utterance addressed to hearth.
    Idle,
    /// Saying a notice ([`MISSED`], an announcement: no turn, nothing is asked, nothing
    /// runs) until it has played;
    /// `then`: the utterance to judge afterwards.
    Notice {
        reply: ReplyId,
        until: Instant,
        then: Option<Incoming>,
        /// An announcement: once it has played, the follow-up window opens, so the answer
        /// to it ("stop", to a timer ringing) needs no wake word.
        listen: bool,
    },
    /// A request waits for the check of the wake word said alone before it.
    Checking(Box<Starting>),
    /// A request being recognised (by `Job`).
    Recognising(Box<Starting>, Job),
    /// A reply being generated, synthesised and played.
    Replying(Box<Reply>),
    /// The run is over.
    Over,
}

/// An utterance addressed to hearth: the audio to recognise, and the wake word it begins
/// with (to be taken off the transcript), if any.
struct Request {
    utterance: Utterance,
    wake_word: Option<String>,
    /// The rest of a request whose turn ended at its pause.
    continued: bool,
}

/// A request's words, as the turn asks the agent.
struct Transcribed {
    /// The request, the wake word taken off.
    text: String,
    /// What the speech may also have said (the recogniser's near phrase).
    heard_as: Option<String>,
    /// How the recogniser held the transcript to the house's phrase set.
    phrase_pass: Option<wyoming::PhrasePass>,
    /// The agent's plan of it, made at the pause.
    planned: Option<Planned>,
}

/// A turn before its transcript is known.
struct Starting {
    request: Request,
    clock: Clock,
    /// End of speech → the turn started, ms.
    endpoint: f64,
    /// The utterance on the input clock, seconds (for the report).
    span: (f64, f64),
    /// The speech recognised: its start and end on the input clock.
    speech: (u64, u64),
}

/// A wake word said alone, its transcript being checked for it (until the check says so,
/// the window it opened stands).
struct WakeCheck {
    job: Job,
    wake_word: String,
}

/// The turns of one audio source.
pub struct Conductor {
    policy: Policy,
    attention: Attention,
    phase: Phase,
    /// The agent session of the current conversation, and when its last turn ended.
    conversation: u64,
    last_turn_end: Option<Instant>,
    /// What was started at the speaker's last pause.
    pause: Pause,
    wake_check: Option<WakeCheck>,
    /// A turn ended at a pause: Listen's utterance `start` and the `speech_end` answered, so
    /// the utterance that follows the hangover is not answered twice.
    ended_at_pause: Option<(u64, u64)>,
    /// The input has ended (`once`), or Listen is gone.
    input_done: bool,
    stopping: bool,
    failed: bool,
    /// Utterances that arrived during a turn: answered next (the latest few, if recent).
    pending: Pending<Incoming>,
    /// Announcements waiting for the turn under way to end (the first [`MAX_ANNOUNCEMENTS`]).
    announcements: VecDeque<String>,
    /// When an announcement (a timer ringing) last finished playing: a stop phrase within
    /// [`ANSWER_WINDOW`] of it (or one word as whisper writes a clipped "stop":
    /// [`stop::means_stop`]) is the answer to it, and goes to the agent as "stop", whatever
    /// was said in between ("thank you", a question while it rings).
    announced: Option<Instant>,
    out: Outbox,
}

/// How long after an announcement has played a stop phrase still answers it: longer than
/// the 15 s between a ringing timer's rounds, so "stop" said while one rings always reaches
/// it.
const ANSWER_WINDOW: Duration = Duration::from_secs(20);

/// What a stop phrase said after an announcement is asked as (the timers' `stop_timer`
/// takes it).
const ANSWER_TO_ANNOUNCEMENT: &str = "stop";

/// Announcements kept while a turn runs; more are dropped (and logged).
const MAX_ANNOUNCEMENTS: usize = 8;

impl Conductor {
    pub fn new(policy: Policy, attention: Attention) -> Conductor {
        Conductor {
            policy,
            attention,
            phase: Phase::Idle,
            conversation: 0,
            last_turn_end: None,
            pause: Pause::default(),
            wake_check: None,
            ended_at_pause: None,
            input_done: false,
            stopping: false,
            failed: false,
            pending: Pending::default(),
            announcements: VecDeque::new(),
            announced: None,
            out: Outbox::default(),
        }
    }

    /// The activity to publish when the run starts.
    pub fn start(&mut self) -> Vec<Action> {
        self.activity(Activity::Listening);
        self.out.take()
    }

    /// The run is over: the input ended, Listen stopped, a stage died for good, or
    /// shutdown was asked for, and nothing is left to answer.
    pub fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over)
    }

    /// When the conductor wants an [`Input::Tick`] (an early end at a pause, a window
    /// closing, a notice given up on).
    pub fn deadline(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Idle => {
                let window = self.attention.window_closes();
                self.pause.ends_at().into_iter().chain(window).min()
            }
            Phase::Notice { until, .. } => Some(*until),
            _ => None,
        }
    }

    /// Take in `input` at `now`; what to do.
    pub fn on(&mut self, input: Input, now: Instant) -> Vec<Action> {
        // what a speculative turn sends before it stands is kept for its reply
        if let Some(input) = self.pause.keep(input) {
            self.take(input, now);
            self.advance(now);
        }
        self.out.take()
    }

    /// When the run ends: what is still going is dropped.
    pub fn finish(&mut self) -> Vec<Action> {
        self.pause.drop(&mut self.out);
        if let Some(c) = self.wake_check.take() {
            self.out.push(Action::Abort(c.job));
        }
        if !self.pending.is_empty() {
            tracing::info!(
                unanswered = self.pending.len(),
                "stopping with utterances not yet answered"
            );
        }
        self.out.take()
    }

    fn take(&mut self, input: Input, now: Instant) {
        match std::mem::replace(&mut self.phase, Phase::Over) {
            Phase::Idle => {
                self.phase = Phase::Idle;
                self.idle(input, now);
            }
            Phase::Replying(reply) => self.replying(reply, input, now),
            Phase::Notice {
                reply,
                until,
                then,
                listen,
            } => self.notice(
                Notice {
                    reply,
                    until,
                    then,
                    listen,
                },
                input,
                now,
            ),
            Phase::Checking(s) => match input {
                Input::Heard { job, heard } if self.wake_check_job() == Some(job) => {
                    if self.wake_checked(heard) {
                        self.recognise(s, now);
                    } else {
                        self.pause.drop(&mut self.out);
                        self.phase = Phase::Idle;
                    }
                }
                input => {
                    self.phase = Phase::Checking(s);
                    self.busy(input, now);
                }
            },
            Phase::Recognising(s, job) => match input {
                Input::Heard { job: j, heard } if j == job => self.recognised(*s, heard, None, now),
                input => {
                    self.phase = Phase::Recognising(s, job);
                    self.busy(input, now);
                }
            },
            Phase::Over => {}
        }
    }

    /// Between turns, whatever comes next: a turn to start, a notice to give, or the end.
    fn advance(&mut self, now: Instant) {
        while matches!(self.phase, Phase::Idle) {
            if self.stopping || self.failed {
                self.phase = Phase::Over;
                return;
            }
            if let Some(text) = self.announcements.pop_front() {
                tracing::info!(chars = text.chars().count(), "announcing");
                if self.say(&text, now, None, true) {
                    return;
                }
                continue;
            }
            let next = self.pending.pop(now);
            let missed = self.pending.take_missed();
            if missed > 0 && !self.muted() {
                tracing::info!(missed, "utterances were dropped unanswered: saying so");
                if self.say(MISSED, now, next.clone(), false) {
                    return;
                }
            }
            match next {
                Some(_) if self.muted() => {
                    tracing::debug!("muted: an utterance heard during the turn is dropped");
                }
                Some(u) => {
                    if let Some(r) = self.judged(u) {
                        self.start_turn(r, now);
                    }
                }
                None if self.input_done || self.stopping => {
                    self.phase = Phase::Over;
                    return;
                }
                None => return,
            }
        }
    }

    fn muted(&self) -> bool {
        self.policy.muted.load(Ordering::SeqCst)
    }

    fn publish(&mut self, event: Event) {
        self.out.push(Action::Publish(event));
    }

    fn activity(&mut self, activity: Activity) {
        self.publish(Event::Activity { activity });
    }

    /// What hearth does between turns: waiting for the wake word (or, everything being a
    /// request, for speech), or for a request in an open window.
    fn between_turns(&self) -> Activity {
        if self.attention.window_closes().is_some() {
            Activity::ListeningForRequest
        } else {
            Activity::Listening
        }
    }

    /// A wake word: the request follows it. False when muted (ignored).
    fn on_wake(&mut self, w: WakeWord) -> bool {
        if self.muted() {
            tracing::debug!(wake_word = %w.name, "muted: a wake word is ignored");
            return false;
        }
        self.attention.on_wake(&w);
        self.publish(Event::WakeDetected { wake_word: w.name });
        self.activity(Activity::ListeningForRequest);
        true
    }

    /// `Listen()`: the next utterance is a request.
    fn on_listen(&mut self, now: Instant) {
        tracing::info!("Listen(): waiting for the request");
        self.attention.on_listen(now);
        self.activity(Activity::ListeningForRequest);
    }

    /// Between turns.
    fn idle(&mut self, input: Input, now: Instant) {
        match input {
            Input::Listen(ListenEvent::Utterance(_) | ListenEvent::Pause(_)) if self.muted() => {
                tracing::debug!("muted: an utterance is dropped unheard");
                self.pause.drop(&mut self.out);
            }
            Input::Listen(ListenEvent::Utterance(u)) => {
                match self.incoming(u).and_then(|u| self.judged(u)) {
                    Some(r) => self.start_turn(r, now),
                    // no turn: a turn speculated on it never stands
                    None => self.pause.drop_speculation(&mut self.out),
                }
            }
            Input::Listen(ListenEvent::Pause(u)) => self.recognise_early(u),
            Input::Listen(ListenEvent::Resumed { start }) if self.pause.is_of(start) => {
                self.pause.drop(&mut self.out);
            }
            Input::Heard { job, heard } if self.pause.recognition() == Some(job) => {
                let (check, session) = (self.policy.wake_check, self.session(now));
                let end = self.early_end();
                self.pause.heard(heard, check, session, &end, &mut self.out);
            }
            Input::Listen(ListenEvent::Finished { start, speech_end }) => {
                let end = self.early_end();
                if self.pause.finished(start, speech_end, &end, now) == Verdict::EndNow {
                    self.end_at_pause(now);
                }
            }
            Input::Intent {
                job,
                intent,
                first,
                planned,
            } => {
                let end = self.early_end();
                let checked = Checked {
                    job,
                    intent,
                    first,
                    planned,
                };
                match self
                    .pause
                    .intent(checked, &end, self.muted(), now, &mut self.out)
                {
                    Verdict::Wait => {}
                    Verdict::EndNow => self.end_at_pause(now),
                    Verdict::Speculate(request) => {
                        let session = self.session(now);
                        self.pause.speculate(request, session, now, &mut self.out);
                    }
                }
            }
            Input::Tick => {
                if self.pause.ends_at().is_some_and(|t| t <= now) {
                    self.end_at_pause(now);
                } else if self.attention.expire(now) {
                    tracing::info!("no request followed: waiting for the wake word");
                    self.activity(Activity::Listening);
                }
            }
            input => self.busy(input, now),
        }
    }

    /// What comes while a turn is on its way (and between turns, what needs no turn):
    /// utterances wait for their turn; wake words and `Listen()` are taken in.
    fn busy(&mut self, input: Input, now: Instant) {
        match input {
            Input::Heard { job, heard } if self.wake_check_job() == Some(job) => {
                self.wake_checked(heard);
            }
            Input::Listen(ListenEvent::Utterance(u)) => {
                if let Some(u) = self.incoming(u) {
                    self.pending.push(u.utterance().endpointed_at, u);
                }
            }
            Input::Listen(ListenEvent::End) => self.input_done |= self.policy.once,
            Input::ListenClosed => self.input_done = true,
            Input::Wake(w) => {
                if self.on_wake(w) {
                    self.out.push(Action::Cue(Cue::Earcon));
                }
            }
            Input::ListenCalled => {
                self.on_listen(now);
                self.out.push(Action::Cue(Cue::Earcon));
            }
            Input::Failed => self.failed = true,
            Input::Shutdown => self.stopping = true,
            Input::Announce(text) if self.announcements.len() >= MAX_ANNOUNCEMENTS => {
                tracing::warn!(%text, "too many announcements waiting: this one is dropped");
            }
            Input::Announce(text) => self.announcements.push_back(text),
            // recognised once it is an utterance; nothing speaks between turns; work and
            // replies no longer waited for
            Input::Listen(
                ListenEvent::Pause(_)
                | ListenEvent::Resumed { .. }
                | ListenEvent::Finished { .. }
                | ListenEvent::SpeechStarted { .. }
                | ListenEvent::BargeIn { .. },
            )
            | Input::Heard { .. }
            | Input::Intent { .. }
            | Input::Sentence { .. }
            | Input::Answered { .. }
            | Input::Tts(_)
            | Input::TtsClosed
            | Input::Playback(_)
            | Input::StageDied(_)
            | Input::Tick => {}
        }
    }

    /// Say `text` (a notice, an announcement: no turn), then judge `then` (and, for an
    /// announcement, `listen`: the bell first, and the follow-up window after); false when
    /// it cannot be said.
    fn say(&mut self, text: &str, now: Instant, then: Option<Incoming>, listen: bool) -> bool {
        let Some(sentence) = Speakable::sanitize(text) else {
            return false;
        };
        if listen {
            // Playback starts the words once the cue has played
            self.out.push(Action::Cue(Cue::Bell));
        }
        let reply = ReplyId::fresh();
        self.out.push(Action::Speak { reply, sentence });
        self.phase = Phase::Notice {
            reply,
            until: now + NOTICE_WAIT,
            then,
            listen,
        };
        true
    }

    /// While a notice is said: until it has played (or failed, or took too long).
    fn notice(&mut self, notice: Notice, input: Input, now: Instant) {
        let Notice {
            reply,
            until,
            then,
            listen,
        } = notice;
        let done = match &input {
            Input::Tts(TtsEvent::SentenceDone {
                reply: r,
                audio_secs,
                ..
            }) if *r == reply => {
                if *audio_secs > 0.0 {
                    self.out.push(Action::EndOfReply(reply));
                }
                *audio_secs <= 0.0
            }
            Input::Tts(TtsEvent::Failed {
                reply: r, error, ..
            }) if *r == reply => {
                tracing::warn!(%error, "a notice could not be spoken");
                true
            }
            Input::Playback(PlaybackEvent::Stopped { reply: r, .. }) => *r == reply,
            Input::Tick if now >= until => {
                tracing::warn!(?NOTICE_WAIT, "a notice did not finish playing in time");
                true
            }
            Input::TtsClosed | Input::Shutdown | Input::Failed => true,
            _ => false,
        };
        self.busy(input, now);
        if !done {
            self.phase = Phase::Notice {
                reply,
                until,
                then,
                listen,
            };
            return;
        }
        self.phase = Phase::Idle;
        if listen {
            self.attention.on_reply_done(now);
            self.announced = Some(now);
        }
        if let Some(u) = then.filter(|_| !self.muted() && !self.stopping && !self.failed) {
            if let Some(r) = self.judged(u) {
                self.start_turn(r, now);
            }
        }
    }

    /// The request in an utterance heard (`None` when it is not addressed to hearth).
    fn judged(&mut self, u: Incoming) -> Option<Request> {
        match u {
            Incoming::Heard(u) => self.addressed(u),
            Incoming::Continued(u) => Some(Request {
                utterance: u,
                wake_word: None,
                continued: true,
            }),
        }
    }

    /// The request in `u` (all of it, or what follows its wake word), or `None` when it was
    /// not addressed to hearth.
    fn addressed(&mut self, u: Utterance) -> Option<Request> {
        match self.attention.admit(&u) {
            Admit::Whole => Some(Request {
                utterance: u,
                wake_word: None,
                continued: false,
            }),
            Admit::After { from, wake_word } => Some(Request {
                utterance: attention::after(&u, from),
                wake_word: Some(wake_word),
                continued: false,
            }),
            Admit::Alone { from, wake_word } => {
                tracing::info!("the wake word alone: waiting for the request");
                if self.policy.wake_check {
                    self.check_wake_word(attention::after(&u, from), wake_word);
                }
                None
            }
            Admit::Drop(why) => {
                tracing::info!(
                    start_s = on_input_clock(u.start),
                    end_s = on_input_clock(u.speech_end),
                    "{why}: the utterance is dropped"
                );
                None
            }
        }
    }

    /// An utterance from Listen, unless it is one whose turn already ended at its pause:
    /// then it is dropped if nothing more was said, else what was said after is kept as the
    /// rest of that request.
    fn incoming(&mut self, u: Utterance) -> Option<Incoming> {
        match self.ended_at_pause {
            Some((start, end)) if start == u.start => {
                self.ended_at_pause = None;
                if u.speech_end <= end {
                    tracing::debug!("the utterance ended at its pause: already answered");
                    None
                } else {
                    Some(Incoming::Continued(attention::after(&u, end)))
                }
            }
            _ => Some(Incoming::Heard(u)),
        }
    }

    /// Recognise `u`, a wake word said alone, to see whether its transcript has it.
    fn check_wake_word(&mut self, u: Utterance, wake_word: String) {
        let job = self.out.recognise(u, Hold::Open);
        if let Some(old) = self.wake_check.replace(WakeCheck { job, wake_word }) {
            self.out.push(Action::Abort(old.job));
        }
    }

    fn wake_check_job(&self) -> Option<Job> {
        self.wake_check.as_ref().map(|c| c.job)
    }

    /// The check of a wake word said alone has ended: true when its transcript has it (or
    /// could not be had: the window stands, as it did before the check); else the window
    /// closes.
    fn wake_checked(&mut self, heard: Result<Heard, String>) -> bool {
        let Some(check) = self.wake_check.take() else {
            return true;
        };
        let heard = match heard {
            Ok(h) => h.text,
            Err(error) => {
                tracing::warn!(%error, "the wake word said alone could not be checked");
                return true;
            }
        };
        if request_text(&heard, Some(&check.wake_word), true).is_some() {
            return true;
        }
        self.attention.forget();
        self.not_the_wake_word(&heard, &check.wake_word);
        false
    }

    /// The spotter woke hearth but the transcript does not have the wake word ("Hey,
    /// Travis, …" for "Hey Jarvis"): not a request. Nothing is said or run; hearth is back
    /// to waiting for the wake word.
    fn not_the_wake_word(&mut self, heard: &str, wake_word: &str) {
        tracing::info!(%wake_word, "the transcript does not have the wake word: not a request");
        tracing::info!(target: TRANSCRIPT, %heard, "what woke hearth instead of the wake word");
        self.pause.drop_speculation(&mut self.out);
        let activity = self.between_turns();
        self.activity(activity);
    }

    /// Recognise what was said so far while the hangover runs, if it is addressed to
    /// hearth; a pause that speech resumes after is superseded.
    fn recognise_early(&mut self, paused: Utterance) {
        let listen_start = paused.start;
        let (u, wake_word, paused) = match self.ended_at_pause {
            // speech that went on after a turn ended at its pause: the rest of that request
            Some((start, end)) if start == paused.start => {
                let rest = attention::after(&paused, end);
                (rest.clone(), None, Incoming::Continued(rest))
            }
            _ => match self.attention.judge(&paused) {
                Admit::Whole => (paused.clone(), None, Incoming::Heard(paused)),
                Admit::After { from, wake_word } => (
                    attention::after(&paused, from),
                    Some(wake_word),
                    Incoming::Heard(paused),
                ),
                Admit::Alone { .. } | Admit::Drop(_) => return self.pause.drop(&mut self.out),
            },
        };
        self.pause
            .start(listen_start, paused, u, wake_word, &mut self.out);
    }

    /// How long the silence after a request a local intent answers must last.
    fn early_end(&self) -> EarlyEnd {
        EarlyEnd {
            intent: self.policy.intent_end,
            phrase: self.policy.phrase_end,
            ask_finished: self.policy.ask_finished,
        }
    }

    /// The turn ends at the pause: a local intent answers what was said before it, and
    /// its silence has passed; unless it is not addressed to hearth after all.
    fn end_at_pause(&mut self, now: Instant) {
        let Some((paused, ended)) = self.pause.end_here() else {
            return;
        };
        let Some(r) = self.judged(paused) else {
            return;
        };
        let since_pause = now.saturating_duration_since(r.utterance.endpointed_at);
        tracing::info!(
            since_pause_ms = since_pause.as_secs_f64() * 1e3,
            "a local intent at the pause: the turn ends there"
        );
        self.ended_at_pause = Some(ended);
        self.start_turn(r, now);
    }

    /// A turn now would start a new conversation: the last one ended a quiet spell ago.
    fn idle_since(&self, now: Instant) -> bool {
        self.last_turn_end
            .is_some_and(|t| now.saturating_duration_since(t) >= self.policy.conversation_idle)
    }

    /// The agent session a turn started now would be in.
    fn session(&self, now: Instant) -> String {
        let n = self.conversation + u64::from(self.idle_since(now));
        format!("{}-{n}", self.policy.sessions)
    }

    /// The agent session of the turn starting now (a new conversation after a quiet spell).
    fn next_session(&mut self, now: Instant) -> String {
        if self.idle_since(now) {
            self.conversation += 1;
        }
        format!("{}-{}", self.policy.sessions, self.conversation)
    }

    /// A turn starts: its request waits for the check of a wake word said alone before it,
    /// if one is running, then is recognised.
    fn start_turn(&mut self, r: Request, now: Instant) {
        let u = &r.utterance;
        // The speech ended `hangover` before the endpoint: that is the latency's zero.
        let hangover = (u.start + u.samples.len() as u64).saturating_sub(u.speech_end);
        let clock = Clock {
            endpointed_at: u.endpointed_at,
            endpoint_ms: on_input_clock(hangover) * 1e3,
        };
        let starting = Box::new(Starting {
            endpoint: clock.since_speech(now),
            span: (on_input_clock(u.start), on_input_clock(u.speech_end)),
            speech: (u.start, u.speech_end),
            clock,
            request: r,
        });
        if starting.request.wake_word.is_some() {
            // a request with its own wake word: a check of an earlier one is moot
            if let Some(c) = self.wake_check.take() {
                self.out.push(Action::Abort(c.job));
            }
        }
        if self.wake_check.is_some() {
            self.phase = Phase::Checking(starting);
        } else {
            self.recognise(starting, now);
        }
    }

    /// The transcript: the early recognition's if nothing was said after its pause, else
    /// the whole utterance's.
    fn recognise(&mut self, s: Box<Starting>, now: Instant) {
        match self.pause.transcript_of(s.speech, &mut self.out) {
            // wait for it, as the turn's own recognition
            Transcript::Coming(job) => self.phase = Phase::Recognising(s, job),
            Transcript::Heard(heard, planned) => self.recognised(*s, Ok(heard), planned, now),
            Transcript::None => {
                let job = self.out.recognise(s.request.utterance.clone(), Hold::House);
                self.phase = Phase::Recognising(s, job);
            }
        }
    }

    /// The request's transcript is in: the reply, unless nothing (or only "stop", or not the
    /// wake word after all) was said.
    fn recognised(
        &mut self,
        s: Starting,
        heard: Result<Heard, String>,
        planned: Option<Planned>,
        now: Instant,
    ) {
        self.phase = Phase::Idle;
        let mut timings = TurnTimings {
            endpoint: s.endpoint,
            stt_wait: s.clock.since_speech(now) - s.endpoint,
            ..Default::default()
        };
        let report = |heard: String, timings, error, phrase_pass| {
            Box::new(VoiceTurn {
                heard,
                phrase_pass,
                turn: None,
                error,
                interrupted: false,
                timings_ms: timings,
                start_s: s.span.0,
                end_s: s.span.1,
            })
        };
        let heard = match heard {
            Ok(h) => h,
            Err(error) => {
                tracing::warn!(%error, "speech recognition failed; the utterance is lost");
                self.pause.drop_speculation(&mut self.out);
                let timings = TurnTimings {
                    endpoint: s.endpoint,
                    ..Default::default()
                };
                let t = report(String::new(), timings, Some(error), None);
                self.out.push(Action::Turn(t));
                return;
            }
        };
        timings.stt = heard.stt_ms;
        let wake_word = s.request.wake_word.as_deref();
        let Some(text) = request_text(&heard.text, wake_word, self.policy.wake_check) else {
            self.not_the_wake_word(&heard.text, wake_word.unwrap_or_default());
            return;
        };
        let mut text = text.to_string();
        // a stop phrase answering an announcement (a timer ringing) is asked as "stop"
        let answers = self
            .announced
            .is_some_and(|at| now.saturating_duration_since(at) <= ANSWER_WINDOW);
        if answers && stop::means_stop(&text) {
            self.announced = None;
            tracing::info!(heard = %text, "a stop phrase after an announcement: asked as \"stop\"");
            text = ANSWER_TO_ANNOUNCEMENT.to_string();
        }
        let stop_alone = stop::is_stop(&text) && text != ANSWER_TO_ANNOUNCEMENT;
        // "… please" after a turn that ended at the pause before it: nothing more was asked
        let courtesy = s.request.continued && only_skip_words(&normalize::words(&text));
        if text.is_empty() || stop_alone || courtesy || self.stopping || self.failed {
            // (a speculative turn was never asked with these words)
            self.pause.drop_speculation(&mut self.out);
        }
        if text.is_empty() {
            if wake_word.is_some() {
                // only the wake word was said: the request may follow
                tracing::info!("heard the wake word alone: waiting for the request");
                self.attention.on_listen(now);
                self.activity(Activity::ListeningForRequest);
            } else {
                tracing::info!("heard nothing");
            }
            return;
        }
        self.publish(Event::Heard { text: text.clone() });
        let error = if stop_alone {
            // nothing is being said or done between turns: "stop" never reaches the model,
            // and is reported as heard, with no reply
            tracing::info!("stop, with nothing to stop");
            tracing::info!(target: TRANSCRIPT, heard = %text, "the stop phrase heard");
            None
        } else if courtesy {
            tracing::info!("the rest of a request answered at its pause asks nothing more");
            tracing::info!(target: TRANSCRIPT, heard = %text, "the rest that asks nothing");
            None
        } else if self.stopping || self.failed {
            tracing::info!(target: TRANSCRIPT, heard = %text, "stopping: the request is not answered");
            Some("hearth was stopping: the request was not answered".to_string())
        } else {
            let state = Progress::new(s.clock, timings);
            let near = near_phrase(
                heard.phrase_pass.as_ref(),
                wake_word,
                self.policy.wake_check,
            );
            let asked = Transcribed {
                text,
                heard_as: near,
                phrase_pass: heard.phrase_pass,
                planned,
            };
            return self.ask(asked, &s, state, now);
        };
        let activity = self.between_turns();
        self.activity(activity);
        let t = report(text, timings, error, heard.phrase_pass);
        self.out.push(Action::Turn(t));
    }

    /// The agent's turn for the reply: the speculative turn asked with the same words on the
    /// same speech, which now stands, or a turn asked now.
    fn ask(&mut self, heard: Transcribed, s: &Starting, state: Progress, now: Instant) {
        let Transcribed {
            text: heard,
            heard_as,
            phrase_pass,
            planned,
        } = heard;
        self.activity(Activity::Thinking);
        let session = self.next_session(now);
        // a speculative turn never knew the near phrase: one that has it is asked afresh
        let spec = if heard_as.is_some() {
            self.pause.drop_speculation(&mut self.out);
            None
        } else {
            self.pause
                .speculation_for(s.speech, &heard, now, &mut self.out)
        };
        let (job, at) = match &spec {
            Some(spec) => (spec.job, spec.asked_at),
            None => (self.out.job(), now),
        };
        if spec.is_none() {
            let request = heard.clone();
            let held = false;
            self.out.push(Action::Ask {
                job,
                session,
                request,
                held,
                heard_as,
                planned,
            });
        }
        let asked = Asked {
            heard,
            phrase_pass,
            span: s.span,
            job,
            at,
        };
        let mut reply = Box::new(Reply::new(asked, state));
        if let Some(spec) = spec {
            for sentence in spec.sentences {
                reply.on_sentence(sentence, &mut self.out);
            }
            if let Some(turn) = spec.answer {
                reply.on_answer(turn);
            }
        }
        self.next(reply, now);
    }

    /// During a reply.
    fn replying(&mut self, mut reply: Box<Reply>, input: Input, now: Instant) {
        let trace = reply.trace.clone();
        let _in_turn = trace.enter();
        let muted = self.muted();
        match input {
            Input::Answered { job, turn } if reply.is_of(job) => {
                // the spoken turn's reply is published by its pipeline (the agent publishes
                // those of turns nobody speaks): a satellite's goes to it as `synthesize`
                if let Some(text) = turn.as_ref().ok().map(|t| t.reply.clone()) {
                    if !text.is_empty() {
                        self.publish(Event::Replied { text });
                    }
                }
                reply.on_answer(turn);
            }
            Input::Sentence { job, sentence } if reply.is_of(job) => {
                reply.on_sentence(sentence, &mut self.out);
            }
            Input::Tts(e) => reply.on_tts(e, now),
            Input::Playback(e) => {
                if reply.on_playback(e) {
                    tracing::info!("speaking");
                    self.activity(Activity::Speaking);
                }
            }
            Input::StageDied(stage) => reply.on_stage_died(stage),
            Input::TtsClosed => return self.reply_done(reply, now),
            Input::Failed => {
                // the turn cannot finish: stop waiting for it
                self.out.push(Action::CancelTurn);
                self.failed = true;
                return self.reply_done(reply, now);
            }
            Input::Listen(ListenEvent::BargeIn { .. }) if self.attention.wake_words() => {
                tracing::debug!("speech over the reply, without the wake word: it plays on");
            }
            Input::Listen(ListenEvent::BargeIn { .. }) => {
                tracing::info!("barge-in: stopping the reply");
                reply.stop(&mut self.out);
            }
            Input::Listen(ListenEvent::Pause(u))
                if stop::is_short(&u) && !reply.interrupted() && !muted =>
            {
                reply.check_for_stop(u, &mut self.out);
            }
            Input::Heard { job, heard } if reply.stop_check() == Some(job) => {
                reply.stop_checked(heard, now, &mut self.out);
            }
            Input::Wake(w) => {
                if self.on_wake(w) {
                    self.addressed_over_reply(&mut reply);
                }
            }
            Input::ListenCalled => {
                self.on_listen(now);
                self.addressed_over_reply(&mut reply);
            }
            Input::Shutdown if !self.stopping => {
                tracing::info!("stopping: the reply is cut short; the agent ends its turn");
                self.stopping = true;
                reply.stop(&mut self.out);
            }
            input => self.busy(input, now),
        }
        self.next(reply, now);
    }

    /// A wake word or `Listen()` during a reply: it stops, as for a barge-in, and the earcon
    /// plays once it has.
    fn addressed_over_reply(&mut self, reply: &mut Reply) {
        if !reply.interrupted() {
            tracing::info!("addressed over the reply: stopping it");
        }
        reply.stop(&mut self.out);
        self.out.push(Action::Cue(Cue::Earcon));
    }

    /// The reply goes on, or is over.
    fn next(&mut self, mut reply: Box<Reply>, now: Instant) {
        match reply.step(&mut self.out) {
            true => self.reply_done(reply, now),
            false => self.phase = Phase::Replying(reply),
        }
    }

    /// The reply is over: the turn is reported, and the follow-up window opens.
    fn reply_done(&mut self, reply: Box<Reply>, now: Instant) {
        let trace = reply.trace.clone();
        let _in_turn = trace.enter();
        let t = reply.finish(&mut self.out);
        self.last_turn_end = Some(now);
        self.attention.on_reply_done(now);
        tracing::info!(timings = ?t.timings_ms, "turn done");
        let activity = self.between_turns();
        self.activity(activity);
        self.out.push(Action::Turn(Box::new(t)));
        self.phase = Phase::Idle;
    }
}

/// A sample index on the input clock, in seconds.
/// The recogniser's near phrase ([`wyoming::PhrasePass::near`]) as a request, its wake word
/// left out as the transcript's is: what the speech may also have said.
fn near_phrase(
    pass: Option<&wyoming::PhrasePass>,
    wake_word: Option<&str>,
    check: bool,
) -> Option<String> {
    let pass = pass.filter(|p| p.near && !p.taken)?;
    let text = request_text(pass.phrase.as_deref()?, wake_word, check)?;
    (!text.is_empty()).then(|| text.to_string())
}

fn on_input_clock(i: u64) -> f64 {
    i as f64 / f64::from(SAMPLE_RATE)
}
