//! The workers of the stateless requests: each sends the request the schedule gives it
//! next (or steering's mutation in its place), judges it, announces the verdict and keeps
//! what came of it.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use harness_model::check::{Redactor, SchemaSet, Verdict};

use crate::FuzzConfig;
use crate::FuzzRequest;
use crate::assess;
use crate::collect::{FuzzEvent, RequestJudged};
use crate::coverage::Steering;
use crate::execute::{Assessed, execute};
use crate::schedule::{Next, Schedule};
use crate::send::Sender;

/// What every worker of the stateless requests shares.
#[derive(Clone)]
pub(super) struct Crew {
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
    /// A crew for `requests`, sent in the order `schedule` gives, steered by `steering`.
    pub(super) fn new(
        sender: &Arc<Sender>,
        schemas: &Arc<SchemaSet>,
        redactor: &Arc<Redactor>,
        requests: &Arc<Vec<(usize, FuzzRequest)>>,
        schedule: &Arc<Schedule>,
        steering: &Arc<Steering>,
        config: &FuzzConfig,
    ) -> Crew {
        Crew {
            sender: Arc::clone(sender),
            schemas: Arc::clone(schemas),
            redactor: Arc::clone(redactor),
            requests: Arc::clone(requests),
            outcomes: Arc::new(Mutex::new(vec![None; requests.len()])),
            schedule: Arc::clone(schedule),
            steering: Arc::clone(steering),
            instead: Arc::new(Mutex::new(vec![None; requests.len()])),
            interrupt: config.interrupt.clone(),
            events: config.events.clone(),
        }
    }

    /// Runs `concurrency` workers until each is done.
    pub(super) async fn send_all(&self, concurrency: usize, deadline: Instant) {
        let workers: Vec<_> = (0..concurrency.max(1))
            .map(|_| tokio::spawn(self.clone().work(deadline)))
            .collect();
        for worker in workers {
            // A worker panicking is our bug; its requests stay unjudged and are reported below.
            let _ = worker.await;
        }
    }

    /// What came of each request and what steering sent in place of a fresh one, by place
    /// in `requests`, taken out of the crew.
    pub(super) fn take_outcomes(&self) -> (Vec<Option<Assessed>>, Vec<Option<FuzzRequest>>) {
        let outcomes: Vec<Option<Assessed>> =
            std::mem::take(&mut *self.outcomes.lock().unwrap_or_else(PoisonError::into_inner));
        let instead: Vec<Option<FuzzRequest>> =
            std::mem::take(&mut *self.instead.lock().unwrap_or_else(PoisonError::into_inner));
        (outcomes, instead)
    }

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
