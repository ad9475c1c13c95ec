//! A question that asks which: "Turn on the light." in a house of five rooms, where the
//! model chose a room nobody named. The call is right but for one value, so hearth asks for
//! that value ("Which room: the kitchen, living room, bedroom, bathroom or office?") instead
//! of refusing, holds one call per answer, and runs the one the next request names
//! ([`chosen`]). A yes names no choice, so the question is asked again; anything else drops
//! the calls.

use hearth_phrases::normalize;
use serde_json::Value;

use super::check::ReplyCheck;
use crate::toolcall::{ToolCall, ToolSet};
use crate::tools::Registry;

/// The most choices a question lists; with more, it asks "Which room?" alone.
const LISTED: usize = 6;

/// Parameter names too plain to ask with ("Which name?"): the question says "Which one?".
const PLAIN: &[&str] = &[
    "name",
    "entity",
    "entity_id",
    "device",
    "target",
    "id",
    "item",
];

/// Words an answer may hold besides its choice ("the office, please").
const WITH_A_CHOICE: &[&str] = &[
    "the", "in", "a", "one", "please", "thanks", "thank", "you", "that", "it", "its", "it's",
    "yes", "yeah", "ok", "okay", "sure", "just", "my",
];

/// The question for the hop's one call, held back only for a value of an enum parameter
/// that nothing in `request` names (`dropped` holds it), and each choice with its call:
/// `None` unless every other value is supported and not contradicted, the call without the
/// value is about something the request names ([`ReplyCheck::grounded`]), and at least two
/// choices pass the tool set's check. `checking` as for [`super::hooks::ask_back`].
pub(super) fn ask_which(
    checking: bool,
    (registry, toolset, check): (&Registry, &ToolSet, &ReplyCheck),
    calls: &[ToolCall],
    dropped: &[usize],
    request: &str,
) -> Option<(String, Vec<(String, ToolCall)>)> {
    let ([call], [0]) = (calls, dropped) else {
        return None;
    };
    if !checking {
        return None;
    }
    let parameters = &registry.get(call.name())?.spec.parameters;
    let Value::Object(args) = call.arguments() else {
        return None;
    };
    let mut open = open_choices(parameters, args, request);
    let (param, values) = open.next()?;
    if open.next().is_some() {
        return None;
    }
    let mut rest = args.clone();
    rest.remove(param);
    let rest = Value::Object(rest);
    let supported = crate::intent::unsupported(parameters, &rest, request).is_none()
        && !crate::intent::contradicts(parameters, &rest, request)
        && check.grounded(call.name(), &rest, request);
    if !supported {
        return None;
    }
    let choices: Vec<(String, ToolCall)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let mut with = args.clone();
            with.insert(param.clone(), Value::String(v.clone()));
            let id = format!("{}_{i}", call.name());
            let call = toolset.call(id, call.name(), Value::Object(with)).ok()?;
            Some((v.clone(), call))
        })
        .collect();
    (choices.len() > 1).then(|| (question(param, &choices), choices))
}

