//! The [`Timers`] actor: the timers, their file, and the one delayed message for the
//! earliest deadline.

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::mpsc::UnboundedSender;

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
}

/// How long after a timer rings the file drops it: the rings of that window share one
/// write. A crash inside it makes the timer ring again at the next start (marked late):
/// a ring twice, never a timer lost.
const FLUSH_AFTER: Duration = Duration::from_millis(100);

/// What the actor starts from: its file.
pub struct TimersArgs {
    pub store: Store,
}

/// The actor's state.
pub struct TimersState {
    store: Store,
    /// The lock on the state directory's timers, held while the actor lives.
    _lock: std::fs::File,
    timers: Vec<Timer>,
    next_id: u64,
    subscribers: Vec<UnboundedSender<Fired>>,
    /// Firings no subscriber has had yet.
    unheard: Vec<Fired>,
    /// Timers that fired and ring until silenced or rung out (kept in memory only: after a
    /// restart, what fell due rings again, marked late).
    ringing: Vec<Timer>,
    /// The delayed message for the earliest deadline, and its generation.
    armed: Option<tokio::task::JoinHandle<Result<(), ractor::MessagingErr<TimersMsg>>>>,
    generation: u64,
    /// The due time the armed message is for.
    armed_for: Option<i64>,
    /// Timers rang that the file still holds; a [`TimersMsg::Flush`] is on its way.
    unflushed: bool,
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
            unflushed: false,
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
            if let Err(e) = state.store.save(&state.timers, state.next_id) {
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
        // a clean stop writes what rang since the last write: it does not ring again
        state.flush().await;
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
            } => {
                let _ = reply.send(state.start(name, length, room, reminder).await);
            }
            TimersMsg::StartAlarm {
                at,
                days,
                reminder,
                room,
                reply,
            } => {
                let _ = reply.send(
                    state
                        .start_alarm(Alarm::new(at, days), reminder, room)
                        .await,
                );
            }
            TimersMsg::CancelIds(ids, reply) => {
                let _ = reply.send(state.cancel_ids(&ids).await);
            }
            TimersMsg::Cancel(which, reply) => {
                let _ = reply.send(state.cancel(&which).await);
            }
            TimersMsg::Adjust(which, delta_ms, reply) => {
                let _ = reply.send(state.change(&which, Change::Adjust(delta_ms)).await);
            }
            TimersMsg::Pause(which, reply) => {
                let _ = reply.send(state.change(&which, Change::Pause).await);
            }
            TimersMsg::Resume(which, reply) => {
                let _ = reply.send(state.change(&which, Change::Resume).await);
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
                    if state.fire_due() && !state.unflushed {
                        state.unflushed = true;
                        myself.send_after(FLUSH_AFTER, || TimersMsg::Flush);
                    }
                    // armed again from the clock, even if nothing was due yet
                    rearm = true;
                }
            }
            TimersMsg::Flush => state.flush().await,
        }
        // whatever changed, the one delayed message is for the earliest deadline
        if rearm || state.earliest() != state.armed_for {
            arm(&myself, state);
        }
        Ok(())
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
    async fn start(
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
        let mut timers = self.timers.clone();
        timers.push(timer.clone());
        self.commit(timers, self.next_id + 1).await?;
        tracing::info!(timer = %timer.called(), seconds = total_ms / 1000, "timer started");
        Ok(timer)
    }

    async fn start_alarm(
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
        let mut timers = self.timers.clone();
        timers.push(timer.clone());
        self.commit(timers, self.next_id + 1).await?;
        tracing::info!(kind = ?timer.kind(), due_ms, "alarm set");
        Ok(timer)
    }

    async fn cancel_ids(&mut self, ids: &[u64]) -> Result<Vec<Timer>, TimerError> {
        let (gone, kept): (Vec<Timer>, Vec<Timer>) = self
            .timers
            .iter()
            .cloned()
            .partition(|t| ids.contains(&t.id));
        self.commit(kept, self.next_id).await?;
        Ok(gone)
    }

    async fn cancel(&mut self, which: &Which) -> Result<Vec<Timer>, TimerError> {
        let picked = pick(&self.timers, which, |_| true)?;
        let (gone, kept): (Vec<Timer>, Vec<Timer>) = self
            .timers
            .iter()
            .cloned()
            .partition(|t| picked.contains(&t.id));
        self.commit(kept, self.next_id).await?;
        for t in &gone {
            tracing::info!(timer = %t.called(), "timer cancelled");
        }
        Ok(gone)
    }

    async fn change(&mut self, which: &Which, change: Change) -> Result<Timer, TimerError> {
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
        let mut timers = self.timers.clone();
        let Some(t) = timers.iter_mut().find(|t| t.id == id) else {
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
        let changed = t.clone();
        self.commit(timers, self.next_id).await?;
        Ok(changed)
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

    /// Make `timers` the state, once the file holds them: on a failed write nothing
    /// changes and the request is refused.
    async fn commit(&mut self, timers: Vec<Timer>, next_id: u64) -> Result<(), TimerError> {
        if let Err(e) = save(&self.store, &timers, next_id).await {
            tracing::error!(error = %e, "timers not saved: the change is refused");
            return Err(TimerError::Store(e.to_string()));
        }
        self.timers = timers;
        self.next_id = next_id;
        self.unflushed = false;
        Ok(())
    }

    /// Ring every running timer that is due, and take it out (the file drops it at the
    /// next write: [`TimersMsg::Flush`], or any change before it). Whether any rang.
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

    /// Write the file if timers rang since it was last written.
    async fn flush(&mut self) {
        if !std::mem::take(&mut self.unflushed) {
            return;
        }
        if let Err(e) = save(&self.store, &self.timers, self.next_id).await {
            tracing::error!(error = %e, "the timers that rang could not be taken out of the file: they may ring again at the next start");
        }
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

/// Write the file off the async threads (a write and two fsyncs: milliseconds), so the
/// delayed message and everything else keep running meanwhile.
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
}
