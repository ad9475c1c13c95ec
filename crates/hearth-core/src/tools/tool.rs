//! What a tool is, whatever runs it: [`Tool`], its [`Executor`], the [`Confirm`] some of
//! its calls wait for, and the built-ins as tools. Every other module of `tools/` that
//! handles tools imports them from here; this module imports only the executors' specs.

use std::sync::Arc;

pub use super::builtin::no_parameters;
use super::builtin::Builtin;
use super::dbus::DbusSpec;
use super::exec::ExecSpec;
use super::gpio::GpioSpec;
use super::homeassistant::HaSpec;
use super::house::HouseSpec;
use super::mqtt::MqttSpec;
use crate::intent::ToolIntents;
use crate::toolcall::ToolSpec;

/// One tool: what the model is shown, the spoken confirmation, and how it runs.
#[derive(Debug, Clone)]
pub struct Tool {
    /// Name, description and JSON Schema of the arguments, as offered to the model.
    pub spec: ToolSpec,
    /// Spoken confirmation template (minijinja over the call's arguments), if any.
    pub say: Option<String>,
    /// Sentence templates that run the tool with no LLM hop (`[[tool.intent]]`).
    pub intents: Option<Arc<crate::intent::ToolIntents>>,
    /// Calls that run only on a yes (`confirm` in the manifest).
    pub confirm: Option<Confirm>,
    /// Its way back, for "undo that" (`[tool.inverse]`); none: it cannot be undone.
    pub inverse: Option<super::inverse::Inverse>,
    /// Whether the model is shown it and may call it. The timers', alarms' and controls'
    /// built-ins are not: their sentences are local intents, and shown to a 0.5B model they
    /// cost every turn a longer prompt and drew calls nobody asked for.
    pub for_model: bool,
    /// How a call runs.
    pub executor: Executor,
}

/// Which of a tool's calls wait for a yes, and what hearth asks (`confirm` in a manifest:
/// unlocking a door, opening the garage).
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    /// Argument values a call must have to wait for a yes (all of them; none: every call).
    pub when: serde_json::Map<String, serde_json::Value>,
    /// The question (a template over the arguments); `None`: made from the tool's `say`.
    pub ask: Option<String>,
}

impl Confirm {
    /// Whether `arguments` are a call that waits for a yes.
    pub fn applies(&self, arguments: &serde_json::Value) -> bool {
        self.when.iter().all(|(k, want)| {
            let have = arguments.get(k);
            match (have.and_then(|v| v.as_f64()), want.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => have == Some(want),
            }
        })
    }
}

/// How a tool's calls run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Executor {
    /// Compiled into hearth (`get_time`, `get_date`, the timers).
    Builtin(Builtin),
    /// A program run directly, argv rendered from the arguments (`[tool.exec]`).
    Exec(ExecSpec),
    /// Publish to the configured MQTT broker (`[tool.mqtt]`).
    Mqtt(MqttSpec),
    /// Call a Home Assistant service or read a state (`[tool.homeassistant]`).
    HomeAssistant(HaSpec),
    /// Set or read a GPIO line (`[tool.gpio]`).
    Gpio(GpioSpec),
    /// Call a D-Bus method (`[tool.dbus]`).
    Dbus(DbusSpec),
    /// A tool a D-Bus client registered (`RegisterTool`): hearth calls it back.
    Provider(ProviderSpec),
    /// A tool made from the things found in the house (`crates/hearth-core/src/house/`): its errors are
    /// sentences for the person ("Which one: …?"), said as they are.
    House(HouseSpec),
}

impl Executor {
    /// The executor's kind, as a manifest names it (`builtin` for the built-ins,
    /// `provider` for tools registered over D-Bus).
    pub fn kind(&self) -> &'static str {
        match self {
            Executor::Builtin(_) => "builtin",
            Executor::Exec(_) => "exec",
            Executor::Mqtt(_) => "mqtt",
            Executor::HomeAssistant(_) => "homeassistant",
            Executor::Gpio(_) => "gpio",
            Executor::Dbus(_) => "dbus",
            Executor::Provider(_) => "provider",
            Executor::House(_) => "house",
        }
    }
}

