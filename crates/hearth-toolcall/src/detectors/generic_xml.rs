//! `generic_xml`: prompt-defined XML tool calls that no model family owns.
//!
//! Four shapes, all from prompt-injected formats rather than a model's own template:
//!
//! 1. LLxprt's "generic XML", arguments as child elements:
//!    `<tool><name>search</name><arguments><query>climate change</query></arguments></tool>`
//!    (the arguments element may also hold a JSON object);
//! 2. the ruvLLM ADR's generic format, arguments as JSON:
//!    `<tool_call><name>search</name><arguments>{"query": "x"}</arguments></tool_call>`
//!    (child elements are accepted here too);
//! 3. the fail-closed parser note's primary form, a JSON payload:
//!    `<tool name="search_web">{"query": "..."}</tool>` (an empty payload or `<tool name="x"/>`
//!    means no arguments);
//! 4. LLxprt's fallback when the inside of `<tool_call>` is not JSON, a name line then child
//!    elements: `<tool_call>read_file\n<path>/x</path>\n</tool_call>`. The name must end its
//!    line; GLM-4.5's `name\n<arg_key>…` and its argument-less `name\n</tool_call>` are left
//!    to `glm45`, and a name followed by anything but a line break and an element is not
//!    this shape.
//!
//! `<parameters>` is accepted in place of `<arguments>`; a missing arguments element means no
//! arguments. Child-element values are XML-unescaped and typed by the tool's JSON Schema
//! (nested elements become objects, typed by the nested schema). The payload must be JSON
//! (an object, or a JSON string holding one): nothing is repaired. Edge cases: whitespace and
//! newlines between elements; a `<tool_call>` or `<tool>` that starts with neither `<name>`
//! nor (for `<tool_call>`) a name line and an element is not this format (hermes, qwen25,
//! qwen3_coder and glm45 share `<tool_call>`); a duplicate child, bad JSON or stray text is
//! `Malformed` (in auto mode a malformed `<tool_call>` block is reported by `hermes`, which
//! claims the same span earlier in the chain); an unclosed construct is `Pending` while
//! streaming and `Malformed` at end of output.

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan::{self, Scan, MAX_DEPTH};

use super::shared::markers::{prefix_of, preview};
use super::shared::memo_find::Next;
use super::shared::plain_args::name_end;
use super::shared::tagged_blocks::json_reason;
use super::shared::xml_call::{settle, Step, MAX_NAME};
use super::shared::xml_invoke::{name_attr, Attr};

pub struct GenericXml;

const TOOL_CLOSE: &str = "</tool>";
const CALL_CLOSE: &str = "</tool_call>";

