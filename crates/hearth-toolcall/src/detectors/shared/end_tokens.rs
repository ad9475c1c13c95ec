//! End-of-message tokens that belong to the call before them: the Llama 3.x ones
//! ([`LLAMA_END_TOKENS`]) and skipping a run of such tokens ([`skip_end_tokens`]).
//!
//! Used by `llama32`, `llama31_function` and `functionary_v32`.

use super::json_finder::ws;

/// Tokens that end a Llama 3.x assistant message; they belong to the call before them.
pub(crate) const LLAMA_END_TOKENS: &[&str] = &["<|eom_id|>", "<|eot_id|>", "<|end_of_text|>"];

/// After byte `i`, skip whitespace and any run of the given end tokens (`<|eot_id|>`).
/// Returns the offset after the last token, or `i` if no token follows.
pub(crate) fn skip_end_tokens(text: &str, i: usize, tokens: &[&str]) -> usize {
    let mut end = i;
    let mut j = i;
    loop {
        let k = ws(text, j);
        match tokens
            .iter()
            .find(|t| text.get(k..).is_some_and(|r| r.starts_with(**t)))
        {
            Some(t) => {
                j = k + t.len();
                end = j;
            }
            None => return end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detectors::shared::json_object::Whole;

    #[test]
    fn end_tokens() {
        let t = "{} <|eot_id|>\n<|eom_id|> x";
        assert_eq!(
            skip_end_tokens(t, 2, &["<|eot_id|>", "<|eom_id|>"]),
            t.len() - 2
        );
        assert_eq!(skip_end_tokens(t, 2, &["<|x|>"]), 2);
        let w = Whole::of("<think>a</think>\n {\"a\":1} <|eot_id|>\n");
        assert_eq!((w.lead, w.tail), (18, 25));
    }
}
