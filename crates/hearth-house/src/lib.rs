//! The house as hearth finds it: a household's devices, where each is and what may be done
//! with it, read from what the house already publishes instead of hand-written manifests.
//!
//! - [`Thing`]: one device, entity or group a person can name, whatever announced it: its
//!   [`Kind`], its name and aliases as people say them, its [`Area`], its [`Ability`]s, and
//!   the [`Control`] a [`Command`] reaches it by. Made by the three sources below.
//! - [`homeassistant::things`]: Home Assistant's exposed entities, from its WebSocket API's
//!   answers; [`homeassistant::service`] is the service call that runs a command.
//! - [`zigbee2mqtt::devices`]: Zigbee2MQTT's retained `bridge/devices` and `bridge/groups`
//!   payloads as [`Device`]s, with the entries left out and why ([`zigbee2mqtt::Found`]);
//!   [`zigbee2mqtt::things`] makes them things, [`zigbee2mqtt::message`] is the `/set` message
//!   that runs a command, [`zigbee2mqtt::reading`] words a device's published state.
//! - [`discovery::Discovery`]: the components MQTT discovery announces
//!   (`homeassistant/<component>/…/config`, as Tasmota, ESPHome and Zigbee2MQTT publish it),
//!   kept message by message and made things; [`discovery::message`] runs a command,
//!   [`discovery::reading`] words a component's state.
//! - [`Device`]: one Zigbee2MQTT device or group: its kind, its name and room as people say
//!   them (`living_room/Ceiling Light` is a "ceiling light" in the "living room"), its
//!   [`Feature`]s and its MQTT [`Topics`]; [`Device::set`] and [`Device::get`] make the
//!   [`Message`] for a feature, refusing what it does not allow.
//! - [`Feature`]: a property, the values it takes ([`ValueType`]) and its [`Access`]: set only
//!   what is settable, read only what is published or gettable.
//! - [`HouseError`]: a payload that is not what its source publishes, or a command a thing
//!   would not take.
//!
//! ```
//! let devices = br#"[{
//!     "ieee_address": "0x000b57fffe8e4d10", "type": "EndDevice", "supported": true,
//!     "friendly_name": "hall/Front Door", "disabled": false, "interview_completed": true,
//!     "definition": {"model": "YRD256HA20BP", "vendor": "Yale", "description": "Assure lock SL",
//!         "exposes": [{"type": "lock", "features": [{"type": "binary", "name": "state",
//!             "property": "state", "access": 7, "value_on": "LOCK", "value_off": "UNLOCK"}]}]}
//! }]"#;
//! let found = hearth_house::zigbee2mqtt::devices("zigbee2mqtt", devices, None)?;
//! let door = &found.devices[0];
//! assert_eq!((door.name.as_str(), door.room.as_deref()), ("front door", Some("hall")));
//! assert_eq!(door.kind, hearth_house::Kind::Lock);
//! let lock = door.set("state", "LOCK".into())?;
//! assert_eq!(lock.topic, "zigbee2mqtt/hall/Front Door/set");
//! assert_eq!(lock.payload, r#"{"state":"LOCK"}"#);
//! # Ok::<(), hearth_house::HouseError>(())
//! ```
//!
//! Pure Rust: no MQTT client, no async runtime, no I/O; the caller brings the payloads and
//! publishes the messages.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod check;
mod device;
pub mod discovery;
mod error;
pub mod homeassistant;
mod say;
mod thing;
mod words;
pub mod zigbee2mqtt;

pub use device::{
    Access, Category, Device, DeviceId, Feature, Kind, Message, Model, Preset, Topics, Unsupported,
    ValueType,
};
pub use error::HouseError;
pub use thing::{Ability, Area, Command, Control, Measure, Source, Thing};
