//! What `harness proxy` adds per request on loopback (figures for BENCHMARKS.md): the
//! same minimal client sends `public/get_currencies` to the reference server directly,
//! then through a proxy in front of it, in the same run, one request in flight on one
//! connection (HTTP keep-alive and WebSocket). The overhead per request is the difference
//! of the mean latencies; the issue's goal is under 1 ms.
//!
//! `cargo run --release --example proxy_bench -- [--requests N] [--rounds R]`

use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use harness::proxy;
use harness::serve;
use harness::target_file::Target;
use tokio_tungstenite::tungstenite::Message;

// The allocator the `harness` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
struct Args {
    /// Requests per measurement.
    #[arg(long, default_value_t = 5_000)]
    requests: usize,
    /// Measurements of each kind, alternating direct and proxied.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

/// Mean latency of `requests` sequential HTTP keep-alive calls.
async fn http_mean(target: &Target, requests: usize) -> Duration {
    let client = reqwest::Client::new();
    let url = format!("{}/public/get_currencies", target.base_url);
    // One warm-up call opens the connection.
    let _ = client
        .get(&url)
        .send()
        .await
        .expect("answered")
        .bytes()
        .await;
    let started = Instant::now();
    for _ in 0..requests {
        let body = client
            .get(&url)
            .send()
            .await
            .expect("answered")
            .bytes()
            .await;
        assert!(body.is_ok_and(|body| body.starts_with(b"{")));
    }
    started.elapsed() / requests as u32
}

/// Mean latency of `requests` sequential calls on one WebSocket connection.
async fn ws_mean(target: &Target, requests: usize) -> Duration {
    let url = target.ws_url.clone().expect("a ws_url");
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("connects");
    let started = Instant::now();
    for id in 0..requests {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"public/get_currencies","params":{{}}}}"#
        );
        socket.send(Message::text(request)).await.expect("sent");
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(_))) => break,
                Some(Ok(_)) => {}
                other => panic!("websocket ended: {other:?}"),
            }
        }
    }
    started.elapsed() / requests as u32
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let server = serve::start(serve::ServeConfig::loopback())
            .await
            .expect("server starts");
        let direct = server.target();
        let running = proxy::start(proxy::ProxyConfig::loopback(direct.clone()))
            .await
            .expect("proxy starts");
        let proxied = running.client_target().clone();
        println!("transport | direct µs/request | proxied µs/request | overhead µs/request");
        for round in 1..=args.rounds {
            for transport in ["http", "ws"] {
                let mean = |target| async move {
                    match transport {
                        "http" => http_mean(target, args.requests).await,
                        _ => ws_mean(target, args.requests).await,
                    }
                };
                let direct_mean = mean(&direct).await;
                let proxied_mean = mean(&proxied).await;
                println!(
                    "{transport} (round {round}) | {:.1} | {:.1} | {:.1}",
                    micros(direct_mean),
                    micros(proxied_mean),
                    micros(proxied_mean) - micros(direct_mean)
                );
            }
        }
        let session = running.stop().await;
        println!(
            "the proxy kept {} requests for judging, {} not judged",
            session.records.len(),
            session.unjudged
        );
        server.shutdown().await;
    });
}
