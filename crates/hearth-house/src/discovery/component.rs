//! One discovered component, read from its configuration (abbreviations and `~` already
//! expanded) into what hearth sends and reads: its command topics and payloads, and the
//! topics and templates its state comes on. Option names and defaults are those of Home
//! Assistant's MQTT platforms (`light.mqtt`, `switch.mqtt`, … in its documentation).

use serde_json::{Map, Value};

use super::template::{self, Extract, Fill};
use crate::device::Kind;
use crate::thing::Ability;

/// Which of Home Assistant's MQTT platforms a component is, of those hearth has tools for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// `light`: on/off, brightness, colour temperature, colour.
    Light,
    /// `switch`: on/off.
    Switch,
    /// `fan`: on/off, a speed in percent.
    Fan,
    /// `cover`: open, close, stop, a position.
    Cover,
    /// `lock`: lock, unlock.
    Lock,
    /// `climate`: a target temperature, a mode.
    Climate,
    /// `sensor`: a reading.
    Sensor,
    /// `binary_sensor`: on or off (open, detected, wet).
    BinarySensor,
}

impl Platform {
    /// The platform as a discovery topic names it (`binary_sensor`).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Light => "light",
            Platform::Switch => "switch",
            Platform::Fan => "fan",
            Platform::Cover => "cover",
            Platform::Lock => "lock",
            Platform::Climate => "climate",
            Platform::Sensor => "sensor",
            Platform::BinarySensor => "binary_sensor",
        }
    }

    fn of(name: &str) -> Option<Platform> {
        Some(match name {
            "light" => Platform::Light,
            "switch" => Platform::Switch,
            "fan" => Platform::Fan,
            "cover" => Platform::Cover,
            "lock" => Platform::Lock,
            "climate" => Platform::Climate,
            "sensor" => Platform::Sensor,
            "binary_sensor" => Platform::BinarySensor,
            _ => return None,
        })
    }

    /// The kind of thing a component of this platform is.
    pub(super) fn kind(self) -> Kind {
        match self {
            Platform::Light => Kind::Light,
            Platform::Switch => Kind::Switch,
            Platform::Fan => Kind::Fan,
            Platform::Cover => Kind::Cover,
            Platform::Lock => Kind::Lock,
            Platform::Climate => Kind::Climate,
            Platform::Sensor | Platform::BinarySensor => Kind::Sensor,
        }
    }
}

/// The platforms Home Assistant's MQTT discovery knows that hearth has no tools for.
const OTHER_PLATFORMS: [&str; 20] = [
    "alarm_control_panel",
    "button",
    "camera",
    "device_automation",
    "device_tracker",
    "event",
    "humidifier",
    "image",
    "lawn_mower",
    "notify",
    "number",
    "scene",
    "select",
    "siren",
    "tag",
    "text",
    "update",
    "vacuum",
    "valve",
    "water_heater",
];

/// A component's own `name` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Named {
    /// No `name`.
    Absent,
    /// `null` or `""`: the device's name is the component's (its main feature).
    Device,
    /// A name.
    Own(String),
}

/// The `device` mapping, as far as naming goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct DeviceInfo {
    /// `name`.
    pub(super) name: Option<String>,
    /// `suggested_area`.
    pub(super) area: Option<String>,
    /// `identifiers` and `connections` (as `type:value`), by which components share a
    /// device's name and area.
    pub(super) identifiers: Vec<String>,
}

/// What a state topic's value is of a component's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// On or off, locked, open, a reading: the `state_topic`'s value.
    State,
    /// A cover's `position_topic`.
    Position,
    /// A thermostat's `current_temperature_topic`.
    Current,
    /// A thermostat's `temperature_state_topic`.
    Target,
    /// A thermostat's `mode_state_topic`.
    Mode,
}

/// A topic the component publishes its state on, and how its value is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Watch {
    pub(super) topic: String,
    pub(super) extract: Extract,
    pub(super) part: Part,
}

/// A command topic, and the command template that makes its payload, when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) topic: String,
    pub(super) fill: Option<Fill>,
}

