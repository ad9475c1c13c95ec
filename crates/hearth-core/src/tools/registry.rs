//! The tools registry: every tool on offer, its validator set, its executor.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::backends::Backends;
use super::builtin::Builtin;
use super::exec;
use super::manifest;
use super::tool::{Executor, Tool};
use super::{ToolStatus, ToolsError};
use crate::intent::{Shape, ToolIntents};
use crate::toolcall::{ToolCall, ToolSet, Verdict};

/// The outcome of one call, in the shape the hop loop and telemetry report it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    /// The call's id (the model's own, or `<name>_<index>`).
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The arguments it was called with.
    pub arguments: Value,
    /// How it went.
    pub status: ToolStatus,
    /// The tool's output for `ok`, empty for `empty`, the error message for `error`.
    pub result: String,
    /// Wall time of the call, validation included.
    pub elapsed_ms: f64,
}

/// Every tool on offer, in order: the built-ins, then the manifests' tools.
///
/// Cheap to share behind an `Arc`; the tools actor hands out snapshots that way.
#[derive(Debug)]
pub struct Registry {
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
    toolset: ToolSet,
    fingerprint: String,
    /// What the executors connect to (the broker, Home Assistant, GPIO, D-Bus providers).
    backends: Arc<Backends>,
    /// Every tool's local intents: its own sentences and those its shape implies.
    intents: crate::intent::Intents,
    /// Each tool's shape ([`Shape::of`]), in registry order: derived intents and the
    /// confirmation of a tool without `say`.
    shapes: Vec<Option<Shape>>,
}

/// The verbs a tool name's words leave out of whisper's prompt: whisper writes them
/// unprompted, and in the one run primed with "set light" it heard "Is the kitchen light
/// on?" as "set the kitchen light on." (a question heard as a write).
const PLAIN_VERBS: &[&str] = &["get", "set"];

