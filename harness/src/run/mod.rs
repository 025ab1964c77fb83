//! The runner: runs cases over transports against a target and reports each outcome as an
//! [`Event`], collecting them into a [`RunReport`].
//!
//! Each (case, transport) pair is one execution with its own session (HTTP client state,
//! WebSocket connection, tokens and captures). Executions run in parallel up to
//! `concurrency`; cases marked `serial` run alone afterwards, since they change state other
//! cases may see. Every request has a timeout and the whole run has one too.

mod auth;
mod exec;
mod pace;
mod send;
mod skip;
mod template;
mod walk;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Semaphore;

use crate::case::{Case, TransportKind};
use crate::check::{Catalog, Finding, Redactor, SchemaSet, Side, Verdict};
use crate::target_file::Target;
use crate::transport::{self, Dialer, Exchange, HttpClient, TransportError};

/// How to run.
#[derive(Clone, Debug)]
pub struct Config {
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
}

/// What the runner reports as it goes.
#[derive(Clone, Debug)]
pub enum Event {
    /// The run starts with this many executions.
    Started {
        /// Number of (case, transport) executions.
        total: usize,
    },
    /// One execution finished.
    Finished(Box<CaseResult>),
}

/// The outcome of one case over one transport.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Case id.
    pub case: String,
    /// Case title.
    pub title: String,
    /// The case file.
    pub path: String,
    /// The transport.
    pub transport: TransportKind,
    /// The verdict.
    pub verdict: Verdict,
    /// The clauses concerned: those of the failing findings, else the case's.
    pub clauses: Vec<String>,
    /// Every clause the case checks (coverage counts these).
    pub checks: Vec<String>,
    /// One line: the first finding, the skip reason, or notes.
    pub message: String,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// Observations that are not findings (e.g. an error code SPEC.md does not give).
    pub notes: Vec<String>,
    /// The wire exchanges, in order (unredacted: reports redact them).
    pub exchanges: Vec<Exchange>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
}

/// The whole run.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Target name.
    pub target: String,
    /// Every result, in case and transport order.
    pub results: Vec<CaseResult>,
    /// Wall time of the run.
    pub duration: Duration,
    /// Knows every secret of the target and every token seen.
    pub redactor: Redactor,
    /// Which side the run judges: the server (`harness run`) or a client (`harness judge`).
    pub side: Side,
}

impl RunReport {
    /// Count of results with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.results
            .iter()
            .filter(|result| result.verdict == verdict)
            .count()
    }

    /// Results that executed (neither skipped nor errored).
    pub fn executed(&self) -> usize {
        self.results
            .iter()
            .filter(|result| !matches!(result.verdict, Verdict::Skip | Verdict::Error))
            .count()
    }
}

