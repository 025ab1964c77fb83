//! The runner: runs cases over transports against a target and reports each outcome as an
//! [`Event`], its only output ([`run_until`]); a [`RunReport`] is the fold of those events
//! ([`run`], `harness_model::events::RunCollector`), whoever reads them.
//!
//! Each (case, transport) pair is one execution with its own session (HTTP client state,
//! WebSocket connection, tokens and captures). Executions run in parallel up to
//! `concurrency`; cases marked `serial` run alone afterwards, since they change state other
//! cases may see. Every request has a timeout and the whole run has one too.
//!
//! Executions that call a paced method (`spec::is_paced`) run in a lane of their account
//! ([`PACED_LANE`] at once per account, started first): they wait for the pacing budget
//! without holding one of the `concurrency` slots, so the unpaced executions go on while the
//! budget fills, and one account's waits do not hold another's executions back. Before the
//! run, [`paced_plan`] counts the paced calls, puts the executions that may go as any
//! account on the one with the most room, and, with a paced budget, leaves out with the
//! reason the executions that do not fit.
//!
//! A run can be stopped early by an [`Interrupt`] (a signal, the run timeout, or the
//! [`Breaker`] when the target stops answering): it schedules nothing more, gives
//! executions in flight a short grace, and reports every execution that did not run or
//! finish as a skip saying so, never as a pass. A target that refuses connections is known
//! before anything is scheduled: the run's first call fails and the run ends at once.

mod answer;
mod arrivals;
mod auth;
mod bindings;
mod breaker;
mod budget;
pub(crate) mod exec;
mod in_flight;
mod interrupt;
mod notifications;
mod order_read;
pub(crate) mod pace;
mod paced_cache;
mod paced_plan;
mod passes;
mod race;
mod result;
mod schedule;
mod send;
mod session_slots;
mod skip;
pub mod step_call;
mod template;
mod walk;
mod window;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::transport::{self, Dialer, HttpClient};

use harness_model::case::Case;
use harness_model::check::{Catalog, Redactor, SchemaSet, Side, Verdict};
use harness_model::target_file::Target;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportKind;

pub use breaker::{Breaker, DEFAULT_LIMIT};
pub use interrupt::{
    COULD_NOT_RUN, GRACE, Interrupt, Interruption, NOT_RUN, could_not_run_reason, stopped_answering,
};
pub use paced_plan::{PacedPlan, PlannedExecution, paced_plan};
pub use schedule::PACED_LANE;

use harness_model::events::{Event, EventSink, collecting, folded};
use harness_model::results::{CaseResult, RunReport};

use schedule::{cut, first_call, is_long, is_paced};

/// How to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The server under test.
    pub target: Target,
    /// Cases to run.
    pub cases: Vec<Case>,
    /// The clause catalog.
    pub catalog: Arc<Catalog>,
    /// Result schemas.
    pub schemas: Arc<SchemaSet>,
    /// Only these transports (all when `None`).
    pub transports: Option<Vec<TransportKind>>,
    /// Only cases whose id contains this text.
    pub filter: Option<String>,
    /// Executions at once.
    pub concurrency: usize,
    /// Per-request limits.
    pub limits: transport::RequestLimits,
    /// The whole run's limit.
    pub run_timeout: Duration,
    /// Requests in a row without an answer that stop the run ([`Breaker`]; 0: never).
    pub no_answer_limit: usize,
    /// Walk the whole history in every walk with a `window` (`harness run --full-walks`);
    /// by default such a walk reads a window of a few pages.
    pub full_walks: bool,
    /// The time the run's paced calls may take at the target's limits: executions that do
    /// not fit are skipped with the reason ([`paced_plan`]); `None`: no cap.
    pub paced_budget: Option<Duration>,
    /// The target is the embedded reference server: a race also reads when each copy
    /// arrived there (its reference-only `/reference/arrivals`) and reports the arrival
    /// spread. Never set for a target file: a real target is not asked for it.
    pub reference_arrivals: bool,
}

