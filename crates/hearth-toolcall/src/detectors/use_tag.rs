//! `use_tag`: the `<use …>` tags from LLxprt Code's text tool-call parser, the arguments
//! written as attributes.
//!
//! What it looks like:
//!
//! ```text
//! <use read_file path="/etc/hosts" limit="5"></use>
//! <use_read_file path="/etc/hosts">
//! <use get_time/>
//! ```
//!
//! - Two spellings: `<use` + whitespace + the tool name, and `<use_NAME`; then attributes,
//!   then `>` or `/>`. A closer (`</use>`, `</use_NAME>`) after the tag, with only
//!   whitespace between, belongs to the span. A body is not read: text after the tag stays
//!   text (and so does a closer after it).
//! - Attributes are `key="value"` or `key='value'` (spaces around `=` allowed), with the
//!   backslash escapes `\"`, `\'` and `\\`. A value starting with `{` or `[` that is valid
//!   JSON is that JSON; any other value is typed by the tool's JSON Schema like the XML
//!   formats' values (`scan::typed_param`).
//! - `Malformed`: anything in the tag that is not `key="value"` (LLxprt skips filler words
//!   such as `with`/`and`/`then` and unquoted values; here they spoil the call), a key
//!   given twice, an unterminated quote, another backslash escape (`\n` or a Windows path is
//!   not guessed at), a tag still open at the end of the output. The span of a malformed
//!   tag ends after the next `>`.
//! - Not this format: `<use` followed by an attribute rather than a name (SVG's
//!   `<use href="#icon"/>`, `<use xlink:href=…>`), by something that is not a name
//!   (`<use 2 cups>`, `<use>`), `<user>`, `<username>`, `<use_>`; a tag cut by the end of
//!   the output before its name is known.
//! - While streaming, a tag from `<use` until its `>` (and whitespace after it, where the
//!   closer may follow) is `Pending`, unless it has shown itself not to be ours.
//!
//! Strict, although prose and HTML can hold `<use …>`: in HTML and SVG `<use` is followed
//! by attributes, which is not ours, and a tool name followed by `key="value"` pairs is
//! written by nothing else. Loose would not do: two different loose calls in one reply
//! conflict and neither runs, and a loose tag would stay in the reply whenever any strict
//! format is present. What prose is left (`<use your judgement>`) is removed as `Malformed`
//! and runs nothing.

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::shared::markers::{prefix_of, preview};
use super::shared::memo_find::Next;
use super::shared::plain_args::{name_end, quoted_at, Quoted};
use super::shared::xml_call::{settle, Step};

pub struct UseTag;

const OPEN: &str = "<use";

