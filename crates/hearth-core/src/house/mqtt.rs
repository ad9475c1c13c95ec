//! The things the `[mqtt]` broker announces: Zigbee2MQTT's devices and groups (its retained
//! `<base>/bridge/devices` and `<base>/bridge/groups`) and MQTT discovery's components
//! (`<prefix>/<component>/…/config`, as Tasmota and ESPHome announce them for Home
//! Assistant), followed for as long as hearth runs.
//!
//! The watch subscribes to the bridge and discovery topics on the broker connection the
//! `mqtt` tools share, then to the state topic of every thing they announce (a reading is the
//! last state heard: `MqttBackend::last`). A join, a rename or a leave (a new
//! `bridge/devices`), a component announced or removed, is made into tools once the
//! announcements have been quiet for [`SETTLE`]. A reconnection starts the subscriptions
//! over (the broker sends what it kept again); while the broker is away the tools stay.
//! Zigbee2MQTT's own discovery components are left to its bridge when both are followed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use hearth_house::discovery::{Change, Discovery};
use hearth_house::{zigbee2mqtt, Source, Thing};
use tokio::sync::broadcast::error::RecvError;

use super::Hub;
use crate::config::Config;
use crate::tools::mqtt::MqttBackend;
use crate::tools::Backends;

/// How long the announcements must be quiet before the tools are made again.
const SETTLE: Duration = Duration::from_millis(300);
/// How often the subscriptions are checked (a reconnection drops them).
const TICK: Duration = Duration::from_secs(2);
/// Time for the broker to grant a subscription.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the broker's watch follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MqttWatch {
    /// Zigbee2MQTT's base topic, when its bridge is followed.
    pub zigbee2mqtt: Option<String>,
    /// The discovery prefix, when discovery is followed.
    pub discovery: Option<String>,
}

impl MqttWatch {
    /// From the configuration: `None` without `[mqtt]`, or with both turned off. Each is on
    /// by default when there is no `[homeassistant]` (whose household exposed those devices
    /// already, as it wanted them).
    pub fn from_config(config: &Config) -> Option<MqttWatch> {
        config.mqtt.as_ref()?;
        let default = config.homeassistant.is_none();
        let z2m = config.zigbee2mqtt.enabled.unwrap_or(default);
        let discovery = config.mqtt_discovery.enabled.unwrap_or(default);
        let topic = |t: &str| t.trim().trim_end_matches('/').to_string();
        let watch = MqttWatch {
            zigbee2mqtt: z2m.then(|| topic(&config.zigbee2mqtt.base_topic)),
            discovery: discovery.then(|| topic(&config.mqtt_discovery.prefix)),
        };
        (watch.zigbee2mqtt.is_some() || watch.discovery.is_some()).then_some(watch)
    }

    /// The topics it subscribes to before any thing is known.
    fn filters(&self) -> Vec<String> {
        let mut filters = Vec::new();
        if let Some(base) = &self.zigbee2mqtt {
            filters.push(format!("{base}/bridge/devices"));
            filters.push(format!("{base}/bridge/groups"));
        }
        if let Some(prefix) = &self.discovery {
            filters.push(format!("{prefix}/#"));
        }
        filters
    }
}

/// What the watch has heard so far.
struct Heard {
    devices: Option<Vec<u8>>,
    groups: Option<Vec<u8>>,
    discovery: Discovery,
    /// The bridge changed since the tools were last made.
    bridge_changed: bool,
    /// Discovery changed since.
    discovery_changed: bool,
    /// The state topics of the Zigbee2MQTT things found.
    z2m_states: Vec<String>,
    /// The state topics of every thing found.
    states: Vec<String>,
}

/// Follow the broker's announcements for as long as the tools actor runs.
pub async fn watch_mqtt(watch: MqttWatch, backends: Arc<Backends>, hub: Hub) {
    let Some(mqtt) = backends.mqtt.as_ref() else {
        return;
    };
    let mut rx = mqtt.messages();
    let mut heard = Heard {
        devices: None,
        groups: None,
        discovery: Discovery::new(watch.discovery.as_deref().unwrap_or("homeassistant")),
        bridge_changed: false,
        discovery_changed: false,
        z2m_states: Vec::new(),
        states: Vec::new(),
    };
    let mut refused: HashSet<String> = HashSet::new();
    let mut tick = tokio::time::interval(TICK);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if !hub.open() {
                    return;
                }
                subscribe_all(mqtt, &watch, &heard.states, &mut refused).await;
            }
            message = rx.recv() => match message {
                Ok(m) => {
                    if !hear(&watch, &mut heard, &m.topic, &m.payload) {
                        continue;
                    }
                    settle(&watch, &mut heard, &mut rx).await;
                    offer(&watch, &mut heard, &hub).await;
                    // the new things' state topics at once: a reading soon after is heard
                    subscribe_all(mqtt, &watch, &heard.states, &mut refused).await;
                }
                Err(RecvError::Lagged(missed)) => {
                    // what the broker keeps comes again with a new subscription
                    tracing::warn!(missed, "MQTT announcements came faster than they were read: subscribing again to hear them all");
                    for filter in watch.filters() {
                        if let Err(e) = mqtt.subscribe(&filter, SUBSCRIBE_TIMEOUT).await {
                            tracing::warn!(%filter, error = %e, "cannot subscribe again");
                        }
                    }
                }
                Err(RecvError::Closed) => {
                    // the connection's task ended: a new one starts with the next subscription
                    rx = mqtt.messages();
                    tokio::time::sleep(TICK).await;
                }
            },
        }
    }
}

