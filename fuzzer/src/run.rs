//! The fuzz run: a first health call, the generated requests sent by `concurrency` workers
//! (each with its own WebSocket session) in the order the schedule gives (`schedule.rs`:
//! paced requests when their budget has room), a health call per transport at the end,
//! then the distinct failures shrunk and written as case files. A target that stops
//! answering trips the run's breaker, which stops the run as a signal would.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::Map;

use super::assess;
use super::coverage::Steering;
use super::execute::{Assessed, execute};
use super::prediction::Prediction;
use super::rules;
use super::schedule::{Next, Schedule};
use super::send::{Budget, Sender};
use super::{
    FuzzConfig, FuzzError, FuzzFinding, FuzzReport, FuzzRequest, RequestAuth, case_file,
    shard_requests, shrink,
};
use harness_model::check::{Finding, Outcome, Redactor, SchemaSet, Verdict};
use std::borrow::Cow;

use super::collect::{FindingFound, Found, FuzzEvent, FuzzPhase, RequestJudged};
use harness_model::events::Interrupted;
use harness_model::target_file::Target;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;
use harness_runner::run::Breaker;

/// A failed request: as generated, its prediction, what broke, and its index.
type Failed = (FuzzRequest, Prediction, Finding, usize);

/// Fuzzes `target`; findings are data in the report, errors mean the run could not happen.
pub async fn run(
    target: Target,
    schemas: Arc<SchemaSet>,
    config: &FuzzConfig,
) -> Result<FuzzReport, FuzzError> {
    let sender = Arc::new(
        Sender::new(
            target.clone(),
            Arc::clone(&schemas),
            config.limits,
            Breaker::new(
                config.no_answer_limit,
                config.limits.request_timeout,
                config.interrupt.clone(),
            ),
            config.paced_wait,
        )
        .map_err(|error| FuzzError::Target(error.to_string()))?,
    );
    // The executor's redactor: it knows the target's secrets and learns every token and
    // signature the requests carry or the answers hold, so findings are redacted by it too.
    let redactor = Arc::new(sender.redactor().clone());
    let mut ws = None;
    reach(&sender, &redactor, &mut ws).await?;
    // Sequences first: the fixture member is still there for a narrow token to be refused
    // deleting, and what logouts and toggles do to other tokens of the account cannot
    // reach the tokens the stateless requests cache.
    let stateful_budget = config.requests * config.stateful_percent.min(100) / 100;
    let stateful = if stateful_budget > 0 {
        super::state::run(
            Arc::clone(&sender),
            Arc::clone(&redactor),
            config,
            stateful_budget,
        )
        .await?
    } else {
        super::state::StatefulReport::default()
    };
    // This shard's requests, each with its index in the whole run.
    let requests = Arc::new(shard_requests(
        config.seed,
        config.requests - stateful_budget,
        config.shard,
        &target,
        &config.transports,
    ));
    config.events.emit(&FuzzEvent::Fuzz(FuzzPhase::Started {
        seed: config.seed,
        planned: requests.len(),
    }));
    let outcomes: Arc<Mutex<Vec<Option<Assessed>>>> =
        Arc::new(Mutex::new(vec![None; requests.len()]));
    // What steering sent in place of a fresh request, by index.
    let instead: Arc<Mutex<Vec<Option<FuzzRequest>>>> =
        Arc::new(Mutex::new(vec![None; requests.len()]));
    let resumed = config
        .corpus
        .as_deref()
        .map(super::coverage::load_corpus)
        .unwrap_or_default();
    let steering = Arc::new(Steering::new(
        target.clone(),
        config.seed,
        config.steer,
        resumed,
    ));
    let started = Instant::now();
    let deadline = started + config.run_timeout;
    let until = (!config.duration.is_zero()).then(|| started + config.duration);
    let schedule = Arc::new(Schedule::new(
        Arc::clone(&requests),
        config.paced_wait,
        until,
    ));
    let crew = Crew {
        sender: Arc::clone(&sender),
        schemas: Arc::clone(&schemas),
        redactor: Arc::clone(&redactor),
        requests: Arc::clone(&requests),
        outcomes: Arc::clone(&outcomes),
        schedule: Arc::clone(&schedule),
        steering: Arc::clone(&steering),
        instead: Arc::clone(&instead),
        interrupt: config.interrupt.clone(),
        events: config.events.clone(),
    };
    let workers: Vec<_> = (0..config.concurrency.max(1))
        .map(|_| tokio::spawn(crew.clone().work(deadline)))
        .collect();
    for worker in workers {
        // A worker panicking is our bug; its requests stay unjudged and are reported below.
        let _ = worker.await;
    }
    let elapsed = started.elapsed();
    let paced_unsent = schedule.left_unsent();
    let outcomes: Vec<Option<Assessed>> =
        std::mem::take(&mut *outcomes.lock().unwrap_or_else(PoisonError::into_inner));
    let instead: Vec<Option<FuzzRequest>> =
        std::mem::take(&mut *instead.lock().unwrap_or_else(PoisonError::into_inner));
    if let Some(dir) = &config.corpus {
        steering.save(dir)?;
    }
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
    let mut report = FuzzReport {
        seed: config.seed,
        requests: config.requests,
        shard: config.shard,
        stateful,
        sent,
        paced_sent,
        paced_unsent: paced_unsent.len(),
        paced_allowed: paced_allowed(&target, elapsed),
        paced_share: paced_sent as f64 / sent.max(1) as f64,
        paced_per_second: paced_sent as f64 / elapsed.as_secs_f64().max(1e-9),
        timed_out: cut && config.interrupt.reason().is_none(),
        interrupted: config.interrupt.reason().map(|reason| reason.to_string()),
        elapsed,
        coverage: steering.map(),
        ..FuzzReport::default()
    };
    let mut failed = tally(&mut report, outcomes, &requests, instead);
    if !report.target_stopped_answering() {
        failed.extend(stays_up(&sender, &schemas, &redactor, config, &target, &mut ws).await);
    }
    if let Some(mut session) = ws {
        session.close().await;
    }
    report.failed_requests = failed.len();
    report.findings = findings(
        &sender,
        &schemas,
        &redactor,
        config,
        failed,
        &mut report.shrink_requests,
    )
    .await?;
    announce_end(config, &report);
    Ok(report)
}

