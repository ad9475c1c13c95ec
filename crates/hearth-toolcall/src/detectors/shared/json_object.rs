//! Bare JSON call objects in prose: how an object opens ([`Head`], [`object_head`]), whether
//! it sits after another format's opening marker ([`after_wrapper_tag`]), skipping arrays of
//! objects ([`skip_object_array`]), parsing and judging an object ([`parse_object`],
//! [`loose_call`]), the name in broken JSON ([`guess_name`]), widening a span over a fence
//! that holds exactly it ([`widen`]) and the extent of the entire reply ([`Whole`]).
//!
//! Used by `json`, `llama32`, `xlam`, `tool_request` and `pythonic`; [`guess_name`] also by
//! `phi4`, `functionary_v32` and `llama31_function`.

use serde_json::{Map, Value};

use crate::detector::Candidate;
use crate::scan::{self, Scan};
use crate::think;

use super::json_finder::ws;

/// Keys whose appearance first in an object marks it as meant to be a call.
const CALL_HEAD_KEYS: &[&str] = &[
    "name",
    "tool_name",
    "tool",
    "function",
    "arguments",
    "parameters",
];

/// Further keys a call object may open with (`{"type": "function", …}`, ids): enough to hold
/// an unfinished object back while streaming, not enough to call broken JSON a call.
const CALL_OTHER_KEYS: &[&str] = &["type", "id", "call_id", "tool_call_id", "args"];

/// How the `{` at some offset opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Head {
    /// `{` then a quoted call key (`"name"`, `"arguments"`, …).
    Call,
    /// `{` then a quoted key that is not a call key: JSON, but data.
    Other,
    /// The text ends before the first key is complete, and what is there could still be
    /// a call key (or `{"type"`/id keys): only meaningful while streaming.
    Partial,
    /// Not the start of a JSON object (`{ prose }`, `{}`, `{{`).
    NotJson,
}

/// Chat-template tokens that open or close a message rather than wrap a call: an object
/// after one is not another format's payload. Qwen2.5-Coder-0.5B, deep in a conversation,
/// writes `<|im_start|>` where `<tool_call>` belongs.
const TURN_TOKENS: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|endoftext|>",
];

/// True if the value at `s` sits right after another format's opening marker: an opening
/// tag (`<minimax:tool_call>`, `<function_call>`, `<|tool_call|>`; not a closing tag such
/// as `</think>`) or an upper-case bracket marker (`[TOOL_CALLS]`). That payload belongs to
/// the marker's own (strict) detector, which judges it, also when it is malformed: a loose
/// detector must not turn it into a call.
pub(crate) fn after_wrapper_tag(text: &str, s: usize) -> bool {
    let before = text
        .get(..s)
        .unwrap_or("")
        .trim_end_matches([' ', '\t', '\r', '\n']);
    let b = before.as_bytes();
    let window = |open: u8| {
        let from = b.len().saturating_sub(64);
        b.get(from..)
            .and_then(|w| w.iter().rposition(|&c| c == open))
            .map(|p| from + p)
    };
    match b.last() {
        Some(b'>') => match window(b'<') {
            Some(lt) => {
                let tag = &b[lt..];
                tag.get(1) != Some(&b'/')
                    && !tag.contains(&b'\n')
                    && !TURN_TOKENS.iter().any(|t| t.as_bytes() == tag)
            }
            None => false,
        },
        Some(b']') => match window(b'[') {
            Some(lb) => {
                let inner = &b[lb + 1..b.len() - 1];
                inner.iter().any(|c| c.is_ascii_uppercase())
                    && inner
                        .iter()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
            }
            None => false,
        },
        _ => false,
    }
}

/// If a JSON array of objects (`[` then `{`) starts at `s`: the offset after it (or after
/// the point where it broke, or the end of the text when it is unfinished). Bare-object
/// detectors skip such arrays whole: objects inside them are not at top level.
pub(crate) fn skip_object_array(text: &str, s: usize) -> Option<usize> {
    let j = ws(text, s + 1);
    if text.as_bytes().get(j) != Some(&b'{') || object_head(text, j) == Head::NotJson {
        return None;
    }
    Some(match scan::balanced_end(text, s, false) {
        Scan::Complete(e) => e,
        Scan::Invalid(at) => at + 1,
        Scan::Incomplete => text.len(),
    })
}

/// Classify the `{` at byte `s` by its first key.
pub(crate) fn object_head(text: &str, s: usize) -> Head {
    let b = text.as_bytes();
    let mut i = s + 1;
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    match b.get(i) {
        None => return Head::Partial,
        Some(b'"') => {}
        Some(_) => return Head::NotJson,
    }
    i += 1;
    let key_start = i;
    while let Some(&c) = b.get(i) {
        if c == b'"' || i - key_start > 24 {
            break;
        }
        i += 1;
    }
    let key = &b[key_start..i.min(b.len())];
    let all = CALL_HEAD_KEYS.iter().chain(CALL_OTHER_KEYS);
    match b.get(i) {
        None => {
            if all.clone().any(|k| k.as_bytes().starts_with(key)) {
                Head::Partial
            } else {
                Head::Other
            }
        }
        Some(b'"') => {
            if CALL_HEAD_KEYS.iter().any(|k| k.as_bytes() == key) {
                Head::Call
            } else if CALL_OTHER_KEYS.iter().any(|k| k.as_bytes() == key) {
                // `{"type": "function", "function": {…}}`: a call shape, but too weak an
                // opening to report broken JSON as a broken call.
                Head::Partial
            } else {
                Head::Other
            }
        }
        Some(_) => Head::Other,
    }
}