impl RunConfig {
    /// A run of `cases` against `target`: over every transport, unfiltered, one execution
    /// at a time, with the default request limits and ten minutes for the whole run. Set
    /// other values by struct update: `RunConfig { concurrency: 8, ..RunConfig::new(...) }`.
    pub fn new(
        target: Target,
        cases: Vec<Case>,
        catalog: Arc<Catalog>,
        schemas: Arc<SchemaSet>,
    ) -> RunConfig {
        RunConfig {
            target,
            cases,
            catalog,
            schemas,
            transports: None,
            filter: None,
            concurrency: 1,
            limits: transport::RequestLimits::default(),
            run_timeout: Duration::from_secs(600),
            no_answer_limit: DEFAULT_LIMIT,
            full_walks: false,
            paced_budget: None,
            reference_arrivals: false,
        }
    }
}

/// Why a run could not be carried out at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No case matched the filters.
    #[error("no case matched the filters")]
    NothingSelected,
    /// Every execution failed to reach the target.
    #[error("target unreachable: {0}")]
    Unreachable(TransportError),
    /// The HTTP client could not be built (TLS roots, CA file or proxy settings).
    #[error("{0}")]
    Client(TransportError),
}

/// Shared by every execution of a run.
pub struct Shared {
    pub(crate) target: Target,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) schemas: Arc<SchemaSet>,
    pub(crate) http: HttpClient,
    /// TLS and proxies, shared by the HTTP client and every WebSocket session.
    pub(crate) dialer: Dialer,
    pub(crate) limits: transport::RequestLimits,
    pub(crate) pacer: pace::Pacer,
    /// Stops the run when the target stops answering.
    pub(crate) breaker: Breaker,
    pub(crate) redactor: Redactor,
    /// Positions drawn so far from the target's pool (`{{fixtures.position}}`), by
    /// executions the run did not plan a position for.
    pub(crate) positions_drawn: std::sync::atomic::AtomicUsize,
    /// The position each closing execution of the run's plan closes ([`plan_positions`]).
    pub(crate) positions: std::collections::HashMap<(String, TransportKind), String>,
    /// The paced answers of the run, each sent once.
    pub(crate) paced_answers: paced_cache::PacedAnswers,
    /// Walks read the whole history, not a window.
    pub(crate) full_walks: bool,
    /// Executions the paced budget leaves out, with the reason.
    pub(crate) over_budget: std::collections::HashMap<(String, TransportKind), String>,
    /// The account each execution of a case with `account = "any"` goes as (`main` when
    /// the run did not plan it).
    pub(crate) accounts: std::collections::HashMap<(String, TransportKind), String>,
    /// Read the reference server's arrivals after a race (`RunConfig::reference_arrivals`).
    pub(crate) reference_arrivals: bool,
    /// One permit: the executions that open sessions on a target that counts its session
    /// slots go one at a time (`session_slots.rs`).
    pub(crate) session_lane: tokio::sync::Semaphore,
    /// Answer bytes every execution kept whole so far (see `budget.rs`).
    pub(crate) recorded_bytes: std::sync::atomic::AtomicUsize,
    /// The latest timestamp a `client_signature` without a nonce was signed with: each
    /// one takes a millisecond of its own (`auth.rs`).
    pub(crate) last_nonceless_ms: std::sync::atomic::AtomicU64,
}

impl Shared {
    /// What the executions of one run against `target` share; fails when the TLS settings
    /// of the target file do not build a client.
    pub fn new(
        target: Target,
        catalog: Arc<Catalog>,
        schemas: Arc<SchemaSet>,
        limits: transport::RequestLimits,
        breaker: Breaker,
    ) -> Result<Shared, RunError> {
        let dialer = Dialer::new(&target.tls).map_err(RunError::Client)?;
        let breaker = breaker.for_urls(&target.base_url, target.direct_access_url.as_deref());
        Ok(Shared {
            http: HttpClient::new(limits, &dialer).map_err(RunError::Client)?,
            dialer,
            pacer: pace::Pacer::new(&target.limits),
            breaker,
            redactor: Redactor::new(target.secrets()),
            catalog,
            schemas,
            target,
            limits,
            positions_drawn: std::sync::atomic::AtomicUsize::new(0),
            positions: std::collections::HashMap::new(),
            paced_answers: paced_cache::PacedAnswers::default(),
            full_walks: false,
            over_budget: std::collections::HashMap::new(),
            accounts: std::collections::HashMap::new(),
            reference_arrivals: false,
            session_lane: tokio::sync::Semaphore::new(1),
            recorded_bytes: std::sync::atomic::AtomicUsize::new(0),
            last_nonceless_ms: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// A position of the target's pool no other execution of the run has closed: a server
    /// may refuse to close a position twice (SPEC.md 4.12 does not say), so every closing
    /// execution needs its own.
    pub(super) fn draw_position(
        &self,
        case: &str,
        transport: TransportKind,
    ) -> Result<String, PositionError> {
        let pool = self.target.fixtures.position_pool();
        if !self.positions.is_empty() {
            return self
                .positions
                .get(&(case.to_owned(), transport))
                .cloned()
                .ok_or(PositionError::PlannedForOthers { pool: pool.len() });
        }
        let index = self
            .positions_drawn
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        pool.get(index)
            .map(|&name| name.to_owned())
            .ok_or(PositionError::TakenByEarlier { pool: pool.len() })
    }
}

/// Why an execution that closes a position has none of the target's pool to close.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PositionError {
    /// The planned run gave every position to other executions first.
    #[error(
        "each execution that closes a position needs its own, and the {pool} of the target file went to other cases first (one transport of every closing case before a second of any): list more in [fixtures] positions"
    )]
    PlannedForOthers {
        /// The positions the target file lists.
        pool: usize,
    },
    /// Earlier executions drew every position.
    #[error(
        "each execution that closes a position needs its own, and the {pool} of the target file were taken by earlier ones: list more in [fixtures] positions"
    )]
    TakenByEarlier {
        /// The positions the target file lists.
        pool: usize,
    },
}

