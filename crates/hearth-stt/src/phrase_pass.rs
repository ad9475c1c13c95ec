//! The second pass: which request of the house's phrase set the audio supports best.
//!
//! After the open decode, the encoder's output is still in whisper's state, so the decoder
//! can be asked for the likelihood of any text without encoding the audio again. [`search`]
//! runs a beam search over the token sequences whose words the [`Matcher`] allows: each step
//! extends every sequence in the beam by the likeliest tokens that keep its words on the way
//! to a request of the set (looking at most at the `SCAN` likeliest tokens), keeps the
//! `width` likeliest (with room for those on the set's own words, not an any-words slot's:
//! `keep`), and stops once no sequence under way can beat the best finished one
//! (every token only lowers a sequence's log-likelihood) or the step budget is spent.
//!
//! The caller compares the phrase found with the open transcript's own log-likelihood (a
//! measured margin, see `Recognizer::transcribe`). Both are log-probabilities over whisper's
//! text tokens and end of text, as whisper.cpp's greedy decoder computes them.
//!
//! A decoder step costs about the same for one token as for several (tiny.en: ~5 ms on 2
//! cores, most of it the product with the 51,864-token embedding), so the search's cost is
//! its number of steps: about `width` per token of the phrase.

use hearth_phrases::{normalize, Matcher, State};

/// The likeliest next tokens looked at from each sequence.
pub const SCAN: usize = 256;

/// The token ids and texts a search needs.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Text of each token below `eot` (whisper's text tokens).
    pub texts: Vec<String>,
    /// The end-of-text token.
    pub eot: i32,
}

/// A decoder primed with the audio and the prompt: log-probabilities of the token after
/// `tokens`, over the text tokens and the end of text (`eot + 1` values).
pub trait Decoder {
    type Error;
    fn logprobs(&mut self, tokens: &[i32]) -> Result<&[f32], Self::Error>;
    /// Decoder calls made so far (what the budget counts).
    fn calls(&self) -> usize;
}

/// The set's likeliest request, as whisper would write it.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its text, trimmed.
    pub text: String,
    /// Its log-likelihood (end of text included).
    pub logprob: f32,
}

/// A sequence under way.
#[derive(Debug, Clone)]
struct Hyp {
    tokens: Vec<i32>,
    text: String,
    /// The matcher's state after the text's whole words.
    state: State,
    /// How many of the text's words `state` has taken.
    fed: usize,
    logprob: f32,
    /// Whether its last word (or the word it is writing) can be the set's own, not only a
    /// word an any-words slot takes ([`Matcher::own_word`]).
    own: bool,
}

/// How a search is bounded.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Sequences the beam holds.
    pub width: usize,
    /// Decoder calls it may make.
    pub budget: usize,
    /// The log-likelihood below which a phrase is of no use (the open transcript's less the
    /// margin): a sequence under way that falls below it is dropped, since no token can
    /// raise it again.
    pub floor: f32,
}

