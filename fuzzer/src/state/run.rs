//! The stateful part of a fuzz run: sequences generated from the seed until their steps
//! fill the stateful budget, this shard's sent (those that only log in, refresh, fork,
//! exchange and call by `concurrency` workers at once; those that log out, toggle the
//! subaccount or delete a member one at a time after them, since their effect on other
//! tokens of the account is partly open, until one gets no answer), then their failures
//! handed to the pipeline (`crate::pipeline`), which shrinks one per clause and writes it
//! as a case file.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::execute::{SequenceRun, execute};
use super::input::first_id;
use super::{Sequence, StatefulReport};
use crate::pipeline::{Context, Failed, Input, findings};
use crate::send::Sender;
use crate::{FuzzConfig, FuzzError, FuzzFinding};
use harness_model::check::{Redactor, SchemaSet};

/// A sequence with its number in the seed's stream.
type Numbered = (usize, Sequence);

/// A sequence with its number in the seed's stream, and what running it gave.
type NumberedRun = (usize, Sequence, SequenceRun);

/// Runs `budget` requests' worth of sequences (this shard's part of them): what they sent,
/// and their findings.
pub(crate) async fn run(
    sender: Arc<Sender>,
    schemas: &SchemaSet,
    redactor: Arc<Redactor>,
    config: &FuzzConfig,
    budget: usize,
) -> Result<(StatefulReport, Vec<FuzzFinding>), FuzzError> {
    let mine = Sequence::generate(config, &sender.target, budget);
    let (serial, parallel) = serial_and_parallel(&mine);
    let started = Instant::now();
    let deadline = started + config.run_timeout;
    let runs: Arc<Mutex<Vec<NumberedRun>>> = Arc::default();
    run_parallel(&sender, &redactor, config, parallel, deadline, &runs).await;
    let not_run = run_serial(&sender, &redactor, config, serial, deadline, &runs).await;
    let mut report = StatefulReport {
        sequences: mine.len(),
        not_run,
        elapsed: started.elapsed(),
        ..StatefulReport::default()
    };
    let mut runs = std::mem::take(&mut *runs.lock().unwrap_or_else(PoisonError::into_inner));
    runs.sort_by_key(|(number, ..)| *number);
    let failed = count(&mut report, runs);
    let context = Context {
        sender: &sender,
        schemas,
        redactor: &redactor,
    };
    let (findings, shrink_requests) = findings(&context, config, failed).await?;
    report.shrink_requests = shrink_requests;
    Ok((report, findings))
}

/// The sequences that change state (run one at a time) and the others (run in parallel,
/// those calling the paced method first).
fn serial_and_parallel(mine: &[Numbered]) -> (Vec<Numbered>, Vec<Numbered>) {
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
    (serial, parallel)
}

/// Runs `parallel` by `concurrency` workers until they are done, the deadline passes or
/// the run is interrupted, each run pushed onto `runs`.
async fn run_parallel(
    sender: &Arc<Sender>,
    redactor: &Arc<Redactor>,
    config: &FuzzConfig,
    parallel: Vec<Numbered>,
    deadline: Instant,
    runs: &Arc<Mutex<Vec<NumberedRun>>>,
) {
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
                // Dropped, not waited out, when the run stops (see `crate::run`).
                let run = tokio::select! {
                    biased;
                    run = execute(&sender, &redactor, sequence, first_id(*number)) => run,
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
}

/// Runs `serial` one at a time, each run pushed onto `runs`; returns how many were not
/// run (after one got no answer, past the deadline, or once interrupted).
async fn run_serial(
    sender: &Sender,
    redactor: &Redactor,
    config: &FuzzConfig,
    serial: Vec<Numbered>,
    deadline: Instant,
    runs: &Mutex<Vec<NumberedRun>>,
) -> usize {
    // One at a time, these wait out a silent target's timeout each: a sequence left
    // without an answer ends them, and the stateless phase's breaker says why.
    let (mut unanswered, mut not_run) = (false, 0);
    for (number, sequence) in serial {
        if unanswered || Instant::now() > deadline || config.interrupt.reason().is_some() {
            not_run += 1;
            continue;
        }
        let run = execute(sender, redactor, &sequence, first_id(number)).await;
        unanswered = run.unanswered > 0;
        runs.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((number, sequence, run));
    }
    not_run
}

/// Adds each run's counts to `report`, and gives back the failures, in sequence order.
fn count(report: &mut StatefulReport, runs: Vec<NumberedRun>) -> Vec<Failed<Sequence>> {
    let mut failed = Vec::new();
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
        if let Some((_, failure)) = run.failure.clone() {
            failed.push(Failed {
                number,
                input: sequence,
                run,
                failure,
            });
        }
    }
    failed
}
