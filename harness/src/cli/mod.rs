//! The command line (binary only): argument parsing with clap, one file per subcommand,
//! and the exit codes. Only this module knows about clap and exit codes. Standard output
//! goes through `outln!` and `out!` (`out.rs`), which a closed pipe ends quietly.

/// `println!` for a command's standard output, ended quietly by a closed pipe (`out.rs`).
macro_rules! outln {
    () => {
        $crate::cli::out::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*), true)
    };
}

/// `print!` for a command's standard output, ended quietly by a closed pipe (`out.rs`).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*), false)
    };
}

mod diff;
mod faults;
mod fuzz;
mod judge;
mod lint_response;
mod out;
mod outputs;
mod proxy;
mod report;
mod reporters;
mod run;
mod selftest;
mod serve;
mod signals;
mod summary;
mod target;
mod variants;

use std::fmt;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use harness_protocol::wire::TransportKind;

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
#[command(name = "harness", version = harness_model::corpus::version_line(), about)]
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
    /// Proxy a live session to a target and judge both sides: the client's requests and
    /// the server's answers.
    Proxy(proxy::ProxyArgs),
    /// Read a command's `--events` file back into its reports: report.json, junit.xml,
    /// report.md and report.html for a run (with the self-proofs' matrices), fuzz.json for a
    /// fuzz run.
    Report(report::ReportArgs),
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

/// `--transport NAME` of `run`, `judge` and `fuzz`.
fn parse_transport(name: &str) -> Result<TransportKind, UnknownTransport> {
    TransportKind::from_name(name).ok_or_else(|| UnknownTransport {
        name: name.to_owned(),
    })
}

/// A `--transport` naming no transport.
#[derive(Debug, thiserror::Error)]
#[error("unknown transport \"{name}\" (expected http-query, http-body, ws or rest)")]
struct UnknownTransport {
    /// The name given.
    name: String,
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
        Command::Proxy(proxy_args) => proxy::proxy(proxy_args),
        Command::Report(report_args) => report::report(report_args),
    }
}

/// The corpus a command reads: the one embedded in the binary unless `--cases` names
/// another, with the case files of each `--add-cases` added.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct CorpusArgs {
    /// A whole corpus instead of the embedded one: a directory holding clauses.toml,
    /// schemas/ and case files.
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// A directory of case files added to the corpus (repeatable), checked against its
    /// catalog and schemas.
    #[arg(long = "add-cases", value_name = "DIR")]
    add_cases: Vec<PathBuf>,
}

impl CorpusArgs {
    /// Loads the corpus; a broken file is a usage error with `path:line`.
    pub(crate) fn load(&self) -> Result<harness_model::corpus::Corpus, CliError> {
        harness_model::corpus::Corpus::load(&harness_model::corpus::CorpusSource {
            dir: self.cases.clone(),
            added: self.add_cases.clone(),
        })
        .map_err(CliError::usage)
    }

    /// The flags that name this corpus again, for a command that repeats a run.
    pub(crate) fn flags(&self) -> String {
        let mut flags = String::new();
        if let Some(dir) = &self.cases {
            flags.push_str(&format!(" --cases {}", dir.display()));
        }
        for dir in &self.add_cases {
            flags.push_str(&format!(" --add-cases {}", dir.display()));
        }
        flags
    }
}

/// A multi-threaded tokio runtime.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::harness)
}
