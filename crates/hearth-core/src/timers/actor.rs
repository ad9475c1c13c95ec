//! The [`Timers`] actor: the timers, their file, and the one delayed message for the
//! earliest deadline.
//!
//! **The writer.** A change is made to the timers in memory at once and acknowledged once
//! the file holds it. The file is written by a task of its own ([`Writing`]), one write at
//! a time: changes that come while one is under way share the next (a group commit). So
//! the actor never waits for a disk: a timer due during a write rings on time. A write
//! that fails takes back every change not yet acknowledged, and each is refused.

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::store::{Store, StoreError};
use super::{
    now_ms, Alarm, Days, Fired, Kind, Run, Timer, TimerError, Which, LONGEST, MISSED_BOUND,
};

/// What the timers actor does.
pub enum TimersMsg {
    /// Start a timer of `length`, named or not, set in `room` (with `reminder`: a reminder
    /// when it ends).
    Start {
        name: Option<String>,
        length: Duration,
        room: Option<String>,
        reminder: Option<String>,
        reply: RpcReplyPort<Result<Timer, TimerError>>,
    },
    /// Set an alarm at `at` on `days` (with `reminder`: a reminder at that time), in `room`.
    StartAlarm {
        at: jiff::civil::Time,
        days: Days,
        reminder: Option<String>,
        room: Option<String>,
        reply: RpcReplyPort<Result<Timer, TimerError>>,
    },
    /// Cancel the timers, alarms or reminders with these ids (those still there).
    CancelIds(Vec<u64>, RpcReplyPort<Result<Vec<Timer>, TimerError>>),
    /// Cancel the timers meant; the ones cancelled.
    Cancel(Which, RpcReplyPort<Result<Vec<Timer>, TimerError>>),
    /// Add time (negative: take it away) to the timer meant; taking more than is left
    /// makes it ring now.
    Adjust(Which, i64, RpcReplyPort<Result<Timer, TimerError>>),
    /// Pause the running timer meant.
    Pause(Which, RpcReplyPort<Result<Timer, TimerError>>),
    /// Resume the paused timer meant.
    Resume(Which, RpcReplyPort<Result<Timer, TimerError>>),
    /// Every timer, soonest first.
    List(RpcReplyPort<Vec<Timer>>),
    /// Stop the timers meant ringing (none named: every one ringing); the ones stopped.
    Silence(Which, RpcReplyPort<Vec<Timer>>),
    /// The timers ringing now.
    Ringing(RpcReplyPort<Vec<Timer>>),
    /// The ringer has rung timer `id` as long as it rings: it rings no more.
    Rung(u64),
    /// Send every firing here from now on (the first subscriber also gets those that fired
    /// before it came: the ones due while hearth was down).
    Subscribe(UnboundedSender<Fired>),
    /// The earliest deadline of arm `generation` has come.
    Due(u64),
    /// Write the timers that rang out of the file ([`FLUSH_AFTER`] after the first).
    Flush,
    /// The write under way has ended: how it went.
    Written(Result<(), String>),
}

/// How long after a timer rings the file drops it: the rings of that window share one
/// write. A crash inside it makes the timer ring again at the next start (marked late):
/// a ring twice, never a timer lost.
const FLUSH_AFTER: Duration = Duration::from_millis(100);

/// What the actor starts from: its file.
pub struct TimersArgs {
    pub store: Store,
}

/// A change made in memory and not yet acknowledged.
struct Pending {
    /// Each timer it touched as it was before (`None`: it was not there).
    undo: Vec<(u64, Option<Timer>)>,
    /// Answers the request, once the write has gone one way or the other.
    ack: Box<dyn FnOnce(Result<(), TimerError>) + Send>,
}

/// The write under way: its task (which also sends [`TimersMsg::Written`]) and the changes
/// it makes durable.
struct Writing {
    task: JoinHandle<Result<(), String>>,
    changes: Vec<Pending>,
}

