//! Tool manifests: `tools/*.toml`, one or more `[[tool]]` tables per file.
//!
//! ```toml
//! [[tool]]
//! name = "set_light"
//! description = "Turn a light on or off in one room."
//! say = "The {{ room }} light is {{ 'on' if on else 'off' }}."   # optional spoken confirmation
//!                                                # (`{{ result }}` is the tool's output text)
//! [tool.parameters]            # JSON Schema of the arguments (an object schema), as TOML
//! type = "object"
//! required = ["room", "on"]
//! additionalProperties = false
//! [tool.parameters.properties.room]
//! type = "string"
//! enum = ["kitchen", "living room", "bedroom", "bathroom"]
//! [tool.parameters.properties.on]
//! type = "boolean"
//! # a free string may list `examples = ["Oma", "the twins"]`: never a limit, only words the
//! # recogniser is told to expect
//! [tool.exec]                  # exactly one executor table per tool
//! argv = ["./demo-home", "light", "{{ room }}", "{{ 'on' if on else 'off' }}"]
//!                              # argv[0]: fixed, never a template; ./x is this file's directory
//! timeout_ms = 5000            # default 10000
//! max_output_bytes = 4096      # default 2048: what the prompt can hold
//! allow_leading_dash = []      # argv indexes whose value may begin with `-` (default none)
//! pass_env = ["HEARTH_DEMO_STATE"]  # hearth's variables the program gets besides PATH, HOME,
//!                                   # LANG, LANGUAGE, TZ and LC_* (default none)
//! [[tool.intent]]              # optional: sentences that run the tool with no LLM hop
//! sentences = ["(turn|switch) {on} [the] {room} light[s]"]
//! args = {}                    # fixed arguments (`{ locked = true }` for "lock …")
//! slots.room = { lounge = "living room" }   # more words for a parameter's values
//! ```
//!
//! Intents ([`crate::intent`] documents the sentence syntax) are compiled against the
//! parameters when the manifest loads; a tool with intents must have a `say`, which is
//! what hearth answers when an intent handled the request. A tool needs neither: the
//! registry derives the common sentences from its name, description and parameters, and
//! confirms it from the same shape (`intent/derive.rs`); written sentences add to those.
//!
//! The executor tables are `[tool.exec]`, `[tool.mqtt]`, `[tool.homeassistant]`,
//! `[tool.gpio]` and `[tool.dbus]`; each module documents its keys ([`super::exec`],
//! [`super::mqtt`], [`super::homeassistant`], [`super::gpio`], [`super::dbus`]).
//!
//! A tool without `parameters` takes no arguments
//! (`{"type":"object","properties":{},"additionalProperties":false}`).
//!
//! Everything is checked at load time, and the first problem fails the load with the file,
//! the tool and the fix: TOML syntax and unknown keys, names (unique across files and the
//! built-ins), the executor (exactly one, its keys checked by its module: no template where
//! what is called is named, `exec.argv[0]` and the D-Bus names), the schema (an object
//! schema that compiles), and every template (it compiles, and each variable it uses is a
//! declared parameter, or `manifest_dir` in argv). No file is skipped: a directory load
//! fails on the first bad `*.toml` file.
//! Hidden files (`.name.toml`) and files not ending in `.toml` are not manifests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use super::builtin::Builtin;
use super::exec::{ExecSpec, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, MANIFEST_DIR_VAR};
use super::output::values::{is_template, literal_problem};
use super::tool::{no_parameters, Confirm, Executor, Tool};
use super::ToolsError;
use crate::intent::ToolIntents;
use crate::toolcall::{ToolSet, ToolSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    tool: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    description: String,
    #[serde(default)]
    say: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
    /// Sentence templates that run the tool directly (`[[tool.intent]]`).
    #[serde(default)]
    intent: Vec<crate::intent::IntentSpec>,
    /// `confirm = true`, or `[tool.confirm]` with `when` and `ask`: calls that wait for a yes.
    #[serde(default)]
    confirm: Option<Value>,
    /// `[tool.inverse]`: what "undo that" runs after a call.
    #[serde(default)]
    inverse: Option<super::inverse::InverseTable>,
    #[serde(default)]
    exec: Option<ExecTable>,
    #[serde(default)]
    mqtt: Option<super::mqtt::MqttTable>,
    #[serde(default)]
    homeassistant: Option<super::homeassistant::HaTable>,
    #[serde(default)]
    gpio: Option<super::gpio::GpioTable>,
    #[serde(default)]
    dbus: Option<super::dbus::DbusTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecTable {
    argv: Vec<String>,
    #[serde(default = "default_timeout_ms")]
    timeout_ms: u64,
    #[serde(default = "default_max_output_bytes")]
    max_output_bytes: usize,
    /// argv indexes whose value may begin the element with `-`.
    #[serde(default)]
    allow_leading_dash: Vec<usize>,
    /// Variables of hearth's environment the program gets besides the standard ones.
    #[serde(default)]
    pass_env: Vec<String>,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_max_output_bytes() -> usize {
    DEFAULT_MAX_OUTPUT_BYTES
}

/// Load every `*.toml` manifest in `dir` (not recursive), in sorted file-name order.
///
/// `manifest_dir` in argv templates is the canonical (absolute) path of `dir`. Tool names
/// must be unique across the files and must not be a built-in's name.
pub fn load_dir(dir: impl AsRef<Path>) -> Result<Vec<Tool>, ToolsError> {
    let dir = dir.as_ref();
    let read_dir_err = |source| ToolsError::ReadDir {
        path: dir.to_path_buf(),
        source,
    };
    let abs = std::fs::canonicalize(dir).map_err(read_dir_err)?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&abs).map_err(read_dir_err)? {
        let path = entry.map_err(read_dir_err)?.path();
        let is_manifest = path.extension().is_some_and(|e| e == "toml")
            && path
                .file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'));
        if is_manifest {
            files.push(path);
        }
    }
    files.sort();
    let mut first_seen: HashMap<String, PathBuf> = HashMap::new();
    let mut tools = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|source| ToolsError::Read {
            path: path.clone(),
            source,
        })?;
        for tool in parse_manifest(&text, &path)? {
            let name = tool.spec.name.clone();
            if let Some(first) = first_seen.get(&name) {
                return Err(ToolsError::Duplicate {
                    path,
                    tool: name,
                    first: first.clone(),
                });
            }
            first_seen.insert(name, path.clone());
            tools.push(tool);
        }
        tracing::debug!(manifest = %path.display(), "tool manifest loaded");
    }
    Ok(tools)
}

