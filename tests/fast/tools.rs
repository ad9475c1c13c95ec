//! The tools registry end to end: the demo home (`tools/demo.toml`) through
//! `Registry::call` and the tools actor, and manifests loaded from a directory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hearth::toolcall::ToolCall;
use hearth::tools::{Registry, ToolStatus, ToolsActor, ToolsMsg};
use ractor::Actor;
use serde_json::{json, Value};

fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

fn unique_temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let d = std::env::temp_dir().join(format!("hearth-tools-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The demo home's state directory for this test binary. Every test calls this first, so
/// the variable is set once (the `OnceLock` blocks the others) before any tool runs.
fn demo_state() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = unique_temp_dir("demo-state");
        std::env::set_var("HEARTH_DEMO_STATE", &d);
        d
    })
}

fn demo() -> Registry {
    demo_state();
    Registry::load_dir(tools_dir()).unwrap()
}

fn call(name: &str, arguments: Value) -> ToolCall {
    hearth::toolcall::ToolSet::unrestricted()
        .call(format!("{name}_0"), name, arguments)
        .expect("the arguments are a JSON object")
}

fn state(file: &str) -> Option<String> {
    std::fs::read_to_string(demo_state().join(file))
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
fn demo_manifest_loads_after_the_builtins() {
    let r = demo();
    assert_eq!(
        r.names().collect::<Vec<_>>(),
        [
            "get_time",
            "get_date",
            "set_light",
            "get_light",
            "set_brightness",
            "set_thermostat",
            "get_thermostat",
            "set_lock",
            "get_lock"
        ]
    );
    let tools = r.openai_tools();
    assert_eq!(tools[2]["function"]["name"], "set_light");
    assert_eq!(
        tools[2]["function"]["parameters"]["properties"]["room"]["enum"][1],
        "living room"
    );
    // properties in the order the manifest writes them
    let props: Vec<&String> = tools[2]["function"]["parameters"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(props, ["room", "on"]);
    assert_eq!(
        tools[6]["function"]["parameters"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(r.fingerprint(), demo().fingerprint());
    assert_ne!(r.fingerprint(), Registry::builtins().fingerprint());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tools_dir().join("demo-home"))
            .unwrap()
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "tools/demo-home must be executable");
    }
}

#[tokio::test]
async fn set_light_changes_the_state_file() {
    let r = demo();
    let on = call("set_light", json!({"room": "kitchen", "on": true}));
    let o = r.call(&on).await;
    assert_eq!(
        (o.status, o.result.as_str()),
        (ToolStatus::Ok, "kitchen light on")
    );
    assert_eq!(state("light-kitchen").as_deref(), Some("on"));
    assert_eq!(
        r.confirmation(&on, "kitchen light on").as_deref(),
        Some("The kitchen light is on.")
    );

    let o = r.call(&call("get_light", json!({"room": "kitchen"}))).await;
    assert_eq!(o.result, "kitchen light on");

    let off = call("set_light", json!({"room": "kitchen", "on": false}));
    let o = r.call(&off).await;
    assert_eq!(o.result, "kitchen light off");
    assert_eq!(state("light-kitchen").as_deref(), Some("off"));
    assert_eq!(
        r.confirmation(&off, "kitchen light off").as_deref(),
        Some("The kitchen light is off.")
    );

    let o = r
        .call(&call(
            "set_light",
            json!({"room": "living room", "on": true}),
        ))
        .await;
    assert_eq!(o.result, "living room light on");
    assert_eq!(state("light-living-room").as_deref(), Some("on"));
}

#[tokio::test]
async fn thermostat_and_invalid_calls() {
    let r = demo();
    let set = call("set_thermostat", json!({"temperature": 21.5}));
    let o = r.call(&set).await;
    assert_eq!(
        (o.status, o.result.as_str()),
        (ToolStatus::Ok, "thermostat set to 21.5 degrees")
    );
    assert_eq!(state("thermostat").as_deref(), Some("21.5"));
    assert_eq!(
        r.confirmation(&set, "thermostat set to 21 degrees")
            .as_deref(),
        Some("The thermostat is set to 21.5 degrees.")
    );
    let o = r.call(&call("get_thermostat", json!({}))).await;
    assert_eq!(o.result, "thermostat set to 21.5 degrees");

    // the schema refuses these before anything runs
    let o = r
        .call(&call("set_thermostat", json!({"temperature": 99})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result.starts_with("set_thermostat: not run, "),
        "{}",
        o.result
    );
    assert_eq!(state("thermostat").as_deref(), Some("21.5"));
    let o = r
        .call(&call("set_light", json!({"room": "garage", "on": true})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(state("light-garage").is_none());
    let o = r.call(&call("set_light", json!({"room": "kitchen"}))).await;
    assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
}

#[tokio::test]
async fn script_errors_come_back_naming_tool_program_and_stderr() {
    let dir = unique_temp_dir("bad-room");
    let script = tools_dir().join("demo-home");
    // a manifest that lets any room through to the script, which refuses it
    std::fs::write(
        dir.join("loose.toml"),
        format!(
            r#"[[tool]]
name = "loose_light"
description = "A light in any room."
[tool.parameters]
type = "object"
required = ["room"]
properties.room.type = "string"
[tool.exec]
argv = ["{}", "light", "{{{{ room }}}}", "on"]
"#,
            script.display()
        ),
    )
    .unwrap();
    demo_state();
    let r = Registry::load_dir(&dir).unwrap();
    let o = r
        .call(&call("loose_light", json!({"room": "garage"})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        format!(
            "loose_light: `{}` exited with status 2: unknown room: garage (kitchen, living room, bedroom, bathroom, office)",
            script.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn manifest_limits_apply() {
    let dir = unique_temp_dir("limits");
    std::fs::write(
        dir.join("limits.toml"),
        r#"
[[tool]]
name = "slow"
description = "Takes too long."
[tool.exec]
argv = ["sleep", "5"]
timeout_ms = 300

[[tool]]
name = "chatty"
description = "Says too much."
[tool.exec]
argv = ["sh", "-c", "yes hello | head -c 100000"]
max_output_bytes = 12

[[tool]]
name = "quiet"
description = "Says nothing."
[tool.exec]
argv = ["true"]

[[tool]]
name = "needs_room"
description = "Uses an argument the call may leave out."
[tool.parameters]
type = "object"
properties.room.type = "string"
[tool.exec]
argv = ["echo", "{{ room }}"]
"#,
    )
    .unwrap();
    demo_state();
    let r = Registry::load_dir(&dir).unwrap();

    let start = Instant::now();
    let o = r.call(&call("slow", json!({}))).await;
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        "slow: `sleep` did not finish within 300 ms and was stopped"
    );

    let o = r.call(&call("chatty", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Ok);
    assert_eq!(
        o.result,
        "hello\nhello\n[output cut: 100000 bytes, only the first 12 kept]"
    );

    let o = r.call(&call("quiet", json!({}))).await;
    assert_eq!((o.status, o.result.as_str()), (ToolStatus::Empty, ""));

    let o = r.call(&call("needs_room", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result.starts_with("needs_room: cannot build argv[1]"),
        "{}",
        o.result
    );
    let o = r.call(&call("needs_room", json!({"room": "hall"}))).await;
    assert_eq!(o.result, "hall");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn actor_runs_demo_calls_in_parallel_in_call_order() {
    let registry = Arc::new(demo());
    let (actor, handle) = Actor::spawn(None, ToolsActor, Arc::clone(&registry))
        .await
        .unwrap();
    let snap = ractor::call!(actor, ToolsMsg::Snapshot).unwrap();
    assert_eq!(snap.fingerprint(), registry.fingerprint());

    let calls = vec![
        call("set_light", json!({"room": "bedroom", "on": true})),
        call("get_time", json!({})),
        call("set_light", json!({"room": "bathroom", "on": false})),
        call("get_date", json!({})),
        call("set_light", json!({"room": "attic", "on": true})),
    ];
    let outcomes = ractor::call!(actor, |reply| ToolsMsg::CallAll {
        calls,
        room: None,
        reply
    })
    .unwrap();
    let names: Vec<&str> = outcomes.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "set_light",
            "get_time",
            "set_light",
            "get_date",
            "set_light"
        ]
    );
    assert_eq!(outcomes[0].result, "bedroom light on");
    assert_eq!(outcomes[2].result, "bathroom light off");
    assert_eq!(outcomes[4].status, ToolStatus::Error);
    assert_eq!(state("light-bedroom").as_deref(), Some("on"));
    assert_eq!(state("light-bathroom").as_deref(), Some("off"));

    // get_time: H:MM AM|PM
    let t = &outcomes[1].result;
    assert_eq!(outcomes[1].status, ToolStatus::Ok);
    let (clock, half) = t.split_once(' ').unwrap();
    let (h, m) = clock.split_once(':').unwrap();
    assert!(
        (half == "AM" || half == "PM")
            && h.parse::<u8>().is_ok_and(|h| (1..=12).contains(&h))
            && m.len() == 2
            && m.parse::<u8>().is_ok_and(|m| m < 60),
        "{t}"
    );
    assert!(outcomes[3].result.contains(", "), "{}", outcomes[3].result);

    actor.stop(None);
    handle.await.unwrap();
}

#[tokio::test]
async fn locks_and_brightness_change_their_state_files() {
    let r = demo();
    let o = r
        .call(&call("set_lock", json!({"door": "back", "locked": false})))
        .await;
    assert_eq!(
        (o.status, o.result.as_str()),
        (ToolStatus::Ok, "back door unlocked")
    );
    assert_eq!(state("lock-back").as_deref(), Some("unlocked"));
    let o = r.call(&call("get_lock", json!({"door": "back"}))).await;
    assert_eq!(o.result, "back door unlocked");
    let o = r
        .call(&call(
            "set_brightness",
            json!({"room": "living room", "level": 30}),
        ))
        .await;
    assert_eq!(
        (o.status, o.result.as_str()),
        (ToolStatus::Ok, "living room light at 30 percent")
    );
    assert_eq!(state("brightness-living-room").as_deref(), Some("30"));
    assert_eq!(state("light-living-room").as_deref(), Some("on"));
    // out of range: refused by the schema, nothing written
    let o = r
        .call(&call(
            "set_brightness",
            json!({"room": "kitchen", "level": 101}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(state("brightness-kitchen").is_none());
}

/// The calls an intent of the tools in `file` (under tools/) makes of `text`.
fn intent_calls(file: &str, text: &str) -> Option<Vec<(String, serde_json::Value)>> {
    let path = tools_dir().join(file);
    let manifest = std::fs::read_to_string(&path).unwrap();
    let tools = hearth::tools::parse_manifest(&manifest, &path).unwrap();
    let intents =
        hearth::intent::Intents::new(tools.iter().filter_map(|t| t.intents.clone()).collect());
    intents
        .recognize(text)
        .map(|calls| calls.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

#[test]
fn the_demo_and_every_example_manifest_ship_intents_that_match_their_commands() {
    let cases: &[(&str, &str, &str, serde_json::Value)] = &[
        (
            "demo.toml",
            "Turn on the kitchen light.",
            "set_light",
            json!({"room": "kitchen", "on": true}),
        ),
        (
            "demo.toml",
            "Switch the living room lights off.",
            "set_light",
            json!({"room": "living room", "on": false}),
        ),
        (
            "demo.toml",
            "Is the bathroom light on?",
            "get_light",
            json!({"room": "bathroom"}),
        ),
        (
            "demo.toml",
            "Dim the bedroom light to 20 percent.",
            "set_brightness",
            json!({"room": "bedroom", "level": 20}),
        ),
        (
            "demo.toml",
            "Set the thermostat to twenty one degrees.",
            "set_thermostat",
            json!({"temperature": 21}),
        ),
        (
            "demo.toml",
            "What's the thermostat set to?",
            "get_thermostat",
            json!({}),
        ),
        (
            "demo.toml",
            "Lock the front door.",
            "set_lock",
            json!({"door": "front", "locked": true}),
        ),
        (
            "demo.toml",
            "Unlock the garage door.",
            "set_lock",
            json!({"door": "garage", "locked": false}),
        ),
        (
            "demo.toml",
            "Is the back door locked?",
            "get_lock",
            json!({"door": "back"}),
        ),
        (
            "examples/lights.toml",
            "switch on the hallway light",
            "set_light",
            json!({"room": "hallway", "on": true}),
        ),
        (
            "examples/lights.toml",
            "dim the kitchen light to 30 percent",
            "set_light",
            json!({"room": "kitchen", "on": true, "brightness": 30}),
        ),
        (
            "examples/switches.toml",
            "turn the kettle on",
            "set_plug",
            json!({"plug": "kettle", "on": true}),
        ),
        (
            "examples/switches.toml",
            "switch off the garden pump",
            "set_switch",
            json!({"switch": "garden pump", "on": false}),
        ),
        (
            "examples/thermostat.toml",
            "set the heating to 19 degrees",
            "set_thermostat",
            json!({"temperature": 19}),
        ),
        (
            "examples/thermostat.toml",
            "how warm is it in the bedroom",
            "get_temperature",
            json!({"room": "bedroom"}),
        ),
        (
            "examples/scene.toml",
            "activate movie night",
            "activate_scene",
            json!({"scene": "movie night"}),
        ),
        (
            "examples/gpio.toml",
            "turn on the fan",
            "set_fan",
            json!({"on": true}),
        ),
        (
            "examples/gpio.toml",
            "is the front door open",
            "read_door",
            json!({}),
        ),
        (
            "examples/gpio.toml",
            "open the garage door",
            "press_garage_door",
            json!({}),
        ),
        (
            "examples/desktop.toml",
            "put call the plumber on the screen",
            "notify",
            json!({"title": "hearth", "body": "call the plumber"}),
        ),
    ];
    for (file, text, tool, args) in cases {
        assert_eq!(
            intent_calls(file, text),
            Some(vec![(tool.to_string(), args.clone())]),
            "{file}: {text}"
        );
    }
    // two commands, and requests the model must answer
    assert_eq!(
        intent_calls(
            "demo.toml",
            "Turn off the kitchen light and lock the front door."
        )
        .map(|c| c.len()),
        Some(2)
    );
    for text in [
        "Tell me a joke.",
        "Make it warmer.",
        "Turn it off again.",
        "Unlock the door.",
    ] {
        assert_eq!(intent_calls("demo.toml", text), None, "{text}");
    }
}

/// The calls a follow-up `text` makes with the tools in `file`, after a session ran `before`
/// (one turn per call).
fn follow_up_calls(
    file: &str,
    before: &[Call],
    text: &str,
) -> Option<Vec<(String, serde_json::Value)>> {
    let path = tools_dir().join(file);
    let manifest = std::fs::read_to_string(&path).unwrap();
    let tools = hearth::tools::parse_manifest(&manifest, &path).unwrap();
    let intents =
        hearth::intent::Intents::new(tools.iter().filter_map(|t| t.intents.clone()).collect());
    let mut session = hearth::intent::Before::default();
    for (tool, arguments) in before {
        session.record(vec![hearth::intent::IntentCall {
            tool: tool.to_string(),
            arguments: arguments.clone(),
        }]);
    }
    intents
        .follow_up(text, &session)
        .map(|calls| calls.into_iter().map(|c| (c.tool, c.arguments)).collect())
}

/// A call as the tests write it: the tool and its arguments.
type Call = (&'static str, serde_json::Value);

fn twenty_two() -> Call {
    ("set_thermostat", json!({"temperature": 22}))
}

#[test]
fn the_demo_and_the_thermostat_example_resolve_follow_ups() {
    let nineteen: Call = ("set_thermostat", json!({"temperature": 19}));
    let garage: Call = ("set_lock", json!({"door": "garage", "locked": false}));
    let bedroom: Call = ("set_brightness", json!({"room": "bedroom", "level": 20}));
    let bathroom: Call = ("set_light", json!({"room": "bathroom", "on": true}));
    let asked: Call = ("get_lock", json!({"door": "front"}));
    let cases: Vec<(&str, Vec<Call>, &str, Call)> = vec![
        (
            "demo.toml",
            vec![nineteen.clone()],
            "Make it warmer.",
            ("set_thermostat", json!({"temperature": 20})),
        ),
        (
            "demo.toml",
            vec![nineteen.clone(), garage.clone()],
            "Make it cooler.",
            ("set_thermostat", json!({"temperature": 18})),
        ),
        (
            "demo.toml",
            vec![garage.clone()],
            "Lock it again.",
            ("set_lock", json!({"door": "garage", "locked": true})),
        ),
        (
            "demo.toml",
            vec![garage],
            "And the back door too.",
            ("set_lock", json!({"door": "back", "locked": false})),
        ),
        (
            "demo.toml",
            vec![bedroom.clone()],
            "Now set it to 60 percent.",
            ("set_brightness", json!({"room": "bedroom", "level": 60})),
        ),
        (
            "demo.toml",
            vec![bedroom],
            "Make it brighter.",
            ("set_brightness", json!({"room": "bedroom", "level": 40})),
        ),
        (
            "demo.toml",
            vec![bathroom],
            "Turn it off again.",
            ("set_light", json!({"room": "bathroom", "on": false})),
        ),
        (
            "demo.toml",
            vec![asked],
            "Lock it.",
            ("set_lock", json!({"door": "front", "locked": true})),
        ),
        (
            "examples/thermostat.toml",
            vec![nineteen],
            "turn the heating up",
            ("set_thermostat", json!({"temperature": 20})),
        ),
    ];
    for (file, before, text, (tool, args)) in cases {
        assert_eq!(
            follow_up_calls(file, &before, text),
            Some(vec![(tool.to_string(), args)]),
            "{file}: {text} after {before:?}"
        );
    }
    // nothing to follow, or past the thermostat's maximum: the model's
    assert_eq!(follow_up_calls("demo.toml", &[], "Make it warmer."), None);
    let thirty: Call = ("set_thermostat", json!({"temperature": 30}));
    assert_eq!(
        follow_up_calls("demo.toml", &[thirty], "Make it warmer."),
        None
    );
    assert_eq!(
        follow_up_calls("demo.toml", &[twenty_two()], "make it cool"),
        Some(vec![(
            "set_thermostat".to_string(),
            json!({"temperature": 21})
        )])
    );
    assert_eq!(
        intent_calls("demo.toml", "I'd like the thermostat at 20 degrees."),
        Some(vec![(
            "set_thermostat".to_string(),
            json!({"temperature": 20})
        )])
    );
    // whisper's "lock" for "locked" in a question
    assert_eq!(
        intent_calls("demo.toml", "Is the front door lock."),
        Some(vec![("get_lock".to_string(), json!({"door": "front"}))])
    );
}

#[tokio::test]
async fn the_query_tools_say_what_they_found() {
    // (other tests change the shared demo state: only what nothing else touches is fixed)
    let r = demo();
    for (name, args, said) in [
        (
            "get_light",
            json!({"room": "bathroom"}),
            "The bathroom light is off.",
        ),
        (
            "get_lock",
            json!({"door": "garage"}),
            "The garage door is locked.",
        ),
    ] {
        let c = call(name, args);
        let o = r.call(&c).await;
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
        assert_eq!(r.confirmation(&c, &o.result).as_deref(), Some(said));
    }
    let c = call("get_thermostat", json!({}));
    let o = r.call(&c).await;
    let degrees = o.result.split_whitespace().nth(3).unwrap().to_string();
    assert_eq!(
        r.confirmation(&c, &o.result),
        Some(format!("The thermostat is set to {degrees} degrees."))
    );
}

#[tokio::test]
async fn a_long_say_is_shortened_and_says_so() {
    let tools = hearth::tools::parse_manifest(
        r#"
[[tool]]
name = "read_news"
description = "Read the news."
say = "{{ result }}"
[tool.exec]
argv = ["sh", "-c", "i=0; while [ $i -lt 40 ]; do printf 'Headline %s is here. ' $i; i=$((i+1)); done"]
"#,
        Path::new("/etc/hearth/tools/news.toml"),
    )
    .unwrap();
    let r = Registry::new(tools).unwrap();
    let news = call("read_news", json!({}));
    let o = r.call(&news).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert!(o.result.len() > 600, "{}", o.result);
    let said = r.confirmation(&news, &o.result).unwrap();
    assert!(said.chars().count() < 340, "{said}");
    assert!(said.starts_with("Headline 0 is here. Headline 1"), "{said}");
    assert!(said.ends_with("is here. I shortened that."), "{said}");
}
