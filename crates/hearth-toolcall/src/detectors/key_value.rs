//! `key_value`: the `✦ tool_call:` line from LLxprt Code's text tool-call parser, its
//! arguments written as `key value` pairs (models imitating a Gemini CLI transcript, where
//! `✦` opens every model reply).
//!
//! What it looks like:
//!
//! ```text
//! ✦ tool_call: list_directory for path /home/user ignore *.log
//! ✦ tool_call: search for query "climate change" limit 5
//! ✦ tool_call: get_time
//! ```
//!
//! - The marker is `✦` (U+2726), optional spaces, `tool_call:`; then the tool name
//!   (`[A-Za-z0-9_.-]+`), then `for` and the pairs. The construct runs to the end of its line,
//!   the next `✦` or the end of the text; all of it (trailing spaces aside) is the span. A
//!   name with nothing after it on the line is a call without arguments.
//! - A key is one word and must be a property of the tool's JSON Schema. A value is one
//!   whitespace-free token or a quoted string (`"…"` or `'…'`, quotes removed, no escapes),
//!   typed by the property's schema like the XML formats' values (`scan::typed_value`: `5`
//!   is a number for an integer property and stays `"5"` for a string one).
//! - `Malformed` (removed from the reply, reported, nothing runs): no tool name; anything
//!   but `for` after it; `for` with no pairs; an unknown tool or key (the reason names it);
//!   a key without a value (an odd number of tokens); an unterminated quote or text glued
//!   to a closing quote; a key given twice. Nothing is guessed: a value with spaces must be
//!   quoted. With `ToolSet::unrestricted` (no tools given) keys cannot be checked: any key
//!   is taken, its value typed without a schema.
//! - Not this format: a `✦` not followed by `tool_call:` (a transcript's reply bullet).
//! - While streaming, a construct whose line has not ended, or a `✦` at the end that may
//!   still become the marker, is `Pending` from the `✦`.
//!
//! Strict: `✦ tool_call:` is written by nothing but this format.

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::shared::markers::{prefix_of, preview};
use super::shared::memo_find::Finder;
use super::shared::plain_args::{name_end, quoted_at, Quoted};

pub struct KeyValue;

const MARK: &str = "\u{2726}";
const TAG: &str = "tool_call:";

impl Detector for KeyValue {
    fn name(&self) -> &str {
        "key_value"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // the bare `✦`: while streaming, a `✦` at the end may still become the marker
        &[MARK]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut marks = Finder::new(text, MARK);
        let mut pos = 0;
        while let Some(m) = marks.next(pos) {
            match line_at(text, ctx, m) {
                Line::NotOurs => pos = m + MARK.len(),
                Line::Pending => {
                    out.push(Found::pending(m..text.len()));
                    return;
                }
                Line::Found(f) => {
                    pos = f.span.end;
                    out.push(f);
                }
            }
        }
    }
}

enum Line {
    NotOurs,
    Pending,
    Found(Found),
}

/// The construct at the `✦` at `m`.
fn line_at(text: &str, ctx: &DetectCtx<'_>, m: usize) -> Line {
    let k = skip_spaces(text, m + MARK.len());
    let rest = &text[k..];
    if !rest.starts_with(TAG) {
        return if !ctx.eof && prefix_of(rest, TAG) {
            Line::Pending
        } else {
            Line::NotOurs
        };
    }
    let body = k + TAG.len();
    let end = line_end(text, body);
    if end == text.len() && !ctx.eof {
        return Line::Pending;
    }
    let span = m..m + text[m..end].trim_end().len();
    Line::Found(match parse_line(&text[..end], ctx, body) {
        Ok(call) => Found::call(span, call),
        Err((name, reason)) => Found::malformed(span, name, reason),
    })
}

/// Where the construct whose body starts at `i` ends: the next newline or `✦`, or the end.
/// Only this construct's own bytes are searched, which keeps a whole scan linear.
fn line_end(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let lead = MARK.as_bytes()[0];
    let mut k = i;
    while let Some(p) = memchr::memchr2(b'\n', lead, &b[k..]) {
        let at = k + p;
        if b[at] == b'\n' || b[at..].starts_with(MARK.as_bytes()) {
            return at;
        }
        k = at + 1;
    }
    text.len()
}