/// Parse a complete JSON object; the error is serde's message.
pub(crate) fn parse_object(s: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(s) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "expected an object, got {}",
            scan::type_name(&other)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// True if the object (or its OpenAI `function` wrapper) has an arguments key.
pub(crate) fn has_args_key(obj: &Map<String, Value>) -> bool {
    let direct = ["arguments", "parameters", "args"]
        .iter()
        .any(|k| obj.contains_key(*k));
    direct || matches!(obj.get("function"), Some(Value::Object(f)) if has_args_key(f))
}

/// The candidate in a bare object, if it is conservatively a call: the shape of a call
/// ([`scan::looks_like_call`]), an identifier for a name, and an arguments key unless the
/// object is the entire reply (`whole`).
pub(crate) fn loose_call(obj: &Map<String, Value>, whole: bool) -> Option<Candidate> {
    if !scan::looks_like_call(obj) || !(whole || has_args_key(obj)) {
        return None;
    }
    let c = scan::call_from_object(obj).ok()?;
    scan::is_ident(&c.name).then_some(c)
}

/// The value of a `"name"` key near the start of broken JSON, for rejected-call reports.
pub(crate) fn guess_name(s: &str) -> Option<String> {
    let window = &s.as_bytes()[..s.len().min(512)];
    let at = memchr::memmem::find(window, b"\"name\"")?;
    let mut i = at + 6;
    let b = s.as_bytes();
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let len = b.get(start..)?.iter().take(129).position(|&c| c == b'"')?;
    let name = s.get(start..start + len)?;
    scan::is_ident(name).then(|| name.to_string())
}

/// Widen `s..e` over a markdown fence that holds exactly it, unless that would reach back
/// before `floor` (the end of the previous found).
pub(crate) fn widen(text: &str, s: usize, e: usize, floor: usize) -> (usize, usize) {
    // Cheap bounded pre-check, so that many finds on one long line stay linear.
    let after = text.get(e..).unwrap_or("");
    let after = after.trim_start_matches([' ', '\t', '\r', '\n']);
    if !after.starts_with("```") {
        return (s, e);
    }
    let before = text.get(..s).unwrap_or("");
    let before = before.trim_end_matches([' ', '\t', '\r', '\n']);
    let window_start = before.len().saturating_sub(48);
    let has_opener = before
        .as_bytes()
        .get(window_start..)
        .is_some_and(|w| memchr::memmem::rfind(w, b"```").is_some());
    if !has_opener {
        return (s, e);
    }
    let (a, z) = scan::widen_over_fence(text, s, e);
    if a < floor {
        (s, e)
    } else {
        (a, z)
    }
}

/// The extent of "the entire reply": from the first non-space byte after the last think
/// close tag (`</think>`, `[/THINK]`, … every tag of [`think::known_tags`] that can end a
/// block the output began in) to the end, ignoring trailing whitespace and special tokens
/// (`<|eot_id|>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Whole {
    pub lead: usize,
    pub tail: usize,
}

/// Reverse finders for every think close tag that can end a block the output began in,
/// built once.
fn closers() -> &'static [memchr::memmem::FinderRev<'static>] {
    static C: std::sync::OnceLock<Vec<memchr::memmem::FinderRev<'static>>> =
        std::sync::OnceLock::new();
    C.get_or_init(|| {
        think::known_tags()
            .into_iter()
            .filter(|t| t.forced_open)
            .map(|t| memchr::memmem::FinderRev::new(t.close.as_bytes()).into_owned())
            .collect()
    })
}

impl Whole {
    pub fn of(text: &str) -> Self {
        let after_think = closers()
            .iter()
            .filter_map(|f| f.rfind(text.as_bytes()).map(|p| p + f.needle().len()))
            .max()
            .unwrap_or(0);
        let lead = scan::skip_ws(text, after_think);
        let mut t = text.trim_end();
        while let Some(rest) = t.strip_suffix("|>") {
            match rest.rfind("<|") {
                Some(p) if rest.len() - p < 40 && !rest[p..].contains(char::is_whitespace) => {
                    t = rest[..p].trim_end();
                }
                _ => break,
            }
        }
        Whole {
            lead,
            tail: t.len().max(lead),
        }
    }

    /// True if `a..z` spans the entire reply.
    pub fn covers(&self, a: usize, z: usize) -> bool {
        a <= self.lead && z >= self.tail
    }
}
