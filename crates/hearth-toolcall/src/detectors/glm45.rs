//! `glm45`: GLM-4.5 / GLM-4.6 / GLM-4.7 `<arg_key>`/`<arg_value>` tool calls.
//!
//! GLM-4.5 and GLM-4.6 (zai-org) write the function name right after `<tool_call>`, then one
//! key/value pair per argument, each on its own line:
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Beijing</arg_value>
//! </tool_call>
//! ```
//!
//! GLM-4.7 drops the newlines: `<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>`.
//! GLM-4.6 sometimes emits the whole call JSON-escaped (seen with coding agents, handled by
//! SGLang and vLLM): the separators are the two characters `\n` instead of newlines and the
//! values are escaped like the body of a JSON string (`[{\"id\": \"1\"}]`). When the name is
//! followed by a literal `\n`, the call is read as escaped and each value is unescaped once
//! (an invalid escape is `Malformed`, never guessed).
//!
//! Values are typed by the tool's JSON Schema (`scan::typed_param`). A call with no
//! arguments is `<tool_call>name\n</tool_call>`. Edge cases: several calls (one block each);
//! a value may contain `</arg_value>` as text (it only closes when followed by `<arg_key>` or
//! `</tool_call>`); a duplicate key, an `<arg_key>` without its `<arg_value>`, or stray text
//! is `Malformed`; a block cut by the end of output is `Malformed` (`Pending` while
//! streaming). A `<tool_call>` holding JSON or other XML is not this format.

use serde_json::{Map, Value};

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

use super::shared::markers::{prefix_of, preview};
use super::shared::memo_find::NextWhere;
use super::shared::tagged_blocks::{CLOSE, OPEN};
use super::shared::xml_call::{detect_blocks, Step, MAX_NAME};

pub struct Glm45;

const KEY_OPEN: &str = "<arg_key>";
const KEY_CLOSE: &str = "</arg_key>";
const VALUE_OPEN: &str = "<arg_value>";
const VALUE_CLOSE: &str = "</arg_value>";

impl Detector for Glm45 {
    fn name(&self) -> &str {
        "glm45"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[OPEN]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut value_close: NextWhere<'_, fn(&str, usize) -> bool> =
            NextWhere::new(text, VALUE_CLOSE, structural_value_close);
        detect_blocks(text, ctx, out, OPEN, CLOSE, |start| {
            parse_call(text, ctx, start, &mut value_close)
        });
    }
}

/// Skip whitespace and literal `\n` pairs; returns the new offset and whether a literal
/// `\n` was seen.
fn skip_sep(text: &str, mut i: usize) -> (usize, bool) {
    let b = text.as_bytes();
    let mut escaped = false;
    loop {
        match b.get(i) {
            Some(c) if c.is_ascii_whitespace() => i += 1,
            Some(b'\\') if b.get(i + 1) == Some(&b'n') => {
                i += 2;
                escaped = true;
            }
            _ => return (i, escaped),
        }
    }
}

/// A `</arg_value>` closes its value when what follows (after separators) is the next
/// `<arg_key>`, the end of the call, or the end of the text so far.
fn structural_value_close(text: &str, c: usize) -> bool {
    let (k, _) = skip_sep(text, c + VALUE_CLOSE.len());
    let rest = &text[k..];
    rest.is_empty()
        || rest == "\\"
        || [KEY_OPEN, CLOSE]
            .iter()
            .any(|m| rest.starts_with(m) || prefix_of(rest, m))
}

