//! `minimax_m2`: MiniMax-M2 `<minimax:tool_call>` blocks of `<invoke>` elements.
//!
//! MiniMax-M2 (and M2.1/M2.5) emit, after an optional `<think>` block:
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="location">San Francisco, CA</parameter>
//! <parameter name="unit">celsius</parameter>
//! </invoke>
//! <invoke name="get_time">
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! One block holds every parallel call. Values are raw text (objects and arrays as JSON),
//! one newline stripped on each side, typed by the tool's JSON Schema. Names may be quoted
//! with `"` or `'`. Newlines between elements are optional (some deployments emit the whole
//! block on one line). Edge cases: a value may contain `</parameter>` as text (a closer only
//! counts when followed by `<parameter` or `</invoke>`); an `<invoke>` with no parameters is a
//! call with `{}`; a missing `</minimax:tool_call>` after complete invokes is accepted; a
//! block holding anything but invokes, a duplicate parameter or a missing closer is
//! `Malformed`; an unfinished block is `Pending` while streaming.
//!
//! The `<invoke>` grammar is shared with `claude_xml` ([`InvokeParser`]).

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::hermes::{prefix_of, NextWhere};
use super::qwen3_coder::{
    detect_blocks, element_body, element_run, wrapped_run, Fail, Step, MAX_NAME,
};

pub struct MinimaxM2;

const OPEN: &str = "<minimax:tool_call>";
const CLOSE: &str = "</minimax:tool_call>";
pub(crate) const INVOKE_OPEN: &str = "<invoke";
pub(crate) const INVOKE_CLOSE: &str = "</invoke>";
const PARAM_OPEN: &str = "<parameter";
const PARAM_CLOSE: &str = "</parameter>";

impl Detector for MinimaxM2 {
    fn name(&self) -> &str {
        "minimax_m2"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = InvokeParser::new(text);
        detect_blocks(text, ctx, out, OPEN, CLOSE, |start| {
            p.wrapped(ctx, start, OPEN, CLOSE).not_ours_malformed(
                || format!("{OPEN} does not hold <invoke name=…> elements"),
                start + OPEN.len(),
            )
        });
    }
}

/// A `</parameter>` closes its value when followed (after whitespace) by another
/// `<parameter`, by `</invoke>`, or by the end of the text so far.
fn structural_param_close(text: &str, c: usize) -> bool {
    let k = scan::skip_ws(text, c + PARAM_CLOSE.len());
    let rest = &text[k..];
    rest.is_empty()
        || [PARAM_OPEN, INVOKE_CLOSE]
            .iter()
            .any(|m| rest.starts_with(m) || prefix_of(rest, m))
}

/// Parses `<invoke name="…">` elements; keeps the memo of structural `</parameter>`
/// positions so a whole text is scanned in linear time.
pub(crate) struct InvokeParser<'a> {
    text: &'a str,
    param_close: NextWhere<'a, fn(&str, usize) -> bool>,
}

