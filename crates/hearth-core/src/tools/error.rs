//! The one error type for loading tools (manifests, their executors, intents and the
//! backends they need), shared by the manifest loader, the registry and every executor.

use std::path::PathBuf;

/// Errors loading tools; each names the file, the tool, the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    /// The tools directory cannot be read.
    #[error("cannot read the tools directory {}: {source}", path.display())]
    ReadDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A manifest file cannot be read.
    #[error("cannot read tool manifest {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not valid TOML, or unknown or mistyped keys (the message gives line and column).
    #[error("tool manifest {} is not a valid manifest: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    /// A manifest has no `[[tool]]` table.
    #[error("tool manifest {} defines no tools: add a [[tool]] table or remove the file", path.display())]
    NoTools { path: PathBuf },
    /// A tool name that some model formats cannot carry.
    #[error("{}: tool name {name:?} is not usable: use 1-64 letters, digits, `_` or `-` (snake_case works with every model format)", path.display())]
    BadName { path: PathBuf, name: String },
    /// A blank description.
    #[error("{}: tool {tool:?} has an empty description: say in a few words what it does (the model reads it)", path.display())]
    NoDescription { path: PathBuf, tool: String },
    /// A tool name used twice (in one file or across files).
    #[error("{}: tool {tool:?} is defined twice (first in {}): tool names must be unique", path.display(), first.display())]
    Duplicate {
        path: PathBuf,
        tool: String,
        first: PathBuf,
    },
    /// A registration over one of `[bus]`'s bounds on registered tools.
    #[error("{problem}")]
    ProviderLimit { problem: String },
    /// A registered tool whose name another tool already has.
    #[error("a tool named {tool:?} is already offered: choose another name")]
    NameInUse { tool: String },
    /// A manifest tool named like a built-in.
    #[error("{}: tool {tool:?} has the name of a built-in tool: choose another name", path.display())]
    BuiltinName { path: PathBuf, tool: String },
    /// A tool without an executor table.
    #[error("{}: tool {tool:?} has no executor: add one of [tool.exec], [tool.mqtt], [tool.homeassistant], [tool.gpio] or [tool.dbus]", path.display())]
    NoExecutor { path: PathBuf, tool: String },
    /// A tool with more than one executor table.
    #[error("{}: tool {tool:?} has {} executors ({}): keep exactly one", path.display(), found.len(), found.join(", "))]
    TwoExecutors {
        path: PathBuf,
        tool: String,
        found: Vec<String>,
    },
    /// A template of an executor table that does not compile.
    #[error("{}: tool {tool:?}: {field} is not a valid template: {message}", path.display())]
    Template {
        path: PathBuf,
        tool: String,
        field: String,
        message: String,
    },
    /// A value of an executor table that cannot work.
    #[error("{}: tool {tool:?}: {field}: {problem}", path.display())]
    Invalid {
        path: PathBuf,
        tool: String,
        field: String,
        problem: String,
    },
    /// A tool whose executor needs a connection the configuration does not give.
    #[error("tool {tool:?} uses [tool.{executor}], but {missing}")]
    NoBackend {
        tool: String,
        executor: &'static str,
        missing: String,
    },
    /// `exec.argv = []`.
    #[error("{}: tool {tool:?} has an empty exec.argv: give at least the program to run", path.display())]
    EmptyArgv { path: PathBuf, tool: String },
    /// `timeout_ms` or `max_output_bytes` of 0.
    #[error("{}: tool {tool:?}: exec.{field} must be greater than 0", path.display())]
    ZeroLimit {
        path: PathBuf,
        tool: String,
        field: &'static str,
    },
    /// A template in `exec.argv[0]`: what runs must never depend on a call's values.
    #[error("{}: tool {tool:?}: exec.argv[0] {program:?} is a template, but the program must be fixed text (a call's values must never choose what runs): write it as a path relative to this manifest's directory (\"./demo-home\" instead of \"{{{{ manifest_dir }}}}/demo-home\"), an absolute path, or a name looked up in PATH, and pass values as later arguments", path.display())]
    ProgramTemplate {
        path: PathBuf,
        tool: String,
        program: String,
    },
    /// An argv element that does not compile as a template.
    #[error("{}: tool {tool:?}: exec.argv[{index}] is not a valid template: {message}", path.display())]
    ArgvTemplate {
        path: PathBuf,
        tool: String,
        index: usize,
        message: String,
    },
    /// A `say` that does not compile as a template.
    #[error("{}: tool {tool:?}: `say` is not a valid template: {message}", path.display())]
    SayTemplate {
        path: PathBuf,
        tool: String,
        message: String,
    },
    /// A template using a variable that is not a declared parameter.
    #[error("{}: tool {tool:?}: {template} uses `{variable}`, which is not a parameter: {}declare it under [tool.parameters.properties]", path.display(), if known.is_empty() { String::new() } else { format!("use one of {} or ", known.join(", ")) })]
    UnknownVariable {
        path: PathBuf,
        tool: String,
        template: String,
        variable: String,
        known: Vec<String>,
    },
    /// `parameters` that is not an object schema.
    #[error("{}: tool {tool:?}: parameters must be an object schema (type = \"object\"), got {found}", path.display())]
    NotObjectSchema {
        path: PathBuf,
        tool: String,
        found: String,
    },
    /// `parameters` that does not compile as JSON Schema.
    #[error("{}: tool {tool:?}: parameters is not a valid JSON Schema: {reason}", path.display())]
    BadSchema {
        path: PathBuf,
        tool: String,
        reason: String,
    },
    /// A parameter named `manifest_dir`.
    #[error("{}: tool {tool:?}: the parameter name `{name}` is reserved (argv templates get the manifest's directory under it): rename the parameter", path.display())]
    ReservedParameter {
        path: PathBuf,
        tool: String,
        name: String,
    },
    /// `[[tool.intent]]` sentences that do not compile against the tool's parameters.
    #[error("{}: {source}", path.display())]
    Intent {
        path: PathBuf,
        #[source]
        source: Box<crate::intent::IntentError>,
    },
    /// `[[tool.intent]]` on a tool without `say`.
    #[error("{}: tool {tool:?} has [[tool.intent]] but no `say`: a command an intent handles is answered with the tool's `say` (which may read {{{{ result }}}}); add one", path.display())]
    IntentWithoutSay { path: PathBuf, tool: String },
    /// A `confirm` that cannot be used.
    #[error("{}: tool {tool:?}: `confirm` {problem}; write `confirm = true` (every call waits for a yes) or `[tool.confirm]` with `when = {{ parameter = value }}` (the calls that do) and, if you like, `ask = \"Unlock the {{{{ door }}}} door?\"`", path.display())]
    Confirm {
        path: PathBuf,
        tool: String,
        problem: String,
    },
    /// An `[tool.inverse]` that cannot be used.
    #[error("{}: tool {tool:?}: `[tool.inverse]` {problem}; write `[tool.inverse]` with `arguments = {{ parameter = \"{{{{ template over the call's arguments }}}}\" }}` and, for another tool that undoes it, `tool = \"name\"`", path.display())]
    Inverse {
        path: PathBuf,
        tool: String,
        problem: String,
    },
    /// An inverse names a tool the registry does not have.
    #[error("tool {tool:?}: its `[tool.inverse]` names tool {inverse:?}, which is not loaded; the tools are: {known}")]
    InverseTool {
        tool: String,
        inverse: String,
        known: String,
    },
    /// Building a registry from tools that do not form a valid tool set.
    #[error(transparent)]
    ToolSet(#[from] crate::toolcall::ToolsError),
}
