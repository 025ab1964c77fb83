//! The `private/get_transaction_log` rate limit (SPEC.md section 8): a token bucket per
//! access token, or per client id when the request authenticated with Basic or a signed
//! header, refilled at `transaction_log_per_second` up to `transaction_log_burst`.
//!
//! Time comes from the server's [`Clock`](crate::auth::clock::Clock) as milliseconds, so a
//! test with a manual clock can drain a bucket and refill it without sleeping.

use std::collections::HashMap;

use crate::target_file::RateLimits;

/// Buckets kept before full ones are forgotten: a full bucket is the same as a new one.
const PRUNE_AT: usize = 10_000;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    updated_ms: u64,
}

/// Token buckets by key.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    per_ms: f64,
    burst: f64,
    buckets: HashMap<String, Bucket>,
}

impl RateLimiter {
    pub(crate) fn new(limits: &RateLimits) -> RateLimiter {
        RateLimiter {
            per_ms: limits.transaction_log_per_second.max(0.0) / 1_000.0,
            // A burst of 0 would refuse everything; one request is always allowed.
            burst: f64::from(limits.transaction_log_burst.max(1)),
            buckets: HashMap::new(),
        }
    }

    /// Takes one token from `key`'s bucket; false when it is empty.
    pub(crate) fn admit(&mut self, key: &str, now_ms: u64) -> bool {
        if self.buckets.len() >= PRUNE_AT {
            self.prune(now_ms);
        }
        let (per_ms, burst) = (self.per_ms, self.burst);
        let bucket = self.buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: burst,
            updated_ms: now_ms,
        });
        let elapsed = now_ms.saturating_sub(bucket.updated_ms) as f64;
        bucket.tokens = (bucket.tokens + elapsed * per_ms).min(burst);
        bucket.updated_ms = now_ms.max(bucket.updated_ms);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn prune(&mut self, now_ms: u64) {
        let (per_ms, burst) = (self.per_ms, self.burst);
        self.buckets.retain(|_, bucket| {
            let elapsed = now_ms.saturating_sub(bucket.updated_ms) as f64;
            bucket.tokens + elapsed * per_ms < burst
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill_at_the_rate() {
        let mut limiter = RateLimiter::new(&RateLimits {
            transaction_log_per_second: 1.0,
            transaction_log_burst: 2,
            ..RateLimits::default()
        });
        assert!(limiter.admit("a", 0));
        assert!(limiter.admit("a", 0));
        assert!(!limiter.admit("a", 500));
        assert!(limiter.admit("b", 500));
        assert!(limiter.admit("a", 1_000));
        assert!(!limiter.admit("a", 1_000));
    }
}
