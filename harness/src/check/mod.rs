//! Verdicts and the pure checks that produce them: the clause catalog, JSON Schema
//! validation of results, JSON-path matchers and secret redaction.
//!
//! Nothing here does I/O except loading the catalog and schemas from `cases/`. A failed
//! check is a [`Finding`] (data), never an `Err`: errors are for the harness itself.

mod catalog;
mod matcher;
mod redact;
mod schema;

pub use catalog::{Catalog, Clause, Level, Side};
pub use matcher::{Matcher, lookup, short, type_name};
pub use redact::{REDACTED, Redactor, SECRET_MEMBERS};
pub use schema::{SchemaError, SchemaSet, SchemaViolation};

use std::fmt;

use serde::{Deserialize, Serialize};

/// The outcome of one case over one transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every check held.
    Pass,
    /// Only informational findings (a clause of level `info`, an advisory).
    Info,
    /// A check at level `warn` did not hold.
    Warn,
    /// Not run, always with a reason.
    Skip,
    /// A `must` clause was broken.
    Fail,
    /// The harness could not run the case (unreachable target, broken case).
    Error,
}

impl Verdict {
    /// All verdicts in report order.
    pub const ALL: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Warn,
        Verdict::Info,
        Verdict::Skip,
        Verdict::Error,
    ];

    /// The lowercase name used in every report.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Info => "info",
            Verdict::Warn => "warn",
            Verdict::Skip => "skip",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
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
    /// `Fail`, `Warn` or `Info`.
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
}
