//! Pacing of `private/get_transaction_log` (SPEC.md section 8: 1 request per second
//! sustained), with the burst the target file advertises (the judge's default is small,
//! see [`super::DEFAULT_BURST`]).
//!
//! A client breaks the rate when, in any window of time, it sends more requests than the
//! burst plus the sustained rate times the window's length. Each caller's requests replay
//! through a token bucket of the advertised burst, refilled at the advertised rate, using
//! arrival times from the judge's clock: a request that finds the bucket empty is the
//! first of such a window. Every request counts, answered or refused (a refusal for pacing
//! is the server telling the client so). Arrival times carry network jitter that the
//! client's own pacer never saw, so a request counts as paced when the bucket would have
//! held a token [`JITTER_MS`] later.

use std::collections::HashMap;

use super::Tally;
use super::record::Record;
use super::sessions::Caller;
use crate::target_file::RateLimits;

/// Slack for the time between a client's pacer deciding and the request arriving.
const JITTER_MS: f64 = 250.0;

struct Bucket {
    tokens: f64,
    at_ms: u64,
    excess: usize,
    first_excess: Option<(u64, usize)>,
    sent: usize,
    transport: crate::case::TransportKind,
}

/// Checks every caller's transaction-log requests against the advertised rate.
pub(crate) fn check_transaction_log_rate(
    records: &[Record],
    callers: &[Caller],
    limits: &RateLimits,
    tally: &mut Tally,
) {
    let clause = "client.rate.transaction_log";
    let per_ms = limits.transaction_log_per_second.max(f64::MIN_POSITIVE) / 1000.0;
    let burst = f64::from(limits.transaction_log_burst.max(1));
    let mut buckets: HashMap<&str, Bucket> = HashMap::new();
    let mut order = Vec::new();
    for (record, caller) in records.iter().zip(callers) {
        if !record.call().is("private/get_transaction_log") {
            continue;
        }
        let bucket = buckets.entry(caller.key.as_str()).or_insert_with(|| {
            order.push(caller.key.as_str());
            Bucket {
                tokens: burst,
                at_ms: record.at_ms,
                excess: 0,
                first_excess: None,
                sent: 0,
                transport: record.transport,
            }
        });
        let elapsed = record.at_ms.saturating_sub(bucket.at_ms) as f64;
        bucket.tokens = (bucket.tokens + elapsed * per_ms).min(burst);
        bucket.at_ms = bucket.at_ms.max(record.at_ms);
        bucket.sent += 1;
        if bucket.tokens + JITTER_MS * per_ms >= 1.0 {
            bucket.tokens -= 1.0;
        } else {
            bucket.excess += 1;
            bucket.first_excess.get_or_insert((record.seq, bucket.sent));
        }
    }
    for key in order {
        let bucket = &buckets[key];
        match bucket.first_excess {
            None => tally.pass(clause, bucket.transport),
            Some((seq, nth)) => tally.fail(
                clause,
                bucket.transport,
                Some(seq),
                format!(
                    "{} of {} get_transaction_log requests came faster than a burst of {} then {} per second allows, from request {nth} of this caller on",
                    bucket.excess, bucket.sent, limits.transaction_log_burst, limits.transaction_log_per_second
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::TransportKind;

    fn request(seq: u64, at_ms: u64) -> Record {
        Record {
            seq,
            event: seq,
            transport: TransportKind::HttpQuery,
            connection: "127.0.0.1:1".to_owned(),
            at_ms,
            http_method: "GET".to_owned(),
            uri: "/api/v2/private/get_transaction_log?currency=BTC".to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
            answer: None,
        }
    }

    fn judged(times: &[u64], burst: u32) -> Vec<String> {
        let records: Vec<Record> = times
            .iter()
            .enumerate()
            .map(|(index, at)| request(index as u64 + 1, *at))
            .collect();
        let callers = vec![
            Caller {
                key: "client:c".to_owned(),
                client: None
            };
            records.len()
        ];
        let limits = RateLimits {
            transaction_log_per_second: 1.0,
            transaction_log_burst: burst,
            ..RateLimits::default()
        };
        let mut tally = Tally::default();
        check_transaction_log_rate(&records, &callers, &limits, &mut tally);
        tally.describe()
    }

    #[test]
    fn the_burst_then_one_per_second_is_allowed() {
        assert_eq!(
            judged(&[0, 0, 0, 1_000, 2_000, 3_000], 3),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_little_jitter_is_forgiven() {
        assert_eq!(judged(&[0, 900, 1_900], 1), Vec::<String>::new());
    }

    #[test]
    fn a_burst_beyond_the_advertised_one_fails() {
        let findings = judged(&[0, 10, 20, 30, 40], 2);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].contains("3 of 5") && findings[0].contains("from request 3"),
            "{findings:?}"
        );
    }
}
