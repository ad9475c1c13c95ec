//! A household's things from Home Assistant's registries, as its WebSocket API answers them.
//!
//! Only what the household exposed to Assist becomes a thing (`homeassistant/expose_entity/list`,
//! `conversation: true`): an entity nobody exposed is never a tool. Each thing is named as
//! Assist names it (the state's `friendly_name`), with the entity registry's aliases, in its
//! area (the entity's, else its device's), with what its domain and `supported_features`
//! allow ([`abilities`]). [`service`] is the one place a [`Command`] becomes a service call.
//!
//! Read as Home Assistant 2024.3.3 answers (`tests/corpus/homeassistant/README.md`).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::device::Kind;
use crate::error::json_type;
use crate::thing::{said, Ability, Area, Command, Control, Source, Thing};
use crate::HouseError;

/// The WebSocket commands whose answers [`things`] reads, each answer's `result` as it came.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// `get_states`: every entity's state and attributes.
    pub states: Value,
    /// `config/entity_registry/get_entries` for the exposed entities (an object: entity id to
    /// entry, or null for one not in the registry), or `config/entity_registry/list` (an
    /// array; it carries no aliases).
    pub entities: Value,
    /// `config/device_registry/list`.
    pub devices: Value,
    /// `config/area_registry/list`.
    pub areas: Value,
    /// `homeassistant/expose_entity/list`.
    pub exposed: Value,
}

/// An exposed entity left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// Its entity id.
    pub entity_id: String,
    /// Why, as a sentence for a log.
    pub reason: String,
}

/// What [`things`] found.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The exposed entities hearth has tools for, sorted by entity id.
    pub things: Vec<Thing>,
    /// Exposed entities left out, each with its reason, sorted by entity id.
    pub left: Vec<Left>,
    /// Every area, with its aliases (areas with nothing exposed in them too: a room is
    /// sayable before anything is put in it).
    pub areas: Vec<Area>,
}

/// A Home Assistant service call: `POST /api/services/DOMAIN/SERVICE` with `data`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceCall {
    /// `light`.
    pub domain: &'static str,
    /// `turn_on`.
    pub service: &'static str,
    /// The service data, `entity_id` first.
    pub data: Value,
}

/// The service call that runs `command` on `entity_id`; `None` when the entity's domain has
/// no such service (a lock has no brightness). The caller checks the thing's abilities first;
/// this is the one place the services are named.
pub fn service(entity_id: &str, command: &Command) -> Option<ServiceCall> {
    let domain = domain_of(entity_id)?;
    let call = |service: &'static str, extra: Value| {
        let mut data = json!({ "entity_id": entity_id });
        if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
            data.extend(extra);
        }
        Some(ServiceCall {
            domain,
            service,
            data,
        })
    };
    let none = Value::Null;
    match (domain, command) {
        ("light" | "switch" | "fan" | "input_boolean" | "media_player", Command::On) => {
            call("turn_on", none)
        }
        ("light" | "switch" | "fan" | "input_boolean" | "media_player", Command::Off) => {
            call("turn_off", none)
        }
        ("light", Command::Brightness(p)) => call("turn_on", json!({ "brightness_pct": p })),
        ("light", Command::BrightnessStep(p)) => {
            call("turn_on", json!({ "brightness_step_pct": p }))
        }
        ("light", Command::ColorTemperature(k)) => {
            call("turn_on", json!({ "color_temp_kelvin": k }))
        }
        ("light", Command::Color(name)) => call("turn_on", json!({ "color_name": name })),
        ("cover", Command::Open) => call("open_cover", none),
        ("cover", Command::Close) => call("close_cover", none),
        ("cover", Command::Stop) => call("stop_cover", none),
        ("cover", Command::Position(p)) => call("set_cover_position", json!({ "position": p })),
        ("lock", Command::Lock) => call("lock", none),
        ("lock", Command::Unlock) => call("unlock", none),
        ("fan", Command::Speed(p)) => call("set_percentage", json!({ "percentage": p })),
        ("climate", Command::TargetTemperature(t)) => {
            call("set_temperature", json!({ "temperature": t }))
        }
        ("climate", Command::Mode(m)) => call("set_hvac_mode", json!({ "hvac_mode": m })),
        ("media_player", Command::Play) => call("media_play", none),
        ("media_player", Command::Pause) => call("media_pause", none),
        ("media_player", Command::Next) => call("media_next_track", none),
        ("media_player", Command::Previous) => call("media_previous_track", none),
        ("media_player", Command::Volume(p)) => call(
            "volume_set",
            json!({ "volume_level": f64::from(*p) / 100.0 }),
        ),
        ("media_player", Command::Mute(m)) => call("volume_mute", json!({ "is_volume_muted": m })),
        ("scene" | "script", Command::Activate) => call("turn_on", none),
        ("vacuum", Command::Start) => call("start", none),
        ("vacuum", Command::ReturnHome) => call("return_to_base", none),
        _ => None,
    }
}

