//! The driver: runs a [`Conductor`] against the running stages. It waits for whatever comes
//! next (Listen, Wake, the work it started, Tts, Playback, the supervisor, `Listen()`, the
//! conductor's deadline, shutdown), feeds it in, and does what the conductor answers:
//! recognitions, intent checks and agent turns run as tasks whose results come back as
//! input; sentences go to Tts, reply ends and stops to Playback.
//!
//! Wake words are taken before Listen's events (the `select!` is biased): each is sent
//! before Listen saw the frame that completed it, so the conductor knows it before it judges
//! the utterance that holds it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use ractor::ActorRef;
use tokio::sync::{mpsc, watch, Notify};
use tokio::task::AbortHandle;
use tracing::Instrument;

use super::stages::{stage_event, transcribe, StageOutputs, Stages};
use super::{PipelineError, RunSummary, VoiceTurn, BUSY_WAIT};
use crate::agent::{self, AgentMsg, Ask, Planned};
use crate::audio::earcon::Cues;
use crate::audio::listen::ListenMsg;
use crate::audio::PlaybackMsg;
use crate::conductor::{Action, Conductor, Input, Job};
use crate::events::Events;
use crate::supervisor::StageEvent;
use crate::tts::TtsMsg;
use crate::voice::WakeWord;

/// What the driver needs besides the stages and the conductor.
pub(super) struct Wiring {
    /// Where the supervisor's reports are copied (readiness for systemd, tests).
    pub(super) events: Option<mpsc::UnboundedSender<StageEvent>>,
    /// Where what was heard and what hearth is doing are published (the D-Bus face).
    pub(super) bus_events: Option<Events>,
    /// `Listen()`: the next utterance is a request without the wake word.
    pub(super) listen_requests: Option<Arc<Notify>>,
    /// The earcon (hearth is addressed) and the bell (before an announcement).
    pub(super) cues: Cues,
    /// The room this source is in (a satellite's): context for requests that name none.
    pub(super) room: Option<String>,
    /// Announcements for this source's speaker.
    pub(super) announcements: Option<mpsc::UnboundedReceiver<String>>,
}

/// A conductor at work.
pub(super) struct Driver<'a> {
    agent: ActorRef<AgentMsg>,
    stages: &'a Stages,
    out: StageOutputs,
    conductor: Conductor,
    wiring: Wiring,
    /// Where the work started comes back.
    results_tx: mpsc::UnboundedSender<Input>,
    results: mpsc::UnboundedReceiver<Input>,
    /// Work under way that may be dropped.
    running: HashMap<Job, AbortHandle>,
    /// Speculative agent turns waiting for their go-ahead.
    held: HashMap<Job, watch::Sender<Option<bool>>>,
    /// The session of the last turn asked: what a stop cancels (the agent is shared with
    /// other sources, whose turns run on).
    session: String,
    listen_open: bool,
    tts_open: bool,
    shut: bool,
    /// A stage that died for good ends the run with this.
    failure: Option<PipelineError>,
    summary: RunSummary,
}

impl<'a> Driver<'a> {
    pub(super) fn new(
        agent: ActorRef<AgentMsg>,
        stages: &'a Stages,
        out: StageOutputs,
        conductor: Conductor,
        wiring: Wiring,
    ) -> Self {
        let (results_tx, results) = mpsc::unbounded_channel();
        Driver {
            agent,
            stages,
            out,
            conductor,
            wiring,
            results_tx,
            results,
            running: HashMap::new(),
            held: HashMap::new(),
            session: String::new(),
            listen_open: true,
            tts_open: true,
            shut: false,
            failure: None,
            summary: RunSummary::default(),
        }
    }

