//! The replay case a session becomes, and which handshake headers go upstream.

use serde_json::{Value, json};

use super::{corpus, record, upstream, ws_call};
use crate::proxy::{Record, Session, record as replay, ws};
use harness_protocol::wire::TransportKind;

fn session(records: Vec<Record>) -> Session {
    let upstream = upstream();
    Session {
        records,
        unjudged: 0,
        knowledge: crate::judge::Knowledge::from_target(&upstream),
        client_target: upstream.clone(),
        upstream,
        redactor: harness_model::check::Redactor::default(),
    }
}

#[test]
fn a_replay_cites_each_result_clause_once_counts_what_it_leaves_out_and_drops_nulls() {
    let status = |seq: u64, params: Value| {
        record(
            seq,
            TransportKind::Ws,
            "/ws/api/v2",
            json!({"jsonrpc": "2.0", "id": seq, "method": "private/get_mmp_status", "params": params}),
            json!({"jsonrpc": "2.0", "id": seq, "result": []}),
        )
    };
    let mut unanswered = ws_call(
        4,
        4,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 4, "result": []}),
    );
    unanswered.answer = None;
    let rest = record(
        5,
        TransportKind::Rest,
        "/api/v2/private/get_mmp_status",
        Value::Null,
        json!({"jsonrpc": "2.0", "id": null, "result": []}),
    );
    let session = session(vec![
        status(1, json!({"index_name": "btc_usd"})),
        status(2, json!({"index_name": "eth_usd"})),
        status(
            3,
            json!({"index_name": "btc_usd", "extra": {"gone": null, "kept": 1}, "list": [null, 2]}),
        ),
        unanswered,
        rest,
    ]);
    let records: Vec<&Record> = session.records.iter().collect();
    let corpus = corpus();
    let text = replay::case_file("session_2", &records, &session, &corpus.catalog).unwrap();
    assert!(text.contains(": 5 requests, 2 not replayed"), "{text}");
    let case: toml::Table = toml::from_str(&text).unwrap_or_else(|error| panic!("{error}\n{text}"));
    let clause = harness_model::check::result_clause("private/get_mmp_status").unwrap();
    let cited = case["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|cited| cited.as_str() == Some(clause))
        .count();
    assert_eq!(cited, 1, "{text}");
    let steps = case["step"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{text}");
    assert!(
        steps.iter().all(
            |step| step["call"].as_str() == Some("private/get_mmp_status")
                && step["transport"].as_str() == Some("ws")
        ),
        "{text}"
    );
    let params = steps[2]["params"].as_table().unwrap();
    assert_eq!(params["extra"].as_table().unwrap().len(), 1, "{text}");
    assert_eq!(params["extra"]["kept"].as_integer(), Some(1), "{text}");
    assert_eq!(params["list"].as_array().unwrap().len(), 1, "{text}");
}

#[test]
fn a_handshake_passes_its_end_to_end_headers_upstream_and_not_its_own() {
    for own in [
        "host",
        "connection",
        "upgrade",
        "content-length",
        "transfer-encoding",
        "sec-websocket-key",
        "sec-websocket-version",
    ] {
        assert!(!ws::copied(own), "{own}");
    }
    for end_to_end in ["authorization", "user-agent", "x-request-id", "cookie"] {
        assert!(ws::copied(end_to_end), "{end_to_end}");
    }
}
