//! A race's verdict once its rounds are run: the note on its release and arrival spreads,
//! the finding on the rounds that broke the rule or went beyond the declared budget, and the
//! captures of the last answer.

use super::Tally;
use crate::run::exec::{Execution, Stop};
use harness_model::case::{Race, Step};
use harness_protocol::wire::TransportKind;

impl Execution<'_> {
    /// The spread note, the finding on the rounds that broke the rule, and the captures of
    /// the last answer.
    pub(super) fn race_verdict(
        &mut self,
        step: &Step,
        race: &Race,
        rounds: u32,
        tally: Tally,
    ) -> Result<(), Stop> {
        let over = if race.over.is_empty() {
            vec![step.transport_in(self.transport)]
        } else {
            race.over.clone()
        };
        let copies_released = self.race_shape(step, race, rounds).0;
        self.notes.push(spread_note(
            &tally.spreads,
            &tally.arrivals,
            copies_released,
            &over,
        ));
        let clauses = self.case.step_clauses(step).to_vec();
        if tally.unjudged > 0 {
            let method = step.call_method().unwrap_or_default();
            let note = format!(
                "{} of {rounds} rounds not judged: a copy of {method} sent alone afterwards counted too, so the target does it again whatever came before",
                tally.unjudged
            );
            if tally.unjudged >= rounds {
                // Nothing was judged: the race's clauses were not checked.
                self.unchecked.extend(clauses.iter().cloned());
            }
            self.notes.push(note);
        }
        if !tally.over_budget.is_empty() {
            self.record(
                &clauses,
                over_budget_finding(step, rounds, &tally, &self.shared.target.limits),
            );
            if self.failing() {
                return Err(Stop::Failed);
            }
        }
        if !tally.broken.is_empty() {
            let at_most = self.race_bound(race)?;
            self.record(
                &clauses,
                broken_finding(step, race, (rounds, copies_released, at_most), &tally),
            );
            if self.failing() {
                return Err(Stop::Failed);
            }
        }
        self.capture(step, &tally.last_response, &clauses)
    }
}

/// The finding on the rounds that ended beyond the declared budget.
fn over_budget_finding(
    step: &Step,
    rounds: u32,
    tally: &Tally,
    limits: &harness_model::target_file::RateLimits,
) -> String {
    let method = step.call_method().unwrap_or_default();
    let rounds_text: Vec<String> = tally
        .over_budget
        .iter()
        .map(|(round, counted, budget)| {
            format!("after round {round}: {counted} results, budget {budget:.1}")
        })
        .collect();
    format!(
        "{} of {rounds} rounds ended beyond the declared budget: copies of {method} released together got more results in all than the burst of {} plus {} per second since the first release allow ({})",
        tally.over_budget.len(),
        limits.transaction_log_burst,
        limits.transaction_log_per_second,
        rounds_text.join(", ")
    )
}

/// The finding on the rounds that broke the rule: more than `at_most` copies counted.
fn broken_finding(
    step: &Step,
    race: &Race,
    (rounds, copies_released, at_most): (u32, usize, usize),
    tally: &Tally,
) -> String {
    let method = step.call_method().unwrap_or_default();
    let rounds_text: Vec<String> = tally
        .broken
        .iter()
        .map(|(round, counted)| format!("round {round}: {counted} results"))
        .collect();
    let what = match &race.counts {
        Some(path) => format!("a result with {path}"),
        None => "a result".to_owned(),
    };
    let which = match &race.lead {
        Some(lead) => format!(
            "the {} copies of {method} released once the answer to {} had arrived",
            race.after_lead,
            lead.call_method().unwrap_or_default()
        ),
        None => format!("{copies_released} copies of {method} released together"),
    };
    format!(
        "{} of {rounds} rounds broke the rule: more than {at_most} of {which} got {what} ({})",
        tally.broken.len(),
        rounds_text.join(", ")
    )
}

/// The note on a race's release spreads (and arrival spreads, read from the reference
/// server): median and worst over its rounds.
fn spread_note(spreads: &[f64], arrivals: &[f64], copies: usize, over: &[TransportKind]) -> String {
    let over: Vec<&str> = over.iter().map(|transport| transport.as_str()).collect();
    let (median, worst) = median_and_worst(spreads);
    let mut note = format!(
        "race of {copies} copies over {}: release spread (first final byte to last) median {median:.0} µs, worst {worst:.0} µs over {} rounds",
        over.join(" and "),
        spreads.len()
    );
    if !arrivals.is_empty() {
        let (median, worst) = median_and_worst(arrivals);
        note.push_str(&format!(
            "; arrival spread at the reference server (first copy in to last) median {median:.0} µs, worst {worst:.0} µs over {} rounds",
            arrivals.len()
        ));
    }
    note
}

fn median_and_worst(values: &[f64]) -> (f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let worst = sorted.last().copied().unwrap_or(0.0);
    (median, worst)
}
