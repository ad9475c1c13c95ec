//! The `mqtt` executor against a real mosquitto: what arrives on the broker (topic, payload,
//! QoS, retain, as a separate client sees it), state topics answered by a fake device,
//! timeouts, a broker that is down, authentication, manifest errors, and the examples in
//! tools/examples.

use crate::common::services::*;

use crate::common::fixtures::write_secret;
use crate::common::manifest::*;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::config::{HomeAssistantSection, MqttSection};
use hearth::toolcall::ToolCall;
use hearth::tools::homeassistant::HaBackend;
use hearth::tools::{parse_manifest, Backends, Registry, ToolStatus, ToolsError};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, Publish, QoS};
use serde_json::{json, Value};
use tokio::sync::mpsc;

fn section(url: &str) -> MqttSection {
    MqttSection {
        url: url.to_string(),
        client_id: None,
        username: None,
        password_file: None,
        keep_alive_s: None,
        ca_file: None,
        client_cert_file: None,
        client_key_file: None,
    }
}

fn backends(section: &MqttSection) -> Arc<Backends> {
    let b = mqtt_backends(section).unwrap();
    Arc::new(b)
}

/// A plain MQTT client of the test: sees what arrives on `filter`, and can publish.
struct Watcher {
    client: AsyncClient,
    rx: mpsc::UnboundedReceiver<Publish>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watcher {
    /// Subscribed (QoS 2, so a message keeps the QoS it was published with) once this returns.
    async fn start(port: u16, filter: &str, login: Option<(&str, &str)>) -> Watcher {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut o = MqttOptions::new(
            format!("test-watcher-{}-{n}", std::process::id()),
            "127.0.0.1",
            port,
        );
        if let Some((u, p)) = login {
            o.set_credentials(u, p);
        }
        let (client, mut eventloop) = AsyncClient::new(o, 16);
        client.subscribe(filter, QoS::ExactlyOnce).await.unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        let (subscribed_tx, subscribed_rx) = tokio::sync::oneshot::channel();
        let mut subscribed_tx = Some(subscribed_tx);
        let task = tokio::spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        if let Some(t) = subscribed_tx.take() {
                            let _ = t.send(());
                        }
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let _ = tx.send(p);
                    }
                    Ok(_) => {}
                    Err(e) => panic!("the test's MQTT client failed: {e}"),
                }
            }
        });
        tokio::time::timeout(Duration::from_secs(5), subscribed_rx)
            .await
            .expect("the watcher's subscription was acknowledged")
            .unwrap();
        Watcher { client, rx, task }
    }

    async fn next(&mut self) -> Publish {
        tokio::time::timeout(Duration::from_secs(5), self.rx.recv())
            .await
            .expect("a message within 5 s")
            .expect("the watcher is running")
    }

    /// Nothing more arrives within `wait`.
    async fn quiet(&mut self, wait: Duration) {
        if let Ok(Some(p)) = tokio::time::timeout(wait, self.rx.recv()).await {
            panic!("unexpected message on {}: {:?}", p.topic, p.payload);
        }
    }
}

const LIGHT: &str = r#"
[[tool]]
name = "light"
description = "Set a light."
[tool.parameters]
type = "object"
required = ["room", "on"]
additionalProperties = false
[tool.parameters.properties.room]
type = "string"
[tool.parameters.properties.on]
type = "boolean"
[tool.parameters.properties.brightness]
type = "integer"
[tool.mqtt]
topic = "zigbee2mqtt/{{ room }} light/set"
payload = { state = "{{ 'ON' if on else 'OFF' }}", brightness = "{{ brightness }}", transition = 2, color = { x = 0.3, label = "{{ room | upper }}" } }
"#;

