//! Announcements: text hearth says that is no reply (`Announce(s text, s room)` on D-Bus;
//! later timers and tools that want to speak). Each voice pipeline (the local microphone's,
//! each satellite's) subscribes with its room; an announcement goes to the pipelines of its
//! room, or to every one for `""`, and each says it between turns, after the reply under
//! way, never over it.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Where announcements go (cheap to clone).
#[derive(Clone, Default)]
pub struct Announcer {
    listeners: Arc<Mutex<Vec<Listener>>>,
}

struct Listener {
    /// `None`: a pipeline with no room (the local microphone without one): it says only
    /// what is for every room.
    room: Option<String>,
    tx: mpsc::UnboundedSender<String>,
}

/// Why an announcement went nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnounceError {
    #[error("nothing to announce: the text is empty")]
    Empty,
    #[error("no speaker is in room {room:?}: the rooms are {rooms:?} ([[satellite]] room); \"\" announces everywhere")]
    NoRoom { room: String, rooms: Vec<String> },
    #[error("hearth has no speaker to announce on (no microphone or satellite is running)")]
    NoSpeaker,
}

impl Announcer {
    pub fn new() -> Announcer {
        Announcer::default()
    }

    /// A pipeline in `room` (`None`: no room) hears announcements here.
    pub fn subscribe(&self, room: Option<String>) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut l) = self.listeners.lock() {
            l.push(Listener { room, tx });
        }
        rx
    }

    /// Say `text` in `room` (case-insensitive), or everywhere for `""`; how many pipelines
    /// took it.
    pub fn announce(&self, text: &str, room: &str) -> Result<usize, AnnounceError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AnnounceError::Empty);
        }
        let room = room.trim();
        let Ok(mut listeners) = self.listeners.lock() else {
            return Err(AnnounceError::NoSpeaker);
        };
        // pipelines that have ended are forgotten
        listeners.retain(|l| !l.tx.is_closed());
        let wanted = |l: &&Listener| {
            room.is_empty()
                || l.room
                    .as_deref()
                    .is_some_and(|r| r.eq_ignore_ascii_case(room))
        };
        let sent = listeners
            .iter()
            .filter(wanted)
            .filter(|l| l.tx.send(text.to_string()).is_ok())
            .count();
        match sent {
            0 if listeners.is_empty() => Err(AnnounceError::NoSpeaker),
            0 => {
                let mut rooms: Vec<String> =
                    listeners.iter().filter_map(|l| l.room.clone()).collect();
                rooms.sort();
                rooms.dedup();
                Err(AnnounceError::NoRoom {
                    room: room.to_string(),
                    rooms,
                })
            }
            n => Ok(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_goes_to_its_room_or_everywhere() {
        let a = Announcer::new();
        assert_eq!(a.announce("dinner", ""), Err(AnnounceError::NoSpeaker));
        let mut kitchen = a.subscribe(Some("Kitchen".into()));
        let mut bedroom = a.subscribe(Some("bedroom".into()));
        let mut local = a.subscribe(None);
        assert_eq!(a.announce("Dinner is ready.", "kitchen"), Ok(1));
        assert_eq!(kitchen.try_recv().as_deref(), Ok("Dinner is ready."));
        assert!(bedroom.try_recv().is_err() && local.try_recv().is_err());
        assert_eq!(a.announce("  Lights out. ", ""), Ok(3));
        for rx in [&mut kitchen, &mut bedroom, &mut local] {
            assert_eq!(rx.try_recv().as_deref(), Ok("Lights out."));
        }
        let e = a.announce("hello", "attic").unwrap_err();
        assert!(e.to_string().contains("[\"Kitchen\", \"bedroom\"]"), "{e}");
        assert_eq!(a.announce(" ", ""), Err(AnnounceError::Empty));
        // a pipeline that ended is forgotten
        drop(bedroom);
        assert_eq!(a.announce("x", ""), Ok(2));
    }
}