fn skip_spaces(text: &str, i: usize) -> usize {
    i + text[i..].len() - text[i..].trim_start_matches([' ', '\t']).len()
}

type Bad = (Option<String>, String);

/// The call on `line` (which ends where the construct does) after `tool_call:` at `i`.
fn parse_line(line: &str, ctx: &DetectCtx<'_>, i: usize) -> Result<Candidate, Bad> {
    let ns = skip_spaces(line, i);
    let ne = name_end(line, ns);
    let name = &line[ns..ne];
    if name.is_empty() {
        return Err((
            None,
            format!(
                "\u{2726} tool_call: expected a tool name, got {:?}",
                preview(&line[ns..])
            ),
        ));
    }
    let bad = |reason: String| Err((Some(name.to_string()), reason));
    let open = ctx.tools.is_unrestricted();
    if !open && ctx.tools.spec(name).is_none() {
        return bad(format!(
            "unknown tool {name:?} in \u{2726} tool_call: (it has no schema to read its keys by)"
        ));
    }
    let mut words = Words { line, at: ne };
    let mut args = Map::new();
    match words.next() {
        Ok(None) => return Ok(Candidate::new(name, Value::Object(args))),
        Ok(Some(Word::Bare("for"))) => {}
        Ok(Some(_)) => {
            return bad(format!(
                "expected `for` after \u{2726} tool_call: {name}, got {:?}",
                preview(line[ne..].trim_start())
            ))
        }
        Err(reason) => return bad(reason),
    }
    loop {
        let key = match words.next() {
            Ok(None) if args.is_empty() => {
                return bad(format!("`for` with no arguments after {name}"))
            }
            Ok(None) => return Ok(Candidate::new(name, Value::Object(args))),
            Ok(Some(Word::Bare(k))) => k,
            Ok(Some(Word::Quoted(k))) => {
                return bad(format!("quoted key {k:?}: keys are bare words"))
            }
            Err(reason) => return bad(reason),
        };
        let schema = ctx.param_schema(name, key);
        if !open && schema.is_none() {
            return bad(format!("unknown key {key:?}: not a parameter of {name}"));
        }
        let raw = match words.next() {
            Ok(Some(Word::Bare(v))) => v.to_string(),
            Ok(Some(Word::Quoted(v))) => v,
            Ok(None) => return bad(format!("key {key} has no value")),
            Err(reason) => return bad(reason),
        };
        if args.contains_key(key) {
            return bad(format!("key {key} given twice"));
        }
        args.insert(key.to_string(), scan::typed_value(&raw, schema));
    }
}

/// One whitespace-separated word of the pairs.
#[derive(Debug, PartialEq)]
enum Word<'a> {
    Bare(&'a str),
    Quoted(String),
}

/// The words of one line, read from `at` on.
struct Words<'a> {
    line: &'a str,
    at: usize,
}