impl Detector for GenericXml {
    fn name(&self) -> &str {
        "generic_xml"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["<tool>", "<tool name=", "<tool_call>"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut tools = Next::new(text, "<tool");
        let mut tool_closes = Next::new(text, TOOL_CLOSE);
        let mut call_closes = Next::new(text, CALL_CLOSE);
        let mut pos = 0;
        while let Some(start) = tools.find(pos) {
            let after = &text[start + 5..];
            let (step, close, skip) = if after.starts_with('>') {
                let region = tool_closes.find(start);
                let step = elements_form(text, ctx, start + 6, TOOL_CLOSE, region);
                (step, TOOL_CLOSE, 6)
            } else if after.starts_with("_call>") {
                let region = call_closes.find(start);
                let step = match elements_form(text, ctx, start + 11, CALL_CLOSE, region) {
                    Step::NotOurs => name_line_form(text, ctx, start + 11, region),
                    step => step,
                };
                (step, CALL_CLOSE, 11)
            } else if after.starts_with(|c: char| c.is_ascii_whitespace()) {
                let region = tool_closes.find(start);
                (attr_form(text, ctx, start, region), TOOL_CLOSE, 5)
            } else {
                pos = start + 5;
                continue;
            };
            let closes = if close == TOOL_CLOSE {
                &mut tool_closes
            } else {
                &mut call_closes
            };
            let next = settle(out, ctx, text.len(), start, step, |at| {
                closes.find(at).map(|c| c + close.len())
            });
            match next.resume(start + skip) {
                Some(n) => pos = n,
                None => return,
            }
        }
    }
}

/// Shape 3: `<tool name="X">{json}</tool>` or `<tool name="X"/>`.
fn attr_form(
    text: &str,
    ctx: &DetectCtx<'_>,
    start: usize,
    region: Option<usize>,
) -> Step<Vec<Candidate>> {
    let (name, body) = match name_attr(text, start + 5) {
        Attr::Name(n, e) => (n, e),
        Attr::SelfClosing(n, e) => {
            return Step::Done(vec![Candidate::new(n, Value::Object(Map::new()))], e)
        }
        Attr::Incomplete if !ctx.eof => {
            return Step::Incomplete(None, "unclosed <tool> tag".into())
        }
        Attr::Incomplete | Attr::Bad(_) => return Step::NotOurs,
    };
    let Some(close) = region.filter(|&c| c >= body) else {
        return Step::Incomplete(
            Some(name.to_string()),
            format!("<tool name=\"{name}\"> is not closed by </tool>"),
        );
    };
    let payload = text[body..close].trim();
    if !payload.is_empty() && !payload.starts_with(['{', '"']) {
        return Step::Malformed {
            name: Some(name.to_string()),
            reason: format!(
                "<tool name=\"{name}\"> payload must be a JSON object, got {:?}",
                preview(payload)
            ),
            at: body,
        };
    }
    match scan::parse_args_json(payload) {
        Ok(args) => Step::Done(vec![Candidate::new(name, args)], close + TOOL_CLOSE.len()),
        Err(e) => Step::Malformed {
            name: Some(name.to_string()),
            reason: json_reason(&e, &format!("<tool name=\"{name}\">")),
            at: body,
        },
    }
}

/// Shapes 1 and 2: `<tool>`/`<tool_call>` holding `<name>` and optional `<arguments>`.
/// `k` is just after the opening tag; `region` is the next closing tag, if any.
fn elements_form(
    text: &str,
    ctx: &DetectCtx<'_>,
    k: usize,
    close: &str,
    region: Option<usize>,
) -> Step<Vec<Candidate>> {
    // Parse inside the block only: every search stays within it.
    let limit = region.map_or(text.len(), |c| c + close.len());
    let t = &text[..limit];
    let k = scan::skip_ws(t, k);
    let rest = &t[k..];
    if !rest.starts_with("<name>") {
        return if !ctx.eof && (rest.is_empty() || prefix_of(rest, "<name>")) {
            Step::Incomplete(None, "unclosed tool call".into())
        } else {
            Step::NotOurs
        };
    }
    let ns = k + 6;
    let Some(ne) = scan::find_from(t, "</name>", ns).filter(|&e| e - ns <= MAX_NAME) else {
        return if region.is_none() && t.len() - ns <= MAX_NAME {
            Step::Incomplete(None, "unclosed <name>".into())
        } else {
            Step::Malformed {
                name: None,
                reason: "<name> is not closed by </name>".into(),
                at: ns,
            }
        };
    };
    let name = scan::xml_unescape(t[ns..ne].trim()).into_owned();
    let malformed = |reason: String, at: usize| Step::Malformed {
        name: Some(name.clone()),
        reason,
        at,
    };
    if !scan::is_ident(&name) {
        return malformed(
            format!("invalid tool name {:?} in <name>", preview(&name)),
            ns,
        );
    }
    let mut k = scan::skip_ws(t, ne + 7);
    let mut args = Value::Object(Map::new());
    let rest = &t[k..];
    let tag = ["<arguments>", "<parameters>"]
        .into_iter()
        .find(|o| rest.starts_with(o));
    if let Some(open) = tag {
        let end_tag = if open == "<arguments>" {
            "</arguments>"
        } else {
            "</parameters>"
        };
        let a = scan::skip_ws(t, k + open.len());
        let body = &t[a..];
        if body.starts_with(['{', '"']) {
            let e = if body.starts_with('{') {
                match scan::balanced_end(t, a, false) {
                    Scan::Complete(e) => e,
                    Scan::Incomplete if region.is_none() => {
                        return Step::Incomplete(Some(name.clone()), "unclosed arguments".into())
                    }
                    _ => match scan::find_from(t, end_tag, a) {
                        Some(e) => e,
                        None if region.is_none() => {
                            return Step::Incomplete(
                                Some(name.clone()),
                                "unclosed arguments".into(),
                            )
                        }
                        None => return malformed(format!("{open} is not closed by {end_tag}"), a),
                    },
                }
            } else {
                match scan::find_from(t, end_tag, a) {
                    Some(e) => e,
                    None if region.is_none() => {
                        return Step::Incomplete(Some(name.clone()), "unclosed arguments".into())
                    }
                    None => return malformed(format!("{open} is not closed by {end_tag}"), a),
                }
            };
            args = match scan::parse_args_json(&t[a..e]) {
                Ok(v) => v,
                Err(err) => return malformed(json_reason(&err, open), a),
            };
            k = scan::skip_ws(t, e);
        } else {
            let schema = ctx.tools.spec(&name).map(|s| &s.parameters);
            match children(t, a, end_tag, schema, 0, region.is_none()) {
                Ok((m, e)) => {
                    args = Value::Object(m);
                    k = e;
                }
                Err(Child::Incomplete) => {
                    return Step::Incomplete(Some(name.clone()), "unclosed arguments".into())
                }
                Err(Child::Bad(reason, at)) => {
                    return malformed(format!("{reason} in {open} of {name}"), at)
                }
            }
        }
        let rest = &t[k..];
        if !rest.starts_with(end_tag) {
            if region.is_none() && (rest.is_empty() || prefix_of(rest, end_tag)) {
                return Step::Incomplete(Some(name.clone()), "unclosed arguments".into());
            }
            return malformed(
                format!(
                    "unexpected text {:?} in {open}: expected {end_tag}",
                    preview(rest)
                ),
                k,
            );
        }
        k = scan::skip_ws(t, k + end_tag.len());
    }
    let rest = &t[k..];
    if rest.starts_with(close) {
        return Step::Done(vec![Candidate::new(name.clone(), args)], k + close.len());
    }
    if region.is_none()
        && (rest.is_empty() || prefix_of(rest, close) || prefix_of(rest, "<arguments>"))
    {
        return Step::Incomplete(
            Some(name.clone()),
            format!("unclosed {}", &close.replace('/', "")),
        );
    }
    malformed(
        format!(
            "unexpected text {:?}: expected <arguments> or {close}",
            preview(rest)
        ),
        k,
    )
}

/// Shape 4: `<tool_call>NAME\n<key>value</key>…</tool_call>`. `k` is just after
/// `<tool_call>`; `region` is the next `</tool_call>`, if any.
fn name_line_form(
    text: &str,
    ctx: &DetectCtx<'_>,
    k: usize,
    region: Option<usize>,
) -> Step<Vec<Candidate>> {
    let t = &text[..region.map_or(text.len(), |c| c + CALL_CLOSE.len())];
    let b = t.as_bytes();
    let open_ended = region.is_none() && !ctx.eof;
    let ns = scan::skip_ws(t, k);
    let ne = name_end(t, ns);
    let name = &t[ns..ne];
    let eol = ne + t[ne..].len() - t[ne..].trim_start_matches([' ', '\t', '\r']).len();
    match b.get(eol) {
        None if open_ended && ne - ns <= MAX_NAME => {
            return Step::Incomplete(None, "unclosed <tool_call>".into())
        }
        Some(b'\n') if scan::is_ident(name) => {}
        _ => return Step::NotOurs,
    }
    let a = scan::skip_ws(t, eol);
    let rest = &t[a..];
    // GLM-4.5's pairs and its call without arguments are glm45's
    if [CALL_CLOSE, "<arg_key>", "<arg_value>"]
        .iter()
        .any(|m| rest.starts_with(m))
    {
        return Step::NotOurs;
    }
    // the first child must be an element tag `<key>`
    let tag_end = name_end(t, a + 1);
    match (rest.as_bytes().first(), b.get(tag_end)) {
        (Some(b'<'), Some(b'>')) if tag_end > a + 1 => {}
        (None, _) | (Some(b'<'), None) if open_ended && rest.len() <= MAX_NAME => {
            return Step::Incomplete(Some(name.to_string()), "unclosed <tool_call>".into())
        }
        _ => return Step::NotOurs,
    }
    let schema = ctx.tools.spec(name).map(|s| &s.parameters);
    match children(t, a, CALL_CLOSE, schema, 0, region.is_none()) {
        Ok((m, e)) => Step::Done(
            vec![Candidate::new(name, Value::Object(m))],
            e + CALL_CLOSE.len(),
        ),
        Err(Child::Incomplete) => {
            Step::Incomplete(Some(name.to_string()), "unclosed <tool_call>".into())
        }
        Err(Child::Bad(reason, at)) => Step::Malformed {
            name: Some(name.to_string()),
            reason: format!("{reason} in <tool_call>{name}"),
            at,
        },
    }
}

enum Child {
    Incomplete,
    Bad(String, usize),
}

/// Child elements `<k>v</k>` from `i` until `end_tag` (not consumed). Returns the map and
/// the offset of `end_tag`. `open_ended`: the block has no closing tag yet, so running out
/// of text is incomplete rather than malformed.
fn children(
    t: &str,
    i: usize,
    end_tag: &str,
    schema: Option<&Value>,
    depth: usize,
    open_ended: bool,
) -> Result<(Map<String, Value>, usize), Child> {
    if depth > MAX_DEPTH {
        return Err(Child::Bad("elements nested too deeply".into(), i));
    }
    let out_of_text = |at: usize| {
        if open_ended {
            Child::Incomplete
        } else {
            Child::Bad(format!("{end_tag} is missing"), at)
        }
    };
    let mut m = Map::new();
    let mut k = scan::skip_ws(t, i);
    loop {
        let rest = &t[k..];
        if rest.starts_with(end_tag) {
            return Ok((m, k));
        }
        if rest.is_empty() || prefix_of(rest, end_tag) {
            return Err(out_of_text(k));
        }
        if !rest.starts_with('<') || rest.starts_with("</") {
            return Err(Child::Bad(
                format!(
                    "unexpected text {:?}: expected an element or {end_tag}",
                    preview(rest)
                ),
                k,
            ));
        }
        let ns = k + 1;
        let b = t.as_bytes();
        let mut j = ns;
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        {
            if j - ns > MAX_NAME {
                return Err(Child::Bad("over-long element name".into(), j));
            }
            j += 1;
        }
        match b.get(j) {
            None => return Err(out_of_text(j)),
            Some(b'>') if j > ns => {}
            _ => {
                return Err(Child::Bad(
                    format!("invalid element tag {:?}", preview(rest)),
                    k,
                ))
            }
        }
        let key = &t[ns..j];
        let close = format!("</{key}>");
        let cs = j + 1;
        let inner = scan::skip_ws(t, cs);
        let child_schema = schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(key));
        let (value, ce) = if t[inner..].starts_with('<') && !t[inner..].starts_with(&close) {
            let (obj, e) = children(t, inner, &close, child_schema, depth + 1, open_ended)?;
            (Value::Object(obj), e)
        } else {
            let Some(e) = scan::find_from(t, &close, cs) else {
                return Err(out_of_text(cs));
            };
            let raw = scan::xml_unescape(t[cs..e].trim());
            (scan::typed_value(&raw, child_schema), e)
        };
        if m.insert(key.to_string(), value).is_some() {
            return Err(Child::Bad(format!("element <{key}> given twice"), k));
        }
        k = scan::skip_ws(t, ce + close.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{calls, detect, reason, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(
            &GenericXml,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{
                "query":{"type":"string"},"limit":{"type":"integer"},
                "options":{"type":"object","properties":{"safe":{"type":"boolean"}}}}}}}]"#,
            ),
        )
    }

    #[test]
    fn child_elements() {
        let t = "Searching.\n<tool>\n  <name>search</name>\n  <arguments>\n    <query>climate &amp; change</query>\n    <limit>5</limit>\n    <options><safe>true</safe></options>\n  </arguments>\n</tool>\nok";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "\nok");
        assert_eq!(
            calls(&out[0])[0].arguments,
            json!({"query": "climate & change", "limit": 5, "options": {"safe": true}})
        );
    }

    #[test]
    fn adr_json_form_and_attr_form() {
        let t = "<tool_call>\n<name>search</name>\n<arguments>{\"query\": \"rust\"}</arguments>\n</tool_call>";
        assert_eq!(
            calls(&run(t, true)[0])[0].arguments,
            json!({"query": "rust"})
        );
        let t = "<tool name=\"search\">{\"query\":\"x\"}</tool> <tool name=\"get_time\"></tool><tool name='get_date'/>";
        let out = run(t, true);
        assert_eq!(out.len(), 3);
        assert_eq!(calls(&out[0])[0].arguments, json!({"query": "x"}));
        assert_eq!(calls(&out[1])[0].arguments, json!({}));
        assert_eq!(calls(&out[2])[0].name, "get_date");
        let t = "<tool><name>get_time</name></tool>";
        assert_eq!(calls(&run(t, true)[0])[0].name, "get_time");
    }

    #[test]
    fn not_ours_and_malformed() {
        assert!(run("<tool_call>{\"name\": \"a\"}</tool_call>", true).is_empty());
        assert!(run("<tool_call>a\n<arg_key>x</arg_key></tool_call>", true).is_empty());
        assert!(run("Use the <tool> tag.", true).is_empty());
        assert!(run("<tools>[]</tools>", true).is_empty());
        assert!(
            reason(&run("<tool name=\"search\">{\"query\": }</tool>", true)[0])
                .contains("malformed JSON")
        );
        assert!(
            reason(&run("<tool name=\"search\">query=x</tool>", true)[0])
                .contains("must be a JSON object")
        );
        let t = "<tool><name>search</name><arguments><q>a</q><q>b</q></arguments></tool>";
        assert!(reason(&run(t, true)[0]).contains("twice"));
    }

    #[test]
    fn name_line_with_children() {
        let t = "Searching.\n<tool_call>search\n<query>a &lt; b</query>\n<limit>3</limit>\n</tool_call>\nok";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "\nok");
        assert_eq!(
            calls(&out[0])[0].arguments,
            json!({"query": "a < b", "limit": 3})
        );
        // GLM-4.5's forms, JSON, an argument-less name and a name with text after it
        for t in [
            "<tool_call>search\n<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>",
            "<tool_call>search\n</tool_call>",
            "<tool_call>search</tool_call>",
            "<tool_call>search<query>x</query></tool_call>",
            "<tool_call>search {\"query\": 1}\n<query>x</query></tool_call>",
            "<tool_call>search\nplease <query>x</query></tool_call>",
            "<tool_call>search\n<function=x></tool_call>",
        ] {
            assert!(run(t, true).is_empty(), "{t}");
        }
        let t = "<tool_call>search\n<query>a</query>\n<query>b</query>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("twice in <tool_call>search"));
        let t = "<tool_call>search\n<query>a</query>\nnow\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("unexpected text"));
        for t in [
            "<tool_call>sea",
            "<tool_call>search\n",
            "<tool_call>search\n<qu",
            "<tool_call>search\n<query>x</query>",
        ] {
            assert_eq!(run(t, false), vec![Found::pending(0..t.len())], "{t}");
        }
        assert!(run("<tool_call>search\nhello", false).is_empty());
        assert!(run("<tool_call>search\n<qu", true).is_empty());
        let t = "<tool_call>search\n<query>x</query>";
        assert!(reason(&run(t, true)[0]).contains("unclosed <tool_call>"));
    }

    #[test]
    fn streaming() {
        for t in [
            "<tool>",
            "<tool>\n<na",
            "<tool><name>sea",
            "<tool><name>search</name><arguments><query>cli",
            "<tool name=\"search\">{\"q",
            "<tool_call><name>x</name>",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
        }
        assert!(matches!(
            run("<tool name=\"search\">{\"q", true)[0].kind,
            FoundKind::Malformed { .. }
        ));
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(&"<tool><name>a</name><arguments><x>".repeat(40_000), true);
        let _ = run(
            &"<tool><name>a</name><arguments><x>1</tool>".repeat(40_000),
            true,
        );
        let _ = run(
            &format!("<tool><name>a</name><arguments>{}", "<x>".repeat(100_000)),
            false,
        );
        let _ = run(&"<tool name=\"a\">".repeat(60_000), true);
        let _ = run(&"<tool".repeat(100_000), false);
        let _ = run(&"<tool_call>a\n<b>".repeat(60_000), true);
        let _ = run(&"<tool_call>a\n<b>1</b>".repeat(60_000), false);
        let _ = run(&"<tool_call>a\n".repeat(80_000), false);
    }
}