/// The position of the target's pool each closing execution of `plan` closes: every
/// closing case's first transport before any case's second, so that a short pool (a
/// server with few open positions) checks every closing rule once before it checks one
/// twice. Executions past the pool get none, and are skipped with the reason.
fn plan_positions(
    plan: &[(Arc<Case>, TransportKind)],
    pool: &[&str],
) -> std::collections::HashMap<(String, TransportKind), String> {
    let mut closing: Vec<(usize, usize, &Arc<Case>, TransportKind)> = Vec::new();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (order, (case, transport)) in plan.iter().enumerate() {
        if case.needs.fixtures.iter().any(|name| name == "position") {
            let rank = seen.entry(case.id.as_str()).or_insert(0);
            closing.push((*rank, order, case, *transport));
            *rank += 1;
        }
    }
    closing.sort_by_key(|(rank, order, ..)| (*rank, *order));
    closing
        .into_iter()
        .zip(pool)
        .map(|((_, _, case, transport), position)| {
            ((case.id.clone(), transport), (*position).to_owned())
        })
        .collect()
}

/// The executions a config selects, in order.
pub fn plan(config: &RunConfig) -> Vec<(Arc<Case>, TransportKind)> {
    select(
        config.cases.iter().cloned(),
        config.filter.as_deref(),
        config.transports.as_deref(),
    )
}

/// The executions of `cases` whose id contains `filter` over the `transports` given (every
/// transport of a case when `None`), in order: a case's transports in the order it lists
/// them.
pub fn select(
    cases: impl IntoIterator<Item = Case>,
    filter: Option<&str>,
    transports: Option<&[TransportKind]>,
) -> Vec<(Arc<Case>, TransportKind)> {
    let mut plan = Vec::new();
    for case in cases {
        if filter.is_some_and(|filter| !case.id.contains(filter)) {
            continue;
        }
        let case = Arc::new(case);
        for &transport in &case.transports {
            if transports.is_some_and(|only| !only.contains(&transport)) {
                continue;
            }
            plan.push((case.clone(), transport));
        }
    }
    plan
}

/// Runs the selected cases and returns their report: the fold of the events the run sent
/// to `events` ([`run_until`]), which see them too.
pub async fn run(config: RunConfig, events: EventSink) -> Result<RunReport, RunError> {
    let (sink, collector) = collecting(events);
    run_until(config, Interrupt::new(), sink).await?;
    // A run that returns Ok has announced its start and its end.
    Ok(folded(&collector).expect("a run that returns Ok announced its start and its end"))
}

