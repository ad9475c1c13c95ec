//! `zigbee2mqtt::devices` on bridge payloads made from zigbee-herdsman-converters' real
//! definitions (`tests/corpus/zigbee2mqtt/README.md`), on hand-written odd ones, and on
//! payloads broken on purpose.

use hearth_house::zigbee2mqtt::{self, Found, SkipReason};
use hearth_house::{Access, Category, Device, DeviceId, Feature, HouseError, Kind, ValueType};
use serde_json::{json, Value};

const DEVICES: &str = include_str!("corpus/zigbee2mqtt/bridge-devices.json");
const GROUPS: &str = include_str!("corpus/zigbee2mqtt/bridge-groups.json");
const ODD_DEVICES: &str = include_str!("corpus/zigbee2mqtt/odd-devices.json");
const ODD_GROUPS: &str = include_str!("corpus/zigbee2mqtt/odd-groups.json");

fn house() -> Found {
    zigbee2mqtt::devices("zigbee2mqtt", DEVICES.as_bytes(), Some(GROUPS.as_bytes())).unwrap()
}

fn device<'a>(found: &'a Found, friendly_name: &str) -> &'a Device {
    found
        .device(friendly_name)
        .unwrap_or_else(|| panic!("{friendly_name} not found; found {:?}", names(found)))
}

fn names(found: &Found) -> Vec<&str> {
    found
        .devices
        .iter()
        .map(|d| d.friendly_name.as_str())
        .collect()
}

fn feature<'a>(device: &'a Device, property: &str) -> &'a Feature {
    device
        .feature(property)
        .unwrap_or_else(|| panic!("{} has no {property}", device.friendly_name))
}

fn properties(device: &Device) -> Vec<&str> {
    device
        .features
        .iter()
        .map(|f| f.property.as_str())
        .collect()
}

/// (min, max, step, unit) of a numeric feature.
fn numeric(feature: &Feature) -> (Option<f64>, Option<f64>, Option<f64>, Option<&str>) {
    match &feature.value {
        ValueType::Numeric {
            min,
            max,
            step,
            unit,
            ..
        } => (*min, *max, *step, unit.as_deref()),
        other => panic!("{} is not numeric: {other:?}", feature.property),
    }
}

fn binary(feature: &Feature) -> (Value, Value, Option<Value>) {
    match &feature.value {
        ValueType::Binary { on, off, toggle } => (on.clone(), off.clone(), toggle.clone()),
        other => panic!("{} is not binary: {other:?}", feature.property),
    }
}

fn enum_values(feature: &Feature) -> Vec<Value> {
    match &feature.value {
        ValueType::Enum { values } => values.clone(),
        other => panic!("{} is not an enum: {other:?}", feature.property),
    }
}

/// published, settable, gettable
fn access(feature: &Feature) -> (bool, bool, bool) {
    let a = feature.access;
    (a.published(), a.settable(), a.gettable())
}

const READ_ONLY: (bool, bool, bool) = (true, false, false);
const READ_GET: (bool, bool, bool) = (true, false, true);
const ALL: (bool, bool, bool) = (true, true, true);

#[test]
fn every_fixture_device_is_found_with_its_kind_name_and_room() {
    let found = house();
    let seen: Vec<(&str, Kind, &str, Option<&str>)> = found
        .devices
        .iter()
        .map(|d| {
            (
                d.friendly_name.as_str(),
                d.kind,
                d.name.as_str(),
                d.room.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "living_room/Ceiling Light",
                Kind::Light,
                "ceiling light",
                Some("living room")
            ),
            (
                "living_room/Floor Lamp",
                Kind::Light,
                "floor lamp",
                Some("living room")
            ),
            ("Front Door", Kind::Lock, "front door", None),
            (
                "bedroom/Radiator",
                Kind::Climate,
                "radiator",
                Some("bedroom")
            ),
            ("bedroom/Blind", Kind::Cover, "blind", Some("bedroom")),
            (
                "kitchen/Coffee Machine",
                Kind::Switch,
                "coffee machine",
                Some("kitchen")
            ),
            (
                "home/kitchen/Wall Switch",
                Kind::Switch,
                "wall switch",
                Some("kitchen")
            ),
            (
                "bathroom/Climate Sensor",
                Kind::Sensor,
                "climate sensor",
                Some("bathroom")
            ),
            (
                "living_room/Lamps",
                Kind::Light,
                "lamps",
                Some("living room")
            ),
            ("bedroom/Blinds", Kind::Cover, "blinds", Some("bedroom")),
            (
                "kitchen/Switches",
                Kind::Switch,
                "switches",
                Some("kitchen")
            ),
        ]
    );
    assert_eq!(
        found.rooms(),
        ["bathroom", "bedroom", "kitchen", "living room"]
    );
    // Nothing the real definitions expose is left out.
    for d in &found.devices {
        assert!(
            d.unsupported.is_empty(),
            "{}: {:?}",
            d.friendly_name,
            d.unsupported
        );
    }
}

