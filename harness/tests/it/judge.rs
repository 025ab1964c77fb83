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
use harness::case::{self, Case, Outcome};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::judge::{self, Judge, Scenario, Tally};
use harness::run;
use harness::target::Target;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

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
    let mut config = judge::Config::loopback();
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
        timestamp,
        nonce,
        "GET",
        signed_uri,
        b"",
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

/// One client bug each.
#[derive(Clone, Copy, Debug)]
enum Bug {
    NoTrailingLf,
    ReusedNonce,
    StaleTimestamp,
    UppercaseHex,
    SecretSent,
    TokenInUrl,
    WsTokenInUrl,
    NonIntegerId,
    ParamsAsArray,
    WrongVersion,
    BareMethod,
    SignedWithoutNonce,
    SignedWithoutQuery,
    SignedStale,
    SignedNonceReused,
    CountTooLarge,
    RestartsWalk,
    StopsAtShortPage,
    BurstsTransactionLog,
    GivesUpOnUnknownType,
    ToggleWithoutState,
}

async fn misbehave(bug: Bug, target: &Target) {
    let (_, secret) = main_account(target);
    let now = now_ms();
    let bearer = |token: &str| [("authorization", format!("Bearer {token}"))];
    match bug {
        Bug::NoTrailingLf => {
            let signature = sign::hmac_hex(secret.as_bytes(), format!("{now}\nn-lf").as_bytes());
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-lf", signature)],
            )
            .await;
        }
        Bug::ReusedNonce => {
            let first = sign::client_signature(&secret, now, "n-same", "").unwrap();
            let second = sign::client_signature(&secret, now + 1, "n-same", "").unwrap();
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-same", first)],
            )
            .await;
            ws(
                target,
                "",
                &[client_signature_auth(target, 2, now + 1, "n-same", second)],
            )
            .await;
        }
        Bug::StaleTimestamp => {
            let stale = now - 61_000;
            let signature = sign::client_signature(&secret, stale, "n-stale", "").unwrap();
            ws(
                target,
                "",
                &[client_signature_auth(
                    target, 1, stale, "n-stale", signature,
                )],
            )
            .await;
        }
        Bug::UppercaseHex => {
            let signature = sign::client_signature(&secret, now, "n-upper", "")
                .unwrap()
                .to_ascii_uppercase();
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-upper", signature)],
            )
            .await;
        }
        Bug::SecretSent => {
            let signature = sign::client_signature(&secret, now, "n-secret", "").unwrap();
            let mut message = client_signature_auth(target, 1, now, "n-secret", signature);
            message["params"]["client_secret"] = json!(secret);
            ws(target, "", &[message]).await;
        }
        Bug::TokenInUrl => {
            let token = login(target).await;
            get(
                target,
                &format!("/api/v2/private/get_mmp_status?access_token={token}"),
                &[],
                None,
            )
            .await;
        }
        Bug::WsTokenInUrl => {
            let token = login(target).await;
            let message = json!({"jsonrpc": "2.0", "id": 1, "method": "private/get_mmp_status", "params": {}});
            ws(target, &format!("?access_token={token}"), &[message]).await;
        }
        Bug::NonIntegerId => {
            let answers = ws(target, "", &[json!({"jsonrpc": "2.0", "id": "abc", "method": "public/get_currencies", "params": {}})]).await;
            assert_eq!(
                answers[0]["error"]["code"], -32600,
                "refused as the reference server refuses: {}",
                answers[0]
            );
        }
        Bug::ParamsAsArray => {
            ws(target, "", &[json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": []})]).await;
        }
        Bug::WrongVersion => {
            let body =
                json!({"jsonrpc": "1.0", "id": 1, "method": "public/get_currencies", "params": {}});
            get(
                target,
                "/api/v2/public/get_currencies",
                &[],
                Some(body.to_string()),
            )
            .await;
        }
        Bug::BareMethod => {
            ws(
                target,
                "",
                &[json!({"jsonrpc": "2.0", "id": 1, "method": "get_currencies", "params": {}})],
            )
            .await;
        }
        Bug::SignedWithoutNonce => {
            let header = signed(target, now, "n-x", "/api/v2/private/get_mmp_status");
            let header = header.replace(",nonce=n-x", "");
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedWithoutQuery => {
            let header = signed(target, now, "n-q", "/api/v2/private/get_mmp_status");
            get(
                target,
                "/api/v2/private/get_mmp_status?index_name=btc_usd",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedStale => {
            let header = signed(
                target,
                now - 61_000,
                "n-old",
                "/api/v2/private/get_mmp_status",
            );
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedNonceReused => {
            for _ in 0..2 {
                let header = signed(
                    target,
                    now_ms(),
                    "n-twice",
                    "/api/v2/private/get_mmp_status",
                );
                get(
                    target,
                    "/api/v2/private/get_mmp_status",
                    &[("authorization", header)],
                    None,
                )
                .await;
            }
        }
        Bug::CountTooLarge => {
            let token = login(target).await;
            get(target, &txlog(251, None), &bearer(&token), None).await;
        }
        Bug::RestartsWalk => {
            let token = login(target).await;
            for _ in 0..3 {
                get(target, &txlog(5, None), &bearer(&token), None).await;
            }
        }
        Bug::StopsAtShortPage => {
            let token = login(target).await;
            let page = get(target, &txlog(100, None), &bearer(&token), None).await;
            assert!(page["result"]["logs"].as_array().unwrap().len() < 100);
        }
        Bug::BurstsTransactionLog => {
            let token = login(target).await;
            // Six at once, where the advertised burst is two.
            let client = reqwest::Client::new();
            let sends = (0..6).map(|_| {
                client
                    .get(format!("{}{}", origin(target), txlog(1, None)))
                    .header("authorization", format!("Bearer {token}"))
                    .send()
            });
            for response in with_timeout(futures_util::future::join_all(sends)).await {
                response.expect("answered");
            }
        }
        Bug::GivesUpOnUnknownType => {
            let token = login(target).await;
            let mut continuation = None;
            loop {
                let page = get(
                    target,
                    &txlog(5, continuation.as_ref()),
                    &bearer(&token),
                    None,
                )
                .await;
                let listed = [
                    "trade",
                    "deposit",
                    "withdrawal",
                    "settlement",
                    "delivery",
                    "transfer",
                    "swap",
                    "correction",
                    "expiry",
                ];
                let logs = page["result"]["logs"].as_array().unwrap().clone();
                if logs
                    .iter()
                    .any(|entry| !listed.contains(&entry["type"].as_str().unwrap_or("")))
                {
                    break; // The bug: an unknown type ends the client's work.
                }
                continuation = Some(page["result"]["continuation"].clone());
            }
        }
        Bug::ToggleWithoutState => {
            let token = login(target).await;
            get(
                target,
                "/api/v2/private/toggle_subaccount_login?sid=100011",
                &bearer(&token),
                None,
            )
            .await;
        }
    }
}

#[test]
fn every_faulty_client_is_caught_citing_the_clause_it_breaks() {
    let table: &[(Bug, Scenario, u32, &str, &str)] = &[
        (
            Bug::NoTrailingLf,
            Scenario::Default,
            100,
            "client.sig.framing",
            "lacks the trailing lf",
        ),
        (
            Bug::ReusedNonce,
            Scenario::Default,
            100,
            "client.sig.nonce_unique",
            "already used",
        ),
        (
            Bug::StaleTimestamp,
            Scenario::Default,
            100,
            "client.sig.fresh",
            "61 s old",
        ),
        (
            Bug::UppercaseHex,
            Scenario::Default,
            100,
            "client.sig.hex_lower",
            "upper-case",
        ),
        (
            Bug::SecretSent,
            Scenario::Default,
            100,
            "auth.client_signature.secret_not_sent",
            "client_secret",
        ),
        (
            Bug::TokenInUrl,
            Scenario::Default,
            100,
            "client.token.http_header",
            "in the url",
        ),
        (
            Bug::WsTokenInUrl,
            Scenario::Default,
            100,
            "client.token.ws_param",
            "websocket url",
        ),
        (
            Bug::NonIntegerId,
            Scenario::Default,
            100,
            "client.env.id",
            "not an integer",
        ),
        (
            Bug::ParamsAsArray,
            Scenario::Default,
            100,
            "client.env.params",
            "an array",
        ),
        (
            Bug::WrongVersion,
            Scenario::Default,
            100,
            "client.env.jsonrpc",
            "not \"2.0\"",
        ),
        (
            Bug::BareMethod,
            Scenario::Default,
            100,
            "client.env.method",
            "get_currencies",
        ),
        (
            Bug::SignedWithoutNonce,
            Scenario::Default,
            100,
            "client.signed.well_formed",
            "nonce",
        ),
        (
            Bug::SignedWithoutQuery,
            Scenario::Default,
            100,
            "client.signed.request_data",
            "without its query string",
        ),
        (
            Bug::SignedStale,
            Scenario::Default,
            100,
            "client.signed.fresh",
            "61 s old",
        ),
        (
            Bug::SignedNonceReused,
            Scenario::Default,
            100,
            "client.signed.nonce_unique",
            "already used",
        ),
        (
            Bug::CountTooLarge,
            Scenario::Default,
            100,
            "client.count.bounds",
            "251",
        ),
        (
            Bug::RestartsWalk,
            Scenario::Default,
            100,
            "client.pagination.follow",
            "restarted from the first page",
        ),
        (
            Bug::StopsAtShortPage,
            Scenario::ShortPages,
            100,
            "client.pagination.follow",
            "short page",
        ),
        (
            Bug::BurstsTransactionLog,
            Scenario::Default,
            2,
            "client.rate.transaction_log",
            "burst of 2",
        ),
        (
            Bug::GivesUpOnUnknownType,
            Scenario::UnknownTypes,
            100,
            "client.log_type.tolerant",
            "went silent",
        ),
        (
            Bug::ToggleWithoutState,
            Scenario::Default,
            100,
            "client.params.required",
            "missing state",
        ),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut missed = Vec::new();
    for (bug, scenario, burst, clause, fragment) in table {
        let tally = runtime.block_on(async {
            let judge = start(*scenario, *burst).await;
            misbehave(*bug, &judge.target().clone()).await;
            finish(judge).await
        });
        let caught = tally.describe().iter().any(|finding| {
            finding.starts_with("fail")
                && finding.contains(&format!(" {clause} "))
                && finding.contains(fragment)
        });
        if !caught {
            missed.push(format!(
                "{bug:?}: expected {clause} ({fragment}), got {:#?}",
                tally.describe()
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "faulty clients the judge did not catch:\n{}",
        missed.join("\n")
    );
}

/// A case the harness sends as a conforming client: every step expects a result, and no
/// step departs from a client rule on purpose (raw bytes, rate probes, stale or reused
/// signatures, wrong secrets).
fn conforming(case: &Case) -> bool {
    case.steps.iter().all(|step| {
        let auth = &step.auth;
        step.raw.is_none()
            && step.probe.is_none()
            && step.expect.outcome == Outcome::Result
            && auth.timestamp_offset_ms.abs() < 30_000
            && auth.nonce.is_none()
            && !auth.no_trailing_lf
            && !auth.uppercase_hex
            && !auth.wrong_secret
            && auth.sign_uri.is_none()
    })
}

#[test]
fn the_harness_runner_is_a_client_the_judge_finds_nothing_against() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases: Vec<Case> = case::discover(&root, &catalog, &schemas)
        .unwrap()
        .into_iter()
        .filter(conforming)
        .collect();
    assert!(cases.len() > 40, "{} conforming cases", cases.len());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (report, tally) = runtime.block_on(async {
        let judge = start(Scenario::Default, 100).await;
        let config = run::Config {
            target: judge.target().clone(),
            cases,
            catalog: Arc::new(catalog),
            schemas: Arc::new(schemas),
            transports: None,
            filter: None,
            concurrency: 8,
            limits: harness::transport::Limits::default(),
            run_timeout: Duration::from_secs(300),
        };
        let report = with_timeout(run::run(config, |_| {}))
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
    let failed: Vec<String> = report
        .results
        .iter()
        .filter(|result| matches!(result.verdict, Verdict::Fail | Verdict::Error))
        .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
        .collect();
    assert_eq!(
        failed,
        Vec::<String>::new(),
        "the judge serves the reference API"
    );
    assert_eq!(
        tally.describe(),
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
        "auth.client_signature.secret_not_sent",
    ] {
        assert!(
            passed.contains(&clause),
            "{clause} was never exercised by the runner"
        );
    }
}

fn harness_judge(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .arg("judge")
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    command
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-judge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn judge_lists_its_scenarios() {
    let output = harness_judge(&["--scenario", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for scenario in Scenario::ALL {
        assert!(text.contains(scenario.name()), "{text}");
    }
    let output = harness_judge(&["--scenario", "short_pages"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("did you mean \"short-pages\""));
}

#[test]
fn a_session_without_requests_exits_3_and_reports_nothing() {
    let out = temp_dir("silent");
    let output = harness_judge(&[
        "--listen",
        "127.0.0.1:0",
        "--for",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("no request arrived"));
    assert!(!out.join("report.json").exists());
}

#[test]
fn a_faulty_client_makes_the_judge_exit_1_with_redacted_reports() {
    let out = temp_dir("faulty");
    let target_file = out.join("target.toml");
    let child = harness_judge(&[
        "--listen",
        "127.0.0.1:0",
        "--requests",
        "2",
        "--target-out",
        target_file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let secret = runtime.block_on(async {
        let target_text = with_timeout(async {
            loop {
                if let Ok(text) = std::fs::read_to_string(&target_file)
                    && text.contains("[limits]")
                {
                    return text;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        let target = Target::parse(&target_file, &target_text, &|_| None).unwrap();
        let token = login(&target).await;
        get(
            &target,
            &format!("/api/v2/private/get_mmp_status?access_token={token}"),
            &[],
            None,
        )
        .await;
        main_account(&target).1
    });
    let mut child = child;
    let deadline = std::time::Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the judge did not end after its two requests");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let failed: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["verdict"] == "fail")
        .map(|result| result["case"].as_str().unwrap())
        .collect();
    assert_eq!(failed, vec!["client.token.http_header"]);
    for name in ["report.json", "junit.xml", "report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(!text.contains(&secret), "{name} shows the client secret");
        assert!(!text.contains("access_token=at"), "{name} shows the token");
    }
}
