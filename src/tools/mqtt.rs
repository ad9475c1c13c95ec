//! The `mqtt` executor (stub: being written).

use serde::Deserialize;
use serde_json::Value;

use super::backends::Backends;
use super::exec::ExecOutput;
use super::manifest::ToolsError;
use super::Check;
use crate::config::MqttSection;

/// Why the `[mqtt]` configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    #[error("[mqtt] url {0:?}: {1}")]
    Url(String, String),
}

/// `[tool.mqtt]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttTable {
    pub topic: String,
}

/// A checked `[tool.mqtt]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MqttSpec {
    pub topic: String,
}

impl MqttTable {
    /// Check the table.
    pub fn check(self, c: &Check) -> Result<MqttSpec, ToolsError> {
        c.template("mqtt.topic", &self.topic)?;
        Ok(MqttSpec { topic: self.topic })
    }
}

/// The broker connection.
#[derive(Debug)]
pub struct MqttBackend {
    pub host: String,
    pub port: u16,
}

impl MqttBackend {
    /// From `[mqtt]`.
    pub fn new(section: &MqttSection) -> Result<Self, MqttError> {
        let (host, port) =
            broker_address(&section.url).map_err(|e| MqttError::Url(section.url.clone(), e))?;
        Ok(MqttBackend { host, port })
    }
}

/// `mqtt://HOST[:PORT]` → (host, port).
pub fn broker_address(url: &str) -> Result<(String, u16), String> {
    let rest = url
        .strip_prefix("mqtt://")
        .or_else(|| url.strip_prefix("tcp://"))
        .ok_or_else(|| "expected mqtt://HOST[:PORT]".to_string())?
        .trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?),
        None => (rest, 1883),
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok((host.to_string(), port))
}

/// Run one call.
pub async fn run(tool: &str, _spec: &MqttSpec, _args: &Value, _b: &Backends) -> ExecOutput {
    ExecOutput::error(format!("{tool}: mqtt is being written"))
}
