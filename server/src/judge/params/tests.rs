//! Parameters against the method tables: JSON types in bodies and messages, text read as
//! the type in a query string, listed values with their case, ranges, `mmp_group`'s
//! requirement, a timestamp in seconds.

use serde_json::{Value, json};

use super::*;
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;
use harness_protocol::wire::TransportKind;

/// The findings of a WebSocket message calling `method` with `params`.
fn over_ws(method: &str, params: Value) -> Vec<String> {
    let record = Record {
        body: json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            .to_string()
            .into_bytes(),
        ..Record::sample(1, TransportKind::Ws)
    };
    judged(&record)
}

/// The findings of a query-string GET of `path_and_query`.
fn over_query(path_and_query: &str) -> Vec<String> {
    let record = Record {
        uri: format!("/api/v2/{path_and_query}"),
        ..Record::sample(1, TransportKind::HttpQuery)
    };
    judged(&record)
}

fn judged(record: &Record) -> Vec<String> {
    let mut tally = Tally::default();
    check_params(record, &record.call(), &mut tally);
    tally.describe()
}

#[test]
fn a_json_value_of_another_type_fails_and_its_declared_type_passes() {
    let toggle = "private/toggle_subaccount_login";
    assert_only_finding(
        &over_ws(toggle, json!({"sid": "100011", "state": "disable"})),
        Some(Verdict::Fail),
        &["client.params.type", "sid", "\"100011\"", "not an integer"],
    );
    assert_eq!(
        over_ws(toggle, json!({"sid": 100011, "state": "disable"})),
        Vec::<String>::new()
    );
    assert_only_finding(
        &over_ws(
            "private/close_position",
            json!({"instrument_name": "BTC-PERPETUAL", "type": "limit", "price": "100.5"}),
        ),
        Some(Verdict::Fail),
        &["client.params.type", "price", "not a number"],
    );
    assert_only_finding(
        &over_ws("private/get_mmp_status", json!({"block_rfq": "true"})),
        Some(Verdict::Fail),
        &["block_rfq", "not a boolean"],
    );
    assert_only_finding(
        &over_ws("private/delete_member", json!({"member_id": 1.0})),
        Some(Verdict::Fail),
        &["member_id", "not an integer"],
    );
}

#[test]
fn a_query_string_value_is_read_as_its_declared_type() {
    assert_eq!(
        over_query("private/toggle_subaccount_login?sid=100011&state=enable"),
        Vec::<String>::new()
    );
    assert_only_finding(
        &over_query("private/toggle_subaccount_login?sid=sub-1&state=enable"),
        Some(Verdict::Fail),
        &["sid", "in the query string", "not an integer"],
    );
    // SPEC.md does not say how a query string spells a boolean: any common spelling reads.
    for spelling in ["true", "True", "1", "false", "0"] {
        assert_eq!(
            over_query(&format!("private/get_mmp_status?block_rfq={spelling}")),
            Vec::<String>::new()
        );
    }
    assert_only_finding(
        &over_query("private/get_mmp_status?block_rfq=yes"),
        Some(Verdict::Fail),
        &["block_rfq", "not a boolean"],
    );
}

#[test]
fn a_continuation_keeps_the_type_of_its_method() {
    let log = "private/get_transaction_log";
    assert_only_finding(
        &over_ws(log, json!({"currency": "BTC", "continuation": "123"})),
        Some(Verdict::Fail),
        &["continuation", "not an integer"],
    );
    assert_eq!(
        over_ws(log, json!({"currency": "BTC", "continuation": 123})),
        Vec::<String>::new()
    );
    assert_eq!(
        over_query("private/get_transaction_log?currency=BTC&continuation=123"),
        Vec::<String>::new()
    );
    assert_only_finding(
        &over_ws(
            "private/get_trigger_order_history",
            json!({"currency": "BTC", "continuation": 5}),
        ),
        Some(Verdict::Fail),
        &["continuation", "not a string"],
    );
}

#[test]
fn a_value_outside_the_listed_ones_fails_naming_a_case_difference() {
    assert_only_finding(
        &over_ws(
            "private/close_position",
            json!({"instrument_name": "BTC-PERPETUAL", "type": "LIMIT"}),
        ),
        Some(Verdict::Fail),
        &[
            "client.params.values",
            "`LIMIT`",
            "`limit`: the case differs",
        ],
    );
    assert_only_finding(
        &over_ws(
            "private/toggle_subaccount_login",
            json!({"sid": 7, "state": "off"}),
        ),
        Some(Verdict::Fail),
        &["state `off`"],
    );
    assert_only_finding(
        &over_query("private/get_trigger_order_history?currency=btc"),
        Some(Verdict::Fail),
        &["currency `btc`", "`BTC`: the case differs"],
    );
    // SOL is a currency of the transaction log, not of the trigger order history.
    assert_eq!(
        over_query("private/get_transaction_log?currency=SOL"),
        Vec::<String>::new()
    );
    assert_only_finding(
        &over_query("private/get_trigger_order_history?currency=SOL"),
        Some(Verdict::Fail),
        &["currency `SOL`", "get_trigger_order_history"],
    );
    // An index name that only responses carry.
    assert_only_finding(
        &over_query("private/get_mmp_status?index_name=eurr_usdc"),
        Some(Verdict::Fail),
        &["index_name `eurr_usdc`"],
    );
    assert_only_finding(
        &over_ws("private/delete_member", json!({"member_id": 0})),
        Some(Verdict::Fail),
        &["member_id 0", "outside 1.."],
    );
}

