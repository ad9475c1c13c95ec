//! The house as one list, whatever announced it: a [`Thing`] is one device, entity or group
//! a person can name, with the words they name it and its room by, what may be done with it
//! ([`Ability`]), and how a call reaches it ([`Control`]). Home Assistant's entities,
//! Zigbee2MQTT's devices and MQTT discovery's components all become things, so the tools, the
//! sentences and the phrase set are made once from one list.

use std::fmt;

use crate::device::{Device, Kind};
use crate::discovery::Component;

/// Which system announced a thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// Home Assistant's entity registry and states, over its WebSocket API.
    HomeAssistant,
    /// Zigbee2MQTT's retained `bridge/devices` and `bridge/groups`.
    Zigbee2mqtt,
    /// MQTT discovery (`homeassistant/<component>/…/config`): Tasmota, ESPHome and others.
    Discovery,
}

impl Source {
    /// The source as `hearth devices`, D-Bus and the logs name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::HomeAssistant => "homeassistant",
            Source::Zigbee2mqtt => "zigbee2mqtt",
            Source::Discovery => "mqtt-discovery",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something a thing lets be done, whatever the system behind it calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ability {
    /// Turned on and off (a light, switch, fan, a media player's power).
    OnOff,
    /// A brightness, in percent.
    Brightness,
    /// A white's colour temperature, in kelvin.
    ColorTemperature,
    /// A colour, by name.
    Color,
    /// Opened and closed (a cover).
    OpenClose,
    /// A moving cover stopped.
    Stop,
    /// A cover's position, in percent open.
    Position,
    /// Locked and unlocked.
    Lock,
    /// A fan's speed, in percent.
    Speed,
    /// A thermostat's target temperature.
    TargetTemperature,
    /// A thermostat's mode (heat, cool, auto, off).
    Mode,
    /// A media player's play and pause.
    PlayPause,
    /// A media player's next and previous track.
    Track,
    /// A media player's volume, in percent.
    Volume,
    /// A media player muted and unmuted.
    Mute,
    /// A scene or script set going.
    Activate,
    /// A vacuum started.
    Start,
    /// A vacuum sent back to its dock.
    ReturnHome,
    /// Its state read ("is the back door open?", "what's the temperature outside?", "what's
    /// playing?").
    Read,
}

/// A command to a thing, whatever system runs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Turn on.
    On,
    /// Turn off.
    Off,
    /// Brightness, percent.
    Brightness(u8),
    /// Brightness up (more than 0) or down by so many percentage points.
    BrightnessStep(i8),
    /// Colour temperature, kelvin.
    ColorTemperature(u32),
    /// A colour by its CSS name ("red").
    Color(String),
    /// Open a cover.
    Open,
    /// Close a cover.
    Close,
    /// Stop a cover.
    Stop,
    /// A cover's position, percent open.
    Position(u8),
    /// Lock.
    Lock,
    /// Unlock.
    Unlock,
    /// A fan's speed, percent.
    Speed(u8),
    /// A thermostat's target temperature, in its unit.
    TargetTemperature(f64),
    /// A thermostat's mode, as the system names it.
    Mode(String),
    /// Play.
    Play,
    /// Pause.
    Pause,
    /// Next track.
    Next,
    /// Previous track.
    Previous,
    /// Volume, percent.
    Volume(u8),
    /// Mute (`true`) or unmute.
    Mute(bool),
    /// Set a scene or script going.
    Activate,
    /// Start a vacuum.
    Start,
    /// Send a vacuum home.
    ReturnHome,
}

impl Command {
    /// The ability a thing needs to take this command.
    pub fn needs(&self) -> Ability {
        match self {
            Command::On | Command::Off => Ability::OnOff,
            Command::Brightness(_) | Command::BrightnessStep(_) => Ability::Brightness,
            Command::ColorTemperature(_) => Ability::ColorTemperature,
            Command::Color(_) => Ability::Color,
            Command::Open | Command::Close => Ability::OpenClose,
            Command::Stop => Ability::Stop,
            Command::Position(_) => Ability::Position,
            Command::Lock | Command::Unlock => Ability::Lock,
            Command::Speed(_) => Ability::Speed,
            Command::TargetTemperature(_) => Ability::TargetTemperature,
            Command::Mode(_) => Ability::Mode,
            Command::Play | Command::Pause => Ability::PlayPause,
            Command::Next | Command::Previous => Ability::Track,
            Command::Volume(_) => Ability::Volume,
            Command::Mute(_) => Ability::Mute,
            Command::Activate => Ability::Activate,
            Command::Start => Ability::Start,
            Command::ReturnHome => Ability::ReturnHome,
        }
    }

