//! The conductor: the voice turns, one at a time. Between turns it waits for an utterance
//! addressed to hearth ([`Conductor::next_utterance`]: [`Attention`] decides, from the wake
//! words heard, which are requests; recognition starts early at a pause); a turn recognises
//! it, asks the agent, and drives the reply through Tts and Playback with a [`TurnState`]
//! until it has finished playing or was interrupted ([`Conductor::reply`]). An utterance
//! heard during a turn (e.g. the speech of a barge-in) is answered next, if it is a request.
//!
//! With wake words on, speech over a reply does not stop it (the television, people talking):
//! a wake word does, or `Listen()`. Wake words reach the conductor on their own channel, each
//! sent before Listen saw the frame that completed it: the channel is drained before any
//! Listen event is judged, so an utterance is never judged before its wake word is known.
//!
//! Shutdown is passed in: between turns it ends the run at once; during a turn it stops the
//! reply as a barge-in would and waits for the agent to end its turn (a tool already
//! running finishes), so the stages are always stopped in order afterwards.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use ractor::ActorRef;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::attention::{self, Admit, Attention};
use super::pending::Pending;
use super::stages::{stage_event, transcribe, StageOutputs, Stages};
use super::stop;
use super::turn::{Clock, Next, TurnState};
use super::{PipelineError, RunSummary, TurnTimings, VoiceTurn, BUSY_WAIT};
use crate::agent::{self, AgentError, AgentMsg, Ask, Turn};
use crate::audio::PlaybackMsg;
use crate::events::{Activity, Event, Events};
use crate::logs::TRANSCRIPT;
use crate::speech::Speakable;
use crate::stt::{Hold, SttError};
use crate::supervisor::StageEvent;
use crate::tts::{TtsEvent, TtsMsg};
use crate::voice::{Heard, ListenEvent, PlaybackEvent, Utterance, WakeWord, SAMPLE_RATE};
use crate::wake::WakeMatch;

/// An utterance addressed to hearth: the audio to recognise, and the wake word it begins
/// with (to be taken off the transcript), if any.
pub(super) struct Request {
    utterance: Utterance,
    wake_word: Option<String>,
}

/// Recognition started at a pause, before the endpoint is sure.
struct Early {
    /// Listen's utterance start (what `Resumed` names).
    listen_start: u64,
    /// What is judged if the turn ends there: the utterance as Listen reported it at the
    /// pause, or, when it goes on after a turn that ended at an earlier pause, the request
    /// already (what was said after that pause).
    paused: Incoming,
    /// The speech recognised (the part after any wake word): its start and end on the input
    /// clock.
    speech: (u64, u64),
    /// The recognition under way, then what it heard.
    state: EarlyState,
    /// When a local intent answers what was heard: when the turn ends if speech does not go
    /// on (`Settings::intent_end` of silence, or `Settings::phrase_end` after a whole house
    /// request that no longer one continues).
    ends_at: Option<Instant>,
}

impl Incoming {
    fn utterance(&self) -> &Utterance {
        match self {
            Incoming::Heard(u) | Incoming::Continued(u) => u,
        }
    }
}

enum EarlyState {
    Running(JoinHandle<Result<EarlyHeard, SttError>>),
    /// What it heard; `None` when it failed (logged; the utterance is recognised whole).
    Done(Option<EarlyHeard>),
}

/// What was heard at a pause, the request in it (after any wake word), and whether a local
/// intent answers it: then the turn ends at the pause rather than after the hangover.
struct EarlyHeard {
    heard: Heard,
    request: String,
    intent: bool,
}

/// A turn asked on what was heard at a pause, while the hangover runs: the model writes
/// meanwhile, but no call runs and nothing is kept ([`Ask::held`]) until the utterance ends
/// with nothing more said and the same words (`go` says `Some(true)`); speech that resumes
/// drops it (`Some(false)`), as does an utterance heard differently.
struct Speculation {
    /// Listen's utterance start (what `Resumed` names) and the speech recognised.
    listen_start: u64,
    speech: (u64, u64),
    /// The request it was asked with.
    request: String,
    go: tokio::sync::watch::Sender<Option<bool>>,
    /// The turn, its sentences held until it stands.
    started: Started,
}

/// What hearth says when utterances heard during a long turn were dropped unanswered (too
/// many, or too old by the time their turn could come): the person is told, not left waiting.
const MISSED: &str = "Sorry, I missed that.";

/// How long a notice may take to be synthesised and played before the conductor goes on.
const NOTICE_WAIT: Duration = Duration::from_secs(10);

/// A turn already asked (a speculation that stood, or one asked at the endpoint): its task,
/// where its sentences come, and when it was asked.
struct Started {
    task: JoinHandle<Result<Turn, AgentError>>,
    speak: mpsc::UnboundedReceiver<Speakable>,
    asked_at: Instant,
}

/// A wake word said alone, its transcript being checked for it (until the check says so,
/// the window it opened stands).
struct WakeCheck {
    wake_word: String,
    task: JoinHandle<Result<Heard, SttError>>,
}

