//! Whisper's repetition loop stopped where it starts.
//!
//! With the trimmed window and the house's words as prompt, tiny.en often hears a command,
//! then starts it again ("turn on the kitchen light, turn on the kitchen light, turn on …")
//! until the token cap, and the recogniser cuts the transcript back to the phrase once
//! (`recognizer::Step::Collapse`). Every token of the loop is a decoder step for nothing: on
//! a household's 40 spoken requests 11 decodes ran to the cap, and each cost about twice a
//! decode that ended by itself (~900 ms against ~450 ms on 2 cores, the house's words as
//! prompt).
//!
//! The guard watches the text as it is decoded (whisper.cpp's logits filter, called before
//! each token is chosen) and ends it (the end of text is the only token left to choose) once
//! it is a loop that cannot be what was said: the text so far is a phrase of two words or
//! more said again from its first word, and it holds more words than the audio could at
//! [`MAX_WORDS_PER_SECOND`]. A speaker who says a thing twice ("thank you, thank you") fits in
//! the audio and is not stopped; a loop of one word (whisper stuck on the first word) is left
//! to the recogniser's wider window.

use std::ffi::{c_int, c_void};

use whisper_rs::{FullParams, WhisperSysContext, WhisperSysState, WhisperTokenData};

use crate::phrase_pass::Vocab;

/// More words a second than anyone says, over an utterance with its pre-roll and the pause
/// after it (a fast speaker says about 3; the utterance's silence lowers that further).
pub const MAX_WORDS_PER_SECOND: f64 = 4.0;

/// The phrase `text` repeats from its first word when it began it again and holds more than
/// `max_words` words: the shortest phrase of two words or more that every later word follows
/// (words compared without case or punctuation; the last one may be cut short by a token
/// still to come), kept in its own spelling less the separator before the repetition.
pub fn loop_in(text: &str, max_words: usize) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= max_words {
        return None;
    }
    let plain: Vec<String> = words.iter().map(|w| plain_word(w)).collect();
    if plain.iter().any(String::is_empty) {
        return None;
    }
    let n = plain.len();
    let last = n - 1;
    let follows = |p: usize, i: usize| {
        let want = &plain[i % p];
        // the word being decoded may be only its first tokens yet
        plain[i] == *want || (i == last && want.starts_with(plain[i].as_str()))
    };
    // (one word over and over is whisper stuck on it, not a phrase begun again)
    let period = (1..n)
        .find(|&p| (p..n).all(|i| follows(p, i)))
        .filter(|&p| p > 1)?;
    phrase_of(&words, period)
}

/// The first `period` of `words` as the phrase a loop repeats: in their own spelling, less the
/// separator before the repetition; `None` if nothing is left.
pub(crate) fn phrase_of(words: &[&str], period: usize) -> Option<String> {
    let phrase = words.get(..period)?.join(" ");
    let phrase = phrase.trim_end_matches([',', ';', ':', '-', ' ']);
    (!phrase.is_empty()).then(|| phrase.to_string())
}

/// A word as the loop checks compare it: lower case, letters and digits only.
pub(crate) fn plain_word(w: &str) -> String {
    w.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// What a decode's guard saw: the loop it stopped, if it stopped one.
pub struct LoopGuard<'a> {
    texts: &'a [String],
    eot: i32,
    n_vocab: usize,
    max_words: usize,
    text: String,
    stopped: Option<String>,
}

impl<'a> LoopGuard<'a> {
    /// A guard for a decode of `audio_seconds` of audio (`n_vocab`: the model's vocabulary,
    /// special tokens included, as many as the decoder has logits).
    pub fn new(vocab: &'a Vocab, n_vocab: usize, audio_seconds: f64) -> LoopGuard<'a> {
        LoopGuard {
            texts: &vocab.texts,
            eot: vocab.eot,
            n_vocab,
            max_words: (audio_seconds * MAX_WORDS_PER_SECOND) as usize,
            text: String::new(),
            stopped: None,
        }
    }

    /// Run `decode` with the guard watching: it is given `params` with the guard's filter in
    /// them and consumes them (`WhisperState::full`). What it returned, and the phrase the
    /// decode looped on when the guard ended it.
    pub fn decode<T>(
        mut self,
        mut params: FullParams,
        decode: impl FnOnce(FullParams) -> T,
    ) -> (T, Option<String>) {
        let data: *mut LoopGuard<'a> = &mut self;
        // SAFETY: whisper.cpp calls `filter` only inside `whisper_full` with these params,
        // with `data` as user data, for one greedy decoder; the params are consumed by
        // `decode`, during which `self` stays where it is on this frame and nothing else
        // touches it.
        unsafe {
            params.set_filter_logits_callback(Some(filter));
            params.set_filter_logits_callback_user_data(data.cast::<c_void>());
        }
        let out = decode(params);
        (out, self.stopped)
    }

    /// Whether the decode must end before its next token, given the text tokens so far.
    fn must_end(&mut self, ids: impl Iterator<Item = i32>) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        self.text.clear();
        for id in ids.filter(|&id| id < self.eot) {
            if let Some(t) = usize::try_from(id).ok().and_then(|i| self.texts.get(i)) {
                self.text.push_str(t);
            }
        }
        self.stopped = loop_in(&self.text, self.max_words);
        self.stopped.is_some()
    }
}

