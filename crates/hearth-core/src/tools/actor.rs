//! The tools actor: serves the registry to the pipeline and runs a hop's calls.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use hearth_core::tools::{Registry, ToolsActor, ToolsMsg};
//! use ractor::Actor;
//!
//! let registry = Arc::new(Registry::load_dir("tools")?);
//! let (tools, _handle) = Actor::spawn(None, ToolsActor, registry).await?;
//! let snapshot = ractor::call!(tools, ToolsMsg::Snapshot)?;
//! let outcomes = ractor::call!(tools, |reply| ToolsMsg::CallAll { calls: vec![], room: None, reply })?;
//! # let _ = (snapshot, outcomes);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, OutputPort, RpcReplyPort};

use tokio_util::task::TaskTracker;

use crate::bounded::Gauge;

use super::registry::{Registry, ToolOutcome};
use super::tool::{Executor, ProviderSpec, Tool};
use super::ToolsError;
use crate::toolcall::{ToolCall, ToolSpec};

/// Messages to the [`ToolsActor`].
pub enum ToolsMsg {
    /// The current registry (a cheap `Arc` clone).
    Snapshot(RpcReplyPort<Arc<Registry>>),
    /// Run calls in parallel; the outcomes come back in call order. Each call is checked
    /// against the registry first and runs only if valid.
    CallAll {
        /// The hop's calls, as the parser produced them.
        calls: Vec<ToolCall>,
        /// Where the request was said (a satellite's room), for the tools that keep it.
        room: Option<String>,
        /// One outcome per call, in the same order.
        reply: RpcReplyPort<Vec<ToolOutcome>>,
    },
    /// Offer tools served by a D-Bus client (`RegisterTool`): each call of them is sent
    /// back to `owner`. Fails (and changes nothing) on a bad spec, a name in use or a spec
    /// over `limits`.
    Register {
        /// The provider's unique bus name.
        owner: String,
        /// The tools, as the provider described them.
        specs: Vec<ToolSpec>,
        /// What registered tools may take of everyone's prompt.
        limits: ProviderLimits,
        reply: RpcReplyPort<Result<(), ToolsError>>,
    },
    /// Drop every tool `owner` registered (it left the bus); replies how many went.
    DropOwner {
        owner: String,
        reply: Option<RpcReplyPort<usize>>,
    },
    /// Put the tools made from the things found in the house (`crates/hearth-core/src/house/`) in place of the
    /// house's tools offered now. A house tool whose name another tool (a manifest's, a
    /// built-in, a provider's) has is left out, with a warning naming both: what a household
    /// wrote wins. Replies how many house tools are offered.
    House {
        tools: Vec<Tool>,
        reply: Option<RpcReplyPort<usize>>,
    },
    /// Subscribe to the tool set's changes: the function is given the port on which every
    /// registry that replaces the current one is sent (ractor's `OutputPort::subscribe`).
    Subscribe(Subscriber),
}

/// See [`ToolsMsg::Subscribe`].
pub(crate) type Subscriber = Box<dyn FnOnce(&OutputPort<Arc<Registry>>) + Send>;

/// How long a stopping tools actor waits for the calls still running (each is bounded by
/// its own timeout too); what is still running then is cut off. Within the unit's
/// `TimeoutStopSec=` (20 s) with room for the rest of the shutdown.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// The tools actor's state: the registry it serves, where its replacements go, and the
/// calls running.
pub struct ToolsState {
    registry: Arc<Registry>,
    changed: OutputPort<Arc<Registry>>,
    running: TaskTracker,
    /// How many tools D-Bus clients registered (made at the first registration, whose
    /// limits give its cap).
    registered: Option<Gauge>,
}

impl ToolsState {
    fn replace(&mut self, next: Arc<Registry>) {
        self.registry = next;
        if let Some(gauge) = &self.registered {
            gauge.set(provider_tools(&self.registry).count());
        }
        self.changed.send(Arc::clone(&self.registry));
    }
}

