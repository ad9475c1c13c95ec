//! The speakable corpus (tests/corpus/speakable.jsonl): raw model outputs that hide a secret
//! in something that is not speech (reasoning in tags of any name, brackets or stars,
//! comments, notes to self, ReAct scratchpads, untagged steps before an answer, other turns
//! and roles, tables, logs, stack traces, URLs, e-mail addresses and domains, code), plus
//! ordinary replies that must be spoken unchanged. Every case goes through
//! `Speakable::sanitize` and, chunk by chunk, through `SentenceSplitter`: neither may ever
//! say a case's secret.

use std::path::Path;

use hearth_toolcall::speech::{SentenceSplitter, Speakable};
use serde_json::Value;

struct Case {
    line: usize,
    id: String,
    raw: String,
    /// The exact spoken text, or `None` for nothing to say.
    say: Option<String>,
    secret: Option<String>,
    negative: bool,
    /// The closing tag of a block the prompt opened (see the README): the splitter cannot
    /// know before it arrives that the text so far was reasoning.
    forced_open: Option<String>,
}

impl Case {
    fn label(&self) -> String {
        format!("speakable.jsonl:{} [{}]", self.line, self.id)
    }

    fn leaks(&self, said: &str) -> bool {
        self.secret
            .as_deref()
            .is_some_and(|s| said.to_lowercase().contains(&s.to_lowercase()))
    }
}

fn load() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/speakable.jsonl");
    let text = std::fs::read_to_string(&path).expect("tests/corpus/speakable.jsonl");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("speakable.jsonl:{}", i + 1);
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: not JSON: {e}", at()));
        let text_field = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        out.push(Case {
            line: i + 1,
            id: text_field("id").unwrap_or_else(|| panic!("{}: no id", at())),
            raw: text_field("raw").unwrap_or_else(|| panic!("{}: no raw", at())),
            say: match v.get("say") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Null) => None,
                _ => panic!("{}: `say` must be a string or null", at()),
            },
            secret: text_field("secret"),
            negative: v.get("negative").and_then(Value::as_bool).unwrap_or(false),
            forced_open: text_field("forced_open"),
        });
    }
    out
}

fn sanitize(raw: &str) -> Option<String> {
    Speakable::sanitize(raw).map(Speakable::into_string)
}

#[test]
fn no_case_leaks_its_secret_and_each_says_what_it_should() {
    let cases = load();
    let mut leaks = Vec::new();
    let mut wrong = Vec::new();
    for c in &cases {
        let got = sanitize(&c.raw);
        let said = got.clone().unwrap_or_default();
        if c.leaks(&said) {
            leaks.push(format!("{}: said {said:?}", c.label()));
        } else if got != c.say {
            wrong.push(format!("{}: want {:?}, got {got:?}", c.label(), c.say));
        }
    }
    assert!(
        leaks.is_empty() && wrong.is_empty(),
        "{} of {} cases leak their secret:\n  {}\n{} more say the wrong thing:\n  {}",
        leaks.len(),
        cases.len(),
        leaks.join("\n  "),
        wrong.len(),
        wrong.join("\n  ")
    );
}

/// Cut `s` into chunks of `n` chars (the last may be shorter).
fn chunks(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (k, (i, _)) in s.char_indices().enumerate() {
        if k > 0 && k % n == 0 {
            out.push(&s[start..i]);
            start = i;
        }
    }
    out.push(&s[start..]);
    out
}

/// What the splitter says for `raw` pushed in chunks of `n` chars: each sentence, with
/// whether it came out before `marker` had been pushed whole.
fn streamed(raw: &str, n: usize, marker: Option<&str>) -> Vec<(String, bool)> {
    let mut s = SentenceSplitter::new();
    let mut pushed = String::new();
    let mut out = Vec::new();
    for chunk in chunks(raw, n) {
        pushed.push_str(chunk);
        let before = marker.is_some_and(|m| !pushed.contains(m));
        for sentence in s.push(chunk) {
            out.push((sentence.into_string(), before));
        }
    }
    out.extend(s.finish().map(|x| (x.into_string(), false)));
    out
}

#[test]
fn streamed_sentences_are_just_as_strict() {
    let cases = load();
    let mut leaks = Vec::new();
    let mut wrong = Vec::new();
    let mut gap = Vec::new();
    for c in &cases {
        for n in [1, 2, 3, 5, 8, 13, usize::MAX] {
            let got = streamed(&c.raw, n, c.forced_open.as_deref());
            for (sentence, before_close) in &got {
                if !c.leaks(sentence) {
                    continue;
                }
                let line = format!("{} chunks of {n}: said {sentence:?}", c.label());
                if *before_close {
                    gap.push(line);
                } else {
                    leaks.push(line);
                }
            }
            // after the closing tag of a prompt-opened block, the splitter starts over
            let after: Vec<&str> = got
                .iter()
                .filter(|(_, before)| !before)
                .map(|(s, _)| s.as_str())
                .collect();
            let joined = (!after.is_empty()).then(|| after.join(" "));
            if joined != c.say {
                wrong.push(format!(
                    "{} chunks of {n}: want {:?}, got {got:?}",
                    c.label(),
                    c.say
                ));
            }
        }
    }
    if !gap.is_empty() {
        eprintln!(
            "{} sentences of prompt-opened reasoning were said before its closing tag arrived \
             (the splitter cannot know sooner; see tests/corpus/README.md):\n  {}",
            gap.len(),
            gap.join("\n  ")
        );
    }
    assert!(
        leaks.is_empty() && wrong.is_empty(),
        "{} streamed sentences leak a secret:\n  {}\n{} streams say the wrong thing:\n  {}",
        leaks.len(),
        leaks.join("\n  "),
        wrong.len(),
        wrong.join("\n  ")
    );
}

#[test]
fn the_corpus_covers_enough() {
    let cases = load();
    let mut problems = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for c in &cases {
        if !ids.insert(c.id.as_str()) {
            problems.push(format!("{}: duplicate id", c.label()));
        }
        match &c.secret {
            Some(s) if !c.raw.to_lowercase().contains(&s.to_lowercase()) => {
                problems.push(format!("{}: the secret is not in raw", c.label()))
            }
            None if !c.negative => problems.push(format!("{}: no secret", c.label())),
            _ => {}
        }
        if c.forced_open.as_deref().is_some_and(|m| !c.raw.contains(m)) {
            problems.push(format!("{}: forced_open names no tag in raw", c.label()));
        }
    }
    let negatives = cases.iter().filter(|c| c.negative).count();
    if cases.len() < 80 {
        problems.push(format!("only {} cases (need 80)", cases.len()));
    }
    if negatives < 20 {
        problems.push(format!("only {negatives} negatives (need 20)"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
