//! The `gpio` executor up to the device (its tests, beside it): manifest checks, level spellings, chip and line
//! resolution over described chips, the run-time error on a machine without GPIO, and the
//! example manifests (tools/examples/gpio.toml and desktop.toml).
//!
//! This machine and CI have no `/dev/gpiochip*` (and gpio-sim/gpio-mockup cannot be loaded
//! in a container), so the tests that need no chip say so; `real_chips_are_listed` runs
//! only its real-chip half where chips exist.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::tools::{parse_manifest, Backends, Executor, Registry, ToolStatus, ToolsError};
use serde_json::json;

const FILE: &str = "/etc/hearth/tools/gpio.toml";

/// A one-tool manifest with a `on` boolean parameter and the given `[tool.gpio]` body.
fn manifest(gpio: &str) -> String {
    format!(
        "[[tool]]\nname = \"t\"\ndescription = \"A GPIO tool.\"\n\
         [tool.parameters]\ntype = \"object\"\n\
         [tool.parameters.properties.on]\ntype = \"boolean\"\n\
         [tool.parameters.properties.pin]\ntype = \"string\"\n\
         [tool.gpio]\n{gpio}"
    )
}

fn spec(gpio: &str) -> GpioSpec {
    let tools = parse_manifest(&manifest(gpio), Path::new(FILE)).unwrap();
    match &tools[0].executor {
        Executor::Gpio(s) => s.clone(),
        other => panic!("not a gpio tool: {other:?}"),
    }
}

