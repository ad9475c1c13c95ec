//! Blocks delimited by special tokens: the outcome of one block ([`Outcome`]), the memo of
//! the next block boundary ([`Boundary`]), the text at a position for error messages
//! ([`describe`]) and the streaming rule that broken markup running to the end of the text
//! is not settled yet ([`settle`]).
//!
//! Used by `deepseek_v3`, `deepseek_v31`, `deepseek_r1` (through
//! [`super::deepseek_tokens`]), `deepseek_dsml`, `kimi_k2` and `harmony`. Its tests hold the
//! helpers those detectors' tests share and the streaming property they all satisfy.

use std::ops::Range;

use crate::detector::{Candidate, Found, FoundKind};

/// What the text holds at `at`, for error messages: its first characters in backticks, or
/// "end of text". Shared by every detector in this group.
pub(crate) fn describe(text: &str, at: usize) -> String {
    let rest = text.get(at..).unwrap_or("");
    if rest.is_empty() {
        return "end of text".to_string();
    }
    let snippet: String = rest.chars().take(24).collect();
    format!("`{snippet}`")
}

/// The outcome of one block (section, construct). Shared by every detector in this group.
pub(crate) enum Outcome {
    Calls(Vec<Candidate>),
    Malformed(Option<String>, String),
    Pending,
}

impl Outcome {
    /// A block that ended: its calls, or malformed for `empty` when it holds none.
    pub(crate) fn calls_or(calls: Vec<Candidate>, empty: &str) -> Self {
        if calls.is_empty() {
            Outcome::Malformed(None, empty.into())
        } else {
            Outcome::Calls(calls)
        }
    }

    /// A call that failed: the reason is led by `what` (`"Kimi tool call"`) and the call's
    /// name when known.
    pub(crate) fn failed(what: &str, name: Option<String>, reason: &str) -> Self {
        let reason = match &name {
            Some(n) => format!("{what} `{n}`: {reason}"),
            None => format!("{what}: {reason}"),
        };
        Outcome::Malformed(name, reason)
    }

    /// The found over `span`, through [`settle`].
    pub(crate) fn into_found(self, span: Range<usize>, text_len: usize, eof: bool) -> Found {
        let found = match self {
            Outcome::Calls(calls) => Found::calls(span, calls),
            Outcome::Malformed(name, reason) => Found::malformed(span, name, reason),
            Outcome::Pending => Found::pending(span),
        };
        settle(found, text_len, eof)
    }
}

/// Remembers the next block boundary (a block's end token or a new opener, as
/// `(start, token, end)`) so recovery after a failure never rescans the same stretch of
/// text. Shared by every token-delimited detector in this group.
pub(crate) struct Boundary<T> {
    from: usize,
    found: Option<(usize, T, usize)>,
    valid: bool,
}

impl<T: Copy> Boundary<T> {
    pub(crate) fn new() -> Self {
        Boundary {
            from: 0,
            found: None,
            valid: false,
        }
    }

    /// The boundary at or after `from`; `find(from)` searches for it when the memo does not
    /// cover `from` (queries must not go backwards past the memo's start).
    pub(crate) fn next(
        &mut self,
        from: usize,
        find: impl FnOnce(usize) -> Option<(usize, T, usize)>,
    ) -> Option<(usize, T, usize)> {
        let covered = self.valid
            && from >= self.from
            && match self.found {
                Some((p, _, _)) => from <= p,
                None => true,
            };
        if !covered {
            self.from = from;
            self.found = find(from);
            self.valid = true;
        }
        self.found
    }
}