#[test]
fn a_named_mmp_group_needs_index_name_and_an_empty_one_does_not() {
    assert_only_finding(
        &over_query("private/get_mmp_status?mmp_group=quotes"),
        Some(Verdict::Fail),
        &["client.params.requires", "without index_name"],
    );
    assert_eq!(
        over_query("private/get_mmp_status?mmp_group="),
        Vec::<String>::new()
    );
    let findings = over_query("private/get_mmp_status?index_name=&mmp_group=quotes");
    assert!(
        findings
            .iter()
            .any(|line| line.starts_with("fail client.params.requires ")),
        "an empty index_name names no index: {findings:?}"
    );
    assert_eq!(
        over_query("private/get_mmp_status?index_name=btc_usd&mmp_group=quotes"),
        Vec::<String>::new()
    );
}

#[test]
fn a_timestamp_in_seconds_warns_and_one_in_milliseconds_passes() {
    let log = "private/get_transaction_log";
    assert_only_finding(
        &over_ws(
            log,
            json!({"currency": "BTC", "start_timestamp": 1_750_000_000, "end_timestamp": 1_750_000_000_000_u64}),
        ),
        Some(Verdict::Warn),
        &[
            "client.params.timestamp_ms",
            "start_timestamp 1750000000",
            "seconds",
        ],
    );
    assert_eq!(
        over_ws(
            log,
            json!({"currency": "BTC", "start_timestamp": 0, "end_timestamp": 1_750_000_000_000_u64})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn parameters_the_table_does_not_declare_and_null_values_are_not_judged() {
    assert_eq!(
        over_ws(
            "private/get_mmp_status",
            json!({"access_token": 5, "index_name": null, "extra": [1]})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_timestamp_that_is_a_moment_of_this_century_in_another_unit_fails() {
    let record = Record {
        at_ms: 1_750_000_000_000,
        body: json!({"jsonrpc": "2.0", "id": 1, "method": "private/get_transaction_log", "params": {"currency": "BTC", "start_timestamp": 1_749_000_000, "end_timestamp": 1_750_000_000_000_u64}})
            .to_string()
            .into_bytes(),
        ..Record::sample(1, TransportKind::Ws)
    };
    assert_only_finding(
        &judged(&record),
        Some(Verdict::Fail),
        &[
            "client.params.timestamp_ms",
            "reads as seconds, not milliseconds",
        ],
    );
    for (value, unit) in [
        (1_262_304_000_i64, "seconds"),
        (1_749_000_000_000_000, "microseconds"),
        (1_749_000_000_000_000_000, "nanoseconds"),
    ] {
        let record = Record {
            at_ms: 1_750_000_000_000,
            body: json!({"jsonrpc": "2.0", "id": 1, "method": "private/get_transaction_log", "params": {"currency": "BTC", "end_timestamp": value}})
                .to_string()
                .into_bytes(),
            ..Record::sample(1, TransportKind::Ws)
        };
        assert_only_finding(
            &judged(&record),
            Some(Verdict::Fail),
            &[&format!("reads as {unit}")],
        );
    }
}

#[test]
fn a_parameter_spec_md_names_without_a_type_is_held_to_none() {
    // 4.2: "`subject_id` (target subaccount id)".
    assert_eq!(
        over_ws(
            "public/exchange_token",
            json!({"refresh_token": "r", "subject_id": "100011"})
        ),
        Vec::<String>::new()
    );
    assert_only_finding(
        &over_ws(
            "public/exchange_token",
            json!({"refresh_token": 5, "subject_id": 100011}),
        ),
        Some(Verdict::Fail),
        &["refresh_token", "not a string"],
    );
}

#[test]
fn a_negative_integer_is_an_integer_out_of_range_and_a_huge_one_an_integer_too() {
    assert_only_finding(
        &over_ws("private/delete_member", json!({"member_id": -1})),
        Some(Verdict::Fail),
        &["client.params.values", "member_id -1", "outside 1.."],
    );
    // Past i64 but still an integer: its type holds (its range is the values clause's).
    let findings = over_ws("private/delete_member", json!({"member_id": u64::MAX}));
    assert!(
        findings
            .iter()
            .all(|line| !line.contains("client.params.type")),
        "{findings:?}"
    );
}

/// The findings of `get_transaction_log` with `end_timestamp` `value`, arriving at a moment
/// of 2025.
fn end_at(value: i64) -> Vec<String> {
    let record = Record {
        at_ms: 1_750_000_000_000,
        body: json!({"jsonrpc": "2.0", "id": 1, "method": "private/get_transaction_log", "params": {"currency": "BTC", "end_timestamp": value}})
            .to_string()
            .into_bytes(),
        ..Record::sample(1, TransportKind::Ws)
    };
    judged(&record)
}

#[test]
fn the_edges_of_the_units_of_a_timestamp() {
    // 1e9 is the first value read in another unit: as seconds, September 2001.
    assert_only_finding(
        &end_at(1_000_000_000),
        Some(Verdict::Fail),
        &["reads as seconds"],
    );
    assert_eq!(end_at(999_999_999), Vec::<String>::new());
    // 1e11 is the first value read as milliseconds again (1973): no warning.
    assert_eq!(end_at(100_000_000_000), Vec::<String>::new());
    assert_only_finding(
        &end_at(99_999_999_999),
        Some(Verdict::Warn),
        &["reads as seconds"],
    );
    // A bound up to a day ahead, in seconds, is a moment of now.
    let ahead_23_hours = (1_750_000_000_000 + 23 * 3_600_000) / 1_000;
    assert_only_finding(
        &end_at(ahead_23_hours),
        Some(Verdict::Fail),
        &["reads as seconds"],
    );
}
