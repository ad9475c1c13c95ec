//! Whether a call's values are what was said: every number, enum value and direction of a
//! boolean a model put in a call must be in the words it was asked with.
//!
//! Qwen2.5-Coder-0.5B, asked "Turn off the kitchen and living room lights.", switched the
//! living room light **on**; asked "Make sure nobody can get into the back door.", it
//! unlocked it; asked "Set the thermostat to 22.5 degrees.", it set 22.5 and then 10. Each
//! value came from nowhere in the request. [`unsupported`] finds such a value, the way a
//! slot reads a request ([`super::slot`]), so a value a sentence template would take is a
//! value a call may have:
//! - a string with an `enum`: one of its values said, exactly or without its spaces or with
//!   a plural "s" ("livingroom", "lights");
//! - a number: said in digits or words ("21.5", "twenty one point five", "40%");
//! - a boolean whose name says a direction ([`super::derive::DIRECTIONS`]: `on`, `locked`,
//!   `open`, …): a word of that way said ("off" for `on = false`, "unlock" for `locked =
//!   false`); a boolean named otherwise is not judged;
//! - a length of time or a time of day (a string of `"format": "length"` or `"clock"`):
//!   the same length or time said, in any words ("10 minutes" for "ten minutes", "7:00 AM"
//!   for "seven a.m.");
//! - an optional parameter at its `default` (the call says what it would say without it); a
//!   required one's default is a value like any other, said or not.
//!
//! Free text, objects and arrays are not judged here.

use serde_json::Value;

use super::derive::DIRECTIONS;
use super::normalize::{self, Word};
use super::slot::{self, Slot};

/// A value of a call that nothing said supports.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported {
    /// The parameter.
    pub param: String,
    /// Its value in the call.
    pub value: Value,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}", self.param, self.value)
    }
}

/// The first value of `arguments` (checked against the tool's `parameters` schema) that
/// `said` does not support; `None` when every value it can judge is supported.
pub fn unsupported(parameters: &Value, arguments: &Value, said: &str) -> Option<Unsupported> {
    let properties = parameters.get("properties").and_then(Value::as_object)?;
    let words = normalize::words(said);
    let Value::Object(args) = arguments else {
        return None;
    };
    let required = |param: &str| {
        parameters
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|p| p.as_str() == Some(param)))
    };
    args.iter()
        .find(|(param, value)| {
            properties.get(param.as_str()).is_some_and(|schema| {
                // an optional parameter at its default says what leaving it out says
                let as_if_left_out = !required(param) && schema.get("default") == Some(*value);
                !as_if_left_out && !supported(param, schema, value, &words)
            })
        })
        .map(|(param, value)| Unsupported {
            param: param.clone(),
            value: value.clone(),
        })
}

/// Whether `said` gives a parameter of `arguments` another value than the call does: the
/// other way of a direction ("off" said, `on = true` called), another number the parameter
/// takes, another of its enum's values. Such a call is not what was asked, said back or not.
pub fn contradicts(parameters: &Value, arguments: &Value, said: &str) -> bool {
    let (Some(properties), Value::Object(args)) = (
        parameters.get("properties").and_then(Value::as_object),
        arguments,
    ) else {
        return false;
    };
    let words = normalize::words(said);
    args.iter().any(|(param, value)| {
        properties.get(param.as_str()).is_some_and(|schema| {
            !supported(param, schema, value, &words) && says_another(param, schema, value, &words)
        })
    })
}

/// Whether `words` say some value of `param` other than `value` (which they do not say).
fn says_another(param: &str, schema: &Value, value: &Value, words: &[Word]) -> bool {
    match slot::kind(schema) {
        Some("boolean") => value.as_bool().is_some_and(|yes| {
            direction_said(param, &Value::Bool(!yes), words) || direction_denied(param, yes, words)
        }),
        Some("number" | "integer") => any_value_said(schema, words),
        Some("string") if schema.get("enum").is_some() => any_value_said(schema, words),
        _ => false,
    }
}

/// Whether `said` names some value of a parameter with this `schema` (an enum's value as
/// its slot reads it: "living-room", "the Living Room" name "living room").
pub(crate) fn names_a_value(schema: &Value, said: &str) -> bool {
    any_value_said(schema, &normalize::words(said))
}

