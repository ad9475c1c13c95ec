//! The house found: the things Home Assistant, Zigbee2MQTT and MQTT discovery announce, made
//! into tools with no manifest.
//!
//! - `homeassistant.rs`: [`watch_home_assistant`], a task that reads Home Assistant's
//!   registries over its WebSocket API (what is exposed to Assist, names, aliases, areas,
//!   states), follows their changes, and sends the tools they make to the tools actor;
//!   reconnects with backoff, keeping the last good list while Home Assistant is away.
//! - `mqtt.rs`: [`watch_mqtt`], a task that follows the `[mqtt]` broker's Zigbee2MQTT bridge
//!   (`bridge/devices`, `bridge/groups`) and MQTT discovery (`homeassistant/…/config`), and
//!   subscribes to the state topics of what they announce.
//! - `hub.rs`: [`Hub`], where the sources' things meet: the tools are made from all of them.
//! - `tools.rs`: [`tools`], the tools a list of things makes (one per kind and action).
//!
//! The things themselves, and what each can do, are `hearth_house`'s.

mod homeassistant;
mod hub;
mod mqtt;
mod tools;

pub use homeassistant::{offer_once, read_once, watch_home_assistant, HouseError, HouseWatch};
pub use hub::Hub;
pub use mqtt::{watch_mqtt, MqttWatch};
pub use tools::tools;
