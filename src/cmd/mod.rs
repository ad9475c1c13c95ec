//! One module per command: each owns its clap `Args` and its `run`. Settings shared by
//! commands (preset, model files, tools, bus, speech, voice) come from
//! [`hearth::settings`], never from here; anyhow lives only in the binary.

pub mod ask;
pub mod doctor;
pub mod models;
pub mod parse;
#[cfg(feature = "tts")]
pub mod run;

use anyhow::{Context, Result};

/// The async runtime of a command: two workers (the machines are small).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}
