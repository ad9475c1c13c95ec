//! The house on a real mosquitto: Zigbee2MQTT's bridge payloads (made from the real device
//! definitions of zigbee-herdsman-converters: `crates/hearth-house/tests/corpus/zigbee2mqtt/`)
//! and MQTT discovery as Tasmota and ESPHome announce it (`…/corpus/discovery/`), retained
//! on the broker; hearth's watch finds them with no manifest, follows a join, a rename and a
//! leave, and its calls arrive on the devices' topics.

use crate::common::services::*;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::config::MqttSection;
use hearth::house::{watch_mqtt, Hub, MqttWatch};
use hearth::toolcall::{ToolCall, ToolSet};
use hearth::tools::{Registry, ToolStatus, ToolsActor, ToolsMsg};
use ractor::{Actor, ActorRef};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, Publish, QoS};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/hearth-house/tests/corpus"
);

fn corpus(path: &str) -> Vec<u8> {
    std::fs::read(format!("{CORPUS}/{path}")).unwrap()
}

/// The config messages of a discovery corpus file (`> TOPIC` then the payload line).
fn announcements(path: &str) -> Vec<(String, String)> {
    let text = String::from_utf8(corpus(path)).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(line) = lines.next() {
        if let Some(topic) = line.strip_prefix("> ") {
            let payload = match lines.peek() {
                Some(next) if !next.starts_with("> ") => lines.next().unwrap_or_default(),
                _ => "",
            };
            out.push((topic.to_string(), payload.to_string()));
        }
    }
    out
}

/// A client of the test: publishes (retained, as the bridge and the firmwares do) and sees
/// what arrives on `filter`.
struct Client {
    client: AsyncClient,
    rx: mpsc::UnboundedReceiver<Publish>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Client {
    async fn start(port: u16, filter: &str) -> Client {
        let mut o = MqttOptions::new(
            format!("house-test-{}", std::process::id()),
            "127.0.0.1",
            port,
        );
        o.set_max_packet_size(1 << 20, 1 << 20);
        let (client, mut eventloop) = AsyncClient::new(o, 64);
        client.subscribe(filter, QoS::AtLeastOnce).await.unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let _ = tx.send(p);
                    }
                    Ok(_) => {}
                    Err(e) => panic!("the test's MQTT client failed: {e}"),
                }
            }
        });
        Client { client, rx, task }
    }

    async fn retain(&self, topic: &str, payload: impl Into<Vec<u8>>) {
        self.client
            .publish(topic, QoS::AtLeastOnce, true, payload.into())
            .await
            .unwrap();
    }

    /// The next command hearth sent (on a `/set`, `/command` or `cmnd/` topic; what the test
    /// itself publishes comes back too, and is passed over).
    async fn next(&mut self) -> Publish {
        loop {
            let p = tokio::time::timeout(Duration::from_secs(5), self.rx.recv())
                .await
                .expect("a message within 5 s")
                .expect("the client runs");
            let t = &p.topic;
            if t.ends_with("/set") || t.ends_with("/command") || t.starts_with("cmnd/") {
                return p;
            }
        }
    }
}

struct House {
    tools: ActorRef<ToolsMsg>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for House {
    fn drop(&mut self) {
        self.task.abort();
        self.tools.stop(None);
    }
}

impl House {
    async fn start(broker: &Broker, zigbee2mqtt: bool, discovery: bool) -> House {
        let section = MqttSection {
            url: broker.url(),
            client_id: Some(format!("hearth-house-{}", std::process::id())),
            username: None,
            password_file: None,
            keep_alive_s: None,
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
        };
        let backends = crate::common::manifest::mqtt_backends(&section).unwrap();
        let backends = Arc::new(backends);
        let registry = Registry::builtins_with(backends.clone()).unwrap();
        let (tools, _) = Actor::spawn(None, ToolsActor, Arc::new(registry))
            .await
            .unwrap();
        let watch = MqttWatch {
            zigbee2mqtt: zigbee2mqtt.then(|| "zigbee2mqtt".to_string()),
            discovery: discovery.then(|| "homeassistant".to_string()),
        };
        let task = tokio::spawn(watch_mqtt(watch, backends, Hub::new(tools.clone())));
        House { tools, task }
    }

    async fn registry(&self) -> Arc<Registry> {
        ractor::call!(self.tools, ToolsMsg::Snapshot).unwrap()
    }

