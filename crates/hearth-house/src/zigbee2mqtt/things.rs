//! Zigbee2MQTT's devices and groups as [`Thing`]s ([`things`]), the `/set` message that runs a
//! [`Command`] on one ([`message`]), and the state it publishes as a sentence ([`reading`]).
//!
//! What a thing may do comes from the features of its kind's specific expose, by their names
//! (`state`, `brightness`, `color_temp`, `color_xy`, `position`, `occupied_heating_setpoint`,
//! `system_mode`, a fan's `mode`), honouring `access`: an ability needs a settable feature,
//! [`Ability::Read`] a published or gettable one that [`reading`] words. A device whose kind's
//! features are all at endpoints of two or more (a double rocker's `state_left` and
//! `state_right`) is one thing per endpoint, named "wall switch left" (and "left wall switch").

use serde_json::{json, Map, Value};

use super::{Found, SkipReason, Skipped};
use crate::device::{Category, Device, Feature, Kind, Message, ValueType};
use crate::error::json_type;
use crate::say;
use crate::thing::{Ability, Area, Command, Control, Source, Thing};
use crate::words;
use crate::HouseError;

/// The readings [`reading`] words from features outside the specific exposes (a sensor's
/// `temperature`, a door sensor's `contact`).
const READINGS: [&str; 11] = [
    "temperature",
    "humidity",
    "pressure",
    "illuminance",
    "illuminance_lux",
    "co2",
    "contact",
    "occupancy",
    "presence",
    "water_leak",
    "smoke",
];

/// The things the devices and groups of `found` make, and those left out because nothing
/// they expose is something hearth can do or read out ([`SkipReason::NothingToDo`]; the
/// caller logs them with [`Found::skipped`]).
///
/// Each thing has `source` [`Source::Zigbee2mqtt`], its IEEE address or `group N` as its id
/// (`0x…/left` for one endpoint's), the device's kind, name and room, and
/// [`Control::Zigbee2mqtt`] with the device, whose [`message`] and [`reading`] run it.
pub fn things(found: &Found) -> (Vec<Thing>, Vec<Skipped>) {
    let mut things = Vec::new();
    let mut skipped = Vec::new();
    for device in &found.devices {
        for (part, endpoint) in by_endpoint(device) {
            let (abilities, modes) = abilities(&part);
            if abilities.is_empty() {
                let name = match &endpoint {
                    Some(e) => format!("{} ({e})", part.friendly_name),
                    None => part.friendly_name.clone(),
                };
                skipped.push(Skipped {
                    name,
                    reason: SkipReason::NothingToDo,
                });
                continue;
            }
            let id = match &endpoint {
                Some(e) => format!("{}/{e}", part.id),
                None => part.id.to_string(),
            };
            let aliases = endpoint
                .as_deref()
                .map(|e| vec![format!("{} {}", words::words(e), device.name)])
                .unwrap_or_default();
            things.push(Thing {
                source: Source::Zigbee2mqtt,
                id,
                kind: part.kind,
                name: part.name.clone(),
                aliases,
                area: part.room.clone().map(Area::named),
                class: None,
                abilities,
                modes,
                control: Control::Zigbee2mqtt(Box::new(part)),
            });
        }
    }
    (things, skipped)
}

/// `device`, or one copy of it per endpoint when its kind's features are all at endpoints of
/// two or more: each with the features of that endpoint and of none, named with the endpoint.
fn by_endpoint(device: &Device) -> Vec<(Device, Option<String>)> {
    let mut endpoints: Vec<&str> = Vec::new();
    for feature in device
        .features
        .iter()
        .filter(|f| f.part_of == Some(device.kind))
    {
        match feature.endpoint.as_deref() {
            None => return vec![(device.clone(), None)],
            Some(e) if !endpoints.contains(&e) => endpoints.push(e),
            Some(_) => {}
        }
    }
    if endpoints.len() < 2 {
        return vec![(device.clone(), None)];
    }
    endpoints
        .into_iter()
        .map(|endpoint| {
            let mut part = device.clone();
            part.features
                .retain(|f| f.endpoint.as_deref().is_none_or(|e| e == endpoint));
            part.name = format!("{} {}", device.name, words::words(endpoint));
            (part, Some(endpoint.to_owned()))
        })
        .collect()
}

/// The feature of the device's kind named `name` (`state`, `brightness`), whatever its
/// access; the one without an endpoint when there are several.
fn control<'a>(device: &'a Device, name: &str) -> Option<&'a Feature> {
    let mut candidates = device
        .features
        .iter()
        .filter(|f| f.name == name && f.part_of == Some(device.kind));
    let first = candidates.next()?;
    if first.endpoint.is_none() {
        return Some(first);
    }
    candidates.find(|f| f.endpoint.is_none()).or(Some(first))
}

