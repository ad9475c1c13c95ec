//! `Speakable`: the only type the TTS stage accepts.
//!
//! The field is private, so the only way to make one is [`Speakable::sanitize`]. It lets
//! through only what is plainly words for a listener. In order, it removes:
//!
//! 1. everything after the model's first turn: an end-of-turn token, or the header of
//!    another turn, ends the reply (`speech/turn.rs`);
//! 2. code: fenced blocks, and inline code that holds markup or data (`speech/code.rs`);
//! 3. everything before a closing tag whose block never opened: the prompt opened it, so
//!    the output began inside reasoning (`markup::after_stray_close`);
//! 4. log lines (timestamps, levels, `key=value`, `tool_result:`, `>>>` prompts), stack
//!    traces, table rows, and after a rule (`---`, `===`, `***`, in a line or on its own) a
//!    debug or telemetry appendix with all that follows (`--- Debug: …`) (`lines::remove_shapes`);
//! 5. elements of any name and case with their content, comments, `<|x_start|>…<|x_end|>`
//!    and `[X]…[/X]` pairs; only the words inside a few wrappers (`<answer>`, `<b>`) stay
//!    (`markup::remove_blocks`);
//! 6. think blocks, tool calls and special tokens of every format hearth knows: the
//!    parser's reply;
//! 7. JSON payloads (`code::remove_json`) and any leftover tag or token (a lone `[NAME]`
//!    that names a label or a log level at a sentence's start stays for step 9);
//! 8. notes to self: `(…)`/`[…]` and `*…*` whose words are one (`(internal: …)`, "note to
//!    self", "the user wants …", `(I should not mention …)`, `(don't reveal …)`), and
//!    stage directions of thought starting a sentence (`*thinks about the light*`);
//!    parentheses of the answer and emphasis stay (`markup::remove_asides`);
//! 9. transcript labels, at a line's start or a sentence's within one (`Sure. User: …`); a
//!    line that carries an assistant's label and another role's anywhere in it ("ok
//!    assistant: … user: …") is a transcript, and the reply ends at its first label:
//!    `Thought:`/`[Reasoning]`/`Action:`/`Observation:` sections, another role's `User:`
//!    and all after it; `Assistant:`/`Final Answer:`/`[Answer]` lose the label; log output
//!    starting a sentence (`… DEBUG: rc=0`, `[INFO] …`) with the rest of its line; and
//!    untagged step-by-step reasoning (`Step 1: …`, "Let's think step by step", "The user
//!    wants …"), held back until an answer marker (`Final answer:`, `So the answer is:`)
//!    drops it, or said at the end when none comes (`lines::remove_labels`,
//!    `speech/steps.rs`);
//!
//! and then, sentence by sentence, drops a sentence that holds a URL, a file path, an
//! e-mail address, a domain name or a table row, and markdown symbols (`speech/words.rs`).
//! What is not known to be speech is not said: an element that never closes takes the rest
//! of the output with it.
//!
//! [`SentenceSplitter`] runs the same steps over the output received so far, holding back
//! whatever the rest could still turn into something else, so a streamed reply is spoken
//! sentence by sentence with the same rules.

mod code;
mod lines;
mod markup;
mod steps;
mod turn;
mod words;

use std::sync::OnceLock;

use crate::{known_tags, Parser, ToolSet};

/// Text that is safe to say out loud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speakable(String);

impl Speakable {
    /// Clean raw model output (or any reply text). `None` when nothing speakable is left.
    pub fn sanitize(raw: &str) -> Option<Speakable> {
        let text = clean(raw, true).text;
        let said: Vec<String> = sentences(&text).filter_map(words::polish).collect();
        (!said.is_empty()).then(|| Speakable(said.join(" ")))
    }