/// The load error of `[tool.gpio]` `gpio`, checked to name the file, the field and each
/// fragment.
fn load_err(gpio: &str, field: &str, fragments: &[&str]) -> String {
    let e = match parse_manifest(&manifest(gpio), Path::new(FILE)) {
        Ok(_) => panic!("expected a load error for {gpio:?}"),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(msg.contains(FILE), "{msg}");
    assert!(msg.contains(field), "{field:?} not in {msg}");
    for f in fragments {
        assert!(msg.contains(f), "{f:?} not in {msg}");
    }
    msg
}

/// No `/dev/gpiochip*` here (what most tests assume, and check).
fn no_chips() -> bool {
    gpiocdev::chip::chips()
        .map(|c| c.is_empty())
        .unwrap_or(true)
}

#[test]
fn a_valid_table_is_checked_into_a_spec() {
    let s = spec("line = \"GPIO17\"\nchip = \"gpiochip0\"\naction = \"set\"\nvalue = \"{{ on }}\"\nactive_low = true\ntimeout_ms = 1500\n");
    assert_eq!(s.line, "GPIO17");
    assert_eq!(s.chip.as_deref(), Some("gpiochip0"));
    assert_eq!(
        s.action,
        GpioAction::Set {
            value: "{{ on }}".into()
        }
    );
    assert!(s.active_low);
    assert_eq!(s.timeout, Duration::from_millis(1500));

    let s = spec("line = \"GPIO27\"\naction = \"read\"\nbias = \"pull_up\"\n");
    assert_eq!(s.action, GpioAction::Read);
    assert_eq!(s.bias, Some(GpioBias::PullUp));
    assert!(!s.active_low && s.chip.is_none());
    assert_eq!(s.timeout, Duration::from_millis(2000), "the default");

    let s = spec("line = \"{{ pin }}\"\naction = \"pulse\"\npulse_ms = 500\n");
    assert_eq!(
        s.action,
        GpioAction::Pulse {
            duration: Duration::from_millis(500)
        }
    );
    // literal levels are fine too, and the limits are inclusive
    spec("line = \"17\"\nchip = \"/dev/gpiochip0\"\naction = \"set\"\nvalue = \"HIGH\"\n");
    spec("line = \"GPIO22\"\naction = \"pulse\"\npulse_ms = 1\n");
    spec("line = \"GPIO22\"\naction = \"pulse\"\npulse_ms = 10000\n");
}

#[test]
fn every_manifest_mistake_fails_the_load_with_its_fix() {
    load_err(
        "line = \"GPIO17\"\naction = \"toggle\"\n",
        "gpio.action",
        &["\"toggle\"", "\"set\", \"read\" or \"pulse\""],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"set\"\n",
        "gpio.value",
        &["missing", "{{ on }}"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"read\"\nvalue = \"on\"\n",
        "gpio.value",
        &["a read takes no value", "remove"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"pulse\"\npulse_ms = 200\nvalue = \"on\"\n",
        "gpio.value",
        &["a pulse takes no value"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"pulse\"\n",
        "gpio.pulse_ms",
        &["missing", "1 to 10000"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"pulse\"\npulse_ms = 0\n",
        "gpio.pulse_ms",
        &["0 is out of range", "1 to 10000"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"pulse\"\npulse_ms = 10001\n",
        "gpio.pulse_ms",
        &["10001 is out of range"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"set\"\nvalue = \"on\"\npulse_ms = 100\n",
        "gpio.pulse_ms",
        &["only a pulse"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"read\"\npulse_ms = 100\n",
        "gpio.pulse_ms",
        &["only a pulse"],
    );
    load_err(
        "line = \"  \"\naction = \"read\"\n",
        "gpio.line",
        &["is empty", "GPIO17"],
    );
    load_err(
        "line = \"GPIO17\"\nchip = \"\"\naction = \"read\"\n",
        "gpio.chip",
        &["is empty"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"set\"\nvalue = \"maybe\"\n",
        "gpio.value",
        &["\"maybe\" is not a level", "on/off"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"set\"\nvalue = \"on\"\nbias = \"pull_up\"\n",
        "gpio.bias",
        &["only a read"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"read\"\nbias = \"up\"\n",
        "gpio.bias",
        &["\"up\" is not a bias"],
    );
    load_err(
        "line = \"GPIO17\"\naction = \"read\"\ntimeout_ms = 0\n",
        "gpio.timeout_ms",
        &["greater than 0"],
    );
    // templates read only parameters, and must compile
    let msg = load_err(
        "line = \"{{ pinn }}\"\naction = \"read\"\n",
        "gpio.line",
        &["`pinn`", "not a parameter"],
    );
    assert!(msg.contains("on, pin"), "{msg}");
    load_err(
        "line = \"GPIO17\"\naction = \"set\"\nvalue = \"{{ onn }}\"\n",
        "gpio.value",
        &["`onn`"],
    );
    load_err(
        "line = \"{{ pin\"\naction = \"read\"\n",
        "gpio.line",
        &["not a valid template"],
    );
    // unknown and missing keys (serde, with the line)
    load_err(
        "line = \"GPIO17\"\naction = \"read\"\npin = 3\n",
        "pin",
        &["unknown field"],
    );
    load_err("line = \"GPIO17\"\n", "action", &["missing field"]);
}

#[test]
fn levels_accept_every_spelling_in_any_case() {
    for on in ["true", "1", "on", "high", "TRUE", "On", "HIGH", " high\n"] {
        assert_eq!(parse_level(on), Some(true), "{on:?}");
    }
    for off in ["false", "0", "off", "low", "False", "OFF", "Low", " 0 "] {
        assert_eq!(parse_level(off), Some(false), "{off:?}");
    }
    for bad in ["yes", "no", "2", "-1", "", "onn", "active", "1.0"] {
        assert_eq!(parse_level(bad), None, "{bad:?}");
    }
}

fn chip(n: u32, label: &str, names: &[&str]) -> ChipDesc {
    ChipDesc {
        path: PathBuf::from(format!("/dev/gpiochip{n}")),
        name: format!("gpiochip{n}"),
        label: label.into(),
        lines: names
            .iter()
            .map(|s| LineDesc {
                name: s.to_string(),
                ..LineDesc::default()
            })
            .collect(),
    }
}

/// A Raspberry Pi 5's chips, shortened: the RP1 bank with the header lines, and two more.
fn board() -> Vec<ChipDesc> {
    let mut rp1 = chip(
        0,
        "pinctrl-rp1",
        &[
            "ID_SDA", "ID_SCL", "GPIO2", "GPIO3", "GPIO4", "GPIO17", "GPIO27",
        ],
    );
    rp1.lines[6].consumer = "door-watcher".into();
    rp1.lines[6].used = true;
    vec![
        rp1,
        chip(10, "gpio-brcmstb@107d508500", &["-", "PWR_GPIO", "RP1_RUN"]),
        chip(11, "gpio-brcmstb@107d517c00", &["HDMI0_SCL", "HDMI0_SDA"]),
    ]
}

#[test]
fn a_chip_is_found_by_path_name_number_or_label() {
    let chips = board();
    let origin = ChipOrigin::Manifest;
    for spec in [
        "/dev/gpiochip0",
        "gpiochip0",
        "0",
        "pinctrl-rp1",
        " gpiochip0 ",
    ] {
        assert_eq!(
            find_chip(&chips, spec, origin).unwrap().name,
            "gpiochip0",
            "{spec:?}"
        );
    }
    assert_eq!(
        find_chip(&chips, "11", origin).unwrap().label,
        "gpio-brcmstb@107d517c00"
    );
    assert_eq!(
        find_chip(&chips, "gpio-brcmstb@107d508500", origin)
            .unwrap()
            .name,
        "gpiochip10"
    );

    let e = find_chip(&chips, "gpiochip4", ChipOrigin::Config).unwrap_err();
    assert!(matches!(e, GpioError::ChipNotFound { .. }), "{e:?}");
    let msg = e.to_string();
    for f in [
        "\"gpiochip4\"",
        "[gpio] chip in hearth.toml",
        "gpiochip0 [pinctrl-rp1] 7 lines",
        "gpiochip10 [gpio-brcmstb@107d508500] 3 lines",
        "gpiochip11 [gpio-brcmstb@107d517c00] 2 lines",
    ] {
        assert!(msg.contains(f), "{f:?} not in {msg}");
    }
    let msg = find_chip(&chips, "/dev/gpiochip7", ChipOrigin::Manifest)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("gpio.chip in the tool's manifest"), "{msg}");
    assert_eq!(
        find_chip(&[], "gpiochip0", origin).unwrap_err(),
        GpioError::NoChips
    );
}

#[test]
fn a_line_is_found_by_name_or_offset() {
    let chips = board();
    // by name on any chip: the first chip that has it
    let at = locate(&chips, None, "GPIO17", &[]).unwrap();
    assert_eq!(at.chip_path, Path::new("/dev/gpiochip0"));
    assert_eq!((at.chip_name.as_str(), at.offset), ("gpiochip0", 5));
    assert_eq!(at.display, "GPIO17");
    let at = locate(&chips, None, "RP1_RUN", &[]).unwrap();
    assert_eq!((at.chip_name.as_str(), at.offset), ("gpiochip10", 2));
    // the consumer that holds it is carried (for the busy error)
    assert_eq!(
        locate(&chips, None, "GPIO27", &[]).unwrap().consumer,
        "door-watcher"
    );
    // by name on the given chip only
    let at = locate(
        &chips,
        Some(("pinctrl-rp1", ChipOrigin::Config)),
        "GPIO4",
        &[],
    )
    .unwrap();
    assert_eq!(at.offset, 4);
    let e = locate(
        &chips,
        Some(("gpiochip11", ChipOrigin::Manifest)),
        "GPIO17",
        &[],
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, GpioError::LineNotFound { .. }), "{e:?}");
    assert!(
        msg.contains("no line named \"GPIO17\" on gpiochip11 [gpio-brcmstb@107d517c00] 2 lines"),
        "{msg}"
    );
    assert!(
        msg.contains("`gpioinfo`") && msg.contains("fix gpio.line"),
        "{msg}"
    );
    // by offset on the given chip; its own name is what results show
    let at = locate(&chips, Some(("gpiochip0", ChipOrigin::Manifest)), "17", &[]);
    assert!(
        matches!(
            at,
            Err(GpioError::OffsetOutOfRange {
                offset: 17,
                num_lines: 7,
                ..
            })
        ),
        "{at:?}"
    );
    let at = locate(&chips, Some(("gpiochip0", ChipOrigin::Manifest)), "5", &[]).unwrap();
    assert_eq!((at.offset, at.display.as_str()), (5, "GPIO17"));
    let mut unnamed = board();
    unnamed[0].lines[5].name.clear();
    let at = locate(&unnamed, Some(("0", ChipOrigin::Manifest)), "5", &[]).unwrap();
    assert_eq!(at.display, "line 5");
    // an offset with no chip is ambiguous
    let msg = locate(&chips, None, "17", &[]).unwrap_err().to_string();
    assert!(
        msg.contains("\"17\" is an offset, which needs a chip") && msg.contains("set gpio.chip"),
        "{msg}"
    );
}

#[test]
fn a_missing_line_says_where_it_was_looked_for() {
    let chips = board();
    let msg = locate(&chips, None, "GPIO99", &["/dev/gpiochip12".into()])
        .unwrap_err()
        .to_string();
    for f in [
        "no line named \"GPIO99\"",
        "gpiochip0 [pinctrl-rp1] 7 lines, gpiochip10",
        "gpiochip11",
        "not searched, hearth may not open them: /dev/gpiochip12",
    ] {
        assert!(msg.contains(f), "{f:?} not in {msg}");
    }
    // a name in another case is suggested
    let msg = locate(&chips, None, "gpio17", &[]).unwrap_err().to_string();
    assert!(msg.contains("did you mean \"GPIO17\"?"), "{msg}");
    // a chip the manifest names that is not there
    let msg = locate(
        &chips,
        Some(("pinctrl-bcm2835", ChipOrigin::Manifest)),
        "GPIO17",
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("\"pinctrl-bcm2835\"") && msg.contains("the chips are: gpiochip0"),
        "{msg}"
    );
    assert_eq!(
        locate(&[], None, "GPIO17", &[]).unwrap_err(),
        GpioError::NoChips
    );
}

const NO_CHIP: &str = "no GPIO chip found (/dev/gpiochip*): this machine has no GPIO, or hearth lacks access: add the service user to the gpio group";

#[tokio::test]
async fn without_a_chip_every_action_fails_fast_with_the_fix() {
    assert!(
        no_chips(),
        "this test expects a machine without /dev/gpiochip*: see real_chips_are_listed"
    );
    let mut backends = Backends::none();
    backends.gpio = GpioBackend::new(Some("gpiochip0".into()));
    for (gpio, args) in [
        (
            "line = \"GPIO17\"\naction = \"set\"\nvalue = \"{{ on }}\"\ntimeout_ms = 2000\n",
            json!({"on": true}),
        ),
        (
            "line = \"{{ pin }}\"\naction = \"read\"\ntimeout_ms = 2000\n",
            json!({"pin": "GPIO27"}),
        ),
        (
            "line = \"GPIO22\"\naction = \"pulse\"\npulse_ms = 3000\ntimeout_ms = 2000\n",
            json!({}),
        ),
    ] {
        let s = spec(gpio);
        let start = Instant::now();
        let out = run("set_fan", &s, &args, &backends.gpio).await;
        assert_eq!(out.status, ToolStatus::Error);
        assert_eq!(out.text, format!("set_fan: {NO_CHIP}"));
        // listing nothing takes no time: well within the timeout (and no pulse happened)
        assert!(
            start.elapsed() < Duration::from_millis(500),
            "{:?}",
            start.elapsed()
        );
    }
    // probe says the same, for `hearth doctor`
    assert_eq!(GpioBackend::default().probe(), Err(NO_CHIP.to_string()));
}

#[tokio::test]
async fn rendering_errors_come_before_the_device() {
    let backends = Backends::none();
    let s = spec("line = \"GPIO17\"\naction = \"set\"\nvalue = \"{{ 'yes' if on else 'no' }}\"\n");
    let out = run("set_fan", &s, &json!({"on": true}), &backends.gpio).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(out.text.starts_with("set_fan: gpio.value"), "{}", out.text);
    assert!(
        out.text
            .contains("rendered to \"yes\", which is not a level"),
        "{}",
        out.text
    );

    let s = spec("line = \"{{ pin }}\"\naction = \"read\"\n");
    let out = run("read_door", &s, &json!({}), &backends.gpio).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(
        out.text.starts_with("read_door: cannot render gpio.line"),
        "{}",
        out.text
    );

    let out = run("read_door", &s, &json!({"pin": " "}), &backends.gpio).await;
    assert!(
        out.text.contains("rendered to an empty string"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn through_the_registry_a_gpio_call_is_an_error_outcome() {
    assert!(
        no_chips(),
        "this test expects a machine without /dev/gpiochip*"
    );
    let dir = examples_dir("registry");
    let registry = Registry::load(&dir, Arc::new(Backends::none())).unwrap();
    let call = registry
        .toolset()
        .call("c1", "set_fan", json!({"on": false}))
        .unwrap();
    let outcome = registry.call(&call).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(outcome.result, format!("set_fan: {NO_CHIP}"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn real_chips_are_listed() {
    // gpio-sim and gpio-mockup cannot be loaded in a container: this half runs only where
    // a real /dev/gpiochip* exists
    let probe = GpioBackend::default().probe();
    if no_chips() {
        assert_eq!(probe, Err(NO_CHIP.to_string()));
        return;
    }
    let lines = probe.unwrap_or_else(|e| panic!("chips exist but probe failed: {e}"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("gpiochip") && l.ends_with(" lines")),
        "{lines:?}"
    );
    let msg = GpioBackend::new(Some("no-such-chip".into()))
        .probe()
        .unwrap_err();
    assert!(
        msg.contains("\"no-such-chip\"") && msg.contains("[gpio] chip in hearth.toml"),
        "{msg}"
    );
}

/// A temp dir holding copies of tools/examples/gpio.toml and desktop.toml only.
fn examples_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-gpio-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/examples");
    for f in ["gpio.toml", "desktop.toml"] {
        std::fs::copy(examples.join(f), d.join(f)).unwrap();
    }
    d
}

#[test]
fn the_example_manifests_load() {
    let dir = examples_dir("examples");
    let tools = crate::tools::load_dir(&dir).unwrap_or_else(|e: ToolsError| panic!("{e}"));
    let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
    // desktop.toml sorts first
    assert_eq!(
        names,
        ["notify", "set_fan", "read_door", "press_garage_door"]
    );
    let gpio = |i: usize| match &tools[i].executor {
        Executor::Gpio(s) => s.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(gpio(1).line, "GPIO17");
    assert!(matches!(gpio(1).action, GpioAction::Set { .. }));
    assert_eq!(
        (gpio(2).line.as_str(), gpio(2).action.clone()),
        ("GPIO27", GpioAction::Read)
    );
    assert_eq!(gpio(2).bias, Some(GpioBias::PullUp));
    assert_eq!(
        gpio(3).action,
        GpioAction::Pulse {
            duration: Duration::from_millis(500)
        }
    );
    let Executor::Dbus(d) = &tools[0].executor else {
        panic!("{:?}", tools[0].executor)
    };
    assert_eq!(
        (d.destination.as_str(), d.method.as_str()),
        ("org.freedesktop.Notifications", "Notify")
    );
    assert_eq!(d.arg_types.len(), 8);
    // they also make a registry with no connections configured (gpio and dbus need none)
    let registry = Registry::load(&dir, Arc::new(Backends::none())).unwrap();
    assert!(registry.get("press_garage_door").is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errno_of_gpiocdev_errors() {
    let e = gpiocdev::Error::from(std::io::Error::from_raw_os_error(libc::EACCES));
    assert_eq!(errno(&e), Some(libc::EACCES));
    assert!(is_permission(&e));
    assert_eq!(errno(&gpiocdev::Error::NoGpioChips()), None);
    // the uAPI error's text is std's io::Error text
    let busy = std::io::Error::from_raw_os_error(libc::EBUSY).to_string();
    assert_eq!(os_error_code(&busy), Some(libc::EBUSY));
    assert_eq!(os_error_code("no code here"), None);
}
