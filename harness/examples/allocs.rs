//! Heap allocations per request, counted by a global allocator that wraps the system one.
//!
//! The reference server runs in the same process, so every figure counts the server's
//! allocations too: the raw client's figure (reqwest or tokio-tungstenite, no checks) is
//! the floor, and the runner's figure minus it is what the runner allocates per request
//! (templates, the request, the parsed answer, checks, the recorded exchange). Also counted:
//! parsing one answer alone, small and large, since parsing into `serde_json::Value`
//! allocates every key and string of the answer.
//!
//! `cargo run --release --example allocs -- [--requests N]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use harness::case::{self};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::run;
use harness::serve;
use harness::wire::TransportKind;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

/// The system allocator, counting calls and bytes.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counters are only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes since `start`, per `requests`.
fn per_request(start: (u64, u64), requests: u64) -> (f64, f64) {
    let calls = ALLOCATIONS.load(Ordering::Relaxed) - start.0;
    let bytes = BYTES.load(Ordering::Relaxed) - start.1;
    (
        calls as f64 / requests as f64,
        bytes as f64 / requests as f64,
    )
}

fn counters() -> (u64, u64) {
    (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    )
}

async fn raw_http(base_url: &str, requests: u64) -> (f64, f64) {
    let client = reqwest::Client::builder().build().expect("client");
    let url = format!("{base_url}/public/get_currencies");
    // One request first, so the connection is open before counting.
    let _ = client
        .get(&url)
        .send()
        .await
        .expect("request")
        .bytes()
        .await;
    let start = counters();
    for _ in 0..requests {
        let response = client.get(&url).send().await.expect("request");
        let _ = response.bytes().await.expect("body");
    }
    per_request(start, requests)
}

async fn raw_ws(ws_url: &str, requests: u64) -> (f64, f64) {
    let (mut stream, _) = tokio_tungstenite::connect_async(ws_url)
        .await
        .expect("connect");
    let start = counters();
    for id in 0..requests {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"public/get_currencies","params":{{}}}}"#
        );
        stream.send(Message::text(request)).await.expect("send");
        // Bounded: one answer per request, a few unrelated frames at most.
        for _ in 0..16 {
            if let Some(Ok(Message::Text(_))) = stream.next().await {
                break;
            }
        }
    }
    per_request(start, requests)
}

async fn runner(
    catalog: &Arc<Catalog>,
    schemas: &Arc<SchemaSet>,
    target: &harness::target_file::Target,
    transport: TransportKind,
    requests: u64,
) -> (f64, f64) {
    let steps_per_case = 100u64;
    let n_cases = (requests / steps_per_case).max(1);
    let steps = "[[step]]\ncall = \"public/get_currencies\"\n".repeat(steps_per_case as usize);
    let cases: Vec<case::Case> = (0..n_cases)
        .map(|index| {
            let text = format!(
                "id = \"allocs.{index}\"\ntitle = \"allocations\"\nclauses = [\"env.response.id\"]\ntransports = [\"{transport}\"]\n{steps}"
            );
            case::parse_case(Path::new("allocs.toml"), &text, catalog, schemas)
                .expect("case parses")
        })
        .collect();
    let config = run::RunConfig::new(target.clone(), cases, catalog.clone(), schemas.clone());
    let start = counters();
    let report = run::run(config, harness::events::EventSink::none())
        .await
        .expect("runner runs");
    let figures = per_request(start, n_cases * steps_per_case);
    assert_eq!(
        report.count(Verdict::Pass),
        n_cases as usize,
        "every case passes"
    );
    figures
}

/// Allocations of each piece of the runner's per-answer work, alone, on the reference
/// server's own `public/get_currencies` answer.
async fn breakdown(schemas: &SchemaSet, base_url: &str) {
    let answer = reqwest::get(format!("{base_url}/public/get_currencies"))
        .await
        .expect("request")
        .text()
        .await
        .expect("body");
    let parsed: Value = serde_json::from_str(&answer).expect("json");
    let result = parsed.get("result").cloned().unwrap_or_default();
    let redactor = harness::check::Redactor::new(Vec::new());
    let rounds = 100;
    let measure = |what: &str, work: &dyn Fn()| {
        let start = counters();
        for _ in 0..rounds {
            work();
        }
        let (calls, bytes) = per_request(start, rounds);
        println!("  {what:44} {calls:>8.1} {bytes:>10.0}");
    };
    println!(
        "per answer, alone ({} bytes of public/get_currencies):   allocs      bytes",
        answer.len()
    );
    measure("parse into serde_json::Value", &|| {
        std::hint::black_box(serde_json::from_str::<Value>(&answer).expect("json"));
    });
    measure("envelope checks (validate_response)", &|| {
        std::hint::black_box(harness::jsonrpc::validate_response(&parsed, Some(1)));
    });
    measure("result schema (compiled once)", &|| {
        std::hint::black_box(schemas.validate("method.public.get_currencies", &result));
    });
    measure("redactor learns the answer's secrets", &|| {
        redactor.learn(&parsed);
    });
}

/// Allocations per request: raw client against the runner.
#[derive(Debug, Parser)]
struct Args {
    /// Requests of each measurement.
    #[arg(long, default_value_t = 2_000)]
    requests: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let requests = Args::parse().requests;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Arc::new(Catalog::load(&dir.join("clauses.toml")).expect("catalog loads"));
    let schemas = Arc::new(SchemaSet::load(&dir.join("schemas")).expect("schemas load"));
    let running = serve::start(serve::ServeConfig::loopback())
        .await
        .expect("reference server starts");
    let target = running.target();
    println!(
        "allocations per request (client and server in one process), {requests} requests each"
    );
    println!(
        "{:10} {:>14} {:>12} {:>14} {:>12} {:>12}",
        "transport", "raw allocs", "raw bytes", "runner allocs", "runner bytes", "runner-raw"
    );
    for (name, kind) in [
        ("http", TransportKind::HttpQuery),
        ("ws", TransportKind::Ws),
    ] {
        let raw = if kind == TransportKind::Ws {
            raw_ws(target.ws_url.as_deref().expect("ws url"), requests).await
        } else {
            raw_http(&target.base_url, requests).await
        };
        let ran = runner(&catalog, &schemas, &target, kind, requests).await;
        println!(
            "{name:10} {:>14.1} {:>12.0} {:>14.1} {:>12.0} {:>12.1}",
            raw.0,
            raw.1,
            ran.0,
            ran.1,
            ran.0 - raw.0
        );
    }
    breakdown(&schemas, &target.base_url).await;
    running.shutdown().await;
}
