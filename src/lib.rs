//! hearth: an on-device voice agent daemon.
//!
//! This crate's parser core (`toolcall`, `speech`, `preset`) is pure Rust: no audio, LLM
//! or D-Bus code, so it builds and tests in seconds.

pub mod preset;
pub mod speech;
pub mod toolcall;
pub mod tools;
