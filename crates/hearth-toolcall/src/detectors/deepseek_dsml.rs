//! `deepseek_dsml`: DeepSeek-V3.2 and V4 "DSML" tool-call markup.
//!
//! # Wire format
//!
//! DeepSeek-V3.2 (and V3.2-Exp / Speciale) stopped using the `<｜tool▁calls▁begin｜>` tokens
//! and writes XML-like markup whose tag names start with the `｜DSML｜` token (fullwidth bars,
//! U+FF5C). The official encoder puts a blank line before the block, one invoke per call and
//! one parameter per line:
//!
//! ~~~text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="location" string="true">Paris</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ~~~
//!
//! DeepSeek-V4 renamed the block to `<｜DSML｜tool_calls>` … `</｜DSML｜tool_calls>`; the rest is
//! the same.
//!
//! # Values
//!
//! `string="true"` means the value is raw text, taken verbatim (no trimming, no unescaping:
//! the encoder writes strings as they are). `string="false"` means the value is JSON (numbers,
//! booleans, arrays, objects, null); one that is not valid JSON makes the invoke `Malformed`
//! (the reference decoder pastes such values into the arguments' JSON text, which then fails
//! to parse). A parameter without the attribute (drift some parsers tolerate) is typed by
//! the tool's JSON Schema (`scan::typed_param`), which keeps it as text when it cannot be
//! typed, so validation names the mismatch instead of a guess.
//!
//! # What this detector accepts
//!
//! - blocks named `function_calls` (V3.2) or `tool_calls` (V4), several invokes per block;
//! - ASCII-bar spellings (`<|DSML|invoke …>`) that some gateways and quantised templates
//!   produce, and either quote style around attributes, in any order;
//! - an invoke whose body is one JSON object instead of parameters (SGLang accepts this
//!   drift too; it runs to the next DSML tag, which must close the invoke), and an invoke
//!   with no parameters (`{}`);
//! - a bare `<｜DSML｜invoke>` with no surrounding block, and a block whose close tag never
//!   came after its last complete invoke.
//!
//! A duplicate parameter, a missing `name`, an unclosed parameter or invoke, or text
//! between the tags is `Malformed` with the reason; an unfinished block while streaming is
//! `Pending`. Plain `<function_calls>` / `<invoke>` without the DSML token are Claude-style
//! markup and left to other detectors.
//!
//! Sources: the DeepSeek-V3.2 encoder and its `parse_tool_calls` (encoding_dsv32.py, which
//! rejects duplicate parameters), SGLang's `DeepSeekV32Detector`, DeepSeek-V4 encoders and
//! the V4 tool prompt ("String parameters should be specified as is and set string=\"true\"").

use serde_json::{Map, Value};

use super::shared::token_blocks::{describe, Outcome};
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

pub struct DeepseekDsml;

impl Detector for DeepseekDsml {
    fn name(&self) -> &str {
        "deepseek_dsml"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{FF5C}DSML\u{FF5C}", "|DSML|"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut pos = 0;
        let mut tags = TagFinder::default();
        while let Some(next) = tags.next_open(text, pos) {
            let (start, tag) = match next {
                Ok(x) => x,
                Err(start) => {
                    // The text ends inside a DSML tag that may open a block.
                    if !ctx.eof {
                        out.push(Found::pending(start..text.len()));
                    }
                    break;
                }
            };
            let res = parse_construct(text, start, &tag, ctx, &mut tags);
            pos = res.end.max(start + 1);
            out.push(res.outcome.into_found(start..res.end, text.len(), ctx.eof));
            if res.end >= text.len() {
                break;
            }
        }
    }
}

/// One DSML tag.
#[derive(Debug, Clone)]
struct Tag {
    close: bool,
    name: String,
    /// The attribute text between the tag name and `>`.
    attrs: String,
    end: usize,
}

enum TagMatch {
    Full(Tag),
    Partial,
    No,
}

/// Longest tag we follow (attributes included).
const TAG_MAX: usize = 1024;

const BAR_FW: &str = "\u{FF5C}";

