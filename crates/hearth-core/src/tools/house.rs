//! The `house` executor: the tools made from the things hearth found in the house (Home
//! Assistant's exposed entities; `crates/hearth-core/src/house/`), not written in a manifest.
//!
//! A call names what it acts on by the words people use: `name` (a thing's name or alias),
//! `area` (an area's name or alias), both or neither. [`targets`] is the one place those
//! words become things:
//! - a name picks the things it names (within the area, when one is given too); a name two
//!   things share picks the one in the room the request was said in, else hearth asks which
//!   ("Which one: the lamp in the office or the lamp in the bedroom?");
//! - an area alone picks every thing of the tool's kind in it ("turn off the lights in the
//!   kitchen");
//! - neither picks those in the room the request was said in, else the only one there is,
//!   else hearth asks which.
//!
//! Then each target gets the tool's [`Action`] as a [`Command`] the target's source runs
//! (`HaBackend::call_service`; a reading is `HaBackend::state`, the live state, never a
//! remembered one). A target that cannot take the command (a light without brightness) is
//! named in the answer, not called. Every answer, done or not, is a sentence for the person:
//! the tools' `say` is their result, and their errors are said as they are
//! ([`super::Tool::says_errors`]).

use std::sync::Arc;
use std::time::Duration;

use hearth_house::{discovery, homeassistant, zigbee2mqtt, Command};
use hearth_house::{Ability, Control, Thing};
use serde_json::Value;

use super::backends::Backends;
use super::ExecOutput;

/// The `area` that means the whole house ("turn off all the lights"): every thing of the
/// tool's. Only the on/off tools of lights, switches and fans take it.
pub const EVERYWHERE: &str = "everywhere";

/// Percentage points a light is made brighter or dimmer by ("make the porch light
/// brighter"): a quarter, as a person turning a dimmer would.
const STEP: i8 = 25;

/// Time for each call to the house.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// What a house tool does to its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// On or off (`on`).
    OnOff,
    /// Brightness in percent (`brightness`).
    Brightness,
    /// Brighter or dimmer by a step (`brighter`).
    BrightnessStep,
    /// A colour by name (`color`).
    Color,
    /// Open or close (`open`).
    OpenClose,
    /// Stop a cover.
    Stop,
    /// A cover's position in percent (`position`).
    Position,
    /// Lock or unlock (`locked`).
    Lock,
    /// A fan's speed in percent (`speed`).
    Speed,
    /// A thermostat's target (`temperature`).
    TargetTemperature,
    /// A thermostat's mode (`mode`).
    Mode,
    /// Play.
    Play,
    /// Pause.
    Pause,
    /// Next track.
    Next,
    /// Previous track.
    Previous,
    /// Volume in percent (`volume`).
    Volume,
    /// Mute or unmute (`muted`).
    Mute,
    /// Set a scene or script going.
    Activate,
    /// Start a vacuum.
    Start,
    /// Send a vacuum home.
    ReturnHome,
    /// Read the state.
    Read,
}

impl Action {
    /// The ability a target needs.
    pub fn needs(self) -> Ability {
        match self {
            Action::OnOff => Ability::OnOff,
            Action::Brightness | Action::BrightnessStep => Ability::Brightness,
            Action::Color => Ability::Color,
            Action::OpenClose => Ability::OpenClose,
            Action::Stop => Ability::Stop,
            Action::Position => Ability::Position,
            Action::Lock => Ability::Lock,
            Action::Speed => Ability::Speed,
            Action::TargetTemperature => Ability::TargetTemperature,
            Action::Mode => Ability::Mode,
            Action::Play | Action::Pause => Ability::PlayPause,
            Action::Next | Action::Previous => Ability::Track,
            Action::Volume => Ability::Volume,
            Action::Mute => Ability::Mute,
            Action::Activate => Ability::Activate,
            Action::Start => Ability::Start,
            Action::ReturnHome => Ability::ReturnHome,
            Action::Read => Ability::Read,
        }
    }

