//! A grammar compiled to tries, followed a word at a time.
//!
//! The forms share one trie (forms that begin alike share their first nodes: the demo home's
//! 16,000 forms stand for 3 million sentences), each slot list has its own, and so do the
//! words that may come before a request and after it. A [`State`] is the set of places in
//! those tries that the words so far can have reached; it is empty once they can begin no
//! request of the set.

use std::collections::BTreeMap;

use crate::grammar::{Grammar, GrammarError, Item, Slot};
use crate::normalize::{self, JOINERS, SKIP_LEADING, SKIP_TRAILING};

/// How a transcript as a whole stands against the set ([`Matcher::whole`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Whole {
    /// Not a whole request of the set (part of one, or none).
    #[default]
    No,
    /// A whole request that a longer request of the set may continue ("set the thermostat
    /// to 20", which "degrees" may follow).
    MayGoOn,
    /// A whole request that no longer request of the set continues ("lock the front door";
    /// "and" and another request, or a trailing "please", do not count).
    Ends,
}

/// A grammar ready to follow.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// Sentence forms compiled.
    n_forms: usize,
    /// The grammar's guarded words, as keys.
    guarded: std::collections::BTreeSet<String>,
    /// Those of them held only where they choose a way ([`Grammar::ways`]), as keys.
    ways: std::collections::BTreeSet<String>,
    /// The call each form makes ([`Grammar::calls`]; each form its own when not given).
    calls: Vec<u32>,
    forms: Trie,
    lists: Vec<Trie>,
    lead: Trie,
    trail: Trie,
}

/// Where the words so far can have led: a set of places, closed under the moves that take no
/// word (a form's end leads to what may follow a request; a list slot to its values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    at: Vec<Pos>,
}

/// A way a phrase chooses that the transcript it would replace did not say
/// ([`Matcher::choice`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The word's place among the phrase's words ([`normalize::words`]).
    pub at: usize,
    /// The word, as a key.
    pub word: String,
    /// The words that in its place make another call, as keys.
    pub rivals: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pos {
    /// Inside the words before a request (`Lead(0)`: a request may begin here).
    Lead(u32),
    /// At a node of the forms' trie.
    Form(u32),
    /// Inside a list slot's value; the form goes on at `then` once the value ends.
    InList { list: u32, at: u32, then: u32 },
    /// Inside an any-words slot (a word taken); the form may go on at `then`.
    InWords { then: u32 },
    /// Inside an any-words slot whose last word is an article: another word must come before
    /// the form goes on at `then` (the intents' free slots never end with one).
    AfterArticle { then: u32 },
    /// After a whole request (the form it was), inside the words that may follow it (`at`
    /// 0: complete).
    Trail { at: u32, form: u32 },
}

const ROOT: u32 = 0;

/// Where `word`, taken by an any-words slot that goes on at `then`, leads.
fn in_words(word: &str, then: u32) -> Pos {
    if normalize::ARTICLES.contains(&word) {
        Pos::AfterArticle { then }
    } else {
        Pos::InWords { then }
    }
}

#[derive(Debug, Clone)]
struct Trie {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, Default)]
struct Node {
    words: BTreeMap<String, u32>,
    slots: Vec<(Slot, u32)>,
    end: bool,
    /// In the forms' trie: the forms that end here.
    forms: Vec<u32>,
}

