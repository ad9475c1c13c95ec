//! `mistral`: every Mistral `[TOOL_CALLS]` form.
//!
//! The `[TOOL_CALLS]` control token opens each construct. What follows depends on the
//! tokenizer version the model was trained with (mistral-common `tokens/tokenizers/tools.py`):
//!
//! ```text
//! v2–v7 (Mistral 7B v0.3, Mixtral 8x22B, Mistral Nemo, Ministral 8B, Magistral Small 2506):
//!   [TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Paris"}, "id": "a1B2c3D4e"}]</s>
//! v11+ (Mistral Small 3.1/3.2, Devstral Small 1.1 / Devstral 2, Magistral 2507+, Ministral 3):
//!   [TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}
//!   [TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"location": "Paris"}
//!   [TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]get_date[ARGS]{}</s>
//! v11+ decoded with special tokens skipped ([ARGS] dropped, [TOOL_CALLS] kept), as vLLM's
//! Mistral tokenizer path and Ollama render Devstral / Mistral Small 3.2 output:
//!   [TOOL_CALLS]get_weather{"location": "Paris"}
//! ```
//!
//! Sources: mistral-common `tools.py` (the three decode shapes), vLLM
//! `tool_parsers/mistral_tool_parser.py` + `tests/tool_parsers/test_mistral_tool_parser.py`
//! (pre-v11 list with leading space, trailing text, `NAME{json}` repeated markers), SGLang
//! `mistral_detector.py`, llama.cpp `chat-parsers/mistral-nemo.cpp` / `magistral.cpp` (list
//! with 9-char `id`) and `ministral-3.cpp` (`NAME[ARGS]{json}` per marker), Ollama #11470 and
//! #16932 (Devstral `[TOOL_CALLS]name[ARGS]{…}` and `[TOOL_CALLS]foo{"name": "bar"}`).
//!
//! Edge cases handled:
//! - a model-emitted id (`"id"` in the list form, `[CALL_ID]` in v11) is kept verbatim; its
//!   9-character alphanumeric shape is Mistral's rule and is not enforced here;
//! - text before the marker and after the call is reply text (vLLM keeps trailing text too);
//! - a `</s>` right after a call belongs to the call's span;
//! - each `[TOOL_CALLS]` segment is parsed on its own, up to the next marker, so a broken call
//!   does not swallow the next one;
//! - a single call object (`[TOOL_CALLS]{"name": …}`) is accepted like a one-item list;
//! - whitespace after the marker and around `[ARGS]` is allowed;
//! - a cut-off call is `Pending` while streaming (including a half-written `[ARG`), and
//!   malformed at end of output; a marker followed by prose is malformed (only the marker is
//!   removed from the reply).
//!
//! Magistral's `[THINK]…[/THINK]` reasoning block is the framework's job, not this detector's.

use std::convert::identity;

use super::shared::json_after_marker::{
    absorb_tokens, bracket_mismatch, bracket_reason, calls_found, cut_off, is_partial, json_at,
    JsonAt,
};
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

const MARK: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";
const EOS: &str = "</s>";

pub struct Mistral;

impl Detector for Mistral {
    fn name(&self) -> &str {
        "mistral"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[MARK]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut marks = scan::find_all(text, MARK).peekable();
        while let Some(m) = marks.next() {
            let next = marks.peek().copied();
            let seg = Segment {
                text,
                start: m,
                end: next.unwrap_or(text.len()),
                // Only the last segment can still grow while streaming.
                may_grow: next.is_none() && !ctx.eof,
            };
            seg.parse(out);
        }
    }
}

/// The text from one `[TOOL_CALLS]` up to the next one (or the end).
struct Segment<'a> {
    text: &'a str,
    start: usize,
    end: usize,
    may_grow: bool,
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

