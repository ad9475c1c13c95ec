//! Utterances heard while a turn runs, answered after it: a short queue, bounded in length
//! and in age. Someone who says three things while hearth is busy wants the last of them
//! answered, and soon; a request heard half a minute ago is no longer one. What is dropped
//! is counted, so that the person is told ([`Pending::take_missed`]), never left waiting.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::bounded::Gauge;

/// Utterances kept while a turn runs; a further one drops the oldest.
pub(crate) const PENDING_KEPT: usize = 3;
/// An utterance older than this when its turn could come is dropped unanswered.
pub(crate) const PENDING_MAX_AGE: Duration = Duration::from_secs(20);

/// The queue: items with the instant they were heard.
#[derive(Debug)]
pub(super) struct Pending<T> {
    queue: VecDeque<(Instant, T)>,
    gauge: Gauge,
    /// Utterances dropped since the last [`Pending::take_missed`].
    missed: usize,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending {
            queue: VecDeque::with_capacity(PENDING_KEPT),
            gauge: Gauge::new("pipeline.pending", PENDING_KEPT),
            missed: 0,
        }
    }
}

impl<T> Pending<T> {
    /// Queue `item`, heard at `at`; at [`PENDING_KEPT`] the oldest is dropped (logged).
    pub(super) fn push(&mut self, at: Instant, item: T) {
        if self.queue.len() >= PENDING_KEPT {
            self.queue.pop_front();
            self.missed += 1;
            tracing::info!(
                kept = PENDING_KEPT,
                "more was said during the turn than is kept: the oldest utterance is dropped"
            );
        }
        self.queue.push_back((at, item));
        self.gauge.set(self.queue.len());
    }

    /// The oldest item heard less than [`PENDING_MAX_AGE`] before `now`; older ones are
    /// dropped (logged).
    pub(super) fn pop(&mut self, now: Instant) -> Option<T> {
        while let Some((at, item)) = self.queue.pop_front() {
            self.gauge.set(self.queue.len());
            let age = now.saturating_duration_since(at);
            if age <= PENDING_MAX_AGE {
                return Some(item);
            }
            self.missed += 1;
            tracing::info!(
                age_s = age.as_secs_f32(),
                "an utterance heard during a long turn is too old to answer: dropped"
            );
        }
        None
    }

    /// How many utterances were dropped (too many, or too old) since the last call.
    pub(super) fn take_missed(&mut self) -> usize {
        std::mem::take(&mut self.missed)
    }

    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_keeps_the_latest_few() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        for i in 0..10 {
            p.push(t0, i);
            assert!(p.len() <= PENDING_KEPT);
        }
        let answered: Vec<i32> = std::iter::from_fn(|| p.pop(t0)).collect();
        assert_eq!(answered, [7, 8, 9]);
        assert!(p.is_empty());
        // the seven dropped are counted once
        assert_eq!(p.take_missed(), 7);
        assert_eq!(p.take_missed(), 0);
    }

    #[test]
    fn an_old_utterance_is_not_answered() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.push(t0, "long ago");
        p.push(t0 + Duration::from_secs(15), "a while ago");
        p.push(t0 + Duration::from_secs(25), "just now");
        let now = t0 + Duration::from_secs(26);
        assert_eq!(p.pop(now), Some("a while ago"));
        assert_eq!(p.take_missed(), 1, "long ago");
        assert_eq!(p.pop(now + PENDING_MAX_AGE), None, "1 s past the limit");
        assert!(p.is_empty());
        assert_eq!(p.take_missed(), 1, "just now, too late");
    }
}
