//! A household's devices from Zigbee2MQTT's retained bridge payloads.
//!
//! Zigbee2MQTT publishes, retained, `<base>/bridge/devices` (every device it knows, each with
//! its definition's `exposes`) and `<base>/bridge/groups`. [`devices`] turns the two into
//! [`Device`]s, and says which entries it left out and why ([`Skipped`]): the coordinator, a
//! device not supported, not yet interviewed, disabled or named only by its address, a group
//! with no members hearth knows or whose members are not one kind.
//!
//! [`things`] makes the devices [`Thing`](crate::Thing)s, with what each may do; [`message`] is
//! the `/set` message that runs a [`Command`](crate::Command) on one, [`reading`] its published
//! state as a sentence.
//!
//! Read as Zigbee2MQTT 2.14.1 writes them (`lib/extension/bridge.ts`); its
//! definitions are zigbee-herdsman-converters' (`tests/corpus/zigbee2mqtt/README.md`).

mod bridge;
mod expose;
mod groups;
mod things;

use std::fmt;

use serde_json::Value;

use crate::device::{Device, Kind, Unsupported};
use crate::error::json_type;
use crate::HouseError;

pub use things::{message, reading, things};

/// What [`devices`] found: the devices and groups hearth can use, and the entries it left
/// out.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Devices in the order Zigbee2MQTT lists them, then groups.
    pub devices: Vec<Device>,
    /// Entries left out, in the same order, each with its reason.
    pub skipped: Vec<Skipped>,
}

impl Found {
    /// The device or group with `friendly_name`, as Zigbee2MQTT names it.
    pub fn device(&self, friendly_name: &str) -> Option<&Device> {
        self.devices
            .iter()
            .find(|d| d.friendly_name == friendly_name)
    }

    /// The rooms the devices' names say, each once, sorted.
    pub fn rooms(&self) -> Vec<&str> {
        let mut rooms: Vec<&str> = self
            .devices
            .iter()
            .filter_map(|d| d.room.as_deref())
            .collect();
        rooms.sort_unstable();
        rooms.dedup();
        rooms
    }
}

/// An entry of `bridge/devices` or `bridge/groups` left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Its friendly name, or its address or position when it has none.
    pub name: String,
    /// Why.
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

