//! What a conversation keeps between its turns ([`Session`]), and the bounded store of
//! them ([`Sessions`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::confirm;
use crate::bounded::Lru;
use crate::intent::Before;
use crate::llm::ChatMessage;

/// Conversations the agent keeps (voice conversations, D-Bus and CLI sessions alike); a new
/// one beyond them forgets the least recently used, history and follow-up context.
pub const SESSIONS_KEPT: usize = 32;

/// What a conversation keeps between its turns.
#[derive(Debug, Clone, Default)]
pub(super) struct Session {
    /// What the model is shown of earlier turns ([`HistoryMode`]).
    pub(super) history: Vec<ChatMessage>,
    /// The calls earlier turns ran, for follow-ups the intents resolve ("turn it off
    /// again", "make it warmer").
    pub(super) before: Before,
    /// The cut of the history the warm-up is evaluating: where the kept part begins, and
    /// the message there (the cut is stale once another is there).
    pub(super) cutting: Option<(usize, ChatMessage)>,
    /// Calls waiting for a yes to the question the last turn asked ([`confirm`]).
    pub(super) pending: Option<confirm::Pending>,
    /// The calls of the last turn that made any, with their results: what "what did you
    /// just do?" tells and "undo that" takes back (`recall.rs`).
    pub(super) done: Vec<super::messages::CallReport>,
    /// Which write of the store made this session as it is (0: never kept), unique across
    /// every session and every one forgotten: a plan made before is the turn's only while
    /// this is as it was ([`super::plan::Planned`]).
    pub(super) version: u64,
}

/// The conversations, the latest [`SESSIONS_KEPT`] (the least recently used is forgotten),
/// the one way they are read and written (a poisoned lock is taken over: a panicked turn
/// leaves at worst one session half-updated).
pub(super) struct Sessions {
    kept: Mutex<Lru<String, Session>>,
    /// The last [`Session::version`] given.
    writes: AtomicU64,
}

impl Sessions {
    pub(super) fn new() -> Sessions {
        Sessions {
            kept: Mutex::new(Lru::new("agent.sessions", SESSIONS_KEPT)),
            writes: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lru<String, Session>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The version of a session written now.
    fn next_version(&self) -> u64 {
        self.writes.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A copy of `id`'s session (empty when unknown), which becomes the most recently used.
    pub(super) fn get(&self, id: &str) -> Session {
        self.lock().get(id).cloned().unwrap_or_default()
    }

    /// `f` of `id`'s session, without marking it used (a look, not a turn).
    pub(super) fn peek<T: Default>(&self, id: &str, f: impl FnOnce(&Session) -> T) -> T {
        self.lock().peek(id).map(f).unwrap_or_default()
    }

    /// Keep `session` as `id`'s (the least recently used goes beyond [`SESSIONS_KEPT`]).
    pub(super) fn keep(&self, id: &str, mut session: Session) {
        session.version = self.next_version();
        self.lock().put(id.to_string(), session);
    }

    /// `f` of `id`'s session, changed in place (nothing when it is unknown), without marking
    /// it used.
    pub(super) fn change<T: Default>(&self, id: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let mut sessions = self.lock();
        let Some(mut session) = sessions.peek(id).cloned() else {
            return T::default();
        };
        let out = f(&mut session);
        session.version = self.next_version();
        sessions.put(id.to_string(), session);
        out
    }

    pub(super) fn forget(&self, id: &str) {
        self.lock().pop(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_gives_a_version_never_given_before() {
        let sessions = Sessions::new();
        assert_eq!(sessions.get("a").version, 0, "never kept");
        sessions.keep("a", Session::default());
        let first = sessions.get("a").version;
        sessions.change("a", |s| s.pending = None);
        let changed = sessions.get("a").version;
        assert!(changed > first, "{first} then {changed}");
        // forgotten and kept again: not the version the first one had
        sessions.forget("a");
        sessions.keep("a", Session::default());
        let again = sessions.get("a").version;
        assert!(again > changed, "{changed} then {again}");
        // a change of a session nobody kept writes nothing
        sessions.change("b", |s| s.pending = None);
        assert_eq!(sessions.get("b").version, 0);
    }
}
