//! Writing an expectations file from a run (`harness run --write-expect FILE`): the
//! entries of a previous file that still fail or did not run, then one entry per case,
//! clause and transport that fails now and no entry covers, each with a placeholder reason
//! to replace. Entries that narrow are what keep a new failure of another clause, or of
//! the same clause over another transport, failing the run.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Entry, EntryOutcome, EntryStatus, Selector};
use crate::check::{Redactor, Verdict};
use crate::results::CaseResult;

/// What a placeholder reason starts with, so a reviewer can grep for it.
pub const PLACEHOLDER: &str = "FIXME: say why this failure is accepted";

/// The entries a file written now holds: `previous` entries still needed (failing, or not
/// run this time), then one per case, clause and transport failing now that they do not
/// cover, in the run's order. Messages in placeholders go through `redactor`. An
/// execution the harness could not carry out (`error`) gets no entry: it is no known
/// failure of the target.
pub fn entries_for(
    results: &[CaseResult],
    previous: &[EntryOutcome],
    redactor: &Redactor,
) -> Vec<Entry> {
    let mut entries: Vec<Entry> = previous
        .iter()
        .filter(|outcome| outcome.status != EntryStatus::Fixed)
        .map(|outcome| outcome.entry.clone())
        .collect();
    let mut written = BTreeSet::new();
    for result in results {
        if !matches!(result.verdict, Verdict::Fail | Verdict::Xfail) {
            continue;
        }
        for finding in &result.findings {
            if !finding.verdict.is_broken() {
                continue;
            }
            for clause in &finding.clauses {
                let selector = Selector::case_clause(&result.case, clause);
                let covered = entries.iter().any(|entry| {
                    entry.covers_transport(result.transport)
                        && entry.selector.names_case(&result.case)
                        && entry.selector.names_finding(finding)
                });
                if covered || !written.insert((selector.clone(), result.transport)) {
                    continue;
                }
                let message: String = redactor.text(&finding.message).chars().take(160).collect();
                entries.push(Entry {
                    selector,
                    transport: Some(result.transport),
                    reason: format!("{PLACEHOLDER} ({message})"),
                    line: 0,
                });
            }
        }
    }
    entries
}

#[derive(Serialize)]
struct FileOut {
    known_failure: Vec<EntryOut>,
}

#[derive(Serialize)]
struct EntryOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    case: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clause: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<String>,
    reason: String,
}

/// The text of an expectations file holding `entries`.
pub fn render(entries: &[Entry]) -> String {
    let file = FileOut {
        known_failure: entries
            .iter()
            .map(|entry| EntryOut {
                case: entry.selector.case.clone(),
                clause: entry.selector.clause.clone(),
                transport: entry.transport.map(|kind| kind.as_str().to_owned()),
                reason: entry.reason.clone(),
            })
            .collect(),
    };
    let body = toml::to_string(&file).unwrap_or_default();
    let body = if entries.is_empty() {
        "known_failure = []\n".to_owned()
    } else {
        body
    };
    format!(
        "# Known failures for `harness run --expect` (README.md, \"Known failures\").\n\
         # Each entry names a case and the clause it breaks (or only one of the two), optionally\n\
         # one transport, and why the failure is accepted. A known failure is\n\
         # reported as xfail and does not fail the run; a failure no entry names still fails it;\n\
         # an entry that passes again is reported as fixed: remove it then.\n\n{body}"
    )
}
