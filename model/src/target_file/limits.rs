//! The `[limits]` table of a target file: how the runner paces the rate-limited method,
//! which error codes mean the target is throttling, and how far the target's clock may be
//! off the harness's when a signature timestamp is sent near the edge of its window.

use serde::{Deserialize, Serialize};

/// Rate limits of the target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimits {
    /// Sustained `private/get_transaction_log` rate (SPEC.md section 8: 1 per second).
    #[serde(default = "RateLimits::default_per_second")]
    pub transaction_log_per_second: f64,
    /// How many transaction-log requests may go at once before pacing applies.
    #[serde(default = "RateLimits::default_burst")]
    pub transaction_log_burst: u32,
    /// What one budget covers: an account with all its tokens and transports (the default,
    /// the strictest reading of SPEC.md section 8, which does not say), or each token.
    #[serde(default)]
    pub transaction_log_counted_per: CountedPer,
    /// Error codes that mean the target is throttling: such an answer is retried after a
    /// back-off and noted, never judged. SPEC.md gives no code for it (section 7).
    #[serde(default = "RateLimits::default_throttle_codes")]
    pub throttle_codes: Vec<i64>,
    /// Error codes that mean the target's session slots are full: SPEC.md 8 does not show
    /// their number ("the number of session slots: not shown"), so a step whose request
    /// such a code refuses is skipped with the reason, never failed. None by default: the
    /// target names its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_limit_codes: Vec<i64>,
    /// How many sessions of one key the target keeps at least: a session goes on until
    /// this many newer sessions of its account were opened. SPEC.md 8 does not show the
    /// number ("the number of session slots: not shown") and a server may end an older
    /// session for a new one; without it `harness fuzz` counts on the two a fork implies
    /// (4.3: "both sessions can run concurrently under one key") and predicts either for a
    /// session token past them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_slots: Option<u32>,
    /// How far the target's clock may differ from the harness's, in ms: a signature
    /// timestamp meant to be just inside the 60 s window (SPEC.md 5.5, 5.6) moves this much
    /// closer to now, one meant to be just outside this much further back.
    #[serde(default)]
    pub clock_skew_ms: u64,
}

impl RateLimits {
    fn default_throttle_codes() -> Vec<i64> {
        vec![harness_protocol::jsonrpc::code::TOO_MANY_REQUESTS]
    }

    fn default_per_second() -> f64 {
        harness_protocol::spec::PACED_PER_SECOND
    }
    fn default_burst() -> u32 {
        1
    }
}

impl Default for RateLimits {
    fn default() -> RateLimits {
        RateLimits {
            transaction_log_per_second: RateLimits::default_per_second(),
            transaction_log_burst: RateLimits::default_burst(),
            transaction_log_counted_per: CountedPer::Account,
            throttle_codes: RateLimits::default_throttle_codes(),
            session_limit_codes: Vec::new(),
            session_slots: None,
            clock_skew_ms: 0,
        }
    }
}

/// What one rate-limit budget covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountedPer {
    /// One budget per account, shared by its tokens, transports and connections.
    #[default]
    Account,
    /// One budget per access token (or per client id for Basic and signed requests).
    Token,
}
