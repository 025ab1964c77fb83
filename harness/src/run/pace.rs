//! Pacing of rate-limited methods: a token bucket per credential, filled at the target
//! file's `[limits]` rate, so a run never exceeds what the target says it allows.
//!
//! SPEC.md section 8 gives the sustained rate of `private/get_transaction_log` but not what
//! it is counted against; the harness paces per credential (token or client id), which is
//! what the reference server enforces. The rate-limit probe is not paced.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::target_file::RateLimits;

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Token buckets per credential.
pub(crate) struct Pacer {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Pacer {
    pub(crate) fn new(limits: &RateLimits) -> Pacer {
        Pacer {
            per_second: limits.transaction_log_per_second,
            burst: f64::from(limits.transaction_log_burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Waits until `credential` may send one more paced request.
    pub(crate) async fn wait(&self, credential: &str) {
        loop {
            let delay = {
                let mut buckets = self
                    .buckets
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                let now = Instant::now();
                let bucket = buckets.entry(credential.to_owned()).or_insert(Bucket {
                    tokens: self.burst,
                    updated: now,
                });
                let refill = now.duration_since(bucket.updated).as_secs_f64() * self.per_second;
                bucket.tokens = (bucket.tokens + refill).min(self.burst);
                bucket.updated = now;
                if bucket.tokens >= 1.0 {
                    bucket.tokens -= 1.0;
                    return;
                }
                Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_second)
            };
            tokio::time::sleep(delay).await;
        }
    }
}
