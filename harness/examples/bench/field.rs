//! Field conditions (`--field`), each beside its reference in the same run:
//!
//! 1. fuzz throughput against a target that paces `private/get_transaction_log` per user
//!    at 1 request per second with a burst of 5, beside the same server without the limit;
//! 2. the suite against a burst-1, 1 per second per user server, against its pacing floor
//!    (the paced requests it sent, at the server's rate);
//! 3. time to verdict against a silent target (accepts, reads, never answers) and against
//!    a refusing port, beside the suite against the reference.

use std::time::Instant;

use harness::check::Verdict;
use harness::fuzz;
use harness::run;
use harness::serve;
use harness::target_file::{CountedPer, RateLimits};
use tokio::io::AsyncReadExt;

use super::Corpus;

/// A reference server whose transaction log is paced per user at 1/s with `burst`.
async fn paced_server(burst: u32) -> serve::Running {
    let mut config = serve::ServeConfig::loopback();
    config.limits = RateLimits {
        transaction_log_per_second: 1.0,
        transaction_log_burst: burst,
        transaction_log_counted_per: CountedPer::Account,
        ..config.limits
    };
    serve::start(config).await.expect("reference server starts")
}

/// One fuzz run of `requests` from `seed`: its line of the table.
async fn fuzz_once(corpus: &Corpus, running: &serve::Running, seed: u64, requests: usize) {
    let started = Instant::now();
    let report = fuzz::run(
        running.target(),
        corpus.schemas.clone(),
        &fuzz::FuzzConfig::new(seed, requests),
    )
    .await
    .expect("fuzz runs");
    let wall = started.elapsed().as_secs_f64();
    let total = report.sent + report.stateful.sent;
    println!(
        "  seed {seed}: {wall:6.2} s wall; {total} requests ({} single, {} in sequences) = {:.0}/s; paced {} sent ({:.1}%), {:.2}/s, {} left unsent, in sequences {} sent, {} skipped; throttled {} ({} single, {} in sequences); findings {}",
        report.sent,
        report.stateful.sent,
        total as f64 / wall,
        report.paced_sent,
        report.paced_share * 100.0,
        report.paced_per_second,
        report.paced_unsent,
        report.stateful.paced_sent,
        report.stateful.paced_skipped,
        report.rate_limited + report.stateful.throttled,
        report.rate_limited,
        report.stateful.throttled,
        report.findings.len(),
    );
}

/// Fuzz throughput against the paced server and the unpaced one.
async fn fuzz_paced(corpus: &Corpus, seeds: u64, requests: usize) {
    println!("fuzz, {requests} requests a seed:");
    for (name, running) in [
        ("paced 1/s burst 5 per user", paced_server(5).await),
        (
            "unpaced (burst 100 per token)",
            serve::start(serve::ServeConfig::loopback())
                .await
                .expect("reference server starts"),
        ),
    ] {
        println!(" {name}:");
        for seed in 1..=seeds {
            fuzz_once(corpus, &running, seed, requests).await;
        }
        running.shutdown().await;
    }
}

/// Requests to a paced method among a run's exchanges.
fn paced_requests(report: &harness::results::RunReport) -> usize {
    report
        .results
        .iter()
        .flat_map(|result| &result.exchanges)
        .filter(|exchange| {
            let request = &exchange.request;
            request.url.contains("get_transaction_log")
                || request
                    .body
                    .as_deref()
                    .is_some_and(|body| body.contains("get_transaction_log"))
        })
        .count()
}

