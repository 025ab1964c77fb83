//! The client judge over real sockets: the harness's own runner is a client the judge finds
//! nothing against, and each deliberately faulty client (one bug each, built from
//! `harness::auth::sign` pieces) is caught citing the clause it breaks.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::auth::clock::Clock;
use harness::auth::sign::{self, SignedHeader};
use harness::case::{self, Case};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::judge::{self, Judge, Scenario, Tally};
use harness::run;
use harness::selftest::conforming_client_case;
use harness::target_file::Target;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

mod cli;
mod faulty;
mod faulty_tables;
mod pacing;
mod relogin;
mod walks;

const WAIT: Duration = Duration::from_secs(60);

/// Every network await goes through this, so a broken judge fails a test instead of
/// hanging it.
async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("network await timed out")
}

fn now_ms() -> u64 {
    Clock::system().now_ms()
}

async fn start(scenario: Scenario, burst: u32) -> Judge {
    let mut config = judge::JudgeConfig::loopback();
    config.scenario = scenario;
    config.limits.transaction_log_burst = burst;
    with_timeout(judge::start(config))
        .await
        .expect("judge starts")
}

async fn finish(judge: Judge) -> Tally {
    let knowledge = judge.knowledge();
    let records = with_timeout(judge.stop()).await;
    judge::assess(&records, &knowledge)
}

/// A runtime for tests that start one judge after another.
fn multi_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Whether `findings` (as [`Tally::describe`] writes them) hold one of `verdict` on
/// `clause` whose message holds `fragment`.
fn found(findings: &[String], verdict: Verdict, clause: &str, fragment: &str) -> bool {
    findings.iter().any(|finding| {
        finding.starts_with(verdict.as_str())
            && finding.contains(&format!(" {clause} "))
            && finding.contains(fragment)
    })
}

fn main_account(target: &Target) -> (String, String) {
    let account = &target.accounts["main"];
    (
        account.client_id.clone(),
        account.client_secret.expose().to_owned(),
    )
}

fn origin(target: &Target) -> String {
    target.base_url.trim_end_matches("/api/v2").to_owned()
}

/// GET `path_and_query` with optional headers and body; the answer as JSON.
async fn get(
    target: &Target,
    path_and_query: &str,
    headers: &[(&str, String)],
    body: Option<String>,
) -> Value {
    let mut request = reqwest::Client::new().get(format!("{}{path_and_query}", origin(target)));
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let response = with_timeout(request.send())
        .await
        .expect("request is answered");
    with_timeout(response.json::<Value>())
        .await
        .expect("answer is json")
}

/// POST `path` with a JSON-RPC body; the answer as JSON (the judge answers whatever it is).
async fn post(target: &Target, path: &str, body: String) -> Value {
    let request = reqwest::Client::new()
        .post(format!("{}{path}", origin(target)))
        .header("content-type", "application/json")
        .body(body);
    let response = with_timeout(request.send())
        .await
        .expect("request is answered");
    with_timeout(response.json::<Value>())
        .await
        .expect("answer is json")
}

/// Sends `messages` on one WebSocket (URL suffix appended to the handshake) and reads as
/// many answers.
async fn ws(target: &Target, suffix: &str, messages: &[Value]) -> Vec<Value> {
    let url = format!("{}{suffix}", target.ws_url.as_deref().unwrap());
    let (mut socket, _) = with_timeout(tokio_tungstenite::connect_async(url))
        .await
        .expect("ws connects");
    for message in messages {
        with_timeout(socket.send(Message::text(message.to_string())))
            .await
            .expect("sent");
    }
    let mut answers = Vec::new();
    while answers.len() < messages.len() {
        match with_timeout(socket.next()).await {
            Some(Ok(Message::Text(text))) => answers.push(serde_json::from_str(&text).unwrap()),
            Some(Ok(_)) => {}
            other => panic!("websocket ended early: {other:?}"),
        }
    }
    answers
}

async fn login(target: &Target) -> String {
    let (client_id, secret) = main_account(target);
    let answer = get(
        target,
        &format!("/api/v2/public/auth?grant_type=client_credentials&client_id={client_id}&client_secret={secret}"),
        &[],
        None,
    )
    .await;
    answer["result"]["access_token"]
        .as_str()
        .expect("a token")
        .to_owned()
}

fn client_signature_auth(
    target: &Target,
    id: u64,
    timestamp: u64,
    nonce: &str,
    signature: String,
) -> Value {
    let (client_id, _) = main_account(target);
    json!({"jsonrpc": "2.0", "id": id, "method": "public/auth", "params": {
        "grant_type": "client_signature", "client_id": client_id, "timestamp": timestamp,
        "nonce": nonce, "signature": signature}})
}

