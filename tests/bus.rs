//! The D-Bus face end to end: `hearth run --no-audio` on a private dbus-daemon, driven by
//! the standard tools (busctl, gdbus), with the real model, a real mosquitto broker behind
//! the shipped lights example, a tool provider in a second process, and systemd's notify
//! protocol read from the socket the daemon is given.

use hearth_testkit::daemon::*;
use hearth_testkit::model::*;
use hearth_testkit::services::*;

use std::time::{Duration, Instant};

/// Every MQTT message on the broker, as (topic, payload), collected in the background.
fn sniff(
    rt: &tokio::runtime::Runtime,
    broker: &Broker,
) -> std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut opts = rumqttc::MqttOptions::new("sniffer", "127.0.0.1", broker.port);
    opts.set_keep_alive(Duration::from_secs(5));
    let (client, mut eventloop) = rumqttc::AsyncClient::new(opts, 64);
    let s = seen.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(async move {
        client
            .subscribe("#", rumqttc::QoS::AtLeastOnce)
            .await
            .expect("subscribe");
        let mut tx = Some(tx);
        loop {
            match eventloop.poll().await {
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::SubAck(_))) => {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(());
                    }
                }
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                    s.lock().unwrap().push((
                        p.topic.clone(),
                        String::from_utf8_lossy(&p.payload).into_owned(),
                    ))
                }
                Ok(_) => {}
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the sniffer subscribed");
    seen
}

