//! `Speakable`: the only type the TTS stage accepts.
//!
//! The field is private, so the only way to make one is [`Speakable::sanitize`]: it runs
//! the full parser (every detector, every think tag) and keeps only the reply, then removes
//! what a voice must never read out: code fences, raw JSON payloads, leftover markup tags
//! and special tokens, and markdown symbols. The type system, not discipline, keeps
//! chain-of-thought and tool-call markup out of the speaker.

use std::sync::OnceLock;

use crate::{known_tags, Parser, ToolSet};

/// Text that is safe to say out loud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speakable(String);

impl Speakable {
    /// Clean raw model output (or any reply text). `None` when nothing speakable is left.
    pub fn sanitize(raw: &str) -> Option<Speakable> {
        // 1. think blocks, call markup and special tokens: the parser's reply. Nothing from
        //    a think block survives, whatever the tags; markup the parser rejects is removed
        //    from the reply too.
        let reply = parser().parse(raw, tool_set()).reply;
        // 2. what a reply may still carry that is not speech
        let text = remove_fences(&reply);
        let text = remove_json(&text);
        let text = remove_tags(&text);
        let text = remove_markdown(&text);
        let text = collapse_ws(&text);
        if text.chars().any(char::is_alphanumeric) {
            Some(Speakable(text))
        } else {
            None
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for Speakable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Cuts streamed reply text into sentences as soon as each is complete, so the first one
/// can be spoken while the model is still writing the rest. A boundary is `.`, `!`, `?` or
/// `…` followed by whitespace, or a blank line, outside code fences and brackets (a JSON
/// payload or a fenced block is never cut in two, so the sanitiser always sees it whole).
#[derive(Debug, Default)]
pub struct SentenceSplitter {
    buf: String,
}

impl SentenceSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add text; returns the sentences it completed, sanitised (empty ones dropped).
    pub fn push(&mut self, text: &str) -> Vec<Speakable> {
        self.buf.push_str(text);
        let mut out = Vec::new();
        while let Some(end) = sentence_end(&self.buf) {
            let sentence: String = self.buf.drain(..end).collect();
            out.extend(Speakable::sanitize(&sentence));
        }
        out
    }

    /// The rest, at the end of the output.
    pub fn finish(&mut self) -> Option<Speakable> {
        let rest = std::mem::take(&mut self.buf);
        Speakable::sanitize(&rest)
    }
}

/// The byte index just past the first complete sentence in `s`, if there is one.
fn sentence_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut in_fence = false;
    let mut i = 0;
    while i < b.len() {
        if s[i..].starts_with("```") || s[i..].starts_with("~~~") {
            in_fence = !in_fence;
            i += 3;
            continue;
        }
        let c = b[i];
        if !in_fence {
            match c {
                b'{' | b'[' | b'(' => depth += 1,
                b'}' | b']' | b')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 {
                let stop = matches!(c, b'.' | b'!' | b'?') || s[i..].starts_with('…');
                let width = if s[i..].starts_with('…') {
                    '…'.len_utf8()
                } else {
                    1
                };
                if stop {
                    let next = i + width;
                    if b.get(next).is_some_and(|n| n.is_ascii_whitespace()) {
                        return Some(next + 1);
                    }
                }
                if s[i..].starts_with("\n\n") && s[..i].chars().any(char::is_alphanumeric) {
                    return Some(i + 2);
                }
            }
        }
        i += s[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn parser() -> &'static Parser {
    static P: OnceLock<Parser> = OnceLock::new();
    P.get_or_init(|| Parser::build(crate::registry().all().to_vec(), known_tags(), None))
}

fn tool_set() -> &'static ToolSet {
    static T: OnceLock<ToolSet> = OnceLock::new();
    T.get_or_init(ToolSet::unrestricted)
}

/// Drop fenced code blocks (``` or ~~~), closed or not, and inline code that holds markup.
fn remove_fences(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let next = [rest.find("```"), rest.find("~~~")]
            .into_iter()
            .flatten()
            .min();
        let Some(p) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..p]);
        let fence = &rest[p..p + 3];
        let after = &rest[p + 3..];
        match after.find(fence) {
            Some(q) => {
                out.push(' ');
                rest = &after[q + 3..];
            }
            None => break,
        }
    }
    // inline code: keep plain words, drop code that looks like markup or data
    let mut res = String::with_capacity(out.len());
    let mut parts = out.split('`');
    if let Some(first) = parts.next() {
        res.push_str(first);
    }
    let rest: Vec<&str> = parts.collect();
    let mut i = 0;
    while i < rest.len() {
        if i + 1 < rest.len() {
            let code = rest[i];
            if !code.contains(['<', '>', '{', '}', '[', ']', '|', '(', ')', '=']) {
                res.push_str(code);
            }
            res.push_str(rest[i + 1]);
            i += 2;
        } else {
            // an unmatched backtick: drop it, keep the text
            res.push_str(rest[i]);
            i += 1;
        }
    }
    res
}

