//! The stateful part of a fuzz run: sequences generated from the seed until their steps
//! fill the stateful budget, this shard's sent (those that only log in, refresh, fork,
//! exchange and call by `concurrency` workers at once; those that log out, toggle the
//! subaccount or delete a member one at a time after them, since their effect on other
//! tokens of the account is partly open, until one gets no answer), then one failure per clause shrunk and written
//! as a case file.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;

use super::execute::{SequenceRun, execute};
use super::generate::{Allowed, sequence};
use super::{Sequence, SequenceFinding, StatefulReport, case_file, shrink};
use crate::send::Sender;
use crate::{FuzzConfig, FuzzError};
use harness_model::check::Redactor;

/// JSON-RPC ids of sequence `k` start at `ID_BASE + k * ID_STRIDE`, apart from the
/// stateless requests' ids (their index plus one).
const ID_BASE: u64 = 1 << 40;
const ID_STRIDE: u64 = 64;

/// Runs `budget` requests' worth of sequences (this shard's part of them).
pub(crate) async fn run(
    sender: Arc<Sender>,
    redactor: Arc<Redactor>,
    config: &FuzzConfig,
    budget: usize,
) -> Result<StatefulReport, FuzzError> {
    let allowed = Allowed::from_target(&sender.target);
    // Another stream than the stateless requests', from the same seed.
    let mut rng = StdRng::seed_from_u64(config.seed ^ 0x5eed_5e0e_57a7_e000);
    let mut generated = 0;
    let mut mine: Vec<(usize, Sequence)> = Vec::new();
    let mut number = 0;
    while generated < budget {
        let sequence = sequence(&mut rng, &allowed);
        generated += sequence.steps.len();
        if number % config.shard.count.max(1) == config.shard.index.saturating_sub(1) {
            mine.push((number, sequence));
        }
        number += 1;
    }
    let (serial, mut parallel): (Vec<_>, Vec<_>) =
        mine.iter().cloned().partition(|(_, sequence)| {
            sequence
                .steps
                .iter()
                .any(|step| harness_protocol::spec::is_state_changing(step.action.method()))
        });
    // Sequences that call the paced method start first: each waits for the budget on its
    // worker while the other workers run the rest, so the budget is in use from the start
    // and the run does not end waiting on a paced sequence that started last.
    parallel.sort_by_key(|(_, sequence)| {
        !sequence
            .steps
            .iter()
            .any(|step| harness_protocol::spec::is_paced(step.action.method()))
    });
    let started = Instant::now();
    let deadline = started + config.run_timeout;
    let runs: Arc<Mutex<Vec<(usize, Sequence, SequenceRun)>>> = Arc::default();
    let parallel = Arc::new(parallel);
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..config.concurrency.max(1) {
        let (sender, redactor, runs) = (sender.clone(), redactor.clone(), runs.clone());
        let (parallel, next, interrupt) =
            (parallel.clone(), next.clone(), config.interrupt.clone());
        workers.push(tokio::spawn(async move {
            loop {
                if Instant::now() > deadline || interrupt.reason().is_some() {
                    break;
                }
                let Some((number, sequence)) = parallel.get(next.fetch_add(1, Ordering::Relaxed))
                else {
                    break;
                };
                let first_id = ID_BASE + *number as u64 * ID_STRIDE;
                // Dropped, not waited out, when the run stops (see `crate::run`).
                let run = tokio::select! {
                    biased;
                    run = execute(&sender, &redactor, sequence, first_id) => run,
                    _ = interrupt.fired() => break,
                };
                let mut runs = runs.lock().unwrap_or_else(PoisonError::into_inner);
                runs.push((*number, sequence.clone(), run));
            }
        }));
    }
    for worker in workers {
        // A worker panicking is our bug; its sequences stay unsent.
        let _ = worker.await;
    }
    // One at a time, these wait out a silent target's timeout each: a sequence left
    // without an answer ends them, and the stateless phase's breaker says why.
    let (mut unanswered, mut not_run) = (false, 0);
    for (number, sequence) in serial {
        if unanswered || Instant::now() > deadline || config.interrupt.reason().is_some() {
            not_run += 1;
            continue;
        }
        let first_id = ID_BASE + number as u64 * ID_STRIDE;
        let run = execute(&sender, &redactor, &sequence, first_id).await;
        unanswered = run.unanswered > 0;
        runs.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((number, sequence, run));
    }
    let mut report = StatefulReport {
        sequences: mine.len(),
        not_run,
        elapsed: started.elapsed(),
        ..StatefulReport::default()
    };
    let mut runs = std::mem::take(&mut *runs.lock().unwrap_or_else(PoisonError::into_inner));
    runs.sort_by_key(|(number, ..)| *number);
    // The first failure of each clause, with how many sequences failed that way.
    let mut groups: BTreeMap<String, ((usize, Sequence, SequenceRun), usize)> = BTreeMap::new();
    for (number, sequence, run) in runs {
        report.sent += run.sent;
        report.expected_result += run.predicted[0];
        report.expected_error += run.predicted[1];
        report.expected_any += run.predicted[2];
        report.skipped += run.skipped.len();
        report.throttled += run.throttled;
        report.unanswered += run.unanswered;
        report.paced_sent += run.paced[0];
        report.paced_skipped += run.paced[1];
        if let Some((_, failure)) = &run.failure {
            groups
                .entry(failure.clause().to_owned())
                .and_modify(|group| group.1 += 1)
                .or_insert(((number, sequence, run), 1));
        }
    }
    let mut groups: Vec<_> = groups.into_values().collect();
    groups.sort_by_key(|((number, ..), _)| *number);
    let shrink_deadline = Instant::now() + config.run_timeout;
    if let Some(dir) = &config.out {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
            path: dir.clone(),
            source,
        })?;
    }
    for ((number, sequence, run), occurrences) in groups.into_iter().take(config.max_findings) {
        let first_id = ID_BASE + number as u64 * ID_STRIDE;
        let deadline = match config.interrupt.reason() {
            Some(_) => Instant::now(),
            None => shrink_deadline,
        };
        let (shrunk, shrunk_run, sent) = shrink::shrink(
            &sender,
            &redactor,
            (sequence.clone(), run),
            first_id,
            config.shrink_budget,
            deadline,
        )
        .await;
        report.shrink_requests += sent;
        let Some((_, failure)) = shrunk_run.failure.clone() else {
            continue;
        };
        let (clause, message) = (failure.clause().to_owned(), failure.message);
        let mut case_path = None;
        if let Some(dir) = &config.out {
            let id = format!("fuzz.s{}.q{number}", config.seed);
            let text = case_file::case_file(&id, &shrunk, &shrunk_run.outcomes, &clause, &message);
            case_path = Some(crate::write_case_file(dir, &id, &text)?);
        }
        report.findings.push(SequenceFinding {
            clause,
            message,
            first_index: number,
            occurrences,
            sequence,
            shrunk,
            case_file: case_path,
        });
    }
    Ok(report)
}