/// Parse and check one manifest's text. `path` is the file it came from: errors name it,
/// and its directory (made canonical when it exists) is `manifest_dir` for argv templates
/// and what a relative program path is resolved against.
pub fn parse_manifest(text: &str, path: &Path) -> Result<Vec<Tool>, ToolsError> {
    let file: ManifestFile = toml::from_str(text).map_err(|e| ToolsError::Toml {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })?;
    if file.tool.is_empty() {
        return Err(ToolsError::NoTools {
            path: path.to_path_buf(),
        });
    }
    let manifest_dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // canonical when it exists: `manifest_dir` is a value like any other in argv, and a
    // `..` in it would be refused (see exec)
    let manifest_dir = std::fs::canonicalize(&manifest_dir).unwrap_or(manifest_dir);
    let mut tools: Vec<Tool> = Vec::with_capacity(file.tool.len());
    for entry in file.tool {
        let tool = check_entry(entry, path, &manifest_dir)?;
        if tools.iter().any(|t| t.spec.name == tool.spec.name) {
            return Err(ToolsError::Duplicate {
                path: path.to_path_buf(),
                tool: tool.spec.name,
                first: path.to_path_buf(),
            });
        }
        tools.push(tool);
    }
    Ok(tools)
}

/// True for a name every wire format can carry.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_entry(entry: Entry, path: &Path, manifest_dir: &Path) -> Result<Tool, ToolsError> {
    let p = || path.to_path_buf();
    let name = entry.name;
    if !valid_name(&name) {
        return Err(ToolsError::BadName { path: p(), name });
    }
    if Builtin::from_name(&name).is_some() {
        return Err(ToolsError::BuiltinName {
            path: p(),
            tool: name,
        });
    }
    let description = entry.description.trim().to_string();
    if description.is_empty() {
        return Err(ToolsError::NoDescription {
            path: p(),
            tool: name,
        });
    }

    // exactly one executor
    let tables = [
        ("exec", entry.exec.map(Table::Exec)),
        ("mqtt", entry.mqtt.map(Table::Mqtt)),
        (
            "homeassistant",
            entry.homeassistant.map(Table::HomeAssistant),
        ),
        ("gpio", entry.gpio.map(Table::Gpio)),
        ("dbus", entry.dbus.map(Table::Dbus)),
    ];
    let found: Vec<String> = tables
        .iter()
        .filter(|(_, t)| t.is_some())
        .map(|(k, _)| k.to_string())
        .collect();
    if found.len() > 1 {
        return Err(ToolsError::TwoExecutors {
            path: p(),
            tool: name,
            found,
        });
    }
    let Some(table) = tables.into_iter().find_map(|(_, t)| t) else {
        return Err(ToolsError::NoExecutor {
            path: p(),
            tool: name,
        });
    };

    // the schema
    let parameters = entry.parameters.unwrap_or_else(no_parameters);
    let schema_type = parameters.get("type");
    if !parameters.is_object() || schema_type != Some(&Value::from("object")) {
        let found = match (&parameters, schema_type) {
            (Value::Object(_), Some(t)) => format!("type = {t}"),
            (Value::Object(_), None) => "a schema without type".to_string(),
            (v, _) => crate::toolcall::scan::type_name(v).to_string(),
        };
        return Err(ToolsError::NotObjectSchema {
            path: p(),
            tool: name,
            found,
        });
    }
    let properties: Vec<String> = match parameters.get("properties") {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    if properties.iter().any(|k| k == MANIFEST_DIR_VAR) {
        return Err(ToolsError::ReservedParameter {
            path: p(),
            tool: name,
            name: MANIFEST_DIR_VAR.into(),
        });
    }
    let spec = ToolSpec {
        name: name.clone(),
        description,
        parameters,
    };
    // the same compilation the parser's allowlist does
    if let Err(e) = ToolSet::new(vec![spec.clone()]) {
        let reason = match e {
            crate::toolcall::ToolsError::BadSchema { reason, .. } => reason,
            other => other.to_string(),
        };
        return Err(ToolsError::BadSchema {
            path: p(),
            tool: name,
            reason,
        });
    }

    // the templates
    let check = super::Check {
        path,
        tool: &name,
        properties: &properties,
    };
    if let Some(say) = &entry.say {
        check_template(say, &properties, &[super::RESULT_VAR]).map_err(
            |problem| match problem {
                TemplateProblem::Syntax(message) => ToolsError::SayTemplate {
                    path: p(),
                    tool: name.clone(),
                    message,
                },
                problem => check.template_error("say", problem, &[]),
            },
        )?;
    }
    let intents = match (&entry.intent[..], &entry.say) {
        ([], _) => None,
        (_, None) => {
            return Err(ToolsError::IntentWithoutSay {
                path: p(),
                tool: name,
            })
        }
        (specs, Some(_)) => Some(Arc::new(
            ToolIntents::compile(&name, specs, &spec.parameters).map_err(|e| {
                ToolsError::Intent {
                    path: p(),
                    source: Box::new(e),
                }
            })?,
        )),
    };
    let confirm = match &entry.confirm {
        None => None,
        Some(c) => read_confirm(c, &spec.parameters, &properties).map_err(|problem| {
            ToolsError::Confirm {
                path: p(),
                tool: name.clone(),
                problem,
            }
        })?,
    };
    let inverse = entry
        .inverse
        .map(|t| t.check())
        .transpose()
        .map_err(|problem| ToolsError::Inverse {
            path: p(),
            tool: name.clone(),
            problem,
        })?;
    let executor = match table {
        Table::Exec(t) => Executor::Exec(check_exec(t, &check, manifest_dir)?),
        Table::Mqtt(t) => Executor::Mqtt(t.check(&check)?),
        Table::HomeAssistant(t) => Executor::HomeAssistant(t.check(&check)?),
        Table::Gpio(t) => Executor::Gpio(t.check(&check)?),
        Table::Dbus(t) => Executor::Dbus(t.check(&check)?),
    };
    Ok(Tool {
        spec,
        say: entry.say,
        intents,
        confirm,
        inverse,
        for_model: true,
        executor,
    })
}

