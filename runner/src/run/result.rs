//! The [`CaseResult`] of one execution: its verdict (the worst of its findings), the
//! clauses that verdict rests on (each once, in the order first cited; the case's own when
//! no finding cites any), and what it recorded.

use std::time::Instant;

use harness_model::case::Case;
use harness_model::check::{Finding, Verdict};
use harness_model::results::CaseResult;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::TransportKind;

/// A result for an execution the harness could not carry out.
pub(super) fn error_result(
    case: &Case,
    transport: TransportKind,
    message: String,
    exchanges: Vec<Exchange>,
    started: Instant,
) -> CaseResult {
    finish(
        case,
        transport,
        Verdict::Error,
        message,
        Vec::new(),
        Vec::new(),
        exchanges,
        started,
    )
}

#[expect(
    clippy::too_many_arguments,
    reason = "one constructor for every kind of result"
)]
pub(super) fn finish(
    case: &Case,
    transport: TransportKind,
    verdict: Verdict,
    message: String,
    findings: Vec<Finding>,
    notes: Vec<String>,
    exchanges: Vec<Exchange>,
    started: Instant,
) -> CaseResult {
    let mut clauses: Vec<String> = findings
        .iter()
        .filter(|finding| finding.verdict == verdict)
        .flat_map(|finding| finding.clauses.iter().cloned())
        .collect();
    // Several findings often cite the same clauses; each is listed once, in first-seen order.
    let mut seen = std::collections::HashSet::new();
    clauses.retain(|clause| seen.insert(clause.clone()));
    if clauses.is_empty() {
        clauses = case.clauses.clone();
    }
    CaseResult {
        case: case.id.clone(),
        title: case.title.clone(),
        path: case.path.display().to_string(),
        transport,
        verdict,
        clauses,
        checks: case.clauses.clone(),
        message,
        findings,
        notes,
        exchanges,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        points: harness_model::case::reached_by_execution(case, transport)
            .into_iter()
            .collect(),
    }
}