impl<'a> Words<'a> {
    /// The next word, `None` at the end of the line, or why the quoting is broken.
    fn next(&mut self) -> Result<Option<Word<'a>>, String> {
        let line = self.line;
        let s = scan::skip_ws(line, self.at);
        let b = line.as_bytes();
        match b.get(s) {
            None => Ok(None),
            Some(b'"' | b'\'') => match quoted_at(line, s, false) {
                Quoted::Done(v, e) => {
                    if b.get(e).is_some_and(|c| !c.is_ascii_whitespace()) {
                        return Err(format!(
                            "text {:?} right after a closing quote",
                            preview(&line[e..])
                        ));
                    }
                    self.at = e;
                    Ok(Some(Word::Quoted(v)))
                }
                _ => Err(format!("unterminated quote {:?}", preview(&line[s..]))),
            },
            Some(_) => {
                let e = s + line[s..]
                    .find(|c: char| c.is_ascii_whitespace())
                    .unwrap_or(line.len() - s);
                self.at = e;
                Ok(Some(Word::Bare(&line[s..e])))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{
        check_spans, detect, detect_any, first_call, megabyte_of_each, reason, tools,
    };
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect(
            &KeyValue,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"list_directory","parameters":{"type":"object","properties":{
                "path":{"type":"string"},"ignore":{"type":"string"},"depth":{"type":"integer"},"all":{"type":"boolean"}}}}},
               {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]"#,
            ),
        );
        check_spans(text, &out);
        out
    }

    #[test]
    fn pairs_typed_by_schema() {
        let t = "Looking.\n\u{2726} tool_call: list_directory for path /home/user ignore *.log depth 2 all true  \nDone.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            &t[out[0].span.clone()],
            "\u{2726} tool_call: list_directory for path /home/user ignore *.log depth 2 all true"
        );
        assert_eq!(
            first_call(&out[0]),
            (
                "list_directory".into(),
                json!({"path": "/home/user", "ignore": "*.log", "depth": 2, "all": true})
            )
        );
        // a string property keeps digits as text; quotes hold spaces
        let t = "\u{2726}tool_call:list_directory for path \"My Documents/2024\" ignore '007'";
        assert_eq!(
            first_call(&run(t, true)[0]).1,
            json!({"path": "My Documents/2024", "ignore": "007"})
        );
    }

    #[test]
    fn no_arguments_and_several_on_one_line() {
        let t = "\u{2726} tool_call: get_time\n\u{2726} tool_call: list_directory for path /x \u{2726} tool_call: get_time";
        let out = run(t, true);
        assert_eq!(out.len(), 3);
        assert_eq!(first_call(&out[0]), ("get_time".into(), json!({})));
        assert_eq!(first_call(&out[1]).1, json!({"path": "/x"}));
        assert_eq!(first_call(&out[2]).0, "get_time");
    }

    #[test]
    fn malformed_lines_name_the_problem() {
        for (t, why) in [
            (
                "\u{2726} tool_call: book_flight for to Rome",
                "unknown tool \"book_flight\"",
            ),
            (
                "\u{2726} tool_call: list_directory for colour red",
                "unknown key \"colour\"",
            ),
            (
                "\u{2726} tool_call: list_directory for path",
                "has no value",
            ),
            (
                "\u{2726} tool_call: list_directory for path \"/x y",
                "unterminated quote",
            ),
            (
                "\u{2726} tool_call: list_directory for path \"/x\"y",
                "after a closing quote",
            ),
            (
                "\u{2726} tool_call: list_directory for path /a path /b",
                "given twice",
            ),
            (
                "\u{2726} tool_call: list_directory path /a",
                "expected `for`",
            ),
            ("\u{2726} tool_call: list_directory for", "no arguments"),
            ("\u{2726} tool_call: (x)", "expected a tool name"),
            (
                "\u{2726} tool_call: list_directory for 'path' /a",
                "quoted key",
            ),
        ] {
            let out = run(t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].span, 0..t.len(), "{t}");
            assert!(reason(&out[0]).contains(why), "{t}: {}", reason(&out[0]));
        }
    }

    #[test]
    fn not_ours_and_unrestricted() {
        assert!(run("\u{2726} Here is the listing.\n\u{2726} done", true).is_empty());
        assert!(run("tool_call: get_time", true).is_empty());
        // no tools given: keys cannot be checked, values are typed without a schema
        let out = detect_any(&KeyValue, "\u{2726} tool_call: anything for n 3 s x", true);
        assert_eq!(first_call(&out[0]).1, json!({"n": 3, "s": "x"}));
    }

    #[test]
    fn streaming() {
        for t in [
            "\u{2726}",
            "Ok \u{2726} ",
            "\u{2726} tool_c",
            "\u{2726} tool_call: list_dir",
            "\u{2726} tool_call: list_directory for path /x",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(&t[out[0].span.clone()][..3], "\u{2726}", "{t}");
        }
        assert!(run("\u{2726} Sure", false).is_empty());
        let t = "\u{2726} tool_call: get_time\nThe";
        assert_eq!(first_call(&run(t, false)[0]).0, "get_time");
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "\u{2726}",
                "\u{2726} tool_call:",
                "\u{2726} tool_call: get_time ",
                "\u{2726} tool_call: list_directory for path \"",
                "\u{2726} tool_call: list_directory for path /x\n",
                "\u{2726} tool_call: list_directory for path '",
            ],
            run,
        );
    }
}
