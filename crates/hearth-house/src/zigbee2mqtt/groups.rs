//! One entry of `bridge/groups`: a group acting as one device of the kind its members share.
//!
//! As Zigbee2MQTT groups them (its Home Assistant discovery, `GROUP_SUPPORTED_TYPES`), a group
//! is a light, switch, lock or cover. Its features are those of that kind every member it
//! knows has, at the member's endpoint, by property without the endpoint (`state_left` is a
//! group's `state`), taking only what every member takes: a command to the group never asks
//! a member for what it cannot do. A group is set and its state published as a device's; it
//! is never asked with `/get` (each member answers on its own topic), so no group feature is
//! gettable.

use serde::Deserialize;
use serde_json::Value;

use super::bridge::{typed_entry, Known};
use super::{SkipReason, Skipped};
use crate::device::{Access, Device, DeviceId, Feature, Kind, Preset, Topics, ValueType};
use crate::words;

/// The kinds a group can be, in the order one is chosen when members share several.
const GROUP_KINDS: [Kind; 4] = [Kind::Light, Kind::Switch, Kind::Lock, Kind::Cover];

/// Zigbee2MQTT's own group for bindings.
const DEFAULT_BIND_GROUP: u64 = 901;

#[derive(Deserialize)]
struct Entry {
    id: u64,
    friendly_name: String,
    #[serde(default)]
    members: Vec<Member>,
}

#[derive(Deserialize)]
struct Member {
    ieee_address: String,
    endpoint: u64,
}

/// The group of `entry` (the `index`th of the payload), or why it is left out.
pub(super) fn group(
    base: &str,
    index: usize,
    entry: Value,
    devices: &[Device],
    known: &Known,
) -> Result<Device, Skipped> {
    let entry: Entry = typed_entry(entry, index)?;
    let skip = |reason| Skipped {
        name: entry.friendly_name.clone(),
        reason,
    };
    if entry.id == DEFAULT_BIND_GROUP || entry.friendly_name == "default_bind_group" {
        return Err(skip(SkipReason::DefaultBindGroup));
    }
    let Ok(id) = u16::try_from(entry.id) else {
        return Err(skip(SkipReason::Malformed {
            problem: format!(
                "group id {} is not a Zigbee group id (0 to 65535)",
                entry.id
            ),
        }));
    };
    if words::is_address(&entry.friendly_name) {
        return Err(skip(SkipReason::Unnamed));
    }
    let Some((name, room)) = words::name_and_room(&entry.friendly_name) else {
        return Err(skip(SkipReason::Unnamed));
    };
    if entry.members.is_empty() {
        return Err(skip(SkipReason::GroupEmpty));
    }
    // Each known member's device and the features at its endpoint.
    let mut members: Vec<(&Device, Vec<&Feature>)> = Vec::new();
    for member in &entry.members {
        let Some((index, endpoint)) = known.member(&member.ieee_address, member.endpoint) else {
            continue;
        };
        let Some(device) = devices.get(index) else {
            continue;
        };
        members.push((device, at_endpoint(device, endpoint)));
    }
    if members.is_empty() {
        return Err(skip(SkipReason::GroupNoKnownMembers));
    }
    let shared = GROUP_KINDS.into_iter().find(|kind| {
        members
            .iter()
            .all(|(_, features)| features.iter().any(|f| f.part_of == Some(*kind)))
    });
    let Some(kind) = shared else {
        let mut kinds: Vec<Kind> = Vec::new();
        for (device, features) in &members {
            let of_member = features.iter().filter_map(|f| f.part_of);
            let of_member: Vec<Kind> = of_member.filter(|k| GROUP_KINDS.contains(k)).collect();
            let first = of_member.first().copied().unwrap_or(device.kind);
            if !kinds.contains(&first) {
                kinds.push(first);
            }
        }
        kinds.sort_unstable();
        return Err(skip(SkipReason::GroupKinds { kinds }));
    };
    let mut features: Option<Vec<Feature>> = None;
    for (_, member_features) in &members {
        let of_kind: Vec<Feature> = member_features
            .iter()
            .filter(|f| f.part_of == Some(kind))
            .map(|f| without_endpoint(f))
            .collect();
        features = Some(match features {
            None => of_kind,
            Some(so_far) => so_far
                .iter()
                .filter_map(|f| {
                    let other = of_kind
                        .iter()
                        .find(|o| o.property == f.property && o.name == f.name)?;
                    both(f, other)
                })
                .collect(),
        });
    }
    let features: Vec<Feature> = features
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.access.bits() != 0)
        .collect();
    if features.is_empty() {
        return Err(skip(SkipReason::GroupNothingShared { kind }));
    }
    let mut member_ids: Vec<DeviceId> = Vec::new();
    for (device, _) in &members {
        if !member_ids.contains(&device.id) {
            member_ids.push(device.id.clone());
        }
    }
    Ok(Device {
        id: DeviceId::Group(id),
        topics: Topics::new(base, &entry.friendly_name),
        friendly_name: entry.friendly_name,
        name,
        room,
        kind,
        model: None,
        members: member_ids,
        features,
        unsupported: Vec::new(),
    })
}

