//! The one error type of this crate: a payload that is not what Zigbee2MQTT, Home Assistant or
//! an MQTT discovery publisher sends, or a message to a device that it would not take.

/// What went wrong reading a bridge payload, or making a message for a device.
///
/// Each message names the topic or the device and property, and what was expected, so a
/// caller can log it as it stands.
#[derive(Debug, thiserror::Error)]
pub enum HouseError {
    /// A payload is not JSON at all (truncated, empty, not UTF-8).
    #[error("{topic}: expected {expected}, but the payload is not JSON: {source}")]
    NotJson {
        /// The topic the payload came from (`zigbee2mqtt/bridge/devices`).
        topic: String,
        /// What the topic carries ("a JSON array of devices").
        expected: &'static str,
        /// Where and why it does not parse.
        #[source]
        source: serde_json::Error,
    },

    /// A payload is JSON of another shape than the topic carries (an object where an array
    /// of devices belongs).
    #[error("{topic}: expected {expected}, got {got}")]
    Unexpected {
        /// The topic the payload came from.
        topic: String,
        /// What the topic carries.
        expected: &'static str,
        /// The JSON type found instead ("an object", "a string", …).
        got: &'static str,
    },

    /// A payload or answer is JSON of the right type whose fields are not what the source
    /// sends (a state without an entity id, an alias that is a number).
    #[error("{topic}: expected {expected}: {source}")]
    Shape {
        /// The topic or WebSocket command the payload came from.
        topic: String,
        /// What it carries ("an array of states").
        expected: &'static str,
        /// Which field, and why.
        #[source]
        source: serde_json::Error,
    },

    /// A message names a property the device does not have.
    #[error("{device} has no `{property}`; it has {known}")]
    NoSuchFeature {
        /// The device's friendly name.
        device: String,
        /// The property asked for.
        property: String,
        /// The properties it has, comma-separated.
        known: String,
    },

    /// A `/set` for a property that may not be set (a reading: its access lacks bit 2).
    #[error("{device}'s `{property}` cannot be set, only read")]
    NotSettable {
        /// The device's friendly name.
        device: String,
        /// The property.
        property: String,
    },

    /// A `/get` for a property the device does not answer a read of (access lacks bit 4):
    /// its value comes only on the state topic, when the device publishes it.
    #[error("{device}'s `{property}` cannot be asked for; it comes on {state_topic} when the device sends it")]
    NotGettable {
        /// The device's friendly name.
        device: String,
        /// The property.
        property: String,
        /// The topic its value is published on.
        state_topic: String,
    },

    /// A command a device or component has nothing for (a lock has no brightness, a sensor
    /// cannot be switched), or needs a command template hearth cannot render.
    #[error("{device} cannot {what}")]
    CannotDo {
        /// The device's friendly name, or the component's name.
        device: String,
        /// What it cannot do ("be dimmed", "lock").
        what: &'static str,
    },

    /// A `/set` (or a discovered component's command) with a value the property does not
    /// take.
    #[error("{device}'s `{property}` takes {expected}, not {value}")]
    BadValue {
        /// The device's friendly name, or the component's name.
        device: String,
        /// The property, or the component's option (`temperature`, `mode`, `color`).
        property: String,
        /// The value given, as JSON.
        value: String,
        /// What it takes ("\"LOCK\" or \"UNLOCK\"", "a number from 5 to 35", …).
        expected: String,
    },
}

/// The JSON type of `value`, as an error message names it.
pub(crate) fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
