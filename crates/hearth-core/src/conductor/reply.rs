//! A reply under way: the agent's turn, its sentences to Tts, its playback, and the check of
//! short speech over it for "stop". [`Reply`] wraps its [`Progress`] with what
//! belongs to this reply only (its id, its agent job, its stop check) and answers through
//! the [`Outbox`]; whatever concerns more than the reply (wake words, barge-in policy, what
//! is said meanwhile) the conductor decides.

use std::time::Instant;

use super::io::{Action, Job, Outbox};
use super::progress::{Next, Progress};
use super::report::VoiceTurn;
use super::stop;
use crate::agent::Turn;
use crate::logs::TRANSCRIPT;
use crate::speech::Speakable;
use crate::voice::Hold;
use crate::voice::TtsEvent;
use crate::voice::{Heard, PlaybackEvent, ReplyId, Utterance};

/// Speech during a reply being recognised, to see whether it is "stop".
struct StopCheck {
    job: Job,
    /// The speech checked: its start and end on the input clock.
    speech: (u64, u64),
    /// When the speech ended (wall clock): the stop's latency starts here.
    speech_ended: Instant,
}

/// What the turn heard and when, for its report.
pub(super) struct Asked {
    /// The request.
    pub(super) heard: String,
    /// The recogniser's phrase pass, if it held the transcript to the house's phrases.
    pub(super) phrase_pass: Option<wyoming::PhrasePass>,
    /// The utterance on the input clock, seconds.
    pub(super) span: (f64, f64),
    /// The agent's turn, and when it was asked.
    pub(super) job: Job,
    pub(super) at: Instant,
}

/// A reply being generated, synthesised and played.
pub(super) struct Reply {
    id: ReplyId,
    asked: Asked,
    state: Progress,
    stop_check: Option<StopCheck>,
    /// The turn's span: the reply's logs are in it.
    pub(super) trace: tracing::Span,
}

impl Reply {
    pub(super) fn new(asked: Asked, state: Progress) -> Reply {
        let trace = tracing::info_span!("voice_turn", chars = asked.heard.chars().count());
        tracing::info!(target: TRANSCRIPT, parent: &trace, heard = %asked.heard, "the request");
        Reply {
            id: ReplyId::fresh(),
            asked,
            state,
            stop_check: None,
            trace,
        }
    }

    /// Whether `job` is this reply's agent turn.
    pub(super) fn is_of(&self, job: Job) -> bool {
        self.asked.job == job
    }

    /// The reply was stopped (a barge-in, a wake word, "stop", shutdown).
    pub(super) fn interrupted(&self) -> bool {
        self.state.interrupted()
    }

    /// A settled sentence from the agent goes to Tts; `None`: there are no more.
    pub(super) fn on_sentence(&mut self, sentence: Option<Speakable>, out: &mut Outbox) {
        if let Some(sentence) = self.state.on_sentence(sentence) {
            let reply = self.id;
            out.push(Action::Speak { reply, sentence });
        }
    }

    /// The agent's turn has ended.
    pub(super) fn on_answer(&mut self, turn: Result<Turn, String>) {
        self.state.on_result(turn);
    }

    /// Tts finished (or failed) one of this reply's sentences; another reply's is ignored.
    pub(super) fn on_tts(&mut self, e: TtsEvent, now: Instant) {
        match e {
            TtsEvent::SentenceDone {
                reply,
                audio_secs,
                lead_ms,
                ..
            } if reply == self.id => self.state.on_sentence_done(audio_secs, lead_ms, now),
            TtsEvent::Failed {
                reply,
                index,
                error,
            } if reply == self.id => {
                tracing::warn!(index, %error, "a sentence could not be spoken");
                self.state.on_sentence_done(0.0, 0.0, now);
            }
            _ => {}
        }
    }

    /// Playback's news; true when the reply's first sound is out (hearth is speaking).
    pub(super) fn on_playback(&mut self, e: PlaybackEvent) -> bool {
        self.state.on_playback(self.id, e)
    }

    /// A stage restarted mid-reply and lost its part of it.
    pub(super) fn on_stage_died(&mut self, stage: &str) {
        self.state.on_stage_died(stage);
    }

    /// Stop what is said, synthesised and generated (once).
    pub(super) fn stop(&mut self, out: &mut Outbox) {
        if !self.state.interrupted() {
            out.push(Action::StopReply(self.id));
            self.state.on_barge_in();
        }
    }

    /// Recognise `u` (short speech over the reply) to see whether it is "stop"; a later
    /// pause with nothing more said leaves the check under way.
    pub(super) fn check_for_stop(&mut self, u: Utterance, out: &mut Outbox) {
        let speech = (u.start, u.speech_end);
        if self.stop_check.as_ref().is_some_and(|c| c.speech == speech) {
            return;
        }
        if let Some(old) = self.stop_check.take() {
            out.push(Action::Abort(old.job));
        }
        let speech_ended = u.wall_time(u.speech_end);
        let job = out.recognise(u, Hold::Open);
        self.stop_check = Some(StopCheck {
            job,
            speech,
            speech_ended,
        });
    }

    /// The stop check's job, while it runs.
    pub(super) fn stop_check(&self) -> Option<Job> {
        self.stop_check.as_ref().map(|c| c.job)
    }

    /// The stop check heard `heard`: "stop" stops the reply.
    pub(super) fn stop_checked(
        &mut self,
        heard: Result<Heard, String>,
        now: Instant,
        out: &mut Outbox,
    ) {
        let (Ok(h), Some(check)) = (heard, self.stop_check.take()) else {
            return;
        };
        if stop::means_stop(&h.text) && !self.state.interrupted() {
            let after_speech_ms = now.saturating_duration_since(check.speech_ended);
            let after_speech_ms = after_speech_ms.as_secs_f64() * 1e3;
            tracing::info!(after_speech_ms, "stop: the reply is stopped");
            self.stop(out);
        }
    }

    /// What the reply needs now; true when it is over.
    pub(super) fn step(&mut self, out: &mut Outbox) -> bool {
        loop {
            match self.state.next() {
                Next::Done => return true,
                Next::EndOfReply => out.push(Action::EndOfReply(self.id)),
                Next::Wait => return false,
            }
        }
    }

    /// The turn as `hearth run` reports it.
    pub(super) fn finish(self, out: &mut Outbox) -> VoiceTurn {
        if let Some(check) = self.stop_check {
            out.push(Action::Abort(check.job));
        }
        let Asked {
            heard,
            phrase_pass,
            span,
            at,
            ..
        } = self.asked;
        let mut t = self.state.finish(heard, at, span);
        t.phrase_pass = phrase_pass;
        t
    }
}
