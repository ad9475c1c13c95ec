// The words of the scenes (tests/wake/*.txt): home commands said after a wake word, everyday
// talk and a dialogue with no wake word in them, and hearth's own replies.

/// Home commands, one a line.
pub const COMMANDS: &str = include_str!("../../../../tests/wake/commands.txt");
/// Paragraphs ("## title", then one sentence a line).
pub const TALK: &str = include_str!("../../../../tests/wake/talk.txt");
/// A dialogue: "A: ..." and "B: ..." lines.
pub const DIALOGUE: &str = include_str!("../../../../tests/wake/dialogue.txt");
/// hearth's replies, one a line.
pub const REPLIES: &str = include_str!("../../../../tests/wake/replies.txt");

/// The lines of `text` that are neither blank nor comments (`#`).
pub fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// A titled paragraph of sentences.
#[derive(Debug, Clone, PartialEq)]
pub struct Paragraph {
    pub title: String,
    pub sentences: Vec<String>,
}

/// The paragraphs of [`TALK`]-style text.
pub fn paragraphs(text: &str) -> Vec<Paragraph> {
    let mut out: Vec<Paragraph> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(title) = line.strip_prefix("## ") {
            out.push(Paragraph {
                title: title.trim().to_string(),
                sentences: Vec::new(),
            });
        } else if line.is_empty() || line.starts_with('#') {
            continue;
        } else if let Some(p) = out.last_mut() {
            p.sentences.push(line.to_string());
        }
    }
    out
}

/// The turns of a dialogue: (speaker, words).
pub fn turns(text: &str) -> Vec<(char, String)> {
    lines(text)
        .into_iter()
        .filter_map(|l| {
            let (who, said) = l.split_once(':')?;
            let who = who.trim().chars().next()?;
            Some((who, said.trim().to_string()))
        })
        .collect()
}

/// "<wake word>, <command>": what a person says to wake the device and ask for something.
pub fn wake_utterance(wake_word: &str, command: &str) -> String {
    format!("{wake_word}, {command}")
}

/// Whether `text` holds one of `phrases` (case and punctuation aside): a scene meant to hold
/// no wake word must not.
pub fn contains_phrase(text: &str, phrase: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (t, p) = (words(text), words(phrase));
    !p.is_empty() && t.windows(p.len()).any(|w| w == p.as_slice())
}