/// The likeliest whole request of `matcher`'s set the search reaches within `bounds`, or
/// `None`.
pub fn search<D: Decoder>(
    decoder: &mut D,
    vocab: &Vocab,
    matcher: &Matcher,
    bounds: Bounds,
) -> Result<Option<Found>, D::Error> {
    let Bounds {
        width,
        budget,
        floor,
    } = bounds;
    let width = width.max(1);
    let mut beam = vec![Hyp {
        tokens: Vec::new(),
        text: String::new(),
        state: matcher.start(),
        fed: 0,
        logprob: 0.0,
        own: true,
    }];
    let mut best: Option<Found> = None;
    let beaten = |lp: f32, best: &Option<Found>| {
        lp < floor || best.as_ref().is_some_and(|b| lp <= b.logprob)
    };
    while !beam.is_empty() {
        let mut children = Vec::new();
        for hyp in &beam {
            if decoder.calls() >= budget {
                return Ok(best);
            }
            let lp = decoder.logprobs(&hyp.tokens)?;
            let (_, partial) = split(&hyp.text);
            let ended = match &partial {
                Some(p) => matcher.feed(&hyp.state, p),
                None => hyp.state.clone(),
            };
            let eot = usize::try_from(vocab.eot).unwrap_or(0);
            if matcher.is_complete(&ended) {
                let total = hyp.logprob + lp.get(eot).copied().unwrap_or(f32::NEG_INFINITY);
                if !beaten(total, &best) {
                    best = Some(Found {
                        text: hyp.text.trim().to_string(),
                        logprob: total,
                    });
                }
            }
            // up to `width` children of each kind (`keep` chooses among them)
            let (mut own, mut free) = (0, 0);
            for (token, l) in likeliest(&lp[..eot.min(lp.len())], SCAN) {
                if (own == width && free == width) || beaten(hyp.logprob + l, &best) {
                    break;
                }
                let Some(text) = vocab.texts.get(token) else {
                    continue;
                };
                let token = i32::try_from(token).unwrap_or(0);
                let Some(child) = extend(matcher, hyp, token, text, l) else {
                    continue;
                };
                let taken = if child.own { &mut own } else { &mut free };
                if *taken < width {
                    *taken += 1;
                    children.push(child);
                }
            }
        }
        children.retain(|c| !beaten(c.logprob, &best));
        children.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        let mut children = keep(children, width);
        // siblings next to each other: the decoder's cache then differs by one token
        children.sort_by(|a, b| a.tokens.cmp(&b.tokens));
        tracing::trace!(
            calls = decoder.calls(),
            beam = ?children.iter().map(|c| (&c.text, c.logprob, c.own)).collect::<Vec<_>>(),
            "phrase search step"
        );
        beam = children;
    }
    Ok(best)
}

/// The `n` likeliest tokens of `lp`, likeliest first.
fn likeliest(lp: &[f32], n: usize) -> Vec<(usize, f32)> {
    let mut ids: Vec<usize> = (0..lp.len()).collect();
    let n = n.min(ids.len());
    if n > 0 && n < ids.len() {
        ids.select_nth_unstable_by(n - 1, |&a, &b| lp[b].total_cmp(&lp[a]));
    }
    ids.truncate(n);
    ids.sort_by(|&a, &b| lp[b].total_cmp(&lp[a]));
    ids.into_iter().map(|i| (i, lp[i])).collect()
}

/// The `width` first of `children` (likeliest first), with room kept for those on the set's
/// own words: sequences an any-words slot keeps alive with whatever the audio sounds like
/// take at most the rest. After "is the egg timer", "rounding", "round" and ", rounding" (a
/// timer's name going on) would otherwise push out "running", the form's own word, 3 nats
/// less likely; every way on through the name still needs the form's words after it.
fn keep(children: Vec<Hyp>, width: usize) -> Vec<Hyp> {
    let own = children.iter().filter(|c| c.own).count();
    let mut free_places = width - own.min(width / 2);
    let mut kept = Vec::with_capacity(width);
    for child in children {
        if kept.len() == width {
            break;
        }
        if child.own {
            kept.push(child);
        } else if free_places > 0 {
            free_places -= 1;
            kept.push(child);
        }
    }
    kept
}

/// `hyp` with `token` written after it, if its words may still become a request of the set.
fn extend(matcher: &Matcher, hyp: &Hyp, token: i32, text: &str, lp: f32) -> Option<Hyp> {
    if text.is_empty() || text.contains(['\n', '\u{fffd}']) {
        return None;
    }
    let whole = format!("{}{text}", hyp.text);
    let (words, partial) = split(&whole);
    if words.len() < hyp.fed {
        return None;
    }
    let (before, last) = match words[hyp.fed..].split_last() {
        Some((last, earlier)) => (matcher.feed_all(&hyp.state, earlier), Some(last)),
        None => (hyp.state.clone(), None),
    };
    let state = match last {
        Some(last) => matcher.feed(&before, last),
        None => before.clone(),
    };
    if state.is_dead() {
        return None;
    }
    if let Some(p) = &partial {
        if !matcher.may_begin(&state, p) {
            return None;
        }
    }
    let own = match (&partial, last) {
        (Some(p), _) => matcher.own_word(&state, p, true),
        (None, Some(last)) => matcher.own_word(&before, last, false),
        (None, None) => hyp.own,
    };
    let mut tokens = hyp.tokens.clone();
    tokens.push(token);
    Some(Hyp {
        tokens,
        text: whole,
        state,
        fed: words.len(),
        logprob: hyp.logprob + lp,
        own,
    })
}

