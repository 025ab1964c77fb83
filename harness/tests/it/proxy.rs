//! `harness proxy` over real sockets, in front of the reference server on loopback: the
//! harness's own runner as a conforming client gets clean verdicts on both sides; a seeded
//! fault of the server is caught on the server's side with the client's side clean; a
//! faulty client is caught on the client's side; a recorded session replays with
//! `harness run --add-cases`.

use std::future::Future;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::auth::sign;
use harness::check::Verdict;
use harness::corpus::{Corpus, CorpusSource};
use harness::proxy::{self, Proxy, Session, report as proxy_report};
use harness::results::RunReport;
use harness::run::{self};
use harness::selftest::conforming_client_case;
use harness::serve::{self, Fault};
use harness::target_file::Target;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

mod command;
mod pages;

const WAIT: Duration = Duration::from_secs(60);

/// Every network await goes through this, so a broken proxy fails a test instead of
/// hanging it.
async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("network await timed out")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn corpus() -> Corpus {
    Corpus::load(&CorpusSource::default()).expect("the embedded corpus loads")
}

/// The reference server (with `faults`) and a proxy in front of it.
async fn start(faults: Vec<Fault>) -> (serve::Running, Proxy) {
    let mut config = serve::ServeConfig::loopback();
    config.faults = faults;
    start_with(config).await
}

async fn start_with(config: serve::ServeConfig) -> (serve::Running, Proxy) {
    let server = with_timeout(serve::start(config))
        .await
        .expect("server starts");
    let proxy = proxy_in_front(&server, |_| {}).await;
    (server, proxy)
}

/// A proxy in front of `server`, its loopback configuration changed by `adjust`.
async fn proxy_in_front(
    server: &serve::Running,
    adjust: impl FnOnce(&mut proxy::ProxyConfig),
) -> Proxy {
    let mut config = proxy::ProxyConfig::loopback(server.target());
    adjust(&mut config);
    with_timeout(proxy::start(config))
        .await
        .expect("proxy starts")
}

/// The status of a GET of `method` through the proxy.
async fn status_through(proxy: &Proxy, method: &str) -> u16 {
    let url = format!("{}/{method}", proxy.client_target().base_url);
    with_timeout(reqwest::Client::new().get(url).send())
        .await
        .expect("answered")
        .status()
        .as_u16()
}

async fn stop(server: serve::Running, proxy: Proxy) -> Session {
    let session = with_timeout(proxy.stop()).await;
    with_timeout(server.shutdown()).await;
    session
}

fn judged(session: &Session) -> RunReport {
    let corpus = corpus();
    let verdicts = proxy_report::judge_session(session, &corpus.schemas, &corpus.catalog);
    proxy_report::to_run_report(session, &verdicts, &corpus.catalog, Duration::ZERO)
}

/// `side:clause [transport]: message` of each result of one side with this verdict.
fn with_verdict(report: &RunReport, prefix: &str, verdict: Verdict) -> Vec<String> {
    proxy_report::side(report, prefix)
        .filter(|result| result.verdict == verdict)
        .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
        .collect()
}

fn main_account(target: &Target) -> (String, String) {
    let account = &target.accounts["main"];
    (
        account.client_id.clone(),
        account.client_secret.expose().to_owned(),
    )
}

