//! The house found: a real Home Assistant (2024.3.3, its demo integration, the test house
//! of `hearth_testkit::homeassistant`: areas, aliases and exposure set through its WebSocket
//! API) and hearth pointed at it with a URL and a token and no manifest. One long session in
//! one process (the real model behind the intents): requests by name, alias and area reach
//! the entities (their states read back from Home Assistant), unlocking and opening the
//! garage wait for a yes, the unexposed light is never called, an alias added while hearth
//! runs is sayable without a restart, and Home Assistant stopped mid-session costs only the
//! turns while it is down.
//!
//! A missing venv or model fails with the fix; locally, `HEARTH_SKIP_REAL_MODEL=1` skips
//! (CI never sets it).
#![cfg(feature = "llm")]

use std::time::{Duration, Instant};

use hearth::agent::{Ask, Turn};
use hearth::config::HomeAssistantSection;
use hearth::house::HouseWatch;
use hearth::preset::Preset;
use hearth::supervisor::{start_text, TextOptions, TextRuntime};
use hearth::tools::{Backends, ToolsMsg};
use hearth_testkit::homeassistant::{HomeAssistant, House};
use hearth_testkit::model::{or_skip, qwen_path};
use serde_json::Value;

struct Session {
    rt: tokio::runtime::Runtime,
    text: TextRuntime,
}

impl Session {
    fn ask(&self, text: &str) -> Turn {
        self.rt.block_on(async {
            hearth::agent::ask(&self.text.agent, Ask::new("house", text))
                .await
                .expect("the turn succeeds")
        })
    }

    /// Whether the tools' intents turn `text` into a call now.
    fn sayable(&self, text: &str) -> bool {
        self.rt.block_on(async {
            let registry = ractor::call!(self.text.tools, ToolsMsg::Snapshot).unwrap();
            registry.intents().recognize(text).is_some()
        })
    }

