//! The voice stages under one supervisor: Playback, Tts, Stt, Listen and Capture, started in
//! that order, each restarted after a failure where that makes sense (a device can be opened
//! again; a file input or output would start over, so its death ends the run). [`Live`]
//! keeps each stage's current address across restarts.
//!
//! With echo cancellation on, the task that forwards Capture's frames runs them through the
//! canceller first (`audio::aec::EchoFilter`), so Wake and Listen both get cleaned frames;
//! Playback's output writes what it plays into the render tap the filter drains. The filter
//! lives in that task rather than in Capture or a stage of its own: the task lasts the whole
//! run, so the adapted echo path survives a Capture or Wake restart, Capture stays a plain
//! source, and no further actor hop or channel is added (AEC3 costs well under a
//! millisecond per 32 ms frame).
//!
//! Capture's frames go to whichever Wake runs now (with wake words on; it passes each frame on
//! after its detections) or Listen, Tts's audio straight to Playback (the rest of its events
//! to the conductor), and Playback's events both to Listen (barge-in gating) and to the
//! conductor. Small forwarding tasks do this rather than a
//! ractor `OutputPort`: a port is a broadcast channel that drops messages when a subscriber
//! lags (audio frames must never be dropped silently), and a restarted Listen would have to
//! subscribe again from inside the supervisor's start.

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorRef, ActorStatus};
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

use super::PipelineError;
use crate::audio::aec::{EchoFilter, RenderLink};
use crate::audio::listen::{Listen, ListenArgs, ListenConfig, ListenMsg};
use crate::audio::{
    Capture, CaptureArgs, CaptureMsg, CaptureSource, Playback, PlaybackArgs, PlaybackMsg,
    PlaybackSink,
};
use crate::stt::{self, Stt, SttConfig, SttError, SttMsg};
use crate::supervisor::{StageEvent, StageSpec, StageSupervisor, SupervisorMsg};
use crate::tts::{TtsActor, TtsMsg, VoiceSource};
use crate::voice::{
    Captured, Heard, Hold, ListenEvent, PlaybackEvent, TtsEvent, Utterance, WakeWord,
};
use crate::wake::{Wake, WakeArgs, WakeConfig, WakeMsg};

/// How long a message to a stage that is down waits for its restart.
const RESTART_WAIT: Duration = Duration::from_secs(10);

/// The current address of a supervised stage: replaced when the stage restarts.
pub(super) struct Live<M: ractor::Message>(Arc<watch::Sender<Option<ActorRef<M>>>>);

impl<M: ractor::Message> Clone for Live<M> {
    fn clone(&self) -> Self {
        Live(Arc::clone(&self.0))
    }
}

impl<M: ractor::Message> Live<M> {
    fn new() -> Self {
        Live(Arc::new(watch::channel(None).0))
    }

    fn set(&self, r: ActorRef<M>) {
        self.0.send_replace(Some(r));
    }

    pub(super) fn get(&self) -> Option<ActorRef<M>> {
        self.0.borrow().clone()
    }

    /// The stage's address; while it is down (restarting), waits up to [`RESTART_WAIT`]
    /// for the new one.
    async fn up(&self) -> Option<ActorRef<M>> {
        let dead = |r: &ActorRef<M>| {
            matches!(r.get_status(), ActorStatus::Stopping | ActorStatus::Stopped)
        };
        let mut rx = self.0.subscribe();
        let found = match tokio::time::timeout(
            RESTART_WAIT,
            rx.wait_for(|r| r.as_ref().is_some_and(|r| !dead(r))),
        )
        .await
        {
            Ok(Ok(r)) => r.clone(),
            _ => None,
        };
        found
    }

    /// Send `msg`; if the stage is down, to its restarted self. False if it stayed down.
    pub(super) async fn send(&self, stage: &'static str, msg: M) -> bool {
        let msg = match self.get().map(|r| r.cast(msg)) {
            Some(Ok(())) => return true,
            Some(Err(ractor::MessagingErr::SendErr(m))) => m,
            _ => {
                tracing::warn!(stage, "a message to a stage that is not running was lost");
                return false;
            }
        };
        match self.up().await.map(|r| r.cast(msg)) {
            Some(Ok(())) => true,
            _ => {
                tracing::warn!(
                    stage,
                    "the stage did not come back: a message to it was lost"
                );
                false
            }
        }
    }
}