/// The actor's state.
pub struct TimersState {
    store: Store,
    /// The lock on the state directory's timers, held while the actor lives.
    _lock: std::fs::File,
    /// The timers as the person was told or is about to be: the file's version and the
    /// changes in [`Self::writing`] and [`Self::changes`].
    timers: Vec<Timer>,
    next_id: u64,
    subscribers: Vec<UnboundedSender<Fired>>,
    /// Firings no subscriber has had yet.
    unheard: Vec<Fired>,
    /// Timers that fired and ring until silenced or rung out (kept in memory only: after a
    /// restart, what fell due rings again, marked late).
    ringing: Vec<Timer>,
    /// The delayed message for the earliest deadline, and its generation.
    armed: Option<JoinHandle<Result<(), ractor::MessagingErr<TimersMsg>>>>,
    generation: u64,
    /// The due time the armed message is for.
    armed_for: Option<i64>,
    /// The write under way, if one is.
    writing: Option<Writing>,
    /// Changes made since that write began: the next write's.
    changes: Vec<Pending>,
    /// Timers rang that the file still holds: the next write drops them.
    unflushed: bool,
    /// A [`TimersMsg::Flush`] is on its way.
    flush_sent: bool,
}

/// The timers actor.
pub struct Timers;

impl Actor for Timers {
    type Msg = TimersMsg;
    type State = TimersState;
    type Arguments = TimersArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: TimersArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let lock = args.store.lock()?;
        let loaded = args.store.load();
        let mut state = TimersState {
            _lock: lock,
            store: args.store,
            timers: loaded.timers,
            next_id: loaded.next_id.max(1),
            subscribers: Vec::new(),
            unheard: Vec::new(),
            ringing: Vec::new(),
            armed: None,
            generation: 0,
            armed_for: None,
            writing: None,
            changes: Vec::new(),
            unflushed: false,
            flush_sent: false,
        };
        let before = state.timers.len();
        let missed = take_due(&mut state.timers, now_ms());
        for f in missed {
            if f.late_ms > MISSED_BOUND.as_millis() as u64 {
                tracing::warn!(
                    timer = %f.timer.called(),
                    late_s = f.late_ms / 1000,
                    "a timer fell due while hearth was down, too long ago to ring: dropped"
                );
            } else {
                tracing::info!(timer = %f.timer.called(), late_s = f.late_ms / 1000, "a timer fell due while hearth was down: it rings now");
                state.ringing.push(f.timer.clone());
                state.unheard.push(f);
            }
        }
        if state.timers.len() != before {
            if let Err(e) = save(&state.store, &state.timers, state.next_id).await {
                tracing::error!(error = %e, "the timers that fell due could not be taken out of the file: they may ring again at the next start");
            }
        }
        tracing::info!(
            file = %state.store.path().display(),
            timers = state.timers.len(),
            "timers loaded"
        );
        arm(&myself, &mut state);
        Ok(state)
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(h) = state.armed.take() {
            h.abort();
        }
        // a clean stop writes what is not written yet (what rang, changes still waiting)
        // and answers them: the write under way ends first, so two never race
        let mut waiting = std::mem::take(&mut state.changes);
        if let Some(w) = state.writing.take() {
            let went = w.task.await.unwrap_or_else(|e| Err(e.to_string()));
            match went {
                Ok(()) => acknowledge(w.changes, Ok(())),
                // the write below holds them too
                Err(_) => {
                    let mut all = w.changes;
                    all.append(&mut waiting);
                    waiting = all;
                }
            }
        }
        if state.unflushed || !waiting.is_empty() {
            let went = save(&state.store, &state.timers, state.next_id).await;
            if let Err(e) = &went {
                tracing::error!(error = %e, "the timers could not be written at stop: what rang may ring again, and changes not yet answered are refused");
            }
            acknowledge(waiting, went.map_err(|e| TimerError::Store(e.to_string())));
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let mut rearm = false;
        match msg {
            TimersMsg::Start {
                name,
                length,
                room,
                reminder,
                reply,
            } => state.change(reply, |s| s.start(name, length, room, reminder)),
            TimersMsg::StartAlarm {
                at,
                days,
                reminder,
                room,
                reply,
            } => state.change(reply, |s| {
                s.start_alarm(Alarm::new(at, days), reminder, room)
            }),
            TimersMsg::CancelIds(ids, reply) => state.change(reply, |s| Ok(s.cancel_ids(&ids))),
            TimersMsg::Cancel(which, reply) => state.change(reply, |s| s.cancel(&which)),
            TimersMsg::Adjust(which, delta_ms, reply) => {
                state.change(reply, |s| s.alter(&which, Change::Adjust(delta_ms)))
            }
            TimersMsg::Pause(which, reply) => {
                state.change(reply, |s| s.alter(&which, Change::Pause))
            }
            TimersMsg::Resume(which, reply) => {
                state.change(reply, |s| s.alter(&which, Change::Resume))
            }
            TimersMsg::List(reply) => {
                let now = now_ms();
                let mut all = state.timers.clone();
                all.sort_by_key(|t| t.left_ms(now));
                let _ = reply.send(all);
            }
            TimersMsg::Silence(which, reply) => {
                let (gone, kept) = std::mem::take(&mut state.ringing)
                    .into_iter()
                    .partition(|t| match &which {
                        Which::Named(n) => t.name.as_ref() == Some(n),
                        Which::Only | Which::All => true,
                    });
                state.ringing = kept;
                let _ = reply.send(gone);
            }
            TimersMsg::Ringing(reply) => {
                let _ = reply.send(state.ringing.clone());
            }
            TimersMsg::Rung(id) => state.ringing.retain(|t| t.id != id),
            TimersMsg::Subscribe(tx) => {
                for f in state.unheard.drain(..) {
                    let _ = tx.send(f);
                }
                state.subscribers.push(tx);
            }
            TimersMsg::Due(generation) => {
                if generation == state.generation {
                    if state.fire_due() {
                        state.unflushed = true;
                        if !state.flush_sent {
                            state.flush_sent = true;
                            myself.send_after(FLUSH_AFTER, || TimersMsg::Flush);
                        }
                    }
                    // armed again from the clock, even if nothing was due yet
                    rearm = true;
                }
            }
            TimersMsg::Flush => state.flush_sent = false,
            TimersMsg::Written(went) => state.written(went),
        }
        // what is not written yet goes to the writer, unless it is busy; what rang waits
        // for its flush
        if !state.changes.is_empty() || (state.unflushed && !state.flush_sent) {
            state.write(&myself);
        }
        // whatever changed, the one delayed message is for the earliest deadline
        if rearm || state.earliest() != state.armed_for {
            arm(&myself, state);
        }
        Ok(())
    }
}

