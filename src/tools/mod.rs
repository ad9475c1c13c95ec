//! Tools the agent can run: the registry, `tools/*.toml` manifests, executors, built-ins
//! and the tools actor.
//!
//! A [`Registry`] holds every [`Tool`]: the built-ins (`get_time`, `get_date`) first, then
//! the tools of each manifest in `tools/` (files in sorted order, tools in file order). It
//! gives the [`ToolSet`](crate::toolcall::ToolSet) the parser validates against, the
//! OpenAI-style tools list chat templates take, and a fingerprint of both.
//!
//! A manifest tool names exactly one executor. Today that is `exec`: a program run directly
//! (no shell) with its argv rendered from the call's arguments by minijinja, with a timeout
//! and an output cap ([`exec`]). A tool may also carry a `say` template: the spoken
//! confirmation of a call, rendered from the same arguments.
//!
//! [`ToolsActor`] serves the registry to the pipeline: a snapshot of it, and running a
//! hop's calls in parallel with results in call order. It re-validates every call against
//! the registry (fail closed): an invalid call is reported as an error and never runs.
//!
//! Templates are rendered with strict undefined behaviour: a template that refers to an
//! argument the call does not have is an error, never an empty string.

pub mod actor;
pub mod builtin;
pub mod exec;
pub mod manifest;
pub mod registry;

use std::sync::LazyLock;

pub use actor::{ToolsActor, ToolsMsg};
pub use builtin::Builtin;
pub use exec::{ExecOutput, ExecSpec};
pub use manifest::{load_dir, parse_manifest, ToolsError};
pub use registry::{Executor, Registry, Tool, ToolOutcome, ToolStatus};

/// The variable a `say` template reads the tool's output text from (`It's {{ result }}.`).
pub const RESULT_VAR: &str = "result";

/// The template environment shared by argv and `say` templates: strict undefined values
/// (a missing argument fails the render), Python-style string methods (`.upper()`, …).
pub(crate) fn templates() -> &'static minijinja::Environment<'static> {
    static ENV: LazyLock<minijinja::Environment<'static>> = LazyLock::new(|| {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env
    });
    &ENV
}

/// Render one template source against a JSON object of variables.
pub(crate) fn render(source: &str, vars: &serde_json::Value) -> Result<String, minijinja::Error> {
    templates().render_str(source, minijinja::value::Serde(vars))
}
