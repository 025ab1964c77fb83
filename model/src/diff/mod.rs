//! Regressions between two runs (`harness diff OLD/report.json NEW/report.json`): what
//! newly fails, what newly passes, and the executions added and removed, each with its
//! clauses. Pure: it reads `report.json` as [`crate::report::render_json`] writes it.
//!
//! An execution is one (case, transport) row. Its verdict is passing (`pass`, `info`,
//! `warn`, `fixed`), failing (`fail`, `error`, `xfail`) or not run (`skip`). A
//! **regression** is an execution that now fails the gate (`fail`, `error`) and did not
//! before (passed, did not run, or was a known failure: a known-failing case that breaks a
//! clause its entries do not name fails again). A **newly known failure** is an execution
//! that now fails as an expectations file accepts (`xfail`) and did not fail before: no
//! regression, but listed apart, since a gate that only grows its list of known failures
//! is still losing ground. A **fix** is an execution that failed and passes now.

mod render;

pub use render::{render_markdown, render_text};

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::check::Verdict;

/// One execution as `report.json` records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Case id (for `harness judge`, the client clause).
    pub case: String,
    /// Transport name.
    pub transport: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The clauses concerned.
    pub clauses: Vec<String>,
    /// The one-line message (already redacted in `report.json`).
    pub message: String,
}

/// An execution whose verdict changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The execution in the old run.
    pub before: Row,
    /// The execution in the new run.
    pub after: Row,
}

/// The difference between two runs, each list in the new run's order (removed: the old
/// run's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// Fails the gate now (`fail`, `error`), did not before.
    pub regressions: Vec<Change>,
    /// A known failure now (`xfail`), did not fail before.
    pub(crate) newly_known: Vec<Change>,
    /// Failed before, passes now.
    pub(crate) newly_passing: Vec<Change>,
    /// Only in the new run.
    pub added: Vec<Row>,
    /// Only in the old run.
    pub removed: Vec<Row>,
}

/// Why a file is not a `report.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
struct ReportFile {
    results: Vec<ResultRow>,
}

#[derive(Deserialize)]
struct ResultRow {
    case: String,
    transport: String,
    verdict: String,
    #[serde(default)]
    clauses: Vec<String>,
    #[serde(default)]
    message: String,
}

/// Reads the executions of a `report.json` text.
pub fn read_report(text: &str) -> Result<Vec<Row>, ReadError> {
    let file: ReportFile = serde_json::from_str(text).map_err(|error| ReadError {
        line: error.line(),
        message: format!("not a report.json: {error}"),
    })?;
    file.results
        .into_iter()
        .map(|row| {
            let verdict = Verdict::from_name(&row.verdict).ok_or_else(|| ReadError {
                line: 0,
                message: format!(
                    "unknown verdict \"{}\" of {} [{}]",
                    row.verdict, row.case, row.transport
                ),
            })?;
            Ok(Row {
                case: row.case,
                transport: row.transport,
                verdict,
                clauses: row.clauses,
                message: row.message,
            })
        })
        .collect()
}

/// Whether a verdict counts as passing: every check held, or only advisories.
fn passing(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Pass | Verdict::Info | Verdict::Warn | Verdict::Fixed
    )
}

/// Compares two runs.
pub fn diff(old: &[Row], new: &[Row]) -> Diff {
    let key = |row: &Row| (row.case.clone(), row.transport.clone());
    let before: BTreeMap<(String, String), &Row> = old.iter().map(|row| (key(row), row)).collect();
    let after: BTreeMap<(String, String), &Row> = new.iter().map(|row| (key(row), row)).collect();
    let mut diff = Diff::default();
    for row in new {
        let Some(was) = before.get(&key(row)) else {
            diff.added.push(row.clone());
            continue;
        };
        let change = || Change {
            before: (*was).clone(),
            after: row.clone(),
        };
        if row.verdict.is_failure() && !was.verdict.is_failure() {
            diff.regressions.push(change());
        } else if row.verdict == Verdict::Xfail && !was.verdict.is_broken() {
            diff.newly_known.push(change());
        } else if passing(row.verdict) && was.verdict.is_broken() {
            diff.newly_passing.push(change());
        }
    }
    diff.removed = old
        .iter()
        .filter(|row| !after.contains_key(&key(row)))
        .cloned()
        .collect();
    diff
}

impl Diff {
    /// Whether nothing changed that the diff lists.
    pub fn is_empty(&self) -> bool {
        self.regressions.is_empty()
            && self.newly_known.is_empty()
            && self.newly_passing.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
    }
}

#[cfg(test)]
mod tests;
