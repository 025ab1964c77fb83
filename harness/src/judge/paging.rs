//! Paged reads (SPEC.md 4.7, 4.8, 8, 9): `count` within bounds, continuation followed with
//! the exact value until the end, and unknown transaction-log types tolerated.
//!
//! A walk is the sequence of requests of one caller (see [`Caller`]) to one method with the
//! same parameters apart from `count` and `continuation`. Reading one full page and no more
//! is allowed (the newest N entries); what is not: a page that promised more followed by a
//! first-page request soon after (the walk restarted, ignoring the continuation), a walk
//! abandoned after following some pages or after a page shorter than `count` (the classic
//! "short page means the end" bug), or a continuation other than the one served.

use crate::spec::LISTED_LOG_TYPES;
use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::Tally;
use super::record::{Call, Record};
use super::sessions::Caller;
use crate::check::short;

/// The paged methods: name, array member, count bounds and default.
const PAGED: &[(&str, &str, i64, i64, i64)] = &[
    ("private/get_transaction_log", "logs", 1, 250, 100),
    ("private/get_trigger_order_history", "entries", 1, 1000, 20),
];

/// A first-page request this soon after a page that promised more is a restart, not a new
/// read: a poller refreshing the newest page waits longer than that.
const RESTART_WINDOW_MS: u64 = 10_000;

fn paged(call: &Call) -> Option<&'static (&'static str, &'static str, i64, i64, i64)> {
    PAGED.iter().find(|(method, ..)| call.is(method))
}

/// Checks that `count` is within the method's bounds.
pub(crate) fn check_count(record: &Record, call: &Call, tally: &mut Tally) {
    let Some((method, _, min, max, _)) = paged(call) else {
        return;
    };
    let Some(raw) = call.params.get("count").filter(|value| !value.is_null()) else {
        return;
    };
    match call.int("count") {
        Some(count) if (*min..=*max).contains(&count) => {
            tally.pass("client.count.bounds", record.transport);
        }
        Some(count) => tally.fail(
            "client.count.bounds",
            record.transport,
            Some(record.seq),
            format!("count {count} is outside {min}..{max} for {method}"),
        ),
        None => tally.fail(
            "client.count.bounds",
            record.transport,
            Some(record.seq),
            format!("count {} is not an integer", short(raw)),
        ),
    }
}

/// A page that promised more.
struct Pending {
    text: String,
    value: Value,
    seq: u64,
    answered_ms: u64,
    short: Option<(usize, i64)>,
}

