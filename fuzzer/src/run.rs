//! The fuzz run: a first health call, the generated requests sent by `concurrency` workers
//! (each with its own WebSocket session) in the order the schedule gives (`schedule.rs`:
//! paced requests when their budget has room), a health call per transport at the end,
//! then the distinct failures shrunk and written as case files. A target that stops
//! answering trips the run's breaker, which stops the run as a signal would.

mod crew;
mod findings;
mod health;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness_model::check::{Redactor, SchemaSet};
use harness_model::events::Interrupted;
use harness_model::target_file::Target;
use harness_runner::run::Breaker;

use super::collect::{FindingFound, FuzzEvent, FuzzPhase};
use super::coverage::Steering;
use super::execute::Assessed;
use super::schedule::Schedule;
use super::send::Sender;
use super::state::StatefulReport;
use super::{FuzzConfig, FuzzError, FuzzReport, FuzzRequest};
use crate::pipeline::{Context, Input, findings};
use crew::Crew;
use findings::tally;
use health::{reach, stays_up};

/// A failed request: its index, the request as sent, its judgement and what broke.
type Failed = crate::pipeline::Failed<FuzzRequest>;

/// Fuzzes `target`; findings are data in the report, errors mean the run could not happen.
pub async fn run(
    target: Target,
    schemas: Arc<SchemaSet>,
    config: &FuzzConfig,
) -> Result<FuzzReport, FuzzError> {
    let sender = Arc::new(sender_for(&target, &schemas, config)?);
    // The executor's redactor: it knows the target's secrets and learns every token and
    // signature the requests carry or the answers hold, so findings are redacted by it too.
    let redactor = Arc::new(sender.redactor().clone());
    let mut ws = None;
    reach(&sender, &redactor, &mut ws).await?;
    // Sequences first: the fixture member is still there for a narrow token to be refused
    // deleting, and what logouts and toggles do to other tokens of the account cannot
    // reach the tokens the stateless requests cache.
    let stateful_budget = config.requests * config.stateful_percent.min(100) / 100;
    let (stateful, sequence_findings) = if stateful_budget > 0 {
        super::state::run(
            Arc::clone(&sender),
            &schemas,
            Arc::clone(&redactor),
            config,
            stateful_budget,
        )
        .await?
    } else {
        (StatefulReport::default(), Vec::new())
    };
    // This shard's requests, each with its index in the whole run.
    let requests = Arc::new(FuzzRequest::generate(
        config,
        &target,
        config.requests - stateful_budget,
    ));
    config.events.emit(&FuzzEvent::Fuzz(FuzzPhase::Started {
        seed: config.seed,
        planned: requests.len(),
    }));
    let stateless = send_requests(&sender, &schemas, &redactor, &requests, config).await?;
    let mut report = report_of(config, &target, stateful, &requests, &stateless);
    let mut failed = tally(
        &mut report,
        stateless.outcomes,
        &requests,
        stateless.instead,
    );
    if !report.target_stopped_answering() {
        failed.extend(stays_up(&sender, &schemas, &redactor, config, &target, &mut ws).await);
    }
    if let Some(mut session) = ws {
        session.close().await;
    }
    report.failed_requests = failed.len();
    let context = Context {
        sender: &sender,
        schemas: &schemas,
        redactor: &redactor,
    };
    (report.findings, report.shrink_requests) = findings(&context, config, failed).await?;
    report.findings.extend(sequence_findings);
    announce_end(config, &report);
    Ok(report)
}

/// The run's sender, with its breaker; an `Err` when the target cannot be sent to.
fn sender_for(
    target: &Target,
    schemas: &Arc<SchemaSet>,
    config: &FuzzConfig,
) -> Result<Sender, FuzzError> {
    Sender::new(
        target.clone(),
        Arc::clone(schemas),
        config.limits,
        Breaker::new(
            config.no_answer_limit,
            config.limits.request_timeout,
            config.interrupt.clone(),
        ),
        config.paced_wait,
    )
    .map_err(|error| FuzzError::Target(error.to_string()))
}

/// What the stateless requests left: what came of each and what steering sent instead
/// (by place in this shard's requests), those left for the pacing budget, how long they
/// took, and the steering that saw them.
struct Stateless {
    outcomes: Vec<Option<Assessed>>,
    instead: Vec<Option<FuzzRequest>>,
    paced_unsent: Vec<usize>,
    elapsed: Duration,
    steering: Arc<Steering>,
}