/// What every worker of the stateless requests shares.
#[derive(Clone)]
struct Crew {
    sender: Arc<Sender>,
    schemas: Arc<SchemaSet>,
    redactor: Arc<Redactor>,
    /// This shard's requests, each with its index in the whole run.
    requests: Arc<Vec<(usize, FuzzRequest)>>,
    /// What came of each request, by its place in `requests`.
    outcomes: Arc<Mutex<Vec<Option<Assessed>>>>,
    schedule: Arc<Schedule>,
    steering: Arc<Steering>,
    /// What steering sent in place of a fresh request, by its place in `requests`.
    instead: Arc<Mutex<Vec<Option<FuzzRequest>>>>,
    interrupt: harness_runner::run::Interrupt,
    events: crate::FuzzSink,
}

impl Crew {
    /// One worker: sends the request the schedule gives it next, judges it and keeps what
    /// came of it, until the schedule is done, the run's `deadline` passes or the run is
    /// interrupted.
    async fn work(self, deadline: Instant) {
        let mut ws = None;
        loop {
            if Instant::now() > deadline || self.interrupt.reason().is_some() {
                break;
            }
            let (index, budget) = match self.schedule.next(&self.sender) {
                Next::Send(index, budget) => (index, budget),
                Next::Wait(delay) => {
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        _ = self.interrupt.fired() => {}
                    }
                    continue;
                }
                Next::Done => break,
            };
            let (number, fresh) = &self.requests[index];
            let mutated = self.steering.instead_of(fresh);
            let request = mutated.as_ref().unwrap_or(fresh);
            // A request in flight when the run stops (the breaker, a signal) is dropped, not
            // waited out: its answer could change nothing, and a silent target would hold
            // every worker for a timeout more.
            let outcome = tokio::select! {
                biased;
                outcome = execute(
                    &self.sender,
                    &self.schemas,
                    &self.redactor,
                    request,
                    *number as u64 + 1,
                    &mut ws,
                    budget,
                ) => outcome,
                _ = self.interrupt.fired() => {
                    ws = None;
                    break;
                }
            };
            self.events.emit(&judged(*number, request, &outcome));
            self.steering.observe(request, outcome.class(request));
            if mutated.is_some() {
                self.instead.lock().unwrap_or_else(PoisonError::into_inner)[index] = mutated;
            }
            self.outcomes.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(outcome);
        }
        if let Some(mut session) = ws {
            session.close().await;
        }
    }
}

