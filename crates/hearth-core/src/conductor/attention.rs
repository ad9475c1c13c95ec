//! Whether an utterance was addressed to hearth: [`Attention`] decides, for each utterance
//! Listen reports, whether it is a request (all of it, or what follows a wake word said in
//! the same breath) or talk in the room that hearth must not act on.
//!
//! With wake words off every utterance is a request (push-to-talk, tests). With them on, an
//! utterance is a request when
//! - it holds a wake word: the request is what follows it. The spotter fires a little after
//!   the word has ended, so the audio is recognised from [`WAKE_REACH`] before that (anything
//!   said earlier is dropped) and the wake word is taken off the transcript
//!   ([`super::wake_word::after_wake_word`]): it never reaches the model, and an utterance whose
//!   transcript does not have it was no request after all (the spotter fired on a word
//!   that sounds like it). A wake word said alone opens a window of [`REQUEST_WINDOW`] for
//!   the request that follows, closed again when its transcript lacks it;
//! - it starts inside an open window: after a wake word said alone, after `Listen()` (a button,
//!   another program), or after a reply has finished playing (the follow-up window).
//!
//! Times: wake words and utterances are placed on the input clock where they can be (the
//! wake word's end is a sample index), and on the wall clock for the windows (when a reply
//! finished playing is only known there). An utterance's wall-clock start is estimated from
//! when it was endpointed and its length, which holds for a live microphone and a WAV paced
//! in real time (`--realtime`), not for a file read as fast as possible.

use std::time::{Duration, Instant};

use super::wake_word::WakeMatch;
use crate::voice::{Utterance, WakeWord, SAMPLE_RATE};

/// After a wake word said alone (or `Listen()`), how long the request may take to begin.
pub(crate) const REQUEST_WINDOW: Duration = Duration::from_secs(6);

/// How far before the spotter fired the wake word may have begun (a slow "okay nabu" and
/// the spotter's lag): 1.5 s.
pub const WAKE_REACH: u64 = SAMPLE_RATE as u64 * 3 / 2;

/// Less speech than this after the wake word is not a request (the end of the wake word
/// itself, a breath): 250 ms.
const MIN_REQUEST_SAMPLES: u64 = SAMPLE_RATE as u64 / 4;

/// How far before a window opened an utterance may seem to start and still count: the
/// estimate of its start includes Listen's pre-roll.
const START_SLACK: Duration = Duration::from_millis(500);

/// What to do with one utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admit {
    /// All of it is the request.
    Whole,
    /// The request follows the wake word: recognise the samples from the input-clock index
    /// `from` on, and take the wake word off the transcript.
    After { from: u64, wake_word: String },
    /// The wake word said alone: the window for the request that follows is open. Its
    /// transcript (the samples from `from` on) should be checked for the wake word: without
    /// it, [`Attention::forget`] closes the window again.
    Alone { from: u64, wake_word: String },
    /// Not a request; why, for the log.
    Drop(&'static str),
}

/// A window in which a request needs no wake word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    from: Instant,
    until: Instant,
}

impl Window {
    fn holds(&self, t: Instant) -> bool {
        t + START_SLACK >= self.from && t <= self.until
    }
}

/// Who hearth is listening to: wake words heard, windows open.
#[derive(Debug)]
pub struct Attention {
    /// Wake words are on (else every utterance is a request).
    wake: bool,
    /// After a reply: how long a request needs no wake word (zero: never).
    follow_up: Duration,
    /// The last wake word heard and not yet used: where it ended on the input clock, and
    /// the phrase.
    woken: Option<(u64, String)>,
    /// The open window, if any.
    window: Option<Window>,
}

impl Attention {
    /// `wake`: whether wake words are on; `follow_up`: the follow-up window after a reply.
    pub fn new(wake: bool, follow_up: Duration) -> Attention {
        Attention {
            wake,
            follow_up,
            woken: None,
            window: None,
        }
    }

    /// Wake words are on.
    pub(crate) fn wake_words(&self) -> bool {
        self.wake
    }

    /// A wake word was heard: the utterance that holds it, or the one after it, is a request.
    pub(crate) fn on_wake(&mut self, w: &WakeWord) {
        self.woken = Some((w.end, w.name.clone()));
        self.open(w.at, REQUEST_WINDOW);
    }

    /// `Listen()`: the next utterance is a request, wake word or not.
    pub(crate) fn on_listen(&mut self, now: Instant) {
        self.open(now, REQUEST_WINDOW);
    }

    /// A reply has finished playing (or the turn ended without one): the follow-up window.
    pub(crate) fn on_reply_done(&mut self, now: Instant) {
        if self.follow_up.is_zero() {
            self.window = None;
        } else {
            self.open(now, self.follow_up);
        }
    }

    fn open(&mut self, from: Instant, length: Duration) {
        self.window = Some(Window {
            from,
            until: from + length,
        });
    }

    /// When the open window closes (`None`: none is open, or wake words are off).
    pub(crate) fn window_closes(&self) -> Option<Instant> {
        self.window.filter(|_| self.wake).map(|w| w.until)
    }

