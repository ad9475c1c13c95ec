//! A discovered component's state, as it publishes it, as a sentence.

use serde_json::Value;

use super::component::{Component, Part, Spec};
use super::template::{self, Extract};
use crate::say;
use crate::HouseError;

/// The state `component` last published as a sentence: "The kettle is on.", "The front door
/// is locked.", "The study blind is 40 % open.", "The hall sensor temperature is 21.3 °C.",
/// "The front door is open.", "The radiator is set to 21 degrees; it is 19.5 degrees now."
///
/// `state` gives the last payload of each of its [`Component::state_topics`] (`None` for one
/// not heard yet): a state can come on several topics (a cover's state and position, a
/// thermostat's target, mode and temperature). Each value is taken as the component's
/// template says, compared with its `state_on`, `state_locked`, `state_open`… and worded; a
/// value it does not list ("unavailable") is left unsaid. With nothing to say, the sentence
/// says the component has not reported its state yet. A payload that is not JSON where the
/// template reads JSON is an error naming the topic.
pub fn reading<'a>(
    component: &Component,
    state: impl Fn(&str) -> Option<&'a [u8]>,
) -> Result<String, HouseError> {
    let mut values: Vec<(Part, String)> = Vec::new();
    for watch in &component.watches {
        let Some(payload) = state(&watch.topic) else {
            continue;
        };
        let value = match &watch.extract {
            Extract::Raw => String::from_utf8_lossy(payload).trim().to_owned(),
            Extract::Json(path) => {
                let json: Value =
                    serde_json::from_slice(payload).map_err(|source| HouseError::NotJson {
                        topic: watch.topic.clone(),
                        expected: "JSON, which the component's template reads",
                        source,
                    })?;
                match template::at(&json, path) {
                    Some(v) => template::rendered(v),
                    None => continue,
                }
            }
        };
        if !value.is_empty() && !matches!(value.as_str(), "None" | "unknown" | "unavailable") {
            values.push((watch.part, value));
        }
    }
    let get = |part: Part| {
        values
            .iter()
            .find(|(p, _)| *p == part)
            .map(|(_, v)| v.as_str())
    };
    let mut is: Vec<String> = Vec::new();
    let mut now = None;
    let on_off = |value: Option<&str>, on: &str, off: &str| match value {
        Some(v) if v == on => Some("is on".to_owned()),
        Some(v) if v == off => Some("is off".to_owned()),
        _ => None,
    };
    match &component.spec {
        Spec::Switch {
            state_on,
            state_off,
            ..
        }
        | Spec::Light {
            state_on,
            state_off,
            ..
        }
        | Spec::Fan {
            state_on,
            state_off,
            ..
        } => is.extend(on_off(get(Part::State), state_on, state_off)),
        Spec::Lock { states, .. } => {
            if let Some(v) = get(Part::State) {
                if let Some((_, word)) = states.iter().find(|(s, _)| s == v) {
                    is.push(format!("is {word}"));
                }
            }
        }
        Spec::Cover { cover, states } => {
            let span = cover.position_open - cover.position_closed;
            let position = get(Part::Position)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|_| span != 0.0)
                .map(|p| (p - cover.position_closed) / span * 100.0);
            if let Some(p) = position {
                is.push(match p {
                    p if p <= 0.0 => "is closed".to_owned(),
                    p if p >= 100.0 => "is open".to_owned(),
                    p => format!("is {} % open", say::number(p.round())),
                });
            } else if let Some(v) = get(Part::State) {
                if let Some((_, word)) = states.iter().find(|(s, _)| s == v) {
                    is.push(format!("is {word}"));
                }
            }
        }
        Spec::Sensor { unit } => {
            if let Some(v) = get(Part::State) {
                let v = v.parse::<f64>().map_or_else(|_| v.to_owned(), say::number);
                is.push(match unit {
                    Some(unit) => format!("is {v} {unit}"),
                    None => format!("is {v}"),
                });
            }
        }
        Spec::BinarySensor { on, off } => {
            let state = get(Part::State).and_then(|v| {
                if v == on {
                    Some(true)
                } else if v == off {
                    Some(false)
                } else {
                    None
                }
            });
            if let Some(state) = state {
                let (yes, no) = match component.class.as_deref() {
                    Some("door" | "window" | "opening" | "garage_door") => ("open", "closed"),
                    Some("motion" | "occupancy" | "presence") => ("detecting someone", "clear"),
                    Some("moisture") => ("wet", "dry"),
                    Some("smoke" | "gas" | "carbon_monoxide") => ("detecting it", "clear"),
                    Some("lock") => ("unlocked", "locked"),
                    _ => ("on", "off"),
                };
                is.push(format!("is {}", if state { yes } else { no }));
            }
        }
        Spec::Climate(_) => {
            let target = get(Part::Target).and_then(|v| v.parse::<f64>().ok());
            match (get(Part::Mode), target) {
                (Some("off"), _) => is.push("is off".to_owned()),
                (_, Some(t)) => is.push(format!("is set to {} degrees", say::number(t))),
                (Some(mode), None) => is.push(format!("is set to {}", mode.replace('_', " "))),
                (None, None) => {}
            }
            now = get(Part::Current)
                .and_then(|v| v.parse::<f64>().ok())
                .map(|t| format!("{} degrees", say::number(t)));
        }
    }
    let name = if component.name.is_empty() {
        component.config_topic.as_str()
    } else {
        component.name.as_str()
    };
    Ok(say::sentence(name, is, Vec::new(), now))
}
