//! `discovery::Discovery` fed the messages of `tests/corpus/discovery/` as a broker delivers
//! them (`README.md` there says where each payload's shape comes from): the things Tasmota,
//! ESPHome, Zigbee2MQTT and a device-based payload announce, the messages their commands make,
//! their states as sentences, removals, and what is left out and why.

use std::collections::HashMap;

use hearth_house::discovery::{self, Change, Component, Discovery, Left, Platform};
use hearth_house::{Ability, Command, Control, HouseError, Kind, Source, Thing};
use serde_json::json;

/// The messages of a corpus file: a `> TOPIC` line, then its payload line (empty for an
/// empty payload); `#` lines between messages are comments.
fn messages(file: &str) -> Vec<(String, String)> {
    let path = format!(
        "{}/tests/corpus/discovery/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        if let Some(topic) = line.strip_prefix("> ") {
            let payload = lines
                .next()
                .unwrap_or_else(|| panic!("{file}: {topic} has no payload line"));
            out.push((topic.to_owned(), payload.to_owned()));
        } else {
            assert!(line.is_empty() || line.starts_with('#'), "{file}: {line}");
        }
    }
    out
}

/// A broker's retained and live messages, taken in: the discovery, the last payload of every
/// other topic, and what each message did.
struct House {
    discovery: Discovery,
    state: HashMap<String, Vec<u8>>,
    changes: Vec<(String, Result<Change, String>)>,
}

impl House {
    fn new() -> House {
        House {
            discovery: Discovery::default(),
            state: HashMap::new(),
            changes: Vec::new(),
        }
    }

    fn load(files: &[&str]) -> House {
        let mut house = House::new();
        for file in files {
            house.take(file);
        }
        house
    }

    fn take(&mut self, file: &str) {
        for (topic, payload) in messages(file) {
            let change = self.discovery.message(&topic, payload.as_bytes());
            if change.as_ref().ok() == Some(&Change::NotDiscovery) {
                self.state
                    .insert(topic.clone(), payload.clone().into_bytes());
            }
            self.changes
                .push((topic, change.map_err(|e| e.to_string())));
        }
    }

    fn things(&self) -> Vec<Thing> {
        self.discovery.things().0
    }

    fn left(&self) -> Vec<Left> {
        self.discovery.things().1
    }

    fn said(&self, thing: &Thing) -> String {
        discovery::reading(component(thing), |t| self.state.get(t).map(Vec::as_slice)).unwrap()
    }
}

fn thing<'a>(things: &'a [Thing], id: &str) -> &'a Thing {
    things.iter().find(|t| t.id == id).unwrap_or_else(|| {
        let ids: Vec<&str> = things.iter().map(|t| t.id.as_str()).collect();
        panic!("no thing {id}; there are {ids:?}")
    })
}

fn component(thing: &Thing) -> &Component {
    match &thing.control {
        Control::Mqtt(component) => component,
        other => panic!("{} is not a discovered component: {other:?}", thing.id),
    }
}

fn sent(thing: &Thing, command: Command) -> (String, String) {
    let m = discovery::message(component(thing), &command)
        .unwrap_or_else(|e| panic!("{command:?} on {}: {e}", thing.id));
    (m.topic, m.payload)
}

fn refused(thing: &Thing, command: Command) -> String {
    discovery::message(component(thing), &command)
        .expect_err("refused")
        .to_string()
}

fn pair(topic: &str, payload: &str) -> (String, String) {
    (topic.to_owned(), payload.to_owned())
}

/// (name, aliases, kind, area, class, abilities) of a thing.
type Seen<'a> = (
    &'a str,
    Vec<&'a str>,
    Kind,
    Option<&'a str>,
    Option<&'a str>,
    &'a [Ability],
);

fn seen(t: &Thing) -> Seen<'_> {
    (
        t.name.as_str(),
        t.aliases.iter().map(String::as_str).collect(),
        t.kind,
        t.area.as_ref().map(|a| a.name.as_str()),
        t.class.as_deref(),
        t.abilities.as_slice(),
    )
}

