//! What a tool call gives back, shared by every executor: its status and its text; and the
//! values a call renders into templates ([`values`]).

pub(crate) mod values;

use serde::Serialize;

/// The most of a result's text the model is given: what a D-Bus method, a tool provider or
/// a device's state answered, or an error message (an `exec` program's output has its own
/// cap, `max_output_bytes`, [`super::exec::DEFAULT_MAX_OUTPUT_BYTES`] by default).
///
/// A result goes into the next hop's prompt and stays in the history after it. hearth's
/// context holds 4096 tokens by default (`[agent] n_ctx`), 128 of them kept for the answer,
/// and the demo's tools alone are about 2 KiB of JSON. 2 KiB of text is some 500 to 700
/// tokens of English or JSON (3 to 4 bytes a token), so a hop's results and a few turns of
/// history still fit; 16 KiB (4000 tokens and more) did not fit at all, and the turn failed.
pub(crate) const MAX_RESULT_BYTES: usize = 2048;

/// The note a cut text ends with (on a line of its own): how long it was and how much of it
/// is kept, so the model knows it did not see everything.
pub(crate) fn cut_note(total: usize, kept: usize) -> String {
    format!("[output cut: {total} bytes, only the first {kept} kept]")
}

/// `text` if it is at most `max` bytes long; else its first `max` bytes (a character cut
/// there dropped whole), trimmed, then [`cut_note`] on a line of its own.
pub(crate) fn capped(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n{}", text[..end].trim_end(), cut_note(text.len(), max))
}

/// The most of a `say` confirmation spoken, in characters: some 20 seconds of speech (a
/// voice speaks about 15 characters a second), where a confirmation needs one sentence. A
/// `say` that reads `{{ result }}` can otherwise speak a whole result, for minutes.
pub const MAX_SAY_CHARS: usize = 300;

/// What a shortened confirmation ends with, so the listener knows there was more.
pub(crate) const SHORTENED: &str = "I shortened that.";

/// A rendered `say` as it is spoken: as it is when it has at most [`MAX_SAY_CHARS`]
/// characters; else cut after the last sentence that ends within them (when that keeps at
/// least half), or else at the last word break (`…`), and followed by [`SHORTENED`].
pub(crate) fn spoken(text: &str) -> String {
    let Some((end, _)) = text.char_indices().nth(MAX_SAY_CHARS) else {
        return text.to_string();
    };
    tracing::info!(
        chars = text.chars().count(),
        kept = MAX_SAY_CHARS,
        "a spoken confirmation was cut short"
    );
    let head = &text[..end];
    let half = end / 2;
    let sentence_end = head
        .rmatch_indices(['.', '!', '?'])
        .map(|(i, mark)| i + mark.len())
        .find(|&i| i >= half && text[i..].starts_with(char::is_whitespace));
    if let Some(i) = sentence_end {
        return format!("{} {SHORTENED}", &head[..i]);
    }
    let word_end = head
        .rfind(char::is_whitespace)
        .filter(|&i| i >= half)
        .unwrap_or(end);
    format!("{}… {SHORTENED}", head[..word_end].trim_end())
}

/// How a call went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// It ran and gave a result.
    Ok,
    /// It ran and gave nothing (exit 0, blank output).
    Empty,
    /// It did not run, failed, or timed out; the result is the message.
    Error,
}

impl ToolStatus {
    /// `"ok"`, `"empty"` or `"error"`, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Empty => "empty",
            ToolStatus::Error => "error",
        }
    }
}

/// What one run gave: the status and the text the model sees (for `error`, the message).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOutput {
    /// `ok`, `empty` or `error`.
    pub status: ToolStatus,
    /// Trimmed stdout (with a note when cut), or the error message.
    pub text: String,
}

impl ExecOutput {
    /// An `error` outcome; `text` names the tool and the problem (capped at
    /// `MAX_RESULT_BYTES`).
    pub fn error(text: String) -> Self {
        ExecOutput {
            status: ToolStatus::Error,
            text: capped(text, MAX_RESULT_BYTES),
        }
    }

    /// A finished call's output: `ok` with the trimmed text (capped at
    /// `MAX_RESULT_BYTES`), `empty` when it is blank.
    pub fn done(text: impl Into<String>) -> Self {
        let text = capped(text.into().trim().to_string(), MAX_RESULT_BYTES);
        ExecOutput {
            status: if text.is_empty() {
                ToolStatus::Empty
            } else {
                ToolStatus::Ok
            },
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_confirmation_is_cut_at_a_sentence_and_says_so() {
        let sentence = "The kitchen light is on and set to 40.5 percent. ";
        let long = sentence.repeat(20);
        let said = spoken(long.trim());
        assert!(said.chars().count() <= MAX_SAY_CHARS + 30, "{said}");
        assert!(said.ends_with(&format!("percent. {SHORTENED}")), "{said}");
        assert!(said.starts_with(sentence), "{said}");
        // no sentence end in reach: cut at a word, and say so
        let words = "kitchen ".repeat(100);
        let said = spoken(words.trim());
        assert!(said.ends_with(&format!("kitchen… {SHORTENED}")), "{said}");
        assert!(said.chars().count() <= MAX_SAY_CHARS + 30, "{said}");
        // one long word: cut inside it
        let said = spoken(&"x".repeat(1000));
        assert_eq!(said, format!("{}… {SHORTENED}", "x".repeat(MAX_SAY_CHARS)));
        // a short one is as it was
        assert_eq!(spoken("It's 9:05 PM."), "It's 9:05 PM.");
        let edge = "é".repeat(MAX_SAY_CHARS);
        assert_eq!(spoken(&edge), edge);
    }

    #[test]
    fn results_are_capped_with_a_note_the_model_reads() {
        let long = "word ".repeat(1000);
        let o = ExecOutput::done(long.clone());
        assert_eq!(o.status, ToolStatus::Ok);
        assert!(o.text.len() < MAX_RESULT_BYTES + 60, "{}", o.text.len());
        assert!(
            o.text.ends_with(&format!(
                "\n[output cut: {} bytes, only the first {MAX_RESULT_BYTES} kept]",
                long.trim().len()
            )),
            "{}",
            &o.text[o.text.len() - 80..]
        );
        // an error message too: a service's own message can be as long as it likes
        let o = ExecOutput::error(format!("t: {long}"));
        assert_eq!(o.status, ToolStatus::Error);
        assert!(o.text.len() < MAX_RESULT_BYTES + 60, "{}", o.text.len());
        assert!(o.text.contains("[output cut:"), "{}", o.text);
        // a character at the cut is dropped whole
        let o = ExecOutput::done("é".repeat(MAX_RESULT_BYTES));
        assert!(o.text.starts_with(&"é".repeat(MAX_RESULT_BYTES / 2)));
        assert!(o.text.contains("\n[output cut:"), "{}", o.text);
        // short ones are as they were
        assert_eq!(ExecOutput::done("  on \n").text, "on");
        assert_eq!(ExecOutput::error("t: no".into()).text, "t: no");
    }
}