/// Answer each of `changes` with how the write went.
fn acknowledge(changes: Vec<Pending>, went: Result<(), TimerError>) {
    for c in changes {
        (c.ack)(went.clone());
    }
}

/// A change to one timer.
#[derive(Clone, Copy)]
enum Change {
    Adjust(i64),
    Pause,
    Resume,
}

impl TimersState {
    /// Make the change `op` describes in memory; a refusal is answered at once, a change
    /// once the file holds it ([`Self::written`]).
    fn change<T: Send + 'static>(
        &mut self,
        reply: RpcReplyPort<Result<T, TimerError>>,
        op: impl FnOnce(&mut Self) -> Result<T, TimerError>,
    ) {
        let before = self.timers.clone();
        let done = match op(self) {
            Ok(done) => done,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let undo = touched(&before, &self.timers);
        self.changes.push(Pending {
            undo,
            ack: Box::new(move |went| {
                let _ = reply.send(went.map(|()| done));
            }),
        });
    }

    /// Hand the timers as they are to a writer task, unless one is under way (then they
    /// wait for it to end).
    fn write(&mut self, myself: &ActorRef<TimersMsg>) {
        if self.writing.is_some() {
            return;
        }
        self.unflushed = false;
        let (store, timers, next_id) = (self.store.clone(), self.timers.clone(), self.next_id);
        let me = myself.clone();
        let task = tokio::spawn(async move {
            let went = save(&store, &timers, next_id)
                .await
                .map_err(|e| e.to_string());
            let _ = me.cast(TimersMsg::Written(went.clone()));
            went
        });
        self.writing = Some(Writing {
            task,
            changes: std::mem::take(&mut self.changes),
        });
    }

    /// The write under way has ended: its changes are acknowledged, or taken back with
    /// every change made since (each made on top of them), and refused. A write of what
    /// rang alone that fails refuses nothing: the next write holds the changes since.
    fn written(&mut self, went: Result<(), String>) {
        let Some(done) = self.writing.take() else {
            return;
        };
        match went {
            Ok(()) => acknowledge(done.changes, Ok(())),
            Err(e) if done.changes.is_empty() => {
                tracing::error!(error = %e, "the timers that rang could not be taken out of the file: they may ring again at the next start");
            }
            Err(e) => {
                tracing::error!(error = %e, "timers not saved: the changes not yet acknowledged are refused");
                let mut all = done.changes;
                all.append(&mut self.changes);
                for c in all.iter().rev() {
                    for (id, was) in c.undo.iter().rev() {
                        self.timers.retain(|t| t.id != *id);
                        self.timers.extend(was.clone());
                    }
                }
                acknowledge(all, Err(TimerError::Store(e)));
            }
        }
    }

    fn start(
        &mut self,
        name: Option<String>,
        length: Duration,
        room: Option<String>,
        reminder: Option<String>,
    ) -> Result<Timer, TimerError> {
        if length < Duration::from_secs(1) || length > LONGEST {
            return Err(TimerError::Length);
        }
        let name = name
            .map(|n| n.trim().to_lowercase())
            .filter(|n| !n.is_empty());
        if let Some(n) = &name {
            let timers = self.timers.iter().filter(|t| t.kind() == Kind::Timer);
            if timers.into_iter().any(|t| t.name.as_ref() == Some(n)) {
                return Err(TimerError::Taken(n.clone()));
            }
        }
        let total_ms = length.as_millis() as u64;
        let timer = Timer {
            id: self.next_id,
            name,
            total_ms,
            run: Run::Running {
                due_ms: now_ms() + total_ms as i64,
            },
            room,
            alarm: None,
            reminder,
        };
        self.timers.push(timer.clone());
        self.next_id += 1;
        tracing::info!(timer = %timer.called(), seconds = total_ms / 1000, "timer started");
        Ok(timer)
    }

    fn start_alarm(
        &mut self,
        alarm: Alarm,
        reminder: Option<String>,
        room: Option<String>,
    ) -> Result<Timer, TimerError> {
        let due_ms = alarm.next_after(now_ms()).ok_or(TimerError::Length)?;
        let timer = Timer {
            id: self.next_id,
            name: None,
            total_ms: 0,
            run: Run::Running { due_ms },
            room,
            alarm: Some(alarm),
            reminder,
        };
        self.timers.push(timer.clone());
        self.next_id += 1;
        tracing::info!(kind = ?timer.kind(), due_ms, "alarm set");
        Ok(timer)
    }

    fn cancel_ids(&mut self, ids: &[u64]) -> Vec<Timer> {
        let (gone, kept) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|t| ids.contains(&t.id));
        self.timers = kept;
        gone
    }

    fn cancel(&mut self, which: &Which) -> Result<Vec<Timer>, TimerError> {
        let picked = pick(&self.timers, which, |_| true)?;
        let gone = self.cancel_ids(&picked);
        for t in &gone {
            tracing::info!(timer = %t.called(), "timer cancelled");
        }
        Ok(gone)
    }

    fn alter(&mut self, which: &Which, change: Change) -> Result<Timer, TimerError> {
        let applies = |t: &Timer| match change {
            Change::Adjust(_) => true,
            Change::Pause => matches!(t.run, Run::Running { .. }),
            Change::Resume => matches!(t.run, Run::Paused { .. }),
        };
        let id = match pick(&self.timers, which, applies) {
            Ok(ids) if ids.len() == 1 => ids[0],
            Ok(_) => return Err(TimerError::Which(names(&self.timers, applies))),
            // a named timer there is, but not one this change applies to
            Err(TimerError::NoSuch(n)) => return Err(self.why_not(&n, change)),
            Err(e) => return Err(e),
        };
        let now = now_ms();
        let Some(t) = self.timers.iter_mut().find(|t| t.id == id) else {
            return Err(TimerError::None);
        };
        t.run = match (t.run, change) {
            (Run::Running { due_ms }, Change::Adjust(d)) => Run::Running {
                due_ms: (due_ms + d).max(now),
            },
            (Run::Paused { left_ms }, Change::Adjust(d)) => Run::Paused {
                left_ms: (left_ms as i64 + d).max(0) as u64,
            },
            (Run::Running { .. }, Change::Pause) => Run::Paused {
                left_ms: t.left_ms(now),
            },
            (Run::Paused { left_ms }, Change::Resume) => Run::Running {
                due_ms: now + left_ms as i64,
            },
            (run, _) => run,
        };
        if let Change::Adjust(d) = change {
            t.total_ms = (t.total_ms as i64 + d).max(0) as u64;
        }
        Ok(t.clone())
    }

    /// Why a change cannot apply to the timer named `name`.
    fn why_not(&self, name: &str, change: Change) -> TimerError {
        let found = self.timers.iter().find(|t| t.name.as_deref() == Some(name));
        match (found, change) {
            (Some(t), Change::Pause) => TimerError::AlreadyPaused(t.called()),
            (Some(t), Change::Resume) => TimerError::NotPaused(t.called()),
            _ => TimerError::NoSuch(name.to_string()),
        }
    }

    /// Ring every running timer that is due, and take it out (the file drops it at the
    /// next write). Whether any rang.
    fn fire_due(&mut self) -> bool {
        let fired = take_due(&mut self.timers, now_ms());
        self.subscribers.retain(|s| !s.is_closed());
        for f in &fired {
            self.ringing.push(f.timer.clone());
            if self.subscribers.is_empty() {
                self.unheard.push(f.clone());
            }
            for s in &self.subscribers {
                let _ = s.send(f.clone());
            }
            tracing::info!(timer = %f.timer.called(), late_ms = f.late_ms, "timer done");
        }
        !fired.is_empty()
    }

    /// The earliest due time of a running timer.
    fn earliest(&self) -> Option<i64> {
        self.timers
            .iter()
            .filter_map(|t| match t.run {
                Run::Running { due_ms } => Some(due_ms),
                Run::Paused { .. } => None,
            })
            .min()
    }
}

