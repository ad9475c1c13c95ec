//! Ringing: what hearth does when a timer is done. The ringer hears every firing
//! ([`TimersMsg::Subscribe`]), publishes it (`TimerFinished` on D-Bus) and says it in the
//! room the timer was set in ("Your pasta timer is done."), through the announcer: between
//! turns, never over a reply. It says it again every [`Ringing::every`] until the timer is
//! silenced ("stop", "stop the timer": [`TimersMsg::Silence`]) or it has been said
//! [`Ringing::times`] times. Each announcement opens the follow-up window, so "stop" needs
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
/// runs until the timers actor is gone.
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
    tokio::spawn(async move {
        while let Some(fired) = rx.recv().await {
            crate::events::publish(
                events.as_ref(),
                Event::TimerFinished {
                    kind: fired.timer.kind().as_str().into(),
                    name: fired.timer.what(),
                    room: fired.timer.room.clone().unwrap_or_default(),
                    late_s: fired.late_ms / 1000,
                },
            );
            let span = tracing::info_span!("ring", timer = %fired.timer.called());
            tokio::spawn(ring(timers.clone(), announcer.clone(), fired, ringing).instrument(span));
        }
    })
}

/// Say one timer's ring until it is silenced or rung out.
async fn ring(
    timers: ActorRef<TimersMsg>,
    announcer: Option<Announcer>,
    fired: Fired,
    ringing: Ringing,
) {
    let id = fired.timer.id;
    let text = ring_text(&fired);
    let room = fired.timer.room.clone().unwrap_or_default();
    for i in 0..ringing.times {
        if i > 0 {
            tokio::time::sleep(ringing.every).await;
            let still = ractor::call!(timers, TimersMsg::Ringing)
                .is_ok_and(|now| now.iter().any(|t| t.id == id));
            if !still {
                tracing::info!(times = i, "timer silenced");
                return;
            }
        }
        let Some(announcer) = &announcer else {
            tracing::info!(%text, "a timer rang with no speaker to say it on");
            break;
        };
        match announcer.announce(&text, &room) {
            Ok(_) => {}
            // a room no speaker is in any more (a satellite removed): say it everywhere
            Err(AnnounceError::NoRoom { .. }) => {
                if let Err(e) = announcer.announce(&text, "") {
                    tracing::warn!(error = %e, "a timer rang and could not be said");
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "a timer rang and could not be said");
                break;
            }
        }
    }
    let _ = timers.cast(TimersMsg::Rung(id));
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
    }
}