impl Segment<'_> {
    fn pending(&self, out: &mut Vec<Found>) {
        out.push(Found::pending(self.start..self.text.len()));
    }

    /// Report a cut-off construct: pending if more text may come, else malformed up to
    /// `end` (the segment end for a cut-off value; just the markup when only whitespace
    /// follows, so that text masked as code after it stays in the reply).
    fn cut_off(&self, out: &mut Vec<Found>, end: usize, name: Option<&str>, reason: &str) {
        out.push(cut_off(
            self.start..end,
            self.text.len(),
            self.may_grow,
            name.map(str::to_string),
            reason,
        ));
    }

    fn parse(&self, out: &mut Vec<Found>) {
        let text = self.text;
        let body = self.start + MARK.len();
        let Some(seg) = text.get(..self.end) else {
            return;
        };
        let p = scan::skip_ws(seg, body);
        let rest = &seg[p..];
        if rest.is_empty() {
            return self.cut_off(out, body, None, "[TOOL_CALLS] with no call after it");
        }
        if rest.starts_with(ARGS) || rest.starts_with(CALL_ID) {
            return self.v11(out, p, p);
        }
        match rest.as_bytes()[0] {
            b'[' => {
                if self.may_grow && (is_partial(rest, ARGS) || is_partial(rest, CALL_ID)) {
                    return self.pending(out);
                }
                self.json_calls(out, p)
            }
            b'{' => self.json_calls(out, p),
            b if ident_byte(b) => {
                let name_end = p + rest.bytes().take_while(|&b| ident_byte(b)).count();
                self.v11(out, p, name_end)
            }
            _ => out.push(Found::malformed(
                self.start..body,
                None,
                "expected a tool name or a JSON list of calls after [TOOL_CALLS]",
            )),
        }
    }

    /// Pre-v11: a JSON list of call objects (or one object) after the marker.
    fn json_calls(&self, out: &mut Vec<Found>, from: usize) {
        let text = self.text;
        match json_at(text, from, self.end) {
            JsonAt::Nothing | JsonAt::NotJson(_) => {}
            JsonAt::Incomplete(_) => {
                self.cut_off(
                    out,
                    self.end,
                    None,
                    "unterminated JSON list after [TOOL_CALLS]",
                );
            }
            JsonAt::Invalid(s, at) => out.push(bracket_mismatch(
                text,
                self.start,
                s,
                at,
                "malformed JSON after [TOOL_CALLS]: unbalanced brackets",
            )),
            JsonAt::Complete(s, e) => {
                let end = absorb_tokens(text, e, &[EOS]);
                out.push(calls_found(self.start..end, &text[s..e], MARK, identity));
            }
        }
    }

    /// v11+: `NAME[CALL_ID]ID[ARGS]{json}`, `NAME[ARGS]{json}` or `NAME{json}`; the name is
    /// `text[p..name_end]` (possibly empty, which is malformed).
    fn v11(&self, out: &mut Vec<Found>, p: usize, name_end: usize) {
        let text = self.text;
        let seg = &text[..self.end];
        let name = &text[p..name_end];
        let q = scan::skip_ws(seg, name_end);
        let after = &seg[q..];
        let mut id = None;
        let args_from = if let Some(id_and_more) = after.strip_prefix(CALL_ID) {
            let id_start = q + CALL_ID.len();
            let id_len = id_and_more.bytes().take_while(|&b| ident_byte(b)).count();
            let id_end = id_start + id_len;
            let r = scan::skip_ws(seg, id_end);
            if seg[r..].starts_with(ARGS) {
                if id_len == 0 {
                    return out.push(Found::malformed(
                        self.start..r + ARGS.len(),
                        Some(name.to_string()).filter(|n| !n.is_empty()),
                        "empty call id after [CALL_ID]",
                    ));
                }
                id = Some(text[id_start..id_end].to_string());
                r + ARGS.len()
            } else if self.may_grow && (r == seg.len() || is_partial(&seg[r..], ARGS)) {
                return self.pending(out);
            } else {
                return out.push(Found::malformed(
                    self.start..id_end,
                    Some(name.to_string()).filter(|n| !n.is_empty()),
                    "expected [ARGS] after the [CALL_ID] call id",
                ));
            }
        } else if after.starts_with(ARGS) {
            q + ARGS.len()
        } else if after.starts_with('{') {
            // `[ARGS]` dropped when special tokens were skipped in decoding.
            q
        } else if self.may_grow
            && (after.is_empty() || is_partial(after, ARGS) || is_partial(after, CALL_ID))
        {
            return self.pending(out);
        } else if after.is_empty() {
            return out.push(Found::malformed(
                self.start..name_end,
                Some(name.to_string()),
                "tool name after [TOOL_CALLS] has no arguments",
            ));
        } else {
            // Most likely prose after a stray token: only the token is removed.
            return out.push(Found::malformed(
                self.start..self.start + MARK.len(),
                None,
                format!("expected [ARGS] or JSON arguments after {name:?} in [TOOL_CALLS]"),
            ));
        };
        if name.is_empty() {
            return out.push(Found::malformed(
                self.start..args_from,
                None,
                "missing tool name between [TOOL_CALLS] and [ARGS]",
            ));
        }
        match json_at(text, args_from, self.end) {
            JsonAt::Nothing => {
                self.cut_off(
                    out,
                    args_from,
                    Some(name),
                    "missing JSON arguments after [ARGS]",
                );
            }
            JsonAt::NotJson(at) => out.push(Found::malformed(
                self.start..at,
                Some(name.to_string()),
                "expected a JSON object of arguments after [ARGS]",
            )),
            JsonAt::Incomplete(_) => {
                self.cut_off(
                    out,
                    self.end,
                    Some(name),
                    "unterminated JSON arguments after [ARGS]",
                );
            }
            JsonAt::Invalid(s, at) => out.push(Found::malformed(
                self.start..at,
                Some(name.to_string()),
                bracket_reason(
                    "malformed JSON arguments after [ARGS]: unbalanced brackets",
                    s,
                    at,
                ),
            )),
            JsonAt::Complete(s, e) => {
                let end = absorb_tokens(text, e, &[EOS]);
                out.push(match scan::parse_args_json(&text[s..e]) {
                    Ok(arguments) => Found::call(
                        self.start..end,
                        Candidate {
                            name: name.to_string(),
                            arguments,
                            id,
                        },
                    ),
                    Err(reason) => {
                        Found::malformed(self.start..end, Some(name.to_string()), reason)
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, reason};
    use crate::validate::ToolSet;
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(&Mistral, text, eof, &ToolSet::unrestricted())
    }

    #[test]
    fn pre_v11_list_with_ids_and_eos() {
        let t = r#"[TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Paris"}, "id": "a1B2c3D4e"}, {"name": "get_time", "arguments": {}, "id": "Zz9Yy8Xx7"}]</s>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        let c = calls(&out[0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].id.as_deref(), Some("a1B2c3D4e"));
        assert_eq!(c[1].id.as_deref(), Some("Zz9Yy8Xx7"));
        assert_eq!(c[0].arguments, json!({"location": "Paris"}));
    }

    #[test]
    fn pre_v11_text_before_and_after() {
        let t =
            "Hello[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"x\": 1, \"y\": 2}}]\nextra";
        let out = run(t, true);
        assert_eq!(out[0].span, 5..t.len() - 6);
        assert_eq!(calls(&out[0])[0].name, "add");
    }

    #[test]
    fn v11_args_call_id_and_repeated_markers() {
        let t = r#"[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"location": "Oslo"}[TOOL_CALLS]get_time[ARGS]{}</s>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        let a = &calls(&out[0])[0];
        assert_eq!(a.name, "get_weather");
        assert_eq!(a.id.as_deref(), Some("a1B2c3D4e"));
        assert_eq!(a.arguments, json!({"location": "Oslo"}));
        let b = &calls(&out[1])[0];
        assert_eq!(b.name, "get_time");
        assert_eq!(b.id, None);
        assert_eq!(out[0].span.end, out[1].span.start);
        assert_eq!(out[1].span.end, t.len());
    }

    #[test]
    fn v11_without_args_token() {
        let t = r#"Sure.[TOOL_CALLS]add{"x": 3.5, "y": 4}[TOOL_CALLS]search{"query": "name"}"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[0])[0].arguments, json!({"x": 3.5, "y": 4}));
        assert_eq!(calls(&out[1])[0].name, "search");
        assert_eq!(out[0].span.start, 5);
    }

    #[test]
    fn single_object_after_marker() {
        let out = run(
            r#"[TOOL_CALLS] {"name": "get_time", "arguments": {}}"#,
            true,
        );
        assert_eq!(calls(&out[0])[0].name, "get_time");
    }

    #[test]
    fn streaming_pending_states() {
        for t in [
            "Let me check. [TOOL_CALLS]",
            "[TOOL_CALLS]get_wea",
            "[TOOL_CALLS]get_weather[",
            "[TOOL_CALLS]get_weather[AR",
            "[TOOL_CALLS]get_weather[CALL_ID]abc",
            "[TOOL_CALLS]get_weather[CALL_ID]abc[ARG",
            "[TOOL_CALLS]get_weather[ARGS]",
            "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Pa",
            "[TOOL_CALLS][",
            "[TOOL_CALLS] [{\"name\": \"get_time\", ",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert!(matches!(out[0].kind, FoundKind::Pending), "{t}");
            assert_eq!(out[0].span.end, t.len());
            assert_eq!(&t[out[0].span.start..][..12], MARK);
            let out = run(t, true);
            assert!(matches!(out[0].kind, FoundKind::Malformed { .. }), "{t}");
        }
    }

    #[test]
    fn complete_call_while_streaming_is_a_call() {
        let out = run("[TOOL_CALLS]get_time[ARGS]{}", false);
        assert_eq!(calls(&out[0])[0].name, "get_time");
    }

    #[test]
    fn broken_call_does_not_swallow_the_next() {
        let t = r#"[TOOL_CALLS]get_weather[ARGS]{"location": [TOOL_CALLS]get_time[ARGS]{}"#;
        let out = run(t, false);
        assert_eq!(out.len(), 2);
        assert!(reason(&out[0]).contains("unterminated"));
        assert_eq!(calls(&out[1])[0].name, "get_time");
    }

    #[test]
    fn malformed_shapes() {
        let out = run(r#"[TOOL_CALLS]get_weather[ARGS]{"location": Paris}"#, true);
        assert!(reason(&out[0]).contains("malformed JSON arguments"));
        let out = run(r#"[TOOL_CALLS][ARGS]{"a": 1}"#, true);
        assert!(reason(&out[0]).contains("missing tool name"));
        let out = run(r#"[TOOL_CALLS] [{"arguments": {}}]"#, true);
        assert!(reason(&out[0]).contains("no \"name\""));
        let out = run(r#"[TOOL_CALLS][]"#, true);
        assert!(reason(&out[0]).contains("empty list"));
        let out = run("[TOOL_CALLS]get_weather[ARGS]Paris", true);
        assert!(reason(&out[0]).contains("JSON object"));
        let out = run("[TOOL_CALLS]get_weather[CALL_ID][ARGS]{}", true);
        assert!(reason(&out[0]).contains("empty call id"));
    }

    #[test]
    fn marker_then_prose_removes_only_the_marker() {
        let t = "[TOOL_CALLS]Sure, the weather is nice.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..12);
        let t = "[TOOL_CALLS] ¿Qué?";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..12);
    }

    #[test]
    fn plain_text_is_ignored() {
        assert!(run(
            "The [ARGS] token and {\"name\": \"x\"} are just text.",
            true
        )
        .is_empty());
    }

    #[test]
    fn adversarial_input_finishes() {
        for unit in [
            "[TOOL_CALLS]",
            "[TOOL_CALLS]a[ARGS]{",
            "[TOOL_CALLS][",
            "[TOOL_CALLS]a[CALL_ID]",
            "[TOOL_CALLS]a[ARGS]{\"x\":[}]",
            "[TOOL_CALLS]é",
        ] {
            let t = unit.repeat(1_000_000 / unit.len());
            let _ = run(&t, true);
            let _ = run(&t, false);
        }
        let t = format!("[TOOL_CALLS]a[ARGS]{}", "{\"a\":".repeat(200_000));
        let _ = run(&t, true);
    }
}
