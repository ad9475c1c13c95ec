//! A definition's `exposes` as features: the specific exposes (`light`, `switch`, `lock`,
//! `climate`, `cover`, `fan`) and their nested `features`, and the generic ones (`binary`,
//! `numeric`, `enum`, `text`, `composite`, `list`). Anything else, or a known type without
//! the fields it needs, is kept as [`Unsupported`] with the reason; nothing here panics.

use serde_json::{Map, Value};

use crate::device::{Access, Category, Feature, Kind, Preset, Unsupported, ValueType};

/// The generic expose types.
const GENERIC: [&str; 6] = ["binary", "numeric", "enum", "text", "composite", "list"];

/// A definition's exposes, read.
#[derive(Debug, Default)]
pub(super) struct Exposes {
    /// Every feature, specific exposes' features first.
    pub features: Vec<Feature>,
    /// What was left out.
    pub unsupported: Vec<Unsupported>,
    /// The kinds of the specific exposes, in the order they came.
    pub kinds: Vec<Kind>,
}

/// Reads `exposes`, a definition's array.
pub(super) fn read(exposes: &[Value]) -> Exposes {
    let mut out = Exposes::default();
    let mut generic = Vec::new();
    for expose in exposes {
        let Some(object) = expose.as_object() else {
            out.unsupported
                .push(unsupported(expose, "an expose that is not a JSON object"));
            continue;
        };
        let Some(kind_name) = object.get("type").and_then(Value::as_str) else {
            out.unsupported
                .push(unsupported(expose, "an expose without a `type`"));
            continue;
        };
        if let Some(kind) = Kind::of_specific(kind_name) {
            match specific(object, kind) {
                Ok(features) => {
                    out.features.extend(features);
                    if !out.kinds.contains(&kind) {
                        out.kinds.push(kind);
                    }
                }
                Err(reason) => out.unsupported.push(unsupported(expose, &reason)),
            }
        } else {
            match feature(object, None, None, true) {
                Ok(f) => generic.push(f),
                Err(reason) => out.unsupported.push(unsupported(expose, &reason)),
            }
        }
    }
    out.features.extend(generic);
    out
}

/// A specific expose's features, each marked as part of `kind` and with the expose's
/// endpoint unless it names its own. A feature that cannot be read makes the whole expose
/// unsupported: half a light is not offered.
fn specific(object: &Map<String, Value>, kind: Kind) -> Result<Vec<Feature>, String> {
    let endpoint = object.get("endpoint").and_then(Value::as_str);
    let Some(features) = object.get("features").and_then(Value::as_array) else {
        return Err(format!("a `{kind}` expose without a `features` array"));
    };
    let mut out = Vec::with_capacity(features.len());
    for item in features {
        let Some(item) = item.as_object() else {
            return Err(format!("a `{kind}` feature that is not a JSON object"));
        };
        out.push(
            feature(item, Some(kind), endpoint, true)
                .map_err(|reason| format!("in a `{kind}` expose: {reason}"))?,
        );
    }
    if out.is_empty() {
        return Err(format!("a `{kind}` expose with no features"));
    }
    Ok(out)
}

/// A generic expose. `property_required`: a list's item may go without a property (it has
/// none of its own); every other expose needs one.
fn feature(
    object: &Map<String, Value>,
    part_of: Option<Kind>,
    endpoint: Option<&str>,
    property_required: bool,
) -> Result<Feature, String> {
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let kind_name = text("type").ok_or("a feature without a `type`")?;
    if !GENERIC.contains(&kind_name.as_str()) {
        let what = text("property").or_else(|| text("name"));
        return Err(match what {
            Some(_) if Kind::of_specific(&kind_name).is_some() => {
                format!("a `{kind_name}` expose inside another expose")
            }
            Some(what) => {
                format!("`{what}` is of type `{kind_name}`, not one Zigbee2MQTT documents")
            }
            None => format!("type `{kind_name}` is not one Zigbee2MQTT documents"),
        });
    }
    let name = text("name").ok_or_else(|| format!("a `{kind_name}` feature without a `name`"))?;
    let property = match text("property") {
        Some(property) => property,
        None if !property_required => name.clone(),
        None => return Err(format!("`{name}` has no `property`")),
    };
    let bits = object
        .get("access")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("`{property}` has no `access` bits"))?;
    let access = Access::from_bits(bits)
        .ok_or_else(|| format!("`{property}` has access {bits}, not bits of 1, 2 and 4"))?;
    let number = |key: &str| object.get(key).and_then(Value::as_f64);
    let value = match kind_name.as_str() {
        "binary" => {
            let on = object.get("value_on").cloned();
            let off = object.get("value_off").cloned();
            let (Some(on), Some(off)) = (on, off) else {
                return Err(format!(
                    "binary `{property}` without `value_on` and `value_off`"
                ));
            };
            ValueType::Binary {
                on,
                off,
                toggle: object.get("value_toggle").cloned(),
            }
        }
        "numeric" => ValueType::Numeric {
            min: number("value_min"),
            max: number("value_max"),
            step: number("value_step"),
            unit: text("unit"),
            presets: presets(object.get("presets")),
        },
        "enum" => match object.get("values").and_then(Value::as_array) {
            Some(values) if !values.is_empty() => ValueType::Enum {
                values: values.clone(),
            },
            _ => return Err(format!("enum `{property}` without `values`")),
        },
        "text" => ValueType::Text,
        "composite" => {
            let Some(parts) = object.get("features").and_then(Value::as_array) else {
                return Err(format!("composite `{property}` without `features`"));
            };
            let mut features = Vec::with_capacity(parts.len());
            for part in parts {
                let part = part.as_object().ok_or_else(|| {
                    format!("composite `{property}` has a part that is not an object")
                })?;
                let part = feature(part, part_of, None, true)
                    .map_err(|reason| format!("composite `{property}`: {reason}"))?;
                features.push(part);
            }
            ValueType::Composite { features }
        }
        "list" => {
            let item = object
                .get("item_type")
                .and_then(Value::as_object)
                .ok_or_else(|| format!("list `{property}` without an `item_type`"))?;
            let item = feature(item, part_of, None, false)
                .map_err(|reason| format!("list `{property}`: {reason}"))?;
            ValueType::List {
                item: Box::new(item),
                length_min: object.get("length_min").and_then(Value::as_u64),
                length_max: object.get("length_max").and_then(Value::as_u64),
            }
        }
        other => return Err(format!("type `{other}` is not one Zigbee2MQTT documents")),
    };
    Ok(Feature {
        label: text("label"),
        description: text("description"),
        endpoint: text("endpoint").or_else(|| endpoint.map(str::to_owned)),
        part_of,
        category: match object.get("category").and_then(Value::as_str) {
            Some("config") => Some(Category::Config),
            Some("diagnostic") => Some(Category::Diagnostic),
            _ => None,
        },
        access,
        value,
        property,
        name,
    })
}

/// A numeric expose's presets; one without a name or value is left out.
fn presets(value: Option<&Value>) -> Vec<Preset> {
    let Some(list) = value.and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|p| {
            Some(Preset {
                name: p.get("name")?.as_str()?.to_owned(),
                value: p.get("value")?.clone(),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

/// An expose left out: named by its property, name or type, whichever it has.
fn unsupported(expose: &Value, reason: &str) -> Unsupported {
    let name = ["property", "name", "type"]
        .iter()
        .find_map(|key| expose.get(key).and_then(Value::as_str))
        .unwrap_or("?");
    Unsupported {
        name: name.to_owned(),
        reason: reason.to_owned(),
    }
}
