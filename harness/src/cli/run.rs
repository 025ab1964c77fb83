//! `harness run`: the conformance suite against a target file's server, or against the
//! embedded reference server started in-process on a loopback port.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use harness::case::{self, TransportKind};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::report::{self, Context, Summary};
use harness::run::{self, Event, RunError, RunReport};
use indicatif::{ProgressBar, ProgressStyle};

use super::target::{Allowances, TargetChoice};
use super::{CliError, cases_dir, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Target file describing the server (default: start the reference server in-process).
    #[arg(long, value_name = "FILE")]
    target: Option<PathBuf>,
    /// Only cases whose id contains this text.
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,
    /// Only these transports: http-query, http-body, ws, rest (repeatable).
    #[arg(long = "transport", value_name = "NAME", value_parser = parse_transport)]
    transports: Vec<TransportKind>,
    /// Directory for report.json, junit.xml, report.md and report.html.
    #[arg(long, value_name = "DIR", default_value = "reports/latest")]
    out: PathBuf,
    /// Inject a fault into the reference server (see `harness faults`); not with --target.
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Switch on a spec-open variant of the reference server (see `harness variants`), or
    /// `all`; not with --target.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// Case directory (default: ./cases).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// Executions at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Per-request timeout in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    timeout_ms: u64,
    /// Whole-run timeout in seconds.
    #[arg(long, default_value_t = 600)]
    run_timeout_s: u64,
    /// Send credentials over plain HTTP to a non-loopback address.
    #[arg(long)]
    allow_plain_http: bool,
    /// Let the target file's accept_invalid_certs apply to a non-loopback address.
    #[arg(long)]
    allow_invalid_certs: bool,
    /// Also write each execution's responses as reviewable insta snapshots into DIR.
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// Do not draw a progress bar.
    #[arg(long)]
    quiet: bool,
}

fn parse_transport(name: &str) -> Result<TransportKind, String> {
    TransportKind::from_name(name).ok_or_else(|| {
        format!("unknown transport \"{name}\" (expected http-query, http-body, ws or rest)")
    })
}

/// What a run needs from `cases/`.
pub(crate) struct Corpus {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) schemas: Arc<SchemaSet>,
    pub(crate) cases: Vec<case::Case>,
}

/// Loads the catalog, schemas and cases; defects are usage errors with `path:line`.
pub(crate) fn load_corpus(dir: &Path) -> Result<Corpus, CliError> {
    let catalog = Catalog::load(&dir.join("clauses.toml")).map_err(CliError::usage)?;
    let schemas = SchemaSet::load(&dir.join("schemas")).map_err(CliError::usage)?;
    let cases = case::discover(dir, &catalog, &schemas).map_err(CliError::usage)?;
    Ok(Corpus {
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
        cases,
    })
}

pub(crate) fn run(args: RunArgs) -> Result<u8, CliError> {
    let corpus = load_corpus(&cases_dir(args.cases.clone()))?;
    let allowances = Allowances {
        plain_http: args.allow_plain_http,
        invalid_certs: args.allow_invalid_certs,
    };
    let choice = TargetChoice::from_args(
        args.target.as_deref(),
        &args.faults,
        &args.variants,
        allowances,
    )?;
    let rerun = format!("harness run{}", choice.flags());
    let runtime = runtime()?;
    let report = runtime.block_on(async {
        let (target, reference) = choice.start().await?;
        let config = run::Config {
            target,
            cases: corpus.cases,
            catalog: corpus.catalog.clone(),
            schemas: corpus.schemas.clone(),
            transports: (!args.transports.is_empty()).then(|| args.transports.clone()),
            filter: args.filter.clone(),
            concurrency: args.concurrency,
            limits: harness::transport::RequestLimits {
                request_timeout: Duration::from_millis(args.timeout_ms),
                ..Default::default()
            },
            run_timeout: Duration::from_secs(args.run_timeout_s),
        };
        let progress = progress_bar(args.quiet);
        let bar = progress.clone();
        let outcome = run::run(config, move |event| match event {
            Event::Started { total } => bar.set_length(*total as u64),
            Event::Finished(result) => {
                bar.inc(1);
                if result.verdict == Verdict::Fail {
                    bar.set_message(format!("last failure: {}", result.case));
                }
            }
        })
        .await;
        progress.finish_and_clear();
        if let Some(running) = reference {
            running.shutdown().await;
        }
        outcome.map_err(|error| match error {
            RunError::NothingSelected => CliError::usage(error),
            other => CliError::harness(other),
        })
    })?;
    let context = Context {
        report: &report,
        catalog: &corpus.catalog,
        rerun,
        extra_html: None,
    };
    let paths = super::write_reports(&args.out, &context)?;
    if let Some(dir) = &args.snapshots {
        let now_ms = harness::auth::clock::Clock::system().now_ms();
        let stats = report::write_snapshots(dir, &report.results, &report.redactor, now_ms)
            .map_err(|error| {
                CliError::harness(format!(
                    "failed to write snapshots to {}: {error}",
                    dir.display()
                ))
            })?;
        eprintln!(
            "snapshots in {}: {} new, {} changed (review the .snap.new files with `cargo insta review --workspace-root {}`), {} unchanged",
            dir.display(),
            stats.new,
            stats.changed,
            dir.display(),
            stats.unchanged
        );
    }
    print_summary(&report, &Summary::new(&report, &corpus.catalog), &context);
    eprintln!(
        "reports: {}",
        paths
            .iter()
            .map(|path| path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(exit_code(&report))
}

/// 1 if a check failed; 3 if nothing ran or the harness could not run a case; else 0.
pub(crate) fn exit_code(report: &RunReport) -> u8 {
    if report.count(Verdict::Fail) > 0 {
        exit::FAIL
    } else if report.executed() == 0 || report.count(Verdict::Error) > 0 {
        exit::HARNESS
    } else {
        exit::PASS
    }
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// The terminal summary: results other than pass (failures first), then the counts.
pub(crate) fn print_summary(report: &RunReport, summary: &Summary, context: &Context<'_>) {
    for result in report::failures_first(report)
        .into_iter()
        .filter(|result| !matches!(result.verdict, Verdict::Pass | Verdict::Info))
    {
        println!(
            "{:5} {} [{}] {{{}}}: {}",
            result.verdict.as_str().to_uppercase(),
            result.case,
            result.transport,
            result.clauses.join(", "),
            report.redactor.text(&result.message)
        );
        if result.verdict == Verdict::Fail {
            for line in report::reproduction(context, result).iter().take(1) {
                println!("      reproduce: {line}");
            }
        }
    }
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|verdict| format!("{} {}", summary.count(*verdict), verdict))
        .collect();
    println!(
        "{}: {} in {:.2} s; {} of {} server must clauses covered",
        report.target,
        counts.join(", "),
        report.duration.as_secs_f64(),
        summary.must_covered,
        summary.must_total
    );
    println!(
        "{} passed, {} failed",
        summary.count(Verdict::Pass) + summary.count(Verdict::Info) + summary.count(Verdict::Warn),
        summary.count(Verdict::Fail)
    );
}