/// A light's colour: its `color_xy` composite, else its `color_hs`.
fn color_feature(device: &Device) -> Option<&Feature> {
    control(device, "color_xy").or_else(|| control(device, "color_hs"))
}

/// A thermostat's setpoint: `occupied_heating_setpoint`, else `current_heating_setpoint`.
fn setpoint(device: &Device) -> Option<&Feature> {
    control(device, "occupied_heating_setpoint")
        .or_else(|| control(device, "current_heating_setpoint"))
}

/// A fan's `mode` and the speeds of it, slowest first, among `low`, `medium` and `high`.
fn fan_speeds(device: &Device) -> Option<(&Feature, Vec<&'static str>)> {
    let mode = control(device, "mode")?;
    let speeds: Vec<&'static str> = ["low", "medium", "high"]
        .into_iter()
        .filter(|s| takes(mode, s))
        .collect();
    (!speeds.is_empty()).then_some((mode, speeds))
}

/// Whether `feature` takes the string `value` (one of an enum's values, a binary's on or off).
fn takes(feature: &Feature, value: &str) -> bool {
    let value = Value::String(value.to_owned());
    match &feature.value {
        ValueType::Enum { values } => values.contains(&value),
        ValueType::Binary { on, off, .. } => *on == value || *off == value,
        _ => false,
    }
}

/// Whether `feature` is set with a whole object of settable parts (a `color_xy`).
fn settable_composite(feature: &Feature) -> bool {
    feature.access.settable()
        && matches!(&feature.value, ValueType::Composite { features } if features.iter().all(|f| f.access.settable()))
}

/// What a device (or one endpoint of it) lets be done, sorted, and a thermostat's modes.
fn abilities(device: &Device) -> (Vec<Ability>, Vec<String>) {
    let settable = |name: &str| control(device, name).filter(|f| f.access.settable());
    let binary = |f: &Feature| matches!(f.value, ValueType::Binary { .. });
    let numeric = |f: &Feature| matches!(f.value, ValueType::Numeric { .. });
    let mut out = Vec::new();
    let mut modes = Vec::new();
    let mut add = |yes: bool, ability: Ability| {
        if yes {
            out.push(ability);
        }
    };
    match device.kind {
        Kind::Light => {
            add(settable("state").is_some_and(binary), Ability::OnOff);
            add(
                settable("brightness").is_some_and(numeric),
                Ability::Brightness,
            );
            add(
                settable("color_temp").is_some_and(numeric),
                Ability::ColorTemperature,
            );
            add(
                color_feature(device).is_some_and(settable_composite),
                Ability::Color,
            );
        }
        Kind::Switch => add(settable("state").is_some_and(binary), Ability::OnOff),
        Kind::Fan => {
            add(settable("state").is_some_and(binary), Ability::OnOff);
            add(
                fan_speeds(device).is_some_and(|(mode, _)| mode.access.settable()),
                Ability::Speed,
            );
        }
        Kind::Lock => add(settable("state").is_some_and(binary), Ability::Lock),
        Kind::Cover => {
            let state = settable("state");
            add(
                state.is_some_and(|f| takes(f, "OPEN") && takes(f, "CLOSE")),
                Ability::OpenClose,
            );
            add(state.is_some_and(|f| takes(f, "STOP")), Ability::Stop);
            add(settable("position").is_some_and(numeric), Ability::Position);
        }
        Kind::Climate => {
            add(
                setpoint(device).is_some_and(|f| f.access.settable() && numeric(f)),
                Ability::TargetTemperature,
            );
            if let Some(ValueType::Enum { values }) = settable("system_mode").map(|f| &f.value) {
                modes = values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
            }
            add(!modes.is_empty(), Ability::Mode);
        }
        _ => {}
    }
    add(
        device.features.iter().any(|f| worded(device, f)),
        Ability::Read,
    );
    out.sort_unstable();
    (out, modes)
}

/// Whether [`reading`] words `feature` of `device`: published or gettable, not a diagnostic,
/// and the state, position or temperatures of its kind, or one of [`READINGS`].
fn worded(device: &Device, feature: &Feature) -> bool {
    if !feature.access.readable() || feature.category == Some(Category::Diagnostic) {
        return false;
    }
    match feature.part_of {
        None => READINGS.contains(&feature.name.as_str()),
        Some(kind) if kind == device.kind => match feature.name.as_str() {
            "state" => matches!(
                kind,
                Kind::Light | Kind::Switch | Kind::Fan | Kind::Lock | Kind::Cover
            ),
            "lock_state" | "position" | "local_temperature" | "system_mode" => true,
            "occupied_heating_setpoint" | "current_heating_setpoint" => true,
            _ => false,
        },
        Some(_) => false,
    }
}

