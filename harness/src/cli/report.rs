//! `harness report --from-events FILE`: a command's `--events` file read back into its
//! outputs, so a run's stream is its record. Each line is read as the event it was written
//! from (`reporters::Line`) and folded: a run's into `report.json`, `junit.xml`,
//! `report.md` and `report.html` (with the self-proofs' matrices in the HTML when the file
//! holds them), a fuzz run's into `fuzz.json`. The stream is redacted already, and its
//! verdicts are the runner's: `--expect` applies known failures as `harness run` does.

use std::path::PathBuf;

use clap::Args;
use harness::selftest::MatrixCollector;
use harness_fuzz::FuzzCollector;
use harness_model::events::RunCollector;
use harness_model::report::Context;

use super::reporters::Line;
use super::run::{apply_expectations, known_for_run, load_expectations};
use super::summary;
use super::{CliError, CorpusArgs, exit};

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The events file to read back (`harness run|fuzz|selftest|judge|proxy --events FILE`).
    #[arg(long, value_name = "FILE")]
    from_events: PathBuf,
    /// Directory for the reports the file folds into.
    #[arg(long, value_name = "DIR", default_value = "reports/latest")]
    out: PathBuf,
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Known failures (TOML), applied to the run's verdicts as `harness run --expect` does.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
}

/// Every fold of a stream, each taking its own family's events.
#[derive(Default)]
struct Folds {
    run: RunCollector,
    fuzz: FuzzCollector,
    matrices: MatrixCollector,
}

impl Folds {
    /// Reads the events file, each line whole.
    fn read(path: &std::path::Path) -> Result<Folds, CliError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            CliError::usage(format!("failed to read {}: {error}", path.display()))
        })?;
        let mut folds = Folds::default();
        for (number, text) in text.lines().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let line: Line<'static> = serde_json::from_str(text).map_err(|_| {
                CliError::usage(format!(
                    "{}:{}: not an event of a run, a fuzz run or the self-proofs",
                    path.display(),
                    number + 1
                ))
            })?;
            match line {
                Line::Run(event) => folds.run.observe(event.into_owned()),
                Line::Fuzz(event) => folds.fuzz.observe(event.into_owned()),
                Line::Matrix(event) => folds.matrices.observe(event.into_owned()),
            }
        }
        Ok(folds)
    }
}

pub(crate) fn report(args: ReportArgs) -> Result<u8, CliError> {
    let Folds {
        run,
        fuzz,
        mut matrices,
    } = Folds::read(&args.from_events)?;
    let mut paths = Vec::new();
    if let Some(mut report) = run.report() {
        let corpus = args.corpus.load()?;
        let expectations = load_expectations(args.expect.as_deref(), &known_for_run(&corpus))?;
        apply_expectations(expectations.as_ref(), &mut report.results);
        let mut html = String::new();
        let report = if matrices.has_fault_matrix() {
            let matrix = matrices.fault_matrix(report).map_err(CliError::harness)?;
            html.push_str(&matrix.to_html());
            matrix.clean
        } else {
            report
        };
        if let Ok(matrix) = matrices.variant_matrix() {
            html.push_str(&matrix.to_html());
        }
        let context = Context {
            report: &report,
            catalog: &corpus.catalog,
            rerun: "harness run".to_owned(),
            extra_html: (!html.is_empty()).then_some(html),
        };
        paths.extend(super::write_reports(&args.out, &context)?);
    }
    if let Some(fuzz_report) = fuzz.report() {
        let path = args.out.join("fuzz.json");
        std::fs::create_dir_all(&args.out)
            .and_then(|()| {
                std::fs::write(
                    &path,
                    serde_json::to_string_pretty(&fuzz_report).unwrap_or_default(),
                )
            })
            .map_err(|error| {
                CliError::harness(format!("failed to write {}: {error}", path.display()))
            })?;
        paths.push(path);
    }
    if paths.is_empty() {
        return Err(CliError::harness(format!(
            "{} holds no finished run or fuzz run",
            args.from_events.display()
        )));
    }
    summary::report_paths(&paths);
    Ok(exit::PASS)
}
