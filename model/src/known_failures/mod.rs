//! Known failures: the expectations file a CI gate tolerates (`harness run --expect FILE`).
//!
//! Almost no implementation passes a conformance suite on its first run. An expectations
//! file lists the failures a team knows about, each as narrow as what failed: a case and
//! the clause it breaks, optionally over one transport, always with a reason:
//!
//! ```toml
//! [[known_failure]]
//! case = "auth.client_signature_nonce_reuse"
//! clause = "auth.client_signature.nonce_single_use"
//! transport = "ws"
//! reason = "nonce cache is per connection (ticket 123)"
//!
//! [[known_failure]]
//! clause = "m.get_transaction_log.result"
//! reason = "continuation is a string until the next release"
//! ```
//!
//! An entry tolerates a finding when the finding cites the entry's clause, in the entry's
//! case, over the entry's transport (each key left out matches anything). A new failure of
//! another clause in the same case is therefore no known failure and still fails the run,
//! as WPT expectation files and nextest's known-failure lists keep them per subtest. An
//! entry naming only a case (the older, broad form) tolerates every clause of the case;
//! [`load`] accepts it with a warning that suggests the narrow form.
//!
//! [`KnownFailures::apply`] turns the failures the entries name into [`Verdict::Xfail`]
//! (they no longer fail the run), marks the passing executions of an entry that no longer
//! fails as [`Verdict::Fixed`] (the entry can go), and says per entry whether it still
//! fails, is fixed, or was not run. An entry that names no known case, clause or transport
//! is a `path:line` error with a did-you-mean ([`load`]). [`render`] writes a file from a
//! run (`--write-expect`): one entry per case, clause and transport. Everything here is
//! pure but [`load`], which reads the file.

mod load;
mod write;

pub use load::{load, parse};
pub use write::{PLACEHOLDER, entries_for, render};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::check::{Finding, Verdict};
use crate::results::CaseResult;
use harness_protocol::wire::TransportKind;

/// A loaded expectations file.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownFailures {
    /// The file, as given (messages name it).
    pub path: PathBuf,
    /// Its entries, in file order (the first entry that matches gives the reason).
    pub entries: Vec<Entry>,
    /// What is accepted but deserves a change, as `path:line: warning: ...` lines (an
    /// entry of the broad, case-only form).
    pub warnings: Vec<String>,
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

/// What an entry names: a case, a clause, or both (at least one).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Selector {
    /// Only findings of this case (for `harness judge`, of this client clause).
    pub case: Option<String>,
    /// Only findings citing this clause. Without it, every failure of the case (the
    /// broad form).
    pub clause: Option<String>,
}

impl Selector {
    /// Every failure of a case, whatever clause (the broad form).
    pub fn case(case: impl Into<String>) -> Selector {
        Selector {
            case: Some(case.into()),
            clause: None,
        }
    }

    /// The findings citing a clause, in whatever case.
    pub fn clause(clause: impl Into<String>) -> Selector {
        Selector {
            case: None,
            clause: Some(clause.into()),
        }
    }

    /// The findings of one case citing one clause (the narrow form).
    pub(crate) fn case_clause(case: impl Into<String>, clause: impl Into<String>) -> Selector {
        Selector {
            case: Some(case.into()),
            clause: Some(clause.into()),
        }
    }

    /// Whether the selector names this execution's case (any case when it names none).
    fn names_case(&self, case: &str) -> bool {
        self.case.as_deref().is_none_or(|named| named == case)
    }

    /// Whether the selector tolerates a finding (of a case it names).
    fn names_finding(&self, finding: &Finding) -> bool {
        self.clause
            .as_ref()
            .is_none_or(|clause| finding.clauses.contains(clause))
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.case, &self.clause) {
            (Some(case), Some(clause)) => write!(f, "case {case} clause {clause}"),
            (Some(case), None) => write!(f, "case {case}"),
            (None, Some(clause)) => write!(f, "clause {clause}"),
            (None, None) => write!(f, "nothing"),
        }
    }
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
        if !self.covers_transport(result.transport) || !self.selector.names_case(&result.case) {
            return false;
        }
        match &self.selector.clause {
            None => true,
            Some(clause) => {
                result.checks.contains(clause)
                    || result.clauses.contains(clause)
                    || result
                        .findings
                        .iter()
                        .any(|finding| finding.clauses.contains(clause))
            }
        }
    }

    /// Whether the entry tolerates one finding of an execution it names.
    fn tolerates(&self, result: &CaseResult, finding: &Finding) -> bool {
        self.covers_transport(result.transport)
            && self.selector.names_case(&result.case)
            && self.selector.names_finding(finding)
    }

    /// Whether the entry tolerates the whole execution whatever it found: a broad entry
    /// (a case, no clause), the only kind that knows an execution the harness could not
    /// carry out.
    fn tolerates_whole(&self, result: &CaseResult) -> bool {
        self.selector.clause.is_none()
            && self.covers_transport(result.transport)
            && self.selector.names_case(&result.case)
    }

    /// Whether the execution still breaks what the entry names (known or not).
    fn still_broken(&self, result: &CaseResult) -> bool {
        if !self.names(result) || !result.verdict.is_broken() {
            return false;
        }
        match &self.selector.clause {
            None => true,
            Some(clause) => {
                result
                    .findings
                    .iter()
                    .any(|finding| finding.verdict.is_broken() && finding.clauses.contains(clause))
                    || (result.findings.is_empty() && result.clauses.contains(clause))
            }
        }
    }

    /// `path:line` of the entry.
    fn place(&self, expectations: &KnownFailures) -> String {
        format!("{}:{}", expectations.path.display(), self.line)
    }
}

impl KnownFailures {
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

    /// Turns the failures of one execution that an entry names into `xfail`; the
    /// execution is `xfail` only when every failing finding is known.
    fn tolerate(&self, result: &mut CaseResult) {
        if !matches!(result.verdict, Verdict::Fail | Verdict::Error) {
            return;
        }
        let whole = self
            .entries
            .iter()
            .find(|entry| entry.tolerates_whole(result));
        let mut first_match = whole;
        for index in 0..result.findings.len() {
            if result.findings[index].verdict != Verdict::Fail {
                continue;
            }
            let entry = self
                .entries
                .iter()
                .find(|entry| entry.tolerates(result, &result.findings[index]));
            if let Some(entry) = entry {
                result.findings[index].verdict = Verdict::Xfail;
                first_match = first_match.or(Some(entry));
            }
        }
        let Some(entry) = first_match else {
            return;
        };
        let known = match result.verdict {
            // An execution the harness could not carry out is known only as a whole.
            Verdict::Error => whole.is_some(),
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
        } else {
            let new: Vec<&str> = result
                .findings
                .iter()
                .filter(|finding| finding.verdict == Verdict::Fail)
                .flat_map(|finding| finding.clauses.iter().map(String::as_str))
                .collect();
            result.message = format!(
                "a failure {} does not list (clause {}) besides a known one ({}): {}",
                self.path.display(),
                new.join(", "),
                entry.place(self),
                result.message
            );
        }
    }
}

#[cfg(test)]
mod tests;