/// The run's first call: a health request over HTTP, which must be answered.
async fn reach(
    sender: &Sender,
    redactor: &Redactor,
    ws: &mut Option<harness_runner::transport::ClientSession>,
) -> Result<(), FuzzError> {
    let health = health_request(TransportKind::HttpQuery);
    match sender.send(&health, 0, ws, Budget::Wait).await {
        Ok(sent) if sent.exchange.response.is_some() => Ok(()),
        Ok(sent) => {
            let message = sent
                .exchange
                .failure
                .map_or_else(|| "no answer".to_owned(), |failure| failure.message);
            Err(FuzzError::Unreachable(redactor.text(&message)))
        }
        Err(_) => Err(FuzzError::Unreachable(
            "the health call could not be sent".to_owned(),
        )),
    }
}

/// Counts each judged request into `report` (what the oracle expected, throttled,
/// unanswered) and gives back the failures, each with the request as sent (steering's in
/// place of the fresh one).
fn tally(
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
        match outcome.finding {
            None => {}
            Some(finding) if assess::is_throttled(&finding) => report.rate_limited += 1,
            Some(finding) if assess::is_unanswered(&finding) => report.unanswered += 1,
            Some(failure) => {
                let (number, fresh) = requests[index].clone();
                let request = instead[index].clone().unwrap_or(fresh);
                failed.push((request, outcome.prediction, failure, number));
            }
        }
    }
    failed
}

/// The health call again over each transport at the end: the server must still answer
/// (a target that stopped answering is not asked again).
async fn stays_up(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    config: &FuzzConfig,
    target: &Target,
    ws: &mut Option<harness_runner::transport::ClientSession>,
) -> Vec<Failed> {
    let mut failed = Vec::new();
    for transport in &config.transports {
        if *transport == TransportKind::Rest
            || (*transport == TransportKind::Ws && target.ws_url.is_none())
        {
            continue;
        }
        let request = health_request(*transport);
        let outcome = execute(
            sender,
            schemas,
            redactor,
            &request,
            u64::MAX >> 12,
            ws,
            Budget::Wait,
        )
        .await;
        if let Some(mut failure) = outcome
            .finding
            .filter(|finding| !assess::is_throttled(finding) && !assess::is_unanswered(finding))
        {
            failure.message = format!("the server did not stay up: {}", failure.message);
            failed.push((request, outcome.prediction, failure, config.requests));
        }
    }
    failed
}

/// The paced requests the target's budget allows over `elapsed`: its burst, then its rate.
fn paced_allowed(target: &Target, elapsed: std::time::Duration) -> usize {
    let limits = &target.limits;
    let allowed = f64::from(limits.transaction_log_burst)
        + limits.transaction_log_per_second * elapsed.as_secs_f64();
    allowed.floor() as usize
}

/// The event of one request judged: pass, its finding's verdict, skip when throttled, error
/// when unanswered.
fn judged<'a>(number: usize, request: &'a FuzzRequest, outcome: &Assessed) -> FuzzEvent<'a> {
    FuzzEvent::Request(RequestJudged::Judged {
        index: number,
        transport: request.transport,
        method: Cow::Borrowed(&request.method),
        verdict: match &outcome.finding {
            None => Verdict::Pass,
            Some(finding) if assess::is_throttled(finding) => Verdict::Skip,
            Some(finding) if assess::is_unanswered(finding) => Verdict::Error,
            Some(finding) => finding.verdict,
        },
    })
}

