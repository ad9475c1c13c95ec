//! hearth's own controls as built-in tools: `set_volume`, `change_volume` ("louder",
//! "quieter") and `mute_microphone` ("stop listening for an hour": the microphone muted,
//! and unmuted when the time is up). Offered when the process speaks ([`Controls`] served
//! by `hearth run` with a speaker or a satellite).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::output::ToolStatus;
use crate::intent::{parse_length, say_length, IntentSpec};
use crate::voice::Volume;

/// What the controls act on: the volume every Playback reads, and the microphone mute the
/// conductors and the D-Bus `Muted` property share.
#[derive(Debug, Clone)]
pub struct Controls {
    pub volume: Volume,
    pub muted: Arc<AtomicBool>,
    /// Which mute the pending unmute belongs to (a newer mute, or an unmute over D-Bus and
    /// a mute again, supersedes it).
    mutes: Arc<AtomicU64>,
}

impl Controls {
    pub fn new(volume: Volume, muted: Arc<AtomicBool>) -> Controls {
        Controls {
            volume,
            muted,
            mutes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Mute the microphone for `length`, then unmute it (unless it was muted again since).
    fn mute_for(&self, length: std::time::Duration) {
        let mute = self.mutes.fetch_add(1, Ordering::SeqCst) + 1;
        self.muted.store(true, Ordering::SeqCst);
        tracing::info!(seconds = length.as_secs(), "microphone muted by voice");
        let (muted, mutes) = (self.muted.clone(), self.mutes.clone());
        tokio::spawn(async move {
            tokio::time::sleep(length).await;
            if mutes.load(Ordering::SeqCst) == mute {
                muted.store(false, Ordering::SeqCst);
                tracing::info!("the time is up: the microphone listens again");
            }
        });
    }
}

/// One of the control tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTool {
    SetVolume,
    ChangeVolume,
    MuteMicrophone,
}

impl DeviceTool {
    pub const ALL: [DeviceTool; 3] = [
        DeviceTool::SetVolume,
        DeviceTool::ChangeVolume,
        DeviceTool::MuteMicrophone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DeviceTool::SetVolume => "set_volume",
            DeviceTool::ChangeVolume => "change_volume",
            DeviceTool::MuteMicrophone => "mute_microphone",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            DeviceTool::SetVolume => "Set how loud the assistant speaks, from 0 to 10.",
            DeviceTool::ChangeVolume => "Make the assistant speak louder or quieter.",
            DeviceTool::MuteMicrophone => {
                "Stop listening (mute the microphone) for a length of time."
            }
        }
    }

    pub fn parameters(self) -> Value {
        let (properties, required) = match self {
            DeviceTool::SetVolume => (
                json!({"level": {"type": "integer", "minimum": 0, "maximum": Volume::MAX}}),
                json!(["level"]),
            ),
            DeviceTool::ChangeVolume => (
                json!({"direction": {"type": "string", "enum": ["up", "down"]}}),
                json!(["direction"]),
            ),
            DeviceTool::MuteMicrophone => (
                json!({"length": {"type": "string", "format": "length", "description": "For how long, as said: \"an hour\"."}}),
                json!(["length"]),
            ),
        };
        super::builtin_parts::object_schema(properties, required)
    }

    pub fn intents(self) -> Vec<IntentSpec> {
        let intent = super::builtin_parts::intent;
        let way = |w: &str| Map::from_iter([("direction".to_string(), Value::from(w))]);
        match self {
            DeviceTool::SetVolume => vec![intent(
                &[
                    "(set|turn|put) [the] volume [to] {level}",
                    "volume [level] [to] {level}",
                ],
                Map::new(),
            )],
            DeviceTool::ChangeVolume => vec![
                intent(
                    &[
                        "[a (bit|little)] louder",
                        "speak [a (bit|little)] (louder|up)",
                        "(turn|put) [the] volume up",
                        "turn up the volume",
                        "volume up",
                        "(increase|raise) the volume",
                    ],
                    way("up"),
                ),
                intent(
                    &[
                        "[a (bit|little)] (quieter|softer)",
                        "speak [a (bit|little)] (quieter|softer|more quietly)",
                        "(turn|put) [the] volume down",
                        "turn down the volume",
                        "volume down",
                        "(decrease|lower|reduce) the volume",
                    ],
                    way("down"),
                ),
            ],
            DeviceTool::MuteMicrophone => vec![intent(
                &[
                    "stop listening for {length}",
                    "(don't|do not) listen for {length}",
                    "be quiet for {length}",
                    "mute [the|your] microphone for {length}",
                    "mute yourself for {length}",
                ],
                Map::new(),
            )],
        }
    }

