//! `json`: a bare call object anywhere in the reply (loose).
//!
//! What it looks like:
//!
//! ````text
//! {"name": "get_weather", "arguments": {"location": "Paris"}}
//! ```json
//! {
//!   "name": "set_light",
//!   "arguments": {"room": "kitchen", "on": true}
//! }
//! ```
//! ````
//!
//! Who emits it: any model told to "answer with a JSON object" (the fail-closed note's
//! `{"tool": …, "arguments": …}`), models whose template wraps calls in tags they forget
//! to write, and Qwen2.5-Coder-0.5B with its own template, which answers with a
//! pretty-printed call in a ```` ```json ```` fence (see `shared/models/README.md`).
//! Shapes accepted are those of [`scan::call_from_object`]: `{"name", "arguments"|"parameters"}`,
//! OpenAI's `{"type":"function","function":{…}}`, `{"tool_name", "parameters"}`,
//! `{"tool", "arguments"}`.
//!
//! Conservative rules, because this runs on prose:
//! - only an object that starts like JSON (`{` then a `"key"`) is looked at, and only at
//!   top level: an object nested inside other JSON (`{"data": {"name": …}}`) is skipped
//!   with its parent, and arrays of objects (`[{…}]`) are left whole to `xlam`;
//! - an object right after another format's opening marker (`<minimax:tool_call>{…}`,
//!   `<function_call>`, `[TOOL_CALLS]`) is that format's payload: its own strict detector
//!   judges it (also when it calls it malformed), so it is skipped here;
//! - the object must pass [`scan::looks_like_call`] (no foreign keys), its name must be an
//!   identifier, and it must carry an arguments key unless it is the entire reply;
//! - a fenced object has its span widened over the fence so the fence markers leave the reply;
//! - an object that opens with a call key (`{"name"`, `{"arguments"`, …) but is not valid
//!   JSON is reported malformed (with the serde error); other broken JSON is ignored;
//! - while streaming, an unfinished object whose first key is (a prefix of) a call key is
//!   pending from its `{`.
//!
//! Edge cases: arguments given as a JSON-encoded string are decoded once; a model-emitted
//! `id` is kept; data objects such as `{"name": "Alice", "age": 3}` are not calls.
//!
//! The helpers marked `pub(crate)` are shared by the other JSON-based detectors of this
//! group (llama32, xlam, phi4, lfm2, tool_request, functionary_v32, llama31_function).

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan::{self, Scan};
use crate::think;

pub struct Json;