/// Each timer that differs between `before` and `after`, as it was before (`None`: it was
/// not there).
fn touched(before: &[Timer], after: &[Timer]) -> Vec<(u64, Option<Timer>)> {
    let was = |id| before.iter().find(|t| t.id == id);
    let gone = before
        .iter()
        .filter(|b| !after.iter().any(|a| a.id == b.id))
        .map(|b| (b.id, Some(b.clone())));
    let changed = after
        .iter()
        .filter(|a| was(a.id) != Some(*a))
        .map(|a| (a.id, was(a.id).cloned()));
    gone.chain(changed).collect()
}

/// Write the file off the async threads (a write and two fsyncs: milliseconds).
async fn save(store: &Store, timers: &[Timer], next_id: u64) -> Result<(), StoreError> {
    let (store, timers) = (store.clone(), timers.to_vec());
    let path = store.path().to_path_buf();
    tokio::task::spawn_blocking(move || store.save(&timers, next_id))
        .await
        .unwrap_or_else(|e| {
            Err(StoreError::Write {
                path,
                source: std::io::Error::other(e),
            })
        })
}

/// Put the one delayed message at the earliest deadline (none when nothing runs).
fn arm(myself: &ActorRef<TimersMsg>, state: &mut TimersState) {
    if let Some(h) = state.armed.take() {
        h.abort();
    }
    state.generation += 1;
    state.armed_for = state.earliest();
    let Some(due) = state.armed_for else { return };
    let delay = Duration::from_millis(u64::try_from(due - now_ms()).unwrap_or(0));
    let generation = state.generation;
    state.armed = Some(myself.send_after(delay, move || TimersMsg::Due(generation)));
}