/// A member's features at `endpoint`: those of that endpoint, else (a device whose exposes
/// name no endpoint) those of none.
fn at_endpoint<'a>(device: &'a Device, endpoint: Option<&str>) -> Vec<&'a Feature> {
    let at = |e: Option<&str>| -> Vec<&'a Feature> {
        device
            .features
            .iter()
            .filter(|f| f.endpoint.as_deref() == e)
            .collect()
    };
    let features = at(endpoint);
    if features.is_empty() && endpoint.is_some() {
        at(None)
    } else {
        features
    }
}

/// A member's feature as the group's: its property without `_<endpoint>`, no endpoint, and
/// (like its parts) never gettable.
fn without_endpoint(feature: &Feature) -> Feature {
    let mut f = feature.clone();
    if let Some(endpoint) = f.endpoint.take() {
        if let Some(bare) = f.property.strip_suffix(&format!("_{endpoint}")) {
            f.property = bare.to_owned();
        }
    }
    ungettable(&mut f);
    f
}

fn ungettable(feature: &mut Feature) {
    feature.access = feature.access.without(Access::GETTABLE);
    match &mut feature.value {
        ValueType::Composite { features } => features.iter_mut().for_each(ungettable),
        ValueType::List { item, .. } => ungettable(item),
        _ => {}
    }
}

/// What two members' same feature both take, or `None` when they take nothing alike (other
/// value types, other units, binary values or enum values in nothing common).
fn both(a: &Feature, b: &Feature) -> Option<Feature> {
    let value = match (&a.value, &b.value) {
        (
            ValueType::Binary { on, off, toggle },
            ValueType::Binary {
                on: on_b,
                off: off_b,
                toggle: toggle_b,
            },
        ) => {
            if on != on_b || off != off_b {
                return None;
            }
            ValueType::Binary {
                on: on.clone(),
                off: off.clone(),
                toggle: toggle.clone().filter(|t| Some(t) == toggle_b.as_ref()),
            }
        }
        (
            ValueType::Numeric {
                min,
                max,
                step,
                unit,
                presets,
            },
            ValueType::Numeric {
                min: min_b,
                max: max_b,
                step: step_b,
                unit: unit_b,
                presets: presets_b,
            },
        ) => {
            if unit != unit_b {
                return None;
            }
            let min = tighter(*min, *min_b, f64::max);
            let max = tighter(*max, *max_b, f64::min);
            if let (Some(lo), Some(hi)) = (min, max) {
                if lo > hi {
                    return None;
                }
            }
            let presets: Vec<Preset> = presets
                .iter()
                .filter(|p| {
                    presets_b
                        .iter()
                        .any(|q| q.name == p.name && q.value == p.value)
                })
                .cloned()
                .collect();
            ValueType::Numeric {
                min,
                max,
                step: tighter(*step, *step_b, f64::max),
                unit: unit.clone(),
                presets,
            }
        }
        (ValueType::Enum { values }, ValueType::Enum { values: values_b }) => {
            let values: Vec<Value> = values
                .iter()
                .filter(|v| values_b.contains(v))
                .cloned()
                .collect();
            if values.is_empty() {
                return None;
            }
            ValueType::Enum { values }
        }
        (ValueType::Text, ValueType::Text) => ValueType::Text,
        (
            ValueType::Composite { features },
            ValueType::Composite {
                features: features_b,
            },
        ) => {
            let features: Vec<Feature> = features
                .iter()
                .filter_map(|f| {
                    both(
                        f,
                        features_b
                            .iter()
                            .find(|g| g.property == f.property && g.name == f.name)?,
                    )
                })
                .collect();
            if features.is_empty() {
                return None;
            }
            ValueType::Composite { features }
        }
        _ => return None,
    };
    Some(Feature {
        access: a.access.both(b.access),
        value,
        ..a.clone()
    })
}

/// Of two optional bounds, the one that binds (`pick` chooses between two).
fn tighter(a: Option<f64>, b: Option<f64>, pick: fn(f64, f64) -> f64) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}
