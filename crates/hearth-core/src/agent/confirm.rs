//! Calls that wait for a yes: a tool's `confirm` (unlocking a door, opening the garage) holds
//! a call that matches it, whoever asked (voice, D-Bus `Ask`, `hearth ask`) and whichever
//! path chose it (an intent or the model). The turn asks the tool's question instead
//! ("Unlock the front door?") and the session keeps the held calls ([`Pending`]); the next
//! request in that session runs them only if it is a yes said within [`WINDOW`]. A no is
//! answered and drops them; anything else drops them too and is handled as a request of its
//! own, so a held call never runs later on a yes meant for something else.

use std::time::{Duration, Instant};

use hearth_phrases::normalize;

use crate::toolcall::ToolCall;
use crate::tools::Registry;

/// How long a question waits for its yes.
pub(crate) const WINDOW: Duration = Duration::from_secs(30);

/// Calls a session holds until a yes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pending {
    pub calls: Vec<ToolCall>,
    /// What was asked.
    pub question: String,
    pub asked: Instant,
    /// For a question that asks which ([`super::which`]): each choice with its call, one of
    /// which an answer runs; `calls` is then empty.
    pub choices: Vec<(String, ToolCall)>,
}

impl Pending {
    /// The hop report's note: the calls that wait.
    pub fn hook(&self) -> String {
        let said = |c: &ToolCall| format!("{}({})", c.name(), c.arguments());
        if self.choices.is_empty() {
            let calls: Vec<String> = self.calls.iter().map(said).collect();
            return format!("waiting for a yes: {}", calls.join(" "));
        }
        let calls: Vec<String> = self.choices.iter().map(|(_, c)| said(c)).collect();
        format!("waiting for a choice: {}", calls.join(" | "))
    }
}

/// What a request says to a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
    /// The choice of this index, to a question that asks which ([`Pending::choices`]).
    Chose(usize),
    /// A yes to a question that asks which: no choice, so it is asked again.
    Again,
    /// Not an answer (another request), or the question is older than [`WINDOW`].
    Other,
}

/// Words that begin a yes ("yes", "yes please", "sure, go ahead").
const YES: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "confirm",
    "confirmed",
    "correct",
    "affirmative",
    "ok",
    "okay",
];
/// Whole answers that are a yes without one of those words.
const YES_PHRASES: &[&str] = &["do it", "go ahead", "please do", "that's right"];
/// Words that may follow a yes in the same answer ("yes, please", "sure, go ahead, thanks");
/// any other word there, unless the question has it ("yes, unlock it"), makes it no answer
/// ("Yes, today." is what whisper wrote for "Yesterday.").
const WITH_A_YES: &[&str] = &[
    "please",
    "thanks",
    "thank",
    "you",
    "do",
    "it",
    "go",
    "ahead",
    "that's",
    "right",
    "of",
    "course",
    "absolutely",
    "definitely",
];
/// Words that may go with a no in the same answer ("never mind", "not now", "leave it"),
/// besides a yes's ([`WITH_A_YES`]) and the question's own; any other makes it no answer
/// ("stop the hall window" is a request of its own).
const WITH_A_NO: &[&str] = &[
    "mind", "now", "that", "then", "leave", "as", "is", "forget", "actually", "sorry", "this",
];
/// Words that make a short answer a no.
const NO: &[&str] = &[
    "no", "nope", "don't", "dont", "not", "cancel", "never", "stop", "wait",
];

/// How `text` answers `pending` now.
pub(super) fn answer(pending: &Pending, text: &str) -> Answer {
    if pending.asked.elapsed() > WINDOW {
        return Answer::Other;
    }
    if let Some(i) = super::which::chosen(&pending.question, &pending.choices, text) {
        return Answer::Chose(i);
    }
    match read(&pending.question, text) {
        // a yes is no answer to which: the question is asked again
        Answer::Yes if !pending.choices.is_empty() => Answer::Again,
        answer => answer,
    }
}

/// `text` as an answer to `question`: a no when a word says no and it is short and says
/// nothing else (each word says no, goes with one, [`WITH_A_NO`], or is the question's); a yes
/// when it begins with a yes word or is a yes phrase, is short, and says nothing else: each
/// word after the yes goes with one ([`WITH_A_YES`]) or is the question's ("yes, unlock
/// it"). A yes that goes on to ask for something else is that request, not the answer.
/// Public for the answers bench.
pub fn read(question: &str, text: &str) -> Answer {
    let words = normalize::keys(text);
    if words.is_empty() {
        return Answer::Other;
    }
    let asked = normalize::keys(question);
    if words.iter().any(|w| NO.contains(&w.as_str())) {
        let goes_with_a_no = |w: &String| {
            [NO, WITH_A_NO, WITH_A_YES]
                .iter()
                .any(|l| l.contains(&w.as_str()))
                || asked.contains(w)
        };
        return if words.len() <= 4 && words.iter().all(goes_with_a_no) {
            Answer::No
        } else {
            Answer::Other
        };
    }
    let goes_with_a_yes = |w: &String| {
        YES.contains(&w.as_str()) || WITH_A_YES.contains(&w.as_str()) || asked.contains(w)
    };
    let joined = words.join(" ");
    let yes = YES.contains(&words[0].as_str()) || YES_PHRASES.iter().any(|p| joined.starts_with(p));
    if yes && words.len() <= 8 && words.iter().all(goes_with_a_yes) {
        Answer::Yes
    } else {
        Answer::Other
    }
}

