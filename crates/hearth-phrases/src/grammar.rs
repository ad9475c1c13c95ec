//! The phrase set's wire form.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A phrase set: sentence forms whose slots refer to lists of values.
///
/// A form is its words separated by spaces; a slot is written `{N}` (any value of `lists[N]`),
/// `{number}` (any number, in digits) or `{words}` (one or more words of any kind, the last
/// not "a", "an" or "the": an article goes before its noun). Words are
/// compared as [`crate::normalize::keys`] gives them, so "Living-room" in a form is "living
/// room". A list's values are phrases of one or more words.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grammar {
    /// Slot vocabularies.
    pub lists: Vec<Vec<String>>,
    /// Sentence forms.
    pub forms: Vec<String>,
    /// Phrases that may come before a request besides the words that carry no command (the
    /// wake words: "Hey Jarvis, turn on …" said in one breath).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lead: Vec<String>,
    /// Words that decide which way a request goes ("lock", "unlock", "on", "off", "dim"): a
    /// recogniser held to the set never writes one the open transcript does not have
    /// ([`crate::Matcher::introduces`]; numbers are held so too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guarded: Vec<String>,
    /// Of the guarded words, those that choose a way only where another guarded word could
    /// stand in their place: "lock" in "lock the front door" (the set also has "unlock the
    /// front door"), not "running" in "is the egg timer running" or "up" in "wake me up at
    /// 7", which are only how their forms are worded. The other guarded words (the answers to
    /// a question: "yes", "go ahead") are held everywhere. A reader that does not know this
    /// list holds all of them everywhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ways: Vec<String>,
    /// The words a recogniser should expect for these requests, most important first,
    /// separated by `, ` ("night light, big light, kitchen, …"): a recogniser primes its
    /// decoder with as many from the start as it holds (whisper's initial prompt). Sent with
    /// the set, so they follow the house as it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The call each form makes, by number, one per form when given: forms of one number
    /// make the same call whichever of their words they say ("dim the {0} to {number}" and
    /// "brighten the {0} to {number}"), so a guarded word there chooses no way
    /// ([`crate::Matcher::introduces`]). Not given: each form makes a call of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
}

/// A slot of a form as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    List(u32),
    Number,
    Words,
}

/// One item of a form: a word or a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    Word(String),
    Slot(Slot),
}

/// Why a grammar cannot be used. Each message names the form and what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// A slot names a list the grammar does not have.
    #[error("phrase form {form:?}: slot {{{slot}}} names no list (the grammar has {lists}); number lists from 0, or write {{number}} or {{words}}")]
    NoSuchList {
        form: String,
        slot: String,
        lists: usize,
    },
    /// A `{…}` that is neither a list number nor `number` or `words`.
    #[error("phrase form {form:?}: `{slot}` is not a slot; write {{N}} for list N, {{number}} or {{words}}")]
    BadSlot { form: String, slot: String },
    /// A form or a list value with no words.
    #[error("phrase form {form:?}: it has no words; leave it out")]
    Empty { form: String },
    /// `calls` given, but not one per form.
    #[error("the phrase set has {calls} calls for {forms} forms; give one per form, or none")]
    Calls { forms: usize, calls: usize },
    /// A list with no values.
    #[error("phrase list {list}: it has no values; give it one or more, or leave out the forms that use it")]
    EmptyList { list: usize },
}

