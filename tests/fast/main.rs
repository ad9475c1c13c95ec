//! The integration tests that need no real LLM, whisper or audio device, in one binary
//! (one link instead of eleven: CI time and disk). Each module was a test file of its own;
//! `cargo test --test fast MODULE::` runs one of them.

use hearth_testkit as common;

mod agent;
mod audio_files;
mod cli;
mod confirm;
mod derived_intents;
mod end_of_turn;
mod executor_dbus;
mod executor_homeassistant;
mod executor_mqtt;
mod house_mqtt;
mod models;
mod pull;
mod recall;
mod remote;
mod run_faults;
mod timers;
mod tools;
mod vad;
