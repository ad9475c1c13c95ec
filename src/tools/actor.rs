//! The tools actor: serves the registry to the pipeline and runs a hop's calls.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use hearth::tools::{Registry, ToolsActor, ToolsMsg};
//! use ractor::Actor;
//!
//! let registry = Arc::new(Registry::load_dir("tools")?);
//! let (tools, _handle) = Actor::spawn(None, ToolsActor, registry).await?;
//! let snapshot = ractor::call!(tools, ToolsMsg::Snapshot)?;
//! let outcomes = ractor::call!(tools, |reply| ToolsMsg::CallAll { calls: vec![], reply })?;
//! # let _ = (snapshot, outcomes);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, OutputPort, RpcReplyPort};

use super::registry::{Executor, ProviderSpec, Registry, Tool, ToolOutcome};
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
        /// One outcome per call, in the same order.
        reply: RpcReplyPort<Vec<ToolOutcome>>,
    },
    /// Offer tools served by a D-Bus client (`RegisterTool`): each call of them is sent
    /// back to `owner`. Fails (and changes nothing) on a bad spec or a name in use.
    Register {
        /// The provider's unique bus name.
        owner: String,
        /// The tools, as the provider described them.
        specs: Vec<ToolSpec>,
        reply: RpcReplyPort<Result<(), ToolsError>>,
    },
    /// Drop every tool `owner` registered (it left the bus); replies how many went.
    DropOwner {
        owner: String,
        reply: Option<RpcReplyPort<usize>>,
    },
    /// Subscribe to the tool set's changes: the function is given the port on which every
    /// registry that replaces the current one is sent (ractor's `OutputPort::subscribe`).
    Subscribe(Subscriber),
}

/// See [`ToolsMsg::Subscribe`].
pub type Subscriber = Box<dyn FnOnce(&OutputPort<Arc<Registry>>) + Send>;

/// The tools actor's state: the registry it serves, and where its replacements go.
pub struct ToolsState {
    registry: Arc<Registry>,
    changed: OutputPort<Arc<Registry>>,
}

impl ToolsState {
    fn replace(&mut self, next: Arc<Registry>) {
        self.registry = next;
        self.changed.send(Arc::clone(&self.registry));
    }
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
        })
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
            ToolsMsg::CallAll { calls, reply } => {
                let registry = Arc::clone(registry);
                tokio::spawn(async move {
                    let outcomes = registry.call_all(calls).await;
                    if reply.send(outcomes).is_err() {
                        tracing::warn!("tool results dropped: the caller is gone");
                    }
                });
            }
            ToolsMsg::Register {
                owner,
                specs,
                reply,
            } => {
                let out = register(registry, &owner, specs);
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
            ToolsMsg::Subscribe(subscribe) => subscribe(&state.changed),
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
    use crate::tools::{Builtin, ExecSpec, Executor, Tool, ToolStatus};
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn nap_registry() -> Arc<Registry> {
        let mut tools = Builtin::tools();
        tools.push(Tool {
            spec: ToolSpec {
                name: "nap".into(),
                description: "Sleep, then print the time slept.".into(),
                parameters: json!({"type": "object", "properties": {"s": {"type": "number"}},
                    "required": ["s"], "additionalProperties": false}),
            },
            say: None,
            intents: None,
            executor: Executor::Exec(ExecSpec {
                argv: ["sh", "-c", "sleep \"$0\"; echo \"slept $0\"", "{{ s }}"]
                    .map(String::from)
                    .to_vec(),
                timeout: Duration::from_secs(10),
                max_output_bytes: 1024,
                manifest_dir: "/".into(),
            }),
        });
        Arc::new(Registry::new(tools).unwrap())
    }

    fn call(i: usize, name: &str, arguments: serde_json::Value) -> ToolCall {
        crate::toolcall::ToolSet::unrestricted()
            .call(format!("call_{i}"), name, arguments)
            .expect("the arguments are a JSON object")
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
        let outcomes = ractor::call!(actor, |reply| ToolsMsg::CallAll { calls, reply }).unwrap();
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
