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
    // Nemotron Nano v2 turn and end-of-sequence tokens
    "<SPECIAL_10>",
    "<SPECIAL_11>",
    "<SPECIAL_12>",
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

fn plain_matcher() -> &'static aho_corasick::AhoCorasick {
    static M: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .start_kind(aho_corasick::StartKind::Anchored)
            .build(PLAIN_TOKENS)
            .unwrap_or_else(|_| {
                // PLAIN_TOKENS is a fixed list of short strings: building cannot fail.
                unreachable!("plain token matcher")
            })
    })
}

/// A byte of a token word: letters, digits, `_-/".:`.
fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b'"' | b'.' | b':')
}

/// Bytes of a `<|…` token word starting at `s`, at most 49 (longer is not a token).
fn word_len(s: &[u8]) -> usize {
    s.iter().take(49).take_while(|&&c| is_word_byte(c)).count()
}

/// Length of the special token (with its Harmony header words) starting `s`, if any.
pub(crate) fn token_at(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if first != b'<' && first != b'[' && first != 0xE2 {
        return None;
    }
    if b.get(1) == Some(&b'|') {
        // <|word|>, also Gemma 4's <|word> and <|"|>
        let w = word_len(&b[2..]);
        if w == 0 || w > 48 {
            return None;
        }
        let after = &b[2 + w..];
        if after.starts_with(b"|>") {
            let tok_len = 2 + w + 2;
            return Some(tok_len + header_tail(&s[tok_len..], &s[2..2 + w]));
        }
        if after.starts_with(b">") {
            return Some(2 + w + 1);
        }
        return None;
    }
    if let Some(rest) = s.strip_prefix("<｜") {
        let rest = head(rest, 100);
        let e = rest.find("｜>")?;
        // one token: no whitespace and no other token starting inside it
        if !rest[..e].contains(|c: char| c.is_whitespace() || c == '<') {
            return Some("<｜".len() + e + "｜>".len());
        }
        return None;
    }
    // every plain token's second byte is a letter, '/', '◁'-continuation or a space
    let second = b.get(1).copied().unwrap_or(0);
    if !(second.is_ascii_alphabetic() || second == b'/' || second >= 0x80) {
        return None;
    }
    let input = aho_corasick::Input::new(s).anchored(aho_corasick::Anchored::Yes);
    if let Some(m) = plain_matcher().find(input) {
        return Some(m.end());
    }
    // Gemma 4 closers: <word|>
    if first == b'<' {
        let w = word_len(&b[1..]);
        if w > 0 && w <= 48 && b[1 + w..].starts_with(b"|>") {
            return Some(1 + w + 2);
        }
    }
    None
}

/// The longest prefix of `s` of at most `n` bytes that ends on a char boundary.
pub(crate) fn head(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut k = n;
    while !s.is_char_boundary(k) {
        k -= 1;
    }
    &s[..k]
}

/// After `<|start|>` comes a role word; after `<|channel|>` a channel and maybe ` to=…`
/// and `<|constrain|>json`, up to `<|message|>`. Returns how much of `after` belongs.
fn header_tail(after: &str, word: &str) -> usize {
    if !matches!(word, "start" | "channel" | "constrain") {
        return 0;
    }
    let window = head(after, 100);
    match window.find("<|") {
        Some(stop) => {
            let words = &window[..stop];
            // roles, channels and recipients: `assistant`, `commentary to=functions.x `, `json`
            let ok = words.bytes().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, b'_' | b'.' | b':' | b'=' | b'/' | b'-' | b' ')
            }) && (word != "constrain" || !words.trim().contains(char::is_whitespace));
            if ok {
                stop
            } else {
                0
            }
        }
        // a header cut off at the very end of the text: drop its one word
        None if after.len() <= 100
            && !after.is_empty()
            && after
                .trim_end()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.') =>
        {
            after.len()
        }
        None => 0,
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
        // DSML tags (`<｜DSML｜invoke name="…">`) end in a plain `>`, not `｜>`
        let rest = &text[p + "<｜".len()..];
        if !rest.contains("｜>") && !rest.starts_with("DSML｜") && p >= tail_start {
            note(p);
        }
    }
    // Harmony headers: `<|start|>` / `<|channel|>` whose words run to the end
    for h in ["<|start|>", "<|channel|>", "<|constrain|>"] {
        if let Some(p) = text.rfind(h) {
            if !text[p + h.len()..].contains("<|message|>") {
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
        if p >= tail_start && rest.len() <= 48 && rest.bytes().all(|c| is_word_byte(c) || c == b'|')
        {
            note(p);
        }
    }
    hold
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Remove special tokens from reply text. Harmony headers lose their role and channel
    /// words too (`<|start|>assistant`, `<|channel|>final … <|message|>`).
    fn strip(text: &str) -> String {
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
