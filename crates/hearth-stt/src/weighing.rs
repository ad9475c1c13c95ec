//! Weighing the phrase pass's phrase against the open transcript on whisper's own decoder:
//! the decoder primed with the audio and the prompt ([`Primed`], what
//! [`crate::phrase_pass::search`] asks), how much likelier a phrase's way is than the others
//! ([`way_contrast`]), and what the phrase is to the transcript ([`verdict`]).

use hearth_phrases::{Choice, Matcher};
use whisper_rs::{WhisperContext, WhisperError, WhisperState};

use crate::phrase_pass;
use crate::recognizer::{repeats_back_to_back, RecognizerConfig, MEND_WORDS, NEAR_WORDS};

/// The open transcript as the phrase pass weighed it: its text, whether it is a request of
/// the set itself, its log-likelihood (with its end of text when it is), and how much likelier
/// the found phrase's way is than the others ([`way_contrast`]) when the phrase chooses one.
pub(crate) struct Weighed<'a> {
    pub(crate) open: &'a str,
    pub(crate) accepted: bool,
    pub(crate) open_logprob: f32,
    pub(crate) way_contrast: Option<f32>,
}

/// What the phrase found is to the open transcript ([`verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It stands for the transcript: the transcript is the phrase.
    Stands,
    /// It would stand but for its distance: a mend within `config.ask_margin`, worth asking
    /// the person about ("Shall I turn on the ceiling fan?"), never taken.
    Near,
    /// Neither.
    Left,
}

/// What the phrase `found` is to the open transcript. A request of the set gives way only
/// to a likelier one; any other transcript to a phrase within `config.phrase_margin`, or
/// within `config.mend_margin` if it changes at most [`MEND_WORDS`] words (a mend of at
/// most [`NEAR_WORDS`] within `config.ask_margin` is [`Verdict::Near`]). Never to a phrase that leaves out a way
/// or an amount ([`Matcher::leaves_out`]), that adds an amount, or that adds a way the audio
/// does not choose by `config.way_contrast` over every other way ([`Matcher::introduces`],
/// [`Matcher::choice`]), or that says itself twice where the transcript did not
/// ([`repeats_back_to_back`]): the pass mends how a request was heard, never how much or how
/// many times, and which way only where the audio says it plainly.
pub(crate) fn verdict(
    config: &RecognizerConfig,
    matcher: &Matcher,
    open: &Weighed<'_>,
    found: &phrase_pass::Found,
) -> Verdict {
    if let Some(word) = matcher.leaves_out(open.open, &found.text) {
        tracing::debug!(word, "the phrase would leave out an amount or a way: left");
        return Verdict::Left;
    }
    if let Some(word) = matcher.introduces(open.open, &found.text) {
        match open.way_contrast {
            Some(c) if c >= config.way_contrast => {
                tracing::debug!(word, contrast = c, "the audio chooses the way");
            }
            contrast => {
                tracing::debug!(
                    word,
                    contrast,
                    "the phrase would add an amount, or a way the audio does not choose: left"
                );
                return Verdict::Left;
            }
        }
    }
    if repeats_back_to_back(&found.text) && !repeats_back_to_back(open.open) {
        return Verdict::Left;
    }
    let gap = open.open_logprob - found.logprob;
    if open.accepted {
        return if gap < 0.0 {
            Verdict::Stands
        } else {
            Verdict::Left
        };
    }
    let mended = phrase_pass::mended_words(open.open, &found.text);
    if gap <= config.phrase_margin || (gap <= config.mend_margin && mended <= MEND_WORDS) {
        Verdict::Stands
    } else if gap <= config.ask_margin && mended <= NEAR_WORDS {
        Verdict::Near
    } else {
        Verdict::Left
    }
}

/// How much likelier (nats) the audio makes `phrase` than the same phrase with each of
/// `choice`'s rivals in its way's place, both written out and weighed token by token
/// ([`phrase_pass::weigh`]); `None` when a rival cannot be written in its place.
pub(crate) fn way_contrast(
    context: &WhisperContext,
    decoder: &mut Primed<'_>,
    phrase: &str,
    choice: &Choice,
) -> Result<Option<f32>, WhisperError> {
    let eot = i32::try_from(decoder.eot).unwrap_or(i32::MAX);
    let mut weigh = |text: &str| -> Result<f32, WhisperError> {
        let written = format!(" {text}");
        let tokens = context.tokenize(&written, written.len() + 8)?;
        phrase_pass::weigh(decoder, &tokens, eot)
    };
    let mine = weigh(phrase)?;
    let mut best_rival = f32::NEG_INFINITY;
    for rival in &choice.rivals {
        let Some(text) = phrase_pass::with_word(phrase, choice.at, rival) else {
            return Ok(None);
        };
        best_rival = best_rival.max(weigh(&text)?);
    }
    Ok(Some(mine - best_rival))
}