async fn get(target: &Target, path_and_query: &str, body: Option<Value>) -> Value {
    let origin = target.base_url.trim_end_matches("/api/v2");
    let mut request = reqwest::Client::new().get(format!("{origin}{path_and_query}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = with_timeout(request.send()).await.expect("answered");
    with_timeout(response.json::<Value>())
        .await
        .expect("answer is json")
}

/// Sends `messages` on one WebSocket and reads as many answers.
async fn ws(target: &Target, messages: &[Value]) -> Vec<Value> {
    let url = target.ws_url.clone().expect("a ws_url");
    let (mut socket, _) = with_timeout(tokio_tungstenite::connect_async(url))
        .await
        .expect("ws connects");
    let mut answers = Vec::new();
    for message in messages {
        with_timeout(socket.send(Message::text(message.to_string())))
            .await
            .expect("sent");
        loop {
            match with_timeout(socket.next()).await {
                Some(Ok(Message::Text(text))) => {
                    answers.push(serde_json::from_str(&text).unwrap());
                    break;
                }
                Some(Ok(_)) => {}
                other => panic!("websocket ended early: {other:?}"),
            }
        }
    }
    answers
}

/// A client_signature login over WebSocket, signed with `secret`, then a private call.
fn signed_login(target: &Target, secret: &str, nonce: &str) -> Vec<Value> {
    let (client_id, _) = main_account(target);
    let timestamp = harness::auth::clock::Clock::system().now_ms();
    let signature = sign::client_signature(secret, timestamp, nonce, "").unwrap();
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "public/auth", "params": {
            "grant_type": "client_signature", "client_id": client_id, "timestamp": timestamp,
            "nonce": nonce, "signature": signature}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "public/get_currencies", "params": {}}),
    ]
}

/// The conforming client cases run through a proxy in front of `config`'s server.
fn run_through_proxy(config: serve::ServeConfig) -> (RunReport, Session) {
    let corpus = corpus();
    let cases: Vec<_> = corpus
        .cases
        .iter()
        .filter(|case| conforming_client_case(case))
        .cloned()
        .collect();
    assert!(cases.len() > 40, "{} conforming cases", cases.len());
    runtime().block_on(async {
        let (server, proxy) = start_with(config).await;
        let config = run::RunConfig {
            concurrency: 8,
            run_timeout: Duration::from_secs(300),
            ..run::RunConfig::new(
                proxy.client_target().clone(),
                cases,
                Arc::clone(&corpus.catalog),
                Arc::clone(&corpus.schemas),
            )
        };
        let run_report = with_timeout(run::run(config, harness::events::EventSink::none()))
            .await
            .expect("the run runs");
        (run_report, stop(server, proxy).await)
    })
}

/// `Fail` and `Warn` results of either side.
fn findings(report: &RunReport) -> Vec<String> {
    [proxy_report::CLIENT_PREFIX, proxy_report::SERVER_PREFIX]
        .into_iter()
        .flat_map(|prefix| {
            [Verdict::Fail, Verdict::Warn]
                .into_iter()
                .flat_map(move |verdict| with_verdict(report, prefix, verdict))
        })
        .collect()
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn the_harness_runner_through_the_proxy_gets_clean_verdicts_on_both_sides() {
    let (run_report, session) = run_through_proxy(serve::ServeConfig::loopback());
    let broken = crate::failed_results(&run_report);
    assert_eq!(broken, Vec::<String>::new(), "the proxy changed an answer");
    assert_eq!(session.unjudged, 0);
    let report = judged(&session);
    // As against the judge (tests/it/judge.rs): the suite reads first pages again and stops
    // after the pages a rule needs, which the client side only warns of.
    let failed = |prefix| with_verdict(&report, prefix, Verdict::Fail);
    let found: Vec<String> = findings(&report)
        .into_iter()
        .filter(|line| {
            !line.contains("client.pagination.follow")
                || failed(proxy_report::CLIENT_PREFIX).contains(line)
        })
        .collect();
    assert_eq!(found, Vec::<String>::new());
    let passed = |prefix| with_verdict(&report, prefix, Verdict::Pass);
    for wanted in [
        "client:client.env.id [ws]",
        "client:client.token.http_header [http-query]",
        "client:client.sig.framing [ws]",
        "client:client.signed.request_data [http-query]",
        "server:env.response.id [ws]",
        "server:env.response.id [http-body]",
        "server:env.response.jsonrpc [http-query]",
        "server:m.get_transaction_log.result [http-query]",
    ] {
        let prefix = &wanted[..wanted.find(':').unwrap() + 1];
        assert!(
            passed(prefix).iter().any(|line| line.starts_with(wanted)),
            "{wanted} not judged a pass: {:?}",
            passed(prefix)
        );
    }
}

/// Every spec-open variant at once behind the proxy: no check of either side fails a
/// server SPEC.md allows, or the conforming client talking to it.
#[test]
fn no_check_fails_through_the_proxy_in_front_of_every_spec_open_variant() {
    let mut config = serve::ServeConfig::loopback();
    config.variants = serve::Variant::ALL.to_vec();
    // As the false-failure matrix does: the burst-1 variant's pacing proves itself in
    // seconds at this rate.
    config.limits.transaction_log_per_second = harness::selftest::variants::MATRIX_PACED_PER_SECOND;
    let (_, session) = run_through_proxy(config);
    let report = judged(&session);
    let failed = findings(&report);
    assert!(
        session.records.len() > 100,
        "{} requests",
        session.records.len()
    );
    assert_eq!(
        with_verdict(&report, proxy_report::SERVER_PREFIX, Verdict::Fail),
        Vec::<String>::new(),
        "{failed:?}"
    );
    assert_eq!(
        with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Fail),
        Vec::<String>::new()
    );
}

