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
//! ends, and entry order are not stated by SPEC.md and not judged.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::judge::{Call, Record, Tally};
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
#[derive(Default)]
struct Walk {
    given: BTreeSet<String>,
    passed: BTreeSet<String>,
    entries: BTreeSet<String>,
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
        let Some((min, max, default_count)) = count_bounds(paged.method) else {
            continue;
        };
        match call.int("count") {
            Some(count) if (min..=max).contains(&count) => tally.judge(
                paged.count_clause,
                transport,
                seq,
                entries.len() as i64 <= count,
                || said(format!("{} entries for count {count}", entries.len())),
            ),
            Some(_) => {}
            None => tally.judge(
                paged.default_clause,
                transport,
                seq,
                entries.len() as i64 <= default_count,
                || {
                    said(format!(
                        "{} entries without count, whose default is {default_count}",
                        entries.len()
                    ))
                },
            ),
        }
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
        let walk = match continuation {
            None => {
                let walk = walks.entry(key).or_default();
                *walk = Walk::default();
                walk
            }
            Some(passed) => match walks.get_mut(&key) {
                Some(walk) if walk.given.contains(&passed) && !walk.passed.contains(&passed) => {
                    walk.passed.insert(passed);
                    let repeated = entries
                        .iter()
                        .filter(|entry| walk.entries.contains(&entry.to_string()))
                        .count();
                    tally.judge(paged.continuation_clause, transport, seq, repeated == 0, || {
                        said(format!(
                            "{repeated} entries of the walk's earlier pages again on the page its continuation led to"
                        ))
                    });
                    walk
                }
                _ => {
                    walks.remove(&key);
                    continue;
                }
            },
        };
        if walk.entries.len() + entries.len() <= MAX_WALK_ENTRIES {
            walk.entries.extend(entries.iter().map(Value::to_string));
        }
        walk.given.extend(next);
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
    let bound = |name: &str| match params.get(name) {
        Some(Value::Number(number)) => number.as_i64(),
        Some(Value::String(text)) => text.parse().ok(),
        _ => None,
    };
    let (start, end) = (bound("start_timestamp"), bound("end_timestamp"));
    if start.is_none() && end.is_none() {
        return;
    }
    let outside = entries
        .iter()
        .filter_map(|entry| entry.get("timestamp").and_then(Value::as_i64))
        .find(|at| start.is_some_and(|start| *at < start) || end.is_some_and(|end| *at > end));
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

/// The bounds and default of a paged method's `count`, as `spec/` states them.
fn count_bounds(method: &str) -> Option<(i64, i64, i64)> {
    let param = spec::method(method)?.param("count")?;
    match param.values {
        spec::Values::Range(min, max) => Some((min, max, param.default?)),
        _ => None,
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
