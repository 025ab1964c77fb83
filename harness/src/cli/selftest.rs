//! `harness selftest`: proves every check can fail. Runs the suite against the clean
//! reference server and against it with each fault switched on, prints the fault matrix
//! and mutation score, and writes the reports of the clean run with the matrix in
//! `report.html`.

use std::path::PathBuf;

use clap::Args;
use harness::report::Context;
use harness::selftest::{self, FaultRow};

use super::run::load_corpus;
use super::serve::parse_faults;
use super::{CliError, cases_dir, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct SelftestArgs {
    /// Only these faults (default: all).
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Directory for the reports.
    #[arg(long, value_name = "DIR", default_value = "reports/selftest")]
    out: PathBuf,
    /// Case directory (default: ./cases).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// Executions at once within one run.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
}

pub(crate) fn selftest(args: SelftestArgs) -> Result<u8, CliError> {
    let corpus = load_corpus(&cases_dir(args.cases))?;
    let config = selftest::Config {
        cases: corpus.cases,
        catalog: corpus.catalog.clone(),
        schemas: corpus.schemas,
        concurrency: args.concurrency,
        faults: parse_faults(&args.faults)?,
    };
    let print_row = |row: &FaultRow| {
        let cases: std::collections::BTreeSet<&str> = row
            .caught_by
            .iter()
            .map(|(case, _, _)| case.as_str())
            .collect();
        let mark = if row.killed() { "caught" } else { "MISSED" };
        println!(
            "{:32} {mark:7} {}",
            row.fault.name(),
            cases.into_iter().collect::<Vec<_>>().join(", ")
        );
    };
    let matrix = runtime()?
        .block_on(selftest::fault_matrix(&config, print_row))
        .map_err(CliError::harness)?;
    let context = Context {
        report: &matrix.clean,
        catalog: &corpus.catalog,
        rerun: "harness run".to_owned(),
        extra_html: Some(matrix.to_html()),
    };
    super::write_reports(&args.out, &context)?;
    let clean_failures = matrix.clean_failures();
    for failure in &clean_failures {
        println!("clean server: {failure}");
    }
    let killed = matrix.rows.iter().filter(|row| row.killed()).count();
    println!(
        "mutation score {:.1}% ({killed} of {} faults caught) in {:.1} s; clean run {} failures; unkillable must clauses: {}",
        matrix.mutation_score(),
        matrix.rows.len(),
        matrix.duration.as_secs_f64(),
        clean_failures.len(),
        if matrix.unkillable.is_empty() {
            "none".to_owned()
        } else {
            matrix.unkillable.join(", ")
        }
    );
    let whole = args.faults.is_empty();
    let proven = killed == matrix.rows.len()
        && clean_failures.is_empty()
        && (!whole || matrix.unkillable.is_empty());
    Ok(if proven { exit::PASS } else { exit::FAIL })
}