/// The suite against a burst-1, 1/s per user server, against its pacing floor.
async fn suite_paced(corpus: &Corpus) {
    let mut config = serve::ServeConfig::loopback();
    config.variants = vec![serve::Variant::RatePerUserBurst1];
    let running = serve::start(config).await.expect("reference server starts");
    let started = Instant::now();
    let report = run::run(
        suite_config(corpus, running.target()),
        harness::events::EventSink::none(),
    )
    .await
    .expect("suite runs");
    let wall = started.elapsed().as_secs_f64();
    let paced = paced_requests(&report);
    // One request free (the burst), then one a second at the server's rate.
    let floor = paced.saturating_sub(1) as f64;
    println!(
        "suite vs burst-1 1/s per user: {wall:.2} s wall; {paced} paced requests: floor {floor:.0} s; ratio {:.2}; {} fail, {} error",
        wall / floor.max(1.0),
        report.count(Verdict::Fail),
        report.count(Verdict::Error),
    );
    running.shutdown().await;
}

fn suite_config(corpus: &Corpus, target: harness::target_file::Target) -> run::RunConfig {
    run::RunConfig {
        concurrency: 16,
        ..run::RunConfig::new(
            target,
            corpus.cases.clone(),
            corpus.catalog.clone(),
            corpus.schemas.clone(),
        )
    }
}

/// A listener on 127.0.0.1 that accepts connections, reads what comes and never answers.
async fn silent_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        for _ in 0..10_000 {
            let Ok((mut stream, _)) = listener.accept().await else {
                break;
            };
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 4096];
                while matches!(stream.read(&mut buffer).await, Ok(read) if read > 0) {}
            });
        }
    });
    (addr.to_string(), task)
}

/// Time to verdict of the suite against the reference, a silent target and a refusing
/// port, at the default request timeout and breaker.
async fn time_to_verdict(corpus: &Corpus) {
    let running = serve::start(serve::ServeConfig::loopback())
        .await
        .expect("reference server starts");
    let reference = running.target();
    let started = Instant::now();
    let report = run::run(
        suite_config(corpus, reference.clone()),
        harness::events::EventSink::none(),
    )
    .await
    .expect("suite runs");
    println!(
        "time to verdict: reference {:.2} s ({} results, {} pass)",
        started.elapsed().as_secs_f64(),
        report.results.len(),
        report.count(Verdict::Pass)
    );
    running.shutdown().await;
    let (addr, task) = silent_server().await;
    let silent = harness::target_file::Target {
        base_url: format!("http://{addr}/api/v2"),
        ws_url: Some(format!("ws://{addr}/ws/api/v2")),
        direct_access_url: Some(format!("http://{addr}/direct")),
        ..reference.clone()
    };
    let started = Instant::now();
    let outcome = run::run(
        suite_config(corpus, silent),
        harness::events::EventSink::none(),
    )
    .await;
    let wall = started.elapsed().as_secs_f64();
    match outcome {
        Ok(report) => println!(
            "time to verdict: silent target {wall:.2} s: {}; {} error, {} fail, {} not run",
            report.interrupted.as_deref().unwrap_or("ran to the end"),
            report.count(Verdict::Error),
            report.count(Verdict::Fail),
            report
                .results
                .iter()
                .filter(|result| result.message.starts_with(run::NOT_RUN))
                .count()
        ),
        Err(error) => println!("time to verdict: silent target {wall:.2} s: {error}"),
    }
    task.abort();
    let refusing = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let refused = harness::target_file::Target {
        base_url: format!("http://{refusing}/api/v2"),
        ws_url: Some(format!("ws://{refusing}/ws/api/v2")),
        direct_access_url: Some(format!("http://{refusing}/direct")),
        ..reference
    };
    let started = Instant::now();
    let outcome = run::run(
        suite_config(corpus, refused),
        harness::events::EventSink::none(),
    )
    .await;
    println!(
        "time to verdict: refusing port {:.3} s: {}",
        started.elapsed().as_secs_f64(),
        match outcome {
            Ok(report) => format!("ran ({} results)", report.results.len()),
            Err(error) => error.to_string(),
        }
    );
}

/// Every part of `--field`.
pub(crate) async fn field(corpus: &Corpus, seeds: u64, requests: usize, fuzz_only: bool) {
    fuzz_paced(corpus, seeds, requests).await;
    if fuzz_only {
        return;
    }
    suite_paced(corpus).await;
    time_to_verdict(corpus).await;
}