    /// Wait (up to `within`) until `text` is sayable.
    fn wait_sayable(&self, text: &str, within: Duration) -> Duration {
        let start = Instant::now();
        while !self.sayable(text) {
            assert!(
                start.elapsed() < within,
                "{text:?} not sayable within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        start.elapsed()
    }
}

fn state(ha: &HomeAssistant, entity_id: &str) -> Value {
    ha.state(entity_id).unwrap_or_else(|e| panic!("{e}"))
}

fn called(turn: &Turn) -> Vec<String> {
    turn.hops
        .iter()
        .flat_map(|h| &h.calls)
        .map(|c| format!("{} {}", c.name, c.arguments))
        .collect()
}

/// `hearth devices` lists the house's tools with their things, names, rooms and three
/// requests each; `hearth doctor` says what was found; neither shows the unexposed light.
fn seen_by_the_cli(ha: &HomeAssistant, section: &HomeAssistantSection) {
    let dir = ha.config_dir().join("hearth");
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    let config = dir.join("hearth.toml");
    std::fs::write(
        &config,
        format!(
            "[homeassistant]\nurl = {:?}\ntoken_file = {:?}\n",
            section.url,
            section.token_file.display().to_string()
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(hearth_testkit::checkout::hearth_exe())
            .args(args)
            .arg("--config")
            .arg(&config)
            .arg("--tools")
            .arg(dir.join("tools"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let devices = run(&["devices"]);
    for expected in [
        "set_light (homeassistant)",
        "  bed light (night light) in the bedroom\tlight.bed_light",
        "set_lock (homeassistant)",
        "set_garage_door (homeassistant)",
        "pause_media (homeassistant)",
        "left out humidifier.humidifier: hearth has no tools",
    ] {
        assert!(devices.contains(expected), "{expected:?} in {devices}");
    }
    assert!(!devices.contains("rgbww"), "{devices}");
    let says = devices
        .lines()
        .skip_while(|l| !l.starts_with("set_light "))
        .find(|l| l.starts_with("  say: "))
        .unwrap();
    assert_eq!(says.matches('"').count(), 6, "three requests: {says}");
    let doctor = run(&["doctor"]);
    let house = doctor
        .lines()
        .find(|l| l.contains(" house "))
        .unwrap_or_default();
    assert!(
        house.starts_with("[ ok ] house") && house.contains("things exposed to Assist make"),
        "{doctor}"
    );
}

#[test]
fn a_house_hearth_was_not_written_for_is_sayable_and_followed() {
    let Some(model) = qwen_path() else { return };
    let Some(mut ha) = or_skip(
        HomeAssistant::start(),
        "the house test",
        "run scripts/setup --test",
    ) else {
        return;
    };
    let section = HomeAssistantSection {
        url: ha.url().to_string(),
        token_file: ha.token_file().to_path_buf(),
        discover: true,
        refresh_s: 2,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").unwrap());
    opts.model = Some(model);
    opts.house = HouseWatch::from_config(&section).unwrap();
    let mut backends = Backends::none();
    backends.homeassistant = Some(hearth::tools::homeassistant::HaBackend::new(&section).unwrap());
    opts.backends = std::sync::Arc::new(backends);
    seen_by_the_cli(&ha, &section);
    let start = Instant::now();
    let text = rt.block_on(start_text(opts)).expect("hearth starts");
    let s = Session { rt, text };
    let found_in = s.wait_sayable("turn on the night light", Duration::from_secs(30));
    eprintln!(
        "house found {:.1} s after the start began ({:.1} s after the model)",
        start.elapsed().as_secs_f64(),
        found_in.as_secs_f64()
    );

    // by alias, by name, by area (and its alias)
    let turn = s.ask("turn on the night light");
    assert_eq!(state(&ha, "light.bed_light")["state"], "on", "{turn:#?}");
    assert_eq!(turn.reply, "The bed light in the bedroom is on.");
    let unexposed_before = state(&ha, House::UNEXPOSED);
    assert_eq!(unexposed_before["state"], "on", "the demo starts it on");
    let turn = s.ask("turn off the lights in the lounge");
    assert_eq!(called(&turn), [r#"set_light {"area":"lounge","on":false}"#]);
    assert_eq!(state(&ha, "light.ceiling_lights")["state"], "off");
    let turn = s.ask("dim the kitchen lights to 20 percent");
    assert_eq!(
        state(&ha, "light.kitchen_lights")["attributes"]["brightness"],
        51,
        "{turn:#?}"
    );
    let turn = s.ask("set the heating to 24 degrees");
    assert_eq!(
        state(&ha, "climate.heatpump")["attributes"]["temperature"],
        24.0,
        "{turn:#?}"
    );
    let turn = s.ask("pause the kitchen");
    assert_eq!(
        state(&ha, "media_player.kitchen")["state"],
        "paused",
        "{turn:#?}"
    );
    let turn = s.ask("lock the kitchen door");
    assert_eq!(
        state(&ha, "lock.kitchen_door")["state"],
        "locked",
        "{turn:#?}"
    );

    // readings come from the live state
    let outside = state(&ha, "sensor.outside_temperature");
    let turn = s.ask("what is the outside temperature");
    let value = outside["state"].as_str().unwrap();
    assert!(turn.reply.contains(value), "{value} in {turn:#?}");
    let turn = s.ask("is the front door locked");
    assert_eq!(turn.reply, "The front door is locked.", "{turn:#?}");

    // unlocking and opening the garage wait for a yes
    let turn = s.ask("unlock the front door");
    assert_eq!(turn.reply, "Shall I unlock the front door?", "{turn:#?}");
    assert_eq!(state(&ha, "lock.front_door")["state"], "locked");
    s.ask("yes");
    assert_eq!(state(&ha, "lock.front_door")["state"], "unlocked");
    let turn = s.ask("open the garage door");
    assert_eq!(turn.reply, "Shall I open the garage door?", "{turn:#?}");
    s.ask("no");
    assert_eq!(state(&ha, "cover.garage_door")["state"], "closed");

    // the unexposed light is never a tool, whatever is asked
    for request in [
        "turn off the living room rgbww lights",
        "turn off the living room lights",
    ] {
        let turn = s.ask(request);
        let calls = called(&turn);
        assert!(
            calls.iter().all(|c| !c.contains("rgbww")),
            "{request}: {calls:?}"
        );
    }
    let unexposed_after = state(&ha, House::UNEXPOSED);
    assert_eq!(
        unexposed_after["last_changed"], unexposed_before["last_changed"],
        "the unexposed light was never touched"
    );

    // an alias added while hearth runs is sayable without a restart
    assert!(!s.sayable("turn on the cooking light"));
    ha.ws(serde_json::json!({
        "type": "config/entity_registry/update",
        "entity_id": "light.kitchen_lights",
        "aliases": ["cooking light"],
    }))
    .unwrap();
    let followed = s.wait_sayable("turn off the cooking light", Duration::from_secs(10));
    eprintln!(
        "an alias added was sayable after {:.2} s",
        followed.as_secs_f64()
    );
    s.ask("turn off the cooking light");
    assert_eq!(state(&ha, "light.kitchen_lights")["state"], "off");

    // Home Assistant away: the tools stay, a call says the house cannot be reached
    ha.stop();
    let turn = s.ask("turn on the night light");
    assert!(
        turn.reply == "I couldn't reach the bed light in the bedroom: the house isn't answering.",
        "{turn:#?}"
    );
    ha.restart().unwrap();
    s.ask("turn off the night light");
    assert_eq!(state(&ha, "light.bed_light")["state"], "off");
    s.rt.block_on(s.text.stop());
}