/// Read more announcements until they are quiet for [`SETTLE`].
async fn settle(
    watch: &MqttWatch,
    heard: &mut Heard,
    rx: &mut tokio::sync::broadcast::Receiver<Arc<crate::tools::mqtt::Message>>,
) {
    loop {
        match tokio::time::timeout(SETTLE, rx.recv()).await {
            Err(_) | Ok(Err(RecvError::Closed)) => return,
            Ok(Err(RecvError::Lagged(_))) => continue,
            Ok(Ok(m)) => {
                hear(watch, heard, &m.topic, &m.payload);
            }
        }
    }
}

/// Take one message in; whether it changed what is announced.
fn hear(watch: &MqttWatch, heard: &mut Heard, topic: &str, payload: &[u8]) -> bool {
    if let Some(base) = &watch.zigbee2mqtt {
        if topic == format!("{base}/bridge/devices") {
            heard.devices = Some(payload.to_vec());
            heard.bridge_changed = true;
            return true;
        }
        if topic == format!("{base}/bridge/groups") {
            heard.groups = Some(payload.to_vec());
            heard.bridge_changed = true;
            return true;
        }
    }
    if watch.discovery.is_some() {
        match heard.discovery.message(topic, payload) {
            Ok(Change::Added | Change::Updated | Change::Removed) => {
                heard.discovery_changed = true;
                return true;
            }
            Ok(Change::Unchanged | Change::NotDiscovery) => {}
            Err(e) => {
                tracing::warn!(%topic, error = %e, "an MQTT discovery announcement is left out")
            }
        }
    }
    false
}

/// Make the things of what changed and offer them through the hub.
async fn offer(watch: &MqttWatch, heard: &mut Heard, hub: &Hub) {
    if std::mem::take(&mut heard.bridge_changed) {
        if let (Some(base), Some(devices)) = (&watch.zigbee2mqtt, &heard.devices) {
            match zigbee2mqtt::devices(base, devices, heard.groups.as_deref()) {
                Ok(found) => {
                    let (things, skipped) = zigbee2mqtt::things(&found);
                    heard.z2m_states = things
                        .iter()
                        .filter_map(|t| match &t.control {
                            hearth_house::Control::Zigbee2mqtt(d) => Some(d.topics.state.clone()),
                            _ => None,
                        })
                        .collect();
                    for s in found.skipped.iter().chain(&skipped) {
                        tracing::info!(device = %s.name, why = %s.reason, "a Zigbee2MQTT device has no tool");
                    }
                    let tools = hub.found(Source::Zigbee2mqtt, things.clone()).await;
                    tracing::info!(
                        things = things.len(),
                        tools,
                        "read the house from Zigbee2MQTT"
                    );
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Zigbee2MQTT's bridge payload cannot be read: the devices from before stay")
                }
            }
        }
    }
    if std::mem::take(&mut heard.discovery_changed) {
        let (things, left) = heard.discovery.things();
        for l in &left {
            tracing::info!(what = %l, "an MQTT discovery announcement has no tool");
        }
        let things: Vec<Thing> = things
            .into_iter()
            .filter(|t| {
                // the bridge names Zigbee2MQTT's devices already, with their rooms
                let theirs = matches!(&t.control, hearth_house::Control::Mqtt(c) if c.origin() == Some("Zigbee2MQTT"));
                !(theirs && watch.zigbee2mqtt.is_some())
            })
            .collect();
        let tools = hub.found(Source::Discovery, things.clone()).await;
        tracing::info!(
            things = things.len(),
            tools,
            "read the house from MQTT discovery"
        );
    }
    heard.states = state_topics(heard);
}

/// The state topics of every thing announced.
fn state_topics(heard: &Heard) -> Vec<String> {
    let mut topics: Vec<String> = heard
        .discovery
        .state_topics()
        .into_iter()
        .map(str::to_string)
        .chain(heard.z2m_states.iter().cloned())
        .collect();
    topics.sort_unstable();
    topics.dedup();
    topics
}

/// Subscribe to every filter and state topic the connection lacks; a refusal is logged once.
async fn subscribe_all(
    mqtt: &MqttBackend,
    watch: &MqttWatch,
    states: &[String],
    refused: &mut HashSet<String>,
) {
    for filter in watch.filters().iter().chain(states) {
        if mqtt.subscribed(filter) {
            continue;
        }
        match mqtt.subscribe(filter, SUBSCRIBE_TIMEOUT).await {
            Ok(()) => {
                refused.remove(filter);
            }
            Err(e) => {
                if refused.insert(filter.clone()) {
                    tracing::warn!(%filter, error = %e, "cannot follow the house's MQTT topic yet: trying again");
                }
                // the broker is away: the others would fail the same way
                return;
            }
        }
    }
}