/// The `/set` message that runs `command` on `device` (a device or group, or one endpoint of
/// a device as [`things`] makes it), made by [`Device::set`] so the feature's access and
/// values are checked.
///
/// - [`Command::On`], [`Command::Off`]: a light's, switch's or fan's `state`, its `value_on`
///   or `value_off`.
/// - [`Command::Brightness`]: `brightness`, the percentage scaled to its bounds (0 to 254
///   unless it says).
/// - [`Command::BrightnessStep`]: `brightness_step`, the points scaled to 254 (a light whose
///   brightness is settable and has no endpoint: Zigbee2MQTT takes the step, not the device's
///   features).
/// - [`Command::ColorTemperature`]: `color_temp` in mired (a million over the kelvin),
///   clamped to its bounds.
/// - [`Command::Color`]: `color` as `{"x":…,"y":…}` (`color_xy`) or `{"hue":…,"saturation":…}`
///   (`color_hs`), for the colours `say.rs` names.
/// - [`Command::Open`], [`Command::Close`], [`Command::Stop`]: a cover's `state` `OPEN`,
///   `CLOSE`, `STOP`; [`Command::Position`]: its `position`.
/// - [`Command::Lock`], [`Command::Unlock`]: a lock's `state`, its `value_on` (`LOCK`) or
///   `value_off`.
/// - [`Command::Speed`]: a fan's `mode`, `low`, `medium` or `high` (of those it takes) by
///   thirds, `off` at 0 %.
/// - [`Command::TargetTemperature`]: `occupied_heating_setpoint`, else
///   `current_heating_setpoint`, rounded to its step; [`Command::Mode`]: `system_mode`.
///
/// Any other command, or one the device has no feature for, is [`HouseError::CannotDo`]; a
/// feature it may not set is [`HouseError::NotSettable`], a value it does not take
/// [`HouseError::BadValue`]. The features are those of the device's kind, the one without an
/// endpoint when there is one; a whole device with one per endpoint (not split as [`things`]
/// splits it) takes the first endpoint's.
pub fn message(device: &Device, command: &Command) -> Result<Message, HouseError> {
    let cannot = || HouseError::CannotDo {
        device: device.friendly_name.clone(),
        what: command.doing(),
    };
    let feature = |name: &str| control(device, name).ok_or_else(cannot);
    let kind = device.kind;
    match command {
        Command::On | Command::Off if matches!(kind, Kind::Light | Kind::Switch | Kind::Fan) => {
            let f = feature("state")?;
            let ValueType::Binary { on, off, .. } = &f.value else {
                return Err(cannot());
            };
            let value = if *command == Command::On { on } else { off };
            device.set(&f.property, value.clone())
        }
        Command::Brightness(p) if kind == Kind::Light => {
            let f = feature("brightness")?;
            let p = percent(device, &f.property, *p)?;
            let (min, max) = bounds(f, 0.0, 254.0);
            device.set(
                &f.property,
                say::json_number((min + (max - min) * p / 100.0).round()),
            )
        }
        Command::BrightnessStep(p) if kind == Kind::Light => {
            let f = feature("brightness")?;
            if f.property != "brightness" || !f.access.settable() {
                return Err(cannot());
            }
            let step = (f64::from(*p) * 254.0 / 100.0).round();
            Ok(Message {
                topic: device.topics.set.clone(),
                payload: json!({ "brightness_step": say::json_number(step) }).to_string(),
            })
        }
        Command::ColorTemperature(kelvin) if kind == Kind::Light => {
            let f = feature("color_temp")?;
            if *kelvin == 0 {
                return Err(HouseError::BadValue {
                    device: device.friendly_name.clone(),
                    property: f.property.clone(),
                    value: "0 K".to_owned(),
                    expected: "a colour temperature in kelvin above 0".to_owned(),
                });
            }
            let (min, max) = bounds(f, 150.0, 500.0);
            let mired = (1e6 / f64::from(*kelvin)).round().clamp(min, max);
            device.set(&f.property, say::json_number(mired))
        }
        Command::Color(name) if kind == Kind::Light => {
            let f = color_feature(device).ok_or_else(cannot)?;
            let rgb = say::rgb(name).ok_or_else(|| HouseError::BadValue {
                device: device.friendly_name.clone(),
                property: f.property.clone(),
                value: Value::String(name.clone()).to_string(),
                expected: say::color_names(),
            })?;
            let value = if f.name == "color_xy" {
                let (x, y) = say::xy(rgb);
                json!({ "x": x, "y": y })
            } else {
                let (hue, saturation) = say::hs(rgb);
                json!({ "hue": hue, "saturation": saturation })
            };
            device.set(&f.property, value)
        }
        Command::Open | Command::Close | Command::Stop if kind == Kind::Cover => {
            let f = feature("state")?;
            let value = match command {
                Command::Open => "OPEN",
                Command::Close => "CLOSE",
                _ => "STOP",
            };
            if !takes(f, value) {
                return Err(cannot());
            }
            device.set(&f.property, Value::String(value.to_owned()))
        }
        Command::Position(p) if kind == Kind::Cover => {
            let f = feature("position")?;
            let p = percent(device, &f.property, *p)?;
            device.set(&f.property, say::json_number(p))
        }
        Command::Lock | Command::Unlock if kind == Kind::Lock => {
            let f = feature("state")?;
            let ValueType::Binary { on, off, .. } = &f.value else {
                return Err(cannot());
            };
            let value = if *command == Command::Lock { on } else { off };
            device.set(&f.property, value.clone())
        }
        Command::Speed(p) if kind == Kind::Fan => {
            let (mode, speeds) = fan_speeds(device).ok_or_else(cannot)?;
            let p = percent(device, &mode.property, *p)?;
            if p == 0.0 {
                if takes(mode, "off") {
                    return device.set(&mode.property, Value::String("off".to_owned()));
                }
                return message(device, &Command::Off);
            }
            let n = speeds.len() as f64;
            let index = ((p * n / 100.0).ceil() as usize).clamp(1, speeds.len()) - 1;
            let speed = speeds.get(index).copied().unwrap_or("high");
            device.set(&mode.property, Value::String(speed.to_owned()))
        }
        Command::TargetTemperature(t) if kind == Kind::Climate => {
            let f = setpoint(device).ok_or_else(cannot)?;
            let step = match &f.value {
                ValueType::Numeric { step, .. } => *step,
                _ => None,
            };
            device.set(&f.property, say::json_number(say::to_step(*t, step)))
        }
        Command::Mode(m) if kind == Kind::Climate => {
            let f = feature("system_mode")?;
            let value = match &f.value {
                ValueType::Enum { values } => values
                    .iter()
                    .find(|v| v.as_str().is_some_and(|v| v.eq_ignore_ascii_case(m.trim())))
                    .cloned(),
                _ => None,
            };
            device.set(
                &f.property,
                value.unwrap_or_else(|| Value::String(m.clone())),
            )
        }
        _ => Err(cannot()),
    }
}

