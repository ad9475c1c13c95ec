//! Home Assistant's registries as a real Home Assistant 2024.3.3 answers them, with the test
//! house set up (`tests/corpus/homeassistant/README.md`), read into things.

use hearth_house::homeassistant::{things, Answers, Found};
use hearth_house::{Ability, Control, Kind, Source};
use serde_json::{json, Value};

fn corpus() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/homeassistant/demo-2024.3.3.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn answers(corpus: &Value) -> Answers {
    Answers {
        states: corpus["get_states"].clone(),
        entities: corpus["config/entity_registry/get_entries"].clone(),
        devices: corpus["config/device_registry/list"].clone(),
        areas: corpus["config/area_registry/list"].clone(),
        exposed: corpus["homeassistant/expose_entity/list"].clone(),
    }
}

fn found() -> Found {
    things(&answers(&corpus())).unwrap()
}

#[test]
fn only_what_is_exposed_becomes_a_thing() {
    let found = found();
    let ids: Vec<&str> = found.things.iter().map(|t| t.id.as_str()).collect();
    assert!(
        !ids.contains(&"light.living_room_rgbww_lights"),
        "unexposed"
    );
    assert!(!ids.contains(&"sun.sun"));
    assert!(ids.contains(&"media_player.walkman"), "exposed by id");
    assert!(ids.contains(&"lock.front_door"));
    // every exposed entity is a thing or left out with a reason: nothing silently
    let exposed = corpus()["homeassistant/expose_entity/list"]["exposed_entities"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v["conversation"] == json!(true))
        .count();
    assert_eq!(found.things.len() + found.left.len(), exposed);
    let left: Vec<(&str, &str)> = found
        .left
        .iter()
        .map(|l| (l.entity_id.as_str(), l.reason.as_str()))
        .collect();
    assert!(left.contains(&(
        "humidifier.humidifier",
        "hearth has no tools for Home Assistant's humidifier entities yet"
    )));
}

#[test]
fn names_aliases_and_areas_are_as_people_say_them() {
    let found = found();
    let thing = |id: &str| found.things.iter().find(|t| t.id == id).unwrap();
    let bed = thing("light.bed_light");
    assert_eq!(bed.source, Source::HomeAssistant);
    assert_eq!(bed.kind, Kind::Light);
    assert_eq!(
        (bed.name.as_str(), bed.aliases.as_slice()),
        ("bed light", &["night light".to_string()][..])
    );
    assert_eq!(bed.area.as_ref().unwrap().name, "bedroom");
    let ceiling = thing("light.ceiling_lights");
    assert_eq!(
        ceiling.area.as_ref().unwrap().aliases,
        vec!["lounge".to_string()]
    );
    assert_eq!(thing("climate.heatpump").name, "heat pump");
    assert_eq!(
        thing("light.entrance_color_white_lights").aliases,
        vec!["porch light".to_string()]
    );
    assert_eq!(
        thing("lock.front_door").area,
        None,
        "not in the registry: no area"
    );
    assert_eq!(
        thing("cover.garage_door").control,
        Control::HomeAssistant {
            entity_id: "cover.garage_door".into()
        }
    );
    let areas: Vec<&str> = found.areas.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        areas,
        [
            "bedroom",
            "garage",
            "hallway",
            "kitchen",
            "living room",
            "office"
        ]
    );
}

#[test]
fn abilities_follow_each_entitys_supported_features() {
    let found = found();
    let thing = |id: &str| found.things.iter().find(|t| t.id == id).unwrap();
    let garage = thing("cover.garage_door");
    assert!(garage.can(Ability::OpenClose) && !garage.can(Ability::Position));
    assert!(garage.guards_a_way_in(), "a garage door waits for a yes");
    assert!(!thing("cover.kitchen_window").guards_a_way_in());
    assert!(thing("cover.hall_window").can(Ability::Position));
    let walkman = thing("media_player.walkman");
    assert!(walkman.can(Ability::PlayPause) && walkman.can(Ability::Volume));
    assert!(thing("climate.heatpump").can(Ability::TargetTemperature));
    assert!(
        !thing("climate.ecobee").can(Ability::TargetTemperature),
        "a range only"
    );
    assert_eq!(thing("climate.ecobee").modes[0], "off");
    assert!(!thing("fan.preset_only_limited_fan").can(Ability::Speed));
    assert!(thing("light.office_rgbw_lights").can(Ability::Color));
    assert!(!thing("light.office_rgbw_lights").can(Ability::ColorTemperature));
    assert_eq!(
        thing("sensor.outside_temperature").class.as_deref(),
        Some("temperature")
    );
}

#[test]
fn answers_of_another_shape_are_errors_naming_the_command() {
    let mut bad = answers(&corpus());
    bad.states = json!({"not": "a list"});
    let e = things(&bad).unwrap_err().to_string();
    assert!(
        e.starts_with("get_states: expected an array of states"),
        "{e}"
    );
    let mut bad = answers(&corpus());
    bad.areas = json!([{"area_id": "x", "name": 5}]);
    let e = things(&bad).unwrap_err().to_string();
    assert!(e.starts_with("config/area_registry/list: "), "{e}");
    let mut bad = answers(&corpus());
    bad.exposed = json!([]);
    let e = things(&bad).unwrap_err().to_string();
    assert!(e.contains("exposed_entities"), "{e}");
}

#[test]
fn the_registry_listing_without_aliases_still_gives_names_and_areas() {
    let corpus = corpus();
    let mut listing = answers(&corpus);
    listing.entities = corpus["config/entity_registry/list"].clone();
    let found = things(&listing).unwrap();
    let bed = found
        .things
        .iter()
        .find(|t| t.id == "light.bed_light")
        .unwrap();
    assert!(bed.aliases.is_empty());
    assert_eq!(bed.area.as_ref().unwrap().name, "bedroom");
}