/// Wait until `seen` has a message on a topic containing `room`.
fn wait_for_light(seen: &std::sync::Mutex<Vec<(String, String)>>, room: &str) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(m) = seen.lock().unwrap().iter().find(|(t, _)| t.contains(room)) {
            return m.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no MQTT message for {room}: {:?}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One test at a time: each loads the model or hashes it, and the watchdog's timing must not
/// starve on 2 cores.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const AGENT: [&str; 3] = ["io.hearth.Agent1", "/io/hearth/Agent", "io.hearth.Agent1"];

/// `busctl --json=short call io.hearth.Agent1 /io/hearth/Agent io.hearth.Agent1 METHOD SIG ARGS…`.
fn call(bus: &PrivateBus, method: &str, sig: &str, args: &[&str]) -> (bool, String, String) {
    let mut a = vec!["--json=short", "call", AGENT[0], AGENT[1], AGENT[2], method];
    if !sig.is_empty() {
        a.push(sig);
    }
    a.extend_from_slice(args);
    bus_tool(bus, &a)
}

/// `gdbus call … --method io.hearth.Agent1.METHOD ARGS…`: gdbus names the D-Bus error.
fn gcall(bus: &PrivateBus, method: &str, args: &[&str]) -> (bool, String, String) {
    let m = format!("io.hearth.Agent1.{method}");
    let mut a = vec![
        "gdbus",
        "call",
        "--dest",
        AGENT[0],
        "--object-path",
        AGENT[1],
        "--method",
        &m,
    ];
    a.extend_from_slice(args);
    bus_tool(bus, &a)
}

/// The string of an `s` reply as `busctl --json=short` prints it (`{"type":"s","data":["…"]}`).
fn busctl_string(out: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("busctl's JSON");
    assert_eq!(v["type"], "s", "{out}");
    v["data"][0].as_str().expect("one string").to_string()
}

fn provider_exe() -> std::path::PathBuf {
    // target/debug/deps/bus-HASH → target/debug/examples/tool_provider
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target/debug");
    let p = dir.join("examples/tool_provider");
    assert!(
        p.is_file(),
        "{} is missing: `cargo test` builds the examples (cargo build --example tool_provider)",
        p.display()
    );
    p
}

#[test]
fn the_face_on_a_private_bus() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bus = PrivateBus::start();
    let broker = Broker::start("face");
    let seen = sniff(&rt, &broker);
    let mut daemon = Daemon::start("face", &bus, &broker, &model, None);
    let notes = daemon.wait_ready();
    assert!(notes.iter().any(|m| m.starts_with("STATUS=")), "{notes:?}");

    // introspection: the interface exactly as docs/guide.md documents it
    let (ok, xml, err) = bus_tool(&bus, &["introspect", "--xml-interface", AGENT[0], AGENT[1]]);
    assert!(ok, "{err}");
    for member in [
        "<method name=\"Ask\">",
        "<method name=\"ListTools\">",
        "<method name=\"CallTool\">",
        "<method name=\"Cancel\">",
        "<method name=\"RegisterTool\">",
        "<property name=\"State\" type=\"s\" access=\"read\"",
        "<property name=\"Preset\" type=\"s\" access=\"read\"",
        "<property name=\"Muted\" type=\"b\" access=\"readwrite\"",
        "<signal name=\"Heard\">",
        "<signal name=\"Replied\">",
        "<signal name=\"ToolCalled\">",
    ] {
        assert!(xml.contains(member), "{member} not in\n{xml}");
    }

    // properties
    let (_, state, _) = bus_tool(
        &bus,
        &["get-property", AGENT[0], AGENT[1], AGENT[2], "State"],
    );
    assert_eq!(state.trim(), "s \"idle\"");
    let (_, preset, _) = bus_tool(
        &bus,
        &["get-property", AGENT[0], AGENT[1], AGENT[2], "Preset"],
    );
    assert_eq!(preset.trim(), "s \"qwen2.5-coder\"");
    let (ok, _, err) = bus_tool(
        &bus,
        &[
            "set-property",
            AGENT[0],
            AGENT[1],
            AGENT[2],
            "Muted",
            "b",
            "true",
        ],
    );
    assert!(ok, "{err}");
    let (_, muted, _) = bus_tool(
        &bus,
        &["get-property", AGENT[0], AGENT[1], AGENT[2], "Muted"],
    );
    assert_eq!(muted.trim(), "b true");

    // ListTools: the built-ins and the lights example
    let (ok, out, err) = call(&bus, "ListTools", "", &[]);
    assert!(ok, "{err}");
    let tools: serde_json::Value = serde_json::from_str(&busctl_string(&out)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"set_light") && names.contains(&"get_time"),
        "{names:?}"
    );

    // the signals a listener sees
    let signals = rt.block_on(agent_signals(&bus.address));

    // CallTool: validated, run, and the message reaches the broker
    let (ok, out, err) = call(
        &bus,
        "CallTool",
        "ss",
        &["set_light", r#"{"room":"kitchen","on":true}"#],
    );
    assert!(ok, "{err}\n{}", daemon.log());
    let result: serde_json::Value = serde_json::from_str(&busctl_string(&out)).unwrap();
    assert_eq!(result["status"], "ok", "{result}");
    let (topic, payload) = wait_for_light(&seen, "kitchen");
    assert!(payload.contains("ON"), "{topic}: {payload}");

    let tool_called = rt.block_on(async {
        use futures_util::StreamExt;
        let mut signals = signals;
        tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let m = signals.next().await.unwrap().unwrap();
                if m.header().member().map(|m| m.as_str()) == Some("ToolCalled") {
                    return m
                        .body()
                        .deserialize::<(String, String, String, String)>()
                        .unwrap();
                }
            }
        })
        .await
        .expect("a ToolCalled signal")
    });
    assert_eq!(tool_called.0, "set_light");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&tool_called.1).unwrap(),
        serde_json::json!({"room": "kitchen", "on": true})
    );
    assert_eq!(tool_called.3, "ok");

    // the named errors, as gdbus reports them
    for (args, name, fragment) in [
        (
            ["set_light", "{room: kitchen}"],
            "io.hearth.Error.InvalidArguments",
            "not valid JSON",
        ),
        (
            ["set_light", "[1, 2]"],
            "io.hearth.Error.InvalidArguments",
            "must be a JSON object",
        ),
        (
            ["open_garage", "{}"],
            "io.hearth.Error.UnknownTool",
            "no tool is named \"open_garage\"",
        ),
        (
            ["set_light", r#"{"room":"garage","on":true}"#],
            "io.hearth.Error.InvalidArguments",
            "garage",
        ),
        (
            ["set_light", r#"{"room":"kitchen"}"#],
            "io.hearth.Error.InvalidArguments",
            "on",
        ),
    ] {
        let (ok, out, err) = gcall(&bus, "CallTool", &args);
        assert!(!ok, "{args:?} succeeded: {out}");
        assert!(
            err.contains(name) && err.contains(fragment),
            "{args:?}: {err}"
        );
    }
    let (ok, _, err) = gcall(&bus, "Ask", &["   "]);
    assert!(
        !ok && err.contains("io.hearth.Error.InvalidArguments"),
        "{err}"
    );

    // Ask: one turn of the real model, which calls the tool; State goes thinking → idle
    // and the reply is signalled
    let during = rt.block_on(agent_signals(&bus.address));
    let (ok, out, err) = call(&bus, "Ask", "s", &["Turn on the bedroom light."]);
    assert!(ok, "{err}\n{}", daemon.log());
    let reply = busctl_string(&out);
    assert!(!reply.trim().is_empty(), "{out}");
    let (_, payload) = wait_for_light(&seen, "bedroom");
    assert!(payload.contains("ON"), "{payload}");
    let (states, replied) = rt.block_on(async {
        use futures_util::StreamExt;
        let mut stream = during;
        let mut states = Vec::new();
        let mut replied = None;
        let _ = tokio::time::timeout(Duration::from_secs(3), async {
            while let Some(Ok(m)) = stream.next().await {
                match m.header().member().map(|m| m.to_string()).as_deref() {
                    Some("PropertiesChanged") => states.extend(state_change(&m)),
                    Some("Replied") => {
                        let (text, source) = m.body().deserialize::<(String, String)>().unwrap();
                        assert_eq!(source, "", "a D-Bus caller's reply has no satellite");
                        replied = Some(text)
                    }
                    _ => {}
                }
                if states.len() >= 2 && replied.is_some() {
                    break;
                }
            }
        })
        .await;
        (states, replied)
    });
    assert_eq!(states, ["thinking", "idle"]);
    assert_eq!(replied.as_deref(), Some(reply.as_str()));

    // a provider in a second process: registered, called, dropped when it leaves
    let mut provider = std::process::Command::new(provider_exe())
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("starting the provider");
    let mut lines =
        std::io::BufRead::lines(std::io::BufReader::new(provider.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("registered get_weather"), "{first}");
    let (ok, out, err) = call(
        &bus,
        "CallTool",
        "ss",
        &["get_weather", r#"{"city":"Paris"}"#],
    );
    assert!(ok, "{err}");
    let result: serde_json::Value = serde_json::from_str(&busctl_string(&out)).unwrap();
    assert_eq!(result["result"], "Sunny and 21 degrees in Paris.");
    assert_eq!(
        lines.next().unwrap().unwrap(),
        r#"call get_weather {"city":"Paris"}"#
    );
    // its schema is enforced before it is called
    let (ok, _, err) = gcall(&bus, "CallTool", &["get_weather", "{}"]);
    assert!(
        !ok && err.contains("io.hearth.Error.InvalidArguments"),
        "{err}"
    );
    // a second provider may not take a name in use
    let (ok, _, err) = gcall(
        &bus,
        "RegisterTool",
        &[r#"{"name":"set_light","description":"Mine."}"#],
    );
    assert!(
        !ok && err.contains("InvalidArguments") && err.contains("already offered"),
        "{err}"
    );

    provider.kill().unwrap();
    provider.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, out, _) = call(&bus, "ListTools", "", &[]);
        if !out.contains("get_weather") {
            break;
        }
        assert!(Instant::now() < deadline, "get_weather was not dropped");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (ok, _, err) = gcall(&bus, "CallTool", &["get_weather", r#"{"city":"Paris"}"#]);
    assert!(!ok && err.contains("io.hearth.Error.UnknownTool"), "{err}");
}

/// systemd's watchdog protocol: pings while every component answers, none once one is
/// stuck (here the bus: its daemon is stopped), and a supervisor that restarts the
/// service on the missed deadline (what systemd does with WatchdogSec) gets a ready
/// daemon again.
#[test]
fn watchdog_pings_stop_when_a_component_hangs() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let bus = PrivateBus::start();
    let broker = Broker::start("dog");
    let mut daemon = Daemon::start("dog", &bus, &broker, &model, Some(2000));
    daemon.wait_ready();
    let pings = daemon.messages(Duration::from_secs(4));
    let n = pings.iter().filter(|m| *m == "WATCHDOG=1").count();
    assert!(
        n >= 3,
        "expected a ping every second: {pings:?}\n{}",
        daemon.log()
    );

    // stop the bus daemon: hearth's face cannot answer through it
    let pid = bus.pid().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    // pings already in flight may land; after that, none
    let _ = daemon.messages(Duration::from_millis(2200));
    let stuck = daemon.messages(Duration::from_secs(4));
    let _ = std::process::Command::new("kill")
        .args(["-CONT", &pid])
        .status();
    assert!(
        !stuck.iter().any(|m| m == "WATCHDOG=1"),
        "pinged while stuck: {stuck:?}"
    );
    assert!(
        stuck
            .iter()
            .any(|m| m.starts_with("STATUS=not answering: bus")),
        "{stuck:?}\n{}",
        daemon.log()
    );
    // what systemd does on the missed deadline: abort and start again
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    drop(daemon);
    let mut again = Daemon::start("dog2", &bus, &broker, &model, Some(2000));
    again.wait_ready();
    let pings = again.messages(Duration::from_secs(3));
    assert!(pings.iter().any(|m| m == "WATCHDOG=1"), "{pings:?}");
}

/// A tool that takes a while, writing `slow.out` in the daemon's directory when it is done.
const SLOW_TOOL: &str = r#"
[[tool]]
name = "slow_note"
description = "Write a note, slowly."
[tool.exec]
argv = ["sh", "-c", "sleep 2; echo finished > '{dir}/slow.out'"]
timeout_ms = 8000
"#;

/// systemd's stop (SIGTERM) while a tool runs: the call finishes and is logged, the MQTT
/// connection is closed after its messages, and hearth exits well within TimeoutStopSec.
#[test]
fn sigterm_lets_the_running_tool_finish() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bus = PrivateBus::start();
    let broker = Broker::start("term");
    let seen = sniff(&rt, &broker);
    let mut daemon = Daemon::start_with(
        "term",
        &bus,
        &broker,
        &model,
        None,
        &[("slow.toml", SLOW_TOOL)],
    );
    daemon.wait_ready();
    // the light first, so the MQTT connection is open
    let (ok, _, err) = call(
        &bus,
        "CallTool",
        "ss",
        &["set_light", r#"{"room":"bedroom","on":true}"#],
    );
    assert!(ok, "{err}\n{}", daemon.log());
    wait_for_light(&seen, "bedroom");
    // the slow tool, from another thread (its reply may never come: hearth is stopping)
    let address = bus.address.clone();
    let caller = std::thread::spawn(move || {
        std::process::Command::new("busctl")
            .arg(format!("--address={address}"))
            .args(["--timeout=30", "call"])
            .args(AGENT)
            .args(["CallTool", "ss", "slow_note", "{}"])
            .output()
    });
    let log_has = |daemon: &Daemon, what: &str| daemon.log().contains(what);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log_has(&daemon, "slow_note") {
        assert!(
            Instant::now() < deadline,
            "the call never reached hearth:\n{}",
            daemon.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    assert_eq!(
        unsafe { libc::kill(daemon.child.id() as i32, libc::SIGTERM) },
        0
    );
    let signalled = Instant::now();
    let status = loop {
        if let Some(s) = daemon.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(20),
            "hearth did not exit within TimeoutStopSec (20 s):\n{}",
            daemon.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = signalled.elapsed();
    let _ = caller.join();
    let log = daemon.log();
    assert!(status.success(), "{status}:\n{log}");
    let out = std::fs::read_to_string(daemon.dir.join("slow.out")).unwrap_or_default();
    assert_eq!(out.trim(), "finished", "the tool was cut off:\n{log}");
    // the outcome is logged, in its call's span
    assert!(
        log.lines()
            .any(|l| l.contains("slow_note") && l.contains("tool call done")),
        "{log}"
    );
    assert!(log.contains("MQTT connection closed"), "{log}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}

/// `hearth doctor`: every check reported, a broker that answers and one that does not, and
/// the exit status saying whether anything failed.
#[test]
fn doctor_reports_each_check_and_its_fix() {
    let _one = serial();
    let broker = Broker::start("doctor");
    let dir = std::env::temp_dir().join(format!("hearth-doctor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/examples");
    std::fs::copy(examples.join("lights.toml"), dir.join("tools/lights.toml")).unwrap();
    let doctor = |url: &str| {
        let config = dir.join("hearth.toml");
        std::fs::write(
            &config,
            format!("[mqtt]\nurl = \"{url}\"\n[bus]\nbus = \"none\"\n"),
        )
        .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["doctor", "--json", "--config"])
            .arg(&config)
            .arg("--tools")
            .arg(dir.join("tools"))
            .output()
            .expect("running hearth doctor");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let findings = report["findings"].as_array().unwrap().clone();
        let failed = findings.iter().any(|f| f["level"] == "fail");
        assert_eq!(
            out.status.success(),
            !failed,
            "exit status vs findings: {findings:#?}"
        );
        findings
    };
    let area = |findings: &[serde_json::Value], a: &str| -> Vec<serde_json::Value> {
        findings
            .iter()
            .filter(|f| f["area"] == a)
            .cloned()
            .collect()
    };

    let good = doctor(&broker.url());
    for a in [
        "config",
        "preset",
        "model",
        "whisper",
        "voice",
        "onnxruntime",
        "espeak-ng",
        "wake",
        "earcon",
        "bell",
        "audio",
        "bus",
        "tools",
        "mqtt",
    ] {
        assert!(!area(&good, a).is_empty(), "no {a} finding: {good:#?}");
    }
    // the default wake word: its files (sha256 checked) and the model loaded on TF Lite
    let wake = area(&good, "wake");
    assert!(wake.iter().all(|f| f["level"] == "ok"), "{wake:#?}");
    assert!(
        wake.last().unwrap()["what"]
            .as_str()
            .unwrap()
            .contains("listening for Okay Nabu"),
        "{wake:#?}"
    );
    assert_eq!(area(&good, "config")[0]["level"], "ok");
    assert_eq!(area(&good, "mqtt")[0]["level"], "ok", "{good:#?}");
    let tools = &area(&good, "tools")[0];
    assert_eq!(tools["level"], "ok");
    assert!(
        tools["what"].as_str().unwrap().starts_with("3 tools"),
        "{tools}"
    );

    let port = free_port();
    let bad = doctor(&format!("mqtt://127.0.0.1:{port}"));
    let mqtt = &area(&bad, "mqtt")[0];
    assert_eq!(mqtt["level"], "fail");
    assert!(
        mqtt["what"].as_str().unwrap().contains(&port.to_string()),
        "{mqtt}"
    );
    assert!(
        mqtt["fix"].as_str().unwrap().contains("[mqtt] url"),
        "{mqtt}"
    );

    // `hearth doctor --json` on a config file of `text` alone: its exit status and findings
    let doctor_on = |name: &str, text: &str| -> (bool, Vec<serde_json::Value>) {
        let config = dir.join(name);
        std::fs::write(&config, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["doctor", "--json", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let findings = report["findings"].as_array().unwrap().clone();
        (out.status.success(), findings)
    };

    // a wake word whose model is not there: named, with the fix
    let (ok, findings) = doctor_on(
        "wake.toml",
        "[listen]\nwake = [\"hey_nobody\"]\n[bus]\nbus = \"none\"\n",
    );
    assert!(!ok);
    let wake = area(&findings, "wake");
    let failed: Vec<_> = wake.iter().filter(|f| f["level"] == "fail").collect();
    assert_eq!(failed.len(), 2, "the model and its settings: {wake:#?}");
    assert!(
        failed[0]["what"]
            .as_str()
            .unwrap()
            .contains("hey_nobody.tflite")
            && failed[0]["fix"].as_str().unwrap().contains("[listen] wake"),
        "{wake:#?}"
    );

    // the end-of-turn model: its file, and its answer on the known input on this CPU (the
    // check `hearth run` makes at load; int8 products once differed between CPUs)
    let (_, findings) = doctor_on(
        "turn.toml",
        "[listen]\nend_of_turn = \"smart-turn\"\n[bus]\nbus = \"none\"\n",
    );
    let turn = area(&findings, "end of turn");
    assert_eq!(turn.len(), 2, "the file and its answer: {turn:#?}");
    assert!(turn.iter().all(|f| f["level"] == "ok"), "{turn:#?}");
    assert!(
        turn[1]["what"]
            .as_str()
            .unwrap()
            .contains("answers its known input as the reference does"),
        "{turn:#?}"
    );

    // a broken config file is reported with its place, and the rest is still checked
    let config = dir.join("broken.toml");
    std::fs::write(&config, "[agent]\nthreds = 2\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["doctor", "--config"])
        .arg(&config)
        .args(["--bus", "none"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        text.contains("[FAIL] config") && text.contains("broken.toml:2:1"),
        "{text}"
    );
    assert!(text.contains("] model"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hearth ask` runs the config's connections too: the lights example publishes to the
/// broker named in `[mqtt]`.
#[test]
fn ask_publishes_through_the_configured_broker() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let broker = Broker::start("ask");
    let seen = sniff(&rt, &broker);
    let dir = std::env::temp_dir().join(format!("hearth-ask-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/examples");
    std::fs::copy(examples.join("lights.toml"), dir.join("tools/lights.toml")).unwrap();
    let config = dir.join("hearth.toml");
    std::fs::write(&config, format!("[mqtt]\nurl = \"{}\"\n", broker.url())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["ask", "--json", "--no-prompt-cache", "--config"])
        .arg(&config)
        .arg("--tools")
        .arg(dir.join("tools"))
        .arg("--model")
        .arg(&model)
        .arg("Turn on the hallway light.")
        .output()
        .expect("running hearth ask");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (topic, payload) = wait_for_light(&seen, "hallway");
    assert_eq!(topic, "zigbee2mqtt/hallway light/set");
    assert!(payload.contains("\"ON\""), "{payload}");
    // without [mqtt] the manifest does not load, and the error names the section to add
    std::fs::write(&config, "").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["ask", "--config"])
        .arg(&config)
        .arg("--tools")
        .arg(dir.join("tools"))
        .arg("--model")
        .arg(&model)
        .arg("Turn on the hallway light.")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("[mqtt] url"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

const GARAGE_TOOL: &str = r#"
[[tool]]
name = "set_garage"
description = "Open or close the garage door."
say = "The garage door is {{ 'open' if open else 'closed' }}."
[tool.confirm]
when = { open = true }
ask = "Open the garage door?"
[tool.parameters]
type = "object"
required = ["open"]
additionalProperties = false
[tool.parameters.properties.open]
type = "boolean"
[tool.exec]
argv = ["sh", "-c", "echo \"$0\" >> '{dir}/garage.out'; echo done", "{{ 'open' if open else 'closed' }}"]
[[tool.intent]]
sentences = ["open the garage [door]"]
args = { open = true }
[[tool.intent]]
sentences = ["close the garage [door]"]
args = { open = false }
"#;

/// A call that waits for a person's yes: a program's CallTool is refused (it is not a
/// trusted user), its Ask gets the question, and only its yes runs the call; the other
/// direction runs at once either way.
#[test]
fn a_call_that_waits_for_a_yes_is_asked_about_over_the_bus_too() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let bus = PrivateBus::start();
    let broker = Broker::start("garage");
    let mut daemon = Daemon::start_with(
        "garage",
        &bus,
        &broker,
        &model,
        None,
        &[("garage.toml", GARAGE_TOOL)],
    );
    daemon.wait_ready();
    let out = daemon.dir().join("garage.out");
    let (ok, _, err) = gcall(&bus, "CallTool", &["set_garage", r#"{"open":true}"#]);
    assert!(!ok, "CallTool opened the garage");
    assert!(
        err.contains("io.hearth.Error.NeedsConfirmation")
            && err.contains("Open the garage door?")
            && err.contains("trusted_uids"),
        "{err}"
    );
    assert!(!out.exists(), "nothing ran");
    let (ok, _, err) = gcall(&bus, "CallTool", &["set_garage", r#"{"open":false}"#]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "closed\n");

    // a program's conversation is its connection: both Asks on one
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (asked, done) = rt.block_on(async {
        let conn = zbus::connection::Builder::address(bus.address.as_str())
            .build()
            .await
            .unwrap();
        let ask = |text: &'static str| {
            let conn = conn.clone();
            async move {
                let reply = conn
                    .call_method(Some(AGENT[0]), AGENT[1], Some(AGENT[2]), "Ask", &(text,))
                    .await
                    .unwrap_or_else(|e| panic!("Ask {text:?}: {e}"));
                reply.body().deserialize::<String>().unwrap()
            }
        };
        let asked = ask("Open the garage door.").await;
        let nothing_yet = std::fs::read_to_string(&out).unwrap();
        assert_eq!(nothing_yet, "closed\n", "the question ran nothing");
        (asked, ask("Yes.").await)
    });
    assert_eq!(asked, "Open the garage door?", "{}", daemon.log());
    assert_eq!(done, "The garage door is open.");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "closed\nopen\n");
}

/// Timers over the bus, as a household uses them: set by `Ask` in words (a local intent, no
/// model), listed in the `Timers` property, asked about, and done: `TimerFinished`, gone from
/// the property; kept in the daemon's state directory meanwhile. (Ringing on a speaker until
/// "stop" is `a_timer_done_rings_in_its_room_until_stopped`, in the library.)
#[test]
fn timers_are_set_listed_and_finish_over_the_bus() {
    let Some(model) = qwen_path() else { return };
    let _one = serial();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bus = PrivateBus::start();
    let broker = Broker::start("timers");
    let mut daemon = Daemon::start("timers", &bus, &broker, &model, None);
    daemon.wait_ready();
    let signals = rt.block_on(agent_signals(&bus.address));
    let ask = |text: &str| {
        let (ok, out, err) = call(&bus, "Ask", "s", &[text]);
        assert!(ok, "{text}: {err}\n{}", daemon.log());
        busctl_string(&out)
    };
    let timers = || {
        let (ok, out, err) = bus_tool(
            &bus,
            &[
                "--json=short",
                "get-property",
                AGENT[0],
                AGENT[1],
                AGENT[2],
                "Timers",
            ],
        );
        assert!(ok, "{err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        serde_json::from_str::<serde_json::Value>(v["data"].as_str().unwrap()).unwrap()
    };
    assert_eq!(timers(), serde_json::json!([]));
    assert_eq!(
        ask("Set a pasta timer for 4 seconds."),
        "Pasta timer set for 4 seconds."
    );
    assert_eq!(ask("set a timer for an hour"), "Timer set for 1 hour.");
    let listed = timers();
    assert_eq!(listed[0]["name"], "pasta", "{listed}");
    assert_eq!(listed[0]["kind"], "timer", "{listed}");
    assert_eq!(listed[1]["name"], "", "{listed}");
    assert!(
        listed[1]["seconds_left"].as_u64().unwrap() > 3590,
        "{listed}"
    );
    let kept = std::fs::read_to_string(daemon.dir().join("state/timers.json")).unwrap();
    assert!(kept.contains("pasta"), "{kept}");
    assert_eq!(
        ask("pause the timer"),
        "Which timer: pasta or the 1 hour one?"
    );

    let finished = rt.block_on(async {
        use futures_util::StreamExt;
        let mut signals = signals;
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let m = signals.next().await.unwrap().unwrap();
                if m.header().member().map(|m| m.as_str()) == Some("TimerFinished") {
                    return m
                        .body()
                        .deserialize::<(String, String, String, u64)>()
                        .unwrap();
                }
            }
        })
        .await
        .expect("a TimerFinished signal")
    });
    assert_eq!(finished, ("timer".into(), "pasta".into(), String::new(), 0));
    // no speaker here (--no-audio, no satellite): done and published, nothing rings
    let listed = timers();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["name"], "", "{listed}");
    assert_eq!(ask("stop"), "No timer is ringing.");
    assert_eq!(ask("cancel the timer"), "1 hour timer cancelled.");
    assert_eq!(
        ask("what timers are running?"),
        "There is no timer running."
    );
    assert_eq!(timers(), serde_json::json!([]));
}
