//! Chat templates: the GGUF's own `tokenizer.chat_template` (Jinja, written for Python's
//! jinja2 as Hugging Face `transformers` runs it), rendered with minijinja.
//!
//! What the HF templates rely on, and how it is provided here:
//! - `trim_blocks` and `lstrip_blocks` on, as `apply_chat_template` sets them;
//! - `tojson` as transformers defines it (`json.dumps(x, ensure_ascii=False, indent=…)`):
//!   Python's separators (`", "`, `": "`), no HTML escaping, key order kept;
//! - `raise_exception(msg)` (a render error carrying the template's message);
//! - `strftime_now(fmt)` (Llama 3.x puts today's date in the system prompt);
//! - loop controls (`break`, `continue`) and Python string/dict methods (`.strip()`,
//!   `.startswith()`, `.items()`, …) through minijinja-contrib's pycompat.
//!
//! [`TemplateCaps::probe`] renders a small conversation to learn whether the template has a
//! tool role and whether it shows call ids, so the hop loop knows which round trip it can use.

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};
use serde::Serialize;
use serde_json::Value as Json;

/// One message of a conversation, in the shape HF chat templates read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's name on a `tool` message (some templates print it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A call on an assistant message (OpenAI / HF shape).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: MessageFunction,
}

/// The function part of [`MessageToolCall`]; `arguments` is an object, as HF templates
/// expect (they apply `tojson` themselves).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageFunction {
    pub name: String,
    pub arguments: Json,
}

impl ChatMessage {
    fn plain(role: &str, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::plain("system", content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::plain("user", content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain("assistant", content)
    }

    /// An assistant turn that called tools: `(id, name, arguments)` each.
    pub fn assistant_calls(
        content: impl Into<String>,
        calls: impl IntoIterator<Item = (String, String, Json)>,
    ) -> Self {
        let mut m = Self::plain("assistant", content);
        m.tool_calls = calls
            .into_iter()
            .map(|(id, name, arguments)| MessageToolCall {
                id,
                kind: "function",
                function: MessageFunction { name, arguments },
            })
            .collect();
        m
    }

    /// A tool result for the call `id`.
    pub fn tool(
        id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let mut m = Self::plain("tool", content);
        m.tool_call_id = Some(id.into());
        m.name = Some(name.into());
        m
    }
}

/// Errors compiling or rendering a chat template.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("the chat template does not compile: {0:#}; fix the template or override it in the preset (`chat_template = \"…\"`)")]
    Compile(#[source] Error),
    #[error("the chat template failed to render: {0:#}")]
    Render(#[source] Error),
    #[error("the model file has no tokenizer.chat_template; set `chat_template` in the preset")]
    Missing,
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").finish_non_exhaustive()
    }
}

const NAME: &str = "chat";

impl ChatTemplate {
    /// Compile `source`; `bos` and `eos` are the model's `bos_token` / `eos_token` strings
    /// (templates print them).
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(TemplateError::Compile)?;
        env.set_syntax(syntax);
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(|state, value, method, args| {
            if method == "title" && args.is_empty() {
                if let Some(s) = value.as_str() {
                    return Ok(Value::from(py_title(s)));
                }
            }
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        });
        env.add_filter("title", |s: &str| py_title(s));
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(NAME, source.to_string())
            .map_err(TemplateError::Compile)?;
        Ok(ChatTemplate {
            env,
            bos: bos.to_string(),
            eos: eos.to_string(),
        })
    }

    /// Render `messages` (and `tools`, an OpenAI-style list, when given).
    pub fn render(
        &self,
        messages: &[ChatMessage],
        tools: Option<&Json>,
        add_generation_prompt: bool,
    ) -> Result<String, TemplateError> {
        let tmpl = self.env.get_template(NAME).map_err(TemplateError::Render)?;
        let messages = serde_json::to_value(messages).map_err(|e| {
            TemplateError::Render(Error::new(ErrorKind::BadSerialization, e.to_string()))
        })?;
        let ctx = minijinja::context! {
            messages => to_value(messages)?,
            tools => tools.cloned().map(to_value).transpose()?,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos.as_str(),
            eos_token => self.eos.as_str(),
        };
        tmpl.render(ctx).map_err(TemplateError::Render)
    }

    /// What the template adds to open the model's turn after a user message: the rendering
    /// with the generation prompt minus the one without. `None` when the template fails on
    /// the probe or the one rendering is not the other plus a suffix.
    pub(crate) fn generation_prompt(&self) -> Option<String> {
        let msgs = [ChatMessage::user("probe")];
        let with = self.render(&msgs, None, true).ok()?;
        let without = self.render(&msgs, None, false).ok()?;
        with.strip_prefix(without.as_str()).map(str::to_string)
    }
}

/// What a template can express, learnt by rendering a probe conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct TemplateCaps {
    /// A `tool` message's content appears in the prompt (results can use the tool role).
    pub tool_role: bool,
    /// Assistant `tool_calls` appear in the prompt (the model sees its own call).
    pub renders_calls: bool,
    /// The call id appears in the prompt (ids round-trip through the template).
    pub renders_ids: bool,
}

