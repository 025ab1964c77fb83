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

use std::collections::{BTreeMap, HashMap};

use super::Tally;
use super::record::Record;
use super::sessions::Caller;
use harness_model::target_file::{CountedPer, RateLimits};
use harness_protocol::spec;
use harness_protocol::token_bucket::{Rate, TokenBucket};

/// Slack for the time between a client's pacer deciding and the request arriving.
const JITTER_MS: f64 = 250.0;

/// One caller's requests so far.
struct CallerPace {
    bucket: TokenBucket,
    transport: harness_protocol::wire::TransportKind,
    sent: usize,
    /// Requests that found the bucket empty.
    excess: usize,
    /// The first of those: its number and its place among the caller's requests.
    first_excess: Option<(u64, usize)>,
}

/// Checks every caller's transaction-log requests against the advertised rate; `users`
/// names the user id a client id logs in as, where the target file tells it.
pub(crate) fn check_transaction_log_rate(
    records: &[Record],
    callers: &[Caller],
    limits: &RateLimits,
    users: &BTreeMap<String, u64>,
    tally: &mut Tally,
) {
    let clause = "client.rate.transaction_log";
    let rate = Rate::new(
        limits.transaction_log_per_second.max(f64::MIN_POSITIVE),
        limits.transaction_log_burst,
    );
    let mut paces: HashMap<String, CallerPace> = HashMap::new();
    let mut order = Vec::new();
    for (record, caller) in records.iter().zip(callers) {
        let call = record.call();
        if !call.method.as_deref().is_some_and(spec::is_paced) {
            continue;
        }
        let at_ms = record.at_ms as f64;
        let key = budget_key(caller, limits.transaction_log_counted_per, users);
        let pace = paces.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            CallerPace {
                bucket: rate.full(at_ms),
                transport: record.transport,
                sent: 0,
                excess: 0,
                first_excess: None,
            }
        });
        pace.sent += 1;
        if !rate.take(&mut pace.bucket, at_ms, JITTER_MS) {
            pace.excess += 1;
            pace.first_excess.get_or_insert((record.seq, pace.sent));
        }
    }
    for key in order {
        let pace = &paces[&key];
        match pace.first_excess {
            None => tally.pass(clause, pace.transport),
            Some((seq, nth)) => tally.fail(
                clause,
                pace.transport,
                Some(seq),
                format!(
                    "{} of {} get_transaction_log requests came faster than a burst of {} then {} per second allows, from request {nth} of this caller on",
                    pace.excess, pace.sent, limits.transaction_log_burst, limits.transaction_log_per_second
                ),
            ),
        }
    }
}

/// Whose budget a request draws on: its account's, when the target counts per account and
/// the account is known (all its tokens, sessions and transports share one budget), else its
/// session's (one token and its refreshed successors). A subaccount is one account however
/// it is reached: by a login of its own client id or by a token the main account exchanged
/// for it (`subject:<id>`).
fn budget_key(caller: &Caller, counted_per: CountedPer, users: &BTreeMap<String, u64>) -> String {
    match (&caller.account, counted_per) {
        (Some(account), CountedPer::Account) => account
            .strip_prefix("subject:")
            .and_then(|id| id.parse::<u64>().ok())
            .or_else(|| users.get(account).copied())
            .map_or_else(
                || format!("account:{account}"),
                |user| format!("user:{user}"),
            ),
        _ => caller.key.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_protocol::wire::TransportKind;

    fn request(seq: u64, at_ms: u64) -> Record {
        Record {
            at_ms,
            uri: "/api/v2/private/get_transaction_log?currency=BTC".to_owned(),
            ..Record::sample(seq, TransportKind::HttpQuery)
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
                client: None,
                account: None,
            };
            records.len()
        ];
        let limits = RateLimits {
            transaction_log_per_second: 1.0,
            transaction_log_burst: burst,
            ..RateLimits::default()
        };
        let mut tally = Tally::default();
        check_transaction_log_rate(&records, &callers, &limits, &BTreeMap::new(), &mut tally);
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

    /// Two callers each at 1 per second, burst 1, counted `per`: the findings.
    fn two_callers(first: Caller, second: Caller, per: CountedPer) -> Vec<String> {
        two_callers_of(first, second, per, &BTreeMap::new())
    }

    /// The same, knowing the user id of the client ids in `users`.
    fn two_callers_of(
        first: Caller,
        second: Caller,
        per: CountedPer,
        users: &BTreeMap<String, u64>,
    ) -> Vec<String> {
        let records: Vec<Record> = (0..6)
            .map(|index| request(index + 1, index / 2 * 1_000))
            .collect();
        let callers: Vec<Caller> = (0..6)
            .map(|index| {
                if index % 2 == 0 {
                    first.clone()
                } else {
                    second.clone()
                }
            })
            .collect();
        let limits = RateLimits {
            transaction_log_per_second: 1.0,
            transaction_log_burst: 1,
            transaction_log_counted_per: per,
            ..RateLimits::default()
        };
        let mut tally = Tally::default();
        check_transaction_log_rate(&records, &callers, &limits, users, &mut tally);
        tally.describe()
    }

    fn caller(session: &str, account: &str) -> Caller {
        Caller {
            key: session.to_owned(),
            client: Some(account.to_owned()),
            account: Some(account.to_owned()),
        }
    }

    #[test]
    fn two_sessions_of_one_account_share_its_budget_and_two_accounts_do_not() {
        let (one, other) = (caller("session#1", "main"), caller("session#2", "main"));
        let findings = two_callers(one.clone(), other.clone(), CountedPer::Account);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].contains("of 6"), "{findings:?}");
        assert_eq!(
            two_callers(one.clone(), other, CountedPer::Token),
            Vec::<String>::new()
        );
        let elsewhere = caller("session#3", "two_factor");
        assert_eq!(
            two_callers(one, elsewhere, CountedPer::Account),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_subaccount_logged_in_itself_and_reached_by_an_exchange_is_one_budget() {
        let own = caller("session#1", "sub-client");
        let exchanged = Caller {
            key: "session#2".to_owned(),
            client: Some("main".to_owned()),
            account: Some("subject:7".to_owned()),
        };
        let users = BTreeMap::from([("sub-client".to_owned(), 7)]);
        let findings = two_callers_of(own.clone(), exchanged.clone(), CountedPer::Account, &users);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].contains("of 6"), "{findings:?}");
        // Not knowing whose the client id is, the judge cannot join them.
        assert_eq!(
            two_callers(own, exchanged, CountedPer::Account),
            Vec::<String>::new()
        );
    }
}
