//! Phase two: the only place a candidate becomes an executable call.
//!
//! A call is valid when its name is on the allowlist (the tools on offer) and its
//! arguments are an object valid against the tool's JSON Schema. Nothing is guessed,
//! coerced or filled in.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A validated, executable call. Only [`ToolSet::call`] makes one, for the
/// parser's calls and for a call that did not come from a model alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    id: String,
    name: String,
    arguments: Value,
}

impl ToolCall {
    /// Made by [`ToolSet::call`] only (the arguments passed the tool's schema).
    fn checked(id: String, name: String, arguments: Value) -> Self {
        ToolCall {
            id,
            name,
            arguments,
        }
    }

    /// The model's own id when it emitted one, else `<name>_<index>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool called.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments, a JSON object valid against the tool's schema.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }
}

/// One tool as offered to the model: name, description, JSON Schema of its arguments.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Errors loading a tools list.
#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    #[error("tools list is not valid JSON: {0} (expected [{{\"type\":\"function\",\"function\":{{\"name\":…,\"parameters\":{{…}}}}}}])")]
    Json(String),
    #[error("tool #{index} has no name: every entry needs function.name")]
    NoName { index: usize },
    #[error("tool {name:?} is listed twice: tool names must be unique")]
    Duplicate { name: String },
    #[error("tool {name:?} has an invalid JSON Schema in \"parameters\": {reason}")]
    BadSchema { name: String, reason: String },
    #[error("tools list must be a JSON array of tools, got {0}")]
    NotAList(&'static str),
}

#[derive(Deserialize)]
struct OpenAiTool {
    #[serde(default)]
    function: Option<OpenAiFunction>,
    // also accept the bare {"name","description","parameters"} shape
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
}

#[derive(Deserialize)]
struct OpenAiFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
}

struct Entry {
    spec: ToolSpec,
    validator: jsonschema::Validator,
}

/// The allowlist: the tools a parse may produce calls for, with compiled validators.
///
/// `ToolSet::unrestricted()` is the one exception: it validates nothing and is only
/// for `hearth parse` without `--tools` (extraction diagnostics). The agent always
/// builds a real set from its registry.
#[derive(Clone, Default)]
pub struct ToolSet {
    entries: Arc<HashMap<String, Entry>>,
    order: Arc<Vec<String>>,
    unrestricted: bool,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.order)
            .field("unrestricted", &self.unrestricted)
            .finish()
    }
}

/// The verdict on one candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Valid,
    UnknownTool,
    Invalid(String),
    /// No allowlist was given (extraction only).
    Unchecked,
}

/// Why [`ToolSet::call`] made no call.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// The name is not on the allowlist.
    UnknownTool,
    /// The arguments are not an object valid against the tool's schema: why.
    Invalid(String),
}

impl ToolSet {
    /// An empty allowlist: every candidate is rejected as an unknown tool.
    pub fn empty() -> Self {
        Self::default()
    }

    /// No allowlist at all: candidates are reported unchecked. Never used to run tools.
    pub fn unrestricted() -> Self {
        ToolSet {
            unrestricted: true,
            ..Self::default()
        }
    }

    pub fn is_unrestricted(&self) -> bool {
        self.unrestricted
    }

    /// Build from tool specs, compiling each schema once.
    pub fn new(specs: Vec<ToolSpec>) -> Result<Self, ToolsError> {
        let mut entries = HashMap::new();
        let mut order = Vec::new();
        for spec in specs {
            let validator = jsonschema::options().build(&spec.parameters).map_err(|e| {
                ToolsError::BadSchema {
                    name: spec.name.clone(),
                    reason: e.to_string(),
                }
            })?;
            if entries.contains_key(&spec.name) {
                return Err(ToolsError::Duplicate { name: spec.name });
            }
            order.push(spec.name.clone());
            entries.insert(spec.name.clone(), Entry { spec, validator });
        }
        Ok(ToolSet {
            entries: Arc::new(entries),
            order: Arc::new(order),
            unrestricted: false,
        })
    }

    /// Parse an OpenAI-style tools list: `[{"type":"function","function":{…}}]`.
    pub fn from_openai_json(text: &str) -> Result<Self, ToolsError> {
        let v: Value = serde_json::from_str(text).map_err(|e| ToolsError::Json(e.to_string()))?;
        Self::from_openai_value(&v)
    }