impl TemplateCaps {
    /// Render a probe conversation with unique markers and see which survive.
    pub fn probe(t: &ChatTemplate) -> TemplateCaps {
        const ID: &str = "probeid7Qz";
        const TOOL: &str = "probe_tool_9Xk";
        const RESULT: &str = "probe-result-4Wv";
        let tools = serde_json::json!([{"type": "function", "function": {
            "name": TOOL, "description": "probe",
            "parameters": {"type": "object", "properties": {}}}}]);
        let msgs = [
            ChatMessage::user("probe"),
            ChatMessage::assistant_calls(
                "",
                [(ID.to_string(), TOOL.to_string(), serde_json::json!({}))],
            ),
            ChatMessage::tool(ID, TOOL, RESULT),
        ];
        match t.render(&msgs, Some(&tools), true) {
            Ok(out) => {
                // The tool list itself names TOOL; a rendered call names it a second time.
                let calls = out.matches(TOOL).count() >= 2;
                TemplateCaps {
                    tool_role: out.contains(RESULT),
                    renders_calls: calls,
                    renders_ids: out.contains(ID),
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "template probe with a tool role failed");
                TemplateCaps {
                    tool_role: false,
                    renders_calls: false,
                    renders_ids: false,
                }
            }
        }
    }
}

fn to_value(json: Json) -> Result<Value, TemplateError> {
    use serde::Deserialize;
    Value::deserialize(json)
        .map_err(|e| TemplateError::Render(Error::new(ErrorKind::BadSerialization, e.to_string())))
}

/// Python's `str.title()`: a letter after a non-letter is upper-cased, other letters lowered.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_letter = true;
        } else {
            out.push(c);
            prev_letter = false;
        }
    }
    out
}

fn raise_exception(msg: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

fn strftime_now(fmt: String) -> Result<Value, Error> {
    let now = jiff::Zoned::now();
    jiff::fmt::strtime::format(fmt.as_bytes(), &now)
        .map(Value::from)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("strftime_now: {e}")))
}

/// `tojson` as transformers defines it: `json.dumps(x, ensure_ascii=False, indent=indent)`.
fn tojson(value: &Value, args: &[Value], kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = match args.first() {
        Some(v) if !v.is_none() => Some(usize::try_from(v.clone())?),
        _ => kwargs.get::<Option<usize>>("indent")?,
    };
    // Accepted and ignored where they equal the defaults; anything else is unsupported.
    let _ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut json: Json = serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    if sort_keys == Some(true) {
        sort_json_keys(&mut json);
    }
    Ok(Value::from_safe_string(python_json(&json, indent)))
}

fn sort_json_keys(v: &mut Json) {
    match v {
        Json::Object(m) => {
            m.sort_keys();
            m.values_mut().for_each(sort_json_keys);
        }
        Json::Array(a) => a.iter_mut().for_each(sort_json_keys),
        _ => {}
    }
}

