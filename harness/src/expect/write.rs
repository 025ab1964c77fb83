//! Writing an expectations file from a run (`harness run --write-expect FILE`): the
//! entries of a previous file that still fail or did not run, then one entry per case
//! that fails now and no entry covers, each with a placeholder reason to replace.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Entry, EntryOutcome, EntryStatus, Selector};
use crate::case::TransportKind;
use crate::check::{Redactor, Verdict};
use crate::run::CaseResult;

/// What a placeholder reason starts with, so a reviewer can grep for it.
pub const PLACEHOLDER: &str = "FIXME: say why this failure is accepted";

/// The entries a file written now holds: `previous` entries still needed (failing, or not
/// run this time), then one per case failing now (with a transport when only some of the
/// transports it ran over fail). Messages in placeholders go through `redactor`.
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
    // Per case: the transports it ran over, and its failing results.
    let mut cases: BTreeMap<&str, (Vec<TransportKind>, Vec<&CaseResult>)> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for result in results {
        if result.verdict == Verdict::Skip {
            continue;
        }
        let slot = cases.entry(result.case.as_str()).or_insert_with(|| {
            order.push(result.case.as_str());
            (Vec::new(), Vec::new())
        });
        slot.0.push(result.transport);
        if result.verdict.is_failure() {
            slot.1.push(result);
        }
    }
    for case in order {
        let (ran, failing) = &cases[case];
        let Some(first) = failing.first() else {
            continue;
        };
        let placeholder = |result: &CaseResult| {
            let message: String = redactor.text(&result.message).chars().take(160).collect();
            format!(
                "{PLACEHOLDER} (fails {}: {message})",
                result.clauses.join(", ")
            )
        };
        if failing.len() == ran.len() {
            entries.push(Entry {
                selector: Selector::Case(case.to_owned()),
                transport: None,
                reason: placeholder(first),
                line: 0,
            });
        } else {
            for result in failing {
                entries.push(Entry {
                    selector: Selector::Case(case.to_owned()),
                    transport: Some(result.transport),
                    reason: placeholder(result),
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
            .map(|entry| {
                let (case, clause) = match &entry.selector {
                    Selector::Case(case) => (Some(case.clone()), None),
                    Selector::Clause(clause) => (None, Some(clause.clone())),
                };
                EntryOut {
                    case,
                    clause,
                    transport: entry.transport.map(|kind| kind.as_str().to_owned()),
                    reason: entry.reason.clone(),
                }
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
         # Each entry names a case or a clause, optionally one transport, and why the failure\n\
         # is accepted. A known failure is reported as xfail and does not fail the run; an\n\
         # entry that passes again is reported as fixed: remove it then.\n\n{body}"
    )
}
