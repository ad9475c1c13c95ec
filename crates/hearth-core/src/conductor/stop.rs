//! "Stop": the words that stop what hearth is saying or doing, without the wake word and
//! without the model. During a reply, a short stretch of speech is recognised as soon as the
//! speaker pauses ([`is_short`]); if it is one of [`STOP_PHRASES`] the reply stops there. The
//! same words heard as a request (between turns, or after a wake word) are reported as heard,
//! with no reply and nothing done; but said right after an announcement (a timer ringing) they
//! are its answer, and the agent is asked "stop" (the timers' `stop_timer` takes it).

use crate::voice::{Utterance, SAMPLE_RATE};

/// What stops hearth (whole transcripts, after [`normalise`]).
pub const STOP_PHRASES: &[&str] = &[
    "stop",
    "stop it",
    "stop talking",
    "cancel",
    "cancel that",
    "never mind",
    "nevermind",
    "be quiet",
    "quiet",
    "shut up",
    "enough",
    "that's enough",
    "that is enough",
    "silence",
];

/// Words around a stop phrase that do not change it ("okay, stop", "stop please").
const FILLER: &[&str] = &["ok", "okay", "oh", "please", "hey", "hearth", "just", "now"];

/// Speech longer than this is not a stop phrase said on its own: it is not recognised early
/// during a reply (1.2 s, pre-roll included).
const SHORT_SAMPLES: usize = SAMPLE_RATE as usize * 6 / 5;

/// Whether `u` is short enough to be a stop phrase.
pub(crate) fn is_short(u: &Utterance) -> bool {
    let speech = u.speech_end.saturating_sub(u.start) as usize;
    speech <= SHORT_SAMPLES
}

/// Whether the transcript `text` is a stop phrase (and nothing else).
pub(crate) fn is_stop(text: &str) -> bool {
    let kept = kept_words(text);
    !kept.is_empty() && STOP_PHRASES.contains(&kept.join(" ").as_str())
}

/// Whether `text`, heard over hearth's own reply or while a timer rings, asks it to stop: a
/// stop phrase, or one short word as whisper tiny.en writes a clipped or jumbled "stop"
/// ("Star." for the Piper voice's "Stop." over a reply, every time; "Start." and "Spot." for
/// it after a ring). Stopping is the safe direction: a stray "start" said over a reply stops
/// it, one said while a timer rings silences the ring, and nothing else runs.
pub(crate) fn means_stop(text: &str) -> bool {
    if is_stop(text) {
        return true;
    }
    match kept_words(text).as_slice() {
        [word] => (word.starts_with("st") || word.starts_with("sp")) && word.len() <= 5,
        _ => false,
    }
}

/// The words of `text` (as intents compare them) without the filler around a stop phrase.
fn kept_words(text: &str) -> Vec<String> {
    crate::intent::words(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_phrases_as_whisper_writes_them() {
        for text in [
            "Stop.",
            "Stop!",
            " stop",
            "Okay, stop.",
            "Stop it.",
            "Cancel.",
            "Never mind.",
            "Nevermind.",
            "Be quiet.",
            "Shut up!",
            "That's enough.",
            "That’s enough.",
            "Stop, please.",
        ] {
            assert!(is_stop(text), "{text:?}");
        }
    }

    #[test]
    fn requests_that_mention_stopping_are_not_stop() {
        for text in [
            "",
            "Okay.",
            "Stop the music in the kitchen.",
            "Cancel my timer.",
            "Turn on the kitchen light.",
            "Don't stop.",
            "Is the front door quiet?",
        ] {
            assert!(!is_stop(text), "{text:?}");
        }
    }

    #[test]
    fn over_a_reply_or_a_ring_a_clipped_stop_stops_it() {
        for text in ["Star.", "Stop.", "Stopp!", "Okay, stop.", "Start.", "Spot."] {
            assert!(means_stop(text), "{text:?}");
        }
        for text in [
            "Stars are out.",
            "Turn it off.",
            "Storage.",
            "Spotted.",
            "Star",
        ] {
            assert_eq!(means_stop(text), text == "Star", "{text:?}");
        }
        // between turns only the phrases themselves
        assert!(!is_stop("Star."));
    }

    #[test]
    fn only_short_speech_is_checked_early() {
        let u = |secs: f32| Utterance {
            samples: vec![0.0; (secs * 16_000.0) as usize].into(),
            start: 16_000,
            speech_end: 16_000 + (secs * 16_000.0) as u64,
            endpointed_at: std::time::Instant::now(),
        };
        assert!(is_short(&u(0.6)));
        assert!(!is_short(&u(2.5)));
    }
}
