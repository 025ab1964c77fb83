//! Known failures: the expectations file a CI gate tolerates (`harness run --expect FILE`).
//!
//! Almost no implementation passes a conformance suite on its first run. An expectations
//! file lists the failures a team knows about, each by case id or clause id, optionally
//! over one transport, always with a reason:
//!
//! ```toml
//! [[known_failure]]
//! case = "auth.client_signature_nonce_reuse"
//! transport = "ws"
//! reason = "nonce cache is per connection (ticket 123)"
//!
//! [[known_failure]]
//! clause = "m.get_transaction_log.result"
//! reason = "continuation is a string until the next release"
//! ```
//!
//! [`Expectations::apply`] turns the failures an entry names into [`Verdict::Xfail`] (they
//! no longer fail the run), marks the passing executions of an entry that no longer fails
//! as [`Verdict::Fixed`] (the entry can go), and says per entry whether it still fails,
//! is fixed, or was not run. A case entry covers the whole execution; a clause entry only
//! the findings citing that clause, so a new failure of another clause in the same case
//! still fails. An entry that names no known case, clause or transport is a `path:line`
//! error with a did-you-mean ([`load`]). [`render`] writes a file from a run
//! (`--write-expect`). Everything here is pure but [`load`], which reads the file.

mod load;
mod write;

pub use load::{load, parse};
pub use write::{PLACEHOLDER, entries_for, render};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::case::TransportKind;
use crate::check::Verdict;
use crate::run::CaseResult;

/// A loaded expectations file.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectations {
    /// The file, as given (messages name it).
    pub path: PathBuf,
    /// Its entries, in file order (the first entry that matches gives the reason).
    pub entries: Vec<Entry>,
}

/// One known failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// What the entry names.
    pub selector: Selector,
    /// Only this transport (all when `None`).
    pub transport: Option<TransportKind>,
    /// Why the failure is accepted.
    pub reason: String,
    /// 1-based line of the entry in its file (0 for an entry not read from a file).
    pub line: usize,
}

/// What an entry names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Selector {
    /// Every failure of a case (for `harness judge`, of a client clause).
    Case(String),
    /// Every finding citing a clause, in whatever case.
    Clause(String),
}

/// What became of one entry in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// It still fails: its failures are now `xfail`.
    Failing,
    /// What it names ran and no longer fails: remove it from the file.
    Fixed,
    /// Nothing it names ran (filtered out, skipped, interrupted): nothing to say.
    NotRun,
}

/// An entry and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryOutcome {
    /// The entry.
    pub entry: Entry,
    /// Its status.
    pub status: EntryStatus,
    /// Executions it names that ran.
    pub executions: usize,
}

/// What an expectations file may name: the case ids with their transports, and the
/// clause ids.
#[derive(Clone, Debug, Default)]
pub struct Known {
    cases: BTreeMap<String, Vec<TransportKind>>,
    clauses: BTreeSet<String>,
}

impl Known {
    /// Case ids (with the transports each runs over) and clause ids.
    pub fn new(
        cases: impl IntoIterator<Item = (String, Vec<TransportKind>)>,
        clauses: impl IntoIterator<Item = String>,
    ) -> Known {
        Known {
            cases: cases.into_iter().collect(),
            clauses: clauses.into_iter().collect(),
        }
    }
}

impl Entry {
    /// Whether the entry speaks for an execution over `transport`.
    fn covers_transport(&self, transport: TransportKind) -> bool {
        self.transport.is_none_or(|only| only == transport)
    }

    /// Whether the entry names this execution at all (whatever its verdict).
    fn names(&self, result: &CaseResult) -> bool {
        if !self.covers_transport(result.transport) {
            return false;
        }
        match &self.selector {
            Selector::Case(case) => result.case == *case,
            Selector::Clause(clause) => {
                result.checks.contains(clause)
                    || result.clauses.contains(clause)
                    || result
                        .findings
                        .iter()
                        .any(|finding| finding.clauses.contains(clause))
            }
        }
    }

    /// Whether the execution still breaks what the entry names (known or not).
    fn still_broken(&self, result: &CaseResult) -> bool {
        if !self.names(result) || !result.verdict.is_broken() {
            return false;
        }
        match &self.selector {
            Selector::Case(_) => true,
            Selector::Clause(clause) => {
                result
                    .findings
                    .iter()
                    .any(|finding| finding.verdict.is_broken() && finding.clauses.contains(clause))
                    || (result.findings.is_empty() && result.clauses.contains(clause))
            }
        }
    }

    /// `path:line` of the entry.
    fn place(&self, expectations: &Expectations) -> String {
        format!("{}:{}", expectations.path.display(), self.line)
    }
}

impl Expectations {
    /// Applies the entries to a run's results (see the module doc) and says what became
    /// of each entry, in file order.
    pub fn apply(&self, results: &mut [CaseResult]) -> Vec<EntryOutcome> {
        for result in results.iter_mut() {
            self.tolerate(result);
        }
        let outcomes: Vec<EntryOutcome> = self
            .entries
            .iter()
            .map(|entry| {
                let ran: Vec<&CaseResult> = results
                    .iter()
                    .filter(|result| result.verdict != Verdict::Skip && entry.names(result))
                    .collect();
                let status = if ran.is_empty() {
                    EntryStatus::NotRun
                } else if ran.iter().any(|result| entry.still_broken(result)) {
                    EntryStatus::Failing
                } else {
                    EntryStatus::Fixed
                };
                EntryOutcome {
                    entry: entry.clone(),
                    status,
                    executions: ran.len(),
                }
            })
            .collect();
        for outcome in &outcomes {
            if outcome.status != EntryStatus::Fixed {
                continue;
            }
            for result in results.iter_mut() {
                if matches!(result.verdict, Verdict::Pass | Verdict::Info)
                    && outcome.entry.names(result)
                {
                    result.verdict = Verdict::Fixed;
                    result.message = format!(
                        "fixed: {} lists this as a known failure ({}), and it passes: remove it from {}",
                        outcome.entry.place(self),
                        outcome.entry.reason,
                        self.path.display()
                    );
                }
            }
        }
        outcomes
    }

    /// Turns the failures of one execution that an entry names into `xfail`.
    fn tolerate(&self, result: &mut CaseResult) {
        if !matches!(result.verdict, Verdict::Fail | Verdict::Error) {
            return;
        }
        let case_entry = self.entries.iter().find(|entry| {
            matches!(&entry.selector, Selector::Case(case) if *case == result.case)
                && entry.covers_transport(result.transport)
        });
        let mut first_match = case_entry;
        for finding in &mut result.findings {
            if finding.verdict != Verdict::Fail {
                continue;
            }
            let clause_entry = self.entries.iter().find(|entry| {
                matches!(&entry.selector, Selector::Clause(clause) if finding.clauses.contains(clause))
                    && entry.covers_transport(result.transport)
            });
            if case_entry.is_some() || clause_entry.is_some() {
                finding.verdict = Verdict::Xfail;
                first_match = first_match.or(clause_entry);
            }
        }
        let Some(entry) = first_match else {
            return;
        };
        let known = match result.verdict {
            // An execution the harness could not carry out is known only as a whole.
            Verdict::Error => case_entry.is_some(),
            _ => !result
                .findings
                .iter()
                .any(|finding| finding.verdict == Verdict::Fail),
        };
        if known {
            result.verdict = Verdict::Xfail;
            result.message = format!(
                "known failure ({}): {}; {}",
                entry.place(self),
                entry.reason,
                result.message
            );
        }
    }
}

#[cfg(test)]
mod tests;
