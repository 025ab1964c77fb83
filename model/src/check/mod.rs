//! Verdicts and the pure checks that produce them: the clause catalog and the SPEC.md
//! quotes of its clauses, the traceability table from SPEC.md's statements to clauses, the check of one answer against a step's expectation
//! ([`answer()`]), the pagination rules of paged reads ([`pages`]), JSON Schema validation
//! of results, JSON-path matchers and secret redaction.
//!
//! Nothing here does I/O except loading the catalog and schemas from `cases/`. A failed
//! check is a [`Finding`] (data), never an `Err`: errors are for the harness itself.

mod answer;
mod captured;
mod catalog;
mod domain;
mod matcher;
pub mod pages;
mod quote;
mod redact;
mod schema;
mod statements;

pub use answer::{Outcome, ParsedAnswer, Required, answer, error_note, finding};
pub use captured::{
    Captured, Observation, ResponseForm, judge_captured, method_from_file_name, result_clause,
};
pub use catalog::{Catalog, Clause, Level, Side};
pub use domain::{Dimension, Domain, Point, reason_quotes};
pub use matcher::{Matcher, holds, lookup, short};
pub use quote::{SpecText, normalize_quote};
pub use redact::Redactor;
pub use schema::{SchemaError, SchemaSet, SchemaViolation};
pub use statements::{SpecStatement, Statement, StatementKind, Statements, spec_statements};

use std::fmt;

use serde::{Deserialize, Serialize};

/// The outcome of one case over one transport, or of one clause over one transport.
///
/// The variants are declared in the one severity order of the harness, least telling first:
/// a skip says nothing, a pass less than a finding, a known failure (`xfail`) more than a
/// warning but less than a run the harness could not carry out, and a broken `must` clause
/// most. `Ord` follows it; [`Verdict::worst`] folds by it,
/// and every report, the judge and the fuzzer use it (nowhere else ranks verdicts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Not run, always with a reason.
    Skip,
    /// Every check held.
    Pass,
    /// Every check held, although an expectations file lists the execution as a known
    /// failure: the entry can go (`harness run --expect`).
    Fixed,
    /// Only informational findings (a clause of level `info`, an advisory).
    Info,
    /// A check on a clause of level `warn` did not hold: suspicious, but SPEC.md allows it.
    Warn,
    /// A `must` clause was broken, as an expectations file says it is (a known failure,
    /// with the entry's reason): it does not fail the run.
    Xfail,
    /// The harness could not run the case (unreachable target, broken case).
    Error,
    /// A `must` clause was broken.
    Fail,
}

impl Verdict {
    /// All verdicts in report order (the order counts are printed in).
    pub const ALL: [Verdict; 8] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Warn,
        Verdict::Info,
        Verdict::Skip,
        Verdict::Error,
        Verdict::Xfail,
        Verdict::Fixed,
    ];

    /// The more severe of two verdicts.
    pub fn worst(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// The lowercase name used in every report.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Info => "info",
            Verdict::Warn => "warn",
            Verdict::Skip => "skip",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::Xfail => "xfail",
            Verdict::Fixed => "fixed",
        }
    }

    /// Parses the lowercase name (as `report.json` writes it).
    pub fn from_name(name: &str) -> Option<Verdict> {
        Verdict::ALL
            .into_iter()
            .find(|verdict| verdict.as_str() == name)
    }

    /// Whether a check broke, known or not (`fail`, `error`, `xfail`).
    pub(crate) fn is_broken(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error | Verdict::Xfail)
    }

    /// Whether the verdict breaks a gate: a failed check or a run that did not happen.
    /// A known failure (`xfail`) does not; a `fixed` one does only under `--strict-expect`.
    pub(crate) fn is_failure(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One observation that a check did not hold, tied to the clauses it concerns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `Fail`, `Warn` or `Info` (`Xfail` once an expectations file names it).
    pub verdict: Verdict,
    /// The catalog clauses the observation concerns.
    pub clauses: Vec<String>,
    /// What was observed, as a lowercase fragment.
    pub message: String,
}

impl Finding {
    /// A finding at the verdict a clause level implies.
    pub fn new(verdict: Verdict, clauses: Vec<String>, message: impl Into<String>) -> Finding {
        Finding {
            verdict,
            clauses,
            message: message.into(),
        }
    }

    /// A broken `must` clause: a finding on that one clause at [`Verdict::Fail`].
    pub fn fail(clause: &str, message: impl Into<String>) -> Finding {
        Finding::new(Verdict::Fail, vec![clause.to_owned()], message)
    }

    /// The first clause the finding concerns (the only one of a fuzzer's or the judge's
    /// findings); empty when it names none.
    pub fn clause(&self) -> &str {
        self.clauses.first().map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::{Finding, Verdict};

    #[test]
    fn severity_order_is_skip_pass_fixed_info_warn_xfail_error_fail() {
        let mut verdicts = Verdict::ALL.to_vec();
        verdicts.sort();
        assert_eq!(
            verdicts,
            [
                Verdict::Skip,
                Verdict::Pass,
                Verdict::Fixed,
                Verdict::Info,
                Verdict::Warn,
                Verdict::Xfail,
                Verdict::Error,
                Verdict::Fail
            ]
        );
        assert_eq!(Verdict::Xfail.worst(Verdict::Warn), Verdict::Xfail);
        assert_eq!(Verdict::Xfail.worst(Verdict::Fail), Verdict::Fail);
        assert_eq!(Verdict::Fixed.worst(Verdict::Pass), Verdict::Fixed);
        assert_eq!(Verdict::Pass.worst(Verdict::Skip), Verdict::Pass);
        assert_eq!(Verdict::Error.worst(Verdict::Fail), Verdict::Fail);
        assert_eq!(Verdict::Info.worst(Verdict::Pass), Verdict::Info);
    }

    #[test]
    fn every_verdict_reads_back_from_its_name() {
        for verdict in Verdict::ALL {
            assert_eq!(Verdict::from_name(verdict.as_str()), Some(verdict));
        }
        assert_eq!(Verdict::from_name("passed"), None);
    }

    #[test]
    fn a_failure_is_a_fail_finding_on_its_one_clause() {
        let finding = Finding::fail("auth.refresh.rotates", "same refresh token");
        assert_eq!(finding.verdict, Verdict::Fail);
        assert_eq!(finding.clause(), "auth.refresh.rotates");
        assert_eq!(Finding::new(Verdict::Info, Vec::new(), "x").clause(), "");
    }
}
