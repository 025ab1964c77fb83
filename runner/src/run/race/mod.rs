//! A race step: copies of a call released together, for several rounds.
//!
//! Each round runs the steps before the race again (its logins and captures: a fresh
//! refresh token, a fresh nonce), prepares the call once, and releases `copies` copies of it
//! with the same JSON-RPC id, each over a connection of its own
//! ([`crate::transport::ClientSession::race`]): one request, sent N times, as a replay
//! would. The answers are checked as the step expects (`outcome = "any"`, the envelope, the
//! schema of a result), and a round breaks the rule when more than `at_most` copies got a
//! result. The rounds that broke it make one finding on the step's clauses, so a `must`
//! clause fails and a `warn` or `info` clause (a rule SPEC.md leaves open) only warns or
//! informs.
//!
//! Recorded: the first round in full, and every round that broke the rule; a round's answers
//! are kept results first, so a conforming server's record does not depend on which copy
//! won. Each round's release spread (first final byte to last) is a note.
//!
//! A race with a `lead` (a disable, a logout) releases the lead with the first wave of
//! copies and the second wave the moment the lead's answer arrives: only the second wave is
//! judged (it was sent after the answer), and the first wave, which may go either way, is
//! checked but not recorded. `counts` narrows what a copy must hold to count (a close that
//! traded), and `again_after_ms` sends one more copy alone afterwards: a round where it
//! counts too is not judged (the target does it again whatever came before).
//!
//! Pacing: a race of the paced method takes one budget per copy from the pacer before the
//! release, unless the case is destructive, which is how a burst above the budget is
//! allowed (as the rate probe is: `needs.destructive = true`, counted but not paced).

use std::time::Instant;

use serde_json::Value;

mod copies;
mod verdict;

use copies::{counts, placed_for};

use super::exec::{Execution, Stop, TokenUse};
use super::pace;
use crate::transport::{Outgoing, Wave};
use harness_model::case::{Race, Step};
use harness_protocol::wire::TransportKind;

/// What the rounds of a race found so far.
#[derive(Default)]
pub(super) struct Tally {
    /// The rounds that broke the rule, with their count of results.
    broken: Vec<(u32, usize)>,
    /// Each round's release spread, in microseconds.
    spreads: Vec<f64>,
    /// Each round's arrival spread at the reference server, in microseconds, where read.
    arrivals: Vec<f64>,
    /// Rounds not judged: the copy sent alone afterwards counted too (`again_after_ms`).
    unjudged: u32,
    /// `within_declared_rate`: when the first round's copies were about to go, the copies
    /// that counted so far, and the rounds after which they were beyond the budget (the
    /// round, the count, the budget).
    first_release: Option<Instant>,
    counted_total: usize,
    over_budget: Vec<(u32, usize, f64)>,
    /// `within_declared_rate`: the first round in which a copy got no result (the bucket
    /// ran dry), after which the race ends (`pace::budget_race_shape`).
    dry_round: Option<u32>,
    last_response: Value,
}

