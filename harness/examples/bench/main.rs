//! End-to-end throughput on loopback, in one run (figures for BENCHMARKS.md):
//!
//! 1. raw: the reference server's rate for `public/get_currencies` with a minimal client
//!    (HTTP keep-alive and WebSocket; 1 and 8 connections), one request in flight each;
//! 2. runner: the rate the harness's own runner reaches against the same server at the
//!    same concurrency (templates, envelope and schema checks, recording included), and
//!    its ratio to the raw rate;
//! 3. suite: the full case corpus's wall time and case executions per second;
//! 4. with `--field`, field conditions instead (`field.rs`): fuzzing a paced target beside
//!    an unpaced one, the suite against its pacing floor, time to verdict against a silent
//!    target and a refusing port.
//!
//! `cargo run --release --example bench -- [--seconds S] [--suite-runs N]`; `--suite-only`,
//! `--suite-runs 0`, `--transport` and `--connections` narrow it to one part, for a profile
//! of that part (BENCHMARKS.md, "Profiles").

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use harness::case::{self};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::run;
use harness::serve;
use harness::wire::TransportKind;
use tokio_tungstenite::tungstenite::Message;

mod field;

// The allocator the `harness` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Corpus {
    catalog: Arc<Catalog>,
    schemas: Arc<SchemaSet>,
    cases: Vec<case::Case>,
}

fn corpus() -> Corpus {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&dir.join("clauses.toml")).expect("catalog loads");
    let schemas = SchemaSet::load(&dir.join("schemas")).expect("schemas load");
    let cases = case::discover(&dir, &catalog, &schemas).expect("corpus loads");
    Corpus {
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
        cases,
    }
}

async fn raw_http(base_url: &str, connections: usize, seconds: f64) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (count, url) = (count.clone(), format!("{base_url}/public/get_currencies"));
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .expect("client");
            while Instant::now() < deadline {
                let response = client.get(&url).send().await.expect("request");
                let _ = response.bytes().await.expect("body");
                count.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    count.load(Ordering::Relaxed) as f64 / seconds
}