impl Detector for UseTag {
    fn name(&self) -> &str {
        "use_tag"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["<use ", "<use_", "<use\n", "<use\t", "<use\r"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Next::new(text, OPEN);
        let mut tag_ends = Next::new(text, ">");
        let mut pos = 0;
        while let Some(start) = opens.find(pos) {
            let step = tag_at(text, ctx, start);
            let next = settle(out, ctx, text.len(), start, step, |at| {
                tag_ends.find(at).map(|g| g + 1)
            });
            match next.resume(start + OPEN.len()) {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

/// The tag at `start` (which holds `<use`).
fn tag_at(text: &str, ctx: &DetectCtx<'_>, start: usize) -> Step<Vec<Candidate>> {
    let (name, closer, i) = match head(text, start + OPEN.len()) {
        Head::Tag(name, closer, i) => (name, closer, i),
        Head::Cut if !ctx.eof => return Step::Incomplete(None, "unclosed <use> tag".into()),
        Head::Cut | Head::NotOurs => return Step::NotOurs,
    };
    let (args, end, self_closing) = match attributes(text, ctx, name, i) {
        Ok(a) => a,
        Err(step) => return step,
    };
    let call = vec![Candidate::new(name, Value::Object(args))];
    if self_closing {
        return Step::Done(call, end);
    }
    let n = scan::skip_ws(text, end);
    let rest = &text[n..];
    if rest.starts_with(&closer) {
        Step::Done(call, n + closer.len())
    } else if !ctx.eof && prefix_of(rest, &closer) {
        Step::Incomplete(Some(name.to_string()), format!("{closer} may follow"))
    } else {
        Step::Done(call, end)
    }
}

enum Head<'a> {
    /// The tool name, its closer and the offset just after the name.
    Tag(&'a str, String, usize),
    /// The text ends before it is known whether this is a call tag.
    Cut,
    NotOurs,
}

/// What follows `<use` (at `k`): `_NAME` or whitespace and `NAME`, not an attribute.
fn head(text: &str, k: usize) -> Head<'_> {
    let b = text.as_bytes();
    let (ns, underscore) = match b.get(k) {
        None => return Head::Cut,
        Some(b'_') => (k + 1, true),
        Some(c) if c.is_ascii_whitespace() => (scan::skip_ws(text, k), false),
        Some(_) => return Head::NotOurs,
    };
    let ne = name_end(text, ns);
    let name = &text[ns..ne];
    // what follows the name: an attribute's `=` (or `:` of `xlink:href`) is not ours
    let after = if underscore {
        ne
    } else {
        scan::skip_ws(text, ne)
    };
    let Some(&next) = b.get(after) else {
        return Head::Cut;
    };
    let ends_name = b[ne].is_ascii_whitespace() || matches!(b[ne], b'>' | b'/');
    if !scan::is_ident(name) || next == b'=' || b[ne] == b':' || (underscore && !ends_name) {
        return Head::NotOurs;
    }
    let closer = if underscore {
        format!("</use_{name}>")
    } else {
        "</use>".to_string()
    };
    Head::Tag(name, closer, ne)
}

type Attrs = (Map<String, Value>, usize, bool);

/// The `key="value"` attributes of the tag of `name` from `i` to its `>` or `/>`: the
/// arguments, the offset after the tag, and whether it closed itself.
fn attributes(
    text: &str,
    ctx: &DetectCtx<'_>,
    name: &str,
    mut i: usize,
) -> Result<Attrs, Step<Vec<Candidate>>> {
    let b = text.as_bytes();
    let cut = || {
        Step::Incomplete(
            Some(name.to_string()),
            format!("<use {name}> is not closed"),
        )
    };
    let bad = |reason: String, at: usize| Step::Malformed {
        name: Some(name.to_string()),
        reason: format!("{reason} in the <use {name}> tag"),
        at,
    };
    let mut args = Map::new();
    loop {
        i = scan::skip_ws(text, i);
        match (b.get(i), b.get(i + 1)) {
            (None, _) | (Some(b'/'), None) => return Err(cut()),
            (Some(b'>'), _) => return Ok((args, i + 1, false)),
            (Some(b'/'), Some(b'>')) => return Ok((args, i + 2, true)),
            _ => {}
        }
        let ke = name_end(text, i);
        let key = &text[i..ke];
        if key.is_empty() {
            let what = format!(
                "unexpected text {:?}: expected key=\"value\"",
                preview(&text[i..])
            );
            return Err(bad(what, i));
        }
        let eq = scan::skip_ws(text, ke);
        match b.get(eq) {
            None => return Err(cut()),
            Some(b'=') => {}
            Some(_) => return Err(bad(format!("{key:?} is not key=\"value\""), i)),
        }
        let q = scan::skip_ws(text, eq + 1);
        match b.get(q) {
            None => return Err(cut()),
            Some(b'"' | b'\'') => {}
            Some(_) => return Err(bad(format!("the value of {key} is not quoted"), q)),
        }
        let (raw, after) = match quoted_at(text, q, true) {
            Quoted::Done(v, e) => (v, e),
            Quoted::Unterminated => return Err(cut()),
            Quoted::BadEscape(at) => {
                let what = format!(
                    "invalid escape {:?} in the value of {key}",
                    preview(&text[at..])
                );
                return Err(bad(what, at));
            }
        };
        if args.contains_key(key) {
            return Err(bad(format!("attribute {key} given twice"), i));
        }
        args.insert(key.to_string(), value(ctx, name, key, &raw));
        i = after;
    }
}

/// A value starting with `{` or `[` that is valid JSON is that JSON; otherwise it is typed
/// by the schema.
fn value(ctx: &DetectCtx<'_>, tool: &str, key: &str, raw: &str) -> Value {
    let t = raw.trim();
    if t.starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            return v;
        }
    }
    scan::typed_param(ctx, tool, key, raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{check_spans, detect, first_call, megabyte_of_each, reason, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect(
            &UseTag,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{
                "path":{"type":"string"},"limit":{"type":"integer"},"raw":{"type":"boolean"},"lines":{"type":"array"}}}}}]"#,
            ),
        );
        check_spans(text, &out);
        out
    }

    #[test]
    fn both_spellings_typed() {
        let t = "Reading.\n<use read_file path=\"/x\" limit='5' raw = \"true\" lines=\"[1, 2]\"></use>\nDone.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "\nDone.");
        assert_eq!(
            first_call(&out[0]),
            (
                "read_file".into(),
                json!({"path": "/x", "limit": 5, "raw": true, "lines": [1, 2]})
            )
        );
        let t = "<use_read_file path=\"a \\\"b\\\" \\\\c\">\n</use_read_file> then <use get_time/></use>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(first_call(&out[0]).1, json!({"path": "a \"b\" \\c"}));
        assert_eq!(
            &t[out[0].span.clone()],
            "<use_read_file path=\"a \\\"b\\\" \\\\c\">\n</use_read_file>"
        );
        // a self-closed tag takes no closer; a body is not read
        assert_eq!(&t[out[1].span.clone()], "<use get_time/>");
        let t = "<use read_file path=\"/x\">body</use>";
        assert_eq!(
            &t[run(t, true)[0].span.clone()],
            "<use read_file path=\"/x\">"
        );
        // JSON that does not parse is typed by the schema: a string stays a string
        let t = "<use read_file path=\"[draft\">";
        assert_eq!(first_call(&run(t, true)[0]).1, json!({"path": "[draft"}));
    }

    #[test]
    fn not_ours() {
        for t in [
            "<svg><use href=\"#icon\"/></svg>",
            "<use xlink:href=\"#a\" x=\"1\"/>",
            "<use\n  href='#b'>",
            "<user>bob</user><username>x</username>",
            "<use_>",
            "<use 2 cups of flour>",
            "<use>",
            "<use_case:x>",
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
        assert!(run("a <use read_fi", true).is_empty());
    }

    #[test]
    fn malformed() {
        for (t, why, end) in [
            (
                "<use read_file with path=\"/x\"> ok",
                "\"with\" is not key",
                30,
            ),
            ("<use read_file path=/x> ok", "not quoted", 23),
            ("<use read_file path=\"/x\" path=\"/y\">", "given twice", 35),
            ("<use read_file path=\"C:\\dir\">", "invalid escape", 29),
            ("<use read_file , path=\"/x\">", "unexpected text", 27),
            ("<use read_file path=\"/x\"", "not closed", 24),
            ("<use read_file path=\"/x>", "not closed", 24),
        ] {
            let out = run(t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert!(reason(&out[0]).contains(why), "{t}: {}", reason(&out[0]));
            assert_eq!(out[0].span, 0..end, "{t}");
        }
    }

    #[test]
    fn streaming() {
        for t in [
            "<use",
            "<use ",
            "<use_read",
            "<use read_file",
            "<use href",
            "<use read_file path=\"/x",
            "<use read_file path=\"/x\">",
            "<use read_file path=\"/x\">\n</us",
            "<use read_file path=\"/x\"/",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
        }
        assert!(run("<use href=", false).is_empty());
        let t = "<use read_file path=\"/x\"> Then";
        assert_eq!(first_call(&run(t, false)[0]).0, "read_file");
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[
                "<use ",
                "<use_",
                "<use a ",
                "<use a b=\"",
                "<use a b=\"c\" ",
                "<use a b=\"c\"> ",
                "<use a b>",
                "<use_a></use",
            ],
            run,
        );
    }
}