impl Execution<'_> {
    /// Runs the race of `step` for its rounds (or the target file's `race_rounds`), each
    /// after the steps before it (`setup`) again; called by the step loop (`exec.rs`).
    pub(super) async fn race(
        &mut self,
        setup: &[Step],
        step: &Step,
        race: &Race,
    ) -> Result<(), Stop> {
        let execution_transport = self.transport;
        let rounds = self.shared.target.race_rounds.unwrap_or(race.rounds);
        let rounds = self.race_shape(step, race, rounds).1;
        let mut tally = Tally::default();
        let mut outcome = Ok(());
        let mut ran = 0;
        for round in 1..=rounds {
            ran = round;
            let recorded = self.exchanges.len();
            if round > 1 {
                for earlier in setup {
                    outcome = self.step(earlier).await;
                    if outcome.is_err() {
                        break;
                    }
                }
            }
            if outcome.is_ok() {
                self.transport = step.transport_in(execution_transport);
                outcome = self.race_round(step, race, round, &mut tally).await;
                self.transport = execution_transport;
            }
            if outcome.is_err() {
                break;
            }
            if round > 1
                && tally
                    .broken
                    .last()
                    .is_none_or(|(broken, _)| *broken != round)
            {
                // A round that kept the rule is not recorded beyond the first.
                self.exchanges.truncate(recorded);
            }
            if tally.dry_round.is_some() {
                break;
            }
        }
        outcome?;
        if let Some(dry) = tally.dry_round.filter(|dry| *dry < rounds) {
            self.notes.push(format!(
                "round {dry} ran the target's bucket dry (a copy got no result): later rounds would tell nothing more, so the race ended there"
            ));
        }
        self.race_verdict(step, race, ran, tally)
    }

    /// One round of a race, without the steps before it: a race step sent by a caller
    /// other than the step loop (the fuzzers' `step_call.rs`) runs this once.
    pub(super) async fn race_once(&mut self, step: &Step, race: &Race) -> Result<(), Stop> {
        let mut tally = Tally::default();
        self.race_round(step, race, 1, &mut tally).await?;
        self.race_verdict(step, race, 1, tally)
    }

    /// Prepares the call once (and the lead, when there is one) and releases its copies;
    /// counts the copies that count.
    async fn race_round(
        &mut self,
        step: &Step,
        race: &Race,
        round: u32,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        let method = step.call_method().unwrap_or_default().to_owned();
        let at_most = self.race_bound(race)?;
        let over = if race.over.is_empty() {
            vec![self.transport]
        } else {
            race.over.clone()
        };
        let paced = harness_protocol::spec::is_paced(&method);
        let copies_released = self.race_shape(step, race, race.rounds).0;
        if paced && !self.case.needs.destructive {
            let accounts = self.pace_keys(&step.auth);
            for _ in 0..copies_released {
                self.shared.pacer.wait_all(&accounts).await;
            }
        }
        let (outgoing, lead) = self.prepare_race(step, race, &method).await?;
        let copies = self.race_copies(race, &over, (&outgoing, lead.as_ref()), copies_released);
        let recorded = self.exchanges.len();
        let released = *tally.first_release.get_or_insert_with(Instant::now);
        let sent = self.send_race(&copies).await?;
        let answers = sent.answers;
        if race.lead.is_some() {
            // The copies that raced the lead are checked but not kept: whether each came
            // before or after it is the race's to decide, and a record holding them would
            // depend on it. The lead and the second wave stay.
            let together = copies_released.saturating_sub(race.after_lead);
            let first = (recorded + 1).min(self.exchanges.len());
            let end = (first + together).min(self.exchanges.len());
            self.exchanges.drain(first..end);
        }
        if paced && self.case.needs.destructive {
            // Beyond the budget, as the rate probe is, but counted.
            let accounts = self.pace_keys(&step.auth);
            for _ in 0..copies_released {
                self.shared.pacer.spend_all(&accounts, Instant::now());
            }
        }
        tally.spreads.push(sent.release_spread_us);
        tally.arrivals.extend(sent.arrival_spread_us);
        let counted = self.judge_copies(step, race, answers, tally)?;
        if let Some(after_ms) = race.again_after_ms
            && self
                .counts_again(step, race, (over[0], &outgoing), after_ms, tally)
                .await?
        {
            tally.unjudged += 1;
            return Ok(());
        }
        self.count_round(
            race,
            (round, counted),
            (at_most, copies_released),
            released,
            tally,
        );
        Ok(())
    }

    /// Checks every answer of a round as its step expects (the lead's as the lead's) and
    /// counts the judged copies that count.
    fn judge_copies(
        &mut self,
        step: &Step,
        race: &Race,
        answers: Vec<(Wave, harness_model::check::ParsedAnswer)>,
        tally: &mut Tally,
    ) -> Result<usize, Stop> {
        let clauses = self.case.step_clauses(step).to_vec();
        // With a lead, only the copies released after its answer are judged: the ones that
        // raced it may go either way.
        let judged = if race.lead.is_some() {
            Wave::AfterLead
        } else {
            Wave::Together
        };
        let counted = answers
            .iter()
            .filter(|(wave, answer)| *wave == judged && counts(answer, race.counts.as_deref()))
            .count();
        for (wave, answer) in answers {
            match (&race.lead, wave) {
                (Some(lead), Wave::Lead) => {
                    let lead_clauses = self.case.step_clauses(lead).to_vec();
                    self.check_answer(answer, &lead_clauses, lead)?;
                }
                _ => tally.last_response = self.check_answer(answer, &clauses, step)?,
            }
        }
        if self.failing() {
            return Err(Stop::Failed);
        }
        Ok(counted)
    }

    /// The copies a round releases, each over its transport and in its wave: the lead
    /// first (when there is one), then the copies, the last `after_lead` of them in the
    /// second wave.
    fn race_copies(
        &self,
        race: &Race,
        over: &[TransportKind],
        (outgoing, lead): (&Outgoing, Option<&Outgoing>),
        copies_released: usize,
    ) -> Vec<(TransportKind, Outgoing, Wave)> {
        let mut copies: Vec<(TransportKind, Outgoing, Wave)> =
            Vec::with_capacity(copies_released + 1);
        if let Some(prepared) = lead {
            copies.push((
                over[0],
                placed_for(prepared, self.transport, over[0]),
                Wave::Lead,
            ));
        }
        let second_wave_from = copies_released.saturating_sub(race.after_lead);
        for copy in 0..copies_released {
            let transport = over[copy % over.len()];
            let wave = if race.lead.is_some() && copy >= second_wave_from {
                Wave::AfterLead
            } else {
                Wave::Together
            };
            copies.push((
                transport,
                placed_for(outgoing, self.transport, transport),
                wave,
            ));
        }
        copies
    }

    /// Sends one more copy alone, `after_ms` after the round (`again_after_ms`), checking
    /// its answer: whether it counts too (the target does it again whatever came before).
    async fn counts_again(
        &mut self,
        step: &Step,
        race: &Race,
        (transport, outgoing): (TransportKind, &Outgoing),
        after_ms: u64,
        tally: &mut Tally,
    ) -> Result<bool, Stop> {
        let clauses = self.case.step_clauses(step).to_vec();
        tokio::time::sleep(std::time::Duration::from_millis(after_ms)).await;
        let alone = [(
            transport,
            placed_for(outgoing, self.transport, transport),
            Wave::Together,
        )];
        let mut again = false;
        for (_, answer) in self.send_race(&alone).await?.answers {
            again |= counts(&answer, race.counts.as_deref());
            tally.last_response = self.check_answer(answer, &clauses, step)?;
        }
        if self.failing() {
            return Err(Stop::Failed);
        }
        Ok(again)
    }

    /// Counts a round's copies that counted: beyond `at_most`, the round broke the rule;
    /// held to the declared rate (`within_declared_rate`), beyond the budget since the
    /// first release, or short of every copy (the bucket ran dry).
    fn count_round(
        &self,
        race: &Race,
        (round, counted): (u32, usize),
        (at_most, copies_released): (usize, usize),
        released: Instant,
        tally: &mut Tally,
    ) {
        if counted > at_most {
            tally.broken.push((round, counted));
        }
        if race.within_declared_rate {
            let limits = &self.shared.target.limits;
            let budget = f64::from(limits.transaction_log_burst)
                + limits.transaction_log_per_second * released.elapsed().as_secs_f64();
            tally.counted_total += counted;
            if tally.counted_total as f64 > budget.floor() {
                tally.over_budget.push((round, tally.counted_total, budget));
            }
            if counted < copies_released {
                tally.dry_round.get_or_insert(round);
            }
        }
    }

    /// The copies per round and the rounds of `race`: as the case says, but for a race of
    /// the paced method held to the declared budget ([`pace::budget_race_shape`]).
    fn race_shape(&self, step: &Step, race: &Race, rounds: u32) -> (usize, u32) {
        let paced = step
            .call_method()
            .is_some_and(harness_protocol::spec::is_paced);
        if paced && race.within_declared_rate {
            pace::budget_race_shape(race.copies, rounds, &self.shared.target.limits)
        } else {
            (race.copies, rounds)
        }
    }

    /// Prepares the call of a race and its lead's, when it has one.
    async fn prepare_race(
        &mut self,
        step: &Step,
        race: &Race,
        method: &str,
    ) -> Result<(Outgoing, Option<Outgoing>), Stop> {
        // The copies go over connections of their own, opened for the race: a token from a
        // login goes with them, so it is one issued for use elsewhere (`auth.rs`).
        let outgoing = self.prepare_for(step, method, TokenUse::Elsewhere).await?;
        let lead = match &race.lead {
            Some(lead) => {
                let lead_method = lead.call_method().unwrap_or_default().to_owned();
                Some(
                    self.prepare_for(lead, &lead_method, TokenUse::Elsewhere)
                        .await?,
                )
            }
            None => None,
        };
        Ok((outgoing, lead))
    }

    /// The race's `at_most`, resolved when it is a template.
    fn race_bound(&self, race: &Race) -> Result<usize, Stop> {
        let bound = match &race.at_most {
            Value::String(text) => self.resolved(text)?.trim().parse::<usize>().ok(),
            other => other.as_u64().and_then(|bound| usize::try_from(bound).ok()),
        };
        bound.ok_or_else(|| Stop::Error("race.at_most is not a whole number".to_owned()))
    }
}
