//! Things announced by MQTT discovery, the retained configurations Tasmota, ESPHome,
//! Zigbee2MQTT and others publish for Home Assistant, read without one.
//!
//! A publisher announces each component on `<prefix>/<component>/[<node_id>/]<object_id>/config`
//! (prefix `homeassistant` unless configured), or all of a device's at once on
//! `<prefix>/device/<object_id>/config` with a `components` (`cmps`) map, each with its
//! `platform` (`p`); an empty payload on a config topic removes what it announced. Options may
//! be abbreviated (`cmd_t`, `stat_t`, `dev`, `sa`) and topics may start or end with the `~`
//! base topic: both are expanded as Home Assistant expands them (`expand.rs`).
//!
//! [`Discovery`] keeps what the config topics announce, message by message
//! ([`Discovery::message`]), and makes it [`Thing`]s ([`Discovery::things`]) with the
//! components left out and why ([`Left`]). [`message`] runs a [`Command`](crate::Command) on
//! a component, [`reading`] words its state from its state topics
//! ([`Component::state_topics`]).
//!
//! Supported: `light` (default and `json` schemas), `switch`, `fan`, `cover`, `lock`,
//! `climate`, `sensor`, `binary_sensor`. Left out, each with its reason: other platforms
//! (`camera`, `button`, `number`, …), the `template` light schema, a light, fan or lock
//! without the `command_topic` Home Assistant requires, a sensor without a `state_topic`, a
//! state template other than `{{ value }}` or a path into `value_json` (no Jinja engine
//! here), a diagnostic or config entity, one disabled by default, one with no sayable name, a
//! second component with a `unique_id` already taken. A command template that only puts the
//! value in (`{ "position": {{ position }} }`) is rendered; any other drops the ability it
//! serves ([`Component::ignored`] says which). Availability, `qos`, `retain`, `encoding`,
//! `optimistic` and effects are not read: a command is one [`Message`](crate::Message), and a
//! thing that is offline does not answer.
//!
//! ```
//! use hearth_house::discovery::{self, Change, Discovery};
//! use hearth_house::{Command, Control};
//!
//! let mut found = Discovery::default();
//! let relay = br#"{"name":"Kettle","stat_t":"tele/tasmota_8E4F2A/STATE","cmd_t":"cmnd/tasmota_8E4F2A/POWER","pl_off":"OFF","pl_on":"ON","val_tpl":"{{value_json.POWER}}","uniq_id":"8E4F2A_RL_1","dev":{"ids":["8E4F2A"]}}"#;
//! let change = found.message("homeassistant/switch/8E4F2A_RL_1/config", relay)?;
//! assert_eq!(change, Change::Added);
//! let (things, left) = found.things();
//! assert!(left.is_empty());
//! let Control::Mqtt(kettle) = &things[0].control else { unreachable!() };
//! let on = discovery::message(kettle, &Command::On)?;
//! assert_eq!((on.topic.as_str(), on.payload.as_str()), ("cmnd/tasmota_8E4F2A/POWER", "ON"));
//! assert_eq!(kettle.state_topics(), ["tele/tasmota_8E4F2A/STATE"]);
//! let state = br#"{"Time":"2024-11-02T10:15:00","POWER":"OFF"}"#;
//! let said = discovery::reading(kettle, |_| Some(state.as_slice()))?;
//! assert_eq!(said, "The kettle is off.");
//! # Ok::<(), hearth_house::HouseError>(())
//! ```
//!
//! Read as Home Assistant's MQTT documentation describes discovery (with device-based
//! discovery, 2024.11 on) and as Tasmota, ESPHome 2024.11 and Zigbee2MQTT 2.12 publish it
//! (`tests/corpus/discovery/README.md`).

mod component;
mod expand;
mod reading;
mod send;
mod template;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value};

use crate::error::json_type;
use crate::thing::{said, Area, Control, Source, Thing};
use crate::HouseError;
use component::Named;

pub use component::{Component, Platform};
pub use reading::reading;
pub use send::message;

/// The options a device payload shares with its components (those a component does not set
/// itself), besides `device` and `origin`, which it cannot override.
const SHARED: [&str; 10] = [
    "availability",
    "availability_mode",
    "availability_template",
    "availability_topic",
    "command_topic",
    "encoding",
    "payload_available",
    "payload_not_available",
    "qos",
    "state_topic",
];

/// What one message did to what [`Discovery`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A config topic announced for the first time (what it announces may still be left out:
    /// [`Discovery::things`] says why).
    Added,
    /// A config topic announced again, differently.
    Updated,
    /// A config topic's announcement removed (an empty payload, or `migrate_discovery`).
    Removed,
    /// Nothing changed: the same payload again, or an empty one on a topic not announced.
    Unchanged,
    /// The topic is not a discovery config topic (a state topic, the `homeassistant/status`
    /// birth message).
    NotDiscovery,
}

/// A component announced but left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// The config topic that announced it.
    pub topic: String,
    /// Its key under `components`, in a device payload.
    pub component: Option<String>,
    /// Why, as a sentence for a log.
    pub reason: String,
}

