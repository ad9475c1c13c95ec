//! The `<invoke name="…">` / `<parameter name="…">` element grammar (Anthropic-style XML
//! function calls, MiniMax-M2): [`InvokeParser`] reads invokes and their parameters (a
//! `</parameter>` closes a value only where it is structural) and wrapper blocks holding
//! them; [`name_attr`] reads a ` name="X">` attribute.
//!
//! Used by `minimax_m2` (inside `<minimax:tool_call>`), `claude_xml` (inside
//! `<function_calls>`, or bare) and `generic_xml` ([`name_attr`]).

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx};
use crate::scan;

use super::markers::prefix_of;
use super::memo_find::NextWhere;
use super::xml_call::{element_body, element_run, wrapped_run, Fail, Step, MAX_NAME};

pub(crate) const INVOKE_OPEN: &str = "<invoke";
pub(crate) const INVOKE_CLOSE: &str = "</invoke>";
const PARAM_OPEN: &str = "<parameter";
const PARAM_CLOSE: &str = "</parameter>";

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
        // the next invoke, or the closer of `minimax_m2`'s or `claude_xml`'s wrapper
        [INVOKE_OPEN, "</minimax:tool_call>", "</function_calls>"]
            .iter()
            .any(|m| rest.starts_with(m))
    })
}
