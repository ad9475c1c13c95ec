//! A tool's way back: `[tool.inverse]` in its manifest, what "undo that" runs after one of
//! its calls. Only a tool that declares one can be undone.
//!
//! ```toml
//! [tool.inverse]
//! # tool = "set_light"                           # another tool; this one when left out
//! arguments = { room = "{{ room }}", on = "{{ not on }}" }
//! ```
//!
//! Each argument is a template over the call's own arguments (a lone expression keeps its
//! JSON type: `{{ not on }}` is a boolean); the call it makes is checked against its tool's
//! schema like any other, and a `confirm` on that tool still asks first (undoing a lock is
//! an unlock).

use serde::Deserialize;
use serde_json::{Map, Value};

/// A tool's declared way back.
#[derive(Debug, Clone, PartialEq)]
pub struct Inverse {
    /// The tool that undoes it (`None`: the same tool).
    pub tool: Option<String>,
    /// The undoing call's arguments: templates over the call's arguments.
    pub arguments: Map<String, Value>,
}

/// `[tool.inverse]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InverseTable {
    #[serde(default)]
    tool: Option<String>,
    arguments: Map<String, Value>,
}

impl InverseTable {
    /// The inverse, its templates compiled (`Err`: the problem in words).
    pub(super) fn check(self) -> Result<Inverse, String> {
        for (k, v) in &self.arguments {
            // rendering against nothing finds a template that does not parse; an undefined
            // name is fine here (the call has it)
            if let Err(e) = super::render_json(v, &Value::Object(Map::new())) {
                if e.kind() == minijinja::ErrorKind::SyntaxError {
                    return Err(format!("arguments.{k}: {e}"));
                }
            }
        }
        if self.tool.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(
                "`tool` is empty: name the tool that undoes this one, or leave it out for this one"
                    .into(),
            );
        }
        Ok(Inverse {
            tool: self.tool,
            arguments: self.arguments,
        })
    }
}

impl Inverse {
    /// The undoing call's arguments for a call made with `arguments`.
    pub fn arguments_for(&self, arguments: &Value) -> Result<Value, minijinja::Error> {
        super::render_json(&Value::Object(self.arguments.clone()), arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(v: Value) -> InverseTable {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_way_back_flips_the_call() {
        let inverse = table(json!({"arguments": {"room": "{{ room }}", "on": "{{ not on }}"}}))
            .check()
            .unwrap();
        assert_eq!(
            inverse
                .arguments_for(&json!({"room": "kitchen", "on": true}))
                .unwrap(),
            json!({"room": "kitchen", "on": false})
        );
        assert!(inverse.arguments_for(&json!({"room": "kitchen"})).is_err());
    }

    #[test]
    fn a_template_that_does_not_parse_is_named() {
        let e = table(json!({"arguments": {"on": "{{ not on "}}))
            .check()
            .unwrap_err();
        assert!(e.starts_with("arguments.on: "), "{e}");
        let e = table(json!({"tool": " ", "arguments": {}}))
            .check()
            .unwrap_err();
        assert!(e.contains("`tool` is empty"), "{e}");
    }
}