fn parse_call(
    text: &str,
    ctx: &DetectCtx<'_>,
    start: usize,
    value_close: &mut NextWhere<'_, fn(&str, usize) -> bool>,
) -> Step<Vec<Candidate>> {
    let b = text.as_bytes();
    let ns = start + OPEN.len();
    // the name: up to a newline, a literal `\n`, or `<`
    let mut j = ns;
    loop {
        match b.get(j) {
            None => {
                let partial = text[ns..].trim();
                let partial = partial.strip_suffix('\\').unwrap_or(partial);
                return if !ctx.eof && (partial.is_empty() || scan::is_ident(partial)) {
                    Step::Incomplete(None, "<tool_call> is not closed".into())
                } else {
                    Step::NotOurs
                };
            }
            Some(b'\n' | b'<') => break,
            Some(b'\\') if b.get(j + 1) == Some(&b'n') => break,
            Some(_) if j - ns > MAX_NAME => return Step::NotOurs,
            Some(_) => j += 1,
        }
    }
    let name = text[ns..j].trim();
    if !scan::is_ident(name) {
        return Step::NotOurs;
    }
    let (mut k, escaped) = skip_sep(text, j);
    let rest = &text[k..];
    if !(rest.starts_with(KEY_OPEN) || rest.starts_with(CLOSE)) {
        return if !ctx.eof
            && (rest.is_empty()
                || rest == "\\"
                || prefix_of(rest, KEY_OPEN)
                || prefix_of(rest, CLOSE))
        {
            Step::Incomplete(
                Some(name.to_string()),
                format!("<tool_call>{name} is not closed"),
            )
        } else {
            Step::NotOurs
        };
    }
    let malformed = |reason: String, at: usize| Step::Malformed {
        name: Some(name.to_string()),
        reason,
        at,
    };
    let incomplete = || {
        Step::Incomplete(
            Some(name.to_string()),
            format!("<tool_call>{name} is not closed by </tool_call>"),
        )
    };
    let mut args = Map::new();
    loop {
        let rest = &text[k..];
        if rest.starts_with(CLOSE) {
            let call = Candidate::new(name, Value::Object(args));
            return Step::Done(vec![call], k + CLOSE.len());
        }
        if !rest.starts_with(KEY_OPEN) {
            if rest.is_empty()
                || rest == "\\"
                || prefix_of(rest, KEY_OPEN)
                || prefix_of(rest, CLOSE)
            {
                return incomplete();
            }
            return malformed(
                format!(
                    "unexpected text {:?} in <tool_call>{name}: expected <arg_key> or </tool_call>",
                    preview(rest)
                ),
                k,
            );
        }
        // <arg_key>KEY</arg_key>
        let ks = k + KEY_OPEN.len();
        let mut e = ks;
        loop {
            match b.get(e) {
                None => return incomplete(),
                Some(b'<') => break,
                Some(_) if e - ks > MAX_NAME => {
                    return malformed(format!("over-long <arg_key> in <tool_call>{name}"), e)
                }
                Some(_) => e += 1,
            }
        }
        let after_key = &text[e..];
        if !after_key.starts_with(KEY_CLOSE) {
            if prefix_of(after_key, KEY_CLOSE) {
                return incomplete();
            }
            return malformed(
                format!("<arg_key> in <tool_call>{name} is not closed by </arg_key>"),
                e,
            );
        }
        let key = text[ks..e].trim();
        if key.is_empty() {
            return malformed(format!("empty <arg_key> in <tool_call>{name}"), e);
        }
        let (v, _) = skip_sep(text, e + KEY_CLOSE.len());
        let rest = &text[v..];
        if !rest.starts_with(VALUE_OPEN) {
            if rest.is_empty() || rest == "\\" || prefix_of(rest, VALUE_OPEN) {
                return incomplete();
            }
            return malformed(
                format!(
                    "<arg_key>{key}</arg_key> in <tool_call>{name} is not followed by <arg_value>"
                ),
                v,
            );
        }
        let vs = v + VALUE_OPEN.len();
        let Some(c) = value_close.find(vs) else {
            return incomplete();
        };
        let raw = &text[vs..c];
        if raw.contains(KEY_OPEN) && raw.contains(KEY_CLOSE) {
            return malformed(
                format!("<arg_value> for {key} in <tool_call>{name} is missing its </arg_value>"),
                vs,
            );
        }
        if args.contains_key(key) {
            return malformed(
                format!("argument {key} given twice in <tool_call>{name}"),
                c,
            );
        }
        let value = if escaped {
            match unescape(raw) {
                Some(s) => scan::typed_param(ctx, name, key, &s),
                None => {
                    return malformed(
                        format!(
                        "escaped <arg_value> for {key} in <tool_call>{name} has an invalid escape"
                    ),
                        vs,
                    )
                }
            }
        } else {
            scan::typed_param(ctx, name, key, raw)
        };
        args.insert(key.to_string(), value);
        k = skip_sep(text, c + VALUE_CLOSE.len()).0;
    }
}