#[test]
fn the_tasmota_plug_and_shutter_are_things_named_as_home_assistant_names_them() {
    use Ability::*;
    let house = House::load(&["tasmota.txt"]);
    let things = house.things();
    let ids: Vec<&str> = things.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "5C3B1A_SHT_1",
            "5C3B1A_status",
            "8E4F2A_ENERGY_Power",
            "8E4F2A_ENERGY_Total",
            "8E4F2A_ENERGY_Voltage",
            "8E4F2A_status",
            "8E4F2A_RL_1"
        ],
        "in the order of their config topics"
    );
    // the relay's device has only its id; the status sensor names it, as in Home
    // Assistant's device registry
    assert_eq!(
        seen(thing(&things, "8E4F2A_RL_1")),
        (
            "kettle plug kettle",
            vec!["kettle"],
            Kind::Switch,
            None,
            None,
            &[OnOff, Read][..]
        )
    );
    assert_eq!(
        seen(thing(&things, "8E4F2A_ENERGY_Power")),
        (
            "kettle plug energy power",
            vec![],
            Kind::Sensor,
            None,
            Some("power"),
            &[Read][..]
        )
    );
    assert_eq!(
        seen(thing(&things, "5C3B1A_SHT_1")),
        (
            "study blind",
            vec![],
            Kind::Cover,
            None,
            None,
            &[OpenClose, Stop, Position, Read][..]
        )
    );
    for t in &things {
        assert_eq!(t.source, Source::Discovery);
        assert_eq!(
            component(t).origin(),
            None,
            "Tasmota's legacy discovery sends none"
        );
    }
    // the emptied topics of absent switches and relays change nothing; states are not
    // discovery
    let changes: Vec<(&str, &Result<Change, String>)> =
        house.changes.iter().map(|(t, c)| (t.as_str(), c)).collect();
    assert_eq!(
        changes[0],
        (
            "homeassistant/device_automation/8E4F2A_SW_1_TOGGLE/config",
            &Ok(Change::Unchanged)
        )
    );
    assert_eq!(
        changes[2],
        (
            "homeassistant/sensor/8E4F2A_ENERGY_Total/config",
            &Ok(Change::Added)
        )
    );
    assert_eq!(
        changes.last().copied(),
        Some(("stat/tasmota_5C3B1A/SHUTTER1", &Ok(Change::NotDiscovery)))
    );
    assert!(house.left().is_empty(), "{:?}", house.left());
}

#[test]
fn the_tasmota_commands_are_its_own_topics_and_payloads() {
    let house = House::load(&["tasmota.txt"]);
    let things = house.things();
    let kettle = thing(&things, "8E4F2A_RL_1");
    assert_eq!(
        sent(kettle, Command::On),
        pair("cmnd/tasmota_8E4F2A/POWER", "ON")
    );
    assert_eq!(
        sent(kettle, Command::Off),
        pair("cmnd/tasmota_8E4F2A/POWER", "OFF")
    );
    assert_eq!(
        refused(kettle, Command::Brightness(40)),
        "kettle plug kettle cannot be dimmed"
    );
    let blind = thing(&things, "5C3B1A_SHT_1");
    assert_eq!(
        sent(blind, Command::Open),
        pair("cmnd/tasmota_5C3B1A/Backlog", "ShutterOpen1")
    );
    assert_eq!(sent(blind, Command::Close).1, "ShutterClose1");
    assert_eq!(sent(blind, Command::Stop).1, "ShutterStop1");
    assert_eq!(
        sent(blind, Command::Position(25)),
        pair("cmnd/tasmota_5C3B1A/ShutterPosition1", "25")
    );
    assert!(refused(blind, Command::Position(120)).contains("a percentage from 0 to 100"));
    let power = thing(&things, "8E4F2A_ENERGY_Power");
    assert_eq!(
        refused(power, Command::On),
        "kettle plug energy power cannot turn on"
    );
}

