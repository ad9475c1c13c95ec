//! The wake word in a transcript. A request said in the same breath as the wake word is
//! recognised from a little before the wake word ended (the spotter fires late, after the
//! word, and cutting there would cut the request's first word), so the transcript begins
//! with the wake word as the recogniser spelled it ("Okay, Nabu.", "OK Naboo,"): it is
//! removed here, so it never reaches the model. A transcript that does not begin with it
//! is a second opinion against the spotter (`[listen] wake_check`): the spotter may have
//! fired on something that only sounds like it ("Hey, Travis, can you pass me the salt?" for
//! "Hey Jarvis"), or whisper may have spelled the wake word beyond recognition ("Okay, now
//! we turn on…"); the wake bench's `--heard` measures both.

/// Words of the transcript before the wake word's last word may be found in, beyond the
/// phrase's own words (talk just before the wake word, a stammer).
const LEAD_WORDS: usize = 3;

/// How closely a transcript must have the wake word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeMatch {
    /// Its last word as whisper may spell it among the first words: enough to take the wake
    /// word off a request the spotter is believed on.
    Loose,
    /// And, for a phrase of more than one word, the word before that beginning as the phrase
    /// does: enough to believe the spotter (`[listen] wake_check`).
    Strict,
}

/// The request in `text`: everything after the wake word `phrase` ("Okay Nabu"), when the
/// transcript has it among its first words as `how` asks (see [`says_phrase_at`]); `None`
/// when it does not. A phrase with no words asks for nothing: the text is the request.
pub fn after_wake_word<'t>(text: &'t str, phrase: &str, how: WakeMatch) -> Option<&'t str> {
    let phrase: Vec<String> = phrase.split_whitespace().map(letters).collect();
    if phrase.is_empty() {
        return Some(text);
    }
    let words: Vec<(usize, &str)> = words(text).collect();
    let reach = phrase.len() + LEAD_WORDS;
    (0..words.len().min(reach))
        .find_map(|i| says_phrase_at(&words, i, &phrase, how))
        .map(|end| text[end..].trim_start_matches(|c: char| !c.is_alphanumeric()))
}

/// Where the wake word `phrase` (its words' letters) ends in `text` (a byte offset), when
/// its last word is heard as `words[i]`, or as `words[i]` and the next run together ("Na
/// boo", "Mike Croft"), and, [`WakeMatch::Strict`] and for a phrase of more than one word, the
/// word before it begins as the phrase does ("OK Nabu", "Hi Jarvis"; not "Mister Jarvis").
/// Nothing need come before a last word that begins the transcript: the recording may have
/// started after "Hey".
fn says_phrase_at(
    words: &[(usize, &str)],
    i: usize,
    phrase: &[String],
    how: WakeMatch,
) -> Option<usize> {
    let last = phrase.last()?;
    let end = [1, 2].into_iter().find_map(|n| {
        let run = words.get(i..i + n)?;
        let spoken: String = run.iter().map(|(_, w)| letters(w)).collect();
        sounds_alike(&spoken, last).then(|| run[n - 1].0 + run[n - 1].1.len())
    })?;
    if how == WakeMatch::Loose || phrase.len() == 1 || i == 0 {
        return Some(end);
    }
    let before = letters(words[i - 1].1);
    (before.chars().next() == phrase[0].chars().next()).then_some(end)
}

