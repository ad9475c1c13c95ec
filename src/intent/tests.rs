use std::sync::Arc;

use serde_json::json;

use super::*;

fn spec(sentences: &[&str]) -> IntentSpec {
    IntentSpec {
        sentences: sentences.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn lights() -> Value {
    json!({"type": "object", "required": ["room", "on"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom", "bathroom"]},
        "on": {"type": "boolean"}}})
}

fn home() -> Intents {
    let mut light = spec(&[
        "(turn|switch) {on} [the] {room} light[s]",
        "(turn|switch) [the] {room} light[s] {on}",
    ]);
    light.slots.insert(
        "room".into(),
        [("lounge".to_string(), json!("living room"))].into(),
    );
    let thermostat = json!({"type": "object", "required": ["temperature"], "properties": {
        "temperature": {"type": "number", "minimum": 10, "maximum": 30}}});
    let brightness = json!({"type": "object", "required": ["room", "level"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "bedroom"]},
        "level": {"type": "integer", "minimum": 0, "maximum": 100}}});
    let locks = json!({"type": "object", "required": ["door", "locked"], "properties": {
        "door": {"type": "string", "enum": ["front", "back"]}, "locked": {"type": "boolean"}}});
    let mut lock = spec(&["lock [the] {door} door"]);
    lock.args.insert("locked".into(), json!(true));
    let mut unlock = spec(&["unlock [the] {door} door"]);
    unlock.args.insert("locked".into(), json!(false));
    let notify =
        json!({"type": "object", "required": ["body"], "properties": {"body": {"type": "string"}}});
    let tools = vec![
        ToolIntents::compile("set_light", &[light], &lights()),
        ToolIntents::compile(
            "set_thermostat",
            &[spec(&["set the thermostat to {temperature} [degrees]"])],
            &thermostat,
        ),
        ToolIntents::compile(
            "set_brightness",
            &[spec(&[
                "(set|dim) [the] {room} light[s] to {level} [percent]",
            ])],
            &brightness,
        ),
        ToolIntents::compile("set_lock", &[lock, unlock], &locks),
        ToolIntents::compile("notify", &[spec(&["show {body} on the screen"])], &notify),
        ToolIntents::compile(
            "get_light",
            &[spec(&["is [the] {room} light on"])],
            &lights_query(),
        ),
    ];
    Intents::new(tools.into_iter().map(|t| Arc::new(t.unwrap())).collect())
}

