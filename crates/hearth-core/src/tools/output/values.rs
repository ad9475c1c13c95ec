//! Values in templates: what a call's arguments put into an argv element, a topic or an id,
//! told apart from the text the manifest wrote, and the one rule for where a value may go.
//!
//! A template is rendered with every `{{ … }}` output marked, so each value's place in the
//! result is known ([`render_marked`]); [`check`] then decides whether a value may stand
//! where it landed ([`Place`]). Every executor that builds a command, a topic or an id from
//! a call asks [`check`], so one function holds the rule for each place.

use std::ops::Range;
use std::sync::LazyLock;

use minijinja::{Environment, Error, ErrorKind};

/// Opens a value in a marked render. U+FDD0 and U+FDD1 are Unicode noncharacters: set
/// aside for a program's own use, they never stand for text.
const OPEN: char = '\u{FDD0}';
/// Closes a value in a marked render.
const CLOSE: char = '\u{FDD1}';

/// True when `source` has template syntax (`{{ … }}`, `{% … %}` or `{# … #}`): its text
/// depends on the call, or it is meant to.
pub(crate) fn is_template(source: &str) -> bool {
    source.contains("{{") || source.contains("{%") || source.contains("{#")
}

/// What is wrong with a template's own text for a marked render, if anything: it may not
/// hold the two characters that mark values.
pub(crate) fn literal_problem(source: &str) -> Option<String> {
    source.contains([OPEN, CLOSE]).then(|| {
        "holds U+FDD0 or U+FDD1, which hearth reserves to tell a call's values from the manifest's text: remove them".to_string()
    })
}

/// A template's output and where each value in it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The output text.
    pub text: String,
    /// The byte range in `text` of each `{{ … }}` output, in order.
    pub ranges: Vec<Range<usize>>,
}

impl Rendered {
    /// Each value: its range in [`Self::text`] and its text.
    pub fn values(&self) -> impl Iterator<Item = (Range<usize>, &str)> {
        self.ranges
            .iter()
            .map(|r| (r.clone(), self.text.get(r.clone()).unwrap_or_default()))
    }
}

/// The shared template environment with a formatter that wraps every `{{ … }}` output in
/// [`OPEN`] … [`CLOSE`] (refusing a value that holds either).
fn marking() -> &'static Environment<'static> {
    static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
        let mut env = crate::tools::templates().clone();
        env.set_formatter(|out, _state, value| {
            let text = value.to_string();
            if text.contains([OPEN, CLOSE]) {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "a value holds U+FDD0 or U+FDD1, which hearth reserves to tell a call's values from the manifest's text",
                ));
            }
            write!(out, "{OPEN}{text}{CLOSE}").map_err(Error::from)
        });
        env
    });
    &ENV
}

/// Render `source` against `vars` like [`crate::tools::render`], keeping where each value
/// lies. Fails like it (a missing argument, a syntax error), and when the marks do not pair
/// up (the template's own text holds them, see [`literal_problem`]).
pub(crate) fn render_marked(source: &str, vars: &serde_json::Value) -> Result<Rendered, Error> {
    let marked = marking().render_str(source, minijinja::value::Serde(vars))?;
    let unpaired = || {
        Error::new(
            ErrorKind::InvalidOperation,
            "the template's text holds U+FDD0 or U+FDD1, which hearth reserves to tell a call's values from the manifest's text",
        )
    };
    let mut text = String::with_capacity(marked.len());
    let mut ranges = Vec::new();
    let mut open = None;
    for ch in marked.chars() {
        match (ch, open) {
            (OPEN, None) => open = Some(text.len()),
            (CLOSE, Some(start)) => {
                ranges.push(start..text.len());
                open = None;
            }
            (OPEN | CLOSE, _) => return Err(unpaired()),
            (c, _) => text.push(c),
        }
    }
    if open.is_some() {
        return Err(unpaired());
    }
    Ok(Rendered { text, ranges })
}

/// Where a value lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// In an element of `exec.argv` (after the program): `first` when the value begins the
    /// element, `dash_ok` when the manifest lets this element begin with a value's `-`
    /// (`exec.allow_leading_dash`).
    Argv { first: bool, dash_ok: bool },
    /// In an MQTT topic (`mqtt.topic`, `mqtt.state_topic`).
    Topic,
    /// A string passed on as data (a D-Bus string argument): anything but NUL.
    Text,
    /// A whole Home Assistant id: a service, or what a service call targets.
    Ha(HaId),
}