/// Whether some run of `words` is a value of a slot of this `schema`.
fn any_value_said(schema: &Value, words: &[Word]) -> bool {
    Slot::new(schema, None)
        .is_ok_and(|slot| (0..words.len()).any(|i| !slot.values(&words[i..]).is_empty()))
}

/// Whether `words` support `value` for the parameter `param` with this `schema`.
fn supported(param: &str, schema: &Value, value: &Value, words: &[Word]) -> bool {
    match slot::kind(schema) {
        Some("boolean") => direction_said(param, value, words),
        Some("string") if schema.get("enum").is_some() => slot_says(schema, value, words),
        Some("string") => match slot::Reading::of(schema) {
            Some(reading) => reading_said(reading, value, words),
            None => true,
        },
        Some("number" | "integer") => slot_says(schema, value, words),
        _ => true,
    }
}

/// Whether some run of `words` says what `value` says, read as `reading` ("ten minutes"
/// for "10 minutes", "7 am" for "07:00 AM"); a value that does not read as one is not
/// supported.
fn reading_said(reading: slot::Reading, value: &Value, words: &[Word]) -> bool {
    let Some(want) = value.as_str().and_then(|v| reading.read(v)) else {
        return false;
    };
    (0..words.len()).any(|i| reading.at(&words[i..]).iter().any(|(_, v)| *v == want))
}

/// Whether some run of `words` reads as `value` in a slot of this `schema`.
fn slot_says(schema: &Value, value: &Value, words: &[Word]) -> bool {
    let Ok(slot) = Slot::new(schema, None) else {
        return true; // not a slot a request can fill: not judged
    };
    let same = |v: &Value| match (v.as_f64(), value.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < 1e-9,
        _ => v == value,
    };
    (0..words.len()).any(|i| slot.values(&words[i..]).iter().any(|(_, v)| same(v)))
}

/// Whether a word of the way `value` goes was said, and not denied ([`denied`]: "I don't
/// need the light on" says no way), for a boolean whose name has a direction; a boolean
/// named otherwise is not judged.
fn direction_said(param: &str, value: &Value, words: &[Word]) -> bool {
    let name = param.to_lowercase();
    let Some(d) = DIRECTIONS.iter().find(|d| d.names.contains(&name.as_str())) else {
        return true;
    };
    let Some(yes) = value.as_bool() else {
        return true;
    };
    if words
        .first()
        .is_some_and(|w| ASKS_A_STATE.contains(&w.key.as_str()))
    {
        return false;
    }
    let way = d.said_as(yes);
    (0..words.len()).any(|i| way.contains(&words[i].key.as_str()) && !denied(words, i))
}

/// Whether the way `yes` of a boolean named for a direction is said and denied: "Don't turn
/// off the light." denies `on = false`.
fn direction_denied(param: &str, yes: bool, words: &[Word]) -> bool {
    let name = param.to_lowercase();
    let Some(d) = DIRECTIONS.iter().find(|d| d.names.contains(&name.as_str())) else {
        return false;
    };
    let way = d.said_as(yes);
    (0..words.len()).any(|i| way.contains(&words[i].key.as_str()) && denied(words, i))
}

/// Words that deny a way said soon after them in the same clause.
const DENYING: &[&str] = &[
    "don't",
    "dont",
    "not",
    "never",
    "doesn't",
    "doesnt",
    "won't",
    "wont",
    "shouldn't",
    "shouldnt",
    "without",
];

/// Words a denial does not reach past: a clause's end, and "forget" ("don't forget to turn
/// off the oven" asks for it).
const CLAUSE_ENDS: &[&str] = &["and", "but", "then", "so", "or", "forget"];

/// Whether the word at `i` is denied: one of [`DENYING`], or "no need"/"no longer", is among
/// the four words before it, with no clause's end between.
fn denied(words: &[Word], i: usize) -> bool {
    let key = |k: usize| words[k].key.as_str();
    (i.saturating_sub(4)..i)
        .rev()
        .take_while(|&k| !CLAUSE_ENDS.contains(&key(k)))
        .any(|k| {
            DENYING.contains(&key(k))
                || (key(k) == "no"
                    && matches!(
                        words.get(k + 1).map(|w| w.key.as_str()),
                        Some("need" | "longer")
                    ))
        })
}