impl Registry {
    /// A registry of the given tools, in that order. Fails on duplicate names or a schema
    /// that does not compile.
    pub fn new(tools: Vec<Tool>) -> Result<Registry, ToolsError> {
        let toolset = ToolSet::new(tools.iter().map(|t| t.spec.clone()).collect())?;
        for t in &tools {
            let other = t.inverse.as_ref().and_then(|i| i.tool.as_ref());
            if let Some(inverse) = other.filter(|o| !tools.iter().any(|x| &x.spec.name == *o)) {
                return Err(ToolsError::InverseTool {
                    tool: t.spec.name.clone(),
                    inverse: inverse.clone(),
                    known: tools
                        .iter()
                        .map(|x| x.spec.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.spec.name.clone(), i))
            .collect();
        let shapes: Vec<Option<Shape>> = tools
            .iter()
            .map(|t| match &t.executor {
                // a house tool that says its own sentences only
                Executor::House(h) if !h.derive => None,
                _ => Shape::of(&t.spec.name, &t.spec.description, &t.spec.parameters),
            })
            .collect();
        let intents = crate::intent::Intents::new(
            tools
                .iter()
                .zip(&shapes)
                .filter_map(|(t, shape)| tool_intents(t, shape.as_ref()))
                .collect(),
        );
        let mut registry = Registry {
            tools,
            index,
            toolset,
            fingerprint: String::new(),
            backends: Arc::new(Backends::none()),
            intents,
            shapes,
        };
        registry.fingerprint = hex_sha256(registry.openai_tools().to_string().as_bytes());
        Ok(registry)
    }

    /// The built-in tools only (`get_time`, `get_date`).
    pub fn builtins() -> Registry {
        match Self::new(Tool::builtins()) {
            Ok(r) => r,
            Err(e) => {
                // unreachable: the built-ins' schemas are constants covered by the tests
                tracing::error!(error = %e, "the built-in tools do not form a valid tool set");
                Registry {
                    tools: Vec::new(),
                    index: HashMap::new(),
                    toolset: ToolSet::empty(),
                    fingerprint: hex_sha256(b"[]"),
                    backends: Arc::new(Backends::none()),
                    intents: crate::intent::Intents::default(),
                    shapes: Vec::new(),
                }
            }
        }
    }

    /// The built-ins plus every manifest in `dir` (see [`manifest::load_dir`]), with no
    /// connections configured (a manifest tool that needs one fails the load).
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Registry, ToolsError> {
        Self::load(dir, Arc::new(Backends::none()))
    }

    /// The built-ins plus every manifest in `dir`, run against `backends`. A tool whose
    /// executor needs a connection `backends` does not have fails the load.
    pub fn load(dir: impl AsRef<Path>, backends: Arc<Backends>) -> Result<Registry, ToolsError> {
        let tools = builtins_for(&backends);
        Self::load_after(tools, dir.as_ref(), backends)
    }

    /// Every tool a `hearth run` that speaks and keeps timers offers: the built-ins (the
    /// timer, alarm and control tools among them) and the manifests in `dir`, if any. For
    /// listing what the daemon understands (`hearth phrases`): the timer and control tools
    /// answer that this process keeps no timers and speaks no reply.
    pub fn offered(dir: Option<&Path>, backends: Arc<Backends>) -> Result<Registry, ToolsError> {
        let tools = builtins(true, true);
        match dir {
            Some(dir) => Self::load_after(tools, dir, backends),
            None => Self::new(tools)?.with_backends(backends),
        }
    }

    /// `tools` then the manifests in `dir`, run against `backends`.
    fn load_after(
        mut tools: Vec<Tool>,
        dir: &Path,
        backends: Arc<Backends>,
    ) -> Result<Registry, ToolsError> {
        tools.extend(manifest::load_dir(dir)?);
        let registry = Self::new(tools)?.with_backends(backends)?;
        tracing::info!(
            dir = %dir.display(),
            tools = registry.tools.len(),
            fingerprint = %registry.fingerprint,
            "tools loaded"
        );
        Ok(registry)
    }

    /// The built-ins `backends` can run (the timers' when they keep timers), run against
    /// them.
    pub fn builtins_with(backends: Arc<Backends>) -> Result<Registry, ToolsError> {
        Self::new(builtins_for(&backends))?.with_backends(backends)
    }

    /// The same tools run against `backends`; fails if a tool needs a connection they lack.
    pub fn with_backends(mut self, backends: Arc<Backends>) -> Result<Registry, ToolsError> {
        for t in &self.tools {
            backends.supports(&t.spec.name, &t.executor)?;
        }
        self.backends = backends;
        Ok(self)
    }

    /// What the executors connect to.
    pub fn backends(&self) -> &Arc<Backends> {
        &self.backends
    }

    /// The allowlist the parser validates calls against (cheap clone).
    pub fn toolset(&self) -> ToolSet {
        self.toolset.clone()
    }

    /// The allowlist of the tools the model is shown ([`Tool::for_model`]): what a hop's
    /// calls are checked against.
    pub fn model_toolset(&self) -> Result<ToolSet, ToolsError> {
        let shown = self.tools.iter().filter(|t| t.for_model);
        Ok(ToolSet::new(shown.map(|t| t.spec.clone()).collect())?)
    }

    /// The tools the model is shown, as chat templates take them, in registry order:
    /// `[{"type":"function","function":{"name","description","parameters"}}]`.
    pub fn openai_tools(&self) -> Value {
        self.tools_json(|t| t.for_model)
    }

    /// Every tool, the model's and those only sentences and D-Bus callers reach, in the same
    /// form with where each comes from (`ListTools`): `{"type": "function", "source":
    /// [`Tool::source`], "function": {…}}`.
    pub fn listed_tools(&self) -> Value {
        let mut listed = self.tools_json(|_| true);
        if let Value::Array(items) = &mut listed {
            for (item, tool) in items.iter_mut().zip(&self.tools) {
                if let Value::Object(m) = item {
                    m.insert("source".into(), Value::String(tool.source()));
                }
            }
        }
        listed
    }

    /// This registry with `house` in place of its house tools (those of
    /// [`Executor::House`]), and how many of them are offered. A house tool whose name
    /// another tool has (a manifest's, a built-in, a provider's) is left out with a warning:
    /// what a household wrote wins.
    pub fn with_house(&self, house: Vec<Tool>) -> Result<(Registry, usize), ToolsError> {
        let mut tools: Vec<Tool> = self
            .tools
            .iter()
            .filter(|t| !matches!(t.executor, Executor::House(_)))
            .cloned()
            .collect();
        let mut offered = 0;
        for tool in house {
            if tools.iter().any(|t| t.spec.name == tool.spec.name) {
                tracing::warn!(tool = %tool.spec.name, "a tool of this name is already offered (a manifest's, a built-in or a provider's): it is kept, and the house's tool of the name is left out; rename the other tool to have both");
                continue;
            }
            tools.push(tool);
            offered += 1;
        }
        let next = Registry::new(tools)?.with_backends(Arc::clone(&self.backends))?;
        Ok((next, offered))
    }

    fn tools_json(&self, which: impl Fn(&Tool) -> bool) -> Value {
        Value::Array(
            self.tools
                .iter()
                .filter(|t| which(t))
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.spec.name,
                        "description": t.spec.description,
                        "parameters": t.spec.parameters,
                    }})
                })
                .collect(),
        )
    }

    /// Hex SHA-256 of [`openai_tools`](Self::openai_tools) serialised: changes whenever a
    /// name, description, schema or the order does (what the model sees changes).
    pub fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }

    /// Tool names in registry order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.spec.name.as_str())
    }

    /// One tool by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    /// Every tool, in registry order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Words a person is likely to say to these tools, for priming speech recognition
    /// (whisper's initial prompt), most telling first, since a recogniser keeps only as many
    /// from the start as its prompt holds (223 tokens for whisper): every string a parameter
    /// schema allows (`enum`, `const`, at any depth: the house's names and aliases, rooms,
    /// modes), then the tool names as words (`cancel_timer` gives "cancel timer": with its
    /// verb, which tiny.en otherwise heard as "answer" in "Cancel the pasta timer"; a leading
    /// "get" or "set" left out, [`PLAIN_VERBS`]), then the `examples` of free values (a
    /// timer's "tea", "pasta"). `_` is a space; a phrase whose every word an earlier one has
    /// already said ("living room fan" after "living room" and "fan") and blank ones are left
    /// out.
    pub fn vocabulary(&self) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        let mut add = |w: &str| {
            let w = w.replace('_', " ");
            let w = w.trim();
            let said = |word: &str| {
                words
                    .iter()
                    .flat_map(|p| p.split_whitespace())
                    .any(|x| x.eq_ignore_ascii_case(word))
            };
            if !w.is_empty() && !w.split_whitespace().all(said) {
                words.push(w.to_string());
            }
        };
        for t in &self.tools {
            schema_strings(&t.spec.parameters, Listed::Values, &mut add);
        }
        for t in &self.tools {
            let name = t.spec.name.replace(['_', '-'], " ");
            let mut parts = name.split_whitespace().peekable();
            if parts
                .peek()
                .is_some_and(|v| PLAIN_VERBS.contains(&v.to_lowercase().as_str()))
            {
                parts.next();
            }
            add(&parts.collect::<Vec<_>>().join(" "));
        }
        for t in &self.tools {
            schema_strings(&t.spec.parameters, Listed::WithExamples, &mut add);
        }
        words
    }

    /// The local intents of every tool: sentences that become calls with no LLM hop.
    pub fn intents(&self) -> &crate::intent::Intents {
        &self.intents
    }

    /// The spoken confirmation of a call: the tool's `say` rendered with the arguments and
    /// `result`, the tool's output text (trimmed; a parameter named `result` wins over it),
    /// shortened past `output::MAX_SAY_CHARS` (and saying so). A tool without `say` is
    /// confirmed as its shape says ([`Shape::say`]: "The front door is locked.", "The
    /// bedroom temperature is 21.5 degrees."). None when neither gives a sentence, or
    /// rendering fails (logged as a warning) or is blank.
    pub fn confirmation(&self, call: &ToolCall, result: &str) -> Option<String> {
        let index = *self.index.get(call.name())?;
        let Some(say) = self.tools[index].say.as_deref() else {
            let shape = self.shapes.get(index)?.as_ref()?;
            let said = shape.say(call.arguments(), result)?;
            return Some(super::output::spoken(&said));
        };
        let mut vars = match call.arguments() {
            serde_json::Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        vars.entry(super::RESULT_VAR)
            .or_insert_with(|| serde_json::Value::String(result.trim().to_string()));
        match super::render(say, &serde_json::Value::Object(vars)) {
            Ok(text) => {
                let text = text.trim();
                (!text.is_empty()).then(|| super::output::spoken(text))
            }
            Err(e) => {
                tracing::warn!(tool = %call.name(), id = %call.id(), error = %e, "cannot render the spoken confirmation");
                None
            }
        }
    }

    /// The spoken confirmation of `call`, if it runs `at`, when it is known before the call
    /// runs: its words read nothing of the result (the same for two results), or its
    /// built-in foresees its result ([`Builtin::foreseen`]: the time then, "Pasta timer set
    /// for 8 minutes.", how long the pasta timer has left then). What is said after the
    /// call is always made from its own result; this is for preparing it.
    pub async fn foreseen_confirmation(&self, call: &ToolCall, at: &jiff::Zoned) -> Option<String> {
        let said = self.confirmation(call, "");
        if said.is_some() && self.confirmation(call, "0") == said {
            return said;
        }
        let tool = self.get(call.name())?;
        let Executor::Builtin(builtin) = &tool.executor else {
            return None;
        };
        let arguments = meant(tool, call.arguments().clone(), &self.backends).await;
        let result = builtin
            .foreseen(&arguments, self.backends.timers(), at)
            .await?;
        self.confirmation(call, &result)
    }

    /// What is said when `call` failed with `result`: the result itself for the tools whose
    /// errors are sentences for the person (the house's: "Which one: the lamp in the office
    /// or the lamp in the bedroom?"); `None` for the others, whose errors are for logs.
    pub fn refusal(&self, call: &ToolCall, result: &str) -> Option<String> {
        let tool = self.get(call.name())?;
        let said = result.trim();
        (matches!(tool.executor, Executor::House(_)) && !said.is_empty())
            .then(|| super::output::spoken(said))
    }

    /// The question hearth asks before `call` runs, when its tool's `confirm` applies to it:
    /// the tool's `ask`, else its confirmation as a question ("Say yes to confirm: the
    /// front door is unlocked."); `None`: it runs at once.
    pub fn question(&self, call: &ToolCall) -> Option<String> {
        let index = *self.index.get(call.name())?;
        let confirm = self.tools[index].confirm.as_ref()?;
        if !confirm.applies(call.arguments()) {
            return None;
        }
        let asked = confirm.ask.as_deref().and_then(|ask| {
            super::render(ask, call.arguments())
                .map_err(|e| tracing::warn!(tool = %call.name(), error = %e, "cannot render the confirmation question"))
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        });
        Some(super::output::spoken(&asked.unwrap_or_else(
            || match self.confirmation(call, "") {
                Some(said) => {
                    let said = said.trim_end_matches(['.', '!']);
                    let mut chars = said.chars();
                    let first = chars.next().map(|c| c.to_lowercase().collect::<String>());
                    format!(
                        "Say yes to confirm: {}{}.",
                        first.unwrap_or_default(),
                        chars.as_str()
                    )
                }
                None => format!("Say yes to confirm {}.", call.name().replace('_', " ")),
            },
        )))
    }

    /// Run one call. The call is checked against the tool set first (fail closed: an
    /// invalid call is an `error` outcome and never runs). Runs in a `tool_call` span.
    pub async fn call(&self, call: &ToolCall) -> ToolOutcome {
        self.call_in(call, None).await
    }

    /// [`Registry::call`] for a request said in `room`.
    pub async fn call_in(&self, call: &ToolCall, room: Option<&str>) -> ToolOutcome {
        let span = tracing::info_span!("tool_call", name = %call.name(), id = %call.id());
        self.call_checked(call, room).instrument(span).await
    }

    async fn call_checked(&self, call: &ToolCall, room: Option<&str>) -> ToolOutcome {
        let start = Instant::now();
        let name = call.name();
        tracing::info!("tool call started");
        let mut arguments = call.arguments().clone();
        let (status, result) = match (self.toolset.check(name, call.arguments()), self.get(name)) {
            (Verdict::Valid, Some(tool)) => {
                arguments = meant(tool, arguments, &self.backends).await;
                run(tool, &arguments, room, &self.backends).await
            }
            (Verdict::UnknownTool, _) | (Verdict::Valid, None) => (
                ToolStatus::Error,
                format!(
                    "{name}: no such tool (the tools are: {})",
                    self.names().collect::<Vec<_>>().join(", ")
                ),
            ),
            (Verdict::Invalid(reason), _) => {
                (ToolStatus::Error, format!("{name}: not run, {reason}"))
            }
            (Verdict::Unchecked, _) => (
                ToolStatus::Error,
                format!("{name}: not run, the call was not validated"),
            ),
        };
        let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        match status {
            ToolStatus::Error => {
                tracing::warn!(status = status.as_str(), elapsed_ms, "tool call failed");
                tracing::warn!(target: crate::logs::TRANSCRIPT, %result, "why the tool call failed");
            }
            _ => tracing::info!(
                status = status.as_str(),
                elapsed_ms,
                bytes = result.len(),
                "tool call done"
            ),
        }
        ToolOutcome {
            id: call.id().to_string(),
            name: call.name().to_string(),
            arguments,
            status,
            result,
            elapsed_ms,
        }
    }

    /// Run calls in parallel; outcomes come back in call order. Dropping the future
    /// aborts the calls still running (their programs are killed).
    /// `room`: where the request was said (a satellite's), for the tools that keep it
    /// (a timer rings there).
    pub async fn call_all(
        self: Arc<Self>,
        calls: Vec<ToolCall>,
        room: Option<String>,
    ) -> Vec<ToolOutcome> {
        let parent = tracing::Span::current();
        let mut set = tokio::task::JoinSet::new();
        let mut slot_of = HashMap::with_capacity(calls.len());
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        for (i, call) in calls.iter().enumerate() {
            let registry = Arc::clone(&self);
            let call = call.clone();
            let room = room.clone();
            let handle = set.spawn(
                async move { registry.call_in(&call, room.as_deref()).await }
                    .instrument(parent.clone()),
            );
            slot_of.insert(handle.id(), i);
        }
        while let Some(joined) = set.join_next_with_id().await {
            let (id, outcome) = match joined {
                Ok((id, outcome)) => (id, Ok(outcome)),
                Err(e) => (e.id(), Err(e)),
            };
            let Some(&i) = slot_of.get(&id) else {
                continue;
            };
            let call = &calls[i];
            outcomes[i] = Some(outcome.unwrap_or_else(|e| {
                tracing::error!(tool = %call.name(), id = %call.id(), error = %e, "tool call task failed");
                failed(call, format!("{}: the call failed inside hearth: {e}", call.name()))
            }));
        }
        outcomes
            .into_iter()
            .zip(&calls)
            .map(|(o, call)| {
                o.unwrap_or_else(|| {
                    failed(call, format!("{}: the call did not finish", call.name()))
                })
            })
            .collect()
    }
}