/// Python's `json.dumps(v, ensure_ascii=False, indent=indent)` output.
pub(crate) fn python_json(v: &Json, indent: Option<usize>) -> String {
    let mut out = String::new();
    write_py(&mut out, v, indent, 0);
    out
}

fn write_py(out: &mut String, v: &Json, indent: Option<usize>, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', n * depth));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v {
        Json::Object(m) if !m.is_empty() => {
            out.push('{');
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write_py_str(out, k);
                out.push_str(": ");
                write_py(out, val, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
        Json::Array(a) if !a.is_empty() => {
            out.push('[');
            for (i, val) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write_py(out, val, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Object(_) => out.push_str("{}"),
        Json::Array(_) => out.push_str("[]"),
        Json::String(s) => write_py_str(out, s),
        Json::Number(n) => out.push_str(&py_number(n)),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Null => out.push_str("null"),
    }
}

/// Python prints floats with `repr`: `1.0`, `1e-05`, `1e+20`; serde_json differs for exponents.
fn py_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        if let Some(f) = n.as_f64() {
            let s = format!("{f:?}");
            if let Some((mant, exp)) = s.split_once('e') {
                let (sign, digits) = match exp.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', exp),
                };
                return format!("{mant}e{sign}{digits:0>2}");
            }
            return s;
        }
    }
    n.to_string()
}

fn write_py_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_json_matches_json_dumps() {
        let v = json!({"a": 1, "b": [1, 2.5, "x\"y"], "c": {}, "d": [], "é": null, "f": 1e-5});
        assert_eq!(
            python_json(&v, None),
            r#"{"a": 1, "b": [1, 2.5, "x\"y"], "c": {}, "d": [], "é": null, "f": 1e-05}"#
        );
        assert_eq!(
            python_json(&json!({"a": [1, {"b": true}]}), Some(2)),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": true\n    }\n  ]\n}"
        );
    }

    #[test]
    fn renders_hf_features() {
        let src = "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}\
                   [{{ m.role | upper }}:{{ m.content.strip() }}]{% endfor %}\
                   {{ tools | tojson }}{% if add_generation_prompt %}<gen>{% endif %}";
        let t = ChatTemplate::new(src, "<s>", "</s>").unwrap();
        let out = t
            .render(
                &[
                    ChatMessage::system("  be brief "),
                    ChatMessage::user("hi"),
                    ChatMessage::user("never"),
                ],
                Some(&json!([{"name": "<x>"}])),
                true,
            )
            .unwrap();
        assert_eq!(out, r#"[SYSTEM:be brief][USER:hi][{"name": "<x>"}]<gen>"#);
    }

    #[test]
    fn raise_exception_is_a_render_error_with_the_message() {
        let t = ChatTemplate::new("{{ raise_exception('roles must alternate') }}", "", "").unwrap();
        let err = t.render(&[], None, false).unwrap_err().to_string();
        assert!(err.contains("roles must alternate"), "{err}");
    }

    #[test]
    fn bad_template_is_a_compile_error() {
        let err = ChatTemplate::new("{% for %}", "", "")
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not compile"), "{err}");
    }

    #[test]
    fn probe_sees_tool_role_and_ids() {
        let with = ChatTemplate::new(
            "{% for m in messages %}{% if m.role == 'tool' %}[{{ m.tool_call_id }}={{ m.content }}]\
             {% elif m.tool_calls %}{% for c in m.tool_calls %}{{ c.function.name }}{% endfor %}\
             {% endif %}{% endfor %}{{ tools | tojson }}",
            "",
            "",
        )
        .unwrap();
        let caps = TemplateCaps::probe(&with);
        assert!(
            caps.tool_role && caps.renders_ids && caps.renders_calls,
            "{caps:?}"
        );
        let without = ChatTemplate::new(
            "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tool role') }}\
             {% endif %}{{ m.content }}{% endfor %}",
            "",
            "",
        )
        .unwrap();
        assert_eq!(
            TemplateCaps::probe(&without),
            TemplateCaps {
                tool_role: false,
                renders_calls: false,
                renders_ids: false
            }
        );
    }
}
