//! `harness selftest`: proves every check can fail, and that none fails a server SPEC.md
//! allows. The fault matrix runs the suite against the clean reference server and against
//! it with each fault switched on (mutation score); the false-failure matrix runs the
//! suite, the fuzzer and judge self-play against each spec-open variant and all at once.
//! Both are printed and written into `report.html` beside the clean run's reports, from
//! the folds of the events the producers announce (`reporters.rs`), never from what they
//! return: the terminal, the reports and `harness report --from-events` read one record.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use harness::selftest::{self, VariantMatrix, VariantPlan};

use super::outputs::{Outputs, write_outputs};
use super::reporters::Reporters;
use super::serve::{parse_faults, parse_variant_groups};
use super::summary;
use super::{CliError, CorpusArgs, exit, runtime};

/// Which halves of the self-proof to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Matrix {
    /// Every check fails against a seeded fault.
    Faults,
    /// No check fails against a spec-open variant.
    Variants,
    /// Both.
    Both,
}

#[derive(Debug, Args)]
pub(crate) struct SelftestArgs {
    /// Which matrices to run.
    #[arg(long, value_enum, default_value_t = Matrix::Both)]
    matrix: Matrix,
    /// Only these faults (default: all).
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Only these variants, each alone, or `narrowest`, `widest` or `all` as one row
    /// (default: each alone, the narrowest and the widest server, then all at once).
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// Generated requests of each of the two fuzz runs per variant row (0: no fuzzing).
    #[arg(long, default_value_t = 2_000)]
    fuzz_requests: usize,
    /// Directory for the reports.
    #[arg(long, value_name = "DIR", default_value = "reports/selftest")]
    out: PathBuf,
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Executions at once within one run.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Also write the event stream into FILE, one JSON object per line: the clean run,
    /// each matrix row, each matrix's end (see README.md).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
}

pub(crate) fn selftest(args: SelftestArgs) -> Result<u8, CliError> {
    let corpus = args.corpus.load()?;
    let config = selftest::SelftestConfig {
        cases: corpus.cases,
        catalog: corpus.catalog.clone(),
        schemas: corpus.schemas,
        concurrency: args.concurrency,
        faults: parse_faults(&args.faults)?,
    };
    let mut plan = VariantPlan::full();
    if !args.variants.is_empty() {
        plan.rows = parse_variant_groups(&args.variants)?;
    }
    if args.fuzz_requests == 0 {
        plan.fuzz_seeds.clear();
    }
    plan.fuzz_requests = args.fuzz_requests;
    let runtime = runtime()?;
    // The rows are printed as they end, by the one terminal reporter.
    let reporters = Reporters::new(true, args.events.as_deref())?;
    reporters.rerun("harness run");
    let (events, rows) = (reporters.sink(), reporters.matrix_sink());
    let faults = matches!(args.matrix, Matrix::Faults | Matrix::Both);
    let variants = matches!(args.matrix, Matrix::Variants | Matrix::Both);
    // The clean run is the body of the reports, whichever matrices run. What the producers
    // return is dropped: the reports, the summaries and the exit code are the folds of
    // their events (`reporters.rs`), as `harness report --from-events` folds them.
    runtime
        .block_on(async {
            if faults {
                selftest::fault_matrix(&config, &events, &rows).await
            } else {
                selftest::clean_run(&config, &events).await
            }
        })
        .map_err(CliError::harness)?;
    let clean = reporters
        .run_report()
        .ok_or_else(|| CliError::harness("the clean run's events hold no finished run"))?;
    let mut html = String::new();
    let (clean, faults_proven) = if faults {
        let matrix = reporters.fault_matrix(clean)?;
        html.push_str(&matrix.to_html());
        let proven = summary::fault_matrix(&matrix, args.faults.is_empty());
        (matrix.clean, proven)
    } else {
        (clean, true)
    };
    let variant_matrix: Option<VariantMatrix> = if variants {
        runtime
            .block_on(selftest::variant_matrix(&config, &plan, &rows))
            .map_err(CliError::harness)?;
        let matrix = reporters.variant_matrix()?;
        summary::variant_matrix(&matrix);
        html.push_str(&matrix.to_html());
        Some(matrix)
    } else {
        None
    };
    let outputs = Outputs {
        extra_html: Some(html),
        ..Outputs::reports(&args.out, "harness run".to_owned())
    };
    write_outputs(&clean, &corpus.catalog, outputs)?;
    reporters.finish()?;
    let no_false_failures = variant_matrix.is_none_or(|matrix| matrix.false_failures() == 0);
    Ok(if faults_proven && no_false_failures {
        exit::PASS
    } else {
        exit::FAIL
    })
}