#[test]
fn a_seeded_server_fault_is_caught_on_the_server_side_and_the_client_side_stays_clean() {
    let session = runtime().block_on(async {
        let (server, proxy) = start(vec![Fault::EnvelopeIdOffByOne]).await;
        let target = proxy.client_target().clone();
        let (_, secret) = main_account(&target);
        let answers = ws(&target, &signed_login(&target, &secret, "n-fault-1")).await;
        assert_eq!(answers.len(), 2);
        let body =
            json!({"jsonrpc": "2.0", "id": 7, "method": "public/get_currencies", "params": {}});
        let answer = get(&target, "/api/v2/public/get_currencies", Some(body)).await;
        assert_eq!(
            answer["id"],
            json!(8),
            "the fault is on and forwarded unchanged"
        );
        stop(server, proxy).await
    });
    let report = judged(&session);
    let server_failures = with_verdict(&report, proxy_report::SERVER_PREFIX, Verdict::Fail);
    assert!(
        server_failures
            .iter()
            .any(|line| line.starts_with("server:env.response.id [ws]")
                && line.contains("the server at fault")),
        "{server_failures:?}"
    );
    assert!(
        server_failures
            .iter()
            .any(|line| line.starts_with("server:env.response.id [http-body]")),
        "{server_failures:?}"
    );
    assert_eq!(
        with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Fail),
        Vec::<String>::new()
    );
    assert!(
        !with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Pass).is_empty(),
        "the client side was judged"
    );
}

#[test]
fn a_faulty_client_is_caught_on_the_client_side() {
    let session = runtime().block_on(async {
        let (server, proxy) = start(Vec::new()).await;
        let target = proxy.client_target().clone();
        let answers = ws(&target, &signed_login(&target, "not-the-secret", "n-bad-1")).await;
        assert!(answers[0].get("error").is_some(), "{answers:?}");
        stop(server, proxy).await
    });
    let report = judged(&session);
    let client_failures = with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Fail);
    assert!(
        client_failures
            .iter()
            .any(|line| line.starts_with("client:client.sig.")
                && line.contains("the client at fault")),
        "{client_failures:?}"
    );
    assert_eq!(
        with_verdict(&report, proxy_report::SERVER_PREFIX, Verdict::Fail),
        Vec::<String>::new()
    );
}

