//! Support shared by the integration tests: real services (a private D-Bus, a Mosquitto
//! broker), the real test models, the daemon under test, a third-party Wyoming peer, the spoken
//! fixtures and manifest helpers. Each test binary uses a part of it.

#![allow(dead_code)]

pub mod daemon;
pub mod fixtures;
#[cfg(feature = "tts")]
pub mod listen;
pub mod manifest;
pub mod model;
pub mod peer;
pub mod pulse;
pub mod services;
#[cfg(feature = "tts")]
pub mod soak;
pub mod story;