/// An utterance heard, before it is judged.
#[derive(Clone)]
enum Incoming {
    /// To be judged by [`Attention`].
    Heard(Utterance),
    /// Speech that went on after a turn ended at its pause: the rest of a request already
    /// addressed to hearth.
    Continued(Utterance),
}

/// What the conductor needs besides the stages.
pub(super) struct Settings {
    /// Stop when the input ends (after the last reply has played).
    pub(super) once: bool,
    /// Silence after a request a local intent answers that ends its turn (`None`: the
    /// hangover ends every turn).
    pub(super) intent_end: Option<Duration>,
    /// The same after a request that is a whole request of the house's phrase set that no
    /// longer request of it continues (`Heard::ends_request`): shorter (`None`: as
    /// `intent_end`).
    pub(super) phrase_end: Option<Duration>,
    /// A wake word stands only when the transcript has it too (`[listen] wake_check`).
    pub(super) wake_check: bool,
    /// Where the supervisor's reports are copied (readiness for systemd, tests).
    pub(super) events: Option<mpsc::UnboundedSender<StageEvent>>,
    /// A turn this long after the previous one starts a new conversation.
    pub(super) conversation_idle: Duration,
    /// Where what was heard and what hearth is doing are published (the D-Bus face).
    pub(super) bus_events: Option<Events>,
    /// While true, utterances are dropped unheard.
    pub(super) muted: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Which utterances are requests.
    pub(super) attention: Attention,
    /// `Listen()`: the next utterance is a request without the wake word.
    pub(super) listen_requests: Option<std::sync::Arc<tokio::sync::Notify>>,
    /// Played when hearth is addressed (a wake word, `Listen()`).
    pub(super) earcon: Option<crate::voice::Pcm>,
}

/// The shutdown future, pinned where the conductor can poll it from any wait.
type Shutdown<'s> = Pin<&'s mut (dyn Future<Output = ()> + Send + 's)>;

/// The turn loop's state between and across turns.
pub(super) struct Conductor<'a> {
    agent: ActorRef<AgentMsg>,
    stages: &'a Stages,
    out: StageOutputs,
    settings: Settings,
    /// the agent session of the current conversation, and when its last turn ended
    conversation: u64,
    last_turn_end: Option<Instant>,
    early: Option<Early>,
    speculation: Option<Speculation>,
    wake_check: Option<WakeCheck>,
    /// a turn ended at a pause: Listen's utterance `start` and the `speech_end` answered, so
    /// the utterance that follows the hangover is not answered twice
    ended_at_pause: Option<(u64, u64)>,
    /// the input has ended (`once`), Listen is gone, or shutdown was asked for
    ended: bool,
    listen_open: bool,
    stopping: bool,
    /// utterances that arrived during a turn: answered next (the latest few, if recent)
    pending: Pending<Incoming>,
    /// a stage that died for good ends the run with this
    failure: Option<PipelineError>,
}

impl<'a> Conductor<'a> {
    pub(super) fn new(
        agent: ActorRef<AgentMsg>,
        stages: &'a Stages,
        out: StageOutputs,
        settings: Settings,
    ) -> Self {
        Conductor {
            agent,
            stages,
            out,
            settings,
            conversation: 0,
            last_turn_end: None,
            early: None,
            speculation: None,
            wake_check: None,
            ended_at_pause: None,
            ended: false,
            listen_open: true,
            stopping: false,
            pending: Pending::default(),
            failure: None,
        }
    }

