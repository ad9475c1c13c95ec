//! One module per command: each owns its clap `Args` and its `run`. Settings shared by
//! commands (preset, model files, tools, bus, speech, voice) come from
//! [`hearth::settings`], never from here; anyhow lives only in the binary.

pub mod ask;
pub mod devices;
pub mod doctor;
pub mod models;
pub mod parse;
pub mod phrases;
pub mod pull;
pub mod run;

use anyhow::{Context, Result};

/// The tools `hearth run` would offer before the house is read: the manifests of the
/// settings' directory (or none), the built-ins, the timers and the controls.
pub fn offered(settings: &hearth::Settings) -> Result<hearth::Registry> {
    let backends = std::sync::Arc::new(hearth::tools::Backends::from_config(&settings.config)?);
    let dir = settings.tools_dir();
    hearth::Registry::offered(dir.as_deref(), backends).with_context(|| match &dir {
        Some(dir) => format!("loading the tools in {}", dir.display()),
        None => "loading the built-in tools".to_string(),
    })
}

/// Stack of each runtime thread. Actors run native inference on them (ONNX Runtime for the
/// voice, the VAD and openWakeWord; TF Lite): a debug build overflowed tokio's default
/// 2 MiB while the Wake stage loaded openWakeWord's three networks for each of its two views.
/// Only the pages used are ever committed.
const THREAD_STACK: usize = 8 << 20;

/// The async runtime of a command: two workers (the machines are small).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(THREAD_STACK)
        .enable_all()
        .build()
        .context("starting the async runtime")
}