/// The built-ins a registry over `backends` offers: the clock's, the timers' when this
/// process keeps timers, the controls' when it speaks (a tool that could only answer "not
/// here" is not offered).
fn builtins_for(backends: &Backends) -> Vec<Tool> {
    builtins(backends.timers().is_some(), backends.controls().is_some())
}

/// The built-ins, with the timer, alarm and reminder tools and the control tools when asked
/// for, in the order a registry lists them.
fn builtins(timers: bool, controls: bool) -> Vec<Tool> {
    let mut tools = Tool::builtins();
    if timers {
        tools.extend(Tool::timers());
    }
    if controls {
        tools.extend(Tool::controls());
    }
    tools
}

/// An `error` outcome for a call that never produced one.
fn failed(call: &ToolCall, result: String) -> ToolOutcome {
    ToolOutcome {
        id: call.id().to_string(),
        name: call.name().to_string(),
        arguments: call.arguments().clone(),
        status: ToolStatus::Error,
        result,
        elapsed_ms: 0.0,
    }
}

/// A checked call's arguments as meant, where a built-in reads them so (a timer named as it
/// sounds: [`super::TimerTool::meant`]); the outcome carries these, so what is told of the
/// call is what ran.
async fn meant(tool: &Tool, arguments: Value, backends: &Backends) -> Value {
    match &tool.executor {
        Executor::Builtin(Builtin::Timer(t)) => t.meant(&arguments, backends.timers()).await,
        _ => arguments,
    }
}