/// A [`StageSpec`] whose start spawns `A` linked to the supervisor with fresh arguments
/// from `args`, then runs `then` on it, and publishes its address to `live`.
fn spec<A, F, T, Fut>(
    name: &'static str,
    restart: bool,
    live: &Live<A::Msg>,
    actor: F,
    args: impl Fn() -> Result<A::Arguments, String> + Send + Sync + 'static,
    then: T,
) -> StageSpec
where
    A: Actor,
    F: Fn() -> A + Send + Sync + 'static,
    T: Fn(ActorRef<A::Msg>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let live = live.clone();
    let actor = Arc::new(actor);
    let args = Arc::new(args);
    let then = Arc::new(then);
    StageSpec {
        name,
        restart,
        start: Box::new(move |sup| {
            let (live, actor, args, then) =
                (live.clone(), actor.clone(), args.clone(), then.clone());
            Box::pin(async move {
                let (r, _) = Actor::spawn_linked(None, actor(), args()?, sup)
                    .await
                    .map_err(|e| e.to_string())?;
                then(r.clone()).await?;
                live.set(r.clone());
                Ok(r.get_cell())
            })
        }),
    }
}

/// What the turn loop hears from the supervisor: ends the run if a stage died for good.
pub(super) fn stage_event(
    e: StageEvent,
    events: Option<&mpsc::UnboundedSender<StageEvent>>,
) -> Result<(), PipelineError> {
    if let Some(tx) = events {
        let _ = tx.send(e.clone());
    }
    match e {
        StageEvent::Died {
            stage,
            reason,
            restart_in: None,
        } => Err(PipelineError::Died(stage, reason)),
        _ => Ok(()),
    }
}

/// Transcribe on whichever Stt is running (waiting for one that is restarting).
pub(super) async fn transcribe(
    stt: &Live<SttMsg>,
    u: Utterance,
    hold: Hold,
) -> Result<Heard, SttError> {
    match stt.up().await {
        Some(r) => stt::transcribe_as(&r, u, hold).await,
        None => Err(SttError::Actor(
            "the speech recognition stage is down and did not come back".into(),
        )),
    }
}

/// The running stages: the supervisor and each stage's current address.
pub(super) struct Stages {
    supervisor: ActorRef<SupervisorMsg>,
    pub(super) playback: Live<PlaybackMsg>,
    pub(super) tts: Live<TtsMsg>,
    pub(super) stt: Live<SttMsg>,
    pub(super) listen: Live<ListenMsg>,
    wake: Option<Live<WakeMsg>>,
    capture: Live<CaptureMsg>,
}

/// What the stages report to the conductor.
pub(super) struct StageOutputs {
    /// Listen's utterances, pauses, barge-ins and the end of the input.
    pub(super) listen: mpsc::UnboundedReceiver<ListenEvent>,
    /// The wake words heard (`None`: wake words are off). Each is sent before Listen sees
    /// the frame that completed it.
    pub(super) wake: Option<mpsc::UnboundedReceiver<WakeWord>>,
    /// Tts's sentence ends (its audio goes to Playback).
    pub(super) tts: mpsc::UnboundedReceiver<TtsEvent>,
    /// Playback's events (a copy of what Listen gets).
    pub(super) playback: mpsc::UnboundedReceiver<PlaybackEvent>,
    /// The supervisor's reports (stages died, restarted; ready or degraded).
    pub(super) supervisor: mpsc::UnboundedReceiver<StageEvent>,
}