    /// The command a call's arguments make, and what it leaves the target as ("on", "at 40
    /// percent"); `None` for a reading. The schema was checked before: a missing or mistyped
    /// value is an error all the same.
    fn command(self, arguments: &Value) -> Result<Option<(Command, String)>, String> {
        let flag = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_bool)
                .ok_or_else(|| format!("the call has no `{key}`"))
        };
        let percent = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_f64)
                .filter(|v| (0.0..=100.0).contains(v))
                .map(|v| v.round() as u8)
                .ok_or_else(|| format!("the call has no `{key}` from 0 to 100"))
        };
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("the call has no `{key}`"))
        };
        Ok(Some(match self {
            Action::OnOff => match flag("on")? {
                true => (Command::On, "on".into()),
                false => (Command::Off, "off".into()),
            },
            Action::Brightness => {
                let p = percent("brightness")?;
                (Command::Brightness(p), format!("at {p} percent"))
            }
            Action::BrightnessStep => match flag("brighter")? {
                true => (Command::BrightnessStep(STEP), "brighter".into()),
                false => (Command::BrightnessStep(-STEP), "dimmer".into()),
            },
            Action::Color => {
                let c = text("color")?;
                (Command::Color(c.clone()), c)
            }
            Action::OpenClose => match flag("open")? {
                true => (Command::Open, "opening".into()),
                false => (Command::Close, "closing".into()),
            },
            Action::Stop => (Command::Stop, "stopped".into()),
            Action::Position => {
                let p = percent("position")?;
                (Command::Position(p), format!("{p} percent open"))
            }
            Action::Lock => match flag("locked")? {
                true => (Command::Lock, "locked".into()),
                false => (Command::Unlock, "unlocked".into()),
            },
            Action::Speed => {
                let p = percent("speed")?;
                (Command::Speed(p), format!("at {p} percent"))
            }
            Action::TargetTemperature => {
                let t = arguments
                    .get("temperature")
                    .and_then(Value::as_f64)
                    .ok_or_else(|| "the call has no `temperature`".to_string())?;
                (
                    Command::TargetTemperature(t),
                    format!("set to {} degrees", number(t)),
                )
            }
            Action::Mode => {
                let m = text("mode")?;
                let said = format!("set to {}", m.replace('_', " "));
                (Command::Mode(m), said)
            }
            Action::Play => (Command::Play, "playing".into()),
            Action::Pause => (Command::Pause, "paused".into()),
            Action::Next => (Command::Next, "on the next track".into()),
            Action::Previous => (Command::Previous, "on the previous track".into()),
            Action::Volume => {
                let p = percent("volume")?;
                (Command::Volume(p), format!("at volume {p}"))
            }
            Action::Mute => match flag("muted")? {
                true => (Command::Mute(true), "muted".into()),
                false => (Command::Mute(false), "unmuted".into()),
            },
            Action::Activate => (Command::Activate, "on".into()),
            Action::Start => (Command::Start, "started".into()),
            Action::ReturnHome => (Command::ReturnHome, "going home".into()),
            Action::Read => return Ok(None),
        }))
    }
}

/// A house tool's executor: its action and the things it may reach (those of its kind with
/// the ability, as found when the tool was made).
#[derive(Debug, Clone)]
pub struct HouseSpec {
    /// Whether the registry adds the sentences its shape implies to its own.
    pub derive: bool,
    /// What it acts on, as said ("light", "lock"), for its questions and answers.
    pub noun: &'static str,
    /// What a call does.
    pub action: Action,
    /// The things it may act on.
    pub things: Arc<[Thing]>,
}

/// A number as said: no ".0".
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Words compared as said: lower case, single spaces.
fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    };
    norm(a) == norm(b)
}

/// How a thing is told apart when asking which: "the lamp in the office", else "the lamp".
fn described(thing: &Thing) -> String {
    match &thing.area {
        Some(area) if !thing.name.contains(&area.name) => {
            format!("the {} in the {}", thing.name, area.name)
        }
        _ => format!("the {}", thing.name),
    }
}