async fn run(
    tool: &Tool,
    arguments: &Value,
    room: Option<&str>,
    backends: &Backends,
) -> (ToolStatus, String) {
    let name = &tool.spec.name;
    let out = match &tool.executor {
        Executor::Builtin(Builtin::Timer(t)) => {
            return t.run(arguments, room, backends.timers()).await
        }
        Executor::Builtin(Builtin::Alarm(a)) => {
            return a.run(arguments, room, backends.timers()).await
        }
        Executor::Builtin(Builtin::Device(d)) => return d.run(arguments, backends.controls()),
        Executor::Builtin(b) => {
            return match b.run() {
                Some(Ok(text)) => (ToolStatus::Ok, text),
                Some(Err(e)) => (ToolStatus::Error, format!("{name}: {e}")),
                None => (ToolStatus::Error, format!("{name}: not a clock built-in")),
            }
        }
        Executor::Exec(spec) => exec::run(name, spec, arguments).await,
        Executor::Mqtt(spec) => {
            super::mqtt::run(name, spec, arguments, backends.mqtt.as_ref()).await
        }
        Executor::HomeAssistant(spec) => {
            super::homeassistant::run(name, spec, arguments, backends.homeassistant.as_ref()).await
        }
        Executor::Gpio(spec) => super::gpio::run(name, spec, arguments, &backends.gpio).await,
        Executor::Dbus(spec) => super::dbus::run(name, spec, arguments, &backends.dbus).await,
        Executor::Provider(spec) => backends.call_provider(name, spec, arguments).await,
        Executor::House(spec) => super::house::run(spec, arguments, room, backends).await,
    };
    (out.status, out.text)
}

