//! The `gpio` executor (stub: being written).

use serde::Deserialize;
use serde_json::Value;

use super::backends::Backends;
use super::exec::ExecOutput;
use super::manifest::ToolsError;
use super::Check;

/// `[tool.gpio]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpioTable {
    pub line: String,
}

/// A checked `[tool.gpio]`.
#[derive(Debug, Clone, PartialEq)]
pub struct GpioSpec {
    pub line: String,
}

impl GpioTable {
    /// Check the table.
    pub fn check(self, c: &Check) -> Result<GpioSpec, ToolsError> {
        c.template("gpio.line", &self.line)?;
        Ok(GpioSpec { line: self.line })
    }
}

/// The GPIO chips.
#[derive(Debug, Default)]
pub struct GpioBackend {
    pub chip: Option<String>,
}

impl GpioBackend {
    /// With a default chip (from `[gpio]` or the board profile).
    pub fn new(chip: Option<String>) -> Self {
        GpioBackend { chip }
    }
}

/// Run one call.
pub async fn run(tool: &str, _spec: &GpioSpec, _args: &Value, _b: &Backends) -> ExecOutput {
    ExecOutput::error(format!("{tool}: gpio is being written"))
}