    pub fn from_openai_value(v: &Value) -> Result<Self, ToolsError> {
        let Value::Array(items) = v else {
            return Err(ToolsError::NotAList(super::scan::type_name(v)));
        };
        let mut specs = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let t: OpenAiTool = serde_json::from_value(item.clone())
                .map_err(|e| ToolsError::Json(format!("tool #{index}: {e}")))?;
            let (name, description, parameters) = match t.function {
                Some(f) => (f.name, f.description, f.parameters),
                None => (t.name, t.description, t.parameters),
            };
            let name = name
                .filter(|n| !n.trim().is_empty())
                .ok_or(ToolsError::NoName { index })?;
            specs.push(ToolSpec {
                name,
                description: description.unwrap_or_default(),
                parameters: parameters
                    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            });
        }
        Self::new(specs)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.unrestricted || self.entries.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entries.get(name).map(|e| &e.spec)
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The JSON Schema of one parameter, for formats that type values by schema.
    pub fn param_schema(&self, tool: &str, param: &str) -> Option<&Value> {
        self.entries
            .get(tool)?
            .spec
            .parameters
            .get("properties")?
            .get(param)
    }

    /// Check one candidate: allowlist, object arguments, JSON Schema.
    /// A call of `name` with `arguments` that passes this set's check, or the verdict that
    /// refused it. The only way to make a [`ToolCall`] outside the parser (a D-Bus
    /// `CallTool`, a local intent, a test).
    pub fn call(
        &self,
        id: impl Into<String>,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCall, Refused> {
        match self.check(name, &arguments) {
            Verdict::Valid | Verdict::Unchecked => {
                Ok(ToolCall::checked(id.into(), name.to_string(), arguments))
            }
            Verdict::UnknownTool => Err(Refused::UnknownTool),
            Verdict::Invalid(why) => Err(Refused::Invalid(why)),
        }
    }

    pub fn check(&self, name: &str, arguments: &Value) -> Verdict {
        if self.unrestricted {
            return if arguments.is_object() {
                Verdict::Unchecked
            } else {
                Verdict::Invalid(format!(
                    "arguments must be a JSON object, got {}",
                    super::scan::type_name(arguments)
                ))
            };
        }
        let Some(entry) = self.entries.get(name) else {
            return Verdict::UnknownTool;
        };
        if !arguments.is_object() {
            return Verdict::Invalid(format!(
                "arguments must be a JSON object, got {}",
                super::scan::type_name(arguments)
            ));
        }
        match entry.validator.iter_errors(arguments).next() {
            None => Verdict::Valid,
            Some(err) => {
                let path = err.instance_path().to_string();
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!(" at {path}")
                };
                Verdict::Invalid(format!("arguments do not match the schema{at}: {err}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"set_light","description":"","parameters":
            {"type":"object","properties":{"room":{"type":"string"},"on":{"type":"boolean"}},
             "required":["room","on"],"additionalProperties":false}}}]"#,
        )
        .unwrap()
    }

    #[test]
    fn allowlist_and_schema() {
        let t = tools();
        assert_eq!(
            t.check("set_light", &json!({"room":"kitchen","on":true})),
            Verdict::Valid
        );
        assert_eq!(t.check("rm_rf", &json!({})), Verdict::UnknownTool);
        match t.check("set_light", &json!({"room":"kitchen"})) {
            Verdict::Invalid(r) => assert!(r.contains("on"), "{r}"),
            v => panic!("{v:?}"),
        }
        match t.check("set_light", &json!({"room":"kitchen","on":"yes"})) {
            Verdict::Invalid(r) => assert!(r.contains("/on"), "{r}"),
            v => panic!("{v:?}"),
        }
        assert!(matches!(
            t.check("set_light", &json!("x")),
            Verdict::Invalid(_)
        ));
    }

    #[test]
    fn bad_tools_lists_name_the_problem() {
        assert!(matches!(
            ToolSet::from_openai_json("{"),
            Err(ToolsError::Json(_))
        ));
        assert!(matches!(
            ToolSet::from_openai_json("{}"),
            Err(ToolsError::NotAList(_))
        ));
        assert!(matches!(
            ToolSet::from_openai_json(r#"[{"function":{"description":"x"}}]"#),
            Err(ToolsError::NoName { index: 0 })
        ));
        let e = ToolSet::from_openai_json(
            r#"[{"function":{"name":"a","parameters":{"type":"nonsense"}}}]"#,
        )
        .unwrap_err();
        assert!(matches!(e, ToolsError::BadSchema { .. }), "{e}");
    }
}
