//! The voice pipeline: wires Capture → Listen → Stt → Agent → Tts → Playback around a
//! running text runtime (engine, tools, agent), and runs the turns. Only this module and
//! `supervisor` know the graph; the stages only know the types of `voice`.
//!
//! ```text
//! Capture ─Captured─► [fwd] ─► Listen ─ListenEvent─► turn loop ─► Stt ─Heard─► Agent
//!                                 ▲                      │ BargeIn: Playback Stop, Tts Cancel, Agent Cancel
//!            PlaybackEvent ◄──────┴── Playback ◄─Pcm─ Tts ◄─Speakable─┘
//! ```
//!
//! Turns run one at a time; an utterance that arrives during a turn is queued and answered
//! after it (a barge-in cancels the turn first, so its speech is answered next). Each turn logs its stage timings (see [`TurnTimings`]).
//!
//! Recognition starts early: when Listen reports a pause (`early_ms` of silence), the
//! speech so far goes to Stt while the endpointer waits out its hangover; if the utterance
//! then ends with nothing more said, that transcript is used and the hangover has hidden
//! the recognition time.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorRef, ActorStatus};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::agent::{self, AgentMsg, Ask, Turn};
use crate::audio::listen::{Listen, ListenArgs, ListenConfig, ListenMsg};
use crate::audio::{
    Capture, CaptureArgs, CaptureMsg, CaptureSource, Playback, PlaybackArgs, PlaybackMsg,
    PlaybackSink,
};
use crate::stt::{self, Stt, SttConfig, SttError, SttMsg};
use crate::supervisor::{StageEvent, StageSpec, StageSupervisor, SupervisorMsg};
use crate::tts::{TtsActor, TtsConfig, TtsEvent, TtsMsg};
use crate::voice::{Heard, ListenEvent, PlaybackEvent, Utterance, SAMPLE_RATE};

/// What the voice pipeline needs besides the text runtime.
pub struct VoiceOptions {
    /// Where the audio comes from.
    pub input: CaptureSource,
    /// Where the replies go.
    pub output: PlaybackSink,
    /// The recogniser.
    pub stt: SttConfig,
    /// The voice.
    pub tts: TtsConfig,
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
}

/// How long a spoken request waits for a turn already running (a D-Bus `Ask`).
pub const BUSY_WAIT: Duration = Duration::from_secs(30);

/// The default [`VoiceOptions::conversation_idle`]: two minutes.
pub const CONVERSATION_IDLE: Duration = Duration::from_secs(120);

/// Stage timings of one turn, ms from the end of speech in the input (the endpointer's
/// decision minus its hangover is where the speech ended).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TurnTimings {
    /// End of speech → the endpoint decided (the hangover, on the input clock).
    pub endpoint: f64,
    /// Speech recognition: the recogniser's own time.
    pub stt: f64,
    /// Speech recognition after the endpoint: the wait for the transcript (less than `stt`
    /// when recognition started at a pause, before the hangover was over).
    pub stt_wait: f64,
    /// End of speech → the model's first token (of the turn's first hop).
    pub first_token: Option<f64>,
    /// End of speech → the first executed tool finished.
    pub tool_done: Option<f64>,
    /// End of speech → the first TTS audio chunk.
    pub first_tts_chunk: Option<f64>,
    /// End of speech → the first reply sample reached the output.
    pub first_audio: Option<f64>,
    /// End of speech → the first audible reply sample reached the output (`first_audio`
    /// plus the voice's leading silence).
    pub first_voice: Option<f64>,
}

/// One voice turn, as `hearth run` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VoiceTurn {
    /// What was heard.
    pub heard: String,
    /// The agent's turn (reply, hops, calls).
    pub turn: Option<Turn>,
    /// Why the turn failed, if it did.
    pub error: Option<String>,
    /// The user spoke over the reply (barge-in): its playback was stopped and what was
    /// still being generated or synthesised was cancelled.
    pub interrupted: bool,
    /// Stage timings.
    pub timings_ms: TurnTimings,
    /// Where the utterance began in the input, seconds on the input clock (the first sample
    /// Listen kept, its pre-roll included).
    pub start_s: f64,
    /// Where its speech ended in the input, seconds on the input clock (before the hangover).
    pub end_s: f64,
}

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

/// Recognition started at a pause: the utterance's `start` and `speech_end`, and the task.
type Early = (u64, u64, JoinHandle<Result<Heard, SttError>>);