/// "a, b or c".
fn one_of(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// "a, b and c".
fn all_of(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The question when more than one thing could be meant.
fn which(candidates: &[&Thing]) -> String {
    const LISTED: usize = 4;
    let mut names: Vec<String> = candidates
        .iter()
        .take(LISTED)
        .map(|t| described(t))
        .collect();
    if candidates.len() > LISTED {
        names.push(format!("one of {} others", candidates.len() - LISTED));
    }
    format!("Which one: {}?", one_of(&names))
}

fn in_area(thing: &Thing, words: &str) -> bool {
    thing
        .area
        .as_ref()
        .is_some_and(|a| a.words().any(|w| same(w, words)))
}

/// The things a call means, or the sentence that asks which (or says there is none).
pub(crate) fn targets<'a>(
    things: &'a [Thing],
    arguments: &Value,
    room: Option<&str>,
    noun: &str,
) -> Result<Vec<&'a Thing>, String> {
    let name = arguments.get("name").and_then(Value::as_str);
    let area = arguments.get("area").and_then(Value::as_str);
    let in_room = |list: &[&'a Thing]| -> Vec<&'a Thing> {
        room.map(|r| list.iter().copied().filter(|t| in_area(t, r)).collect())
            .unwrap_or_default()
    };
    match (name, area) {
        (Some(name), area) => {
            let named: Vec<&Thing> = things
                .iter()
                .filter(|t| t.words().any(|w| same(w, name)))
                .collect();
            let named: Vec<&Thing> = match area {
                Some(area) => named.into_iter().filter(|t| in_area(t, area)).collect(),
                None => named,
            };
            match named.len() {
                0 => Err(match area {
                    Some(area) => format!("There's no {name} in the {area}."),
                    None => format!("I don't know a {noun} called {name}."),
                }),
                1 => Ok(named),
                _ => {
                    let here = in_room(&named);
                    if here.len() == 1 {
                        Ok(here)
                    } else {
                        Err(which(&named))
                    }
                }
            }
        }
        (None, Some(EVERYWHERE)) => Ok(things.iter().collect()),
        (None, Some(area)) => {
            let there: Vec<&Thing> = things.iter().filter(|t| in_area(t, area)).collect();
            if there.is_empty() {
                Err(format!("There's no {noun} in the {area}."))
            } else {
                Ok(there)
            }
        }
        (None, None) => {
            let all: Vec<&Thing> = things.iter().collect();
            let here = in_room(&all);
            if !here.is_empty() {
                Ok(here)
            } else if all.len() == 1 {
                Ok(all)
            } else {
                Err(which(&all))
            }
        }
    }
}

/// Run one call of a house tool.
pub async fn run(
    spec: &HouseSpec,
    arguments: &Value,
    room: Option<&str>,
    backends: &Backends,
) -> ExecOutput {
    let targets = match targets(&spec.things, arguments, room, spec.noun) {
        Ok(t) => t,
        Err(say) => return ExecOutput::error(say),
    };
    let command = match spec.action.command(arguments) {
        Ok(c) => c,
        Err(e) => return ExecOutput::error(format!("Sorry, I couldn't do that: {e}.")),
    };
    let (able, unable): (Vec<&Thing>, Vec<&Thing>) = targets
        .into_iter()
        .partition(|t| t.can(spec.action.needs()));
    let cannot = (!unable.is_empty()).then(|| {
        let names: Vec<String> = unable.iter().map(|t| described(t)).collect();
        format!("{} can't do that.", capitalised(&all_of(&names)))
    });
    if able.is_empty() {
        return ExecOutput::error(cannot.unwrap_or_default());
    }
    let calls = able
        .iter()
        .map(|t| one(t, command.as_ref().map(|(c, _)| c), backends));
    let answers = futures_util::future::join_all(calls).await;
    let mut done = Vec::new();
    let mut failed = Vec::new();
    let mut read = Vec::new();
    for (thing, answer) in able.iter().zip(answers) {
        match answer {
            Ok(Some(reading)) => read.push(reading),
            Ok(None) => done.push(*thing),
            Err(e) => {
                tracing::warn!(target: crate::logs::TRANSCRIPT, thing = %thing.id, error = %e, "a house call failed");
                failed.push((*thing, e));
            }
        }
    }
    let anything = !done.is_empty() || !read.is_empty();
    let mut said = Vec::new();
    if let Some((_, state)) = &command {
        if !done.is_empty() {
            let names: Vec<String> = done.iter().map(|t| described(t)).collect();
            let verb = if done.len() == 1 && !done[0].name.ends_with('s') {
                "is"
            } else {
                "are"
            };
            said.push(format!("{} {verb} {state}.", capitalised(&all_of(&names))));
        }
    }
    said.extend(read);
    if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(|(t, _)| described(t)).collect();
        // the why is in the log (above): a URL or a status is nothing to say
        said.push(format!(
            "I couldn't reach {}: the house isn't answering.",
            all_of(&names)
        ));
    }
    said.extend(cannot);
    let text = said.join(" ");
    if anything {
        ExecOutput::done(text)
    } else {
        ExecOutput::error(text)
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One target: the command sent through its source (`Ok(None)`), or its state read
/// (`Ok(Some(sentence))`).
async fn one(
    thing: &Thing,
    command: Option<&Command>,
    backends: &Backends,
) -> Result<Option<String>, String> {
    match &thing.control {
        Control::HomeAssistant { entity_id } => {
            let Some(ha) = backends.homeassistant.as_ref() else {
                return Err("Home Assistant is not configured".into());
            };
            match command {
                Some(command) => {
                    let call = homeassistant::service(entity_id, command).ok_or_else(|| {
                        format!("Home Assistant has no service for that on {entity_id}")
                    })?;
                    ha.call_service(&call, TIMEOUT).await.map(|_| None)
                }
                None => {
                    let state = ha.state(entity_id, TIMEOUT).await?;
                    Ok(Some(reading(thing, &state)))
                }
            }
        }
        Control::Zigbee2mqtt(device) => {
            let mqtt = broker(backends)?;
            match command {
                Some(command) => publish(mqtt, zigbee2mqtt::message(device, command)).await,
                None => match mqtt.last(&device.topics.state) {
                    Some(payload) => zigbee2mqtt::reading(device, &payload)
                        .map(Some)
                        .map_err(|e| e.to_string()),
                    None => Ok(Some(format!(
                        "{} has not said how it is since hearth started.",
                        capitalised(&described(thing))
                    ))),
                },
            }
        }
        Control::Mqtt(component) => {
            let mqtt = broker(backends)?;
            match command {
                Some(command) => publish(mqtt, discovery::message(component, command)).await,
                None => {
                    let heard: Vec<(String, Vec<u8>)> = component
                        .state_topics()
                        .into_iter()
                        .filter_map(|t| mqtt.last(t).map(|p| (t.to_string(), p)))
                        .collect();
                    discovery::reading(component, |topic| {
                        heard
                            .iter()
                            .find(|(t, _)| t == topic)
                            .map(|(_, p)| p.as_slice())
                    })
                    .map(Some)
                    .map_err(|e| e.to_string())
                }
            }
        }
    }
}

/// The broker an MQTT thing is reached on.
fn broker(backends: &Backends) -> Result<&super::mqtt::MqttBackend, String> {
    backends
        .mqtt
        .as_ref()
        .ok_or_else(|| "no MQTT broker is configured".to_string())
}

/// Send the message `hearth_house` made for a command (`Ok(None)`: sent), or say why it made
/// none.
async fn publish(
    mqtt: &super::mqtt::MqttBackend,
    message: Result<hearth_house::Message, hearth_house::HouseError>,
) -> Result<Option<String>, String> {
    let m = message.map_err(|e| e.to_string())?;
    mqtt.send(&m.topic, m.payload.into_bytes(), TIMEOUT)
        .await
        .map(|()| None)
}

/// A live state as a sentence: "The outside temperature is 12.3 °C.", "The front door is
/// locked.", "The kitchen is playing Never Gonna Give You Up by Rick Astley."
pub(crate) fn reading(thing: &Thing, state: &Value) -> String {
    let the = capitalised(&described(thing));
    let value = state
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let attr = |k: &str| state.get("attributes").and_then(|a| a.get(k));
    let attr_str = |k: &str| attr(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    if matches!(value, "unavailable" | "unknown") {
        return format!("{the} is {value} right now.");
    }
    let domain = match &thing.control {
        Control::HomeAssistant { entity_id } => entity_id.split('.').next().unwrap_or(""),
        Control::Zigbee2mqtt(_) | Control::Mqtt(_) => "",
    };
    match domain {
        "sensor" => {
            let unit = attr_str("unit_of_measurement")
                .map(|u| format!(" {u}"))
                .unwrap_or_default();
            format!("{the} is {value}{unit}.")
        }
        "binary_sensor" => {
            let on = value == "on";
            let word = match thing.class.as_deref() {
                Some("door" | "window" | "opening" | "garage_door") => {
                    if on {
                        "open"
                    } else {
                        "closed"
                    }
                }
                Some("motion" | "occupancy" | "presence") => {
                    if on {
                        "detecting someone"
                    } else {
                        "clear"
                    }
                }
                Some("moisture") => {
                    if on {
                        "wet"
                    } else {
                        "dry"
                    }
                }
                _ => value,
            };
            format!("{the} is {word}.")
        }
        "climate" => {
            let mut s = format!("{the} is set to {}", value.replace('_', " "));
            if let Some(t) = attr("temperature").and_then(Value::as_f64) {
                s.push_str(&format!(" at {} degrees", number(t)));
            }
            if let Some(c) = attr("current_temperature").and_then(Value::as_f64) {
                s.push_str(&format!("; it is {} degrees now", number(c)));
            }
            s.push('.');
            s
        }
        "media_player" => match (value, attr_str("media_title")) {
            ("playing", Some(title)) => match attr_str("media_artist") {
                Some(artist) => format!("{the} is playing {title} by {artist}."),
                None => format!("{the} is playing {title}."),
            },
            _ => format!("{the} is {value}."),
        },
        _ => format!("{the} is {}.", value.replace('_', " ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_house::{Area, Kind, Source};
    use serde_json::json;

    fn thing(id: &str, name: &str, area: Option<&str>, abilities: &[Ability]) -> Thing {
        Thing {
            source: Source::HomeAssistant,
            id: id.into(),
            kind: Kind::Light,
            name: name.into(),
            aliases: vec![],
            area: area.map(Area::named),
            class: None,
            abilities: abilities.to_vec(),
            modes: vec![],
            control: Control::HomeAssistant {
                entity_id: id.into(),
            },
        }
    }

    fn house() -> Vec<Thing> {
        let mut lamp = thing("light.desk", "lamp", Some("office"), &[Ability::OnOff]);
        lamp.aliases.push("desk lamp".into());
        vec![
            lamp,
            thing("light.bed", "lamp", Some("bedroom"), &[Ability::OnOff]),
            thing(
                "light.kitchen",
                "kitchen lights",
                Some("kitchen"),
                &[Ability::OnOff, Ability::Brightness],
            ),
            thing(
                "light.pantry",
                "pantry light",
                Some("kitchen"),
                &[Ability::OnOff],
            ),
        ]
    }

    fn ids(found: Result<Vec<&Thing>, String>) -> Result<Vec<String>, String> {
        found.map(|t| t.iter().map(|t| t.id.clone()).collect())
    }

    #[test]
    fn names_areas_and_the_room_pick_the_targets() {
        let h = house();
        let pick = |args: Value, room: Option<&str>| ids(targets(&h, &args, room, "light"));
        assert_eq!(
            pick(json!({"name": "Desk Lamp"}), None),
            Ok(vec!["light.desk".into()])
        );
        assert_eq!(
            pick(json!({"name": "lamp"}), None),
            Err("Which one: the lamp in the office or the lamp in the bedroom?".into())
        );
        assert_eq!(
            pick(json!({"name": "lamp"}), Some("bedroom")),
            Ok(vec!["light.bed".into()])
        );
        assert_eq!(
            pick(json!({"name": "lamp", "area": "office"}), Some("bedroom")),
            Ok(vec!["light.desk".into()])
        );
        assert_eq!(
            pick(json!({"area": "kitchen"}), None),
            Ok(vec!["light.kitchen".into(), "light.pantry".into()])
        );
        assert_eq!(
            pick(json!({"area": "garage"}), None),
            Err("There's no light in the garage.".into())
        );
        assert_eq!(
            pick(json!({}), Some("office")),
            Ok(vec!["light.desk".into()])
        );
        assert!(pick(json!({}), None)
            .unwrap_err()
            .starts_with("Which one: "));
        assert_eq!(
            pick(json!({"name": "porch light"}), None),
            Err("I don't know a light called porch light.".into())
        );
    }

    #[tokio::test]
    async fn a_target_without_the_ability_is_named_and_not_called() {
        let spec = HouseSpec {
            derive: true,
            noun: "light",
            action: Action::Brightness,
            things: house().into(),
        };
        let out = run(
            &spec,
            &json!({"name": "pantry light", "brightness": 40}),
            None,
            &Backends::none(),
        )
        .await;
        assert_eq!(out.status, super::super::ToolStatus::Error);
        assert_eq!(out.text, "The pantry light in the kitchen can't do that.");
    }

    #[test]
    fn readings_are_sentences_of_the_live_state() {
        let mut door = thing("binary_sensor.back", "back door", None, &[Ability::Read]);
        door.class = Some("door".into());
        assert_eq!(
            reading(&door, &json!({"state": "on", "attributes": {}})),
            "The back door is open."
        );
        let t = thing("sensor.out", "outside temperature", None, &[Ability::Read]);
        assert_eq!(
            reading(
                &t,
                &json!({"state": "12.3", "attributes": {"unit_of_measurement": "°C"}})
            ),
            "The outside temperature is 12.3 °C."
        );
        let c = thing(
            "climate.hp",
            "heat pump",
            Some("living room"),
            &[Ability::Read],
        );
        assert_eq!(
            reading(
                &c,
                &json!({"state": "heat", "attributes": {"temperature": 20.0, "current_temperature": 25}})
            ),
            "The heat pump in the living room is set to heat at 20 degrees; it is 25 degrees now."
        );
    }
}