#[test]
fn the_coordinator_and_the_unsupported_device_are_skipped_with_reasons() {
    let found = house();
    let skipped: Vec<(&str, &SkipReason)> = found
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), &s.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            ("Coordinator", &SkipReason::Coordinator),
            (
                "garage/Mystery Plug",
                &SkipReason::NotSupported {
                    model: Some("XYZ-0001".into())
                }
            ),
            (
                "Downstairs",
                &SkipReason::GroupKinds {
                    kinds: vec![Kind::Light, Kind::Switch]
                }
            ),
            ("Empty", &SkipReason::GroupEmpty),
        ]
    );
    let logged: Vec<String> = found.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        logged[1],
        "garage/Mystery Plug: model XYZ-0001 is not supported by Zigbee2MQTT"
    );
    assert_eq!(
        logged[2],
        "Downstairs: a group of lights and switches: a group is all lights, switches, locks or covers"
    );
}

#[test]
fn the_colour_bulb_has_brightness_colour_temperature_and_colour() {
    let found = house();
    let bulb = device(&found, "living_room/Ceiling Light");
    assert_eq!(bulb.id, DeviceId::Ieee("0x0017880108a3c1e2".into()));
    let model = bulb.model.as_ref().unwrap();
    assert_eq!(
        (model.vendor.as_str(), model.model.as_str()),
        ("Philips", "9290022166")
    );
    assert_eq!(
        properties(bulb),
        [
            "state",
            "brightness",
            "color_temp",
            "color_temp_startup",
            "color",
            "color",
            "power_on_behavior",
            "effect",
            "effect_speed",
            "effect_color",
            "identify",
            "linkquality"
        ]
    );
    let state = feature(bulb, "state");
    assert_eq!(state.part_of, Some(Kind::Light));
    assert_eq!(access(state), ALL);
    assert_eq!(
        binary(state),
        (json!("ON"), json!("OFF"), Some(json!("TOGGLE")))
    );
    assert_eq!(
        numeric(feature(bulb, "brightness")),
        (Some(0.0), Some(254.0), None, None)
    );
    let color_temp = feature(bulb, "color_temp");
    assert_eq!(
        numeric(color_temp),
        (Some(153.0), Some(500.0), None, Some("mired"))
    );
    let ValueType::Numeric { presets, .. } = &color_temp.value else {
        unreachable!()
    };
    let presets: Vec<(&str, &Value)> = presets
        .iter()
        .map(|p| (p.name.as_str(), &p.value))
        .collect();
    assert_eq!(presets[3], ("warm", &json!(454)));
    // Colour both ways, under one property.
    let colours: Vec<(&str, Vec<&str>)> = bulb
        .features
        .iter()
        .filter(|f| f.property == "color")
        .map(|f| match &f.value {
            ValueType::Composite { features } => (
                f.name.as_str(),
                features.iter().map(|p| p.property.as_str()).collect(),
            ),
            other => panic!("colour is not composite: {other:?}"),
        })
        .collect();
    assert_eq!(
        colours,
        [
            ("color_xy", vec!["x", "y"]),
            ("color_hs", vec!["hue", "saturation"])
        ]
    );
    // Effects may be set and are published, but not asked for; identify is set only.
    assert_eq!(access(feature(bulb, "effect")), (true, true, false));
    assert_eq!(access(feature(bulb, "identify")), (false, true, false));
    assert!(!feature(bulb, "identify").access.readable());
    let linkquality = feature(bulb, "linkquality");
    assert_eq!(access(linkquality), READ_ONLY);
    assert_eq!(linkquality.category, Some(Category::Diagnostic));
    assert_eq!(
        feature(bulb, "power_on_behavior").category,
        Some(Category::Config)
    );
    assert_eq!(feature(bulb, "power_on_behavior").part_of, None);

    assert_eq!(bulb.topics.state, "zigbee2mqtt/living_room/Ceiling Light");
    assert_eq!(bulb.topics.set, "zigbee2mqtt/living_room/Ceiling Light/set");
    assert_eq!(bulb.topics.get, "zigbee2mqtt/living_room/Ceiling Light/get");
}