impl<'a> InvokeParser<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        InvokeParser {
            text,
            param_close: NextWhere::new(text, PARAM_CLOSE, structural_param_close),
        }
    }

    /// One `<invoke name="X">…</invoke>` at `s`. `bare`: not inside a wrapper, so anything
    /// not clearly this format is `NotOurs`.
    pub(crate) fn invoke(&mut self, ctx: &DetectCtx<'_>, s: usize, bare: bool) -> Step<Candidate> {
        let text = self.text;
        let (name, body) = match name_attr(text, s + INVOKE_OPEN.len()) {
            Attr::Name(n, e) => (n, e),
            Attr::SelfClosing(n, e) => {
                return Step::Done(Candidate::new(n, Value::Object(Map::new())), e)
            }
            Attr::Incomplete => {
                return Step::Incomplete(None, "the output ended inside an <invoke> tag".into())
            }
            Attr::Bad(_) if bare => return Step::NotOurs,
            Attr::Bad(at) => {
                return Step::Malformed {
                    name: None,
                    reason: "invalid <invoke> tag: expected <invoke name=\"…\">".into(),
                    at,
                }
            }
        };
        let tag = format!("<invoke name=\"{name}\">");
        element_body(
            text,
            name,
            scan::skip_ws(text, body),
            &tag,
            INVOKE_CLOSE,
            PARAM_OPEN,
            "<parameter name=…>",
            bare,
            |k, args| self.parameter(ctx, name, k, args),
        )
    }

    fn parameter(
        &mut self,
        ctx: &DetectCtx<'_>,
        fname: &str,
        k: usize,
        args: &mut Map<String, Value>,
    ) -> Result<usize, Fail> {
        let text = self.text;
        let malformed = Fail::Malformed;
        let (key, v) = match name_attr(text, k + PARAM_OPEN.len()) {
            Attr::Name(n, e) => (n, e),
            Attr::Incomplete => return Err(Fail::Incomplete(format!("<invoke name=\"{fname}\"> is not closed"))),
            Attr::Bad(at) | Attr::SelfClosing(_, at) => {
                return Err(malformed(
                    format!("invalid <parameter> tag in <invoke name=\"{fname}\">: expected <parameter name=\"…\">"),
                    at,
                ))
            }
        };
        let Some(c) = self.param_close.find(v) else {
            return Err(Fail::Incomplete(format!(
                "<parameter name=\"{key}\"> in <invoke name=\"{fname}\"> has no closing </parameter>"
            )));
        };
        let raw = &text[v..c];
        if raw.contains("<parameter name=") || runs_past_invoke(raw) {
            return Err(malformed(
                format!("<parameter name=\"{key}\"> in <invoke name=\"{fname}\"> is missing its </parameter>"),
                v,
            ));
        }
        if args.contains_key(key) {
            return Err(malformed(
                format!("parameter {key} given twice in <invoke name=\"{fname}\">"),
                c,
            ));
        }
        args.insert(key.to_string(), scan::typed_param(ctx, fname, key, raw));
        Ok(c + PARAM_CLOSE.len())
    }

    /// One or more invokes from `k`, separated by whitespace; ends after the last `</invoke>`.
    pub(crate) fn invokes(&mut self, ctx: &DetectCtx<'_>, k: usize) -> Step<Vec<Candidate>> {
        let text = self.text;
        element_run(text, k, INVOKE_OPEN, "invalid <invoke> element", |k| {
            self.invoke(ctx, k, false)
        })
    }

    /// `OPEN ws <invoke…>… ws CLOSE` at `start` (see [`wrapped_run`]). Content that is not
    /// invokes is `NotOurs`.
    pub(crate) fn wrapped(
        &mut self,
        ctx: &DetectCtx<'_>,
        start: usize,
        open: &str,
        close: &str,
    ) -> Step<Vec<Candidate>> {
        let text = self.text;
        wrapped_run(text, ctx, start, open, close, INVOKE_OPEN, |k| {
            self.invokes(ctx, k)
        })
    }
}

