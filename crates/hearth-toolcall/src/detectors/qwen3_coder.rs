//! `qwen3_coder`: `<function=NAME>` / `<parameter=KEY>` XML tool calls.
//!
//! Emitted by Qwen3-Coder, Qwen3.5 and NVIDIA Nemotron 3 (their templates render calls this
//! way), one call per `<tool_call>` block:
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=location>
//! Paris
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! Values are raw text, one newline stripped on each side, typed by the tool's JSON Schema
//! (`scan::typed_param`): a string stays verbatim (multi-line code included), numbers,
//! booleans, objects and arrays are parsed. Edge cases:
//! - the opening `<tool_call>` is sometimes missing: a bare `<function=NAME>` block whose
//!   body is `<parameter=…>` blocks (or empty) still counts, and a stray `</tool_call>`
//!   right after it belongs to the span;
//! - several calls (several blocks, or several functions in one block); a block whose
//!   `</tool_call>` is missing after a complete `</function>` is accepted;
//! - a value may contain `</parameter>` or `</function>` as text: a `</parameter>` only
//!   closes the value when the next thing after it is `<parameter=`, `</function>` or a
//!   closing wrapper tag;
//! - a missing `</parameter>` (the value runs into the next `<parameter=`), a duplicate
//!   parameter, an invalid name or stray text are `Malformed`; nothing is repaired. A
//!   function cut by the end of output is `Malformed` (parameters may be lost).
//!
//! The `<function=…>` grammar is shared with `seed_oss` ([`FnParser`], [`parse_wrapped`]).

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::hermes::{prefix_of, Next, NextWhere, CLOSE, OPEN};

pub struct Qwen3Coder;

pub(crate) const FUNC_OPEN: &str = "<function=";
pub(crate) const FUNC_CLOSE: &str = "</function>";
pub(crate) const PARAM_OPEN: &str = "<parameter=";
pub(crate) const PARAM_CLOSE: &str = "</parameter>";
/// Closing wrapper tags that may follow a structural `</parameter>` or `</function>`.
const WRAPPER_CLOSES: [&str; 2] = [CLOSE, "</seed:tool_call>"];
/// Longest function or parameter name we follow.
pub(crate) const MAX_NAME: usize = 256;

