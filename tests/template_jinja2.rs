//! Our minijinja rendering of chat templates equals Python jinja2's (the engine HF templates
//! are written for), on the same template and inputs: hand-written templates that exercise
//! what HF templates use, and the real Qwen2.5-Coder GGUF's own template.
//!
//! Needs the test peers' Python with `jinja2` (`scripts/setup --test` installs it; `.ci/run`
//! runs that). Not skippable: a missing python or jinja2 fails the test with the fix.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use hearth::llm::{ChatMessage, ChatTemplate};
use hearth_testkit::venv::{require, Venv};
use serde_json::{json, Value};

/// The test peers' Python with jinja2 (found once), or a panic naming the fix.
fn jinja2_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| require(Venv::Peers, "jinja2").unwrap_or_else(|why| panic!("{why}")))
}

/// Run tests/templates/render.py (Python jinja2) on one request.
fn python(req: &Value) -> std::process::Output {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/templates/render.py");
    let mut child = Command::new(jinja2_python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test peers' python starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn python_render(
    template: &str,
    messages: &[ChatMessage],
    tools: Option<&Value>,
    gen: bool,
) -> String {
    let out = python(&json!({
        "template": template,
        "messages": messages,
        "tools": tools,
        "add_generation_prompt": gen,
        "bos_token": "<s>",
        "eos_token": "</s>",
    }));
    assert!(
        out.status.success(),
        "python jinja2 failed (pip install jinja2): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "set_light", "description": "Turn a light on or off.",
          "parameters": {"type": "object", "properties": {
              "room": {"type": "string", "enum": ["kitchen", "living room"]},
              "on": {"type": "boolean"}}, "required": ["room", "on"], "additionalProperties": false}}},
        {"type": "function", "function": {"name": "get_time", "description": "Get the local time — now.",
          "parameters": {"type": "object", "properties": {}}}}
    ])
}

fn conversations() -> Vec<Vec<ChatMessage>> {
    vec![
        vec![ChatMessage::user("turn on the kitchen light")],
        vec![
            ChatMessage::system("You are hearth. Answer briefly."),
            ChatMessage::user("what time is it?"),
            ChatMessage::assistant_calls(
                "",
                [("get_time_0".to_string(), "get_time".to_string(), json!({}))],
            ),
            ChatMessage::tool("get_time_0", "get_time", "14:05"),
            ChatMessage::assistant("It is 14:05."),
            ChatMessage::user("and turn on the light in the \"living room\", please ✓"),
            ChatMessage::assistant_calls(
                "Sure.",
                [
                    (
                        "a1B2c3D4e".to_string(),
                        "set_light".to_string(),
                        json!({"room": "living room", "on": true}),
                    ),
                    (
                        "x".to_string(),
                        "set_light".to_string(),
                        json!({"room": "kitchen", "on": false, "level": 0.5}),
                    ),
                ],
            ),
            ChatMessage::tool("a1B2c3D4e", "set_light", "living room light on"),
            ChatMessage::tool("x", "set_light", "{\"ok\": true}"),
        ],
    ]
}

fn compare(name: &str, source: &str) {
    let t = ChatTemplate::new(source, "<s>", "</s>").unwrap();
    let tools = tools();
    for (i, conv) in conversations().iter().enumerate() {
        for gen in [true, false] {
            for tl in [Some(&tools), None] {
                let ours = t.render(conv, tl, gen).unwrap();
                let theirs = python_render(source, conv, tl, gen);
                assert_eq!(
                    ours,
                    theirs,
                    "{name}: conversation {i}, gen={gen}, tools={}",
                    tl.is_some()
                );
            }
        }
    }
}

#[test]
fn chatml_tools_template_matches_jinja2() {
    compare("chatml-tools", include_str!("templates/chatml-tools.jinja"));
}

#[test]
fn python_methods_loop_controls_and_tojson_match_jinja2() {
    let src = r#"{{ bos_token }}{% for m in messages %}{% if loop.index0 > 5 %}{% break %}{% endif %}
{% if m.role == 'tool' %}{% continue %}{% endif %}
[{{ m.role.upper() }}] {{ m.content.strip().replace('"', "'") | trim }}{% if m.content.startswith('and') %} (cont.){% endif %}
{% if m.tool_calls is defined %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson(indent=2) }} {{ c.function.arguments | tojson }} {{ c.id | length }}
{% for k, v in c.function.arguments.items() %}{{ k }}={{ v }};{% endfor %}
{% endfor %}{% endif %}{% endfor %}
{% if tools %}{{ tools | tojson }}{{ tools[0].function.name.split('_') | join('/') }}{% endif %}
{{ messages | length }} {{ "%s-%d" | format("x", 3) }} {{ messages[-1].content.title() }} {{ eos_token }}"#;
    compare("features", src);
}

#[test]
fn raise_exception_fails_on_both_sides() {
    let src = "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tool role') }}{% endif %}{{ m.content }}{% endfor %}";
    let t = ChatTemplate::new(src, "", "").unwrap();
    let conv = &conversations()[1];
    let err = t.render(conv, None, true).unwrap_err().to_string();
    assert!(err.contains("no tool role"), "{err}");
    // and jinja2 refuses it too
    let out = python(
        &json!({"template": src, "messages": conv, "tools": null, "add_generation_prompt": true}),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool role"));
}

/// The real model's own template (read from the GGUF's metadata) renders identically.
#[cfg(feature = "llm")]
#[test]
fn qwen_gguf_template_matches_jinja2() {
    let Some(path) = common_model::qwen_path() else {
        return;
    };
    let src = gguf_template(path);
    assert!(
        src.contains("tool_call"),
        "a Qwen template with a tools branch"
    );
    compare("qwen2.5-coder GGUF", &src);
}

#[cfg(feature = "llm")]
use hearth_testkit::model as common_model;

/// The model's own chat template, as the engine reads it from the GGUF's metadata (the
/// engine that `hearth ask` starts, asked for what it knows of its model).
#[cfg(feature = "llm")]
fn gguf_template(model: PathBuf) -> String {
    use hearth::llm::EngineMsg;
    use hearth::supervisor::{start_text, TextOptions};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut opts = TextOptions::new(hearth::preset::Preset::load("qwen2.5-coder").unwrap());
        opts.model = Some(model);
        let text = start_text(opts).await.expect("the engine starts");
        let info = ractor::call!(text.engine, EngineMsg::Info).unwrap();
        text.stop().await;
        info.chat_template
            .expect("the Qwen GGUF carries tokenizer.chat_template")
    })
}
