//! A model-based test of transaction-log pagination: for random logs, windows, filters and
//! page sizes, walking [`log_page`] from no cursor to a `null` continuation returns exactly
//! the entries a plain filter-and-sort model selects, each once and in order, in pages that
//! respect the count, and the walk ends.

use proptest::prelude::*;
use serde_json::json;

use super::*;

const CURRENCIES: [&str; 3] = ["BTC", "ETH", "SOL"];

/// A log as [`Ledger::generate`] promises it: ids ascending with gaps, timestamps never
/// decreasing and often repeated (ties are where cursors go wrong), two users, three
/// currencies.
fn log() -> impl Strategy<Value = Vec<LogEntry>> {
    prop::collection::vec((1u64..4, 0u64..3, 1u64..3, 0usize..3), 0..300).prop_map(|drafts| {
        let (mut id, mut timestamp) = (10_000u64, 1_000u64);
        drafts
            .into_iter()
            .map(|(id_gap, time_gap, user_id, currency)| {
                id += id_gap;
                timestamp += time_gap;
                LogEntry {
                    id,
                    timestamp,
                    user_id,
                    currency: CURRENCIES[currency],
                    body: json!({ "id": id }),
                }
            })
            .collect()
    })
}

/// Page sizes: mostly small, so walks have many pages, up to the spec's 250.
fn count() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 1usize..6, 1 => 1usize..=250]
}

/// The model: every matching entry, timestamp descending then id descending (or the
/// reverse, oldest first).
fn model(log: &[LogEntry], query: &LogQuery<'_>, order: Order) -> Vec<u64> {
    let mut matching: Vec<&LogEntry> = log.iter().filter(|entry| query.matches(entry)).collect();
    matching.sort_by_key(|entry| std::cmp::Reverse((entry.timestamp, entry.id)));
    if order == Order::OldestFirst {
        matching.reverse();
    }
    matching.iter().map(|entry| entry.id).collect()
}

/// Walks from no cursor until the continuation is `None`, checking each page on the way.
fn walk(
    log: &[LogEntry],
    query: &LogQuery<'_>,
    count: usize,
    order: Order,
) -> Result<Vec<u64>, String> {
    let mut seen = Vec::new();
    let mut cursor = None;
    // One page per entry plus the empty last page is the most a correct walk needs.
    for _ in 0..=log.len() + 1 {
        let (page, next) = log_page(
            log,
            query,
            PageAsk {
                cursor,
                len: count,
                order,
            },
        );
        if page.len() > count {
            return Err(format!("page of {} entries for count {count}", page.len()));
        }
        seen.extend(page.iter().map(|entry| entry.id));
        match next {
            None => return Ok(seen),
            Some(_) if page.len() < count => {
                return Err(format!("short page of {} before the end", page.len()));
            }
            Some(next)
                if seen.last().is_some_and(|last| match order {
                    Order::NewestFirst => next >= *last,
                    Order::OldestFirst => next <= *last,
                }) =>
            {
                return Err(format!("cursor {next} does not move past {seen:?}"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!(
        "no null continuation after {} pages",
        log.len() + 2
    ))
}

#[test]
fn generated_log_is_ordered_for_paging() {
    let ledger = Ledger::generate(
        &Holder {
            user_id: 1,
            username: "a",
        },
        &Holder {
            user_id: 2,
            username: "b",
        },
        true,
        None,
    );
    for pair in ledger.log.windows(2) {
        assert!(pair[0].id < pair[1].id);
        assert!(pair[0].timestamp <= pair[1].timestamp);
    }
}

#[test]
fn a_sized_log_holds_that_many_main_entries_over_several_currencies() {
    let holder = |user_id, username| Holder { user_id, username };
    let ledger = Ledger::generate(&holder(1, "a"), &holder(2, "b"), false, Some(3_000));
    let main: Vec<&LogEntry> = ledger
        .log
        .iter()
        .filter(|entry| entry.user_id == 1)
        .collect();
    // The generated entries and the expired option's expiry entry.
    assert_eq!(main.len(), 3_001);
    let currencies: std::collections::HashSet<&str> =
        main.iter().map(|entry| entry.currency).collect();
    assert!(currencies.len() >= 5, "{currencies:?}");
    let span = main.last().map_or(0, |entry| entry.timestamp)
        - main.first().map_or(0, |entry| entry.timestamp);
    assert!(span > 100 * 86_400_000, "{span}");
    for pair in ledger.log.windows(2) {
        assert!(pair[0].id < pair[1].id);
        assert!(pair[0].timestamp <= pair[1].timestamp);
    }
}

#[test]
fn empty_window_is_one_empty_page_with_null_continuation() {
    let query = LogQuery {
        user_id: 1,
        currency: None,
        start: 10,
        end: 9,
        keywords: Vec::new(),
    };
    let log = [LogEntry {
        id: 1,
        timestamp: 9,
        user_id: 1,
        currency: "BTC",
        body: json!({}),
    }];
    let (page, next) = log_page(
        &log,
        &query,
        PageAsk {
            cursor: None,
            len: 5,
            order: Order::NewestFirst,
        },
    );
    assert!(page.is_empty());
    assert_eq!(next, None);
}

proptest! {
    #[test]
    fn walk_returns_every_entry_of_the_window_once_in_order(
        log in log(),
        user_id in 1u64..3,
        currency in prop::option::of(0usize..3),
        bounds in (0u64..1_600, 0u64..1_600),
        count in count(),
        oldest_first in any::<bool>(),
    ) {
        let order = if oldest_first { Order::OldestFirst } else { Order::NewestFirst };
        let query = LogQuery {
            user_id,
            currency: currency.map(|index| CURRENCIES[index]),
            start: bounds.0.min(bounds.1),
            end: bounds.0.max(bounds.1),
            keywords: Vec::new(),
        };
        let walked = walk(&log, &query, count, order);
        prop_assert_eq!(walked, Ok(model(&log, &query, order)));
    }
}