#[test]
fn the_tasmota_states_are_read_through_their_templates() {
    let house = House::load(&["tasmota.txt"]);
    let things = house.things();
    let said = |id| house.said(thing(&things, id));
    assert_eq!(said("8E4F2A_RL_1"), "The kettle plug kettle is on.");
    assert_eq!(
        said("8E4F2A_ENERGY_Power"),
        "The kettle plug energy power is 1850 W."
    );
    assert_eq!(
        said("8E4F2A_ENERGY_Total"),
        "The kettle plug energy total is 12.35 kWh."
    );
    assert_eq!(said("8E4F2A_status"), "The kettle plug status is 70 %.");
    assert_eq!(said("5C3B1A_SHT_1"), "The study blind is 40 % open.");
    assert_eq!(
        component(thing(&things, "5C3B1A_SHT_1")).state_topics(),
        ["stat/tasmota_5C3B1A/SHUTTER1"]
    );
    assert_eq!(
        component(thing(&things, "8E4F2A_RL_1")).state_topics(),
        ["tele/tasmota_8E4F2A/STATE"]
    );
}

#[test]
fn the_esphome_light_and_sensors_are_things_in_their_suggested_areas() {
    use Ability::*;
    let house = House::load(&["esphome.txt"]);
    let things = house.things();
    assert_eq!(
        seen(thing(&things, "ESPlightkitchen_light")),
        (
            "kitchen light",
            vec![],
            Kind::Light,
            Some("kitchen"),
            None,
            &[OnOff, Brightness, Read][..]
        )
    );
    assert_eq!(
        seen(thing(&things, "ESPsensortemperature")),
        (
            "hall sensor temperature",
            vec!["temperature"],
            Kind::Sensor,
            Some("hallway"),
            Some("temperature"),
            &[Read][..]
        )
    );
    assert_eq!(
        seen(thing(&things, "ESPbinary_sensorfront_door")),
        (
            "hall sensor front door",
            vec!["front door"],
            Kind::Sensor,
            Some("hallway"),
            Some("door"),
            &[Read][..]
        )
    );
    assert_eq!(things.len(), 4);
    assert!(house.left().is_empty());
}