impl fmt::Display for Left {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.component {
            Some(key) => write!(f, "{} ({key}): {}", self.topic, self.reason),
            None => write!(f, "{}: {}", self.topic, self.reason),
        }
    }
}

/// One config topic's announcement: its payload, and what each component of it became.
#[derive(Debug, Clone)]
struct Announced {
    payload: Vec<u8>,
    parts: Vec<(Option<String>, Result<Component, String>)>,
}

/// What the discovery config topics announce, kept as their messages come (retained ones
/// first, on subscribing to `<prefix>/#`).
#[derive(Debug, Clone)]
pub struct Discovery {
    prefix: String,
    announced: BTreeMap<String, Announced>,
}

impl Default for Discovery {
    /// Discovery under Home Assistant's default prefix, `homeassistant`.
    fn default() -> Discovery {
        Discovery::new("homeassistant")
    }
}

impl Discovery {
    /// Discovery under `prefix` (Home Assistant's `discovery_prefix`; subscribe to
    /// `<prefix>/#`).
    pub fn new(prefix: &str) -> Discovery {
        Discovery {
            prefix: prefix.trim_end_matches('/').to_owned(),
            announced: BTreeMap::new(),
        }
    }

    /// The prefix it reads config topics under.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Takes one message: a config topic's payload is kept (replacing what the topic
    /// announced before; for a device payload, all its components), an empty one removes
    /// it. What it says of the topic, or an error for a config payload that is not a JSON
    /// object (what the topic announced before is kept, as Home Assistant keeps it).
    pub fn message(&mut self, topic: &str, payload: &[u8]) -> Result<Change, HouseError> {
        let Some((platform, discovery_id)) = self.config_topic(topic) else {
            return Ok(Change::NotDiscovery);
        };
        if payload.is_empty() {
            return Ok(self.remove(topic));
        }
        if self
            .announced
            .get(topic)
            .is_some_and(|a| a.payload == payload)
        {
            return Ok(Change::Unchanged);
        }
        let expected = "a JSON object of a component's configuration";
        let mut map = match serde_json::from_slice(payload) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(HouseError::Unexpected {
                    topic: topic.to_owned(),
                    expected,
                    got: json_type(&other),
                })
            }
            Err(source) => {
                return Err(HouseError::NotJson {
                    topic: topic.to_owned(),
                    expected,
                    source,
                })
            }
        };
        expand::expand(&mut map, false);
        if map.get("migrate_discovery") == Some(&Value::Bool(true)) {
            return Ok(self.remove(topic));
        }
        let parts = if platform == "device" {
            device_parts(topic, &discovery_id, map)
        } else {
            expand::base_topic(&mut map, None);
            let parsed = component::component(topic, None, discovery_id, &platform, &map);
            vec![(None, parsed)]
        };
        let announced = Announced {
            payload: payload.to_vec(),
            parts,
        };
        Ok(match self.announced.insert(topic.to_owned(), announced) {
            Some(_) => Change::Updated,
            None => Change::Added,
        })
    }

    fn remove(&mut self, topic: &str) -> Change {
        match self.announced.remove(topic) {
            Some(_) => Change::Removed,
            None => Change::Unchanged,
        }
    }

    /// The platform and Home Assistant's discovery id of a config topic, `None` for any
    /// other topic.
    fn config_topic(&self, topic: &str) -> Option<(String, String)> {
        let rest = topic.strip_prefix(&self.prefix)?.strip_prefix('/')?;
        let parts: Vec<&str> = rest.split('/').collect();
        let (platform, node, object) = match parts.as_slice() {
            [platform, object, "config"] => (*platform, None, *object),
            [platform, node, object, "config"] => (*platform, Some(*node), *object),
            _ => return None,
        };
        let id = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        let word = !platform.is_empty()
            && platform
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !word || !id(object) || !node.is_none_or(id) {
            return None;
        }
        let discovery_id = match node {
            Some(node) => format!("{node} {object}"),
            None => object.to_owned(),
        };
        Some((platform.to_owned(), discovery_id))
    }

    /// The things the announced components make, in the order of their config topics, and
    /// the components left out, each with its reason.
    ///
    /// A thing is named as Home Assistant names the entity: the device's name and the
    /// component's (`"Kettle Plug"` and `"Kettle"`: "kettle plug kettle"), the device's
    /// alone when the component's is `null` or empty (its main feature) or already starts
    /// with it; the component's own name is then an alias ("kettle"). A component without a
    /// `name` is named by its `device_class` (a sensor's "temperature") if it has one, else
    /// as its device. A device's name and `suggested_area` (its area) are shared by the
    /// components announcing the same `identifiers` or `connections`, as Home Assistant's
    /// device registry shares them.
    pub fn things(&self) -> (Vec<Thing>, Vec<Left>) {
        let mut left = Vec::new();
        let mut found: Vec<&Component> = Vec::new();
        for (topic, announced) in &self.announced {
            for (key, parsed) in &announced.parts {
                match parsed {
                    Ok(component) => found.push(component),
                    Err(reason) => left.push(Left {
                        topic: topic.clone(),
                        component: key.clone(),
                        reason: reason.clone(),
                    }),
                }
            }
        }
        let mut devices: HashMap<&str, (Option<&str>, Option<&str>)> = HashMap::new();
        for c in &found {
            if c.device.name.is_some() || c.device.area.is_some() {
                for id in &c.device.identifiers {
                    let entry = devices.entry(id.as_str()).or_default();
                    entry.0 = entry.0.or(c.device.name.as_deref());
                    entry.1 = entry.1.or(c.device.area.as_deref());
                }
            }
        }
        let shared = |c: &Component, area: bool| {
            c.device
                .identifiers
                .iter()
                .find_map(|id| {
                    let (name, in_area) = devices.get(id.as_str())?;
                    if area {
                        *in_area
                    } else {
                        *name
                    }
                })
                .map(str::to_owned)
        };
        let mut unique_ids = HashSet::new();
        let mut things = Vec::new();
        for c in found {
            let leave = |reason: String| Left {
                topic: c.config_topic.clone(),
                component: c.key.clone(),
                reason,
            };
            let device_name = c.device.name.clone().or_else(|| shared(c, false));
            let area = c.device.area.clone().or_else(|| shared(c, true));
            let Some((name, alias)) = naming(c, device_name.as_deref()) else {
                left.push(leave(
                    "no name a person could say: give it or its device a name".to_owned(),
                ));
                continue;
            };
            if let Some(id) = &c.unique_id {
                if !unique_ids.insert(id.as_str()) {
                    left.push(leave(format!(
                        "another component has the unique id {id:?}; the first keeps it"
                    )));
                    continue;
                }
            }
            let mut component = c.clone();
            component.name = name.clone();
            let (abilities, modes) = component.abilities();
            things.push(Thing {
                source: Source::Discovery,
                id: c
                    .unique_id
                    .clone()
                    .unwrap_or_else(|| format!("{} {}", c.platform.as_str(), c.discovery_id)),
                kind: c.platform.kind(),
                name,
                aliases: alias.into_iter().collect(),
                area: area.as_deref().and_then(said).map(Area::named),
                class: c.class.clone(),
                abilities,
                modes,
                control: Control::Mqtt(Box::new(component)),
            });
        }
        (things, left)
    }

    /// Every state topic of every component announced, each once, sorted: the topics to
    /// subscribe to for [`reading`].
    pub fn state_topics(&self) -> Vec<&str> {
        let mut topics: Vec<&str> = self
            .announced
            .values()
            .flat_map(|a| a.parts.iter())
            .filter_map(|(_, parsed)| parsed.as_ref().ok())
            .flat_map(Component::state_topics)
            .collect();
        topics.sort_unstable();
        topics.dedup();
        topics
    }
}