/// Which Home Assistant id a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HaId {
    /// `domain.service` (`homeassistant.service`).
    Service,
    /// `domain.object_id` (`homeassistant.state`, `entity_id` in service data).
    Entity,
    /// `area_id`: `[a-z0-9_]+`.
    Area,
    /// `device_id`: `[a-z0-9_]+` (Home Assistant's are 32 hex digits).
    Device,
    /// `floor_id`: `[a-z0-9_]+`.
    Floor,
    /// `label_id`: `[a-z0-9_]+`.
    Label,
}

impl HaId {
    /// The id's shape, in words with an example.
    fn shape(self) -> &'static str {
        match self {
            HaId::Service => "domain.service (lowercase letters, digits and `_`, e.g. \"light.turn_on\")",
            HaId::Entity => "an entity id (domain.object_id, lowercase letters, digits and `_`, e.g. \"light.kitchen\")",
            HaId::Area => "an area id (lowercase letters, digits and `_`, e.g. \"living_room\")",
            HaId::Device => "a device id (lowercase letters and digits, as Home Assistant gives it)",
            HaId::Floor => "a floor id (lowercase letters, digits and `_`, e.g. \"ground_floor\")",
            HaId::Label => "a label id (lowercase letters, digits and `_`, e.g. \"night_lights\")",
        }
    }
}

/// Why a value may not stand where it landed; each says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// A NUL character (no argument, topic or name can carry one).
    #[error("holds a NUL character, which cannot be passed on: narrow the parameter in the tool's schema (an enum or a pattern)")]
    Nul,
    /// A value that begins an argument with `-`.
    #[error("would start an option (a value the model chose must not reach the program as one): narrow the parameter in the tool's schema (an enum, a minimum of 0, a pattern such as \"^[^-]\"), or, if the program takes it as data, list this element's index in exec.allow_leading_dash")]
    Option,
    /// A `..` path component.
    #[error("has a `..` path component, which could reach outside the directory the manifest means: narrow the parameter in the tool's schema (an enum or a pattern without `/`)")]
    ParentDir,
    /// A topic level separator in a topic value.
    #[error("has `/`, which would make it more than one level of the topic (another device's topic): narrow the parameter in the tool's schema (an enum), and write the levels in the manifest's topic")]
    TopicLevel,
    /// An MQTT wildcard in a topic value.
    #[error("has `{0}`, an MQTT wildcard, which no published topic may hold: narrow the parameter in the tool's schema (an enum)")]
    TopicWildcard(char),
    /// A Home Assistant id of the wrong shape.
    #[error("is not {}: check the manifest's template and the values it reads", .0.shape())]
    HaShape(HaId),
    /// `all` or `none`, which Home Assistant reads as every entity or none.
    #[error("would target {every} instead of the ones meant (Home Assistant reads {word:?} so): name them in the manifest, or narrow the parameter in the tool's schema (an enum)", word = .0, every = if *.0 == "all" { "every entity" } else { "no entity" })]
    HaEveryone(&'static str),
    /// A topic value that begins with `$`.
    #[error("begins with `$`, which the broker keeps for its own topics ($SYS/…): narrow the parameter in the tool's schema (an enum)")]
    TopicSystem,
}

/// Whether `value` may stand at `place`: the one rule for every executor's values.
///
/// - everywhere: no NUL;
/// - [`Place::Argv`]: no `..` path component (`..` alone, or between, before or after a
///   `/`), and a value that begins the element does not begin with `-` unless `dash_ok`;
/// - [`Place::Topic`]: no `/` (a value is at most one level), no `+` or `#` (wildcards),
///   and no `$` first (the broker's own topics);
/// - [`Place::Text`]: nothing more;
/// - [`Place::Ha`]: the whole id has its shape ([`HaId`]), and is never `all` or `none`.
pub(crate) fn check(place: Place, value: &str) -> Result<(), Refusal> {
    if value.contains('\0') {
        return Err(Refusal::Nul);
    }
    match place {
        Place::Argv { first, dash_ok } => {
            if value.split('/').any(|part| part == "..") {
                return Err(Refusal::ParentDir);
            }
            if first && !dash_ok && value.starts_with('-') {
                return Err(Refusal::Option);
            }
            Ok(())
        }
        Place::Topic => {
            if let Some(c) = value.chars().find(|c| matches!(c, '+' | '#')) {
                return Err(Refusal::TopicWildcard(c));
            }
            if value.contains('/') {
                return Err(Refusal::TopicLevel);
            }
            if value.starts_with('$') {
                return Err(Refusal::TopicSystem);
            }
            Ok(())
        }
        Place::Text => Ok(()),
        Place::Ha(id) => {
            if let Some(word) = ["all", "none"].into_iter().find(|w| *w == value) {
                return Err(Refusal::HaEveryone(word));
            }
            let fits = match id {
                HaId::Service | HaId::Entity => matches!(
                    value.split_once('.'),
                    Some((domain, name)) if ha_slug(domain) && ha_slug(name)
                ),
                HaId::Area | HaId::Device | HaId::Floor | HaId::Label => ha_slug(value),
            };
            if fits {
                Ok(())
            } else {
                Err(Refusal::HaShape(id))
            }
        }
    }
}