#[test]
fn the_bulb_is_set_within_its_ranges_and_refused_outside_them() {
    let found = house();
    let bulb = device(&found, "living_room/Ceiling Light");
    let set = bulb.set("brightness", json!(254)).unwrap();
    assert_eq!(set.topic, "zigbee2mqtt/living_room/Ceiling Light/set");
    assert_eq!(set.payload, r#"{"brightness":254}"#);
    for ok in [
        json!(153),
        json!(500),
        json!(370.5),
        json!("warm"),
        json!("coolest"),
    ] {
        bulb.set("color_temp", ok.clone())
            .unwrap_or_else(|e| panic!("color_temp {ok}: {e}"));
    }
    for bad in [
        json!(152),
        json!(501),
        json!("hot"),
        json!(true),
        json!(null),
    ] {
        let err = bulb.set("color_temp", bad.clone()).unwrap_err();
        assert!(
            matches!(err, HouseError::BadValue { .. }),
            "color_temp {bad}: {err}"
        );
    }
    assert_eq!(
        bulb.set("brightness", json!(255)).unwrap_err().to_string(),
        "living_room/Ceiling Light's `brightness` takes a number from 0 to 254, not 255"
    );
    // Either colour composite takes its own parts.
    let xy = bulb.set("color", json!({"x": 0.3, "y": 0.4})).unwrap();
    assert_eq!(xy.payload, r#"{"color":{"x":0.3,"y":0.4}}"#);
    bulb.set("color", json!({"hue": 120, "saturation": 80}))
        .unwrap();
    assert!(bulb.set("color", json!({"x": 0.3, "hue": 120})).is_err());
    assert!(bulb.set("color", json!({})).is_err());
    assert!(bulb.set("color", json!("red")).is_err());
    bulb.set("state", json!("TOGGLE")).unwrap();
    bulb.set("effect", json!("candle")).unwrap();
    assert!(bulb.set("effect", json!("disco")).is_err());
    bulb.set("effect_color", json!("#ff0000")).unwrap();

    let err = bulb.set("linkquality", json!(200)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "living_room/Ceiling Light's `linkquality` cannot be set, only read"
    );
    let err = bulb.set("colour", json!(1)).unwrap_err();
    let HouseError::NoSuchFeature { known, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        known.starts_with("state, brightness, color_temp"),
        "{known}"
    );

    let get = bulb.get("brightness").unwrap();
    assert_eq!(
        (get.topic.as_str(), get.payload.as_str()),
        (
            "zigbee2mqtt/living_room/Ceiling Light/get",
            r#"{"brightness":""}"#
        )
    );
    let err = bulb.get("effect").unwrap_err();
    assert_eq!(
        err.to_string(),
        "living_room/Ceiling Light's `effect` cannot be asked for; it comes on \
         zigbee2mqtt/living_room/Ceiling Light when the device sends it"
    );
}

#[test]
fn the_lock_is_locked_and_unlocked_and_its_lock_state_only_read() {
    let found = house();
    let door = device(&found, "Front Door");
    assert_eq!(door.model.as_ref().unwrap().model, "YRD256HA20BP");
    let state = feature(door, "state");
    assert_eq!((state.part_of, access(state)), (Some(Kind::Lock), ALL));
    assert_eq!(binary(state), (json!("LOCK"), json!("UNLOCK"), None));
    assert_eq!(
        door.set("state", json!("UNLOCK")).unwrap().payload,
        r#"{"state":"UNLOCK"}"#
    );
    assert_eq!(
        door.set("state", json!("TOGGLE")).unwrap_err().to_string(),
        r#"Front Door's `state` takes "LOCK" or "UNLOCK", not "TOGGLE""#
    );
    let lock_state = feature(door, "lock_state");
    assert_eq!(
        (lock_state.part_of, access(lock_state)),
        (Some(Kind::Lock), READ_ONLY)
    );
    assert_eq!(
        enum_values(lock_state),
        [
            json!("not_fully_locked"),
            json!("locked"),
            json!("unlocked")
        ]
    );
    assert!(matches!(
        door.set("lock_state", json!("locked")),
        Err(HouseError::NotSettable { .. })
    ));
    assert!(matches!(
        door.get("lock_state"),
        Err(HouseError::NotGettable { .. })
    ));
    assert_eq!(access(feature(door, "battery")), READ_ONLY);
    assert_eq!(
        numeric(feature(door, "auto_relock_time")),
        (Some(0.0), Some(3600.0), None, Some("s"))
    );
    // A PIN is a composite whose parts are set only.
    let pin = feature(door, "pin_code");
    let ValueType::Composite { features } = &pin.value else {
        panic!("{pin:?}")
    };
    assert!(features.iter().all(|p| access(p) == (false, true, false)));
    door.set("pin_code", json!({"user": 1, "user_enabled": true}))
        .unwrap();
}

#[test]
fn the_radiator_valve_reads_its_temperature_and_takes_a_setpoint_by_half_degrees() {
    let found = house();
    let trv = device(&found, "bedroom/Radiator");
    assert_eq!(trv.model.as_ref().unwrap().vendor, "Danfoss");
    assert_eq!(
        properties(trv)[..6],
        [
            "local_temperature",
            "occupied_heating_setpoint",
            "system_mode",
            "pi_heating_demand",
            "running_state",
            "system_status_code"
        ]
    );
    let local = feature(trv, "local_temperature");
    assert_eq!(
        (local.part_of, access(local)),
        (Some(Kind::Climate), READ_GET)
    );
    assert_eq!(numeric(local), (None, None, None, Some("°C")));
    let setpoint = feature(trv, "occupied_heating_setpoint");
    assert_eq!(access(setpoint), ALL);
    assert_eq!(
        numeric(setpoint),
        (Some(5.0), Some(35.0), Some(0.5), Some("°C"))
    );
    assert_eq!(
        trv.set("occupied_heating_setpoint", json!(21.5))
            .unwrap()
            .payload,
        r#"{"occupied_heating_setpoint":21.5}"#
    );
    assert_eq!(
        trv.set("occupied_heating_setpoint", json!(36))
            .unwrap_err()
            .to_string(),
        "bedroom/Radiator's `occupied_heating_setpoint` takes a number from 5 to 35 (°C), not 36"
    );
    assert!(trv.set("occupied_heating_setpoint", json!("21")).is_err());
    assert!(matches!(
        trv.set("local_temperature", json!(20)),
        Err(HouseError::NotSettable { .. })
    ));
    assert_eq!(
        trv.get("local_temperature").unwrap().payload,
        r#"{"local_temperature":""}"#
    );
    assert_eq!(enum_values(feature(trv, "system_mode")), [json!("heat")]);
    assert_eq!(access(feature(trv, "pi_heating_demand")), READ_ONLY);
    assert_eq!(
        numeric(feature(trv, "regulation_setpoint_offset")),
        (Some(-2.5), Some(2.5), Some(0.1), Some("°C"))
    );
    // Binaries with values of their own words.
    assert_eq!(
        binary(feature(trv, "viewing_direction")),
        (json!("upside-down"), json!("normal"), None)
    );
}

#[test]
fn the_blind_opens_closes_stops_and_takes_a_position() {
    let found = house();
    let blind = device(&found, "bedroom/Blind");
    assert_eq!(
        properties(blind),
        ["state", "position", "identify", "battery", "linkquality"]
    );
    let state = feature(blind, "state");
    assert_eq!(
        (state.part_of, access(state)),
        (Some(Kind::Cover), (true, true, false))
    );
    assert_eq!(
        enum_values(state),
        [json!("OPEN"), json!("CLOSE"), json!("STOP")]
    );
    assert_eq!(
        numeric(feature(blind, "position")),
        (Some(0.0), Some(100.0), None, Some("%"))
    );
    blind.set("position", json!(40)).unwrap();
    blind.set("state", json!("STOP")).unwrap();
    assert!(blind.set("state", json!("ON")).is_err());
    assert_eq!(access(feature(blind, "battery")), READ_GET);
}

#[test]
fn the_plug_switches_and_its_power_and_energy_are_only_read() {
    let found = house();
    let plug = device(&found, "kitchen/Coffee Machine");
    assert_eq!(plug.model.as_ref().unwrap().model, "E22xx");
    let state = feature(plug, "state");
    assert_eq!((state.part_of, access(state)), (Some(Kind::Switch), ALL));
    for (property, unit) in [
        ("power", "W"),
        ("voltage", "V"),
        ("current", "A"),
        ("energy", "kWh"),
    ] {
        let f = feature(plug, property);
        assert_eq!(
            (access(f), numeric(f).3),
            (READ_GET, Some(unit)),
            "{property}"
        );
        assert!(matches!(
            plug.set(property, json!(1)),
            Err(HouseError::NotSettable { .. })
        ));
    }
    let child_lock = feature(plug, "child_lock");
    assert_eq!(
        (child_lock.part_of, child_lock.category),
        (None, Some(Category::Config))
    );
    assert_eq!(binary(child_lock), (json!("LOCK"), json!("UNLOCK"), None));
}

#[test]
fn the_double_switch_has_one_state_per_endpoint() {
    let found = house();
    let switch = device(&found, "home/kitchen/Wall Switch");
    assert_eq!(switch.model.as_ref().unwrap().model, "QBKG12LM");
    let ends: Vec<(&str, Option<&str>, Option<Kind>)> = switch
        .features
        .iter()
        .filter(|f| f.name == "state" || f.name == "operation_mode")
        .map(|f| (f.property.as_str(), f.endpoint.as_deref(), f.part_of))
        .collect();
    assert_eq!(
        ends,
        [
            ("state_left", Some("left"), Some(Kind::Switch)),
            ("state_right", Some("right"), Some(Kind::Switch)),
            ("operation_mode_left", Some("left"), None),
            ("operation_mode_right", Some("right"), None),
        ]
    );
    assert_eq!(
        switch.set("state_right", json!("OFF")).unwrap().payload,
        r#"{"state_right":"OFF"}"#
    );
    assert!(matches!(
        switch.set("state", json!("ON")),
        Err(HouseError::NoSuchFeature { .. })
    ));
    assert_eq!(access(feature(switch, "energy")), READ_ONLY);
    assert_eq!(access(feature(switch, "power")), READ_GET);
}

#[test]
fn the_sensor_only_reports() {
    let found = house();
    let sensor = device(&found, "bathroom/Climate Sensor");
    assert_eq!(
        properties(sensor),
        [
            "battery",
            "temperature",
            "humidity",
            "pressure",
            "voltage",
            "linkquality"
        ]
    );
    assert!(sensor.features.iter().all(|f| access(f) == READ_ONLY));
    let units: Vec<Option<&str>> = ["temperature", "humidity", "pressure"]
        .iter()
        .map(|p| numeric(feature(sensor, p)).3)
        .collect();
    assert_eq!(units, [Some("°C"), Some("%"), Some("hPa")]);
    assert!(sensor.set("temperature", json!(20)).is_err());
}

#[test]
fn a_group_of_bulbs_is_a_light_that_takes_what_both_take() {
    let found = house();
    let lamps = device(&found, "living_room/Lamps");
    assert_eq!(lamps.id, DeviceId::Group(1));
    assert_eq!(lamps.model, None);
    assert_eq!(
        lamps.members,
        [
            DeviceId::Ieee("0x0017880108a3c1e2".into()),
            DeviceId::Ieee("0x000d6ffffe7c3a11".into())
        ]
    );
    // The floor lamp has no colour: the group has none.
    assert_eq!(
        properties(lamps),
        ["state", "brightness", "color_temp", "color_temp_startup"]
    );
    assert!(lamps
        .features
        .iter()
        .all(|f| f.part_of == Some(Kind::Light)));
    // Set and published as a device; never asked with /get.
    assert!(lamps
        .features
        .iter()
        .all(|f| access(f) == (true, true, false)));
    assert!(matches!(
        lamps.get("state"),
        Err(HouseError::NotGettable { .. })
    ));
    // 153–500 and 250–454 mired: both take 250–454.
    assert_eq!(
        numeric(feature(lamps, "color_temp")),
        (Some(250.0), Some(454.0), None, Some("mired"))
    );
    lamps.set("color_temp", json!(300)).unwrap();
    assert!(lamps.set("color_temp", json!(200)).is_err());
    // The presets both have at one value.
    let ValueType::Numeric { presets, .. } = &feature(lamps, "color_temp").value else {
        unreachable!()
    };
    let presets: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(presets, ["cool", "neutral", "warm"]);
    assert!(lamps.set("color_temp", json!("coolest")).is_err());
    let on = lamps.set("state", json!("ON")).unwrap();
    assert_eq!(
        (on.topic.as_str(), on.payload.as_str()),
        ("zigbee2mqtt/living_room/Lamps/set", r#"{"state":"ON"}"#)
    );
}

#[test]
fn groups_of_covers_and_of_switches_at_endpoints() {
    let found = house();
    let blinds = device(&found, "bedroom/Blinds");
    assert_eq!(
        (blinds.kind, blinds.id.clone()),
        (Kind::Cover, DeviceId::Group(3))
    );
    assert_eq!(properties(blinds), ["state", "position"]);
    assert_eq!(
        enum_values(feature(blinds, "state")),
        [json!("OPEN"), json!("CLOSE"), json!("STOP")]
    );
    assert_eq!(access(feature(blinds, "position")), (true, true, false));

    // The plug and both rockers: `state_left` and `state_right` are the group's `state`.
    let switches = device(&found, "kitchen/Switches");
    assert_eq!(switches.kind, Kind::Switch);
    assert_eq!(properties(switches), ["state"]);
    assert_eq!(feature(switches, "state").endpoint, None);
    assert_eq!(
        binary(feature(switches, "state")),
        (json!("ON"), json!("OFF"), Some(json!("TOGGLE")))
    );
    assert_eq!(
        switches.members,
        [
            DeviceId::Ieee("0x3410f4fffe9a8b7c".into()),
            DeviceId::Ieee("0x00158d0001e8a2b3".into())
        ]
    );
    assert_eq!(switches.id.to_string(), "group 4");
}

#[test]
fn without_groups_there_are_only_devices() {
    let found = zigbee2mqtt::devices("zigbee2mqtt", DEVICES.as_bytes(), None).unwrap();
    assert_eq!(found.devices.len(), 8);
    assert!(found
        .devices
        .iter()
        .all(|d| matches!(d.id, DeviceId::Ieee(_))));
    assert_eq!(found.skipped.len(), 2);
}

#[test]
fn the_base_topic_is_the_callers() {
    for base in ["home/z2m", "home/z2m/"] {
        let found =
            zigbee2mqtt::devices(base, DEVICES.as_bytes(), Some(GROUPS.as_bytes())).unwrap();
        let door = device(&found, "Front Door");
        assert_eq!(door.topics.set, "home/z2m/Front Door/set");
        assert_eq!(door.topics.state, "home/z2m/Front Door");
        assert_eq!(
            device(&found, "bedroom/Blinds").topics.get,
            "home/z2m/bedroom/Blinds/get"
        );
    }
}

#[test]
fn odd_entries_are_skipped_or_kept_in_part_with_reasons() {
    let found = zigbee2mqtt::devices(
        "zigbee2mqtt",
        ODD_DEVICES.as_bytes(),
        Some(ODD_GROUPS.as_bytes()),
    )
    .unwrap();
    let skipped: Vec<(&str, String)> = found
        .skipped
        .iter()
        .map(|s| {
            let reason = match &s.reason {
                SkipReason::Malformed { .. } => "malformed".to_owned(),
                SkipReason::NothingUnderstood { unsupported } => {
                    format!("nothing understood: {}", unsupported.len())
                }
                other => format!("{other:?}"),
            };
            (s.name.as_str(), reason)
        })
        .collect();
    let expected: Vec<(&str, &str)> = vec![
        ("Coordinator", "Coordinator"),
        (
            "hall/Motion",
            r#"InterviewIncomplete { state: Some("IN_PROGRESS") }"#,
        ),
        ("hall/Old Sensor", "InterviewIncomplete { state: None }"),
        ("attic/Spare Bulb", "Disabled"),
        ("0x0017880100c0ffee", "Unnamed"),
        ("study/Oddity", "nothing understood: 2"),
        ("0x0017880100f00d03", "malformed"),
        ("study/No Definition", "NoDefinition"),
        ("entry 9", "malformed"),
        ("default_bind_group", "DefaultBindGroup"),
        ("Ghosts", "GroupNoKnownMembers"),
        ("12", "Unnamed"),
        ("Broken", "malformed"),
        ("Too Big", "malformed"),
    ];
    let got: Vec<(&str, &str)> = skipped.iter().map(|(n, r)| (*n, r.as_str())).collect();
    assert_eq!(got, expected);
    let reason = |name: &str| {
        found
            .skipped
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .reason
            .to_string()
    };
    assert!(reason("0x0017880100f00d03").contains("missing field `friendly_name`"));
    assert!(
        reason("entry 9").contains("expected struct Entry"),
        "{}",
        reason("entry 9")
    );
    assert!(reason("Too Big").contains("70000 is not a Zigbee group id"));
    assert_eq!(
        reason("study/Oddity"),
        "nothing it exposes is understood: `beam`: `beam` is of type `teleporter`, not one \
         Zigbee2MQTT documents; `light`: a `light` expose without a `features` array"
    );

    // The lamp's light holds a feature of an unknown type: the light is left out whole, its
    // USB switch kept, so it is a switch.
    assert_eq!(names(&found), ["study/Desk Lamp", "study/USB"]);
    let lamp = &found.devices[0];
    assert_eq!(lamp.kind, Kind::Switch);
    assert_eq!(properties(lamp), ["state_usb", "schedule", "note"]);
    let left_out: Vec<(&str, &str)> = lamp
        .unsupported
        .iter()
        .map(|u| (u.name.as_str(), u.reason.as_str()))
        .collect();
    assert_eq!(
        left_out,
        [
            (
                "light",
                "in a `light` expose: `aura` is of type `hologram`, not one Zigbee2MQTT documents"
            ),
            (
                "smell",
                "`smell` is of type `scent`, not one Zigbee2MQTT documents"
            ),
            ("glow", "binary `glow` without `value_on` and `value_off`"),
            ("hum", "`hum` has access 9, not bits of 1, 2 and 4"),
            ("mood", "enum `mood` without `values`"),
            ("warmth", "`warmth` has no `property`"),
            ("?", "an expose that is not a JSON object"),
            ("typeless", "an expose without a `type`"),
        ]
    );
    // A list of composites: an array of at most two slots, each part within its range.
    lamp.set("schedule", json!([{"hour": 7, "level": 200}, {"hour": 22}]))
        .unwrap();
    assert!(lamp.set("schedule", json!([{"hour": 24}])).is_err());
    assert!(lamp
        .set("schedule", json!([{"hour": 1}, {"hour": 2}, {"hour": 3}]))
        .is_err());
    assert!(lamp.set("schedule", json!({"hour": 1})).is_err());
    assert!(matches!(
        lamp.get("schedule"),
        Err(HouseError::NotGettable { .. })
    ));
    lamp.set("note", json!("hello")).unwrap();
    assert!(lamp.set("note", json!(5)).is_err());

    // A group at the lamp's second endpoint; its member not found does not count.
    let usb = &found.devices[1];
    assert_eq!(
        (usb.kind, usb.room.as_deref()),
        (Kind::Switch, Some("study"))
    );
    assert_eq!(usb.members, [DeviceId::Ieee("0x0017880100f00d01".into())]);
    assert_eq!(properties(usb), ["state"]);
}

#[test]
fn members_sharing_a_kind_but_no_feature_make_no_group() {
    let switch = |ieee: &str, name: &str, on: &str, off: &str| {
        json!({
            "ieee_address": ieee, "type": "Router", "supported": true, "friendly_name": name,
            "disabled": false, "interview_completed": true,
            "definition": {"model": "M", "vendor": "V", "description": "D", "exposes": [
                {"type": "switch", "features": [{"type": "binary", "name": "state",
                    "property": "state", "access": 7, "value_on": on, "value_off": off}]}]},
            "endpoints": {"1": {}}
        })
    };
    let devices = json!([
        switch("0x0000000000000001", "One", "ON", "OFF"),
        switch("0x0000000000000002", "Two", "on", "off"),
    ]);
    let groups = json!([{"id": 7, "friendly_name": "Both", "members": [
        {"ieee_address": "0x0000000000000001", "endpoint": 1},
        {"ieee_address": "0x0000000000000002", "endpoint": 1}]}]);
    let found = zigbee2mqtt::devices(
        "zigbee2mqtt",
        devices.to_string().as_bytes(),
        Some(groups.to_string().as_bytes()),
    )
    .unwrap();
    assert_eq!(found.devices.len(), 2);
    assert_eq!(
        found.skipped[0].to_string(),
        "Both: a group of switches that share no feature"
    );
}

#[test]
fn a_definition_changed_under_a_device_is_read_as_changed() {
    let mut payload: Value = serde_json::from_str(DEVICES).unwrap();
    let entries = payload.as_array_mut().unwrap();
    let find = |entries: &[Value], name: &str| {
        entries
            .iter()
            .position(|e| e["friendly_name"] == name)
            .unwrap()
    };
    // The bulb's light expose of a type no one knows.
    let bulb = find(entries, "living_room/Ceiling Light");
    entries[bulb]["definition"]["exposes"][0]["type"] = json!("hologram");
    // The lock no longer supported; the radiator disabled; the blind mid-interview.
    let door = find(entries, "Front Door");
    entries[door]["supported"] = json!(false);
    let trv = find(entries, "bedroom/Radiator");
    entries[trv]["disabled"] = json!(true);
    let blind = find(entries, "bedroom/Blind");
    entries[blind]["interview_state"] = json!("FAILED");
    let found = zigbee2mqtt::devices("zigbee2mqtt", payload.to_string().as_bytes(), None).unwrap();

    let bulb = device(&found, "living_room/Ceiling Light");
    assert_eq!(bulb.kind, Kind::Other, "effects are still settable");
    assert_eq!(bulb.unsupported.len(), 1);
    assert_eq!(bulb.unsupported[0].name, "hologram");
    assert_eq!(
        bulb.unsupported[0].reason,
        "type `hologram` is not one Zigbee2MQTT documents"
    );
    assert!(bulb.feature("brightness").is_none());
    let reasons: Vec<(&str, &SkipReason)> = found
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), &s.reason))
        .collect();
    assert_eq!(
        reasons[1..4],
        [
            (
                "Front Door",
                &SkipReason::NotSupported {
                    model: Some("YRD256 TSDB".into())
                }
            ),
            ("bedroom/Radiator", &SkipReason::Disabled),
            (
                "bedroom/Blind",
                &SkipReason::InterviewIncomplete {
                    state: Some("FAILED".into())
                }
            ),
        ]
    );
}