/// whisper's decoder over the encoder output of the last run, primed with the prompt: the
/// tokens asked about last stay in its cache, so the next question pays only for the tokens
/// where it differs. whisper.cpp hands back the logits of a call's first row only, so a
/// question that differs in more than its last token takes two calls.
pub(crate) struct Primed<'a> {
    state: &'a mut WhisperState,
    prompt: usize,
    held: Vec<i32>,
    threads: usize,
    pub(crate) eot: usize,
    root: Vec<f32>,
    out: Vec<f32>,
    /// Decoder calls made.
    pub(crate) calls: usize,
}

impl<'a> Primed<'a> {
    /// The decoder as the last decode on `state` left it, whose prompt was `prompt` (as
    /// whisper.cpp lays it out: `Recognizer::decoder_prompt`): its cache holds the prompt
    /// already (the rows after it are dropped as questions are asked), so only the prompt's
    /// last token is decoded again, for what follows it. The prompt is ~2 ms a token on 2
    /// cores, and most of a short phrase pass's time when it was fed again.
    ///
    /// In a debug build the prompt is also fed whole, and what follows it must be the same:
    /// every real-model test that reaches the phrase pass checks that the layouts agree.
    pub(crate) fn after_decode(
        state: &'a mut WhisperState,
        prompt: Vec<i32>,
        threads: usize,
        eot: i32,
    ) -> Result<Self, WhisperError> {
        let mut primed = Primed {
            state,
            prompt: 0,
            held: Vec::new(),
            threads,
            eot: usize::try_from(eot).unwrap_or(0),
            root: Vec::new(),
            out: Vec::new(),
            calls: 0,
        };
        let before = prompt.len().saturating_sub(1);
        primed.feed(&prompt[before..], before)?;
        if cfg!(debug_assertions) {
            // (the check's calls are not the search's: its budget is the release build's)
            let calls = primed.calls;
            let cached = std::mem::take(&mut primed.out);
            primed.feed(&prompt, 0)?;
            let apart = cached
                .iter()
                .zip(&primed.out)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            debug_assert!(
                cached.len() == primed.out.len() && apart < 1e-2,
                "the decoder's cache after the decode does not hold the prompt as \
                 decoder_prompt lays it out (log-probabilities {apart} apart)"
            );
            primed.calls = calls;
        }
        primed.prompt = prompt.len();
        primed.root = primed.out.clone();
        Ok(primed)
    }

    /// Decodes `tokens` at `n_past` and keeps the log-probabilities after the last.
    fn feed(&mut self, tokens: &[i32], n_past: usize) -> Result<(), WhisperError> {
        let Some((last, before)) = tokens.split_last() else {
            return Ok(());
        };
        if !before.is_empty() {
            self.state.decode(before, n_past, self.threads)?;
            self.calls += 1;
        }
        self.state.decode(
            std::slice::from_ref(last),
            n_past + before.len(),
            self.threads,
        )?;
        self.calls += 1;
        let logits = self.state.get_logits()?;
        // text tokens and the end of text, as whisper.cpp's decoder weighs them
        log_softmax(&logits[..(self.eot + 1).min(logits.len())], &mut self.out);
        Ok(())
    }
}

impl phrase_pass::Decoder for Primed<'_> {
    type Error = WhisperError;

    fn logprobs(&mut self, tokens: &[i32]) -> Result<&[f32], WhisperError> {
        if tokens.is_empty() {
            return Ok(&self.root);
        }
        let common = self
            .held
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        self.feed(&tokens[common..], self.prompt + common)?;
        self.held = tokens.to_vec();
        Ok(&self.out)
    }

    fn calls(&self) -> usize {
        self.calls
    }
}

