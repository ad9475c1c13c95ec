//! Special tokens that must never reach the reply: `<|im_end|>`, `<｜end▁of▁sentence｜>`,
//! `[TOOL_CALLS]`, Harmony headers (`<|start|>assistant<|channel|>final<|message|>`), …

/// Bracketed and angle tokens that are not `<|…|>` shaped.
const PLAIN_TOKENS: &[&str] = &[
    "[TOOL_CALLS]",
    "[/TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "[THINK]",
    "[/THINK]",
    "[INST]",
    "[/INST]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_REQUEST]",
    "[TOOL_REQUEST_END]",
    "[END_TOOL_REQUEST]",
    "[BEGIN FINAL RESPONSE]",
    "[END FINAL RESPONSE]",
    "<s>",
    "</s>",
    "<eos>",
    "<bos>",
    "<pad>",
    "<end_of_turn>",
    "<start_of_turn>",
    "<start_function_call>",
    "<end_function_call>",
    "<start_function_response>",
    "<end_function_response>",
    "<escape>",
    "<|endoftext|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_calls>",
    "</tool_calls>",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<function_call>",
    "<think>",
    "</think>",
    "<seed:think>",
    "</seed:think>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "◁think▷",
    "◁/think▷",
];

/// Every token string this module strips, for streaming hold-back of partial tokens.
pub fn plain_tokens() -> &'static [&'static str] {
    PLAIN_TOKENS
}

/// Remove special tokens from reply text. Harmony headers lose their role and channel
/// words too (`<|start|>assistant`, `<|channel|>final … <|message|>`).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        let rest = &text[i..];
        if let Some(len) = token_at(rest) {
            i += len;
            continue;
        }
        let ch_len = rest.chars().next().map(char::len_utf8).unwrap_or(1);
        out.push_str(&rest[..ch_len]);
        i += ch_len;
    }
    out
}

/// Length of the special token (with its Harmony header words) starting `s`, if any.
pub(crate) fn token_at(s: &str) -> Option<usize> {
    let first = *s.as_bytes().first()?;
    if first != b'<' && first != b'[' && !s.starts_with('◁') {
        return None;
    }
    let s = head(s, 160);
    if let Some(rest) = s.strip_prefix("<|") {
        // <|word|>, also Gemma 4's <|word> / <|"|>
        let end = rest
            .find("|>")
            .filter(|&e| e <= 48 && is_token_word(&rest[..e]));
        if let Some(e) = end {
            let tok_len = 2 + e + 2;
            let word = &rest[..e];
            return Some(tok_len + header_tail(&s[tok_len..], word));
        }
        let end = rest
            .find('>')
            .filter(|&e| e <= 48 && is_token_word(&rest[..e]));
        if let Some(e) = end {
            return Some(2 + e + 1);
        }
        return None;
    }
    if let Some(rest) = s.strip_prefix("<｜") {
        let e = rest.find("｜>")?;
        if e <= 96 && !rest[..e].contains(char::is_whitespace) {
            return Some("<｜".len() + e + "｜>".len());
        }
        return None;
    }
    if let Some(t) = PLAIN_TOKENS.iter().find(|t| s.starts_with(**t)) {
        return Some(t.len());
    }
    // Gemma 4 closers: <word|>
    if let Some(rest) = s.strip_prefix('<') {
        if let Some(e) = rest.find("|>") {
            if e <= 48 && e > 0 && is_token_word(&rest[..e]) {
                return Some(1 + e + 2);
            }
        }
    }
    None
}

/// The longest prefix of `s` of at most `n` bytes that ends on a char boundary.
fn head(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut k = n;
    while !s.is_char_boundary(k) {
        k -= 1;
    }
    &s[..k]
}

fn is_token_word(w: &str) -> bool {
    !w.is_empty()
        && w.bytes().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b'"' | b'.' | b':')
        })
}

/// After `<|start|>` comes a role word; after `<|channel|>` a channel and maybe ` to=…`
/// and `<|constrain|>json`, up to `<|message|>`. Returns how much of `after` belongs.
fn header_tail(after: &str, word: &str) -> usize {
    match word {
        "start" | "channel" => {
            let stop = after.find("<|").unwrap_or(after.len());
            let words = &after[..stop];
            if words.contains('\n') || words.len() > 96 {
                return 0;
            }
            stop
        }
        "constrain" => {
            let stop = after.find("<|").unwrap_or(after.len());
            if after[..stop].contains(char::is_whitespace) && !after[..stop].trim().is_empty() {
                return 0;
            }
            stop
        }
        _ => 0,
    }
}

/// While streaming: the offset of a special token that has started but not finished at
/// the end of `text` (so it must be held back), if any.
pub fn partial_from(text: &str) -> Option<usize> {
    let tail_start = text.len().saturating_sub(128);
    let mut hold: Option<usize> = None;
    let mut note = |p: usize| hold = Some(hold.map_or(p, |h: usize| h.min(p)));
    // `<|` with no closing `|>` / `>` yet
    if let Some(p) = text.rfind("<|") {
        let rest = &text[p + 2..];
        if !rest.contains('>') && p >= tail_start {
            note(p);
        }
    }
    if let Some(p) = text.rfind("<｜") {
        if !text[p..].contains("｜>") && p >= tail_start {
            note(p);
        }
    }
    // Harmony headers: `<|start|>` / `<|channel|>` whose words run to the end
    for h in ["<|start|>", "<|channel|>", "<|constrain|>"] {
        if let Some(p) = text.rfind(h) {
            if !text[p + h.len()..].contains("<|") {
                note(p);
            }
        }
    }
    // a proper prefix of a plain token at the very end
    for t in PLAIN_TOKENS {
        for k in (1..t.len()).rev() {
            if !t.is_char_boundary(k) {
                continue;
            }
            if text.ends_with(&t[..k]) {
                note(text.len() - k);
                break;
            }
        }
    }
    // `<word` at the end: may become `<word|>`
    if let Some(p) = text.rfind('<') {
        let rest = &text[p + 1..];
        if p >= tail_start
            && rest.len() <= 48
            && rest
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'|')
        {
            note(p);
        }
    }
    hold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tokens_and_harmony_headers() {
        assert_eq!(strip("Hi<|im_end|>"), "Hi");
        assert_eq!(
            strip("<|start|>assistant<|channel|>final<|message|>Hi<|return|>"),
            "Hi"
        );
        assert_eq!(strip("a<｜end▁of▁sentence｜>b"), "ab");
        assert_eq!(strip("[TOOL_CALLS]x</s>"), "x");
        assert_eq!(strip("x < y and a|>b"), "x < y and a|>b");
        assert_eq!(strip("<turn|>ok<|turn>"), "ok");
    }

    #[test]
    fn partials() {
        assert_eq!(partial_from("Hello <|im_e"), Some(6));
        assert_eq!(partial_from("Hello [TOOL_CA"), Some(6));
        assert_eq!(partial_from("Hello"), None);
        assert_eq!(partial_from("x<|channel|>fin"), Some(1));
        assert_eq!(partial_from("Hello <"), Some(6));
    }
}
