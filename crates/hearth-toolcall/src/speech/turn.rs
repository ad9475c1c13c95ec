//! The model's own turn: a model that runs past its end-of-turn token, or writes the next
//! turn's header, goes on in another role's voice (the user's next question, a system
//! prompt). Only the first turn is the reply.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

/// Tokens that end a turn.
const ENDS: &[&str] = &[
    "<|im_end|>",
    "<|eot_id|>",
    "<|end|>",
    "</s>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|return|>",
    "<|call|>",
    "<|eom_id|>",
    "<eos>",
    "<|END_OF_TURN_TOKEN|>",
    "<｜end▁of▁sentence｜>",
];

/// Tokens that start a turn; a role word (and maybe a header's end token) follows the ones
/// that do not name it.
const HEADERS: &[(&str, Role)] = &[
    ("<|im_start|>", Role::Named),
    ("<|start_header_id|>", Role::Named),
    ("<start_of_turn>", Role::Named),
    ("<|start|>", Role::Named),
    ("<|start_of_role|>", Role::Named),
    ("<|START_OF_TURN_TOKEN|>", Role::Named),
    ("<|assistant|>", Role::Assistant),
    ("<｜Assistant｜>", Role::Assistant),
    ("<|user|>", Role::Other),
    ("<|system|>", Role::Other),
    ("<|tool|>", Role::Other),
    ("<｜User｜>", Role::Other),
    ("[INST]", Role::Other),
];

/// What closes a header after its role word.
const HEADER_ENDS: &[&str] = &["<|end_header_id|>", "<|end_of_role|>"];

/// Role words of the assistant's own turn.
const ASSISTANT: &[&str] = &["assistant", "model", "<|CHATBOT_TOKEN|>"];

/// Whose turn a header opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The role word follows the token.
    Named,
    Assistant,
    Other,
}

/// Finds every end-of-turn token and turn header.
fn markers() -> &'static AhoCorasick {
    static M: OnceLock<AhoCorasick> = OnceLock::new();
    M.get_or_init(|| {
        let pats = ENDS.iter().copied().chain(HEADERS.iter().map(|(h, _)| *h));
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(pats)
            .unwrap_or_else(|_| unreachable!("a fixed list of short strings"))
    })
}

/// The model's first turn in `s`: up to the first end-of-turn token or turn header. A header
/// at the very start that opens the assistant's turn is skipped; one that opens anyone
/// else's turn leaves nothing. While streaming (`eof == false`), text that may yet become
/// one of these tokens is held back.
pub(super) fn first_turn(s: &str, eof: bool) -> &str {
    let start = match leading_header(s, eof) {
        Some(start) => start,
        None => return "",
    };
    let mut from = start;
    let end = loop {
        let Some(m) = markers().find(&s[from..]) else {
            break s.len();
        };
        let (at, past) = (from + m.start(), from + m.end());
        if !s[at..].starts_with("<|end|>") {
            break at;
        }
        // Harmony: `<|end|>` ends a message; `<|start|>assistant` carries on the same turn
        let next = s[past..].trim_start();
        const GOES_ON: &str = "<|start|>assistant";
        if next.starts_with(GOES_ON) {
            from = s.len() - next.len() + GOES_ON.len();
        } else if !eof && GOES_ON.starts_with(next) {
            return &s[start..at];
        } else {
            break at;
        }
    };
    let end = if eof { end } else { partial_marker(s, end) };
    &s[start..end.max(start)]
}

/// Where the text after a leading assistant header starts (0 without one); `None` when the
/// text opens another role's turn, or, while streaming, may still do so.
fn leading_header(s: &str, eof: bool) -> Option<usize> {
    let t = s.trim_start();
    let at = s.len() - t.len();
    let Some((h, role)) = HEADERS.iter().find(|(h, _)| t.starts_with(h)) else {
        let partial = !eof
            && HEADERS
                .iter()
                .any(|(h, _)| t.len() < h.len() && h.starts_with(t));
        return (!partial || t.is_empty()).then_some(0);
    };
    let mut i = at + h.len();
    match role {
        Role::Other => return None,
        Role::Assistant => {}
        Role::Named => {
            let rest = &s[i..];
            let word = ASSISTANT.iter().find(|w| rest.starts_with(*w))?;
            i += word.len();
            if !eof && s[i..].is_empty() {
                return None;
            }
        }
    }
    let rest = &s[i..];
    let rest = HEADER_ENDS
        .iter()
        .find_map(|e| rest.strip_prefix(e))
        .unwrap_or(rest);
    Some(s.len() - rest.len())
}

/// `end`, or earlier when the text before `end` finishes with what may be the start of a
/// turn token.
fn partial_marker(s: &str, end: usize) -> usize {
    let head = &s[..end];
    let tail_from = end.saturating_sub(32);
    for (p, c) in head.char_indices().skip_while(|(p, _)| *p < tail_from) {
        if c != '<' && c != '[' {
            continue;
        }
        let tail = &head[p..];
        let could = ENDS
            .iter()
            .copied()
            .chain(HEADERS.iter().map(|(h, _)| *h))
            .any(|m| m.len() > tail.len() && m.starts_with(tail));
        if could {
            return p;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_turn() {
        assert_eq!(first_turn("Hi.<|im_end|><|im_start|>user\nX", true), "Hi.");
        assert_eq!(
            first_turn("<|im_start|>assistant\nHi.<|im_end|>", true),
            "\nHi."
        );
        assert_eq!(first_turn("<|im_start|>user\nX", true), "");
        assert_eq!(first_turn("Hi.<|start_header_id|>user", true), "Hi.");
        let h = "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>B<|return|>x";
        assert!(first_turn(h, true).ends_with("<|message|>B"));
        assert_eq!(first_turn("Hi.<|end|><|user|>X", true), "Hi.");
    }

    #[test]
    fn streaming_holds_what_may_become_a_token() {
        assert_eq!(first_turn("Hi.<|im_e", false), "Hi.");
        assert_eq!(first_turn("Hi.<|end|><|sta", false), "Hi.");
        assert_eq!(first_turn("<|im_start|>assis", false), "");
        assert_eq!(first_turn("Hi. <b", false), "Hi. <b");
    }
}