/// The owners of the tools D-Bus clients registered, one per tool.
fn provider_tools(registry: &Registry) -> impl Iterator<Item = &str> {
    registry.tools().iter().filter_map(|t| match &t.executor {
        Executor::Provider(p) => Some(p.owner.as_str()),
        _ => None,
    })
}

/// The actor owning the tools registry. Its argument is the registry to serve.
///
/// Calls run in a spawned task that replies when they are done, so the actor keeps
/// answering (snapshots, other hops' calls) while a slow tool runs. Registering or
/// dropping provider tools builds a new registry; snapshots already handed out keep the
/// one they got.
pub struct ToolsActor;

impl Actor for ToolsActor {
    type Msg = ToolsMsg;
    type State = ToolsState;
    type Arguments = Arc<Registry>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        registry: Arc<Registry>,
    ) -> Result<Self::State, ActorProcessingErr> {
        tracing::info!(
            tools = registry.len(),
            fingerprint = %registry.fingerprint(),
            "tools actor started"
        );
        Ok(ToolsState {
            registry,
            changed: OutputPort::default(),
            running: TaskTracker::new(),
            registered: None,
        })
    }

    /// Stopping (hearth's shutdown): the calls under way finish (or time out) and are
    /// logged as usual, for up to [`STOP_GRACE`]; then the backends close (MQTT messages
    /// still queued are written before the connection's DISCONNECT).
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.running.close();
        let running = state.running.len();
        if running > 0 {
            tracing::info!(running, "stopping: waiting for the tool calls under way");
            if tokio::time::timeout(STOP_GRACE, state.running.wait())
                .await
                .is_err()
            {
                tracing::warn!(
                    running = state.running.len(),
                    grace_s = STOP_GRACE.as_secs(),
                    "stopping: tool calls still running are cut off"
                );
            }
        }
        state.registry.backends().close().await;
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let registry = &state.registry;
        match message {
            ToolsMsg::Snapshot(reply) => {
                if reply.send(Arc::clone(registry)).is_err() {
                    tracing::debug!("tools snapshot: the caller is gone");
                }
            }
            ToolsMsg::CallAll { calls, room, reply } => {
                let registry = Arc::clone(registry);
                state.running.spawn(async move {
                    let outcomes = registry.call_all(calls, room).await;
                    if reply.send(outcomes).is_err() {
                        tracing::warn!("tool results dropped: the caller is gone");
                    }
                });
            }
            ToolsMsg::Register {
                owner,
                specs,
                limits,
                reply,
            } => {
                state
                    .registered
                    .get_or_insert_with(|| Gauge::new("tools.registered", limits.tools));
                let out = limits
                    .check(registry, &owner, &specs)
                    .and_then(|()| register(registry, &owner, specs));
                if let Ok(next) = &out {
                    tracing::info!(%owner, tools = next.len(), fingerprint = %next.fingerprint(), "provider tools registered");
                    state.replace(Arc::clone(next));
                }
                let _ = reply.send(out.map(|_| ()));
            }
            ToolsMsg::DropOwner { owner, reply } => {
                let kept: Vec<Tool> = registry
                    .tools()
                    .iter()
                    .filter(|t| !matches!(&t.executor, Executor::Provider(p) if p.owner == owner))
                    .cloned()
                    .collect();
                let dropped = registry.len() - kept.len();
                if dropped > 0 {
                    match Registry::new(kept)
                        .and_then(|r| r.with_backends(Arc::clone(registry.backends())))
                    {
                        Ok(next) => {
                            tracing::info!(%owner, dropped, "provider left the bus: its tools are dropped");
                            state.replace(Arc::new(next));
                        }
                        // unreachable: a subset of a valid registry is valid
                        Err(e) => {
                            tracing::error!(%owner, error = %e, "cannot drop the provider's tools")
                        }
                    }
                }
                if let Some(reply) = reply {
                    let _ = reply.send(dropped);
                }
            }
            ToolsMsg::House { tools, reply } => {
                let offered = match registry.with_house(tools) {
                    Ok((next, offered)) => {
                        let next = Arc::new(next);
                        tracing::info!(house_tools = offered, tools = next.len(), fingerprint = %next.fingerprint(), "the house's tools are in place");
                        state.replace(next);
                        offered
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "the house's tools cannot be offered: the ones before stay");
                        0
                    }
                };
                if let Some(reply) = reply {
                    let _ = reply.send(offered);
                }
            }
            ToolsMsg::Subscribe(subscribe) => subscribe(&state.changed),
        }
        Ok(())
    }
}