/// The judge's token state holds through the proxy too: it learns the tokens from the
/// answers it forwards, and a client that uses one after its logout, or presents a refresh
/// token as its access token, is caught on the client side.
#[test]
fn a_client_misusing_its_tokens_is_caught_through_the_proxy_from_the_answers_it_saw() {
    let session = runtime().block_on(async {
        let (server, proxy) = start(Vec::new()).await;
        let target = proxy.client_target().clone();
        let (client_id, secret) = main_account(&target);
        let login = get(
            &target,
            &format!("/api/v2/public/auth?grant_type=client_credentials&client_id={client_id}&client_secret={secret}"),
            None,
        )
        .await;
        let access = login["result"]["access_token"].as_str().unwrap().to_owned();
        let refresh = login["result"]["refresh_token"].as_str().unwrap().to_owned();
        let call = |id: u64, token: &str| {
            json!({"jsonrpc": "2.0", "id": id, "method": "private/get_mmp_status", "params": {"access_token": token}})
        };
        ws(&target, &[call(1, &refresh)]).await;
        let logout = json!({"jsonrpc": "2.0", "id": 2, "method": "private/logout", "params": {"access_token": access}});
        ws(&target, &[logout, call(3, &access)]).await;
        stop(server, proxy).await
    });
    let report = judged(&session);
    let client_failures = with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Fail);
    for clause in ["client:client.token.kind", "client:client.token.live"] {
        assert!(
            client_failures.iter().any(|line| line.starts_with(clause)),
            "{clause}: {client_failures:?}"
        );
    }
}

#[test]
fn a_recorded_session_replays_with_harness_run_add_cases() {
    let dir = super::cli::temp_dir("proxy-record");
    let session = runtime().block_on(async {
        let (server, proxy) = start(Vec::new()).await;
        let target = proxy.client_target().clone();
        let (client_id, secret) = main_account(&target);
        let login = get(
            &target,
            &format!("/api/v2/public/auth?grant_type=client_credentials&client_id={client_id}&client_secret={secret}"),
            None,
        )
        .await;
        let token = login["result"]["access_token"].as_str().unwrap().to_owned();
        let answers = ws(
            &target,
            &[
                json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": {}}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "private/get_mmp_status", "params": {"access_token": token}}),
                json!({"jsonrpc": "2.0", "id": 3, "method": "public/get_historical_volatility", "params": {"currency": "BTC"}}),
            ],
        )
        .await;
        assert!(answers.iter().all(|answer| answer.get("result").is_some()), "{answers:?}");
        stop(server, proxy).await
    });
    let corpus = corpus();
    let written = proxy::record::write(dir.as_path(), &session, &corpus.catalog, 0).unwrap();
    assert_eq!(
        written.snapshots.len(),
        2,
        "one snapshot per client session"
    );
    assert_eq!(
        written.cases.len(),
        1,
        "the login session has nothing to replay"
    );
    for path in written.snapshots.iter().chain(&written.cases) {
        let text = std::fs::read_to_string(path).unwrap();
        for secret in session.upstream.secrets() {
            assert!(!text.contains(&secret), "{} holds a secret", path.display());
        }
    }
    let case = std::fs::read_to_string(&written.cases[0]).unwrap();
    assert!(case.contains("private/get_mmp_status") && case.contains("mode = \"bearer\""));
    assert!(!case.contains("access_token"), "{case}");
    let out = dir.as_path().join("replay");
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "run",
            "--filter",
            "recorded.",
            "--run-timeout-s",
            "60",
            "--out",
        ])
        .arg(&out)
        .arg("--add-cases")
        .arg(dir.as_path().join("cases"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 pass, 0 fail"), "{stdout}");
    assert!(Path::new(&out.join("report.json")).exists());
}

/// An `https`/`wss` upstream is reached with the target file's trust settings: its
/// `ca_file` names the CA of the server's generated certificate.
#[test]
fn a_tls_upstream_is_reached_with_the_target_files_ca() {
    let dir = super::cli::temp_dir("proxy-tls");
    let identity =
        serve::TlsIdentity::generate("127.0.0.1:0".parse().unwrap(), &[]).expect("a certificate");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, identity.ca_pem().unwrap()).unwrap();
    let session = runtime().block_on(async {
        let mut config = serve::ServeConfig::loopback();
        config.tls = Some(identity);
        let server = with_timeout(serve::start(config))
            .await
            .expect("server starts");
        let mut upstream = server.target();
        assert!(upstream.base_url.starts_with("https://"));
        upstream.tls.ca_file = Some(ca.clone());
        let proxy = with_timeout(proxy::start(proxy::ProxyConfig::loopback(upstream)))
            .await
            .expect("proxy starts");
        let target = proxy.client_target().clone();
        let answer = get(&target, "/api/v2/public/get_currencies", None).await;
        assert!(answer.get("result").is_some(), "{answer}");
        let answers = ws(
            &target,
            &[json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": {}})],
        )
        .await;
        assert!(answers[0].get("result").is_some(), "{answers:?}");
        stop(server, proxy).await
    });
    assert_eq!(session.records.len(), 2);
    assert!(session.records.iter().all(|record| record.answer.is_some()));
}

/// Stopping the proxy ends a WebSocket connection the client left open, and keeps what
/// passed on it.
#[test]
fn stopping_ends_open_websocket_relays() {
    runtime().block_on(async {
        let (server, proxy) = start(Vec::new()).await;
        let url = proxy.client_target().ws_url.clone().unwrap();
        let (mut socket, _) = with_timeout(tokio_tungstenite::connect_async(url))
            .await
            .expect("ws connects");
        let request =
            json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": {}});
        with_timeout(socket.send(Message::text(request.to_string())))
            .await
            .expect("sent");
        let answer = with_timeout(socket.next()).await;
        assert!(matches!(answer, Some(Ok(Message::Text(_)))), "{answer:?}");
        let session = stop(server, proxy).await;
        assert_eq!(session.records.len(), 1);
        assert!(session.records[0].answer.is_some());
        // The relay closed the client's side: the stream ends (or says close) at once.
        loop {
            match with_timeout(socket.next()).await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(_)) => {}
            }
        }
    });
}

