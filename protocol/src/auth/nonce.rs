//! Nonces: fresh ones for the runner, and the server's replay cache.
//!
//! A replay of the same request is refused for its stale timestamp once the validity
//! window has passed, but SPEC.md 5.5 and 5.6 say more: "The nonce is single use". The same
//! nonce with a fresh timestamp is a new signature, which only a cache that still holds
//! the nonce refuses. So a nonce is remembered for the window, or for a longer `retention`
//! ([`ReplayCache::remembering_for`]) from its use, whichever ends later: memory is bounded
//! by that time times the request rate, and a hard `capacity` caps it even under a flood:
//! when full, new nonces are refused (never evicted, since eviction would let a replay
//! through).
//!
//! Each `(client id, nonce)` pair is remembered as its SHA-256 digest, so an entry costs
//! the same few dozen bytes whatever the client sends: SPEC.md gives the nonce no length,
//! and a client sending 64 KiB nonces must not make the capacity a gigabyte budget.

use std::collections::{HashMap, VecDeque};

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};

/// What the cache remembers of a `(client id, nonce)` pair.
type Key = [u8; 32];

/// A fresh random nonce of 16 alphanumeric characters.
pub fn fresh_nonce() -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(16)
        .map(char::from)
        .collect()
}

/// What [`ReplayCache::check_and_insert`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceVerdict {
    /// First use: recorded.
    Fresh,
    /// Seen before within the window.
    Reused,
    /// The cache is at capacity; the request must be refused.
    Full,
}

/// Remembers `(client id, nonce)` pairs until their timestamp leaves the window.
#[derive(Debug)]
pub struct ReplayCache {
    window_ms: u64,
    retention_ms: u64,
    capacity: usize,
    seen: HashMap<Key, u64>,
    expiries: VecDeque<(u64, Key)>,
}

impl ReplayCache {
    /// A cache for a `window_ms` validity window holding at most `capacity` nonces.
    pub fn new(window_ms: u64, capacity: usize) -> ReplayCache {
        ReplayCache {
            window_ms,
            retention_ms: 0,
            capacity,
            seen: HashMap::new(),
            expiries: VecDeque::new(),
        }
    }

    /// The same cache, remembering each nonce for at least `retention_ms` after its use as
    /// well as while its timestamp is inside the window.
    pub fn remembering_for(mut self, retention_ms: u64) -> ReplayCache {
        self.retention_ms = retention_ms;
        self
    }

    /// Records a nonce presented with `timestamp_ms` at time `now_ms`, unless it was seen.
    pub fn check_and_insert(
        &mut self,
        client_id: &str,
        nonce: &str,
        timestamp_ms: u64,
        now_ms: u64,
    ) -> NonceVerdict {
        self.prune(now_ms);
        let key = key_of(client_id, nonce);
        if self.holds(&key, now_ms) {
            return NonceVerdict::Reused;
        }
        if self.seen.len() >= self.capacity {
            return NonceVerdict::Full;
        }
        let expiry = timestamp_ms
            .saturating_add(self.window_ms)
            .max(now_ms.saturating_add(self.retention_ms.max(1)));
        self.seen.insert(key, expiry);
        // Expiries arrive nearly in order; a late one only delays pruning of later ones.
        self.expiries.push_back((expiry, key));
        NonceVerdict::Fresh
    }

    /// Whether a nonce is remembered, without recording it: the check of a server that
    /// records in a second step (the reference server's race faults).
    pub fn contains(&mut self, client_id: &str, nonce: &str, now_ms: u64) -> bool {
        self.prune(now_ms);
        self.holds(&key_of(client_id, nonce), now_ms)
    }

    /// Whether `key` is remembered and not yet expired: pruning goes in insertion order,
    /// so an entry inserted behind a later expiry outlives its own until it is looked up.
    fn holds(&self, key: &Key, now_ms: u64) -> bool {
        self.seen.get(key).is_some_and(|expiry| *expiry > now_ms)
    }

    /// How many nonces are remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether no nonce is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    fn prune(&mut self, now_ms: u64) {
        while let Some((expiry, _)) = self.expiries.front() {
            if *expiry > now_ms {
                break;
            }
            // A key used again after it expired holds a later expiry of its own.
            if let Some((_, key)) = self.expiries.pop_front()
                && !self.holds(&key, now_ms)
            {
                self.seen.remove(&key);
            }
        }
    }
}

