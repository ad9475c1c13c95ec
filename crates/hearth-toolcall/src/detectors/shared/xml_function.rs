//! The `<function=NAME>` / `<parameter=KEY>` element grammar of Qwen3-Coder: [`FnParser`]
//! reads functions and their parameters (a `</parameter>` closes a value only where it is
//! structural) and [`parse_wrapped`] a wrapper block holding functions.
//!
//! Used by `qwen3_coder` (inside `<tool_call>`, or bare) and `seed_oss` (inside
//! `<seed:tool_call>`).

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx};
use crate::scan;

use super::markers::prefix_of;
use super::memo_find::NextWhere;
use super::tagged_blocks::{CLOSE, OPEN};
use super::xml_call::{element_body, element_run, wrapped_run, Fail, Step, MAX_NAME};

pub(crate) const FUNC_OPEN: &str = "<function=";
pub(crate) const FUNC_CLOSE: &str = "</function>";
pub(crate) const PARAM_OPEN: &str = "<parameter=";
pub(crate) const PARAM_CLOSE: &str = "</parameter>";
/// Closing wrapper tags that may follow a structural `</parameter>` or `</function>`.
const WRAPPER_CLOSES: [&str; 2] = [CLOSE, "</seed:tool_call>"];

/// Parses `<function=NAME>…</function>` blocks; keeps the memo of structural
/// `</parameter>` positions so a whole text is scanned in linear time.
pub(crate) struct FnParser<'a> {
    text: &'a str,
    param_close: NextWhere<'a, fn(&str, usize) -> bool>,
}

/// A `</parameter>` at `c` closes its value when what follows (after whitespace) is another
/// parameter, the end of the function or of the wrapper, or the end of the text so far.
fn structural_param_close(text: &str, c: usize) -> bool {
    let k = scan::skip_ws(text, c + PARAM_CLOSE.len());
    let rest = &text[k..];
    rest.is_empty()
        || [PARAM_OPEN, FUNC_CLOSE]
            .iter()
            .chain(WRAPPER_CLOSES.iter())
            .any(|m| rest.starts_with(m) || prefix_of(rest, m))
}

/// Scan a tag name from `i` up to `>`. `Ok(Some(end))`: the name is `text[i..end]` and
/// `text[end]` is `>`. `Ok(None)`: the text ended first. `Err(at)`: a character that no
/// name contains (`<`, a newline, quotes, braces…) or an over-long name.
pub(crate) fn tag_name_end(
    text: &str,
    i: usize,
    allow_space: bool,
) -> Result<Option<usize>, usize> {
    let b = text.as_bytes();
    let mut j = i;
    loop {
        match b.get(j) {
            None => return Ok(None),
            Some(b'>') => return Ok(Some(j)),
            Some(c)
                if matches!(c, b'<' | b'{' | b'}' | b'"' | b'\'' | b'=' | b'\n' | b'\r')
                    || (!allow_space && c.is_ascii_whitespace()) =>
            {
                return Err(j)
            }
            Some(_) => {
                if j - i >= MAX_NAME {
                    return Err(j);
                }
                j += 1;
            }
        }
    }
}