impl Stages {
    /// Start every stage under a new supervisor, and the forwarding from Capture, Tts and
    /// Playback. A stage that fails to start stops the ones already running and is the error.
    pub(super) async fn start(
        input: CaptureSource,
        (sink, volume): (PlaybackSink, crate::voice::Volume),
        stt_cfg: SttConfig,
        tts_cfg: VoiceSource,
        listen_cfg: ListenConfig,
        wake_cfg: Option<WakeConfig>,
        echo_cancel: bool,
    ) -> Result<(Stages, StageOutputs), PipelineError> {
        let echo_link = echo_cancel.then(RenderLink::new);
        let echo_filter = echo_link.as_ref().map(EchoFilter::new);
        if echo_cancel {
            tracing::info!("echo cancellation on (AEC3, 160 ms filters)");
        }
        let (pb_tx, pb_rx) = mpsc::unbounded_channel();
        let (tts_tx, tts_rx) = mpsc::unbounded_channel();
        let (listen_tx, listen_rx) = mpsc::unbounded_channel();
        let (cap_tx, cap_rx) = mpsc::channel(64);
        let (wake_tx, wake_rx) = mpsc::unbounded_channel();
        let (woken_tx, woken_rx) = mpsc::channel(64);
        let (playback, tts, stt, listen, capture) = (
            Live::new(),
            Live::new(),
            Live::new(),
            Live::new(),
            Live::new(),
        );
        let wake = wake_cfg.as_ref().map(|_| Live::new());
        // a file output would start over: only a device's or a stream's Playback is restarted
        let sink_restarts = matches!(sink, PlaybackSink::Device(_) | PlaybackSink::Stream(_));
        let playback_args = move || {
            Ok(PlaybackArgs {
                sink: sink.clone(),
                events: pb_tx.clone(),
                echo_tap: echo_link.clone(),
                volume: volume.clone(),
            })
        };
        let listen_args = move || {
            Ok(ListenArgs {
                config: listen_cfg.clone(),
                events: listen_tx.clone(),
            })
        };
        let mut specs = vec![
            spec(
                "playback",
                sink_restarts,
                &playback,
                || Playback,
                playback_args,
                ready,
            ),
            tts_spec(&tts, tts_cfg, tts_tx),
            spec(
                "stt",
                true,
                &stt,
                || Stt,
                move || Ok(stt_cfg.clone()),
                ready,
            ),
            spec("listen", true, &listen, || Listen, listen_args, ready),
        ];
        if let (Some(live), Some(config)) = (&wake, wake_cfg) {
            let wake_args = move || {
                Ok(WakeArgs {
                    config: config.clone(),
                    heard: wake_tx.clone(),
                    frames: woken_tx.clone(),
                })
            };
            specs.push(spec("wake", true, live, || Wake, wake_args, ready));
        }
        specs.push(capture_spec(&capture, input, cap_tx));
        let (supervisor, stage_rx) = supervise(specs).await?;
        forward_capture(cap_rx, woken_rx, wake.clone(), listen.clone(), echo_filter);
        let outputs = StageOutputs {
            listen: listen_rx,
            wake: wake.as_ref().map(|_| wake_rx),
            tts: route_tts(tts_rx, playback.clone()),
            playback: fan_out_playback(pb_rx, listen.clone()),
            supervisor: stage_rx,
        };
        let stages = Stages {
            supervisor,
            playback,
            tts,
            stt,
            listen,
            wake,
            capture,
        };
        Ok((stages, outputs))
    }

    /// Stop every stage on purpose (nothing is restarted now); the WAV sink is finalised
    /// when Playback has stopped.
    pub(super) async fn stop(self) {
        let _ = ractor::call!(self.supervisor, SupervisorMsg::Shutdown);
        for cell in [
            self.capture.get().map(|r| r.get_cell()),
            self.wake
                .as_ref()
                .and_then(|w| w.get())
                .map(|r| r.get_cell()),
            self.listen.get().map(|r| r.get_cell()),
            self.tts.get().map(|r| r.get_cell()),
            self.stt.get().map(|r| r.get_cell()),
        ]
        .into_iter()
        .flatten()
        {
            cell.stop(None);
        }
        if let Some(p) = self.playback.get() {
            let _ = p.stop_and_wait(None, None).await;
        }
        self.supervisor.stop(None);
    }
}

/// A stage that needs nothing more once spawned.
fn ready<M: ractor::Message>(_: ActorRef<M>) -> std::future::Ready<Result<(), String>> {
    std::future::ready(Ok(()))
}

/// The Capture stage: its first start takes `input`; a restart reopens the device (a file
/// cannot be opened again: its death ends the run). Started, it starts capturing.
fn capture_spec(
    capture: &Live<CaptureMsg>,
    input: CaptureSource,
    out: mpsc::Sender<Captured>,
) -> StageSpec {
    let device = match &input {
        CaptureSource::Device(spec) => Some(spec.clone()),
        _ => None,
    };
    let restarts = device.is_some();
    let first_source = Arc::new(std::sync::Mutex::new(Some(input)));
    let args = move || {
        let source = first_source
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .or_else(|| device.clone().map(CaptureSource::Device))
            .ok_or("the input cannot be opened again")?;
        Ok(CaptureArgs {
            source,
            out: out.clone(),
        })
    };
    let start = |capture: ActorRef<CaptureMsg>| async move {
        let info = ractor::call!(capture, CaptureMsg::Start)
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        tracing::info!(source = %info.source, rate = info.rate, "listening");
        Ok(())
    };
    spec("capture", restarts, capture, || Capture, args, start)
}

/// A new supervisor with `specs` started under it, and where its reports come; a stage
/// that fails to start stops the ones already running and is the error.
async fn supervise(
    specs: Vec<StageSpec>,
) -> Result<(ActorRef<SupervisorMsg>, mpsc::UnboundedReceiver<StageEvent>), PipelineError> {
    let failed = |e: String| PipelineError::Spawn("supervisor", e);
    let (stage_tx, stage_rx) = mpsc::unbounded_channel();
    let (supervisor, _) = Actor::spawn(None, StageSupervisor, stage_tx)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let started = ractor::call!(supervisor, SupervisorMsg::Start, specs)
        .map_err(|e| failed(e.to_string()))?;
    if let Err((stage, reason)) = started {
        let _ = ractor::call!(supervisor, SupervisorMsg::Shutdown);
        supervisor.stop(None);
        return Err(PipelineError::Spawn(stage, reason));
    }
    Ok((supervisor, stage_rx))
}

