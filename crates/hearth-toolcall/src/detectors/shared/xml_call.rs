//! The skeleton shared by the XML-element call formats: the outcome of parsing one
//! construct ([`Step`], [`Fail`]), reporting it ([`settle`], [`Settled`]), the scanning loop
//! over `open … close` blocks ([`detect_blocks`]), the parameter body of one element
//! ([`element_body`]), a run of elements ([`element_run`]) and a wrapper around such a run
//! ([`wrapped_run`]).
//!
//! Used by `qwen3_coder`, `seed_oss`, `minimax_m2`, `claude_xml`, `glm45`, `generic_xml` and
//! `use_tag` ([`settle`]), and by the element grammars [`super::xml_function`] and
//! [`super::xml_invoke`].

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Found};
use crate::scan;

use super::markers::{prefix_of, preview};
use super::memo_find::Next;

/// Longest function or parameter name we follow.
pub(crate) const MAX_NAME: usize = 256;

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
                preview(rest)
            ),
            at: k,
        };
    }
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