/// A tool's local intents: its own sentences and those its shape implies. Derived sentences
/// that do not compile (a shape this module writes wrong) are left out with a warning and the
/// tool keeps its own.
fn tool_intents(tool: &Tool, shape: Option<&Shape>) -> Option<Arc<ToolIntents>> {
    let name = &tool.spec.name;
    let derived = shape.and_then(|s| {
        ToolIntents::compile(name, &s.intents(), &tool.spec.parameters)
            .map_err(|e| {
                tracing::warn!(tool = %name, error = %e, "the intents derived from the tool's schema do not compile: only its own sentences are used");
            })
            .ok()
    });
    let intents = match (&tool.intents, derived) {
        (Some(own), Some(d)) => Some(Arc::new((**own).clone().and(&d))),
        (Some(own), None) => Some(own.clone()),
        (None, Some(d)) => Some(Arc::new(d)),
        (None, None) => None,
    };
    // what the house announced gives way to what a household wrote
    match (intents, &tool.executor) {
        (Some(i), Executor::House(_)) => Some(Arc::new((*i).clone().yielding())),
        (other, _) => other,
    }
}

fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest.iter() {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// Which strings of a schema [`schema_strings`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    /// The values it allows: `enum`, `const`.
    Values,
    /// Those and the `examples` of a free value: words a person may say, not a limit.
    WithExamples,
}

