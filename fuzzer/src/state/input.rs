//! A stateful sequence as an input of the pipeline (`crate::pipeline`): sent step by step
//! and judged against the model (`execute.rs`), grouped by clause, shrunk to the fewest
//! steps that still fail the same clause (cut after the failing step, then a step dropped
//! with the steps that use its token, latest first; then a step that uses a derived token
//! (refreshed, forked, exchanged) pointed at the token it came from, which can free the
//! deriving step to be dropped), and written as a case file of `call` steps
//! (`case_file.rs`).

use harness_model::check::Finding;

use rand::SeedableRng;
use rand::rngs::StdRng;

use super::execute::{SequenceRun, execute};
use super::generate::{Allowed, sequence};
use super::{Action, Sequence, case_file};
use crate::pipeline::{Context, Input};
use crate::{FoundInput, FuzzConfig};
use harness_model::target_file::Target;

/// JSON-RPC ids of sequence `k` start at `ID_BASE + k * ID_STRIDE`, apart from the
/// stateless requests' ids (their index plus one).
const ID_BASE: u64 = 1 << 40;
const ID_STRIDE: u64 = 64;

/// The JSON-RPC id of sequence `number`'s first step (its shrink's candidates start there
/// too).
pub(super) fn first_id(number: usize) -> u64 {
    ID_BASE + number as u64 * ID_STRIDE
}

impl Input for Sequence {
    type Run = SequenceRun;
    type Session = ();
    const LETTER: char = 'q';

    /// The sequences generated from the seed until their steps fill `budget`, numbered,
    /// that fall to this shard.
    fn generate(config: &FuzzConfig, target: &Target, budget: usize) -> Vec<(usize, Sequence)> {
        let allowed = Allowed::from_target(target);
        // Another stream than the stateless requests', from the same seed.
        let mut rng = StdRng::seed_from_u64(config.seed ^ 0x5eed_5e0e_57a7_e000);
        let (mut all, mut generated) = (Vec::new(), 0);
        while generated < budget {
            let sequence = sequence(&mut rng, &allowed);
            generated += sequence.steps.len();
            all.push(sequence);
        }
        config.shard.select(all)
    }

    fn group(&self, failure: &Finding) -> (String, String) {
        (failure.clause().to_owned(), String::new())
    }

    async fn execute(&self, context: &Context<'_>, id: u64, _session: &mut ()) -> SequenceRun {
        execute(context.sender, context.redactor, self, id).await
    }

    async fn close(_session: ()) {}

    fn shrink_id(number: usize, _tries: usize) -> u64 {
        first_id(number)
    }

    fn sent(run: &SequenceRun) -> usize {
        run.sent
    }

    fn fails_again(run: &SequenceRun, failure: &Finding) -> bool {
        matches!(&run.failure, Some((_, again)) if again.clause() == failure.clause())
    }

    fn cut(self, mut run: SequenceRun) -> (Sequence, SequenceRun) {
        let Some((failed_at, _)) = run.failure else {
            return (self, run);
        };
        run.outcomes.truncate(failed_at + 1);
        (self.prefix(failed_at + 1), run)
    }

    fn candidates(&self) -> Vec<Sequence> {
        // Drop a step (not the failing last one), latest first.
        let dropped = (0..self.steps.len().saturating_sub(1))
            .rev()
            .map(|index| self.without(index))
            .filter(|candidate| !candidate.steps.is_empty());
        // Point uses of a derived token at its origin.
        let repointed = (0..self.steps.len())
            .rev()
            .filter_map(|index| repointed(self, index));
        dropped.chain(repointed).collect()
    }

    fn reported(_failure: Finding, shrunk: &SequenceRun) -> Option<Finding> {
        shrunk.failure.clone().map(|(_, failure)| failure)
    }

    fn case_file(
        &self,
        id: &str,
        (_, shrunk): (&SequenceRun, &SequenceRun),
        failure: &Finding,
        _context: &Context<'_>,
    ) -> String {
        case_file::case_file(
            id,
            self,
            &shrunk.outcomes,
            failure.clause(),
            &failure.message,
        )
    }

    fn found(self, shrunk: Sequence) -> FoundInput {
        FoundInput::Sequence {
            sequence: self,
            shrunk,
        }
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

    /// A login, an exchange of its token, and a logout with the exchanged one.
    fn login_exchange_logout() -> Sequence {
        let step = |action| SeqStep {
            transport: TransportKind::HttpBody,
            connection: 0,
            action,
        };
        Sequence {
            steps: vec![
                step(Action::Login {
                    who: Who::Main,
                    grant: Grant::ClientCredentials,
                    session: None,
                }),
                step(Action::Exchange { of: 0 }),
                step(Action::Logout { token: 1 }),
            ],
        }
    }

    #[test]
    fn a_use_of_a_derived_token_is_pointed_at_its_origin() {
        let sequence = login_exchange_logout();
        let candidate = repointed(&sequence, 2).expect("the logout uses an exchanged token");
        assert_eq!(candidate.steps[2].action, Action::Logout { token: 0 });
        assert!(
            repointed(&sequence, 1).is_none(),
            "the exchange uses a login's token"
        );
        assert!(repointed(&sequence, 0).is_none());
    }

    #[test]
    fn candidates_keep_the_failing_step_and_drop_before_they_repoint() {
        let sequence = login_exchange_logout();
        let candidates = sequence.candidates();
        // Dropping the exchange takes the logout that uses its token; dropping the login
        // takes everything, and an empty sequence is no candidate. Then the re-pointing.
        let logout_of_login = repointed(&sequence, 2).unwrap();
        assert_eq!(candidates, vec![sequence.without(1), logout_of_login]);
        assert!(
            candidates
                .iter()
                .all(|candidate| !candidate.steps.is_empty())
        );
        let (cut, run) = sequence.clone().cut(SequenceRun {
            failure: Some((1, crate::prediction::broken("auth.refresh.rotates", "m"))),
            outcomes: vec![None; 3],
            ..SequenceRun::default()
        });
        assert_eq!((cut.steps.len(), run.outcomes.len()), (2, 2));
    }
}