impl Grammar {
    /// A short id of its contents (hex of a sha256): the same set, the same id.
    pub fn id(&self) -> String {
        let mut hash = Sha256::new();
        for list in &self.lists {
            for value in list {
                hash.update(value.as_bytes());
                hash.update([0]);
            }
            hash.update([1]);
        }
        hash.update([2]);
        for form in &self.forms {
            hash.update(form.as_bytes());
            hash.update([0]);
        }
        hash.update([3]);
        for lead in &self.lead {
            hash.update(lead.as_bytes());
            hash.update([0]);
        }
        hash.update([4]);
        for word in &self.guarded {
            hash.update(word.as_bytes());
            hash.update([0]);
        }
        hash.update([5]);
        for word in &self.ways {
            hash.update(word.as_bytes());
            hash.update([0]);
        }
        if let Some(prompt) = &self.prompt {
            hash.update([6]);
            hash.update(prompt.as_bytes());
        }
        if !self.calls.is_empty() {
            hash.update([7]);
            for call in &self.calls {
                hash.update(call.to_le_bytes());
            }
        }
        hash.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A form's items.
    pub(crate) fn items(&self, form: &str) -> Result<Vec<Item>, GrammarError> {
        let mut items = Vec::new();
        for token in form.split_whitespace() {
            match token.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                Some("number") => items.push(Item::Slot(Slot::Number)),
                Some("words") => items.push(Item::Slot(Slot::Words)),
                Some(n) => {
                    let bad = || GrammarError::BadSlot {
                        form: form.into(),
                        slot: token.into(),
                    };
                    let list: u32 = n.parse().map_err(|_| bad())?;
                    if list as usize >= self.lists.len() {
                        return Err(GrammarError::NoSuchList {
                            form: form.into(),
                            slot: n.into(),
                            lists: self.lists.len(),
                        });
                    }
                    items.push(Item::Slot(Slot::List(list)));
                }
                None if token.contains(['{', '}']) => {
                    return Err(GrammarError::BadSlot {
                        form: form.into(),
                        slot: token.into(),
                    })
                }
                None => items.extend(crate::normalize::keys(token).into_iter().map(Item::Word)),
            }
        }
        if items.is_empty() {
            return Err(GrammarError::Empty { form: form.into() });
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar(forms: &[&str]) -> Grammar {
        Grammar {
            lists: vec![vec!["kitchen".into(), "living room".into()]],
            forms: forms.iter().map(|f| f.to_string()).collect(),
            ..Grammar::default()
        }
    }

    #[test]
    fn forms_read_as_words_and_slots() {
        let g = grammar(&[]);
        assert_eq!(
            g.items("Turn on the {0} light-bulb {number} {words}")
                .unwrap(),
            [
                Item::Word("turn".into()),
                Item::Word("on".into()),
                Item::Word("the".into()),
                Item::Slot(Slot::List(0)),
                Item::Word("light".into()),
                Item::Word("bulb".into()),
                Item::Slot(Slot::Number),
                Item::Slot(Slot::Words),
            ]
        );
    }

    #[test]
    fn bad_forms_name_the_form_and_the_fix() {
        let g = grammar(&[]);
        let e = g.items("turn on {3}").unwrap_err().to_string();
        assert!(
            e.contains("\"turn on {3}\"") && e.contains("names no list"),
            "{e}"
        );
        let e = g.items("turn on {room}").unwrap_err().to_string();
        assert!(e.contains("`{room}` is not a slot"), "{e}");
        let e = g.items("turn on {0").unwrap_err().to_string();
        assert!(e.contains("is not a slot"), "{e}");
        let e = g.items(" ?! ").unwrap_err().to_string();
        assert!(e.contains("no words"), "{e}");
    }

    #[test]
    fn the_id_follows_the_contents() {
        let a = grammar(&["turn on the {0} light"]);
        let mut b = a.clone();
        assert_eq!(a.id(), b.id());
        assert_eq!(a.id().len(), 16);
        b.forms.push("lock the door".into());
        assert_ne!(a.id(), b.id());
        let mut c = a.clone();
        c.lead.push("hey jarvis".into());
        assert_ne!(a.id(), c.id());
        let mut d = a.clone();
        d.guarded.push("unlock".into());
        assert_ne!(a.id(), d.id());
        // a value moved from one list to the next is another set
        let c = Grammar {
            lists: vec![vec!["a".into()], vec!["b".into()]],
            ..Grammar::default()
        };
        let d = Grammar {
            lists: vec![vec!["a".into(), "b".into()], vec![]],
            ..Grammar::default()
        };
        assert_ne!(c.id(), d.id());
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Grammar>(&json).unwrap(), a);
    }
}