fn log_softmax(logits: &[f32], out: &mut Vec<f32>) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = logits.iter().map(|&l| (l - max).exp()).sum();
    let log_sum = max + sum.ln();
    out.clear();
    out.extend(logits.iter().map(|&l| l - log_sum));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recognizer::DEFAULT_WAY_CONTRAST;

    #[test]
    fn a_request_of_the_set_gives_way_only_to_a_likelier_one_never_to_a_loop() {
        let timers = Matcher::new(&hearth_phrases::Grammar {
            forms: ["cancel timer", "cancel all timers", "add {number} minutes"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        })
        .unwrap();
        let config = RecognizerConfig::default();
        let found = |text: &str, logprob: f32| phrase_pass::Found {
            text: text.into(),
            logprob,
        };
        let stands = |open: &str, accepted: bool, open_logprob: f32, f: phrase_pass::Found| {
            let weighed = Weighed {
                open,
                accepted,
                open_logprob,
                way_contrast: None,
            };
            verdict(&config, &timers, &weighed, &f) == Verdict::Stands
        };
        // after a loop, "cancel timer," (a request of the set) against the set's likeliest
        let all = found("cancel all timers.", -2.57);
        assert!(stands("cancel timer,", true, -3.90, all.clone()));
        // a request of the set gives way to nothing less likely, however close
        assert!(!stands("cancel timer,", true, -2.5, all.clone()));
        // any other transcript takes a phrase within the margins
        assert!(stands("cancel timers,", false, -2.0, all));
        let far = found("cancel all timers.", -6.0);
        assert!(!stands("cancel timers,", false, -2.0, far.clone()));
        // a mend past the mend margin but within the ask margin is near: asked, not taken
        let weighed = |open| Weighed {
            open,
            accepted: false,
            open_logprob: -2.0,
            way_contrast: None,
        };
        let near = verdict(&config, &timers, &weighed("cancel timers,"), &far);
        assert_eq!(near, Verdict::Near);
        let further = found("cancel all timers.", -2.0 - config.ask_margin - 0.5);
        let left = verdict(&config, &timers, &weighed("cancel timers,"), &further);
        assert_eq!(left, Verdict::Left);
        // and a phrase that is no mend (more words changed) is never near
        let rewrite = verdict(
            &config,
            &timers,
            &weighed("can sell the time is now over"),
            &far,
        );
        assert_eq!(rewrite, Verdict::Left);
        // never one that says itself twice where the transcript said it once: a window that
        // loops likes the loop
        let twice = found("cancel all timers, cancel all timers,", -2.0);
        assert!(!stands("cancel all timers", true, -3.0, twice.clone()));
        assert!(!stands("cancel all timer", false, -2.5, twice.clone()));
        // unless the transcript did
        assert!(stands(
            "cancel all timers. Cancel all timers.",
            false,
            -2.5,
            twice
        ));
        // nor one with another amount
        let three = found("add 3 minutes", -1.0);
        assert!(!stands("add 2 minutes", true, -3.0, three.clone()));
        assert!(!stands("add to minutes", false, -1.5, three.clone()));
        assert!(stands("at 3 minutes", false, -1.5, three));
    }

    #[test]
    fn a_way_the_transcript_did_not_say_is_taken_only_where_the_audio_chooses_it() {
        let doors = Matcher::new(&hearth_phrases::Grammar {
            forms: ["open the garage door", "close the garage door"]
                .map(String::from)
                .to_vec(),
            guarded: vec!["open".into(), "close".into()],
            ways: vec!["open".into(), "close".into()],
            ..Default::default()
        })
        .unwrap();
        let config = RecognizerConfig::default();
        let close = phrase_pass::Found {
            text: "Close the garage door,".into(),
            logprob: -4.0,
        };
        let stands = |way_contrast: Option<f32>| {
            let weighed = Weighed {
                open: "post the garage door,",
                accepted: false,
                open_logprob: -2.0,
                way_contrast,
            };
            verdict(&config, &doors, &weighed, &close) == Verdict::Stands
        };
        assert!(stands(Some(DEFAULT_WAY_CONTRAST + 0.5)));
        assert!(!stands(Some(DEFAULT_WAY_CONTRAST - 0.5)));
        // "open" likelier than what was found
        assert!(!stands(Some(-1.0)));
        // not weighed: never taken
        assert!(!stands(None));
        // and the margins still hold
        let far = phrase_pass::Found {
            logprob: -9.0,
            ..close.clone()
        };
        let weighed = Weighed {
            open: "post the garage door,",
            accepted: false,
            open_logprob: -2.0,
            way_contrast: Some(10.0),
        };
        assert_eq!(verdict(&config, &doors, &weighed, &far), Verdict::Left);
    }
}