/// Capture's frames, through the echo canceller when there is one, to whichever Wake runs
/// now and from it to Listen (with wake words on), or straight to Listen.
fn forward_capture(
    captured: mpsc::Receiver<Captured>,
    woken: mpsc::Receiver<Captured>,
    wake: Option<Live<WakeMsg>>,
    listen: Live<ListenMsg>,
    mut echo_filter: Option<EchoFilter>,
) {
    let to_listen = move |c| {
        if let Some(l) = listen.get() {
            let _ = l.cast(ListenMsg::Captured(c));
        }
    };
    match wake {
        Some(wake) => {
            forward_frames(captured, move |c| {
                let c = cancel_echo(echo_filter.as_mut(), c);
                if let Some(w) = wake.get() {
                    let _ = w.cast(WakeMsg::Captured(c));
                }
            });
            forward_frames(woken, to_listen);
        }
        None => forward_frames(captured, move |c| {
            to_listen(cancel_echo(echo_filter.as_mut(), c));
        }),
    }
}

/// The Tts stage: the voice is loaded in Tts's own start (off the async runtime), so it is
/// spawned by hand rather than through [`spec`].
fn tts_spec(
    tts: &Live<TtsMsg>,
    cfg: VoiceSource,
    events: mpsc::UnboundedSender<TtsEvent>,
) -> StageSpec {
    let tts = tts.clone();
    StageSpec {
        name: "tts",
        restart: true,
        start: Box::new(move |sup| {
            let (tts, cfg, tx) = (tts.clone(), cfg.clone(), events.clone());
            Box::pin(async move {
                let (r, _) = TtsActor::spawn_linked(cfg, tx, sup)
                    .await
                    .map_err(|e| e.to_string())?;
                tts.set(r.clone());
                Ok(r.get_cell())
            })
        }),
    }
}

/// Frames to whichever stage runs now (`to` sends one; while the stage is down restarting,
/// frames are lost as a microphone's would be).
fn forward_frames(
    mut frames: mpsc::Receiver<Captured>,
    mut to: impl FnMut(Captured) + Send + 'static,
) {
    // in the pipeline's span (a satellite's): the stages handle each frame in it
    tokio::spawn(
        async move {
            while let Some(c) = frames.recv().await {
                to(c);
            }
        }
        .in_current_span(),
    );
}

/// A captured frame through the echo canceller, when there is one.
fn cancel_echo(filter: Option<&mut EchoFilter>, c: Captured) -> Captured {
    match (filter, c) {
        (Some(f), Captured::Frame(frame)) => Captured::Frame(f.frame(frame)),
        (_, c) => c,
    }
}

/// Tts's audio to whichever Playback is running now, tagged with its reply, and the rest of
/// Tts's events to the conductor (the returned receiver). Each chunk is in Playback's
/// mailbox before the sentence's end reaches the conductor, so the reply's end, which the
/// conductor sends, never overtakes its audio.
fn route_tts(
    mut events: mpsc::UnboundedReceiver<TtsEvent>,
    playback: Live<PlaybackMsg>,
) -> mpsc::UnboundedReceiver<TtsEvent> {
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    tokio::spawn(
        async move {
            while let Some(e) = events.recv().await {
                let e = match e {
                    TtsEvent::Audio { reply, pcm } => {
                        playback
                            .send("playback", PlaybackMsg::Play { reply, pcm })
                            .await;
                        continue;
                    }
                    e => e,
                };
                if seen_tx.send(e).is_err() {
                    return;
                }
            }
        }
        .in_current_span(),
    );
    seen_rx
}

/// Playback's events to whichever Listen is running now (barge-in gating), and a copy to
/// the conductor (the returned receiver).
fn fan_out_playback(
    mut events: mpsc::UnboundedReceiver<PlaybackEvent>,
    listen: Live<ListenMsg>,
) -> mpsc::UnboundedReceiver<PlaybackEvent> {
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    tokio::spawn(
        async move {
            while let Some(e) = events.recv().await {
                if let Some(l) = listen.get() {
                    let _ = l.cast(ListenMsg::Playback(e.clone()));
                }
                let _ = seen_tx.send(e);
            }
        }
        .in_current_span(),
    );
    seen_rx
}
