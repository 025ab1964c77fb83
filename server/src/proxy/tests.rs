//! The proxy's pure parts without sockets: URL mapping, pairing answers with requests,
//! each server check failing on the answer that breaks it and passing the reference's, and
//! the replay case file.

use std::sync::Arc;

use axum::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

mod pages;
mod replay;

use super::observe::{Book, Event, judge_events};
use super::server::assess_answers;
use super::*;
use crate::serve::{RawRequest, Wire};
use harness_model::check::Verdict;
use harness_model::corpus::{Corpus, CorpusSource};
use harness_protocol::wire::TransportKind;

fn corpus() -> Corpus {
    Corpus::load(&CorpusSource::default()).unwrap()
}

fn upstream() -> Target {
    let state = crate::serve::ServerState::new(&crate::serve::ServeConfig::loopback());
    state.target("127.0.0.1:9".parse().unwrap())
}

fn record(seq: u64, transport: TransportKind, uri: &str, body: Value, answer: Value) -> Record {
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    Record {
        event: seq * 2,
        uri: uri.to_owned(),
        body,
        ..Record::sample(seq, transport)
    }
    .answered(answer)
}

fn ws_call(seq: u64, id: u64, method: &str, answer: Value) -> Record {
    record(
        seq,
        TransportKind::Ws,
        "/ws/api/v2",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}),
        answer,
    )
}

/// The verdict of a server clause over a transport.
fn verdict(records: &[Record], clause: &str, transport: TransportKind) -> Option<Verdict> {
    let corpus = corpus();
    let tally = assess_answers(records, &corpus.schemas, &corpus.catalog);
    tally.get(clause, transport).and_then(|cell| cell.verdict())
}

#[test]
fn paths_map_to_the_upstream_urls_of_their_prefix() {
    let mut target = upstream();
    target.base_url = "https://api.example.test/api/v2".to_owned();
    target.direct_access_url = Some("https://direct.example.test".to_owned());
    let map = |path: &str| http::map_url(&target, path);
    assert_eq!(
        map("/api/v2/public/get_currencies?x=1"),
        "https://api.example.test/api/v2/public/get_currencies?x=1"
    );
    assert_eq!(
        map("/direct/api/v2/private/lock_portfolio"),
        "https://direct.example.test/api/v2/private/lock_portfolio"
    );
    assert_eq!(map("/other"), "https://api.example.test/other");
    assert_eq!(map("/api/v2x"), "https://api.example.test/api/v2x");
    // An upstream whose API lives under another path: the prefix is replaced by it.
    target.base_url = "https://gateway.example.test/exchange".to_owned();
    let map = |path: &str| http::map_url(&target, path);
    assert_eq!(
        map("/api/v2/public/get_currencies"),
        "https://gateway.example.test/exchange/public/get_currencies"
    );
    assert_eq!(map("/api/v2"), "https://gateway.example.test/exchange");
}

#[test]
fn hop_by_hop_headers_stay_and_a_failed_upstream_is_a_bad_gateway() {
    use axum::http::HeaderName;
    for hop in ["connection", "keep-alive", "proxy-authorization", "te"] {
        assert!(!http::forwarded(&HeaderName::from_static(hop)), "{hop}");
    }
    for end_to_end in ["authorization", "content-type", "accept"] {
        assert!(
            http::forwarded(&HeaderName::from_static(end_to_end)),
            "{end_to_end}"
        );
    }
    let answer = http::bad_gateway("upstream refused".to_owned());
    assert_eq!(answer.status(), axum::http::StatusCode::BAD_GATEWAY);
}

#[test]
fn the_client_target_keeps_the_accounts_and_names_the_proxy() {
    let upstream = upstream();
    let client = client_target(&upstream, "127.0.0.1:8720".parse().unwrap());
    assert_eq!(client.base_url, "http://127.0.0.1:8720/api/v2");
    assert_eq!(
        client.ws_url.as_deref(),
        Some("ws://127.0.0.1:8720/ws/api/v2")
    );
    assert_eq!(
        client.direct_access_url.as_deref(),
        Some("http://127.0.0.1:8720/direct")
    );
    assert_eq!(client.accounts, upstream.accounts);
    assert_eq!(
        client.name,
        format!("{} (through harness proxy)", upstream.name)
    );
}

