//! The real Home Assistant harness: it starts, the test house is set up in it, and after a
//! restart the token still works and the house is still there. A missing venv fails the test
//! with the fix (`scripts/setup --test`); locally, `HEARTH_SKIP_REAL_MODEL=1` skips it (CI
//! never sets it).

use std::time::Instant;

use hearth_testkit::homeassistant::{house, HomeAssistant, House};
use hearth_testkit::model::or_skip;
use hearth_testkit::venv::{require, Venv};
use serde_json::{json, Value};

/// The registry entry of `entity_id` (`config/entity_registry/get_entries`; null when it is
/// not in the registry).
fn entry(ha: &HomeAssistant, entity_id: &str) -> Value {
    let got = ha
        .ws(json!({"type": "config/entity_registry/get_entries", "entity_ids": [entity_id]}))
        .unwrap_or_else(|e| panic!("{e}"));
    got[entity_id].clone()
}

/// Whether `entity_id` is exposed to the conversation agent.
fn exposed(ha: &HomeAssistant, entity_id: &str) -> Option<bool> {
    let got = ha
        .ws(json!({"type": "homeassistant/expose_entity/list"}))
        .unwrap_or_else(|e| panic!("{e}"));
    got["exposed_entities"][entity_id]["conversation"].as_bool()
}

/// The house as it should be: an area alias, an entity's area and alias, the unexposed light,
/// a media player exposed by id, a state over REST.
fn check_house(ha: &HomeAssistant) {
    let areas = ha
        .ws(json!({"type": "config/area_registry/list"}))
        .unwrap_or_else(|e| panic!("{e}"));
    let office = areas
        .as_array()
        .and_then(|a| a.iter().find(|a| a["area_id"] == "office"))
        .unwrap_or_else(|| panic!("no office area in {areas}"));
    assert_eq!(office["aliases"], json!(["study"]));
    let living_room = areas
        .as_array()
        .and_then(|a| a.iter().find(|a| a["area_id"] == "living_room"))
        .unwrap_or_else(|| panic!("no living_room area in {areas}"));
    assert_eq!(living_room["aliases"], json!(["lounge"]));
    assert_eq!(
        areas.as_array().map(Vec::len),
        Some(house().areas.len()),
        "no area twice: {areas}"
    );

    let bed = entry(ha, "light.bed_light");
    assert_eq!(bed["area_id"], "bedroom");
    assert_eq!(bed["aliases"], json!(["night light"]));
    assert_eq!(exposed(ha, "light.bed_light"), Some(true));

    assert_eq!(entry(ha, House::UNEXPOSED)["area_id"], "living_room");
    assert_eq!(exposed(ha, House::UNEXPOSED), Some(false));

    assert_eq!(entry(ha, "media_player.walkman"), Value::Null);
    assert_eq!(exposed(ha, "media_player.walkman"), Some(true));

    let state = ha
        .state("media_player.walkman")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state["entity_id"], "media_player.walkman");
    assert!(ha.state("light.no_such_light").is_err());
}

#[test]
fn home_assistant_starts_with_the_test_house_and_restarts() {
    let found = require(Venv::HomeAssistant, "homeassistant");
    let fix = "run scripts/setup --test: it installs homeassistant==2024.3.3";
    if or_skip(found, "a real Home Assistant test", fix).is_none() {
        return;
    }
    let t = Instant::now();
    let mut ha = HomeAssistant::start().unwrap_or_else(|e| panic!("{e}"));
    let started = t.elapsed();
    let token_mode = std::fs::metadata(ha.token_file())
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", ha.token_file().display()));
    assert_eq!(token_mode, 0o600);
    assert!(ha.config_dir().join("configuration.yaml").is_file());
    let config = ha.ws(json!({"type": "get_config"})).unwrap();
    assert_eq!(config["version"], hearth_testkit::homeassistant::VERSION);
    check_house(&ha);
    let err = ha.ws(json!({"type": "no/such_command"})).unwrap_err();
    assert!(err.contains("unknown_command"), "{err}");

    let t = Instant::now();
    let url = ha.url().to_string();
    let token = ha.token().to_string();
    ha.stop();
    let stopped = t.elapsed();
    assert!(!ha.is_running());
    assert!(
        ha.state("light.bed_light").is_err(),
        "it answers while stopped"
    );
    let t = Instant::now();
    ha.restart().unwrap_or_else(|e| panic!("{e}"));
    let restarted = t.elapsed();
    assert_eq!((ha.url(), ha.token()), (url.as_str(), token.as_str()));
    check_house(&ha);
    eprintln!(
        "Home Assistant {}: started with the house in {started:.1?}, stopped in {stopped:.1?}, \
         restarted in {restarted:.1?}",
        hearth_testkit::homeassistant::VERSION
    );
}
