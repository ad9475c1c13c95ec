//! How far a reply has got as it is generated, synthesised and played: [`Progress`] takes
//! each event the conductor receives about the reply (`on_result`, `on_sentence`,
//! `on_sentence_done`, `on_playback`, `on_barge_in`, `on_stage_died`) and says what to do
//! next ([`Next`]). It holds no addresses and sends nothing: the conductor does what it
//! returns.
//!
//! A turn lasts until its reply has finished playing, so that a barge-in during the last
//! sentence stops it as it does during the first.

use std::time::Instant;

use super::report::{TurnTimings, VoiceTurn};
use crate::agent::Turn;
use crate::speech::Speakable;
use crate::voice::{PlaybackEvent, ReplyId};

/// The turn's time zero: the end of speech in the input, `endpoint_ms` before the endpoint
/// was decided at `endpointed_at`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) endpointed_at: Instant,
    pub(super) endpoint_ms: f64,
}

impl Clock {
    /// Milliseconds from the end of speech to `t` (a speculative turn is asked before the
    /// endpoint: `t` may come before it).
    pub(super) fn since_speech(&self, t: Instant) -> f64 {
        let after = t.saturating_duration_since(self.endpointed_at);
        let before = self.endpointed_at.saturating_duration_since(t);
        (after.as_secs_f64() - before.as_secs_f64()) * 1e3 + self.endpoint_ms
    }
}

/// What the conductor does next for the turn.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Wait for the next event.
    Wait,
    /// Everything is generated and sent: tell Playback the reply ends here, then wait for
    /// it to finish playing.
    EndOfReply,
    /// The turn is over.
    Done,
}

/// A reply in progress: how many sentences went to Tts and came back, whether the agent has
/// finished, whether the reply has played out or was interrupted, and the stage timings.
pub(super) struct Progress {
    clock: Clock,
    /// sentences sent to Tts, and those it has finished (or lost)
    sentences: u64,
    done_sentences: u64,
    /// the agent's turn, once it has ended
    result: Option<Result<Turn, String>>,
    /// the agent may still send sentences
    speak_open: bool,
    /// the user spoke over the reply
    interrupted: bool,
    /// a sentence with real samples went to Playback
    audio_sent: bool,
    /// the first such sentence's silence before its first audible sample
    lead_ms: Option<f64>,
    /// EndOfReply was sent; Playback said the reply has finished playing
    end_sent: bool,
    played: bool,
    timings: TurnTimings,
}

impl Progress {
    /// A turn whose recognition is done (`timings` holds the endpoint and STT times).
    pub(super) fn new(clock: Clock, timings: TurnTimings) -> Self {
        Progress {
            clock,
            sentences: 0,
            done_sentences: 0,
            result: None,
            speak_open: true,
            interrupted: false,
            audio_sent: false,
            lead_ms: None,
            end_sent: false,
            played: false,
            timings,
        }
    }

    /// The reply was stopped (a barge-in, a wake word, shutdown).
    pub(super) fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// What to do now.
    pub(super) fn next(&mut self) -> Next {
        if self.interrupted {
            // what was queued for Tts is gone: nothing more to wait for from it
            self.done_sentences = self.sentences;
        }
        let generated =
            self.result.is_some() && !self.speak_open && self.done_sentences >= self.sentences;
        if !generated {
            return Next::Wait;
        }
        if self.interrupted || !self.audio_sent || self.played {
            return Next::Done;
        }
        if !self.end_sent {
            self.end_sent = true;
            return Next::EndOfReply;
        }
        Next::Wait
    }

    /// The agent's turn ended (or failed: why).
    pub(super) fn on_result(&mut self, r: Result<Turn, String>) {
        self.result = Some(r);
    }

    /// A settled sentence from the agent, to be spoken (returned), or the end of them.
    pub(super) fn on_sentence(&mut self, s: Option<Speakable>) -> Option<Speakable> {
        match s {
            Some(sentence) => {
                self.sentences += 1;
                Some(sentence)
            }
            None => {
                self.speak_open = false;
                None
            }
        }
    }