/// The words of `text` (runs of non-space characters) with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace()
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// A word's letters and digits, lowercased.
fn letters(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a transcribed word is the wake word's as a recogniser may spell it: the same first
/// letter and at most two letters in five different ("naboo" for "nabu", "jarvis's").
fn sounds_alike(heard: &str, wake: &str) -> bool {
    if heard.is_empty() || heard.chars().next() != wake.chars().next() {
        return false;
    }
    let longest = heard.chars().count().max(wake.chars().count());
    strsim::levenshtein(heard, wake) * 5 <= longest * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase_of(heard: &str) -> &'static str {
        if heard.contains("lexa") {
            "Alexa"
        } else if heard.contains("arvis") {
            "Hey Jarvis"
        } else if heard.contains("roft") {
            "Hey Mycroft"
        } else {
            "Okay Nabu"
        }
    }

    #[test]
    fn the_wake_word_as_recognisers_spell_it_is_removed() {
        for (heard, want) in [
            (
                "Okay Nabu, turn on the kitchen light.",
                "turn on the kitchen light.",
            ),
            (
                "Okay, Nabu. Turn on the kitchen light.",
                "Turn on the kitchen light.",
            ),
            ("OK Naboo, what time is it?", "what time is it?"),
            ("Okay, na boo. Lock the front door.", "Lock the front door."),
            ("Nabu, lock the front door.", "lock the front door."),
            (
                "Alexa, turn on the kitchen light.",
                "turn on the kitchen light.",
            ),
            (
                "Hey Jarvis. Dim the bedroom light.",
                "Dim the bedroom light.",
            ),
            ("Hi, Jarvis's here, dim it.", "here, dim it."),
            ("Hey, Mike Croft, what time is it?", "what time is it?"),
            ("Jarvis, open the garage.", "open the garage."),
        ] {
            assert_eq!(
                after_wake_word(heard, phrase_of(heard), WakeMatch::Strict),
                Some(want),
                "{heard}"
            );
        }
    }

    #[test]
    fn talk_before_the_wake_word_goes_with_it() {
        assert_eq!(
            after_wake_word("so, okay nabu, turn it off", "Okay Nabu", WakeMatch::Strict),
            Some("turn it off")
        );
    }

    #[test]
    fn a_transcript_without_the_wake_word_is_no_request() {
        for heard in [
            "Turn on the kitchen light.",
            "Now turn on the kitchen light.",
            "",
            "Okay.",
            // past the reach: a word of the request that merely starts alike
            "please set the living room to nine",
        ] {
            assert_eq!(
                after_wake_word(heard, "Okay Nabu", WakeMatch::Strict),
                None,
                "{heard}"
            );
        }
    }

    #[test]
    fn what_only_sounds_like_the_wake_word_is_no_request() {
        for (heard, phrase) in [
            ("Hey, Travis, can you pass me the salt?", "Hey Jarvis"),
            (
                "Mister Jarvis from next door says the hedge is too tall.",
                "Hey Jarvis",
            ),
            ("Hey, Marvin, is that your bike outside?", "Hey Jarvis"),
            ("Okay, now boot the laptop.", "Okay Nabu"),
            ("Harvey works for Microsoft, and he says", "Hey Mycroft"),
            ("Her new car is a grey Lexus.", "Alexa"),
        ] {
            assert_eq!(
                after_wake_word(heard, phrase, WakeMatch::Strict),
                None,
                "{heard}"
            );
        }
    }

    #[test]
    fn a_word_run_together_is_not_taken_with_the_wake_word() {
        // "alexa" + "on" is close to "alexa", but the word alone is the wake word
        assert_eq!(
            after_wake_word(
                "Alexa, on with the kitchen light.",
                "Alexa",
                WakeMatch::Strict
            ),
            Some("on with the kitchen light.")
        );
    }

    #[test]
    fn the_wake_word_alone_leaves_nothing() {
        assert_eq!(
            after_wake_word("Okay, Nabu.", "Okay Nabu", WakeMatch::Strict),
            Some("")
        );
        assert_eq!(
            after_wake_word("Alexa?", "Alexa", WakeMatch::Strict),
            Some("")
        );
    }

    #[test]
    fn taken_off_loosely_what_is_not_believed_strictly() {
        // the spotter believed: "Mister Jarvis" is taken off as the wake word whisper
        // misheard; checking the spotter, it is no wake word
        let heard = "Mister Jarvis, turn on the kitchen light.";
        assert_eq!(
            after_wake_word(heard, "Hey Jarvis", WakeMatch::Loose),
            Some("turn on the kitchen light.")
        );
        assert_eq!(
            after_wake_word(heard, "Hey Jarvis", WakeMatch::Strict),
            None
        );
        // a last word that does not sound alike is not taken off either way
        assert_eq!(
            after_wake_word(
                "Hey, Travis, pass the salt.",
                "Hey Jarvis",
                WakeMatch::Loose
            ),
            None
        );
    }

    #[test]
    fn a_phrase_of_no_words_asks_for_nothing() {
        assert_eq!(
            after_wake_word("Turn it off.", " ", WakeMatch::Strict),
            Some("Turn it off.")
        );
    }
}