/// A tool served by a D-Bus client: hearth calls `io.hearth.ToolProvider1.Call` on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSpec {
    /// The provider's unique bus name (`:1.42`).
    pub owner: String,
    /// Time the provider has to answer.
    pub timeout: std::time::Duration,
}

impl Tool {
    /// Where the tool comes from, as `hearth devices` and `ListTools` say it: `builtin`,
    /// `manifest`, `provider` (registered over D-Bus), or the sources of the things a house
    /// tool reaches (`homeassistant`, `zigbee2mqtt`, `mqtt-discovery`; several joined by
    /// `+`).
    pub fn source(&self) -> String {
        match &self.executor {
            Executor::Builtin(_) => "builtin".into(),
            Executor::Provider(_) => "provider".into(),
            Executor::House(spec) => {
                let mut sources: Vec<&str> =
                    spec.things.iter().map(|t| t.source.as_str()).collect();
                sources.sort_unstable();
                sources.dedup();
                sources.join("+")
            }
            _ => "manifest".into(),
        }
    }

    /// A built-in as a registry tool (no parameters).
    pub fn builtin(builtin: Builtin) -> Tool {
        Tool {
            spec: ToolSpec {
                name: builtin.name().into(),
                description: builtin.description().into(),
                parameters: builtin.parameters(),
            },
            say: Some(builtin.say().to_string()),
            intents: builtin_intents(builtin),
            confirm: None,
            inverse: None,
            for_model: matches!(builtin, Builtin::Time | Builtin::Date),
            executor: Executor::Builtin(builtin),
        }
    }

    /// The clock built-ins (`get_time`, `get_date`) as registry tools, in registry order:
    /// every registry has them.
    pub fn builtins() -> Vec<Tool> {
        [Builtin::Time, Builtin::Date]
            .into_iter()
            .map(Tool::builtin)
            .collect()
    }

    /// The controls of hearth itself (volume, microphone): a registry has them when its
    /// process speaks ([`super::Backends::controls`]).
    pub fn controls() -> Vec<Tool> {
        super::DeviceTool::ALL
            .into_iter()
            .map(|d| Tool::builtin(Builtin::Device(d)))
            .collect()
    }

    /// The timer, alarm and reminder tools: a registry has them when its process keeps timers
    /// ([`super::Backends::timers`]).
    pub fn timers() -> Vec<Tool> {
        let timers = super::TimerTool::ALL.map(Builtin::Timer);
        let alarms = super::AlarmTool::ALL.map(Builtin::Alarm);
        timers
            .into_iter()
            .chain(alarms)
            .map(Tool::builtin)
            .collect()
    }
}

/// A built-in's compiled intents (its sentences are constants: a test checks that they
/// compile).
fn builtin_intents(builtin: Builtin) -> Option<Arc<ToolIntents>> {
    ToolIntents::compile(builtin.name(), &builtin.intents(), &builtin.parameters())
        .map_err(|e| tracing::error!(tool = builtin.name(), error = %e, "a built-in's sentences do not compile"))
        .map(Arc::new)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_sentences_compile_and_are_recognised() {
        let intents = crate::intent::Intents::new(
            Tool::builtins()
                .into_iter()
                .map(|t| t.intents.expect("built-in sentences compile"))
                .collect(),
        );
        let tool = |text: &str| {
            intents
                .recognize(text)
                .map(|calls| calls.iter().map(|c| c.tool.clone()).collect::<Vec<_>>())
        };
        assert_eq!(tool("What time is it?"), Some(vec!["get_time".to_string()]));
        assert_eq!(
            tool("What's the date today?"),
            Some(vec!["get_date".to_string()])
        );
        assert_eq!(tool("what time is it in Tokyo"), None);
    }

    #[test]
    fn a_built_in_is_a_tool_of_its_name() {
        let tools = Tool::builtins();
        assert_eq!(tools[0].spec.name, "get_time");
        assert!(matches!(
            tools[1].executor,
            Executor::Builtin(Builtin::Date)
        ));
    }
}
