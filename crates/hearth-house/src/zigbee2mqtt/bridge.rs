//! One entry of `bridge/devices`: a [`Device`], or the reason it is left out.

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::expose;
use super::{SkipReason, Skipped};
use crate::device::{Category, Device, DeviceId, Kind, Model, Topics};
use crate::words;

/// The fields of a `bridge/devices` entry read here (Zigbee2MQTT writes more).
#[derive(Deserialize)]
struct Entry {
    ieee_address: String,
    #[serde(rename = "type")]
    device_type: String,
    friendly_name: String,
    supported: bool,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    interview_completed: Option<bool>,
    #[serde(default)]
    interview_state: Option<String>,
    #[serde(default)]
    model_id: Option<String>,
    #[serde(default)]
    definition: Option<Definition>,
    #[serde(default)]
    endpoints: BTreeMap<String, Endpoint>,
}

#[derive(Deserialize)]
struct Definition {
    model: String,
    vendor: String,
    #[serde(default)]
    description: String,
    exposes: Vec<Value>,
}

#[derive(Deserialize)]
struct Endpoint {
    #[serde(default)]
    name: Option<String>,
}

/// A device's endpoints by number, with the names its definition gives them.
pub(super) type Endpoints = BTreeMap<u64, Option<String>>;

/// The devices found, by IEEE address, for the groups to find their members in.
#[derive(Debug, Default)]
pub(super) struct Known {
    by_ieee: HashMap<String, (usize, Endpoints)>,
}

impl Known {
    /// Records `device`, at `index` in the found devices.
    pub(super) fn add(&mut self, device: &Device, endpoints: Endpoints, index: usize) {
        if let DeviceId::Ieee(ieee) = &device.id {
            self.by_ieee.insert(ieee.clone(), (index, endpoints));
        }
    }

    /// The index of the device with `ieee`, and the name of its endpoint `endpoint`.
    pub(super) fn member(&self, ieee: &str, endpoint: u64) -> Option<(usize, Option<&str>)> {
        let (index, endpoints) = self.by_ieee.get(ieee)?;
        Some((*index, endpoints.get(&endpoint).and_then(|n| n.as_deref())))
    }
}

/// The device of `entry` (the `index`th of the payload) and its endpoints, or why it is left
/// out.
pub(super) fn device(
    base: &str,
    index: usize,
    entry: Value,
) -> Result<(Device, Endpoints), Skipped> {
    let entry: Entry = typed_entry(entry, index)?;
    let skip = |reason| Skipped {
        name: entry.friendly_name.clone(),
        reason,
    };
    if entry.device_type == "Coordinator" {
        return Err(skip(SkipReason::Coordinator));
    }
    if entry.disabled {
        return Err(skip(SkipReason::Disabled));
    }
    let interviewed = match &entry.interview_state {
        Some(state) => state == "SUCCESSFUL",
        None => entry.interview_completed.unwrap_or(false),
    };
    if !interviewed {
        let state = entry.interview_state.clone().filter(|s| s != "SUCCESSFUL");
        return Err(skip(SkipReason::InterviewIncomplete { state }));
    }
    if !entry.supported {
        let model = entry
            .model_id
            .clone()
            .or_else(|| entry.definition.as_ref().map(|d| d.model.clone()));
        return Err(skip(SkipReason::NotSupported { model }));
    }
    let Some(definition) = &entry.definition else {
        return Err(skip(SkipReason::NoDefinition));
    };
    if words::is_address(&entry.friendly_name) || entry.friendly_name == entry.ieee_address {
        return Err(skip(SkipReason::Unnamed));
    }
    let Some((name, room)) = words::name_and_room(&entry.friendly_name) else {
        return Err(skip(SkipReason::Unnamed));
    };
    let exposes = expose::read(&definition.exposes);
    if exposes.features.is_empty() {
        return Err(skip(SkipReason::NothingUnderstood {
            unsupported: exposes.unsupported,
        }));
    }
    let kind = exposes.kinds.first().copied().unwrap_or_else(|| {
        let sets_more_than_config = exposes
            .features
            .iter()
            .any(|f| f.access.settable() && f.category != Some(Category::Config));
        if sets_more_than_config {
            Kind::Other
        } else {
            Kind::Sensor
        }
    });
    let endpoints = entry
        .endpoints
        .iter()
        .filter_map(|(id, e)| Some((id.parse::<u64>().ok()?, e.name.clone())))
        .collect();
    let device = Device {
        topics: Topics::new(base, &entry.friendly_name),
        id: DeviceId::Ieee(entry.ieee_address),
        friendly_name: entry.friendly_name,
        name,
        room,
        kind,
        model: Some(Model {
            vendor: definition.vendor.clone(),
            model: definition.model.clone(),
            description: definition.description.clone(),
        }),
        members: Vec::new(),
        features: exposes.features,
        unsupported: exposes.unsupported,
    };
    Ok((device, endpoints))
}

/// `entry` (the `index`th of its payload) read as a `T`, or skipped as malformed under its
/// friendly name, else its address, else its place.
pub(super) fn typed_entry<T: DeserializeOwned>(entry: Value, index: usize) -> Result<T, Skipped> {
    let name = ["friendly_name", "ieee_address"]
        .iter()
        .find_map(|key| entry.get(key).and_then(Value::as_str))
        .map_or_else(|| format!("entry {index}"), str::to_owned);
    T::deserialize(entry).map_err(|e| Skipped {
        name,
        reason: SkipReason::Malformed {
            problem: e.to_string(),
        },
    })
}