    /// Tts finished a sentence at `now` (its audio, `audio_secs` long with `lead_ms` of
    /// silence before its voice, went to Playback just before), or could not speak it (no
    /// audio).
    pub(super) fn on_sentence_done(&mut self, audio_secs: f64, lead_ms: f64, now: Instant) {
        self.done_sentences += 1;
        // only real samples make a reply whose end Playback reports
        if audio_secs <= 0.0 {
            return;
        }
        let clock = self.clock;
        self.timings
            .first_tts_chunk
            .get_or_insert_with(|| clock.since_speech(now));
        self.lead_ms.get_or_insert(lead_ms);
        self.audio_sent = true;
    }

    /// An event from Playback about `reply` (this turn's: another's is ignored); true when
    /// it is the reply's first sound (hearth is now speaking).
    pub(super) fn on_playback(&mut self, reply: ReplyId, e: PlaybackEvent) -> bool {
        match e {
            PlaybackEvent::Started { reply: r, .. } | PlaybackEvent::Stopped { reply: r, .. }
                if r != reply =>
            {
                false
            }
            PlaybackEvent::Started { at, .. } => {
                let first = self.timings.first_audio.is_none();
                let clock = self.clock;
                self.timings
                    .first_audio
                    .get_or_insert_with(|| clock.since_speech(at));
                first
            }
            // the end of the reply (after EndOfReply): a Stop's own Stopped is not waited for
            PlaybackEvent::Stopped {
                interrupted: false, ..
            } => {
                self.played = self.end_sent;
                false
            }
            PlaybackEvent::Stopped {
                interrupted: true, ..
            }
            | PlaybackEvent::Level { .. } => false,
        }
    }

    /// The user spoke over the reply: it is stopped, and what Tts had queued is gone.
    pub(super) fn on_barge_in(&mut self) {
        self.interrupted = true;
        self.done_sentences = self.sentences;
    }

    /// A stage restarted mid-reply and lost its part of it: stop waiting for that.
    pub(super) fn on_stage_died(&mut self, stage: &str) {
        match stage {
            "tts" => self.done_sentences = self.sentences,
            "playback" => self.played = true,
            _ => {}
        }
    }