    /// What the command does, as "… cannot {doing}" says it.
    pub(crate) fn doing(&self) -> &'static str {
        match self {
            Command::On => "turn on",
            Command::Off => "turn off",
            Command::Brightness(_) => "be dimmed",
            Command::BrightnessStep(_) => "be made brighter or dimmer by a step",
            Command::ColorTemperature(_) => "change its colour temperature",
            Command::Color(_) => "change colour",
            Command::Open => "open",
            Command::Close => "close",
            Command::Stop => "stop",
            Command::Position(_) => "move to a position",
            Command::Lock => "lock",
            Command::Unlock => "unlock",
            Command::Speed(_) => "change speed",
            Command::TargetTemperature(_) => "take a target temperature",
            Command::Mode(_) => "change mode",
            Command::Play => "play",
            Command::Pause => "pause",
            Command::Next | Command::Previous => "change track",
            Command::Volume(_) => "change volume",
            Command::Mute(_) => "be muted",
            Command::Activate => "be set going",
            Command::Start => "start",
            Command::ReturnHome => "go home",
        }
    }
}

/// What a thing measures that people ask of a place rather than of the thing ("how warm is
/// it in the kitchen?", "how humid is it outside?").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    /// The temperature: a temperature sensor's, or the room's as a thermostat reads it.
    Temperature,
    /// The relative humidity.
    Humidity,
}

impl Measure {
    /// Every measure.
    pub const ALL: [Measure; 2] = [Measure::Temperature, Measure::Humidity];

    /// Its name, as a device class and a Zigbee2MQTT property write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Temperature => "temperature",
            Measure::Humidity => "humidity",
        }
    }
}

/// An area (a room) and the other words for it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Area {
    /// Its name as people say it ("living room").
    pub name: String,
    /// Other names for it ("lounge").
    pub aliases: Vec<String>,
}

impl Area {
    /// The area with only a name.
    pub fn named(name: impl Into<String>) -> Area {
        Area {
            name: name.into(),
            aliases: Vec::new(),
        }
    }

    /// Its name, then its aliases.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// How a call reaches a thing.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// A Home Assistant entity: services called on its id, its state read by it.
    HomeAssistant {
        /// `light.kitchen`.
        entity_id: String,
    },
    /// A Zigbee2MQTT device or group: `/set` messages built by [`Device::set`]
    /// ([`crate::zigbee2mqtt::message`]), its state read from its state topic
    /// ([`crate::zigbee2mqtt::reading`]).
    Zigbee2mqtt(Box<Device>),
    /// A component found by MQTT discovery: messages to its command topics
    /// ([`crate::discovery::message`]), its state read from its state topics
    /// ([`crate::discovery::reading`]).
    Mqtt(Box<Component>),
}

/// One thing of the house a person can name.
#[derive(Debug, Clone, PartialEq)]
pub struct Thing {
    /// Who announced it.
    pub source: Source,
    /// Its id in that system (an entity id, an IEEE address, a group id), for logs and for
    /// `hearth devices`.
    pub id: String,
    /// What it is.
    pub kind: Kind,
    /// Its name as people say it: lower case ("kitchen light").
    pub name: String,
    /// Other names for it, lower case.
    pub aliases: Vec<String>,
    /// Where it is, when the system says.
    pub area: Option<Area>,
    /// Its device class, when the system gives one (`garage`, `door`, `temperature`).
    pub class: Option<String>,
    /// What may be done with it, sorted.
    pub abilities: Vec<Ability>,
    /// A thermostat's modes, as the system names them (`heat`, `cool`, `auto`).
    pub modes: Vec<String>,
    /// How a call reaches it.
    pub control: Control,
}

impl Thing {
    /// Whether it lets `ability` be done.
    pub fn can(&self, ability: Ability) -> bool {
        self.abilities.contains(&ability)
    }

    /// Its name, then its aliases.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }

    /// What it measures of its place, read by [`Ability::Read`]: a thermostat the
    /// temperature; a sensor what its device class says; a Zigbee2MQTT device the
    /// `temperature` and `humidity` it publishes or gives on a get.
    pub fn measures(&self) -> Vec<Measure> {
        if !self.can(Ability::Read) {
            return Vec::new();
        }
        if self.kind == Kind::Climate {
            return vec![Measure::Temperature];
        }
        Measure::ALL
            .into_iter()
            .filter(|m| match &self.control {
                Control::Zigbee2mqtt(device) => device
                    .feature(m.as_str())
                    .is_some_and(|f| f.access.readable()),
                Control::HomeAssistant { .. } | Control::Mqtt(_) => {
                    self.class.as_deref() == Some(m.as_str())
                }
            })
            .collect()
    }

    /// Whether opening it lets someone in: a lock, or a cover of class garage, gate or door.
    /// Such calls wait for a yes.
    pub fn guards_a_way_in(&self) -> bool {
        self.kind == Kind::Lock
            || (self.kind == Kind::Cover
                && matches!(self.class.as_deref(), Some("garage" | "gate" | "door")))
    }
}

/// Lower-case words for a name as a system writes it ("Kitchen  Light" → "kitchen light");
/// `None` when nothing sayable is left.
pub(crate) fn said(name: &str) -> Option<String> {
    let words = crate::words::words(name);
    (!words.is_empty()).then_some(words)
}
