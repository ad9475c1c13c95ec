//! hearth: an on-device voice agent daemon.
//!
//! The parser core (`toolcall`, `speech`, `preset`) is its own crate, `hearth-toolcall`
//! (pure Rust: no audio, LLM, D-Bus or async runtime), re-exported here. `models` finds,
//! verifies and downloads model files; `llm` holds the chat templates, grammars and engines
//! (llama.cpp behind the `llm` feature); `tools` the tool registry and executors; `agent` the
//! hop loop; `supervisor` the wiring; `voice` the values that cross the voice pipeline's
//! stages; `events` the stream the D-Bus face (`bus`) and telemetry follow; `cpu` the model
//! giving way to speech synthesis on a shared machine; `wake` the wake-word spotters
//! (microWakeWord models on TensorFlow Lite); `pipeline` the voice turns; `satellite` the
//! Wyoming satellites in other rooms, each one more source and sink for the pipeline.
//!
//! A module is public only when the binary, a test or a bench needs it (`cpu` and `secret`
//! are not), and inside one an item is public only when something outside the crate names
//! it: the rest is `pub(crate)`, so the compiler reports what nothing uses. The front door
//! (the binary's first needs) is re-exported at the root.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// Dead code is found in the default build (every feature on: what CI lints first). Without
// `tts` the voice path's helpers (the stage supervisor, reply audio, Listen's scoring) are
// unused by design, so a build without it does not report them.
#![cfg_attr(not(feature = "tts"), allow(dead_code))]

pub use hearth_toolcall as toolcall;
pub use hearth_toolcall::{preset, speech};

pub mod agent;
pub mod announce;
pub mod audio;
pub mod bounded;
pub mod bus;
pub mod config;
mod cpu;
pub mod doctor;
pub mod events;
pub mod house;
pub mod intent;
pub mod llm;
pub mod logs;
pub mod models;
pub mod onnx;
#[cfg(feature = "tts")]
pub mod pipeline;
pub mod satellite;
mod secret;
pub mod settings;
pub mod speech_models;
pub mod stt;
pub mod stt_shared;
pub mod supervisor;
pub mod systemd;
pub mod timers;
pub mod tools;
pub mod tts;
pub mod voice;
pub mod wake;

// The front door, as the binary uses it: settings resolved once from the config file and the
// command line, the text runtime (engine, tools, agent) and what a turn asks and answers.
pub use agent::{Ask, Turn};
pub use settings::{Flags, Settings};
pub use supervisor::{start_text, TextOptions, TextRuntime};
pub use tools::Registry;
