//! The wake word out of a transcript. A request said in the same breath as the wake word is
//! recognised from a little before the wake word ended (the detector fires late, after the
//! word, and cutting there would cut the request's first word), so the transcript begins
//! with the wake word as the recogniser spelled it ("Okay, Nabu.", "OK Naboo,"): it is
//! removed here, so it never reaches the model.

/// Words of the transcript before the wake word's last word may be found in, beyond the
/// phrase's own words (talk just before the wake word, a stammer).
const LEAD_WORDS: usize = 3;

/// `text` without everything up to and including the wake word `phrase` ("Okay Nabu"), when
/// the phrase's last word is found (spelled closely enough) among its first words (the first
/// such word); the text unchanged when it is not.
pub fn strip_wake_word<'t>(text: &'t str, phrase: &str) -> &'t str {
    let Some(last) = phrase.split_whitespace().last().map(letters) else {
        return text;
    };
    let reach = phrase.split_whitespace().count() + LEAD_WORDS;
    let found = words(text)
        .take(reach)
        .find(|(_, word)| sounds_alike(&letters(word), &last));
    match found {
        Some((start, word)) => {
            text[start + word.len()..].trim_start_matches(|c: char| !c.is_alphanumeric())
        }
        None => text,
    }
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
            ("Nabu, lock the front door.", "lock the front door."),
            (
                "Alexa, turn on the kitchen light.",
                "turn on the kitchen light.",
            ),
            (
                "Hey Jarvis. Dim the bedroom light.",
                "Dim the bedroom light.",
            ),
        ] {
            let phrase = if heard.contains("lexa") {
                "Alexa"
            } else if heard.contains("Jarvis") {
                "Hey Jarvis"
            } else {
                "Okay Nabu"
            };
            assert_eq!(strip_wake_word(heard, phrase), want, "{heard}");
        }
    }

    #[test]
    fn talk_before_the_wake_word_goes_with_it() {
        assert_eq!(
            strip_wake_word("so, okay nabu, turn it off", "Okay Nabu"),
            "turn it off"
        );
    }

    #[test]
    fn a_transcript_without_the_wake_word_is_left_alone() {
        for heard in [
            "Turn on the kitchen light.",
            "Now turn on the kitchen light.",
            "",
            "Okay.",
        ] {
            assert_eq!(strip_wake_word(heard, "Okay Nabu"), heard);
        }
        // a word of the request that merely starts alike, past the reach, stays
        assert_eq!(
            strip_wake_word("please set the living room to nine", "Okay Nabu"),
            "please set the living room to nine"
        );
    }

    #[test]
    fn the_wake_word_alone_leaves_nothing() {
        assert_eq!(strip_wake_word("Okay, Nabu.", "Okay Nabu"), "");
        assert_eq!(strip_wake_word("Alexa?", "Alexa"), "");
    }
}