/// Runs the selected cases until they are done or `interrupt` fires (the run timeout fires
/// it too): then nothing more starts, executions in flight get [`GRACE`], and every
/// execution that did not run or finish is a skip whose message starts with [`NOT_RUN`].
///
/// Everything the run finds goes to `events`, its only output: its start, each
/// execution's result, an interruption, its end. A run the harness could not carry out
/// (an unreachable target, a client that could not be built) still sends its start, the
/// executions it attempted and an end whose reason starts with [`COULD_NOT_RUN`], then
/// returns the error; only [`RunError::NothingSelected`] sends nothing.
pub async fn run_until(
    config: RunConfig,
    interrupt: Interrupt,
    events: EventSink,
) -> Result<(), RunError> {
    let started = Instant::now();
    let plan = plan(&config);
    if plan.is_empty() {
        return Err(RunError::NothingSelected);
    }
    let run_timeout = config.run_timeout;
    let (target_name, secrets) = (config.target.name.clone(), config.target.secrets());
    let (shared, lanes) = match shared_for(config, &plan, &interrupt) {
        Ok(built) => built,
        Err(error) => {
            let redactor = Redactor::new(secrets);
            events.emit(&Event::started(
                &target_name,
                plan.len(),
                Side::Server,
                &redactor,
            ));
            return Err(could_not_run(error, &[], started, &events));
        }
    };
    let redactor = shared.redactor.clone();
    // Beside the executions, not before them: a silent target holds it as long as any.
    let first = plan
        .iter()
        .any(|(_, transport)| *transport != TransportKind::Ws)
        .then(|| tokio::spawn(first_call(shared.clone(), interrupt.clone())));
    events.emit(&Event::started(
        &shared.target.name,
        plan.len(),
        Side::Server,
        &redactor,
    ));
    let timer = {
        let interrupt = interrupt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(run_timeout).await;
            interrupt.fire(Interruption::RunTimeout(run_timeout));
        })
    };
    let mut results = execute_plan(&shared, plan, &lanes, &interrupt, &events).await;
    timer.abort();
    results.sort_by_key(|(index, _)| *index);
    let results: Vec<Ended> = results.into_iter().map(|(_, ended)| ended).collect();
    if let Some(error) = refused(first, &results, &redactor).await {
        return Err(could_not_run(error, &results, started, &events));
    }
    let interrupted = interruption(&interrupt, &results);
    if let Some(reason) = &interrupted {
        events.emit(&Event::interrupted(reason));
    }
    events.emit(&Event::finished_with(
        results.iter().map(|ended| ended.verdict),
        started.elapsed(),
        interrupted.as_deref(),
    ));
    Ok(())
}

/// What the run keeps of an execution once it has announced the result: enough to end the
/// run (its counts, whether the target was reached, whether it ran), not the exchanges,
/// which the reporters hold.
struct Ended {
    verdict: Verdict,
    /// Its message starts with [`NOT_RUN`].
    not_run: bool,
    /// The first failure of its exchanges, if one failed.
    failure: Option<TransportError>,
}

impl Ended {
    fn of(result: &CaseResult) -> Ended {
        Ended {
            verdict: result.verdict,
            not_run: result.message.starts_with(NOT_RUN),
            failure: result
                .exchanges
                .iter()
                .find_map(|exchange| exchange.failure.clone()),
        }
    }
}

/// The run's first call, if it could not connect, or else the connection failure of a
/// run none of whose executions got further ([`unreachable`]), redacted.
async fn refused(
    first: Option<tokio::task::JoinHandle<Option<TransportError>>>,
    results: &[Ended],
    redactor: &Redactor,
) -> Option<RunError> {
    let refused = match first {
        Some(first) if first.is_finished() => first.await.ok().flatten(),
        Some(first) => {
            first.abort();
            None
        }
        None => None,
    };
    if let Some(failure) = refused {
        return Some(RunError::Unreachable(failure));
    }
    // The failed request's URL may carry a client secret in its query string.
    unreachable(results).map(|failure| {
        RunError::Unreachable(TransportError {
            message: redactor.text(&failure.message),
            ..failure
        })
    })
}

/// Ends the stream of a run the harness could not carry out: the reason, then the end,
/// whose reason says so ([`COULD_NOT_RUN`]) over the executions it attempted; gives the
/// error back.
fn could_not_run(
    error: RunError,
    results: &[Ended],
    started: Instant,
    events: &EventSink,
) -> RunError {
    let reason = format!("{COULD_NOT_RUN}{error}");
    events.emit(&Event::interrupted(&reason));
    events.emit(&Event::finished_with(
        results.iter().map(|ended| ended.verdict),
        started.elapsed(),
        Some(&reason),
    ));
    error
}

