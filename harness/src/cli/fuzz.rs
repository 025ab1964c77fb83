//! `harness fuzz`: generated valid and invalid requests against a target (default: the
//! embedded reference server, with `--fault` like `harness run`), findings shrunk and
//! written as ready-to-run case files; `--shard I/N` sends one part of a seed's requests.
//! `harness fuzz merge DIR...` ([`merge`]) makes one report of many runs.

mod merge;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::{Args, Subcommand};
use harness_fuzz::{
    self as fuzz, FuzzCollector, FuzzConfig, FuzzError, FuzzReport, FuzzSink, Shard,
};
use harness_protocol::wire::TransportKind;

use super::reporters::Reporters;
use super::target::{TargetArgs, TargetChoice, Timeouts};
use super::{CliError, CorpusArgs, exit, runtime};

/// `harness fuzz [options]`, or `harness fuzz merge DIR...`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct FuzzArgs {
    #[command(subcommand)]
    command: Option<FuzzCommand>,
    #[command(flatten)]
    run: FuzzRunArgs,
}

#[derive(Debug, Subcommand)]
enum FuzzCommand {
    /// Merge the findings of many runs (their --out directories) into one report, one finding
    /// per clause and shrunk request.
    Merge(merge::MergeArgs),
}

#[derive(Debug, Args)]
struct FuzzRunArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Generated requests to send, stateful sequences included.
    #[arg(long, default_value_t = 1_000)]
    requests: usize,
    /// Percentage of --requests spent on stateful sequences (logins, refreshes, forks,
    /// exchanges, logouts, toggles and private calls judged against a model of token state),
    /// sent before the stateless requests; 0 turns them off.
    #[arg(long, value_name = "PERCENT", default_value_t = 10)]
    stateful: usize,
    /// Seed of the generator (default: a random one, printed so the run can be repeated).
    #[arg(long)]
    seed: Option<u64>,
    /// Send only shard I of N of the requests (request k goes to shard k mod N + 1), so N
    /// processes with the same seed split one run without overlap.
    #[arg(long, value_name = "I/N", default_value_t = Shard::WHOLE)]
    shard: Shard,
    /// Directory for fuzz.json and a case file per finding.
    #[arg(long, value_name = "DIR", default_value = "reports/fuzz")]
    out: PathBuf,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Seconds a request to a paced method may wait for its pacing budget; past that it is
    /// left unsent (a sequence's step skipped). 0: sent whenever the budget has room during
    /// the run, never waited for.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    paced_wait_s: f64,
    /// Seconds the run lasts at least: until then the paced method (the transaction log)
    /// is sent at the full rate its budget allows, the other requests filling the gaps.
    /// 0: as long as the other requests take.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    duration: f64,
    /// Steer by the response classes reached: a quarter of the fresh requests replaced by
    /// a mutation of a request that reached a new class. Without it the run sends exactly
    /// the seed's requests (the same from run to run and across shards).
    #[arg(long)]
    steer: bool,
    /// Resume the corpus of requests that reached a new response class from DIR, and save
    /// this run's new entries there.
    #[arg(long = "corpus", value_name = "DIR")]
    corpus_dir: Option<PathBuf>,
    /// Only these transports: http-query, http-body, ws, rest (repeatable).
    #[arg(long = "transport", value_name = "NAME", value_parser = super::parse_transport)]
    transports: Vec<TransportKind>,
    #[command(flatten)]
    corpus: CorpusArgs,
    #[command(flatten)]
    timeouts: Timeouts,
    /// Do not draw a progress bar.
    #[arg(long)]
    quiet: bool,
    /// Also write the run's event stream into FILE, one JSON object per line (see README.md).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
}

pub(crate) fn fuzz(args: FuzzArgs) -> Result<u8, CliError> {
    match args.command {
        Some(FuzzCommand::Merge(merge_args)) => merge::merge(merge_args),
        None => run(args.run),
    }
}

