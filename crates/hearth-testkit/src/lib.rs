//! The support shared by hearth's integration tests and benches: real services (a private
//! D-Bus, a Mosquitto broker, a Home Assistant with the test house), the real test models, the
//! daemon under test, a third-party Wyoming peer and the Python peers' virtual environments, the
//! spoken fixtures and manifest helpers, the scenes and the session set.
//! Each test binary and bench uses a part of it.

pub mod bench;
pub mod checkout;
pub mod daemon;
pub mod file_server;
pub mod fixtures;
pub mod homeassistant;
#[cfg(feature = "piper")]
pub mod listen;
pub mod manifest;
pub mod model;
pub mod peer;
pub mod pulse;
pub mod satellite;
pub mod scenes;
pub mod services;
pub mod session;
#[cfg(feature = "piper")]
pub mod soak;
pub mod story;
pub mod timers;
pub mod tone;
pub mod venv;

pub use checkout::{hearth_exe, root};
