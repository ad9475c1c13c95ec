//! Whether a feature takes a value, and what it takes, in words for an error.

use serde_json::Value;

use crate::device::{Feature, ValueType};

/// Whether `feature` takes `value` in a `/set` (the feature's own access is the caller's to
/// check; a composite's parts must each be settable).
pub(crate) fn accepts(feature: &Feature, value: &Value) -> bool {
    match &feature.value {
        ValueType::Binary { on, off, toggle } => {
            value == on || value == off || toggle.as_ref() == Some(value)
        }
        ValueType::Numeric {
            min, max, presets, ..
        } => match value {
            Value::Number(n) => n
                .as_f64()
                .is_some_and(|n| min.is_none_or(|min| n >= min) && max.is_none_or(|max| n <= max)),
            Value::String(s) => presets.iter().any(|p| p.name == *s),
            _ => false,
        },
        ValueType::Enum { values } => values.contains(value),
        ValueType::Text => value.is_string(),
        ValueType::Composite { features } => match value {
            Value::Object(parts) => {
                !parts.is_empty()
                    && parts.iter().all(|(key, part)| {
                        features
                            .iter()
                            .any(|f| f.property == *key && f.access.settable() && accepts(f, part))
                    })
            }
            _ => false,
        },
        ValueType::List {
            item,
            length_min,
            length_max,
        } => match value {
            Value::Array(items) => {
                let n = items.len() as u64;
                length_min.is_none_or(|min| n >= min)
                    && length_max.is_none_or(|max| n <= max)
                    && items.iter().all(|i| accepts(item, i))
            }
            _ => false,
        },
    }
}

/// What `feature` takes, as an error message says it.
pub(crate) fn expected(feature: &Feature) -> String {
    match &feature.value {
        ValueType::Binary { on, off, toggle } => match toggle {
            Some(toggle) => format!("{on}, {off} or {toggle}"),
            None => format!("{on} or {off}"),
        },
        ValueType::Numeric {
            min,
            max,
            unit,
            presets,
            ..
        } => {
            let mut text = match (min, max) {
                (Some(min), Some(max)) => format!("a number from {min} to {max}"),
                (Some(min), None) => format!("a number from {min}"),
                (None, Some(max)) => format!("a number up to {max}"),
                (None, None) => "a number".to_owned(),
            };
            if let Some(unit) = unit {
                text.push_str(&format!(" ({unit})"));
            }
            if !presets.is_empty() {
                let names: Vec<String> = presets.iter().map(|p| format!("{:?}", p.name)).collect();
                text.push_str(&format!(" or one of {}", names.join(", ")));
            }
            text
        }
        ValueType::Enum { values } => {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            format!("one of {}", values.join(", "))
        }
        ValueType::Text => "text".to_owned(),
        ValueType::Composite { features } => {
            let parts: Vec<&str> = features
                .iter()
                .filter(|f| f.access.settable())
                .map(|f| f.property.as_str())
                .collect();
            format!("an object of {}", parts.join(", "))
        }
        ValueType::List { item, .. } => format!("an array, each item {}", expected(item)),
    }
}
