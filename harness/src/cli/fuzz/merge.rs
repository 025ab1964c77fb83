//! `harness fuzz merge DIR...`: the findings of many `harness fuzz` runs (shards of one seed,
//! other seeds, other machines) as one report, one finding per clause and shrunk request,
//! with the case file of each copied into `--out`. Exit codes as `harness fuzz`: 3 when a
//! run could not do its job (its target unreachable or silent), 1 while a finding
//! remains, 2 for a directory that is not a run's `--out`.

use std::path::PathBuf;

use clap::Args;
use harness_fuzz::merge::{self, MergeError, MergedReport, SeedShards};

use crate::cli::{CliError, exit};

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The --out directories of the runs, each holding fuzz.json and the case files.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Directory for merge.json and the case file of each distinct finding.
    #[arg(long, value_name = "DIR", default_value = "reports/fuzz-merged")]
    out: PathBuf,
}

/// Merges the runs in `args.dirs`, writes the merged report and case files, prints what
/// they hold and returns the exit code.
pub(crate) fn merge(args: MergeArgs) -> Result<u8, CliError> {
    let mut runs = Vec::new();
    for dir in args.dirs {
        let report = merge::load_run(&dir).map_err(CliError::usage)?;
        runs.push((dir, report));
    }
    let mut merged = merge::merge(&runs);
    let report_path = merge::write(&mut merged, &args.out).map_err(|error| match error {
        MergeError::Write { .. } => CliError::harness(error),
        _ => CliError::usage(error),
    })?;
    outln!(
        "fuzz merge: {} runs, {} requests sent, {} response classes reached",
        merged.runs.len(),
        merged.sent,
        merged.coverage.classes.len()
    );
    for seed in &merged.seeds {
        print_seed(seed);
    }
    for run in merged.runs.iter().filter(|run| run.timed_out) {
        outln!(
            "  {}: the run timeout stopped it before every request was sent",
            run.dir.display()
        );
    }
    print_findings(&merged);
    outln!(
        "fuzz merge: {} findings ({} in the runs); report {}",
        merged.findings.len(),
        merged.run_findings,
        report_path.display()
    );
    let not_done: Vec<_> = merged
        .runs
        .iter()
        .filter(|run| run.not_done.is_some())
        .collect();
    for run in &not_done {
        outln!(
            "  {}: not done: {}",
            run.dir.display(),
            run.not_done.as_deref().unwrap_or_default()
        );
    }
    Ok(
        // A run that could not do its job leaves its part unfuzzed: that comes first.
        if !not_done.is_empty() {
            exit::HARNESS
        } else if merged.findings.is_empty() {
            exit::PASS
        } else {
            exit::FAIL
        },
    )
}

/// Prints one seed's line: its requests, the shards merged and those missing.
fn print_seed(seed: &SeedShards) {
    let list = |indices: &[usize]| {
        indices
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = format!("  seed {}: {} requests", seed.seed, seed.requests);
    if seed.count > 1 {
        line += &format!(", shards {} of {}", list(&seed.merged), seed.count);
    }
    if !seed.missing.is_empty() {
        line += &format!(
            "; not merged: shards {} (their requests were not sent)",
            list(&seed.missing)
        );
    }
    outln!("{line}");
}

/// Prints each distinct finding (the single requests', then the sequences'), with the runs
/// that found it.
fn print_findings(merged: &MergedReport) {
    let runs = merged.runs.len();
    for kept in &merged.findings {
        let finding = &kept.finding;
        let what = format!("{}, {} of {runs} runs", finding.what(), kept.runs.len());
        super::print_finding(&finding.clause, &what, &finding.message, &finding.case_file);
    }
}
