use std::sync::Arc;

use serde_json::json;

use super::*;

fn spec(sentences: &[&str]) -> IntentSpec {
    IntentSpec {
        sentences: sentences.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn with_args(mut spec: IntentSpec, args: Value) -> IntentSpec {
    spec.args = args.as_object().cloned().unwrap_or_default();
    spec
}

fn with_step(mut spec: IntentSpec, step: Value) -> IntentSpec {
    spec.step = step.as_object().cloned().unwrap_or_default();
    spec
}

fn with_slots(mut spec: IntentSpec, param: &str, table: Value) -> IntentSpec {
    let table = table.as_object().cloned().unwrap_or_default();
    spec.slots.insert(param.into(), table.into_iter().collect());
    spec
}

/// The demo home's lights: a room enum and an on/off boolean.
fn lights() -> Value {
    json!({"type": "object", "required": ["room", "on"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom", "bathroom"]},
        "on": {"type": "boolean"}}})
}

fn thermostat() -> Value {
    json!({"type": "object", "required": ["temperature"], "properties": {
        "temperature": {"type": "number", "minimum": 10, "maximum": 30}}})
}

fn brightness() -> Value {
    json!({"type": "object", "required": ["room", "level"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "bedroom"]},
        "level": {"type": "integer", "minimum": 0, "maximum": 100}}})
}

fn locks() -> Value {
    json!({"type": "object", "required": ["door", "locked"], "properties": {
        "door": {"type": "string", "enum": ["front", "back"]}, "locked": {"type": "boolean"}}})
}

/// A desktop notification: a free-text body, a fixed title.
fn notify() -> Value {
    json!({"type": "object", "required": ["title", "body"], "properties": {
        "title": {"type": "string"}, "body": {"type": "string"}}})
}

fn light_query() -> Value {
    json!({"type": "object", "required": ["room"], "properties": {
        "room": {"type": "string", "enum": ["kitchen", "living room", "bedroom", "bathroom"]}}})
}

fn set_light() -> IntentSpec {
    let light = spec(&[
        "(turn|switch) {on} [the] {room} light[s]",
        "(turn|switch) [the] {room} light[s] {on}",
        "[the] {room} light[s] {on}",
    ]);
    with_slots(light, "room", json!({"lounge": "living room"}))
}

fn compile(tool: &str, specs: &[IntentSpec], schema: &Value) -> Arc<ToolIntents> {
    match ToolIntents::compile(tool, specs, schema) {
        Ok(t) => Arc::new(t),
        Err(e) => panic!("{e}"),
    }
}

fn home() -> Intents {
    let lock = with_args(spec(&["lock [the] {door} door"]), json!({"locked": true}));
    let unlock = with_args(
        spec(&["unlock [the] {door} door"]),
        json!({"locked": false}),
    );
    let level = spec(&["(set|dim) [the] {room} light[s] to {level} [percent]"]);
    let shout = with_args(
        spec(&["(show|put) {body} on the screen"]),
        json!({"title": "hearth"}),
    );
    Intents::new(vec![
        compile("set_light", &[set_light()], &lights()),
        compile(
            "set_thermostat",
            &[
                spec(&["(set|turn) [the] (thermostat|heating) to {temperature} [degrees]"]),
                with_step(
                    spec(&["make it warmer", "turn [the] heating up"]),
                    json!({"temperature": 1}),
                ),
                with_step(spec(&["make it cooler"]), json!({"temperature": -0.5})),
            ],
            &thermostat(),
        ),
        compile(
            "set_brightness",
            &[
                with_slots(level, "level", json!({"full": 100})),
                with_step(spec(&["make it brighter"]), json!({"level": 20})),
            ],
            &brightness(),
        ),
        compile("set_lock", &[lock, unlock], &locks()),
        compile("notify", &[shout], &notify()),
        compile(
            "get_light",
            &[spec(&["(is|are) [the] {room} light[s] (on|off)"])],
            &light_query(),
        ),
    ])
}

type Call = (String, Value);