/// A command's percentage, refused above 100.
fn percent(device: &Device, property: &str, p: u8) -> Result<f64, HouseError> {
    if p > 100 {
        return Err(HouseError::BadValue {
            device: device.friendly_name.clone(),
            property: property.to_owned(),
            value: format!("{p} %"),
            expected: "a percentage from 0 to 100".to_owned(),
        });
    }
    Ok(f64::from(p))
}

/// A numeric feature's bounds, or the defaults when it gives none.
fn bounds(feature: &Feature, min: f64, max: f64) -> (f64, f64) {
    match &feature.value {
        ValueType::Numeric {
            min: lo, max: hi, ..
        } => (lo.unwrap_or(min), hi.unwrap_or(max)),
        _ => (min, max),
    }
}

/// The state `device` publishes on its state topic (`{"state":"ON","brightness":120,…}`) as a
/// sentence: "The ceiling light is on.", "The front door is locked.", "The radiator is set to
/// 21 degrees; it is 19.5 degrees now.", "The climate sensor reads 21.3 °C and 45 % humidity."
///
/// It words the state of the device's kind (on or off, locked, open, a position, a setpoint
/// and the temperature measured), and the temperature, humidity, pressure, illuminance and
/// carbon dioxide it reads, a contact (open or closed), occupancy or presence, a leak or smoke;
/// nothing else. A payload with none of them says the device has not reported its state yet.
/// A payload that is not a JSON object is an error naming the state topic.
pub fn reading(device: &Device, state_payload: &[u8]) -> Result<String, HouseError> {
    let topic = &device.topics.state;
    let expected = "a JSON object of the device's state";
    let state: Map<String, Value> = match serde_json::from_slice(state_payload) {
        Ok(Value::Object(state)) => state,
        Ok(other) => {
            return Err(HouseError::Unexpected {
                topic: topic.clone(),
                expected,
                got: json_type(&other),
            })
        }
        Err(source) => {
            return Err(HouseError::NotJson {
                topic: topic.clone(),
                expected,
                source,
            })
        }
    };
    let value = |f: &Feature| state.get(&f.property).filter(|v| !v.is_null());
    let read = |name: &str| {
        control(device, name)
            .filter(|f| f.access.readable())
            .and_then(|f| Some((f, value(f)?)))
    };
    let mut is: Vec<String> = Vec::new();
    let mut reads: Vec<String> = Vec::new();
    let mut now: Option<String> = None;
    match device.kind {
        Kind::Light | Kind::Switch | Kind::Fan => {
            if let Some((f, v)) = read("state") {
                if let ValueType::Binary { on, off, .. } = &f.value {
                    if v == on {
                        is.push("is on".to_owned());
                    } else if v == off {
                        is.push("is off".to_owned());
                    }
                }
            }
        }
        Kind::Lock => {
            let lock_state = read("lock_state").and_then(|(_, v)| v.as_str());
            if let Some(s) = lock_state {
                is.push(format!("is {}", s.replace('_', " ")));
            } else if let Some((f, v)) = read("state") {
                if let ValueType::Binary { on, off, .. } = &f.value {
                    if v == on {
                        is.push("is locked".to_owned());
                    } else if v == off {
                        is.push("is unlocked".to_owned());
                    }
                }
            }
        }
        Kind::Cover => {
            if let Some(p) = read("position").and_then(|(_, v)| v.as_f64()) {
                is.push(match p {
                    p if p <= 0.0 => "is closed".to_owned(),
                    p if p >= 100.0 => "is open".to_owned(),
                    p => format!("is {} % open", say::number(p)),
                });
            } else if let Some(s) = read("state").and_then(|(_, v)| v.as_str()) {
                is.push(match s {
                    "OPEN" => "is open".to_owned(),
                    "CLOSE" => "is closed".to_owned(),
                    "STOP" => "is stopped".to_owned(),
                    other => format!("is {}", other.to_lowercase()),
                });
            }
        }
        Kind::Climate => {
            let mode = read("system_mode").and_then(|(_, v)| v.as_str());
            let target = read("occupied_heating_setpoint")
                .or_else(|| read("current_heating_setpoint"))
                .and_then(|(_, v)| v.as_f64());
            match (mode, target) {
                (Some("off"), _) => is.push("is off".to_owned()),
                (_, Some(t)) => is.push(format!("is set to {} degrees", say::number(t))),
                (Some(mode), None) => is.push(format!("is set to {}", mode.replace('_', " "))),
                (None, None) => {}
            }
            if let Some(t) = read("local_temperature").and_then(|(_, v)| v.as_f64()) {
                now = Some(format!("{} degrees", say::number(t)));
            }
        }
        _ => {}
    }
    let mut lux = false;
    for f in device.features.iter().filter(|f| {
        f.part_of.is_none() && f.access.readable() && f.category != Some(Category::Diagnostic)
    }) {
        let Some(v) = value(f) else { continue };
        let unit = |default: &str| match &f.value {
            ValueType::Numeric { unit: Some(u), .. } => u.clone(),
            _ => default.to_owned(),
        };
        let n = v.as_f64().map(say::number);
        let yes = v.as_bool();
        match (f.name.as_str(), n, yes) {
            ("temperature", Some(n), _) => reads.push(format!("{n} {}", unit("°C"))),
            ("humidity", Some(n), _) => reads.push(format!("{n} % humidity")),
            ("pressure", Some(n), _) => reads.push(format!("{n} {}", unit("hPa"))),
            ("illuminance" | "illuminance_lux", Some(n), _) if !lux => {
                lux = true;
                reads.push(format!("{n} {}", unit("lx")));
            }
            ("co2", Some(n), _) => reads.push(format!("{n} {} of carbon dioxide", unit("ppm"))),
            ("contact", _, Some(closed)) => {
                is.push(if closed { "is closed" } else { "is open" }.to_owned());
            }
            ("occupancy" | "presence", _, Some(someone)) => is.push(
                if someone {
                    "is detecting someone"
                } else {
                    "is clear"
                }
                .to_owned(),
            ),
            ("water_leak", _, Some(wet)) => {
                is.push(if wet { "is wet" } else { "is dry" }.to_owned());
            }
            ("smoke", _, Some(true)) => is.push("is detecting smoke".to_owned()),
            _ => {}
        }
    }
    Ok(say::sentence(&device.name, is, reads, now))
}