/// First words of a question about a state ("is the front door locked?", "did you turn off
/// the oven?"): its way words are what is asked about, and support no call that sets them.
/// (The small model locked the front door for "is the front door lock," as whisper wrote
/// it.)
pub(crate) const ASKS_A_STATE: &[&str] = &[
    "is", "are", "was", "were", "isn't", "aren't", "wasn't", "weren't", "isnt", "arent", "did",
    "didn't", "didnt", "does", "doesn't", "doesnt",
];

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::unsupported;

    fn light() -> Value {
        json!({"type": "object", "properties": {
            "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom"]},
            "on": {"type": "boolean"}}})
    }

    fn lock() -> Value {
        json!({"type": "object", "properties": {
            "door": {"type": "string", "enum": ["front", "back"]},
            "locked": {"type": "boolean"}}})
    }

    fn thermostat() -> Value {
        json!({"type": "object", "properties": {
            "temperature": {"type": "number", "minimum": 10, "maximum": 30},
            "mode": {"type": "string", "enum": ["heat", "eco"], "default": "heat"}}})
    }

    #[test]
    fn a_denied_way_supports_nothing_and_contradicts_itself() {
        use super::contradicts;
        let on = json!({"room": "kitchen", "on": true});
        let off = json!({"room": "kitchen", "on": false});
        let kept = "I'm leaving the kitchen, I don't need the light on in there anymore.";
        assert!(
            unsupported(&light(), &off, kept).is_some(),
            "off is not said"
        );
        assert!(!contradicts(&light(), &off, kept), "nor denied: asked back");
        assert!(contradicts(&light(), &on, kept));
        let dont = "Don't turn off the kitchen light.";
        assert!(unsupported(&light(), &off, dont).is_some());
        assert!(
            contradicts(&light(), &off, dont),
            "never run, never asked back"
        );
        // a denial ends with its clause, and reaches four words
        let both = "I don't want the radio, and turn on the kitchen light.";
        assert!(unsupported(&light(), &on, both).is_none());
        let far = "Do not ever, not once, forget to turn on the kitchen light.";
        assert!(unsupported(&light(), &on, far).is_none());
        let remind = "Don't forget to turn off the kitchen light.";
        assert!(unsupported(&light(), &off, remind).is_none());
        assert!(unsupported(&light(), &on, "Turn on the kitchen light.").is_none());
    }

    #[test]
    fn a_call_contradicts_a_request_that_says_another_value() {
        use super::contradicts;
        let on = json!({"room": "kitchen", "on": true});
        assert!(contradicts(&light(), &on, "turn off the kitchen light"));
        assert!(!contradicts(&light(), &on, "it's too dark in the kitchen"));
        let warm = json!({"temperature": 21});
        assert!(contradicts(&thermostat(), &warm, "make it 23 degrees"));
        assert!(!contradicts(&thermostat(), &warm, "I'm freezing"));
        let bedroom = json!({"room": "bedroom", "on": true});
        assert!(contradicts(&light(), &bedroom, "the kitchen is too dark"));
        // what was said is no contradiction
        assert!(!contradicts(&light(), &on, "turn on the kitchen light"));
    }

    #[test]
    fn a_default_supports_only_a_parameter_that_could_be_left_out() {
        let eco = json!({"temperature": 21, "mode": "heat"});
        assert_eq!(
            unsupported(&thermostat(), &eco, "set the heating to 21"),
            None
        );
        // a required parameter's default was not said
        let required = json!({"type": "object", "required": ["temperature"], "properties": {
            "temperature": {"type": "number", "minimum": 10, "maximum": 30, "default": 21}}});
        let call = json!({"temperature": 21});
        assert!(unsupported(&required, &call, "it's too dark in the hallway").is_some());
        assert_eq!(unsupported(&required, &call, "make it 21 degrees"), None);
    }

    #[test]
    fn a_question_about_a_state_supports_no_call_that_sets_it() {
        let locked = json!({"door": "front", "locked": true});
        assert_eq!(unsupported(&lock(), &locked, "lock the front door"), None);
        for asked in [
            "is the front door lock,",
            "Is the front door locked?",
            "did you lock the front door",
            "Isn't the front door locked?",
        ] {
            assert!(unsupported(&lock(), &locked, asked).is_some(), "{asked}");
        }
    }

    #[test]
    fn a_length_is_supported_when_the_same_length_was_said() {
        let timer = json!({"type": "object", "properties": {
            "length": {"type": "string", "format": "length"},
            "name": {"type": "string"}}});
        let said = |args: Value, text: &str| judged(timer.clone(), args, text);
        assert_eq!(
            said(
                json!({"length": "10 minutes"}),
                "set a timer for ten minutes"
            ),
            None
        );
        assert_eq!(
            said(
                json!({"length": "90 minutes", "name": "roast"}),
                "an hour and a half for the roast"
            ),
            None
        );
        assert_eq!(
            said(
                json!({"length": "1 hour and 30 minutes"}),
                "timer for 90 minutes please"
            ),
            None
        );
        // a length nobody said, or no length at all
        assert_eq!(
            said(json!({"length": "1 day"}), "I had a long day"),
            Some("length = \"1 day\"".into())
        );
        assert_eq!(
            said(
                json!({"length": "5 minutes"}),
                "set a timer for fifteen minutes"
            ),
            Some("length = \"5 minutes\"".into())
        );
        assert_eq!(
            said(json!({"length": "a while"}), "a while"),
            Some("length = \"a while\"".into())
        );
    }

    fn judged(schema: Value, args: Value, said: &str) -> Option<String> {
        unsupported(&schema, &args, said).map(|u| u.to_string())
    }

    #[test]
    fn values_said_are_supported() {
        let cases = [
            (
                light(),
                json!({"room": "kitchen", "on": false}),
                "Turn off the kitchen light.",
            ),
            (
                light(),
                json!({"room": "living room", "on": true}),
                "livingroom lights on please",
            ),
            (
                light(),
                json!({"room": "bedroom", "on": false}),
                "Switch the bedroom lights off.",
            ),
            (
                lock(),
                json!({"door": "back", "locked": false}),
                "Unlock the back door.",
            ),
            (
                lock(),
                json!({"door": "front", "locked": true}),
                "lock the front",
            ),
            (
                thermostat(),
                json!({"temperature": 21.5}),
                "Set the thermostat to 21.5 degrees.",
            ),
            (
                thermostat(),
                json!({"temperature": 22}),
                "make it twenty-two degrees",
            ),
            (
                thermostat(),
                json!({"temperature": 19, "mode": "heat"}),
                "19 degrees please",
            ),
        ];
        for (schema, args, said) in cases {
            assert_eq!(
                judged(schema, args.clone(), said),
                None,
                "{args} for {said:?}"
            );
        }
    }

    #[test]
    fn values_from_nowhere_are_not() {
        let cases = [
            (
                light(),
                json!({"room": "living room", "on": true}),
                "Turn off the kitchen and living room lights.",
                "on = true",
            ),
            (
                light(),
                json!({"room": "bedroom", "on": true}),
                "Turn on the kitchen light.",
                "room = \"bedroom\"",
            ),
            (
                lock(),
                json!({"door": "back", "locked": false}),
                "Make sure nobody can get into the back door.",
                "locked = false",
            ),
            (
                lock(),
                json!({"door": "back", "locked": true}),
                "Make sure nobody can get into the back door.",
                "locked = true",
            ),
            (
                lock(),
                json!({"door": "back", "locked": true}),
                "unlock the back door.",
                "locked = true",
            ),
            (
                thermostat(),
                json!({"temperature": 10}),
                "Set the thermostat to 22.5 degrees.",
                "temperature = 10",
            ),
            (
                thermostat(),
                json!({"temperature": 22}),
                "Set the thermostat to 22.5 degrees.",
                "temperature = 22",
            ),
            (
                thermostat(),
                json!({"temperature": 21}),
                "It's too dark in the hallway.",
                "temperature = 21",
            ),
            (
                thermostat(),
                json!({"temperature": 20, "mode": "eco"}),
                "set it to 20",
                "mode = \"eco\"",
            ),
        ];
        for (schema, args, said, why) in cases {
            assert_eq!(
                judged(schema, args.clone(), said).as_deref(),
                Some(why),
                "{args} for {said:?}"
            );
        }
    }

    #[test]
    fn what_cannot_be_judged_is_not() {
        let free = json!({"type": "object", "properties": {
            "message": {"type": "string"}, "flag": {"type": "boolean"}}});
        assert_eq!(
            judged(free, json!({"message": "hi", "flag": true}), "notify me"),
            None
        );
    }
}
