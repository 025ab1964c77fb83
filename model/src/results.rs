//! What a run produces: one [`CaseResult`] per case and transport, announced as an
//! [`Event`](crate::events::Event) while the run goes, and gathered into a [`RunReport`]. The runner and the judge write
//! them; the reports, the known-failure files and the conformance trials read them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use harness_protocol::wire::{Exchange, TransportKind};

use crate::check::{Finding, Point, Redactor, Side, Verdict};

/// The outcome of one case over one transport.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// Case id.
    pub case: String,
    /// Case title.
    pub title: String,
    /// The case file.
    pub path: String,
    /// The transport.
    pub transport: TransportKind,
    /// The verdict.
    pub verdict: Verdict,
    /// The clauses concerned: those of the failing findings, else the case's.
    pub clauses: Vec<String>,
    /// Every clause the case checks (coverage counts these).
    pub checks: Vec<String>,
    /// One line: the first finding, the skip reason, or notes.
    pub message: String,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// Observations that are not findings (e.g. an error code SPEC.md does not give).
    pub notes: Vec<String>,
    /// The wire exchanges, in order (unredacted: reports redact them).
    pub exchanges: Vec<Exchange>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// The points of the checked clauses' domains the execution reaches, read from its
    /// case file (`case::reached_by_execution`); none for a judged client's results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<Point>,
}

/// The whole run.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Target name.
    pub target: String,
    /// Every result, in case and transport order.
    pub results: Vec<CaseResult>,
    /// Wall time of the run.
    pub duration: Duration,
    /// Knows every secret of the target and every token seen.
    pub redactor: Redactor,
    /// Which side the run judges: the server (`harness run`) or a client (`harness judge`).
    pub side: Side,
    /// Why the run stopped before every execution ran (a signal, the run timeout); `None`
    /// when it ran to the end.
    pub interrupted: Option<String>,
}

impl RunReport {
    /// Count of results with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.results
            .iter()
            .filter(|result| result.verdict == verdict)
            .count()
    }

    /// Results that executed (neither skipped nor errored).
    pub fn executed(&self) -> usize {
        self.results
            .iter()
            .filter(|result| !matches!(result.verdict, Verdict::Skip | Verdict::Error))
            .count()
    }
}
