//! Clients walking the transaction log against the judge: an unpaced walk fails pacing and
//! only pacing, a falsy-cursor walk is caught under `small-cursors`, a well-behaved client
//! (any scheme name, a session-scoped WebSocket, fresh timestamps on every page) passes, and
//! `unknown-types` really serves unlisted types.

use harness::judge::Cell;

use super::*;

/// A transaction-log page over HTTP with a bearer token, `count`, an optional continuation
/// and a fresh `end_timestamp`.
async fn txlog_page(target: &Target, token: &str, count: u32, next: Option<&Value>) -> Value {
    let mut uri = format!(
        "/api/v2/private/get_transaction_log?currency=BTC&count={count}&start_timestamp=0&end_timestamp={}",
        now_ms()
    );
    if let Some(next) = next {
        uri.push_str(&format!("&continuation={next}"));
    }
    get(
        target,
        &uri,
        &[("authorization", format!("Bearer {token}"))],
        None,
    )
    .await
}

/// Walks to the end as fast as the server lets it: a page refused for pacing is asked for
/// again 200 ms later. At most 60 requests.
async fn unpaced_walk(target: &Target, token: &str, count: u32) -> usize {
    let mut next: Option<Value> = None;
    for sent in 1..=60 {
        let page = txlog_page(target, token, count, next.as_ref()).await;
        if page["error"]["code"] == 10028 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        match &page["result"]["continuation"] {
            Value::Null => return sent,
            continuation => next = Some(continuation.clone()),
        }
    }
    panic!("the walk did not end in 60 requests")
}

fn verdict_of(
    tally: &Tally,
    clause: &str,
    transport: harness::wire::TransportKind,
) -> Option<Verdict> {
    tally.get(clause, transport).and_then(Cell::verdict)
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn an_unpaced_walk_fails_pacing_and_nothing_else() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (requests, tally) = runtime.block_on(async {
        let judge = with_timeout(judge::start(judge::JudgeConfig::loopback()))
            .await
            .unwrap();
        let target = judge.target().clone();
        let token = login(&target).await;
        let requests = unpaced_walk(&target, &token, 25).await;
        (requests, finish(judge).await)
    });
    assert!(requests > 7, "the walk took {requests} requests");
    let http = harness::wire::TransportKind::HttpQuery;
    let findings = tally.describe();
    assert_eq!(
        verdict_of(&tally, "client.rate.transaction_log", http),
        Some(Verdict::Fail),
        "{findings:#?}"
    );
    assert!(
        findings.iter().any(|f| f.contains("burst of 5")),
        "{findings:#?}"
    );
    assert_eq!(tally.failed_clauses(), vec!["client.rate.transaction_log"]);
    assert_eq!(
        verdict_of(&tally, "client.pagination.follow", http),
        Some(Verdict::Pass),
        "refused pages asked for again count as followed: {findings:#?}"
    );
}

#[test]
fn a_walk_that_takes_continuation_zero_for_the_end_is_caught() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for falsy_ends in [true, false] {
        let (cursors, tally) = runtime.block_on(async {
            let mut config = judge::JudgeConfig::loopback();
            config.scenario = Scenario::SmallCursors;
            let judge = with_timeout(judge::start(config)).await.unwrap();
            let target = judge.target().clone();
            let token = login(&target).await;
            let mut next: Option<Value> = None;
            let mut cursors = Vec::new();
            loop {
                let page = txlog_page(&target, &token, 60, next.as_ref()).await;
                let continuation = page["result"]["continuation"].clone();
                cursors.push(continuation.clone());
                let ends = if falsy_ends {
                    continuation.is_null() || continuation == 0
                } else {
                    continuation.is_null()
                };
                if ends {
                    break;
                }
                next = Some(continuation);
            }
            (cursors, finish(judge).await)
        });
        assert!(
            cursors.len() >= 3 && cursors.contains(&json!(0)),
            "{cursors:?}"
        );
        let findings = tally.describe();
        if falsy_ends {
            assert!(
                findings
                    .iter()
                    .any(|f| f.starts_with("fail client.pagination.follow")
                        && f.contains("0 is a further page")),
                "{findings:#?}"
            );
        } else {
            assert_eq!(findings, Vec::<String>::new());
        }
    }
}

