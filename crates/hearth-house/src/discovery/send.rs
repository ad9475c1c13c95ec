//! The message that runs a [`Command`] on a discovered component.

use serde_json::{json, Value};

use super::component::{ColorForm, Component, Spec};
use crate::device::Message;
use crate::say;
use crate::thing::Command;
use crate::HouseError;

/// The message that runs `command` on `component`: the payload its configuration gives, on
/// the topic it gives.
///
/// - switch, fan: `payload_on`/`payload_off` on `command_topic`; a fan's speed on
///   `percentage_command_topic`, the percentage scaled to `speed_range_min` ..
///   `speed_range_max` as Home Assistant scales it.
/// - light, default schema: `payload_on`/`payload_off` on `command_topic`; brightness scaled
///   to `brightness_scale` on `brightness_command_topic`; colour temperature in mired (kelvin
///   with `color_temp_kelvin`) on `color_temp_command_topic`; a colour as `x,y`, `h,s` or
///   `r,g,b` on `xy_command_topic`, `hs_command_topic` or `rgb_command_topic`. Brightness 0
///   turns it off.
/// - light, json schema: `{"state":"ON"}`, `{"state":"ON","brightness":…}`,
///   `{"state":"ON","color_temp":…}`, `{"state":"ON","color":{"x":…,"y":…}}` (or `h`,`s`;
///   `r`,`g`,`b`) on `command_topic`, as its `supported_color_modes` allow.
/// - cover: `payload_open`, `payload_close`, `payload_stop` on `command_topic`; a position
///   scaled to `position_closed` .. `position_open` on `set_position_topic`.
/// - lock: `payload_lock`, `payload_unlock` on `command_topic`.
/// - climate: the temperature, rounded to `temp_step` and within `min_temp` .. `max_temp`,
///   on `temperature_command_topic`; a mode of `modes` on `mode_command_topic`.
///
/// One message per command: a default-schema light is not also sent `payload_on` with its
/// brightness (Tasmota, whose `on_command_type` is `brightness`, turns on with it). A command
/// the component has no topic or payload for is [`HouseError::CannotDo`]; a value outside
/// what it takes (a colour hearth does not know, a temperature out of bounds, a mode it does
/// not list) is [`HouseError::BadValue`].
pub fn message(component: &Component, command: &Command) -> Result<Message, HouseError> {
    let name = || {
        if component.name.is_empty() {
            component.config_topic.clone()
        } else {
            component.name.clone()
        }
    };
    let cannot = || HouseError::CannotDo {
        device: name(),
        what: command.doing(),
    };
    let bad = |property: &str, value: String, expected: String| HouseError::BadValue {
        device: name(),
        property: property.to_owned(),
        value,
        expected,
    };
    let percent = |property: &str, p: u8| {
        if p > 100 {
            Err(bad(
                property,
                format!("{p} %"),
                "a percentage from 0 to 100".to_owned(),
            ))
        } else {
            Ok(f64::from(p))
        }
    };
    let send = |topic: &str, payload: String| {
        Ok(Message {
            topic: topic.to_owned(),
            payload,
        })
    };
    let number = |v: f64| say::json_number(v).to_string();
    match (&component.spec, command) {
        (
            Spec::Switch {
                command: Some(c), ..
            }
            | Spec::Fan {
                command: Some(c), ..
            },
            Command::On,
        ) => send(&c.target.topic, c.target.payload(&c.on)),
        (
            Spec::Switch {
                command: Some(c), ..
            }
            | Spec::Fan {
                command: Some(c), ..
            },
            Command::Off,
        ) => send(&c.target.topic, c.target.payload(&c.off)),
        (
            Spec::Fan {
                speed: Some((topic, min, max)),
                ..
            },
            Command::Speed(p),
        ) => {
            let p = percent("percentage", *p)?;
            let value = if p == 0.0 {
                min - 1.0
            } else {
                ((max - min + 1.0) * p / 100.0 + min - 1.0).ceil()
            };
            send(&topic.topic, topic.payload(&number(value)))
        }
        (Spec::Light { light, .. }, Command::On | Command::Off) => {
            let on = *command == Command::On;
            if light.json {
                let state = if on { "ON" } else { "OFF" };
                send(&light.command, json!({ "state": state }).to_string())
            } else {
                let payload = if on { &light.on } else { &light.off };
                send(&light.command, payload.clone())
            }
        }
        (Spec::Light { light, .. }, Command::Brightness(p)) => {
            let Some((topic, scale)) = &light.brightness else {
                return Err(cannot());
            };
            let p = percent("brightness", *p)?;
            if p == 0.0 {
                return message(component, &Command::Off);
            }
            let level = (p * scale / 100.0).round().max(1.0);
            match topic {
                Some(target) => send(&target.topic, target.payload(&number(level))),
                None => send(
                    &light.command,
                    json!({ "state": "ON", "brightness": say::json_number(level) }).to_string(),
                ),
            }
        }
        (Spec::Light { light, .. }, Command::ColorTemperature(kelvin)) => {
            let Some(ct) = &light.color_temp else {
                return Err(cannot());
            };
            if *kelvin == 0 {
                return Err(bad(
                    "color_temp",
                    "0 K".to_owned(),
                    "a colour temperature in kelvin above 0".to_owned(),
                ));
            }
            let mired = (1e6 / f64::from(*kelvin))
                .round()
                .clamp(ct.min_mireds, ct.max_mireds);
            let value = if ct.kelvin {
                (1e6 / mired).round()
            } else {
                mired
            };
            match &ct.topic {
                Some(target) => send(&target.topic, target.payload(&number(value))),
                None => send(
                    &light.command,
                    json!({ "state": "ON", "color_temp": say::json_number(value) }).to_string(),
                ),
            }
        }
        (Spec::Light { light, .. }, Command::Color(color)) => {
            let Some((topic, form)) = &light.color else {
                return Err(cannot());
            };
            let rgb = say::rgb(color).ok_or_else(|| {
                bad(
                    "color",
                    Value::String(color.clone()).to_string(),
                    say::color_names(),
                )
            })?;
            let [r, g, b] = rgb;
            let (x, y) = say::xy(rgb);
            let (h, s) = say::hs(rgb);
            match topic {
                Some(target) => {
                    let payload = match form {
                        ColorForm::Xy => format!("{},{}", number(x), number(y)),
                        ColorForm::Hs => format!("{},{}", number(h), number(s)),
                        ColorForm::Rgb => format!("{r},{g},{b}"),
                        ColorForm::Rgbw => format!("{r},{g},{b},0"),
                        ColorForm::Rgbww => format!("{r},{g},{b},0,0"),
                    };
                    send(&target.topic, target.payload(&payload))
                }
                None => {
                    let color = match form {
                        ColorForm::Xy => json!({ "x": x, "y": y }),
                        ColorForm::Hs => json!({ "h": h, "s": s }),
                        ColorForm::Rgb => json!({ "r": r, "g": g, "b": b }),
                        ColorForm::Rgbw => json!({ "r": r, "g": g, "b": b, "w": 0 }),
                        ColorForm::Rgbww => json!({ "r": r, "g": g, "b": b, "c": 0, "w": 0 }),
                    };
                    send(
                        &light.command,
                        json!({ "state": "ON", "color": color }).to_string(),
                    )
                }
            }
        }
        (Spec::Cover { cover, .. }, Command::Open | Command::Close | Command::Stop) => {
            let payload = match command {
                Command::Open => &cover.open,
                Command::Close => &cover.close,
                _ => &cover.stop,
            };
            match (&cover.command, payload) {
                (Some(topic), Some(payload)) => send(topic, payload.clone()),
                _ => Err(cannot()),
            }
        }
        (Spec::Cover { cover, .. }, Command::Position(p)) => {
            let Some(target) = &cover.set_position else {
                return Err(cannot());
            };
            let p = percent("position", *p)?;
            let value =
                cover.position_closed + (cover.position_open - cover.position_closed) * p / 100.0;
            send(&target.topic, target.payload(&number(value.round())))
        }
        (
            Spec::Lock {
                command: Some((topic, lock, unlock)),
                ..
            },
            Command::Lock | Command::Unlock,
        ) => {
            let payload = if *command == Command::Lock {
                lock
            } else {
                unlock
            };
            send(&topic.topic, topic.payload(payload))
        }
        (Spec::Climate(climate), Command::TargetTemperature(t)) => {
            let Some(target) = &climate.temperature else {
                return Err(cannot());
            };
            let t = say::to_step(*t, Some(climate.temp_step));
            if !t.is_finite() || t < climate.min_temp || t > climate.max_temp {
                return Err(bad(
                    "temperature",
                    say::number(t),
                    format!(
                        "a number from {} to {}",
                        say::number(climate.min_temp),
                        say::number(climate.max_temp)
                    ),
                ));
            }
            send(&target.topic, target.payload(&number(t)))
        }
        (Spec::Climate(climate), Command::Mode(m)) => {
            let Some(target) = &climate.mode else {
                return Err(cannot());
            };
            let Some(mode) = climate
                .modes
                .iter()
                .find(|mode| mode.eq_ignore_ascii_case(m.trim()))
            else {
                return Err(bad(
                    "mode",
                    Value::String(m.clone()).to_string(),
                    format!("one of {}", climate.modes.join(", ")),
                ));
            };
            send(&target.topic, target.payload(mode))
        }
        _ => Err(cannot()),
    }
}