/// Match a DSML tag at byte `i` (`<｜DSML｜name attrs>` or `</｜DSML｜name>`, either bar).
fn match_tag(text: &str, i: usize) -> TagMatch {
    let rest = text.get(i..).unwrap_or("");
    let mut k = 0;
    let expect = |k: &mut usize, lits: &[&str]| -> Result<(), TagMatch> {
        let r = rest.get(*k..).unwrap_or("");
        for lit in lits {
            if r.starts_with(lit) {
                *k += lit.len();
                return Ok(());
            }
        }
        if lits.iter().any(|l| l.starts_with(r)) {
            return Err(TagMatch::Partial);
        }
        Err(TagMatch::No)
    };
    macro_rules! step {
        ($lits:expr) => {
            if let Err(e) = expect(&mut k, $lits) {
                return e;
            }
        };
    }
    step!(&["<"]);
    let close = rest.get(k..).is_some_and(|r| r.starts_with('/'));
    if close {
        k += 1;
    }
    step!(&[BAR_FW, "|"]);
    step!(&["DSML"]);
    step!(&[BAR_FW, "|"]);
    let name_start = k;
    while rest
        .as_bytes()
        .get(k)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        k += 1;
    }
    if k == rest.len() {
        return TagMatch::Partial;
    }
    if k == name_start {
        return TagMatch::No;
    }
    let name = rest.get(name_start..k).unwrap_or("").to_string();
    // Attributes up to `>`, honouring quotes.
    let attrs_start = k;
    let mut quote: Option<u8> = None;
    loop {
        let Some(&c) = rest.as_bytes().get(k) else {
            return TagMatch::Partial;
        };
        if k - attrs_start > TAG_MAX {
            return TagMatch::No;
        }
        match (quote, c) {
            (None, b'>') => break,
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, b'<') => return TagMatch::No,
            _ => {}
        }
        k += 1;
    }
    let attrs = rest.get(attrs_start..k).unwrap_or("").to_string();
    TagMatch::Full(Tag {
        close,
        name,
        attrs,
        end: i + k + 1,
    })
}

/// Finds DSML tags by their `DSML` marker, never rescanning text it already passed.
#[derive(Default)]
struct TagFinder {
    /// No `DSML` marker at or after this offset (once known).
    none_from: Option<usize>,
}

impl TagFinder {
    /// The next DSML tag starting at or after `from`: its start and match (`Full`, or
    /// `Partial` when the text ends inside it).
    fn next_tag(&mut self, text: &str, from: usize) -> Option<(usize, TagMatch)> {
        if self.none_from.is_some_and(|n| from >= n) {
            return None;
        }
        let b = text.as_bytes();
        let mut at = from + 2;
        while let Some(p) = scan::find_from(text, "DSML", at) {
            for back in [4usize, 5, 2, 3] {
                let Some(s) = p.checked_sub(back) else {
                    continue;
                };
                if s < from || !text.is_char_boundary(s) {
                    continue;
                }
                let lead = &text[s..p];
                if matches!(lead, "<\u{FF5C}" | "</\u{FF5C}" | "<|" | "</|") {
                    match match_tag(text, s) {
                        TagMatch::No => {}
                        m => return Some((s, m)),
                    }
                }
            }
            at = p + 4;
        }
        // A tag can still be cut off before its `DSML` (`</｜DSM` is 8 bytes).
        let mut q = b.len().saturating_sub(8).max(from);
        while let Some(off) = b.get(q..).and_then(|r| memchr::memchr(b'<', r)) {
            if let TagMatch::Partial = match_tag(text, q + off) {
                return Some((q + off, TagMatch::Partial));
            }
            q += off + 1;
        }
        self.none_from = Some(from);
        None
    }

    /// The next opening tag of a construct: a block (`function_calls`, `tool_calls`) or a
    /// bare `invoke`. `Err(start)` when the text ends inside a DSML tag.
    fn next_open(&mut self, text: &str, from: usize) -> Option<Result<(usize, Tag), usize>> {
        let mut at = from;
        loop {
            let (s, m) = self.next_tag(text, at)?;
            match m {
                TagMatch::Full(t) if !t.close && (is_block(&t.name) || t.name == "invoke") => {
                    return Some(Ok((s, t)))
                }
                TagMatch::Full(t) => at = t.end,
                // Only an opening tag can start a construct.
                _ if text.as_bytes().get(s + 1) == Some(&b'/') => return None,
                _ => return Some(Err(s)),
            }
        }
    }
}

fn is_block(name: &str) -> bool {
    matches!(name, "function_calls" | "tool_calls")
}

