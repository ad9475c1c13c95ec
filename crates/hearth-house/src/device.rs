//! The house's model: a device (or a group acting as one), what kind of thing it is, where it
//! is, and what may be read or set on it.

use std::fmt;

use serde_json::Value;

use crate::check;
use crate::HouseError;

/// Which thing a [`Device`] is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceId {
    /// A device, by its IEEE address as Zigbee2MQTT writes it (`0x0017880108a3c1e2`).
    Ieee(String),
    /// A group, by its Zigbee group id.
    Group(u16),
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceId::Ieee(address) => f.write_str(address),
            DeviceId::Group(id) => write!(f, "group {id}"),
        }
    }
}

/// What a device is, as a person would call it.
///
/// A device is of the kind of the first of Zigbee2MQTT's specific exposes (`light`, `switch`,
/// `lock`, `climate`, `cover`, `fan`) it has; one with none of them is a [`Kind::Sensor`] when
/// all it lets be set is configuration, else [`Kind::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A light: on/off, and maybe brightness and colour.
    Light,
    /// A switch or plug: on/off.
    Switch,
    /// A lock: locked/unlocked.
    Lock,
    /// A thermostat or radiator valve: a setpoint, a measured temperature.
    Climate,
    /// A blind, curtain, shade or garage door: open/close/stop, maybe a position.
    Cover,
    /// A fan: on/off, maybe a speed or mode.
    Fan,
    /// A device that only reports (temperature, motion, contact, a remote's actions).
    Sensor,
    /// A media player: play, pause, tracks, volume.
    MediaPlayer,
    /// A scene: set going, nothing to read.
    Scene,
    /// A script or automation's sequence: set going.
    Script,
    /// A robot vacuum: started, sent home.
    Vacuum,
    /// A device with settable features of no kind above (a siren, a valve, a generic relay).
    Other,
}