#[test]
fn only_answered_get_and_websocket_requests_naming_a_method_are_judged() {
    let answered = record(
        1,
        TransportKind::HttpQuery,
        "/api/v2/public/get_currencies",
        Value::Null,
        json!({"jsonrpc": "2.0", "id": 1, "result": []}),
    );
    let mut posted = answered.clone();
    posted.http_method = "POST".to_owned();
    let mut unanswered = answered.clone();
    unanswered.answer = None;
    let mut no_method = answered.clone();
    no_method.uri = "/api/v2".to_owned();
    assert!(super::pages::judged(&answered));
    for (what, record) in [
        ("a POST", &posted),
        ("no answer", &unanswered),
        ("no method", &no_method),
    ] {
        assert!(!super::pages::judged(record), "{what} is not judged");
        assert_eq!(
            super::server::transports(std::slice::from_ref(record)),
            Vec::new(),
            "{what}: no transport was exercised"
        );
    }
}

fn raw(seq: u64, wire: Wire, connection: &str, body: Value) -> Event {
    Event::Request(RawRequest {
        seq,
        wire,
        connection: connection.to_owned(),
        at_ms: seq,
        method: "WS".to_owned(),
        uri: "/ws/api/v2".to_owned(),
        headers: Vec::new(),
        body: Bytes::from(body.to_string()),
    })
}

fn server_message(connection: &str, body: Value) -> Event {
    Event::WsMessage {
        connection: connection.to_owned(),
        body: Bytes::from(body.to_string()),
        at_ms: 9,
    }
}

fn run_events(events: Vec<Event>) -> Book {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (sender, inbox) = mpsc::channel(64);
        let (finish, finished) = oneshot::channel();
        let answered = Arc::new(watch::Sender::new(0));
        let task = tokio::spawn(judge_events(
            inbox,
            finished,
            10,
            harness_model::check::Redactor::default(),
            answered,
        ));
        for event in events {
            sender.send(event).await.unwrap();
        }
        finish.send(()).unwrap();
        task.await.unwrap()
    })
}

#[test]
fn websocket_answers_pair_by_id_then_with_the_oldest_waiting_request() {
    let request = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "public/get_currencies", "params": {}});
    let book = run_events(vec![
        raw(1, Wire::Ws, "ws#1", request(10)),
        raw(2, Wire::Ws, "ws#1", request(11)),
        raw(3, Wire::Ws, "ws#2", request(10)),
        // Out of order on ws#1; a notification is no answer.
        server_message(
            "ws#1",
            json!({"jsonrpc": "2.0", "method": "subscription", "params": {}}),
        ),
        server_message("ws#1", json!({"jsonrpc": "2.0", "id": 11, "result": "b"})),
        // A wrong id on ws#2 goes to its only waiting request.
        server_message("ws#2", json!({"jsonrpc": "2.0", "id": 99, "result": "c"})),
        server_message("ws#1", json!({"jsonrpc": "2.0", "id": 10, "result": "a"})),
    ]);
    let results: Vec<Option<Value>> = book
        .records
        .iter()
        .map(|record| record.result().cloned())
        .collect();
    assert_eq!(
        results,
        vec![Some(json!("a")), Some(json!("b")), Some(json!("c"))]
    );
}

#[test]
fn the_reference_answers_pass_every_server_check() {
    let records = vec![
        ws_call(
            1,
            5,
            "public/get_currencies",
            json!({"jsonrpc": "2.0", "id": 5, "result": []}),
        ),
        ws_call(
            2,
            6,
            "private/toggle_subaccount_login",
            json!({"jsonrpc": "2.0", "id": 6,
            "error": {"code": 13668, "message": "security_key_authorization_error"}}),
        ),
    ];
    for clause in [
        "env.response.id",
        "env.response.jsonrpc",
        "env.response.exclusive",
        "m.get_currencies.result",
        "auth.two_factor.13668",
    ] {
        assert_eq!(
            verdict(&records, clause, TransportKind::Ws),
            Some(Verdict::Pass),
            "{clause}"
        );
    }
}

