//! What the conductor starts at the speaker's pause, before the endpoint is sure: the
//! recognition of what was said so far ([`Early`]), then, for the request in it, either an
//! early end (a local intent answers it: the turn ends after `intent_end` of silence, not
//! after the whole hangover) or a speculative agent turn ([`Speculation`]) that stands only
//! if the utterance ends with the same words. Speech that resumes drops both.
//!
//! [`Pause`] holds both and knows nothing of the rest of the conductor: it is told what was
//! judged a request, and answers through the [`Outbox`].

use std::time::{Duration, Instant};

use super::attention::request_text;
use super::io::{Action, Incoming, Input, Job, Outbox};
use super::stop;
use crate::agent::{Planned, Turn};
use crate::logs::TRANSCRIPT;
use crate::speech::Speakable;
use crate::voice::Hold;
use crate::voice::{Heard, Utterance};
use hearth_phrases::Whole;

/// Recognition started at a pause.
struct Early {
    /// Listen's utterance start (what `Resumed` names).
    listen_start: u64,
    /// What is judged if the turn ends there: the utterance as Listen reported it at the
    /// pause, or, when it goes on after a turn that ended at an earlier pause, the rest.
    paused: Incoming,
    /// The speech recognised (the part after any wake word): its start and end.
    speech: (u64, u64),
    /// The wake word it begins with, if any.
    wake_word: Option<String>,
    state: EarlyState,
    /// When a local intent answers what was heard: when the turn ends if speech does not go
    /// on.
    ends_at: Option<Instant>,
    /// A local intent answers what was heard, a whole request of the house's phrase set that
    /// a longer one may continue: the end-of-turn model is asked whether the speaker is done
    /// ([`Action::AskFinished`]), and its "finished" ends the turn sooner.
    may_go_on: bool,
    /// The agent's plan of what was heard ([`Input::Intent`]): the turn's, if it is asked
    /// with these words.
    planned: Option<Planned>,
}

enum EarlyState {
    /// Being recognised.
    Recognising(Job),
    /// Heard; whether a local intent answers the request in it is being asked.
    CheckingIntent {
        job: Job,
        heard: Heard,
        request: String,
        /// When its turn ends if a local intent answers it (`None`: at the hangover).
        ends_at: Option<Instant>,
    },
    /// What it heard; `None` when it failed (the utterance is recognised whole).
    Done(Option<Heard>),
}

impl EarlyState {
    /// The work under way, if any.
    fn job(&self) -> Option<Job> {
        match self {
            EarlyState::Recognising(job) | EarlyState::CheckingIntent { job, .. } => Some(*job),
            EarlyState::Done(_) => None,
        }
    }
}

/// A turn asked on what was heard at a pause, while the hangover runs: the model writes
/// meanwhile, but no call runs and nothing is kept until the utterance ends with nothing more
/// said and the same words ([`Action::GoAhead`]). What it sends before it stands is kept for
/// the reply.
pub(super) struct Speculation {
    pub(super) job: Job,
    /// Listen's utterance start (what `Resumed` names) and the speech recognised.
    listen_start: u64,
    speech: (u64, u64),
    request: String,
    pub(super) asked_at: Instant,
    pub(super) sentences: Vec<Option<Speakable>>,
    pub(super) answer: Option<Result<Turn, String>>,
}

/// For the turn's own recognition: what the early recognition has of the same speech.
pub(super) enum Transcript {
    /// Still being recognised by this job: wait for it.
    Coming(Job),
    /// Heard already, with the agent's plan of it when one was made.
    Heard(Heard, Option<Planned>),
    /// Nothing: recognise the utterance whole.
    None,
}

/// After the intent check: what the conductor does about the pause.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Wait (for the early end's deadline, the utterance's end, or more speech).
    Wait,
    /// The early end's silence has passed already: end the turn at the pause.
    EndNow,
    /// No intent answers this request: ask the model now, held ([`Pause::speculate`]).
    Speculate(String),
}

/// What an intent check answered ([`Input::Intent`]).
pub(super) struct Checked {
    pub(super) job: Job,
    /// A local intent answers the request.
    pub(super) intent: bool,
    /// The first sentence its turn says, when that is known already.
    pub(super) first: Option<Speakable>,
    /// The agent's plan of the request.
    pub(super) planned: Option<Planned>,
}

/// How long the silence after a request a local intent answers must last to end the turn.
pub(super) struct EarlyEnd {
    /// After any such request (`None`: the hangover ends every turn).
    pub(super) intent: Option<Duration>,
    /// After a whole request of the house's phrase set that no longer one continues
    /// (`None`: as `intent`).
    pub(super) phrase: Option<Duration>,
    /// Ask the end-of-turn model whether a request that may go on is finished.
    pub(super) ask_finished: bool,
}

impl EarlyEnd {
    /// The silence a request heard as `whole` waits for when a local intent answers it.
    fn wait(&self, whole: Whole) -> Option<Duration> {
        match whole {
            Whole::Ends => self.phrase.or(self.intent),
            Whole::MayGoOn | Whole::No => self.intent,
        }
    }
}

