//! Response snapshots: what a target answered in each execution, with volatile values
//! (tokens, signatures, nonces, times near now, server timing members) replaced, so two
//! runs against the same server compare equal and a change of behaviour shows as a diff.
//!
//! The reference server's snapshots live in `snapshots/` and are checked with insta
//! (`harness/tests/cases.rs`). `harness run --snapshots DIR` writes an external target's
//! in the same format, one `.snap` file per case and transport, and a `.snap.new` beside
//! any that changed, for `cargo insta review`.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::check::Redactor;
use crate::results::CaseResult;
use harness_protocol::wire::Exchange;

/// Members whose values change from run to run whatever the server does.
const VOLATILE_MEMBERS: &[&str] = &[
    "access_token",
    "refresh_token",
    "sid",
    "usIn",
    "usOut",
    "usDiff",
    "signature",
    "nonce",
    "client_secret",
    // Ids of objects a call creates (close_position's trade and order) differ every run.
    "trade_id",
    "trade_seq",
    "order_id",
];

/// Integers this close to the run's clock are times the server took from its clock.
const NOW_WINDOW_MS: i64 = 86_400_000;

/// The snapshot of one execution: each exchange's method and answer, normalized.
pub fn snapshot_of(result: &CaseResult, redactor: &Redactor, now_ms: u64) -> Value {
    let exchanges: Vec<Value> = result
        .exchanges
        .iter()
        .map(|exchange| {
            let answer = match (&exchange.response, &exchange.failure) {
                (Some(received), _) => match serde_json::from_str::<Value>(&received.body) {
                    Ok(json) => normalize(&redactor.json(&json), now_ms),
                    Err(_) => Value::from(redactor.text(&received.body)),
                },
                (None, Some(failure)) => {
                    json!({ "transport_failure": format!("{:?}", failure.kind) })
                }
                (None, None) => Value::Null,
            };
            let mut entry = Map::new();
            entry.insert("call".to_owned(), Value::from(method_of(exchange)));
            if let Some(status) = exchange
                .response
                .as_ref()
                .and_then(|received| received.status)
            {
                entry.insert("status".to_owned(), Value::from(status));
            }
            entry.insert("answer".to_owned(), answer);
            Value::Object(entry)
        })
        .collect();
    json!({ "case": result.case, "transport": result.transport, "verdict": result.verdict, "exchanges": exchanges })
}

/// The snapshot file name of an execution (without extension).
pub fn snapshot_name(result: &CaseResult) -> String {
    format!("{}__{}", result.case, result.transport)
}

/// How `write_snapshots` found things.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Snapshots written for the first time.
    pub new: usize,
    /// Snapshots that differ: a `.snap.new` was written beside them.
    pub changed: usize,
    /// Snapshots equal to the stored ones.
    pub unchanged: usize,
}

/// Writes one insta-format `.snap` file per execution into `dir`.
pub fn write_snapshots(
    dir: &Path,
    results: &[CaseResult],
    redactor: &Redactor,
    now_ms: u64,
) -> std::io::Result<SnapshotStats> {
    std::fs::create_dir_all(dir)?;
    let mut stats = SnapshotStats::default();
    for result in results {
        let body = serde_json::to_string_pretty(&snapshot_of(result, redactor, now_ms))
            .unwrap_or_default();
        let text = format!(
            "---\nsource: harness run --snapshots\nexpression: \"{}\"\n---\n{body}\n",
            snapshot_name(result)
        );
        let path = dir.join(format!("{}.snap", snapshot_name(result)));
        match std::fs::read_to_string(&path) {
            Ok(stored) if stored == text => stats.unchanged += 1,
            Ok(_) => {
                std::fs::write(path.with_extension("snap.new"), text)?;
                stats.changed += 1;
            }
            Err(_) => {
                std::fs::write(&path, text)?;
                stats.new += 1;
            }
        }
    }
    Ok(stats)
}

fn method_of(exchange: &Exchange) -> String {
    let from_body = exchange
        .request
        .body
        .as_deref()
        .and_then(|body| serde_json::from_str::<Value>(body).ok())
        .and_then(|body| {
            body.get("method")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    from_body.unwrap_or_else(|| {
        if exchange.request.method == "WS" {
            return "(raw message)".to_owned();
        }
        let path = exchange.request.url.split('?').next().unwrap_or_default();
        path.split_once(&format!("{}/", harness_protocol::spec::API_PREFIX))
            .map_or_else(|| path.to_owned(), |(_, method)| method.to_owned())
    })
}

/// Replaces volatile members and times near `now_ms`.
pub(crate) fn normalize(value: &Value, now_ms: u64) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, member)| {
                    let member = if VOLATILE_MEMBERS.contains(&key.as_str()) && !member.is_null() {
                        Value::from(format!("[{key}]"))
                    } else {
                        normalize(member, now_ms)
                    };
                    (key.clone(), member)
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| normalize(item, now_ms)).collect())
        }
        Value::Number(number) => match number.as_i64() {
            Some(integer) if (integer - now_ms as i64).abs() < NOW_WINDOW_MS => {
                Value::from("[now]")
            }
            _ => value.clone(),
        },
        Value::String(text) if text.contains("session:") => Value::from(
            text.split(' ')
                .map(unique_session_name)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        other => other.clone(),
    }
}

/// Length of the word a case execution makes its session names unique with (`{{unique}}`).
const UNIQUE_LEN: usize = 16;

/// A `session:<name>-<unique>` scope word with its execution's unique word replaced: the
/// suite makes session names unique per execution, so a server that holds names unique
/// never sees two executions ask for one.
fn unique_session_name(word: &str) -> String {
    let cut = word.len().saturating_sub(UNIQUE_LEN);
    let suffix = &word[cut..];
    let unique = word.starts_with("session:")
        && cut > "session:".len()
        && word[..cut].ends_with('-')
        && suffix.len() == UNIQUE_LEN
        && suffix
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit());
    if unique {
        format!("{}[unique]", &word[..cut])
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_session_names_are_replaced() {
        let value =
            json!({"scope": "session:origin-1v5poaenxkygft7l trade:read", "other": "session:kept"});
        assert_eq!(
            normalize(&value, 0),
            json!({"scope": "session:origin-[unique] trade:read", "other": "session:kept"})
        );
    }

    #[test]
    fn volatile_members_and_times_near_now_are_replaced() {
        let now_ms = 1_795_000_000_000u64;
        let value = json!({"result": {"access_token": "abc", "timestamp": now_ms + 500, "old": 1_704_067_200_000u64, "usIn": 1}});
        assert_eq!(
            normalize(&value, now_ms),
            json!({"result": {"access_token": "[access_token]", "timestamp": "[now]", "old": 1_704_067_200_000u64, "usIn": "[usIn]"}})
        );
    }
}
