//! The Tts actor and its worker thread: sentences in order, one at a time, whatever speaks
//! them (a Piper voice in this process, or a text-to-speech server).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc as std_mpsc, Arc};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc::UnboundedSender;
use tracing::{debug, info, info_span, warn};

use super::{ServerVoice, Synthesis, TtsError, TtsMsg, VoiceInfo, VoiceSource};
use crate::speech::Speakable;
use crate::voice::{Pcm, ReplyId, TtsEvent, REPLY_LEAD_KEEP_SECS};

/// What speaks the sentences.
enum Speaker {
    /// A Piper voice, shared by the pipelines that speak with it.
    #[cfg(feature = "piper")]
    Piper(super::piper::SharedVoice),
    /// A voice on a text-to-speech server.
    Server(ServerVoice),
}

impl Speaker {
    /// The voice `source` names: a Piper voice shared if another pipeline loaded it already,
    /// else loaded off the async runtime; a server's, tried once.
    async fn load(source: VoiceSource) -> Result<Speaker, TtsError> {
        match source {
            #[cfg(feature = "piper")]
            VoiceSource::Piper(cfg) => {
                tokio::task::spawn_blocking(move || super::piper::shared_voice(&cfg))
                    .await
                    .map_err(|e| TtsError::Worker(format!("loading the voice failed: {e}")))?
                    .map(Speaker::Piper)
            }
            #[cfg(not(feature = "piper"))]
            VoiceSource::Piper(_) => Err(TtsError::NoPiper),
            VoiceSource::Server(cfg) => ServerVoice::load(cfg).await.map(Speaker::Server),
        }
    }

    fn info(&self) -> VoiceInfo {
        match self {
            #[cfg(feature = "piper")]
            Speaker::Piper(voice) => voice
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .info()
                .clone(),
            Speaker::Server(voice) => voice.info().clone(),
        }
    }

    /// `text` spoken (blocking).
    fn synthesize(&self, text: &str) -> Result<Synthesis, TtsError> {
        match self {
            #[cfg(feature = "piper")]
            Speaker::Piper(voice) => voice
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .synthesize(text),
            Speaker::Server(voice) => voice.synthesize(text),
        }
    }
}

/// The Tts actor. Spawn it with [`TtsActor::spawn`].
pub struct TtsActor;

/// What the actor is spawned with: a loaded voice (perhaps shared) and where its events
/// go.
pub struct TtsArgs {
    voice: Speaker,
    events: UnboundedSender<TtsEvent>,
}

/// The actor's state: the worker's queue and the cancel epoch.
pub struct TtsState {
    jobs: std_mpsc::Sender<Job>,
    epoch: Arc<AtomicU64>,
    next_index: u64,
    info: VoiceInfo,
}

struct Job {
    /// The reply and the sentence's index in the actor's order; `None`: a sentence
    /// prepared, kept and not sent.
    of: Option<(ReplyId, u64)>,
    epoch: u64,
    text: Speakable,
}

impl TtsActor {
    /// Load the voice (off the async runtime) and spawn the actor; its events go to
    /// `events`. A missing voice file, library or espeak-ng data is an error here.
    pub async fn spawn(
        source: impl Into<VoiceSource>,
        events: UnboundedSender<TtsEvent>,
    ) -> Result<(ActorRef<TtsMsg>, tokio::task::JoinHandle<()>), TtsError> {
        let voice = Speaker::load(source.into()).await?;
        Actor::spawn(None, TtsActor, TtsArgs { voice, events })
            .await
            .map_err(|e| TtsError::Worker(format!("did not start: {e}")))
    }

    /// [`spawn`](Self::spawn), linked to `supervisor` (which hears when it dies).
    pub(crate) async fn spawn_linked(
        source: VoiceSource,
        events: UnboundedSender<TtsEvent>,
        supervisor: ractor::ActorCell,
    ) -> Result<(ActorRef<TtsMsg>, tokio::task::JoinHandle<()>), TtsError> {
        let voice = Speaker::load(source).await?;
        Actor::spawn_linked(None, TtsActor, TtsArgs { voice, events }, supervisor)
            .await
            .map_err(|e| TtsError::Worker(format!("did not start: {e}")))
    }
}