impl Detector for Qwen3Coder {
    fn name(&self) -> &str {
        "qwen3_coder"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[FUNC_OPEN, OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut p = FnParser::new(text);
        let mut tc_opens = Next::new(text, OPEN);
        let mut tc_closes = Next::new(text, CLOSE);
        let mut fn_opens = Next::new(text, FUNC_OPEN);
        let mut fn_closes = Next::new(text, FUNC_CLOSE);
        let mut pos = 0;
        loop {
            let t = tc_opens.find(pos);
            let f = fn_opens.find(pos);
            let (start, wrapped) = match (t, f) {
                (Some(t), Some(f)) if t < f => (t, true),
                (Some(t), None) => (t, true),
                (_, Some(f)) => (f, false),
                (None, None) => return,
            };
            let next = if wrapped {
                let step = parse_wrapped(&mut p, ctx, start, OPEN, CLOSE);
                settle(out, ctx, text.len(), start, step, |at| {
                    tc_closes.find(at).map(|c| c + CLOSE.len())
                })
                .resume(start + OPEN.len())
            } else {
                let step = p.function(ctx, start, true).and_then(|c, e| {
                    match after_stray_close(text, e) {
                        Some(end) => Step::Done(vec![c], end),
                        None if ctx.eof => Step::Done(vec![c], e),
                        None => Step::Incomplete(Some(c.name), "a closing tag may follow".into()),
                    }
                });
                settle(out, ctx, text.len(), start, step, |at| {
                    fn_closes.find(at).map(|c| {
                        let e = c + FUNC_CLOSE.len();
                        after_stray_close(text, e).unwrap_or(e)
                    })
                })
                .resume(start + FUNC_OPEN.len())
            };
            match next {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

/// Extend `e` over whitespace and a `</tool_call>` the model wrote without its opener.
/// `None`: the text ends in a cut `</tool_call>`, so the end is not known yet.
fn after_stray_close(text: &str, e: usize) -> Option<usize> {
    let k = scan::skip_ws(text, e);
    let rest = &text[k..];
    if rest.starts_with(CLOSE) {
        Some(k + CLOSE.len())
    } else if !rest.is_empty() && prefix_of(rest, CLOSE) {
        None
    } else {
        Some(e)
    }
}

/// The outcome of parsing one construct that starts at a known position.
#[derive(Debug)]
pub(crate) enum Step<T> {
    /// Parsed; the construct ends just before this byte offset.
    Done(T, usize),
    /// The text ended inside the construct; the reason says what is missing (used at end of
    /// output, where an unfinished construct is malformed), with the call's name if known.
    Incomplete(Option<String>, String),
    /// Markup of the format that does not parse; the problem was found at byte `at`.
    Malformed {
        name: Option<String>,
        reason: String,
        at: usize,
    },
    /// Not this format at all (prose, another format's markup).
    NotOurs,
}

impl<T> Step<T> {
    /// Continue a `Done` with `f(value, end)`; every other outcome is passed on as it is.
    pub(crate) fn and_then<U>(self, f: impl FnOnce(T, usize) -> Step<U>) -> Step<U> {
        match self {
            Step::Done(v, e) => f(v, e),
            Step::Incomplete(n, r) => Step::Incomplete(n, r),
            Step::Malformed { name, reason, at } => Step::Malformed { name, reason, at },
            Step::NotOurs => Step::NotOurs,
        }
    }

    /// Inside a wrapper that only ever holds this format, content that is `NotOurs` is
    /// malformed instead: `reason()` at `at`, with no call name.
    pub(crate) fn not_ours_malformed(self, reason: impl FnOnce() -> String, at: usize) -> Self {
        match self {
            Step::NotOurs => Step::Malformed {
                name: None,
                reason: reason(),
                at,
            },
            other => other,
        }
    }
}

/// Why a part of a call (one parameter) did not parse: kept small, turned into a [`Step`]
/// by the caller.
#[derive(Debug)]
pub(crate) enum Fail {
    Incomplete(String),
    Malformed(String, usize),
}

impl Fail {
    pub(crate) fn into_step<T>(self, name: &str) -> Step<T> {
        match self {
            Fail::Incomplete(r) => Step::Incomplete(Some(name.to_string()), r),
            Fail::Malformed(reason, at) => Step::Malformed {
                name: Some(name.to_string()),
                reason,
                at,
            },
        }
    }
}

pub(crate) enum Settled {
    /// Continue scanning at this byte offset.
    Next(usize),
    /// Nothing was pushed: continue after the opening marker.
    NotOurs,
    /// The rest of the text belongs to a construct: stop scanning.
    Stop,
}

impl Settled {
    /// Where scanning continues: after the construct, at `not_ours` (just after the opening
    /// marker) when nothing was pushed, or `None` when scanning stops.
    pub(crate) fn resume(self, not_ours: usize) -> Option<usize> {
        match self {
            Settled::Next(n) => Some(n),
            Settled::NotOurs => Some(not_ours),
            Settled::Stop => None,
        }
    }
}

/// The scanning loop of a format whose constructs all open with `open` and, when malformed,
/// end after the next `close`: `parse(start)` reads the construct at each `open`, [`settle`]
/// reports it, and scanning continues after it (after `open` when it is not ours).
pub(crate) fn detect_blocks(
    text: &str,
    ctx: &DetectCtx<'_>,
    out: &mut Vec<Found>,
    open: &str,
    close: &str,
    mut parse: impl FnMut(usize) -> Step<Vec<Candidate>>,
) {
    let mut opens = Next::new(text, open);
    let mut closes = Next::new(text, close);
    let mut pos = 0;
    while let Some(start) = opens.find(pos) {
        let step = parse(start);
        let next = settle(out, ctx, text.len(), start, step, |at| {
            closes.find(at).map(|c| c + close.len())
        });
        match next.resume(start + open.len()) {
            Some(n) => pos = n,
            None => return,
        }
    }
}

/// Push the found for `step` (started at `start`) and say where scanning continues.
/// `malformed_end(at)` finds where a malformed construct ends (after its closing tag), if it
/// does; otherwise it runs to the end of text. An incomplete construct is `Pending` while
/// streaming and malformed at end of output.
pub(crate) fn settle(
    out: &mut Vec<Found>,
    ctx: &DetectCtx<'_>,
    text_len: usize,
    start: usize,
    step: Step<Vec<Candidate>>,
    malformed_end: impl FnOnce(usize) -> Option<usize>,
) -> Settled {
    let (name, reason, at) = match step {
        Step::Done(calls, end) => {
            out.push(Found::calls(start..end, calls));
            return Settled::Next(end);
        }
        Step::NotOurs => return Settled::NotOurs,
        Step::Incomplete(..) if !ctx.eof => {
            out.push(Found::pending(start..text_len));
            return Settled::Stop;
        }
        Step::Incomplete(name, reason) => (name, reason, start),
        Step::Malformed { name, reason, at } => (name, reason, at),
    };
    match malformed_end(at) {
        Some(end) if end > start && end <= text_len => {
            out.push(Found::malformed(start..end, name, reason));
            Settled::Next(end)
        }
        _ => {
            out.push(Found::malformed(start..text_len, name, reason));
            Settled::Stop
        }
    }
}

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

/// The body of the element `tag` (for `name`), from `k`: `PARAM…` parameters, each read by
/// `param(k, args)` (returning the offset after it), up to `close`, with whitespace between.
/// `param_hint` names a parameter tag in the error for stray text. `bare`: no wrapper around
/// the element, so stray text before any parameter is `NotOurs`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn element_body(
    text: &str,
    name: &str,
    k: usize,
    tag: &str,
    close: &str,
    param_open: &str,
    param_hint: &str,
    bare: bool,
    mut param: impl FnMut(usize, &mut Map<String, Value>) -> Result<usize, Fail>,
) -> Step<Candidate> {
    let mut args = Map::new();
    let mut k = k;
    loop {
        let rest = &text[k..];
        if rest.starts_with(close) {
            let call = Candidate::new(name, Value::Object(args));
            return Step::Done(call, k + close.len());
        }
        if rest.starts_with(param_open) {
            match param(k, &mut args) {
                Ok(next) => {
                    k = scan::skip_ws(text, next);
                    continue;
                }
                Err(fail) => return fail.into_step(name),
            }
        }
        if rest.is_empty() || prefix_of(rest, close) || prefix_of(rest, param_open) {
            return Step::Incomplete(
                Some(name.to_string()),
                format!("{tag} is not closed by {close}"),
            );
        }
        if bare && args.is_empty() {
            return Step::NotOurs;
        }
        return Step::Malformed {
            name: Some(name.to_string()),
            reason: format!(
                "unexpected text {:?} in {tag}: expected {param_hint} or {close}",
                super::hermes::preview(rest)
            ),
            at: k,
        };
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

/// One or more elements from `k` (which starts with `elem_open`), separated by whitespace;
/// ends after the last one. `element(k)` parses one element inside a wrapper, where it is
/// never `NotOurs`; should it be, the run is malformed with `not_ours` at that element.
pub(crate) fn element_run(
    text: &str,
    k: usize,
    elem_open: &str,
    not_ours: &str,
    mut element: impl FnMut(usize) -> Step<Candidate>,
) -> Step<Vec<Candidate>> {
    let mut calls = Vec::new();
    let mut k = k;
    loop {
        match element(k) {
            Step::Done(c, e) => {
                calls.push(c);
                let n = scan::skip_ws(text, e);
                if text[n..].starts_with(elem_open) {
                    k = n;
                } else {
                    return Step::Done(calls, e);
                }
            }
            Step::Incomplete(n, r) => return Step::Incomplete(n, r),
            Step::Malformed { name, reason, at } => return Step::Malformed { name, reason, at },
            Step::NotOurs => {
                return Step::Malformed {
                    name: None,
                    reason: not_ours.into(),
                    at: k,
                }
            }
        }
    }
}

/// `open ws ELEMENT… ws close` at `start`, where every element starts with `elem_open` and
/// `run(k)` reads them all from `k` (see [`element_run`]). Content that does not start with
/// `elem_open` is `NotOurs`. A missing closing tag after complete elements is accepted (at
/// end of output only if nothing follows); the span then ends after the last element.
pub(crate) fn wrapped_run(
    text: &str,
    ctx: &DetectCtx<'_>,
    start: usize,
    open: &str,
    close: &str,
    elem_open: &str,
    run: impl FnOnce(usize) -> Step<Vec<Candidate>>,
) -> Step<Vec<Candidate>> {
    let k = scan::skip_ws(text, start + open.len());
    let rest = &text[k..];
    if !rest.starts_with(elem_open) {
        return if !ctx.eof && (rest.is_empty() || prefix_of(rest, elem_open)) {
            Step::Incomplete(None, format!("{open} is empty"))
        } else {
            Step::NotOurs
        };
    }
    run(k).and_then(|calls, e| {
        let n = scan::skip_ws(text, e);
        let rest = &text[n..];
        if rest.starts_with(close) {
            Step::Done(calls, n + close.len())
        } else if !ctx.eof && (rest.is_empty() || prefix_of(rest, close)) {
            Step::Incomplete(None, format!("{open} is not closed"))
        } else {
            Step::Done(calls, e)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{calls, detect, reason, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let tools = tools(
            r#"[{"type":"function","function":{"name":"set_light","parameters":{"type":"object","properties":{
                "room":{"type":"string"},"on":{"type":"boolean"},"brightness":{"type":"integer"}}}}},
               {"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{
                "path":{"type":"string"},"content":{"type":"string"}}}}}]"#,
        );
        let out = detect(&Qwen3Coder, text, eof, &tools);
        for f in &out {
            assert!(f.span.start <= f.span.end);
        }
        out
    }

    #[test]
    fn typed_single_call() {
        let t = "Turning it on.\n<tool_call>\n<function=set_light>\n<parameter=room>\nkitchen\n</parameter>\n<parameter=on>\ntrue\n</parameter>\n<parameter=brightness>\n80\n</parameter>\n</function>\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span.start, t.find("<tool_call>").unwrap());
        assert_eq!(out[0].span.end, t.len());
        let c = calls(&out[0]);
        assert_eq!(c[0].name, "set_light");
        assert_eq!(
            c[0].arguments,
            json!({"room": "kitchen", "on": true, "brightness": 80})
        );
    }

    #[test]
    fn bare_function_and_stray_close() {
        let t = "<function=set_light>\n<parameter=room>\nhall\n</parameter>\n</function>\n</tool_call> done";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], " done");
        assert_eq!(calls(&out[0])[0].arguments, json!({"room": "hall"}));
        // a Llama-style JSON body is not ours
        assert!(run("<function=get_time>{}</function>", true).is_empty());
    }

    #[test]
    fn multiline_value_with_literal_closers() {
        let t = "<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n<parameter=content>\n<x></parameter></x>\nline2\n</parameter>\n</function>\n</tool_call>";
        let c = calls(&run(t, true)[0]);
        assert_eq!(
            c[0].arguments["content"],
            json!("<x></parameter></x>\nline2")
        );
    }

    #[test]
    fn several_calls() {
        let t = "<tool_call>\n<function=a>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>\n<function=c>\n</function>\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[1]).len(), 2);
        assert_eq!(calls(&out[1])[0].arguments, json!({"x": 1}));
    }

    #[test]
    fn malformed_cases() {
        let t = "<tool_call>\n<function=set_light>\n<parameter=room>\nhall\n<parameter=on>\ntrue\n</parameter>\n</function>\n</tool_call>after";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("missing its </parameter>"));
        assert_eq!(&t[out[0].span.end..], "after");
        let t = "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n<parameter=x>\n2\n</parameter>\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("given twice"));
        let t = "<tool_call>\n<function={{ name }}>\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("invalid function name"));
        let t = "<tool_call>\n<function=a>\nhello\n</function>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("unexpected text"));
    }

    #[test]
    fn unclosed_and_streaming() {
        let t = "<tool_call>\n<function=set_light>\n<parameter=room>\nhall\n</parameter>\n";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let out = run(t, true);
        assert!(reason(&out[0]).contains("not closed"));
        // complete function, wrapper closer missing
        let t = "<tool_call>\n<function=get_time>\n</function>";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
        let t = "<tool_call>\n<function=get_time>\n</function>\nDone.";
        assert_eq!(run(t, false).len(), 1);
        assert_eq!(calls(&run(t, false)[0])[0].name, "get_time");
        for t in ["<tool_call>\n", "<tool_call>\n<func", "x <function=get_ti"] {
            assert_eq!(run(t, false).len(), 1, "{t}");
        }
        assert!(run("<tool_call>\n", true).is_empty());
        assert!(run("<tool_call>{\"name\": \"a\"}</tool_call>", true).is_empty());
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<tool_call>\n<function=a>\n<parameter=b>\n".repeat(40_000),
            true,
        );
        let _ = run(
            &"<function=a><parameter=b></parameter>".repeat(40_000),
            true,
        );
        let _ = run(&"</parameter>\n".repeat(100_000), true);
        let _ = run(
            &format!(
                "<function=a>\n<parameter=b>\n{}",
                "</parameter>x".repeat(80_000)
            ),
            true,
        );
        let _ = run(&"<function=".repeat(100_000), false);
        let _ = run(&format!("<function={}", "a".repeat(1_000_000)), true);
    }
}
