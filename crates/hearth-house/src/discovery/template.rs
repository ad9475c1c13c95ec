//! The value templates hearth reads without a Jinja engine: `{{ value }}` and a path into
//! `value_json` (`{{ value_json.POWER }}`, `{{ value_json["state"] }}`,
//! `{{value_json['ENERGY']['Power']}}`, `{{ value_json.list[0] }}`), the forms Tasmota,
//! ESPHome and Zigbee2MQTT write for the state hearth reads. Anything else (a filter, an `if`,
//! arithmetic) needs Home Assistant's engine and is refused with the reason.

use serde_json::Value;

/// How a state is taken from a payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Extract {
    /// The payload as it is (no template, or `{{ value }}`).
    Raw,
    /// The value at this path of the payload read as JSON.
    Json(Vec<Step>),
}

/// One step of a path into `value_json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// An object's key.
    Key(String),
    /// An array's index.
    Index(usize),
}

/// How a template takes a state from a payload, or why hearth cannot follow it.
pub(crate) fn extract(template: &str) -> Result<Extract, String> {
    let refuse = || {
        format!(
            "its template {template:?} is more than `value_json.KEY`: it needs Home Assistant's Jinja engine"
        )
    };
    let inner = template
        .trim()
        .strip_prefix("{{")
        .and_then(|t| t.strip_suffix("}}"))
        .map(str::trim)
        .ok_or_else(refuse)?;
    if inner == "value" {
        return Ok(Extract::Raw);
    }
    let mut rest = inner.strip_prefix("value_json").ok_or_else(refuse)?;
    let mut path = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let (key, tail) = after.split_at(end);
            if key.is_empty() || key.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(refuse());
            }
            path.push(Step::Key(key.to_owned()));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(refuse)?;
            let (inside, tail) = after.split_at(end);
            let inside = inside.trim();
            let quoted = ['"', '\''].iter().find_map(|q| {
                inside
                    .strip_prefix(*q)
                    .and_then(|s| s.strip_suffix(*q))
                    .filter(|s| !s.contains(*q))
            });
            match (quoted, inside.parse::<usize>()) {
                (Some(key), _) => path.push(Step::Key(key.to_owned())),
                (None, Ok(index)) => path.push(Step::Index(index)),
                (None, Err(_)) => return Err(refuse()),
            }
            rest = tail.strip_prefix(']').ok_or_else(refuse)?;
        } else {
            return Err(refuse());
        }
    }
    if path.is_empty() {
        return Err(refuse());
    }
    Ok(Extract::Json(path))
}

/// A command template that only puts the value in: its text, with holes for the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fill {
    pieces: Vec<Option<String>>,
}

impl Fill {
    /// The template with `value` in its holes.
    pub(crate) fn render(&self, value: &str) -> String {
        self.pieces
            .iter()
            .map(|piece| piece.as_deref().unwrap_or(value))
            .collect()
    }
}

/// A command template read as text with holes where `{{ variable }}` (or `{{ value }}`) is,
/// or why hearth cannot render it: any other expression or a `{% … %}` statement.
pub(crate) fn fill(template: &str, variable: &str) -> Result<Fill, String> {
    let refuse = || {
        format!(
            "its template {template:?} is more than the value put in: it needs Home Assistant's Jinja engine"
        )
    };
    if template.contains("{%") || template.contains("{#") {
        return Err(refuse());
    }
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let (text, after) = rest.split_at(start);
        if !text.is_empty() {
            pieces.push(Some(text.to_owned()));
        }
        let after = after.get(2..).unwrap_or_default();
        let end = after.find("}}").ok_or_else(refuse)?;
        let (inner, tail) = after.split_at(end);
        let inner = inner.trim();
        if inner != variable && inner != "value" {
            return Err(refuse());
        }
        pieces.push(None);
        rest = tail.get(2..).unwrap_or_default();
    }
    if rest.contains("}}") {
        return Err(refuse());
    }
    if !rest.is_empty() {
        pieces.push(Some(rest.to_owned()));
    }
    Ok(Fill { pieces })
}

