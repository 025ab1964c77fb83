//! `harness judge`: the reference API as the server a client talks to; every request is
//! recorded and judged against the client-side clauses, and the session ends in the same
//! reports as `harness run`.
//!
//! The session lasts until `--for` seconds pass, `--requests` requests are answered, or
//! Ctrl-C (or SIGTERM) arrives, whichever comes first; a second signal stops at once. A
//! session that saw no request exits 3 and writes no report: a pass for a client that
//! never called would be a lie. `--expect FILE` lists known failures by client clause.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use harness_model::check::{Catalog, Level, Side, Verdict};
use harness_model::known_failures::Known;
use harness_model::results::RunReport;
use harness_model::target_file::RateLimits;
use harness_protocol::wire::TransportKind;
use harness_server::judge::{self, Judged, Scenario};
use harness_server::serve::TlsIdentity;

use super::outputs::{Outputs, write_outputs};
use super::reporters::Reporters;
use super::serve::TlsArgs;
use super::summary;
use super::{CliError, CorpusArgs, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct JudgeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8710")]
    listen: SocketAddr,
    /// What the server serves: default, short-pages, unknown-types, small-cursors,
    /// two-factor, token-expiry, relogin; `list` prints them.
    #[arg(long, default_value = "default", value_name = "NAME")]
    scenario: String,
    /// Print the scenarios and exit.
    #[arg(long)]
    list_scenarios: bool,
    /// End the session after this many seconds.
    #[arg(long = "for", value_name = "SECONDS", conflicts_with = "requests")]
    for_seconds: Option<u64>,
    /// End the session once this many requests have been answered.
    #[arg(long, value_name = "N")]
    requests: Option<usize>,
    /// Directory for report.json, junit.xml, report.md and report.html.
    #[arg(long, value_name = "DIR", default_value = "reports/judge")]
    out: PathBuf,
    /// Also write the judged session as events into FILE, one JSON object per line (the
    /// lines of `harness run --events`: the session's start, each verdict, its end).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Write the target file here instead of printing it.
    #[arg(long, value_name = "FILE")]
    target_out: Option<PathBuf>,
    /// Hold clients to this scheme name of the signed Authorization header (e.g.
    /// deri-hmac-sha256); by default any name is accepted and noted.
    #[arg(long, value_name = "NAME")]
    signature_scheme: Option<String>,
    /// Transaction-log burst the server allows and the target file advertises.
    #[arg(long, default_value_t = judge::DEFAULT_BURST)]
    burst: u32,
    /// Only report clauses whose id contains this text.
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,
    /// Only report these transports: http-query, http-body, ws, rest (repeatable).
    #[arg(long = "transport", value_name = "NAME", value_parser = super::parse_transport)]
    transports: Vec<TransportKind>,
    #[command(flatten)]
    corpus: CorpusArgs,
    #[command(flatten)]
    tls: TlsArgs,
    /// Known failures (TOML, `case` = a client clause id): reported as xfail, not failed.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
    /// Serve a spec-open variant (see `harness variants`), or `all`; may be repeated. A
    /// client must cope with every server SPEC.md allows.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
}

fn parse_scenario(name: &str) -> Result<Scenario, CliError> {
    Scenario::from_name(name).ok_or_else(|| {
        let hint = harness_protocol::file_error::did_you_mean(
            name,
            Scenario::ALL.iter().map(|s| s.name()),
        )
        .map(|known| format!(" (did you mean \"{known}\"?)"))
        .unwrap_or_default();
        CliError::usage(format!(
            "unknown scenario \"{name}\"{hint}; `harness judge --scenario list` lists them"
        ))
    })
}

