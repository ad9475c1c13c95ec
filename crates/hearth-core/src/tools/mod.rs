//! Tools the agent can run: the registry, `tools/*.toml` manifests, executors, built-ins
//! and the tools actor.
//!
//! A [`Registry`] holds every [`Tool`]: the built-ins (`get_time`, `get_date`) first, then
//! the tools of each manifest in `tools/` (files in sorted order, tools in file order). It
//! gives the [`ToolSet`](crate::toolcall::ToolSet) the parser validates against, the
//! OpenAI-style tools list chat templates take, and a fingerprint of both.
//!
//! A manifest tool names exactly one executor, each with a timeout, a result status and an
//! error that names the tool and the problem:
//! - [`exec`]: a program run directly (no shell), argv rendered from the call's arguments;
//! - [`mqtt`]: publish to a topic of the configured broker (Zigbee2MQTT, Tasmota, …), and
//!   optionally wait for the device's state topic;
//! - [`homeassistant`]: call a Home Assistant service or read an entity's state (REST API);
//! - [`gpio`]: set or read a line of a GPIO chip (the Linux GPIO character device);
//! - [`dbus`]: call a method of another service on the system or session bus.
//!
//! What an executor connects to (the broker, Home Assistant, the GPIO chip) is the daemon's
//! configuration, held in [`Backends`]; a manifest names topics, services and lines, never
//! addresses or credentials. A tool may also carry a `say` template: the spoken
//! confirmation of a call, rendered from the same arguments.
//!
//! [`ToolsActor`] serves the registry to the pipeline: a snapshot of it, and running a
//! hop's calls in parallel with results in call order. It re-validates every call against
//! the registry (fail closed): an invalid call is reported as an error and never runs.
//!
//! Templates are rendered with strict undefined behaviour: a template that refers to an
//! argument the call does not have is an error, never an empty string.

mod actor;
mod alarm_tools;
mod backends;
mod builtin;
mod builtin_parts;
pub mod dbus;
mod device_tools;
mod error;
mod exec;
mod gpio;
pub mod homeassistant;
pub(crate) mod house;
mod inverse;
mod manifest;
pub(crate) mod mqtt;
mod output;
mod registry;
mod timer_tools;
mod tool;

use std::path::Path;
use std::sync::LazyLock;

use serde_json::Value;

pub use actor::STOP_GRACE;
pub use actor::{ProviderLimits, ToolsActor, ToolsMsg};
pub use alarm_tools::AlarmTool;
pub use backends::Backends;
pub use builtin::Builtin;
pub use device_tools::{Controls, DeviceTool};
pub use error::ToolsError;
pub use exec::ExecSpec;
pub use inverse::Inverse;
pub use manifest::{load_dir, parse_manifest, valid_name};
pub use output::{ExecOutput, ToolStatus, MAX_SAY_CHARS};
pub(crate) use registry::{schema_strings, Listed};
pub use registry::{Registry, ToolOutcome};
pub use timer_tools::TimerTool;
pub use tool::no_parameters;
pub use tool::{Confirm, Executor, Tool};

/// The variable a `say` template reads the tool's output text from (`It's {{ result }}.`).
pub(crate) const RESULT_VAR: &str = "result";

/// The template environment shared by argv and `say` templates: strict undefined values
/// (a missing argument fails the render), Python-style string methods (`.upper()`, …).
pub(crate) fn templates() -> &'static minijinja::Environment<'static> {
    static ENV: LazyLock<minijinja::Environment<'static>> = LazyLock::new(|| {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env
    });
    &ENV
}

/// Render one template source against a JSON object of variables.
pub(crate) fn render(source: &str, vars: &serde_json::Value) -> Result<String, minijinja::Error> {
    templates().render_str(source, minijinja::value::Serde(vars))
}

/// Render a JSON template: every string in `template` (at any depth) is a template rendered
/// against `vars`. A string that is exactly one expression (`"{{ brightness }}"`) takes the
/// expression's value with its JSON type (a number stays a number, a boolean a boolean);
/// any other string renders to a string. Keys are not templates.
pub(crate) fn render_json(template: &Value, vars: &Value) -> Result<Value, minijinja::Error> {
    match template {
        Value::String(source) => match lone_expression(source) {
            Some(expr) => {
                let value = templates()
                    .compile_expression(expr)?
                    .eval(minijinja::value::Serde(vars))?;
                if value.is_undefined() {
                    return Err(minijinja::Error::new(
                        minijinja::ErrorKind::UndefinedError,
                        format!("`{}` is undefined", expr.trim()),
                    ));
                }
                serde_json::to_value(&value).map_err(|e| {
                    minijinja::Error::new(
                        minijinja::ErrorKind::BadSerialization,
                        format!("`{}` has no JSON value: {e}", expr.trim()),
                    )
                })
            }
            None => render(source, vars).map(Value::String),
        },
        Value::Array(items) => items
            .iter()
            .map(|v| render_json(v, vars))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), render_json(v, vars)?)))
            .collect::<Result<_, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// The expression of a string that is exactly `{{ expr }}` (nothing around it, one block).