impl Trie {
    fn new() -> Trie {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    fn of_phrases<'a>(phrases: impl IntoIterator<Item = &'a [&'a str]>) -> Trie {
        let mut trie = Trie::new();
        for p in phrases {
            trie.insert(p.iter().map(|w| Item::Word(w.to_string())));
        }
        trie
    }

    /// Adds a phrase; the node it ends at.
    fn insert(&mut self, items: impl IntoIterator<Item = Item>) -> usize {
        let mut at = ROOT as usize;
        for item in items {
            let next = self.nodes.len() as u32;
            let node = &mut self.nodes[at];
            let child = match item {
                Item::Word(w) => *node.words.entry(w).or_insert(next),
                Item::Slot(s) => match node.slots.iter().find(|(t, _)| *t == s) {
                    Some(&(_, c)) => c,
                    None => {
                        node.slots.push((s, next));
                        next
                    }
                },
            };
            if child == next {
                self.nodes.push(Node::default());
            }
            at = child as usize;
        }
        self.nodes[at].end = true;
        at
    }

    fn node(&self, at: u32) -> &Node {
        &self.nodes[at as usize]
    }

    fn next(&self, at: u32, word: &str) -> Option<u32> {
        self.node(at).words.get(word).copied()
    }

    /// Whether a word beginning with `partial` may follow `at`.
    fn has_word_starting(&self, at: u32, partial: &str) -> bool {
        self.node(at)
            .words
            .range::<str, _>((
                std::ops::Bound::Included(partial),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(w, _)| w.starts_with(partial))
    }

    fn has_next(&self, at: u32) -> bool {
        let n = self.node(at);
        !n.words.is_empty() || !n.slots.is_empty()
    }
}

impl Matcher {
    /// Compiles `grammar`; an error names the first form or list that cannot be used.
    pub fn new(grammar: &Grammar) -> Result<Matcher, GrammarError> {
        let mut lists = Vec::with_capacity(grammar.lists.len());
        for (i, values) in grammar.lists.iter().enumerate() {
            if values.is_empty() {
                return Err(GrammarError::EmptyList { list: i });
            }
            let mut trie = Trie::new();
            for v in values {
                let words = normalize::keys(v);
                if words.is_empty() {
                    return Err(GrammarError::Empty { form: v.clone() });
                }
                trie.insert(words.into_iter().map(Item::Word));
            }
            lists.push(trie);
        }
        let mut forms = Trie::new();
        for (i, form) in grammar.forms.iter().enumerate() {
            let end = forms.insert(grammar.items(form)?);
            forms.nodes[end].forms.push(i as u32);
        }
        let calls = match grammar.calls.len() {
            0 => (0..grammar.forms.len() as u32).collect(),
            n if n == grammar.forms.len() => grammar.calls.clone(),
            n => {
                return Err(GrammarError::Calls {
                    forms: grammar.forms.len(),
                    calls: n,
                })
            }
        };
        let mut lead = Trie::of_phrases(SKIP_LEADING.iter().copied());
        for phrase in &grammar.lead {
            let words = normalize::keys(phrase);
            if words.is_empty() {
                return Err(GrammarError::Empty {
                    form: phrase.clone(),
                });
            }
            lead.insert(words.into_iter().map(Item::Word));
        }
        Ok(Matcher {
            guarded: grammar
                .guarded
                .iter()
                .flat_map(|w| normalize::keys(w))
                .collect(),
            ways: grammar
                .ways
                .iter()
                .flat_map(|w| normalize::keys(w))
                .collect(),
            calls,
            n_forms: grammar.forms.len(),
            forms,
            lists,
            lead,
            trail: Trie::of_phrases(SKIP_TRAILING.iter().copied()),
        })
    }

    /// The grammar's sentence forms.
    pub fn forms(&self) -> usize {
        self.n_forms
    }

    /// Before any word.
    pub fn start(&self) -> State {
        let mut at = Vec::new();
        self.close(Pos::Lead(ROOT), &mut at);
        State::of(at)
    }

    /// After `word` (a key as [`normalize::keys`] gives it) follows `state`.
    pub fn feed(&self, state: &State, word: &str) -> State {
        let mut at = Vec::new();
        for &p in &state.at {
            self.step(p, word, &mut at);
        }
        State::of(at)
    }

    /// After each of `words` in turn.
    pub fn feed_all<S: AsRef<str>>(&self, state: &State, words: &[S]) -> State {
        words
            .iter()
            .fold(state.clone(), |s, w| self.feed(&s, w.as_ref()))
    }

    /// Whether a word that begins with `partial` may come next: one of the set's own
    /// ([`Matcher::own_word`]), or any word where an any-words slot may take it.
    pub fn may_begin(&self, state: &State, partial: &str) -> bool {
        self.own_word(state, partial, true)
            || state.at.iter().any(|&p| match p {
                Pos::InWords { .. } | Pos::AfterArticle { .. } => true,
                Pos::Form(n) => (self.forms.node(n).slots.iter()).any(|(s, _)| *s == Slot::Words),
                Pos::Lead(_) | Pos::InList { .. } | Pos::Trail { .. } => false,
            })
    }

    /// Whether `word` after `state` can be one of the set's own words (a form's, a list
    /// value's, a number in its slot, a word around a request), not only a word an any-words
    /// slot takes; when `partial`, whether a word beginning with it can. After "is the egg
    /// timer": "running" yes, "rounding" no (only a timer's name could go on so).
    pub fn own_word(&self, state: &State, word: &str, partial: bool) -> bool {
        let in_trie = |trie: &Trie, n: u32| {
            if partial {
                trie.has_word_starting(n, word)
            } else {
                trie.next(n, word).is_some()
            }
        };
        let number = || {
            if partial {
                begins_number(word)
            } else {
                is_number(word)
            }
        };
        let joiner = || {
            JOINERS.iter().any(|j| {
                if partial {
                    j.starts_with(word)
                } else {
                    *j == word
                }
            })
        };
        state.at.iter().any(|&p| match p {
            Pos::InWords { .. } | Pos::AfterArticle { .. } => false,
            Pos::Lead(n) => in_trie(&self.lead, n),
            Pos::Form(n) => {
                in_trie(&self.forms, n)
                    || (self.forms.node(n).slots.iter())
                        .any(|(s, _)| *s == Slot::Number && number())
            }
            Pos::InList { list, at, .. } => in_trie(&self.lists[list as usize], at),
            Pos::Trail { at, .. } => in_trie(&self.trail, at) || (at == ROOT && joiner()),
        })
    }

    /// Whether the words so far are a whole request of the set (or several joined).
    pub fn is_complete(&self, state: &State) -> bool {
        state
            .at
            .iter()
            .any(|p| matches!(p, Pos::Trail { at: ROOT, .. }))
    }

    /// Whether a word may still come that makes a longer request of the set ("turn on the
    /// kitchen light" → "… to half"; a number's slot, an any-words slot, words before a
    /// request). What may follow a whole request without changing it (the skip words after
    /// one, "and" and another request) does not count.
    pub fn may_grow(&self, state: &State) -> bool {
        state.at.iter().any(|&p| match p {
            Pos::Lead(_) | Pos::InWords { .. } | Pos::AfterArticle { .. } | Pos::InList { .. } => {
                true
            }
            Pos::Form(n) => self.forms.has_next(n),
            Pos::Trail { .. } => false,
        })
    }

    /// How `text` as a whole stands against the set: a request that ends there, one that a
    /// longer request of the set may continue, or not a whole request.
    pub fn whole(&self, text: &str) -> Whole {
        let state = self.feed_all(&self.start(), &normalize::keys(text));
        match (self.is_complete(&state), self.may_grow(&state)) {
            (false, _) => Whole::No,
            (true, true) => Whole::MayGoOn,
            (true, false) => Whole::Ends,
        }
    }

    /// The first word of `phrase` that decides a request's way (a number, or a guarded word
    /// where it chooses: [`Grammar::ways`]) and that `open` does not have: a phrase that
    /// would change what was asked for rather than how it was heard ("Mott the garage door"
    /// → "Lock the garage door"). `None`: the phrase only mends words around those ("is the
    /// egg timer rounding" → "… running", where no other way could be said).
    pub fn introduces(&self, open: &str, phrase: &str) -> Option<String> {
        self.introduced(open, phrase).next().map(|(_, w, _)| w)
    }

    /// The way `phrase` chooses where `open` said no way: the one word [`Matcher::introduces`]
    /// finds, when it is a way's word (not a number, not an answer) and no other word is
    /// introduced, with the guarded words that in its place make another call ("open" for
    /// "close the garage door"). A recogniser may weigh the phrase against those to see
    /// whether the audio itself chooses ([`Choice`]). `None`: nothing is introduced, or more
    /// than one word, or a word no audio may choose.
    pub fn choice(&self, open: &str, phrase: &str) -> Option<Choice> {
        let mut introduced = self.introduced(open, phrase);
        let (at, word, rivals) = introduced.next()?;
        if introduced.next().is_some() || rivals.is_empty() {
            return None;
        }
        Some(Choice { at, word, rivals })
    }

    /// The words of `phrase` (their places among its keys) that decide a request's way and
    /// that `open` does not have, each with its rivals when it is a way's word ([`Matcher::rivals`];
    /// none for a number or an answer's word), looked at one by one as they are asked for.
    fn introduced(
        &self,
        open: &str,
        phrase: &str,
    ) -> impl Iterator<Item = (usize, String, Vec<String>)> + '_ {
        let had = normalize::keys(open);
        let words = normalize::keys(phrase);
        (0..words.len()).filter_map(move |at| {
            let w = &words[at];
            if had.contains(w) {
                return None;
            }
            if is_number(w) || (self.guarded.contains(w) && !self.ways.contains(w)) {
                return Some((at, w.clone(), Vec::new()));
            }
            if !self.guarded.contains(w) {
                return None;
            }
            let rivals = self.rivals(&words, at);
            (!rivals.is_empty()).then(|| (at, w.clone(), rivals))
        })
    }

    /// The first word of `open` that says an amount or a way (a number, a number word, a
    /// guarded word) and that `phrase` leaves out with no word of its own in its place: a
    /// phrase that drops it changes what was asked rather than how it was heard ("set a timer
    /// for an hour, end to half" → "set a timer for an hour"), as one that
    /// [`Matcher::introduces`] such a word would. Heard differently is a mend ("and the back
    /// door 2" → "… too").
    pub fn leaves_out(&self, open: &str, phrase: &str) -> Option<String> {
        normalize::gaps(open, phrase)
            .into_iter()
            .filter(|gap| gap.put_in == 0)
            .flat_map(|gap| gap.out)
            .find(|w| is_number(w) || normalize::is_number_word(w) || self.guarded.contains(w))
    }

    /// The guarded words that in place of the one `at` still make a request of the set, and
    /// another call: the word there chooses between ways. A form of another call
    /// ([`Grammar::calls`]: "unlock the front door" for "lock the front door") chooses; so
    /// does the same form, the word then a slot's value ("turn {0} the light"); another
    /// form of the same call does not ("brighten the lamp to 30" for "dim the lamp to 30",
    /// "is the front door unlocked" for "… locked").
    fn rivals(&self, words: &[String], at: usize) -> Vec<String> {
        let ended = |w: &[String]| -> Vec<u32> {
            let state = self.feed_all(&self.start(), w);
            let mut forms: Vec<u32> = state
                .at
                .iter()
                .filter_map(|p| match *p {
                    Pos::Trail { at: ROOT, form } => Some(form),
                    _ => None,
                })
                .collect();
            forms.dedup();
            forms
        };
        let mine = ended(words);
        let call = |f: u32| self.calls.get(f as usize).copied();
        self.guarded
            .iter()
            .filter(|g| words.get(at) != Some(*g))
            .filter(|g| {
                let mut other = words.to_vec();
                other[at] = (*g).clone();
                ended(&other)
                    .into_iter()
                    .any(|f| mine.contains(&f) || !mine.iter().any(|&m| call(m) == call(f)))
            })
            .cloned()
            .collect()
    }

    /// Whether `text` as a whole is a request of the set.
    pub fn accepts(&self, text: &str) -> bool {
        let state = self.feed_all(&self.start(), &normalize::keys(text));
        self.is_complete(&state)
    }

    /// Adds `p` and every place it reaches without a word.
    fn close(&self, p: Pos, out: &mut Vec<Pos>) {
        if out.contains(&p) {
            return;
        }
        out.push(p);
        match p {
            Pos::Lead(ROOT) => self.close(Pos::Form(ROOT), out),
            Pos::Form(n) => {
                let node = self.forms.node(n);
                for &(slot, then) in &node.slots {
                    if let Slot::List(list) = slot {
                        self.close(
                            Pos::InList {
                                list,
                                at: ROOT,
                                then,
                            },
                            out,
                        );
                    }
                }
                for &form in &node.forms {
                    self.close(Pos::Trail { at: ROOT, form }, out);
                }
            }
            Pos::InWords { then } => self.close(Pos::Form(then), out),
            Pos::Lead(_) | Pos::InList { .. } | Pos::AfterArticle { .. } | Pos::Trail { .. } => {}
        }
    }

    /// The places `word` leads to from `p`.
    fn step(&self, p: Pos, word: &str, out: &mut Vec<Pos>) {
        match p {
            Pos::Lead(n) => {
                if let Some(c) = self.lead.next(n, word) {
                    self.enter(&self.lead, c, Pos::Lead, out);
                }
            }
            Pos::Form(n) => {
                if let Some(c) = self.forms.next(n, word) {
                    self.close(Pos::Form(c), out);
                }
                for &(slot, then) in &self.forms.node(n).slots {
                    match slot {
                        Slot::Number if is_number(word) => self.close(Pos::Form(then), out),
                        Slot::Words => self.close(in_words(word, then), out),
                        Slot::Number | Slot::List(_) => {}
                    }
                }
            }
            Pos::InList { list, at, then } => {
                let trie = &self.lists[list as usize];
                if let Some(c) = trie.next(at, word) {
                    if trie.has_next(c) {
                        self.close(Pos::InList { list, at: c, then }, out);
                    }
                    if trie.node(c).end {
                        self.close(Pos::Form(then), out);
                    }
                }
            }
            Pos::InWords { then } | Pos::AfterArticle { then } => {
                self.close(in_words(word, then), out)
            }
            Pos::Trail { at, form } => {
                if let Some(c) = self.trail.next(at, word) {
                    self.enter(&self.trail, c, |at| Pos::Trail { at, form }, out);
                }
                if at == ROOT && JOINERS.contains(&word) {
                    self.close(Pos::Lead(ROOT), out);
                }
            }
        }
    }

    /// Moves into node `c` of a skip-word trie: on inside a phrase, back to its root at a
    /// phrase's end (another may follow).
    fn enter(&self, trie: &Trie, c: u32, pos: impl Fn(u32) -> Pos, out: &mut Vec<Pos>) {
        if trie.has_next(c) {
            self.close(pos(c), out);
        }
        if trie.node(c).end {
            self.close(pos(ROOT), out);
        }
    }
}

impl State {
    fn of(mut at: Vec<Pos>) -> State {
        at.sort_unstable();
        at.dedup();
        State { at }
    }

