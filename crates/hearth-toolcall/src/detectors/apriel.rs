//! `apriel`: ServiceNow Apriel tool calls.
//!
//! Shape: a JSON list of call objects between `<tool_calls>` and `</tool_calls>`, placed in
//! the final response, which Apriel's thinker models open with `[BEGIN FINAL RESPONSE]`
//! (after free-text reasoning) and may close with `[END FINAL RESPONSE]`; the turn ends with
//! `<|end|>`:
//!
//! ```text
//! The user wants the weather; I should call get_weather.
//! [BEGIN FINAL RESPONSE]
//! <tool_calls>[{"name": "get_weather", "arguments": {"location": "Paris"}}]</tool_calls>
//! [END FINAL RESPONSE]
//! <|end|>
//! ```
//!
//! Models: Apriel-Nemotron-15b-Thinker, Apriel-1.5-15b-Thinker, Apriel-1.6-15b-Thinker (their
//! chat templates ask for "a list of JSON objects within <tool_calls></tool_calls> XML tags"
//! and render past calls as `\n<tool_calls>[{"name": …, "arguments": …, "id": …}]</tool_calls>`;
//! the generation prompt ends with "Here are my reasoning steps:\n").
//!
//! Sources: the Apriel 1.5 (unsloth) and 1.6 chat templates in llama.cpp `models/templates`,
//! llama.cpp `chat-parsers/apriel-1-5.cpp`, vLLM's `apriel` tool parser (the
//! `<tool_calls>…</tool_calls>` JSON-list envelope), Apriel model cards.
//!
//! The `<tool_calls>` envelope itself is shared with AI21 Jamba (the `jamba` detector), so
//! this detector only claims it in Apriel context: `[BEGIN FINAL RESPONSE]` earlier in the
//! text, or `[END FINAL RESPONSE]` / `<|end|>` right after the block. A bare block is never
//! claimed at the end of the output; while streaming, a block whose end is not decided yet
//! is only `Pending` (an Apriel end marker may still follow), which holds text back without
//! claiming it.
//!
//! Edge cases:
//! - a model-emitted `"id"` is kept verbatim; `arguments` as a JSON-encoded string is decoded;
//! - `[END FINAL RESPONSE]` and `<|end|>` right after the block belong to its span;
//! - a complete list whose `</tool_calls>` is missing is accepted only at the end of the
//!   output (or right before `[END FINAL RESPONSE]` / `<|end|>`); while streaming it is
//!   `Pending`;
//! - each block is parsed up to the next `<tool_calls>`, so one broken block does not hide
//!   the next;
//! - the reasoning before `[BEGIN FINAL RESPONSE]` (a think block with an implicit opening)
//!   is the framework's business.

use std::convert::identity;

use super::shared::json_after_marker::{
    absorb_tokens, after_token, bracket_reason, calls_found, is_partial, json_at, name_hint, JsonAt,
};
use crate::detector::{DetectCtx, Detector, Found, Strictness};
use crate::scan;

const OPEN: &str = "<tool_calls>";
const CLOSE: &str = "</tool_calls>";
const BEGIN_FINAL: &str = "[BEGIN FINAL RESPONSE]";
const END_FINAL: &str = "[END FINAL RESPONSE]";
const END: &str = "<|end|>";

pub struct Apriel;

impl Detector for Apriel {
    fn name(&self) -> &str {
        "apriel"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN, BEGIN_FINAL, END_FINAL, END]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let begin_at = scan::find_from(text, BEGIN_FINAL, 0);
        let mut opens = scan::find_all(text, OPEN).peekable();
        let mut resume = 0;
        while let Some(start) = opens.next() {
            let next = opens.peek().copied();
            if start < resume {
                continue;
            }
            let block = Block {
                text,
                start,
                limit: next.unwrap_or(text.len()),
                may_grow: next.is_none() && !ctx.eof,
                in_final: begin_at.is_some_and(|b| b < start),
            };
            match block.parse(out) {
                Some(r) => resume = r,
                None => return,
            }
        }
    }
}

