//! The `dbus` executor against a real bus: a private `dbus-daemon` (hearth-testkit's `services`)
//! with a small zbus service on it (`com.example.Thermostat1`), called through
//! `hearth::tools::dbus::run` and a `Registry` whose `DbusBackend` points at that bus.
//! The service records exactly what it received.

use crate::common::services::*;

use crate::common::manifest::*;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::tools::dbus::{DbusBackend, DbusBus, DbusSpec};
use hearth::tools::{parse_manifest, Backends, Executor, Registry, ToolStatus};
use serde_json::{json, Value};
use zbus::{OwnedObjectPath, OwnedVariant, Signature, Variant};

const FILE: &str = "/etc/hearth/tools/thermostat.toml";
const NAME: &str = "com.example.Thermostat";
const PATH: &str = "/com/example/Thermostat";
const IFACE: &str = "com.example.Thermostat1";

/// One call the service received, with its typed values.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    SetTarget(u32, f64, String),
    Configure(Vec<String>, BTreeMap<String, Variant<'static>>),
    Scalars(
        u8,
        bool,
        i16,
        u16,
        i32,
        u32,
        i64,
        u64,
        f64,
        String,
        String,
        String,
    ),
    Labels(BTreeMap<String, String>, Vec<u8>, Vec<i32>),
    Poke(Variant<'static>),
}

struct Thermostat {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Thermostat {
    fn record(&self, s: Seen) {
        self.seen.lock().unwrap().push(s);
    }
}

fn owned(v: &OwnedVariant) -> Variant<'static> {
    Variant::try_clone(v).unwrap()
}

#[zbus::interface(name = "com.example.Thermostat1")]
impl Thermostat {
    /// u d s → s
    fn set_target(&self, zone: u32, celsius: f64, mode: String) -> String {
        let text = format!("zone {zone} set to {celsius} °C ({mode})");
        self.record(Seen::SetTarget(zone, celsius, mode));
        text
    }

    /// → (sd)
    fn state(&self) -> (String, f64) {
        ("heat".to_string(), 21.5)
    }

    /// as a{sv} → nothing
    fn configure(&self, rooms: Vec<String>, options: HashMap<String, OwnedVariant>) {
        let options = options.iter().map(|(k, v)| (k.clone(), owned(v))).collect();
        self.record(Seen::Configure(rooms, options));
    }

    /// every basic type → u
    #[allow(clippy::too_many_arguments)]
    fn scalars(
        &self,
        y: u8,
        b: bool,
        n: i16,
        q: u16,
        i: i32,
        u: u32,
        x: i64,
        t: u64,
        d: f64,
        s: String,
        o: OwnedObjectPath,
        g: Signature,
    ) -> u32 {
        self.record(Seen::Scalars(
            y,
            b,
            n,
            q,
            i,
            u,
            x,
            t,
            d,
            s,
            o.as_str().to_string(),
            g.to_string(),
        ));
        7
    }

    /// a{ss} ay ai → nothing
    fn labels(&self, labels: HashMap<String, String>, bytes: Vec<u8>, levels: Vec<i32>) {
        self.record(Seen::Labels(labels.into_iter().collect(), bytes, levels));
    }

    /// v → nothing
    fn poke(&self, value: OwnedVariant) {
        self.record(Seen::Poke(owned(&value)));
    }

    /// → s, 20000 bytes
    fn history(&self) -> String {
        "21.5 °C at noon; ".repeat(1000)
    }

    /// → a D-Bus error with a long message
    fn fail_loudly(&self) -> zbus::fdo::Result<String> {
        Err(zbus::fdo::Error::Failed(
            "the boiler is offline. ".repeat(1000),
        ))
    }

    /// → a D-Bus error
    fn fail(&self) -> zbus::fdo::Result<String> {
        Err(zbus::fdo::Error::Failed("the boiler is offline".into()))
    }

    /// → s, after 3 s
    async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(3)).await;
        "late".into()
    }
}

