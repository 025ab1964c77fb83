//! Requests held to the method tables of SPEC.md section 4: each parameter a method
//! declares has its JSON type (a JSON body and a WebSocket message carry JSON types; a
//! query string carries text, read as SPEC.md 1 allows: "Parameters are query parameters"),
//! one of its listed values (with their case) or a value in its range, and the
//! combinations the table states (`mmp_group` "requires `index_name`").
//!
//! A timestamp that is a moment of this century in seconds, microseconds or nanoseconds
//! and not in milliseconds fails: SPEC.md 1 says "timestamps are integers in milliseconds
//! since the UNIX epoch", and in milliseconds it is a moment of January 1970 or past the
//! year 5000, which no account's history holds; another value in the seconds' range only
//! warns.
//! `count` has a clause of its own (`paging.rs`), and a parameter SPEC.md does not declare
//! is not judged (the methods' tables are not closed: "any other parameters: not shown").

use serde_json::Value;

use harness_model::check::short;
use harness_protocol::spec::{self, Kind, Param, Values};

use super::Tally;
use super::record::{Call, Record};

/// Integers at or above this are milliseconds of 2001 or later; below it and at or above
/// [`SECONDS_FROM`] they read as seconds of 2001 to 5138.
const MILLISECONDS_FROM: i64 = 100_000_000_000;
/// See [`MILLISECONDS_FROM`].
const SECONDS_FROM: i64 = 1_000_000_000;

/// Checks every declared parameter of a call against its method's table.
pub(crate) fn check_params(record: &Record, call: &Call, tally: &mut Tally) {
    let Some(method) = call.method.as_deref().and_then(spec::method) else {
        return;
    };
    let query = call.envelope.is_none();
    for param in method
        .params
        .iter()
        .filter(|param| param.name != "count" && param.kind_shown)
    {
        let Some(raw) = call.params.get(param.name).filter(|value| !value.is_null()) else {
            continue;
        };
        let value = match typed(param.kind, raw, query) {
            Some(value) => value,
            None => {
                let travelled = if query {
                    "in the query string"
                } else {
                    "as JSON"
                };
                tally.fail(
                    "client.params.type",
                    record.transport,
                    Some(record.seq),
                    format!(
                        "{} of {} is {} {travelled}, not {}",
                        param.name,
                        method.name,
                        short(raw),
                        article(param.kind)
                    ),
                );
                continue;
            }
        };
        tally.pass("client.params.type", record.transport);
        check_value(record, method.name, param, &value, tally);
    }
    check_combinations(record, call, tally);
}

/// The value a parameter stands for, when it has the declared type: a JSON value of that
/// type, or over a query string a text that reads as one.
fn typed(kind: Kind, raw: &Value, query: bool) -> Option<Value> {
    if query {
        let text = raw.as_str()?;
        // SPEC.md does not say how a query string spells a boolean: the spellings any
        // reader takes (`true`, `True`, `1`) are one.
        if kind == Kind::Bool {
            return match text.to_ascii_lowercase().as_str() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            };
        }
        return kind.from_text(text);
    }
    let fits = match kind {
        Kind::Str => raw.is_string(),
        Kind::Int => raw.is_i64() || raw.is_u64(),
        Kind::Num => raw.is_number(),
        Kind::Bool => raw.is_boolean(),
    };
    fits.then(|| raw.clone())
}

fn article(kind: Kind) -> String {
    match kind {
        Kind::Int => "an integer".to_owned(),
        other => format!("a {}", other.name()),
    }
}

