//! Think blocks: where reasoning is in the raw text.
//!
//! Detection runs on the raw text, think blocks included (Qwen3 emits calls inside
//! `<think>`). This module only says where reasoning is; `parse.rs` applies the rule:
//!
//! **A call inside a think block counts only if it is complete and trailing**: nothing but
//! whitespace (or other complete calls) follows it up to the block's end, which is the close
//! tag or, for a block the model never closed, the end of the output. A call followed by
//! more reasoning was merely mentioned, and is not a call.
//!
//! Forced-open thinking: when the prompt opened the think block, the output begins inside
//! it and only a close tag appears. If the *first* think tag in the output is a close tag,
//! everything before it is reasoning (unless the caller knows the prompt did not open a
//! block: `start_in_think = Some(false)`, when a lone close tag is just removed).

use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};

/// One pair of think tags.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct ThinkTags {
    pub open: String,
    pub close: String,
    /// Whether a close tag seen before any open tag means the output began inside this
    /// block (true for `</think>`-style tags; false for Harmony's generic `<|end|>`).
    #[serde(default = "yes")]
    pub forced_open: bool,
}

fn yes() -> bool {
    true
}

impl ThinkTags {
    pub fn new(open: &str, close: &str) -> Self {
        ThinkTags {
            open: open.into(),
            close: close.into(),
            forced_open: true,
        }
    }
}

/// Every think-tag pair hearth knows, for auto mode.
pub fn known_tags() -> Vec<ThinkTags> {
    let mut v = vec![
        ThinkTags::new("<think>", "</think>"),
        ThinkTags::new("<thinking>", "</thinking>"),
        ThinkTags::new("[THINK]", "[/THINK]"),
        ThinkTags::new("<|START_THINKING|>", "<|END_THINKING|>"),
        ThinkTags::new("<seed:think>", "</seed:think>"),
        ThinkTags::new("◁think▷", "◁/think▷"),
        ThinkTags::new("<|begin_of_thought|>", "<|end_of_thought|>"),
        // Gemma 4's thinking channel
        ThinkTags::new("<|channel>thought", "<channel|>"),
    ];
    v.push(ThinkTags {
        open: "<|channel|>analysis<|message|>".into(),
        close: "<|end|>".into(),
        forced_open: false,
    });
    // Apriel: the prompt opens the reasoning ("Here are my reasoning steps:") and the
    // output closes it; there is no open tag.
    v.push(ThinkTags {
        open: String::new(),
        close: "[BEGIN FINAL RESPONSE]".into(),
        forced_open: true,
    });
    v
}

/// The pair among `tags` whose block `text` leaves open: its open tag's last occurrence has
/// no close tag after it. Given what a chat template adds for the model's turn, this says
/// whether the output will begin inside reasoning. Close-only pairs (an empty open tag) are
/// never found: nothing in the text marks them open.
pub fn left_open<'a>(text: &str, tags: &'a [ThinkTags]) -> Option<&'a ThinkTags> {
    tags.iter().find(|t| {
        !t.open.is_empty()
            && text
                .rfind(t.open.as_str())
                .is_some_and(|at| !text[at + t.open.len()..].contains(t.close.as_str()))
    })
}

/// A think block found in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The whole block, tags included: removed from the reply.
    pub outer: Range<usize>,
    /// The reasoning inside the tags.
    pub inner: Range<usize>,
    /// False when the block runs to the end of the text without a close tag.
    pub closed: bool,
}

/// Compiled think-tag matcher.
#[derive(Debug, Clone)]
pub struct ThinkMatcher {
    tags: Vec<ThinkTags>,
    /// pattern index → (pair index, is-open)
    kinds: Vec<(usize, bool)>,
    ac: Option<AhoCorasick>,
}

/// Where think blocks are, plus what streaming must hold back.
#[derive(Debug, Clone, Default)]
pub struct ThinkScan {
    pub regions: Vec<Region>,
    /// While streaming: the offset from which text is undecided (an unclosed block, or,
    /// when forced-open is possible and no tag has been seen yet, the whole text).
    pub hold_from: Option<usize>,
}

