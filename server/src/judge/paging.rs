//! Paged reads (SPEC.md 4.7, 4.8, 8, 9): `count` within bounds, and unknown
//! transaction-log types tolerated. How walks follow their continuations is `walks.rs`.

use harness_protocol::spec::{LISTED_LOG_TYPES, TYPED_LOG_METHOD};

use serde_json::Value;

use super::Tally;
use super::record::{Call, Record};
use harness_model::check::short;
use harness_protocol::spec::{Method, Paging};

/// The spec table's entry of the call's method when it is paged
/// ([`harness_protocol::spec::paged_methods`]), with its paging and its `count` bounds and default.
pub(crate) fn paged(call: &Call) -> Option<(&'static Method, Paging, (i64, i64, i64))> {
    let method = harness_protocol::spec::paged_methods().find(|method| call.is(method.name))?;
    Some((method, method.paging?, method.count_bounds()?))
}

/// Checks that `count` is within the method's bounds.
pub(crate) fn check_count(record: &Record, call: &Call, tally: &mut Tally) {
    let Some((method, _, (min, max, _))) = paged(call) else {
        return;
    };
    let method = method.name;
    let Some(raw) = call.params.get("count").filter(|value| !value.is_null()) else {
        return;
    };
    match call.int("count") {
        Some(count) if (min..=max).contains(&count) => {
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

/// Checks that a client served unknown transaction-log types keeps working: some request
/// arrives after that answer, or no further page was on offer. Any request of the session
/// counts, whatever key it goes with: a client that reads one page with one of its keys
/// and goes on with another has not gone silent; one that stopped on the unknown type
/// sends nothing more.
pub(crate) fn check_log_type_tolerance(records: &[Record], tally: &mut Tally) {
    let clause = "client.log_type.tolerant";
    let last_arrival = records.iter().map(|record| record.event).max();
    for record in records {
        if !record.call().is(TYPED_LOG_METHOD) {
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
        // A client that stops at continuation 0 took it for the end: the walk's clause
        // judges that, not this one.
        let next = result.get("continuation").filter(|value| {
            !value.is_null() && value.as_f64() != Some(0.0) && value.as_str() != Some("0")
        });
        match last_arrival {
            Some(event) if event > answer.event => tally.pass(clause, record.transport),
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
pub(crate) mod tests;