fn lone_expression(source: &str) -> Option<&str> {
    let inner = source.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}") && !inner.contains("{%")).then_some(inner)
}

/// What a manifest check knows about the tool being checked: errors name the file, the
/// tool and the field; templates may use the tool's parameters.
pub struct Check<'a> {
    /// The manifest file.
    pub path: &'a Path,
    /// The tool's name.
    pub tool: &'a str,
    /// The names of the tool's parameters (what templates may read).
    pub properties: &'a [String],
}

impl Check<'_> {
    /// An error for `field` (`mqtt.topic`) of this tool: `problem` says what is wrong and
    /// how to fix it.
    pub fn invalid(&self, field: impl Into<String>, problem: impl Into<String>) -> ToolsError {
        ToolsError::Invalid {
            path: self.path.to_path_buf(),
            tool: self.tool.to_string(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// `timeout_ms` of an executor table (`executor.timeout_ms`) as a duration; 0 is an
    /// error naming the default.
    pub fn timeout(
        &self,
        executor: &str,
        ms: u64,
        default_ms: u64,
    ) -> Result<std::time::Duration, ToolsError> {
        if ms == 0 {
            return Err(self.invalid(
                format!("{executor}.timeout_ms"),
                format!("must be greater than 0 (the default is {default_ms})"),
            ));
        }
        Ok(std::time::Duration::from_millis(ms))
    }

    /// Check that `source` (the value of `field`) compiles and reads only parameters.
    pub fn template(&self, field: &str, source: &str) -> Result<(), ToolsError> {
        manifest::check_template(source, self.properties, &[])
            .map_err(|p| self.template_error(field, p, &[]))
    }

    /// Check every string of a JSON template (see [`render_json`]) like [`Self::template`].
    pub(crate) fn json_template(&self, field: &str, template: &Value) -> Result<(), ToolsError> {
        match template {
            Value::String(s) => self.template(field, s),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| self.json_template(&format!("{field}[{i}]"), v)),
            Value::Object(m) => m
                .iter()
                .try_for_each(|(k, v)| self.json_template(&format!("{field}.{k}"), v)),
            _ => Ok(()),
        }
    }

    pub(crate) fn template_error(
        &self,
        field: &str,
        problem: manifest::TemplateProblem,
        extra: &[&str],
    ) -> ToolsError {
        match problem {
            manifest::TemplateProblem::Syntax(message) => ToolsError::Template {
                path: self.path.to_path_buf(),
                tool: self.tool.to_string(),
                field: field.to_string(),
                message,
            },
            manifest::TemplateProblem::Unknown(variable) => ToolsError::UnknownVariable {
                path: self.path.to_path_buf(),
                tool: self.tool.to_string(),
                template: field.to_string(),
                variable,
                known: self
                    .properties
                    .iter()
                    .cloned()
                    .chain(extra.iter().map(|s| s.to_string()))
                    .collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_templates_keep_types_of_lone_expressions() {
        let vars = json!({"room": "kitchen", "on": true, "level": 40});
        let t = json!({
            "entity_id": "light.{{ room }}",
            "state": "{{ 'ON' if on else 'OFF' }}",
            "brightness_pct": "{{ level }}",
            "on": "{{on}}",
            "fixed": 3,
            "list": ["{{ level * 2 }}", "x"],
        });
        assert_eq!(
            render_json(&t, &vars).unwrap(),
            json!({"entity_id": "light.kitchen", "state": "ON", "brightness_pct": 40,
                   "on": true, "fixed": 3, "list": [80, "x"]})
        );
        // text around the expression makes a string
        assert_eq!(
            render_json(&json!("{{ level }}%"), &vars).unwrap(),
            json!("40%")
        );
        // two blocks are not one expression
        assert_eq!(
            render_json(&json!("{{ room }}{{ level }}"), &vars).unwrap(),
            json!("kitchen40")
        );
        assert!(render_json(&json!("{{ missing }}"), &vars).is_err());
        assert!(render_json(&json!({"a": ["{{ missing }} x"]}), &vars).is_err());
    }
}
