//! `llama32`: Llama 3.1 / 3.2 / 3.3 JSON tool calls, with or without `<|python_tag|>`.
//!
//! What it looks like (Meta's Llama 3.1 and 3.2 prompt-format pages, the vLLM `llama3_json`
//! parser and its tests, SGLang's `Llama32Detector`, llama.cpp's Llama 3.x parser):
//!
//! ```text
//! <|python_tag|>{"name": "get_weather", "parameters": {"location": "Paris"}}<|eom_id|>
//! {"name": "get_weather", "parameters": {"location": "Paris"}}<|eot_id|>
//! {"name": "get_time", "parameters": {}}; {"name": "get_date", "parameters": {}}
//! <|python_tag|>brave_search.call(query="weather in Menlo Park")<|eom_id|>
//! <|python_tag|>import math
//! print(math.sqrt(2))<|eom_id|>
//! ```
//!
//! - The JSON form carries `"parameters"` (Meta's template) or `"arguments"` (vLLM's and
//!   many fine-tunes' prompts); `{"type": "function", "name": …, "parameters": …}` also occurs.
//! - Several calls: objects in a row, separated by `;` (the separator vLLM and SGLang use)
//!   or by whitespace. They form one construct with several calls.
//! - The span includes the `<|python_tag|>` marker and the end tokens that follow the call
//!   (`<|eom_id|>` — "stop and run the tool" —, `<|eot_id|>`, `<|end_of_text|>`).
//! - With the tag the format is strict: anything after it that does not parse is malformed.
//!   Without the tag (bare JSON, what Llama 3.2 1B/3B mostly emit) the found is marked
//!   [`Found::loose`]: only objects with a `"name"` and an arguments key count, at top
//!   level, anywhere in the reply (vLLM also finds them after leading prose), not inside
//!   arrays (`xlam`'s) nor right after another format's opening marker; broken bare JSON
//!   is left to the `json` detector.
//! - Built-in tools (Llama 3.1 `Environment: ipython` + `Tools: brave_search, wolfram_alpha`):
//!   the model writes Python-call syntax after the tag, `NAME.call(key=value, …)`. Decision:
//!   this is one call named `NAME` (`brave_search`, `wolfram_alpha`, …) whose keyword
//!   arguments are parsed as Python literals (double- or single-quoted strings, numbers,
//!   True/False/None, lists, dicts); it only runs if a tool of that name is registered.
//! - Code interpreter: any other text after the tag is Python source for Meta's built-in
//!   `code_interpreter`. Decision: it becomes a call named `code_interpreter` with
//!   arguments `{"code": <source>}` (the source runs up to the next special token, normally
//!   `<|eom_id|>`, or the end of the output); validation rejects it unless such a tool is
//!   registered, and the code never reaches speech. A tag followed directly by another
//!   special token is malformed (empty).
//! - A list after the tag (`<|python_tag|>[{…}]` or `<|python_tag|>[f(x=1)]`, seen from
//!   fine-tunes) is read as a JSON call list or a pythonic call list.
//! - Streaming: a tagged construct is pending until its end token (more `;`-separated
//!   calls may follow); a bare call at the very end is pending for the same reason.

use serde_json::{json, Value};

use super::shared::end_tokens::{skip_end_tokens, LLAMA_END_TOKENS};
use super::shared::json_finder::{find_byte, is_partial_of, ws, Finder};
use super::shared::json_object::{
    after_wrapper_tag, guess_name, loose_call, object_head, parse_object, skip_object_array, Head,
};
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::pyliteral;
use crate::scan::{self, Scan};

pub struct Llama32;

const TAG: &str = "<|python_tag|>";