/// One part of a Home Assistant id: `[a-z0-9_]+`.
fn ha_slug(part: &str) -> bool {
    !part.is_empty()
        && part
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The text of a template outside its `{{ … }}`, `{% … %}` and `{# … #}` blocks: what the
/// manifest wrote, for load-time checks of a template's shape.
pub(crate) fn literal_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    loop {
        let next = ["{{", "{%", "{#"]
            .iter()
            .filter_map(|open| rest.find(open).map(|i| (i, *open)))
            .min_by_key(|(i, _)| *i);
        let Some((i, open)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i]);
        let close = match open {
            "{{" => "}}",
            "{%" => "%}",
            _ => "#}",
        };
        match rest[i + 2..].find(close) {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => return out,
        }
    }
}

/// True when some string of `v` (at any depth) has template syntax.
pub(crate) fn json_has_template(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => is_template(s),
        serde_json::Value::Array(items) => items.iter().any(json_has_template),
        serde_json::Value::Object(m) => m.values().any(json_has_template),
        _ => false,
    }
}

/// A value as messages quote it: JSON-style, cut after 80 bytes.
pub(crate) fn quoted(value: &str) -> String {
    const MAX: usize = 80;
    if value.len() <= MAX {
        return format!("{value:?}");
    }
    let mut cut = MAX;
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{:?}…", &value[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(source: &str, vars: serde_json::Value) -> (String, Vec<String>) {
        let r = render_marked(source, &vars).unwrap();
        let v = r.values().map(|(_, v)| v.to_string()).collect();
        (r.text, v)
    }

    #[test]
    fn marked_renders_find_every_value() {
        let vars = json!({"dir": "/opt", "x": "a", "on": true, "n": 3, "xs": ["p", "q"]});
        assert_eq!(
            values("{{ dir }}/{{ x }}.wav", vars.clone()),
            ("/opt/a.wav".into(), vec!["/opt".into(), "a".into()])
        );
        // statements, loops and filters: their outputs are values, their text is not
        assert_eq!(
            values(
                "{% if on %}-v{% endif %} {% for i in xs %}{{ i | upper }},{% endfor %}{{ n * 2 }}",
                vars.clone()
            ),
            ("-v P,Q,6".into(), vec!["P".into(), "Q".into(), "6".into()])
        );
        assert_eq!(values("plain", vars.clone()), ("plain".into(), vec![]));
        let r = render_marked("{{ x }}{{ x }}", &vars).unwrap();
        assert_eq!(r.ranges, vec![0..1, 1..2]);
        // the same errors as an unmarked render
        assert!(render_marked("{{ missing }}", &vars).is_err());
        assert!(render_marked("{{ oops", &vars).is_err());
        // the marks cannot be forged, by a value or by the template
        assert!(render_marked("{{ x }}", &json!({"x": "\u{FDD1}-v\u{FDD0}"})).is_err());
        assert!(render_marked("a\u{FDD0}b", &vars).is_err());
        assert!(literal_problem("a\u{FDD1}").is_some());
        assert!(literal_problem("{{ x }}/y").is_none());
    }

    #[test]
    fn argv_values() {
        let first = Place::Argv {
            first: true,
            dash_ok: false,
        };
        let later = Place::Argv {
            first: false,
            dash_ok: false,
        };
        let allowed = Place::Argv {
            first: true,
            dash_ok: true,
        };
        assert_eq!(check(first, "-rf"), Err(Refusal::Option));
        assert_eq!(check(first, "-3"), Err(Refusal::Option));
        assert_eq!(check(later, "-rf"), Ok(()));
        assert_eq!(check(allowed, "-3"), Ok(()));
        assert_eq!(check(first, "living room"), Ok(()));
        for bad in ["..", "../x", "x/..", "a/../b", "/.."] {
            assert_eq!(check(later, bad), Err(Refusal::ParentDir), "{bad}");
            assert_eq!(check(allowed, bad), Err(Refusal::ParentDir), "{bad}");
        }
        for ok in ["...", "a..b", "..a", "a/.b", "."] {
            assert_eq!(check(later, ok), Ok(()), "{ok}");
        }
        assert_eq!(check(later, "a\0b"), Err(Refusal::Nul));
    }

    #[test]
    fn topic_values() {
        for ok in ["kitchen", "living room", "a$", "", "-x", "..", "é"] {
            assert_eq!(check(Place::Topic, ok), Ok(()), "{ok}");
        }
        assert_eq!(check(Place::Topic, "a/b"), Err(Refusal::TopicLevel));
        assert_eq!(check(Place::Topic, "+"), Err(Refusal::TopicWildcard('+')));
        assert_eq!(check(Place::Topic, "a/#"), Err(Refusal::TopicWildcard('#')));
        assert_eq!(check(Place::Topic, "$SYS"), Err(Refusal::TopicSystem));
        assert_eq!(check(Place::Topic, "x\0"), Err(Refusal::Nul));
    }

    #[test]
    fn home_assistant_ids() {
        let ok = |id, v: &str| assert_eq!(check(Place::Ha(id), v), Ok(()), "{v}");
        let bad =
            |id, v: &str| assert_eq!(check(Place::Ha(id), v), Err(Refusal::HaShape(id)), "{v}");
        ok(HaId::Service, "light.turn_on");
        ok(HaId::Entity, "sensor.kitchen_temperature_2");
        for v in [
            "light",
            "light.",
            ".on",
            "Light.on",
            "light.turn on",
            "a.b.c",
            "light./x",
            "",
        ] {
            bad(HaId::Service, v);
            bad(HaId::Entity, v);
        }
        ok(HaId::Area, "living_room");
        ok(HaId::Device, "8f14e45fceea167a5a36dedd4bea2543");
        for v in ["Living Room", "a.b", "a/../b", "kitchen,hall", ""] {
            bad(HaId::Area, v);
            bad(HaId::Device, v);
            bad(HaId::Floor, v);
            bad(HaId::Label, v);
        }
        for id in [
            HaId::Entity,
            HaId::Area,
            HaId::Device,
            HaId::Floor,
            HaId::Label,
        ] {
            assert_eq!(check(Place::Ha(id), "all"), Err(Refusal::HaEveryone("all")));
            assert_eq!(
                check(Place::Ha(id), "none"),
                Err(Refusal::HaEveryone("none"))
            );
        }
        assert!(Refusal::HaEveryone("all")
            .to_string()
            .contains("every entity"));
    }

    #[test]
    fn literal_text_skips_blocks() {
        assert_eq!(literal_text("a/{{ room }}/b"), "a//b");
        assert_eq!(
            literal_text("{{ '#' }}x{% if on %}+{% endif %}{# # #}"),
            "x+"
        );
        assert_eq!(literal_text("plain/#"), "plain/#");
        assert!(json_has_template(&json!({"a": [1, "{{ x }}"]})));
        assert!(!json_has_template(&json!({"a": [1, "x"]})));
    }

    #[test]
    fn text_values() {
        for ok in ["-rf", "../x", "a/+/#", "$SYS", ""] {
            assert_eq!(check(Place::Text, ok), Ok(()), "{ok}");
        }
        assert_eq!(check(Place::Text, "a\0"), Err(Refusal::Nul));
    }

    #[test]
    fn quoted_cuts_long_values() {
        assert_eq!(quoted("a\"b"), r#""a\"b""#);
        let long = "é".repeat(60);
        let q = quoted(&long);
        assert!(q.ends_with('…') && q.len() < 90, "{q}");
    }

    #[test]
    fn is_template_sees_every_kind_of_block() {
        for t in ["{{ x }}", "{% if a %}{% endif %}", "{# c #}", "a/{{x}}"] {
            assert!(is_template(t), "{t}");
        }
        for t in ["x", "/usr/bin/x", "{ x }", "a}}"] {
            assert!(!is_template(t), "{t}");
        }
    }
}
