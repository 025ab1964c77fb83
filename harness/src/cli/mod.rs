//! The command line (binary only): argument parsing with clap, one file per subcommand,
//! and the exit codes. Only this module knows about clap and exit codes.

mod diff;
mod faults;
mod fuzz;
mod judge;
mod lint_response;
mod run;
mod selftest;
mod serve;
mod signals;
mod target;
mod variants;

use std::fmt;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Exit codes, documented once (README.md repeats them).
///
/// Besides these, a second SIGINT or SIGTERM ends `run`, `judge` and `fuzz` at once with
/// 128 + the signal's number (130, 143), reports possibly unwritten.
pub(crate) mod exit {
    /// Every check passed (known failures of `--expect` included).
    pub(crate) const PASS: u8 = 0;
    /// A check failed (a regression for `harness diff`; a fixed known failure under
    /// `--strict-expect`).
    pub(crate) const FAIL: u8 = 1;
    /// Bad arguments, or a broken case, target or expectations file.
    pub(crate) const USAGE: u8 = 2;
    /// The harness could not do its job (target unreachable or refusing connections, the
    /// target stopped answering mid-run, I/O error, nothing ran).
    pub(crate) const HARNESS: u8 = 3;
    /// The run was interrupted (SIGINT, SIGTERM, `--run-timeout-s`) before every execution
    /// ran, and no check had failed: the reports hold what ran, the rest is "not run".
    pub(crate) const INTERRUPTED: u8 = 4;
}

/// Conformance test harness and fuzzing suite for the derivatives-trading JSON-RPC API
/// (interface 2.1.1).
#[derive(Debug, Parser)]
#[command(name = "harness", version, about)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the conformance cases against a target (default: the embedded reference server).
    Run(run::RunArgs),
    /// Serve the reference API on a loopback port and print its target file.
    Serve(serve::ServeArgs),
    /// List the reference server's fault switches.
    Faults,
    /// List the reference server's spec-open variants: other legal choices where SPEC.md
    /// leaves a point open.
    Variants,
    /// Judge captured responses: a result against the method's schema, an error as an error.
    LintResponse(lint_response::LintResponseArgs),
    /// Compare two runs' report.json: what newly fails, what newly passes, cases added and
    /// removed.
    Diff(diff::DiffArgs),
    /// Prove every check can fail: run the suite against each seeded fault.
    Selftest(selftest::SelftestArgs),
    /// Fuzz a target with generated valid and invalid requests; findings become case files.
    /// `harness fuzz merge DIR...` merges the findings of many runs.
    Fuzz(fuzz::FuzzArgs),
    /// Judge a client: serve the reference API, record every request, report the client
    /// clauses it broke.
    Judge(judge::JudgeArgs),
}

/// An error with the exit code it maps to.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) exit_code: u8,
    pub(crate) inner: Box<dyn std::error::Error + Send + Sync>,
}

impl CliError {
    pub(crate) fn usage(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> CliError {
        CliError {
            exit_code: exit::USAGE,
            inner: error.into(),
        }
    }
    pub(crate) fn harness(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> CliError {
        CliError {
            exit_code: exit::HARNESS,
            inner: error.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

/// Runs a parsed command line.
pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    match args.command {
        Command::Run(run_args) => run::run(run_args),
        Command::Serve(serve_args) => serve::serve(serve_args),
        Command::Faults => faults::list(),
        Command::Variants => variants::list(),
        Command::LintResponse(lint_args) => lint_response::lint_response(lint_args),
        Command::Diff(diff_args) => diff::diff(diff_args),
        Command::Selftest(selftest_args) => selftest::selftest(selftest_args),
        Command::Fuzz(fuzz_args) => fuzz::fuzz(fuzz_args),
        Command::Judge(judge_args) => judge::judge(judge_args),
    }
}

/// The `cases/` directory: `--cases`, else `./cases`, else the one beside the crate.
pub(crate) fn cases_dir(explicit: Option<PathBuf>) -> PathBuf {
    explicit.unwrap_or_else(|| {
        let local = PathBuf::from("cases");
        if local.join("clauses.toml").exists() {
            local
        } else {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../cases"))
        }
    })
}

/// A multi-threaded tokio runtime.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::harness)
}

/// Writes the four report files, mapping failure to a harness error naming the directory.
pub(crate) fn write_reports(
    dir: &std::path::Path,
    context: &harness::report::Context<'_>,
) -> Result<Vec<PathBuf>, CliError> {
    harness::report::write_all(dir, context).map_err(|error| {
        CliError::harness(format!(
            "failed to write reports to {}: {error}",
            dir.display()
        ))
    })
}