fn calls_of(intents: &Intents, text: &str) -> Option<Vec<Call>> {
    intents
        .recognize(text)
        .map(|c| c.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

fn calls(text: &str) -> Option<Vec<Call>> {
    calls_of(&home(), text)
}

fn one(text: &str) -> Option<Call> {
    match calls(text)?.as_slice() {
        [c] => Some(c.clone()),
        _ => None,
    }
}

fn light(room: &str, on: bool) -> Call {
    ("set_light".into(), json!({"room": room, "on": on}))
}

fn lock(door: &str, locked: bool) -> Call {
    ("set_lock".into(), json!({"door": door, "locked": locked}))
}

fn temperature(t: Value) -> Option<Call> {
    Some(("set_thermostat".into(), json!({ "temperature": t })))
}

fn level(room: &str, level: i64) -> Option<Call> {
    Some((
        "set_brightness".into(),
        json!({"room": room, "level": level}),
    ))
}

#[test]
fn on_and_off_in_either_order() {
    assert_eq!(
        one("Turn on the kitchen light."),
        Some(light("kitchen", true))
    );
    assert_eq!(
        one("turn off the kitchen light"),
        Some(light("kitchen", false))
    );
    assert_eq!(
        one("Turn the kitchen light off."),
        Some(light("kitchen", false))
    );
    assert_eq!(
        one("switch the bathroom light on"),
        Some(light("bathroom", true))
    );
    assert_eq!(one("Kitchen lights off."), Some(light("kitchen", false)));
    // the arguments come in the schema's order, as JSON types
    let found = home()
        .recognize("turn on the kitchen light")
        .unwrap_or_default();
    let keys: Vec<&String> = found[0]
        .arguments
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["room", "on"]);
    assert_eq!(found[0].arguments["on"], Value::Bool(true));
}

#[test]
fn optional_words_and_plurals() {
    assert_eq!(
        one("Switch off bedroom light"),
        Some(light("bedroom", false))
    );
    assert_eq!(
        one("switch off the bedroom lights"),
        Some(light("bedroom", false))
    );
    assert_eq!(one("turn on bedroom lights"), Some(light("bedroom", true)));
    assert_eq!(
        one("Can you switch on the living-room lights, please?"),
        Some(light("living room", true))
    );
    // words the template does not have are not skipped
    assert_eq!(one("turn on the kitchen ceiling light"), None);
    assert_eq!(one("turn on the the kitchen light"), None);
    assert_eq!(one("turn on the kitchen lightss"), None);
    assert_eq!(one("turn on the kitchen"), None);
}

#[test]
fn synonyms_and_near_misses_of_enum_values() {
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
    assert_eq!(
        one("turn off the bath room lights"),
        Some(light("bathroom", false))
    );
    assert_eq!(
        one("turn off the kitchens light"),
        Some(light("kitchen", false))
    );
    // nothing looser than that
    assert_eq!(one("turn off the bed light"), None);
    assert_eq!(one("turn off the kitchn light"), None);
    assert_eq!(one("turn off the garage light"), None);
    assert_eq!(one("turn off the living light"), None);
}

#[test]
fn near_misses_that_could_be_two_values_match_nothing() {
    let schema = json!({"type": "object", "required": ["room"], "properties": {
        "room": {"type": "string", "enum": ["bed room", "bedrooms"]}}});
    let intents = Intents::new(vec![compile(
        "clean",
        &[spec(&["clean the {room}"])],
        &schema,
    )]);
    // "bedrooms" is one value said exactly and the other's plural
    assert_eq!(calls_of(&intents, "clean the bedrooms"), None);
    assert_eq!(
        calls_of(&intents, "clean the bed room"),
        Some(vec![("clean".into(), json!({"room": "bed room"}))])
    );
}

#[test]
fn numbers_in_digits_and_words_within_the_schema() {
    assert_eq!(
        one("Set the thermostat to 21 degrees."),
        temperature(json!(21))
    );
    assert_eq!(one("set the thermostat to 21°C"), temperature(json!(21)));
    assert_eq!(
        one("set the thermostat to 21.5°C"),
        temperature(json!(21.5))
    );
    assert_eq!(
        one("set the heating to twenty one degrees"),
        temperature(json!(21))
    );
    assert_eq!(
        one("set the thermostat to twenty-one"),
        temperature(json!(21))
    );
    assert_eq!(one("set the thermostat to eleven"), temperature(json!(11)));
    assert_eq!(
        one("set the thermostat to twenty one point five"),
        temperature(json!(21.5))
    );
    assert_eq!(
        one("set the thermostat to twenty and a half degrees"),
        temperature(json!(20.5))
    );
    assert_eq!(
        one("set the thermostat to 45 degrees"),
        None,
        "above maximum"
    );
    assert_eq!(one("set the thermostat to five"), None, "below minimum");
    assert_eq!(one("set the thermostat to warm"), None);
    assert_eq!(one("set the thermostat to 1e1"), None);
    assert_eq!(one("dim the bedroom light to 40%"), level("bedroom", 40));
    assert_eq!(
        one("set the bedroom lights to forty percent"),
        level("bedroom", 40)
    );
    assert_eq!(one("set the kitchen light to zero"), level("kitchen", 0));
    assert_eq!(
        one("set the kitchen light to a hundred percent"),
        level("kitchen", 100)
    );
    assert_eq!(
        one("set the kitchen light to one hundred"),
        level("kitchen", 100)
    );
    assert_eq!(
        one("set the kitchen light to full"),
        level("kitchen", 100),
        "a synonym"
    );
    assert_eq!(
        one("dim the bedroom light to 40.5 percent"),
        None,
        "an integer is whole"
    );
    assert_eq!(one("dim the bedroom light to 101 percent"), None);
}

#[test]
fn exclusive_bounds_and_number_enums_hold() {
    let schema = json!({"type": "object", "required": ["n"], "properties": {
        "n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10}}});
    let old_style = json!({"type": "object", "required": ["n"], "properties": {
        "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "enum": [1, 2, 5]}}});
    let new = Intents::new(vec![compile("t", &[spec(&["take {n}"])], &schema)]);
    let old = Intents::new(vec![compile("t", &[spec(&["take {n}"])], &old_style)]);
    let take = |n: Value| Some(vec![("t".to_string(), json!({ "n": n }))]);
    assert_eq!(calls_of(&new, "take 9.5"), take(json!(9.5)));
    assert_eq!(calls_of(&new, "take 10"), None);
    assert_eq!(calls_of(&new, "take zero"), None);
    assert_eq!(calls_of(&old, "take five"), take(json!(5)));
    assert_eq!(calls_of(&old, "take three"), None, "not in the enum");
}

#[test]
fn unlock_never_matches_lock_nor_lock_unlock() {
    assert_eq!(one("Lock the front door."), Some(lock("front", true)));
    assert_eq!(one("Unlock the front door."), Some(lock("front", false)));
    assert_eq!(one("unlock back door"), Some(lock("back", false)));
    assert_eq!(one("lock back door"), Some(lock("back", true)));
    assert_eq!(one("un lock the front door"), None);
    assert_eq!(one("unlocked the front door"), None);
    assert_eq!(one("block the front door"), None);
    assert_eq!(one("locks the front door"), None);
}

#[test]
fn two_commands_joined_by_and_then_or_punctuation() {
    assert_eq!(
        calls("Turn off the kitchen light and lock the front door."),
        Some(vec![light("kitchen", false), lock("front", true)])
    );
    assert_eq!(
        calls("Lock the front door, then turn off the bathroom light."),
        Some(vec![lock("front", true), light("bathroom", false)])
    );
    assert_eq!(
        calls("unlock the back door and then turn on the kitchen light"),
        Some(vec![lock("back", false), light("kitchen", true)])
    );
    assert_eq!(
        calls("Turn on the kitchen light. Also set the thermostat to 20."),
        Some(vec![
            light("kitchen", true),
            ("set_thermostat".into(), json!({"temperature": 20}))
        ])
    );
    // the same call twice is made once; the order said is kept
    assert_eq!(
        calls("lock the front door and lock the back door and lock the front door"),
        Some(vec![lock("front", true), lock("back", true)])
    );
}

#[test]
fn a_part_borrows_the_words_its_neighbour_said() {
    // the verb from the part before
    assert_eq!(
        calls("turn on the kitchen light and the bedroom light"),
        Some(vec![light("kitchen", true), light("bedroom", true)])
    );
    // the noun from the part after, the verb from the part before
    assert_eq!(
        calls("switch on the kitchen and the bedroom lights"),
        Some(vec![light("kitchen", true), light("bedroom", true)])
    );
    assert_eq!(
        calls("lock the front and the back door"),
        Some(vec![lock("front", true), lock("back", true)])
    );
    // nothing to borrow that makes sense
    assert_eq!(calls("turn on the kitchen light and the bedroom"), None);
}

#[test]
fn it_in_a_second_part_is_what_the_first_part_named() {
    assert_eq!(
        calls("turn on the kitchen light and set it to 40 percent"),
        Some(vec![
            light("kitchen", true),
            (
                "set_brightness".into(),
                json!({"room": "kitchen", "level": 40})
            )
        ])
    );
    assert_eq!(
        calls("unlock the front door and then lock it again"),
        Some(vec![lock("front", false), lock("front", true)])
    );
    // "it" with nothing named before it in the request stays unread here
    assert_eq!(calls("set it to 40 percent"), None);
}

#[test]
fn an_in_heard_for_and_joins_two_things_but_never_a_thing_and_a_place() {
    assert_eq!(
        calls("lock the front door in the back door"),
        Some(vec![lock("front", true), lock("back", true)])
    );
    // "in" before a place is a place: not the kitchen light and the bedroom's
    assert_eq!(
        calls("turn on the kitchen light in the bedroom light"),
        None
    );
    assert_eq!(calls("lock the front door in the kitchen"), None);
}

#[test]
fn a_part_that_matches_nothing_leaves_the_request_to_the_model() {
    assert_eq!(calls("turn on the kitchen light and tell me a joke"), None);
    assert_eq!(calls("tell me a joke and turn on the kitchen light"), None);
    assert_eq!(calls("lock the front door, and what's the weather?"), None);
    assert_eq!(calls("Thank you. Thank you."), None);
    // a part of only courtesy is left out
    assert_eq!(
        calls("Turn off the kitchen light and lock the front door. Thank you."),
        Some(vec![light("kitchen", false), lock("front", true)])
    );
}

#[test]
fn ambiguous_requests_match_nothing() {
    let schema = json!({"type": "object", "required": ["x"], "properties": {
        "x": {"type": "string", "enum": ["a", "b"]}}});
    let a = with_slots(spec(&["do {x}"]), "x", json!({"it": "a"}));
    let b = with_slots(spec(&["do {x}"]), "x", json!({"it": "b"}));
    let intents = Intents::new(vec![
        compile("one", &[a], &schema),
        compile("two", &[b], &schema),
    ]);
    assert_eq!(
        calls_of(&intents, "do it"),
        None,
        "\"it\" is a for one, b for two"
    );
    assert_eq!(calls_of(&intents, "do a"), None, "both tools take \"do a\"");
    // two intents of one tool, and the same words
    let both = [
        with_args(spec(&["lock [the] {door} door"]), json!({"locked": true})),
        with_args(spec(&["lock the {door} door"]), json!({"locked": false})),
    ];
    let intents = Intents::new(vec![compile("set_lock", &both, &locks())]);
    assert_eq!(calls_of(&intents, "lock the front door"), None);
    assert_eq!(
        calls_of(&intents, "lock front door"),
        Some(vec![lock("front", true)])
    );
    // a free-text slot that could end in two places
    let two_ways = spec(&["say {body} to me to {title}"]);
    let intents = Intents::new(vec![compile("notify", &[two_ways], &notify())]);
    assert_eq!(calls_of(&intents, "say hi to me to me to you"), None);
}

#[test]
fn questions_do_not_match_commands() {
    let commands = Intents::new(vec![compile("set_light", &[set_light()], &lights())]);
    for text in [
        "Is the kitchen light on?",
        "are the kitchen lights off",
        "the kitchen light is on",
        "is it on",
        "what time is it",
        "turn on the light",
        "turn it off again",
        "and the bedroom too",
        "",
    ] {
        assert_eq!(calls_of(&commands, text), None, "{text}");
    }
    // with a query tool, the question is its
    assert_eq!(
        one("Is the kitchen light on?"),
        Some(("get_light".into(), json!({"room": "kitchen"})))
    );
}

#[test]
fn words_that_carry_no_command_are_left_out_at_the_ends() {
    for text in [
        "Please turn on the kitchen light.",
        "Hey, can you turn on the kitchen light?",
        "ok so now turn on the kitchen light",
        "Could you turn on the kitchen light for me, please?",
        "would you turn on the kitchen light now",
        "Turn on the kitchen light, thanks.",
        "Will you turn on the kitchen light? Thank you!",
    ] {
        assert_eq!(one(text), Some(light("kitchen", true)), "{text}");
    }
    // not in the middle
    assert_eq!(one("turn please on the kitchen light"), None);
    // a template may say them itself
    let scene = json!({"type": "object", "required": ["scene"], "properties": {
        "scene": {"type": "string", "enum": ["movie night"]}}});
    let intents = Intents::new(vec![compile(
        "scene",
        &[spec(&["{scene} [scene] please", "start {scene}"])],
        &scene,
    )]);
    let movie = Some(vec![("scene".to_string(), json!({"scene": "movie night"}))]);
    assert_eq!(calls_of(&intents, "Movie night, please."), movie);
    assert_eq!(calls_of(&intents, "please start movie night now"), movie);
}

#[test]
fn an_article_before_free_words_is_the_sentences() {
    let schema = notify();
    let show = with_args(
        spec(&["show [the|a] {body}", "show {body} (please|now)"]),
        json!({"title": "t"}),
    );
    let intents = Intents::new(vec![compile("notify", &[show], &schema)]);
    let body = |b: &str| Some(vec![("notify".into(), json!({"title": "t", "body": b}))]);
    // read with the article as the sentence's and as the slot's: one call, without it
    assert_eq!(calls_of(&intents, "show the news"), body("news"));
    assert_eq!(
        calls_of(&intents, "show a shopping list"),
        body("shopping list")
    );
    // free words never end with an article
    assert_eq!(calls_of(&intents, "show the"), None);
    assert_eq!(calls_of(&intents, "show an"), None);
    assert_eq!(calls_of(&intents, "show it past a"), None);
    // two readings that differ otherwise stay ambiguous
    let two = with_args(
        spec(&["show {body} here", "show here {body}"]),
        json!({"title": "t"}),
    );
    let intents = Intents::new(vec![compile("notify", &[two], &schema)]);
    assert_eq!(calls_of(&intents, "show here here"), body("here"));
    assert_eq!(calls_of(&intents, "show here red here"), None);
}

#[test]
fn free_text_slots_keep_what_was_said() {
    let note = |body: &str| {
        Some((
            "notify".to_string(),
            json!({"title": "hearth", "body": body}),
        ))
    };
    assert_eq!(
        one("Show buy more milk on the screen"),
        note("buy more milk")
    );
    assert_eq!(
        one("Put Call Anna at 7:30 on the screen."),
        note("Call Anna at 7:30")
    );
    assert_eq!(one("show it's done on the screen"), note("it's done"));
    assert_eq!(
        one("show on the screen"),
        None,
        "a slot takes at least one word"
    );
    // a phrase of `slots` said there gives its value
    let schema = notify();
    let shout = with_slots(
        with_args(
            spec(&["show {body} [on the screen]"]),
            json!({"title": "t"}),
        ),
        "body",
        json!({"the news": "headlines"}),
    );
    let intents = Intents::new(vec![compile("notify", &[shout], &schema)]);
    assert_eq!(
        calls_of(&intents, "show the news"),
        Some(vec![(
            "notify".into(),
            json!({"title": "t", "body": "headlines"})
        )])
    );
    assert_eq!(
        calls_of(&intents, "show the weather"),
        Some(vec![(
            "notify".into(),
            json!({"title": "t", "body": "the weather"})
        )])
    );
}

#[test]
fn boolean_slots_take_their_own_words() {
    let schema = json!({"type": "object", "required": ["open"], "properties": {
        "open": {"type": "boolean"}}});
    let blinds = with_slots(
        spec(&["{open} the blinds"]),
        "open",
        json!({"open": true, "raise": true, "close": false, "lower": false}),
    );
    let intents = Intents::new(vec![compile("blinds", &[blinds], &schema)]);
    let blinds = |open: bool| Some(vec![("blinds".to_string(), json!({ "open": open }))]);
    assert_eq!(calls_of(&intents, "Raise the blinds"), blinds(true));
    assert_eq!(calls_of(&intents, "close the blinds"), blinds(false));
    assert_eq!(
        calls_of(&intents, "on the blinds"),
        None,
        "the table replaces on/off"
    );
    assert_eq!(
        calls_of(&intents, "closes the blinds"),
        None,
        "no plural for booleans"
    );
}

#[test]
fn intent_tables_deserialise_from_a_manifest() {
    #[derive(Deserialize)]
    struct Tool {
        intent: Vec<IntentSpec>,
    }
    let tool: Tool = toml::from_str(
        r#"
        [[intent]]
        sentences = ["turn {on} [the] {room} light[s]"]
        [intent.slots.room]
        lounge = "living room"
        [[intent]]
        sentences = ["lock [the] {door} door"]
        args = { locked = true }
        "#,
    )
    .unwrap();
    assert_eq!(tool.intent.len(), 2);
    assert_eq!(tool.intent[0].slots["room"]["lounge"], json!("living room"));
    assert_eq!(tool.intent[1].args["locked"], json!(true));
    let typo = toml::from_str::<Tool>("[[intent]]\nsentence = [\"x\"]");
    assert!(typo.is_err(), "unknown keys are refused");
}

#[test]
fn intents_can_be_shared_between_threads() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    shared::<Intents>();
    shared::<ToolIntents>();
    let intents = home();
    let other = intents.clone();
    let found = std::thread::spawn(move || other.recognize("lock the front door"))
        .join()
        .unwrap();
    assert_eq!(found, intents.recognize("lock the front door"));
    assert!(!intents.is_empty());
    assert!(Intents::default().is_empty());
    assert_eq!(home().tools[0].tool(), "set_light");
}

/// A small deterministic generator of odd requests (no proptest needed).
fn odd_texts() -> Vec<String> {
    let atoms = [
        "turn", "on", "off", "the", "kitchen", "light", "and", "then", "lock", "door", "front",
        "21", "21.5", "°C", "%", "point", "hundred", "a", "half", "please", "thank", "you", ",",
        ".", "?", "-", "'", "’", "🏠", "ü", "İ", "\u{0}", "\t", "\n", "(", "[", "{room}", "1e400",
        "show", "screen", "twenty", "one", "can", "also", "..", "::", "°", "℃", "½",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..2000)
        .map(|_| {
            let n = (next() % 30) as usize;
            let mut text = String::new();
            for _ in 0..n {
                text.push_str(atoms[(next() % atoms.len() as u64) as usize]);
                if next() % 3 != 0 {
                    text.push(' ');
                }
            }
            text
        })
        .collect()
}

#[test]
fn any_text_is_safe() {
    let intents = home();
    let thousand = "turn on the kitchen light ".repeat(200);
    let fixed = [
        "",
        " ",
        "?!.,;:",
        "...",
        "🏠🔒",
        "turn on the 🏠 light",
        "%%%°°°",
        "and and and",
        "and",
        "then, also.",
        "1e400 degrees",
        "set the thermostat to 1e400",
        "set the thermostat to 99999999999999999999999999999999999999999",
        "set the thermostat to point",
        "set the thermostat to and a half",
        "İSTANBUL ǅ ß ﬁ",
        "\u{0}\u{feff}\u{200b}",
        thousand.as_str(),
    ];
    for text in fixed.iter().map(|s| s.to_string()).chain(odd_texts()) {
        let _ = intents.recognize(&text);
    }
    assert_eq!(intents.recognize(&thousand), None, "too many words");
    assert_eq!(intents.recognize(""), None);
    assert!(Intents::default()
        .recognize("turn on the kitchen light")
        .is_none());
}

/// The error compiling `specs` against `schema` as tool "t".
fn error(specs: &[IntentSpec], schema: &Value) -> IntentError {
    match ToolIntents::compile("t", specs, schema) {
        Ok(_) => panic!("{specs:?} compiled"),
        Err(e) => e,
    }
}

/// Its message names the tool and `sentence`, and says `fix`.
fn says(e: &IntentError, sentence: &str, fix: &str) {
    let m = e.to_string();
    assert!(m.starts_with("tool \"t\": "), "{m}");
    assert!(m.contains(&format!("{sentence:?}")), "{m}");
    assert!(m.contains(fix), "{m}");
}

#[test]
fn template_errors_name_the_tool_the_sentence_and_the_fix() {
    for (sentence, fix) in [
        ("turn (on|off [the] {room} light", "without its `)`"),
        ("turn on] {room} {on}", "unmatched"),
        ("turn (on|) {room} {on}", "use [ ]"),
        ("turn [] {room} {on}", "remove it"),
        ("[please]", "keep at least one word"),
        ("", "keep at least one word"),
        ("on|off {room} {on}", "put the alternatives in ( )"),
        ("the {room}'s light {on}", "a word of its own"),
        ("the {} light", "write {parameter}"),
    ] {
        let e = error(&[spec(&[sentence])], &lights());
        assert!(matches!(e, IntentError::Template { .. }), "{e}");
        says(&e, sentence, fix);
    }
    let huge = format!("{} {{room}} {{on}}", "[a|b|c] ".repeat(8));
    says(
        &error(&[spec(&[&huge])], &lights()),
        &huge,
        "split it into several templates",
    );
    let e = error(
        &[with_args(spec(&["{body}"]), json!({"title": "t"}))],
        &notify(),
    );
    says(&e, "{body}", "needs words around it");
    let e = error(&[spec(&["show {title} {body}"])], &notify());
    says(&e, "show {title} {body}", "put a word between them");
}

#[test]
fn parameter_errors_name_the_tool_the_sentence_and_the_fix() {
    let s = "turn {on} [the] {room} light";
    let e = error(&[spec(&[]), spec(&[s])], &lights());
    assert!(matches!(e, IntentError::NoSentences { .. }), "{e}");
    assert!(e.to_string().contains("add `sentences"), "{e}");

    let e = error(&[spec(&["turn {on} the {place} light"])], &lights());
    assert!(matches!(e, IntentError::UnknownParameter { .. }), "{e}");
    says(
        &e,
        "turn {on} the {place} light",
        "\"place\", which is not a parameter of the tool: use one of room, on",
    );
    let e = error(
        &[with_args(spec(&[s]), json!({"colour": "red"}))],
        &lights(),
    );
    says(&e, s, "`args` names \"colour\"");
    let e = error(
        &[with_slots(spec(&[s]), "colour", json!({"red": "red"}))],
        &lights(),
    );
    says(&e, s, "`slots` names \"colour\"");
    let e = error(
        &[spec(&["what time is it {now}"])],
        &json!({"type": "object"}),
    );
    says(
        &e,
        "what time is it {now}",
        "none (the tool takes no parameters)",
    );

    let e = error(
        &[with_slots(spec(&[s]), "room", json!({"garage": "garage"}))],
        &lights(),
    );
    assert!(matches!(e, IntentError::BadValue { .. }), "{e}");
    says(&e, s, "`slots.room` gives \"room\" the value \"garage\", which its schema does not accept: use one of \"kitchen\"");
    let e = error(
        &[with_args(
            spec(&["turn the {room} light on"]),
            json!({"on": "yes"}),
        )],
        &lights(),
    );
    says(
        &e,
        "turn the {room} light on",
        "`args` gives \"on\" the value \"yes\"",
    );
    let e = error(
        &[with_args(spec(&["warm it up"]), json!({"temperature": 50}))],
        &thermostat(),
    );
    says(&e, "warm it up", "use a number >= 10 <= 30");
    let e = error(&[with_slots(spec(&[s]), "on", json!({"on": 1}))], &lights());
    says(&e, s, "use a boolean");

    let object =
        json!({"type": "object", "properties": {"o": {"type": "object"}, "a": {"type": "array"}}});
    for sentence in ["do {o}", "do {a}"] {
        let e = error(&[spec(&[sentence])], &object);
        assert!(matches!(e, IntentError::Unslottable { .. }), "{e}");
        says(&e, sentence, "set it in `args` instead");
    }

    let e = error(&[with_slots(spec(&[s]), "on", json!({}))], &lights());
    assert!(matches!(e, IntentError::NoWords { .. }), "{e}");
    says(&e, s, "`slots.on = { on = true, off = false }`");

    let e = error(
        &[with_slots(spec(&[s]), "room", json!({"?!": "kitchen"}))],
        &lights(),
    );
    assert!(matches!(e, IntentError::EmptyPhrase { .. }), "{e}");
    says(&e, s, "write the words said");

    let e = error(
        &[with_slots(
            spec(&["turn {on} the kitchen light"]),
            "room",
            json!({"lounge": "living room"}),
        )],
        &light_query_and_on(),
    );
    assert!(matches!(e, IntentError::UnusedSlots { .. }), "{e}");
    says(
        &e,
        "turn {on} the kitchen light",
        "add the slot to a sentence",
    );

    let e = error(&[with_args(spec(&[s]), json!({"on": true}))], &lights());
    assert!(matches!(e, IntentError::SlotAndArg { .. }), "{e}");
    says(&e, s, "keep one");

    let e = error(&[spec(&["turn on the {room} light", s])], &lights());
    assert!(matches!(e, IntentError::Unbound { .. }), "{e}");
    says(
        &e,
        "turn on the {room} light",
        "add a {on} slot to it or set \"on\" in `args`",
    );
    let e = error(&[spec(&["turn [{on}] the {room} light"])], &lights());
    says(
        &e,
        "turn [{on}] the {room} light",
        "required parameter \"on\"",
    );
}

/// Lights whose room is not required.
fn light_query_and_on() -> Value {
    json!({"type": "object", "required": ["on"], "properties": {
        "room": {"type": "string", "enum": ["kitchen"]}, "on": {"type": "boolean"}}})
}

/// `before`: the turns a session ran, each its calls.
fn session(turns: &[&[Call]]) -> Before {
    let mut before = Before::default();
    for calls in turns {
        before.record(
            calls
                .iter()
                .map(|(tool, arguments)| IntentCall {
                    tool: tool.clone(),
                    arguments: arguments.clone(),
                })
                .collect(),
        );
    }
    before
}

fn follow(text: &str, turns: &[&[Call]]) -> Option<Vec<Call>> {
    home()
        .follow_up(text, &session(turns))
        .map(|c| c.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

#[test]
fn something_else_the_same_way() {
    let kitchen_on: &[Call] = &[light("kitchen", true)];
    assert_eq!(
        follow("And the bedroom too.", &[kitchen_on]),
        Some(vec![light("bedroom", true)])
    );
    assert_eq!(
        follow("what about the lounge?", &[kitchen_on]),
        Some(vec![light("living room", true)])
    );
    let locked: &[Call] = &[lock("front", true)];
    assert_eq!(
        follow("and the back door as well", &[locked]),
        Some(vec![lock("back", true)])
    );
    // "unlock" stays "unlock"
    let unlocked: &[Call] = &[lock("front", false)];
    assert_eq!(
        follow("and the back door too", &[unlocked]),
        Some(vec![lock("back", false)])
    );
    // not marked as a follow-up, or the same call again: the model's
    assert_eq!(follow("the bedroom", &[kitchen_on]), None);
    assert_eq!(follow("and the kitchen too", &[kitchen_on]), None);
    // nothing before
    assert_eq!(follow("and the bedroom too", &[]), None);
    // only the turn before counts: a turn with no calls in between leaves it
    assert_eq!(
        follow("and the bedroom too", &[kitchen_on, &[]]),
        Some(vec![light("bedroom", true)])
    );
    assert_eq!(follow("and the bedroom too", &[kitchen_on, locked]), None);
}

#[test]
fn it_is_what_the_turn_before_was_about() {
    let bathroom_on: &[Call] = &[light("bathroom", true)];
    assert_eq!(
        follow("Turn it off again.", &[bathroom_on]),
        Some(vec![light("bathroom", false)])
    );
    let unlocked: &[Call] = &[lock("back", false)];
    assert_eq!(
        follow("Lock it again.", &[unlocked]),
        Some(vec![lock("back", true)])
    );
    let dimmed: &[Call] = &[level("bedroom", 20).unwrap()];
    assert_eq!(
        follow("Now set it to 60 percent.", &[dimmed]),
        Some(vec![level("bedroom", 60).unwrap()])
    );
    // a query's subject: "it" after "is the back door locked?"
    let asked: &[Call] = &[("get_light".into(), json!({"room": "kitchen"}))];
    assert_eq!(
        follow("switch it on", &[asked]),
        Some(vec![light("kitchen", true)])
    );
    // two rooms before: "it" is not guessed
    let two: &[Call] = &[light("kitchen", true), light("bedroom", true)];
    assert_eq!(follow("turn it off", &[two]), None);
    // "it" with nothing before, or a request with no "it"
    assert_eq!(follow("turn it off", &[]), None);
    assert_eq!(follow("turn off", &[bathroom_on]), None);
}

#[test]
fn steps_go_from_the_latest_value() {
    let nineteen: &[Call] = &[temperature(json!(19)).unwrap()];
    let light_after: &[Call] = &[light("kitchen", true)];
    assert_eq!(
        follow("Make it warmer.", &[nineteen]),
        Some(vec![temperature(json!(20)).unwrap()])
    );
    assert_eq!(
        follow("please turn the heating up", &[nineteen, light_after]),
        Some(vec![temperature(json!(20)).unwrap()])
    );
    assert_eq!(
        follow("make it cooler", &[&[temperature(json!(21.5)).unwrap()]]),
        Some(vec![temperature(json!(21)).unwrap()])
    );
    assert_eq!(
        follow("make it cooler", &[&[temperature(json!(20)).unwrap()]]),
        Some(vec![temperature(json!(19.5)).unwrap()])
    );
    // past the schema's maximum: the model's
    assert_eq!(
        follow("make it warmer", &[&[temperature(json!(30)).unwrap()]]),
        None
    );
    // the other arguments come from the latest call
    assert_eq!(
        follow("make it brighter", &[&[level("kitchen", 40).unwrap()]]),
        Some(vec![level("kitchen", 60).unwrap()])
    );
    // nothing to step from, and never as a fresh command
    assert_eq!(follow("make it warmer", &[light_after]), None);
    assert_eq!(calls("make it warmer"), None);
}

#[test]
fn a_session_remembers_one_call_per_tool() {
    let before = session(&[
        &[temperature(json!(19)).unwrap()],
        &[temperature(json!(22)).unwrap()],
        &[light("kitchen", true)],
        &[],
    ]);
    assert_eq!(
        home()
            .follow_up("make it warmer", &before)
            .map(|c| c[0].arguments.clone()),
        Some(json!({"temperature": 23}))
    );
    assert_eq!(before.latest.len(), 2);
}

#[test]
fn step_errors_name_the_tool_the_intent_and_the_fix() {
    let warmer = || spec(&["make it warmer"]);
    for (step, fix) in [
        (json!({"temperature": 0}), "other than 0"),
        (json!({"temperature": "up"}), "other than 0"),
        (json!({"place": 1}), "not a parameter"),
    ] {
        says(
            &error(&[with_step(warmer(), step)], &thermostat()),
            "make it warmer",
            fix,
        );
    }
    let e = error(
        &[with_step(spec(&["lights up"]), json!({"on": 1}))],
        &light_query_and_on(),
    );
    says(&e, "lights up", "not a number parameter");
    let e = error(
        &[with_step(spec(&["brighter"]), json!({"level": 2.5}))],
        &brightness(),
    );
    says(&e, "brighter", "use a whole number");
    let e = error(
        &[with_step(
            spec(&["up to {temperature}"]),
            json!({"temperature": 1}),
        )],
        &thermostat(),
    );
    says(&e, "up to {temperature}", "also a slot");
    let e = error(
        &[with_step(
            with_args(warmer(), json!({"temperature": 20})),
            json!({"temperature": 1}),
        )],
        &thermostat(),
    );
    says(&e, "make it warmer", "also in `args`");
}

/// The lights and the thermostat, with a hand-written sentence each.
fn house() -> Intents {
    let light = ToolIntents::compile(
        "set_light",
        &[with_slots(
            spec(&["turn {on} [the] {room} light"]),
            "room",
            json!({"lounge": "living room"}),
        )],
        &lights(),
    )
    .unwrap();
    let heat = ToolIntents::compile(
        "set_thermostat",
        &[spec(&["set the thermostat to {temperature} degrees"])],
        &thermostat(),
    )
    .unwrap();
    Intents::new(vec![Arc::new(light), Arc::new(heat)])
}

fn house_phrases() -> PhraseSet {
    house().phrases()
}

/// The set's requests (`follow_up` false) or its follow-ups, each as it prints.
fn printed(set: &PhraseSet, follow_up: bool) -> Vec<String> {
    set.forms()
        .iter()
        .filter(|f| f.follow_up == follow_up)
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_phrase_set_keeps_each_form_with_its_slots_vocabulary() {
    let set = house_phrases();
    let forms = printed(&set, false);
    assert_eq!(
        forms,
        [
            "turn {on: on | off} the {room: lounge | kitchen | living room | bedroom | bathroom} light",
            "turn {on: on | off} {room: lounge | kitchen | living room | bedroom | bathroom} light",
            "set the thermostat to {temperature: 10–30} degrees",
        ]
    );
    assert_eq!(set.forms()[0].source, "set_light");
    // 2 × 5 sentences per light form; 10 to 30 in halves is 41 temperatures
    let requests = PhraseSet::new(
        set.forms()
            .iter()
            .filter(|f| !f.follow_up)
            .cloned()
            .collect(),
    );
    assert_eq!(
        requests.count(),
        Count {
            sentences: 10 + 10 + 41,
            open_forms: 0
        }
    );
}

#[test]
fn the_phrase_set_holds_the_follow_ups_the_intents_understand_after_a_turn() {
    let set = house_phrases();
    let follow_ups = printed(&set, true);
    let rooms = "{room: lounge | kitchen | living room | bedroom | bathroom}";
    for form in [
        format!("and the {rooms} too"),
        format!("what about the {rooms} light"),
        format!("{rooms} light as well"),
        "turn {on: on | off} it".to_string(),
        "turn {on: on | off} them".to_string(),
    ] {
        assert!(follow_ups.contains(&form), "{form} in {follow_ups:#?}");
    }
    // a number is not a thing one says "it" for or adds "too" to; "the" stays with its
    // name; a verb is not part of a name
    for form in &follow_ups {
        assert!(!form.contains("temperature"), "{form}");
        assert!(
            !form.contains("the it") && !form.contains("about turn"),
            "{form}"
        );
    }
    let matcher = hearth_phrases::Matcher::new(&set.grammar()).unwrap();
    let before = {
        let mut b = Before::default();
        b.record(vec![IntentCall {
            tool: "set_light".into(),
            arguments: json!({"room": "kitchen", "on": true}),
        }]);
        b
    };
    for said in [
        "And the bedroom too.",
        "what about the bathroom light?",
        "Turn off them again.", // in the template's order: "turn {on} the {room} light"
        "and the lounge light as well",
    ] {
        assert!(matcher.accepts(said), "{said}");
        assert!(house().follow_up(said, &before).is_some(), "{said}");
    }
    for said in ["and 21 degrees too", "and the garage too", "turn it"] {
        assert!(!matcher.accepts(said), "{said}");
    }
    // a sample draws requests only: a follow-up means nothing without its turn
    for (_, sentence) in set.sample(100, 5) {
        assert!(house().recognize(&sentence).is_some(), "{sentence}");
    }
}

#[test]
fn a_sample_is_made_of_the_house_phrases_and_the_same_seed_draws_it_again() {
    let set = house_phrases();
    let intents = house();
    let drawn = set.sample(40, 7);
    assert_eq!(drawn.len(), 40);
    for (source, sentence) in &drawn {
        let calls = intents
            .recognize(sentence)
            .unwrap_or_else(|| panic!("{sentence:?} is understood"));
        assert_eq!(calls[0].tool, *source, "{sentence}");
    }
    assert_eq!(drawn, set.sample(40, 7));
    assert_ne!(drawn, set.sample(40, 8));
}

/// A reminder whose slot takes any words and a volume whose level is any number.
fn open_slots() -> Intents {
    let note = ToolIntents::compile(
        "notify",
        &[with_args(
            spec(&["remind me to {body}"]),
            json!({"title": "Reminder"}),
        )],
        &notify(),
    )
    .unwrap();
    let volume = ToolIntents::compile(
        "set_volume",
        &[spec(&["volume {level}"])],
        &json!({"type": "object", "required": ["level"], "properties": {
            "level": {"type": "integer", "minimum": 0}}}),
    )
    .unwrap();
    Intents::new(vec![Arc::new(note), Arc::new(volume)])
}

#[test]
fn a_slot_that_takes_any_words_or_any_number_leaves_its_form_uncounted() {
    let set = open_slots().phrases();
    assert_eq!(
        set.count(),
        Count {
            sentences: 0,
            open_forms: 2
        }
    );
    let forms: Vec<String> = set.forms().iter().map(ToString::to_string).collect();
    assert_eq!(
        forms,
        ["remind me to {body: …}", "volume {level: any number}"]
    );
    assert!(set.sample(3, 1).iter().all(|(_, s)| !s.is_empty()));
}

#[test]
fn the_words_that_decide_a_requests_way_are_guarded_and_the_shared_verbs_are_not() {
    let words = super::direction_words();
    for w in [
        "on", "off", "lock", "unlock", "open", "close", "locked", "unlocked", "dim", "warmer",
    ] {
        assert!(words.contains(&w), "{w} in {words:?}");
    }
    for w in ["turn", "switch", "put", "the", "s"] {
        assert!(!words.contains(&w), "{w} in {words:?}");
    }
    let grammar = house_phrases().grammar();
    assert_eq!(grammar.guarded.len(), words.len());
    assert_eq!(grammar.ways, words);
}

#[test]
fn the_answers_words_are_guarded_unless_a_request_has_them_too() {
    let grammar = house_phrases()
        .and_guarded("answer", &["yes", "go ahead", "turn it", "no"])
        .grammar();
    for w in ["yes", "go", "ahead", "no"] {
        assert!(grammar.guarded.iter().any(|g| g == w), "{w}");
        // held everywhere, not only where another answer could stand in their place
        assert!(!grammar.ways.iter().any(|g| g == w), "{w}");
    }
    // words of the lights' forms and their follow-ups ("turn it on"): guarding them would
    // keep the pass from mending those
    for w in ["turn", "it"] {
        assert!(!grammar.guarded.iter().any(|g| g == w), "{w}");
    }
    assert!(grammar.forms.iter().any(|f| f == "go ahead"));
}

#[test]
fn the_grammar_a_recogniser_is_sent_holds_the_same_sentences() {
    let set = house_phrases();
    let grammar = set.grammar();
    // the light forms share their two vocabularies; the thermostat's numbers are a third
    assert_eq!(grammar.lists.len(), 3, "{grammar:?}");
    assert_eq!(
        grammar.forms[0], "turn {0} the {1} light",
        "{:?}",
        grammar.forms
    );
    let matcher = hearth_phrases::Matcher::new(&grammar).unwrap();
    for (_, sentence) in set.sample(200, 3) {
        assert!(matcher.accepts(&sentence), "{sentence}");
    }
    for said in [
        "Turn on the kitchen light.",
        "Please set the thermostat to 21.5 degrees, thanks",
        "turn off the bedroom light and turn on the lounge light",
    ] {
        assert!(matcher.accepts(said), "{said}");
        assert!(house().recognize(said).is_some(), "{said}");
    }
    for said in [
        "Is the kitchen light on?",
        "Should I turn on the kitchen light?",
        "set the thermostat to 35 degrees",
        "turn on the garage light",
    ] {
        assert!(!matcher.accepts(said), "{said}");
    }
    // a slot of any words and one of any number
    let grammar = open_slots().phrases().grammar();
    assert_eq!(grammar.forms, ["remind me to {words}", "volume {number}"]);
    let matcher = hearth_phrases::Matcher::new(&grammar).unwrap();
    assert!(matcher.accepts("Remind me to call Anna."));
    assert!(matcher.accepts("volume 7"));
    assert!(!matcher.accepts("volume seven"));
    // any words right after the first word: understood, but not sent
    let show = compile(
        "notify",
        &[with_args(
            spec(&["show {body} here"]),
            json!({"title": "t"}),
        )],
        &notify(),
    );
    let intents = Intents::new(vec![show]);
    assert_eq!(intents.phrases().forms().len(), 1);
    assert!(intents.phrases().grammar().forms.is_empty());
    assert!(intents.recognize("show the news here").is_some());
}

fn calls_in(intents: &Intents, text: &str, room: &str) -> Option<Vec<Call>> {
    intents
        .recognize_in(text, Some(room))
        .map(|c| c.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

#[test]
fn a_request_that_names_no_room_is_about_the_room_it_was_said_in() {
    let home = home();
    let bedroom_on = vec![(
        "set_light".to_string(),
        json!({"room": "bedroom", "on": true}),
    )];
    assert_eq!(
        calls_in(&home, "Turn on the light.", "bedroom"),
        Some(bedroom_on)
    );
    assert_eq!(
        calls_in(&home, "dim the lights to 40 percent", "kitchen"),
        Some(vec![(
            "set_brightness".to_string(),
            json!({"room": "kitchen", "level": 40})
        )])
    );
    // a room said wins over the one it was said in
    assert_eq!(
        calls_in(&home, "turn on the kitchen light", "bedroom"),
        calls_of(&home, "turn on the kitchen light")
    );
    // without a room, or in a room no parameter has, nothing is guessed
    assert_eq!(calls_of(&home, "turn on the light"), None);
    assert_eq!(calls_in(&home, "turn on the light", "garden"), None);
    assert_eq!(home.recognize_in("turn on the light", Some(" ")), None);
    // the room never fills a parameter that is no room (a room called "back": a door too)
    assert_eq!(calls_in(&home, "lock the door", "back"), None);
    assert!(calls_of(&home, "lock the back door").is_some());
    // nor makes a request of words that are none
    assert_eq!(calls_in(&home, "what a lovely light", "bedroom"), None);
}