/// Why an entry was left out. Its `Display` is a sentence for a log.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// The Zigbee coordinator: the radio Zigbee2MQTT runs, not a device of the house.
    Coordinator,
    /// Disabled in Zigbee2MQTT's configuration.
    Disabled,
    /// Zigbee2MQTT has not finished interviewing it (`interview_state`, when given).
    InterviewIncomplete {
        /// `PENDING`, `IN_PROGRESS`, `FAILED`; `None` when only `interview_completed` says so.
        state: Option<String>,
    },
    /// Zigbee2MQTT does not support the model (its definition is generated, if it has one).
    NotSupported {
        /// The model as the device reports it, if known.
        model: Option<String>,
    },
    /// Supported and interviewed, but with no definition in the payload.
    NoDefinition,
    /// Its friendly name is its IEEE address or group id, or has no words: no one can say it.
    Unnamed,
    /// Every expose it has was left out.
    NothingUnderstood {
        /// What was left out, and why.
        unsupported: Vec<Unsupported>,
    },
    /// The entry lacks a field Zigbee2MQTT always writes, or has one of the wrong type.
    Malformed {
        /// What is wrong, as the JSON reader says it.
        problem: String,
    },
    /// Zigbee2MQTT's own group for bindings (`default_bind_group`).
    DefaultBindGroup,
    /// A group with no members.
    GroupEmpty,
    /// A group none of whose members is a device found here.
    GroupNoKnownMembers,
    /// A group whose members are not one kind of light, switch, lock or cover (the kinds
    /// Zigbee2MQTT groups).
    GroupKinds {
        /// The kinds its members are.
        kinds: Vec<Kind>,
    },
    /// A group whose members share a kind but no feature of it.
    GroupNothingShared {
        /// The kind they share.
        kind: Kind,
    },
    /// A device or group [`things`] leaves out: nothing it exposes is something hearth can
    /// do (a setting only) or read out (a remote's `action`, a battery).
    NothingToDo,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Coordinator => f.write_str("the coordinator, not a device of the house"),
            SkipReason::Disabled => f.write_str("disabled in Zigbee2MQTT"),
            SkipReason::InterviewIncomplete { state: Some(state) } => {
                write!(f, "its interview is not complete ({state}); it is left out until it is")
            }
            SkipReason::InterviewIncomplete { state: None } => {
                f.write_str("its interview is not complete; it is left out until it is")
            }
            SkipReason::NotSupported { model: Some(model) } => {
                write!(f, "model {model} is not supported by Zigbee2MQTT")
            }
            SkipReason::NotSupported { model: None } => f.write_str("not supported by Zigbee2MQTT"),
            SkipReason::NoDefinition => f.write_str("Zigbee2MQTT gives no definition for it"),
            SkipReason::Unnamed => f.write_str(
                "named only by its address; give it a friendly name in Zigbee2MQTT (`room/name` puts it in a room)",
            ),
            SkipReason::NothingUnderstood { unsupported } => {
                f.write_str("nothing it exposes is understood")?;
                for (i, u) in unsupported.iter().enumerate() {
                    let lead = if i == 0 { ": " } else { "; " };
                    write!(f, "{lead}`{}`: {}", u.name, u.reason)?;
                }
                Ok(())
            }
            SkipReason::Malformed { problem } => write!(f, "a malformed entry: {problem}"),
            SkipReason::DefaultBindGroup => f.write_str("Zigbee2MQTT's own group for bindings"),
            SkipReason::GroupEmpty => f.write_str("a group with no members"),
            SkipReason::GroupNoKnownMembers => f.write_str("a group with no member found here"),
            SkipReason::GroupKinds { kinds } => {
                let kinds: Vec<&str> = kinds.iter().map(|k| k.plural()).collect();
                write!(
                    f,
                    "a group of {}: a group is all lights, switches, locks or covers",
                    kinds.join(" and ")
                )
            }
            SkipReason::GroupNothingShared { kind } => {
                write!(f, "a group of {} that share no feature", kind.plural())
            }
            SkipReason::NothingToDo => {
                f.write_str("nothing it exposes is something hearth can do or read out")
            }
        }
    }
}

/// The devices and groups of Zigbee2MQTT's retained `<base_topic>/bridge/devices` and (when
/// given) `<base_topic>/bridge/groups` payloads.
///
/// `base_topic` is Zigbee2MQTT's `mqtt.base_topic` (`zigbee2mqtt` unless configured): the
/// devices' topics are made from it. An entry that cannot be used is in
/// [`Found::skipped`] with the reason; only a payload that is not JSON, or not an array, is
/// an error.
pub fn devices(
    base_topic: &str,
    bridge_devices: &[u8],
    bridge_groups: Option<&[u8]>,
) -> Result<Found, HouseError> {
    let base = base_topic.trim_end_matches('/');
    let entries = array(base, "devices", "a JSON array of devices", bridge_devices)?;
    let mut found = Found::default();
    let mut known = bridge::Known::default();
    for (index, entry) in entries.into_iter().enumerate() {
        match bridge::device(base, index, entry) {
            Ok((device, endpoints)) => {
                known.add(&device, endpoints, found.devices.len());
                found.devices.push(device);
            }
            Err(skipped) => found.skipped.push(skipped),
        }
    }
    if let Some(payload) = bridge_groups {
        let entries = array(base, "groups", "a JSON array of groups", payload)?;
        let mut groups = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            match groups::group(base, index, entry, &found.devices, &known) {
                Ok(group) => groups.push(group),
                Err(skipped) => found.skipped.push(skipped),
            }
        }
        found.devices.extend(groups);
    }
    Ok(found)
}

/// The payload of `<base>/bridge/<topic>` as the array it must be.
fn array(
    base: &str,
    topic: &str,
    expected: &'static str,
    payload: &[u8],
) -> Result<Vec<Value>, HouseError> {
    let topic = format!("{base}/bridge/{topic}");
    match serde_json::from_slice(payload) {
        Ok(Value::Array(entries)) => Ok(entries),
        Ok(other) => Err(HouseError::Unexpected {
            topic,
            expected,
            got: json_type(&other),
        }),
        Err(source) => Err(HouseError::NotJson {
            topic,
            expected,
            source,
        }),
    }
}