    /// The text to say.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text to say, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for Speakable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Raw output with everything that is not speech removed, as far as it is decided.
struct Cleaned {
    text: String,
    /// Where, after step 3, the output was taken to start (0 when no block was open).
    start: usize,
}

/// Steps 1 to 9 of the module docs. With `eof == false` (streaming), the text stops where
/// what comes next could still change it; each step keeps what it has returned so far as
/// the prefix of what it returns for more text, except step 3 (`start` moves instead).
fn clean(raw: &str, eof: bool) -> Cleaned {
    let text = code::remove_code(turn::first_turn(raw, eof), eof);
    let start = markup::after_stray_close(&text);
    let text = lines::remove_shapes(&text[start..], eof);
    let text = markup::remove_blocks(&text, eof);
    let text = parser().analyze(&text, tool_set(), eof).reply;
    let text = code::remove_json(&text, eof);
    let text = markup::remove_tags(&text, eof);
    let text = markup::remove_asides(&text, eof);
    let text = lines::remove_labels(&text, eof);
    Cleaned { text, start }
}

/// The sentences of `text`, the last one maybe unfinished.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = sentence_end(rest).unwrap_or(rest.len());
        let (sentence, next) = rest.split_at(end);
        rest = next;
        Some(sentence)
    })
}

/// Cuts streamed output into sentences as soon as each is complete and certain to be
/// speech, so the first one can be spoken while the model is still writing the rest.
///
/// Each push runs the sanitiser's steps over all the output so far, holding back what the
/// rest could still change (an open element, a line not yet long enough to judge, a
/// partial token), and emits the sentences of the settled text that are complete. A
/// boundary is `.`, `!`, `?` or `…` followed by whitespace, or a blank line, outside
/// brackets.
///
/// One thing a splitter cannot know in time: that the output began inside a block the
/// prompt opened. When a stray closing tag arrives, what came before it is dropped and
/// speech starts over after it, but sentences already emitted were emitted. The parser,
/// told `start_in_think` (by the preset, or by hearth's agent when the chat template's
/// generation prompt leaves a block open: [`crate::left_open`]), holds such text back
/// before it gets here.
#[derive(Debug, Default)]
pub struct SentenceSplitter {
    raw: String,
    /// The settled text already cut into sentences.
    done: String,
    /// [`Cleaned::start`] of the last push.
    start: usize,
    /// The settled text stopped growing from what was said: nothing more is said.
    stuck: bool,
}

impl SentenceSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add text; returns the sentences it completed, sanitised (empty ones dropped).
    pub fn push(&mut self, text: &str) -> Vec<Speakable> {
        self.raw.push_str(text);
        let (complete, _) = self.settle(false);
        complete
    }

    /// The rest, at the end of the output. The splitter is then empty, ready for another.
    pub fn finish(&mut self) -> Option<Speakable> {
        let (mut said, rest) = self.settle(true);
        said.extend(rest);
        *self = Self::default();
        let said: Vec<String> = said.into_iter().map(Speakable::into_string).collect();
        (!said.is_empty()).then(|| Speakable(said.join(" ")))
    }

    /// The newly complete sentences of the settled text, and at the end of the output the
    /// unfinished rest.
    fn settle(&mut self, eof: bool) -> (Vec<Speakable>, Option<Speakable>) {
        let c = clean(&self.raw, eof);
        if c.start != self.start {
            // the output began inside a block that just closed: start over after it
            self.start = c.start;
            self.done.clear();
        }
        let Some(new) = c.text.strip_prefix(self.done.as_str()) else {
            if !self.stuck {
                tracing::warn!(said = %self.done, now = %c.text, "settled speech diverged; saying no more");
            }
            self.stuck = true;
            return (Vec::new(), None);
        };
        if self.stuck {
            return (Vec::new(), None);
        }
        let mut out = Vec::new();
        let mut rest = new;
        while let Some(end) = sentence_end(rest) {
            let (sentence, next) = rest.split_at(end);
            out.extend(words::polish(sentence).map(Speakable));
            self.done.push_str(sentence);
            rest = next;
        }
        let last = (eof && !rest.is_empty())
            .then(|| words::polish(rest).map(Speakable))
            .flatten();
        (out, last)
    }
}

/// The byte index just past the first complete sentence in `s`, if there is one. A number
/// that starts a line ("1. Milk") does not end a sentence.
fn sentence_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut line_start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            b'\n' => line_start = i + 1,
            _ => {}
        }
        if depth == 0 {
            let ellipsis = s[i..].starts_with('…');
            let stop = matches!(c, b'.' | b'!' | b'?') || ellipsis;
            let width = if ellipsis { '…'.len_utf8() } else { 1 };
            let list_number = c == b'.'
                && (1..=3).contains(&(i - line_start))
                && b[line_start..i].iter().all(u8::is_ascii_digit);
            if stop && !list_number && b.get(i + width).is_some_and(u8::is_ascii_whitespace) {
                return Some(i + width + 1);
            }
            if s[i..].starts_with("\n\n") && s[..i].chars().any(char::is_alphanumeric) {
                return Some(i + 2);
            }
        }
        i += s[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// The full parser: every detector, every think tag. Whether the output began inside a
/// think block is step 3's to judge, so the parser assumes it did not: it holds nothing
/// back waiting for a close tag, and a lone close tag is only removed.
fn parser() -> &'static Parser {
    static P: OnceLock<Parser> = OnceLock::new();
    P.get_or_init(|| Parser::build(crate::registry().all().to_vec(), known_tags(), Some(false)))
}