/// A component's name as people say it and its own name as an alias, from its device's.
fn naming(c: &Component, device: Option<&str>) -> Option<(String, Option<String>)> {
    let device = device.and_then(said);
    let own = match &c.named {
        Named::Own(name) => said(name),
        Named::Device => None,
        Named::Absent => c
            .class
            .as_deref()
            .filter(|_| {
                matches!(
                    c.platform,
                    component::Platform::Sensor | component::Platform::BinarySensor
                )
            })
            .and_then(said),
    };
    match (own, device) {
        (Some(own), Some(device)) => {
            if own == device || own.starts_with(&format!("{device} ")) {
                Some((own, None))
            } else {
                Some((format!("{device} {own}"), Some(own)))
            }
        }
        (Some(own), None) => Some((own, None)),
        (None, Some(device)) => Some((device, None)),
        (None, None) => None,
    }
}

/// The components of a device payload, with the options they share filled in, each with its
/// key; a component given only its `platform` is one the payload removes, and is not there.
fn device_parts(
    topic: &str,
    object_id: &str,
    mut map: Map<String, Value>,
) -> Vec<(Option<String>, Result<Component, String>)> {
    let Some(Value::Object(components)) = map.remove("components") else {
        return vec![(
            None,
            Err("a device payload without a `components` (`cmps`) map".to_owned()),
        )];
    };
    let base = map.get("~").and_then(Value::as_str).map(str::to_owned);
    let mut parts = Vec::new();
    for (key, config) in components {
        let Value::Object(mut config) = config else {
            parts.push((
                Some(key),
                Err("a component that is not a JSON object".to_owned()),
            ));
            continue;
        };
        let Some(Value::String(platform)) = config.remove("platform") else {
            parts.push((
                Some(key),
                Err("a component without its `platform` (`p`)".to_owned()),
            ));
            continue;
        };
        if config.is_empty() {
            continue;
        }
        for option in SHARED {
            if !config.contains_key(option) {
                if let Some(value) = map.get(option) {
                    config.insert(option.to_owned(), value.clone());
                }
            }
        }
        for option in ["device", "origin"] {
            if let Some(value) = map.get(option) {
                config.insert(option.to_owned(), value.clone());
            }
        }
        expand::base_topic(&mut config, base.as_deref());
        let discovery_id = format!("{object_id} {key}");
        let parsed = component::component(topic, Some(&key), discovery_id, &platform, &config);
        parts.push((Some(key), parsed));
    }
    parts
}