#[test]
fn truncated_payloads_are_errors_naming_the_topic() {
    // Every cut of the real payload short of its end: an error, never a panic.
    let bytes = DEVICES.trim_end().as_bytes();
    for cut in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
        let err = zigbee2mqtt::devices("zigbee2mqtt", &bytes[..cut], None).unwrap_err();
        let HouseError::NotJson {
            topic, expected, ..
        } = &err
        else {
            panic!("cut at {cut}: {err}")
        };
        assert_eq!(
            (topic.as_str(), *expected),
            ("zigbee2mqtt/bridge/devices", "a JSON array of devices")
        );
    }
    let err = zigbee2mqtt::devices("zigbee2mqtt", b"", None).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "zigbee2mqtt/bridge/devices: expected a JSON array of devices, but the payload is not JSON: EOF"
        ),
        "{err}"
    );
    let groups = &GROUPS.as_bytes()[..GROUPS.len() / 2];
    let err = zigbee2mqtt::devices("z", DEVICES.as_bytes(), Some(groups)).unwrap_err();
    assert!(
        matches!(&err, HouseError::NotJson { topic, .. } if topic == "z/bridge/groups"),
        "{err}"
    );
    let err = zigbee2mqtt::devices("z", &[0xff, 0xfe], None).unwrap_err();
    assert!(matches!(err, HouseError::NotJson { .. }), "{err}");
}

