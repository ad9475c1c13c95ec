//! hearth's core: everything a turn decides, with no native engine under it (no llama.cpp,
//! ONNX Runtime, espeak-ng or sound device), so `cargo test -p hearth-core` builds and runs
//! in seconds with no service and no model file.
//!
//! `agent` is the hop loop (intents, the model through the `llm` engine protocol, checks,
//! confirmation, sessions); `intent` the local intents the tools' sentences make; `phrases`
//! the house as a recogniser is told it; `tools` the registry and its executors (command,
//! MQTT, Home Assistant, D-Bus, GPIO, the built-ins); `house` the things found in Home
//! Assistant and Zigbee2MQTT; `timers` the timers and alarms; `conductor` the voice turns of
//! one audio source as a state machine (the stages are the hearth crate's); `config` the
//! config file; `events` the stream the D-Bus face and telemetry follow; `voice` the values
//! the voice pipeline's stages pass; `cpu` the model giving way to speech on a shared
//! machine. The parser core (`toolcall`, `speech`, `preset`) is its own crate,
//! `hearth-toolcall`, re-exported here.
//!
//! The in-process engine (llama.cpp), the voice stages and the binary are the `hearth`
//! crate, above this one.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use hearth_toolcall as toolcall;
pub use hearth_toolcall::{preset, speech};

pub mod agent;
pub mod announce;
pub mod bounded;
pub mod conductor;
pub mod config;
pub mod cpu;
pub mod events;
pub mod house;
pub mod intent;
pub mod llm;
pub mod logs;
pub mod phrases;
mod secret;
pub mod timers;
pub mod tools;
pub mod voice;