struct Res {
    end: usize,
    outcome: Outcome,
}

/// Read `key="value"` attributes.
fn attributes(attrs: &str) -> Result<Vec<(String, String)>, String> {
    let b = attrs.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        if i >= b.len() {
            return Ok(out);
        }
        let ks = i;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
        {
            i += 1;
        }
        if i == ks {
            return Err(format!("unexpected `{}` in tag attributes", attrs.trim()));
        }
        let key = attrs.get(ks..i).unwrap_or("").to_string();
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            return Err(format!("attribute `{key}` has no value"));
        }
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        let q = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => return Err(format!("attribute `{key}` value is not quoted")),
        };
        let vs = i + 1;
        let Some(ve) = b
            .get(vs..)
            .and_then(|r| memchr::memchr(q, r))
            .map(|p| p + vs)
        else {
            return Err(format!("attribute `{key}` value is not closed"));
        };
        out.push((key, attrs.get(vs..ve).unwrap_or("").to_string()));
        i = ve + 1;
    }
}

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

enum InvokeRes {
    Ok(Candidate, usize),
    Incomplete(Option<String>),
    Fail {
        name: Option<String>,
        reason: String,
        at: usize,
    },
}

/// Parse one invoke whose open tag ends at `tag.end`.
fn parse_invoke(text: &str, tag: &Tag, ctx: &DetectCtx<'_>, tags: &mut TagFinder) -> InvokeRes {
    let attrs = match attributes(&tag.attrs) {
        Ok(a) => a,
        Err(reason) => {
            return InvokeRes::Fail {
                name: None,
                reason: format!("bad invoke tag: {reason}"),
                at: tag.end,
            }
        }
    };
    let name = match attr(&attrs, "name").map(str::trim) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => {
            return InvokeRes::Fail {
                name: None,
                reason: "invoke tag has no `name`".into(),
                at: tag.end,
            }
        }
    };
    let fail = |reason: String, at: usize| InvokeRes::Fail {
        name: Some(name.clone()),
        reason,
        at,
    };
    let b = text.as_bytes();
    let mut args = Map::new();
    let mut i = scan::skip_ws(text, tag.end);
    // JSON body instead of parameters: it runs to the next DSML tag, which must close the
    // invoke (cutting at the tag keeps the span stable while the output streams in).
    if b.get(i) == Some(&b'{') {
        return match tags.next_tag(text, i) {
            Some((s, TagMatch::Full(t))) => {
                let raw = text.get(i..s).unwrap_or("");
                match scan::parse_args_json(raw) {
                    Err(reason) => fail(reason, s),
                    Ok(_) if !(t.close && t.name == "invoke") => fail(
                        format!(
                            "expected the invoke's close tag after its JSON arguments, found {}",
                            describe(text, s)
                        ),
                        s,
                    ),
                    Ok(v) => InvokeRes::Ok(Candidate::new(name, v), t.end),
                }
            }
            _ => InvokeRes::Incomplete(Some(name)),
        };
    }
    loop {
        i = scan::skip_ws(text, i);
        if i >= b.len() {
            return InvokeRes::Incomplete(Some(name));
        }
        let (s, m) = match tags.next_tag(text, i) {
            Some(x) => x,
            None => {
                return fail(
                    format!(
                        "expected a parameter or the invoke's close tag, found {}",
                        describe(text, i)
                    ),
                    i,
                )
            }
        };
        if s != i {
            return fail(
                format!("unexpected text {} inside the invoke", describe(text, i)),
                i,
            );
        }
        let t = match m {
            TagMatch::Full(t) => t,
            _ => return InvokeRes::Incomplete(Some(name)),
        };
        match (t.close, t.name.as_str()) {
            (true, "invoke") => {
                return InvokeRes::Ok(Candidate::new(name, Value::Object(args)), t.end)
            }
            (false, "parameter") => {
                let pattrs = match attributes(&t.attrs) {
                    Ok(a) => a,
                    Err(reason) => return fail(format!("bad parameter tag: {reason}"), t.end),
                };
                let Some(key) = attr(&pattrs, "name").filter(|k| !k.is_empty()) else {
                    return fail("parameter tag has no `name`".into(), t.end);
                };
                // The value runs to the next DSML tag, which must close the parameter.
                let (vs, ve, next_end) = match tags.next_tag(text, t.end) {
                    Some((ce, TagMatch::Full(c))) if c.close && c.name == "parameter" => {
                        (t.end, ce, c.end)
                    }
                    Some((_, TagMatch::Partial)) | None => {
                        return InvokeRes::Incomplete(Some(name))
                    }
                    Some((ce, _)) => {
                        return fail(
                            format!("parameter `{key}` is not closed before the next tag"),
                            ce,
                        )
                    }
                };
                let raw = text.get(vs..ve).unwrap_or("");
                let value = match attr(&pattrs, "string") {
                    Some("true") => Value::String(raw.to_string()),
                    Some("false") => match serde_json::from_str::<Value>(raw.trim()) {
                        Ok(v) => v,
                        Err(e) => {
                            return fail(
                                format!(
                                    "parameter `{key}` is marked string=\"false\" but its value is not JSON: {e}"
                                ),
                                next_end,
                            )
                        }
                    },
                    _ => scan::typed_param(ctx, &name, key, raw),
                };
                if args.contains_key(key) {
                    return fail(format!("duplicate parameter `{key}`"), next_end);
                }
                args.insert(key.to_string(), value);
                i = next_end;
            }
            _ => {
                return fail(
                    format!(
                        "unexpected `{}{}` tag inside the invoke",
                        if t.close { "/" } else { "" },
                        t.name
                    ),
                    s,
                )
            }
        }
    }
}