fn signed(target: &Target, timestamp: u64, nonce: &str, signed_uri: &str) -> String {
    let (client_id, secret) = main_account(target);
    SignedHeader::sign(
        &target.signature_scheme,
        &client_id,
        &secret,
        &sign::HttpSignedFields::get(timestamp, nonce, signed_uri),
    )
    .unwrap()
    .to_header_value()
}

fn txlog(count: u32, continuation: Option<&Value>) -> String {
    let mut uri = format!("/api/v2/private/get_transaction_log?currency=BTC&count={count}");
    if let Some(continuation) = continuation {
        uri.push_str(&format!("&continuation={}", continuation.as_u64().unwrap()));
    }
    uri
}

/// A case the harness sends as a conforming client: every step expects a result, and no
/// step departs from a client rule on purpose (raw bytes, rate probes, stale or reused
/// signatures, wrong secrets).
#[test]
fn the_harness_runner_is_a_client_the_judge_finds_nothing_against() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases: Vec<Case> = case::discover(&root, &catalog, &schemas)
        .unwrap()
        .into_iter()
        .filter(conforming_client_case)
        .collect();
    assert!(cases.len() > 40, "{} conforming cases", cases.len());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (report, tally) = runtime.block_on(async {
        let judge = start(Scenario::Default, 100).await;
        let config = run::RunConfig {
            concurrency: 8,
            run_timeout: Duration::from_secs(300),
            ..run::RunConfig::new(
                judge.target().clone(),
                cases,
                Arc::new(catalog),
                Arc::new(schemas),
            )
        };
        let report = with_timeout(run::run(config, harness::events::EventSink::none()))
            .await
            .expect("the run runs");
        let knowledge = judge.knowledge();
        let records = with_timeout(judge.stop()).await;
        println!(
            "the runner sent {} requests in {} executions",
            records.len(),
            report.results.len()
        );
        (report, judge::assess(&records, &knowledge))
    });
    let failed = crate::failed_results(&report);
    assert_eq!(
        failed,
        Vec::<String>::new(),
        "the judge serves the reference API"
    );
    // The suite reads a first page again on purpose (each rule is its own case: a
    // default count beside the explicit one, a bounded window after its probe page), and
    // stops after the pages a rule needs: the judge warns of both (SPEC.md does not oblige
    // a client to read to the end), so only those warnings are allowed.
    let found: Vec<String> = tally
        .describe()
        .into_iter()
        .filter(|line| !line.starts_with("warn client.pagination.follow "))
        .collect();
    assert_eq!(
        found,
        Vec::<String>::new(),
        "the judge found something against the runner"
    );
    let passed: Vec<&str> = tally
        .iter()
        .filter(|(_, _, cell)| cell.passes > 0)
        .map(|(clause, _, _)| clause)
        .collect();
    for (clause, transport, cell) in tally.iter() {
        println!("{clause} [{transport}]: {} held", cell.passes);
    }
    for clause in [
        "client.env.jsonrpc",
        "client.env.id",
        "client.env.method",
        "client.env.params",
        "client.token.http_header",
        "client.token.ws_param",
        "client.sig.framing",
        "client.sig.hex_lower",
        "client.sig.fresh",
        "client.sig.nonce_unique",
        "client.signed.well_formed",
        "client.signed.request_data",
        "client.signed.fresh",
        "client.signed.nonce_unique",
        "client.count.bounds",
        "client.pagination.follow",
        "client.rate.transaction_log",
        "client.log_type.tolerant",
        "client.params.required",
        "client.http.method",
        "client.http.path",
        "client.params.type",
        "client.params.values",
        "client.private.credentials",
        "client.basic.well_formed",
        "client.scope.grammar",
        "client.token.kind",
        "client.token.live",
        "client.token.scope",
        "client.fork.session_token",
        "client.fork.new_session",
        "client.exchange.scope_bound",
        "client.direct.address",
        "client.direct.key_header",
        "client.direct.no_params",
        "auth.client_signature.secret_not_sent",
    ] {
        assert!(
            passed.contains(&clause),
            "{clause} was never exercised by the runner"
        );
    }
}

/// A `client_credentials` login of `role` over HTTP with `scope`: its token set.
pub(crate) async fn token_set_of(target: &Target, role: &str, scope: &str) -> Value {
    let account = &target.accounts[role];
    let answer = get(
        target,
        &format!(
            "/api/v2/public/auth?grant_type=client_credentials&client_id={}&client_secret={}&scope={}",
            account.client_id,
            account.client_secret.expose(),
            scope.replace(' ', "+").replace(':', "%3A")
        ),
        &[],
        None,
    )
    .await;
    answer["result"].clone()
}