#[test]
fn each_server_check_fails_on_the_answer_that_breaks_it() {
    let cases = [
        (
            json!({"jsonrpc": "2.0", "id": 6, "result": []}),
            "public/get_currencies",
            "env.response.id",
        ),
        (
            json!({"jsonrpc": "1.0", "id": 5, "result": []}),
            "public/get_currencies",
            "env.response.jsonrpc",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5}),
            "public/get_currencies",
            "env.response.exclusive",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "result": "not an array"}),
            "public/get_currencies",
            "m.get_currencies.result",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": 10000, "message": "security_key_authorization_error"}}),
            "private/toggle_subaccount_login",
            "auth.two_factor.13668",
        ),
    ];
    for (answer, method, clause) in cases {
        let records = vec![ws_call(1, 5, method, answer)];
        assert_eq!(
            verdict(&records, clause, TransportKind::Ws),
            Some(Verdict::Fail),
            "{clause}"
        );
    }
    let mut over_http = record(
        1,
        TransportKind::HttpQuery,
        "/api/v2/public/get_currencies",
        Value::Null,
        json!({"jsonrpc": "2.0", "id": null, "result": []}),
    );
    if let Some(answer) = over_http.answer.as_mut() {
        answer.status = Some(201);
    }
    assert_eq!(
        verdict(
            &[over_http],
            "http.status.success",
            TransportKind::HttpQuery
        ),
        Some(Verdict::Fail)
    );
}

#[test]
fn what_spec_md_leaves_open_never_fails() {
    // An error object of another shape, and an error with any status: not shown.
    let mut records = vec![ws_call(
        1,
        5,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 5, "error": "nope"}),
    )];
    let mut over_http = record(
        2,
        TransportKind::HttpQuery,
        "/api/v2/private/get_mmp_status",
        Value::Null,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": 13009, "message": "unauthorized"}}),
    );
    if let Some(answer) = over_http.answer.as_mut() {
        answer.status = Some(400);
    }
    records.push(over_http);
    let corpus = corpus();
    let tally = assess_answers(&records, &corpus.schemas, &corpus.catalog);
    assert!(tally.failed_clauses().is_empty(), "{:?}", tally.describe());
    // A request without an answer is not claimed.
    let mut unanswered = ws_call(3, 7, "public/get_currencies", Value::Null);
    unanswered.answer = None;
    let tally = assess_answers(&[unanswered], &corpus.schemas, &corpus.catalog);
    assert_eq!(tally.iter().count(), 0);
    // Nor is the answer to a request sent with POST (SPEC.md: every method is a GET).
    let mut posted = record(
        4,
        TransportKind::HttpBody,
        "/api/v2/public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 0, "method": "public/get_currencies", "params": {}}),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601, "message": "not found"}}),
    );
    posted.http_method = "POST".to_owned();
    let tally = assess_answers(&[posted], &corpus.schemas, &corpus.catalog);
    assert_eq!(tally.iter().count(), 0);
}

#[test]
fn a_session_replays_as_a_case_that_keeps_its_requests_but_not_their_credentials() {
    let corpus = corpus();
    let upstream = upstream();
    let session = Session {
        records: vec![
            ws_call(
                1,
                1,
                "public/auth",
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            ),
            record(
                2,
                TransportKind::Ws,
                "/ws/api/v2",
                json!({"jsonrpc": "2.0", "id": 2, "method": "private/get_mmp_status",
                    "params": {"access_token": "tok-123", "index_name": "btc_usd", "mmp_group": null}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": []}),
            ),
        ],
        unjudged: 0,
        knowledge: crate::judge::Knowledge::from_target(&upstream),
        client_target: upstream.clone(),
        upstream,
        redactor: harness_model::check::Redactor::default(),
    };
    let records: Vec<&Record> = session.records.iter().collect();
    let text = record::case_file("session_1", &records, &session, &corpus.catalog).unwrap();
    assert!(
        !text.contains("tok-123") && !text.contains("public/auth\""),
        "{text}"
    );
    let case = harness_model::case::parse_case(
        std::path::Path::new("session_1.toml"),
        &text,
        &corpus.catalog,
        &corpus.schemas,
    )
    .unwrap_or_else(|error| panic!("{error}\n{text}"));
    assert_eq!(case.steps.len(), 1);
    assert_eq!(case.steps[0].call_method(), Some("private/get_mmp_status"));
    assert_eq!(
        case.steps[0].params.get("index_name"),
        Some(&json!("btc_usd"))
    );
    assert_eq!(case.transports, vec![TransportKind::Ws]);
}

#[test]
fn the_client_target_trusts_no_certificate_of_the_upstream() {
    // The proxy listens over plain loopback: the upstream's CA file and its leave to
    // accept any certificate are the proxy's business, not its client's.
    let mut upstream = upstream();
    upstream.tls.ca_file = Some(std::path::PathBuf::from("upstream-ca.pem"));
    upstream.tls.accept_invalid_certs = true;
    let client = client_target(&upstream, "127.0.0.1:7".parse().unwrap());
    assert_eq!(client.tls, Default::default());
    assert!(client.base_url.starts_with("http://127.0.0.1:7/"));
}

#[test]
fn the_second_factor_clause_is_judged_only_on_a_method_that_needs_it() {
    let currencies = ws_call(
        1,
        1,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 1, "result": []}),
    );
    assert_eq!(
        verdict(&[currencies], "auth.two_factor.13668", TransportKind::Ws),
        None
    );
    // Nor on an error of a method that does not need it.
    let refused = ws_call(
        2,
        2,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": 10000, "message": "no"}}),
    );
    assert_eq!(
        verdict(&[refused], "auth.two_factor.13668", TransportKind::Ws),
        None
    );
}