/// Runs the fuzzer as `args` say, then writes fuzz.json, prints the summary and each
/// finding, and returns the exit code, all from the run's events folded by a
/// [`FuzzCollector`] (the fold `harness report --from-events` makes of an events file), not
/// from the value the run returns.
fn run(args: FuzzRunArgs) -> Result<u8, CliError> {
    let choice = TargetChoice::from_args(&args.target)?;
    let schemas = args.corpus.load()?.schemas;
    let seed = args.seed.unwrap_or_else(rand::random);
    let mut config = fuzz_config(&args, seed)?;
    let reporters = Reporters::new(args.quiet, args.events.as_deref())?;
    let collector = Arc::new(Mutex::new(FuzzCollector::default()));
    config.events = folding(reporters.fuzz_sink(), &collector);
    let rerun = rerun_command(&args, seed, &choice);
    let ran = runtime()?.block_on(async {
        super::signals::Signals::new().fire_then_exit(
            config.interrupt.clone(),
            "finishing the requests in flight, then writing the findings unshrunk",
        );
        eprintln!("fuzz: seed {seed} ({rerun})");
        let (target, reference) = choice.start().await?;
        // The report the run returns is the one its end announces, folded below.
        let ran = fuzz::run(target, schemas, &config).await.map(drop);
        let finished = reporters.finish();
        if let Some(running) = reference {
            running.shutdown().await;
        }
        finished?;
        Ok(ran)
    })?;
    let report_path = args.out.join("fuzz.json");
    match ran {
        Ok(()) => {}
        Err(FuzzError::Target(message)) => return Err(CliError::usage(message)),
        // The run could not happen: fuzz.json still says so, as every exit leaves one.
        Err(error) => {
            let failed = FuzzReport {
                seed,
                requests: args.requests,
                shard: args.shard,
                error: Some(error.to_string()),
                ..FuzzReport::default()
            };
            write_report(&args.out, &report_path, &failed)?;
            return Err(CliError::harness(error));
        }
    }
    let folded = std::mem::take(&mut *collector.lock().unwrap_or_else(PoisonError::into_inner));
    let report = folded
        .report()
        .ok_or_else(|| CliError::harness("the fuzz run announced no end"))?;
    write_report(&args.out, &report_path, &report)?;
    print_counts(&report);
    print_findings(&report);
    outln!(
        "fuzz: {} findings ({} failed requests); report {}; rerun: {rerun}",
        report.findings.len(),
        report.failed_requests,
        report_path.display()
    );
    Ok(exit_code(&report))
}

/// The run's sink: each event to the reporters (the progress bar, `--events`), then into
/// `collector`.
fn folding(reporters: FuzzSink, collector: &Arc<Mutex<FuzzCollector>>) -> FuzzSink {
    let collector = Arc::clone(collector);
    FuzzSink::new(move |event| {
        reporters.emit(event);
        collector
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(event.clone());
    })
}

/// The fuzzer's configuration from the command line's options (the events sink aside).
fn fuzz_config(args: &FuzzRunArgs, seed: u64) -> Result<FuzzConfig, CliError> {
    let mut config = FuzzConfig::new(seed, args.requests);
    config.shard = args.shard;
    config.stateful_percent = args.stateful.min(100);
    config.concurrency = args.concurrency.max(1);
    config.limits.request_timeout = Duration::from_millis(args.timeouts.timeout_ms);
    config.run_timeout = Duration::from_secs(args.timeouts.run_timeout_s);
    config.no_answer_limit = args.timeouts.no_answer_limit;
    config.paced_wait = Duration::try_from_secs_f64(args.paced_wait_s)
        .map_err(|_| CliError::usage("--paced-wait-s takes a number of seconds, 0 or more"))?;
    config.duration = Duration::try_from_secs_f64(args.duration)
        .map_err(|_| CliError::usage("--duration takes a number of seconds, 0 or more"))?;
    config.steer = args.steer;
    config.corpus = args.corpus_dir.clone();
    config.out = Some(args.out.clone());
    if !args.transports.is_empty() {
        config.transports = args.transports.clone();
    }
    Ok(config)
}