impl Actor for TtsActor {
    type Msg = TtsMsg;
    type State = TtsState;
    type Arguments = TtsArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: TtsArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let (tx, rx) = std_mpsc::channel();
        let epoch = Arc::new(AtomicU64::new(0));
        let info = args.voice.info();
        let worker_epoch = Arc::clone(&epoch);
        std::thread::Builder::new()
            .name("hearth-tts".into())
            .spawn(move || worker(args.voice, rx, worker_epoch, args.events))
            .map_err(|e| TtsError::Worker(format!("cannot be started: {e}")))?;
        info!(rate = info.sample_rate, "tts actor started");
        Ok(TtsState {
            jobs: tx,
            epoch,
            next_index: 0,
            info,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (of, text) = match msg {
            TtsMsg::Speak { reply, sentence } => {
                state.next_index += 1;
                (Some((reply, state.next_index - 1)), sentence)
            }
            TtsMsg::Prepare(sentence) => (None, sentence),
            TtsMsg::Cancel => {
                let e = state.epoch.fetch_add(1, Ordering::SeqCst) + 1;
                debug!(epoch = e, "tts cancel: queued sentences dropped");
                return Ok(());
            }
            TtsMsg::Info(reply) => {
                if reply.send(state.info.clone()).is_err() {
                    debug!("tts info: the caller is gone");
                }
                return Ok(());
            }
        };
        let epoch = state.epoch.load(Ordering::SeqCst);
        if state.jobs.send(Job { of, epoch, text }).is_err() {
            // the worker ends only when its events have no receiver
            warn!("tts worker is gone (no one receives its events): stopping");
            myself.stop(Some("worker gone".into()));
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // drop what is queued; the worker ends when the queue's sender (the state) drops
        state.epoch.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Sentences kept once spoken ([`Recent`]).
const RECENT_SENTENCES: usize = 32;
/// Longer sentences are not kept: a confirmation is short, a chat reply rarely repeats.
const RECENT_CHARS: usize = 80;

/// The sentences spoken lately and their audio: a confirmation said again ("The kitchen
/// light is on.") is played at once, not synthesised again. Bounded: at most
/// [`RECENT_SENTENCES`] of at most [`RECENT_CHARS`] characters (about 5 MB of audio).
struct Recent(crate::bounded::Lru<String, Pcm>);

impl Recent {
    fn new() -> Recent {
        Recent(crate::bounded::Lru::new("tts.recent", RECENT_SENTENCES))
    }

    /// `text` spoken: from the sentences kept, else synthesised (and kept if short).
    /// `first`: the first sentence of a reply, which the model gives way to.
    fn speak(&mut self, voice: &Speaker, text: &str, first: bool) -> Result<Synthesis, TtsError> {
        if let Some(pcm) = self.0.get(text) {
            return Ok(Synthesis {
                pcm: pcm.clone(),
                synth_ms: 0.0,
            });
        }
        // the first sentence is what the listener waits for: the model waits meanwhile
        // (the rest are synthesised while it plays, beside the model, as before)
        let said = {
            let _first = first.then(crate::cpu::speaking);
            voice.synthesize(text)?
        };
        if text.chars().count() <= RECENT_CHARS && !said.pcm.samples.is_empty() {
            self.0.put(text.to_string(), said.pcm.clone());
        }
        Ok(said)
    }

    /// `text` made ready to be spoken: synthesised and kept, unless it is kept already or
    /// too long to keep. Returns the synthesis time (0: nothing to do).
    fn prepare(&mut self, voice: &Speaker, text: &str) -> Result<f64, TtsError> {
        if text.chars().count() > RECENT_CHARS {
            return Ok(0.0);
        }
        self.speak(voice, text, true).map(|s| s.synth_ms)
    }
}

/// The worker thread: one sentence at a time, in order; skips sentences from before the
/// latest cancel, and discards audio that a cancel overtook.
fn worker(
    voice: Speaker,
    jobs: std_mpsc::Receiver<Job>,
    epoch: Arc<AtomicU64>,
    events: UnboundedSender<TtsEvent>,
) {
    let mut recent = Recent::new();
    // the reply of the last sentence synthesised: one of another reply begins it
    let mut last_reply: Option<ReplyId> = None;
    while let Ok(job) = jobs.recv() {
        if job.epoch != epoch.load(Ordering::SeqCst) {
            debug!(of = ?job.of, "cancelled sentence dropped");
            continue;
        }
        let Some((reply, index)) = job.of else {
            match recent.prepare(&voice, job.text.as_str()) {
                Ok(synth_ms) => debug!(synth_ms, "sentence prepared"),
                Err(e) => debug!(error = %e, "sentence not prepared"),
            }
            continue;
        };
        let chars = job.text.as_str().chars().count();
        let span = info_span!(
            "tts_sentence",
            index,
            chars,
            synth_ms = tracing::field::Empty,
            audio_secs = tracing::field::Empty,
            rtf = tracing::field::Empty,
        );
        let _enter = span.enter();
        let first = last_reply != Some(reply);
        last_reply = Some(reply);
        let result = recent.speak(&voice, job.text.as_str(), first);
        if job.epoch != epoch.load(Ordering::SeqCst) {
            debug!("cancelled while synthesising: audio discarded");
            continue;
        }
        let sent = match result {
            Ok(mut s) => {
                if first {
                    s.pcm = s.pcm.without_leading_silence(REPLY_LEAD_KEEP_SECS);
                }
                let audio_secs = s.pcm.secs();
                let lead_ms = s.pcm.leading_silence_secs() * 1e3;
                let rtf = s.rtf();
                span.record("synth_ms", s.synth_ms);
                span.record("audio_secs", audio_secs);
                span.record("rtf", rtf);
                info!(
                    synth_ms = s.synth_ms,
                    audio_secs, rtf, "sentence synthesised"
                );
                let audio_ok = s.pcm.samples.is_empty()
                    || events.send(TtsEvent::Audio { reply, pcm: s.pcm }).is_ok();
                audio_ok
                    && events
                        .send(TtsEvent::SentenceDone {
                            reply,
                            index,
                            chars,
                            audio_secs,
                            synth_ms: s.synth_ms,
                            lead_ms,
                        })
                        .is_ok()
            }
            Err(e) => {
                warn!(error = %e, "sentence not synthesised");
                events
                    .send(TtsEvent::Failed {
                        reply,
                        index,
                        error: e.to_string(),
                    })
                    .is_ok()
            }
        };
        if !sent {
            debug!("tts events have no receiver: worker ends");
            return;
        }
    }
    debug!("tts queue closed: worker ends");
}