/// A tool's `confirm`: `true`/`false`, or a table of `when` (argument values, each valid
/// for its parameter) and `ask` (a template over the arguments). The problem, if any, in
/// words for [`ToolsError::Confirm`].
fn read_confirm(
    value: &Value,
    schema: &Value,
    properties: &[String],
) -> Result<Option<Confirm>, String> {
    let table = match value {
        Value::Bool(false) => return Ok(None),
        Value::Bool(true) => {
            return Ok(Some(Confirm {
                when: serde_json::Map::new(),
                ask: None,
            }))
        }
        Value::Object(t) => t,
        other => {
            return Err(format!(
                "is {}, not true, false or a table",
                crate::toolcall::scan::type_name(other)
            ))
        }
    };
    if let Some(k) = table.keys().find(|k| *k != "when" && *k != "ask") {
        return Err(format!(
            "has an unknown key {k:?}: it takes `when` and `ask`"
        ));
    }
    let when = match table.get("when") {
        None => serde_json::Map::new(),
        Some(Value::Object(w)) => w.clone(),
        Some(other) => {
            return Err(format!(
                "`when` is {}, not a table of argument values",
                crate::toolcall::scan::type_name(other)
            ))
        }
    };
    for (k, v) in &when {
        if !properties.contains(k) {
            return Err(format!(
                "`when` names {k:?}, which is not a parameter (the parameters: {})",
                properties.join(", ")
            ));
        }
        let property = &schema["properties"][k];
        let one = ToolSpec {
            name: "confirm".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {k.as_str(): property}}),
        };
        let valid = ToolSet::new(vec![one]).is_ok_and(|set| {
            set.check("confirm", &json!({k.as_str(): v})) == crate::toolcall::Verdict::Valid
        });
        if !valid || v.is_object() || v.is_array() {
            return Err(format!(
                "`when` gives {k:?} the value {v}, which the parameter's schema does not take"
            ));
        }
    }
    let ask = match table.get("ask") {
        None => None,
        Some(Value::String(a)) if !a.trim().is_empty() => {
            check_template(a, properties, &[]).map_err(|problem| match problem {
                TemplateProblem::Syntax(message) => format!("`ask` is not a template: {message}"),
                TemplateProblem::Unknown(var) => {
                    format!("`ask` reads {var:?}, which is not a parameter")
                }
            })?;
            Some(a.clone())
        }
        Some(_) => return Err("`ask` is not a question: give it as text".into()),
    };
    Ok(Some(Confirm { when, ask }))
}