    /// Turns until the input ends (`once`), Listen stops, a stage dies for good, or
    /// `shutdown` completes. Each finished turn goes to `on_turn` and is counted, not kept
    /// (a daemon answers turns for months).
    pub(super) async fn run(
        mut self,
        on_turn: impl Fn(&VoiceTurn),
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<RunSummary, PipelineError> {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut shutdown: Shutdown<'_> = shutdown.as_mut();
        self.activity(Activity::Listening);
        let mut summary = RunSummary::default();
        while let Some(u) = self.next_utterance(&mut shutdown).await {
            if let Some(t) = self.turn(u, &mut shutdown).await {
                on_turn(&t);
                summary.turns += 1;
                summary.failed += usize::from(t.error.is_some());
            }
        }
        self.drop_early();
        if !self.pending.is_empty() {
            tracing::info!(
                unanswered = self.pending.len(),
                "stopping with utterances not yet answered"
            );
        }
        match self.failure {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }

    fn publish(&self, event: Event) {
        crate::events::publish(self.settings.bus_events.as_ref(), event);
    }

    fn activity(&self, activity: Activity) {
        self.publish(Event::Activity { activity });
    }

    fn muted(&self) -> bool {
        self.settings
            .muted
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The wake words heard so far, each taken in; true if one was (not muted).
    fn drain_wake(&mut self) -> bool {
        let mut woke = false;
        while let Some(w) = self.out.wake.as_mut().and_then(|rx| rx.try_recv().ok()) {
            woke |= self.on_wake(w);
        }
        woke
    }

    /// A wake word: the request follows it. False when muted (ignored).
    fn on_wake(&mut self, w: WakeWord) -> bool {
        if self.muted() {
            tracing::debug!(wake_word = %w.name, "muted: a wake word is ignored");
            return false;
        }
        self.settings.attention.on_wake(&w);
        self.publish(Event::WakeDetected { wake_word: w.name });
        self.activity(Activity::ListeningForRequest);
        true
    }

    /// The detector woke hearth but the transcript does not have the wake word ("Hey,
    /// Travis, …" for "Hey Jarvis"): not a request. Nothing is said or run; hearth is back
    /// to waiting for the wake word.
    fn not_the_wake_word(&mut self, heard: &str, wake_word: &str) {
        tracing::info!(%wake_word, "the transcript does not have the wake word: not a request");
        tracing::info!(target: TRANSCRIPT, %heard, "what woke hearth instead of the wake word");
        self.drop_speculation();
        self.activity(self.between_turns());
    }

    /// Recognise `u`, a wake word said alone, to see whether its transcript has it.
    fn check_wake_word(&mut self, u: Utterance, wake_word: String) {
        let stt = self.stages.stt.clone();
        let task = tokio::spawn(async move { transcribe(&stt, u, Hold::Open).await });
        if let Some(old) = self.wake_check.replace(WakeCheck { wake_word, task }) {
            old.task.abort();
        }
    }

    /// The check of a wake word said alone has ended: true when its transcript has it (or
    /// could not be had: the window stands, as it did before the check); else the window
    /// closes.
    fn on_wake_checked(
        &mut self,
        r: Result<Result<Heard, SttError>, tokio::task::JoinError>,
    ) -> bool {
        let Some(check) = self.wake_check.take() else {
            return true;
        };
        let heard = match r {
            Ok(Ok(h)) => h.text,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the wake word said alone could not be checked");
                return true;
            }
            Err(e) => {
                tracing::debug!(error = %e, "the check of a wake word said alone ended early");
                return true;
            }
        };
        if request_text(&heard, Some(&check.wake_word), true).is_some() {
            return true;
        }
        self.settings.attention.forget();
        self.not_the_wake_word(&heard, &check.wake_word);
        false
    }

    /// A request that came in the window of a wake word said alone stands only once that
    /// wake word's transcript has it; a request with its own wake word drops the check.
    async fn wake_word_stands(&mut self, own_wake_word: bool) -> bool {
        let Some(check) = self.wake_check.as_mut() else {
            return true;
        };
        if own_wake_word {
            check.task.abort();
            self.wake_check = None;
            return true;
        }
        let r = (&mut check.task).await;
        self.on_wake_checked(r)
    }

    /// Recognise `u` (speech during a reply) to see whether it is "stop".
    fn check_for_stop(&self, u: Utterance) -> StopCheck {
        let speech_ended = u.wall_time(u.speech_end);
        let stt = self.stages.stt.clone();
        StopCheck {
            speech: (u.start, u.speech_end),
            speech_ended,
            task: tokio::spawn(async move { transcribe(&stt, u, Hold::Open).await }),
        }
    }

    /// A wake word or `Listen()` during a reply: it stops, as for a barge-in, and the earcon
    /// plays once it has.
    fn addressed_over_reply(&self, state: &mut TurnState) {
        if !state.interrupted() {
            tracing::info!("addressed over the reply: stopping it");
            self.stop_reply();
            state.on_barge_in();
        }
        self.acknowledge();
    }

    /// The earcon, if there is one: hearth heard that it was addressed. Playback plays it
    /// as a cue (no reply events; never over a reply: stop that first).
    fn acknowledge(&self) {
        if let (Some(pcm), Some(p)) = (&self.settings.earcon, self.stages.playback.get()) {
            let _ = p.cast(PlaybackMsg::Cue(pcm.clone()));
        }
    }

    /// `Listen()`: the next utterance is a request.
    fn on_listen(&mut self) {
        tracing::info!("Listen(): waiting for the request");
        self.settings.attention.on_listen(Instant::now());
        self.activity(Activity::ListeningForRequest);
    }

    /// The request in `u` (all of it, or what follows its wake word), or `None` when it was
    /// not addressed to hearth.
    fn addressed(&mut self, u: Utterance) -> Option<Request> {
        match self.settings.attention.admit(&u) {
            Admit::Whole => Some(Request {
                utterance: u,
                wake_word: None,
            }),
            Admit::After { from, wake_word } => Some(Request {
                utterance: attention::after(&u, from),
                wake_word: Some(wake_word),
            }),
            Admit::Alone { from, wake_word } => {
                tracing::info!("the wake word alone: waiting for the request");
                if self.settings.wake_check {
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

    /// What hearth does between turns: waiting for the wake word (or, everything being a
    /// request, for speech), or for a request in an open window.
    fn between_turns(&self) -> Activity {
        if self.settings.attention.window_closes().is_some() {
            Activity::ListeningForRequest
        } else {
            Activity::Listening
        }
    }

    /// The next utterance to answer (one heard during the last turn first), or `None` when
    /// the run is over.
    async fn next_utterance(&mut self, shutdown: &mut Shutdown<'_>) -> Option<Request> {
        loop {
            if self.stopping || self.failure.is_some() {
                return None;
            }
            if self.drain_wake() {
                self.acknowledge();
            }
            let next = self.pending.pop(Instant::now());
            let missed = self.pending.take_missed();
            if missed > 0 && !self.muted() {
                tracing::info!(missed, "utterances were dropped unanswered: saying so");
                self.notice(MISSED, shutdown).await;
            }
            if let Some(u) = next {
                if self.muted() {
                    tracing::debug!("muted: an utterance heard during the turn is dropped");
                    continue;
                }
                match self.judged(u) {
                    Some(u) => return Some(u),
                    None => continue,
                }
            }
            if self.ended || !self.listen_open {
                return None;
            }
            let listen_requests = self.settings.listen_requests.clone();
            let window_closes = self.settings.attention.window_closes();
            let intent_ends = self.early.as_ref().and_then(|e| e.ends_at);
            tokio::select! {
                l = self.out.listen.recv() => {
                    if self.drain_wake() {
                        self.acknowledge();
                    }
                    match l {
                        Some(ListenEvent::Utterance(_) | ListenEvent::Pause(_)) if self.muted() => {
                            tracing::debug!("muted: an utterance is dropped unheard");
                            self.drop_early();
                        }
                        Some(ListenEvent::Utterance(u)) => {
                            match self.incoming(u).and_then(|u| self.judged(u)) {
                                Some(r) => return Some(r),
                                // no turn: a turn speculated on it never stands
                                None => self.drop_speculation(),
                            }
                        }
                        Some(ListenEvent::Pause(u)) => self.recognise_early(u),
                        Some(ListenEvent::Resumed { start }) => {
                            if self.early.as_ref().is_some_and(|e| e.listen_start == start)
                                || self.speculation.as_ref().is_some_and(|s| s.listen_start == start)
                            {
                                self.drop_early();
                            }
                        }
                        Some(ListenEvent::End) => self.ended = self.settings.once,
                        // nothing speaks between turns; during a turn a barge-in is handled there
                        Some(ListenEvent::BargeIn { .. } | ListenEvent::SpeechStarted { .. }) => {}
                        None => self.listen_open = false,
                    }
                }
                checked = wake_checked(&mut self.wake_check) => {
                    self.on_wake_checked(checked);
                }
                Some(w) = next_wake(&mut self.out.wake) => {
                    if self.on_wake(w) {
                        self.acknowledge();
                    }
                }
                heard = early_heard(&mut self.early) => {
                    if let Some(r) = self.on_early_heard(heard) {
                        return Some(r);
                    }
                }
                () = tokio::time::sleep_until(intent_ends.unwrap_or_else(Instant::now).into()), if intent_ends.is_some() => {
                    if let Some(r) = self.end_at_pause() {
                        return Some(r);
                    }
                }
                () = listen_requested(listen_requests.as_deref()) => {
                    self.on_listen();
                    self.acknowledge();
                }
                () = tokio::time::sleep_until(window_closes.unwrap_or_else(Instant::now).into()), if window_closes.is_some() => {
                    if self.settings.attention.expire(Instant::now()) {
                        tracing::info!("no request followed: waiting for the wake word");
                        self.activity(Activity::Listening);
                    }
                }
                Some(e) = self.out.supervisor.recv() => {
                    if let Err(e) = stage_event(e, self.settings.events.as_ref()) {
                        self.failure = Some(e);
                    }
                }
                _ = shutdown.as_mut(), if !self.stopping => self.stopping = true,
            }
        }
    }

    /// Says `text` between turns (no turn: nothing is asked, nothing runs) and waits until it
    /// has played, or [`NOTICE_WAIT`] has passed, so that none of its events reach the next
    /// turn.
    async fn notice(&mut self, text: &str, shutdown: &mut Shutdown<'_>) {
        let Some(sentence) = Speakable::sanitize(text) else {
            return;
        };
        self.stages.tts.send("tts", TtsMsg::Speak(sentence)).await;
        let deadline = tokio::time::sleep(NOTICE_WAIT);
        tokio::pin!(deadline);
        let mut synthesised = false;
        loop {
            tokio::select! {
                e = self.out.tts.recv(), if !synthesised => match e {
                    Some(TtsEvent::Audio(pcm)) => {
                        self.stages.playback.send("playback", PlaybackMsg::Play(pcm)).await;
                    }
                    Some(TtsEvent::SentenceDone { .. }) => {
                        synthesised = true;
                        self.stages.playback.send("playback", PlaybackMsg::EndOfReply).await;
                    }
                    Some(TtsEvent::Failed { error, .. }) => {
                        tracing::warn!(error = %error, "a notice could not be spoken");
                        return;
                    }
                    None => return,
                },
                // (a Stopped before the notice was all sent is the last turn's)
                Some(e) = self.out.playback.recv() => {
                    if synthesised && matches!(e, PlaybackEvent::Stopped { .. }) {
                        return;
                    }
                }
                () = &mut deadline => {
                    tracing::warn!(?NOTICE_WAIT, "a notice did not finish playing in time");
                    return;
                }
                _ = shutdown.as_mut(), if !self.stopping => {
                    self.stopping = true;
                    return;
                }
            }
        }
    }

    /// Recognise what was said so far while the hangover runs, if it is addressed to
    /// hearth, and ask the agent whether a local intent answers it; a pause that speech
    /// resumes after is superseded.
    fn recognise_early(&mut self, paused: Utterance) {
        self.drop_early();
        let listen_start = paused.start;
        let (u, wake_word, paused) = match self.ended_at_pause {
            // speech that went on after a turn ended at its pause: the rest of that request
            Some((start, end)) if start == paused.start => {
                let rest = attention::after(&paused, end);
                (rest.clone(), None, Incoming::Continued(rest))
            }
            _ => match self.settings.attention.judge(&paused) {
                Admit::Whole => (paused.clone(), None, Incoming::Heard(paused)),
                Admit::After { from, wake_word } => (
                    attention::after(&paused, from),
                    Some(wake_word),
                    Incoming::Heard(paused),
                ),
                Admit::Alone { .. } | Admit::Drop(_) => return,
            },
        };
        let speech = (u.start, u.speech_end);
        let (stt, agent, session) = (self.stages.stt.clone(), self.agent.clone(), self.session());
        let check = self.settings.wake_check;
        let task = tokio::spawn(async move {
            let heard = transcribe(&stt, u, Hold::House).await?;
            // no wake word in it: no request to answer early (the turn drops it)
            let request = request_text(&heard.text, wake_word.as_deref(), check)
                .unwrap_or_default()
                .to_string();
            let intent = !request.is_empty()
                && !stop::is_stop(&request)
                && agent::would_use_intent(&agent, &session, &request)
                    .await
                    .unwrap_or(false);
            Ok(EarlyHeard {
                heard,
                request,
                intent,
            })
        });
        self.early = Some(Early {
            listen_start,
            paused,
            speech,
            state: EarlyState::Running(task),
            ends_at: None,
        });
    }

    /// Speech went on after the pause (or the run ends): what was started there is dropped.
    fn drop_early(&mut self) {
        if let Some(Early {
            state: EarlyState::Running(task),
            ..
        }) = self.early.take()
        {
            task.abort();
        }
        self.drop_speculation();
    }

    /// The speculative turn, if any, is refused: it ends having done and kept nothing.
    fn drop_speculation(&mut self) {
        if let Some(s) = self.speculation.take() {
            let _ = s.go.send(Some(false));
            tracing::info!("the speculative turn is dropped");
            tracing::info!(target: TRANSCRIPT, request = %s.request, "the request of the dropped speculative turn");
        }
    }

    /// Ask the agent at the pause, held, so that the model is already writing when the
    /// utterance ends there.
    fn speculate(&mut self, listen_start: u64, speech: (u64, u64), request: String) {
        self.drop_speculation();
        let (speak_tx, speak) = mpsc::unbounded_channel();
        let (go, decision) = tokio::sync::watch::channel(None);
        let mut ask = Ask::new(self.session(), request.clone())
            .wait_up_to(BUSY_WAIT)
            .held(decision);
        ask.speak = Some(speak_tx);
        let agent = self.agent.clone();
        let task = tokio::spawn(async move { agent::ask(&agent, ask).await });
        tracing::info!("a speculative turn starts at the pause");
        tracing::info!(target: TRANSCRIPT, %request, "the request of the speculative turn");
        self.speculation = Some(Speculation {
            listen_start,
            speech,
            request,
            go,
            started: Started {
                task,
                speak,
                asked_at: Instant::now(),
            },
        });
    }

    /// The speculative turn asked with `request` on `speech`, which now stands; any other is
    /// dropped.
    fn speculation_for(&mut self, speech: (u64, u64), request: &str) -> Option<Started> {
        let s = self.speculation.take()?;
        if s.speech != speech || s.request != request {
            self.speculation = Some(s);
            self.drop_speculation();
            return None;
        }
        let _ = s.go.send(Some(true));
        tracing::info!(
            ahead_ms = s.started.asked_at.elapsed().as_secs_f64() * 1e3,
            "the speculative turn stands"
        );
        Some(s.started)
    }

    /// The early recognition has ended: kept for the utterance; when a local intent answers
    /// it, the turn ends after `Settings::intent_end` of silence (the request, now or from
    /// [`Conductor::end_at_pause`]), without waiting for the hangover.
    fn on_early_heard(&mut self, heard: Option<EarlyHeard>) -> Option<Request> {
        let muted = self.muted();
        let early = self.early.as_mut()?;
        let intent = heard.as_ref().is_some_and(|h| h.intent);
        let ends_request = heard.as_ref().is_some_and(|h| h.heard.ends_request);
        let request = heard
            .as_ref()
            .map(|h| h.request.clone())
            .filter(|r| !r.is_empty() && !stop::is_stop(r));
        early.state = EarlyState::Done(heard);
        if muted {
            return None;
        }
        let wait = match ends_request {
            true => self.settings.phrase_end.or(self.settings.intent_end),
            false => self.settings.intent_end,
        };
        let Some(intent_end) = wait.filter(|_| intent) else {
            let (listen_start, speech) = (early.listen_start, early.speech);
            if let Some(request) = request {
                self.speculate(listen_start, speech, request);
            }
            return None;
        };
        let u = early.paused.utterance();
        let ends_at = u.wall_time(u.speech_end) + intent_end;
        early.ends_at = Some(ends_at);
        if Instant::now() < ends_at {
            return None;
        }
        self.end_at_pause()
    }

    /// The turn ends at the pause: a local intent answers what was said before it, and
    /// `Settings::intent_end` of silence has passed. The request, unless it is not addressed
    /// to hearth after all.
    fn end_at_pause(&mut self) -> Option<Request> {
        let early = self.early.as_mut()?;
        early.ends_at = None;
        let (listen_start, speech_end) = (early.listen_start, early.speech.1);
        let paused = early.paused.clone();
        let r = self.judged(paused)?;
        tracing::info!(
            since_pause_ms = r.utterance.endpointed_at.elapsed().as_secs_f64() * 1e3,
            "a local intent at the pause: the turn ends there"
        );
        self.ended_at_pause = Some((listen_start, speech_end));
        Some(r)
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

    /// The request in an utterance heard (`None` when it is not addressed to hearth).
    fn judged(&mut self, u: Incoming) -> Option<Request> {
        match u {
            Incoming::Heard(u) => self.addressed(u),
            Incoming::Continued(u) => Some(Request {
                utterance: u,
                wake_word: None,
            }),
        }
    }

    /// The transcript: the early recognition's if nothing was said after its pause, else
    /// the whole utterance's.
    async fn recognise(&mut self, u: Utterance) -> Result<Heard, SttError> {
        let early = match self.early.take() {
            Some(e) if e.speech == (u.start, u.speech_end) => match e.state {
                EarlyState::Running(task) => early_result(task.await),
                EarlyState::Done(heard) => heard,
            },
            Some(Early {
                state: EarlyState::Running(task),
                ..
            }) => {
                task.abort();
                None
            }
            _ => None,
        };
        match early {
            Some(h) => Ok(h.heard),
            None => transcribe(&self.stages.stt, u, Hold::House).await,
        }
    }

    /// One turn: recognise, then (unless nothing was heard) answer. `None` when nothing was
    /// heard.
    async fn turn(&mut self, r: Request, shutdown: &mut Shutdown<'_>) -> Option<VoiceTurn> {
        let Request {
            utterance: u,
            wake_word,
        } = r;
        // The speech ended `hangover` before the endpoint: that is the latency's zero.
        let hangover = (u.start + u.samples.len() as u64).saturating_sub(u.speech_end);
        let clock = Clock {
            endpointed_at: u.endpointed_at,
            endpoint_ms: on_input_clock(hangover) * 1e3,
        };
        // the turn starts now: after the hangover, or at a pause (a local intent)
        let endpoint = clock.since_speech(Instant::now());
        let span = (on_input_clock(u.start), on_input_clock(u.speech_end));
        let speech = (u.start, u.speech_end);
        if !self.wake_word_stands(wake_word.is_some()).await {
            self.drop_early();
            return None;
        }
        let heard = self.recognise(u).await;
        let mut timings = TurnTimings {
            endpoint,
            stt_wait: clock.since_speech(Instant::now()) - endpoint,
            ..Default::default()
        };
        let heard = match heard {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, "speech recognition failed; the utterance is lost");
                self.drop_speculation();
                return Some(VoiceTurn {
                    heard: String::new(),
                    phrase_pass: None,
                    turn: None,
                    error: Some(e.to_string()),
                    interrupted: false,
                    timings_ms: TurnTimings {
                        endpoint,
                        ..Default::default()
                    },
                    start_s: span.0,
                    end_s: span.1,
                });
            }
        };
        timings.stt = heard.stt_ms;
        let Some(text) = request_text(&heard.text, wake_word.as_deref(), self.settings.wake_check)
        else {
            self.not_the_wake_word(&heard.text, wake_word.as_deref().unwrap_or_default());
            return None;
        };
        let text = text.to_string();
        let started = self.speculation_for(speech, &text);
        if stop::is_stop(&text) {
            // nothing is being said or done between turns: "stop" never reaches the model,
            // and is reported as heard, with no reply
            tracing::info!("stop, with nothing to stop");
            tracing::info!(target: TRANSCRIPT, heard = %text, "the stop phrase heard");
            self.publish(Event::Heard { text: text.clone() });
            self.activity(self.between_turns());
            return Some(VoiceTurn {
                heard: text,
                phrase_pass: heard.phrase_pass,
                turn: None,
                error: None,
                interrupted: false,
                timings_ms: timings,
                start_s: span.0,
                end_s: span.1,
            });
        }
        if text.is_empty() {
            if wake_word.is_some() {
                // only the wake word was said: the request may follow
                tracing::info!("heard the wake word alone: waiting for the request");
                self.settings.attention.on_listen(Instant::now());
                self.activity(Activity::ListeningForRequest);
            } else {
                tracing::info!("heard nothing");
            }
            return None;
        }
        self.publish(Event::Heard { text: text.clone() });
        self.activity(Activity::Thinking);
        let voice_turn = tracing::info_span!("voice_turn", chars = text.chars().count());
        tracing::info!(target: TRANSCRIPT, heard = %text, "the request");
        let state = TurnState::new(clock, timings);
        let mut t = self
            .reply(text, started, state, span, shutdown)
            .instrument(voice_turn)
            .await;
        t.phrase_pass = heard.phrase_pass;
        self.last_turn_end = Some(Instant::now());
        self.settings.attention.on_reply_done(Instant::now());
        tracing::info!(timings = ?t.timings_ms, "turn done");
        self.activity(self.between_turns());
        Some(t)
    }

    /// Ask the agent in this conversation's session (a new one after a quiet spell), with
    /// its settled sentences sent to `speak`. A D-Bus `Ask` may hold the agent: the spoken
    /// request waits in the agent's queue rather than being lost.
    fn ask(
        &mut self,
        text: String,
        speak: mpsc::UnboundedSender<Speakable>,
    ) -> JoinHandle<Result<Turn, AgentError>> {
        let mut ask = Ask::new(self.next_session(), text).wait_up_to(BUSY_WAIT);
        ask.speak = Some(speak);
        let agent = self.agent.clone();
        tokio::spawn(async move { agent::ask(&agent, ask).await })
    }

    /// A turn now would start a new conversation: the last one ended a quiet spell ago.
    fn idle(&self) -> bool {
        self.last_turn_end
            .is_some_and(|t| t.elapsed() >= self.settings.conversation_idle)
    }

    /// The agent session a turn started now would be in.
    fn session(&self) -> String {
        format!("voice-{}", self.conversation + u64::from(self.idle()))
    }

    /// The agent session of the turn starting now (a new conversation after a quiet spell).
    fn next_session(&mut self) -> String {
        if self.idle() {
            self.conversation += 1;
        }
        format!("voice-{}", self.conversation)
    }

    /// Stop what is being said and generated: Playback, Tts's queue, the agent's turn (a
    /// stage that is down has nothing to stop).
    fn stop_reply(&self) {
        if let Some(p) = self.stages.playback.get() {
            let _ = p.cast(PlaybackMsg::Stop);
        }
        if let Some(t) = self.stages.tts.get() {
            let _ = t.cast(TtsMsg::Cancel);
        }
        let _ = self.agent.cast(AgentMsg::Cancel);
    }

    /// The agent's turn for `heard`, its sentences spoken as they settle, until the reply
    /// has finished playing, was interrupted, or a stage died for good.
    async fn reply(
        &mut self,
        heard: String,
        started: Option<Started>,
        mut state: TurnState,
        span: (f64, f64),
        shutdown: &mut Shutdown<'_>,
    ) -> VoiceTurn {
        let Started {
            task: mut turn_task,
            speak: mut speak_rx,
            asked_at,
        } = match started {
            Some(s) => {
                self.next_session();
                s
            }
            None => {
                let (speak_tx, speak) = mpsc::unbounded_channel();
                Started {
                    task: self.ask(heard.clone(), speak_tx),
                    speak,
                    asked_at: Instant::now(),
                }
            }
        };
        let listen_requests = self.settings.listen_requests.clone();
        // a short stretch of speech during the reply, being recognised: "stop"?
        let mut stop_check: Option<StopCheck> = None;
        loop {
            match state.next() {
                Next::Done => break,
                Next::EndOfReply => {
                    self.stages
                        .playback
                        .send("playback", PlaybackMsg::EndOfReply)
                        .await;
                    continue;
                }
                Next::Wait => {}
            }
            tokio::select! {
                r = &mut turn_task, if state.awaiting_result() => state.on_result(r),
                s = speak_rx.recv(), if state.speaking_open() => {
                    if let Some(sentence) = state.on_sentence(s) {
                        self.stages.tts.send("tts", TtsMsg::Speak(sentence)).await;
                    }
                }
                e = self.out.tts.recv() => match e {
                    Some(TtsEvent::Audio(pcm)) => {
                        let pcm = state.on_audio(pcm);
                        self.stages.playback.send("playback", PlaybackMsg::Play(pcm)).await;
                    }
                    Some(TtsEvent::SentenceDone { .. }) => state.on_sentence_done(),
                    Some(TtsEvent::Failed { index, error }) => {
                        tracing::warn!(index, error = %error, "a sentence could not be spoken");
                        state.on_sentence_done();
                    }
                    None => break,
                },
                Some(e) = self.out.playback.recv() => {
                    if state.on_playback(e) {
                        tracing::info!("speaking");
                        self.activity(Activity::Speaking);
                    }
                }
                Some(e) = self.out.supervisor.recv() => {
                    let died = match &e {
                        StageEvent::Died { stage, .. } => Some(*stage),
                        _ => None,
                    };
                    if let Err(e) = stage_event(e, self.settings.events.as_ref()) {
                        // the turn cannot finish: stop waiting for it
                        let _ = self.agent.cast(AgentMsg::Cancel);
                        self.failure = Some(e);
                        break;
                    }
                    if let Some(stage) = died {
                        state.on_stage_died(stage);
                    }
                }
                l = self.out.listen.recv(), if self.listen_open => {
                    if self.drain_wake() {
                        self.addressed_over_reply(&mut state);
                    }
                    match l {
                        Some(ListenEvent::BargeIn { .. }) if self.settings.attention.wake_words() => {
                            tracing::debug!("speech over the reply, without the wake word: it plays on");
                        }
                        Some(ListenEvent::BargeIn { .. }) => {
                            tracing::info!("barge-in: stopping the reply");
                            self.stop_reply();
                            state.on_barge_in();
                        }
                        Some(ListenEvent::End) => self.ended = self.settings.once,
                        Some(ListenEvent::Utterance(u)) => {
                            if let Some(u) = self.incoming(u) {
                                self.pending.push(u.utterance().endpointed_at, u);
                            }
                        }
                        Some(ListenEvent::Pause(u))
                            if stop::is_short(&u) && !state.interrupted() && !self.muted() =>
                        {
                            // a later pause with nothing more said: the check under way holds
                            let same = stop_check
                                .as_ref()
                                .is_some_and(|c| c.speech == (u.start, u.speech_end));
                            if !same {
                                if let Some(old) = stop_check.take() {
                                    old.task.abort();
                                }
                                stop_check = Some(self.check_for_stop(u));
                            }
                        }
                        // recognised once it is an utterance, after this turn
                        Some(
                            ListenEvent::SpeechStarted { .. }
                            | ListenEvent::Pause(_)
                            | ListenEvent::Resumed { .. },
                        ) => {}
                        None => self.listen_open = false,
                    }
                }
                Some(w) = next_wake(&mut self.out.wake) => {
                    if self.on_wake(w) {
                        self.addressed_over_reply(&mut state);
                    }
                }
                heard = stop_checked(&mut stop_check) => {
                    let check = stop_check.take();
                    if let (Ok(Ok(h)), Some(check)) = (heard, check) {
                        if stop::is_stop_over_reply(&h.text) && !state.interrupted() {
                            let after_speech_ms = check.speech_ended.elapsed().as_secs_f64() * 1e3;
                            tracing::info!(after_speech_ms, "stop: the reply is stopped");
                            self.stop_reply();
                            state.on_barge_in();
                        }
                    }
                }
                () = listen_requested(listen_requests.as_deref()) => {
                    self.on_listen();
                    self.addressed_over_reply(&mut state);
                }
                _ = shutdown.as_mut(), if !self.stopping => {
                    tracing::info!("stopping: the reply is cut short; the agent ends its turn");
                    self.stopping = true;
                    self.stop_reply();
                    state.on_barge_in();
                }
            }
        }
        if let Some(check) = stop_check {
            check.task.abort();
        }
        state.finish(heard, asked_at, span)
    }
}

/// Speech during a reply being recognised, to see whether it is "stop".
struct StopCheck {
    /// The speech checked: its start and end on the input clock.
    speech: (u64, u64),
    /// When the speech ended (wall clock): the stop's latency starts here.
    speech_ended: Instant,
    task: JoinHandle<Result<Heard, SttError>>,
}

/// The stop check's transcript (never, when none is running).
async fn stop_checked(
    check: &mut Option<StopCheck>,
) -> Result<Result<Heard, SttError>, tokio::task::JoinError> {
    match check {
        Some(c) => (&mut c.task).await,
        None => std::future::pending().await,
    }
}

/// The transcript of a wake word said alone (never, when none is being checked).
async fn wake_checked(
    check: &mut Option<WakeCheck>,
) -> Result<Result<Heard, SttError>, tokio::task::JoinError> {
    match check {
        Some(c) => (&mut c.task).await,
        None => std::future::pending().await,
    }
}

/// The early recognition's result, once (never, when none is running).
async fn early_heard(early: &mut Option<Early>) -> Option<EarlyHeard> {
    match early {
        Some(Early {
            state: EarlyState::Running(task),
            ..
        }) => early_result(task.await),
        _ => std::future::pending().await,
    }
}

/// What an early recognition heard; a failure is logged (the utterance is then recognised
/// whole).
fn early_result(
    r: Result<Result<EarlyHeard, SttError>, tokio::task::JoinError>,
) -> Option<EarlyHeard> {
    match r {
        Ok(Ok(h)) => Some(h),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "early recognition failed; the utterance is recognised whole");
            None
        }
        Err(e) => {
            tracing::debug!(error = %e, "early recognition ended early");
            None
        }
    }
}

/// The request in a transcript: what follows the wake word, if one woke hearth. When the
/// transcript does not have that wake word (the detector fired on something else, or whisper
/// spelled it beyond recognition): `None` with `check` (`[listen] wake_check`), else all of it.
fn request_text<'t>(heard: &'t str, wake_word: Option<&str>, check: bool) -> Option<&'t str> {
    let Some(w) = wake_word else {
        return Some(heard);
    };
    match check {
        true => crate::wake::after_wake_word(heard, w, WakeMatch::Strict),
        false => Some(crate::wake::after_wake_word(heard, w, WakeMatch::Loose).unwrap_or(heard)),
    }
}

/// The next wake word heard (never, with wake words off).
async fn next_wake(rx: &mut Option<mpsc::UnboundedReceiver<WakeWord>>) -> Option<WakeWord> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// `Listen()` was called (never, without the D-Bus face).
async fn listen_requested(n: Option<&tokio::sync::Notify>) {
    match n {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// A sample index on the input clock, in seconds.
fn on_input_clock(i: u64) -> f64 {
    i as f64 / f64::from(SAMPLE_RATE)
}