/// The digest of a pair. The client id is length-prefixed, so no id and nonce split of
/// the same bytes (`ab` + `c`, `a` + `bc`) share a key.
fn key_of(client_id: &str, nonce: &str) -> Key {
    let mut hasher = Sha256::new();
    hasher.update((client_id.len() as u64).to_be_bytes());
    hasher.update(client_id.as_bytes());
    hasher.update(nonce.as_bytes());
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retained_nonce_is_caught_after_its_timestamp_left_the_window() {
        let mut cache = ReplayCache::new(60_000, 10).remembering_for(600_000);
        assert_eq!(
            cache.check_and_insert("c", "n", 1_000, 58_000),
            NonceVerdict::Fresh
        );
        // A fresh timestamp, 62 s after the first one: the window alone has forgotten it.
        assert_eq!(
            cache.check_and_insert("c", "n", 63_000, 63_000),
            NonceVerdict::Reused
        );
        assert_eq!(
            cache.check_and_insert("c", "n", 700_000, 700_000),
            NonceVerdict::Fresh
        );
        let mut window_only = ReplayCache::new(60_000, 10);
        window_only.check_and_insert("c", "n", 1_000, 58_000);
        assert_eq!(
            window_only.check_and_insert("c", "n", 63_000, 63_000),
            NonceVerdict::Fresh
        );
    }

    /// A nonce whose expiry comes before an earlier entry's is forgotten at its own expiry,
    /// though pruning goes in insertion order, and is remembered anew when used again.
    #[test]
    fn an_expiry_inserted_behind_a_later_one_still_ends_on_time() {
        let mut cache = ReplayCache::new(60_000, 10);
        cache.check_and_insert("c", "late", 10_000, 10_000);
        cache.check_and_insert("c", "early", 1_000, 10_000);
        assert_eq!(
            cache.check_and_insert("c", "early", 62_000, 62_000),
            NonceVerdict::Fresh
        );
        assert_eq!(
            cache.check_and_insert("c", "late", 10_000, 69_000),
            NonceVerdict::Reused
        );
        assert_eq!(
            cache.check_and_insert("c", "early", 62_000, 70_500),
            NonceVerdict::Reused
        );
    }

    #[test]
    fn reused_nonce_is_caught_within_the_window() {
        let mut cache = ReplayCache::new(60_000, 10);
        assert_eq!(
            cache.check_and_insert("c", "n", 1_000, 1_000),
            NonceVerdict::Fresh
        );
        assert_eq!(
            cache.check_and_insert("c", "n", 1_000, 30_000),
            NonceVerdict::Reused
        );
        assert_eq!(
            cache.check_and_insert("other", "n", 1_000, 30_000),
            NonceVerdict::Fresh
        );
    }

    #[test]
    fn memory_is_released_after_the_window() {
        let mut cache = ReplayCache::new(60_000, 10);
        cache.check_and_insert("c", "n", 1_000, 1_000);
        cache.check_and_insert("c", "m", 1_000, 1_000);
        assert_eq!(cache.len(), 2);
        cache.check_and_insert("c", "k", 70_000, 70_000);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn full_cache_refuses_rather_than_forgets() {
        let mut cache = ReplayCache::new(60_000, 2);
        cache.check_and_insert("c", "a", 0, 0);
        cache.check_and_insert("c", "b", 0, 0);
        assert_eq!(cache.check_and_insert("c", "c", 0, 0), NonceVerdict::Full);
        assert_eq!(cache.check_and_insert("c", "a", 0, 0), NonceVerdict::Reused);
    }

    #[test]
    fn pairs_that_join_to_the_same_text_are_different_nonces() {
        let mut cache = ReplayCache::new(60_000, 10);
        assert_eq!(cache.check_and_insert("ab", "c", 0, 0), NonceVerdict::Fresh);
        assert_eq!(cache.check_and_insert("a", "bc", 0, 0), NonceVerdict::Fresh);
        assert_eq!(
            cache.check_and_insert("a", "bc", 0, 0),
            NonceVerdict::Reused
        );
    }

    #[test]
    fn fresh_nonces_differ() {
        assert_ne!(fresh_nonce(), fresh_nonce());
        assert_eq!(fresh_nonce().len(), 16);
    }
}
