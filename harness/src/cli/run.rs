//! `harness run`: the conformance suite against a target file's server, or against the
//! embedded reference server started in-process on a loopback port.
//!
//! With `--expect FILE` the known failures it lists are `xfail` and do not fail the run;
//! `--write-expect FILE` writes such a file from the run. The first SIGINT or SIGTERM
//! stops scheduling, lets executions in flight finish within a grace, and writes the
//! reports with the rest marked "not run" (exit 4); a second one stops at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use harness_model::check::Verdict;
use harness_model::corpus::Corpus;
use harness_model::known_failures::{self, EntryOutcome, Known, KnownFailures};
use harness_model::results::CaseResult;
use harness_model::results::RunReport;
use harness_model::target_file::Target;
use harness_protocol::wire::TransportKind;
use harness_runner::run::{self, Interrupt, RunError};

use super::outputs::{Outputs, write_outputs};
use super::reporters::Reporters;
use super::summary;
use super::target::{TargetArgs, TargetChoice, Timeouts};
use super::{CliError, CorpusArgs, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Only cases whose id contains this text.
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,
    /// Only these transports: http-query, http-body, ws, rest (repeatable).
    #[arg(long = "transport", value_name = "NAME", value_parser = super::parse_transport)]
    transports: Vec<TransportKind>,
    /// Directory for report.json, junit.xml, report.md and report.html.
    #[arg(long, value_name = "DIR", default_value = "reports/latest")]
    out: PathBuf,
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Executions at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    #[command(flatten)]
    timeouts: Timeouts,
    /// Also write each execution's responses as reviewable insta snapshots into DIR.
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// Do not draw a progress bar.
    #[arg(long)]
    quiet: bool,
    /// Also write the run's event stream into FILE, one JSON object per line (see README.md).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Known failures (TOML): they are reported as xfail and do not fail the run.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
    /// Fail the run when a known failure of --expect passes now (it is reported as fixed).
    #[arg(long, requires = "expect")]
    strict_expect: bool,
    /// Write the failures of this run as an expectations file (placeholder reasons).
    #[arg(long, value_name = "FILE")]
    write_expect: Option<PathBuf>,
    /// Walk the whole history in every pagination walk, not a window of a few pages: the
    /// run's paced calls then grow with the target's history.
    #[arg(long)]
    full_walks: bool,
    /// Paced calls get at most S seconds at the target's limits: executions that do not fit
    /// are skipped with the reason.
    #[arg(long, value_name = "S", value_parser = parse_seconds)]
    paced_budget_s: Option<f64>,
    /// Print the plan of the paced calls, each execution's calls by budget, and exit
    /// without sending anything to the target.
    #[arg(long)]
    plan: bool,
}

fn parse_seconds(text: &str) -> Result<f64, NotSeconds> {
    text.parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .ok_or_else(|| NotSeconds {
            text: text.to_owned(),
        })
}

/// A `--paced-budget-s` that is not a finite, non-negative number of seconds.
#[derive(Debug, thiserror::Error)]
#[error("\"{text}\" is not a number of seconds")]
struct NotSeconds {
    /// The text given.
    text: String,
}

/// What an expectations file may name in a `harness run`: the corpus's cases and the
/// catalog's clauses.
pub(crate) fn known_for_run(corpus: &harness_model::corpus::Corpus) -> Known {
    Known::new(
        corpus
            .cases
            .iter()
            .map(|case| (case.id.clone(), case.transports.clone())),
        corpus.catalog.ids().map(str::to_owned),
    )
}

/// Loads `--expect FILE`, if given; a defect is a usage error with `path:line`.
pub(crate) fn load_expectations(
    path: Option<&Path>,
    known: &Known,
) -> Result<Option<KnownFailures>, CliError> {
    let expectations = path
        .map(|path| known_failures::load(path, known).map_err(CliError::usage))
        .transpose()?;
    for warning in expectations.iter().flat_map(|file| &file.warnings) {
        eprintln!("{warning}");
    }
    Ok(expectations)
}

/// Runs the suite as `args` say, writes the reports, prints the summary and returns the
/// exit code.
pub(crate) fn run(args: RunArgs) -> Result<u8, CliError> {
    let corpus = args.corpus.load()?;
    let expectations = load_expectations(args.expect.as_deref(), &known_for_run(&corpus))?;
    let choice = TargetChoice::from_args(&args.target)?;
    let rerun = format!("harness run{}", choice.flags());
    let catalog = Arc::clone(&corpus.catalog);
    let runtime = runtime()?;
    // `--plan`: printed, nothing sent.
    let Some(mut report) = runtime.block_on(run_suite(&args, choice, corpus, &rerun))? else {
        return Ok(exit::PASS);
    };
    let outcomes = apply_expectations(expectations.as_ref(), &mut report.results);
    let outputs = Outputs {
        write_expect: (args.write_expect.as_deref()).map(|path| (path, outcomes.as_slice())),
        snapshots: args.snapshots.as_deref(),
        ..Outputs::reports(&args.out, rerun.clone())
    };
    let paths = write_outputs(&report, &catalog, outputs)?;
    summary::run(&report, &catalog, &rerun);
    let fixed = summary::expectations(expectations.as_ref(), &outcomes);
    summary::report_paths(&paths);
    let strict_fixed = args.strict_expect && fixed > 0;
    if strict_fixed {
        summary::strict_expect(fixed);
    }
    Ok(exit_code(&report, strict_fixed))
}