/// `text`'s whole words, and the word it may still be writing (its last, when the text ends
/// inside a word: after a letter, a digit, an apostrophe, or a `.`/`:` after a digit, which a
/// digit may follow: "21." → "21.5").
fn split(text: &str) -> (Vec<String>, Option<String>) {
    let mut words = normalize::keys(text);
    let mut rev = text.chars().rev();
    let inside = match rev.next() {
        Some(c) if c.is_alphanumeric() || matches!(c, '\'' | '’') => true,
        Some('.' | ':') => rev.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    };
    let partial = if inside { words.pop() } else { None };
    (words, partial)
}

/// The log-likelihood of `tokens` as the transcript, end of text included: what the
/// decoder gives each token after those before it.
pub fn weigh<D: Decoder>(decoder: &mut D, tokens: &[i32], eot: i32) -> Result<f32, D::Error> {
    let mut total = 0.0;
    for k in 0..=tokens.len() {
        let next = tokens.get(k).copied().unwrap_or(eot);
        let lp = decoder.logprobs(&tokens[..k])?;
        total += usize::try_from(next)
            .ok()
            .and_then(|i| lp.get(i))
            .copied()
            .unwrap_or(f32::NEG_INFINITY);
    }
    Ok(total)
}

/// `text` with its word `at` ([`normalize::words`]) written as `word` instead, capitalised
/// as the word it replaces: "Close the garage door," with "open" at 0 is "Open the garage
/// door,". `None` if that word cannot be found in the text as written.
pub fn with_word(text: &str, at: usize, word: &str) -> Option<String> {
    let words = normalize::words(text);
    let mut cursor = 0;
    for (i, w) in words.iter().enumerate().take(at + 1) {
        // a word the text spells otherwise ("%" read as "percent") is not in it as written
        let Some(found) = text[cursor..].find(&w.said) else {
            if i == at {
                return None;
            }
            continue;
        };
        let start = cursor + found;
        if i == at {
            let mut out = text[..start].to_string();
            let capital = w.said.starts_with(char::is_uppercase);
            let mut chars = word.chars();
            if let (true, Some(first)) = (capital, chars.next()) {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            } else {
                out.push_str(word);
            }
            out.push_str(&text[start + w.said.len()..]);
            return Some(out);
        }
        cursor = start + w.said.len();
    }
    None
}

