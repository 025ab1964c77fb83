//! The token bucket behind SPEC.md section 8's rate of `private/get_transaction_log`: a
//! bucket holds at most the burst, fills at the sustained rate, and a request takes one
//! token. The reference server's limiter (`serve/rate.rs`), the runner's pacer
//! (`run/pace.rs`) and the judge's pacing check (`judge/pace.rs`) all count with it, so
//! that the three agree on what a burst and a rate allow.
//!
//! Time is milliseconds as `f64` from an origin each user picks (the server's clock, the
//! pacer's start); a bucket never goes back in time.

/// A sustained rate and the burst above it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    per_ms: f64,
    burst: f64,
}

impl Rate {
    /// `per_second` tokens a second up to `burst`; a burst of 0 would refuse everything, so
    /// one token is always allowed.
    pub fn new(per_second: f64, burst: u32) -> Rate {
        Rate {
            per_ms: per_second / 1_000.0,
            burst: f64::from(burst.max(1)),
        }
    }

    /// Tokens a second.
    pub fn per_second(&self) -> f64 {
        self.per_ms * 1_000.0
    }

    /// A full bucket at `now_ms`.
    pub fn full(&self, now_ms: f64) -> TokenBucket {
        TokenBucket {
            tokens: self.burst,
            updated_ms: now_ms,
        }
    }

    /// The tokens `bucket` holds at `now_ms` (at least its last update).
    fn tokens_at(&self, bucket: &TokenBucket, now_ms: f64) -> f64 {
        let elapsed_ms = (now_ms - bucket.updated_ms).max(0.0);
        (bucket.tokens + elapsed_ms * self.per_ms).min(self.burst)
    }

    /// Whether `bucket` is full again at `now_ms`, so that a new one would do as well.
    pub fn is_full_at(&self, bucket: &TokenBucket, now_ms: f64) -> bool {
        self.tokens_at(bucket, now_ms) >= self.burst
    }

    /// Whether `bucket` holds a whole token at `now_ms`, taking nothing: the question of a
    /// caller that must take from several buckets at once or from none.
    pub fn has_token_at(&self, bucket: &TokenBucket, now_ms: f64) -> bool {
        self.tokens_at(bucket, now_ms) >= 1.0
    }

    /// Fills `bucket` for the time since its last update.
    pub fn refill(&self, bucket: &mut TokenBucket, now_ms: f64) {
        bucket.tokens = self.tokens_at(bucket, now_ms);
        bucket.updated_ms = bucket.updated_ms.max(now_ms);
    }

    /// Fills `bucket` to `now_ms` and takes a token when it would hold one `slack_ms` later
    /// (0 for exact counting); false, taking nothing, when it would not.
    pub fn take(&self, bucket: &mut TokenBucket, now_ms: f64, slack_ms: f64) -> bool {
        self.refill(bucket, now_ms);
        if bucket.tokens + slack_ms * self.per_ms >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Milliseconds until `bucket`, filled to its last update, holds a whole token.
    pub fn wait_ms(&self, bucket: &TokenBucket) -> f64 {
        ((1.0 - bucket.tokens) / self.per_ms).max(0.0)
    }
}

/// The tokens left and when they were counted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenBucket {
    tokens: f64,
    updated_ms: f64,
}

impl TokenBucket {
    /// The tokens held at the last update (negative while requests sent without waiting
    /// are owed).
    pub fn tokens(&self) -> f64 {
        self.tokens
    }

    /// Takes a token that is not there (a request sent without waiting), owing at most
    /// `most_owed` tokens.
    pub fn owe(&mut self, most_owed: f64) {
        self.tokens = (self.tokens - 1.0).max(-most_owed);
    }

    /// Keeps no whole token, nor any part of one, owing what it owed: what a server that
    /// has just refused a request for its rate holds.
    pub fn empty(&mut self) {
        self.tokens = self.tokens.min(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario: its name, tokens a second, the burst, then each take as (now in ms,
    /// slack in ms, whether a token was taken). The bucket starts full at the first take.
    type Scenario = (&'static str, f64, u32, &'static [(f64, f64, bool)]);

    const SCENARIOS: &[Scenario] = &[
        (
            "a burst then one token per interval",
            1.0,
            2,
            &[
                (0.0, 0.0, true),
                (0.0, 0.0, true),
                (0.0, 0.0, false),
                (500.0, 0.0, false),
                (1_000.0, 0.0, true),
                (1_000.0, 0.0, false),
            ],
        ),
        (
            "slack takes a token that is almost there",
            1.0,
            1,
            &[
                (1_000.0, 0.0, true),
                (1_700.0, 250.0, false),
                (1_800.0, 250.0, true),
            ],
        ),
        (
            "time never runs back",
            1.0,
            1,
            &[
                (1_000.0, 0.0, true),
                (0.0, 0.0, false),
                (1_999.0, 0.0, false),
            ],
        ),
        (
            "a burst of zero allows one",
            1.0,
            0,
            &[(0.0, 0.0, true), (0.0, 0.0, false)],
        ),
    ];

    #[test]
    fn takes_follow_the_burst_and_the_rate() {
        for (name, per_second, burst, takes) in SCENARIOS {
            let rate = Rate::new(*per_second, *burst);
            let mut bucket = rate.full(takes[0].0);
            let taken: Vec<bool> = takes
                .iter()
                .map(|(now_ms, slack_ms, _)| rate.take(&mut bucket, *now_ms, *slack_ms))
                .collect();
            let expected: Vec<bool> = takes.iter().map(|take| take.2).collect();
            assert_eq!(taken, expected, "{name}");
        }
    }

    #[test]
    fn a_debt_is_bounded_and_waited_out() {
        let rate = Rate::new(1.0, 1);
        let mut bucket = rate.full(0.0);
        assert!(rate.take(&mut bucket, 0.0, 0.0));
        assert_eq!(rate.wait_ms(&bucket), 1_000.0);
        bucket.owe(1.5);
        bucket.owe(1.5);
        assert_eq!(rate.wait_ms(&bucket), 2_500.0);
        assert!(!rate.is_full_at(&bucket, 2_000.0));
        assert!(rate.is_full_at(&bucket, 2_500.0));
    }
}