impl Target {
    /// The payload for `value`: the value, or the template with the value in it.
    pub(super) fn payload(&self, value: &str) -> String {
        match &self.fill {
            Some(fill) => fill.render(value),
            None => value.to_owned(),
        }
    }
}

/// A command topic with the payloads for on and off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Switched {
    pub(super) target: Target,
    pub(super) on: String,
    pub(super) off: String,
}

/// How a colour is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColorForm {
    /// `x,y`; `{"x":…,"y":…}`.
    Xy,
    /// `h,s`; `{"h":…,"s":…}`.
    Hs,
    /// `r,g,b`.
    Rgb,
    /// `r,g,b,w`, white 0.
    Rgbw,
    /// `r,g,b,c,w`, whites 0.
    Rgbww,
}

/// A light's options.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Light {
    /// The `command_topic`.
    pub(super) command: String,
    /// Whether it is of the `json` schema (else the default one).
    pub(super) json: bool,
    /// `payload_on`, `payload_off` (the default schema).
    pub(super) on: String,
    pub(super) off: String,
    /// Where brightness goes (the default schema's `brightness_command_topic`; `None` for
    /// the json schema, which sends it on the command topic) and its `brightness_scale`.
    pub(super) brightness: Option<(Option<Target>, f64)>,
    /// Where a colour temperature goes, whether in kelvin (`color_temp_kelvin`), and its
    /// bounds in mired.
    pub(super) color_temp: Option<ColorTemp>,
    /// Where a colour goes, and in what form.
    pub(super) color: Option<(Option<Target>, ColorForm)>,
}

/// A light's colour temperature options.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ColorTemp {
    pub(super) topic: Option<Target>,
    pub(super) kelvin: bool,
    pub(super) min_mireds: f64,
    pub(super) max_mireds: f64,
}

/// A cover's options.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cover {
    pub(super) command: Option<String>,
    pub(super) open: Option<String>,
    pub(super) close: Option<String>,
    pub(super) stop: Option<String>,
    /// `set_position_topic`.
    pub(super) set_position: Option<Target>,
    /// `position_open`, `position_closed`: the values of fully open and closed.
    pub(super) position_open: f64,
    pub(super) position_closed: f64,
}

/// A thermostat's options.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Climate {
    /// `temperature_command_topic`.
    pub(super) temperature: Option<Target>,
    pub(super) min_temp: f64,
    pub(super) max_temp: f64,
    pub(super) temp_step: f64,
    /// `mode_command_topic`.
    pub(super) mode: Option<Target>,
    pub(super) modes: Vec<String>,
}

/// What a component takes and how its state is worded, by platform.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Spec {
    /// A switch: its command, and its `state_on`/`state_off`.
    Switch {
        command: Option<Switched>,
        state_on: String,
        state_off: String,
    },
    /// A light, and the state values of on and off.
    Light {
        light: Light,
        state_on: String,
        state_off: String,
    },
    /// A fan: on/off, its `percentage_command_topic` with `speed_range_min` and
    /// `speed_range_max`, and the state values of on and off.
    Fan {
        command: Option<Switched>,
        speed: Option<(Target, f64, f64)>,
        state_on: String,
        state_off: String,
    },
    /// A cover, and its state values with their words.
    Cover {
        cover: Cover,
        states: Vec<(String, &'static str)>,
    },
    /// A lock: its command topic, `payload_lock`, `payload_unlock`, and its state values
    /// with their words.
    Lock {
        command: Option<(Target, String, String)>,
        states: Vec<(String, &'static str)>,
    },
    /// A thermostat.
    Climate(Climate),
    /// A sensor and its unit.
    Sensor { unit: Option<String> },
    /// A binary sensor's `payload_on` and `payload_off`.
    BinarySensor { on: String, off: String },
}

/// A component found by MQTT discovery: what hearth sends it and reads from it.
///
/// Made by [`super::Discovery`]; its [`super::message`] runs a command on it and its
/// [`super::reading`] words its state.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub(super) config_topic: String,
    /// The key under `components` of a device payload.
    pub(super) key: Option<String>,
    /// Home Assistant's discovery id: `[node_id ]object_id`, or the device payload's
    /// `object_id` and the component's key.
    pub(super) discovery_id: String,
    pub(super) platform: Platform,
    pub(super) unique_id: Option<String>,
    pub(super) named: Named,
    pub(super) device: DeviceInfo,
    /// Its name as people say it; set when it becomes a thing.
    pub(super) name: String,
    pub(super) class: Option<String>,
    pub(super) origin: Option<String>,
    pub(super) spec: Spec,
    pub(super) watches: Vec<Watch>,
    pub(super) ignored: Vec<String>,
}