/// One `<tool_calls>` block, looking no further than `limit` (the next `<tool_calls>`).
struct Block<'a> {
    text: &'a str,
    start: usize,
    limit: usize,
    may_grow: bool,
    /// `[BEGIN FINAL RESPONSE]` came before: Apriel context is established.
    in_final: bool,
}

impl Block<'_> {
    /// True if an Apriel end marker follows `pos` (whitespace allowed).
    fn apriel_tail(&self, pos: usize) -> bool {
        after_token(self.text, pos, END_FINAL).is_some()
            || after_token(self.text, pos, END).is_some()
    }

    /// While streaming, whether what follows `pos` may still turn into an Apriel end marker.
    fn tail_undecided(&self, pos: usize) -> bool {
        let rest = &self.text[pos.min(self.text.len())..];
        self.may_grow
            && (rest.trim().is_empty() || is_partial(rest, END) || is_partial(rest, END_FINAL))
    }

    fn pending(&self, out: &mut Vec<Found>) -> Option<usize> {
        out.push(Found::pending(self.start..self.text.len()));
        None
    }

    fn next(&self) -> Option<usize> {
        (self.limit < self.text.len()).then_some(self.limit)
    }

    /// A block that ends at `end` (after its closing tag, or after the list when the tag is
    /// missing): claim it if it is Apriel's, with the end markers that follow.
    fn finish(
        &self,
        out: &mut Vec<Found>,
        end: usize,
        make: impl FnOnce(std::ops::Range<usize>) -> Found,
    ) -> Option<usize> {
        if !self.in_final {
            if self.tail_undecided(end) {
                return self.pending(out);
            }
            if !self.apriel_tail(end) {
                return Some(end);
            }
        }
        let span_end = absorb_tokens(self.text, end, &[END_FINAL, END]);
        out.push(make(self.start..span_end));
        Some(span_end)
    }

    fn parse(&self, out: &mut Vec<Found>) -> Option<usize> {
        let text = self.text;
        let start = self.start;
        let body = start + OPEN.len();
        let close_after = |from: usize| {
            scan::find_from(&text[..self.limit], CLOSE, from).map(|c| c + CLOSE.len())
        };
        match json_at(text, body, self.limit) {
            JsonAt::Nothing => {
                if self.may_grow {
                    return self.pending(out);
                }
                if self.in_final {
                    out.push(Found::malformed(
                        start..body,
                        None,
                        "<tool_calls> with no call list after it",
                    ));
                }
                self.next()
            }
            JsonAt::NotJson(_) => match close_after(body) {
                // The closing tag may still come and decide the span.
                None if self.may_grow => self.pending(out),
                None => {
                    if self.in_final {
                        out.push(Found::malformed(
                            start..body,
                            None,
                            "expected a JSON list of calls after <tool_calls>",
                        ));
                    }
                    Some(body)
                }
                Some(end) => self.finish(out, end, |span| {
                    Found::malformed(
                        span,
                        None,
                        "expected a JSON list of calls after <tool_calls>",
                    )
                }),
            },
            JsonAt::Incomplete(_) => {
                if self.may_grow {
                    return self.pending(out);
                }
                if self.in_final {
                    out.push(Found::malformed(
                        start..self.limit,
                        None,
                        "unterminated JSON after <tool_calls>",
                    ));
                }
                self.next()
            }
            JsonAt::Invalid(s, at) => {
                let reason = bracket_reason(
                    "malformed JSON after <tool_calls>: unbalanced brackets",
                    s,
                    at,
                );
                let name = name_hint(&text[s..at]);
                match close_after(at) {
                    None if self.may_grow => self.pending(out),
                    None => {
                        if self.in_final {
                            out.push(Found::malformed(start..at, name, reason));
                        }
                        Some(at)
                    }
                    Some(end) => self.finish(out, end, |span| Found::malformed(span, name, reason)),
                }
            }
            JsonAt::Complete(s, e) => {
                let json = &text[s..e];
                let result = |span| calls_found(span, json, OPEN, identity);
                let rest = &text[e..self.limit];
                if let Some(c) = after_token(text, e, CLOSE) {
                    self.finish(out, c, result)
                } else if self.may_grow && (is_partial(rest, CLOSE) || self.tail_undecided(e)) {
                    self.pending(out)
                } else if rest.trim().is_empty() || self.apriel_tail(e) {
                    // Closing tag missing at the end of the output (or of the response).
                    self.finish(out, e, result)
                } else {
                    if self.in_final {
                        out.push(Found::malformed(
                            start..e,
                            name_hint(json),
                            "expected </tool_calls> right after the call list",
                        ));
                    }
                    Some(e)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect};
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(&Apriel, text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn thinker_output_with_markers() {
        let t = "The user wants the weather.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]</tool_calls>\n[END FINAL RESPONSE]\n<|end|>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.clone()][..12], OPEN);
        assert_eq!(out[0].span.end, t.len());
        assert_eq!(calls(&out[0])[0].arguments, json!({"location": "Paris"}));
    }

    #[test]
    fn parallel_with_ids() {
        let t = "[BEGIN FINAL RESPONSE]\nOn it.\n<tool_calls>[\n  {\"name\": \"get_time\", \"arguments\": {}, \"id\": \"call_1\"},\n  {\"name\": \"get_date\", \"arguments\": \"{}\", \"id\": \"call_2\"}\n]</tool_calls>";
        let out = run(t, true);
        let c = calls(&out[0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].id.as_deref(), Some("call_2"));
        assert_eq!(c[1].arguments, json!({}));
    }

    #[test]
    fn end_token_alone_establishes_context() {
        let t = "<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}]</tool_calls>\n<|end|>";
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
    }

    #[test]
    fn jamba_style_without_apriel_markers_is_not_claimed() {
        let t = "<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}]</tool_calls>";
        assert!(run(t, true).is_empty());
        // while streaming it is only held back: `<|end|>` may still follow
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
        assert!(run(&format!("{t} Done."), false).is_empty());
        assert!(run("<tool_calls>[{\"name\": \"get_ti", true).is_empty());
    }

    #[test]
    fn unclosed_and_streaming() {
        let t = "[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}]";
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
        assert!(matches!(run(t, false)[0].kind, FoundKind::Pending));
        let t2 = format!("{t}</tool_ca");
        assert!(matches!(run(&t2, false)[0].kind, FoundKind::Pending));
        let t3 = "[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"get_time\", \"argu";
        assert!(matches!(run(t3, false)[0].kind, FoundKind::Pending));
        assert!(matches!(run(t3, true)[0].kind, FoundKind::Malformed { .. }));
        let t4 = "[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}][END FINAL RESPONSE]";
        let out = run(t4, true);
        assert_eq!(out[0].span.end, t4.len());
    }

    #[test]
    fn malformed_cases() {
        let t = "[BEGIN FINAL RESPONSE]<tool_calls>[{\"name\": \"get_time\", \"arguments\": {,}}]</tool_calls>";
        match &run(t, true)[0].kind {
            FoundKind::Malformed { reason, .. } => assert!(reason.contains("malformed JSON")),
            other => panic!("{other:?}"),
        }
        let t = "[BEGIN FINAL RESPONSE]<tool_calls>get_time()</tool_calls> ok";
        let out = run(t, true);
        assert_eq!(
            &t[out[0].span.clone()],
            "<tool_calls>get_time()</tool_calls>"
        );
    }

    #[test]
    fn adversarial_input_finishes() {
        for unit in [
            "[BEGIN FINAL RESPONSE]<tool_calls>",
            "<tool_calls>[",
            "<tool_calls>[{\"a\":[}</tool_calls><|end|>",
            "<tool_calls>x<|end|>",
        ] {
            let t = unit.repeat(1_000_000 / unit.len());
            let _ = run(&t, true);
            let _ = run(&t, false);
        }
    }
}