/// A private bus with the thermostat service on it.
struct Home {
    bus: PrivateBus,
    _service: zbus::Connection,
    seen: Arc<Mutex<Vec<Seen>>>,
    backends: Backends,
}

impl Home {
    async fn start() -> Home {
        let bus = PrivateBus::start();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let service = zbus::connection::Builder::address(bus.address.as_str())
            .name(NAME)
            .serve_at(
                PATH,
                Thermostat {
                    seen: Arc::clone(&seen),
                },
            )
            .build()
            .await
            .expect("the thermostat service on the private bus");
        let mut backends = Backends::none();
        backends.dbus = DbusBackend::with_addresses(None, Some(bus.address.clone()));
        Home {
            bus,
            _service: service,
            seen,
            backends,
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    async fn run(&self, spec: &DbusSpec, args: Value) -> hearth::tools::ExecOutput {
        hearth::tools::dbus::run("thermo", spec, &args, &self.backends.dbus).await
    }
}

/// A `[tool.dbus]` on the session bus calling `method` of the thermostat, with parameters
/// a, b, c (untyped: the schema lets anything through, so conversions are what is tested).
fn tool(method: &str, signature: &str, args: &str, extra: &str) -> String {
    format!(
        "[[tool]]\nname = \"thermo\"\ndescription = \"The thermostat.\"\n\
         [tool.parameters]\ntype = \"object\"\n\
         [tool.parameters.properties.a]\n[tool.parameters.properties.b]\n[tool.parameters.properties.c]\n\
         [tool.dbus]\nbus = \"session\"\ndestination = \"{NAME}\"\npath = \"{PATH}\"\n\
         interface = \"{IFACE}\"\nmethod = \"{method}\"\nsignature = \"{signature}\"\n\
         args = {args}\n{extra}"
    )
}

fn spec_of(text: &str) -> DbusSpec {
    let tools = parse_manifest(text, Path::new(FILE)).unwrap_or_else(|e| panic!("{e}"));
    match &tools[0].executor {
        Executor::Dbus(s) => s.clone(),
        other => panic!("not a dbus tool: {other:?}"),
    }
}

fn spec(method: &str, signature: &str, args: &str) -> DbusSpec {
    spec_of(&tool(method, signature, args, ""))
}

fn assert_error(out: &hearth::tools::ExecOutput, fragments: &[&str]) {
    assert_eq!(out.status, ToolStatus::Error, "{}", out.text);
    assert!(out.text.starts_with("thermo: "), "{}", out.text);
    for f in fragments {
        assert!(out.text.contains(f), "{f:?} not in {}", out.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_arguments_arrive_exactly_and_replies_become_text() {
    let home = Home::start().await;

    // u d s → one string: the string is the result
    let s = spec("SetTarget", "uds", r#"["{{ a }}", "{{ b }}", "{{ c }}"]"#);
    assert_eq!(s.bus, DbusBus::Session);
    let out = home.run(&s, json!({"a": 2, "b": 21.5, "c": "heat"})).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.text);
    assert_eq!(out.text, "zone 2 set to 21.5 °C (heat)");
    // an integer for d, and a string holding an integer for u, convert too
    let out = home.run(&s, json!({"a": "3", "b": 19, "c": "eco"})).await;
    assert_eq!(out.text, "zone 3 set to 19 °C (eco)");

    // as a{sv} → nothing: empty
    let s = spec(
        "Configure",
        "asa{sv}",
        r#"["{{ a }}", {level = "{{ b }}", name = "{{ c }}", eco = true, ratio = 0.5, tags = ["x", "y"], nested = {deep = 1}}]"#,
    );
    let out = home
        .run(&s, json!({"a": ["kitchen", "hall"], "b": 3, "c": "night"}))
        .await;
    assert_eq!(out.status, ToolStatus::Empty, "{}", out.text);
    assert_eq!(out.text, "");

    // every basic type, literal (a string holds the u64 beyond TOML's integers) → u: JSON
    let s = spec(
        "Scalars",
        "ybnqiuxtdsog",
        r#"[255, true, -3, 65535, -70000, 4000000000, -9000000000, "18000000000000000000", 2.5, "text", "/com/example/Zone1", "a{sv}"]"#,
    );
    let out = home.run(&s, json!({})).await;
    assert_eq!((out.status, out.text.as_str()), (ToolStatus::Ok, "7"));

    // a{ss} ay ai: ay from a string, ai from numbers and a numeric string
    let s = spec(
        "Labels",
        "a{ss}ayai",
        r#"[{kitchen = "{{ a }}", hall = "dim"}, "hi", [1, -2, "3"]]"#,
    );
    let out = home.run(&s, json!({"a": "bright"})).await;
    assert_eq!(out.status, ToolStatus::Empty, "{}", out.text);

    // v: the JSON value's own type
    let s = spec("Poke", "v", r#"["{{ a }}"]"#);
    for a in [
        json!(5),
        json!("five"),
        json!(true),
        json!(2.5),
        json!(["p", "q"]),
        json!([1, "x"]),
    ] {
        let out = home.run(&s, json!({ "a": a })).await;
        assert_eq!(out.status, ToolStatus::Empty, "{}", out.text);
    }

    // no arguments → (sd): JSON of the values
    let s = spec("State", "", "[]");
    let out = home.run(&s, json!({})).await;
    assert_eq!(
        (out.status, out.text.as_str()),
        (ToolStatus::Ok, r#"["heat",21.5]"#)
    );

    let str_array = |items: &[&str]| {
        let mut a = zbus::Array::new(&Signature::Str);
        for i in items {
            a.append(Variant::from(i.to_string())).unwrap();
        }
        Variant::Array(a)
    };
    let mut nested = zbus::Dict::new(&Signature::Str, &Signature::Variant);
    nested
        .append(
            Variant::from("deep".to_string()),
            Variant::Variant(Box::new(Variant::I64(1))),
        )
        .unwrap();
    let mut mixed = zbus::Array::new(&Signature::Variant);
    mixed
        .append(Variant::Variant(Box::new(Variant::I64(1))))
        .unwrap();
    mixed
        .append(Variant::Variant(Box::new(Variant::from("x".to_string()))))
        .unwrap();
    let options: BTreeMap<String, Variant<'static>> = [
        ("level", Variant::I64(3)),
        ("name", Variant::from("night".to_string())),
        ("eco", Variant::Bool(true)),
        ("ratio", Variant::F64(0.5)),
        ("tags", str_array(&["x", "y"])),
        ("nested", Variant::Dict(nested)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(
        home.seen(),
        vec![
            Seen::SetTarget(2, 21.5, "heat".into()),
            Seen::SetTarget(3, 19.0, "eco".into()),
            Seen::Configure(vec!["kitchen".into(), "hall".into()], options),
            Seen::Scalars(
                255,
                true,
                -3,
                65535,
                -70000,
                4_000_000_000,
                -9_000_000_000,
                18_000_000_000_000_000_000,
                2.5,
                "text".into(),
                "/com/example/Zone1".into(),
                "a{sv}".into()
            ),
            Seen::Labels(
                [("hall", "dim"), ("kitchen", "bright")]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                b"hi".to_vec(),
                vec![1, -2, 3]
            ),
            Seen::Poke(Variant::I64(5)),
            Seen::Poke(Variant::from("five".to_string())),
            Seen::Poke(Variant::Bool(true)),
            Seen::Poke(Variant::F64(2.5)),
            Seen::Poke(str_array(&["p", "q"])),
            Seen::Poke(Variant::Array(mixed)),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_that_do_not_fit_are_errors_and_nothing_is_sent() {
    let home = Home::start().await;
    let s = spec("SetTarget", "uds", r#"["{{ a }}", "{{ b }}", "{{ c }}"]"#);
    for (args, fragments) in [
        (
            json!({"a": "abc", "b": 20, "c": "heat"}),
            &[
                "dbus.args[0]: expected an unsigned 32-bit integer (u), got \"abc\"",
                "fix dbus.args (or dbus.signature) in the tool's manifest, or narrow the tool's parameters",
            ][..],
        ),
        (
            json!({"a": -1, "b": 20, "c": "heat"}),
            &["dbus.args[0]: expected an unsigned 32-bit integer (u), got -1"][..],
        ),
        (
            json!({"a": 1.5, "b": 20, "c": "heat"}),
            &["dbus.args[0]: expected an unsigned 32-bit integer (u), got 1.5"][..],
        ),
        (
            json!({"a": 1, "b": "warm", "c": "heat"}),
            &["dbus.args[1]: expected a number (d), got \"warm\""][..],
        ),
        (
            json!({"a": 1, "b": 20, "c": null}),
            &["dbus.args[2]: expected a string (s), got null"][..],
        ),
        (
            json!({"a": 1, "b": 20, "c": ["heat"]}),
            &["dbus.args[2]: expected a string (s), got [\"heat\"]"][..],
        ),
    ] {
        let out = home.run(&s, args).await;
        assert_error(&out, fragments);
    }
    let s = spec(
        "Scalars",
        "ybnqiuxtdsog",
        r#"["{{ a }}", "{{ b }}", 0, 0, 0, 0, 0, 0, 0, "", "{{ c }}", "s"]"#,
    );
    for (args, fragment) in [
        (
            json!({"a": 300, "b": true, "c": "/a"}),
            "dbus.args[0]: expected a byte 0-255 (y), got 300",
        ),
        (
            json!({"a": -1, "b": true, "c": "/a"}),
            "dbus.args[0]: expected a byte 0-255 (y), got -1",
        ),
        (
            json!({"a": 1, "b": "maybe", "c": "/a"}),
            "dbus.args[1]: expected a boolean (b), got \"maybe\"",
        ),
        (
            json!({"a": 1, "b": 1, "c": "/a"}),
            "dbus.args[1]: expected a boolean (b), got 1",
        ),
        (
            json!({"a": 1, "b": true, "c": "not/a/path"}),
            "dbus.args[10]: expected an object path (o), got \"not/a/path\"",
        ),
    ] {
        assert_error(&home.run(&s, args).await, &[fragment]);
    }
    // inside containers the place is named
    let s = spec(
        "Configure",
        "asa{sv}",
        r#"["{{ a }}", {level = "{{ b }}"}]"#,
    );
    assert_error(
        &home.run(&s, json!({"a": ["x", {"y": 1}], "b": 1})).await,
        &["dbus.args[0][1]: expected a string (s), got {\"y\":1}"],
    );
    assert_error(
        &home.run(&s, json!({"a": [], "b": null})).await,
        &["dbus.args[1].level: expected a string, number, boolean, array or object (v), got null"],
    );
    assert_error(
        &home.run(&s, json!({"a": "kitchen", "b": 1})).await,
        &["dbus.args[0]: expected an array (as), got \"kitchen\""],
    );
    let s = spec("Labels", "a{ss}ayai", r#"["{{ a }}", [], []]"#);
    assert_error(
        &home.run(&s, json!({"a": ["kitchen"]})).await,
        &["dbus.args[0]: expected an object (a{ss}), got [\"kitchen\"]"],
    );
    // a missing argument fails the render
    let s = spec("SetTarget", "uds", r#"["{{ a }}", "{{ b }}", "{{ c }}"]"#);
    assert_error(
        &home.run(&s, json!({"a": 1, "b": 2})).await,
        &["cannot render dbus.args[2]"],
    );
    assert_eq!(home.seen(), vec![], "no call reached the service");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bus_errors_name_the_problem_and_the_fix() {
    let home = Home::start().await;

    // the service is not on the bus
    let text = tool("SetTarget", "uds", "[1, 2, \"x\"]", "").replace(
        &format!("destination = \"{NAME}\""),
        "destination = \"com.example.Nobody\"",
    );
    let out = home.run(&spec_of(&text), json!({})).await;
    assert_error(
        &out,
        &[
            "com.example.Nobody is not running on the session bus",
            "org.freedesktop.DBus.Error.ServiceUnknown",
            "start the service, or fix dbus.destination",
        ],
    );

    // no such method
    let out = home.run(&spec("Explode", "", "[]"), json!({})).await;
    assert_error(
        &out,
        &[
            "com.example.Thermostat has no method com.example.Thermostat1.Explode",
            "org.freedesktop.DBus.Error.UnknownMethod",
            "busctl introspect com.example.Thermostat /com/example/Thermostat",
        ],
    );

    // the arguments do not match the method's
    let out = home
        .run(&spec("SetTarget", "s", r#"["x"]"#), json!({}))
        .await;
    assert_error(&out, &["com.example.Thermostat1.SetTarget", "fix dbus."]);

    // the method answers with a D-Bus error
    let out = home.run(&spec("Fail", "", "[]"), json!({})).await;
    assert_error(
        &out,
        &["com.example.Thermostat answered com.example.Thermostat1.Fail with an error: org.freedesktop.DBus.Error.Failed: the boiler is offline"],
    );

    // no object at the path
    let text = tool("State", "", "[]", "").replace(
        &format!("path = \"{PATH}\""),
        "path = \"/com/example/Nowhere\"",
    );
    let out = home.run(&spec_of(&text), json!({})).await;
    assert_eq!(out.status, ToolStatus::Error, "{}", out.text);
    assert!(out.text.contains("/com/example/Nowhere"), "{}", out.text);

    // a string argument D-Bus cannot carry is refused before the call
    let s = spec("SetTarget", "uds", r#"[1, 2.5, "{{ a }}"]"#);
    assert_error(
        &home.run(&s, json!({"a": "heat\u{0}cool"})).await,
        &["dbus.args[2]", "NUL"],
    );
    assert!(home.seen().is_empty());
    // and the connection is still good
    let out = home.run(&spec("State", "", "[]"), json!({})).await;
    assert_eq!(out.text, r#"["heat",21.5]"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_or_error_is_cut_with_a_note() {
    let home = Home::start().await;
    let out = home.run(&spec("History", "", "[]"), json!({})).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.text);
    assert!(
        out.text.starts_with("21.5 °C at noon; 21.5"),
        "{}",
        out.text
    );
    assert!(
        out.text.ends_with(&format!(
            "\n[output cut: {} bytes, only the first 2048 kept]",
            "21.5 °C at noon;".len() * 1000 + 999
        )),
        "{}",
        out.text
    );
    let out = home.run(&spec("FailLoudly", "", "[]"), json!({})).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(out.text.len() < 2048 + 60, "{}", out.text.len());
    assert!(out.text.contains("the boiler is offline"), "{}", out.text);
    assert!(out.text.contains("[output cut: "), "{}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_method_times_out() {
    let home = Home::start().await;
    let s = spec_of(&tool("Slow", "", "[]", "timeout_ms = 300\n"));
    assert_eq!(s.timeout, Duration::from_millis(300));
    let start = Instant::now();
    let out = home.run(&s, json!({})).await;
    let took = start.elapsed();
    assert_error(
        &out,
        &["com.example.Thermostat did not answer com.example.Thermostat1.Slow within 300 ms on the session bus", "raise dbus.timeout_ms"],
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    // the connection is still good for the next call
    let out = home.run(&spec("State", "", "[]"), json!({})).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_bus_to_connect_to() {
    let mut backends = Backends::none();
    backends.dbus =
        DbusBackend::with_addresses(None, Some("unix:path=/nonexistent/hearth-test-bus".into()));
    let s = spec("State", "", "[]");
    let out = hearth::tools::dbus::run("thermo", &s, &json!({}), &backends.dbus).await;
    assert_error(
        &out,
        &[
            "cannot connect to the session bus",
            "DBUS_SESSION_BUS_ADDRESS",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_registry() {
    let home = Home::start().await;
    let dir = scratch_dir("dbus");
    std::fs::write(
        dir.join("thermostat.toml"),
        format!(
            r#"[[tool]]
name = "set_heating_zone"
description = "Set a heating zone's target temperature."
[tool.parameters]
type = "object"
required = ["zone", "celsius"]
additionalProperties = false
[tool.parameters.properties.zone]
type = "integer"
minimum = 1
[tool.parameters.properties.celsius]
type = "number"
[tool.dbus]
bus = "session"
destination = "{NAME}"
path = "{PATH}"
interface = "{IFACE}"
method = "SetTarget"
signature = "uds"
args = ["{{{{ zone }}}}", "{{{{ celsius }}}}", "manual"]
"#
        ),
    )
    .unwrap();
    let mut backends = Backends::none();
    backends.dbus = DbusBackend::with_addresses(None, Some(home.bus.address.clone()));
    let registry = Registry::load(&dir, Arc::new(backends)).unwrap();
    let outcome = registry
        .call(
            &registry
                .toolset()
                .call(
                    "c1",
                    "set_heating_zone",
                    json!({"zone": 4, "celsius": 20.5}),
                )
                .unwrap(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Ok, "{}", outcome.result);
    assert_eq!(outcome.result, "zone 4 set to 20.5 °C (manual)");
    assert_eq!(home.seen(), vec![Seen::SetTarget(4, 20.5, "manual".into())]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The load error of `text`, checked to name the file and each fragment.
fn load_err(text: &str, fragments: &[&str]) {
    let msg = match parse_manifest(text, Path::new(FILE)) {
        Ok(_) => panic!("expected a load error:\n{text}"),
        Err(e) => e.to_string(),
    };
    assert!(msg.contains(FILE), "{msg}");
    for f in fragments {
        assert!(msg.contains(f), "{f:?} not in {msg}");
    }
}

#[test]
fn manifest_mistakes_fail_the_load() {
    let good = tool("SetTarget", "uds", "[1, 2.5, \"x\"]", "");
    spec_of(&good);
    let swap = |from: &str, to: &str| {
        assert!(good.contains(from), "{from}");
        good.replace(from, to)
    };
    load_err(
        &swap("bus = \"session\"", "bus = \"user\""),
        &["dbus.bus", "\"user\"", "\"system\" or \"session\""],
    );
    load_err(
        &swap(
            &format!("destination = \"{NAME}\""),
            "destination = \"not a name\"",
        ),
        &["dbus.destination", "is not a bus name"],
    );
    load_err(
        &swap(&format!("path = \"{PATH}\""), "path = \"com/example\""),
        &["dbus.path", "is not an object path"],
    );
    load_err(
        &swap(
            &format!("interface = \"{IFACE}\""),
            "interface = \"Thermostat\"",
        ),
        &["dbus.interface", "is not an interface name"],
    );
    load_err(
        &swap("method = \"SetTarget\"", "method = \"Set-Target\""),
        &["dbus.method", "is not a method name"],
    );
    // what is called is never chosen by a call's values
    for (field, from, to) in [
        (
            "dbus.destination",
            format!("destination = \"{NAME}\""),
            "destination = \"com.example.{{ a }}\"",
        ),
        (
            "dbus.path",
            format!("path = \"{PATH}\""),
            "path = \"/com/example/{{ a }}\"",
        ),
        (
            "dbus.interface",
            format!("interface = \"{IFACE}\""),
            "interface = \"{% if a %}com.example.Thermostat1{% endif %}\"",
        ),
        (
            "dbus.method",
            "method = \"SetTarget\"".to_string(),
            "method = \"{{ a }}\"",
        ),
    ] {
        load_err(
            &swap(&from, to),
            &[field, "is a template", "fixed", "one tool per method"],
        );
    }
    load_err(
        &swap("[1, 2.5, \"x\"]", "[1, 2.5, \"x\\u0000y\"]"),
        &["dbus.args[2]", "NUL"],
    );
    load_err(
        &swap("signature = \"uds\"", "signature = \"uzs\""),
        &["dbus.signature", "is not a D-Bus signature"],
    );
    load_err(
        &swap("signature = \"uds\"", "signature = \"a{vs}d\""),
        &["dbus.signature"],
    );
    load_err(
        &swap("signature = \"uds\"", "signature = \"ud\""),
        &[
            "dbus.args",
            "has 3 values but dbus.signature \"ud\" has 2 arguments",
        ],
    );
    load_err(
        &swap("signature = \"uds\"", "signature = \"udsh\""),
        &["dbus.signature", "file descriptor"],
    );
    load_err(
        &swap("[1, 2.5, \"x\"]", "[-1, 2.5, \"x\"]"),
        &[
            "dbus.args[0]",
            "expected an unsigned 32-bit integer (u), got -1",
        ],
    );
    load_err(
        &swap("[1, 2.5, \"x\"]", "[1, 2.5, \"{{ d }}\"]"),
        &["dbus.args[2]", "`d`", "not a parameter"],
    );
    load_err(
        &tool("Labels", "a{us}", r#"[{k = "x"}]"#, ""),
        &["dbus.args[0][key \"k\"]"],
    );
    load_err(
        &tool("Labels", "a{ss}ayai", r#"[{k = []}, "", []]"#, ""),
        &["dbus.args[0].k", "expected a string (s)"],
    );
    load_err(
        &tool("State", "", "[]", "timeout_ms = 0\n"),
        &["dbus.timeout_ms", "greater than 0"],
    );
    load_err(
        &good.replace("method = \"SetTarget\"\n", ""),
        &["missing field `method`"],
    );
    load_err(&format!("{good}colour = 1\n"), &["unknown field `colour`"]);
    // bus defaults to system, no signature means no arguments
    let s = spec_of(
        &swap("bus = \"session\"\n", "")
            .replace("signature = \"uds\"\nargs = [1, 2.5, \"x\"]\n", ""),
    );
    assert_eq!(
        (s.bus, s.arg_types.len(), s.timeout),
        (DbusBus::System, 0, Duration::from_millis(5000))
    );
}

/// A bus whose policy denies calling the thermostat's `Fail` method.
struct LockedBus {
    child: std::process::Child,
    address: String,
    dir: std::path::PathBuf,
}

impl Drop for LockedBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn locked_bus() -> LockedBus {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("hearth-dbus-locked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("bus.conf");
    std::fs::write(
        &conf,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <deny send_destination="{NAME}" send_interface="{IFACE}" send_member="Fail"/>
  </policy>
</busconfig>
"#,
            dir.display()
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new("dbus-daemon")
        .arg(format!("--config-file={}", conf.display()))
        .args(["--nofork", "--nopidfile", "--print-address=1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("dbus-daemon (run scripts/setup)");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line.trim().to_string();
    assert!(address.starts_with("unix:"), "{address:?}");
    LockedBus {
        child,
        address,
        dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_bus_policy_denies() {
    let bus = locked_bus();
    let _service = zbus::connection::Builder::address(bus.address.as_str())
        .name(NAME)
        .serve_at(
            PATH,
            Thermostat {
                seen: Arc::default(),
            },
        )
        .build()
        .await
        .unwrap();
    let mut backends = Backends::none();
    backends.dbus = DbusBackend::with_addresses(None, Some(bus.address.clone()));
    let out = hearth::tools::dbus::run(
        "thermo",
        &spec("Fail", "", "[]"),
        &json!({}),
        &backends.dbus,
    )
    .await;
    assert_error(
        &out,
        &[
            "the session bus policy denies hearth calling com.example.Thermostat1.Fail on com.example.Thermostat",
            "org.freedesktop.DBus.Error.AccessDenied",
            "/etc/dbus-1/session.d/",
            "<allow send_destination=\"com.example.Thermostat\"/>",
        ],
    );
    // what the policy allows still works
    let out = hearth::tools::dbus::run(
        "thermo",
        &spec("State", "", "[]"),
        &json!({}),
        &backends.dbus,
    )
    .await;
    assert_eq!(out.text, r#"["heat",21.5]"#);
}