/// The events of the run's end: each finding whole, the interruption, then the report
/// whole with its durations (`collect.rs` folds it back).
fn announce_end(config: &FuzzConfig, report: &FuzzReport) {
    for finding in &report.findings {
        let what = format!(
            "{} {}, {} requests",
            finding.shrunk.transport, finding.shrunk.method, finding.occurrences
        );
        config.events.emit(&FuzzEvent::Finding(FindingFound::Found {
            clause: Cow::Borrowed(&finding.clause),
            what: Cow::Owned(what),
            message: Cow::Borrowed(&finding.message),
            found: Found::Finding(Cow::Borrowed(finding)),
        }));
    }
    for finding in &report.stateful.findings {
        let what = format!(
            "{} steps, shrunk from {}; {} sequences",
            finding.shrunk.steps.len(),
            finding.sequence.steps.len(),
            finding.occurrences
        );
        config.events.emit(&FuzzEvent::Finding(FindingFound::Found {
            clause: Cow::Borrowed(&finding.clause),
            what: Cow::Owned(what),
            message: Cow::Borrowed(&finding.message),
            found: Found::Sequence(Cow::Borrowed(finding)),
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

/// Groups failures by clause and method, then shrinks and writes the first of each group.
async fn findings(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    config: &FuzzConfig,
    failed: Vec<Failed>,
    shrink_requests: &mut usize,
) -> Result<Vec<FuzzFinding>, FuzzError> {
    // The first failure of each clause and method, with how many requests failed that way.
    let mut groups: BTreeMap<(String, String), (Failed, usize)> = BTreeMap::new();
    for failed in failed {
        let key = (failed.2.clause().to_owned(), failed.0.method.clone());
        groups
            .entry(key)
            .and_modify(|group| group.1 += 1)
            .or_insert((failed, 1));
    }
    let mut groups: Vec<(Failed, usize)> = groups.into_values().collect();
    groups.sort_by_key(|group| group.0.3);
    // All shrinking together gets one more run timeout; none once interrupted.
    let shrink_deadline = Instant::now() + config.run_timeout;
    let mut findings = Vec::new();
    if let Some(dir) = &config.out {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
            path: dir.clone(),
            source,
        })?;
    }
    for ((request, prediction, failure, first_index), occurrences) in
        groups.into_iter().take(config.max_findings)
    {
        let (shrunk, sent) = shrink::shrink(
            sender,
            schemas,
            redactor,
            &request,
            &failure,
            config.shrink_budget,
            match config.interrupt.reason() {
                Some(_) => std::time::Duration::ZERO,
                None => shrink_deadline.saturating_duration_since(Instant::now()),
            },
        )
        .await;
        *shrink_requests += sent;
        let shrunk_prediction = expect_offline(&shrunk, &prediction);
        let mut case_path = None;
        if let Some(dir) = &config.out {
            let id = format!("fuzz.s{}.r{first_index}", config.seed);
            let text = case_file(
                &id,
                &shrunk,
                &shrunk_prediction,
                failure.clause(),
                &failure.message,
                &sender.target,
            );
            case_path = Some(super::write_case_file(dir, &id, &text)?);
        }
        findings.push(FuzzFinding {
            clause: failure.clause().to_owned(),
            message: failure.message,
            first_index,
            occurrences,
            request,
            shrunk,
            case_file: case_path,
        });
    }
    Ok(findings)
}

/// The oracle's prediction of a shrunk request without sending it: the granted scope is
/// taken from the original judgement when the credentials did not change.
fn expect_offline(shrunk: &FuzzRequest, original: &Prediction) -> Prediction {
    let knowledge = rules::OracleKnowledge::default();
    match rules::expect(shrunk, &knowledge) {
        shrunk if shrunk.outcome == Outcome::Result && original.outcome == Outcome::Error => {
            original.clone()
        }
        other => other,
    }
}

/// `public/get_currencies`, which every server answers with a result.
fn health_request(transport: TransportKind) -> FuzzRequest {
    FuzzRequest {
        transport,
        method: spec::CURRENCIES_METHOD.to_owned(),
        params: Map::new(),
        auth: RequestAuth::NONE,
        raw: None,
        why: "the health call".to_owned(),
        walk: false,
        class: None,
    }
}
