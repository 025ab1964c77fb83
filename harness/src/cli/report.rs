//! `harness report --from-events FILE`: a command's `--events` file read back into its
//! outputs, so a run's stream is its record. Each line is read as the event it was written
//! from (`reporters::Line`) and folded: a run's into `report.json`, `junit.xml`,
//! `report.md` and `report.html` (with the self-proofs' matrices in the HTML when the file
//! holds them), a fuzz run's into `fuzz.json`. The stream is redacted already, and its
//! verdicts are the runner's: `--expect` applies known failures as `harness run` does.
//!
//! The reports are written by the writer `run`, `judge` and `proxy` use (`outputs.rs`),
//! with the command their reproductions rerun taken from the stream's last line (`session
//! ended`), so they are byte for byte the reports the command wrote live. A stream without
//! that line was cut short (the command was killed, or the file truncated): what it holds
//! is still folded, with a warning on standard error that the stream is incomplete.

use std::path::{Path, PathBuf};

use clap::Args;
use harness::selftest::MatrixCollector;
use harness_fuzz::FuzzCollector;
use harness_model::events::RunCollector;
use harness_model::events::SessionEvent;

use super::outputs::{Outputs, write_outputs};
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
    /// The stream's last line, once read: the session ended, and whole.
    ended: Option<SessionEvent>,
}

impl Folds {
    /// Reads the events file, each line whole.
    fn read(path: &Path) -> Result<Folds, CliError> {
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
            // A line after the session's end starts another stream's tail: not whole.
            folds.ended = None;
            match line {
                Line::Run(event) => folds.run.observe(event.into_owned()),
                Line::Fuzz(event) => folds.fuzz.observe(event.into_owned()),
                Line::Matrix(event) => folds.matrices.observe(event.into_owned()),
                Line::Session(event) => folds.ended = Some(event.into_owned()),
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
        ended,
    } = Folds::read(&args.from_events)?;
    if ended.is_none() {
        eprintln!(
            "warning: {} does not end with a `session ended` line: the stream is incomplete (its command was cut short), and the reports hold only what it has",
            args.from_events.display()
        );
    }
    let rerun = ended
        .as_ref()
        .and_then(SessionEvent::rerun)
        .unwrap_or("harness run")
        .to_owned();
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
        let outputs = Outputs {
            extra_html: (!html.is_empty()).then_some(html),
            ..Outputs::reports(&args.out, rerun)
        };
        paths.extend(write_outputs(&report, &corpus.catalog, outputs)?);
    }
    paths.extend(write_fuzz_json(&args.out, fuzz)?);
    if paths.is_empty() {
        return Err(CliError::harness(format!(
            "{} holds no finished run or fuzz run",
            args.from_events.display()
        )));
    }
    summary::report_paths(&paths);
    Ok(exit::PASS)
}

/// Writes `fuzz.json` into `out` when the stream holds a finished fuzz run; its path.
fn write_fuzz_json(out: &Path, fuzz: FuzzCollector) -> Result<Option<PathBuf>, CliError> {
    let Some(fuzz_report) = fuzz.report() else {
        return Ok(None);
    };
    let path = out.join("fuzz.json");
    std::fs::create_dir_all(out)
        .and_then(|()| {
            std::fs::write(
                &path,
                serde_json::to_string_pretty(&fuzz_report).unwrap_or_default(),
            )
        })
        .map_err(|error| {
            CliError::harness(format!("failed to write {}: {error}", path.display()))
        })?;
    Ok(Some(path))
}
