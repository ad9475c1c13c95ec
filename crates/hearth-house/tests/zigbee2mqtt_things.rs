//! `zigbee2mqtt::things`, `message` and `reading` on the bridge payloads made from
//! zigbee-herdsman-converters' real definitions (`tests/corpus/zigbee2mqtt/README.md`): what
//! each device may do, the `/set` message each command makes, and its state as a sentence.

use hearth_house::zigbee2mqtt::{self, Found, SkipReason};
use hearth_house::{Ability, Access, Command, Control, Device, HouseError, Kind, Source, Thing};
use serde_json::{json, Value};

const DEVICES: &str = include_str!("corpus/zigbee2mqtt/bridge-devices.json");
const GROUPS: &str = include_str!("corpus/zigbee2mqtt/bridge-groups.json");
const ODD_DEVICES: &str = include_str!("corpus/zigbee2mqtt/odd-devices.json");
const ODD_GROUPS: &str = include_str!("corpus/zigbee2mqtt/odd-groups.json");

fn house() -> Found {
    zigbee2mqtt::devices("zigbee2mqtt", DEVICES.as_bytes(), Some(GROUPS.as_bytes())).unwrap()
}

fn things() -> Vec<Thing> {
    let (things, skipped) = zigbee2mqtt::things(&house());
    assert_eq!(skipped, [], "every real device can do or say something");
    things
}

fn thing<'a>(things: &'a [Thing], id: &str) -> &'a Thing {
    things
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no thing {id}"))
}

fn device(thing: &Thing) -> &Device {
    match &thing.control {
        Control::Zigbee2mqtt(device) => device,
        other => panic!("{} is not a Zigbee2MQTT device: {other:?}", thing.id),
    }
}

fn by_name<'a>(found: &'a Found, friendly_name: &str) -> &'a Device {
    found.device(friendly_name).unwrap()
}

/// (topic, payload as JSON) of the message for `command`.
fn sent(device: &Device, command: Command) -> (String, Value) {
    let m = zigbee2mqtt::message(device, &command)
        .unwrap_or_else(|e| panic!("{command:?} on {}: {e}", device.friendly_name));
    (m.topic, serde_json::from_str(&m.payload).unwrap())
}

fn refused(device: &Device, command: Command) -> String {
    zigbee2mqtt::message(device, &command)
        .expect_err("refused")
        .to_string()
}

fn said(device: &Device, state: Value) -> String {
    zigbee2mqtt::reading(device, state.to_string().as_bytes()).unwrap()
}

const CEILING: &str = "0x0017880108a3c1e2";
const FLOOR: &str = "0x000d6ffffe7c3a11";
const DOOR: &str = "0x000b57fffe8e4d10";
const RADIATOR: &str = "0x0014d2fffe3a5b71";
const BLIND: &str = "0x588e81fffe1d2c3f";
const PLUG: &str = "0x3410f4fffe9a8b7c";
const SENSOR: &str = "0x00158d00045b6c7d";

/// (id, name, kind, area, abilities) of a thing.
type Seen<'a> = (&'a str, &'a str, Kind, Option<&'a str>, &'a [Ability]);

#[test]
fn every_device_and_group_is_a_thing_with_what_its_features_allow() {
    use Ability::*;
    let things = things();
    let seen: Vec<Seen> = things
        .iter()
        .map(|t| {
            (
                t.id.as_str(),
                t.name.as_str(),
                t.kind,
                t.area.as_ref().map(|a| a.name.as_str()),
                t.abilities.as_slice(),
            )
        })
        .collect();
    let light: &[Ability] = &[OnOff, Brightness, ColorTemperature, Read];
    assert_eq!(
        seen,
        [
            (
                CEILING,
                "ceiling light",
                Kind::Light,
                Some("living room"),
                &[OnOff, Brightness, ColorTemperature, Color, Read][..]
            ),
            (FLOOR, "floor lamp", Kind::Light, Some("living room"), light),
            (DOOR, "front door", Kind::Lock, None, &[Lock, Read]),
            (
                RADIATOR,
                "radiator",
                Kind::Climate,
                Some("bedroom"),
                &[TargetTemperature, Mode, Read]
            ),
            (
                BLIND,
                "blind",
                Kind::Cover,
                Some("bedroom"),
                &[OpenClose, Stop, Position, Read]
            ),
            (
                PLUG,
                "coffee machine",
                Kind::Switch,
                Some("kitchen"),
                &[OnOff, Read]
            ),
            (
                "0x00158d0001e8a2b3/left",
                "wall switch left",
                Kind::Switch,
                Some("kitchen"),
                &[OnOff, Read]
            ),
            (
                "0x00158d0001e8a2b3/right",
                "wall switch right",
                Kind::Switch,
                Some("kitchen"),
                &[OnOff, Read]
            ),
            (
                SENSOR,
                "climate sensor",
                Kind::Sensor,
                Some("bathroom"),
                &[Read]
            ),
            ("group 1", "lamps", Kind::Light, Some("living room"), light),
            (
                "group 3",
                "blinds",
                Kind::Cover,
                Some("bedroom"),
                &[OpenClose, Stop, Position, Read]
            ),
            (
                "group 4",
                "switches",
                Kind::Switch,
                Some("kitchen"),
                &[OnOff, Read]
            ),
        ]
    );
    for t in &things {
        assert_eq!(t.source, Source::Zigbee2mqtt);
        assert_eq!(t.class, None);
    }
    assert_eq!(thing(&things, RADIATOR).modes, ["heat"]);
    assert_eq!(
        thing(&things, "0x00158d0001e8a2b3/left").aliases,
        ["left wall switch"]
    );
    assert!(thing(&things, CEILING).aliases.is_empty());
    assert!(thing(&things, DOOR).guards_a_way_in());
}

