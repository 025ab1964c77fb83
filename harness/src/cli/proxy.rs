//! `harness proxy`: a transparent reverse proxy in front of a target, judging both sides
//! of the live session: the client's requests against the client clauses, the server's
//! answers against the server checks an answer seen after its request allows.
//!
//! The session lasts until `--for` seconds pass, `--requests` answers went back, or
//! Ctrl-C (or SIGTERM) arrives; a second signal stops at once. A session that saw no
//! request exits 3 and writes no report. Exit 1 when either side broke a `must` clause.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use harness_model::check::{Catalog, Level, Verdict};
use harness_model::results::RunReport;
use harness_model::target_file::Target;
use harness_server::proxy::{self, report as proxy_report};

use super::outputs::{Outputs, write_outputs};
use super::reporters::Reporters;
use super::summary;
use super::target::{Allowances, check_invalid_certs, check_plain_http};
use super::{CliError, CorpusArgs, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// The target file of the server behind the proxy (its URLs, accounts, TLS trust).
    #[arg(long, value_name = "FILE")]
    target: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8720")]
    listen: SocketAddr,
    /// End the session after this many seconds.
    #[arg(long = "for", value_name = "SECONDS", conflicts_with = "requests")]
    for_seconds: Option<u64>,
    /// End the session once this many answers have gone back to clients.
    #[arg(long, value_name = "N")]
    requests: Option<usize>,
    /// Directory for report.json, junit.xml, report.md and report.html.
    #[arg(long, value_name = "DIR", default_value = "reports/proxy")]
    out: PathBuf,
    /// Also write the judged session as events into FILE, one JSON object per line (the
    /// lines of `harness run --events`: the session's start, each verdict, its end).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Write each client session here: snapshots/ of the answers and cases/ to replay.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Write the client's target file (the proxy's URLs) here instead of printing it.
    #[arg(long, value_name = "FILE")]
    target_out: Option<PathBuf>,
    /// Accept any scheme name of the signed Authorization header, verify the signature and
    /// note the name (as `harness judge` does); by default clients are held to the target
    /// file's `signature_scheme`.
    #[arg(long)]
    any_signature_scheme: bool,
    #[command(flatten)]
    allowances: Allowances,
    #[command(flatten)]
    corpus: CorpusArgs,
}

/// Runs the proxy as `args` say until the session ends, then judges both sides of it,
/// writes the reports (and the recording) and returns the exit code.
pub(crate) fn proxy(args: ProxyArgs) -> Result<u8, CliError> {
    let upstream = Target::load(&args.target).map_err(CliError::usage)?;
    check_allowed(&args, &upstream)?;
    let corpus = args.corpus.load()?;
    let reporters = Reporters::new(true, args.events.as_deref())?;
    runtime()?.block_on(async {
        let signals = super::signals::Signals::new();
        let running = start_proxy(&args, &upstream).await?;
        let started = Instant::now();
        let wanted = args.requests.unwrap_or(usize::MAX);
        signals
            .until_enough_or_stopped(running.wait_for_answers(wanted), args.for_seconds)
            .await;
        let mut session = running.stop().await;
        if args.any_signature_scheme {
            session.knowledge.signature_scheme = None;
        }
        if session.records.is_empty() {
            return Err(CliError::harness(format!(
                "no request arrived in {:.0} s: nothing to judge (point a client at {})",
                started.elapsed().as_secs_f64(),
                session.client_target.base_url
            )));
        }
        let verdicts = proxy_report::judge_session(&session, &corpus.schemas, &corpus.catalog);
        let rerun = format!("harness proxy --target {}", args.target.display());
        reporters.rerun(&rerun);
        let run_report = reporters.announce(&proxy_report::to_run_report(
            &session,
            &verdicts,
            &corpus.catalog,
            started.elapsed(),
        ))?;
        let outputs = Outputs::reports(&args.out, rerun);
        let paths = write_outputs(&run_report, &corpus.catalog, outputs)?;
        if let Some(dir) = &args.record {
            record_session(dir, &session, &corpus.catalog)?;
        }
        summary::proxied(
            &run_report,
            &corpus.catalog,
            session.records.len(),
            session.unjudged,
        );
        summary::report_paths(&paths);
        Ok(exit_code(&run_report, &corpus.catalog))
    })
}

/// Refuses what the allowances do not allow: a plain-HTTP or invalid-certificate
/// upstream, and a client leg (plain HTTP) listening beyond loopback.
fn check_allowed(args: &ProxyArgs, upstream: &Target) -> Result<(), CliError> {
    check_plain_http(upstream, args.allowances.plain_http)?;
    check_invalid_certs(upstream, args.allowances.invalid_certs)?;
    // The client's leg is plain HTTP: credentials cross it in clear text.
    if !args.listen.ip().is_loopback() && !args.allowances.plain_http {
        return Err(CliError::usage(format!(
            "--listen {} is not loopback and the proxy speaks plain HTTP to clients; their credentials would travel unencrypted (pass --allow-plain-http to do it anyway)",
            args.listen
        )));
    }
    Ok(())
}

/// Starts the proxy in front of `upstream`, writes or prints the client's target file,
/// and says where to point a client.
async fn start_proxy(args: &ProxyArgs, upstream: &Target) -> Result<proxy::Proxy, CliError> {
    let config = proxy::ProxyConfig {
        listen: args.listen,
        ..proxy::ProxyConfig::loopback(upstream.clone())
    };
    let running = proxy::start(config).await.map_err(|error| {
        CliError::harness(format!("failed to listen on {}: {error}", args.listen))
    })?;
    let text = running.client_target().to_toml();
    match &args.target_out {
        Some(path) => std::fs::write(path, &text).map_err(|error| {
            CliError::harness(format!("failed to write {}: {error}", path.display()))
        })?,
        None => out!("{text}"),
    }
    eprintln!(
        "harness proxy on {} in front of {}; point your client at base_url {}",
        running.addr,
        upstream.base_url,
        running.client_target().base_url
    );
    Ok(running)
}

/// Writes `--record DIR`: the session's snapshots and case files.
fn record_session(dir: &Path, session: &proxy::Session, catalog: &Catalog) -> Result<(), CliError> {
    let now_ms = harness_protocol::auth::clock::Clock::system().now_ms();
    let written = proxy::record::write(dir, session, catalog, now_ms).map_err(|error| {
        CliError::harness(format!("failed to record to {}: {error}", dir.display()))
    })?;
    eprintln!(
        "recorded {} snapshots and {} case files in {}",
        written.snapshots.len(),
        written.cases.len(),
        dir.display()
    );
    Ok(())
}

/// 1 when a result of either side broke a `must` clause, else 0.
fn exit_code(run_report: &RunReport, catalog: &Catalog) -> u8 {
    let broke_a_must = run_report.results.iter().any(|result| {
        result.verdict == Verdict::Fail
            && result.clauses.iter().any(|clause| {
                catalog
                    .get(clause)
                    .is_some_and(|clause| clause.level == Level::Must)
            })
    });
    if broke_a_must { exit::FAIL } else { exit::PASS }
}