/// The recognition and the speculative turn started at the last pause.
#[derive(Default)]
pub(super) struct Pause {
    early: Option<Early>,
    speculation: Option<Speculation>,
}

impl Pause {
    /// Recognise `u`, the request said so far in the utterance Listen started at
    /// `listen_start` (`paused`, as it will be judged; `wake_word`, what it begins with).
    pub(super) fn start(
        &mut self,
        listen_start: u64,
        paused: Incoming,
        u: Utterance,
        wake_word: Option<String>,
        out: &mut Outbox,
    ) {
        self.drop(out);
        let speech = (u.start, u.speech_end);
        let job = out.recognise(u, Hold::House);
        self.early = Some(Early {
            listen_start,
            paused,
            speech,
            wake_word,
            state: EarlyState::Recognising(job),
            ends_at: None,
            may_go_on: false,
            planned: None,
        });
    }

    /// The early recognition's job, while it runs.
    pub(super) fn recognition(&self) -> Option<Job> {
        match self.early.as_ref()?.state {
            EarlyState::Recognising(job) => Some(job),
            _ => None,
        }
    }

    /// Whether what was started belongs to the utterance Listen started at `start`.
    pub(super) fn is_of(&self, start: u64) -> bool {
        let early = self.early.as_ref().is_some_and(|e| e.listen_start == start);
        let spec = (self.speculation.as_ref()).is_some_and(|s| s.listen_start == start);
        early || spec
    }

    /// When the turn ends at the pause, if a local intent answers it.
    pub(super) fn ends_at(&self) -> Option<Instant> {
        self.early.as_ref()?.ends_at
    }

    /// The early recognition has ended: the request in it goes to the intent check (none,
    /// or "stop": no request to answer early). `session`: the agent session a turn now
    /// would be in.
    pub(super) fn heard(
        &mut self,
        heard: Result<Heard, String>,
        wake_check: bool,
        session: String,
        end: &EarlyEnd,
        out: &mut Outbox,
    ) {
        let Some(early) = self.early.as_mut() else {
            return;
        };
        early.state = match heard {
            Err(error) => {
                tracing::debug!(%error, "early recognition failed; the utterance is recognised whole");
                EarlyState::Done(None)
            }
            Ok(heard) => {
                let request = request_text(&heard.text, early.wake_word.as_deref(), wake_check)
                    .unwrap_or_default()
                    .to_string();
                if request.is_empty() || stop::is_stop(&request) {
                    EarlyState::Done(Some(heard))
                } else {
                    let job = out.job();
                    // when its turn would end if a local intent answers it: what the agent
                    // foresees of it is as it will be then
                    let u = early.paused.utterance();
                    let ends_at = (end.wait(heard.whole)).map(|w| u.wall_time(u.speech_end) + w);
                    let check = Action::CheckIntent {
                        job,
                        session,
                        request: request.clone(),
                        ends_at,
                    };
                    out.push(check);
                    EarlyState::CheckingIntent {
                        job,
                        heard,
                        request,
                        ends_at,
                    }
                }
            }
        };
    }

    /// Whether a local intent answers what was heard at the pause: then the turn ends when
    /// the check said it would (its request's silence, [`EarlyEnd::wait`]), without waiting
    /// for the hangover, and its first sentence, if known,
    /// is prepared meanwhile; else the model is asked at once (muted: neither). An answer to
    /// a check no longer waited for changes nothing.
    pub(super) fn intent(
        &mut self,
        checked: Checked,
        end: &EarlyEnd,
        muted: bool,
        now: Instant,
        out: &mut Outbox,
    ) -> Verdict {
        let Checked {
            job,
            intent,
            first,
            planned,
        } = checked;
        let Some(early) = self.early.as_mut() else {
            return Verdict::Wait;
        };
        if !matches!(early.state, EarlyState::CheckingIntent { job: j, .. } if j == job) {
            return Verdict::Wait;
        }
        let EarlyState::CheckingIntent {
            heard,
            request,
            ends_at,
            ..
        } = std::mem::replace(&mut early.state, EarlyState::Done(None))
        else {
            return Verdict::Wait;
        };
        let may_go_on = heard.whole == Whole::MayGoOn;
        early.state = EarlyState::Done(Some(heard));
        early.planned = planned;
        if muted {
            return Verdict::Wait;
        }
        early.may_go_on = intent && may_go_on && end.ask_finished;
        if early.may_go_on {
            // whether the speaker is done: the end-of-turn model, asked now that the
            // recognition has left the cores (nothing comes back without one)
            let (start, speech_end) = (early.listen_start, early.speech.1);
            out.push(Action::AskFinished { start, speech_end });
        }
        if let Some(sentence) = first.filter(|_| intent) {
            // its turn may start at the end of the pause: its first words are synthesised
            // while the silence is waited for
            out.push(Action::Prepare(sentence));
        }
        let Some(ends_at) = ends_at.filter(|_| intent) else {
            return Verdict::Speculate(request);
        };
        early.ends_at = Some(ends_at);
        match now >= ends_at {
            true => Verdict::EndNow,
            false => Verdict::Wait,
        }
    }