/// Drop raw JSON payloads: every `{…}` and every `[…]` holding JSON-ish content, and an
/// unclosed `{` with everything after it (a truncated payload).
fn remove_json(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                out.push_str(&s[copied..i]);
                match crate::scan::balanced_end(s, i, false) {
                    crate::scan::Scan::Complete(e) => {
                        i = e;
                    }
                    _ => {
                        // unbalanced: the rest is a broken payload
                        return out;
                    }
                }
                copied = i;
            }
            b'[' => {
                if let crate::scan::Scan::Complete(e) = crate::scan::balanced_end(s, i, false) {
                    let inner = &s[i..e];
                    if inner.contains(['{', '"', '(', ':', '=']) {
                        out.push_str(&s[copied..i]);
                        i = e;
                        copied = i;
                        continue;
                    }
                    i = e;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// Drop anything shaped like a markup tag or special token: `<tag …>`, `</tag>`, `<|…|>`,
/// `<｜…｜>`, `<|word>`, `<word|>`, `[UPPER_TOKEN]`, `[/UPPER]`.
fn remove_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if let Some(len) = tag_len(rest) {
            out.push(' ');
            i += len;
            continue;
        }
        let Some(ch) = rest.chars().next() else {
            break;
        };
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn tag_len(s: &str) -> Option<usize> {
    if let Some(r) = s.strip_prefix("<｜") {
        let e = r.find("｜>")?;
        return (e <= 96).then_some("<｜".len() + e + "｜>".len());
    }
    if let Some(r) = s.strip_prefix('<') {
        let window = crate::tokens::head(r, 200);
        let e = window.find('>')?;
        let inner = &r[..e];
        let inner_t = inner.trim_start_matches(['/', '|']);
        let first = inner_t.chars().next()?;
        let tagish = (first.is_ascii_alphabetic() || first == '_' || first == '"')
            && !inner.contains('\n')
            && !inner.contains('<');
        return tagish.then_some(1 + e + 1);
    }
    if let Some(r) = s.strip_prefix('[') {
        let e = crate::tokens::head(r, 48).find(']')?;
        let inner = r[..e].trim_start_matches('/');
        let tokenish = !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == ' ')
            && inner.chars().any(|c| c.is_ascii_uppercase());
        return tokenish.then_some(1 + e + 1);
    }
    None
}

/// Markdown symbols a voice should not read: emphasis, headings, bullets, table bars.
fn remove_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let t = line.trim_start();
        let t = t.trim_start_matches('#').trim_start();
        let t = t
            .strip_prefix("- ")
            .or_else(|| t.strip_prefix("* "))
            .or_else(|| t.strip_prefix("> "))
            .unwrap_or(t);
        for ch in t.chars() {
            if !matches!(ch, '*' | '|' | '\\') {
                out.push(ch);
            }
        }
        out.push('\n');
    }
    out
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(v: Vec<Speakable>) -> Vec<String> {
        v.into_iter().map(Speakable::into_string).collect()
    }

    #[test]
    fn sentences_come_out_as_soon_as_they_end() {
        let mut s = SentenceSplitter::new();
        assert!(s.push("Sure. The kitchen li").len() == 1);
        assert_eq!(
            said(s.push("ght is on! Set to 21.5 degr")),
            vec!["The kitchen light is on!"]
        );
        assert!(s.push("ees").is_empty(), "21.5 is not a boundary");
        assert_eq!(s.finish().unwrap().as_str(), "Set to 21.5 degrees");
        assert!(s.finish().is_none());
    }

    #[test]
    fn fences_and_payloads_are_never_cut_and_never_spoken() {
        let mut s = SentenceSplitter::new();
        let mut out =
            said(s.push("Here. ```json\n{\"a\": \"x. y\"}\n``` Done. {\"b\": \"c. d\"} Bye. "));
        out.extend(s.finish().map(Speakable::into_string));
        assert_eq!(out, vec!["Here.", "Done.", "Bye."]);
        let mut s = SentenceSplitter::new();
        let mut out = said(s.push("Line one\n\nLine two. "));
        out.extend(s.finish().map(Speakable::into_string));
        assert_eq!(out, vec!["Line one", "Line two."]);
    }

    /// Adversarial outputs: each one hides a secret in reasoning or markup.
    const ADVERSARIAL: &[&str] = &[
        "<think>SECRET plan</think>The light is on.",
        "SECRET plan</think>The light is on.",
        "<think>SECRET plan never closed",
        "<think>SECRET <think>nested SECRET</think> SECRET</think>The light is on.",
        "[THINK]SECRET[/THINK]The light is on.",
        "<|START_THINKING|>SECRET<|END_THINKING|><|START_RESPONSE|>The light is on.<|END_RESPONSE|>",
        "<seed:think>SECRET</seed:think>The light is on.",
        "◁think▷SECRET◁/think▷The light is on.",
        "<|channel|>analysis<|message|>SECRET<|end|><|start|>assistant<|channel|>final<|message|>The light is on.<|return|>",
        "<|start|>assistant<|channel|>commentary to=functions.set_light <|constrain|>json<|message|>{\"room\":\"SECRET\"}<|call|>",
        "The light is on.<tool_call>{\"name\": \"set_light\", \"arguments\": {\"room\": \"SECRET\"}}</tool_call>",
        "The light is on.<tool_call>{\"name\": \"set_light\", \"arguments\": {\"room\": \"SECRET\"",
        "The light is on. {\"name\": \"set_light\", \"arguments\": {\"room\": \"SECRET\"}}",
        "The light is on. [{\"name\": \"SECRET\"}]",
        "The light is on.\n```json\n{\"SECRET\": 1}\n```",
        "The light is on.\n```python\nSECRET()\n",
        "The light is on. `<tool_call>SECRET</tool_call>`",
        "[TOOL_CALLS][{\"name\": \"SECRET\", \"arguments\": {}, \"id\": \"abcdefghi\"}]The light is on.",
        "[TOOL_CALLS]SECRET[ARGS]{\"a\": 1}",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>SECRET\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>The light is on.",
        "<|python_tag|>{\"name\": \"SECRET\", \"parameters\": {}}<|eom_id|>",
        "The light is on.<|im_end|><|endoftext|>",
        "<function=SECRET>{}</function>The light is on.",
        "<invoke name=\"SECRET\"><parameter name=\"x\">SECRET</parameter></invoke>The light is on.",
        "<|tool_call>call:SECRET{a:<|\"|>SECRET<|\"|>}<tool_call|>The light is on.",
        "The light is on. <|tool_call_start|>[SECRET(a=1)]<|tool_call_end|>",
        "<tool_call>\n<function=SECRET>\n<parameter=room>\nSECRET\n</parameter>\n</function>\n</tool_call>",
        "functools[{\"name\": \"SECRET\", \"arguments\": {}}]",
        "<think>I will call <tool_call>{\"name\":\"SECRET\"}</tool_call> maybe</think>The light is on.",
        "The light is on.</think>",
    ];

    #[test]
    fn nothing_of_reasoning_or_markup_survives() {
        for raw in ADVERSARIAL {
            let said = Speakable::sanitize(raw)
                .map(Speakable::into_string)
                .unwrap_or_default();
            for banned in [
                "SECRET",
                "<think",
                "</think",
                "think>",
                "tool_call",
                "<|",
                "|>",
                "｜",
                "[TOOL_CALLS]",
                "[ARGS]",
                "```",
                "{",
                "}",
                "\"name\"",
                "<invoke",
                "<function",
                "[THINK]",
                "analysis",
            ] {
                assert!(
                    !said.contains(banned),
                    "{raw:?} -> {said:?} still has {banned:?}"
                );
            }
        }
    }

    #[test]
    fn plain_speech_is_kept() {
        let s = Speakable::sanitize(
            "<think>hmm</think>It's **22 degrees** in Paris.\n\nAnything else?",
        )
        .unwrap();
        assert_eq!(s.as_str(), "It's 22 degrees in Paris. Anything else?");
        assert_eq!(
            Speakable::sanitize("Use the `lights` command, then say 3 < 4.")
                .unwrap()
                .as_str(),
            "Use the lights command, then say 3 < 4."
        );
        assert!(Speakable::sanitize("<think>only thoughts</think>").is_none());
        assert!(Speakable::sanitize("").is_none());
    }
}
