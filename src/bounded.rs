//! Bounded containers. A daemon runs for months: every map it fills from what happens (a
//! session, a tool set, a sentence) keeps only its last few entries, the limit stated beside
//! it and in ARCHITECTURE.md.

use std::hash::Hash;
use std::num::NonZeroUsize;

/// A map that keeps the `cap` entries used last (at least one), forgetting the least
/// recently used.
pub fn lru<K: Hash + Eq, V>(cap: usize) -> lru::LruCache<K, V> {
    lru::LruCache::new(NonZeroUsize::new(cap).unwrap_or(NonZeroUsize::MIN))
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_keeps_the_entries_used_last() {
        let mut m = super::lru(2);
        m.put("a", 1);
        m.put("b", 2);
        m.get(&"a");
        m.put("c", 3);
        assert_eq!(m.len(), 2);
        assert!(m.contains(&"a") && m.contains(&"c") && !m.contains(&"b"));
        // a limit of 0 keeps one
        let mut one = super::lru(0);
        one.put(1, ());
        one.put(2, ());
        assert_eq!(one.len(), 1);
    }
}