impl<'a> FnParser<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        FnParser {
            text,
            param_close: NextWhere::new(text, PARAM_CLOSE, structural_param_close),
        }
    }

    /// One or more functions from `k` (which starts with `<function=`), separated by
    /// whitespace. Ends after the last `</function>`.
    pub(crate) fn functions(&mut self, ctx: &DetectCtx<'_>, k: usize) -> Step<Vec<Candidate>> {
        let text = self.text;
        element_run(text, k, FUNC_OPEN, "invalid <function=…> tag", |k| {
            self.function(ctx, k, false)
        })
    }

    /// One `<function=NAME>…</function>` at `f`. `bare`: no wrapper around it, so anything
    /// that is not clearly this format is `NotOurs` rather than malformed.
    pub(crate) fn function(
        &mut self,
        ctx: &DetectCtx<'_>,
        f: usize,
        bare: bool,
    ) -> Step<Candidate> {
        let text = self.text;
        let i = f + FUNC_OPEN.len();
        let j = match tag_name_end(text, i, false) {
            Ok(Some(j)) if j > i => j,
            Ok(None) => {
                return Step::Incomplete(None, "the output ended inside a <function=…> tag".into())
            }
            _ if bare => return Step::NotOurs,
            Ok(Some(j)) | Err(j) => {
                return Step::Malformed {
                    name: None,
                    reason: "invalid function name in <function=…> tag".into(),
                    at: j,
                }
            }
        };
        let name = &text[i..j];
        let tag = format!("<function={name}>");
        element_body(
            text,
            name,
            scan::skip_ws(text, j + 1),
            &tag,
            FUNC_CLOSE,
            PARAM_OPEN,
            "<parameter=…>",
            bare,
            |k, args| self.parameter(ctx, name, k, args),
        )
    }

    /// One `<parameter=KEY>VALUE</parameter>` at `k`; returns the offset after it.
    fn parameter(
        &mut self,
        ctx: &DetectCtx<'_>,
        fname: &str,
        k: usize,
        args: &mut Map<String, Value>,
    ) -> Result<usize, Fail> {
        let text = self.text;
        let malformed = Fail::Malformed;
        let ni = k + PARAM_OPEN.len();
        let j = match tag_name_end(text, ni, true) {
            Ok(Some(j)) if !text[ni..j].trim().is_empty() => j,
            Ok(None) => {
                return Err(Fail::Incomplete(format!(
                    "<function={fname}> is not closed"
                )))
            }
            Ok(Some(j)) | Err(j) => {
                return Err(malformed(
                    format!("invalid <parameter=…> tag in <function={fname}>"),
                    j,
                ))
            }
        };
        let key = text[ni..j].trim();
        let v = j + 1;
        let Some(c) = self.param_close.find(v) else {
            return Err(Fail::Incomplete(format!(
                "<parameter={key}> in <function={fname}> has no closing </parameter>"
            )));
        };
        let raw = &text[v..c];
        if let Some(problem) = value_runs_on(raw) {
            return Err(malformed(
                format!("<parameter={key}> in <function={fname}> is missing its </parameter> ({problem})"),
                v,
            ));
        }
        if args.contains_key(key) {
            return Err(malformed(
                format!("parameter {key} given twice in <function={fname}>"),
                c,
            ));
        }
        args.insert(key.to_string(), scan::typed_param(ctx, fname, key, raw));
        Ok(c + PARAM_CLOSE.len())
    }
}

/// A value that holds the start of another parameter on its own line, or a `</function>`
/// followed by the end of the call, swallowed the rest of the call: its `</parameter>` is
/// missing.
fn value_runs_on(raw: &str) -> Option<&'static str> {
    if raw.starts_with(PARAM_OPEN) || raw.contains("\n<parameter=") {
        return Some("the value runs into the next <parameter=…>");
    }
    for at in scan::find_all(raw, FUNC_CLOSE) {
        let k = scan::skip_ws(raw, at + FUNC_CLOSE.len());
        let rest = &raw[k..];
        if WRAPPER_CLOSES.iter().any(|m| rest.starts_with(m))
            || rest.starts_with(OPEN)
            || rest.starts_with(FUNC_OPEN)
        {
            return Some("the value runs past </function>");
        }
    }
    None
}

/// `OPEN ws <function=…>… ws CLOSE` at `start`: the wrapper shared by `<tool_call>` and
/// `<seed:tool_call>`. See [`wrapped_run`].
pub(crate) fn parse_wrapped(
    p: &mut FnParser<'_>,
    ctx: &DetectCtx<'_>,
    start: usize,
    open: &str,
    close: &str,
) -> Step<Vec<Candidate>> {
    let text = p.text;
    wrapped_run(text, ctx, start, open, close, FUNC_OPEN, |k| {
        p.functions(ctx, k)
    })
}