impl Kind {
    /// The kind's word ("light", "switch", …), as a sentence or a log says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Light => "light",
            Kind::Switch => "switch",
            Kind::Lock => "lock",
            Kind::Climate => "climate",
            Kind::Cover => "cover",
            Kind::Fan => "fan",
            Kind::Sensor => "sensor",
            Kind::MediaPlayer => "media player",
            Kind::Scene => "scene",
            Kind::Script => "script",
            Kind::Vacuum => "vacuum",
            Kind::Other => "other",
        }
    }

    /// The kind's plural ("lights", "switches", "climate devices"), as "all the …" says it.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Light => "lights",
            Kind::Switch => "switches",
            Kind::Lock => "locks",
            Kind::Climate => "climate devices",
            Kind::Cover => "covers",
            Kind::Fan => "fans",
            Kind::Sensor => "sensors",
            Kind::MediaPlayer => "media players",
            Kind::Scene => "scenes",
            Kind::Script => "scripts",
            Kind::Vacuum => "vacuums",
            Kind::Other => "other devices",
        }
    }

    /// The kind a Zigbee2MQTT specific expose's `type` names, if it is one.
    pub(crate) fn of_specific(expose_type: &str) -> Option<Kind> {
        Some(match expose_type {
            "light" => Kind::Light,
            "switch" => Kind::Switch,
            "lock" => Kind::Lock,
            "climate" => Kind::Climate,
            "cover" => Kind::Cover,
            "fan" => Kind::Fan,
            _ => return None,
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What may be done with a feature: Zigbee2MQTT's `access` bits.
///
/// Set only what is settable; read only what is published or gettable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Access(u8);

impl Access {
    /// Bit 1: the device publishes the value on its state topic.
    pub const PUBLISHED: Access = Access(1);
    /// Bit 2: the value may be set through the `/set` topic.
    pub const SETTABLE: Access = Access(2);
    /// Bit 4: the value may be asked for through the `/get` topic.
    pub const GETTABLE: Access = Access(4);

    /// The access of `bits`, or `None` when it has bits other than 1, 2 and 4.
    pub fn from_bits(bits: u64) -> Option<Access> {
        u8::try_from(bits).ok().filter(|b| b & !7 == 0).map(Access)
    }

    /// The bits, as Zigbee2MQTT writes them (7: published, settable and gettable).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Whether the device publishes the value on its state topic.
    pub fn published(self) -> bool {
        self.0 & Self::PUBLISHED.0 != 0
    }

    /// Whether the value may be set.
    pub fn settable(self) -> bool {
        self.0 & Self::SETTABLE.0 != 0
    }

    /// Whether the value may be asked for with `/get`.
    pub fn gettable(self) -> bool {
        self.0 & Self::GETTABLE.0 != 0
    }

    /// Whether the value may be read at all: published, or gettable.
    pub fn readable(self) -> bool {
        self.published() || self.gettable()
    }

    /// What both allow (a group may do what every member may).
    pub(crate) fn both(self, other: Access) -> Access {
        Access(self.0 & other.0)
    }

    /// This access without what `other` allows.
    pub(crate) fn without(self, other: Access) -> Access {
        Access(self.0 & !other.0)
    }
}

/// Whether a feature is the device's purpose, or something around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// A setting (power-on behaviour, child lock, identify).
    Config,
    /// A reading about the device itself (battery, link quality).
    Diagnostic,
}

/// A named value a numeric feature offers ("warm" for a colour temperature).
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The preset's name, which `/set` also takes in place of the number.
    pub name: String,
    /// Its value.
    pub value: Value,
    /// What it is, if Zigbee2MQTT says.
    pub description: Option<String>,
}

/// The values a feature takes: Zigbee2MQTT's generic expose types.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueType {
    /// Two values (and maybe a third that flips between them).
    Binary {
        /// The value for on, locked, true (`"ON"`, `"LOCK"`, `true`).
        on: Value,
        /// The value for off, unlocked, false.
        off: Value,
        /// The value that flips it (`"TOGGLE"`), if there is one.
        toggle: Option<Value>,
    },
    /// A number, within bounds when Zigbee2MQTT gives them.
    Numeric {
        /// The least value.
        min: Option<f64>,
        /// The greatest value.
        max: Option<f64>,
        /// The step between values (a hint; Zigbee2MQTT takes others).
        step: Option<f64>,
        /// The unit (`"°C"`, `"W"`, `"mired"`, `"%"`).
        unit: Option<String>,
        /// Named values.
        presets: Vec<Preset>,
    },
    /// One of a list of values.
    Enum {
        /// The values, as sent and published.
        values: Vec<Value>,
    },
    /// Text.
    Text,
    /// An object of features set together (`color_xy`: `{"x": …, "y": …}`).
    Composite {
        /// Its parts, each by its property within the object.
        features: Vec<Feature>,
    },
    /// An array of one kind of item.
    List {
        /// The items' feature.
        item: Box<Feature>,
        /// The fewest items.
        length_min: Option<u64>,
        /// The most items.
        length_max: Option<u64>,
    },
}

/// One thing a device reports or takes: a Zigbee2MQTT expose, generic or inside a specific one.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// The key in the device's state and in a `/set` payload (`state`, `state_left`,
    /// `occupied_heating_setpoint`).
    pub property: String,
    /// The feature's name, without an endpoint (`state`, `color_xy`).
    pub name: String,
    /// Zigbee2MQTT's label for people ("Occupied heating setpoint").
    pub label: Option<String>,
    /// What it is, if Zigbee2MQTT says.
    pub description: Option<String>,
    /// The endpoint of a device with several (`left`, `right`), if it has one.
    pub endpoint: Option<String>,
    /// The kind of the specific expose it belongs to (a light's `brightness`), if any.
    pub part_of: Option<Kind>,
    /// Setting or diagnostic, if Zigbee2MQTT says.
    pub category: Option<Category>,
    /// What may be done with it.
    pub access: Access,
    /// The values it takes.
    pub value: ValueType,
}

/// Something a device exposes that this crate does not model, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// Its property, name or type, whichever it has.
    pub name: String,
    /// Why it is left out.
    pub reason: String,
}

/// Where a device's messages go: Zigbee2MQTT's topics for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    /// `<base>/<friendly_name>`: the state the device publishes (what `/get` asks for comes
    /// here too).
    pub state: String,
    /// `<base>/<friendly_name>/set`: `{"property": value}` sets a settable feature.
    pub set: String,
    /// `<base>/<friendly_name>/get`: `{"property": ""}` asks for a gettable one.
    pub get: String,
}

impl Topics {
    pub(crate) fn new(base: &str, friendly_name: &str) -> Topics {
        let state = format!("{base}/{friendly_name}");
        Topics {
            set: format!("{state}/set"),
            get: format!("{state}/get"),
            state,
        }
    }
}