    /// True once the words so far can begin no request of the set.
    pub fn is_dead(&self) -> bool {
        self.at.is_empty()
    }
}

/// A number as a transcript writes it: digits, with a `.` or `:` inside ("21.5", "7:30").
fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
        && word.ends_with(|c: char| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ':')
}

/// Whether `partial` may be the beginning of a number.
fn begins_number(partial: &str) -> bool {
    partial.is_empty()
        || (partial.starts_with(|c: char| c.is_ascii_digit())
            && partial
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn house() -> Matcher {
        Matcher::new(&Grammar {
            lists: vec![
                vec!["kitchen".into(), "living room".into(), "living".into()],
                vec!["10".into(), "20.5".into()],
            ],
            forms: vec![
                "turn on the {0} light".into(),
                "turn off the {0} light".into(),
                "set the thermostat to {1} degrees".into(),
                "set a timer for {number} minutes".into(),
                "remind me to {words} at {number}".into(),
                "lock the front door".into(),
                "unlock the front door".into(),
                "is the {words} timer running".into(),
                "wake me up at {number}".into(),
                "stop".into(),
                "do it".into(),
                "no".into(),
            ],
            lead: vec!["Hey Jarvis".into(), "okay nabu".into()],
            guarded: ["lock", "unlock", "on", "off", "running", "up", "do", "no"]
                .map(String::from)
                .to_vec(),
            ways: ["lock", "unlock", "on", "off", "running", "up"]
                .map(String::from)
                .to_vec(),
            ..Grammar::default()
        })
        .unwrap()
    }

    #[test]
    fn a_request_ends_when_no_longer_one_continues_it() {
        let m = Matcher::new(&Grammar {
            lists: vec![vec!["kitchen".into(), "hall".into()]],
            forms: vec![
                "turn on the {0} light".into(),
                "turn on the {0} light to {number} percent".into(),
                "set the thermostat to {number}".into(),
                "set the thermostat to {number} degrees".into(),
                "lock the front door".into(),
                "stop".into(),
            ],
            lead: vec!["Hey Jarvis".into()],
            ..Grammar::default()
        })
        .unwrap();
        for ends in [
            "Set the thermostat to 20 degrees.",
            "Turn on the kitchen light to 50 percent, please.",
            "Hey Jarvis, lock the front door.",
            "Lock the front door and set the thermostat to 20 degrees",
            "Stop.",
        ] {
            assert_eq!(m.whole(ends), Whole::Ends, "{ends}");
        }
        for may_grow in [
            // whole, but a longer request begins with it
            "Turn on the kitchen light.",
            "Set the thermostat to 20.",
            // not yet whole
            "Set the thermostat to",
            "Lock the front door and",
            "Hey Jarvis",
            // no request of the set
            "What time is it?",
        ] {
            assert_ne!(m.whole(may_grow), Whole::Ends, "{may_grow}");
        }
        assert_eq!(m.whole("Lock the front door."), Whole::Ends);
        assert_eq!(m.whole("Set the thermostat to 20."), Whole::MayGoOn);
        assert_eq!(m.whole("Turn on the kitchen light"), Whole::MayGoOn);
        assert_eq!(m.whole("Set the thermostat to"), Whole::No);
        assert_eq!(m.whole("What time is it?"), Whole::No);
    }

    #[test]
    fn whole_requests_are_accepted_with_the_words_intents_allow_around_them() {
        let m = house();
        for yes in [
            "Turn on the kitchen light.",
            "turn off the living room light",
            "Turn on the living light",
            "Set the thermostat to 20.5 degrees.",
            "Set a timer for 15 minutes",
            "Remind me to water the plants at 7:30",
            "Remind me to take a break at 7",
            "Please, could you lock the front door for me? Thanks.",
            "Hey, turn on the kitchen light and lock the front door",
            "Hey Jarvis, turn on the kitchen light.",
            "Okay Nabu, please stop",
            "Stop.",
        ] {
            assert!(m.accepts(yes), "{yes}");
        }
        for no in [
            "Turn on the kitchen",
            "Turn on the bedroom light",
            "Set the thermostat to 21 degrees",
            "Set a timer for fifteen minutes",
            "Remind me to at 7",
            // free words never end with an article
            "Remind me to water the at 7",
            "Is the kitchen light on?",
            "Did you lock the front door?",
            "lock the front door please please me",
            "Jarvis hey turn on the kitchen light",
            "turn on the kitchen light hey jarvis",
            "turn on the living room room light",
            "",
            "and",
        ] {
            assert!(!m.accepts(no), "{no}");
        }
    }

    #[test]
    fn a_phrase_may_mend_the_words_around_a_request_but_never_choose_its_way() {
        let m = house();
        assert_eq!(
            m.introduces("is the Mac door locked", "lock the front door"),
            Some("lock".into())
        );
        assert_eq!(
            m.introduces("Mott the front door", "Lock the front door."),
            Some("lock".into())
        );
        assert_eq!(
            m.introduces("Turn on the kitten light", "turn on the kitchen light"),
            None
        );
        assert_eq!(
            m.introduces(
                "set a timer for fifteen minutes",
                "set a timer for 15 minutes"
            ),
            Some("15".into())
        );
        assert_eq!(
            m.introduces("set a timer for 15 minute", "set a timer for 15 minutes"),
            None
        );
        // the same words where they choose nothing: only how a form is worded
        assert_eq!(
            m.introduces("is the egg timer rounding", "is the egg timer running"),
            None
        );
        assert_eq!(m.introduces("wake me at bed 7", "wake me up at 7"), None);
        // still held where another way could stand in their place
        assert_eq!(
            m.introduces("switch up the kitchen light", "turn off the kitchen light"),
            Some("off".into())
        );
        // a guarded word that is not a way's (an answer's) is held everywhere
        assert_eq!(m.introduces("to it", "do it"), Some("do".into()));
    }

    #[test]
    fn a_way_a_phrase_chooses_comes_with_the_ways_that_could_stand_in_its_place() {
        let m = house();
        let choice = |open, phrase| m.choice(open, phrase);
        assert_eq!(
            choice("Mott the front door", "Lock the front door."),
            Some(Choice {
                at: 0,
                word: "lock".into(),
                rivals: vec!["unlock".into()]
            })
        );
        assert_eq!(
            choice("switch up the kitchen light", "turn off the kitchen light"),
            Some(Choice {
                at: 1,
                word: "off".into(),
                rivals: vec!["on".into()]
            })
        );
        // an amount, an answer's word, two words at once, or nothing chosen: no choice
        assert_eq!(
            choice(
                "set a timer for fifteen minutes",
                "set a timer for 15 minutes"
            ),
            None
        );
        assert_eq!(choice("to it", "do it"), None);
        assert_eq!(
            choice(
                "switch up the kitchen light",
                "turn off the kitchen light and lock the front door"
            ),
            None
        );
        assert_eq!(
            choice("is the egg timer rounding", "is the egg timer running"),
            None
        );
    }

    #[test]
    fn a_phrase_never_leaves_out_an_amount_or_a_way_that_was_heard() {
        let m = house();
        let out = |open, phrase| m.leaves_out(open, phrase);
        assert_eq!(
            out(
                "set a timer for 15 minutes, end to half.",
                "set a timer for 15 minutes"
            ),
            Some("half".into())
        );
        assert_eq!(
            out(
                "set a timer for 15 minutes and 20 seconds",
                "set a timer for 15 minutes"
            ),
            Some("20".into())
        );
        // heard otherwise, not left out
        assert_eq!(out("and the back door 2", "and the back door too"), None);
        assert_eq!(
            out("turn of the kitchen light", "turn off the kitchen light"),
            None
        );
        assert_eq!(
            out(
                "lock the front door, the front door on",
                "lock the front door"
            ),
            Some("on".into())
        );
        assert_eq!(out("is in the pasta timer", "resume the pasta timer"), None);
        assert_eq!(
            out("Turn on the kitten light", "turn on the kitchen light"),
            None
        );
    }

    #[test]
    fn a_partial_word_is_followed_as_it_grows() {
        let m = house();
        let s = m.start();
        assert!(m.may_begin(&s, "tu"));
        assert!(m.may_begin(&s, "pl")); // please
        assert!(!m.may_begin(&s, "bed"));
        let s = m.feed_all(&s, &["turn", "on", "the"]);
        assert!(m.may_begin(&s, "kit"));
        assert!(m.may_begin(&s, "liv"));
        assert!(!m.may_begin(&s, "bed"));
        let s = m.feed(&s, "kitchen");
        assert!(!m.is_complete(&s));
        let s = m.feed(&s, "light");
        assert!(m.is_complete(&s));
        assert!(m.may_begin(&s, "an")); // and
        assert!(m.may_begin(&s, "th")); // thanks, thank you
        assert!(!m.may_begin(&s, "li"));
        let timer = m.feed_all(&m.start(), &["set", "a", "timer", "for"]);
        assert!(m.may_begin(&timer, "1"));
        assert!(!m.may_begin(&timer, "fif"));
        assert!(m.feed(&m.start(), "bedroom").is_dead());
    }

    #[test]
    fn a_word_an_any_words_slot_takes_is_not_the_sets_own() {
        let m = house();
        let own = |words: &[&str], word: &str, partial: bool| {
            m.own_word(&m.feed_all(&m.start(), words), word, partial)
        };
        let timer = ["is", "the", "egg", "timer"];
        assert!(own(&timer, "running", false));
        assert!(own(&timer, "run", true));
        assert!(!own(&timer, "rounding", false));
        assert!(!own(&timer, "round", true));
        // a timer's name, and the form's own word that may also be one of its words
        assert!(!own(&["is", "the"], "egg", false));
        assert!(own(&["is", "the", "egg"], "timer", false));
        // a list's value, a number in its slot, the words around a request
        assert!(own(&["turn", "on", "the"], "kit", true));
        assert!(!own(&["turn", "on", "the"], "bed", true));
        assert!(own(&["set", "a", "timer", "for"], "15", false));
        assert!(own(&["set", "a", "timer", "for"], "1", true));
        assert!(!own(&["set", "a", "timer", "for"], "fifteen", false));
        assert!(own(&[], "hey", false));
        assert!(own(&["stop"], "please", false));
        assert!(own(&["stop"], "and", false));
        let remind = ["remind", "me", "to", "water", "the"];
        assert!(!own(&remind, "plants", false));
        assert!(own(&[&remind[..], &["plants"]].concat(), "at", false));
    }

    #[test]
    fn a_word_chooses_a_way_only_where_another_call_is_made_in_its_place() {
        let grammar = Grammar {
            lists: vec![vec!["lamp".into()], vec!["on".into(), "off".into()]],
            forms: [
                "dim the {0} to {number}",
                "brighten the {0} to {number}",
                "dim the {0}",
                "brighten the {0}",
                "is the {0} locked",
                "is the {0} unlocked",
                "turn {1} the {0}",
                "lock the {0}",
                "unlock the {0}",
            ]
            .map(String::from)
            .to_vec(),
            guarded: [
                "dim", "brighten", "locked", "unlocked", "on", "off", "lock", "unlock",
            ]
            .map(String::from)
            .to_vec(),
            ways: [
                "dim", "brighten", "locked", "unlocked", "on", "off", "lock", "unlock",
            ]
            .map(String::from)
            .to_vec(),
            calls: vec![0, 0, 1, 2, 3, 3, 4, 5, 6],
            ..Grammar::default()
        };
        let m = Matcher::new(&grammar).unwrap();
        // the same call either way: mended
        assert_eq!(
            m.introduces("then the lamp to 30", "dim the lamp to 30"),
            None
        );
        assert_eq!(m.introduces("is the lamp lock", "is the lamp locked"), None);
        // another call in its place: held
        assert_eq!(
            m.introduces("then the lamp", "dim the lamp"),
            Some("dim".into())
        );
        assert_eq!(
            m.introduces("mock the lamp", "lock the lamp"),
            Some("lock".into())
        );
        // a slot's value is the call's value
        assert_eq!(
            m.introduces("turn of the lamp", "turn off the lamp"),
            Some("off".into())
        );
        // without the calls, each form is its own
        let own = Matcher::new(&Grammar {
            calls: vec![],
            ..grammar.clone()
        })
        .unwrap();
        assert_eq!(
            own.introduces("then the lamp to 30", "dim the lamp to 30"),
            Some("dim".into())
        );
        // calls not one per form are refused
        let short = Grammar {
            calls: vec![0, 1],
            ..grammar
        };
        assert_eq!(
            Matcher::new(&short).unwrap_err(),
            GrammarError::Calls { forms: 9, calls: 2 }
        );
    }
}
