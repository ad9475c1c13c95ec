//! Bounded containers, and their levels. A daemon runs for months: every map it fills from
//! what happens (a session, a tool set, a sentence) is a [`Lru`] that keeps only its last few
//! entries, the limit stated beside it and in docs/architecture.md; every queue reports its length
//! through a [`Gauge`]. [`levels`] reads them all, so a soak test (and the D-Bus face's
//! `Bounds` property) can check that none is over its limit.

use std::borrow::Borrow;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// How full one bounded container is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Level {
    /// What it holds (`agent.sessions`, `pipeline.pending`, …).
    pub name: &'static str,
    /// Entries now.
    pub len: usize,
    /// Its limit.
    pub cap: usize,
}

#[derive(Debug)]
struct GaugeCell {
    name: &'static str,
    cap: usize,
    len: AtomicUsize,
}

/// Every gauge alive in the process (dead ones are pruned as new ones come).
static GAUGES: Mutex<Vec<Weak<GaugeCell>>> = Mutex::new(Vec::new());

/// The live length of one bounded container, listed by [`levels`] while it exists.
#[derive(Debug, Clone)]
pub struct Gauge(Arc<GaugeCell>);

impl Gauge {
    pub fn new(name: &'static str, cap: usize) -> Gauge {
        let cell = Arc::new(GaugeCell {
            name,
            cap,
            len: AtomicUsize::new(0),
        });
        let mut all = GAUGES.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|g| g.strong_count() > 0);
        all.push(Arc::downgrade(&cell));
        Gauge(cell)
    }

    pub fn set(&self, len: usize) {
        self.0.len.store(len, Ordering::Relaxed);
    }
}

/// The level of every bounded container alive now, by name.
pub fn levels() -> Vec<Level> {
    let all = GAUGES.lock().unwrap_or_else(|e| e.into_inner());
    let mut out: Vec<Level> = all
        .iter()
        .filter_map(Weak::upgrade)
        .map(|g| Level {
            name: g.name,
            len: g.len.load(Ordering::Relaxed),
            cap: g.cap,
        })
        .collect();
    out.sort_by_key(|l| l.name);
    out
}

/// A map that keeps the `cap` entries used last (at least one), forgetting the least
/// recently used; its length is a [`Gauge`].
#[derive(Debug)]
pub struct Lru<K: Hash + Eq, V> {
    map: lru::LruCache<K, V>,
    gauge: Gauge,
}

impl<K: Hash + Eq, V> Lru<K, V> {
    pub fn new(name: &'static str, cap: usize) -> Self {
        let cap = NonZeroUsize::new(cap).unwrap_or(NonZeroUsize::MIN);
        Lru {
            map: lru::LruCache::new(cap),
            gauge: Gauge::new(name, cap.get()),
        }
    }

    /// The value, which becomes the most recently used.
    pub fn get<Q>(&mut self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(k)
    }

    /// The value, without marking it used.
    pub fn peek<Q>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.peek(k)
    }

    pub fn contains<Q>(&self, k: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains(k)
    }

    /// Entries held (the tests': the gauge is what the daemon reads).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Keep `v` as `k`'s (the least recently used goes when full).
    pub fn put(&mut self, k: K, v: V) {
        self.map.put(k, v);
        self.gauge.set(self.map.len());
    }

    pub fn pop<Q>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let v = self.map.pop(k);
        self.gauge.set(self.map.len());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_the_entries_used_last() {
        let mut m = Lru::new("test.lru", 2);
        m.put("a", 1);
        m.put("b", 2);
        m.get(&"a");
        m.put("c", 3);
        assert_eq!(m.len(), 2);
        assert!(m.contains(&"a") && m.contains(&"c") && !m.contains(&"b"));
        // a limit of 0 keeps one
        let mut one = Lru::new("test.one", 0);
        one.put(1, ());
        one.put(2, ());
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn levels_follow_the_containers_alive() {
        let mut m = Lru::new("test.levels", 3);
        for i in 0..10 {
            m.put(i, ());
        }
        let level = |name| levels().into_iter().find(|l| l.name == name);
        assert_eq!(
            level("test.levels"),
            Some(Level {
                name: "test.levels",
                len: 3,
                cap: 3
            })
        );
        m.pop(&9);
        assert_eq!(level("test.levels").map(|l| l.len), Some(2));
        let queue = Gauge::new("test.queue", 8);
        queue.set(5);
        assert_eq!(level("test.queue").map(|l| (l.len, l.cap)), Some((5, 8)));
        drop((m, queue));
        assert_eq!(level("test.levels"), None);
        assert_eq!(level("test.queue"), None);
    }
}