impl ThinkMatcher {
    pub fn new(tags: Vec<ThinkTags>) -> Self {
        // a pair needs a close tag; an empty open tag means "close-only" (forced open)
        let tags: Vec<ThinkTags> = tags
            .into_iter()
            .filter(|t| !t.close.is_empty() && (!t.open.is_empty() || t.forced_open))
            .collect();
        // each pattern is (pair index, is-open)
        let mut pats: Vec<&str> = Vec::new();
        let mut kinds = Vec::new();
        for (k, t) in tags.iter().enumerate() {
            if !t.open.is_empty() {
                pats.push(&t.open);
                kinds.push((k, true));
            }
            pats.push(&t.close);
            kinds.push((k, false));
        }
        let ac = if pats.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&pats)
                .ok()
        };
        ThinkMatcher { tags, kinds, ac }
    }

    pub fn tags(&self) -> &[ThinkTags] {
        &self.tags
    }

    /// Find think blocks. `start_in_think`: `Some(true)` when the prompt opened a block,
    /// `Some(false)` when it certainly did not, `None` when unknown.
    pub fn scan(&self, text: &str, start_in_think: Option<bool>, eof: bool) -> ThinkScan {
        let Some(ac) = &self.ac else {
            return ThinkScan::default();
        };
        let mut regions = Vec::new();
        // (tag index, open start, inner start)
        let mut open: Option<(usize, usize, usize)> = if start_in_think == Some(true) {
            Some((usize::MAX, 0, 0))
        } else {
            None
        };
        // nesting depth of the open block's own tag
        let mut depth = 0usize;
        let mut seen_any = start_in_think == Some(true);
        for m in ac.find_iter(text) {
            let Some(&(tag, is_open)) = self.kinds.get(m.pattern().as_usize()) else {
                continue;
            };
            match open {
                None if is_open => {
                    open = Some((tag, m.start(), m.end()));
                    depth = 1;
                    seen_any = true;
                }
                None => {
                    // a close tag with no block open
                    let forced = !seen_any
                        && start_in_think != Some(false)
                        && self.tags.get(tag).is_some_and(|t| t.forced_open);
                    if forced {
                        regions.push(Region {
                            outer: 0..m.end(),
                            inner: 0..m.start(),
                            closed: true,
                        });
                    } else if self.tags.get(tag).is_some_and(|t| t.forced_open) {
                        // a stray close tag: removed, nothing else
                        regions.push(Region {
                            outer: m.start()..m.end(),
                            inner: m.start()..m.start(),
                            closed: true,
                        });
                    }
                    seen_any = true;
                }
                Some((t, _, _)) if is_open && t == tag => depth += 1,
                Some((t, start, inner)) => {
                    if !is_open && (t == tag || t == usize::MAX) && depth > 1 {
                        depth -= 1;
                    } else if !is_open && (t == tag || t == usize::MAX) {
                        regions.push(Region {
                            outer: start..m.end(),
                            inner: inner..m.start(),
                            closed: true,
                        });
                        open = None;
                    }
                }
            }
        }
        let mut hold_from = None;
        if let Some((_, start, inner)) = open {
            regions.push(Region {
                outer: start..text.len(),
                inner: inner..text.len(),
                closed: false,
            });
            if !eof {
                hold_from = Some(start);
            }
        }
        if !eof && !seen_any && start_in_think.is_none() {
            // A close tag may still arrive and turn everything so far into reasoning.
            hold_from = Some(0);
        }
        ThinkScan { regions, hold_from }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_that_ends_inside_a_block_leaves_it_open() {
        let tags = known_tags();
        let open = |s: &str| left_open(s, &tags).map(|t| t.close.clone());
        assert_eq!(
            open("<|im_start|>assistant\n<think>\n"),
            Some("</think>".to_string())
        );
        assert_eq!(open("<|im_start|>assistant\n"), None);
        // Qwen3 with thinking off renders an empty, closed block
        assert_eq!(open("<|im_start|>assistant\n<think>\n\n</think>\n\n"), None);
        // <thinking> is its own pair, not an open <think>
        assert_eq!(
            open("assistant: <thinking>"),
            Some("</thinking>".to_string())
        );
        assert_eq!(
            open("<|start|>assistant<|channel|>analysis<|message|>"),
            Some("<|end|>".to_string())
        );
    }

    fn m() -> ThinkMatcher {
        ThinkMatcher::new(known_tags())
    }

    #[test]
    fn closed_unclosed_forced_open() {
        let t = "<think>plan</think>Hi";
        let s = m().scan(t, None, true);
        assert_eq!(s.regions.len(), 1);
        assert_eq!(&t[s.regions[0].inner.clone()], "plan");
        assert_eq!(&t[s.regions[0].outer.clone()], "<think>plan</think>");

        let t = "plan</think>Hi";
        let s = m().scan(t, None, true);
        assert_eq!(&t[s.regions[0].inner.clone()], "plan");
        let s = m().scan(t, Some(false), true);
        assert_eq!(&t[s.regions[0].outer.clone()], "</think>");

        let t = "<think>still going";
        let s = m().scan(t, None, true);
        assert!(!s.regions[0].closed);
        assert_eq!(m().scan(t, None, false).hold_from, Some(0));

        assert_eq!(m().scan("Hello", None, false).hold_from, Some(0));
        assert_eq!(m().scan("Hello", Some(false), false).hold_from, None);
        let s = m().scan("plan", Some(true), true);
        assert_eq!(s.regions[0].inner, 0..4);
    }

    #[test]
    fn close_only_pair() {
        let t = "Reasoning here.\n[BEGIN FINAL RESPONSE]Done.";
        let s = m().scan(t, None, true);
        assert_eq!(&t[s.regions[0].inner.clone()], "Reasoning here.\n");
    }

    #[test]
    fn harmony_end_is_not_forced_open() {
        let t = "<|channel|>final<|message|>Hi<|end|>";
        assert!(m().scan(t, None, true).regions.is_empty());
        let t = "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>Hi";
        let s = m().scan(t, None, true);
        assert_eq!(&t[s.regions[0].inner.clone()], "hmm");
    }
}