/// The domains hearth has tools for, with their kind, as a `'static` name.
const DOMAINS: &[(&str, Kind)] = &[
    ("light", Kind::Light),
    ("switch", Kind::Switch),
    ("input_boolean", Kind::Switch),
    ("fan", Kind::Fan),
    ("cover", Kind::Cover),
    ("lock", Kind::Lock),
    ("climate", Kind::Climate),
    ("media_player", Kind::MediaPlayer),
    ("scene", Kind::Scene),
    ("script", Kind::Script),
    ("vacuum", Kind::Vacuum),
    ("sensor", Kind::Sensor),
    ("binary_sensor", Kind::Sensor),
];

/// An entity id's domain, as one of [`DOMAINS`]' names.
fn domain_of(entity_id: &str) -> Option<&'static str> {
    let (domain, _) = entity_id.split_once('.')?;
    DOMAINS.iter().find(|(d, _)| *d == domain).map(|(d, _)| *d)
}

/// What an entity of `domain` with these attributes lets be done.
///
/// `supported_features` bits as Home Assistant 2024.3 numbers them: fan SET_SPEED 1; cover
/// OPEN 1, CLOSE 2, SET_POSITION 4, STOP 8; climate TARGET_TEMPERATURE 1; media player
/// PAUSE 1, VOLUME_SET 4, VOLUME_MUTE 8, PREVIOUS_TRACK 16, NEXT_TRACK 32, TURN_ON 128,
/// TURN_OFF 256, PLAY 16384; vacuum RETURN_HOME 16, START 8192. A light's abilities come from
/// its `supported_color_modes`.
pub fn abilities(domain: &str, attributes: &Value) -> Vec<Ability> {
    let features = attributes
        .get("supported_features")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let has = |bit: u64| features & bit != 0;
    let mut out = Vec::new();
    let mut add = |yes: bool, ability: Ability| {
        if yes {
            out.push(ability);
        }
    };
    match domain {
        "light" => {
            let modes: Vec<&str> = attributes
                .get("supported_color_modes")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let color = ["hs", "xy", "rgb", "rgbw", "rgbww"];
            add(true, Ability::OnOff);
            add(
                modes.iter().any(|m| *m != "onoff" && *m != "unknown"),
                Ability::Brightness,
            );
            add(modes.contains(&"color_temp"), Ability::ColorTemperature);
            add(modes.iter().any(|m| color.contains(m)), Ability::Color);
            add(true, Ability::Read);
        }
        "switch" | "input_boolean" => {
            add(true, Ability::OnOff);
            add(true, Ability::Read);
        }
        "fan" => {
            add(true, Ability::OnOff);
            add(has(1), Ability::Speed);
            add(true, Ability::Read);
        }
        "cover" => {
            add(has(1) || has(2), Ability::OpenClose);
            add(has(8), Ability::Stop);
            add(has(4), Ability::Position);
            add(true, Ability::Read);
        }
        "lock" => {
            add(true, Ability::Lock);
            add(true, Ability::Read);
        }
        "climate" => {
            let modes = attributes.get("hvac_modes").and_then(Value::as_array);
            add(has(1), Ability::TargetTemperature);
            add(modes.is_some_and(|m| !m.is_empty()), Ability::Mode);
            add(true, Ability::Read);
        }
        "media_player" => {
            add(has(128) && has(256), Ability::OnOff);
            add(has(1) || has(16384), Ability::PlayPause);
            add(has(16) || has(32), Ability::Track);
            add(has(4), Ability::Volume);
            add(has(8), Ability::Mute);
            add(true, Ability::Read);
        }
        "scene" | "script" => add(true, Ability::Activate),
        "vacuum" => {
            add(has(8192), Ability::Start);
            add(has(16), Ability::ReturnHome);
            add(true, Ability::Read);
        }
        "sensor" | "binary_sensor" => add(true, Ability::Read),
        _ => {}
    }
    out.sort_unstable();
    out
}