#[test]
fn json_of_another_shape_is_an_error_saying_what_was_expected() {
    let err = zigbee2mqtt::devices("zigbee2mqtt", br#"{"devices": []}"#, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "zigbee2mqtt/bridge/devices: expected a JSON array of devices, got an object"
    );
    let err = zigbee2mqtt::devices("zigbee2mqtt", b"[]", Some(b"\"none\"")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "zigbee2mqtt/bridge/groups: expected a JSON array of groups, got a string"
    );
    let found = zigbee2mqtt::devices("zigbee2mqtt", b"[]", Some(b"[]")).unwrap();
    assert!(found.devices.is_empty() && found.skipped.is_empty());
}

#[test]
fn access_bits_read_as_zigbee2mqtt_documents_them() {
    let cases = [
        (1, (true, false, false), true),
        (2, (false, true, false), false),
        (3, (true, true, false), true),
        (4, (false, false, true), true),
        (5, (true, false, true), true),
        (7, (true, true, true), true),
    ];
    for (bits, (published, settable, gettable), readable) in cases {
        let a = Access::from_bits(bits).unwrap();
        assert_eq!(
            (a.published(), a.settable(), a.gettable()),
            (published, settable, gettable)
        );
        assert_eq!(a.readable(), readable, "{bits}");
        assert_eq!(u64::from(a.bits()), bits);
    }
    assert_eq!(Access::from_bits(8), None);
    assert_eq!(Access::from_bits(256 + 1), None);
}