#[test]
fn a_well_behaved_client_with_its_own_scheme_name_and_session_passes() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tally = runtime.block_on(async {
        let judge = with_timeout(judge::start(judge::JudgeConfig::loopback()))
            .await
            .unwrap();
        let target = judge.target().clone();
        let (client_id, secret) = main_account(&target);
        // The signed header under a scheme name of the client's own.
        let uri = "/api/v2/private/get_mmp_status?index_name=btc_usd";
        let header = SignedHeader::sign(
            "deri-hmac-sha256",
            &client_id,
            &secret,
            &harness::auth::sign::HttpSignedFields::get(now_ms(), "n-good-1", uri),
        )
        .unwrap()
        .to_header_value();
        let answer = get(&target, uri, &[("authorization", header)], None).await;
        assert!(answer["result"].is_array(), "served: {answer}");
        // A session-scoped WebSocket login, then private calls without the token.
        let answers = ws(
            &target,
            "",
            &[
                json!({"jsonrpc": "2.0", "id": 1, "method": "public/auth", "params": {
                    "grant_type": "client_credentials", "client_id": client_id,
                    "client_secret": secret, "scope": "session:bot account:read trade:read"}}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "private/get_mmp_status", "params": {}}),
            ],
        )
        .await;
        assert!(answers[1]["result"].is_array(), "{}", answers[1]);
        // A walk to the end, with a fresh end_timestamp on every page.
        let token = login(&target).await;
        let mut next: Option<Value> = None;
        loop {
            let page = txlog_page(&target, &token, 100, next.as_ref()).await;
            match &page["result"]["continuation"] {
                Value::Null => break,
                continuation => next = Some(continuation.clone()),
            }
        }
        finish(judge).await
    });
    assert_eq!(tally.describe(), Vec::<String>::new());
    let http = harness::wire::TransportKind::HttpQuery;
    let ws = harness::wire::TransportKind::Ws;
    for (clause, transport) in [
        ("client.signed.request_data", http),
        ("client.signed.well_formed", http),
        ("client.http.method", http),
        ("client.pagination.follow", http),
        ("client.rate.transaction_log", http),
        ("client.token.ws_param", ws),
    ] {
        assert_eq!(
            verdict_of(&tally, clause, transport),
            Some(Verdict::Pass),
            "{clause} [{transport}]"
        );
    }
    assert!(
        tally
            .describe_notes()
            .iter()
            .any(|note| note.contains("\"deri-hmac-sha256\" seen")),
        "{:#?}",
        tally.describe_notes()
    );
}

#[test]
fn unknown_types_serves_types_spec_does_not_list() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for scenario in [Scenario::UnknownTypes, Scenario::Default] {
        let page = runtime.block_on(async {
            let mut config = judge::JudgeConfig::loopback();
            config.scenario = scenario;
            let judge = with_timeout(judge::start(config)).await.unwrap();
            let target = judge.target().clone();
            let token = login(&target).await;
            let page = txlog_page(&target, &token, 50, None).await;
            finish(judge).await;
            page
        });
        let logs = page["result"]["logs"].as_array().unwrap();
        let new_types: Vec<&str> = logs
            .iter()
            .filter_map(|entry| entry["type"].as_str())
            .filter(|kind| ["fee_rebate", "airdrop", "margin_call_v2"].contains(kind))
            .collect();
        let extra_members = logs
            .iter()
            .filter(|entry| entry.get("x_source_region").is_some())
            .count();
        if scenario == Scenario::UnknownTypes {
            assert!(
                new_types.len() >= logs.len() / 4,
                "{new_types:?} of {}",
                logs.len()
            );
            assert_eq!(extra_members, logs.len());
        } else {
            assert_eq!((new_types.len(), extra_members), (0, 0));
        }
    }
}