fn lights_query() -> Value {
    json!({"type": "object", "required": ["room"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom", "bathroom"]}}})
}

fn calls(text: &str) -> Option<Vec<(String, Value)>> {
    home()
        .recognize(text)
        .map(|c| c.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

fn one(text: &str) -> Option<(String, Value)> {
    match calls(text)?.as_slice() {
        [c] => Some(c.clone()),
        _ => None,
    }
}

fn light(room: &str, on: bool) -> (String, Value) {
    ("set_light".into(), json!({"room": room, "on": on}))
}

#[test]
fn on_and_off_in_either_order_with_optional_words() {
    assert_eq!(
        one("Turn on the kitchen light."),
        Some(light("kitchen", true))
    );
    assert_eq!(
        one("turn the kitchen lights off"),
        Some(light("kitchen", false))
    );
    assert_eq!(
        one("Switch off bedroom light"),
        Some(light("bedroom", false))
    );
    assert_eq!(
        one("Can you switch on the living-room lights, please?"),
        Some(light("living room", true))
    );
}

#[test]
fn synonyms_and_values_said_without_their_space() {
    assert_eq!(
        one("turn on the lounge light"),
        Some(light("living room", true))
    );
    assert_eq!(
        one("turn on the livingroom light"),
        Some(light("living room", true))
    );
    assert_eq!(
        one("turn off the bed room light"),
        Some(light("bedroom", false))
    );
    // nothing looser than that
    assert_eq!(one("turn off the bed light"), None);
    assert_eq!(one("turn off the garage light"), None);
}

#[test]
fn numbers_in_digits_and_words_within_the_schema() {
    let t = |x: Value| Some(("set_thermostat".to_string(), json!({"temperature": x})));
    assert_eq!(one("Set the thermostat to 21 degrees."), t(json!(21)));
    assert_eq!(one("set the thermostat to 21.5°C"), t(json!(21.5)));
    assert_eq!(
        one("set the thermostat to twenty one degrees"),
        t(json!(21))
    );
    assert_eq!(one("set the thermostat to twenty-one"), t(json!(21)));
    assert_eq!(
        one("set the thermostat to twenty one point five"),
        t(json!(21.5))
    );
    assert_eq!(
        one("set the thermostat to 45 degrees"),
        None,
        "above maximum"
    );
    assert_eq!(one("set the thermostat to five"), None, "below minimum");
    let b = |x: i64| {
        Some((
            "set_brightness".to_string(),
            json!({"room": "bedroom", "level": x}),
        ))
    };
    assert_eq!(one("dim the bedroom light to 40%"), b(40));
    assert_eq!(one("set the bedroom lights to forty percent"), b(40));
    assert_eq!(
        one("dim the bedroom light to 40.5 percent"),
        None,
        "an integer must be whole"
    );
}

#[test]
fn unlock_is_never_lock() {
    let lock = |door: &str, locked: bool| {
        Some((
            "set_lock".to_string(),
            json!({"door": door, "locked": locked}),
        ))
    };
    assert_eq!(one("Lock the front door."), lock("front", true));
    assert_eq!(one("Unlock the front door."), lock("front", false));
    assert_eq!(one("unlock back door"), lock("back", false));
    assert_eq!(one("un lock the front door"), None);
    assert_eq!(one("block the front door"), None);
}

#[test]
fn two_commands_joined_by_and_or_then() {
    assert_eq!(
        calls("Turn off the kitchen light and lock the front door."),
        Some(vec![
            light("kitchen", false),
            ("set_lock".into(), json!({"door": "front", "locked": true}))
        ])
    );
    assert_eq!(
        calls("turn on the kitchen light and the bedroom light"),
        Some(vec![light("kitchen", true), light("bedroom", true)])
    );
    assert_eq!(
        calls("switch on the kitchen and the bedroom lights"),
        Some(vec![light("kitchen", true), light("bedroom", true)])
    );
    assert_eq!(
        calls("Lock the front door, then turn off the bathroom light."),
        Some(vec![
            ("set_lock".into(), json!({"door": "front", "locked": true})),
            light("bathroom", false)
        ])
    );
    // the same call twice is made once
    assert_eq!(
        calls("lock the front door and lock the front door").map(|c| c.len()),
        Some(1)
    );
}

#[test]
fn a_part_that_matches_nothing_makes_the_whole_request_the_models() {
    assert_eq!(calls("turn on the kitchen light and tell me a joke"), None);
    assert_eq!(calls("Thank you. Thank you."), None);
}

#[test]
fn questions_and_other_requests_do_not_match_commands() {
    assert_eq!(
        one("Is the kitchen light on?"),
        Some(("get_light".into(), json!({"room": "kitchen"})))
    );
    for text in [
        "what time is it",
        "tell me a joke",
        "turn on the light",
        "turn it off again",
        "and the bedroom too",
        "the kitchen light is on",
        "",
    ] {
        assert_eq!(calls(text), None, "{text}");
    }
}

#[test]
fn free_words_fill_a_string_slot_without_enum() {
    assert_eq!(
        one("Show buy more milk on the screen"),
        Some(("notify".into(), json!({"body": "buy more milk"})))
    );
    assert_eq!(
        one("show on the screen"),
        None,
        "a slot takes at least one word"
    );
}

#[test]
fn ambiguous_requests_match_nothing() {
    let schema = json!({"type": "object", "required": ["x"], "properties": {"x": {"type": "string", "enum": ["a", "b"]}}});
    let mut b = spec(&["do {x}"]);
    b.slots
        .insert("x".into(), [("it".to_string(), json!("b"))].into());
    let mut a = spec(&["do {x}"]);
    a.slots
        .insert("x".into(), [("it".to_string(), json!("a"))].into());
    let intents = Intents::new(vec![
        Arc::new(ToolIntents::compile("one", &[a], &schema).unwrap()),
        Arc::new(ToolIntents::compile("two", &[b], &schema).unwrap()),
    ]);
    assert!(intents.recognize("do it").is_none());
    assert_eq!(
        intents.recognize("do a").map(|c| c.len()),
        None,
        "both tools take \"do a\""
    );
}

#[test]
fn any_text_is_safe() {
    let intents = home();
    let long = "turn on the kitchen light ".repeat(200);
    for text in [
        "",
        " ",
        "?!.,;:",
        "🏠🔒",
        "turn on the 🏠 light",
        "%%%°°°",
        long.as_str(),
        "and and and",
        "1e400 degrees",
        "set the thermostat to 1e400",
    ] {
        let _ = intents.recognize(text);
    }
    assert_eq!(intents.recognize(&long), None, "too many words");
    assert!(Intents::default()
        .recognize("turn on the kitchen light")
        .is_none());
}

#[test]
fn compile_errors_name_the_tool_the_sentence_and_the_fix() {
    let err = |specs: &[IntentSpec], schema: &Value| {
        ToolIntents::compile("set_light", specs, schema)
            .unwrap_err()
            .to_string()
    };
    let e = err(&[spec(&["turn (on|off [the] {room} light"])], &lights());
    assert!(
        e.contains("set_light") && e.contains("without its `)`"),
        "{e}"
    );
    let e = err(&[spec(&["turn {on} the {place} light"])], &lights());
    assert!(e.contains("\"place\"") && e.contains("room, on"), "{e}");
    let e = err(&[spec(&["turn on the {room} light"])], &lights());
    assert!(
        e.contains("required parameter \"on\"") && e.contains("args"),
        "{e}"
    );
    let mut bad = spec(&["turn {on} the {room} light"]);
    bad.slots.insert(
        "room".into(),
        [("garage".to_string(), json!("garage"))].into(),
    );
    let e = err(&[bad], &lights());
    assert!(e.contains("\"garage\" is not a value"), "{e}");
    let mut bad = spec(&["turn {on} the {room} light"]);
    bad.args.insert("colour".into(), json!("red"));
    assert!(err(&[bad], &lights()).contains("\"colour\""));
    let mut bad = spec(&["turn the {room} light on"]);
    bad.args.insert("on".into(), json!("yes"));
    assert!(err(&[bad], &lights()).contains("\"yes\" is not a value"));
    assert!(err(&[spec(&[])], &lights()).contains("no sentences"));
    let nested = json!({"type": "object", "properties": {"o": {"type": "object"}}});
    assert!(err(&[spec(&["do {o}"])], &nested).contains("set it in `args`"));
}
