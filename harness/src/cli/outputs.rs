//! The one writer of a run's outputs: `report.json`, `junit.xml`, `report.md` and
//! `report.html` (and, when asked, `--write-expect` and `--snapshots`), written from the
//! report folded from the run's events. `harness run`, `judge`, `proxy` and `report
//! --from-events` all call [`write_outputs`], so a report rebuilt from a saved event stream
//! is byte for byte the one written live: the stream's session marker (its last line)
//! carries the command a reproduction reruns, and the fold keeps what the stream keeps.

use std::path::{Path, PathBuf};

use harness_model::check::Catalog;
use harness_model::known_failures::{self, EntryOutcome};
use harness_model::report::{self, Context};
use harness_model::results::RunReport;

use super::CliError;

/// Where a run's outputs go, and which besides the four reports.
pub(crate) struct Outputs<'a> {
    /// The directory of the four reports.
    pub(crate) dir: &'a Path,
    /// The command a reproduction reruns (`harness run --target t.toml`).
    pub(crate) rerun: String,
    /// HTML put into `report.html` after the results (the self-proofs' matrices).
    pub(crate) extra_html: Option<String>,
    /// `--write-expect FILE`, with what became of each entry of `--expect`.
    pub(crate) write_expect: Option<(&'a Path, &'a [EntryOutcome])>,
    /// `--snapshots DIR`.
    pub(crate) snapshots: Option<&'a Path>,
}

impl<'a> Outputs<'a> {
    /// The four reports into `dir`, reproductions rerunning `rerun`, nothing else.
    pub(crate) fn reports(dir: &'a Path, rerun: String) -> Outputs<'a> {
        Outputs {
            dir,
            rerun,
            extra_html: None,
            write_expect: None,
            snapshots: None,
        }
    }
}

/// Writes every output `outputs` names from `report` (the fold of a run's events), and
/// returns the paths of the four reports.
pub(crate) fn write_outputs(
    report: &RunReport,
    catalog: &Catalog,
    outputs: Outputs<'_>,
) -> Result<Vec<PathBuf>, CliError> {
    let context = Context {
        report,
        catalog,
        rerun: outputs.rerun,
        extra_html: outputs.extra_html,
    };
    let paths = report::write_all(outputs.dir, &context).map_err(|error| {
        CliError::harness(format!(
            "failed to write reports to {}: {error}",
            outputs.dir.display()
        ))
    })?;
    if let Some((path, outcomes)) = outputs.write_expect {
        write_expectations(path, report, outcomes)?;
    }
    if let Some(dir) = outputs.snapshots {
        write_snapshots(dir, report)?;
    }
    Ok(paths)
}

/// Writes `--write-expect FILE`: entries still needed, then the failures of this run.
fn write_expectations(
    path: &Path,
    report: &RunReport,
    outcomes: &[EntryOutcome],
) -> Result<(), CliError> {
    let entries = known_failures::entries_for(&report.results, outcomes, &report.redactor);
    let text = report.redactor.text(&known_failures::render(&entries));
    std::fs::write(path, text).map_err(|error| {
        CliError::harness(format!("failed to write {}: {error}", path.display()))
    })?;
    eprintln!(
        "expectations: {} known failure(s) written to {} (replace each {} reason)",
        entries.len(),
        path.display(),
        known_failures::PLACEHOLDER
    );
    Ok(())
}

/// Writes `--snapshots DIR`: each result's record as an insta snapshot, and says how many
/// are new, changed and unchanged.
fn write_snapshots(dir: &Path, report: &RunReport) -> Result<(), CliError> {
    let now_ms = harness_protocol::auth::clock::Clock::system().now_ms();
    let stats = report::write_snapshots(dir, &report.results, &report.redactor, now_ms).map_err(
        |error| {
            CliError::harness(format!(
                "failed to write snapshots to {}: {error}",
                dir.display()
            ))
        },
    )?;
    eprintln!(
        "snapshots in {}: {} new, {} changed (review the .snap.new files with `cargo insta review --workspace-root {}`), {} unchanged",
        dir.display(),
        stats.new,
        stats.changed,
        dir.display(),
        stats.unchanged
    );
    Ok(())
}