/// Bounds on the tools D-Bus clients register (`[bus]` in hearth.toml): every registered
/// tool's name, description and schema go into every prompt, so one caller must not be able
/// to fill the context or crowd out the others. A registration over a bound is refused
/// whole, with the bound named; the tools already registered stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderLimits {
    /// Registered tools, all callers together.
    pub tools: usize,
    /// Registered tools of one caller.
    pub tools_per_caller: usize,
    /// Characters of one tool's description.
    pub description_chars: usize,
    /// Bytes of one tool's parameter schema (as compact JSON).
    pub schema_bytes: usize,
}

impl Default for ProviderLimits {
    fn default() -> Self {
        ProviderLimits {
            tools: 16,
            tools_per_caller: 8,
            description_chars: 400,
            schema_bytes: 4096,
        }
    }
}

impl ProviderLimits {
    /// Whether `owner` may add `specs` to `registry`; also that llguidance can compile each
    /// schema (a grammar that fails to compile would fail every constrained hop).
    pub fn check(
        &self,
        registry: &Registry,
        owner: &str,
        specs: &[ToolSpec],
    ) -> Result<(), ToolsError> {
        let refuse = |problem: String| Err(ToolsError::ProviderLimit { problem });
        let registered = || provider_tools(registry);
        let all = registered().count() + specs.len();
        if all > self.tools {
            return refuse(format!(
                "{all} registered tools would be over the limit of {} ([bus] registered_tools_max)",
                self.tools
            ));
        }
        let mine = registered().filter(|o| *o == owner).count() + specs.len();
        if mine > self.tools_per_caller {
            return refuse(format!(
                "{mine} tools of one caller would be over the limit of {} ([bus] tools_per_caller_max)",
                self.tools_per_caller
            ));
        }
        for spec in specs {
            let chars = spec.description.chars().count();
            if chars > self.description_chars {
                return refuse(format!(
                    "tool {:?}: its description has {chars} characters, over the limit of {} ([bus] description_max_chars): say in a sentence what it does",
                    spec.name, self.description_chars
                ));
            }
            let bytes = spec.parameters.to_string().len();
            if bytes > self.schema_bytes {
                return refuse(format!(
                    "tool {:?}: its parameter schema has {bytes} bytes, over the limit of {} ([bus] schema_max_bytes): fewer or simpler parameters",
                    spec.name, self.schema_bytes
                ));
            }
            if let Err(e) = crate::llm::check_schema(spec) {
                return refuse(format!(
                    "tool {:?}: the model's grammar cannot be built from its parameter schema ({e}): use plain types, enums, bounds and patterns without lookaround or backreferences",
                    spec.name
                ));
            }
        }
        Ok(())
    }
}