    /// Turns until the conductor's run is over. Each finished turn goes to `on_turn` and is
    /// counted, not kept (a daemon answers turns for months).
    pub(super) async fn run(
        mut self,
        on_turn: impl Fn(&VoiceTurn),
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<RunSummary, PipelineError> {
        let mut shutdown = std::pin::pin!(shutdown);
        let actions = self.conductor.start();
        self.perform(actions, &on_turn).await;
        while !self.conductor.is_over() {
            let Some(input) = self.next_input(shutdown.as_mut()).await else {
                continue;
            };
            if let Input::Heard { job, .. } | Input::Intent { job, .. } = &input {
                self.running.remove(job);
            }
            let actions = self.conductor.on(input, std::time::Instant::now());
            self.perform(actions, &on_turn).await;
        }
        let actions = self.conductor.finish();
        self.perform(actions, &on_turn).await;
        for (_, task) in self.running.drain() {
            task.abort();
        }
        match self.failure {
            Some(e) => Err(e),
            None => Ok(self.summary),
        }
    }

    /// What comes next (`None`: something that needs no input, e.g. a stage restarted).
    async fn next_input(
        &mut self,
        shutdown: std::pin::Pin<&mut (impl Future<Output = ()> + Send)>,
    ) -> Option<Input> {
        let deadline = self.conductor.deadline();
        let listen_requests = self.wiring.listen_requests.clone();
        tokio::select! {
            biased;
            Some(w) = next_wake(&mut self.out.wake) => Some(Input::Wake(w)),
            l = self.out.listen.recv(), if self.listen_open => Some(match l {
                Some(e) => Input::Listen(e),
                None => {
                    self.listen_open = false;
                    Input::ListenClosed
                }
            }),
            Some(r) = self.results.recv() => Some(r),
            e = self.out.tts.recv(), if self.tts_open => Some(match e {
                Some(e) => Input::Tts(e),
                None => {
                    self.tts_open = false;
                    Input::TtsClosed
                }
            }),
            Some(e) = self.out.playback.recv() => Some(Input::Playback(e)),
            Some(e) = self.out.supervisor.recv() => self.stage_report(e),
            () = listen_requested(listen_requests.as_deref()) => Some(Input::ListenCalled),
            Some(text) = next_announcement(&mut self.wiring.announcements) => Some(Input::Announce(text)),
            () = sleep_until(deadline), if deadline.is_some() => Some(Input::Tick),
            () = shutdown, if !self.shut => {
                self.shut = true;
                Some(Input::Shutdown)
            }
        }
    }

    /// A report of the supervisor: copied on; a stage that died is news for the conductor.
    fn stage_report(&mut self, e: StageEvent) -> Option<Input> {
        let died = match &e {
            StageEvent::Died { stage, .. } => Some(*stage),
            _ => None,
        };
        match stage_event(e, self.wiring.events.as_ref()) {
            Err(e) => {
                self.failure = Some(e);
                Some(Input::Failed)
            }
            Ok(()) => died.map(Input::StageDied),
        }
    }

    async fn perform(&mut self, actions: Vec<Action>, on_turn: &impl Fn(&VoiceTurn)) {
        for action in actions {
            self.act(action, on_turn).await;
        }
    }

    async fn act(&mut self, action: Action, on_turn: &impl Fn(&VoiceTurn)) {
        match action {
            Action::Recognise {
                job,
                utterance,
                hold,
            } => {
                let stt = self.stages.stt.clone();
                self.spawn(job, async move {
                    let heard = transcribe(&stt, utterance, hold).await;
                    let heard = heard.map_err(|e| e.to_string());
                    Input::Heard { job, heard }
                });
            }
            Action::CheckIntent {
                job,
                session,
                request,
                ends_at,
            } => {
                let agent = self.agent.clone();
                let room = self.wiring.room.clone();
                self.spawn(job, async move {
                    let foreseen = agent::plan_ahead(&agent, &session, &request, room, ends_at);
                    let foreseen = foreseen.await.unwrap_or_default();
                    Input::Intent {
                        job,
                        intent: foreseen.intent,
                        first: foreseen.first,
                        planned: foreseen.planned,
                    }
                });
            }
            Action::Ask {
                job,
                session,
                request,
                held,
                heard_as,
                planned,
            } => self.ask(job, session, request, held, heard_as, planned),
            Action::GoAhead { job, go } => {
                if let Some(decision) = self.held.remove(&job) {
                    let _ = decision.send(Some(go));
                }
            }
            Action::Abort(job) => {
                if let Some(task) = self.running.remove(&job) {
                    task.abort();
                }
            }
            Action::Speak { reply, sentence } => {
                let msg = TtsMsg::Speak { reply, sentence };
                self.stages.tts.send("tts", msg).await;
            }
            Action::Prepare(sentence) => {
                self.stages.tts.send("tts", TtsMsg::Prepare(sentence)).await;
            }
            Action::AskFinished { start, speech_end } => {
                let msg = ListenMsg::AskFinished { start, speech_end };
                self.stages.listen.send("listen", msg).await;
            }
            Action::EndOfReply(reply) => {
                let msg = PlaybackMsg::EndOfReply { reply };
                self.stages.playback.send("playback", msg).await;
            }
            // a stage that is down has nothing to stop
            Action::StopReply(reply) => {
                if let Some(p) = self.stages.playback.get() {
                    let _ = p.cast(PlaybackMsg::Cut(reply));
                }
                if let Some(t) = self.stages.tts.get() {
                    let _ = t.cast(TtsMsg::Cancel);
                }
                let _ = self
                    .agent
                    .cast(AgentMsg::CancelSession(self.session.clone()));
            }
            Action::CancelTurn => {
                let _ = self
                    .agent
                    .cast(AgentMsg::CancelSession(self.session.clone()));
            }
            // played as a cue: no reply events, never over a reply
            Action::Cue(cue) => {
                if let (Some(pcm), Some(p)) =
                    (self.wiring.cues.get(cue), self.stages.playback.get())
                {
                    let _ = p.cast(PlaybackMsg::Cue(pcm.clone()));
                }
            }
            Action::Publish(event) => {
                crate::events::publish(self.wiring.bus_events.as_ref(), event);
            }
            Action::Turn(t) => {
                on_turn(&t);
                self.summary.turns += 1;
                self.summary.failed += usize::from(t.error.is_some());
            }
        }
    }

    /// Run `work` as a task that [`Action::Abort`] can drop; its result comes back as input.
    fn spawn(&mut self, job: Job, work: impl Future<Output = Input> + Send + 'static) {
        let results = self.results_tx.clone();
        // in the pipeline's span: a satellite's recognitions and turns are logged as its own
        let task = tokio::spawn(
            async move {
                let _ = results.send(work.await);
            }
            .in_current_span(),
        );
        self.running.insert(job, task.abort_handle());
    }

    /// Ask the agent with a wait for a turn already running (a D-Bus `Ask` may hold the
    /// agent: the spoken request waits in its queue rather than being lost); its settled
    /// sentences and its end come back as input.
    fn ask(
        &mut self,
        job: Job,
        session: String,
        request: String,
        held: bool,
        heard_as: Option<String>,
        planned: Option<Planned>,
    ) {
        let (speak_tx, mut speak) = mpsc::unbounded_channel();
        self.session = session.clone();
        let mut ask = Ask::new(session, request).wait_up_to(BUSY_WAIT);
        ask.heard_as = heard_as;
        ask.planned = planned;
        if held {
            let (go, decision) = watch::channel(None);
            ask = ask.held(decision);
            self.held.insert(job, go);
        }
        ask.speak = Some(speak_tx);
        ask.room = self.wiring.room.clone();
        let (agent, results) = (self.agent.clone(), self.results_tx.clone());
        // in the pipeline's span, as the tasks of `spawn`
        let turn = async move {
            let sentences = async {
                while let Some(s) = speak.recv().await {
                    let _ = results.send(Input::Sentence {
                        job,
                        sentence: Some(s),
                    });
                }
                let _ = results.send(Input::Sentence {
                    job,
                    sentence: None,
                });
            };
            let (turn, ()) = tokio::join!(agent::ask(&agent, ask), sentences);
            let turn = turn.map_err(|e| e.to_string());
            let _ = results.send(Input::Answered { job, turn });
        };
        tokio::spawn(turn.in_current_span());
    }
}

/// The next wake word heard (never, with wake words off).
async fn next_wake(rx: &mut Option<mpsc::UnboundedReceiver<WakeWord>>) -> Option<WakeWord> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The next announcement (never, without any).
async fn next_announcement(rx: &mut Option<mpsc::UnboundedReceiver<String>>) -> Option<String> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// `Listen()` was called (never, without the D-Bus face).
async fn listen_requested(n: Option<&Notify>) {
    match n {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// Until `deadline` (never, without one).
async fn sleep_until(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}