/// Serves the judge as `args` say until the session ends, then judges what the client
/// sent, writes the reports and returns the exit code.
pub(crate) fn judge(args: JudgeArgs) -> Result<u8, CliError> {
    if args.list_scenarios || args.scenario == "list" {
        for scenario in Scenario::ALL {
            outln!("{:14} {}", scenario.name(), scenario.description());
        }
        return Ok(exit::PASS);
    }
    let scenario = parse_scenario(&args.scenario)?;
    let catalog = args.corpus.load()?.catalog;
    let identity = args.tls.identity(args.listen)?;
    let expectations =
        super::run::load_expectations(args.expect.as_deref(), &client_clauses(&catalog))?;
    let reporters = Reporters::new(true, args.events.as_deref())?;
    runtime()?.block_on(async {
        let signals = super::signals::Signals::new();
        let running = start_judge(&args, scenario, identity).await?;
        let started = Instant::now();
        let recorder = running.recorder().clone();
        let wanted = args.requests.unwrap_or(usize::MAX);
        signals
            .until_enough_or_stopped(recorder.wait_for_answers(wanted), args.for_seconds)
            .await;
        let target = running.target().clone();
        let knowledge = running.knowledge();
        let records = running.stop().await;
        if records.is_empty() {
            return Err(CliError::harness(format!(
                "no request arrived in {:.0} s: nothing to judge (point a client at {})",
                started.elapsed().as_secs_f64(),
                target.base_url
            )));
        }
        let tally = judge::assess(&records, &knowledge);
        let judged = Judged {
            records: &records,
            tally: &tally,
            catalog: &catalog,
            target: &target,
            redactor: recorder.redactor(),
            duration: started.elapsed(),
            filter: args.filter.as_deref(),
            transports: (!args.transports.is_empty()).then_some(args.transports.as_slice()),
        };
        let rerun = format!("harness judge --scenario {}", scenario.name());
        reporters.rerun(&rerun);
        let mut run_report = reporters.announce(&judge::to_run_report(&judged))?;
        let outcomes =
            super::run::apply_expectations(expectations.as_ref(), &mut run_report.results);
        let paths = write_outputs(&run_report, &catalog, Outputs::reports(&args.out, rerun))?;
        summary::judged(&run_report, &catalog, records.len(), recorder.dropped());
        summary::expectations(expectations.as_ref(), &outcomes);
        summary::report_paths(&paths);
        Ok(exit_code(&run_report, &catalog))
    })
}

/// The clauses `--expect` may name: the catalog's client clauses, on every transport.
fn client_clauses(catalog: &Catalog) -> Known {
    Known::new(
        catalog
            .iter()
            .filter(|clause| clause.side == Side::Client)
            .map(|clause| (clause.id.clone(), TransportKind::ALL.to_vec())),
        catalog.ids().map(str::to_owned),
    )
}

/// Starts the judge's server for `scenario`, writes its target file when asked, and says
/// where to point a client.
async fn start_judge(
    args: &JudgeArgs,
    scenario: Scenario,
    identity: Option<TlsIdentity>,
) -> Result<judge::Judge, CliError> {
    let config = judge::JudgeConfig {
        listen: args.listen,
        scenario,
        limits: RateLimits {
            transaction_log_burst: args.burst,
            ..judge::JudgeConfig::loopback().limits
        },
        signature_scheme: args.signature_scheme.clone(),
        tls: identity.clone(),
        variants: super::serve::parse_variants(&args.variants)?,
        ..judge::JudgeConfig::loopback()
    };
    let running = judge::start(config).await.map_err(|error| {
        CliError::harness(format!("failed to listen on {}: {error}", args.listen))
    })?;
    args.tls.write_target(
        identity.as_ref(),
        running.target().clone(),
        args.target_out.as_deref(),
        running.addr,
    )?;
    eprintln!(
        "client judge ({}) on {}; point your client at base_url {} or ws_url {}",
        scenario.name(),
        running.addr,
        running.target().base_url,
        running.target().ws_url.as_deref().unwrap_or_default()
    );
    Ok(running)
}

/// 1 when a result broke a client `must` clause, else 0.
fn exit_code(run_report: &RunReport, catalog: &Catalog) -> u8 {
    let broke_a_must = run_report.results.iter().any(|result| {
        result.verdict == Verdict::Fail
            && catalog
                .get(&result.case)
                .is_some_and(|clause| clause.level == Level::Must && clause.side == Side::Client)
    });
    if broke_a_must { exit::FAIL } else { exit::PASS }
}