impl Detector for Llama32 {
    fn name(&self) -> &str {
        "llama32"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[TAG, "{"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let b = text.as_bytes();
        let mut tags = Finder::new(TAG);
        let mut specials = Finder::new("<|");
        let mut cursor = 0;
        let mut bare_done = false;
        loop {
            let next_tag = tags.next(text, cursor);
            let limit = next_tag.unwrap_or(text.len());
            let brace = if bare_done {
                None
            } else {
                find_byte(b, cursor, limit, |c| c == b'{' || c == b'[')
            };
            if let Some(s) = brace {
                if b[s] == b'[' {
                    // Arrays of objects are the `xlam` detector's.
                    cursor = skip_object_array(text, s).unwrap_or(s + 1);
                    continue;
                }
                match bare_at(text, s, ctx.eof) {
                    Bare::Skip(next) => cursor = next,
                    Bare::Found(f) => {
                        cursor = f.span.end;
                        out.push(f);
                    }
                    Bare::Pending => {
                        out.push(Found::pending(s..text.len()).loose());
                        return;
                    }
                    Bare::Stop => {
                        bare_done = true;
                        cursor = s + 1;
                    }
                }
                continue;
            }
            let Some(t) = next_tag else { return };
            let f = tagged_at(text, t, ctx.eof, &mut specials);
            let end = f.span.end;
            let pending = matches!(f.kind, crate::detector::FoundKind::Pending);
            out.push(f);
            if pending || end >= text.len() {
                return;
            }
            cursor = end.max(t + TAG.len());
        }
    }
}

enum Bare {
    /// Nothing here; continue scanning at this offset.
    Skip(usize),
    Found(Found),
    Pending,
    /// The rest of the text is inside an unterminated value: no more bare objects.
    Stop,
}

/// A bare Llama call object: `"name"` (or the OpenAI `function` wrapper), an arguments
/// key, an identifier for a name, no foreign keys.
fn bare_call(text: &str, s: usize, e: usize) -> Option<Candidate> {
    let obj = parse_object(&text[s..e]).ok()?;
    if !(obj.contains_key("name") || obj.contains_key("function")) {
        return None;
    }
    loose_call(&obj, false)
}

fn bare_at(text: &str, s: usize, eof: bool) -> Bare {
    let head = object_head(text, s);
    if head == Head::NotJson {
        return Bare::Skip(s + 1);
    }
    let wrapped = after_wrapper_tag(text, s);
    let e = match scan::balanced_end(text, s, false) {
        Scan::Complete(e) if wrapped => return Bare::Skip(e),
        Scan::Complete(e) => e,
        Scan::Incomplete if wrapped => return Bare::Stop,
        Scan::Invalid(at) => return Bare::Skip((at + 1).max(s + 1)),
        Scan::Incomplete => {
            return if !eof && head != Head::Other {
                Bare::Pending
            } else {
                Bare::Stop
            };
        }
    };
    let Some(first) = bare_call(text, s, e) else {
        // Data, or not a Llama call: skip it whole, so nested objects stay unseen.
        return Bare::Skip(e);
    };
    let mut calls = vec![first];
    let mut end = e;
    while let Some(next) = next_in_run(text, end) {
        match scan::balanced_end(text, next, false) {
            Scan::Complete(e2) => match bare_call(text, next, e2) {
                Some(c) => {
                    calls.push(c);
                    end = e2;
                }
                None => break,
            },
            _ => break,
        }
    }
    if !eof && run_may_continue(text, end) {
        return Bare::Pending;
    }
    let stop = skip_end_tokens(text, end, LLAMA_END_TOKENS);
    Bare::Found(Found::calls(s..stop, calls).loose())
}

/// After a call object ending at `end`: the offset of the next object of the same run
/// (`;` and/or whitespace between), if a `{` follows.
fn next_in_run(text: &str, end: usize) -> Option<usize> {
    let mut k = ws(text, end);
    if text.as_bytes().get(k) == Some(&b';') {
        k = ws(text, k + 1);
    }
    (text.as_bytes().get(k) == Some(&b'{')).then_some(k)
}

/// While streaming: true if nothing but whitespace or a `;` follows, so another call of
/// the run may still come.
fn run_may_continue(text: &str, end: usize) -> bool {
    let rest = text.get(end..).unwrap_or("").trim_start();
    let rest = rest.strip_prefix(';').unwrap_or(rest).trim_start();
    rest.is_empty() || is_partial_of(rest, LLAMA_END_TOKENS)
}

fn tagged_at(text: &str, t: usize, eof: bool, specials: &mut Finder) -> Found {
    let b = text.as_bytes();
    let body = t + TAG.len();
    let j = ws(text, body);
    match b.get(j) {
        None => {
            if eof {
                Found::malformed(t..text.len(), None, "empty <|python_tag|> call")
            } else {
                Found::pending(t..text.len())
            }
        }
        Some(b'{') => tagged_json_run(text, t, j, eof),
        Some(b'[') => tagged_list(text, t, j, eof),
        Some(_) => {
            if let Some(f) = builtin_call(text, t, j, eof) {
                return f;
            }
            code_interpreter(text, t, j, eof, specials)
        }
    }
}

/// `<|python_tag|>{…}; {…}<|eom_id|>`
fn tagged_json_run(text: &str, t: usize, j: usize, eof: bool) -> Found {
    let mut calls = Vec::new();
    let mut k = j;
    let end;
    loop {
        match scan::balanced_end(text, k, false) {
            Scan::Complete(e) => {
                let parsed = parse_object(&text[k..e])
                    .map_err(|r| format!("malformed JSON after <|python_tag|>: {r}"))
                    .and_then(|o| scan::call_from_object(&o));
                match parsed {
                    Ok(c) => calls.push(c),
                    Err(reason) => {
                        let stop = skip_end_tokens(text, e, LLAMA_END_TOKENS);
                        return Found::malformed(t..stop, guess_name(&text[k..e]), reason);
                    }
                }
                match next_in_run(text, e) {
                    Some(n) => k = n,
                    None => {
                        end = e;
                        break;
                    }
                }
            }
            Scan::Incomplete => {
                return if eof {
                    Found::malformed(
                        t..text.len(),
                        guess_name(&text[k..]),
                        "malformed JSON after <|python_tag|>: unterminated object (the text ends inside it)",
                    )
                } else {
                    Found::pending(t..text.len())
                };
            }
            Scan::Invalid(at) => {
                let stop = (at + 1).min(text.len());
                return Found::malformed(
                    t..stop,
                    guess_name(&text[k..stop]),
                    format!(
                        "malformed JSON after <|python_tag|>: mismatched bracket at byte {}",
                        at - k
                    ),
                );
            }
        }
    }
    finish_tagged(text, t, end, eof, calls)
}

/// End a tagged construct at `end`: include a trailing `;` and the end tokens; while
/// streaming without an end token yet, it is still pending.
fn finish_tagged(text: &str, t: usize, end: usize, eof: bool, calls: Vec<Candidate>) -> Found {
    let stop = skip_end_tokens(text, end, LLAMA_END_TOKENS);
    if stop == end {
        if !eof && run_may_continue(text, end) {
            return Found::pending(t..text.len());
        }
        let k = ws(text, end);
        if text.as_bytes().get(k) == Some(&b';') && run_may_continue(text, k + 1) {
            return Found::calls(t..k + 1, calls);
        }
    }
    Found::calls(t..stop, calls)
}

/// `<|python_tag|>[{…}, …]` or `<|python_tag|>[f(a=1), …]`
fn tagged_list(text: &str, t: usize, j: usize, eof: bool) -> Found {
    let json_like = text.as_bytes().get(ws(text, j + 1)) == Some(&b'{');
    match scan::balanced_end(text, j, !json_like) {
        Scan::Complete(e) => {
            let inner = &text[j..e];
            let parsed = if json_like {
                scan::parse_calls_json(inner)
            } else {
                pyliteral::parse_call_list(inner)
                    .map(|cs| {
                        cs.into_iter()
                            .map(|c| Candidate::new(c.name, Value::Object(c.arguments)))
                            .collect()
                    })
                    .map_err(|r| format!("malformed call list after <|python_tag|>: {r}"))
            };
            match parsed {
                Ok(calls) => finish_tagged(text, t, e, eof, calls),
                Err(reason) => {
                    Found::malformed(t..skip_end_tokens(text, e, LLAMA_END_TOKENS), None, reason)
                }
            }
        }
        Scan::Incomplete if !eof => Found::pending(t..text.len()),
        Scan::Incomplete => Found::malformed(
            t..text.len(),
            None,
            "malformed call list after <|python_tag|>: unterminated list (the text ends inside it)",
        ),
        Scan::Invalid(at) => Found::malformed(
            t..(at + 1).min(text.len()),
            None,
            format!(
                "malformed call list after <|python_tag|>: mismatched bracket at byte {}",
                at - j
            ),
        ),
    }
}

/// `<|python_tag|>brave_search.call(query="…")`: a Llama 3.1 built-in tool call.
/// Returns `None` when the text after the tag does not start with `NAME.call(`.
fn builtin_call(text: &str, t: usize, j: usize, eof: bool) -> Option<Found> {
    let b = text.as_bytes();
    let mut k = j;
    while b
        .get(k)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        k += 1;
    }
    let name = &text[j..k];
    if !scan::is_ident(name) {
        return None;
    }
    let k = ws(text, k);
    let rest = text.get(k..)?.strip_prefix('.')?;
    let rest = rest.trim_start().strip_prefix("call")?;
    let paren = text.len() - rest.trim_start().len();
    if b.get(paren) != Some(&b'(') {
        return None;
    }
    Some(match scan::balanced_end(text, paren, true) {
        Scan::Complete(e) => {
            // Parse `f(<args>)` with the Python-literal parser (the name is checked above).
            let src = format!("f{}", &text[paren..e]);
            match pyliteral::parse_call(&src) {
                Ok(c) => finish_tagged(
                    text,
                    t,
                    e,
                    eof,
                    vec![Candidate::new(name, Value::Object(c.arguments))],
                ),
                Err(reason) => Found::malformed(
                    t..skip_end_tokens(text, e, LLAMA_END_TOKENS),
                    Some(name.to_string()),
                    format!("malformed built-in tool call {name}.call(…): {reason}"),
                ),
            }
        }
        Scan::Incomplete if !eof => Found::pending(t..text.len()),
        Scan::Incomplete => Found::malformed(
            t..text.len(),
            Some(name.to_string()),
            format!("malformed built-in tool call {name}.call(…): unterminated call (the text ends inside it)"),
        ),
        Scan::Invalid(at) => Found::malformed(
            t..(at + 1).min(text.len()),
            Some(name.to_string()),
            format!("malformed built-in tool call {name}.call(…): mismatched bracket"),
        ),
    })
}