#[derive(Default)]
struct Walk {
    pending: Option<Pending>,
    pages_followed: usize,
    followed: Vec<String>,
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The walk a request belongs to: caller, method and the parameters that select entries.
fn walk_key(caller: &Caller, call: &Call) -> (String, String, String) {
    let filters: BTreeMap<&String, String> = call
        .params
        .iter()
        .filter(|(name, _)| !["count", "continuation", "access_token"].contains(&name.as_str()))
        .map(|(name, value)| (name, text_of(value)))
        .collect();
    (
        caller.key.clone(),
        call.method.clone().unwrap_or_default(),
        format!("{filters:?}"),
    )
}

/// Checks that every walk follows its continuations exactly and to the end.
pub(crate) fn check_pagination(records: &[Record], callers: &[Caller], tally: &mut Tally) {
    let clause = "client.pagination.follow";
    let mut walks: HashMap<(String, String, String), Walk> = HashMap::new();
    let mut last_transport = BTreeMap::new();
    for (record, caller) in records.iter().zip(callers) {
        let call = record.call();
        let Some((_, items, _, _, default_count)) = paged(&call) else {
            continue;
        };
        let (Some(result), Some(answer)) = (record.result(), record.answer.as_ref()) else {
            continue;
        };
        let (transport, seq) = (record.transport, Some(record.seq));
        let key = walk_key(caller, &call);
        last_transport.insert(key.clone(), transport);
        let sent = call
            .params
            .get("continuation")
            .filter(|value| !value.is_null());
        let walk = walks.entry(key).or_default();
        match (&walk.pending, sent) {
            (Some(pending), Some(sent)) if *sent == pending.value || (call.envelope.is_none() && text_of(sent) == pending.text) => {
                tally.pass(clause, transport);
                walk.pages_followed += 1;
            }
            (Some(pending), Some(sent)) if text_of(sent) == pending.text => tally.fail(
                clause,
                transport,
                seq,
                format!("sent continuation {} where request #{} was given {}: the exact value, with its json type, goes back", short(sent), pending.seq, short(&pending.value)),
            ),
            (_, Some(sent)) if walk.followed.contains(&text_of(sent)) => tally.fail(
                clause,
                transport,
                seq,
                format!("the walk loops: continuation {} was already followed", short(sent)),
            ),
            (Some(pending), Some(sent)) => tally.fail(
                clause,
                transport,
                seq,
                format!("sent continuation {} where request #{} was given {}", short(sent), pending.seq, short(&pending.value)),
            ),
            (None, Some(sent)) => tally.fail(
                clause,
                transport,
                seq,
                format!("sent continuation {} that no page of this walk handed out", short(sent)),
            ),
            (Some(pending), None) if record.at_ms.saturating_sub(pending.answered_ms) <= RESTART_WINDOW_MS => {
                tally.fail(
                    clause,
                    transport,
                    seq,
                    format!("restarted from the first page instead of sending continuation {} given to request #{}", short(&pending.value), pending.seq),
                );
                walk.pages_followed = 0;
            }
            (Some(pending), None) => {
                if let Some(message) = abandoned(walk, pending) {
                    tally.fail(clause, transport, Some(pending.seq), message);
                }
                walk.pages_followed = 0;
            }
            (None, None) => walk.pages_followed = 0,
        }
        if let Some(sent) = sent {
            walk.followed.push(text_of(sent));
        }
        let served = result
            .get("continuation")
            .filter(|value| !value.is_null() && value.as_str() != Some(""));
        let page_len = result
            .get(*items)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let count = call.int("count").unwrap_or(*default_count);
        if served.is_none() && walk.pages_followed > 0 {
            tally.pass(clause, transport);
        }
        walk.pending = served.map(|value| Pending {
            text: text_of(value),
            value: value.clone(),
            seq: record.seq,
            answered_ms: answer.at_ms,
            short: (i64::try_from(page_len).unwrap_or(i64::MAX) < count)
                .then_some((page_len, count)),
        });
        if served.is_none() {
            walk.followed.clear();
        }
    }
    for (key, walk) in &walks {
        if let Some(pending) = &walk.pending
            && let Some(message) = abandoned(walk, pending)
        {
            tally.fail(clause, last_transport[key], Some(pending.seq), message);
        }
    }
}

/// Why leaving a walk at `pending` is a failure, if it is one.
fn abandoned(walk: &Walk, pending: &Pending) -> Option<String> {
    if let Some((page_len, count)) = pending.short {
        Some(format!(
            "stopped after a page of {page_len} entries (count {count}) that ended with continuation {}: a short page does not mark the end, a null continuation does",
            short(&pending.value)
        ))
    } else if walk.pages_followed > 0 {
        Some(format!(
            "stopped after {} followed pages although request #{} was given continuation {}",
            walk.pages_followed,
            pending.seq,
            short(&pending.value)
        ))
    } else {
        None
    }
}

/// Checks that a client served unknown transaction-log types keeps working: some request
/// of the same client arrives after that answer.
pub(crate) fn check_log_type_tolerance(records: &[Record], callers: &[Caller], tally: &mut Tally) {
    let clause = "client.log_type.tolerant";
    let identity = |caller: &Caller| caller.client.clone().unwrap_or_else(|| caller.key.clone());
    let mut last_arrival: HashMap<String, (u64, u64)> = HashMap::new();
    for (record, caller) in records.iter().zip(callers) {
        last_arrival.insert(identity(caller), (record.event, record.seq));
    }
    for (record, caller) in records.iter().zip(callers) {
        if !record.call().is("private/get_transaction_log") {
            continue;
        }
        let (Some(result), Some(answer)) = (record.result(), record.answer.as_ref()) else {
            continue;
        };
        let mut unknown: Vec<&str> = result
            .get("logs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.get("type").and_then(Value::as_str))
            .filter(|kind| !LISTED_LOG_TYPES.contains(kind))
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        if unknown.is_empty() {
            continue;
        }
        let next = result.get("continuation").filter(|value| !value.is_null());
        match last_arrival.get(&identity(caller)) {
            Some((event, _)) if *event > answer.event => tally.pass(clause, record.transport),
            _ => {
                if let Some(next) = next {
                    tally.fail(
                        clause,
                        record.transport,
                        Some(record.seq),
                        format!("went silent after being served log type {}: continuation {} was never followed and no request came after", unknown.join(", "), short(next)),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