/// While streaming, broken markup whose span runs to the end of the text is not settled
/// yet (its closer may still arrive and move the span's end): report it `Pending`, never a
/// premature `Malformed`. Shared by every detector in this group.
pub(crate) fn settle(found: Found, text_len: usize, eof: bool) -> Found {
    if !eof && found.span.end >= text_len && matches!(found.kind, FoundKind::Malformed { .. }) {
        return Found::pending(found.span);
    }
    found
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::detector::{DetectCtx, Detector};
    use crate::detectors::deepseek_dsml::DeepseekDsml;
    use crate::detectors::deepseek_r1::DeepseekR1;
    use crate::detectors::deepseek_v3::DeepseekV3;
    use crate::detectors::deepseek_v31::DeepseekV31;
    use crate::detectors::harmony::Harmony;
    use crate::detectors::kimi_k2::KimiK2;
    use crate::validate::ToolSet;
    use serde_json::Value;
    pub(crate) fn run(d: &dyn Detector, text: &str, eof: bool) -> Vec<Found> {
        let tools = ToolSet::unrestricted();
        let ctx = DetectCtx { eof, tools: &tools };
        let mut out = Vec::new();
        d.detect(text, &ctx, &mut out);
        for f in &out {
            assert!(
                f.span.start < f.span.end && f.span.end <= text.len(),
                "{f:?}"
            );
            assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
        }
        for w in out.windows(2) {
            assert!(w[0].span.end <= w[1].span.start, "overlap: {out:?}");
        }
        out
    }

    pub(crate) fn calls(f: &Found) -> Vec<(String, Value)> {
        match &f.kind {
            FoundKind::Calls(c) => c
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect(),
            other => panic!("expected calls, got {other:?}"),
        }
    }

    pub(crate) fn reason(f: &Found) -> String {
        match &f.kind {
            FoundKind::Malformed { reason, .. } => reason.clone(),
            other => panic!("expected malformed, got {other:?}"),
        }
    }

    /// Fragments of every format in this group, for the streaming property below.
    pub(crate) const SOUP: &[&str] = &[
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
        "<｜tool calls begin｜>",
        "<|tool▁calls▁begin|>",
        "<|tool▁sep|>",
        "<｜tool▁calls｜>",
        "function",
        "get_time",
        "get_weather\n",
        "```json\n",
        "```",
        "\n",
        " ",
        "{}",
        "{\"a\": [1, \"}\"]}",
        "{",
        "}",
        "]",
        "\"",
        "<｜DSML｜function_calls>",
        "</｜DSML｜function_calls>",
        "<｜DSML｜tool_calls>",
        "</｜DSML｜tool_calls>",
        "<｜DSML｜invoke name=\"get_time\">",
        "</｜DSML｜invoke>",
        "<｜DSML｜parameter name=\"a\" string=\"true\">",
        "<｜DSML｜parameter name=\"b\" string=\"false\">",
        "</｜DSML｜parameter>",
        "<|DSML|invoke name=\"x\">",
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_end|>",
        "<|tool_call_begin|>",
        "<|tool_call_end|>",
        "<|tool_call_argument_begin|>",
        "functions.get_time:0",
        "<|channel|>",
        "<|message|>",
        "<|end|>",
        "<|start|>",
        "<|start|>assistant",
        "commentary",
        " to=functions.get_time",
        " to=browser.search",
        " <|constrain|>json",
        "<|call|>",
        "<|return|>",
        "analysis",
        "Hi é",
    ];

    /// The streaming contract: anything a detector reports as settled (not `Pending`) for a
    /// prefix of the output is reported the same way for the whole output.
    pub(crate) fn check_settled_is_final(d: &dyn Detector, text: &str) -> Result<(), String> {
        let full = run(d, text, true);
        for k in (1..text.len()).filter(|&k| text.is_char_boundary(k)) {
            let prefix = &text[..k];
            for f in run(d, prefix, false) {
                if f.kind == FoundKind::Pending {
                    assert_eq!(
                        f.span.end,
                        prefix.len(),
                        "{}: pending must run to the end: {prefix:?}",
                        d.name()
                    );
                    continue;
                }
                // Reasons may quote text that is still arriving; spans, calls and the
                // malformed verdict may not change.
                let same = |g: &Found| {
                    g.span == f.span
                        && match (&g.kind, &f.kind) {
                            (FoundKind::Malformed { .. }, FoundKind::Malformed { .. }) => true,
                            (a, b) => a == b,
                        }
                };
                if !full.iter().any(same) {
                    return Err(format!(
                        "{}: prefix {prefix:?} settled {f:?}, full text {text:?} gave {full:?}",
                        d.name()
                    ));
                }
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, failure_persistence: None, .. Default::default() })]
        #[test]
        fn settled_founds_are_final(v in proptest::collection::vec(proptest::sample::select(SOUP), 0..16)) {
            let text = v.concat();
            let dets: [&dyn Detector; 6] = [
                &DeepseekV3,
                &DeepseekV31,
                &DeepseekR1,
                &DeepseekDsml,
                &KimiK2,
                &Harmony,
            ];
            for d in dets {
                if let Err(e) = check_settled_is_final(d, &text) {
                    proptest::prop_assert!(false, "{}", e);
                }
            }
        }
    }
}