/// Any tool name: the sanitiser removes calls, it does not judge them.
fn tool_set() -> &'static ToolSet {
    static T: OnceLock<ToolSet> = OnceLock::new();
    T.get_or_init(ToolSet::unrestricted)
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

#[cfg(test)]
mod streaming {
    use proptest::prelude::*;

    use super::*;

    fn soup() -> impl Strategy<Value = String> {
        let frags = prop::sample::select(vec![
            "Hello",
            "It's 7:30",
            " ",
            ". ",
            "! ",
            "? ",
            ",",
            ":",
            "\n",
            "\n\n",
            "<reasoning>",
            "</reasoning>",
            "<b>",
            "</b>",
            "<!--",
            "-->",
            "<|im_end|>",
            "<|end|>",
            "<|start|>assistant",
            "<|im_start|>",
            "user",
            "Thought: ",
            "Final Answer: ",
            "User: ",
            "assistant: ",
            "### ",
            "| a |",
            "[ERROR] ",
            "WARN ",
            "2026-11-26T08:00:01Z ",
            "```",
            "`",
            "{\"a\": 1}",
            "[",
            "]",
            "(",
            ")",
            "https://x.y/z",
            "/etc/x",
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "[SCRATCHPAD]",
            "[/SCRATCHPAD]",
            "Traceback (most recent call last):",
            "  File \"x\", line 1",
            "\tat com.x.Y(Y.java:1)",
            "<",
            ">",
            "#",
            "**",
            "<|reasoning_start|>",
            "<|reasoning_end|>",
            "<answer>",
            "</answer>",
            "hearth::x:",
            "- ",
            "1. ",
            "…",
            "[thinking: ",
            "[Reasoning] ",
            "[ANSWER] ",
            "[INFO] ",
            "(note to self: ",
            "(the user ",
            "*",
            "*thinks ",
            "Step 1: ",
            "Let's think step by step",
            "So the answer is: ",
            "admin@home.lan",
            "hearth.local",
            ">>> ",
            "tool_result: ",
            "rc=0 ",
            "DEBUG: ",
        ]);
        prop::collection::vec(frags, 0..24).prop_map(|v| v.concat())
    }

    fn streamed(s: &str, cuts: &[usize]) -> Vec<String> {
        let mut sp = SentenceSplitter::new();
        let mut out = Vec::new();
        let mut last = 0;
        for &c in cuts.iter().chain([s.len()].iter()) {
            let mut c = c.min(s.len()).max(last);
            while !s.is_char_boundary(c) {
                c += 1;
            }
            out.extend(sp.push(&s[last..c]).into_iter().map(Speakable::into_string));
            assert!(!sp.stuck, "settled speech diverged at {c} of {s:?}");
            last = c;
        }
        out.extend(sp.finish().map(Speakable::into_string));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
            .. ProptestConfig::default()
        })]

        /// Streamed in any chunks, the sentences say what the one-shot sanitiser says, unless
        /// the output began inside a block (then the splitter starts over when it learns so).
        #[test]
        fn streamed_says_what_one_shot_says(s in soup(), mut cuts in prop::collection::vec(0usize..400, 0..8)) {
            cuts.sort_unstable();
            let one = Speakable::sanitize(&s).map(Speakable::into_string);
            let got = streamed(&s, &cuts);
            let chars: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
            let by_char = streamed(&s, &chars);
            if clean(&s, true).start == 0 {
                let joined = (!got.is_empty()).then(|| got.join(" "));
                prop_assert_eq!(&joined, &one, "chunks at {:?} of {:?}", cuts, s);
                let joined = (!by_char.is_empty()).then(|| by_char.join(" "));
                prop_assert_eq!(&joined, &one, "char by char: {:?}", s);
            }
        }
    }
}
