//! Which results a judged session reports.

use super::*;

fn record(transport: TransportKind) -> Record {
    numbered(1, transport)
}

fn numbered(seq: u64, transport: TransportKind) -> Record {
    Record {
        event: seq + 99,
        uri: "/api/v2/public/get_currencies".to_owned(),
        ..Record::sample(seq, transport)
    }
    .answered(serde_json::json!({ "seq": seq }))
}

fn target() -> Target {
    let state = crate::serve::ServerState::new(&crate::serve::ServeConfig::loopback());
    state.target("127.0.0.1:9".parse().unwrap())
}

/// Hands `use_it` the session of `records` judged by `tally`, seen through `filter` and
/// `transports`, against the reference's target and the embedded catalog.
fn with_judged<T>(
    records: &[Record],
    tally: &Tally,
    filter: Option<&str>,
    transports: Option<&[TransportKind]>,
    use_it: impl FnOnce(&Judged<'_>) -> T,
) -> T {
    let target = target();
    let catalog = Catalog::embedded().expect("the embedded catalog");
    use_it(&Judged {
        records,
        tally,
        catalog: &catalog,
        target: &target,
        redactor: Redactor::default(),
        duration: Duration::ZERO,
        filter,
        transports,
    })
}

/// The report's view of one clause over `http-query`, judged from `tally` over `records`.
fn result_of(records: &[Record], tally: &Tally, level: Level) -> CaseResult {
    with_judged(records, tally, None, None, |judged| {
        result(judged, CLAUSE, "a clause", level, TransportKind::HttpQuery)
    })
}

const CLAUSE: &str = "client.token.http_header";

#[test]
fn only_the_transports_a_session_used_and_the_report_wants_are_reported() {
    let records = [record(TransportKind::HttpQuery), record(TransportKind::Ws)];
    let tally = Tally::default();
    let transports_of = |only: Option<&[TransportKind]>| {
        let mut seen: Vec<TransportKind> = with_judged(&records, &tally, None, only, to_run_report)
            .results
            .iter()
            .map(|result| result.transport)
            .collect();
        seen.dedup();
        seen
    };
    let all = transports_of(None);
    assert!(!all.is_empty());
    assert!(
        all.iter()
            .all(|transport| [TransportKind::HttpQuery, TransportKind::Ws].contains(transport)),
        "{all:?}"
    );
    assert!(all.contains(&TransportKind::Ws) && all.contains(&TransportKind::HttpQuery));
    assert_eq!(
        transports_of(Some(&[TransportKind::Ws, TransportKind::HttpBody])),
        [TransportKind::Ws]
    );
}

#[test]
fn only_the_clauses_the_filter_names_are_reported() {
    let records = [record(TransportKind::HttpQuery)];
    let report = with_judged(
        &records,
        &Tally::default(),
        Some("client.env."),
        None,
        to_run_report,
    );
    let cases: Vec<String> = report
        .results
        .into_iter()
        .map(|result| result.case)
        .collect();
    assert!(!cases.is_empty());
    assert!(
        cases.iter().all(|case| case.starts_with("client.env.")),
        "{cases:?}"
    );
}

#[test]
fn a_failing_clause_shows_its_first_failure_counts_the_rest_and_its_failures_first() {
    let records: Vec<Record> = (1..=5)
        .map(|seq| numbered(seq, TransportKind::HttpQuery))
        .collect();
    let mut tally = Tally::default();
    tally.pass(CLAUSE, TransportKind::HttpQuery);
    tally.warn(CLAUSE, TransportKind::HttpQuery, Some(1), "odd");
    tally.fail(CLAUSE, TransportKind::HttpQuery, Some(4), "broken four");
    tally.fail(CLAUSE, TransportKind::HttpQuery, Some(2), "broken two");
    let result = result_of(&records, &tally, Level::Must);
    assert_eq!(result.verdict, Verdict::Fail);
    assert_eq!(
        result.message,
        "request #4: broken four (2 requests in all)"
    );
    let shown: Vec<&str> = result
        .exchanges
        .iter()
        .map(|exchange| exchange.request.url.as_str())
        .collect();
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert_eq!(
        result
            .findings
            .iter()
            .map(|f| f.verdict)
            .collect::<Vec<_>>(),
        [Verdict::Warn, Verdict::Fail, Verdict::Fail]
    );
    // The offending requests, failures first: #4, #2, then the warned #1.
    let seqs: Vec<u64> = result
        .exchanges
        .iter()
        .map(|exchange| {
            exchange.response.as_ref().unwrap().json.as_ref().unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [4, 2, 1]);

    let mut one = Tally::default();
    one.fail(CLAUSE, TransportKind::HttpQuery, Some(3), "broken three");
    assert_eq!(
        result_of(&records, &one, Level::Must).message,
        "request #3: broken three"
    );
}

#[test]
fn a_warning_alone_is_the_message_and_an_info_clause_never_fails() {
    let records = [numbered(1, TransportKind::HttpQuery)];
    let mut tally = Tally::default();
    tally.warn(CLAUSE, TransportKind::HttpQuery, Some(1), "odd");
    let result = result_of(&records, &tally, Level::Warn);
    assert_eq!(
        (result.verdict, result.message.as_str()),
        (Verdict::Warn, "request #1: odd")
    );
    let mut failed = Tally::default();
    failed.fail(CLAUSE, TransportKind::HttpQuery, Some(1), "broken");
    assert_eq!(
        result_of(&records, &failed, Level::Info).verdict,
        Verdict::Info
    );
}

#[test]
fn a_clause_nothing_exercised_says_why_with_a_hint_where_one_helps() {
    use TransportKind::{HttpBody, HttpQuery, Ws};
    assert_eq!(
        skip_reason("client.token.http_header", Ws),
        "no request over ws exercised this clause"
    );
    assert!(
        skip_reason("client.log_type.tolerant", Ws)
            .ends_with("--scenario unknown-types serves more")
    );
    assert!(
        skip_reason("client.pagination.follow", Ws)
            .ends_with("--scenario short-pages provokes early stops")
    );
    assert!(skip_reason("client.env.id", HttpQuery).ends_with("carry no json-rpc envelope"));
    assert!(!skip_reason("client.env.id", HttpBody).contains("envelope"));
    assert!(!skip_reason("client.token.http_header", HttpQuery).contains("envelope"));
}

#[test]
fn an_exchange_names_the_url_of_its_transport_and_a_body_only_when_sent() {
    let target = target();
    let http = exchange(&target, &numbered(1, TransportKind::HttpQuery));
    assert!(
        http.request
            .url
            .starts_with(&target.base_url.replace("/api/v2", ""))
    );
    assert!(http.request.url.ends_with("/api/v2/public/get_currencies"));
    assert_eq!(http.request.body, None);
    let mut message = numbered(2, TransportKind::Ws);
    message.uri = "/ws/api/v2".to_owned();
    message.body =
        br#"{"jsonrpc":"2.0","id":9,"method":"public/get_currencies","params":{}}"#.to_vec();
    let ws = exchange(&target, &message);
    let ws_url = target.ws_url.clone().expect("a websocket url");
    assert_eq!(ws.request.url, ws_url);
    assert_eq!(ws.request.id, Some(9));
    assert!(ws.request.body.is_some());
}