    /// The end-of-turn model heard the utterance Listen started at `start` finished at the
    /// pause after `speech_end` (asked by [`Pause::intent`]): a whole request of the house
    /// that a longer one may continue, which a local intent answers, ends its turn as one
    /// that no longer one continues would.
    pub(super) fn finished(
        &mut self,
        start: u64,
        speech_end: u64,
        end: &EarlyEnd,
        now: Instant,
    ) -> Verdict {
        let Some(early) =
            (self.early.as_mut()).filter(|e| e.listen_start == start && e.speech.1 == speech_end)
        else {
            return Verdict::Wait;
        };
        let (true, Some(wait)) = (early.may_go_on, end.phrase.or(end.intent)) else {
            return Verdict::Wait;
        };
        let u = early.paused.utterance();
        let sooner = u.wall_time(u.speech_end) + wait;
        let ends_at = early.ends_at.map_or(sooner, |t| t.min(sooner));
        early.ends_at = Some(ends_at);
        match now >= ends_at {
            true => Verdict::EndNow,
            false => Verdict::Wait,
        }
    }

    /// The turn ends at the pause: what to judge as its request, and where it ends (Listen's
    /// utterance start and the speech's end).
    pub(super) fn end_here(&mut self) -> Option<(Incoming, (u64, u64))> {
        let early = self.early.as_mut()?;
        early.ends_at = None;
        early.may_go_on = false;
        Some((early.paused.clone(), (early.listen_start, early.speech.1)))
    }

    /// For the turn that recognises `speech`: what the early recognition has of it (any
    /// other is dropped).
    pub(super) fn transcript_of(&mut self, speech: (u64, u64), out: &mut Outbox) -> Transcript {
        let Some(early) = self.early.take() else {
            return Transcript::None;
        };
        if early.speech != speech {
            if let Some(job) = early.state.job() {
                out.push(Action::Abort(job));
            }
            return Transcript::None;
        }
        match early.state {
            EarlyState::Recognising(job) => Transcript::Coming(job),
            EarlyState::CheckingIntent { job, heard, .. } => {
                out.push(Action::Abort(job));
                Transcript::Heard(heard, None)
            }
            EarlyState::Done(Some(heard)) => Transcript::Heard(heard, early.planned),
            EarlyState::Done(None) => Transcript::None,
        }
    }

    /// Speech went on after the pause (or the run ends): what was started there is dropped.
    pub(super) fn drop(&mut self, out: &mut Outbox) {
        if let Some(job) = self.early.take().and_then(|e| e.state.job()) {
            out.push(Action::Abort(job));
        }
        self.drop_speculation(out);
    }

    /// Ask the agent with `request`, what was heard at the pause, held (in `session`), so
    /// that the model is already writing when the utterance ends there.
    pub(super) fn speculate(
        &mut self,
        request: String,
        session: String,
        now: Instant,
        out: &mut Outbox,
    ) {
        self.drop_speculation(out);
        let Some(early) = self.early.as_ref() else {
            return;
        };
        let (listen_start, speech) = (early.listen_start, early.speech);
        let job = out.job();
        tracing::info!("a speculative turn starts at the pause");
        tracing::info!(target: TRANSCRIPT, %request, "the request of the speculative turn");
        out.push(Action::Ask {
            job,
            session,
            request: request.clone(),
            held: true,
            heard_as: None,
            planned: early.planned.clone(),
        });
        self.speculation = Some(Speculation {
            job,
            listen_start,
            speech,
            request,
            asked_at: now,
            sentences: Vec::new(),
            answer: None,
        });
    }

    /// The speculative turn, if any, is refused: it ends having done and kept nothing.
    pub(super) fn drop_speculation(&mut self, out: &mut Outbox) {
        if let Some(s) = self.speculation.take() {
            out.push(Action::GoAhead {
                job: s.job,
                go: false,
            });
            tracing::info!("the speculative turn is dropped");
            tracing::info!(target: TRANSCRIPT, request = %s.request, "the request of the dropped speculative turn");
        }
    }

    /// The speculative turn asked with `request` on `speech`, which now stands; any other is
    /// dropped.
    pub(super) fn speculation_for(
        &mut self,
        speech: (u64, u64),
        request: &str,
        now: Instant,
        out: &mut Outbox,
    ) -> Option<Speculation> {
        let s = self.speculation.take()?;
        if s.speech != speech || s.request != request {
            self.speculation = Some(s);
            self.drop_speculation(out);
            return None;
        }
        out.push(Action::GoAhead {
            job: s.job,
            go: true,
        });
        tracing::info!(
            ahead_ms = now.saturating_duration_since(s.asked_at).as_secs_f64() * 1e3,
            "the speculative turn stands"
        );
        Some(s)
    }

    /// Keeps what the speculative turn sends before it stands; any other input is given
    /// back.
    pub(super) fn keep(&mut self, input: Input) -> Option<Input> {
        let Some(s) = self.speculation.as_mut() else {
            return Some(input);
        };
        match input {
            Input::Sentence { job, sentence } if job == s.job => s.sentences.push(sentence),
            Input::Answered { job, turn } if job == s.job => s.answer = Some(turn),
            input => return Some(input),
        }
        None
    }
}