    /// Closes a window that has run out by `now`; true if one did (hearth is back to
    /// waiting for the wake word).
    pub(crate) fn expire(&mut self, now: Instant) -> bool {
        match self.window {
            Some(w) if w.until <= now => {
                self.window = None;
                self.woken = None;
                true
            }
            _ => false,
        }
    }

    /// Whether `u` is a request, without using anything up (for recognition that starts at
    /// a pause, before the utterance is complete).
    pub(crate) fn judge(&self, u: &Utterance) -> Admit {
        if !self.wake {
            return Admit::Whole;
        }
        if let Some((end, wake_word)) = &self.woken {
            let end = *end;
            if u.start <= end && end <= u.speech_end {
                let (from, wake_word) = (
                    end.saturating_sub(WAKE_REACH).max(u.start),
                    wake_word.clone(),
                );
                return if u.speech_end - end < MIN_REQUEST_SAMPLES {
                    Admit::Alone { from, wake_word }
                } else {
                    Admit::After { from, wake_word }
                };
            }
        }
        match self.window {
            Some(w) if w.holds(u.wall_time(u.start)) => Admit::Whole,
            _ => Admit::Drop("not addressed to hearth (no wake word)"),
        }
    }

    /// The wake word was not one after all (its transcript lacks it): the window it opened
    /// closes, and hearth waits for the wake word again.
    pub(crate) fn forget(&mut self) {
        self.woken = None;
        self.window = None;
    }

    /// Whether `u` is a request; a request uses up the wake word and the window it was in.
    pub(crate) fn admit(&mut self, u: &Utterance) -> Admit {
        let verdict = self.judge(u);
        match verdict {
            Admit::Whole | Admit::After { .. } => {
                self.woken = None;
                self.window = None;
            }
            // the wake word alone: its window stays open for the request
            Admit::Alone { .. } | Admit::Drop(_) => {
                if self
                    .woken
                    .as_ref()
                    .is_some_and(|(end, _)| *end <= u.speech_end)
                {
                    self.woken = None;
                }
            }
        }
        verdict
    }
}

/// The request in `u` from the input-clock index `from` on (what follows a wake word).
pub(crate) fn after(u: &Utterance, from: u64) -> Utterance {
    let skip = (from.saturating_sub(u.start) as usize).min(u.samples.len());
    Utterance {
        samples: u.samples[skip..].into(),
        start: u.start + skip as u64,
        speech_end: u.speech_end.max(u.start + skip as u64),
        endpointed_at: u.endpointed_at,
    }
}

