//! The reference server under a bounded load of bad input: concurrent WebSocket
//! connections flooding malformed messages and HTTP keep-alive clients sending malformed
//! requests and logins, all on 127.0.0.1. Every message gets exactly one well-formed
//! answer, nothing crashes, and afterwards the whole conformance suite still passes against
//! the same server. Figures (requests per second, peak memory) come from
//! `cargo run --release --example load`, not from this test.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::case;
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::jsonrpc::validate_response;
use harness::run;
use harness::serve;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

const WAIT: Duration = Duration::from_secs(60);

/// Connections of each kind.
const CONNECTIONS: usize = 8;

/// Malformed messages each WebSocket connection sends.
const MESSAGES: usize = 280;

/// Requests each HTTP client sends.
const REQUESTS: usize = 80;

async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("network await timed out")
}

/// Malformed WebSocket messages, each of which must be answered with an error envelope.
fn malformed_messages() -> Vec<Message> {
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    vec![
        Message::text("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "),
        Message::text("x".repeat(100 * 1024)),
        Message::text(nested),
        Message::binary(vec![0xff, 0xfe, b'{', 0x80]),
        Message::text("{\"jsonrpc\": \"2.0\", \"id\": \"x\", \"method\": 42, \"params\": []}"),
        Message::text(
            "{\"jsonrpc\": \"2.0\", \"id\": 1e999999, \"method\": \"public/get_currencies\"}",
        ),
        Message::text(
            "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"private/get_transaction_log\", \"params\": {\"access_token\": \"forged\", \"currency\": \"BTC\"}}",
        ),
    ]
}

/// Sends every malformed message in turn, reading answers as they come, and returns them.
async fn flood_ws(url: String) -> Vec<Value> {
    let (ws, _) = with_timeout(tokio_tungstenite::connect_async(url.as_str()))
        .await
        .expect("connects");
    let (mut sink, mut stream) = ws.split();
    let reader = tokio::spawn(async move {
        let mut answers = Vec::new();
        while answers.len() < MESSAGES {
            match with_timeout(stream.next()).await {
                Some(Ok(Message::Text(text))) => {
                    answers.push(serde_json::from_str(text.as_str()).expect("answer is JSON"));
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!(
                    "connection broke after {} answers: {other:?}",
                    answers.len()
                ),
            }
        }
        answers
    });
    for message in malformed_messages().iter().cycle().take(MESSAGES) {
        with_timeout(sink.send(message.clone()))
            .await
            .expect("sent");
    }
    reader.await.expect("reader ends")
}

/// Sends malformed requests and logins over one keep-alive connection; returns each
/// status and answer.
async fn flood_http(base_url: String, client_id: String, secret: String) -> Vec<(u16, Value)> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let login = format!(
        "{base_url}/public/auth?grant_type=client_credentials&client_id={client_id}&client_secret={secret}"
    );
    let mut answers = Vec::new();
    for turn in 0..REQUESTS {
        let request = match turn % 5 {
            0 => client.get(&login),
            1 => client
                .get(format!("{base_url}/public/get_currencies"))
                .body(vec![b'{'; 100 * 1024]),
            2 => client.get(format!("{base_url}/public/auth?grant_type=x&grant_type=y")),
            3 => client
                .get(format!("{base_url}/private/get_mmp_status"))
                .header("Authorization", "svc-hmac-sha256 id=,ts=x,nonce=,sig=zz"),
            _ => client
                .get(format!("{base_url}/public/get_currencies"))
                .body("{\"jsonrpc\": \"2.0\", \"id\": [], \"method\": "),
        };
        let response = with_timeout(request.send()).await.expect("answered");
        let status = response.status().as_u16();
        let body = with_timeout(response.bytes()).await.expect("body read");
        answers.push((
            status,
            serde_json::from_slice(&body).expect("answer is JSON"),
        ));
    }
    answers
}

fn is_error_envelope(answer: &Value) -> bool {
    validate_response(answer, None).is_empty() && answer.get("error").is_some()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn flood_of_bad_input_is_answered_and_the_suite_still_passes() {
    let running = with_timeout(serve::start(serve::ServeConfig::loopback()))
        .await
        .unwrap();
    let target = running.target();
    let main = &target.accounts["main"];
    // Counted before the floods start: they log in while they run.
    let tokens_before = running.state().issued_tokens().len();
    let mut ws_floods = Vec::new();
    let mut http_floods = Vec::new();
    for _ in 0..CONNECTIONS {
        ws_floods.push(tokio::spawn(flood_ws(target.ws_url.clone().unwrap())));
        http_floods.push(tokio::spawn(flood_http(
            target.base_url.clone(),
            main.client_id.clone(),
            main.client_secret.expose().to_owned(),
        )));
    }
    for flood in ws_floods {
        let answers = flood.await.expect("flood ends");
        assert_eq!(answers.len(), MESSAGES);
        for answer in &answers {
            assert!(is_error_envelope(answer), "{answer}");
        }
    }
    let mut logins = 0;
    for flood in http_floods {
        for (status, answer) in flood.await.expect("flood ends") {
            if answer.pointer("/result/access_token").is_some() {
                assert_eq!(status, 200);
                logins += 1;
            } else {
                assert!(is_error_envelope(&answer), "{answer}");
                assert_eq!(status, 400, "{answer}");
            }
        }
    }
    assert_eq!(logins, CONNECTIONS * REQUESTS / 5);
    assert!(running.state().issued_tokens().len() >= tokens_before + 2 * logins);

    // The same server, after the flood: the whole conformance suite.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases = case::discover(&root, &catalog, &schemas).unwrap();
    let config = run::RunConfig {
        concurrency: 16,
        run_timeout: WAIT,
        ..run::RunConfig::new(target, cases, Arc::new(catalog), Arc::new(schemas))
    };
    let report = with_timeout(run::run(config, harness::events::EventSink::none()))
        .await
        .unwrap();
    running.shutdown().await;
    let failed: Vec<String> = report
        .results
        .iter()
        .filter(|result| !matches!(result.verdict, Verdict::Pass | Verdict::Info))
        .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
        .collect();
    assert_eq!(failed, Vec::<String>::new());
    assert!(report.results.len() > 200);
}