#[tokio::test]
async fn json_payload_keeps_types_and_arrives_on_the_exact_topic() {
    let broker = Broker::start("json");
    let r = registry(LIGHT, backends(&section(&broker.url())));
    let mut w = Watcher::start(broker.port, "zigbee2mqtt/#", None).await;

    let o = r
        .call(&call(
            "light",
            json!({"room": "living room", "on": true, "brightness": 40}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "published to zigbee2mqtt/living room light/set");
    let p = w.next().await;
    assert_eq!(p.topic, "zigbee2mqtt/living room light/set");
    assert_eq!(
        std::str::from_utf8(&p.payload).unwrap(),
        r#"{"state":"ON","brightness":40,"transition":2,"color":{"x":0.3,"label":"LIVING ROOM"}}"#
    );
    assert_eq!(p.qos, QoS::AtLeastOnce, "qos 1 is the default");
    assert!(!p.retain);

    // a missing argument the payload reads is an error, and nothing is sent
    let o = r
        .call(&call("light", json!({"room": "kitchen", "on": false})))
        .await;
    assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
    assert!(
        o.result.starts_with("light: cannot build mqtt.payload") && o.result.contains("brightness"),
        "{}",
        o.result
    );
    w.quiet(Duration::from_millis(300)).await;

    // calls in parallel share the one connection; each gets its own acknowledgement
    let r = Arc::new(r);
    let calls: Vec<ToolCall> = (0..20)
        .map(|i| {
            let arguments = json!({"room": format!("room{i}"), "on": i % 2 == 0, "brightness": i});
            r.toolset()
                .call(format!("c{i}"), "light", arguments)
                .unwrap()
        })
        .collect();
    let outcomes = Arc::clone(&r).call_all(calls, None).await;
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
        assert_eq!(
            o.result,
            format!("published to zigbee2mqtt/room{i} light/set")
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..20 {
        seen.push(w.next().await.topic);
    }
    seen.sort();
    let mut want: Vec<String> = (0..20)
        .map(|i| format!("zigbee2mqtt/room{i} light/set"))
        .collect();
    want.sort();
    assert_eq!(seen, want);
}

#[tokio::test]
async fn string_payload_is_sent_as_text_with_its_qos_and_retain() {
    let broker = Broker::start("text");
    let manifest = r#"
[[tool]]
name = "plug"
description = "Switch a plug."
[tool.parameters]
type = "object"
required = ["on"]
[tool.parameters.properties.on]
type = "boolean"
[tool.mqtt]
topic = "cmnd/kettle/POWER"
payload = "{{ 'ON' if on else 'OFF' }}"
qos = 2
retain = true

[[tool]]
name = "quick"
description = "Fire and forget."
[tool.mqtt]
topic = "home/ping"
payload = "\"quoted\" text"
qos = 0
"#;
    let r = registry(manifest, backends(&section(&broker.url())));
    let mut w = Watcher::start(broker.port, "#", None).await;

    let o = r.call(&call("plug", json!({"on": true}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "published to cmnd/kettle/POWER");
    let p = w.next().await;
    assert_eq!(p.topic, "cmnd/kettle/POWER");
    assert_eq!(&p.payload[..], b"ON", "a string payload is not JSON-quoted");
    assert_eq!(p.qos, QoS::ExactlyOnce);

    let o = r.call(&call("quick", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let p = w.next().await;
    assert_eq!(p.topic, "home/ping");
    assert_eq!(&p.payload[..], b"\"quoted\" text");
    assert_eq!(p.qos, QoS::AtMostOnce);

    // the broker kept the retained one: a late subscriber gets it, flagged retained
    let mut late = Watcher::start(broker.port, "cmnd/kettle/POWER", None).await;
    let p = late.next().await;
    assert!(p.retain, "retain = true reaches the broker");
    assert_eq!(&p.payload[..], b"ON");
    let mut late = Watcher::start(broker.port, "home/ping", None).await;
    late.quiet(Duration::from_millis(300)).await;
}

const KETTLE: &str = r#"
[[tool]]
name = "kettle"
description = "Switch the kettle."
[tool.parameters]
type = "object"
required = ["on"]
[tool.parameters.properties.on]
type = "boolean"
[tool.mqtt]
topic = "cmnd/kettle/POWER"
payload = "{{ 'ON' if on else 'OFF' }}"
state_topic = "stat/kettle/POWER"
timeout_ms = 3000
"#;

#[tokio::test]
async fn state_topic_gives_the_devices_answer() {
    let broker = Broker::start("state");
    // an old retained state must not be taken for the answer
    let old = Watcher::start(broker.port, "unused/topic", None).await;
    old.client
        .publish("stat/kettle/POWER", QoS::AtLeastOnce, true, "STALE")
        .await
        .unwrap();
    // the broker has it once a new subscriber is given it
    let mut check = Watcher::start(broker.port, "stat/kettle/POWER", None).await;
    assert_eq!(&check.next().await.payload[..], b"STALE");
    // the fake device: answers each command on its state topic, as Tasmota does
    let mut device = Watcher::start(broker.port, "cmnd/kettle/POWER", None).await;
    let device_task = tokio::spawn(async move {
        while let Some(cmd) = device.rx.recv().await {
            let answer: Vec<u8> = match &cmd.payload[..] {
                b"ON" => b"  ON \n".to_vec(),
                _ => vec![b'x'; 5000],
            };
            device
                .client
                .publish("stat/kettle/POWER", QoS::AtMostOnce, false, answer)
                .await
                .unwrap();
        }
    });
    let r = registry(KETTLE, backends(&section(&broker.url())));
    for _ in 0..2 {
        let o = r.call(&call("kettle", json!({"on": true}))).await;
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
        assert_eq!(o.result, "ON");
    }
    let o = r.call(&call("kettle", json!({"on": false}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert!(
        o.result
            .ends_with("\n[output cut: 5000 bytes, only the first 2048 kept]"),
        "{}",
        &o.result[o.result.len() - 80..]
    );
    assert!(o.result.starts_with(&"x".repeat(2048)));
    device_task.abort();
}

#[tokio::test]
async fn no_state_in_time_is_an_error() {
    let broker = Broker::start("timeout");
    let mut w = Watcher::start(broker.port, "cmnd/#", None).await;
    let r = registry(
        &KETTLE.replace("timeout_ms = 3000", "timeout_ms = 600"),
        backends(&section(&broker.url())),
    );
    let t = Instant::now();
    let o = r.call(&call("kettle", json!({"on": true}))).await;
    let elapsed = t.elapsed();
    assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
    assert_eq!(
        o.result,
        format!("kettle: published to cmnd/kettle/POWER on the MQTT broker at 127.0.0.1:{}, but no state arrived on stat/kettle/POWER within 600 ms (is the device on and paired? check mqtt.state_topic in the manifest)", broker.port)
    );
    assert!(
        elapsed >= Duration::from_millis(550) && elapsed < Duration::from_millis(2000),
        "{elapsed:?}"
    );
    // the command itself went out
    assert_eq!(&w.next().await.payload[..], b"ON");
}

#[tokio::test]
async fn broker_down_is_an_error_naming_the_address_within_the_timeout() {
    let port = free_port();
    let url = format!("mqtt://127.0.0.1:{port}");
    let b = backends(&section(&url));
    for timeout_ms in [3000, 400] {
        let r = registry(
            &KETTLE
                .replace("timeout_ms = 3000", &format!("timeout_ms = {timeout_ms}"))
                .replace("state_topic", "# state_topic"),
            Arc::clone(&b),
        );
        let t = Instant::now();
        let o = r.call(&call("kettle", json!({"on": true}))).await;
        let elapsed = t.elapsed();
        assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
        assert!(
            o.result.starts_with(&format!(
                "kettle: cannot reach the MQTT broker at 127.0.0.1:{port}: connection refused"
            )) && o.result.contains("[mqtt] url"),
            "{}",
            o.result
        );
        assert!(
            elapsed < Duration::from_millis(timeout_ms + 500),
            "{elapsed:?} for {timeout_ms} ms"
        );
    }
    let e = b
        .mqtt
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("connection refused"),
        "{e}"
    );
}

#[tokio::test]
async fn authentication_failure_and_success() {
    if !Path::new("/usr/bin/mosquitto_passwd").is_file() {
        eprintln!("SKIPPED authentication_failure_and_success: /usr/bin/mosquitto_passwd is missing (apt package mosquitto)");
        return;
    }
    let dir = scratch_dir("mqtt-auth");
    let passwd = dir.join("passwd");
    let status = std::process::Command::new("/usr/bin/mosquitto_passwd")
        .arg("-b")
        .arg("-c")
        .arg(&passwd)
        .args(["hearth", "s3cret"])
        .status()
        .unwrap();
    assert!(status.success());
    let broker = Broker::start_with(
        "auth",
        &format!(
            "allow_anonymous false\npassword_file {}\n",
            passwd.display()
        ),
    );
    let good = dir.join("good");
    write_secret(&good, "s3cret\n");
    let bad = dir.join("bad");
    write_secret(&bad, "wrong\n");
    let with = |user: Option<&str>, file: Option<&PathBuf>| MqttSection {
        username: user.map(str::to_string),
        password_file: file.cloned(),
        ..section(&broker.url())
    };
    let manifest = KETTLE.replace("state_topic", "# state_topic");
    let addr = format!("127.0.0.1:{}", broker.port);

    for (label, s) in [
        ("anonymous", with(None, None)),
        ("wrong password", with(Some("hearth"), Some(&bad))),
    ] {
        let b = backends(&s);
        let r = registry(&manifest, Arc::clone(&b));
        let t = Instant::now();
        let o = r.call(&call("kettle", json!({"on": true}))).await;
        assert_eq!(o.status, ToolStatus::Error, "{label}: {}", o.result);
        assert!(
            o.result.starts_with(&format!(
                "kettle: the MQTT broker at {addr} refused the connection: not authorised"
            )) && o.result.contains("password_file"),
            "{label}: {}",
            o.result
        );
        assert!(t.elapsed() < Duration::from_millis(3500), "{label}");
        let e = b
            .mqtt
            .as_ref()
            .unwrap()
            .probe(Duration::from_secs(2))
            .await
            .unwrap_err();
        assert!(e.contains("not authorised"), "{label}: {e}");
    }

    let b = backends(&with(Some("hearth"), Some(&good)));
    b.mqtt
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(2))
        .await
        .unwrap();
    let mut w = Watcher::start(broker.port, "cmnd/#", Some(("hearth", "s3cret"))).await;
    let r = registry(&manifest, b);
    let o = r.call(&call("kettle", json!({"on": false}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(&w.next().await.payload[..], b"OFF");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A test CA and the PEM files signed by it: the broker's certificate (for `localhost`
/// only) and a client certificate, plus a second CA that signed nothing hearth trusts.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(tag: &str) -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let dir = scratch_dir(tag);
        let new_ca = |name: &str| {
            let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            p.distinguished_name.push(DnType::CommonName, name);
            p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            let key = KeyPair::generate().unwrap();
            let cert = p.self_signed(&key).unwrap();
            (cert, Issuer::new(p, key))
        };
        let leaf = |names: Vec<String>, usage, issuer: &Issuer<'_, KeyPair>| {
            let mut p = CertificateParams::new(names).unwrap();
            p.distinguished_name.push(DnType::CommonName, "hearth test");
            p.extended_key_usages = vec![usage];
            let key = KeyPair::generate().unwrap();
            (p.signed_by(&key, issuer).unwrap(), key)
        };
        let (ca_cert, ca) = new_ca("hearth test CA");
        let (other_cert, other) = new_ca("another CA");
        let (server, server_key) = leaf(
            vec!["localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
            &ca,
        );
        let (client, client_key) = leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth, &ca);
        let (stranger, stranger_key) = leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth, &other);
        for (name, pem) in [
            ("ca.pem", ca_cert.pem()),
            ("other-ca.pem", other_cert.pem()),
            ("server.pem", server.pem()),
            ("server.key", server_key.serialize_pem()),
            ("client.pem", client.pem()),
            ("client.key", client_key.serialize_pem()),
            ("stranger.pem", stranger.pem()),
            ("stranger.key", stranger_key.serialize_pem()),
        ] {
            // hearth's own keys are its secrets; the broker's is read by mosquitto
            if name.ends_with(".key") && name != "server.key" {
                write_secret(&dir.join(name), &pem);
            } else {
                std::fs::write(dir.join(name), pem).unwrap();
            }
        }
        Pki { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// mosquitto lines for a TLS listener on `port` with the broker's certificate.
    fn listener(&self, port: u16, require_certificate: bool) -> String {
        format!(
            "listener {port} 127.0.0.1\ncafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate {require_certificate}\n",
            self.file("ca.pem").display(),
            self.file("server.pem").display(),
            self.file("server.key").display(),
        )
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn tls_broker_with_its_ca_gets_the_message_and_errors_name_the_fix() {
    let pki = Pki::new("mqtt-tls");
    let tls_port = free_port();
    let broker = Broker::start_with(
        "tls",
        &format!("allow_anonymous true\n{}", pki.listener(tls_port, false)),
    );
    broker.wait_listening(tls_port);
    let manifest = KETTLE.replace("state_topic", "# state_topic");
    let tls = |url: String, ca: Option<&str>| MqttSection {
        ca_file: ca.map(|f| pki.file(f)),
        ..section(&url)
    };

    // the broker's CA in ca_file: the message arrives (seen on the plain listener)
    let b = backends(&tls(
        format!("mqtts://localhost:{tls_port}"),
        Some("ca.pem"),
    ));
    assert!(b.mqtt.as_ref().unwrap().uses_tls());
    b.mqtt
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(3))
        .await
        .unwrap();
    let mut w = Watcher::start(broker.port, "cmnd/#", None).await;
    let r = registry(&manifest, b);
    let o = r.call(&call("kettle", json!({"on": true}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "published to cmnd/kettle/POWER");
    let p = w.next().await;
    assert_eq!(
        (p.topic.as_str(), &p.payload[..]),
        ("cmnd/kettle/POWER", &b"ON"[..])
    );

    // each failure names the problem and the fix, and nothing is published
    let addr = format!("localhost:{tls_port}");
    let cases = [
        (
            "another CA",
            tls(format!("mqtts://localhost:{tls_port}"), Some("other-ca.pem")),
            format!("cannot connect to the MQTT broker at {addr} over TLS: its certificate is not signed by a CA hearth trusts (set [mqtt] ca_file"),
        ),
        (
            "the system's CAs",
            tls(format!("mqtts://localhost:{tls_port}"), None),
            format!("cannot connect to the MQTT broker at {addr} over TLS: its certificate is not signed by a CA hearth trusts"),
        ),
        (
            "a name not in the certificate",
            tls(format!("mqtts://127.0.0.1:{tls_port}"), Some("ca.pem")),
            format!("cannot connect to the MQTT broker at 127.0.0.1:{tls_port} over TLS: its certificate is not for \"127.0.0.1\" (write the name its certificate carries in [mqtt] url)"),
        ),
        (
            "TLS to the plain port",
            tls(format!("mqtts://localhost:{}", broker.port), Some("ca.pem")),
            format!("cannot connect to the MQTT broker at localhost:{} over TLS: the TLS handshake failed", broker.port),
        ),
    ];
    for (label, s, want) in cases {
        let b = backends(&s);
        let e = b
            .mqtt
            .as_ref()
            .unwrap()
            .probe(Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(e.starts_with(&want), "{label}: {e}");
        let r = registry(&manifest, b);
        let o = r.call(&call("kettle", json!({"on": false}))).await;
        assert_eq!(o.status, ToolStatus::Error, "{label}: {}", o.result);
        assert!(
            o.result.starts_with(&format!("kettle: {want}")),
            "{label}: {}",
            o.result
        );
    }
    w.quiet(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn a_broker_that_wants_a_client_certificate_gets_hearths() {
    let pki = Pki::new("mqtt-mtls");
    let tls_port = free_port();
    let broker = Broker::start_with(
        "mtls",
        &format!("allow_anonymous true\n{}", pki.listener(tls_port, true)),
    );
    broker.wait_listening(tls_port);
    let manifest = KETTLE.replace("state_topic", "# state_topic");
    let with = |identity: Option<(&str, &str)>| MqttSection {
        ca_file: Some(pki.file("ca.pem")),
        client_cert_file: identity.map(|(c, _)| pki.file(c)),
        client_key_file: identity.map(|(_, k)| pki.file(k)),
        ..section(&format!("mqtts://localhost:{tls_port}"))
    };
    let addr = format!("localhost:{tls_port}");
    for (label, s, want) in [
        (
            "no client certificate",
            with(None),
            "it wants a client certificate (set [mqtt] client_cert_file and client_key_file",
        ),
        (
            "a certificate from another CA",
            with(Some(("stranger.pem", "stranger.key"))),
            "it rejected hearth's client certificate",
        ),
    ] {
        let e = backends(&s)
            .mqtt
            .as_ref()
            .unwrap()
            .probe(Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(
            e.starts_with(&format!(
                "cannot connect to the MQTT broker at {addr} over TLS: {want}"
            )),
            "{label}: {e}"
        );
    }
    let b = backends(&with(Some(("client.pem", "client.key"))));
    let mut w = Watcher::start(broker.port, "cmnd/#", None).await;
    let r = registry(&manifest, b);
    let o = r.call(&call("kettle", json!({"on": true}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(&w.next().await.payload[..], b"ON");

    // a key that is not the certificate's fails the start, naming both keys
    let e = mqtt_backends(&with(Some(("client.pem", "stranger.key")))).unwrap_err();
    assert!(
        e.starts_with("[mqtt] client_cert_file and client_key_file cannot be used together"),
        "{e}"
    );
}

#[tokio::test]
async fn probe_accepts_a_running_broker() {
    let broker = Broker::start("probe");
    let b = mqtt_backends(&section(&broker.url())).unwrap();
    let broker = b.mqtt.as_ref().expect("[mqtt] makes a broker connection");
    broker.probe(Duration::from_secs(2)).await.unwrap();
}

#[test]
fn manifest_load_errors_name_the_field_and_the_fix() {
    let e = load_error("mqtt", "topic = \"a/b\"\nqos = 3");
    assert!(
        e.contains("mqtt.qos") && e.contains("must be 0, 1 or 2"),
        "{e}"
    );
    let e = load_error("mqtt", "topic = \"zigbee2mqtt/+/set\"");
    assert!(e.contains("mqtt.topic") && e.contains("wildcard"), "{e}");
    let e = load_error("mqtt", "topic = \"z/{{ room }}\"\nstate_topic = \"z/#\"");
    assert!(
        e.contains("mqtt.state_topic") && e.contains("wildcard"),
        "{e}"
    );
    let e = load_error("mqtt", "topic = \"z/{{ rooom }}/set\"");
    assert!(
        e.contains("mqtt.topic uses `rooom`") && e.contains("use one of room"),
        "{e}"
    );
    let e = load_error("mqtt", "topic = \"z\"\npayload = { state = \"{{ on }}\" }");
    assert!(e.contains("mqtt.payload.state uses `on`"), "{e}");
    let e = load_error("mqtt", "topic = \"z\"\nbroker = \"mqtt://elsewhere\"");
    assert!(e.contains("unknown field") && e.contains("broker"), "{e}");
    let e = load_error("mqtt", "topic = \"z\"\ntimeout_ms = 0");
    assert!(e.contains("mqtt.timeout_ms"), "{e}");

    // an mqtt tool without [mqtt] in hearth.toml fails the registry, naming the fix
    let tools = parse_manifest(KETTLE, Path::new("/x/k.toml")).unwrap();
    let e = Registry::new(tools)
        .unwrap()
        .with_backends(Arc::new(Backends::none()))
        .unwrap_err();
    assert!(matches!(e, ToolsError::NoBackend { .. }), "{e}");
    assert!(e.to_string().contains("[mqtt]"), "{e}");
}

#[tokio::test]
async fn a_topic_value_outside_its_level_is_never_sent() {
    let broker = Broker::start("wild");
    let r = registry(LIGHT, backends(&section(&broker.url())));
    let mut w = Watcher::start(broker.port, "#", None).await;
    let o = r
        .call(&call(
            "light",
            json!({"room": "+", "on": true, "brightness": 1}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .starts_with("light: not sent: mqtt.topic rendered to \"zigbee2mqtt/+ light/set\", where the value \"+\"")
            && o.result.contains("wildcard"),
        "{}",
        o.result
    );
    // another device's topic, or the broker's own
    for (room, fragment) in [("front door/set", "`/`"), ("$SYS", "`$`")] {
        let o = r
            .call(&call("light", json!({"room": room, "on": true})))
            .await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(o.result.contains(fragment), "{}", o.result);
    }
    let raw = r#"
[[tool]]
name = "raw"
description = "Publish to a topic."
[tool.parameters]
type = "object"
required = ["t"]
[tool.parameters.properties.t]
type = "string"
[tool.mqtt]
topic = "{{ t }}"
"#;
    let r = registry(raw, backends(&section(&broker.url())));
    let o = r.call(&call("raw", json!({"t": ""}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .starts_with("raw: mqtt.topic rendered to an empty topic"),
        "{}",
        o.result
    );
    for (t, fragment) in [("a/#", "wildcard"), ("a/b", "`/`"), ("$SYS", "`$`")] {
        let o = r.call(&call("raw", json!({ "t": t }))).await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(o.result.contains(fragment), "{}", o.result);
    }
    w.quiet(Duration::from_millis(300)).await;
    // and a good one goes out, with an empty payload when the manifest has none
    let o = r.call(&call("raw", json!({"t": "hall"}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let p = w.next().await;
    assert_eq!((p.topic.as_str(), p.payload.len()), ("hall", 0));
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/examples")
}

/// Backends with both a broker and Home Assistant (a token in a temp dir).
fn full_backends(mqtt_url: &str) -> Arc<Backends> {
    let dir = scratch_dir("mqtt-ha-token");
    let token_file = dir.join("token");
    write_secret(&token_file, "test-token\n");
    let ha = HaBackend::new(&HomeAssistantSection {
        url: format!("http://127.0.0.1:{}", free_port()),
        token_file,
        discover: false,
        refresh_s: 30,
    })
    .unwrap();
    let mut b = mqtt_backends(&section(mqtt_url)).unwrap();
    b.homeassistant = Some(ha);
    Arc::new(b)
}

#[test]
fn every_example_manifest_loads() {
    let tools = hearth::tools::load_dir(examples_dir()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
    let mine = [
        "set_light",
        "set_plug",
        "set_switch",
        "set_thermostat",
        "get_temperature",
        "activate_scene",
    ];
    for name in mine {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for t in tools
        .iter()
        .filter(|t| mine.contains(&t.spec.name.as_str()))
    {
        assert!(
            t.spec.description.len() <= 80,
            "{}: keep descriptions short ({} chars)",
            t.spec.name,
            t.spec.description.len()
        );
    }
    let r = Registry::new(tools)
        .unwrap()
        .with_backends(full_backends("mqtt://127.0.0.1:1883"))
        .unwrap();
    assert!(r.get("set_light").is_some());
}

#[tokio::test]
async fn the_lights_example_publishes_zigbee2mqtt_messages() {
    let broker = Broker::start("lights");
    let tools = hearth::tools::load_dir(examples_dir()).unwrap();
    let r = Registry::new(tools)
        .unwrap()
        .with_backends(full_backends(&broker.url()))
        .unwrap();
    let mut w = Watcher::start(broker.port, "zigbee2mqtt/#", None).await;

    let c = call(
        "set_light",
        json!({"room": "living room", "on": true, "brightness": 50}),
    );
    let o = r.call(&c).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "published to zigbee2mqtt/living room light/set");
    let p = w.next().await;
    assert_eq!(p.topic, "zigbee2mqtt/living room light/set");
    let sent: Value = serde_json::from_slice(&p.payload).unwrap();
    assert_eq!(sent, json!({"state": "ON", "brightness": 127}));
    assert_eq!(p.qos, QoS::AtLeastOnce);
    assert_eq!(
        r.confirmation(&c, &o.result).as_deref(),
        Some("The living room light is on.")
    );

    let o = r
        .call(&call("set_light", json!({"room": "kitchen", "on": false})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let p = w.next().await;
    assert_eq!(p.topic, "zigbee2mqtt/kitchen light/set");
    let sent: Value = serde_json::from_slice(&p.payload).unwrap();
    assert_eq!(
        sent,
        json!({"state": "OFF"}),
        "no brightness when none is given"
    );

    // the schema bounds brightness: an out-of-range call never runs
    let o = r
        .call(&call(
            "set_light",
            json!({"room": "kitchen", "on": true, "brightness": 150}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
    w.quiet(Duration::from_millis(300)).await;
}

/// A mosquitto on a given port, so a test can stop it and start it again at the same
/// address; killed when dropped.
struct FixedBroker(std::process::Child);

impl FixedBroker {
    fn start(port: u16, dir: &Path) -> FixedBroker {
        let conf = dir.join("fixed.conf");
        std::fs::write(
            &conf,
            format!("listener {port} 127.0.0.1\npersistence false\nallow_anonymous true\n"),
        )
        .unwrap();
        let program = if Path::new("/usr/sbin/mosquitto").is_file() {
            "/usr/sbin/mosquitto"
        } else {
            "mosquitto"
        };
        let child = std::process::Command::new(program)
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("mosquitto (run scripts/setup)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "mosquitto did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        FixedBroker(child)
    }
}

impl Drop for FixedBroker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_connection_comes_back_after_the_broker_restarts() {
    let dir = scratch_dir("mqtt-restart");
    let port = free_port();
    let url = format!("mqtt://127.0.0.1:{port}");
    let manifest = format!(
        "{KETTLE}\n[[tool]]\nname = \"ping\"\ndescription = \"x\"\n[tool.mqtt]\ntopic = \"home/ping\"\npayload = \"1\"\ntimeout_ms = 3000\n"
    );
    let r = registry(&manifest, backends(&section(&url)));

    let first = FixedBroker::start(port, &dir);
    let o = r.call(&call("ping", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    drop(first);

    // while it is down: an error naming the broker, well within the timeout
    let t = Instant::now();
    let o = r.call(&call("ping", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
    assert!(
        o.result.starts_with("ping: ") && o.result.contains(&format!("127.0.0.1:{port}")),
        "{}",
        o.result
    );
    assert!(
        t.elapsed() < Duration::from_millis(3500),
        "{:?}",
        t.elapsed()
    );

    // back up: the kept connection reconnects by itself
    let _second = FixedBroker::start(port, &dir);
    let mut w = Watcher::start(port, "home/#", None).await;
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let o = r.call(&call("ping", json!({}))).await;
        if o.status == ToolStatus::Ok {
            break;
        }
        assert!(Instant::now() < deadline, "no reconnection: {}", o.result);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(w.next().await.topic, "home/ping");
    // nothing queued during the outage goes out late
    w.quiet(Duration::from_millis(300)).await;

    // state topics are subscribed again on the new session
    let mut device = Watcher::start(port, "cmnd/kettle/POWER", None).await;
    let device_task = tokio::spawn(async move {
        while let Some(cmd) = device.rx.recv().await {
            device
                .client
                .publish(
                    "stat/kettle/POWER",
                    QoS::AtMostOnce,
                    false,
                    cmd.payload.to_vec(),
                )
                .await
                .unwrap();
        }
    });
    let o = r.call(&call("kettle", json!({"on": false}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "OFF");
    device_task.abort();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A password file other users can read or change is refused at start, with the fix.
#[test]
fn a_password_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("hearth-mqtt-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("password");
    std::fs::write(&file, "s3cret\n").unwrap();
    let with = |mode: u32| {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        mqtt_backends(&MqttSection {
            username: Some("hearth".into()),
            password_file: Some(file.clone()),
            ..section("mqtt://127.0.0.1:1883")
        })
    };
    let e = with(0o604).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "[mqtt] password_file {}: has mode 604",
            file.display()
        )),
        "{e}"
    );
    assert!(with(0o666)
        .unwrap_err()
        .to_string()
        .contains("can change it"));
    assert!(with(0o600).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}