/// whisper.cpp's logits filter: the end of text as the only choice once the guard says so.
unsafe extern "C" fn filter(
    _ctx: *mut WhisperSysContext,
    _state: *mut WhisperSysState,
    tokens: *const WhisperTokenData,
    n_tokens: c_int,
    logits: *mut f32,
    user_data: *mut c_void,
) {
    if user_data.is_null() || logits.is_null() {
        return;
    }
    // SAFETY: `user_data` is the `LoopGuard` `decode` installed, alive and unaliased for the
    // decode; `tokens` holds `n_tokens` entries and `logits` the model's `n_vocab` (the
    // guard's, from the same context), as whisper.cpp passes them (src/whisper.cpp,
    // `whisper_process_logits`, which asserts `n_logits == vocab.n_vocab`).
    let guard = unsafe { &mut *user_data.cast::<LoopGuard>() };
    let tokens = match usize::try_from(n_tokens) {
        Ok(n) if n > 0 && !tokens.is_null() => unsafe { std::slice::from_raw_parts(tokens, n) },
        _ => &[],
    };
    if !guard.must_end(tokens.iter().map(|t| t.id)) {
        return;
    }
    let logits = unsafe { std::slice::from_raw_parts_mut(logits, guard.n_vocab) };
    let eot = usize::try_from(guard.eot).unwrap_or(usize::MAX);
    for (i, l) in logits.iter_mut().enumerate() {
        if i != eot {
            *l = f32::NEG_INFINITY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_begun_again_beyond_what_the_audio_holds_is_a_loop() {
        let looped = "turn on the kitchen light, turn on";
        // 1.7 s of audio holds 6 words: seven are a loop, cut to the phrase
        assert_eq!(
            loop_in(looped, 6).as_deref(),
            Some("turn on the kitchen light")
        );
        // the word being decoded may be only its first token yet
        assert_eq!(
            loop_in("lock the front door lock the front door lo", 8).as_deref(),
            Some("lock the front door")
        );
        assert_eq!(
            loop_in("What is the temperature in the bedroom? What is", 7).as_deref(),
            Some("What is the temperature in the bedroom?")
        );
    }

    #[test]
    fn what_the_audio_could_hold_or_what_is_no_repetition_goes_on() {
        // said twice, and the audio holds it
        assert_eq!(loop_in("thank you, thank you", 4), None);
        assert_eq!(loop_in("turn on the kitchen light, turn on", 7), None);
        // more words than the audio holds, but not a phrase said again
        assert_eq!(loop_in("set the heating to twenty one degrees", 3), None);
        assert_eq!(loop_in("turn on the kitchen light, turn off", 3), None);
        // a loop that begins after other words: its first pass may have lost the end
        assert_eq!(
            loop_in("please switch off the lights off the lights off the", 3),
            None
        );
        // one word over and over: whisper stuck on the first word, left to a wider window
        assert_eq!(loop_in("Read Read Read Read", 1), None);
        assert_eq!(loop_in("", 0), None);
    }

    #[test]
    fn the_guard_reads_the_text_from_the_tokens_and_stays_stopped() {
        let vocab = Vocab {
            texts: [" turn", " on", " the", " light", ","]
                .map(String::from)
                .to_vec(),
            eot: 5,
        };
        // 1 s of audio holds 4 words
        let mut guard = LoopGuard::new(&vocab, 8, 1.0);
        assert!(!guard.must_end([0, 1, 2, 3].into_iter()));
        // the end of text and other special tokens are not text
        assert!(!guard.must_end([0, 1, 2, 3, 4, 7].into_iter()));
        assert!(guard.must_end([0, 1, 2, 3, 4, 0].into_iter()));
        assert!(guard.must_end([0].into_iter()));
        assert_eq!(guard.stopped.as_deref(), Some("turn on the light"));
    }
}