/// The request in a transcript: what follows the wake word, if one woke hearth. When the
/// transcript does not have that wake word (the spotter fired on something else, or whisper
/// spelled it beyond recognition): `None` with `check` (`[listen] wake_check`), else all of it.
pub(crate) fn request_text<'t>(
    heard: &'t str,
    wake_word: Option<&str>,
    check: bool,
) -> Option<&'t str> {
    let Some(w) = wake_word else {
        return Some(heard);
    };
    match check {
        true => super::wake_word::after_wake_word(heard, w, WakeMatch::Strict),
        false => {
            Some(super::wake_word::after_wake_word(heard, w, WakeMatch::Loose).unwrap_or(heard))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = SAMPLE_RATE as u64;

    /// An utterance on the input clock from `start` s (speech to `end` s, 0.64 s of
    /// hangover after), endpointed `ago` before now.
    fn utterance(start: f64, end: f64, now: Instant, ago: Duration) -> Utterance {
        let (start, speech_end) = ((start * S as f64) as u64, (end * S as f64) as u64);
        let len = (speech_end - start + S * 64 / 100) as usize;
        Utterance {
            samples: vec![0.0; len].into(),
            start,
            speech_end,
            endpointed_at: now - ago,
        }
    }

    fn wake_word(end: f64, at: Instant) -> WakeWord {
        WakeWord {
            name: "Okay Nabu".into(),
            probability: 0.95,
            end: (end * S as f64) as u64,
            at,
        }
    }

    #[test]
    fn without_wake_words_everything_is_a_request() {
        let now = Instant::now();
        let mut a = Attention::new(false, Duration::ZERO);
        assert_eq!(
            a.admit(&utterance(1.0, 2.0, now, Duration::ZERO)),
            Admit::Whole
        );
        assert_eq!(a.window_closes(), None);
    }

    #[test]
    fn talk_without_the_wake_word_is_dropped() {
        let now = Instant::now();
        let mut a = Attention::new(true, Duration::from_secs(5));
        let u = utterance(1.0, 2.5, now, Duration::ZERO);
        assert!(matches!(a.admit(&u), Admit::Drop(_)));
    }

    #[test]
    fn the_request_in_the_same_breath_follows_the_wake_word() {
        let now = Instant::now();
        let mut a = Attention::new(true, Duration::ZERO);
        a.on_wake(&wake_word(2.7, now - Duration::from_secs(2)));
        // "… so, okay nabu, turn on the kitchen light": heard from 1.5 s before the wake
        // word's end (its start, and the spotter's lag); the talk before is dropped
        let u = utterance(0.5, 4.5, now, Duration::ZERO);
        let want = Admit::After {
            from: 19_200,
            wake_word: "Okay Nabu".into(),
        };
        assert_eq!(a.judge(&u), want);
        assert_eq!(a.admit(&u), want);
        let request = after(&u, 19_200);
        assert_eq!(request.start, 19_200);
        assert_eq!(request.speech_end, u.speech_end);
        assert_eq!(
            request.samples.len() as u64,
            u.start + u.samples.len() as u64 - 19_200
        );
        // an utterance that begins with the wake word is recognised from its start
        a.on_wake(&wake_word(6.0, now));
        let from_start = utterance(5.2, 7.0, now + Duration::from_secs(1), Duration::ZERO);
        assert!(matches!(
            a.admit(&from_start),
            Admit::After { from: 83_200, .. }
        ));
        // used up: the next utterance needs the wake word again
        let next = utterance(5.0, 6.0, now, Duration::ZERO);
        assert!(matches!(a.admit(&next), Admit::Drop(_)));
    }

    #[test]
    fn a_wake_word_alone_opens_a_window_for_the_request() {
        let t0 = Instant::now();
        let mut a = Attention::new(true, Duration::ZERO);
        a.on_wake(&wake_word(1.7, t0));
        // "okay nabu" … (a pause) … "turn on the kitchen light"
        let alone = utterance(1.0, 1.75, t0 + Duration::from_millis(700), Duration::ZERO);
        assert!(matches!(a.admit(&alone), Admit::Alone { from: 16_000, .. }));
        assert!(a.window_closes().is_some());
        let request = utterance(3.0, 4.5, t0 + Duration::from_secs(3), Duration::ZERO);
        assert_eq!(a.admit(&request), Admit::Whole);
        assert_eq!(a.window_closes(), None);
    }

    #[test]
    fn a_wake_word_its_transcript_lacks_closes_its_window() {
        let t0 = Instant::now();
        let mut a = Attention::new(true, Duration::ZERO);
        a.on_wake(&wake_word(1.7, t0));
        let alone = utterance(1.0, 1.75, t0 + Duration::from_millis(700), Duration::ZERO);
        assert!(matches!(a.admit(&alone), Admit::Alone { .. }));
        a.forget();
        assert_eq!(a.window_closes(), None);
        let talk = utterance(3.0, 4.5, t0 + Duration::from_secs(3), Duration::ZERO);
        assert!(matches!(a.admit(&talk), Admit::Drop(_)));
    }

    #[test]
    fn a_window_runs_out() {
        let t0 = Instant::now();
        let mut a = Attention::new(true, Duration::ZERO);
        a.on_listen(t0);
        assert!(!a.expire(t0 + Duration::from_secs(1)));
        let late = utterance(
            10.0,
            11.0,
            t0 + REQUEST_WINDOW + Duration::from_secs(3),
            Duration::ZERO,
        );
        assert!(matches!(a.judge(&late), Admit::Drop(_)));
        assert!(a.expire(t0 + REQUEST_WINDOW));
        assert_eq!(a.window_closes(), None);
    }

    #[test]
    fn the_follow_up_window_opens_after_a_reply_and_not_before() {
        let t0 = Instant::now();
        let mut a = Attention::new(true, Duration::from_secs(5));
        a.on_reply_done(t0);
        // said during the reply, before it finished: not a follow-up
        let during = utterance(1.0, 2.0, t0 - Duration::from_secs(1), Duration::ZERO);
        assert!(matches!(a.judge(&during), Admit::Drop(_)));
        let inside = utterance(1.0, 2.0, t0 + Duration::from_secs(3), Duration::ZERO);
        assert_eq!(a.judge(&inside), Admit::Whole);
        let after_it = utterance(1.0, 2.0, t0 + Duration::from_secs(8), Duration::ZERO);
        assert!(matches!(a.judge(&after_it), Admit::Drop(_)));
        // zero: no follow-up at all
        let mut off = Attention::new(true, Duration::ZERO);
        off.on_reply_done(t0);
        assert!(matches!(off.judge(&inside), Admit::Drop(_)));
    }

    #[test]
    fn an_utterance_before_the_wake_word_leaves_it_for_the_next() {
        let t0 = Instant::now();
        let mut a = Attention::new(true, Duration::ZERO);
        a.on_wake(&wake_word(5.0, t0));
        // something said at 1–2 s, reported after the wake word was heard
        let before = utterance(1.0, 2.0, t0 - Duration::from_secs(3), Duration::ZERO);
        assert!(matches!(a.admit(&before), Admit::Drop(_)));
        let with_it = utterance(4.2, 7.0, t0 + Duration::from_secs(2), Duration::ZERO);
        assert!(matches!(
            a.admit(&with_it),
            Admit::After { from: 67_200, .. }
        ));
    }
}