/// An MQTT message to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The topic.
    pub topic: String,
    /// The payload: JSON for Zigbee2MQTT; for a discovered component, what its configuration
    /// says (`ON`, `{"state":"ON"}`, `ShutterOpen1`).
    pub payload: String,
}

/// Who made a device, for a log or a question ("the Philips one?").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// The vendor ("Philips").
    pub vendor: String,
    /// The vendor's model ("9290022166").
    pub model: String,
    /// What it is ("Hue white and color ambiance E26/E27").
    pub description: String,
}

/// A device of the house, or a group that acts as one.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Its IEEE address, or group id.
    pub id: DeviceId,
    /// The name Zigbee2MQTT knows it by, in its topics (`living_room/Ceiling Light`).
    pub friendly_name: String,
    /// Its name as people say it: the friendly name's last segment in lower-case words
    /// ("ceiling light").
    pub name: String,
    /// Its room as people say it, when its friendly name has one: the segment before the name
    /// (`living_room/Ceiling Light` is in "living room").
    pub room: Option<String>,
    /// What it is.
    pub kind: Kind,
    /// Vendor and model; `None` for a group.
    pub model: Option<Model>,
    /// A group's members this crate knows (devices it skipped are not here); empty for a
    /// device.
    pub members: Vec<DeviceId>,
    /// What it reports and takes, specific exposes' features first in the order given.
    pub features: Vec<Feature>,
    /// What it exposes that is left out, and why.
    pub unsupported: Vec<Unsupported>,
    /// Its topics.
    pub topics: Topics,
}

impl Device {
    /// The feature with `property` (the first, when two share it: a light's `color` is both
    /// `color_xy` and `color_hs`).
    pub fn feature(&self, property: &str) -> Option<&Feature> {
        self.features.iter().find(|f| f.property == property)
    }

    /// The message that sets `property` to `value`: `{"property": value}` on the `/set` topic.
    ///
    /// Refused unless the device has the property, it is settable and it takes the value (one
    /// of a binary's values, a number within bounds or a preset's name, one of an enum's
    /// values, text, an object of a composite's settable parts, an array of a list's items).
    pub fn set(&self, property: &str, value: Value) -> Result<Message, HouseError> {
        let features = self.features_named(property)?;
        let settable: Vec<&Feature> = features
            .into_iter()
            .filter(|f| f.access.settable())
            .collect();
        let Some(first) = settable.first() else {
            return Err(HouseError::NotSettable {
                device: self.friendly_name.clone(),
                property: property.to_owned(),
            });
        };
        if !settable.iter().any(|f| check::accepts(f, &value)) {
            return Err(HouseError::BadValue {
                device: self.friendly_name.clone(),
                property: property.to_owned(),
                value: value.to_string(),
                expected: check::expected(first),
            });
        }
        let mut payload = serde_json::Map::new();
        payload.insert(property.to_owned(), value);
        Ok(Message {
            topic: self.topics.set.clone(),
            payload: Value::Object(payload).to_string(),
        })
    }

    /// The message that asks the device for `property`: `{"property": ""}` on the `/get`
    /// topic; the answer comes on the state topic. Refused unless the property is gettable.
    pub fn get(&self, property: &str) -> Result<Message, HouseError> {
        let features = self.features_named(property)?;
        if !features.iter().any(|f| f.access.gettable()) {
            return Err(HouseError::NotGettable {
                device: self.friendly_name.clone(),
                property: property.to_owned(),
                state_topic: self.topics.state.clone(),
            });
        }
        let mut payload = serde_json::Map::new();
        payload.insert(property.to_owned(), Value::String(String::new()));
        Ok(Message {
            topic: self.topics.get.clone(),
            payload: Value::Object(payload).to_string(),
        })
    }

    fn features_named(&self, property: &str) -> Result<Vec<&Feature>, HouseError> {
        let found: Vec<&Feature> = self
            .features
            .iter()
            .filter(|f| f.property == property)
            .collect();
        if found.is_empty() {
            let mut known: Vec<&str> = self.features.iter().map(|f| f.property.as_str()).collect();
            known.dedup();
            return Err(HouseError::NoSuchFeature {
                device: self.friendly_name.clone(),
                property: property.to_owned(),
                known: known.join(", "),
            });
        }
        Ok(found)
    }
}
