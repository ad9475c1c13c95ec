//! hearth: an on-device voice agent daemon.
//!
//! The parser core (`toolcall`, `speech`, `preset`) is pure Rust: no audio, LLM or D-Bus
//! code, so it builds and tests in seconds. `models` finds, verifies and downloads model
//! files; `llm` holds the chat templates, grammars and engines (llama.cpp behind the `llm`
//! feature); `tools` the tool registry and executors; `agent` the hop loop; `supervisor`
//! the wiring; `voice` the values that cross the voice pipeline's stages; `events` the
//! stream the D-Bus face (`bus`) and telemetry follow.

pub mod agent;
pub mod audio;
pub mod bus;
pub mod config;
pub mod doctor;
pub mod events;
pub mod intent;
pub mod llm;
pub mod models;
pub mod onnx;
#[cfg(feature = "tts")]
pub mod pipeline;
pub mod preset;
pub mod settings;
pub mod speech;
pub mod stt;
pub mod supervisor;
pub mod systemd;
pub mod toolcall;
pub mod tools;
pub mod tts;
pub mod voice;
