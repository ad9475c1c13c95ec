//! The `dbus` executor (stub: being written).

use serde::Deserialize;
use serde_json::Value;

use super::backends::Backends;
use super::exec::ExecOutput;
use super::manifest::ToolsError;
use super::Check;

/// `[tool.dbus]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbusTable {
    pub method: String,
}

/// A checked `[tool.dbus]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DbusSpec {
    pub method: String,
}

impl DbusTable {
    /// Check the table.
    pub fn check(self, c: &Check) -> Result<DbusSpec, ToolsError> {
        c.template("dbus.method", &self.method)?;
        Ok(DbusSpec {
            method: self.method,
        })
    }
}

/// The buses.
#[derive(Debug, Default)]
pub struct DbusBackend {}

/// A D-Bus error as one readable line: its name and message.
pub fn error_text(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, Some(msg), _) => format!("{name}: {msg}"),
        zbus::Error::MethodError(name, None, _) => name.to_string(),
        other => other.to_string(),
    }
}

/// Run one call.
pub async fn run(tool: &str, _spec: &DbusSpec, _args: &Value, _b: &Backends) -> ExecOutput {
    ExecOutput::error(format!("{tool}: dbus is being written"))
}