/// Take out of `timers` every running one due at `now`, as firings.
fn take_due(timers: &mut Vec<Timer>, now: i64) -> Vec<Fired> {
    let mut fired = Vec::new();
    timers.retain_mut(|t| match t.run {
        Run::Running { due_ms } if due_ms <= now => {
            fired.push(Fired {
                timer: t.clone(),
                late_ms: u64::try_from(now - due_ms).unwrap_or(0),
            });
            // a repeating alarm stays, set for its next day
            match t.alarm.filter(|a| a.days != Days::Once) {
                Some(alarm) => match alarm.next_after(now.max(due_ms)) {
                    Some(next) => {
                        t.run = Run::Running { due_ms: next };
                        true
                    }
                    None => false,
                },
                None => false,
            }
        }
        _ => true,
    });
    fired
}

/// The ids `which` means among the timers `applies` to.
fn pick(
    timers: &[Timer],
    which: &Which,
    applies: impl Fn(&Timer) -> bool,
) -> Result<Vec<u64>, TimerError> {
    // alarms and reminders are not the timers a request means
    let timers: Vec<Timer> = timers
        .iter()
        .filter(|t| t.kind() == Kind::Timer)
        .cloned()
        .collect();
    let timers = timers.as_slice();
    if timers.is_empty() {
        return Err(TimerError::None);
    }
    match which {
        Which::All => Ok(timers.iter().map(|t| t.id).collect()),
        Which::Named(n) => {
            let n = n.trim().to_lowercase();
            timers
                .iter()
                .find(|t| t.name.as_deref() == Some(n.as_str()) && applies(t))
                .map(|t| vec![t.id])
                .ok_or(TimerError::NoSuch(n))
        }
        Which::Only => {
            let fit: Vec<&Timer> = timers.iter().filter(|t| applies(t)).collect();
            match fit.as_slice() {
                [] => Err(TimerError::None),
                [one] => Ok(vec![one.id]),
                _ => Err(TimerError::Which(names(timers, applies))),
            }
        }
    }
}

