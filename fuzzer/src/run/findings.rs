//! What a fuzz run's requests failed: the judged requests counted, and their failures
//! gathered for the pipeline (`pipeline.rs`), which groups them by clause and method and
//! shrinks and writes the first of each group.

use harness_model::check::Outcome;

use super::Failed;
use crate::assess;
use crate::execute::Assessed;
use crate::{FuzzReport, FuzzRequest};

/// Counts each judged request into `report` (what the oracle expected, throttled,
/// unanswered) and gives back the failures, each with the request as sent (steering's in
/// place of the fresh one).
pub(super) fn tally(
    report: &mut FuzzReport,
    outcomes: Vec<Option<Assessed>>,
    requests: &[(usize, FuzzRequest)],
    instead: Vec<Option<FuzzRequest>>,
) -> Vec<Failed> {
    let mut failed: Vec<Failed> = Vec::new();
    for (index, outcome) in outcomes.into_iter().enumerate() {
        let Some(outcome) = outcome else {
            continue;
        };
        match outcome.prediction.outcome {
            Outcome::Result => report.expected_result += 1,
            Outcome::Error => report.expected_error += 1,
            Outcome::Any => report.expected_any += 1,
        }
        match outcome.finding.clone() {
            None => {}
            Some(finding) if assess::is_throttled(&finding) => report.rate_limited += 1,
            Some(failure) if assess::is_unanswered(&failure) => report.unanswered += 1,
            Some(failure) => {
                let (number, fresh) = requests[index].clone();
                let input = instead[index].clone().unwrap_or(fresh);
                failed.push(Failed {
                    number,
                    input,
                    run: outcome,
                    failure,
                });
            }
        }
    }
    failed
}