/// What the executions of a run share (target, breaker, pacer, positions, the paced plan's
/// accounts and skips), and the lanes they wait in.
fn shared_for(
    config: RunConfig,
    plan: &[(Arc<Case>, TransportKind)],
    interrupt: &Interrupt,
) -> Result<(Arc<Shared>, Lanes), RunError> {
    let breaker = Breaker::new(
        config.no_answer_limit,
        config.limits.request_timeout,
        interrupt.clone(),
    );
    let mut paced = paced_plan(&config);
    if config.paced_budget.is_none() {
        paced.skipped.clear();
    }
    let lanes = Lanes::new(config.concurrency, std::mem::take(&mut paced.lanes));
    let positions = plan_positions(plan, &config.target.fixtures.position_pool());
    let shared = Arc::new(Shared {
        positions,
        full_walks: config.full_walks,
        over_budget: paced.skipped,
        accounts: paced.accounts,
        paced_answers: paced_cache::PacedAnswers::shared(),
        reference_arrivals: config.reference_arrivals,
        ..Shared::new(
            config.target,
            config.catalog,
            config.schemas,
            config.limits,
            breaker,
        )?
    });
    Ok((shared, lanes))
}

/// Where executions wait for their turn: the `--concurrency` slots, and one lane of
/// [`PACED_LANE`] per account for the executions calling the paced method, so an
/// account's budget fills while another's executions wait and none holds a slot.
struct Lanes {
    slots: Arc<Semaphore>,
    paced_account: HashMap<(String, TransportKind), String>,
    paced: std::sync::Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Lanes {
    fn new(concurrency: usize, paced_account: HashMap<(String, TransportKind), String>) -> Lanes {
        Lanes {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            paced_account,
            paced: std::sync::Mutex::default(),
        }
    }

    /// The lane an execution waits in.
    fn of(&self, case: &Case, transport: TransportKind) -> Arc<Semaphore> {
        if !is_paced(case) {
            return self.slots.clone();
        }
        let account = self
            .paced_account
            .get(&(case.id.clone(), transport))
            .cloned()
            .unwrap_or_default();
        let mut paced = self
            .paced
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        paced
            .entry(account)
            .or_insert_with(|| Arc::new(Semaphore::new(PACED_LANE)))
            .clone()
    }
}

/// Runs every execution of `plan`: the parallel ones side by side in their lanes, then the
/// serial ones one at a time; each result with its index in the plan.
async fn execute_plan(
    shared: &Arc<Shared>,
    plan: Vec<(Arc<Case>, TransportKind)>,
    lanes: &Lanes,
    interrupt: &Interrupt,
    events: &EventSink,
) -> Vec<(usize, Ended)> {
    let (serial, mut parallel): (Vec<_>, Vec<_>) = plan
        .into_iter()
        .enumerate()
        .partition(|(_, (case, _))| case.serial);
    // Paced executions start first, in their lane, so the budget is in use from the start;
    // then long chains of requests (walks, rate probes), so the run does not end waiting
    // on one that started last; results are put back in plan order by the caller.
    parallel.sort_by_key(|(_, (case, _))| (!is_paced(case), !is_long(case)));
    let mut handles = Vec::new();
    for (index, (case, transport)) in parallel {
        let lane = lanes.of(&case, transport);
        let (shared, events) = (shared.clone(), events.clone());
        let interrupt = interrupt.clone();
        handles.push(tokio::spawn(async move {
            let permit = tokio::select! {
                biased;
                reason = interrupt.fired() => Err(reason),
                permit = lane.acquire_owned() => Ok(permit),
            };
            let result = match permit {
                Ok(_permit) => execute_interruptible(&shared, case, transport, &interrupt).await,
                Err(reason) => interrupt::not_run(&case, transport, &reason, false),
            };
            events.emit(&Event::case(index, &result));
            (index, Ended::of(&result))
        }));
    }
    let mut results = Vec::new();
    for handle in handles {
        if let Ok(pair) = handle.await {
            results.push(pair);
        }
    }
    for (index, (case, transport)) in serial {
        let result = execute_interruptible(shared, case, transport, interrupt).await;
        events.emit(&Event::case(index, &result));
        results.push((index, Ended::of(&result)));
    }
    results
}

/// The connection failure of a run none of whose executions got further: every result an
/// error or a skip, at least one error, and a request that could not connect. A target
/// that was reached and gave no answer (the breaker's "stopped answering", or a few
/// time-outs) keeps its report, which says so.
fn unreachable(results: &[Ended]) -> Option<TransportError> {
    let reached_nothing = results
        .iter()
        .all(|ended| ended.verdict == Verdict::Error || ended.verdict == Verdict::Skip)
        && results.iter().any(|ended| ended.verdict == Verdict::Error);
    if !reached_nothing {
        return None;
    }
    results
        .iter()
        .find_map(|ended| ended.failure.clone())
        .filter(|failure| failure.kind == harness_protocol::wire::TransportErrorKind::Connect)
}

/// Why the run was cut short, if it was: an interrupt fired after the last execution ended
/// (the timer racing the end) stopped nothing, but the breaker's reason stays even then
/// (the last requests went unanswered).
fn interruption(interrupt: &Interrupt, results: &[Ended]) -> Option<String> {
    interrupt
        .reason()
        .filter(|reason| reason.is_stopped_answering() || results.iter().any(|ended| ended.not_run))
        .map(|reason| reason.to_string())
}

/// One execution, unless the interrupt has fired; cut [`GRACE`] after it fires.
async fn execute_interruptible(
    shared: &Arc<Shared>,
    case: Arc<Case>,
    transport: TransportKind,
    interrupt: &Interrupt,
) -> CaseResult {
    if let Some(reason) = interrupt.reason() {
        return interrupt::not_run(&case, transport, &reason, false);
    }
    tokio::select! {
        result = exec::execute(shared, &case, transport) => result,
        reason = cut(interrupt) => interrupt::not_run(&case, transport, &reason, true),
    }
}

/// Runs one case over one transport (used by the `cargo test` trials).
pub async fn run_one(
    config: &RunConfig,
    case: &Case,
    transport: TransportKind,
) -> Result<CaseResult, RunError> {
    Ok(Runner::new(config)?.execute(case, transport).await)
}

/// Executions one at a time, as a caller schedules them (the `cargo test` trials of
/// `conformance`): one HTTP client, one pacer and one redactor shared by all, so
/// pacing holds across them.
#[derive(Clone)]
pub struct Runner {
    shared: Arc<Shared>,
}

impl Runner {
    /// A runner for `config`'s target (its cases, filter and transports are not used).
    pub fn new(config: &RunConfig) -> Result<Runner, RunError> {
        Ok(Runner {
            shared: Arc::new(Shared {
                full_walks: config.full_walks,
                ..Shared::new(
                    config.target.clone(),
                    config.catalog.clone(),
                    config.schemas.clone(),
                    config.limits,
                    // Executions one at a time, scheduled by the caller: nothing to stop.
                    Breaker::new(0, config.limits.request_timeout, Interrupt::new()),
                )?
            }),
        })
    }