/// The timers `applies` to, as a question names them.
fn names(timers: &[Timer], applies: impl Fn(&Timer) -> bool) -> Vec<String> {
    timers
        .iter()
        .filter(|t| applies(t))
        .map(|t| match &t.name {
            Some(n) => n.clone(),
            None => format!("the {} one", spoken_length(t.total_ms)),
        })
        .collect()
}

/// "10 minute", "1 hour", "90 second": a length as it qualifies a timer.
fn spoken_length(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        s if s >= 3600 && s % 3600 == 0 => format!("{} hour", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} minute", s / 60),
        s => format!("{s} second"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(id: u64, due_ms: i64, alarm: Option<Alarm>) -> Timer {
        Timer {
            id,
            name: None,
            total_ms: 0,
            run: Run::Running { due_ms },
            room: None,
            alarm,
            reminder: None,
        }
    }

    /// A timer or a one-off alarm rings and goes; a repeating alarm rings and is set for
    /// its next day, a day later at the same time of day.
    #[test]
    fn a_repeating_alarm_rings_and_stays_set_for_its_next_day() {
        let seven = jiff::civil::time(7, 0, 0, 0);
        let now = jiff::Timestamp::now().as_millisecond();
        let every = Alarm::new(seven, Days::Every);
        let mut timers = vec![
            due(1, now - 10, None),
            due(2, now - 10, Some(Alarm::new(seven, Days::Once))),
            due(3, now - 10, Some(every)),
            due(4, now + 60_000, None),
        ];
        let fired = take_due(&mut timers, now);
        assert_eq!(
            fired.iter().map(|f| f.timer.id).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(timers.iter().map(|t| t.id).collect::<Vec<_>>(), [3, 4]);
        let next = timers[0].due_ms().unwrap();
        assert_eq!(Some(next), every.next_after(now));
        assert!(next > now && next <= now + 25 * 3600 * 1000, "{next} {now}");
    }

    async fn start(t: ActorRef<TimersMsg>, name: &str, secs: u64) -> Result<Timer, TimerError> {
        ractor::call!(t, |reply| TimersMsg::Start {
            name: Some(name.to_string()),
            length: Duration::from_secs(secs),
            room: None,
            reminder: None,
            reply,
        })
        .expect("the timers actor answers")
    }

    /// A timer due while a write is under way rings on time; when that write fails, the
    /// change it carried is refused and taken back, and the next write holds what was
    /// acknowledged. The write is held by making its temporary file a FIFO: opening it
    /// waits for a reader, and a FIFO cannot be fsynced.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_ring_never_waits_for_a_write_and_a_failed_write_refuses_its_change() {
        let dir = std::env::temp_dir().join(format!("hearth-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::in_dir(&dir);
        let (timers, _) = Actor::spawn(
            None,
            Timers,
            TimersArgs {
                store: store.clone(),
            },
        )
        .await
        .expect("the timers actor starts");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        timers.cast(TimersMsg::Subscribe(tx)).expect("subscribed");
        start(timers.clone(), "tea", 1).await.expect("tea set");

        let fifo = store.path().with_extension("json.tmp");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
        let pasta = tokio::spawn(start(timers.clone(), "pasta", 600));
        let fired = tokio::time::timeout(Duration::from_secs(3), rx.recv()).await;
        let held = !pasta.is_finished();
        // the write goes on before anything is asserted: a failure must not leave it held
        let read = tokio::task::spawn_blocking(move || std::fs::File::open(fifo));
        let reader = read.await.expect("joined").expect("the FIFO opens");
        let fired = fired
            .expect("the tea timer rings while the pasta timer's write is held")
            .expect("a firing");
        assert_eq!(fired.timer.name.as_deref(), Some("tea"));
        assert!(fired.late_ms < 100, "rang {} ms late", fired.late_ms);
        assert!(held, "the pasta timer waits for its write");
        let refused = pasta.await.expect("joined");
        assert!(matches!(refused, Err(TimerError::Store(_))), "{refused:?}");
        let left = ractor::call!(timers, TimersMsg::List).expect("listed");
        assert!(left.is_empty(), "taken back: {left:?}");

        drop(reader);
        std::fs::remove_file(store.path().with_extension("json.tmp")).expect("FIFO removed");
        start(timers.clone(), "eggs", 600).await.expect("eggs set");
        let kept = store.load().timers;
        let kept: Vec<_> = kept.iter().map(|t| t.name.as_deref()).collect();
        assert_eq!(kept, [Some("eggs")]);
        timers.stop(None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