#[test]
fn the_esphome_json_light_takes_json_commands() {
    let house = House::load(&["esphome.txt"]);
    let things = house.things();
    let light = thing(&things, "ESPlightkitchen_light");
    let topic = "kitchen-light/light/kitchen_light/command";
    assert_eq!(sent(light, Command::On), pair(topic, r#"{"state":"ON"}"#));
    assert_eq!(sent(light, Command::Off), pair(topic, r#"{"state":"OFF"}"#));
    // brightness_scale is Home Assistant's default, 255: ESPHome sends none
    assert_eq!(
        sent(light, Command::Brightness(50)),
        pair(topic, r#"{"state":"ON","brightness":128}"#)
    );
    assert_eq!(
        sent(light, Command::Brightness(1)).1,
        r#"{"state":"ON","brightness":3}"#
    );
    assert_eq!(sent(light, Command::Brightness(0)).1, r#"{"state":"OFF"}"#);
    // a discovered light takes a level, not a step
    assert!(refused(light, Command::BrightnessStep(25)).contains("brighter or dimmer"));
    assert_eq!(
        refused(light, Command::Color("red".into())),
        "kitchen light cannot change colour"
    );
    assert_eq!(
        refused(light, Command::ColorTemperature(2700)),
        "kitchen light cannot change its colour temperature"
    );
}

#[test]
fn the_esphome_states_are_worded() {
    let house = House::load(&["esphome.txt"]);
    let things = house.things();
    let said = |id| house.said(thing(&things, id));
    assert_eq!(said("ESPlightkitchen_light"), "The kitchen light is on.");
    assert_eq!(
        said("ESPsensortemperature"),
        "The hall sensor temperature is 21.3 °C."
    );
    assert_eq!(
        said("ESPsensorhumidity"),
        "The hall sensor humidity is 45.2 %."
    );
    assert_eq!(
        said("ESPbinary_sensorfront_door"),
        "The hall sensor front door is closed."
    );
}

#[test]
fn zigbee2mqtts_announcements_are_things_with_its_full_keys_and_templates() {
    use Ability::*;
    let house = House::load(&["zigbee2mqtt.txt"]);
    let things = house.things();
    let ids: Vec<&str> = things.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "0x0014d2fffe3a5b71_climate_zigbee2mqtt",
            "0x588e81fffe1d2c3f_cover_zigbee2mqtt",
            "0x000b57fffe8e4d10_lock_zigbee2mqtt",
            "0x00158d00045b6c7d_temperature_zigbee2mqtt"
        ]
    );
    let radiator = thing(&things, "0x0014d2fffe3a5b71_climate_zigbee2mqtt");
    assert_eq!(
        seen(radiator),
        (
            "bedroom radiator",
            vec![],
            Kind::Climate,
            None,
            None,
            &[TargetTemperature, Mode, Read][..]
        )
    );
    assert_eq!(radiator.modes, ["heat"]);
    assert_eq!(component(radiator).origin(), Some("Zigbee2MQTT"));
    assert_eq!(
        component(radiator).state_topics(),
        ["zigbee2mqtt/bedroom/Radiator"],
        "temperature, setpoint and mode all come on the device's state topic"
    );
    let door = thing(&things, "0x000b57fffe8e4d10_lock_zigbee2mqtt");
    assert_eq!(seen(door).0, "front door");
    assert_eq!(door.abilities, [Lock, Read]);
    assert!(door.guards_a_way_in());
    let blind = thing(&things, "0x588e81fffe1d2c3f_cover_zigbee2mqtt");
    assert_eq!(blind.abilities, [OpenClose, Stop, Position, Read]);
    assert_eq!(
        seen(thing(&things, "0x00158d00045b6c7d_temperature_zigbee2mqtt")).1,
        ["temperature"]
    );
    // its diagnostic, disabled link quality sensor is left out
    let left: Vec<String> = house.left().iter().map(ToString::to_string).collect();
    assert_eq!(
        left,
        ["homeassistant/sensor/0x00158d00045b6c7d/linkquality/config: a diagnostic entity (`entity_category`): not something a person asks for"]
    );
}

#[test]
fn zigbee2mqtts_commands_follow_its_topics_and_its_position_template() {
    let house = House::load(&["zigbee2mqtt.txt"]);
    let things = house.things();
    let radiator = thing(&things, "0x0014d2fffe3a5b71_climate_zigbee2mqtt");
    // rounded to its temp_step 0.5, within min_temp "5" and max_temp "35" (strings)
    assert_eq!(
        sent(radiator, Command::TargetTemperature(21.3)),
        pair(
            "zigbee2mqtt/bedroom/Radiator/set/occupied_heating_setpoint",
            "21.5"
        )
    );
    assert_eq!(sent(radiator, Command::TargetTemperature(19.0)).1, "19");
    assert_eq!(
        refused(radiator, Command::TargetTemperature(40.0)),
        "bedroom radiator's `temperature` takes a number from 5 to 35, not 40"
    );
    assert_eq!(
        sent(radiator, Command::Mode("Heat".into())),
        pair("zigbee2mqtt/bedroom/Radiator/set/system_mode", "heat")
    );
    assert_eq!(
        refused(radiator, Command::Mode("cool".into())),
        r#"bedroom radiator's `mode` takes one of heat, not "cool""#
    );
    let door = thing(&things, "0x000b57fffe8e4d10_lock_zigbee2mqtt");
    // payload_lock and payload_unlock are Home Assistant's defaults: Zigbee2MQTT sends none
    assert_eq!(
        sent(door, Command::Lock),
        pair("zigbee2mqtt/Front Door/set", "LOCK")
    );
    assert_eq!(sent(door, Command::Unlock).1, "UNLOCK");
    let blind = thing(&things, "0x588e81fffe1d2c3f_cover_zigbee2mqtt");
    assert_eq!(
        sent(blind, Command::Position(30)),
        pair("zigbee2mqtt/bedroom/Blind/set", r#"{ "position": 30 }"#)
    );
    assert_eq!(
        sent(blind, Command::Open),
        pair("zigbee2mqtt/bedroom/Blind/set", "OPEN")
    );
    assert!(component(blind).ignored().is_empty());
}

#[test]
fn zigbee2mqtts_states_are_read_from_the_device_state_topic() {
    let house = House::load(&["zigbee2mqtt.txt"]);
    let things = house.things();
    let said = |id| house.said(thing(&things, id));
    assert_eq!(
        said("0x0014d2fffe3a5b71_climate_zigbee2mqtt"),
        "The bedroom radiator is set to 21 degrees; it is 19.5 degrees now."
    );
    assert_eq!(
        said("0x000b57fffe8e4d10_lock_zigbee2mqtt"),
        "The front door is locked.",
        "Zigbee2MQTT's state_locked is its LOCK"
    );
}

#[test]
fn the_device_payloads_components_share_its_device_state_topic_and_base_topic() {
    use Ability::*;
    let house = House::load(&["device.txt"]);
    let things = house.things();
    // the documentation's sensors have no name: named by their device class
    assert_eq!(
        seen(thing(&things, "temp01ae_t")),
        (
            "kitchen temperature",
            vec!["temperature"],
            Kind::Sensor,
            None,
            Some("temperature"),
            &[Read][..]
        )
    );
    assert_eq!(
        component(thing(&things, "temp01ae_h")).state_topics(),
        ["sensorBedroom/state"]
    );
    assert_eq!(
        house.said(thing(&things, "temp01ae_t")),
        "The kitchen temperature is 22.5 °C."
    );
    assert_eq!(
        house.said(thing(&things, "temp01ae_h")),
        "The kitchen humidity is 51 %."
    );
    let door = thing(&things, "garage-door-cover");
    assert_eq!(
        seen(door),
        (
            "garage door",
            vec![],
            Kind::Cover,
            Some("garage"),
            Some("garage"),
            &[OpenClose, Stop, Read][..]
        )
    );
    assert!(door.guards_a_way_in(), "a garage door waits for a yes");
    assert_eq!(sent(door, Command::Open), pair("garage/door/set", "OPEN"));
    assert_eq!(house.said(door), "The garage door is closed.");
    let light = thing(&things, "garage-door-light");
    assert_eq!(seen(light).0, "garage door light");
    assert_eq!(seen(light).1, ["light"]);
    assert_eq!(
        sent(light, Command::On),
        pair("garage/door/light/set", "ON")
    );
    assert_eq!(house.said(light), "The garage door light is off.");
    assert_eq!(
        house.discovery.state_topics(),
        [
            "garage/door/light/state",
            "garage/door/state",
            "sensorBedroom/state"
        ]
    );
}

#[test]
fn empty_payloads_and_updates_remove_what_they_announced() {
    let mut house = House::load(&[
        "tasmota.txt",
        "esphome.txt",
        "zigbee2mqtt.txt",
        "device.txt",
    ]);
    let before = house.things().len();
    let start = house.changes.len();
    house.take("removals.txt");
    let changes: Vec<&Result<Change, String>> =
        house.changes[start..].iter().map(|(_, c)| c).collect();
    assert_eq!(
        changes,
        [
            &Ok(Change::Updated),
            &Ok(Change::Removed),
            &Ok(Change::Removed),
            &Ok(Change::Removed),
            &Ok(Change::Unchanged),
        ]
    );
    let things = house.things();
    let ids: Vec<&str> = things.iter().map(|t| t.id.as_str()).collect();
    for gone in [
        "temp01ae_h",
        "garage-door-cover",
        "garage-door-light",
        "ESPbinary_sensorfront_door",
        "8E4F2A_RL_1",
    ] {
        assert!(!ids.contains(&gone), "{gone} is still there");
    }
    assert!(ids.contains(&"temp01ae_t"));
    assert_eq!(things.len(), before - 5);
    // the same payload again changes nothing
    let (topic, payload) = messages("tasmota.txt")
        .into_iter()
        .find(|(t, _)| t == "homeassistant/cover/5C3B1A_SHT_1/config")
        .unwrap();
    assert_eq!(
        house.discovery.message(&topic, payload.as_bytes()).unwrap(),
        Change::Unchanged
    );
}

#[test]
fn negatives_are_errors_or_left_out_with_their_reasons() {
    let house = House::load(&["tasmota.txt", "negatives.txt"]);
    let changes: Vec<(&str, &Result<Change, String>)> =
        house.changes.iter().map(|(t, c)| (t.as_str(), c)).collect();
    let change = |topic: &str| {
        changes
            .iter()
            .find(|(t, _)| *t == topic)
            .map(|(_, c)| (*c).clone())
            .unwrap()
    };
    assert_eq!(change("homeassistant/status"), Ok(Change::NotDiscovery));
    assert_eq!(
        change("homeassistant/switch/bad id/config"),
        Ok(Change::NotDiscovery)
    );
    let e = change("homeassistant/switch/broken/config").unwrap_err();
    assert!(
        e.starts_with("homeassistant/switch/broken/config: expected a JSON object of a component's configuration, but the payload is not JSON"),
        "{e}"
    );
    assert_eq!(
        change("homeassistant/switch/array/config"),
        Err("homeassistant/switch/array/config: expected a JSON object of a component's configuration, got an array".to_owned())
    );
    let left: Vec<String> = house.left().iter().map(ToString::to_string).collect();
    assert_eq!(
        left,
        [
            "homeassistant/camera/porch/config: hearth has no tools for MQTT camera components yet",
            "homeassistant/device/oddball/config (nop): a component without its `platform` (`p`)",
            r#"homeassistant/fan/attic/config: no command topic hearth can use and no state topic: nothing to do or read; `command_template`: its template "{{ value | lower }}" is more than the value put in: it needs Home Assistant's Jinja engine; hearth cannot switch it"#,
            "homeassistant/light/shelf/config: a light needs a `command_topic` (Home Assistant requires one); this one has none",
            "homeassistant/light/strip/config: a light of the template schema: its commands are templates hearth cannot render without Home Assistant's Jinja engine",
            r#"homeassistant/sensor/doorbell/config: `value_template`: its template "{{ value_json.time | timestamp_local }}" is more than `value_json.KEY`: it needs Home Assistant's Jinja engine"#,
            "homeassistant/teapot/kitchen/config: `teapot` is not a platform Home Assistant's MQTT discovery knows",
            r#"homeassistant/switch/copy/config: another component has the unique id "8E4F2A_RL_1"; the first keeps it"#,
            "homeassistant/switch/nameless/config: no name a person could say: give it or its device a name",
        ]
    );
    let things = house.things();
    // a command template Home Assistant would evaluate drops the command, not the reading
    let heater = thing(&things, "heater");
    assert_eq!(heater.abilities, [Ability::Read]);
    assert_eq!(
        component(heater).ignored(),
        [
            r#"`command_template`: its template "{{ 1 if value == 'ON' else 0 }}" is more than the value put in: it needs Home Assistant's Jinja engine; hearth cannot switch it"#
        ]
    );
    assert_eq!(refused(heater, Command::On), "heater cannot turn on");
    // the device payload's good component is kept beside the bad one
    let ok = thing(&things, "odd-ok");
    assert_eq!(
        (ok.name.as_str(), ok.aliases.as_slice()),
        ("oddball ok", &["ok".to_owned()][..])
    );
    assert_eq!(sent(ok, Command::On), pair("odd/ok/set", "ON"));
    // and the kettle keeps its unique id
    assert_eq!(thing(&things, "8E4F2A_RL_1").name, "kettle plug kettle");
}

#[test]
fn every_config_topic_is_a_thing_or_left_out() {
    let house = House::load(&[
        "tasmota.txt",
        "esphome.txt",
        "zigbee2mqtt.txt",
        "device.txt",
        "negatives.txt",
    ]);
    let (things, left) = house.discovery.things();
    let mut announced: Vec<String> = Vec::new();
    for (topic, change) in &house.changes {
        if change == &Ok(Change::Added) && !announced.contains(topic) {
            announced.push(topic.clone());
        }
    }
    let mut accounted: Vec<String> = things
        .iter()
        .map(|t| component(t).config_topic().to_owned())
        .chain(left.iter().map(|l| l.topic.clone()))
        .collect();
    accounted.sort();
    accounted.dedup();
    announced.sort();
    assert_eq!(accounted, announced);
}

#[test]
fn what_has_not_reported_and_what_does_not_parse() {
    let mut house = House::load(&["esphome.txt", "zigbee2mqtt.txt"]);
    house.state.clear();
    let things = house.things();
    assert_eq!(
        house.said(thing(&things, "ESPlightkitchen_light")),
        "The kitchen light has not reported its state yet."
    );
    house.state.insert(
        "kitchen-light/light/kitchen_light/state".into(),
        b"ON".to_vec(),
    );
    let light = component(thing(&things, "ESPlightkitchen_light"));
    let e = discovery::reading(light, |t| house.state.get(t).map(Vec::as_slice)).unwrap_err();
    assert!(
        matches!(e, HouseError::NotJson { ref topic, .. } if topic == "kitchen-light/light/kitchen_light/state")
    );
    // a value the component does not list is left unsaid
    house.state.insert(
        "zigbee2mqtt/Front Door".into(),
        br#"{"state":"JAMMED?"}"#.to_vec(),
    );
    assert_eq!(
        house.said(thing(&things, "0x000b57fffe8e4d10_lock_zigbee2mqtt")),
        "The front door has not reported its state yet."
    );
}

#[test]
fn abbreviations_the_base_topic_and_defaults_as_home_assistant_reads_them() {
    let mut d = Discovery::new("custom/prefix/");
    assert_eq!(d.prefix(), "custom/prefix");
    let fan = json!({
        "~": "den/fan", "name": "Den Fan", "uniq_id": "den-fan",
        "cmd_t": "~/power/set", "stat_t": "~/state", "stat_val_tpl": "{{ value_json.power }}",
        "pct_cmd_t": "~/speed/set", "spd_rng_min": 1, "spd_rng_max": 3,
        "dev": {"ids": ["den-fan-1"], "sa": "Den"}
    });
    assert_eq!(
        d.message("homeassistant/fan/den/config", fan.to_string().as_bytes())
            .unwrap(),
        Change::NotDiscovery,
        "another prefix"
    );
    assert_eq!(
        d.message("custom/prefix/fan/den/config", fan.to_string().as_bytes())
            .unwrap(),
        Change::Added
    );
    let light = json!({
        "name": "Desk", "cmd_t": "desk/set", "bri_cmd_t": "desk/bri", "bri_scl": 100,
        "clr_temp_cmd_t": "desk/ct", "xy_cmd_t": "desk/xy", "stat_t": "desk/state"
    });
    d.message(
        "custom/prefix/light/node1/desk/config",
        light.to_string().as_bytes(),
    )
    .unwrap();
    let (things, left) = d.things();
    assert!(left.is_empty(), "{left:?}");
    let fan = thing(&things, "den-fan");
    assert_eq!(
        (
            fan.name.as_str(),
            fan.area.as_ref().map(|a| a.name.as_str())
        ),
        ("den fan", Some("den"))
    );
    assert_eq!(
        fan.abilities,
        [Ability::OnOff, Ability::Speed, Ability::Read]
    );
    assert_eq!(sent(fan, Command::On), pair("den/fan/power/set", "ON"));
    // 1..3 as Home Assistant ranges a percentage: ceil(3 × p / 100)
    assert_eq!(
        sent(fan, Command::Speed(50)),
        pair("den/fan/speed/set", "2")
    );
    assert_eq!(sent(fan, Command::Speed(100)).1, "3");
    assert_eq!(sent(fan, Command::Speed(0)).1, "0");
    assert_eq!(component(fan).platform(), Platform::Fan);
    assert_eq!(component(fan).state_topics(), ["den/fan/state"]);
    let desk = thing(&things, "light node1 desk");
    assert_eq!(
        desk.abilities,
        [
            Ability::OnOff,
            Ability::Brightness,
            Ability::ColorTemperature,
            Ability::Color,
            Ability::Read
        ]
    );
    assert_eq!(sent(desk, Command::Brightness(40)), pair("desk/bri", "40"));
    assert_eq!(sent(desk, Command::Brightness(0)), pair("desk/set", "OFF"));
    assert_eq!(
        sent(desk, Command::ColorTemperature(4000)),
        pair("desk/ct", "250")
    );
    assert_eq!(
        sent(desk, Command::Color("red".into())),
        pair("desk/xy", "0.7006,0.2993")
    );
    assert!(refused(desk, Command::Color("mauve".into())).contains("one of red, orange"));
    let said = |payload: &[u8]| {
        discovery::reading(component(desk), |t| (t == "desk/state").then_some(payload)).unwrap()
    };
    assert_eq!(said(b"ON"), "The desk is on.");
    assert_eq!(said(b"OFF"), "The desk is off.");
    assert_eq!(
        said(b"unavailable"),
        "The desk has not reported its state yet."
    );
}