impl Component {
    /// Its platform.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The topic it was announced on.
    pub fn config_topic(&self) -> &str {
        &self.config_topic
    }

    /// Its `unique_id`, when it has one.
    pub fn unique_id(&self) -> Option<&str> {
        self.unique_id.as_deref()
    }

    /// Its name as people say it ("kitchen light"), as its thing has it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `origin` mapping's name: the software that announced it ("Zigbee2MQTT"), when it
    /// says. A caller that reads Zigbee2MQTT's bridge itself can leave out what Zigbee2MQTT
    /// announces here too.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// Every topic its state comes on, each once: the topics to subscribe to, whose last
    /// payloads [`super::reading`] reads.
    pub fn state_topics(&self) -> Vec<&str> {
        let mut topics: Vec<&str> = Vec::new();
        for watch in &self.watches {
            if !topics.contains(&watch.topic.as_str()) {
                topics.push(&watch.topic);
            }
        }
        topics
    }

    /// Options it gives that hearth does not follow, each with the reason: a command template
    /// that does more than put the value in (what it would send cannot be made without Home
    /// Assistant's Jinja engine, so the ability it serves is left out), or a state template
    /// other than a path into `value_json` for a state it can do without (that state is not
    /// read).
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// What it lets be done, sorted, and a thermostat's modes.
    pub(super) fn abilities(&self) -> (Vec<Ability>, Vec<String>) {
        let mut out = Vec::new();
        let mut modes = Vec::new();
        let mut add = |yes: bool, ability: Ability| {
            if yes {
                out.push(ability);
            }
        };
        match &self.spec {
            Spec::Switch { command, .. } => add(command.is_some(), Ability::OnOff),
            Spec::Light { light, .. } => {
                add(true, Ability::OnOff);
                add(light.brightness.is_some(), Ability::Brightness);
                add(light.color_temp.is_some(), Ability::ColorTemperature);
                add(light.color.is_some(), Ability::Color);
            }
            Spec::Fan { command, speed, .. } => {
                add(command.is_some(), Ability::OnOff);
                add(speed.is_some(), Ability::Speed);
            }
            Spec::Cover { cover, .. } => {
                let command = cover.command.is_some();
                add(
                    command && cover.open.is_some() && cover.close.is_some(),
                    Ability::OpenClose,
                );
                add(command && cover.stop.is_some(), Ability::Stop);
                add(cover.set_position.is_some(), Ability::Position);
            }
            Spec::Lock { command, .. } => add(command.is_some(), Ability::Lock),
            Spec::Climate(climate) => {
                add(climate.temperature.is_some(), Ability::TargetTemperature);
                if climate.mode.is_some() {
                    modes = climate.modes.clone();
                }
                add(!modes.is_empty(), Ability::Mode);
            }
            Spec::Sensor { .. } | Spec::BinarySensor { .. } => {}
        }
        add(!self.watches.is_empty(), Ability::Read);
        out.sort_unstable();
        (out, modes)
    }
}

/// A configuration's options, and the ones hearth does not follow.
struct Options<'a> {
    map: &'a Map<String, Value>,
    ignored: Vec<String>,
}