/// Undo one level of JSON string escaping (`\"` → `"`, `\\n` → newline, `\\` → `\`).
fn unescape(raw: &str) -> Option<String> {
    if !raw.contains('\\') {
        return Some(raw.to_string());
    }
    let mut quoted = String::with_capacity(raw.len() + 2);
    quoted.push('"');
    // a raw quote inside is escaped here so it survives as itself
    let mut prev_backslash = false;
    for ch in raw.chars() {
        match ch {
            '"' if !prev_backslash => quoted.push_str("\\\""),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            _ => quoted.push(ch),
        }
        prev_backslash = ch == '\\' && !prev_backslash;
    }
    quoted.push('"');
    serde_json::from_str::<String>(&quoted).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{calls, detect, reason, tools};
    use serde_json::json;

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect(
            &Glm45,
            text,
            eof,
            &tools(
                r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
                "city":{"type":"string"},"days":{"type":"integer"}}}}},
               {"type":"function","function":{"name":"todo_write","parameters":{"type":"object","properties":{
                "todos":{"type":"array"}}}}}]"#,
            ),
        )
    }

    #[test]
    fn glm45_glm47_and_no_args() {
        let t = "I'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";
        let out = run(t, true);
        assert_eq!(out[0].span, t.find('<').unwrap()..t.len());
        assert_eq!(
            calls(&out[0])[0].arguments,
            json!({"city": "Beijing", "days": 3})
        );
        let t = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call><tool_call>get_time</tool_call>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(calls(&out[0])[0].arguments, json!({"city": "Paris"}));
        assert_eq!(calls(&out[1])[0].arguments, json!({}));
        let c = calls(&run("<tool_call>get_time\n</tool_call>", true)[0]);
        assert_eq!(c[0].name, "get_time");
    }

    #[test]
    fn escaped_variant() {
        let t = r#"<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{\"id\": \"1\", \"task\": \"a\\nb\"}]</arg_value>\n</tool_call>"#;
        let c = calls(&run(t, true)[0]);
        assert_eq!(
            c[0].arguments,
            json!({"todos": [{"id": "1", "task": "a\nb"}]})
        );
        let t = r#"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>bad \q</arg_value>\n</tool_call>"#;
        assert!(reason(&run(t, true)[0]).contains("invalid escape"));
    }

    #[test]
    fn literal_closer_in_value() {
        let t = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>a</arg_value> b</arg_value>\n</tool_call>";
        assert_eq!(
            calls(&run(t, true)[0])[0].arguments,
            json!({"city": "a</arg_value> b"})
        );
    }

    #[test]
    fn not_ours_and_malformed() {
        assert!(run("<tool_call>{\"name\": \"a\"}</tool_call>", true).is_empty());
        assert!(run("<tool_call>\n<function=a>\n</function>\n</tool_call>", true).is_empty());
        assert!(run("<tool_call><name>a</name></tool_call>", true).is_empty());
        assert!(run("<tool_call>get_weather {\"city\": 1}</tool_call>", true).is_empty());
        let t =
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_key>x</arg_key>\n</tool_call>";
        assert!(reason(&run(t, true)[0]).contains("not followed by <arg_value>"));
        let t = "<tool_call>get_weather\n<arg_key>city</arg_key><arg_value>a</arg_value><arg_key>city</arg_key><arg_value>b</arg_value></tool_call>";
        assert!(reason(&run(t, true)[0]).contains("twice"));
    }

    #[test]
    fn unclosed_and_streaming() {
        let t = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>";
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        assert!(reason(&run(t, true)[0]).contains("not closed"));
        for t in [
            "<tool_call>",
            "<tool_call>get_wea",
            "<tool_call>get_weather\n<arg_",
            "<tool_call>get_weather\\",
        ] {
            assert_eq!(run(t, false).len(), 1, "{t}");
        }
        assert!(run("<tool_call>get_wea", true).is_empty());
    }

    #[test]
    fn adversarial_inputs_finish() {
        let _ = run(
            &"<tool_call>a\n<arg_key>b</arg_key><arg_value>".repeat(40_000),
            true,
        );
        let _ = run(&"</arg_value>\\n".repeat(100_000), true);
        let _ = run(
            &format!(
                "<tool_call>a<arg_key>b</arg_key><arg_value>{}",
                "</arg_value>x".repeat(80_000)
            ),
            false,
        );
        let _ = run(&"<tool_call>a\\n".repeat(100_000), true);
        let _ = run(&format!("<tool_call>a{}", "\\n".repeat(500_000)), false);
    }
}