/// How long a message to a stage that is down waits for its restart.
const RESTART_WAIT: Duration = Duration::from_secs(10);

/// The current address of a supervised stage: replaced when the stage restarts.
struct Live<M: ractor::Message>(Arc<watch::Sender<Option<ActorRef<M>>>>);

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

    fn get(&self) -> Option<ActorRef<M>> {
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
    async fn send(&self, stage: &'static str, msg: M) -> bool {
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
fn stage_event(
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
async fn transcribe(stt: &Live<SttMsg>, u: Utterance) -> Result<Heard, SttError> {
    match stt.up().await {
        Some(r) => stt::transcribe(&r, u).await,
        None => Err(SttError::Actor(
            "the speech recognition stage is down and did not come back".into(),
        )),
    }
}

/// Run the voice pipeline until the input ends (`once`) or forever. Returns the turns.
pub async fn run(
    agent: ActorRef<AgentMsg>,
    opts: VoiceOptions,
    on_turn: impl Fn(&VoiceTurn),
) -> Result<Vec<VoiceTurn>, PipelineError> {
    let (pb_tx, mut pb_rx) = mpsc::unbounded_channel();
    let (tts_tx, mut tts_rx) = mpsc::unbounded_channel();
    let (listen_tx, mut listen_rx) = mpsc::unbounded_channel();
    let (cap_tx, mut cap_rx) = mpsc::channel(64);
    let playback: Live<PlaybackMsg> = Live::new();
    let tts: Live<TtsMsg> = Live::new();
    let stt_actor: Live<SttMsg> = Live::new();
    let listen: Live<ListenMsg> = Live::new();
    let capture: Live<CaptureMsg> = Live::new();

    // The stages, in start order: Playback, Tts feeding it, Stt, Listen, Capture feeding it.
    // A device can be opened again after a failure; a file would start over, so a file
    // input or output that dies ends the run instead.
    let sink = opts.output;
    let sink_restarts = matches!(sink, PlaybackSink::Device(_));
    let tts_cfg = opts.tts;
    // the voice is loaded in Tts's own start (off the async runtime), so its stage is spawned
    // by hand rather than through `spec`
    let tts_stage = {
        let tts = tts.clone();
        StageSpec {
            name: "tts",
            restart: true,
            start: Box::new(move |sup| {
                let (tts, cfg, tx) = (tts.clone(), tts_cfg.clone(), tts_tx.clone());
                Box::pin(async move {
                    let (r, _) = TtsActor::spawn_linked(cfg, tx, sup)
                        .await
                        .map_err(|e| e.to_string())?;
                    tts.set(r.clone());
                    Ok(r.get_cell())
                })
            }),
        }
    };
    let stt_cfg = opts.stt;
    let listen_cfg = opts.listen;
    let device = match &opts.input {
        CaptureSource::Device(spec) => Some(spec.clone()),
        _ => None,
    };
    let first_source = Arc::new(std::sync::Mutex::new(Some(opts.input)));
    let stages = vec![
        spec(
            "playback",
            sink_restarts,
            &playback,
            || Playback,
            move || {
                Ok(PlaybackArgs {
                    sink: sink.clone(),
                    events: pb_tx.clone(),
                })
            },
            |_| async { Ok(()) },
        ),
        tts_stage,
        spec(
            "stt",
            true,
            &stt_actor,
            || Stt,
            move || Ok(stt_cfg.clone()),
            |_| async { Ok(()) },
        ),
        spec(
            "listen",
            true,
            &listen,
            || Listen,
            move || {
                Ok(ListenArgs {
                    config: listen_cfg.clone(),
                    events: listen_tx.clone(),
                })
            },
            |_| async { Ok(()) },
        ),
        spec(
            "capture",
            device.is_some(),
            &capture,
            || Capture,
            move || {
                // the first start takes the source; a restart reopens the device
                let source = first_source
                    .lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .or_else(|| device.clone().map(CaptureSource::Device))
                    .ok_or("the input cannot be opened again")?;
                Ok(CaptureArgs {
                    source,
                    out: cap_tx.clone(),
                })
            },
            |capture: ActorRef<CaptureMsg>| async move {
                let info = ractor::call!(capture, CaptureMsg::Start)
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())?;
                tracing::info!(source = %info.source, rate = info.rate, "listening");
                Ok(())
            },
        ),
    ];
    let (stage_tx, mut stage_rx) = mpsc::unbounded_channel();
    let (supervisor, _) = Actor::spawn(None, StageSupervisor, stage_tx)
        .await
        .map_err(|e| PipelineError::Spawn("supervisor", e.to_string()))?;
    let started = ractor::call!(supervisor, SupervisorMsg::Start, stages)
        .map_err(|e| PipelineError::Spawn("supervisor", e.to_string()))?;
    if let Err((stage, reason)) = started {
        let _ = ractor::call!(supervisor, SupervisorMsg::Shutdown);
        supervisor.stop(None);
        return Err(PipelineError::Spawn(stage, reason));
    }

    // Capture's frames go to Listen; Playback's events to Listen (barge-in gating) and to
    // the turn loop. Whichever Listen is running now.
    {
        let listen = listen.clone();
        tokio::spawn(async move {
            while let Some(c) = cap_rx.recv().await {
                if let Some(l) = listen.get() {
                    let _ = l.cast(ListenMsg::Captured(c));
                }
            }
        });
    }
    let (pb_seen_tx, mut pb_seen) = mpsc::unbounded_channel::<PlaybackEvent>();
    {
        let listen = listen.clone();
        tokio::spawn(async move {
            while let Some(e) = pb_rx.recv().await {
                if let Some(l) = listen.get() {
                    let _ = l.cast(ListenMsg::Playback(e.clone()));
                }
                let _ = pb_seen_tx.send(e);
            }
        });
    }

    let publish = |event| crate::events::publish(opts.bus_events.as_ref(), event);
    let activity = |activity| publish(crate::events::Event::Activity { activity });
    let muted = || opts.muted.load(std::sync::atomic::Ordering::SeqCst);
    activity(crate::events::Activity::Listening);
    let mut turns = Vec::new();
    // a stage that died for good ends the run with this
    let mut failure: Option<PipelineError> = None;
    // the agent session of the current conversation, and when its last turn ended
    let mut conversation = 0u64;
    let mut last_turn_end: Option<Instant> = None;
    // recognition started at a pause, before the endpoint: (start, speech_end) and the task
    let mut early: Option<Early> = None;
    let mut ended = false;
    let mut listen_open = true;
    // utterances that arrived during a turn (e.g. the speech of a barge-in): answered next
    let mut pending: VecDeque<Utterance> = VecDeque::new();
    loop {
        let utterance = if let Some(u) = pending.pop_front() {
            u
        } else {
            if ended || !listen_open {
                break;
            }
            let next = tokio::select! {
                l = listen_rx.recv() => l,
                Some(e) = stage_rx.recv() => {
                    if let Err(e) = stage_event(e, opts.events.as_ref()) {
                        failure = Some(e);
                        break;
                    }
                    continue;
                }
            };
            match next {
                Some(ListenEvent::Utterance(_) | ListenEvent::Pause(_)) if muted() => {
                    tracing::debug!("muted: an utterance is dropped unheard");
                    continue;
                }
                Some(ListenEvent::Utterance(u)) => u,
                Some(ListenEvent::Pause(u)) => {
                    // recognise what was said so far while the hangover runs; a pause
                    // that speech resumes after is superseded by the next one
                    if let Some((_, _, task)) = early.take() {
                        task.abort();
                    }
                    let (start, end) = (u.start, u.speech_end);
                    let stt_actor = stt_actor.clone();
                    let task = tokio::spawn(async move { transcribe(&stt_actor, u).await });
                    early = Some((start, end, task));
                    continue;
                }
                Some(ListenEvent::End) => {
                    ended = opts.once;
                    continue;
                }
                // nothing speaks between turns; during a turn a barge-in is handled below
                Some(ListenEvent::BargeIn { .. } | ListenEvent::SpeechStarted { .. }) => continue,
                None => break,
            }
        };
        // The speech ended `hangover` before the endpoint: that is the latency's zero.
        let hangover_s = (utterance.start + utterance.samples.len() as u64)
            .saturating_sub(utterance.speech_end) as f64
            / f64::from(SAMPLE_RATE);
        let endpoint_ms = hangover_s * 1e3;
        let on_input_clock = |i: u64| i as f64 / f64::from(SAMPLE_RATE);
        let (start_s, end_s) = (
            on_input_clock(utterance.start),
            on_input_clock(utterance.speech_end),
        );
        let zero = utterance.endpointed_at;
        let since_speech =
            |t: Instant| t.saturating_duration_since(zero).as_secs_f64() * 1e3 + endpoint_ms;

        // the early recognition is this utterance's if nothing was said after the pause
        let early_heard = match early.take() {
            Some((start, end, task)) if (start, end) == (utterance.start, utterance.speech_end) => {
                match task.await {
                    Ok(Ok(h)) => Some(h),
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "early recognition failed; recognising the utterance");
                        None
                    }
                    Err(_) => None,
                }
            }
            Some((_, _, task)) => {
                task.abort();
                None
            }
            None => None,
        };
        let heard = match early_heard {
            Some(h) => Ok(h),
            None => transcribe(&stt_actor, utterance).await,
        };
        let stt_wait_ms = since_speech(Instant::now()) - endpoint_ms;
        let heard = match heard {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, "speech recognition failed; the utterance is lost");
                let t = VoiceTurn {
                    heard: String::new(),
                    turn: None,
                    error: Some(e.to_string()),
                    interrupted: false,
                    timings_ms: TurnTimings {
                        endpoint: endpoint_ms,
                        ..Default::default()
                    },
                    start_s,
                    end_s,
                };
                on_turn(&t);
                turns.push(t);
                continue;
            }
        };
        let mut timings = TurnTimings {
            endpoint: endpoint_ms,
            stt: heard.stt_ms,
            stt_wait: stt_wait_ms,
            ..Default::default()
        };
        if heard.text.is_empty() {
            tracing::info!("heard nothing");
            continue;
        }
        publish(crate::events::Event::Heard {
            text: heard.text.clone(),
        });
        activity(crate::events::Activity::Thinking);
        let span = tracing::info_span!("voice_turn", heard = %heard.text);
        let _enter = span.enter();
        let asked_at = Instant::now();

        // The turn: sentences go to Tts as they are settled; audio to Playback.
        let (speak_tx, mut speak_rx) = mpsc::unbounded_channel();
        if last_turn_end.is_some_and(|t| t.elapsed() >= opts.conversation_idle) {
            conversation += 1;
        }
        let session = format!("voice-{conversation}");
        let text = heard.text.clone();
        let agent_ref = agent.clone();
        // a D-Bus Ask may hold the agent: the spoken request waits for it rather than being lost
        let mut turn_task = tokio::spawn(async move {
            let make = || {
                let mut ask = Ask::new(session.clone(), text.clone());
                ask.speak = Some(speak_tx.clone());
                ask
            };
            agent::ask_when_free(&agent_ref, make, BUSY_WAIT).await
        });
        let mut sentences = 0u64;
        let mut done_sentences = 0u64;
        let mut turn_result = None;
        let mut speak_open = true;
        let mut interrupted = false;
        let mut audio_sent = false;
        // the first chunk's silence before its first audible sample
        let mut lead_ms: Option<f64> = None;
        // EndOfReply sent to Playback; Playback said the reply has finished playing
        let mut end_sent = false;
        let mut played = false;
        // The turn lasts until its reply has finished playing: a barge-in during the last
        // sentence must stop it as it does during the first.
        loop {
            let generated = turn_result.is_some() && !speak_open && done_sentences >= sentences;
            if generated && !interrupted && audio_sent && !end_sent {
                playback.send("playback", PlaybackMsg::EndOfReply).await;
                end_sent = true;
            }
            if generated && (interrupted || !audio_sent || played) {
                break;
            }
            tokio::select! {
                r = &mut turn_task, if turn_result.is_none() => {
                    turn_result = Some(match r {
                        Ok(r) => r.map_err(|e| e.to_string()),
                        Err(e) => Err(format!("the turn task failed: {e}")),
                    });
                }
                s = speak_rx.recv(), if speak_open => match s {
                    Some(sentence) => {
                        sentences += 1;
                        tts.send("tts", TtsMsg::Speak(sentence)).await;
                    }
                    None => speak_open = false,
                },
                e = tts_rx.recv() => match e {
                    Some(TtsEvent::Audio(pcm)) => {
                        timings.first_tts_chunk.get_or_insert_with(|| since_speech(Instant::now()));
                        let pcm = if lead_ms.is_none() {
                            pcm.without_leading_silence(crate::voice::REPLY_LEAD_KEEP_SECS)
                        } else {
                            pcm
                        };
                        lead_ms.get_or_insert_with(|| pcm.leading_silence_secs() * 1e3);
                        // Playback ignores an empty chunk: only real samples make a reply
                        // whose end is waited for
                        audio_sent |= !pcm.samples.is_empty();
                        playback.send("playback", PlaybackMsg::Play(pcm)).await;
                    }
                    Some(TtsEvent::SentenceDone { .. }) => done_sentences += 1,
                    Some(TtsEvent::Failed { index, error }) => {
                        tracing::warn!(index, error = %error, "a sentence could not be spoken");
                        done_sentences += 1;
                    }
                    None => break,
                },
                Some(e) = pb_seen.recv() => match e {
                    PlaybackEvent::Started { at } => {
                        if timings.first_audio.is_none() {
                            tracing::info!("speaking");
                            activity(crate::events::Activity::Speaking);
                        }
                        timings.first_audio.get_or_insert_with(|| since_speech(at));
                    }
                    // the end of the reply (after EndOfReply): a Stop's own Stopped is not
                    // waited for
                    PlaybackEvent::Stopped { interrupted: false, .. } => played = end_sent,
                    PlaybackEvent::Stopped { interrupted: true, .. } => {}
                    PlaybackEvent::Level { .. } => {}
                },
                Some(e) = stage_rx.recv() => {
                    let died = match &e {
                        StageEvent::Died { stage, .. } => Some(*stage),
                        _ => None,
                    };
                    if let Err(e) = stage_event(e, opts.events.as_ref()) {
                        // the turn cannot finish: stop waiting for it
                        let _ = agent.cast(AgentMsg::Cancel);
                        failure = Some(e);
                        break;
                    }
                    // a stage restarting mid-reply lost its part of it: stop waiting for that
                    match died {
                        Some("tts") => done_sentences = sentences,
                        Some("playback") => played = true,
                        _ => {}
                    }
                }
                l = listen_rx.recv(), if listen_open => match l {
                    Some(ListenEvent::BargeIn { .. }) => {
                        tracing::info!("barge-in: stopping the reply");
                        // a stage that is down has nothing to stop
                        if let Some(p) = playback.get() {
                            let _ = p.cast(PlaybackMsg::Stop);
                        }
                        if let Some(t) = tts.get() {
                            let _ = t.cast(TtsMsg::Cancel);
                        }
                        let _ = agent.cast(AgentMsg::Cancel);
                        interrupted = true;
                        // what was queued for Tts is gone: stop waiting for it
                        done_sentences = sentences;
                    }
                    Some(ListenEvent::End) => ended = opts.once,
                    Some(ListenEvent::Utterance(u)) => pending.push_back(u),
                    // recognised once it is an utterance, after this turn
                    Some(ListenEvent::SpeechStarted { .. } | ListenEvent::Pause(_)) => {}
                    None => listen_open = false,
                },
            }
            if interrupted {
                done_sentences = sentences;
            }
        }
        let (turn, error) = match turn_result {
            Some(Ok(t)) => (Some(t), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, Some("the turn did not finish".into())),
        };
        if let Some(t) = &turn {
            timings.first_token = t
                .hops
                .first()
                .map(|h| since_speech(asked_at) + h.stats.first_token_ms);
            timings.tool_done = t
                .timings_ms
                .text_to_tool
                .map(|to_tool| since_speech(asked_at) + to_tool);
        }
        timings.first_voice = timings
            .first_audio
            .zip(lead_ms)
            .map(|(first, lead)| first + lead);
        let t = VoiceTurn {
            heard: heard.text,
            turn,
            error,
            interrupted,
            timings_ms: timings,
            start_s,
            end_s,
        };
        last_turn_end = Some(Instant::now());
        tracing::info!(timings = ?t.timings_ms, "turn done");
        activity(crate::events::Activity::Listening);
        on_turn(&t);
        turns.push(t);
    }

    // stopping the stages on purpose: nothing is restarted now
    let _ = ractor::call!(supervisor, SupervisorMsg::Shutdown);
    for cell in [
        capture.get().map(|r| r.get_cell()),
        listen.get().map(|r| r.get_cell()),
        tts.get().map(|r| r.get_cell()),
        stt_actor.get().map(|r| r.get_cell()),
    ]
    .into_iter()
    .flatten()
    {
        cell.stop(None);
    }
    // the WAV sink is finalised when Playback stops
    if let Some(p) = playback.get() {
        let _ = p.stop_and_wait(None, None).await;
    }
    supervisor.stop(None);
    match failure {
        Some(e) => Err(e),
        None => Ok(turns),
    }
}
