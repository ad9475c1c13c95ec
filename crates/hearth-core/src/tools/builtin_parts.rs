//! What the built-ins' modules share (`builtin.rs`, `timer_tools.rs`, `alarm_tools.rs`,
//! `device_tools.rs`): their arguments schema and their intents, built the same way.

use serde_json::{json, Map, Value};

use crate::intent::IntentSpec;

/// A built-in's arguments schema: an object of `properties`, `required` ones, nothing else.
pub(super) fn object_schema(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A built-in's intent: `sentences`, with `args` fixed.
pub(super) fn intent<S: AsRef<str>>(sentences: &[S], args: Map<String, Value>) -> IntentSpec {
    IntentSpec {
        sentences: sentences.iter().map(|s| s.as_ref().to_string()).collect(),
        args,
        ..Default::default()
    }
}