impl Options<'_> {
    /// A string option, not empty.
    fn text(&self, key: &str) -> Option<String> {
        self.map
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }

    /// A payload option: `default` when absent, `None` when null (the command disabled), a
    /// boolean or number as Home Assistant makes it a string (`True`, `1`).
    fn payload(&self, key: &str, default: &str) -> Option<String> {
        match self.map.get(key) {
            None => Some(default.to_owned()),
            Some(Value::Null) => None,
            Some(v) => Some(template::rendered(v)),
        }
    }

    /// A number option, also when written as a string (Zigbee2MQTT's `"min_temp": "5"`).
    fn number(&self, key: &str) -> Option<f64> {
        match self.map.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn flag(&self, key: &str) -> bool {
        self.map.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The command topic `key` with its command template `template` (whose value is
    /// `variable`, or `value`), when hearth can render it; `None` without the topic, or with a
    /// template it cannot render (the reason noted: hearth cannot `what`).
    fn command(&mut self, key: &str, template: &str, variable: &str, what: &str) -> Option<Target> {
        let topic = self.text(key)?;
        let fill = match self.text(template) {
            None => None,
            Some(t) => match template::fill(&t, variable) {
                Ok(fill) => Some(fill),
                Err(why) => {
                    self.ignored
                        .push(format!("`{template}`: {why}; hearth cannot {what}"));
                    return None;
                }
            },
        };
        Some(Target { topic, fill })
    }

    /// The state on `topic_key` taken by `template_key`, as `part`; `Ok(None)` without the
    /// topic; the reason when the template is one hearth cannot follow.
    fn watch(
        &self,
        topic_key: &str,
        template_key: &str,
        part: Part,
    ) -> Result<Option<Watch>, String> {
        let Some(topic) = self.text(topic_key) else {
            return Ok(None);
        };
        let extract = match self.text(template_key) {
            Some(t) => template::extract(&t).map_err(|why| format!("`{template_key}`: {why}"))?,
            None => Extract::Raw,
        };
        Ok(Some(Watch {
            topic,
            extract,
            part,
        }))
    }

    /// Like [`Options::watch`] for a state the component can do without: a template hearth
    /// cannot follow is noted, not a reason to leave the component out.
    fn optional_watch(&mut self, topic_key: &str, template_key: &str, part: Part) -> Option<Watch> {
        match self.watch(topic_key, template_key, part) {
            Ok(watch) => watch,
            Err(why) => {
                self.ignored.push(format!("{why}; its state is not read"));
                None
            }
        }
    }
}

/// The component a configuration announces on `config_topic`, for `platform`, or why it is
/// left out.
pub(super) fn component(
    config_topic: &str,
    key: Option<&str>,
    discovery_id: String,
    platform: &str,
    map: &Map<String, Value>,
) -> Result<Component, String> {
    let Some(platform) = Platform::of(platform) else {
        return Err(if OTHER_PLATFORMS.contains(&platform) {
            format!("hearth has no tools for MQTT {platform} components yet")
        } else {
            format!("`{platform}` is not a platform Home Assistant's MQTT discovery knows")
        });
    };
    let mut o = Options {
        map,
        ignored: Vec::new(),
    };
    if let Some(category) = o.text("entity_category") {
        return Err(format!(
            "a {category} entity (`entity_category`): not something a person asks for"
        ));
    }
    if map.get("enabled_by_default") == Some(&Value::Bool(false)) {
        return Err(
            "disabled by default (`enabled_by_default: false`), as Home Assistant would leave it"
                .to_owned(),
        );
    }
    let mut watches = Vec::new();
    let spec = match platform {
        Platform::Switch => {
            let on = o.payload("payload_on", "ON").unwrap_or_else(|| "ON".into());
            let off = o
                .payload("payload_off", "OFF")
                .unwrap_or_else(|| "OFF".into());
            let command = o
                .command("command_topic", "command_template", "value", "switch it")
                .map(|target| Switched {
                    target,
                    on: on.clone(),
                    off: off.clone(),
                });
            let state = if command.is_some() {
                o.optional_watch("state_topic", "value_template", Part::State)
            } else {
                o.watch("state_topic", "value_template", Part::State)?
            };
            watches.extend(state);
            Spec::Switch {
                command,
                state_on: o.text("state_on").unwrap_or(on),
                state_off: o.text("state_off").unwrap_or(off),
            }
        }
        Platform::Light => light(&mut o, &mut watches)?,
        Platform::Fan => {
            if o.text("command_topic").is_none() {
                return Err(needs("fan", "command_topic"));
            }
            let on = o.payload("payload_on", "ON").unwrap_or_else(|| "ON".into());
            let off = o
                .payload("payload_off", "OFF")
                .unwrap_or_else(|| "OFF".into());
            let command = o
                .command("command_topic", "command_template", "value", "switch it")
                .map(|target| Switched {
                    target,
                    on: on.clone(),
                    off: off.clone(),
                });
            let speed = o
                .command(
                    "percentage_command_topic",
                    "percentage_command_template",
                    "value",
                    "set its speed",
                )
                .map(|target| {
                    (
                        target,
                        o.number("speed_range_min").unwrap_or(1.0),
                        o.number("speed_range_max").unwrap_or(100.0),
                    )
                });
            watches.extend(o.optional_watch("state_topic", "state_value_template", Part::State));
            Spec::Fan {
                command,
                speed,
                state_on: on,
                state_off: off,
            }
        }
        Platform::Cover => {
            let cover = Cover {
                command: o.text("command_topic"),
                open: o.payload("payload_open", "OPEN"),
                close: o.payload("payload_close", "CLOSE"),
                stop: o.payload("payload_stop", "STOP"),
                set_position: o.command(
                    "set_position_topic",
                    "set_position_template",
                    "position",
                    "move it to a position",
                ),
                position_open: o.number("position_open").unwrap_or(100.0),
                position_closed: o.number("position_closed").unwrap_or(0.0),
            };
            watches.extend(o.optional_watch("state_topic", "value_template", Part::State));
            watches.extend(o.optional_watch("position_topic", "position_template", Part::Position));
            let word = |key: &str, default: &str, word: &'static str| {
                (o.text(key).unwrap_or_else(|| default.to_owned()), word)
            };
            let states = vec![
                word("state_open", "open", "open"),
                word("state_opening", "opening", "opening"),
                word("state_closed", "closed", "closed"),
                word("state_closing", "closing", "closing"),
                word("state_stopped", "stopped", "stopped"),
            ];
            Spec::Cover { cover, states }
        }
        Platform::Lock => {
            if o.text("command_topic").is_none() {
                return Err(needs("lock", "command_topic"));
            }
            let command = o
                .command(
                    "command_topic",
                    "command_template",
                    "value",
                    "lock or unlock it",
                )
                .map(|target| {
                    (
                        target,
                        o.payload("payload_lock", "LOCK")
                            .unwrap_or_else(|| "LOCK".into()),
                        o.payload("payload_unlock", "UNLOCK")
                            .unwrap_or_else(|| "UNLOCK".into()),
                    )
                });
            watches.extend(o.optional_watch("state_topic", "value_template", Part::State));
            let word = |key: &str, default: &str, word: &'static str| {
                (o.text(key).unwrap_or_else(|| default.to_owned()), word)
            };
            let states = vec![
                word("state_locked", "LOCKED", "locked"),
                word("state_unlocked", "UNLOCKED", "unlocked"),
                word("state_locking", "LOCKING", "locking"),
                word("state_unlocking", "UNLOCKING", "unlocking"),
                word("state_jammed", "JAMMED", "jammed"),
                word("state_open", "OPEN", "open"),
                word("state_opening", "OPENING", "opening"),
            ];
            Spec::Lock { command, states }
        }
        Platform::Climate => {
            let fahrenheit = o.text("temperature_unit").as_deref() == Some("F");
            let (min, max) = if fahrenheit {
                (45.0, 95.0)
            } else {
                (7.0, 35.0)
            };
            let climate = Climate {
                temperature: o.command(
                    "temperature_command_topic",
                    "temperature_command_template",
                    "value",
                    "set its temperature",
                ),
                min_temp: o.number("min_temp").unwrap_or(min),
                max_temp: o.number("max_temp").unwrap_or(max),
                temp_step: o.number("temp_step").unwrap_or(1.0),
                mode: o.command(
                    "mode_command_topic",
                    "mode_command_template",
                    "value",
                    "change its mode",
                ),
                modes: match map.get("modes") {
                    Some(Value::Array(modes)) => modes
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                    _ => ["auto", "off", "cool", "heat", "dry", "fan_only"]
                        .map(str::to_owned)
                        .to_vec(),
                },
            };
            watches.extend(o.optional_watch(
                "current_temperature_topic",
                "current_temperature_template",
                Part::Current,
            ));
            watches.extend(o.optional_watch(
                "temperature_state_topic",
                "temperature_state_template",
                Part::Target,
            ));
            watches.extend(o.optional_watch("mode_state_topic", "mode_state_template", Part::Mode));
            Spec::Climate(climate)
        }
        Platform::Sensor => {
            let state = o
                .watch("state_topic", "value_template", Part::State)?
                .ok_or_else(|| needs("sensor", "state_topic"))?;
            watches.push(state);
            Spec::Sensor {
                unit: o.text("unit_of_measurement"),
            }
        }
        Platform::BinarySensor => {
            let state = o
                .watch("state_topic", "value_template", Part::State)?
                .ok_or_else(|| needs("binary sensor", "state_topic"))?;
            watches.push(state);
            Spec::BinarySensor {
                on: o.payload("payload_on", "ON").unwrap_or_else(|| "ON".into()),
                off: o
                    .payload("payload_off", "OFF")
                    .unwrap_or_else(|| "OFF".into()),
            }
        }
    };
    let device = match map.get("device") {
        Some(Value::Object(device)) => device_info(device),
        _ => DeviceInfo::default(),
    };
    let named = match map.get("name") {
        None => Named::Absent,
        Some(Value::String(s)) if !s.trim().is_empty() => Named::Own(s.clone()),
        Some(_) => Named::Device,
    };
    let component = Component {
        config_topic: config_topic.to_owned(),
        key: key.map(str::to_owned),
        discovery_id,
        platform,
        unique_id: match map.get("unique_id") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        },
        named,
        device,
        name: String::new(),
        class: o.text("device_class"),
        origin: map
            .get("origin")
            .and_then(|origin| origin.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        spec,
        watches,
        ignored: o.ignored,
    };
    if component.abilities().0.is_empty() {
        let mut why = nothing();
        for ignored in &component.ignored {
            why.push_str("; ");
            why.push_str(ignored);
        }
        return Err(why);
    }
    Ok(component)
}

