//! The house's phrase set as a recogniser sees it.
//!
//! - [`normalize`]: the words of a transcript as intents compare them (lower case, punctuation
//!   dropped, "%" as "percent"), and the words that carry no command at its ends.
//! - [`Grammar`]: the set's wire form: sentence forms whose slots name a list of values, any
//!   number or any words. hearth builds it from its intents and sends it to its recogniser.
//! - [`Matcher`]: the grammar compiled to a word trie, followed a word at a time: which words
//!   may come next, and whether what was said so far is a whole request of the set. A request
//!   may begin with words that carry no command ("please", "can you"), end with them
//!   ("thanks"), and join two requests with "and", as the intents allow.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod grammar;
mod matcher;
pub mod normalize;

pub use grammar::{Grammar, GrammarError};
pub use matcher::{Choice, Matcher, State, Whole};