#[test]
fn a_double_rocker_is_a_thing_per_endpoint_each_setting_its_own_state() {
    let things = things();
    let left = device(thing(&things, "0x00158d0001e8a2b3/left"));
    let right = device(thing(&things, "0x00158d0001e8a2b3/right"));
    assert_eq!(
        sent(left, Command::On),
        (
            "zigbee2mqtt/home/kitchen/Wall Switch/set".to_owned(),
            json!({"state_left": "ON"})
        )
    );
    assert_eq!(sent(right, Command::Off).1, json!({"state_right": "OFF"}));
    assert_eq!(
        said(
            right,
            json!({"state_left": "ON", "state_right": "OFF", "power": 0})
        ),
        "The wall switch right is off."
    );
    // the whole device, as `devices` gives it, has no one state to switch
    let whole = by_name(&house(), "home/kitchen/Wall Switch").clone();
    assert_eq!(sent(&whole, Command::On).1, json!({"state_left": "ON"}));
}

#[test]
fn the_colour_bulb_takes_on_off_brightness_colour_temperature_and_colour() {
    let found = house();
    let bulb = by_name(&found, "living_room/Ceiling Light");
    assert_eq!(
        sent(bulb, Command::On),
        (
            "zigbee2mqtt/living_room/Ceiling Light/set".to_owned(),
            json!({"state": "ON"})
        )
    );
    assert_eq!(sent(bulb, Command::Off).1, json!({"state": "OFF"}));
    assert_eq!(
        sent(bulb, Command::Brightness(50)).1,
        json!({"brightness": 127})
    );
    assert_eq!(
        sent(bulb, Command::Brightness(100)).1,
        json!({"brightness": 254})
    );
    assert_eq!(
        sent(bulb, Command::Brightness(0)).1,
        json!({"brightness": 0})
    );
    // a step is Zigbee2MQTT's own, in its 0..254
    assert_eq!(
        sent(bulb, Command::BrightnessStep(-25)).1,
        json!({"brightness_step": -64})
    );
    // a million over the kelvin, within 153..500 mired
    assert_eq!(
        sent(bulb, Command::ColorTemperature(2700)).1,
        json!({"color_temp": 370})
    );
    assert_eq!(
        sent(bulb, Command::ColorTemperature(10_000)).1,
        json!({"color_temp": 153})
    );
    assert_eq!(
        sent(bulb, Command::ColorTemperature(1000)).1,
        json!({"color_temp": 500})
    );
    assert_eq!(
        sent(bulb, Command::Color("Red".into())).1,
        json!({"color": {"x": 0.7006, "y": 0.2993}})
    );
    assert_eq!(
        sent(bulb, Command::Color("blue".into())).1,
        json!({"color": {"x": 0.1355, "y": 0.0399}})
    );
    let e = refused(bulb, Command::Color("chartreuse".into()));
    assert!(
        e.starts_with(r#"living_room/Ceiling Light's `color` takes one of red, orange"#),
        "{e}"
    );
    assert!(e.ends_with(r#"not "chartreuse""#), "{e}");
    assert!(refused(bulb, Command::Brightness(101)).contains("a percentage from 0 to 100"));
    assert!(refused(bulb, Command::ColorTemperature(0)).contains("above 0"));
    assert_eq!(
        refused(bulb, Command::Lock),
        "living_room/Ceiling Light cannot lock"
    );
    let lamp = by_name(&found, "living_room/Floor Lamp");
    assert_eq!(
        refused(lamp, Command::Color("red".into())),
        "living_room/Floor Lamp cannot change colour"
    );
    assert_eq!(
        sent(lamp, Command::ColorTemperature(2000)).1,
        json!({"color_temp": 454}),
        "its own bounds: 250..454"
    );
}

#[test]
fn the_lock_locks_and_unlocks_and_nothing_else() {
    let found = house();
    let door = by_name(&found, "Front Door");
    assert_eq!(
        sent(door, Command::Lock),
        (
            "zigbee2mqtt/Front Door/set".to_owned(),
            json!({"state": "LOCK"})
        )
    );
    assert_eq!(sent(door, Command::Unlock).1, json!({"state": "UNLOCK"}));
    assert_eq!(refused(door, Command::On), "Front Door cannot turn on");
    assert_eq!(refused(door, Command::Open), "Front Door cannot open");
}

#[test]
fn the_radiator_takes_a_setpoint_by_its_step_within_its_bounds_and_its_modes() {
    let found = house();
    let trv = by_name(&found, "bedroom/Radiator");
    assert_eq!(
        sent(trv, Command::TargetTemperature(21.3)),
        (
            "zigbee2mqtt/bedroom/Radiator/set".to_owned(),
            json!({"occupied_heating_setpoint": 21.5})
        )
    );
    assert_eq!(
        sent(trv, Command::TargetTemperature(20.0)).1,
        json!({"occupied_heating_setpoint": 20})
    );
    assert_eq!(
        refused(trv, Command::TargetTemperature(40.0)),
        "bedroom/Radiator's `occupied_heating_setpoint` takes a number from 5 to 35 (°C), not 40"
    );
    assert_eq!(
        sent(trv, Command::Mode("HEAT".into())).1,
        json!({"system_mode": "heat"})
    );
    assert_eq!(
        refused(trv, Command::Mode("cool".into())),
        r#"bedroom/Radiator's `system_mode` takes one of "heat", not "cool""#
    );
    assert_eq!(
        refused(trv, Command::Brightness(10)),
        "bedroom/Radiator cannot be dimmed"
    );
}

#[test]
fn the_blind_opens_closes_stops_and_moves_and_the_plug_switches() {
    let found = house();
    let blind = by_name(&found, "bedroom/Blind");
    assert_eq!(
        sent(blind, Command::Open),
        (
            "zigbee2mqtt/bedroom/Blind/set".to_owned(),
            json!({"state": "OPEN"})
        )
    );
    assert_eq!(sent(blind, Command::Close).1, json!({"state": "CLOSE"}));
    assert_eq!(sent(blind, Command::Stop).1, json!({"state": "STOP"}));
    assert_eq!(
        sent(blind, Command::Position(30)).1,
        json!({"position": 30})
    );
    let plug = by_name(&found, "kitchen/Coffee Machine");
    assert_eq!(
        sent(plug, Command::On),
        (
            "zigbee2mqtt/kitchen/Coffee Machine/set".to_owned(),
            json!({"state": "ON"})
        )
    );
    assert_eq!(
        refused(plug, Command::Speed(50)),
        "kitchen/Coffee Machine cannot change speed"
    );
    let sensor = by_name(&found, "bathroom/Climate Sensor");
    assert_eq!(
        refused(sensor, Command::On),
        "bathroom/Climate Sensor cannot turn on"
    );
}

#[test]
fn what_access_forbids_is_neither_an_ability_nor_a_message() {
    let mut blind = by_name(&house(), "bedroom/Blind").clone();
    for f in blind
        .features
        .iter_mut()
        .filter(|f| f.property == "position")
    {
        f.access = Access::PUBLISHED;
    }
    let found = Found {
        devices: vec![blind.clone()],
        skipped: vec![],
    };
    let (things, _) = zigbee2mqtt::things(&found);
    assert!(!things[0].can(Ability::Position));
    assert!(things[0].can(Ability::Read), "position is still read");
    assert!(matches!(
        zigbee2mqtt::message(&blind, &Command::Position(30)),
        Err(HouseError::NotSettable { ref property, .. }) if property == "position"
    ));
    assert_eq!(
        said(&blind, json!({"position": 40})),
        "The blind is 40 % open."
    );
    // a group's features are never gettable, but published: still read
    let lamps = by_name(&house(), "living_room/Lamps").clone();
    assert_eq!(said(&lamps, json!({"state": "OFF"})), "The lamps are off.");
}

#[test]
fn states_are_worded_as_the_devices_publish_them() {
    let found = house();
    let d = |n| by_name(&found, n);
    assert_eq!(
        said(
            d("living_room/Ceiling Light"),
            json!({"brightness": 120, "color_mode": "xy", "color_temp": 370, "linkquality": 120, "state": "ON"})
        ),
        "The ceiling light is on."
    );
    assert_eq!(
        said(
            d("Front Door"),
            json!({"lock_state": "locked", "state": "LOCK", "battery": 87})
        ),
        "The front door is locked."
    );
    assert_eq!(
        said(
            d("Front Door"),
            json!({"lock_state": "not_fully_locked", "state": "LOCK"})
        ),
        "The front door is not fully locked."
    );
    assert_eq!(
        said(d("Front Door"), json!({"state": "UNLOCK"})),
        "The front door is unlocked."
    );
    assert_eq!(
        said(
            d("bedroom/Radiator"),
            json!({"local_temperature": 19.5, "occupied_heating_setpoint": 21, "system_mode": "heat", "running_state": "heat"})
        ),
        "The radiator is set to 21 degrees; it is 19.5 degrees now."
    );
    assert_eq!(
        said(d("bedroom/Radiator"), json!({"local_temperature": 18})),
        "The radiator reads 18 degrees."
    );
    assert_eq!(
        said(
            d("bathroom/Climate Sensor"),
            json!({"battery": 91, "humidity": 45.2, "linkquality": 120, "pressure": 1012.3, "temperature": 21.3, "voltage": 2995})
        ),
        "The climate sensor reads 21.3 °C, 45.2 % humidity and 1012.3 hPa."
    );
    assert_eq!(
        said(d("bedroom/Blind"), json!({"position": 0, "state": "CLOSE"})),
        "The blind is closed."
    );
    assert_eq!(
        said(d("bedroom/Blind"), json!({"state": "OPEN"})),
        "The blind is open."
    );
    assert_eq!(
        said(
            d("kitchen/Coffee Machine"),
            json!({"power": 3, "state": "OFF"})
        ),
        "The coffee machine is off."
    );
    assert_eq!(
        said(d("living_room/Ceiling Light"), json!({"linkquality": 99})),
        "The ceiling light has not reported its state yet."
    );
}

#[test]
fn a_state_payload_that_is_not_an_object_is_an_error_naming_the_topic() {
    let found = house();
    let bulb = by_name(&found, "living_room/Ceiling Light");
    let e = zigbee2mqtt::reading(bulb, b"{\"state\":")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("zigbee2mqtt/living_room/Ceiling Light: expected a JSON object of the device's state, but the payload is not JSON"),
        "{e}"
    );
    let e = zigbee2mqtt::reading(bulb, b"[1]").unwrap_err().to_string();
    assert_eq!(
        e,
        "zigbee2mqtt/living_room/Ceiling Light: expected a JSON object of the device's state, got an array"
    );
}

#[test]
fn odd_devices_are_things_for_what_is_left_of_them() {
    let found = zigbee2mqtt::devices(
        "zigbee2mqtt",
        ODD_DEVICES.as_bytes(),
        Some(ODD_GROUPS.as_bytes()),
    )
    .unwrap();
    let (things, skipped) = zigbee2mqtt::things(&found);
    assert_eq!(skipped, []);
    let seen: Vec<(&str, &str, &[Ability])> = things
        .iter()
        .map(|t| (t.id.as_str(), t.name.as_str(), t.abilities.as_slice()))
        .collect();
    // the lamp whose light expose was left out is what is left of it: a switch
    assert_eq!(
        seen,
        [
            (
                "0x0017880100f00d01",
                "desk lamp",
                &[Ability::OnOff, Ability::Read][..]
            ),
            ("group 10", "usb", &[Ability::OnOff, Ability::Read][..]),
        ]
    );
}

#[test]
fn a_remote_that_only_reports_diagnostics_is_left_out_with_the_reason() {
    let remote = json!([{
        "ieee_address": "0x000b57fffe111111", "type": "EndDevice", "supported": true,
        "friendly_name": "hall/Remote", "disabled": false, "interview_completed": true,
        "definition": {"model": "E1743", "vendor": "IKEA", "description": "TRADFRI on/off switch",
            "exposes": [
                {"type": "numeric", "name": "battery", "property": "battery", "access": 5,
                    "unit": "%", "value_min": 0, "value_max": 100, "category": "diagnostic"},
                {"type": "enum", "name": "action", "property": "action", "access": 1,
                    "values": ["on", "off", "brightness_move_up"], "category": "diagnostic"},
                {"type": "numeric", "name": "linkquality", "property": "linkquality",
                    "access": 1, "unit": "lqi", "category": "diagnostic"}
            ]}
    }]);
    let found = zigbee2mqtt::devices("zigbee2mqtt", remote.to_string().as_bytes(), None).unwrap();
    assert_eq!(found.devices[0].kind, Kind::Sensor);
    let (things, skipped) = zigbee2mqtt::things(&found);
    assert!(things.is_empty());
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].reason, SkipReason::NothingToDo);
    assert_eq!(
        skipped[0].to_string(),
        "hall/Remote: nothing it exposes is something hearth can do or read out"
    );
}