#[derive(Deserialize)]
struct State {
    entity_id: String,
    #[serde(default)]
    attributes: Value,
}

#[derive(Deserialize)]
struct Entry {
    entity_id: String,
    #[serde(default)]
    area_id: Option<String>,
    #[serde(default)]
    device_id: Option<String>,
    #[serde(default)]
    disabled_by: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
}

#[derive(Deserialize)]
struct DeviceEntry {
    id: String,
    #[serde(default)]
    area_id: Option<String>,
}

#[derive(Deserialize)]
struct AreaEntry {
    area_id: String,
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
}

/// One answer read as `T`, the error naming the command.
fn read<T: serde::de::DeserializeOwned>(
    command: &str,
    expected: &'static str,
    value: &Value,
) -> Result<T, HouseError> {
    T::deserialize(value).map_err(|source| HouseError::Shape {
        topic: command.to_owned(),
        expected,
        source,
    })
}

/// The things an exposed, enabled entity of a known domain with a state makes, and the
/// exposed entities left out, from the answers of one read of the registries.
pub fn things(answers: &Answers) -> Result<Found, HouseError> {
    let states: Vec<State> = read("get_states", "an array of states", &answers.states)?;
    let entries: Vec<Entry> = match &answers.entities {
        Value::Object(map) => map
            .values()
            .filter(|v| !v.is_null())
            .map(|v| read("config/entity_registry/get_entries", "entity entries", v))
            .collect::<Result<_, _>>()?,
        other => read(
            "config/entity_registry/list",
            "an array of entity entries",
            other,
        )?,
    };
    let devices: Vec<DeviceEntry> = read(
        "config/device_registry/list",
        "an array of devices",
        &answers.devices,
    )?;
    let area_entries: Vec<AreaEntry> = read(
        "config/area_registry/list",
        "an array of areas",
        &answers.areas,
    )?;
    let exposed = answers
        .exposed
        .get("exposed_entities")
        .and_then(Value::as_object)
        .ok_or_else(|| HouseError::Unexpected {
            topic: "homeassistant/expose_entity/list".to_owned(),
            expected: "an object with exposed_entities",
            got: json_type(&answers.exposed),
        })?;

    let areas: HashMap<&str, Area> = area_entries
        .iter()
        .filter_map(|a| {
            let name = said(&a.name)?;
            let aliases = a.aliases.iter().filter_map(|x| said(x)).collect();
            Some((a.area_id.as_str(), Area { name, aliases }))
        })
        .collect();
    let device_area: HashMap<&str, &str> = devices
        .iter()
        .filter_map(|d| Some((d.id.as_str(), d.area_id.as_deref()?)))
        .collect();
    let entries: HashMap<&str, &Entry> =
        entries.iter().map(|e| (e.entity_id.as_str(), e)).collect();
    let states: HashMap<&str, &State> = states.iter().map(|s| (s.entity_id.as_str(), s)).collect();

    let mut found = Found::default();
    let mut ids: Vec<&String> = exposed
        .iter()
        .filter(|(_, v)| v.get("conversation").and_then(Value::as_bool) == Some(true))
        .map(|(id, _)| id)
        .collect();
    ids.sort_unstable();
    for id in ids {
        let entry = entries.get(id.as_str()).copied();
        let leave = |reason: String| Left {
            entity_id: id.clone(),
            reason,
        };
        let Some(domain) = domain_of(id) else {
            let domain = id.split('.').next().unwrap_or(id);
            found.left.push(leave(format!(
                "hearth has no tools for Home Assistant's {domain} entities yet"
            )));
            continue;
        };
        if let Some(by) = entry.and_then(|e| e.disabled_by.as_deref()) {
            found.left.push(leave(format!("disabled (by {by})")));
            continue;
        }
        let Some(state) = states.get(id.as_str()) else {
            found.left.push(leave(
                "exposed but has no state (its integration has not loaded it)".to_owned(),
            ));
            continue;
        };
        let attributes = &state.attributes;
        let friendly = attributes
            .get("friendly_name")
            .and_then(Value::as_str)
            .unwrap_or_else(|| id.split('.').nth(1).unwrap_or(id));
        let Some(name) = said(friendly) else {
            found.left.push(leave(format!(
                "its name {friendly:?} has no word a person could say: give it a name in Home Assistant"
            )));
            continue;
        };
        let abilities = abilities(domain, attributes);
        if abilities.is_empty() {
            found.left.push(leave(
                "its supported features allow nothing hearth does".to_owned(),
            ));
            continue;
        }
        let area_id = entry.and_then(|e| {
            e.area_id.as_deref().or_else(|| {
                e.device_id
                    .as_deref()
                    .and_then(|d| device_area.get(d).copied())
            })
        });
        let mut aliases: Vec<String> = entry
            .map(|e| e.aliases.iter().filter_map(|a| said(a)).collect())
            .unwrap_or_default();
        aliases.retain(|a| *a != name);
        aliases.dedup();
        let kind = DOMAINS
            .iter()
            .find(|(d, _)| *d == domain)
            .map_or(Kind::Other, |(_, k)| *k);
        let modes = attributes
            .get("hvac_modes")
            .and_then(Value::as_array)
            .map(|m| {
                m.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        found.things.push(Thing {
            source: Source::HomeAssistant,
            id: id.clone(),
            kind,
            name,
            aliases,
            area: area_id.and_then(|a| areas.get(a)).cloned(),
            class: attributes
                .get("device_class")
                .and_then(Value::as_str)
                .map(str::to_owned),
            abilities,
            modes,
            control: Control::HomeAssistant {
                entity_id: id.clone(),
            },
        });
    }
    let mut all_areas: Vec<Area> = areas.into_values().collect();
    all_areas.sort_by(|a, b| a.name.cmp(&b.name));
    found.areas = all_areas;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_follow_the_domain() {
        let on = service("light.kitchen", &Command::Brightness(40)).unwrap();
        assert_eq!((on.domain, on.service), ("light", "turn_on"));
        assert_eq!(
            on.data,
            json!({"entity_id": "light.kitchen", "brightness_pct": 40})
        );
        let vol = service("media_player.kitchen", &Command::Volume(25)).unwrap();
        assert_eq!(vol.data["volume_level"], json!(0.25));
        assert_eq!(service("lock.front_door", &Command::Brightness(4)), None);
        let up = service("light.kitchen", &Command::BrightnessStep(-25)).unwrap();
        assert_eq!((up.domain, up.service), ("light", "turn_on"));
        assert_eq!(
            up.data,
            json!({"entity_id": "light.kitchen", "brightness_step_pct": -25})
        );
        assert_eq!(service("alarm_control_panel.x", &Command::Off), None);
        assert_eq!(service("nodot", &Command::Off), None);
    }

    #[test]
    fn abilities_follow_the_features() {
        let cover = abilities("cover", &json!({"supported_features": 3}));
        assert_eq!(cover, vec![Ability::OpenClose, Ability::Read]);
        let onoff = abilities("light", &json!({"supported_color_modes": ["onoff"]}));
        assert_eq!(onoff, vec![Ability::OnOff, Ability::Read]);
        let media = abilities(
            "media_player",
            &json!({"supported_features": 16384 | 1 | 4}),
        );
        assert!(media.contains(&Ability::PlayPause) && media.contains(&Ability::Volume));
        assert!(!media.contains(&Ability::Track));
        assert!(abilities("weather", &json!({})).is_empty());
    }
}
