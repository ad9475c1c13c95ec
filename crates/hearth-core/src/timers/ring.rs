//! Ringing: what hearth does when a timer is done. The ringer hears every firing
//! ([`TimersMsg::Subscribe`]), publishes it (`TimerFinished` on D-Bus) and says it in the
//! room the timer was set in ("Your pasta timer is done."), through the announcer: between
//! turns, never over a reply. It says it again every [`Ringing::every`] until the timer is
//! silenced ("stop", "stop the timer": [`TimersMsg::Silence`]) or it has been said
//! [`Ringing::times`] times; timers ringing in one room share one sentence a round. Each announcement opens the follow-up window, so "stop" needs
//! no wake word.

use std::time::Duration;

use ractor::ActorRef;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Fired, Kind, TimersMsg};
use crate::announce::{AnnounceError, Announcer};
use crate::events::{Event, Events};
use crate::intent::{say_length, say_time};

/// How a timer rings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ringing {
    /// Between one saying and the next.
    pub every: Duration,
    /// How many times at most.
    pub times: u32,
}

impl Default for Ringing {
    /// Every 15 seconds, 8 times: about two minutes.
    fn default() -> Self {
        Ringing {
            every: Duration::from_secs(15),
            times: 8,
        }
    }
}

/// What hearth says when `fired` rings: "Your pasta timer is done.", or, a minute or
/// more late (it fell due while hearth was down), "Your pasta timer finished 3 minutes
/// ago."
pub fn ring_text(fired: &Fired) -> String {
    let t = &fired.timer;
    let late = (fired.late_ms >= 60_000)
        .then(|| say_length(Duration::from_secs(fired.late_ms / 60_000 * 60)));
    match (t.kind(), late) {
        (Kind::Reminder, None) => format!("Reminder: {}.", t.reminder.as_deref().unwrap_or("")),
        (Kind::Reminder, Some(ago)) => format!(
            "A reminder from {ago} ago: {}.",
            t.reminder.as_deref().unwrap_or("")
        ),
        (Kind::Alarm, late) => {
            let at = t.alarm.map(|a| say_time(a.time())).unwrap_or_default();
            match late {
                None => format!("It's {at}: your alarm."),
                Some(ago) => format!("Your {at} alarm went off {ago} ago."),
            }
        }
        (Kind::Timer, late) => {
            let called = match &t.name {
                Some(n) => format!("{n} timer"),
                None => "timer".to_string(),
            };
            match late {
                None => format!("Your {called} is done."),
                Some(ago) => format!("Your {called} finished {ago} ago."),
            }
        }
    }
}

/// Ring every timer `timers` fires, on `announcer`'s speakers, publishing each on `events`;
/// runs until the timers actor is gone. One task: a timer done is said at once; then, every
/// [`Ringing::every`], each room hears one sentence for all that still ring there ("Your tea
/// timer and your egg timer are done."), so five timers done together cost the room what
/// one does.
pub fn spawn_ringer(
    timers: ActorRef<TimersMsg>,
    announcer: Option<Announcer>,
    events: Option<Events>,
    ringing: Ringing,
) -> tokio::task::JoinHandle<()> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    if timers.cast(TimersMsg::Subscribe(tx)).is_err() {
        tracing::warn!("the timers actor is gone: no timer will ring");
    }
    let span = tracing::info_span!("ringer");
    tokio::spawn(
        async move {
            let mut bell = Bell {
                timers,
                announcer,
                ringing,
                rung: Vec::new(),
            };
            let mut round = tokio::time::interval(ringing.every);
            round.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    fired = rx.recv() => {
                        let Some(fired) = fired else { break };
                        crate::events::publish(
                            events.as_ref(),
                            Event::TimerFinished {
                                kind: fired.timer.kind().as_str().into(),
                                name: fired.timer.what(),
                                room: fired.timer.room.clone().unwrap_or_default(),
                                late_s: fired.late_ms / 1000,
                            },
                        );
                        bell.first(fired);
                        round.reset();
                    }
                    _ = round.tick(), if !bell.rung.is_empty() => bell.again().await,
                }
            }
        }
        .instrument(span),
    )
}

/// The ringer's state: the timers ringing and how often each has been said.
struct Bell {
    timers: ActorRef<TimersMsg>,
    announcer: Option<Announcer>,
    ringing: Ringing,
    rung: Vec<(Fired, u32)>,
}

impl Bell {
    /// A timer done: said at once, in its room.
    /// With no speaker to say it on, it is done and nothing rings.
    fn first(&mut self, fired: Fired) {
        let room = fired.timer.room.clone().unwrap_or_default();
        if self.announcer.is_none() {
            tracing::info!(timer = %fired.timer.called(), "done, with no speaker to ring on");
            let _ = self.timers.cast(TimersMsg::Rung(fired.timer.id));
            return;
        }
        tracing::info!(timer = %fired.timer.called(), %room, "ringing");
        self.say(&ring_text(&fired), &room);
        self.rung.push((fired, 1));
    }