/// The parameters of a call that choose a device or a place
/// ([`crate::intent::device_choices`]) of which `request` names no value:
/// "Lock the door." names no door. Such a value is asked for, never said back as though it
/// had been meant ("Shall I lock the front door?").
pub(super) fn open_choices<'a>(
    parameters: &'a Value,
    args: &'a serde_json::Map<String, Value>,
    request: &'a str,
) -> impl Iterator<Item = (&'a String, Vec<String>)> + 'a {
    args.keys().filter_map(move |param| {
        let schema = parameters.get("properties")?.get(param)?;
        let values = crate::intent::device_choices(param, schema)?;
        (!crate::intent::names_a_value(schema, request)).then_some((param, values))
    })
}

/// "Which room: the kitchen, bedroom or office?" ("Which one?" for a plain parameter name;
/// the choices only when there are few).
fn question(param: &str, choices: &[(String, ToolCall)]) -> String {
    let what = if PLAIN.contains(&param.to_lowercase().as_str()) {
        "one".to_string()
    } else {
        param.replace(['_', '-'], " ")
    };
    if choices.len() > LISTED {
        return format!("Which {what}?");
    }
    let names: Vec<&str> = choices.iter().map(|(v, _)| v.as_str()).collect();
    let (last, first) = names.split_last().unwrap_or((&"", &[]));
    format!("Which {what}: the {} or {last}?", first.join(", "))
}

/// The choice `text` names, as an answer to `question`: exactly one choice is named (one
/// named inside another, "light" in "night light", is the longer), and every other word goes
/// with a choice ([`WITH_A_CHOICE`]), is the question's, or is part of the call's tool name
/// ("the office light"). "Turn off the office light" after "Which room: …" for turning one
/// on names the office but is no answer: "turn" and "off" are neither.
pub(super) fn chosen(question: &str, choices: &[(String, ToolCall)], text: &str) -> Option<usize> {
    let words = normalize::keys(text);
    let at = |choice: &[String]| {
        (!choice.is_empty())
            .then(|| words.windows(choice.len()).position(|w| w == choice))
            .flatten()
            .map(|i| i..i + choice.len())
    };
    let named: Vec<(usize, std::ops::Range<usize>)> = choices
        .iter()
        .enumerate()
        .filter_map(|(i, (v, _))| Some((i, at(&normalize::keys(v))?)))
        .collect();
    let within = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| {
        a != b && b.start <= a.start && a.end <= b.end
    };
    let outer: Vec<&(usize, std::ops::Range<usize>)> = named
        .iter()
        .filter(|(_, r)| !named.iter().any(|(_, o)| within(r, o)))
        .collect();
    let [(i, span)] = outer.as_slice() else {
        return None;
    };
    let asked = normalize::keys(question);
    let tool = normalize::keys(&choices[*i].1.name().replace(['_', '-'], " "));
    let fits =
        |w: &String| WITH_A_CHOICE.contains(&w.as_str()) || asked.contains(w) || tool.contains(w);
    let rest_fits = words
        .iter()
        .enumerate()
        .all(|(k, w)| span.contains(&k) || fits(w));
    rest_fits.then_some(*i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn choices(toolset: &ToolSet, rooms: &[&str]) -> Vec<(String, ToolCall)> {
        rooms
            .iter()
            .map(|r| {
                let call = toolset
                    .call("c", "switch_light", json!({"room": r, "power": true}))
                    .unwrap();
                (r.to_string(), call)
            })
            .collect()
    }

    fn lights() -> ToolSet {
        let spec = json!([{"type": "function", "function": {
            "name": "switch_light",
            "description": "Switch the light in a room on or off.",
            "parameters": {"type": "object", "required": ["room", "power"],
                "properties": {
                    "room": {"type": "string", "enum": ["kitchen", "living room", "office", "corner", "night light corner"]},
                    "power": {"type": "boolean"}}}}}]);
        ToolSet::from_openai_value(&spec).unwrap()
    }

    #[test]
    fn the_question_lists_few_choices_and_names_a_plain_parameter_one() {
        let set = lights();
        let few = choices(&set, &["kitchen", "living room", "office"]);
        assert_eq!(
            question("room", &few),
            "Which room: the kitchen, living room or office?"
        );
        assert_eq!(
            question("name", &few[..2]),
            "Which one: the kitchen or living room?"
        );
        let many = choices(&set, &["kitchen"; 7]);
        assert_eq!(question("room", &many), "Which room?");
    }

    #[test]
    fn an_answer_names_one_choice_and_says_nothing_else() {
        let set = lights();
        let c = choices(&set, &["kitchen", "living room", "office"]);
        let q = "Which room: the kitchen, living room or office?";
        for (text, want) in [
            ("The office.", Some(2)),
            ("office", Some(2)),
            ("In the living room, please.", Some(1)),
            ("the kitchen light", Some(0)),
            ("Kitchen one.", Some(0)),
            // another request that names a choice
            ("Turn off the office light.", None),
            ("The kitchen and the office.", None),
            ("Yes.", None),
            ("The bathroom.", None),
            ("What time is it?", None),
        ] {
            assert_eq!(chosen(q, &c, text), want, "{text}");
        }
    }

    #[test]
    fn a_door_nobody_named_is_open_and_the_way_it_goes_never_is() {
        let lock = json!({"type": "object", "properties": {
            "door": {"type": "string", "enum": ["front", "back", "garage"]},
            "action": {"type": "string", "enum": ["lock", "unlock"]}}});
        let args = json!({"door": "front", "action": "lock"});
        let open = |request: &str| -> Vec<String> {
            open_choices(&lock, args.as_object().unwrap(), request)
                .map(|(p, _)| p.clone())
                .collect()
        };
        assert_eq!(open("Lock the door."), ["door"]);
        // "lock" is not said, but it is a way: asked back as "Shall I lock …?"
        assert!(open("Make sure nobody can get in through the back door.").is_empty());
        assert!(open("Lock the front door.").is_empty());
    }

    #[test]
    fn a_choice_inside_a_longer_one_is_the_longer() {
        let set = lights();
        let c = choices(&set, &["corner", "night light corner"]);
        let q = "Which room: the corner or night light corner?";
        assert_eq!(chosen(q, &c, "the night light corner"), Some(1));
        assert_eq!(chosen(q, &c, "the corner"), Some(0));
    }
}