/// Every string a JSON Schema lists (as `listed` says), depth first.
pub(crate) fn schema_strings(schema: &Value, listed: Listed, add: &mut impl FnMut(&str)) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("enum", Value::Array(values)) => {
                        values.iter().filter_map(Value::as_str).for_each(&mut *add)
                    }
                    ("examples", Value::Array(values)) if listed == Listed::WithExamples => {
                        values.iter().filter_map(Value::as_str).for_each(&mut *add)
                    }
                    ("const", Value::String(s)) => add(s),
                    _ => schema_strings(v, listed, add),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_strings(v, listed, add)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolcall::ToolSpec;
    use crate::tools::ExecSpec;
    use std::path::PathBuf;
    use std::time::Duration;

    fn exec_tool(name: &str, argv: &[&str], say: Option<&str>) -> Tool {
        Tool {
            spec: ToolSpec {
                name: name.into(),
                description: format!("The {name} tool."),
                parameters: json!({"type": "object", "properties": {"room": {"type": "string"}},
                    "required": ["room"], "additionalProperties": false}),
            },
            say: say.map(str::to_string),
            intents: None,
            confirm: None,
            inverse: None,
            for_model: true,
            executor: Executor::Exec(ExecSpec {
                argv: argv.iter().map(|s| s.to_string()).collect(),
                timeout: Duration::from_secs(10),
                max_output_bytes: 1024,
                manifest_dir: PathBuf::from("/"),
                allow_leading_dash: Vec::new(),
                pass_env: Vec::new(),
            }),
        }
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        crate::toolcall::ToolSet::unrestricted()
            .call(format!("{name}_0"), name, arguments)
            .expect("the arguments are a JSON object")
    }

    fn registry() -> Registry {
        let mut tools = Tool::builtins();
        tools.push(exec_tool(
            "echo_room",
            &["echo", "room {{ room }}"],
            Some("The {{ room }} is done."),
        ));
        Registry::new(tools).unwrap()
    }

    #[test]
    fn builtins_and_order() {
        let b = Registry::builtins();
        assert_eq!(b.names().collect::<Vec<_>>(), ["get_time", "get_date"]);
        let r = registry();
        assert_eq!(
            r.names().collect::<Vec<_>>(),
            ["get_time", "get_date", "echo_room"]
        );
        assert_eq!(r.len(), 3);
        assert!(r.get("echo_room").is_some() && r.get("nope").is_none());
        assert_eq!(
            r.toolset().names().collect::<Vec<_>>(),
            ["get_time", "get_date", "echo_room"]
        );
    }

    #[test]
    fn openai_tools_shape() {
        let v = registry().openai_tools();
        let list = v.as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0]["type"], "function");
        assert_eq!(list[0]["function"]["name"], "get_time");
        assert_eq!(
            list[0]["function"]["parameters"],
            json!({"type":"object","properties":{},"additionalProperties":false})
        );
        assert_eq!(list[2]["function"]["description"], "The echo_room tool.");
        // the list is a valid tools list for the parser
        let ts = ToolSet::from_openai_value(&v).unwrap();
        assert_eq!(ts.len(), 3);
    }

    #[test]
    fn fingerprint_is_stable_and_tracks_what_the_model_sees() {
        let a = registry().fingerprint();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, registry().fingerprint());
        assert_ne!(a, Registry::builtins().fingerprint());
        let mut tools = Tool::builtins();
        let mut t = exec_tool("echo_room", &["echo"], None);
        t.spec.description = "Something else.".into();
        tools.push(t);
        assert_ne!(a, Registry::new(tools).unwrap().fingerprint());
        // the executor is not part of it
        let mut tools = Tool::builtins();
        tools.push(exec_tool("echo_room", &["true"], None));
        assert_eq!(a, Registry::new(tools).unwrap().fingerprint());
    }

    #[test]
    fn duplicates_are_rejected() {
        let mut tools = Tool::builtins();
        tools.extend(Tool::builtins());
        let e = Registry::new(tools).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
    }

    #[test]
    fn confirmation_renders_say() {
        let r = registry();
        assert_eq!(
            r.confirmation(&call("echo_room", json!({"room": "hall"})), "x")
                .as_deref(),
            Some("The hall is done.")
        );
        // rendering fails (strict undefined): no confirmation
        assert_eq!(r.confirmation(&call("echo_room", json!({})), "x"), None);
        // the built-ins speak their result
        assert_eq!(
            r.confirmation(&call("get_time", json!({})), " 9:05 PM\n")
                .as_deref(),
            Some("It's 9:05 PM.")
        );
        // unknown tool
        assert_eq!(r.confirmation(&call("nope", json!({})), "x"), None);
    }

    #[tokio::test]
    async fn call_runs_valid_calls_and_refuses_invalid_ones() {
        let r = registry();
        let o = r.call(&call("echo_room", json!({"room": "hall"}))).await;
        assert_eq!((o.status, o.result.as_str()), (ToolStatus::Ok, "room hall"));
        assert_eq!(o.id, "echo_room_0");
        assert!(o.elapsed_ms > 0.0);

        // fail closed: a call the schema rejects never runs
        let marker =
            std::env::temp_dir().join(format!("hearth-registry-refused-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let mut tools = Tool::builtins();
        tools.push(exec_tool("touch", &["touch", "{{ room }}"], None));
        let r = Registry::new(tools).unwrap();
        let o = r
            .call(&call(
                "touch",
                json!({"room": marker.to_string_lossy(), "extra": 1}),
            ))
            .await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(
            o.result
                .starts_with("touch: not run, arguments do not match the schema"),
            "{}",
            o.result
        );
        assert!(!marker.exists());

        let o = r.call(&call("rm_rf", json!({}))).await;
        assert_eq!(o.status, ToolStatus::Error);
        assert_eq!(
            o.result,
            "rm_rf: no such tool (the tools are: get_time, get_date, touch)"
        );
        // arguments that are not an object never make a call at all
        assert!(crate::toolcall::ToolSet::unrestricted()
            .call("get_time_0", "get_time", json!("x"))
            .is_err());
    }

    #[tokio::test]
    async fn outcome_serialises_for_telemetry() {
        let r = registry();
        let o = r.call(&call("echo_room", json!({"room": "hall"}))).await;
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["status"], "ok");
        assert_eq!(v["arguments"], json!({"room": "hall"}));
        assert!(v["elapsed_ms"].is_f64());
        assert_eq!(serde_json::to_value(ToolStatus::Empty).unwrap(), "empty");
        assert_eq!(serde_json::to_value(ToolStatus::Error).unwrap(), "error");
    }

    #[tokio::test]
    async fn call_all_keeps_call_order() {
        let mut tools = Tool::builtins();
        tools.push(exec_tool(
            "nap",
            &["sh", "-c", "sleep \"$0\"; echo \"$0\"", "{{ room }}"],
            None,
        ));
        let r = Arc::new(Registry::new(tools).unwrap());
        // the first call finishes last
        let calls = vec![
            call("nap", json!({"room": "0.6"})),
            call("nap", json!({"room": "0.1"})),
            call("nope", json!({})),
            call("nap", json!({"room": "0"})),
        ];
        let out = r.call_all(calls, None).await;
        let got: Vec<(&str, ToolStatus)> =
            out.iter().map(|o| (o.result.as_str(), o.status)).collect();
        assert_eq!(got[0], ("0.6", ToolStatus::Ok));
        assert_eq!(got[1], ("0.1", ToolStatus::Ok));
        assert_eq!(got[2].1, ToolStatus::Error);
        assert_eq!(got[3], ("0", ToolStatus::Ok));
    }

    #[test]
    fn vocabulary_has_enumerated_values_then_tool_names_then_examples() {
        let mut scene = exec_tool("activate_scene", &["true"], None);
        scene.spec.parameters = json!({"type": "object", "properties": {
            "scene": {"type": "string", "enum": ["Movie night", "good morning", 3]},
            "guest": {"type": "string", "examples": ["Oma", "Opa"]},
            "where": {"anyOf": [{"const": "Kitchen"}, {"const": "garden"}]},
            "level": {"type": "integer", "enum": [1, 2]}
        }});
        let mut light = exec_tool("set_light", &["true"], None);
        light.spec.parameters = json!({"type": "object", "properties": {
            "room": {"type": "string", "enum": ["kitchen", "living room", "garden kitchen", "heat_cool"]}}});
        let mut tools = Tool::builtins();
        tools.push(scene);
        tools.push(light);
        tools.push(exec_tool("get_light", &["true"], None));
        tools.push(exec_tool("ping", &["true"], None));
        let r = Registry::new(tools).unwrap();
        assert_eq!(
            r.vocabulary(),
            [
                "Movie night",
                "good morning",
                "Kitchen",
                "garden",
                "living room",
                "heat cool",
                "time",
                "date",
                "activate scene",
                "light",
                "ping",
                "Oma",
                "Opa",
            ]
        );
    }
}