/// A light's options, of the default or the json schema.
fn light(o: &mut Options<'_>, watches: &mut Vec<Watch>) -> Result<Spec, String> {
    let json = match o.text("schema").as_deref() {
        None | Some("default" | "basic") => false,
        Some("json") => true,
        Some("template") => {
            return Err(
                "a light of the template schema: its commands are templates hearth cannot render without Home Assistant's Jinja engine"
                    .to_owned(),
            )
        }
        Some(other) => return Err(format!("a light of the unknown schema `{other}`")),
    };
    let Some(command) = o.text("command_topic") else {
        return Err(needs("light", "command_topic"));
    };
    let mireds = |o: &Options<'_>, kelvin: bool| {
        if kelvin {
            let min_k = o.number("min_kelvin").unwrap_or(2000.0);
            let max_k = o.number("max_kelvin").unwrap_or(6535.0);
            ((1e6 / max_k).round(), (1e6 / min_k).round())
        } else {
            (
                o.number("min_mireds").unwrap_or(153.0),
                o.number("max_mireds").unwrap_or(500.0),
            )
        }
    };
    let kelvin = o.flag("color_temp_kelvin");
    if json {
        let modes: Vec<String> = match o.map.get("supported_color_modes") {
            Some(Value::Array(modes)) => modes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let has = |mode: &str| modes.iter().any(|m| m == mode);
        let dims = modes.iter().any(|m| m != "onoff" && m != "unknown") || o.flag("brightness");
        let color = if has("xy") || o.flag("xy") {
            Some(ColorForm::Xy)
        } else if has("hs") || o.flag("hs") {
            Some(ColorForm::Hs)
        } else if has("rgb") || o.flag("rgb") {
            Some(ColorForm::Rgb)
        } else if has("rgbw") {
            Some(ColorForm::Rgbw)
        } else if has("rgbww") {
            Some(ColorForm::Rgbww)
        } else {
            None
        };
        let color_temp = (has("color_temp") || o.flag("color_temp")).then(|| {
            let (min_mireds, max_mireds) = mireds(o, kelvin);
            ColorTemp {
                topic: None,
                kelvin,
                min_mireds,
                max_mireds,
            }
        });
        if let Some(topic) = o.text("state_topic") {
            watches.push(Watch {
                topic,
                extract: Extract::Json(vec![template::Step::Key("state".to_owned())]),
                part: Part::State,
            });
        }
        let light = Light {
            command,
            json: true,
            on: "ON".to_owned(),
            off: "OFF".to_owned(),
            brightness: dims.then(|| (None, o.number("brightness_scale").unwrap_or(255.0))),
            color_temp,
            color: color.map(|form| (None, form)),
        };
        return Ok(Spec::Light {
            light,
            state_on: "ON".to_owned(),
            state_off: "OFF".to_owned(),
        });
    }
    let on = o.payload("payload_on", "ON").unwrap_or_else(|| "ON".into());
    let off = o
        .payload("payload_off", "OFF")
        .unwrap_or_else(|| "OFF".into());
    let brightness = o
        .command(
            "brightness_command_topic",
            "brightness_command_template",
            "value",
            "dim it",
        )
        .map(|target| (Some(target), o.number("brightness_scale").unwrap_or(255.0)));
    let color_temp = o
        .command(
            "color_temp_command_topic",
            "color_temp_command_template",
            "value",
            "set its colour temperature",
        )
        .map(|target| {
            let (min_mireds, max_mireds) = mireds(o, kelvin);
            ColorTemp {
                topic: Some(target),
                kelvin,
                min_mireds,
                max_mireds,
            }
        });
    let mut color = None;
    for (topic, template, form) in [
        ("xy_command_topic", "xy_command_template", ColorForm::Xy),
        ("hs_command_topic", "hs_command_template", ColorForm::Hs),
        ("rgb_command_topic", "rgb_command_template", ColorForm::Rgb),
    ] {
        if color.is_none() {
            color = o
                .command(topic, template, "value", "change its colour")
                .map(|t| (Some(t), form));
        }
    }
    watches.extend(o.optional_watch("state_topic", "state_value_template", Part::State));
    let light = Light {
        command,
        json: false,
        on: on.clone(),
        off: off.clone(),
        brightness,
        color_temp,
        color,
    };
    Ok(Spec::Light {
        light,
        state_on: on,
        state_off: off,
    })
}

/// The `device` mapping's name, area and identifiers.
fn device_info(device: &Map<String, Value>) -> DeviceInfo {
    let text = |key: &str| {
        device
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let mut identifiers = Vec::new();
    match device.get("identifiers") {
        Some(Value::String(id)) => identifiers.push(id.clone()),
        Some(Value::Array(ids)) => {
            identifiers.extend(ids.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {}
    }
    if let Some(Value::Array(connections)) = device.get("connections") {
        for pair in connections {
            if let (Some(kind), Some(value)) = (
                pair.get(0).and_then(Value::as_str),
                pair.get(1).and_then(Value::as_str),
            ) {
                identifiers.push(format!("{kind}:{value}"));
            }
        }
    }
    DeviceInfo {
        name: text("name"),
        area: text("suggested_area"),
        identifiers,
    }
}

fn needs(what: &str, option: &str) -> String {
    format!("a {what} needs a `{option}` (Home Assistant requires one); this one has none")
}

fn nothing() -> String {
    "no command topic hearth can use and no state topic: nothing to do or read".to_owned()
}
