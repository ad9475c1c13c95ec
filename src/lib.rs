//! hearth: an on-device voice agent daemon.
//!
//! What a turn decides (the agent, the conductor, intents, checks, tools and executors, the
//! house found, timers, the config, the events and the voice stages' values) is the core,
//! `crates/hearth-core`, with no native engine under it; its modules are re-exported here
//! under the same names, as is the parser crate (`toolcall`, `speech`, `preset`). This crate
//! adds what needs a native engine or the machine: `llm::llama` the llama.cpp engine (feature
//! `llm`), `audio` the sound devices, Listen and the echo canceller, `wake` the wake-word
//! spotters, `tts` Piper, `onnx` ONNX Runtime, `stt` the Wyoming client of hearth-stt,
//! `pipeline` the stages wired and a conductor driven (feature `tts`), `satellite` the Wyoming satellites in other
//! rooms, `bus` the D-Bus face, `systemd`, `models` the model files, `settings` the flags
//! over the config file resolved once, `supervisor` the wiring, `doctor` the checks.
//!
//! A module is public only when the binary, a test or a bench needs it, and inside one an
//! item is public only when something outside the crate names it: the rest is `pub(crate)`,
//! so the compiler reports what nothing uses. The front door (the binary's first needs) is
//! re-exported at the root.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use hearth_toolcall as toolcall;
pub use hearth_toolcall::{preset, speech};

// The core (crates/hearth-core): what a turn decides, with no native engine under it.
pub use hearth_core::{
    agent, announce, bounded, conductor, config, cpu, events, house, intent, logs, phrases, timers,
    tools, voice,
};

pub mod audio;
pub mod bus;
pub mod doctor;
pub mod llm;
pub mod models;
pub mod onnx;
pub mod pipeline;
pub mod satellite;
pub mod settings;
pub mod speech_models;
pub mod stt;
pub mod stt_shared;
pub mod supervisor;
pub mod systemd;
pub mod tts;
pub mod wake;

// The front door, as the binary uses it: settings resolved once from the config file and the
// command line, the text runtime (engine, tools, agent) and what a turn asks and answers.
pub use agent::{Ask, Turn};
pub use settings::{Flags, Settings};
pub use supervisor::{start_text, TextOptions, TextRuntime};
pub use tools::Registry;