/// The one executor table a tool has.
enum Table {
    Exec(ExecTable),
    Mqtt(super::mqtt::MqttTable),
    HomeAssistant(super::homeassistant::HaTable),
    Gpio(super::gpio::GpioTable),
    Dbus(super::dbus::DbusTable),
}

/// Check a `[tool.exec]` table.
fn check_exec(
    exec: ExecTable,
    check: &super::Check,
    manifest_dir: &Path,
) -> Result<ExecSpec, ToolsError> {
    let p = || check.path.to_path_buf();
    let name = || check.tool.to_string();
    if exec.argv.is_empty() {
        return Err(ToolsError::EmptyArgv {
            path: p(),
            tool: name(),
        });
    }
    let program = program_path(&exec.argv[0], check, manifest_dir)?;
    for (index, t) in exec.argv.iter().enumerate().skip(1) {
        check_template(t, check.properties, &[MANIFEST_DIR_VAR]).map_err(
            |problem| match problem {
                TemplateProblem::Syntax(message) => ToolsError::ArgvTemplate {
                    path: p(),
                    tool: name(),
                    index,
                    message,
                },
                problem => check.template_error(
                    &format!("exec.argv[{index}]"),
                    problem,
                    &[MANIFEST_DIR_VAR],
                ),
            },
        )?;
    }
    for (index, t) in exec.argv.iter().enumerate().skip(1) {
        if let Some(problem) = literal_problem(t) {
            return Err(check.invalid(format!("exec.argv[{index}]"), problem));
        }
    }
    check_allow_leading_dash(&exec.allow_leading_dash, &exec.argv, check)?;
    if let Some(bad) = exec.pass_env.iter().find(|n| !valid_env_name(n)) {
        return Err(check.invalid(
            "exec.pass_env",
            format!("{bad:?} is not a variable name: name each variable of hearth's environment the program needs, exactly (letters, digits and `_`, not starting with a digit)"),
        ));
    }
    if exec.timeout_ms == 0 {
        return Err(ToolsError::ZeroLimit {
            path: p(),
            tool: name(),
            field: "timeout_ms",
        });
    }
    if exec.max_output_bytes == 0 {
        return Err(ToolsError::ZeroLimit {
            path: p(),
            tool: name(),
            field: "max_output_bytes",
        });
    }
    let argv = std::iter::once(program)
        .chain(exec.argv.into_iter().skip(1))
        .collect();
    Ok(ExecSpec {
        argv,
        timeout: Duration::from_millis(exec.timeout_ms),
        max_output_bytes: exec.max_output_bytes,
        manifest_dir: manifest_dir.to_path_buf(),
        allow_leading_dash: exec.allow_leading_dash,
        pass_env: exec.pass_env,
    })
}