    /// Run a call of it on `controls` (`None`: this process does not speak).
    pub fn run(self, arguments: &Value, controls: Option<&Controls>) -> (ToolStatus, String) {
        let Some(c) = controls else {
            return (
                ToolStatus::Error,
                "hearth has no speaker or microphone in this process: nothing to set.".into(),
            );
        };
        let said = match self {
            DeviceTool::SetVolume => {
                let level = arguments.get("level").and_then(Value::as_u64).unwrap_or(0);
                format!("Volume {}.", c.volume.set(level.min(255) as u8))
            }
            DeviceTool::ChangeVolume => {
                let up = arguments.get("direction").and_then(Value::as_str) == Some("up");
                let now = c.volume.level();
                match (up, now) {
                    (true, Volume::MAX) => "The volume is already at its highest.".into(),
                    (false, 0) => "The volume is already off.".into(),
                    (true, n) => format!("Volume {}.", c.volume.set(n + 1)),
                    (false, n) => format!("Volume {}.", c.volume.set(n - 1)),
                }
            }
            DeviceTool::MuteMicrophone => {
                let said = arguments
                    .get("length")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match parse_length(said) {
                    Some(length) if length <= crate::timers::LONGEST => {
                        c.mute_for(length);
                        format!("I'll stop listening for {}.", say_length(length))
                    }
                    _ => {
                        return (
                            ToolStatus::Error,
                            format!("mute_microphone: {said:?} is not a length of up to a day; give it as said, e.g. \"an hour\""),
                        )
                    }
                }
            }
        };
        (ToolStatus::Ok, said)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Registry, Tool};

    #[test]
    fn volume_and_mute_sentences_are_local_intents() {
        let mut tools = Tool::builtins();
        tools.extend(DeviceTool::ALL.map(|d| Tool::builtin(crate::tools::Builtin::Device(d))));
        let r = Registry::new(tools).unwrap();
        let heard = |text: &str| {
            r.intents()
                .recognize(text)
                .map(|c| format!("{} {}", c[0].tool, c[0].arguments))
        };
        for (text, want) in [
            ("Louder.", "change_volume {\"direction\":\"up\"}"),
            (
                "a bit quieter please",
                "change_volume {\"direction\":\"down\"}",
            ),
            (
                "turn the volume down",
                "change_volume {\"direction\":\"down\"}",
            ),
            ("volume 5", "set_volume {\"level\":5}"),
            ("set the volume to seven", "set_volume {\"level\":7}"),
            (
                "be quiet for an hour",
                "mute_microphone {\"length\":\"1 hour\"}",
            ),
            (
                "stop listening for ten minutes",
                "mute_microphone {\"length\":\"10 minutes\"}",
            ),
        ] {
            assert_eq!(heard(text).as_deref(), Some(want), "{text:?}");
        }
        assert_eq!(heard("volume 11"), None);
        assert_eq!(heard("be quiet"), None);
    }

    #[tokio::test]
    async fn the_volume_steps_and_a_mute_ends_by_itself() {
        let c = Controls::new(Volume::new(9), Arc::new(AtomicBool::new(false)));
        let up = json!({"direction": "up"});
        assert_eq!(DeviceTool::ChangeVolume.run(&up, Some(&c)).1, "Volume 10.");
        assert_eq!(
            DeviceTool::ChangeVolume.run(&up, Some(&c)).1,
            "The volume is already at its highest."
        );
        assert_eq!(
            DeviceTool::SetVolume.run(&json!({"level": 3}), Some(&c)).1,
            "Volume 3."
        );
        assert_eq!(c.volume.level(), 3);
        let (status, said) =
            DeviceTool::MuteMicrophone.run(&json!({"length": "1 second"}), Some(&c));
        assert_eq!(
            (status, said.as_str()),
            (ToolStatus::Ok, "I'll stop listening for 1 second.")
        );
        assert!(c.muted.load(Ordering::SeqCst));
        tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
        assert!(
            !c.muted.load(Ordering::SeqCst),
            "unmuted when the time is up"
        );
        // a newer mute is not cut short by an older one's end
        DeviceTool::MuteMicrophone.run(&json!({"length": "1 second"}), Some(&c));
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        DeviceTool::MuteMicrophone.run(&json!({"length": "2 seconds"}), Some(&c));
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        assert!(c.muted.load(Ordering::SeqCst));
        assert_eq!(
            DeviceTool::SetVolume.run(&json!({"level": 3}), None).0,
            ToolStatus::Error
        );
    }
}