async fn raw_ws(ws_url: &str, connections: usize, seconds: f64) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (count, url) = (count.clone(), ws_url.to_owned());
        tasks.push(tokio::spawn(async move {
            let (mut stream, _) = tokio_tungstenite::connect_async_with_config(url.as_str(), None, true).await.expect("connect");
            let mut id = 0u64;
            while Instant::now() < deadline {
                id += 1;
                let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"public/get_currencies","params":{{}}}}"#);
                stream.send(Message::text(request)).await.expect("send");
                loop {
                    if let Some(Ok(Message::Text(_))) = stream.next().await {
                        break;
                    }
                }
                count.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    count.load(Ordering::Relaxed) as f64 / seconds
}

/// CPU time this process has used so far (user + system, every thread: client and server
/// alike), from `/proc/self/stat`; `None` where there is no such file. Rates move with the
/// load of a shared machine, CPU time per request much less, so both are printed.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}

/// Microseconds of CPU per request between two readings of [`process_cpu`].
fn cpu_per_request(before: Option<Duration>, after: Option<Duration>, requests: f64) -> String {
    match (before, after) {
        (Some(before), Some(after)) if requests > 0.0 => {
            format!("{:.0}", (after - before).as_secs_f64() * 1e6 / requests)
        }
        _ => "n/a".to_owned(),
    }
}

/// The runner against the server: `connections` cases at once, each a long sequence of
/// `public/get_currencies` calls over one transport.
async fn runner(
    corpus: &Corpus,
    target: &harness::target_file::Target,
    transport: TransportKind,
    connections: usize,
    seconds: f64,
    raw_rate: f64,
) -> (f64, f64) {
    // Size the work to take about `seconds` at the raw rate, then time it.
    let steps_per_case = 100usize;
    let total_requests = (raw_rate * seconds).max(1_000.0) as usize;
    let n_cases = (total_requests / steps_per_case).max(connections);
    let steps = "[[step]]\ncall = \"public/get_currencies\"\n".repeat(steps_per_case);
    let cases: Vec<case::Case> = (0..n_cases)
        .map(|index| {
            let text = format!(
                "id = \"bench.{index}\"\ntitle = \"throughput\"\nclauses = [\"env.response.id\"]\ntransports = [\"{transport}\"]\n{steps}"
            );
            case::parse_case(Path::new("bench.toml"), &text, &corpus.catalog, &corpus.schemas).expect("bench case parses")
        })
        .collect();
    let config = run::RunConfig {
        concurrency: connections,
        ..run::RunConfig::new(
            target.clone(),
            cases,
            corpus.catalog.clone(),
            corpus.schemas.clone(),
        )
    };
    let started = Instant::now();
    let report = run::run(config, harness::events::EventSink::none())
        .await
        .expect("runner runs");
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(
        report.count(Verdict::Pass),
        n_cases,
        "every bench case passes"
    );
    let requests = (n_cases * steps_per_case) as f64;
    (requests / elapsed, requests)
}

/// The runner's rate against a raw client's, and the full suite's wall time.
#[derive(Debug, Parser)]
struct Args {
    /// Seconds each rate measurement lasts.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Runs of the full suite whose wall times are summarised (0: the rates alone).
    #[arg(long, default_value_t = 5)]
    suite_runs: usize,
    /// Measure only the full suite's wall time (for a profile of the suite alone).
    #[arg(long)]
    suite_only: bool,
    /// Measure the rates at this many connections only (default: 1 and 8).
    #[arg(long)]
    connections: Option<usize>,
    /// Measure the rates over this transport only (default: both).
    #[arg(long, value_parser = ["http", "ws"])]
    transport: Option<String>,
    /// Measure field conditions instead (paced, silent and refusing targets).
    #[arg(long)]
    field: bool,
    /// With --field: fuzz seeds 1 to this.
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// With --field: requests a fuzz seed.
    #[arg(long, default_value_t = 5_000)]
    requests: usize,
    /// With --field: only the fuzz part.
    #[arg(long)]
    fuzz_only: bool,
}

#[tokio::main]
async fn main() {
    let Args {
        seconds,
        suite_runs,
        suite_only,
        connections,
        transport: only_transport,
        field: field_only,
        seeds,
        requests,
        fuzz_only,
    } = Args::parse();
    if field_only {
        field::field(&corpus(), seeds, requests, fuzz_only).await;
        return;
    }
    let connection_counts = connections.map_or(vec![1, 8], |count| vec![count]);
    let corpus = corpus();
    let running = serve::start(serve::ServeConfig::loopback())
        .await
        .expect("reference server starts");
    let target = running.target();
    println!(
        "machine: {} cores; {seconds} s per measurement",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:10} {:>5} {:>12} {:>12} {:>7} {:>13} {:>13}",
        "transport", "conns", "raw req/s", "runner req/s", "ratio", "raw CPU µs/r", "runner µs/r"
    );
    let rate_transports: &[(&str, TransportKind)] = if suite_only {
        &[]
    } else {
        &[
            ("http", TransportKind::HttpQuery),
            ("ws", TransportKind::Ws),
        ]
    };
    let rate_transports = rate_transports
        .iter()
        .filter(|(name, _)| only_transport.as_deref().is_none_or(|only| only == *name));
    for &(transport, kind) in rate_transports {
        for &connections in &connection_counts {
            let cpu_start = process_cpu();
            let raw = if transport == "http" {
                raw_http(&target.base_url, connections, seconds).await
            } else {
                raw_ws(
                    target.ws_url.as_deref().expect("ws url"),
                    connections,
                    seconds,
                )
                .await
            };
            let cpu_raw_done = process_cpu();
            let (runner_rate, runner_requests) =
                runner(&corpus, &target, kind, connections, seconds, raw).await;
            let cpu_runner_done = process_cpu();
            println!(
                "{transport:10} {connections:>5} {raw:>12.0} {runner_rate:>12.0} {:>6.0}% {:>13} {:>13}",
                100.0 * runner_rate / raw,
                cpu_per_request(cpu_start, cpu_raw_done, raw * seconds),
                cpu_per_request(cpu_raw_done, cpu_runner_done, runner_requests),
            );
        }
    }
    if suite_runs == 0 {
        running.shutdown().await;
        return;
    }
    let mut walls = Vec::new();
    let mut executions = 0;
    let cpu_suites_start = process_cpu();
    for _ in 0..suite_runs {
        let suite_server = serve::start(serve::ServeConfig::loopback())
            .await
            .expect("reference server starts");
        let config = run::RunConfig {
            concurrency: 16,
            ..run::RunConfig::new(
                suite_server.target(),
                corpus.cases.clone(),
                corpus.catalog.clone(),
                corpus.schemas.clone(),
            )
        };
        let started = Instant::now();
        let report = run::run(config, harness::events::EventSink::none())
            .await
            .expect("suite runs");
        walls.push(started.elapsed().as_secs_f64());
        executions = report.results.len();
        assert_eq!(
            report.count(Verdict::Fail),
            0,
            "the suite passes the reference"
        );
        suite_server.shutdown().await;
    }
    let cpu_per_suite = cpu_per_request(cpu_suites_start, process_cpu(), suite_runs as f64);
    walls.sort_by(f64::total_cmp);
    let median = walls[walls.len() / 2];
    println!(
        "suite: {executions} case executions; wall time median {median:.3} s (min {:.3}, max {:.3}) over {suite_runs} runs; {:.0} executions/s; {cpu_per_suite} µs of CPU per run (server, client and server starts)",
        walls[0],
        walls[walls.len() - 1],
        executions as f64 / median
    );
    running.shutdown().await;
}
