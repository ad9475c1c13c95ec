//! What the executors connect to: the MQTT broker, Home Assistant, the GPIO chips, the
//! D-Bus buses, and the tool providers registered over the D-Bus face.
//!
//! Built once from the configuration ([`Backends::from_config`]) and shared by the registry
//! (an `Arc`); a connection is made when a tool first needs it and kept.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::tool::{Executor, ProviderSpec};
use super::{ExecOutput, ToolsError};
use crate::config::Config;

/// Why the backends cannot be built from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Mqtt(#[from] super::mqtt::MqttError),
    #[error(transparent)]
    HomeAssistant(#[from] super::homeassistant::HaError),
}

/// The connections tools run against.
#[derive(Default)]
pub struct Backends {
    /// The broker of `[mqtt]`, when configured.
    pub mqtt: Option<super::mqtt::MqttBackend>,
    /// Home Assistant of `[homeassistant]`, when configured.
    pub homeassistant: Option<super::homeassistant::HaBackend>,
    /// The GPIO chips (`[gpio]`, the board profile).
    pub gpio: super::gpio::GpioBackend,
    /// The buses `[tool.dbus]` tools call on.
    pub dbus: super::dbus::DbusBackend,
    /// The connection the D-Bus face serves on: registered providers are called back on it.
    providers: OnceLock<zbus::Connection>,
    /// The timers actor the timer tools ask (none: this process keeps no timers).
    timers: OnceLock<ractor::ActorRef<crate::timers::TimersMsg>>,
    /// The volume and the microphone mute the control tools set (none: nothing speaks).
    controls: OnceLock<super::Controls>,
}

impl std::fmt::Debug for Backends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backends")
            .field("mqtt", &self.mqtt.is_some())
            .field("homeassistant", &self.homeassistant.is_some())
            .field("providers", &self.providers.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Backends {
    /// Close the kept connections at shutdown (the MQTT one writes what is queued, then
    /// DISCONNECT).
    pub async fn close(&self) {
        if let Some(mqtt) = &self.mqtt {
            mqtt.close().await;
        }
    }

    /// No connections: only the built-ins and `exec` tools can run.
    pub fn none() -> Backends {
        Backends::default()
    }

    /// The connections the configuration names (each is opened when first used).
    pub fn from_config(config: &Config) -> Result<Backends, BackendError> {
        Ok(Backends {
            mqtt: config
                .mqtt
                .as_ref()
                .map(super::mqtt::MqttBackend::new)
                .transpose()?,
            homeassistant: config
                .homeassistant
                .as_ref()
                .map(super::homeassistant::HaBackend::new)
                .transpose()?,
            gpio: super::gpio::GpioBackend::new(config.gpio.chip.clone()),
            dbus: super::dbus::DbusBackend::default(),
            providers: OnceLock::new(),
            timers: OnceLock::new(),
            controls: OnceLock::new(),
        })
    }

    /// Fails when `executor` needs a connection these backends lack (names the fix).
    pub fn supports(&self, tool: &str, executor: &Executor) -> Result<(), ToolsError> {
        let missing = |executor: &'static str, missing: &str| ToolsError::NoBackend {
            tool: tool.to_string(),
            executor,
            missing: missing.to_string(),
        };
        match executor {
            Executor::Mqtt(_) if self.mqtt.is_none() => Err(missing(
                "mqtt",
                "no broker is configured: add [mqtt] url = \"mqtt://HOST:1883\" to hearth.toml",
            )),
            Executor::HomeAssistant(_) if self.homeassistant.is_none() => Err(missing(
                "homeassistant",
                "Home Assistant is not configured: add [homeassistant] url and token_file to hearth.toml",
            )),
            _ => Ok(()),
        }
    }

    /// The timer tools ask `timers` from now on. Set once.
    pub fn serve_timers(&self, timers: ractor::ActorRef<crate::timers::TimersMsg>) {
        if self.timers.set(timers).is_err() {
            tracing::warn!("the timers actor was already set; keeping the first");
        }
    }

    /// The control tools act on `controls` from now on. Set once.
    pub fn serve_controls(&self, controls: super::Controls) {
        if self.controls.set(controls).is_err() {
            tracing::warn!("the controls were already set; keeping the first");
        }
    }

    /// The controls, once set.
    pub(crate) fn controls(&self) -> Option<&super::Controls> {
        self.controls.get()
    }

    /// The timers actor, once set.
    pub(crate) fn timers(&self) -> Option<&ractor::ActorRef<crate::timers::TimersMsg>> {
        self.timers.get()
    }

    /// Call registered providers back on `connection` (the D-Bus face's). Set once.
    pub fn serve_providers(&self, connection: zbus::Connection) {
        if self.providers.set(connection).is_err() {
            tracing::warn!("the providers' bus connection was already set; keeping the first");
        }
    }

    /// Run a provider's tool: `io.hearth.ToolProvider1.Call(name, arguments_json)` on the
    /// provider's unique name, at [`PROVIDER_PATH`].
    pub(crate) async fn call_provider(
        &self,
        tool: &str,
        spec: &ProviderSpec,
        arguments: &Value,
    ) -> ExecOutput {
        let Some(conn) = self.providers.get() else {
            return ExecOutput::error(format!(
                "{tool}: its provider {} cannot be reached (hearth is not on a bus)",
                spec.owner
            ));
        };
        let body = (tool, arguments.to_string());
        let call = conn.call_method(
            Some(spec.owner.as_str()),
            PROVIDER_PATH,
            Some(PROVIDER_INTERFACE),
            "Call",
            &body,
        );
        match tokio::time::timeout(spec.timeout, call).await {
            Err(_) => ExecOutput::error(format!(
                "{tool}: its provider {} did not answer within {} ms",
                spec.owner,
                spec.timeout.as_millis()
            )),
            Ok(Err(e)) => ExecOutput::error(format!(
                "{tool}: its provider {} failed: {}",
                spec.owner,
                super::dbus::error_text(&e)
            )),
            Ok(Ok(reply)) => match reply.body().deserialize::<String>() {
                Ok(text) => ExecOutput::done(text),
                Err(e) => ExecOutput::error(format!(
                    "{tool}: its provider {} answered with something other than one string: {e}",
                    spec.owner
                )),
            },
        }
    }
}

/// The object path a tool provider serves `io.hearth.ToolProvider1` at.
pub(crate) const PROVIDER_PATH: &str = "/io/hearth/ToolProvider";
/// The interface hearth calls registered tools on.
pub(crate) const PROVIDER_INTERFACE: &str = "io.hearth.ToolProvider1";
/// Time a provider has to answer a call.
pub(crate) const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