/// The command line that repeats this run's requests: seed, counts, shard, the transports,
/// steering, the corpus and the target.
fn rerun_command(args: &FuzzRunArgs, seed: u64, choice: &TargetChoice) -> String {
    let mut flags = String::new();
    if args.shard != Shard::WHOLE {
        flags.push_str(&format!(" --shard {}", args.shard));
    }
    for transport in &args.transports {
        flags.push_str(&format!(" --transport {transport}"));
    }
    if args.steer {
        flags.push_str(" --steer");
    }
    flags.push_str(&args.corpus.flags());
    format!(
        "harness fuzz --seed {seed} --requests {} --stateful {}{flags}{}",
        args.requests,
        args.stateful.min(100),
        choice.flags()
    )
}

/// Prints the run's counts: requests, pacing, coverage, stateful sequences, and why it
/// stopped early when it did.
fn print_counts(report: &FuzzReport) {
    outln!(
        "fuzz: {} requests in {:.2} s ({:.0}/s): {} expected a result, {} an error, {} either; {} rate-limited; {} unanswered; {} shrink requests",
        report.sent,
        report.elapsed.as_secs_f64(),
        report.requests_per_second(),
        report.expected_result,
        report.expected_error,
        report.expected_any,
        report.rate_limited,
        report.unanswered,
        report.shrink_requests,
    );
    outln!(
        "fuzz: paced: {} sent of {} the budget allowed ({:.1}% of those sent) at {:.2}/s, {} left unsent for the pacing budget; in sequences {} sent, {} skipped for it",
        report.paced_sent,
        report.paced_allowed,
        report.paced_share * 100.0,
        report.paced_per_second,
        report.paced_unsent,
        report.stateful.paced_sent,
        report.stateful.paced_skipped,
    );
    let coverage = &report.coverage;
    outln!(
        "fuzz: coverage: {} response classes reached{}; corpus {} requests, {} mutations of them sent",
        coverage.classes.len(),
        if coverage.steered {
            " (steered)"
        } else {
            " (not steered)"
        },
        coverage.corpus,
        coverage.mutated,
    );
    let stateful = &report.stateful;
    outln!(
        "fuzz: {} stateful sequences, {} requests in {:.2} s: {} expected a result, {} an error, {} either; {} skipped; {} throttled; {} unanswered, {} not run after one; {} shrink requests",
        stateful.sequences,
        stateful.sent,
        stateful.elapsed.as_secs_f64(),
        stateful.expected_result,
        stateful.expected_error,
        stateful.expected_any,
        stateful.skipped,
        stateful.throttled,
        stateful.unanswered,
        stateful.not_run,
        stateful.shrink_requests,
    );
    if report.timed_out {
        outln!("fuzz: the run timeout stopped the run before every request was sent");
    }
    if let Some(reason) = &report.interrupted {
        outln!("fuzz: {reason}: the findings so far are written, unshrunk");
    }
}

/// Prints each finding (a single request's or a sequence's) with its case file.
fn print_findings(report: &FuzzReport) {
    for finding in &report.findings {
        print_finding(
            &finding.clause,
            &finding.what(),
            &finding.message,
            &finding.case_file,
        );
    }
}

/// The exit code of a finished run.
fn exit_code(report: &FuzzReport) -> u8 {
    // A target that stopped answering could not be fuzzed: that comes before findings.
    if report.target_stopped_answering() {
        exit::HARNESS
    } else if !report.findings.is_empty() {
        exit::FAIL
    } else if report.interrupted.is_some() {
        exit::INTERRUPTED
    } else {
        exit::PASS
    }
}

/// Writes `report` as `path` (fuzz.json), making `out` first.
fn write_report(out: &Path, path: &Path, report: &FuzzReport) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(report).unwrap_or_default();
    std::fs::create_dir_all(out)
        .and_then(|()| std::fs::write(path, json))
        .map_err(|error| CliError::harness(format!("failed to write {}: {error}", path.display())))
}

/// Prints one finding as `FAIL clause (what): message`, then its case file when one was
/// written.
fn print_finding(clause: &str, what: &str, message: &str, case_file: &Option<PathBuf>) {
    outln!("FAIL {clause} ({what}): {message}");
    if let Some(path) = case_file {
        outln!("  case file: {}", path.display());
    }
}