    /// Runs one case over one transport.
    pub async fn execute(&self, case: &Case, transport: TransportKind) -> CaseResult {
        exec::execute(&self.shared, case, transport).await
    }

    /// Knows the target's secrets and every token the executions saw.
    pub fn redactor(&self) -> &Redactor {
        &self.shared.redactor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, needs_position: bool) -> Arc<Case> {
        let needs = if needs_position {
            "needs = { fixtures = [\"position\"] }\n"
        } else {
            ""
        };
        let text = format!(
            "id = \"{id}\"\ntitle = \"t\"\nclauses = [\"x\"]\n{needs}[[step]]\ncall = \"private/close_position\"\n"
        );
        Arc::new(toml::from_str(&text).expect("test case parses"))
    }

    #[test]
    fn a_short_pool_of_positions_gives_every_closing_case_one_before_any_a_second() {
        let (first, other, last) = (case("a", true), case("b", false), case("c", true));
        let plan = [
            (first.clone(), TransportKind::HttpQuery),
            (first.clone(), TransportKind::Ws),
            (other, TransportKind::HttpQuery),
            (last.clone(), TransportKind::HttpQuery),
            (last, TransportKind::Ws),
        ];
        let positions = plan_positions(&plan, &["P1", "P2", "P3"]);
        let at = |id: &str, transport| {
            positions
                .get(&(id.to_owned(), transport))
                .map(String::as_str)
        };
        assert_eq!(at("a", TransportKind::HttpQuery), Some("P1"));
        assert_eq!(at("c", TransportKind::HttpQuery), Some("P2"));
        assert_eq!(at("a", TransportKind::Ws), Some("P3"));
        assert_eq!(at("c", TransportKind::Ws), None);
        assert_eq!(at("b", TransportKind::HttpQuery), None);
    }
}