/// Starts the target and runs `corpus` against it (`--plan`: prints the paced plan and
/// returns `None`, nothing sent), then stops the reference server and finishes the
/// reporters. The report is the fold of the run's events; a run the harness could not
/// carry out still has one, which says so over the executions it attempted.
async fn run_suite(
    args: &RunArgs,
    choice: TargetChoice,
    corpus: Corpus,
    rerun: &str,
) -> Result<Option<RunReport>, CliError> {
    let interrupt = Interrupt::new();
    super::signals::Signals::new().fire_then_exit(
        interrupt.clone(),
        "finishing the executions in flight, then writing the reports",
    );
    let reporters = Reporters::new(args.quiet, args.events.as_deref())?;
    reporters.rerun(rerun);
    let (target, reference) = choice.start().await?;
    let config = run_config(args, target, corpus, reference.is_some());
    // The plan goes to stderr, before the run: what the paced method will cost.
    let plan = run::paced_plan(&config);
    eprintln!("{plan}");
    let outcome = if args.plan {
        summary::paced_plan(&plan);
        None
    } else {
        Some(run::run_until(config, interrupt, reporters.sink()).await)
    };
    let finished = reporters.finish();
    if let Some(running) = reference {
        running.shutdown().await;
    }
    match outcome {
        None => return finished.map(|()| None),
        Some(Err(error @ RunError::NothingSelected)) => return Err(CliError::usage(error)),
        // Its reports still say so, so a CI job that reads them finds a harness error,
        // not a missing file or a pass.
        Some(Err(error)) => eprintln!("error: {error}"),
        Some(Ok(())) => {}
    }
    finished?;
    reporters
        .run_report()
        .map(Some)
        .ok_or_else(|| CliError::harness("the run's events hold no finished run"))
}

/// The runner's configuration from the command line's options, for `target` and the
/// cases of `corpus`.
fn run_config(
    args: &RunArgs,
    target: Target,
    corpus: Corpus,
    reference_arrivals: bool,
) -> run::RunConfig {
    run::RunConfig {
        transports: (!args.transports.is_empty()).then(|| args.transports.clone()),
        filter: args.filter.clone(),
        concurrency: args.concurrency,
        limits: harness_runner::transport::RequestLimits {
            request_timeout: Duration::from_millis(args.timeouts.timeout_ms),
            ..Default::default()
        },
        run_timeout: Duration::from_secs(args.timeouts.run_timeout_s),
        no_answer_limit: args.timeouts.no_answer_limit,
        full_walks: args.full_walks,
        paced_budget: args.paced_budget_s.map(Duration::from_secs_f64),
        reference_arrivals,
        ..run::RunConfig::new(target, corpus.cases, corpus.catalog, corpus.schemas)
    }
}

/// 3 if the harness could not run (an unreachable target) or the target stopped answering
/// (the run's breaker stopped it); 1 if a check failed
/// (or, `strict_fixed`, a known failure was fixed under `--strict-expect`); 3 if the
/// harness could not run a case; 4 if the run was interrupted; 3 if nothing ran; else 0.
/// Known failures (`xfail`) do not count.
pub(crate) fn exit_code(report: &RunReport, strict_fixed: bool) -> u8 {
    if report
        .interrupted
        .as_deref()
        .is_some_and(|reason| run::stopped_answering(reason) || run::could_not_run_reason(reason))
    {
        exit::HARNESS
    } else if report.count(Verdict::Fail) > 0 || strict_fixed {
        exit::FAIL
    } else if report.count(Verdict::Error) > 0 {
        exit::HARNESS
    } else if report.interrupted.is_some() {
        exit::INTERRUPTED
    } else if report.executed() == 0 {
        exit::HARNESS
    } else {
        exit::PASS
    }
}

/// The known failures of an expectations file applied to `results` (none without one),
/// with what became of each entry.
pub(crate) fn apply_expectations(
    expectations: Option<&KnownFailures>,
    results: &mut [CaseResult],
) -> Vec<EntryOutcome> {
    expectations
        .map(|expectations| expectations.apply(results))
        .unwrap_or_default()
}