#[test]
fn requests_past_the_record_cap_are_forwarded_and_counted_as_unjudged_and_secrets_known_at_once() {
    runtime().block_on(async {
        let server = with_timeout(serve::start(serve::ServeConfig::loopback()))
            .await
            .expect("server starts");
        let proxy = proxy_in_front(&server, |config| config.max_records = 1).await;
        let target = proxy.client_target().clone();
        for _ in 0..3 {
            let answer = get(&target, "/api/v2/public/get_currencies", None).await;
            assert!(answer.get("result").is_some(), "{answer}");
        }
        let session = stop(server, proxy).await;
        assert_eq!(session.records.len(), 1);
        assert_eq!(session.unjudged, 2);
        // The upstream's secrets are known before any request shows them: one the client
        // put where no secret belongs is redacted all the same.
        let (_, secret) = main_account(&session.upstream);
        assert_eq!(
            session.redactor.text(&format!("note={secret}")),
            "note=[redacted]"
        );
    });
}

#[test]
fn an_upstream_answer_past_the_size_limit_is_a_bad_gateway_and_one_of_it_passes() {
    runtime().block_on(async {
        let server = with_timeout(serve::start(serve::ServeConfig::loopback()))
            .await
            .expect("server starts");
        let method = "public/get_currencies";
        let proxy = proxy_in_front(&server, |config| config.limits.max_response_bytes = 16).await;
        assert_eq!(status_through(&proxy, method).await, 502);
        // An answer of exactly the limit passes.
        let direct = format!("{}/{method}", server.target().base_url);
        let size = with_timeout(reqwest::Client::new().get(direct).send())
            .await
            .expect("answered")
            .bytes()
            .await
            .expect("read")
            .len();
        let exact = proxy_in_front(&server, |config| config.limits.max_response_bytes = size).await;
        assert_eq!(
            status_through(&exact, method).await,
            200,
            "an answer of {size} bytes"
        );
        with_timeout(exact.stop()).await;
        stop(server, proxy).await;
    });
}
