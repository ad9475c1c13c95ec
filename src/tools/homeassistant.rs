//! The `homeassistant` executor (stub: being written).

use serde::Deserialize;
use serde_json::Value;

use super::backends::Backends;
use super::exec::ExecOutput;
use super::manifest::ToolsError;
use super::Check;
use crate::config::HomeAssistantSection;

/// Why the `[homeassistant]` configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HaError {
    #[error("[homeassistant] token_file {0}: {1}")]
    Token(String, String),
}

/// `[tool.homeassistant]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HaTable {
    pub service: String,
}

/// A checked `[tool.homeassistant]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HaSpec {
    pub service: String,
}

impl HaTable {
    /// Check the table.
    pub fn check(self, c: &Check) -> Result<HaSpec, ToolsError> {
        c.template("homeassistant.service", &self.service)?;
        Ok(HaSpec {
            service: self.service,
        })
    }
}

/// The Home Assistant connection.
#[derive(Debug)]
pub struct HaBackend {
    pub url: String,
}

impl HaBackend {
    /// From `[homeassistant]`.
    pub fn new(section: &HomeAssistantSection) -> Result<Self, HaError> {
        Ok(HaBackend {
            url: section.url.clone(),
        })
    }
}

/// Run one call.
pub async fn run(tool: &str, _spec: &HaSpec, _args: &Value, _b: &Backends) -> ExecOutput {
    ExecOutput::error(format!("{tool}: homeassistant is being written"))
}