#[test]
fn an_expose_nested_where_it_cannot_be_is_left_out() {
    let devices = json!([{
        "ieee_address": "0x0000000000000003", "type": "Router", "supported": true,
        "friendly_name": "hall/Nested", "disabled": false, "interview_completed": true,
        "definition": {"model": "M", "vendor": "V", "description": "D", "exposes": [
            {"type": "light", "features": [{"type": "light", "name": "inner", "property": "inner", "features": []}]},
            {"type": "composite", "name": "combo", "property": "combo", "access": 7, "features": [
                {"type": "switch", "name": "relay", "property": "relay", "features": []}]},
            {"type": "numeric", "name": "level", "property": "level", "access": 1}]},
        "endpoints": {"1": {}}
    }]);
    let found = zigbee2mqtt::devices("zigbee2mqtt", devices.to_string().as_bytes(), None).unwrap();
    let nested = device(&found, "hall/Nested");
    assert_eq!(
        (nested.kind, properties(nested)),
        (Kind::Sensor, vec!["level"])
    );
    let reasons: Vec<&str> = nested
        .unsupported
        .iter()
        .map(|u| u.reason.as_str())
        .collect();
    assert_eq!(
        reasons,
        [
            "in a `light` expose: a `light` expose inside another expose",
            "composite `combo`: a `switch` expose inside another expose"
        ]
    );
}