    /// The turn as `hearth run` reports it. `asked_at`: when the agent was asked.
    pub(super) fn finish(
        self,
        heard: String,
        asked_at: Instant,
        (start_s, end_s): (f64, f64),
    ) -> VoiceTurn {
        let mut timings = self.timings;
        let (turn, error) = match self.result {
            Some(Ok(t)) => (Some(t), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, Some("the turn did not finish".into())),
        };
        let asked = self.clock.since_speech(asked_at);
        if let Some(t) = &turn {
            timings.first_token = t.hops.first().map(|h| asked + h.stats.first_token_ms);
            timings.tool_done = t.timings_ms.text_to_tool.map(|to_tool| asked + to_tool);
        }
        timings.first_voice = timings
            .first_audio
            .zip(self.lead_ms)
            .map(|(first, lead)| first + lead);
        VoiceTurn {
            heard,
            phrase_pass: None,
            turn,
            error,
            interrupted: self.interrupted,
            timings_ms: timings,
            start_s,
            end_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Progress {
        Progress::new(
            Clock {
                endpointed_at: Instant::now(),
                endpoint_ms: 640.0,
            },
            TurnTimings::default(),
        )
    }

    fn started(reply: ReplyId) -> PlaybackEvent {
        PlaybackEvent::Started {
            reply,
            at: Instant::now(),
        }
    }

    fn played(reply: ReplyId) -> PlaybackEvent {
        PlaybackEvent::Stopped {
            reply,
            at: Instant::now(),
            interrupted: false,
        }
    }

    #[test]
    fn a_spoken_reply_ends_with_end_of_reply_then_waits_for_its_playback() {
        let (mut s, reply) = (state(), ReplyId::fresh());
        assert_eq!(s.next(), Next::Wait);
        assert!(s.on_sentence(Speakable::sanitize("It is on.")).is_some());
        s.on_sentence(None);
        s.on_sentence_done(1.0, 10.0, Instant::now());
        s.on_result(Err("x".into()));
        assert_eq!(s.next(), Next::EndOfReply);
        assert_eq!(s.next(), Next::Wait, "EndOfReply is sent once");
        assert!(s.on_playback(reply, started(reply)));
        assert_eq!(s.next(), Next::Wait);
        s.on_playback(reply, played(reply));
        assert_eq!(s.next(), Next::Done);
    }

    #[test]
    fn another_replys_playback_is_not_this_ones() {
        let (mut s, reply, earlier) = (state(), ReplyId::fresh(), ReplyId::fresh());
        s.on_sentence(Speakable::sanitize("It is on."));
        s.on_sentence(None);
        s.on_sentence_done(1.0, 10.0, Instant::now());
        s.on_result(Err("x".into()));
        assert_eq!(s.next(), Next::EndOfReply);
        assert!(!s.on_playback(reply, started(earlier)));
        s.on_playback(reply, played(earlier));
        assert_eq!(
            s.next(),
            Next::Wait,
            "an earlier reply's end is not this one's"
        );
        s.on_playback(reply, played(reply));
        assert_eq!(s.next(), Next::Done);
    }

    #[test]
    fn a_reply_without_audio_is_done_once_generated() {
        let mut s = state();
        s.on_sentence(None);
        s.on_result(Err("failed".into()));
        assert_eq!(s.next(), Next::Done);
        // a sentence that gave no audio (or failed) makes no reply to wait for either
        let mut s = state();
        s.on_sentence(Speakable::sanitize("Hm."));
        s.on_sentence(None);
        s.on_sentence_done(0.0, 0.0, Instant::now());
        s.on_result(Err("failed".into()));
        assert_eq!(s.next(), Next::Done);
    }

    #[test]
    fn a_barge_in_stops_waiting_for_queued_sentences_and_playback() {
        let mut s = state();
        s.on_sentence(Speakable::sanitize("Once upon a time."));
        s.on_sentence(Speakable::sanitize("There was a dragon."));
        s.on_sentence_done(1.0, 10.0, Instant::now());
        s.on_barge_in();
        assert_eq!(s.next(), Next::Wait, "the agent has not ended yet");
        s.on_sentence(None);
        s.on_result(Err("cancelled".into()));
        assert_eq!(s.next(), Next::Done);
        let t = s.finish("tell me a story".into(), Instant::now(), (0.0, 1.0));
        assert!(t.interrupted);
    }

    #[test]
    fn a_dead_tts_or_playback_is_not_waited_for() {
        let mut s = state();
        s.on_sentence(Speakable::sanitize("It is on."));
        s.on_sentence(None);
        s.on_result(Err("x".into()));
        assert_eq!(s.next(), Next::Wait);
        s.on_stage_died("tts");
        assert_eq!(s.next(), Next::Done, "no audio was sent");

        let mut s = state();
        s.on_sentence(Speakable::sanitize("It is on."));
        s.on_sentence(None);
        s.on_sentence_done(1.0, 10.0, Instant::now());
        s.on_result(Err("x".into()));
        assert_eq!(s.next(), Next::EndOfReply);
        s.on_stage_died("playback");
        assert_eq!(s.next(), Next::Done);
    }

    #[test]
    fn first_voice_adds_the_first_sentences_lead_to_first_audio() {
        let (mut s, reply) = (state(), ReplyId::fresh());
        s.on_sentence_done(1.0, 10.0, Instant::now());
        s.on_sentence_done(1.0, 200.0, Instant::now());
        s.on_playback(reply, started(reply));
        let t = s.finish(String::new(), Instant::now(), (0.0, 0.0));
        let (audio, voice) = (
            t.timings_ms.first_audio.unwrap(),
            t.timings_ms.first_voice.unwrap(),
        );
        assert!((voice - audio - 10.0).abs() < 1e-6, "{audio} {voice}");
        assert!(audio >= 640.0);
        assert!(t.timings_ms.first_tts_chunk.unwrap() >= 640.0);
    }
}
