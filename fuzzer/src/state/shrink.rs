//! Shrinking a failing sequence to the fewest steps that still fail the same clause: cut
//! after the failing step, then drop one step at a time (with the steps that use its
//! token), latest first, keeping each cut that still fails; then point a step that uses a
//! derived token (refreshed, forked, exchanged) at the token it came from, which can free
//! the deriving step for another round of dropping. All within a budget of requests and a
//! deadline.

use std::time::Instant;

use super::execute::{SequenceRun, execute};
use super::{Action, Sequence};
use crate::send::Sender;
use harness_model::check::Redactor;

/// Rounds of dropping and re-pointing at most.
const ROUNDS: usize = 4;

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
    let Some((step, failure)) = current_run.failure.clone() else {
        return (current, current_run, 0);
    };
    let clause = failure.clause().to_owned();
    current = current.prefix(step + 1);
    current_run.outcomes.truncate(step + 1);
    let mut sent = 0;
    for _ in 0..ROUNDS {
        let mut changed = false;
        // Drop steps, latest first.
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
            if keep_if_same(&mut current, &mut current_run, candidate, run, &clause) {
                index = index.min(current.steps.len().saturating_sub(1));
                changed = true;
            }
        }
        // Point uses of a derived token at its origin.
        for index in (0..current.steps.len()).rev() {
            if sent >= budget || Instant::now() > deadline {
                break;
            }
            let Some(candidate) = repointed(&current, index) else {
                continue;
            };
            let run = execute(sender, redactor, &candidate, first_id).await;
            sent += run.sent;
            changed |= keep_if_same(&mut current, &mut current_run, candidate, run, &clause);
        }
        if !changed {
            break;
        }
    }
    (current, current_run, sent)
}

/// Keeps `candidate`, cut after its failing step, when its run fails on `clause` as the
/// current one does; says whether it did.
fn keep_if_same(
    current: &mut Sequence,
    current_run: &mut SequenceRun,
    candidate: Sequence,
    run: SequenceRun,
    clause: &str,
) -> bool {
    let Some(failed_at) = fails_the_same(&run, clause) else {
        return false;
    };
    *current = candidate.prefix(failed_at + 1);
    *current_run = run;
    current_run.outcomes.truncate(current.steps.len());
    true
}

fn fails_the_same(run: &SequenceRun, clause: &str) -> Option<usize> {
    match &run.failure {
        Some((failed_at, failed)) if failed.clause() == clause => Some(*failed_at),
        _ => None,
    }
}

/// The sequence with step `index` using the token its token was derived from, when it uses
/// a refreshed, forked or exchanged one.
fn repointed(sequence: &Sequence, index: usize) -> Option<Sequence> {
    let step = sequence.steps.get(index)?;
    let derived = step.action.depends_on()?;
    let origin = match &sequence.steps.get(derived)?.action {
        Action::Refresh { of } | Action::Fork { of, .. } | Action::Exchange { of } => *of,
        _ => return None,
    };
    let action = step
        .action
        .renumbered(|of| Some(if of == derived { origin } else { of }))?;
    let mut candidate = sequence.clone();
    candidate.steps[index].action = action;
    Some(candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Grant, SeqStep, Who};
    use harness_protocol::wire::TransportKind;

    #[test]
    fn a_use_of_a_derived_token_is_pointed_at_its_origin() {
        let step = |action| SeqStep {
            transport: TransportKind::HttpBody,
            connection: 0,
            action,
        };
        let sequence = Sequence {
            steps: vec![
                step(Action::Login {
                    who: Who::Main,
                    grant: Grant::ClientCredentials,
                    session: None,
                }),
                step(Action::Exchange { of: 0 }),
                step(Action::Logout { token: 1 }),
            ],
        };
        let candidate = repointed(&sequence, 2).expect("the logout uses an exchanged token");
        assert_eq!(candidate.steps[2].action, Action::Logout { token: 0 });
        assert!(
            repointed(&sequence, 1).is_none(),
            "the exchange uses a login's token"
        );
        assert!(repointed(&sequence, 0).is_none());
    }
}