/// How many words a phrase changes in the open transcript: the larger of the words it takes
/// out and the words it puts in, kept words counted once in order (the longest common
/// subsequence of their keys). "is in the pasta timer" → "resume the pasta timer": 2 (out
/// "is", "in"; in "resume").
pub fn mended_words(open: &str, phrase: &str) -> usize {
    let gaps = normalize::gaps(open, phrase);
    let out: usize = gaps.iter().map(|g| g.out.len()).sum();
    let put_in: usize = gaps.iter().map(|g| g.put_in).sum();
    out.max(put_in)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_phrases::Grammar;
    use std::collections::HashMap;

    /// A decoder over a toy vocabulary whose next-token log-probabilities come from a table
    /// keyed by the text so far.
    struct Table {
        vocab: Vocab,
        rows: HashMap<String, Vec<(i32, f32)>>,
        out: Vec<f32>,
        calls: usize,
    }

    impl Decoder for Table {
        type Error = ();
        fn logprobs(&mut self, tokens: &[i32]) -> Result<&[f32], ()> {
            self.calls += 1;
            let text: String = tokens
                .iter()
                .map(|&t| self.vocab.texts[t as usize].as_str())
                .collect();
            self.out = vec![-30.0; self.vocab.texts.len() + 1];
            // the rows' tokens, and below them everything else
            for &(t, lp) in self.rows.get(&text).map(Vec::as_slice).unwrap_or(&[]) {
                self.out[t as usize] = lp;
            }
            Ok(&self.out)
        }
        fn calls(&self) -> usize {
            self.calls
        }
    }

    const WORDS: [&str; 8] = [" Lock", " Un", "lock", " the", " door", ".", " Is", "?"];

    fn table(rows: &[(&str, &[(&str, f32)])]) -> Table {
        table_of(&WORDS, rows)
    }

    fn table_of(words: &[&str], rows: &[(&str, &[(&str, f32)])]) -> Table {
        let texts: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let id = |w: &str| -> i32 {
            if w == "<eot>" {
                words.len() as i32
            } else {
                words.iter().position(|x| *x == w).unwrap() as i32
            }
        };
        Table {
            vocab: Vocab {
                texts,
                eot: words.len() as i32,
            },
            rows: rows
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        v.iter().map(|(w, lp)| (id(w), *lp)).collect(),
                    )
                })
                .collect(),
            out: Vec::new(),
            calls: 0,
        }
    }

    fn bounds(width: usize, budget: usize) -> Bounds {
        Bounds {
            width,
            budget,
            floor: f32::NEG_INFINITY,
        }
    }

    fn doors() -> Matcher {
        Matcher::new(&Grammar {
            lists: vec![],
            forms: vec!["lock the door".into(), "unlock the door".into()],
            ..Grammar::default()
        })
        .unwrap()
    }

    #[test]
    fn a_word_is_written_in_another_ways_place_as_the_text_has_it() {
        assert_eq!(
            with_word("Close the garage door,", 0, "open").as_deref(),
            Some("Open the garage door,")
        );
        assert_eq!(
            with_word("turn off the lights in the kitchen.", 1, "on").as_deref(),
            Some("turn on the lights in the kitchen.")
        );
        // the word's own place, not an earlier word it is part of
        assert_eq!(
            with_word("is the front door locked, lock it", 5, "unlock").as_deref(),
            Some("is the front door locked, unlock it")
        );
        assert_eq!(with_word("dim the lamp to 30%", 5, "half"), None);
        assert_eq!(with_word("close it", 2, "open"), None);
    }

    #[test]
    fn a_transcript_weighs_each_token_after_those_before_it_and_the_end() {
        let mut d = table(&[
            ("", &[(" Lock", -0.5)]),
            (" Lock", &[(" the", -0.25)]),
            (" Lock the", &[("<eot>", -1.0)]),
        ]);
        let eot = d.vocab.eot;
        let lp = weigh(&mut d, &[0, 3], eot).unwrap_or(f32::NAN);
        assert!((lp - -1.75).abs() < 1e-6, "{lp}");
    }

    #[test]
    fn a_beam_of_two_finds_the_likeliest_whole_request_not_the_likeliest_first_token() {
        // greedy writes " Lock" (-0.5 against -0.9), but " Un" "lock" is far likelier after
        // it than anything is after " Lock"
        let rows: &[(&str, &[(&str, f32)])] = &[
            ("", &[(" Lock", -0.5), (" Un", -0.9)]),
            (" Lock", &[(" the", -3.0)]),
            (" Un", &[("lock", -0.1)]),
            (" Unlock", &[(" the", -0.1)]),
            (" Lock the", &[(" door", -0.1)]),
            (" Unlock the", &[(" door", -0.1)]),
            (" Lock the door", &[(".", -0.1)]),
            (" Unlock the door", &[(".", -0.1)]),
            (" Lock the door.", &[("<eot>", -0.1)]),
            (" Unlock the door.", &[("<eot>", -0.1)]),
        ];
        let mut t = table(rows);
        let vocab = t.vocab.clone();
        let found = search(&mut t, &vocab, &doors(), bounds(2, 50))
            .unwrap()
            .unwrap();
        assert_eq!(found.text, "Unlock the door.");
        assert!((found.logprob - (-1.4)).abs() < 1e-4, "{}", found.logprob);
        let mut t = table(rows);
        let greedy = search(&mut t, &vocab, &doors(), bounds(1, 50))
            .unwrap()
            .unwrap();
        assert_eq!(greedy.text, "Lock the door.");
    }

    #[test]
    fn only_words_of_the_set_are_written() {
        // the decoder would write a question; the search writes the request it resembles,
        // far less likely
        let mut t = table(&[
            ("", &[(" Is", -0.2), (" Lock", -4.0)]),
            (" Is", &[(" the", -0.1)]),
            (" Lock", &[(" the", -0.5), ("?", -0.1)]),
            (" Lock the", &[(" door", -0.2)]),
            (" Lock the door", &[(".", -2.0)]),
            (" Lock the door.", &[("<eot>", -0.1)]),
        ]);
        let vocab = t.vocab.clone();
        let found = search(&mut t, &vocab, &doors(), bounds(2, 50))
            .unwrap()
            .unwrap();
        assert_eq!(found.text, "Lock the door.");
        assert!((found.logprob - (-6.8)).abs() < 1e-4, "{}", found.logprob);
        // with a floor above that, the search stops as soon as every sequence is below it
        t.calls = 0;
        let floor = Bounds {
            floor: -4.5,
            ..bounds(2, 50)
        };
        assert_eq!(search(&mut t, &vocab, &doors(), floor).unwrap(), None);
        // "", " Lock", " Lock?" and " Lock the" (at the floor); " door" falls below it
        assert_eq!(t.calls, 4);
    }

    #[test]
    fn a_name_that_follows_the_audio_leaves_room_for_the_forms_own_words() {
        // the audio sounds like "rounding"; a timer's name could go on with it (and with
        // "round", "rounded"), the form only with "," or "running"
        let words = [
            " Is",
            " the",
            " egg",
            " timer",
            " running",
            " rounding",
            " round",
            "ing",
            ",",
            "?",
            " rounded",
        ];
        let mut t = table_of(
            &words,
            &[
                ("", &[(" Is", -0.1)]),
                (" Is", &[(" the", -0.1)]),
                (" Is the", &[(" egg", -0.1)]),
                (" Is the egg", &[(" timer", -0.1)]),
                (
                    " Is the egg timer",
                    &[
                        (" rounding", -0.5),
                        (" round", -0.7),
                        (",", -1.0),
                        (" rounded", -1.2),
                        (" running", -3.4),
                    ],
                ),
                (" Is the egg timer rounding", &[("?", -0.1)]),
                (" Is the egg timer round", &[("ing", -0.1)]),
                (" Is the egg timer,", &[(" rounding", -0.2)]),
                (" Is the egg timer running", &[("?", -0.1)]),
                (" Is the egg timer running?", &[("<eot>", -0.1)]),
            ],
        );
        let vocab = t.vocab.clone();
        let timer = Matcher::new(&Grammar {
            forms: vec!["is the {words} timer running".into()],
            ..Grammar::default()
        })
        .unwrap();
        let found = search(&mut t, &vocab, &timer, bounds(4, 60))
            .unwrap()
            .unwrap();
        assert_eq!(found.text, "Is the egg timer running?");
        assert!((found.logprob - (-4.0)).abs() < 1e-4, "{}", found.logprob);
    }

    #[test]
    fn the_budget_bounds_the_questions_asked() {
        // nothing in the set is likely and every continuation stays possible for long
        let mut t = table(&[("", &[(" Lock", -0.1)]), (" Lock", &[(" the", -0.1)])]);
        let vocab = t.vocab.clone();
        let none = search(&mut t, &vocab, &doors(), bounds(2, 3)).unwrap();
        assert!(t.calls <= 3, "{}", t.calls);
        assert_eq!(none, None);
    }

    #[test]
    fn a_word_is_whole_once_something_other_than_its_letters_follows() {
        let s = |t: &str| split(t);
        assert_eq!(s(" Turn on"), (vec!["turn".into()], Some("on".into())));
        assert_eq!(s(" Turn on "), (vec!["turn".into(), "on".into()], None));
        assert_eq!(s(" to 21."), (vec!["to".into()], Some("21".into())));
        assert_eq!(s(" the door."), (vec!["the".into(), "door".into()], None));
        assert_eq!(s(" it's"), (vec![], Some("it's".into())));
        assert_eq!(s(""), (vec![], None));
    }

    #[test]
    fn a_mend_counts_the_words_it_takes_out_or_puts_in() {
        let m = mended_words;
        assert_eq!(m("is in the pasta timer,", "resume the pasta timer."), 2);
        assert_eq!(m("Help me the time.", "Tell me the time."), 1);
        assert_eq!(
            m(
                "Are there any time or running?",
                "Are there any timers running?"
            ),
            2
        );
        assert_eq!(
            m(
                "alarm is left on the pasta timer",
                "How long is left on the pasta timer?"
            ),
            2
        );
        // one request of two kept
        assert_eq!(
            m(
                "lock the back door and the garage door.",
                "lock the back door"
            ),
            4
        );
        // a remark rewritten
        assert_eq!(m("What a time to be alive.", "what's time"), 5);
        assert_eq!(m("Stop.", "stop"), 0);
        assert_eq!(m("", "stop"), 1);
    }
}