/// Why a run could not be carried out at all.
#[derive(Debug)]
pub enum RunError {
    /// No case matched the filters.
    NothingSelected,
    /// Every execution failed to reach the target.
    Unreachable(TransportError),
    /// The HTTP client could not be built (TLS roots, CA file or proxy settings).
    Client(TransportError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NothingSelected => write!(f, "no case matched the filters"),
            RunError::Unreachable(error) => write!(f, "target unreachable: {error}"),
            RunError::Client(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Shared by every execution of a run.
pub(crate) struct Shared {
    pub(crate) target: Target,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) schemas: Arc<SchemaSet>,
    pub(crate) http: HttpClient,
    /// TLS and proxies, shared by the HTTP client and every WebSocket session.
    pub(crate) dialer: Dialer,
    pub(crate) limits: transport::RequestLimits,
    pub(crate) pacer: pace::Pacer,
    pub(crate) redactor: Redactor,
}

/// The executions a config selects, in order.
pub fn plan(config: &Config) -> Vec<(Arc<Case>, TransportKind)> {
    let mut plan = Vec::new();
    for case in &config.cases {
        if config
            .filter
            .as_ref()
            .is_some_and(|filter| !case.id.contains(filter.as_str()))
        {
            continue;
        }
        let case = Arc::new(case.clone());
        for &transport in &case.transports {
            if config
                .transports
                .as_ref()
                .is_some_and(|only| !only.contains(&transport))
            {
                continue;
            }
            plan.push((case.clone(), transport));
        }
    }
    plan
}

/// Runs the selected cases and returns every result.
pub async fn run(
    config: Config,
    on_event: impl Fn(&Event) + Send + Sync + 'static,
) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let plan = plan(&config);
    if plan.is_empty() {
        return Err(RunError::NothingSelected);
    }
    let redactor = Redactor::new(config.target.secrets());
    let dialer = Dialer::new(&config.target.tls).map_err(RunError::Client)?;
    let shared = Arc::new(Shared {
        http: HttpClient::new(config.limits, &dialer).map_err(RunError::Client)?,
        dialer,
        pacer: pace::Pacer::new(&config.target.limits),
        target: config.target,
        catalog: config.catalog,
        schemas: config.schemas,
        limits: config.limits,
        redactor: redactor.clone(),
    });
    let on_event = Arc::new(on_event);
    on_event(&Event::Started { total: plan.len() });
    let (serial, parallel): (Vec<_>, Vec<_>) = plan
        .into_iter()
        .enumerate()
        .partition(|(_, (case, _))| case.serial);
    let semaphore = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let deadline = tokio::time::Instant::now() + config.run_timeout;
    let mut handles = Vec::new();
    for (index, (case, transport)) in parallel {
        let (shared, semaphore, on_event) = (shared.clone(), semaphore.clone(), on_event.clone());
        handles.push(tokio::spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let result = execute_bounded(&shared, case, transport, deadline).await;
            on_event(&Event::Finished(Box::new(result.clone())));
            (index, result)
        }));
    }
    let mut results = Vec::new();
    for handle in handles {
        if let Ok(pair) = handle.await {
            results.push(pair);
        }
    }
    for (index, (case, transport)) in serial {
        let result = execute_bounded(&shared, case, transport, deadline).await;
        on_event(&Event::Finished(Box::new(result.clone())));
        results.push((index, result));
    }
    results.sort_by_key(|(index, _)| *index);
    let results: Vec<CaseResult> = results.into_iter().map(|(_, result)| result).collect();
    let unreachable = results
        .iter()
        .all(|result| result.verdict == Verdict::Error || result.verdict == Verdict::Skip)
        && results
            .iter()
            .any(|result| result.verdict == Verdict::Error);
    if unreachable
        && let Some(failure) = results
            .iter()
            .flat_map(|result| &result.exchanges)
            .find_map(|exchange| exchange.failure.clone())
    {
        // The failed request's URL may carry a client secret in its query string.
        return Err(RunError::Unreachable(TransportError {
            message: redactor.text(&failure.message),
            ..failure
        }));
    }
    Ok(RunReport {
        target: shared.target.name.clone(),
        results,
        duration: started.elapsed(),
        redactor,
        side: Side::Server,
    })
}

async fn execute_bounded(
    shared: &Arc<Shared>,
    case: Arc<Case>,
    transport: TransportKind,
    deadline: tokio::time::Instant,
) -> CaseResult {
    let started = Instant::now();
    match tokio::time::timeout_at(deadline, exec::execute(shared, &case, transport)).await {
        Ok(result) => result,
        Err(_) => exec::error_result(
            &case,
            transport,
            "the run timeout expired before this case finished".to_owned(),
            Vec::new(),
            started,
        ),
    }
}

/// Runs one case over one transport (used by the `cargo test` trials).
pub async fn run_one(
    config: &Config,
    case: &Case,
    transport: TransportKind,
) -> Result<CaseResult, RunError> {
    let dialer = Dialer::new(&config.target.tls).map_err(RunError::Client)?;
    let shared = Shared {
        http: HttpClient::new(config.limits, &dialer).map_err(RunError::Client)?,
        dialer,
        pacer: pace::Pacer::new(&config.target.limits),
        target: config.target.clone(),
        catalog: config.catalog.clone(),
        schemas: config.schemas.clone(),
        limits: config.limits,
        redactor: Redactor::new(config.target.secrets()),
    };
    Ok(exec::execute(&shared, case, transport).await)
}