/// Result of reading ` name="X">` after `<TAG`.
pub(crate) enum Attr<'a> {
    /// The name and the offset just after `>`.
    Name(&'a str, usize),
    /// `<TAG name="X"/>`: the name and the offset just after `/>`.
    SelfClosing(&'a str, usize),
    Incomplete,
    Bad(usize),
}

/// Read ` name="X">` (or ` name="X"/>`) (also `'X'` or a bare `X`) from `i`.
pub(crate) fn name_attr(text: &str, i: usize) -> Attr<'_> {
    let b = text.as_bytes();
    if i >= b.len() {
        return Attr::Incomplete;
    }
    if !b[i].is_ascii_whitespace() {
        return Attr::Bad(i);
    }
    let k = scan::skip_ws(text, i);
    let rest = &text[k..];
    if !rest.starts_with("name") {
        return if prefix_of(rest, "name=") {
            Attr::Incomplete
        } else {
            Attr::Bad(k)
        };
    }
    let k = k + 4;
    let k = scan::skip_ws(text, k);
    match b.get(k) {
        None => return Attr::Incomplete,
        Some(b'=') => {}
        Some(_) => return Attr::Bad(k),
    }
    let k = scan::skip_ws(text, k + 1);
    let (ns, ne, after_name) = match b.get(k) {
        None => return Attr::Incomplete,
        Some(&q @ (b'"' | b'\'')) => {
            let mut j = k + 1;
            loop {
                match b.get(j) {
                    None => return Attr::Incomplete,
                    Some(&c) if c == q => break,
                    Some(b'<' | b'>' | b'\n') => return Attr::Bad(j),
                    Some(_) if j - k > MAX_NAME => return Attr::Bad(j),
                    Some(_) => j += 1,
                }
            }
            (k + 1, j, j + 1)
        }
        Some(_) => {
            let mut j = k;
            while b
                .get(j)
                .is_some_and(|c| !c.is_ascii_whitespace() && !matches!(c, b'>' | b'<' | b'/'))
            {
                if j - k > MAX_NAME {
                    return Attr::Bad(j);
                }
                j += 1;
            }
            (k, j, j)
        }
    };
    let k = scan::skip_ws(text, after_name);
    let name = text[ns..ne].trim();
    match (b.get(k), b.get(k + 1)) {
        (None, _) | (Some(b'/'), None) => Attr::Incomplete,
        _ if name.is_empty() => Attr::Bad(ns),
        (Some(b'>'), _) => Attr::Name(name, k + 1),
        (Some(b'/'), Some(b'>')) => Attr::SelfClosing(name, k + 2),
        _ => Attr::Bad(k),
    }
}

/// A value holding `</invoke>` followed by the next invoke or the end of the block swallowed
/// the rest of the call: its `</parameter>` is missing.
fn runs_past_invoke(raw: &str) -> bool {
    scan::find_all(raw, INVOKE_CLOSE).any(|at| {
        let k = scan::skip_ws(raw, at + INVOKE_CLOSE.len());
        let rest = &raw[k..];
        [INVOKE_OPEN, CLOSE, "</function_calls>"]
            .iter()
            .any(|m| rest.starts_with(m))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(
            &MinimaxM2,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"todowrite","parameters":{"type":"object","properties":{
                "todos":{"type":"array"},"force":{"type":"boolean"},"note":{"type":"string"}}}}}]"#,
            ),
        )
    }

    #[test]
    fn parallel_invokes_typed() {
        let t = "<think>plan</think>\nOn it.\n<minimax:tool_call>\n<invoke name=\"todowrite\">\n<parameter name=\"todos\">[{\"content\": \"a\"}]</parameter>\n<parameter name=\"force\">true</parameter>\n</invoke>\n<invoke name='get_time'>\n</invoke>\n</minimax:tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.start, t.find("<minimax:tool_call>").unwrap());
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(
            c[0].arguments,
            json!({"todos": [{"content": "a"}], "force": true})
        );
        assert_eq!(c[1].name, "get_time");
        assert_eq!(c[1].arguments, json!({}));
    }

    #[test]
    fn one_line_and_literal_closer() {
        let t = "<minimax:tool_call><invoke name=\"todowrite\"><parameter name=\"note\">a</parameter>b</parameter></invoke></minimax:tool_call>";
        assert_eq!(
            calls(&run(t, true)[0])[0].arguments,
            json!({"note": "a</parameter>b"})
        );
    }

    #[test]
    fn malformed_and_streaming() {
        let t = "<minimax:tool_call>\n<tool_name>x</tool_name>\n</minimax:tool_call>";
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
        let t = "<minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"k\">1</parameter>\n<parameter name=\"k\">2</parameter>\n</invoke>\n</minimax:tool_call>";
        assert!(
            matches!(&run(t, true)[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("twice"))
        );
        let t = "x <minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"k\">1";
        assert_eq!(run(t, false), vec![Found::pending(2..t.len())]);
        assert!(matches!(&run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<minimax:tool_call><invoke name=\"a\"><parameter name=\"b\">".repeat(30_000),
            true,
        );
        let _ = run(&"<minimax:tool_call><invoke name=\"".repeat(50_000), false);
        let _ = run(
            &format!(
                "<minimax:tool_call><invoke name=\"a\">{}",
                "<parameter name=\"b\"></parameter>x".repeat(50_000)
            ),
            true,
        );
    }
}
