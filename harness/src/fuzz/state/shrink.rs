//! Shrinking a failing sequence to the fewest steps that still fail the same clause: cut
//! after the failing step, then drop one step at a time (with the steps that use its
//! token), latest first, keeping each cut that still fails, within a budget of requests
//! and a deadline.

use std::time::Instant;

use super::Sequence;
use super::execute::{SequenceRun, execute};
use crate::check::Redactor;
use crate::fuzz::send::Sender;

/// The smallest failing sequence found, its run, and the requests shrinking sent.
pub(crate) async fn shrink(
    sender: &Sender,
    redactor: &Redactor,
    failing: (Sequence, SequenceRun),
    first_id: u64,
    budget: usize,
    deadline: Instant,
) -> (Sequence, SequenceRun, usize) {
    let (mut current, mut current_run) = failing;
    let Some((step, (clause, _))) = current_run.failure.clone() else {
        return (current, current_run, 0);
    };
    current = current.prefix(step + 1);
    current_run.outcomes.truncate(step + 1);
    let mut sent = 0;
    let mut index = current.steps.len().saturating_sub(1);
    while index > 0 {
        index -= 1;
        if sent >= budget || Instant::now() > deadline {
            break;
        }
        let candidate = current.without(index);
        if candidate.steps.is_empty() {
            continue;
        }
        let run = execute(sender, redactor, &candidate, first_id).await;
        sent += run.sent;
        match &run.failure {
            Some((failed_at, (failed_clause, _))) if *failed_clause == clause => {
                current = candidate.prefix(failed_at + 1);
                current_run = run;
                current_run.outcomes.truncate(current.steps.len());
                index = index.min(current.steps.len().saturating_sub(1));
            }
            _ => {}
        }
    }
    (current, current_run, sent)
}