#[test]
fn the_error_object_clause_is_judged_only_on_an_error() {
    let result = ws_call(
        1,
        1,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 1, "result": []}),
    );
    assert_eq!(
        verdict(&[result], "env.error.object", TransportKind::Ws),
        None
    );
    let error = ws_call(
        2,
        2,
        "public/get_currencies",
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": 10000, "message": "no"}}),
    );
    assert_eq!(
        verdict(&[error], "env.error.object", TransportKind::Ws),
        Some(Verdict::Pass)
    );
}

#[test]
fn a_secret_seen_only_in_a_request_is_learned_and_the_record_cap_counts_what_it_drops() {
    let mut events = Vec::new();
    let Event::Request(mut first) = raw(
        1,
        Wire::Ws,
        "ws#1",
        json!({"jsonrpc": "2.0", "id": 1, "method": "public/auth", "params": {"grant_type": "client_credentials", "client_id": "c", "client_secret": "sec-only-in-a-request-7"}}),
    ) else {
        unreachable!("raw makes a request")
    };
    first.headers.push((
        "authorization".to_owned(),
        "Bearer tok-only-in-a-request-42".to_owned(),
    ));
    events.push(Event::Request(first));
    // run_events keeps 10 records: 12 requests in all, 2 dropped and counted.
    for seq in 2..=12 {
        events.push(raw(
            seq,
            Wire::Ws,
            "ws#1",
            json!({"jsonrpc": "2.0", "id": seq, "method": "public/get_currencies", "params": {}}),
        ));
    }
    let book = run_events(events);
    assert_eq!(
        book.redactor
            .text("sec-only-in-a-request-7 tok-only-in-a-request-42"),
        "[redacted] [redacted]"
    );
    assert_eq!(book.records.len(), 10);
    assert_eq!(book.dropped, 2);
}

#[test]
fn a_server_message_without_a_method_or_with_a_result_answers_the_oldest_request() {
    // Neither answer carries its request's id: one has no result, no error and no
    // method, the other a method beside its result. Each is an answer all the same (a
    // notification has a method and no result), judged against the oldest request waiting.
    let events = vec![
        raw(
            1,
            Wire::Ws,
            "ws#1",
            json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": {}}),
        ),
        server_message("ws#1", json!({"jsonrpc": "2.0", "id": 77})),
        raw(
            2,
            Wire::Ws,
            "ws#1",
            json!({"jsonrpc": "2.0", "id": 2, "method": "public/get_currencies", "params": {}}),
        ),
        server_message(
            "ws#1",
            json!({"jsonrpc": "2.0", "id": 78, "method": "public/get_currencies", "result": []}),
        ),
        raw(
            3,
            Wire::Ws,
            "ws#1",
            json!({"jsonrpc": "2.0", "id": 3, "method": "public/get_currencies", "params": {}}),
        ),
        server_message(
            "ws#1",
            json!({"jsonrpc": "2.0", "method": "subscription", "params": {}}),
        ),
    ];
    let book = run_events(events);
    let answered: Vec<bool> = book
        .records
        .iter()
        .map(|record| record.answer.is_some())
        .collect();
    assert_eq!(answered, vec![true, true, false]);
}
