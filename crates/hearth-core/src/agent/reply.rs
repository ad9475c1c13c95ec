//! What is said: sanitised reply text, its sentences, the tools' spoken `say`
//! confirmations, and the synthetic user message that carries tool results back to a
//! model whose template has no tool role (rule 7).

use tokio::sync::mpsc;

use crate::speech::{SentenceSplitter, Speakable};
use crate::toolcall::ToolCall;
use crate::tools::{Registry, ToolOutcome, ToolStatus};

/// The spoken text of a reply (sanitised), or "".
pub(super) fn speakable(text: &str) -> String {
    Speakable::sanitize(text)
        .map(Speakable::into_string)
        .unwrap_or_default()
}

/// `text`'s sentences, sanitised.
pub(super) fn sentences_of(text: &str) -> Vec<Speakable> {
    let mut sentences = SentenceSplitter::new();
    let mut out = sentences.push(text);
    out.extend(sentences.finish());
    out
}

/// Send `text` to `speak` sentence by sentence.
pub(super) fn send_sentences(tx: &mpsc::UnboundedSender<Speakable>, text: &str) {
    for s in sentences_of(text) {
        let _ = tx.send(s);
    }
}

/// The synthetic user message that carries tool results when there is no tool role.
pub(crate) fn synthetic_results(outcomes: &[ToolOutcome]) -> String {
    let parts: Vec<String> = outcomes
        .iter()
        .map(|o| {
            format!(
                "{} -> {}",
                o.name,
                serde_json::Value::String(o.result.clone())
            )
        })
        .collect();
    format!(
        "(system: tool results — {}. Now answer the previous request in one short sentence.)",
        parts.join("; ")
    )
}

/// The spoken confirmations of a hop's calls, when every call has one: a call that
/// succeeded, its confirmation; one that failed, the refusal its tool says
/// ([`Registry::refusal`]).
pub(super) fn confirmations(
    registry: &Registry,
    calls: &[ToolCall],
    outcomes: &[ToolOutcome],
) -> Option<Vec<String>> {
    let said: Option<Vec<String>> = calls
        .iter()
        .zip(outcomes)
        .map(|(c, o)| match o.status {
            ToolStatus::Error => registry.refusal(c, &o.result),
            _ => registry.confirmation(c, &o.result),
        })
        .collect();
    said.filter(|v| !v.is_empty())
}

/// A streamed sentence that only parrots the loop's own messages or a tool result: it is
/// held back (the hooks decide what to say instead).
pub(super) fn echo_sentence(sentence: &str, outcomes: &[ToolOutcome]) -> bool {
    let t = sentence.trim();
    t.contains("(system:")
        || t.contains("tool results —")
        || outcomes.iter().any(|o| {
            o.result.len() > 12
                && t.trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
                    == o.result.trim()
        })
}