/// The value at `path` of `json`, if it is there and not null.
pub(crate) fn at<'a>(json: &'a Value, path: &[Step]) -> Option<&'a Value> {
    let mut here = json;
    for step in path {
        here = match step {
            Step::Key(key) => here.get(key)?,
            Step::Index(index) => here.get(index)?,
        };
    }
    (!here.is_null()).then_some(here)
}

/// A value as a template renders it, for comparing with a configured payload: a string as
/// it is, `True`/`False` for a boolean (Jinja's, as Zigbee2MQTT's `payload_on: true` is
/// compared), a number as JSON writes it.
pub(crate) fn rendered(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(steps: &[&str]) -> Extract {
        Extract::Json(steps.iter().map(|s| Step::Key((*s).to_owned())).collect())
    }

    #[test]
    fn the_forms_publishers_write_are_read() {
        assert_eq!(extract("{{value_json.POWER}}"), Ok(path(&["POWER"])));
        assert_eq!(
            extract(r#"{{ value_json["state"] }}"#),
            Ok(path(&["state"]))
        );
        assert_eq!(
            extract("{{value_json['ENERGY']['Power']}}"),
            Ok(path(&["ENERGY", "Power"]))
        );
        assert_eq!(
            extract("{{ value_json.a.b[2] }}"),
            Ok(Extract::Json(vec![
                Step::Key("a".into()),
                Step::Key("b".into()),
                Step::Index(2)
            ]))
        );
        assert_eq!(extract("{{ value }}"), Ok(Extract::Raw));
        assert_eq!(
            extract("{{ value_json.temperature}}"),
            Ok(path(&["temperature"]))
        );
    }

    #[test]
    fn anything_more_is_refused_with_the_reason() {
        for t in [
            "{{value_json.HSBColor.split(',')[0:2]|join(',')}}",
            r#"{{ value_json["action"] | default('',True) }}"#,
            "{% if value_json.x %}on{% endif %}",
            "{{ value_json }}",
            "{{ value_json.1x }}",
            "{{ value_json['a\"] }}",
            "{{ value_json.a + 1 }}",
            "value_json.a",
        ] {
            let why = extract(t).unwrap_err();
            assert!(why.contains("Jinja"), "{t}: {why}");
        }
    }

    #[test]
    fn command_templates_that_only_put_the_value_in_are_rendered() {
        let position = fill(r#"{ "position": {{ position }} }"#, "position").unwrap();
        assert_eq!(position.render("40"), r#"{ "position": 40 }"#);
        assert_eq!(fill("{{value}}", "value").unwrap().render("ON"), "ON");
        assert_eq!(
            fill("POWER {{ value }}!", "value").unwrap().render("ON"),
            "POWER ON!"
        );
        for t in [
            "{{ value | int }}",
            "{% if value == 'ON' %}1{% else %}0{% endif %}",
            "{{ position",
            "x }} y",
            "{{ brightness }}",
        ] {
            assert!(fill(t, "position").unwrap_err().contains("Jinja"), "{t}");
        }
    }

    #[test]
    fn values_render_as_jinja_renders_them() {
        let v = json!({"a": {"b": [1, 2.5, true, null, "ON"]}});
        let at = |i| {
            at(
                &v,
                &[Step::Key("a".into()), Step::Key("b".into()), Step::Index(i)],
            )
        };
        assert_eq!(at(0).map(rendered).as_deref(), Some("1"));
        assert_eq!(at(1).map(rendered).as_deref(), Some("2.5"));
        assert_eq!(at(2).map(rendered).as_deref(), Some("True"));
        assert_eq!(at(3), None);
        assert_eq!(at(4).map(rendered).as_deref(), Some("ON"));
        assert_eq!(at(9), None);
    }
}
