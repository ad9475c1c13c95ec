//! Where the sources' things meet: each watch (Home Assistant, the MQTT broker) says what it
//! found now, and the tools are made again from every source's things together, so one
//! `set_light` reaches a Home Assistant light and a Zigbee2MQTT bulb alike.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hearth_house::{Source, Thing};
use ractor::ActorRef;

use crate::tools::ToolsMsg;

/// The things each source found last, shared by the watches.
#[derive(Clone)]
pub struct Hub {
    found: Arc<Mutex<BTreeMap<Source, Vec<Thing>>>>,
    tools: ActorRef<ToolsMsg>,
    offered: Arc<tokio::sync::Notify>,
}

impl Hub {
    /// A hub offering its tools to `tools`.
    pub fn new(tools: ActorRef<ToolsMsg>) -> Hub {
        Hub {
            found: Arc::default(),
            tools,
            offered: Arc::default(),
        }
    }

    /// `source` found `things` (all of them: what it found before is replaced); the tools of
    /// every source's things go to the tools actor. Returns how many tools it offers.
    pub async fn found(&self, source: Source, things: Vec<Thing>) -> usize {
        let all: Vec<Thing> = {
            let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
            found.insert(source, things);
            found.values().flatten().cloned().collect()
        };
        let made = super::tools(&all);
        let offered = ractor::call!(self.tools, |reply| ToolsMsg::House {
            tools: made,
            reply: Some(reply),
        })
        .unwrap_or(0);
        self.offered.notify_waiters();
        offered
    }

    /// Wait until some source offers its things, for at most `within` (a one-shot command
    /// gives the broker's retained announcements a moment to come).
    pub async fn first_offer(&self, within: std::time::Duration) {
        let offered = self.offered.notified();
        if self.found.lock().map(|f| f.is_empty()).unwrap_or(false) {
            let _ = tokio::time::timeout(within, offered).await;
        }
    }

    /// Whether the tools actor runs or is still starting (a watch ends once it stops; a
    /// watch begun beside a starting actor must not take `Starting` for an end).
    pub fn open(&self) -> bool {
        use ractor::ActorStatus::{Draining, Stopped, Stopping};
        !matches!(self.tools.get_status(), Draining | Stopping | Stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ractor::{Actor, ActorProcessingErr};
    use tokio::sync::Notify;

    /// Takes the tools' messages; its start (`post_start`, after `spawn` returned) lasts
    /// until the test lets it go on.
    struct SlowStart;

    impl Actor for SlowStart {
        type Msg = ToolsMsg;
        type State = Arc<Notify>;
        type Arguments = Arc<Notify>;

        async fn pre_start(
            &self,
            _: ActorRef<ToolsMsg>,
            go: Arc<Notify>,
        ) -> Result<Arc<Notify>, ActorProcessingErr> {
            Ok(go)
        }

        async fn post_start(
            &self,
            _: ActorRef<ToolsMsg>,
            go: &mut Arc<Notify>,
        ) -> Result<(), ActorProcessingErr> {
            go.notified().await;
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_watch_begun_beside_a_starting_tools_actor_goes_on_until_it_stops() {
        let go = Arc::new(Notify::new());
        let (tools, task) = Actor::spawn(None, SlowStart, go.clone()).await.unwrap();
        assert_eq!(tools.get_status(), ractor::ActorStatus::Starting);
        let hub = Hub::new(tools.clone());
        assert!(hub.open(), "a starting actor is not an ended one");
        go.notify_one();
        tools.stop(None);
        task.await.unwrap();
        assert!(!hub.open());
    }
}