/// A typed value against the parameter's listed values or range, and a timestamp's unit.
fn check_value(record: &Record, method: &str, param: &Param, value: &Value, tally: &mut Tally) {
    match param.values {
        Values::OneOf(listed) => {
            let text = value.as_str().unwrap_or_default();
            if listed.contains(&text) {
                tally.pass("client.params.values", record.transport);
            } else {
                let case = listed
                    .iter()
                    .find(|item| item.eq_ignore_ascii_case(text))
                    .map(|item| format!(" (SPEC.md lists `{item}`: the case differs)"))
                    .unwrap_or_default();
                tally.fail(
                    "client.params.values",
                    record.transport,
                    Some(record.seq),
                    format!(
                        "{} `{text}` is not one of the values {method} takes{case}",
                        param.name
                    ),
                );
            }
        }
        Values::Range(min, max) => match value.as_i64() {
            Some(number) if (min..=max).contains(&number) => {
                tally.pass("client.params.values", record.transport);
                if param.name.ends_with("timestamp") {
                    check_unit(record, method, param.name, number, tally);
                }
            }
            _ => tally.fail(
                "client.params.values",
                record.transport,
                Some(record.seq),
                format!(
                    "{} {} of {method} is outside {min}..{max}",
                    param.name,
                    short(value)
                ),
            ),
        },
        Values::Fixture(_) | Values::Token | Values::Free => {}
    }
}

/// A timestamp parameter in milliseconds (SPEC.md 1). A value that is no moment of this
/// century in milliseconds but is one in another unit (seconds, microseconds,
/// nanoseconds) is in that unit beyond doubt: in milliseconds it would be a moment of
/// January 1970 or of a year past 5000, which no account's history holds. Other values in
/// the seconds' range (1e9 to 1e11) only warn.
fn check_unit(record: &Record, method: &str, name: &str, number: i64, tally: &mut Tally) {
    let now_ms = i64::try_from(record.at_ms).unwrap_or(i64::MAX);
    let plausible = CENTURY_FROM_MS..=now_ms.saturating_add(DAY_MS);
    let other_unit = [
        ("seconds", number.checked_mul(1_000)),
        ("microseconds", Some(number / 1_000)),
        ("nanoseconds", Some(number / 1_000_000)),
    ]
    .into_iter()
    .find(|(_, as_ms)| as_ms.is_some_and(|as_ms| plausible.contains(&as_ms)))
    .map(|(unit, _)| unit);
    let message =
        |unit: &str| format!("{name} {number} of {method} reads as {unit}, not milliseconds");
    match other_unit {
        _ if plausible.contains(&number) || number < SECONDS_FROM => {
            tally.pass("client.params.timestamp_ms", record.transport);
        }
        Some(unit) => tally.fail(
            "client.params.timestamp_ms",
            record.transport,
            Some(record.seq),
            message(unit),
        ),
        None if number < MILLISECONDS_FROM => tally.warn(
            "client.params.timestamp_ms",
            record.transport,
            Some(record.seq),
            message("seconds (in milliseconds, a moment of January 1970)"),
        ),
        None => tally.pass("client.params.timestamp_ms", record.transport),
    }
}

/// 2000-01-01T00:00:00Z in milliseconds: the start of the moments a timestamp in any unit
/// is taken to mean.
const CENTURY_FROM_MS: i64 = 946_684_800_000;
/// A day in milliseconds: how far past now a timestamp may reach.
const DAY_MS: i64 = 24 * 3_600_000;

/// The combinations a table states: `mmp_group` "requires `index_name`" (SPEC.md 4.6; an
/// empty one "targets the default orders MMP group (not an error)", so only a named group
/// needs it).
fn check_combinations(record: &Record, call: &Call, tally: &mut Tally) {
    if !call.is(spec::MMP_STATUS_METHOD) {
        return;
    }
    let named_group = call
        .params
        .get("mmp_group")
        .is_some_and(|group| group.as_str().is_some_and(|name| !name.is_empty()));
    if !named_group {
        return;
    }
    if call
        .params
        .get("index_name")
        .and_then(Value::as_str)
        .is_some_and(|index| !index.trim().is_empty())
    {
        tally.pass("client.params.requires", record.transport);
    } else {
        tally.fail(
            "client.params.requires",
            record.transport,
            Some(record.seq),
            "get_mmp_status names an mmp_group without index_name",
        );
    }
}

#[cfg(test)]
mod tests;