impl Detector for Json {
    fn name(&self) -> &str {
        "json"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Loose
    }
    fn triggers(&self) -> &[&str] {
        &["{"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let whole = Whole::of(text);
        let mut last_end = 0;
        let mut i = 0;
        for (s, &c) in text.as_bytes().iter().enumerate() {
            if (c != b'{' && c != b'[') || s < i {
                continue;
            }
            if c == b'[' {
                // A JSON array of objects is the `xlam` detector's; skip it whole.
                i = skip_object_array(text, s).unwrap_or(s + 1);
                continue;
            }
            let head = object_head(text, s);
            if head == Head::NotJson {
                i = s + 1;
                continue;
            }
            if after_wrapper_tag(text, s) {
                // Another format's payload: skip it whole.
                i = match scan::balanced_end(text, s, false) {
                    Scan::Complete(e) => e,
                    Scan::Invalid(at) => at + 1,
                    Scan::Incomplete => break,
                };
                continue;
            }
            match scan::balanced_end(text, s, false) {
                Scan::Complete(e) => {
                    let (a, z) = widen(text, s, e, last_end);
                    match parse_object(&text[s..e]) {
                        Ok(obj) => {
                            if let Some(c) = loose_call(&obj, whole.covers(a, z)) {
                                out.push(Found::call(a..z, c));
                                last_end = z;
                            }
                        }
                        Err(reason) if head == Head::Call => {
                            out.push(Found::malformed(
                                a..z,
                                guess_name(&text[s..e]),
                                format!("malformed JSON call object: {reason}"),
                            ));
                            last_end = z;
                        }
                        Err(_) => {}
                    }
                    i = e;
                }
                Scan::Invalid(at) => {
                    let end = (at + 1).min(text.len());
                    if head == Head::Call {
                        out.push(Found::malformed(
                            s..end,
                            guess_name(&text[s..end]),
                            format!(
                                "malformed JSON call object: mismatched bracket at byte {}",
                                at - s
                            ),
                        ));
                        last_end = end;
                    }
                    i = end.max(s + 1);
                }
                Scan::Incomplete => {
                    if !ctx.eof {
                        if head != Head::Other {
                            out.push(Found::pending(s..text.len()));
                        }
                    } else if head == Head::Call {
                        out.push(Found::malformed(
                            s..text.len(),
                            guess_name(&text[s..]),
                            "malformed JSON call object: unterminated object (the text ends inside it)",
                        ));
                    }
                    break;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Helpers shared by this group's detectors.

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

/// After byte `i`, skip whitespace and any run of the given end tokens (`<|eot_id|>`).
/// Returns the offset after the last token, or `i` if no token follows.
pub(crate) fn skip_end_tokens(text: &str, i: usize, tokens: &[&str]) -> usize {
    let mut end = i;
    let mut j = i;
    loop {
        let k = ws(text, j);
        match tokens
            .iter()
            .find(|t| text.get(k..).is_some_and(|r| r.starts_with(**t)))
        {
            Some(t) => {
                j = k + t.len();
                end = j;
            }
            None => return end,
        }
    }
}

/// True if `rest` is non-empty and a proper prefix of one of `markers`: while streaming,
/// that marker may still be arriving.
pub(crate) fn is_partial_of(rest: &str, markers: &[&str]) -> bool {
    !rest.is_empty()
        && markers
            .iter()
            .any(|m| m.len() > rest.len() && m.starts_with(rest))
}

/// Skip ASCII whitespace from `i` (a plain loop, cheap in debug builds too).
pub(crate) fn ws(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut i = i.min(b.len());
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The first offset in `from..to` whose byte satisfies `pred`. A plain loop on purpose:
/// `memchr` is slow in debug builds when matches are dense (`[[[[…`).
pub(crate) fn find_byte(
    b: &[u8],
    from: usize,
    to: usize,
    pred: impl Fn(u8) -> bool,
) -> Option<usize> {
    b.get(from..to.min(b.len()))?
        .iter()
        .position(|&c| pred(c))
        .map(|p| from + p)
}

/// The first occurrence of a short `needle` at or after `from`: a plain loop on the first
/// byte (fast in debug builds, where `memmem` is slow when matches are dense); the needles
/// here are short markers, so the work stays linear.
pub(crate) fn find_str(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    let mut i = from;
    while let Some(p) = find_byte(h, i, h.len(), |c| c == first) {
        if h.get(p..p + n.len()) == Some(n) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// A memoised forward search for one needle, so that repeated look-ups from increasing
/// offsets cost linear time in total (a miss is remembered, a hit is reused).
pub(crate) struct Finder<'a> {
    needle: &'a str,
    searched_from: Option<usize>,
    hit: Option<usize>,
}

impl<'a> Finder<'a> {
    pub fn new(needle: &'a str) -> Self {
        Finder {
            needle,
            searched_from: None,
            hit: None,
        }
    }

    /// The first occurrence of the needle at or after `from`.
    pub fn next(&mut self, hay: &str, from: usize) -> Option<usize> {
        // Reuse the last answer when it is still right: callers search from increasing
        // offsets, which keeps the total work linear.
        if let Some(done_from) = self.searched_from.filter(|d| *d <= from) {
            match self.hit {
                Some(h) if h >= from => return Some(h),
                None if done_from <= from => return None,
                _ => {}
            }
        }
        self.searched_from = Some(from);
        self.hit = find_str(hay, self.needle, from);
        self.hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect_any, megabyte_of_each};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Json, text, eof)
    }

    #[test]
    fn bare_object_in_prose() {
        let t = r#"Sure. {"name": "get_weather", "arguments": {"location": "Paris"}} One moment."#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            &t[out[0].span.clone()],
            r#"{"name": "get_weather", "arguments": {"location": "Paris"}}"#
        );
        assert_eq!(calls(&out[0])[0].arguments, json!({"location": "Paris"}));
    }

    #[test]
    fn qwen_coder_fenced_pretty_printed() {
        let t = "```json\n{\n  \"name\": \"set_light\",\n  \"arguments\": {\n    \"room\": \"kitchen\",\n    \"on\": true\n  }\n}\n```";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(calls(&out[0])[0].name, "set_light");
    }

    #[test]
    fn nested_and_data_objects_are_not_calls() {
        assert!(run(r#"{"data": {"name": "x", "arguments": {}}}"#, true).is_empty());
        assert!(run(r#"Here: {"name": "Alice", "age": 3}"#, true).is_empty());
        assert!(run(r#"Here: {"name": "Alice"} ok"#, true).is_empty());
        assert!(run("Use {braces} and {} freely.", true).is_empty());
        for t in [
            "<minimax:tool_call>{\"name\": \"get_time\", \"parameters\": {}}</minimax:tool_call>",
            "<seed:tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</seed:tool_call>",
            "[TOOL_CALLS] {\"name\": \"get_time\", \"arguments\": {}}",
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
        assert_eq!(
            run(
                "<think>hm</think>{\"name\": \"get_time\", \"arguments\": {}}",
                true
            )
            .len(),
            1
        );
        assert_eq!(
            run("[1] {\"name\": \"get_time\", \"arguments\": {}}", true).len(),
            1
        );
        assert!(run(r#"{"name": "not a name", "arguments": {}}"#, true).is_empty());
        assert!(run(r#"[{"name": "get_time", "arguments": {}},]"#, true).is_empty());
        assert!(run(r#"[{"name": "get_time", "arguments": {}}]"#, true).is_empty());
        assert_eq!(
            run(r#"[see] {"name": "get_time", "arguments": {}}"#, true).len(),
            1
        );
    }

    #[test]
    fn whole_reply_needs_no_arguments_key() {
        let out = run("{\"name\": \"get_time\"}<|im_end|>", true);
        assert_eq!(calls(&out[0])[0].name, "get_time");
    }

    #[test]
    fn openai_wrapper_and_string_arguments() {
        let t = r#"{"type": "function", "id": "call_7", "function": {"name": "add", "arguments": "{\"x\": 1, \"y\": 2}"}}"#;
        let out = run(t, true);
        let c = &calls(&out[0])[0];
        assert_eq!(c.arguments, json!({"x": 1, "y": 2}));
        assert_eq!(c.id.as_deref(), Some("call_7"));
    }

    #[test]
    fn malformed_call_json_is_reported() {
        let out = run(
            r#"{"name": "get_weather", "arguments": {"location": "Paris",}}"#,
            true,
        );
        match &out[0].kind {
            FoundKind::Malformed { name, reason } => {
                assert_eq!(name.as_deref(), Some("get_weather"));
                assert!(reason.contains("malformed JSON"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let out = run(
            r#"{"name": "get_weather", "arguments": {"location": "Paris"]}"#,
            true,
        );
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn streaming_pending_and_eof() {
        let t = r#"One moment {"name": "get_wea"#;
        let out = run(t, false);
        assert_eq!(out, vec![Found::pending(11..t.len())]);
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
        assert_eq!(run("Hi {", false), vec![Found::pending(3..4)]);
        assert_eq!(run("Hi {\"na", false), vec![Found::pending(3..7)]);
        assert!(run("Hi {\"data\": 1", false).is_empty());
        assert!(run("Hi {", true).is_empty());
    }

    #[test]
    fn two_objects() {
        let t =
            r#"{"name": "get_time", "arguments": {}} and {"name": "get_date", "arguments": {}}"#;
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(out[0].span.end <= out[1].span.start);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "{",
                "{\"",
                "{\"name\": ",
                "{\"a\": [",
                "}{",
                "{\"name\":\"x\",\"arguments\":{}}",
            ],
            run,
        );
    }

    #[test]
    fn finder_is_memoised() {
        let hay = "a.b..c";
        let mut f = Finder::new(".");
        assert_eq!(f.next(hay, 0), Some(1));
        assert_eq!(f.next(hay, 1), Some(1));
        assert_eq!(f.next(hay, 2), Some(3));
        assert_eq!(f.next(hay, 5), None);
        assert_eq!(f.next(hay, 6), None);
        assert_eq!(f.next(hay, 0), Some(1));
    }

    #[test]
    fn end_tokens() {
        let t = "{} <|eot_id|>\n<|eom_id|> x";
        assert_eq!(
            skip_end_tokens(t, 2, &["<|eot_id|>", "<|eom_id|>"]),
            t.len() - 2
        );
        assert_eq!(skip_end_tokens(t, 2, &["<|x|>"]), 2);
        let w = Whole::of("<think>a</think>\n {\"a\":1} <|eot_id|>\n");
        assert_eq!((w.lead, w.tail), (18, 25));
    }
}