    /// The call the intents make of `text`, once they make one (within 10 s).
    async fn when_sayable(&self, text: &str) -> (Arc<Registry>, ToolCall) {
        let start = Instant::now();
        loop {
            let registry = self.registry().await;
            if let Some(calls) = registry.intents().recognize(text) {
                let c = &calls[0];
                let set: ToolSet = registry.toolset();
                let call = set
                    .call("test-0", &c.tool, c.arguments.clone())
                    .unwrap_or_else(|e| panic!("{text}: {e:?}"));
                return (registry, call);
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{text:?} never sayable; the tools: {}",
                registry.listed_tools()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn until_not_sayable(&self, text: &str) {
        let start = Instant::now();
        while self.registry().await.intents().recognize(text).is_some() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{text:?} still sayable"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Say `text`: its call runs; the outcome.
    async fn say(&self, text: &str) -> (String, ToolStatus, String) {
        let (registry, call) = self.when_sayable(text).await;
        let outcome = registry.call(&call).await;
        (
            format!("{} {}", outcome.name, outcome.arguments),
            outcome.status,
            outcome.result,
        )
    }
}

fn payload(p: &Publish) -> Value {
    serde_json::from_slice(&p.payload)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(&p.payload)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zigbee2mqtt_devices_are_found_followed_and_reached() {
    let broker = Broker::start("house-z2m");
    let port = broker.url().rsplit(':').next().unwrap().parse().unwrap();
    let mut client = Client::start(port, "zigbee2mqtt/#").await;
    let devices = corpus("zigbee2mqtt/bridge-devices.json");
    client
        .retain("zigbee2mqtt/bridge/devices", devices.clone())
        .await;
    client
        .retain(
            "zigbee2mqtt/bridge/groups",
            corpus("zigbee2mqtt/bridge-groups.json"),
        )
        .await;
    let house = House::start(&broker, true, false).await;

    // a colour bulb in the living room, by its name and by its room
    let (call, status, said) = house.say("turn on the ceiling light").await;
    assert_eq!(call, r#"set_light {"name":"ceiling light","on":true}"#);
    assert_eq!(status, ToolStatus::Ok, "{said}");
    let sent = client.next().await;
    assert_eq!(sent.topic, "zigbee2mqtt/living_room/Ceiling Light/set");
    assert_eq!(payload(&sent), json!({"state": "ON"}));
    house.say("dim the floor lamp to 50 percent").await;
    let sent = client.next().await;
    assert_eq!(sent.topic, "zigbee2mqtt/living_room/Floor Lamp/set");
    assert_eq!(payload(&sent)["brightness"], json!(127));

    // the lock waits for a yes: its tool holds unlocking
    let registry = house.registry().await;
    let lock = registry.get("set_lock").unwrap();
    assert!(lock
        .confirm
        .as_ref()
        .unwrap()
        .applies(&json!({"name": "front door", "locked": false})));

    // a reading is the state the device last published
    client
        .retain(
            "zigbee2mqtt/bedroom/Radiator",
            r#"{"occupied_heating_setpoint":21,"local_temperature":19.5}"#,
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, status, said) = house.say("what is the radiator set to").await;
    assert_eq!(status, ToolStatus::Ok, "{said}");
    assert!(said.contains("21") && said.contains("19.5"), "{said}");

    // renamed in Zigbee2MQTT: the new name is sayable, the old one not
    let renamed = String::from_utf8(devices.clone())
        .unwrap()
        .replace("living_room/Ceiling Light", "living_room/Big Light");
    client
        .retain("zigbee2mqtt/bridge/devices", renamed.clone())
        .await;
    house.when_sayable("turn off the big light").await;
    house.until_not_sayable("turn off the ceiling light").await;
    house.say("turn off the big light").await;
    let sent = client.next().await;
    assert_eq!(sent.topic, "zigbee2mqtt/living_room/Big Light/set");

    // the lock leaves: its tool goes; it joins again: it is back
    let mut list: Vec<Value> = serde_json::from_str(&renamed).unwrap();
    let door = list
        .iter()
        .position(|d| d["friendly_name"] == "Front Door")
        .unwrap();
    let front_door = list.remove(door);
    client
        .retain(
            "zigbee2mqtt/bridge/devices",
            serde_json::to_vec(&list).unwrap(),
        )
        .await;
    house.until_not_sayable("lock the front door").await;
    assert!(house.registry().await.get("set_lock").is_none());
    list.push(front_door);
    client
        .retain(
            "zigbee2mqtt/bridge/devices",
            serde_json::to_vec(&list).unwrap(),
        )
        .await;
    house.say("lock the front door").await;
    let sent = client.next().await;
    assert_eq!(sent.topic, "zigbee2mqtt/Front Door/set");
    assert_eq!(payload(&sent), json!({"state": "LOCK"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasmota_and_esphome_announce_what_hearth_reaches() {
    let broker = Broker::start("house-discovery");
    let port = broker.url().rsplit(':').next().unwrap().parse().unwrap();
    let mut client = Client::start(port, "#").await;
    for file in ["discovery/tasmota.txt", "discovery/esphome.txt"] {
        for (topic, payload) in announcements(file) {
            client.retain(&topic, payload).await;
        }
    }
    let house = House::start(&broker, false, true).await;

    // the Tasmota plug's relay, by its own name (Kettle) and the device's
    let (call, status, said) = house.say("turn on the kettle").await;
    assert_eq!(call, r#"set_switch {"name":"kettle","on":true}"#);
    assert_eq!(status, ToolStatus::Ok, "{said}");
    let sent = client.next().await;
    assert_eq!(sent.topic, "cmnd/tasmota_8E4F2A/POWER");
    assert_eq!(&sent.payload[..], b"ON");

    // the ESPHome light, in its suggested area
    let (call, _, _) = house.say("turn off the lights in the kitchen").await;
    assert_eq!(call, r#"set_light {"area":"kitchen","on":false}"#);
    let sent = client.next().await;
    assert_eq!(sent.topic, "kitchen-light/light/kitchen_light/command");
    assert_eq!(payload(&sent)["state"], "OFF");

    // a reading from the state topic it announced
    client
        .retain("hall-sensor/sensor/temperature/state", "21.5")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, status, said) = house.say("what is the hall sensor temperature").await;
    assert_eq!(status, ToolStatus::Ok, "{said}");
    assert!(said.contains("21.5"), "{said}");

    // the relay's config removed (an empty retained payload): its tool goes
    client
        .retain("homeassistant/switch/8E4F2A_RL_1/config", "")
        .await;
    house.until_not_sayable("turn on the kettle").await;
}
