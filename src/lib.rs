//! hearth: an on-device voice agent daemon.
//!
//! The parser core (`toolcall`, `speech`, `preset`) is its own crate, `hearth-toolcall`
//! (pure Rust: no audio, LLM, D-Bus or async runtime), re-exported here. `models` finds, verifies and downloads model
//! files; `llm` holds the chat templates, grammars and engines (llama.cpp behind the `llm`
//! feature); `tools` the tool registry and executors; `agent` the hop loop; `supervisor`
//! the wiring; `voice` the values that cross the voice pipeline's stages; `events` the
//! stream the D-Bus face (`bus`) and telemetry follow; `cpu` the model giving way to speech
//! synthesis on a shared machine; `wake` the wake-word detectors (microWakeWord models on
//! TensorFlow Lite); `pipeline` the voice turns. Modules no binary, test or bench needs are
//! private to the crate.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use hearth_toolcall as toolcall;
pub use hearth_toolcall::{preset, speech};

pub mod agent;
pub mod audio;
pub mod bounded;
pub mod bus;
pub mod config;
#[cfg(any(feature = "llm", feature = "tts"))]
mod cpu;
pub mod doctor;
pub mod events;
pub mod intent;
pub mod llm;
pub mod logs;
pub mod models;
pub mod onnx;
#[cfg(feature = "tts")]
pub mod pipeline;
mod secret;
pub mod settings;
pub mod speech_models;
pub mod stt;
pub mod supervisor;
pub mod systemd;
pub mod tools;
pub mod tts;
pub mod voice;
pub mod wake;