/// Check `exec.allow_leading_dash`: each index names a templated argument of `argv`.
fn check_allow_leading_dash(
    indexes: &[usize],
    argv: &[String],
    check: &super::Check,
) -> Result<(), ToolsError> {
    let field = "exec.allow_leading_dash";
    for &index in indexes {
        match argv.get(index) {
            _ if index == 0 => {
                return Err(check.invalid(
                    field,
                    "0 is the program, which is never a template: list the indexes of the arguments whose value may begin with `-` (1 is the first argument)",
                ))
            }
            None => {
                return Err(check.invalid(
                    field,
                    format!(
                        "{index} is past the end (argv has {} elements, the last is {}): list the indexes of the arguments whose value may begin with `-`",
                        argv.len(),
                        argv.len() - 1
                    ),
                ))
            }
            Some(t) if !is_template(t) => {
                return Err(check.invalid(
                    field,
                    format!(
                        "argv[{index}] ({t:?}) is not a template, so no value can begin it: remove {index}"
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A name `pass_env` may list: `[A-Za-z_][A-Za-z0-9_]*`.
fn valid_env_name(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The program of `exec.argv[0]`, fixed at load: never a template; a bare name is looked up
/// in PATH when the tool runs, any other relative path is the manifest directory's.
fn program_path(
    program: &str,
    check: &super::Check,
    manifest_dir: &Path,
) -> Result<String, ToolsError> {
    if is_template(program) {
        return Err(ToolsError::ProgramTemplate {
            path: check.path.to_path_buf(),
            tool: check.tool.to_string(),
            program: program.to_string(),
        });
    }
    if program.trim().is_empty() {
        return Err(check.invalid(
            "exec.argv[0]",
            "is blank: give the program to run (a name in PATH, an absolute path, or one relative to this manifest's directory)",
        ));
    }
    let as_path = Path::new(program);
    if as_path.is_absolute() || !program.contains('/') {
        return Ok(program.to_string());
    }
    let resolved = as_path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .fold(manifest_dir.to_path_buf(), |dir, c| dir.join(c));
    Ok(resolved.to_string_lossy().into_owned())
}

pub(crate) enum TemplateProblem {
    Syntax(String),
    Unknown(String),
}

/// Compile a template and check that every variable it reads is a parameter, one of
/// `extra` (`manifest_dir` in argv, `result` in `say`) or a template global (`range`, …).
pub(crate) fn check_template(
    source: &str,
    params: &[String],
    extra: &[&str],
) -> Result<(), TemplateProblem> {
    let env = super::templates();
    let tmpl = env
        .template_from_str(source)
        .map_err(|e| TemplateProblem::Syntax(e.to_string()))?;
    let mut unknown: Vec<String> = tmpl
        .undeclared_variables(false)
        .into_iter()
        .filter(|v| {
            let known = params.contains(v)
                || extra.contains(&v.as_str())
                || env.globals().any(|(g, _)| g == v);
            !known
        })
        .collect();
    unknown.sort();
    match unknown.into_iter().next() {
        Some(v) => Err(TemplateProblem::Unknown(v)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIGHT: &str = r#"
[[tool]]
name = "set_light"
description = "Turn a light on or off in one room."
say = "The {{ room }} light is {{ 'on' if on else 'off' }}."
[tool.parameters]
type = "object"
required = ["room", "on"]
additionalProperties = false
[tool.parameters.properties.room]
type = "string"
enum = ["kitchen", "bedroom"]
[tool.parameters.properties.on]
type = "boolean"
[tool.exec]
argv = ["./demo-home", "light", "{{ room }}", "{{ 'on' if on else 'off' }}"]
timeout_ms = 5000

[[tool]]
name = "get_thermostat"
description = "Get the thermostat setting."
[tool.exec]
argv = ["/usr/bin/thermostat"]
"#;

    fn parse(text: &str) -> Result<Vec<Tool>, ToolsError> {
        parse_manifest(text, Path::new("/etc/hearth/tools/home.toml"))
    }

    /// The error's message, checked to name the file and every given fragment.
    fn err(text: &str, fragments: &[&str]) -> ToolsError {
        let e = match parse(text) {
            Ok(t) => panic!("expected an error, got {} tools", t.len()),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert!(msg.contains("/etc/hearth/tools/home.toml"), "{msg}");
        for f in fragments {
            assert!(msg.contains(f), "{f:?} not in {msg}");
        }
        e
    }

    /// A one-tool manifest with `extra` TOML appended to the [[tool]] table.
    fn one(extra: &str) -> String {
        format!("[[tool]]\nname = \"t\"\ndescription = \"A tool.\"\n{extra}")
    }

    #[test]
    fn parses_tools_with_defaults() {
        let tools = parse(LIGHT).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].spec.name, "set_light");
        assert_eq!(tools[0].spec.parameters["required"], json!(["room", "on"]));
        // properties keep the order they are written in (the model sees that order)
        let props: Vec<&String> = tools[0].spec.parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(props, ["room", "on"]);
        assert!(tools[0].say.as_deref().unwrap().contains("{{ room }}"));
        let Executor::Exec(e) = &tools[0].executor else {
            panic!("{:?}", tools[0].executor)
        };
        assert_eq!(e.timeout, Duration::from_millis(5000));
        assert_eq!(e.max_output_bytes, DEFAULT_MAX_OUTPUT_BYTES);
        assert_eq!(e.manifest_dir, Path::new("/etc/hearth/tools"));
        assert_eq!(e.argv.len(), 4);
        // a relative program is the manifest directory's, resolved once at load
        assert_eq!(e.argv[0], "/etc/hearth/tools/demo-home");
        assert_eq!(tools[1].spec.parameters, no_parameters());
        assert!(tools[1].say.is_none());
        let Executor::Exec(e) = &tools[1].executor else {
            panic!()
        };
        assert_eq!(e.timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        assert_eq!(e.argv[0], "/usr/bin/thermostat");
    }

    #[test]
    fn confirm_names_the_calls_that_wait_for_a_yes_and_bad_ones_say_why() {
        let with =
            |confirm: &str| LIGHT.replacen("[tool.exec]", &format!("{confirm}\n[tool.exec]"), 1);
        let tools = parse(&with(
            "[tool.confirm]\nwhen = { on = false }\nask = \"Turn off the {{ room }} light?\"",
        ))
        .unwrap();
        let c = tools[0].confirm.as_ref().unwrap();
        assert!(c.applies(&json!({"room": "kitchen", "on": false})));
        assert!(!c.applies(&json!({"room": "kitchen", "on": true})));
        assert!(tools[1].confirm.is_none());
        let every = parse(&LIGHT.replacen("say =", "confirm = true\nsay =", 1)).unwrap();
        assert!(every[0]
            .confirm
            .as_ref()
            .unwrap()
            .applies(&json!({"room": "bedroom", "on": true})));
        let none = parse(&LIGHT.replacen("say =", "confirm = false\nsay =", 1)).unwrap();
        assert!(none[0].confirm.is_none());
        for (confirm, fragment) in [
            (
                "[tool.confirm]\nwhen = { dimmed = true }",
                "names \"dimmed\", which is not a parameter",
            ),
            (
                "[tool.confirm]\nwhen = { on = \"off\" }",
                "the value \"off\", which the parameter's schema does not take",
            ),
            (
                "[tool.confirm]\nwhen = { room = \"garage\" }",
                "the value \"garage\"",
            ),
            (
                "[tool.confirm]\nask = \"Turn off the {{ lamp }}?\"",
                "`ask` reads \"lamp\"",
            ),
            (
                "[tool.confirm]\nwhen = { on = false }\nplease = true",
                "unknown key \"please\"",
            ),
        ] {
            err(
                &with(confirm),
                &["\"set_light\"", "`confirm`", fragment, "confirm = true"],
            );
        }
        err(
            &LIGHT.replacen("say =", "confirm = \"yes\"\nsay =", 1),
            &["is a string, not true, false or a table"],
        );
    }

    #[test]
    fn the_program_is_never_a_template() {
        for program in [
            "{{ manifest_dir }}/demo-home",
            "{{ program }}",
            "/usr/bin/{% if on %}on{% endif %}",
            "x{# note #}",
        ] {
            let e = err(
                &one(&format!(
                    "[tool.parameters]\ntype = \"object\"\nproperties.program.type = \"string\"\nproperties.on.type = \"boolean\"\n[tool.exec]\nargv = [{program:?}, \"x\"]"
                )),
                &[
                    "tool \"t\"",
                    "exec.argv[0]",
                    "is a template",
                    "./demo-home",
                    "absolute path",
                    "PATH",
                ],
            );
            assert!(matches!(e, ToolsError::ProgramTemplate { .. }), "{e:?}");
        }
        err(
            &one("[tool.exec]\nargv = [\"  \"]"),
            &["exec.argv[0]: is blank"],
        );
        // a bare name is looked up in PATH; `./` and `../` are the manifest directory's
        let program = |argv0: &str| {
            let tools = parse(&one(&format!("[tool.exec]\nargv = [{argv0:?}]"))).unwrap();
            match &tools[0].executor {
                Executor::Exec(e) => e.argv[0].clone(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(program("echo"), "echo");
        assert_eq!(program("/bin/echo"), "/bin/echo");
        assert_eq!(program("./bin/x"), "/etc/hearth/tools/bin/x");
        assert_eq!(program("bin/x"), "/etc/hearth/tools/bin/x");
        assert_eq!(program("../libexec/x"), "/etc/hearth/tools/../libexec/x");
    }

    #[test]
    fn toml_errors_give_line_and_column() {
        err(
            "[[tool]]\nname = \"x\"\ndescription = oops\n",
            &["line 3", "column"],
        );
        err(&one("colour = 3\n[tool.exec]\nargv = [\"x\"]"), &["colour"]);
        err(
            &one("[tool.exec]\nargv = [\"x\"]\nshell = true"),
            &["shell", "line"],
        );
        err(
            &one("[tool.exec]\nargv = [\"x\"]\ntimeout_ms = -1"),
            &["timeout_ms"],
        );
        err("[[tool]]\ndescription = \"no name\"\n", &["name"]);
    }

    #[test]
    fn executor_count_and_kind() {
        assert!(matches!(
            err(&one(""), &["no executor", "[tool.exec]"]),
            ToolsError::NoExecutor { .. }
        ));
        assert!(matches!(
            err(
                &one("[tool.exec]\nargv = [\"x\"]\n[tool.mqtt]\ntopic = \"a\""),
                &["2 executors", "exec, mqtt", "exactly one"]
            ),
            ToolsError::TwoExecutors { .. }
        ));
        err(&one("[tool.zwave]\nnode = 4"), &["zwave", "unknown field"]);
        err(&one("[tool.exec]\nargv = []"), &["empty exec.argv"]);
        err(
            &one("[tool.exec]\nargv = [\"x\"]\ntimeout_ms = 0"),
            &["timeout_ms must be greater than 0"],
        );
        err(
            &one("[tool.exec]\nargv = [\"x\"]\nmax_output_bytes = 0"),
            &["max_output_bytes"],
        );
    }

    #[test]
    fn allow_leading_dash_names_templated_arguments() {
        let with = |argv: &str, allow: &str| {
            format!(
                "[tool.parameters]\ntype = \"object\"\nproperties.n.type = \"integer\"\n[tool.exec]\nargv = {argv}\nallow_leading_dash = {allow}"
            )
        };
        let tools = parse(&one(&with(r#"["x", "-v", "{{ n }}"]"#, "[2]"))).unwrap();
        let Executor::Exec(e) = &tools[0].executor else {
            panic!()
        };
        assert_eq!(e.allow_leading_dash, [2]);
        let tools = parse(&one(&with(r#"["x"]"#, "[]"))).unwrap();
        let Executor::Exec(e) = &tools[0].executor else {
            panic!()
        };
        assert!(e.allow_leading_dash.is_empty());
        err(
            &one(&with(r#"["x", "{{ n }}"]"#, "[0]")),
            &["exec.allow_leading_dash", "0 is the program"],
        );
        err(
            &one(&with(r#"["x", "{{ n }}"]"#, "[2]")),
            &["exec.allow_leading_dash", "2", "argv has 2 elements"],
        );
        err(
            &one(&with(r#"["x", "-v", "{{ n }}"]"#, "[1]")),
            &[
                "exec.allow_leading_dash",
                "argv[1] (\"-v\") is not a template",
            ],
        );
        err(
            &one(&with(r#"["x", "{{ n }}"]"#, "[-1]")),
            &["allow_leading_dash"],
        );
    }

    #[test]
    fn pass_env_names_variables() {
        let tools = parse(&one(
            "[tool.exec]\nargv = [\"x\"]\npass_env = [\"XDG_RUNTIME_DIR\", \"_A1\"]",
        ))
        .unwrap();
        let Executor::Exec(e) = &tools[0].executor else {
            panic!()
        };
        assert_eq!(e.pass_env, ["XDG_RUNTIME_DIR", "_A1"]);
        for bad in ["", "A B", "1A", "LC_*", "A=B"] {
            err(
                &one(&format!(
                    "[tool.exec]\nargv = [\"x\"]\npass_env = [{bad:?}]"
                )),
                &["exec.pass_env", &format!("{bad:?} is not a variable name")],
            );
        }
    }

    #[test]
    fn template_errors() {
        assert!(matches!(
            err(
                &one("[tool.exec]\nargv = [\"x\", \"{{ oops\"]"),
                &["exec.argv[1] is not a valid template", "\"t\""]
            ),
            ToolsError::ArgvTemplate { index: 1, .. }
        ));
        assert!(matches!(
            err(
                &one("say = \"{% if %}\"\n[tool.exec]\nargv = [\"x\"]"),
                &["`say` is not a valid template"]
            ),
            ToolsError::SayTemplate { .. }
        ));
        let room = "[tool.parameters]\ntype = \"object\"\n[tool.parameters.properties.room]\ntype = \"string\"\n";
        let e = err(
            &one(&format!(
                "{room}[tool.exec]\nargv = [\"x\", \"{{{{ rooom }}}}\"]"
            )),
            &[
                "exec.argv[1] uses `rooom`",
                "use one of room, manifest_dir or declare it",
            ],
        );
        assert!(matches!(e, ToolsError::UnknownVariable { .. }));
        // manifest_dir is for argv only
        err(
            &one(&format!(
                "say = \"in {{{{ manifest_dir }}}}\"\n{room}[tool.exec]\nargv = [\"x\"]"
            )),
            &["say uses `manifest_dir`"],
        );
        // globals, loop variables and filters are not parameters but are fine
        parse(&one(&format!(
            "say = \"{{% for i in range(2) %}}{{{{ i }}}}{{% endfor %}} {{{{ room | upper }}}} {{{{ room.title() }}}}\"\n{room}[tool.exec]\nargv = [\"x\"]"
        )))
        .unwrap();
    }

    #[test]
    fn schema_errors() {
        assert!(matches!(
            err(
                &one("[tool.parameters]\ntype = \"string\"\n[tool.exec]\nargv = [\"x\"]"),
                &["object schema", "\"string\""]
            ),
            ToolsError::NotObjectSchema { .. }
        ));
        err(
            &one("[tool.parameters]\nrequired = []\n[tool.exec]\nargv = [\"x\"]"),
            &["object schema", "without type"],
        );
        assert!(matches!(
            err(
                &one("[tool.parameters]\ntype = \"object\"\n[tool.parameters.properties.a]\ntype = \"nonsense\"\n[tool.exec]\nargv = [\"x\"]"),
                &["not a valid JSON Schema"]
            ),
            ToolsError::BadSchema { .. }
        ));
        err(
            &one("[tool.parameters]\ntype = \"object\"\n[tool.parameters.properties.manifest_dir]\ntype = \"string\"\n[tool.exec]\nargv = [\"x\"]"),
            &["`manifest_dir` is reserved"],
        );
    }

    #[test]
    fn names_and_descriptions() {
        err(
            "[[tool]]\nname = \"rm -rf\"\ndescription = \"x\"\n[tool.exec]\nargv = [\"x\"]",
            &["\"rm -rf\" is not usable"],
        );
        err(
            "[[tool]]\nname = \"t\"\ndescription = \"  \"\n[tool.exec]\nargv = [\"x\"]",
            &["empty description"],
        );
        err(
            "[[tool]]\nname = \"get_time\"\ndescription = \"x\"\n[tool.exec]\nargv = [\"x\"]",
            &["built-in"],
        );
        let twice = format!(
            "{}\n{}",
            one("[tool.exec]\nargv = [\"x\"]"),
            one("[tool.exec]\nargv = [\"y\"]")
        );
        assert!(matches!(
            err(&twice, &["defined twice"]),
            ToolsError::Duplicate { .. }
        ));
        err("# nothing here\n", &["defines no tools"]);
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hearth-manifest-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_existing_manifest_directory_is_made_canonical() {
        let d = temp_dir("canonical");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let path = d.join("sub").join("..").join("m.toml");
        let tools = parse_manifest(&one("[tool.exec]\nargv = [\"./x\"]"), &path).unwrap();
        let Executor::Exec(e) = &tools[0].executor else {
            panic!()
        };
        let canonical = std::fs::canonicalize(&d).unwrap();
        assert_eq!(e.manifest_dir, canonical);
        assert_eq!(Path::new(&e.argv[0]), canonical.join("x"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn directory_loads_sorted_and_fails_on_first_bad_file() {
        let d = temp_dir("dir");
        let tool = |n: &str| {
            format!(
                "[[tool]]\nname = \"{n}\"\ndescription = \"x\"\n[tool.exec]\nargv = [\"./x\"]\n"
            )
        };
        std::fs::write(d.join("b.toml"), tool("bee")).unwrap();
        std::fs::write(d.join("a.toml"), tool("ant")).unwrap();
        std::fs::write(d.join("notes.txt"), "not a manifest").unwrap();
        std::fs::write(d.join(".hidden.toml"), "garbage").unwrap();
        let tools = load_dir(&d).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        assert_eq!(names, ["ant", "bee"]);
        let Executor::Exec(e) = &tools[0].executor else {
            panic!()
        };
        assert!(e.manifest_dir.is_absolute());

        std::fs::write(d.join("c.toml"), tool("ant")).unwrap();
        let msg = load_dir(&d).unwrap_err().to_string();
        assert!(msg.contains("c.toml") && msg.contains("a.toml"), "{msg}");
        assert!(msg.contains("defined twice"), "{msg}");

        std::fs::write(d.join("aa.toml"), "[[tool]\n").unwrap();
        let msg = load_dir(&d).unwrap_err().to_string();
        assert!(msg.contains("aa.toml"), "{msg}");

        let missing = d.join("missing");
        let e = load_dir(&missing).unwrap_err();
        assert!(matches!(e, ToolsError::ReadDir { .. }), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