/// `calls` parted into those that run now and those that wait for a yes, with the question
/// asked for each; all run now when the yes was given beforehand (`hearth ask --yes`).
pub(super) fn split(
    registry: &Registry,
    calls: &[ToolCall],
    yes_given: bool,
) -> (Vec<ToolCall>, Vec<(ToolCall, String)>) {
    if yes_given {
        return (calls.to_vec(), Vec::new());
    }
    let mut now = Vec::new();
    let mut held = Vec::new();
    for c in calls {
        match registry.question(c) {
            Some(q) => held.push((c.clone(), q)),
            None => now.push(c.clone()),
        }
    }
    (now, held)
}

/// The held calls as the session keeps them, and the question that asks for them all.
pub(super) fn hold(held: Vec<(ToolCall, String)>) -> Pending {
    let question = held
        .iter()
        .map(|(_, q)| q.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    asking(held.into_iter().map(|(c, _)| c).collect(), question)
}

/// `calls` held until a yes to `question`.
pub(super) fn asking(calls: Vec<ToolCall>, question: String) -> Pending {
    tracing::info!(
        calls = ?calls.iter().map(ToolCall::name).collect::<Vec<_>>(),
        %question,
        "calls wait for a yes"
    );
    Pending {
        calls,
        question,
        asked: Instant::now(),
        choices: Vec::new(),
    }
}

/// One of `choices` held until an answer to `question` names it ([`super::which`]).
pub(super) fn asking_which(question: String, choices: Vec<(String, ToolCall)>) -> Pending {
    tracing::info!(
        choices = ?choices.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(),
        %question,
        "a call waits for a choice"
    );
    Pending {
        calls: Vec::new(),
        question,
        asked: Instant::now(),
        choices,
    }
}

/// Answers to a question, as the recogniser's phrase set holds them (so a yes is heard as
/// one, and nothing is forced into a request when one is said).
pub(crate) const ANSWERS: &[&str] = &[
    "yes", "yeah", "yep", "sure", "go ahead", "do it", "confirm", "no", "nope", "cancel", "don't",
];

/// What is said to a no.
pub const DECLINED: &str = "Okay, I left it as it is.";

/// What is said to a yes when no question waits for one.
pub const UNASKED: &str = "Nothing is waiting for a yes.";

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: &str = "Unlock the front door?";

    #[test]
    fn a_yes_is_short_says_nothing_else_and_has_no_no_in_it() {
        for yes in [
            "Yes.",
            "Yes please",
            "yeah, do it",
            "Sure, go ahead.",
            "Go ahead",
            "Do it.",
            "OK.",
            "Confirm",
            "Yes, unlock it.",
            "yes please unlock the front door",
            "Sure, thank you.",
        ] {
            assert_eq!(read(ASKED, yes), Answer::Yes, "{yes}");
        }
        for no in [
            "No.",
            "No, don't.",
            "Don't.",
            "Cancel",
            "Never mind.",
            "Not now",
            "wait",
        ] {
            assert_eq!(read(ASKED, no), Answer::No, "{no}");
        }
        for other in [
            "Turn on the kitchen light.",
            "What time is it?",
            "yes and also turn on the kitchen light please",
            "I don't know what you mean by that at all",
            "",
            "Unlock it.",
            // what whisper wrote for "Yesterday." in room noise: a yes word, then others
            "Yes, today.",
            "Yes, the date.",
            "yes, lock the back door",
            // a request of its own that opens with a no word
            "Stop the hall window.",
            "cancel the pasta timer",
        ] {
            assert_eq!(read(ASKED, other), Answer::Other, "{other}");
        }
    }

    #[test]
    fn every_answer_the_recogniser_expects_reads_as_an_answer() {
        for a in ANSWERS {
            assert_ne!(read(ASKED, a), Answer::Other, "{a}");
        }
    }

    #[test]
    fn a_question_unanswered_for_the_window_is_gone() {
        let mut p = Pending {
            calls: Vec::new(),
            question: "Unlock the front door?".into(),
            asked: Instant::now(),
            choices: Vec::new(),
        };
        assert_eq!(answer(&p, "yes"), Answer::Yes);
        if let Some(long_ago) = Instant::now().checked_sub(WINDOW + Duration::from_secs(1)) {
            p.asked = long_ago;
            assert_eq!(answer(&p, "yes"), Answer::Other);
        }
    }
}
