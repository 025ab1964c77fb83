//! The `private/get_transaction_log` rate limit (SPEC.md section 8): a token bucket per
//! access token, or per client id when the request authenticated with Basic or a signed
//! header, refilled at `transaction_log_per_second` up to `transaction_log_burst`.
//!
//! Time comes from the server's [`Clock`](harness_protocol::auth::clock::Clock) as milliseconds, so a
//! test with a manual clock can drain a bucket and refill it without sleeping.

use std::collections::HashMap;

use harness_model::target_file::RateLimits;
use harness_protocol::token_bucket::{Rate, TokenBucket};

/// Buckets kept before full ones are forgotten: a full bucket is the same as a new one.
const PRUNE_AT: usize = 10_000;

/// Token buckets by key.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    rate: Rate,
    buckets: HashMap<String, TokenBucket>,
}

impl RateLimiter {
    /// The limiter of `limits`; with `half_rate` (the `txlog-refill-half-rate` fault) its
    /// buckets refill at half the stated rate.
    pub(crate) fn new(limits: &RateLimits, half_rate: bool) -> RateLimiter {
        let per_second = limits.transaction_log_per_second.max(0.0);
        let per_second = if half_rate {
            per_second / 2.0
        } else {
            per_second
        };
        RateLimiter {
            rate: Rate::new(per_second, limits.transaction_log_burst),
            buckets: HashMap::new(),
        }
    }

    /// Whether `key`'s bucket holds a token, without taking it: the check the
    /// `race-bucket` fault makes before it puts the take off.
    pub(crate) fn has_token(&mut self, key: &str, now_ms: u64) -> bool {
        let rate = self.rate;
        self.buckets
            .get(key)
            .is_none_or(|bucket| rate.has_token_at(bucket, now_ms as f64))
    }

    /// Takes one token from `key`'s bucket; false when it is empty.
    pub(crate) fn admit(&mut self, key: &str, now_ms: u64) -> bool {
        let now_ms = now_ms as f64;
        if self.buckets.len() >= PRUNE_AT {
            let rate = self.rate;
            self.buckets
                .retain(|_, bucket| !rate.is_full_at(bucket, now_ms));
        }
        let bucket = self
            .buckets
            .entry(key.to_owned())
            .or_insert_with(|| self.rate.full(now_ms));
        self.rate.take(bucket, now_ms, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill_at_the_rate() {
        let mut limiter = RateLimiter::new(
            &RateLimits {
                transaction_log_per_second: 1.0,
                transaction_log_burst: 2,
                ..RateLimits::default()
            },
            false,
        );
        assert!(limiter.admit("a", 0));
        assert!(limiter.admit("a", 0));
        assert!(!limiter.admit("a", 500));
        assert!(limiter.admit("b", 500));
        assert!(limiter.admit("a", 1_000));
        assert!(!limiter.admit("a", 1_000));
    }

    #[test]
    fn half_rate_refills_a_token_in_two_seconds() {
        let limits = RateLimits {
            transaction_log_per_second: 1.0,
            transaction_log_burst: 1,
            ..RateLimits::default()
        };
        let mut limiter = RateLimiter::new(&limits, true);
        assert!(limiter.admit("a", 0));
        assert!(!limiter.admit("a", 1_500));
        assert!(limiter.admit("a", 2_000));
    }
}
