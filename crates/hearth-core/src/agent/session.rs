//! What a conversation keeps between its turns ([`Session`]), and the bounded store of
//! them ([`Sessions`]).

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
    pub(super) done: Vec<super::report::CallReport>,
    /// Which write of the store made this session as it is (0: never kept), unique across
    /// every session and every one forgotten: a plan made before is the turn's only while
    /// this is as it was ([`super::plan::Planned`]).
    pub(super) version: u64,
}

/// The conversations, the latest [`SESSIONS_KEPT`] (the least recently used is forgotten):
/// the agent actor's own. Turns and warm-ups get a copy of a session when they start and send
/// what they change back ([`Change`]).
pub(super) struct Sessions {
    kept: Lru<String, Session>,
    /// The last [`Session::version`] given.
    writes: u64,
}

/// What a turn or a warm-up changes of a session: sent to the agent actor, which owns the
/// sessions, and applied there in the order it came ([`Sessions::apply`]).
#[derive(Debug)]
pub(super) enum Change {
    /// The session as its turn leaves it.
    Keep(Session),
    /// The question it held is dropped: the turn was no answer to it.
    QuestionDropped,
    /// The warm-up cuts the history where the kept part begins, at the message there.
    Cutting(usize, ChatMessage),
    /// The warm-up has the cut history evaluated whole: the first `n` messages go, if the
    /// history is still the one the cut was worked out on (no turn added meanwhile).
    Cut { history: Vec<ChatMessage>, n: usize },
}

impl Sessions {
    pub(super) fn new() -> Sessions {
        Sessions {
            kept: Lru::new("agent.sessions", SESSIONS_KEPT),
            writes: 0,
        }
    }

    /// The version of a session written now.
    fn next_version(&mut self) -> u64 {
        self.writes += 1;
        self.writes
    }

    /// A copy of `id`'s session (empty when unknown), which becomes the most recently used.
    pub(super) fn get(&mut self, id: &str) -> Session {
        self.kept.get(id).cloned().unwrap_or_default()
    }

    /// A copy of `id`'s session, without marking it used (a look, not a turn).
    pub(super) fn peek(&self, id: &str) -> Session {
        self.kept.peek(id).cloned().unwrap_or_default()
    }

    /// Keep `session` as `id`'s (the least recently used goes beyond [`SESSIONS_KEPT`]).
    fn keep(&mut self, id: &str, mut session: Session) {
        session.version = self.next_version();
        self.kept.put(id.to_string(), session);
    }

    /// `f` of `id`'s session, changed in place (nothing when it is unknown), without marking
    /// it used.
    fn change<T: Default>(&mut self, id: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let Some(mut session) = self.kept.peek(id).cloned() else {
            return T::default();
        };
        let out = f(&mut session);
        session.version = self.next_version();
        self.kept.put(id.to_string(), session);
        out
    }

    /// What a turn or a warm-up changed of `id`'s session.
    pub(super) fn apply(&mut self, id: &str, change: Change) {
        match change {
            Change::Keep(session) => self.keep(id, session),
            Change::QuestionDropped => self.change(id, |s| s.pending = None),
            Change::Cutting(at, first) => self.change(id, |s| s.cutting = Some((at, first))),
            Change::Cut { history, n } => {
                let done = self.change(id, |s| {
                    let same = s.history == history;
                    if same {
                        s.history.drain(..n);
                        s.cutting = None;
                    }
                    same
                });
                if done {
                    tracing::info!(dropped = n, kept = history.len() - n, "history cut back");
                }
            }
        }
    }

    pub(super) fn forget(&mut self, id: &str) {
        self.kept.pop(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_gives_a_version_never_given_before() {
        let mut sessions = Sessions::new();
        assert_eq!(sessions.get("a").version, 0, "never kept");
        sessions.apply("a", Change::Keep(Session::default()));
        let first = sessions.get("a").version;
        sessions.apply("a", Change::QuestionDropped);
        let changed = sessions.get("a").version;
        assert!(changed > first, "{first} then {changed}");
        // forgotten and kept again: not the version the first one had
        sessions.forget("a");
        sessions.apply("a", Change::Keep(Session::default()));
        let again = sessions.get("a").version;
        assert!(again > changed, "{changed} then {again}");
        // a change of a session nobody kept writes nothing
        sessions.apply("b", Change::QuestionDropped);
        assert_eq!(sessions.peek("b").version, 0);
    }

    #[test]
    fn a_cut_is_made_only_of_the_history_it_was_worked_out_on() {
        let turn = |n: usize| {
            [
                ChatMessage::user(format!("request {n}")),
                ChatMessage::assistant(format!("reply {n}")),
            ]
        };
        let history: Vec<ChatMessage> = (0..3).flat_map(turn).collect();
        let mut sessions = Sessions::new();
        let kept = Session {
            history: history.clone(),
            ..Session::default()
        };
        sessions.apply("a", Change::Keep(kept));
        sessions.apply("a", Change::Cutting(4, history[4].clone()));
        assert_eq!(sessions.peek("a").cutting, Some((4, history[4].clone())));
        // a turn was kept meanwhile: the cut worked out on the history before it is stale
        let mut longer = sessions.peek("a");
        longer.history.extend(turn(3));
        sessions.apply("a", Change::Keep(longer.clone()));
        sessions.apply(
            "a",
            Change::Cut {
                history: history.clone(),
                n: 4,
            },
        );
        assert_eq!(sessions.peek("a").history, longer.history);
        // of the history it was worked out on, it is made
        sessions.apply(
            "a",
            Change::Cut {
                history: longer.history.clone(),
                n: 4,
            },
        );
        let cut = sessions.peek("a");
        assert_eq!(cut.history, longer.history[4..]);
        assert_eq!(cut.cutting, None);
    }
}