/// `<|python_tag|>` followed by Python source: the built-in code interpreter.
fn code_interpreter(text: &str, t: usize, j: usize, eof: bool, specials: &mut Finder) -> Found {
    // The source ends at the next special token (`<|eom_id|>` normally; Python source
    // never holds one), or at the end of the output.
    let code_end = match specials.next(text, j) {
        Some(p) => p,
        None if !eof => return Found::pending(t..text.len()),
        None => text.len(),
    };
    let code = text[j..code_end].trim_end();
    let span_end = skip_end_tokens(text, code_end, LLAMA_END_TOKENS).max(code_end);
    if code.is_empty() {
        return Found::malformed(
            t..span_end.max(t + TAG.len()),
            None,
            "empty <|python_tag|> call: no JSON, built-in call or code follows the tag",
        );
    }
    Found::call(
        t..span_end,
        Candidate::new("code_interpreter", json!({ "code": code })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect_any, megabyte_of_each, names};

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&Llama32, text, eof)
    }

    fn args(f: &Found, i: usize) -> Value {
        calls(f)[i].arguments.clone()
    }

    #[test]
    fn tagged_json_with_end_token() {
        let t = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}<|eom_id|>";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].span, 0..t.len());
        assert!(!out[0].loose);
        assert_eq!(args(&out[0], 0), json!({"location": "Paris"}));
    }

    #[test]
    fn bare_json_is_loose() {
        let t = "{\"name\": \"get_time\", \"parameters\": {}}<|eot_id|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert!(out[0].loose);
        assert_eq!(names(&out[0]), ["get_time"]);
    }

    #[test]
    fn semicolon_separated_run_is_one_construct() {
        let t = "Here: {\"name\": \"get_time\", \"parameters\": {}}; {\"name\": \"get_date\", \"arguments\": {}} ; {\"name\": \"add\", \"parameters\": {\"x\": 1, \"y\": 2}} done";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(names(&out[0]), ["get_time", "get_date", "add"]);
        assert!(t[out[0].span.end..].starts_with(" done"));
        let t = "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {}};\n{\"name\": \"get_date\", \"parameters\": {}};";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(names(&out[0]), ["get_time", "get_date"]);
    }

    #[test]
    fn builtin_tools() {
        let t = "<|python_tag|>brave_search.call(query=\"weather in Menlo Park\")<|eom_id|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(names(&out[0]), ["brave_search"]);
        assert_eq!(args(&out[0], 0), json!({"query": "weather in Menlo Park"}));
        let t = "<|python_tag|> wolfram_alpha.call(query='x^2', n=3)";
        assert_eq!(args(&run(t, true)[0], 0), json!({"query": "x^2", "n": 3}));
        let t = "<|python_tag|>brave_search.call(\"x\")<|eom_id|>";
        assert!(matches!(run(t, true)[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn code_interpreter_source() {
        let t = "<|python_tag|>import sys\nprint(sys.version)<|eom_id|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(names(&out[0]), ["code_interpreter"]);
        assert_eq!(
            args(&out[0], 0),
            json!({"code": "import sys\nprint(sys.version)"})
        );
        assert_eq!(
            run("<|python_tag|>print(1)", false),
            vec![Found::pending(0..22)]
        );
        let out = run("<|python_tag|><|python_tag|><|channel|>x", false);
        assert_eq!(out.len(), 2);
        assert!(out
            .iter()
            .all(|f| matches!(f.kind, FoundKind::Malformed { .. })));
        assert_eq!(out[1].span, 14..28);
    }

    #[test]
    fn tagged_lists() {
        let out = run("<|python_tag|>[get_time(), add(x=1, y=2)]<|eot_id|>", true);
        assert_eq!(names(&out[0]), ["get_time", "add"]);
        let out = run(
            "<|python_tag|>[{\"name\": \"get_time\", \"arguments\": {}}]",
            true,
        );
        assert_eq!(names(&out[0]), ["get_time"]);
    }

    #[test]
    fn malformed_after_tag() {
        let out = run(
            "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {]}<|eom_id|>",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("mismatched"))
        );
        let out = run(
            "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {,}}",
            true,
        );
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), .. } if n == "get_time")
        );
        let out = run("<|python_tag|>{\"nom\": \"x\"}", true);
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { reason, .. } if reason.contains("no \"name\""))
        );
        let out = run("<|python_tag|>", true);
        assert!(matches!(out[0].kind, FoundKind::Malformed { .. }));
    }

    #[test]
    fn streaming() {
        let t = "<|python_tag|>{\"name\": \"get_time\", \"param";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let t = "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {}}";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert_eq!(names(&run(t, true)[0]), ["get_time"]);
        let t = "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {}}<|eom_id|>";
        assert_eq!(names(&run(t, false)[0]), ["get_time"]);
        let t = "Let me check. {\"name\": \"get_ti";
        let out = run(t, false);
        assert_eq!(out, vec![Found::pending(14..t.len()).loose()]);
        assert!(run("<|python_tag|>", false)[0].kind == FoundKind::Pending);
    }

    #[test]
    fn prose_and_data_are_not_calls() {
        assert!(run("I like {curly} braces.", true).is_empty());
        assert!(run("{\"name\": \"Alice\", \"age\": 30}", true).is_empty());
        assert!(run("{\"name\": \"get_time\"}", true).is_empty());
        assert!(run(
            "{\"result\": {\"name\": \"get_time\", \"parameters\": {}}}",
            true
        )
        .is_empty());
    }

    #[test]
    fn bare_then_tagged() {
        let t = "{\"name\": \"get_time\", \"parameters\": {}} then <|python_tag|>{\"name\": \"get_date\", \"parameters\": {}}";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(out[0].loose && !out[1].loose);
        assert!(out[0].span.end <= out[1].span.start);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "{",
                "<|python_tag|>",
                "<|python_tag|>{",
                "<|python_tag|>x",
                "<|python_tag|>a.call(",
                "{\"name\":\"x\",\"parameters\":{}};",
                "<|python_tag|>[",
            ],
            run,
        );
    }
}