/// The registry with `owner`'s tools added (the same checks as a manifest's tools).
fn register(
    registry: &Registry,
    owner: &str,
    specs: Vec<ToolSpec>,
) -> Result<Arc<Registry>, ToolsError> {
    let mut tools = registry.tools().to_vec();
    for spec in specs {
        if registry.get(&spec.name).is_some() || tools.iter().any(|t| t.spec.name == spec.name) {
            return Err(ToolsError::NameInUse { tool: spec.name });
        }
        tools.push(Tool {
            spec,
            say: None,
            intents: None,
            confirm: None,
            inverse: None,
            for_model: true,
            executor: Executor::Provider(ProviderSpec {
                owner: owner.to_string(),
                timeout: super::backends::PROVIDER_TIMEOUT,
            }),
        });
    }
    let next = Registry::new(tools)?.with_backends(Arc::clone(registry.backends()))?;
    Ok(Arc::new(next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolcall::ToolSpec;
    use crate::tools::{ExecSpec, Executor, Tool, ToolStatus};
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn nap_registry() -> Arc<Registry> {
        let mut tools = Tool::builtins();
        tools.push(Tool {
            spec: ToolSpec {
                name: "nap".into(),
                description: "Sleep, then print the time slept.".into(),
                parameters: json!({"type": "object", "properties": {"s": {"type": "number"}},
                    "required": ["s"], "additionalProperties": false}),
            },
            say: None,
            intents: None,
            confirm: None,
            inverse: None,
            for_model: true,
            executor: Executor::Exec(ExecSpec {
                argv: ["sh", "-c", "sleep \"$0\"; echo \"slept $0\"", "{{ s }}"]
                    .map(String::from)
                    .to_vec(),
                timeout: Duration::from_secs(10),
                max_output_bytes: 1024,
                manifest_dir: "/".into(),
                allow_leading_dash: Vec::new(),
                pass_env: Vec::new(),
            }),
        });
        Arc::new(Registry::new(tools).unwrap())
    }

    fn call(i: usize, name: &str, arguments: serde_json::Value) -> ToolCall {
        crate::toolcall::ToolSet::unrestricted()
            .call(format!("call_{i}"), name, arguments)
            .expect("the arguments are a JSON object")
    }

    fn spec(name: &str, description: &str, parameters: serde_json::Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    fn plain(name: &str) -> ToolSpec {
        spec(name, "Do it.", json!({"type": "object", "properties": {}}))
    }

    /// Register through the actor, as `RegisterTool` does; the error's text, or "ok".
    async fn offer(
        actor: &ActorRef<ToolsMsg>,
        owner: &str,
        specs: Vec<ToolSpec>,
        limits: ProviderLimits,
    ) -> String {
        let out = ractor::call!(actor, |reply| ToolsMsg::Register {
            owner: owner.into(),
            specs,
            limits,
            reply
        })
        .unwrap();
        match out {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[tokio::test]
    async fn registered_tools_stay_within_their_bounds() {
        let limits = ProviderLimits {
            tools: 3,
            tools_per_caller: 2,
            description_chars: 20,
            schema_bytes: 200,
        };
        let (actor, handle) = Actor::spawn(None, ToolsActor, Arc::new(Registry::builtins()))
            .await
            .unwrap();
        let count = || async { ractor::call!(actor, ToolsMsg::Snapshot).unwrap().len() };
        let builtins = count().await;

        // a long description or a big schema
        let e = offer(
            &actor,
            ":1.2",
            vec![spec("b2", &"word ".repeat(5), json!({"type": "object"}))],
            limits,
        )
        .await;
        assert!(
            e.contains("25 characters") && e.contains("description_max_chars"),
            "{e}"
        );
        let props: serde_json::Map<String, serde_json::Value> = (0..20)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let big = json!({"type": "object", "properties": props});
        let e = offer(&actor, ":1.2", vec![spec("b2", "Big.", big)], limits).await;
        assert!(e.contains("schema_max_bytes"), "{e}");
        assert_eq!(
            offer(&actor, ":1.1", vec![plain("a1"), plain("a2")], limits).await,
            "ok"
        );
        // one caller may not take more than its share
        let e = offer(&actor, ":1.1", vec![plain("a3")], limits).await;
        assert!(e.contains("tools_per_caller_max"), "{e}");
        // nor all callers together more than the whole
        assert_eq!(offer(&actor, ":1.2", vec![plain("b1")], limits).await, "ok");
        let e = offer(&actor, ":1.3", vec![plain("c1")], limits).await;
        assert!(e.contains("registered_tools_max"), "{e}");
        // refused whole: nothing of a refused registration was added
        assert_eq!(count().await, builtins + 3);
        // a caller that left frees its share
        ractor::call!(actor, |reply| ToolsMsg::DropOwner {
            owner: ":1.1".into(),
            reply: Some(reply)
        })
        .unwrap();
        assert_eq!(offer(&actor, ":1.3", vec![plain("c1")], limits).await, "ok");
        actor.stop(None);
        handle.await.unwrap();
    }

    /// A schema the validator takes but llguidance cannot compile would fail every
    /// constrained hop that includes the tool: refused when offered.
    #[tokio::test]
    async fn a_schema_the_grammar_cannot_hold_is_refused() {
        let (actor, handle) = Actor::spawn(None, ToolsActor, Arc::new(Registry::builtins()))
            .await
            .unwrap();
        let backreference = json!({"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^(ab)\\1$"}}});
        // the tools' JSON Schema validator alone accepts it
        assert!(
            crate::toolcall::ToolSet::new(vec![spec("door", "Open.", backreference.clone())])
                .is_ok()
        );
        let e = offer(
            &actor,
            ":1.1",
            vec![spec("door", "Open.", backreference)],
            ProviderLimits::default(),
        )
        .await;
        assert!(e.contains("grammar cannot be built"), "{e}");
        let fine = json!({"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[0-9]{4}$"}}});
        assert_eq!(
            offer(
                &actor,
                ":1.1",
                vec![spec("door", "Open.", fine)],
                ProviderLimits::default()
            )
            .await,
            "ok"
        );
        actor.stop(None);
        handle.await.unwrap();
    }

    #[tokio::test]
    async fn call_all_runs_in_parallel_and_keeps_order() {
        let registry = nap_registry();
        let (actor, handle) = Actor::spawn(None, ToolsActor, Arc::clone(&registry))
            .await
            .unwrap();

        let snap = ractor::call!(actor, ToolsMsg::Snapshot).unwrap();
        assert!(Arc::ptr_eq(&snap, &registry));

        let calls = vec![
            call(0, "nap", json!({"s": 1})),
            call(1, "nap", json!({"s": 1})),
            call(2, "get_time", json!({})),
            call(3, "nap", json!({"s": 1})),
            call(4, "nap", json!({"s": "1; reboot"})),
            call(5, "nap", json!({"s": 0})),
        ];
        let start = Instant::now();
        let outcomes = ractor::call!(actor, |reply| ToolsMsg::CallAll {
            calls,
            room: None,
            reply
        })
        .unwrap();
        let took = start.elapsed();
        let ids: Vec<&str> = outcomes.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(
            ids,
            ["call_0", "call_1", "call_2", "call_3", "call_4", "call_5"]
        );
        assert_eq!(outcomes[0].result, "slept 1");
        assert_eq!(outcomes[2].status, ToolStatus::Ok);
        assert!(
            outcomes[2].result.ends_with(" AM") || outcomes[2].result.ends_with(" PM"),
            "{}",
            outcomes[2].result
        );
        assert_eq!(
            outcomes[4].status,
            ToolStatus::Error,
            "invalid calls never run"
        );
        assert_eq!(outcomes[5].result, "slept 0");
        // three one-second naps in parallel, not one after the other
        assert!(took < Duration::from_millis(2500), "{took:?}");

        actor.stop(None);
        handle.await.unwrap();
    }

    #[tokio::test]
    async fn actor_answers_while_calls_run() {
        let (actor, handle) = Actor::spawn(None, ToolsActor, nap_registry())
            .await
            .unwrap();
        let slow = {
            let actor = actor.clone();
            tokio::spawn(async move {
                ractor::call!(actor, |reply| ToolsMsg::CallAll {
                    calls: vec![call(0, "nap", json!({"s": 1}))],
                    room: None,
                    reply
                })
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let start = Instant::now();
        ractor::call!(actor, ToolsMsg::Snapshot).unwrap();
        assert!(start.elapsed() < Duration::from_millis(500));
        let outcomes = slow.await.unwrap().unwrap();
        assert_eq!(outcomes[0].result, "slept 1");
        actor.stop(None);
        handle.await.unwrap();
    }
}
