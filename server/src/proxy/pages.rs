//! The server's pages, as the proxy sees them: each page of `private/get_transaction_log`
//! and `private/get_trigger_order_history` against the request it answers (no more
//! entries than `count` asks for, or than the default when it is absent; transaction-log
//! entries within the requested time window), and the pages of one walk against each
//! other: a client that passes the continuation of an answer gets the next page, which
//! repeats no entry of the walk (SPEC.md 4.7, 4.8).
//!
//! A walk is followed on one connection: a request passes on the same connection, with
//! the same parameters besides `continuation`, a continuation an earlier answer of the
//! walk gave. A continuation passed twice in one walk (a client reading a page again) or a
//! walk the proxy did not see begin is not claimed. Whether a page is full, whether a walk
//! ends, and entry order are not stated by SPEC.md and not judged. The rules themselves
//! (count bounds, the window, entry identity and repeats) are `check::pages`'s; this
//! module ties pages to walks and words the verdicts.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::judge::{Call, Record, Tally};
use harness_model::check::pages::{self, CountBounds, PageLimit, SeenEntries, TimeWindow};
use harness_protocol::spec;

/// Entries remembered per walk; a longer walk stops being checked for repeats.
const MAX_WALK_ENTRIES: usize = 100_000;

/// What a paged method's pages are checked by, as the spec table states it.
struct Paged {
    method: &'static str,
    /// The result member holding the entries.
    items: &'static str,
    count_clause: &'static str,
    default_clause: &'static str,
    continuation_clause: &'static str,
    /// The clause of the time window (`start_timestamp`) its entries must lie in, for a
    /// method that takes one.
    window_clause: Option<&'static str>,
}

impl Paged {
    /// The paged method a call names.
    fn of(call: &Call) -> Option<Paged> {
        let method = spec::paged_methods().find(|method| call.is(method.name))?;
        let paging = method.paging?;
        Some(Paged {
            method: method.name,
            items: paging.items,
            count_clause: method.param("count")?.clause,
            default_clause: paging.default_clause,
            continuation_clause: paging.clause,
            window_clause: method.param("start_timestamp").map(|param| param.clause),
        })
    }
}

/// One walk: the continuations its answers gave, those already passed, the entries seen.
struct Walk {
    given: BTreeSet<String>,
    passed: BTreeSet<String>,
    entries: SeenEntries,
}

impl Walk {
    /// A walk before its first page.
    fn new() -> Walk {
        Walk {
            given: BTreeSet::new(),
            passed: BTreeSet::new(),
            entries: SeenEntries::capped(MAX_WALK_ENTRIES),
        }
    }
}

/// Whether a record's answer is judged by the proxy's checks of answers (`server.rs`, and
/// the pages here): it has one, to a GET or WebSocket request naming a method.
pub(super) fn judged(record: &Record) -> bool {
    record.answer.is_some()
        && matches!(record.http_method.as_str(), "GET" | "WS")
        && record.call().method.is_some()
}

/// Checks every page answered with a result, and the walks they make.
pub(super) fn check_pages(records: &[Record], tally: &mut Tally) {
    // Walks by (connection, method, parameters besides the continuation).
    let mut walks: BTreeMap<(String, String, String), Walk> = BTreeMap::new();
    for record in records {
        if !judged(record) {
            continue;
        }
        let call = record.call();
        let Some(paged) = Paged::of(&call) else {
            continue;
        };
        let Some(entries) = record
            .result()
            .and_then(|result| result.get(paged.items))
            .and_then(Value::as_array)
        else {
            continue;
        };
        let (transport, seq) = (record.transport, record.seq);
        let said = |what: String| format!("the server's answer to {}: {what}", paged.method);
        let Some(bounds) = CountBounds::of(paged.method) else {
            continue;
        };
        check_count(
            record,
            &paged,
            bounds.limit(call.int("count")),
            entries,
            tally,
        );
        if let Some(clause) = paged.window_clause {
            check_window(record, &call.params, entries, (paged.method, clause), tally);
        }
        let mut rest = call.params.clone();
        let continuation = rest.remove("continuation").map(|value| text_of(&value));
        rest.remove("access_token");
        let key = (
            record.connection.clone(),
            paged.method.to_owned(),
            Value::Object(rest).to_string(),
        );
        let next = record
            .result()
            .and_then(|result| result.get("continuation"))
            .filter(|value| !value.is_null())
            .map(text_of);
        let followed = continuation.is_some();
        let walk = match continuation {
            None => walks.entry(key).insert_entry(Walk::new()).into_mut(),
            Some(passed) => match walks.get_mut(&key) {
                Some(walk) if walk.given.contains(&passed) && !walk.passed.contains(&passed) => {
                    walk.passed.insert(passed);
                    walk
                }
                _ => {
                    walks.remove(&key);
                    continue;
                }
            },
        };
        let identities = entries
            .iter()
            .map(|entry| pages::entry_identity(entry, None))
            .collect();
        let repeated = walk
            .entries
            .take_page(identities)
            .iter()
            .filter(|repeat| repeat.earlier_page)
            .count();
        if followed {
            tally.judge(paged.continuation_clause, transport, seq, repeated == 0, || {
                said(format!(
                    "{repeated} entries of the walk's earlier pages again on the page its continuation led to"
                ))
            });
        }
        walk.given.extend(next);
    }
}

/// A page holds no more entries than its `count`, or than the default without one; a
/// `count` outside its bounds (`limit` none) is not judged.
fn check_count(
    record: &Record,
    paged: &Paged,
    limit: Option<PageLimit>,
    entries: &[Value],
    tally: &mut Tally,
) {
    let (transport, seq) = (record.transport, record.seq);
    let said = |what: String| format!("the server's answer to {}: {what}", paged.method);
    match limit {
        Some(limit @ PageLimit::Count(count)) => tally.judge(
            paged.count_clause,
            transport,
            seq,
            limit.allows(entries.len()),
            || said(format!("{} entries for count {count}", entries.len())),
        ),
        None => {}
        Some(limit @ PageLimit::Default(default_count)) => tally.judge(
            paged.default_clause,
            transport,
            seq,
            limit.allows(entries.len()),
            || {
                said(format!(
                    "{} entries without count, whose default is {default_count}",
                    entries.len()
                ))
            },
        ),
    }
}

/// Transaction-log entries lie within `start_timestamp..=end_timestamp` where given.
fn check_window(
    record: &Record,
    params: &Map<String, Value>,
    entries: &[Value],
    (method, clause): (&str, &str),
    tally: &mut Tally,
) {
    let window = TimeWindow::of_params(params);
    if window.is_unbounded() {
        return;
    }
    let (start, end) = (window.start, window.end);
    let outside = window.first_outside(entries, "timestamp");
    tally.judge(
        clause,
        record.transport,
        record.seq,
        outside.is_none(),
        || {
            format!(
                "the server's answer to {method}: an entry at {} lies outside {}..{}",
                outside.unwrap_or_default(),
                start.map_or("-".to_owned(), |start| start.to_string()),
                end.map_or("-".to_owned(), |end| end.to_string())
            )
        },
    );
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