/// Sends this shard's `requests` by `concurrency` workers in the schedule's order, steered
/// from the resumed corpus, and saves the corpus after.
async fn send_requests(
    sender: &Arc<Sender>,
    schemas: &Arc<SchemaSet>,
    redactor: &Arc<Redactor>,
    requests: &Arc<Vec<(usize, FuzzRequest)>>,
    config: &FuzzConfig,
) -> Result<Stateless, FuzzError> {
    let resumed = config
        .corpus
        .as_deref()
        .map(super::coverage::load_corpus)
        .unwrap_or_default();
    let steering = Arc::new(Steering::new(
        sender.target.clone(),
        config.seed,
        config.steer,
        resumed,
    ));
    let started = Instant::now();
    let deadline = started + config.run_timeout;
    let until = (!config.duration.is_zero()).then(|| started + config.duration);
    let schedule = Arc::new(Schedule::new(
        Arc::clone(requests),
        config.paced_wait,
        until,
    ));
    let crew = Crew::new(
        sender, schemas, redactor, requests, &schedule, &steering, config,
    );
    crew.send_all(config.concurrency, deadline).await;
    let elapsed = started.elapsed();
    let paced_unsent = schedule.left_unsent();
    let (outcomes, instead) = crew.take_outcomes();
    if let Some(dir) = &config.corpus {
        steering.save(dir)?;
    }
    Ok(Stateless {
        outcomes,
        instead,
        paced_unsent,
        elapsed,
        steering,
    })
}

/// The report of the requests sent, before their failures are counted: what was sent,
/// the pacing, whether the run was cut short, and the coverage.
fn report_of(
    config: &FuzzConfig,
    target: &Target,
    stateful: StatefulReport,
    requests: &[(usize, FuzzRequest)],
    stateless: &Stateless,
) -> FuzzReport {
    let (outcomes, paced_unsent, elapsed) = (
        &stateless.outcomes,
        &stateless.paced_unsent,
        stateless.elapsed,
    );
    let paced_sent = outcomes
        .iter()
        .zip(requests.iter())
        .filter(|(outcome, (_, request))| {
            outcome.is_some() && harness_protocol::spec::is_paced(&request.method)
        })
        .count();
    let sent = outcomes.iter().flatten().count();
    // Requests neither sent nor left for the pacing budget: the run timeout cut them.
    let cut = outcomes
        .iter()
        .enumerate()
        .any(|(index, outcome)| outcome.is_none() && paced_unsent.binary_search(&index).is_err());
    FuzzReport {
        seed: config.seed,
        requests: config.requests,
        shard: config.shard,
        stateful,
        sent,
        paced_sent,
        paced_unsent: paced_unsent.len(),
        paced_allowed: paced_allowed(target, elapsed),
        paced_share: paced_sent as f64 / sent.max(1) as f64,
        paced_per_second: paced_sent as f64 / elapsed.as_secs_f64().max(1e-9),
        timed_out: cut && config.interrupt.reason().is_none(),
        interrupted: config.interrupt.reason().map(|reason| reason.to_string()),
        elapsed,
        coverage: stateless.steering.map(),
        ..FuzzReport::default()
    }
}

/// The paced requests the target's budget allows over `elapsed`: its burst, then its rate.
fn paced_allowed(target: &Target, elapsed: Duration) -> usize {
    let limits = &target.limits;
    let allowed = f64::from(limits.transaction_log_burst)
        + limits.transaction_log_per_second * elapsed.as_secs_f64();
    allowed.floor() as usize
}

/// The events of the run's end: each finding whole, the interruption, then the report
/// whole with its durations (`collect.rs` folds it back).
fn announce_end(config: &FuzzConfig, report: &FuzzReport) {
    for finding in &report.findings {
        config.events.emit(&FuzzEvent::Finding(FindingFound::Found {
            clause: Cow::Borrowed(&finding.clause),
            what: Cow::Owned(finding.what()),
            message: Cow::Borrowed(&finding.message),
            finding: Cow::Borrowed(finding),
        }));
    }
    if let Some(reason) = &report.interrupted {
        config
            .events
            .emit(&FuzzEvent::Interrupt(Interrupted::Fired {
                reason: Cow::Borrowed(reason),
            }));
    }
    config.events.emit(&FuzzEvent::finished(report));
}
