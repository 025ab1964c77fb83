//! The reference server under load and bad input, as figures:
//!
//! 1. requests per second for `public/get_currencies` over HTTP keep-alive and WebSocket,
//!    with 1 and N connections, one request in flight per connection;
//! 2. the process's peak memory (VmHWM) before and after a flood of malformed input:
//!    N WebSocket connections sending broken JSON, oversized and deeply nested messages
//!    and invalid UTF-8 as fast as the server reads them, N HTTP connections sending
//!    broken bodies, oversized bodies, repeated parameters and bad credentials, and a
//!    `public/auth` flood that issues a token pair per request;
//! 3. a correct answer over both transports afterwards.
//!
//! Server and clients share the process, so the memory figure bounds both.
//!
//! `cargo run --release --example load -- --seconds 5 --connections 8`

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use harness::serve;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

/// Load figures for the reference server.
#[derive(Debug, Parser)]
struct Args {
    /// Seconds each measurement and the flood last.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Connections of the many-connection measurements and of the flood.
    #[arg(long, default_value_t = 8)]
    connections: usize,
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(measure(args));
}

async fn measure(args: Args) {
    let running = serve::start(serve::ServeConfig::loopback())
        .await
        .expect("reference server starts");
    let target = running.target();
    let addr = running.addr;
    let duration = Duration::from_secs(args.seconds);
    println!("reference server on {addr}; {} s per figure", args.seconds);
    for connections in [1, args.connections] {
        let rate = http_rate(addr, connections, duration).await;
        println!("http keep-alive, {connections:>2} connections: {rate:>9.0} requests/s");
        let rate = ws_rate(addr, connections, duration).await;
        println!("websocket,       {connections:>2} connections: {rate:>9.0} requests/s");
    }
    let before = peak_rss_kib();
    println!("peak RSS before the flood: {before} KiB");
    let secret = target.accounts["main"].client_secret.expose().to_owned();
    let (ws_sent, ws_answered) = ws_flood(addr, args.connections, duration).await;
    let (http_sent, http_answered) = http_flood(addr, args.connections, duration, &secret).await;
    let after = peak_rss_kib();
    println!(
        "flood: {ws_sent} malformed WebSocket messages ({ws_answered} answered), {http_sent} malformed or login HTTP requests ({http_answered} answered)"
    );
    println!(
        "peak RSS after the flood:  {after} KiB ({:+} KiB); token records: {}",
        i64::try_from(after).unwrap_or(i64::MAX) - i64::try_from(before).unwrap_or(i64::MAX),
        running.state().issued_tokens().len()
    );
    let http_ok = http_rate(addr, 1, Duration::from_millis(200)).await > 0.0;
    let ws_ok = ws_rate(addr, 1, Duration::from_millis(200)).await > 0.0;
    println!("correct answers afterwards: http {http_ok}, websocket {ws_ok}");
    running.shutdown().await;
}

/// The process's peak resident set, in KiB (0 where /proc is not available).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Whether an answer is a `public/get_currencies` result.
fn is_currencies(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|answer| answer.get("result").map(Value::is_array))
        .unwrap_or(false)
}

async fn http_rate(addr: SocketAddr, connections: usize, duration: Duration) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let count = Arc::clone(&count);
        let url = format!("http://{addr}/api/v2/public/get_currencies");
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client");
            while Instant::now() < deadline {
                let Ok(response) = client.get(&url).send().await else {
                    return;
                };
                if response
                    .bytes()
                    .await
                    .is_ok_and(|body| is_currencies(&body))
                {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    count.load(Ordering::Relaxed) as f64 / duration.as_secs_f64()
}

async fn ws_rate(addr: SocketAddr, connections: usize, duration: Duration) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let count = Arc::clone(&count);
        tasks.push(tokio::spawn(async move {
            let url = format!("ws://{addr}/ws/api/v2");
            let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url.as_str()).await else {
                return;
            };
            let mut id = 0u64;
            while Instant::now() < deadline {
                id += 1;
                let request = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"public/get_currencies\",\"params\":{{}}}}"
                );
                if ws.send(Message::text(request)).await.is_err() {
                    return;
                }
                match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
                    Ok(Some(Ok(Message::Text(text)))) if is_currencies(text.as_bytes()) => {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => return,
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    count.load(Ordering::Relaxed) as f64 / duration.as_secs_f64()
}

/// The malformed WebSocket messages of the flood, in turn: each is answered with an error.
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

/// N connections send malformed messages for `duration` while reading the answers.
async fn ws_flood(addr: SocketAddr, connections: usize, duration: Duration) -> (u64, u64) {
    let (sent, answered) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (sent, answered) = (Arc::clone(&sent), Arc::clone(&answered));
        tasks.push(tokio::spawn(async move {
            let url = format!("ws://{addr}/ws/api/v2");
            let Ok((ws, _)) = tokio_tungstenite::connect_async(url.as_str()).await else {
                return;
            };
            let (mut sink, mut stream) = ws.split();
            let reader = tokio::spawn(async move {
                while let Ok(Some(Ok(_))) =
                    tokio::time::timeout(Duration::from_secs(2), stream.next()).await
                {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            });
            let messages = malformed_messages();
            'flood: while Instant::now() < deadline {
                for message in &messages {
                    if sink.send(message.clone()).await.is_err() {
                        break 'flood;
                    }
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            }
            let _ = reader.await;
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    (
        sent.load(Ordering::Relaxed),
        answered.load(Ordering::Relaxed),
    )
}

/// N connections send malformed requests (and one in four a real login) for `duration`.
async fn http_flood(
    addr: SocketAddr,
    connections: usize,
    duration: Duration,
    secret: &str,
) -> (u64, u64) {
    let (sent, answered) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (sent, answered) = (Arc::clone(&sent), Arc::clone(&answered));
        let secret = secret.to_owned();
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client");
            let base = format!("http://{addr}/api/v2");
            let login = format!(
                "{base}/public/auth?grant_type=client_credentials&client_id=ref-main&client_secret={secret}"
            );
            let mut turn = 0usize;
            while Instant::now() < deadline {
                turn += 1;
                let request = match turn % 4 {
                    0 => client.get(&login),
                    1 => client
                        .get(format!("{base}/public/get_currencies"))
                        .body(vec![b'{'; 100 * 1024]),
                    2 => client.get(format!("{base}/public/auth?grant_type=x&grant_type=y")),
                    _ => client
                        .get(format!("{base}/private/get_mmp_status"))
                        .header("Authorization", "svc-hmac-sha256 id=,ts=x,nonce=,sig=zz"),
                };
                sent.fetch_add(1, Ordering::Relaxed);
                let Ok(response) = request.send().await else {
                    continue;
                };
                if response.bytes().await.is_ok() {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    (
        sent.load(Ordering::Relaxed),
        answered.load(Ordering::Relaxed),
    )
}