    /// Another round: what still rings (not silenced, not rung out), one sentence a room.
    async fn again(&mut self) {
        let still: Vec<u64> = ractor::call!(self.timers, TimersMsg::Ringing)
            .map(|now| now.iter().map(|t| t.id).collect())
            .unwrap_or_default();
        let times = self.ringing.times;
        let (done, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.rung)
            .into_iter()
            .partition(|(f, said)| !still.contains(&f.timer.id) || *said >= times);
        for (f, said) in done {
            tracing::info!(timer = %f.timer.called(), times = said, "no longer ringing");
            let _ = self.timers.cast(TimersMsg::Rung(f.timer.id));
        }
        self.rung = kept;
        let mut rooms: Vec<String> = self
            .rung
            .iter()
            .map(|(f, _)| f.timer.room.clone().unwrap_or_default())
            .collect();
        rooms.sort();
        rooms.dedup();
        for room in rooms {
            let here: Vec<&Fired> = self
                .rung
                .iter()
                .filter(|(f, _)| f.timer.room.as_deref().unwrap_or_default() == room)
                .map(|(f, _)| f)
                .collect();
            let text = together(&here);
            self.say(&text, &room);
        }
        for (_, said) in &mut self.rung {
            *said += 1;
        }
    }

    /// Say `text` in `room` (a room no speaker is in any more: everywhere).
    fn say(&self, text: &str, room: &str) {
        let Some(announcer) = &self.announcer else {
            tracing::info!(%text, "a ring with no speaker to say it on");
            return;
        };
        let said = match announcer.announce(text, room) {
            Err(AnnounceError::NoRoom { .. }) => announcer.announce(text, ""),
            other => other,
        };
        if let Err(e) = said {
            tracing::warn!(error = %e, "a ring could not be said");
        }
    }
}

/// One sentence for every timer ringing in a room: the one's own ring, or "Your tea timer
/// and your 7:00 AM alarm are going off."
fn together(ringing: &[&Fired]) -> String {
    match ringing {
        [one] => ring_text(one),
        many => {
            let each: Vec<String> = many.iter().map(|f| your(&f.timer)).collect();
            let list = match each.split_last() {
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            format!("{} are going off.", super::capitalised(&list))
        }
    }
}

/// "your tea timer", "your timer", "your 7:00 AM alarm", "your reminder to call mum".
fn your(t: &super::Timer) -> String {
    match (t.kind(), &t.alarm, &t.name) {
        (Kind::Reminder, _, _) => {
            format!("your reminder to {}", t.reminder.as_deref().unwrap_or(""))
        }
        (Kind::Alarm, Some(a), _) => format!("your {} alarm", say_time(a.time())),
        (_, _, Some(n)) => format!("your {n} timer"),
        _ => "your timer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timers::{Run, Timer};

    fn fired(name: Option<&str>, late_ms: u64) -> Fired {
        Fired {
            timer: Timer {
                id: 1,
                name: name.map(str::to_string),
                total_ms: 60_000,
                run: Run::Paused { left_ms: 0 },
                room: None,
                alarm: None,
                reminder: None,
            },
            late_ms,
        }
    }

    #[test]
    fn the_ring_says_which_timer_and_how_late() {
        assert_eq!(
            ring_text(&fired(Some("pasta"), 3)),
            "Your pasta timer is done."
        );
        assert_eq!(ring_text(&fired(None, 59_999)), "Your timer is done.");
        assert_eq!(
            ring_text(&fired(Some("pasta"), 3 * 60_000 + 20_000)),
            "Your pasta timer finished 3 minutes ago."
        );
        let mut alarm = fired(None, 0);
        alarm.timer.alarm = Some(crate::timers::Alarm::new(
            jiff::civil::time(7, 0, 0, 0),
            crate::timers::Days::Weekdays,
        ));
        assert_eq!(ring_text(&alarm), "It's 7:00 AM: your alarm.");
        alarm.late_ms = 120_000;
        assert_eq!(
            ring_text(&alarm),
            "Your 7:00 AM alarm went off 2 minutes ago."
        );
        let mut reminder = fired(None, 0);
        reminder.timer.reminder = Some("call mum".into());
        assert_eq!(ring_text(&reminder), "Reminder: call mum.");
        let tea = fired(Some("tea"), 0);
        assert_eq!(together(&[&tea]), "Your tea timer is done.");
        assert_eq!(
            together(&[&tea, &fired(None, 0), &reminder]),
            "Your tea timer, your timer and your reminder to call mum are going off."
        );
    }
}