/// After a failure at `at`: the end of the enclosing block (or invoke, for a bare one),
/// else (at the end of the output) the failing invoke's end, else the end of the text.
fn recover(text: &str, at: usize, block: bool, eof: bool, tags: &mut TagFinder) -> usize {
    let mut pos = at;
    let mut invoke_end = None;
    while let Some((s, m)) = tags.next_tag(text, pos) {
        let TagMatch::Full(t) = m else { break };
        if t.close && is_block(&t.name) {
            return t.end;
        }
        if !t.close && is_block(&t.name) {
            return invoke_end.unwrap_or(s);
        }
        if t.close && t.name == "invoke" {
            if !block {
                return t.end;
            }
            invoke_end.get_or_insert(t.end);
        }
        pos = t.end;
    }
    if !eof {
        // The block's close tag may still arrive: not settled yet.
        return text.len();
    }
    invoke_end.unwrap_or(text.len())
}

fn parse_construct(
    text: &str,
    start: usize,
    open: &Tag,
    ctx: &DetectCtx<'_>,
    tags: &mut TagFinder,
) -> Res {
    let b = text.as_bytes();
    let eof = ctx.eof;
    let pending = Res {
        end: b.len(),
        outcome: Outcome::Pending,
    };
    let block = is_block(&open.name);
    let mut calls = Vec::new();
    let mut i = if block { open.end } else { start };
    loop {
        let j = scan::skip_ws(text, i);
        let done = |calls: Vec<Candidate>, end: usize| Res {
            end,
            outcome: Outcome::calls_or(calls, "DSML tool-call block holds no invoke"),
        };
        if j >= b.len() {
            return if eof { done(calls, i) } else { pending };
        }
        let next = tags.next_tag(text, j);
        let tag = match next {
            Some((s, TagMatch::Full(t))) if s == j => t,
            Some((s, TagMatch::Partial)) if s == j && !eof => return pending,
            _ => {
                // Not a tag: the block ends here (unclosed) or never started properly.
                if calls.is_empty() {
                    return Res {
                        end: open.end,
                        outcome: Outcome::Malformed(
                            None,
                            format!(
                                "expected `<｜DSML｜invoke name=\"…\">` after `<｜DSML｜{}>`, found {}",
                                open.name,
                                describe(text, j)
                            ),
                        ),
                    };
                }
                return done(calls, i);
            }
        };
        if block && tag.close && is_block(&tag.name) {
            return done(calls, tag.end);
        }
        if tag.close || tag.name != "invoke" {
            if calls.is_empty() {
                let end = recover(text, j, block, eof, tags).max(open.end);
                return Res {
                    end,
                    outcome: Outcome::Malformed(
                        None,
                        format!(
                            "unexpected `{}{}` tag in a DSML tool-call block",
                            if tag.close { "/" } else { "" },
                            tag.name
                        ),
                    ),
                };
            }
            return done(calls, i);
        }
        match parse_invoke(text, &tag, ctx, tags) {
            InvokeRes::Ok(c, end) => {
                calls.push(c);
                i = end;
                if !block {
                    return done(calls, i);
                }
            }
            InvokeRes::Incomplete(name) => {
                if !eof {
                    return pending;
                }
                return Res {
                    end: b.len(),
                    outcome: Outcome::Malformed(
                        name,
                        "DSML invoke is cut off: the text ends before `</｜DSML｜invoke>`".into(),
                    ),
                };
            }
            InvokeRes::Fail { name, reason, at } => {
                let end = recover(text, at, block, eof, tags)
                    .max(at.min(b.len()))
                    .max(start + 1);
                return Res {
                    end,
                    outcome: Outcome::failed("DSML invoke", name, &reason),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::detectors::shared::token_blocks::tests::{calls, reason, run};
    use crate::validate::ToolSet;
    use serde_json::json;

    const V32: &str = "Let me look that up.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"unit\" string=\"true\">celsius</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"play_music\">\n<｜DSML｜parameter name=\"artist\" string=\"true\">Nina Simone</｜DSML｜parameter>\n<｜DSML｜parameter name=\"volume\" string=\"false\">40</｜DSML｜parameter>\n<｜DSML｜parameter name=\"options\" string=\"false\">{\"shuffle\": true}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";

    fn tools() -> ToolSet {
        ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"set_light","parameters":{"type":"object","properties":{"room":{"type":"string"},"on":{"type":"boolean"},"brightness":{"type":"integer"}}}}}]"#,
        )
        .unwrap()
    }

    fn run_typed(text: &str, eof: bool) -> Vec<Found> {
        let tools = tools();
        let ctx = DetectCtx { eof, tools: &tools };
        let mut out = Vec::new();
        DeepseekDsml.detect(text, &ctx, &mut out);
        out
    }

    #[test]
    fn v32_block_with_two_invokes() {
        let out = run(&DeepseekDsml, V32, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![
                (
                    "get_weather".into(),
                    json!({"location": "Paris", "unit": "celsius"})
                ),
                (
                    "play_music".into(),
                    json!({"artist": "Nina Simone", "volume": 40, "options": {"shuffle": true}})
                ),
            ]
        );
        assert_eq!(&V32[..out[0].span.start], "Let me look that up.\n\n");
        assert_eq!(out[0].span.end, V32.len());
    }

    #[test]
    fn v4_block_and_ascii_bars() {
        let t = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        assert_eq!(
            calls(&run(&DeepseekDsml, t, true)[0]),
            vec![("get_time".into(), json!({}))]
        );
        let t = "<|DSML|tool_calls><|DSML|invoke name=\"search\"><|DSML|parameter name=\"query\" string=\"true\">a.kt</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>";
        assert_eq!(
            calls(&run(&DeepseekDsml, t, true)[0]),
            vec![("search".into(), json!({"query": "a.kt"}))]
        );
    }

    #[test]
    fn string_values_are_verbatim() {
        let t = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"send_message\">\n<｜DSML｜parameter name=\"to\" string=\"true\">007</｜DSML｜parameter>\n<｜DSML｜parameter name=\"text\" string=\"true\"> a < b & \"c\" </｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(
            calls(&run(&DeepseekDsml, t, true)[0]),
            vec![(
                "send_message".into(),
                json!({"to": "007", "text": " a < b & \"c\" "})
            )]
        );
    }

    #[test]
    fn untyped_values_follow_the_schema() {
        let t = "<｜DSML｜function_calls><｜DSML｜invoke name=\"set_light\"><｜DSML｜parameter name=\"room\">kitchen</｜DSML｜parameter><｜DSML｜parameter name=\"on\">True</｜DSML｜parameter><｜DSML｜parameter name=\"brightness\">70</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
        let out = run_typed(t, true);
        assert_eq!(
            calls(&out[0]),
            vec![(
                "set_light".into(),
                json!({"room": "kitchen", "on": true, "brightness": 70})
            )]
        );
        // string="false" promises JSON: a Python-style `True` is not repaired.
        let t = t.replace("name=\"on\">", "name=\"on\" string=\"false\">");
        let r = reason(&run_typed(&t, true)[0]);
        assert!(r.contains("not JSON"), "{r}");
    }

    #[test]
    fn json_body_and_bare_invoke() {
        let t = "ok <｜DSML｜invoke name=\"add\">\n{\"x\": 2, \"y\": 3}\n</｜DSML｜invoke> done";
        let out = run(&DeepseekDsml, t, true);
        assert_eq!(
            calls(&out[0]),
            vec![("add".into(), json!({"x": 2, "y": 3}))]
        );
        assert_eq!(&t[out[0].span.end..], " done");
        assert_eq!(&t[..out[0].span.start], "ok ");
    }

    #[test]
    fn malformed_cases() {
        let dup = "<｜DSML｜function_calls><｜DSML｜invoke name=\"add\"><｜DSML｜parameter name=\"x\" string=\"false\">1</｜DSML｜parameter><｜DSML｜parameter name=\"x\" string=\"false\">2</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls> after";
        let out = run(&DeepseekDsml, dup, true);
        assert!(reason(&out[0]).contains("duplicate parameter"));
        assert_eq!(&dup[out[0].span.end..], " after");
        let noname = "<｜DSML｜function_calls><｜DSML｜invoke><｜DSML｜parameter name=\"x\" string=\"false\">1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
        assert!(reason(&run(&DeepseekDsml, noname, true)[0]).contains("no `name`"));
        let unclosed = "<｜DSML｜function_calls><｜DSML｜invoke name=\"add\"><｜DSML｜parameter name=\"x\" string=\"false\">1</｜DSML｜invoke></｜DSML｜function_calls>";
        let out = run(&DeepseekDsml, unclosed, true);
        assert!(reason(&out[0]).contains("not closed"), "{out:?}");
        assert_eq!(out[0].span.end, unclosed.len());
        let badjson = "<｜DSML｜invoke name=\"add\">{\"x\": 1,, }</｜DSML｜invoke>";
        assert!(reason(&run(&DeepseekDsml, badjson, true)[0]).contains("malformed JSON"));
        let empty = "<｜DSML｜function_calls>\n</｜DSML｜function_calls>";
        assert!(reason(&run(&DeepseekDsml, empty, true)[0]).contains("no invoke"));
    }

    #[test]
    fn streaming_and_cut_off() {
        let start = V32.find('<').unwrap();
        for cut in start + 20..V32.len() {
            if !V32.is_char_boundary(cut) {
                continue;
            }
            let out = run(&DeepseekDsml, &V32[..cut], false);
            assert_eq!(out.len(), 1, "{:?}", &V32[..cut]);
            assert_eq!(out[0].kind, FoundKind::Pending, "{:?}", &V32[..cut]);
            assert_eq!(out[0].span, start..cut);
        }
        let cut = &V32[..V32.find("</｜DSML｜invoke>").unwrap()];
        let out = run(&DeepseekDsml, cut, true);
        assert!(reason(&out[0]).contains("cut off"));
        // Unclosed block after complete invokes is fine at the end of output.
        let t = &V32[..V32.rfind("</｜DSML｜function_calls>").unwrap()];
        assert_eq!(calls(&run(&DeepseekDsml, t, true)[0]).len(), 2);
    }

    #[test]
    fn plain_xml_and_prose_are_ignored() {
        assert!(run(
            &DeepseekDsml,
            "<function_calls><invoke name=\"x\"></invoke></function_calls>",
            true
        )
        .is_empty());
        assert!(run(
            &DeepseekDsml,
            "The DSML token looks like ｜DSML｜ in prose.",
            true
        )
        .is_empty());
    }

    #[test]
    fn adversarial_input_is_fast() {
        for p in [
            "<｜DSML｜function_calls>",
            "<｜DSML｜invoke name=\"a\">",
            "<｜DSML｜parameter name=\"a\">",
            "</｜DSML｜parameter>",
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"a\"><｜DSML｜parameter name=\"a\" string=\"true\">x",
            "<｜DSML｜invoke name=\"a\"><｜DSML｜parameter name=\"a\">1</｜DSML｜parameter><｜DSML｜parameter name=\"a\">",
            "DSML",
            "<|DSML|invoke name=\"",
        ] {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&DeepseekDsml, &t, true);
            let _ = run(&DeepseekDsml, &t, false);
        }
    }
}
