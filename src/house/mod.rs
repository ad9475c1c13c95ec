//! The house found: the things Home Assistant announces, made into tools with no manifest.
//!
//! - `homeassistant.rs`: [`watch_home_assistant`], a task that reads Home Assistant's
//!   registries over its WebSocket API (what is exposed to Assist, names, aliases, areas,
//!   states), follows their changes, and sends the tools they make to the tools actor;
//!   reconnects with backoff, keeping the last good list while Home Assistant is away.
//! - `tools.rs`: [`tools`], the tools a list of things makes (one per kind and action).
//!
//! The things themselves, and what each can do, are `hearth_house`'s.

mod homeassistant;
mod tools;

pub use homeassistant::{
    offer_once, read_once, watch_home_assistant, with_house, HouseError, HouseWatch,
};
pub use tools::tools;
