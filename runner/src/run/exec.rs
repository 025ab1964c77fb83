//! One execution: a case's steps over one transport, turning each answer into findings.
//!
//! This file holds the step loop: a step's templates are resolved (`bindings.rs`: the
//! execution's captures, fixtures and accounts), its authentication applied (`auth.rs`),
//! its request sent and recorded (`send.rs`) over its transport and connection, its answer
//! checked ([`check::answer`]) and its captures kept for later steps. Walks and probes are
//! in `walk.rs`; whether the execution runs at all, in `skip.rs`; the passes over the options
//! that expired out of the money, in `passes.rs`; pacing in `pace.rs`. The
//! first step with a failing finding ends the execution, since later steps usually build
//! on its answer; only `always` steps (clean-up) run after it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::Value;

use super::Shared;
use super::budget::RecordBudget;
use super::pace;
use super::result::{error_result, finish};
use super::skip::skip_reason;
use super::template;
use crate::transport::{ClientSession, HttpClient, Outgoing, WsSession};
use harness_model::case::{Case, Step, StepKind};
use harness_model::check::{self, Finding, Matcher, Outcome, ParsedAnswer, Required, Verdict};
use harness_model::results::CaseResult;
use harness_model::target_file::ExpiredOption;
use harness_protocol::auth::clock::Clock;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportKind;

/// Why an execution stops early.
#[derive(Debug)]
pub enum Stop {
    /// A failing finding was recorded.
    Failed,
    /// The harness could not go on (unreachable target, broken template).
    Error(String),
    /// The rest of the case means nothing against this target (e.g. a refusal check on a
    /// token the server granted more than was asked): the execution is skipped.
    Skip(String),
    /// The rule held early: a step whose refusal SPEC.md allows was refused
    /// (`refusal_ends_case`), so the later steps, which check what a result granted, do not
    /// run. A note says so; the execution's verdict comes from its findings.
    Held,
}

impl From<template::TemplateError> for Stop {
    /// A template that cannot be resolved stops the execution with its message.
    fn from(error: template::TemplateError) -> Stop {
        Stop::Error(error.to_string())
    }
}

/// The state of one execution.
pub struct Execution<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) case: &'a Case,
    pub(crate) transport: TransportKind,
    /// The client side: HTTP handle, WebSocket, logins, signing.
    pub(super) session: ClientSession,
    /// The named connections of the steps that ask for one (`connection`); the session
    /// holds the one in use.
    pub(super) connections: BTreeMap<String, NamedConnection>,
    pub(super) next_id: u64,
    pub(super) captures: BTreeMap<String, Value>,
    pub(super) last_nonce: Option<String>,
    /// `{{unique}}`: a word of this execution alone, for names a server may hold unique
    /// (a session name) when executions or runs go side by side; made on first use, and
    /// redacted, so snapshots stay the same from run to run.
    pub(super) unique: std::cell::OnceCell<String>,
    /// The position this execution may close (`{{fixtures.position}}`).
    pub(super) position: Option<String>,
    /// The option that expired out of the money the steps check in this pass
    /// (`{{fixtures.expired_otm_option.*}}`): the steps run once per option of the pool.
    pub(super) expired_option: Option<ExpiredOption>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) notes: Vec<String>,
    /// Clauses whose check was left out (a matcher on a field the target file does not
    /// name): the execution does not cover them, whatever the case lists.
    pub(super) unchecked: BTreeSet<String>,
    pub(crate) exchanges: Vec<Exchange>,
    /// Answer bytes kept in `exchanges` so far.
    pub(super) budget: RecordBudget,
    /// Whether answers are checked against the steps' expectations (false for the
    /// fuzzers' steps, `step_call.rs`).
    pub(super) judging: bool,
    /// A cached token is renewed once it made a burst of paced calls (`step_call.rs`).
    pub(super) renew_per_burst: bool,
    /// The request being prepared calls the paced method.
    pub(super) calling_paced: bool,
    /// Access tokens of the sessions this execution's requests opened
    /// ([`super::session_slots`]).
    pub(super) opened_sessions: Vec<String>,
}

/// Which connections a request's login token is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TokenUse {
    /// The execution's own connection.
    Here,
    /// Connections of their own, opened for a race's copies: the login goes over HTTP and
    /// its token is cached apart from the execution's own.
    Elsewhere,
}

/// Runs one case over one transport.
pub(crate) async fn execute(shared: &Shared, case: &Case, transport: TransportKind) -> CaseResult {
    let started = Instant::now();
    // A case that leaves its account to the run goes as the account the plan gave it.
    let spread;
    let case = match on_planned_account(shared, case, transport) {
        Some(on_account) => {
            spread = on_account;
            &spread
        }
        None => case,
    };
    let position = match admitted(shared, case, transport) {
        Admission::Runs(position) => position,
        Admission::Skipped(reason) => {
            return finish(
                case,
                transport,
                Verdict::Skip,
                reason,
                Vec::new(),
                Vec::new(),
                Vec::new(),
                started,
            );
        }
    };
    // Where the target counts session slots, cases that open sessions go one at a time.
    let _session_lane = if !shared.target.limits.session_limit_codes.is_empty()
        && super::session_slots::opens_sessions(case)
    {
        shared.session_lane.acquire().await.ok()
    } else {
        None
    };
    let mut execution = Execution::new(shared, case, transport);
    execution.position = position;
    if let Some(role) = shared.accounts.get(&(case.id.clone(), transport)) {
        execution.notes.push(format!(
            "goes as the {role} account: the case runs as any account, and the plan put it on the budget with the most room"
        ));
    }
    let ended = execution.run_passes().await;
    execution.close().await;
    conclude(execution, ended, started)
}

/// The case as the account the run's plan put it on, for a case that leaves its account to
/// the run; `None` for any other.
fn on_planned_account(shared: &Shared, case: &Case, transport: TransportKind) -> Option<Case> {
    case.spreads().then(|| {
        let role = shared
            .accounts
            .get(&(case.id.clone(), transport))
            .map_or(harness_model::case::Auth::SPREAD_ROLES[0], String::as_str);
        case.on_account(role)
    })
}

/// Whether an execution runs ([`admitted`]).
enum Admission {
    /// It runs, with the position it may close when it needs one.
    Runs(Option<String>),
    /// It is skipped: the target cannot run it, the paced budget has no room, or no
    /// position is left (the reason).
    Skipped(String),
}

/// Whether the execution runs, and with which position.
fn admitted(shared: &Shared, case: &Case, transport: TransportKind) -> Admission {
    let skipped = skip_reason(&shared.target, case, transport).or_else(|| {
        shared
            .over_budget
            .get(&(case.id.clone(), transport))
            .cloned()
    });
    if let Some(reason) = skipped {
        return Admission::Skipped(reason);
    }
    if !case.needs.fixtures.iter().any(|name| name == "position") {
        return Admission::Runs(None);
    }
    match shared.draw_position(&case.id, transport) {
        Ok(position) => Admission::Runs(Some(position)),
        Err(error) => Admission::Skipped(error.to_string()),
    }
}

/// The execution's result from what its steps found: an error or a skip where one ended
/// it, else the worst verdict of its findings; clauses whose check was left out are not
/// counted as checked.
fn conclude(execution: Execution<'_>, ended: Ended, started: Instant) -> CaseResult {
    let Execution {
        case,
        transport,
        findings,
        notes,
        exchanges,
        unchecked,
        ..
    } = execution;
    if let Some(message) = ended.error {
        return error_result(case, transport, message, exchanges, started);
    }
    if let Some(reason) = ended.skipped.filter(|_| findings.is_empty()) {
        return finish(
            case,
            transport,
            Verdict::Skip,
            reason,
            findings,
            notes,
            exchanges,
            started,
        );
    }
    let verdict = findings
        .iter()
        .map(|finding| finding.verdict)
        .reduce(Verdict::worst)
        .unwrap_or(Verdict::Pass);
    let message = findings
        .first()
        .map(|finding| finding.message.clone())
        .unwrap_or_else(|| notes.join("; "));
    let mut result = finish(
        case, transport, verdict, message, findings, notes, exchanges, started,
    );
    let cited: BTreeSet<&String> = result
        .findings
        .iter()
        .flat_map(|finding| &finding.clauses)
        .collect();
    let unchecked: BTreeSet<String> = unchecked
        .into_iter()
        .filter(|clause| !cited.contains(clause))
        .collect();
    result.checks.retain(|clause| !unchecked.contains(clause));
    result.clauses.retain(|clause| !unchecked.contains(clause));
    result
}

/// How an execution's passes ended: the harness's error that stopped them, or why the
/// execution is a skip (no pass was checked).
#[derive(Debug, Default)]
pub(super) struct Ended {
    pub(super) error: Option<String>,
    pub(super) skipped: Option<String>,
}

/// How one pass of the steps ended.
pub(super) enum PassEnd {
    /// Every step ran.
    Completed,
    /// A step stopped the execution: a failing finding, a rule that held early, or the
    /// harness's error (its message).
    Stopped(Option<String>),
    /// A step found the rest meaningless against this target.
    Skipped(String),
}

/// A connection of its own a step names: its WebSocket and its HTTP client.
#[derive(Default)]
pub(super) struct NamedConnection {
    pub(super) ws: Option<WsSession>,
    http: Option<HttpClient>,
}

impl<'a> Execution<'a> {
    /// An execution before its first step, with a client session of its own.
    pub(super) fn new(shared: &'a Shared, case: &'a Case, transport: TransportKind) -> Self {
        let session = ClientSession::new(
            shared.target.clone(),
            shared.http.clone(),
            shared.dialer.clone(),
            shared.limits,
            Clock::system(),
        );
        Execution::with_session(shared, case, transport, session)
    }

    /// An execution before its first step, over `session`.
    pub(super) fn with_session(
        shared: &'a Shared,
        case: &'a Case,
        transport: TransportKind,
        session: ClientSession,
    ) -> Self {
        Execution {
            shared,
            case,
            transport,
            session,
            connections: BTreeMap::new(),
            next_id: 1,
            captures: BTreeMap::new(),
            last_nonce: None,
            unique: std::cell::OnceCell::new(),
            position: None,
            expired_option: None,
            findings: Vec::new(),
            notes: Vec::new(),
            unchecked: BTreeSet::new(),
            // One exchange a step, bar walks and probes: no regrowth moving them about.
            exchanges: Vec::with_capacity(case.steps.len()),
            budget: RecordBudget::default(),
            judging: true,
            renew_per_burst: false,
            calling_paced: false,
            opened_sessions: Vec::new(),
        }
    }
}

impl Execution<'_> {
    /// The finding for an observation on these clauses ([`check::finding`]).
    pub(crate) fn finding(&self, clauses: &[String], message: String) -> Finding {
        check::finding(&self.shared.catalog, clauses, message)
    }

    pub(crate) fn record(&mut self, clauses: &[String], message: String) {
        let finding = self.finding(clauses, message);
        self.findings.push(finding);
    }

    /// A template string resolved; a template that does not resolve stops the execution.
    pub(super) fn resolved(&self, text: &str) -> Result<String, Stop> {
        template::resolve_string(text, self).map_err(Stop::from)
    }

    pub(super) fn failing(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.verdict == Verdict::Fail)
    }

    /// Runs an `always` step after the execution stopped, to leave the target as the case
    /// found it: what it observes is a note, never a finding, since the verdict is decided.
    async fn clean_up(&mut self, step: &Step) {
        let findings = self.findings.len();
        let outcome = self.step(step).await;
        let observed: Vec<String> = self
            .findings
            .drain(findings..)
            .map(|finding| finding.message)
            .collect();
        // `Failed` with nothing new observed is the earlier failure, which ended the run.
        let trouble = match outcome {
            Ok(()) | Err(Stop::Failed | Stop::Held) if observed.is_empty() => return,
            Ok(()) | Err(Stop::Failed | Stop::Held) => observed.join("; "),
            Err(Stop::Error(message) | Stop::Skip(message)) => message,
        };
        self.notes.push(format!(
            "the clean-up step at line {} did not complete, so the target may be left changed: {trouble}",
            step.line
        ));
    }

    /// Closes every WebSocket of the execution.
    pub async fn close(&mut self) {
        let opened = std::mem::take(&mut self.opened_sessions);
        super::session_slots::end_sessions(self.shared, opened).await;
        self.session.close().await;
        for ws in std::mem::take(&mut self.connections)
            .into_values()
            .filter_map(|connection| connection.ws)
        {
            ws.close().await;
        }
    }

    /// Runs the case's steps once, in order: the first that stops or skips ends the pass,
    /// after which only `always` steps (clean-up) run.
    pub(super) async fn run_steps(&mut self) -> PassEnd {
        let case = self.case;
        let mut end = PassEnd::Completed;
        for (index, step) in case.steps.iter().enumerate() {
            if !matches!(end, PassEnd::Completed) {
                if step.always {
                    self.clean_up(step).await;
                }
                continue;
            }
            if self.leave_out_without_fixture(step) {
                continue;
            }
            let outcome = match step.race() {
                // The rounds of a race run the steps before it again (`race.rs`).
                Some(race) => Box::pin(self.race(&case.steps[..index], step, race)).await,
                None => self.step(step).await,
            };
            end = match outcome {
                Ok(()) => PassEnd::Completed,
                Err(Stop::Failed | Stop::Held) => PassEnd::Stopped(None),
                Err(Stop::Error(message)) => PassEnd::Stopped(Some(message)),
                Err(Stop::Skip(reason)) => PassEnd::Skipped(reason),
            };
        }
        end
    }

    /// Runs one step over its own transport and connection, when it names them, and over
    /// the execution's otherwise.
    pub(super) async fn step(&mut self, step: &Step) -> Result<(), Stop> {
        let execution_transport = self.enter_step(step)?;
        let outcome = self.step_here(step).await;
        self.leave_step(step, execution_transport);
        outcome
    }

    /// Puts the execution on the step's own transport and connection, when it names
    /// them; returns the execution's transport, which [`Execution::leave_step`] restores.
    pub(super) fn enter_step(&mut self, step: &Step) -> Result<TransportKind, Stop> {
        let execution_transport = self.transport;
        self.transport = step.transport_in(execution_transport);
        if let Some(name) = step.connection.as_deref() {
            if let Err(error) = self.open_connection(name) {
                self.transport = execution_transport;
                return Err(Stop::Error(error.to_string()));
            }
            self.swap_connection(name);
        }
        Ok(execution_transport)
    }

    /// Puts back what [`Execution::enter_step`] changed.
    pub(super) fn leave_step(&mut self, step: &Step, execution_transport: TransportKind) {
        if let Some(name) = step.connection.as_deref() {
            self.swap_connection(name);
        }
        self.transport = execution_transport;
    }

    /// Makes the named connection's HTTP client on its first use over HTTP (a WebSocket
    /// is opened by its first call).
    fn open_connection(&mut self, name: &str) -> Result<(), TransportError> {
        let connection = self.connections.entry(name.to_owned()).or_default();
        if self.transport != TransportKind::Ws && connection.http.is_none() {
            connection.http = Some(self.session.fresh_http()?);
        }
        Ok(())
    }

    /// Exchanges the session's connection of the step's transport with the named one.
    fn swap_connection(&mut self, name: &str) {
        let connection = self.connections.entry(name.to_owned()).or_default();
        if self.transport == TransportKind::Ws {
            self.session.swap_ws(&mut connection.ws);
        } else if let Some(http) = connection.http.as_mut() {
            self.session.swap_http(http);
        }
    }

    async fn step_here(&mut self, step: &Step) -> Result<(), Stop> {
        // Walks, probes, races and in-flight calls are boxed: their futures are large, and a
        // call step (the fuzzers' every request) should not carry their size.
        match &step.kind {
            StepKind::Walk(walk) => return Box::pin(self.walk(step, walk)).await,
            StepKind::Probe(probe) => return Box::pin(self.probe(step, probe)).await,
            StepKind::Race { race, .. } => return Box::pin(self.race_once(step, race)).await,
            StepKind::InFlight { method, copies } if self.transport == TransportKind::Ws => {
                return Box::pin(self.in_flight(step, method, *copies)).await;
            }
            // Over HTTP, an in-flight step is one call.
            StepKind::InFlight { .. } | StepKind::Call(_) | StepKind::Raw { .. } => {}
        }
        // A method the target file names (`{{fixtures.direct_access_order.method}}`).
        let method = self.resolved(&step_method(step))?;
        if let Some(wait) = &step.wait {
            self.wait_before(step, wait).await?;
        }
        let answer = self.paced_call(step, &method, None, &step.params).await?;
        if step.expect.outcome != Outcome::Error
            && let Some(code) = pace::session_limited(&answer, &self.shared.target.limits)
        {
            return Err(Stop::Skip(pace::session_limit_skip(&method, code)));
        }
        let case = self.case;
        let clauses = case.step_clauses(step);
        let response = self.check_answer(answer, clauses, step)?;
        if self.failing() {
            return Err(Stop::Failed);
        }
        if let Some(expected) = &step.expect.notifications
            && response.get("result").is_some()
        {
            self.await_notifications(step, expected).await?;
        }
        if step.expect.refusal_ends_case && response.get("error").is_some() {
            self.notes.push(format!(
                "the step at line {} was refused, which keeps the rule: the steps after it check what a result would have granted",
                step.line
            ));
            return Err(Stop::Held);
        }
        self.capture(step, &response, clauses)
    }

    /// Waits `wait.seconds` (resolved, e.g. a captured `expires_in`) plus its margin; a wait
    /// longer than `wait.at_most_s` skips the execution with the reason.
    async fn wait_before(
        &mut self,
        step: &Step,
        wait: &harness_model::case::Wait,
    ) -> Result<(), Stop> {
        let seconds = match &wait.seconds {
            Value::String(text) => self.resolved(text)?.trim().parse::<f64>().ok(),
            other => other.as_f64(),
        }
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .ok_or_else(|| {
            Stop::Error(format!(
                "the wait of the step at line {} is not a number of seconds",
                step.line
            ))
        })?;
        if seconds > wait.at_most_s as f64 {
            return Err(Stop::Skip(format!(
                "the step at line {} would wait {seconds} s, longer than the case waits ({} s): the target granted a longer lifetime than was asked",
                step.line, wait.at_most_s
            )));
        }
        let millis = (seconds * 1000.0) as i64 + wait.margin_ms;
        tokio::time::sleep(std::time::Duration::from_millis(millis.max(0) as u64)).await;
        Ok(())
    }

    /// When `answer` is the target throttling: empties the pacing `budgets` the request was
    /// counted on (the target's is empty, whatever the pacer counted), and, when retries are
    /// left, notes it and returns the wait before the next attempt.
    pub(super) fn throttled(
        &mut self,
        method: &str,
        answer: &ParsedAnswer,
        attempt: &mut u32,
        budgets: &[String],
    ) -> Option<std::time::Duration> {
        let code = pace::throttled(answer, &self.shared.target.limits)?;
        self.shared
            .pacer
            .throttled_all(budgets, std::time::Instant::now());
        if *attempt >= pace::THROTTLE_RETRIES {
            return None;
        }
        *attempt += 1;
        let backoff = self.shared.pacer.backoff(*attempt);
        self.notes.push(format!(
            "{method} was throttled (code {code}); sent again after {:.1} s",
            backoff.as_secs_f64()
        ));
        Some(backoff)
    }

    /// Builds the request of a `call` or `raw` step: templates, then authentication.
    pub(super) async fn prepare(&mut self, step: &Step, method: &str) -> Result<Outgoing, Stop> {
        self.prepare_for(step, method, TokenUse::Here).await
    }

    /// [`Execution::prepare`] for a request that goes where `token_use` says: a login's
    /// token is one for that use.
    pub(super) async fn prepare_for(
        &mut self,
        step: &Step,
        method: &str,
        token_use: TokenUse,
    ) -> Result<Outgoing, Stop> {
        let mut params = template::resolve_map(&step.params, self).map_err(Stop::from)?;
        if let Some(names) = self.shared.target.param_names.get(method) {
            params = params
                .into_iter()
                .map(|(name, value)| (names.get(&name).cloned().unwrap_or(name), value))
                .collect();
        }
        // A Direct Access order the target file names (SPEC.md describes none) goes with the
        // parameters it gives.
        if let Some(order) = &self.shared.target.fixtures.direct_access_order
            && order.method == method
            && self.transport == TransportKind::Rest
        {
            for (name, value) in &order.params {
                params.entry(name.clone()).or_insert_with(|| value.clone());
            }
        }
        // So does a subscription it names (SPEC.md 6 shows none), called by its template.
        if let Some(request) = step
            .call_method()
            .and_then(|call| self.shared.target.fixtures.subscription_called_by(call))
        {
            for (name, value) in &request.params {
                params.entry(name.clone()).or_insert_with(|| value.clone());
            }
        }
        let fixtures = &self.shared.target.fixtures;
        super::order_read::name_the_id(fixtures, method, self.transport, &mut params);
        let authorization = self.authenticate(step, &mut params, token_use).await?;
        // After the login authentication may send, so `{{request_id}}` is this request's.
        let raw = match step.raw() {
            Some(raw) => Some(self.resolved(raw)?),
            None => None,
        };
        Ok(Outgoing {
            method: method.to_owned(),
            params,
            raw,
            authorization,
        })
    }

    /// The checks every answer gets, then the step's expectations ([`check::answer`]).
    /// Returns the parsed response for captures.
    pub(super) fn check_answer(
        &mut self,
        answer: ParsedAnswer,
        clauses: &[String],
        step: &Step,
    ) -> Result<Value, Stop> {
        let expect = &step.expect;
        let mut matchers = self.resolved_matchers(step)?;
        // A refusal that ends the case keeps the rule: the step's matchers say what a result
        // must hold, and are not held against the refusal.
        let refused = answer
            .json
            .as_ref()
            .is_some_and(|json| json.get("error").is_some());
        if expect.refusal_ends_case && refused {
            matchers.clear();
        }
        let schema = if expect.no_schema {
            None
        } else {
            let method = step.call_method().unwrap_or_default();
            expect
                .schema
                .clone()
                .or_else(|| self.shared.schemas.for_method(method))
        };
        // A step whose refusal ends the case goes on only on a result, which the later steps
        // read: that result is held to the method's schema as any expected result is.
        let answered_result = answer
            .json
            .as_ref()
            .is_some_and(|json| json.get("result").is_some());
        let outcome = if expect.refusal_ends_case && answered_result {
            Outcome::Result
        } else {
            expect.outcome
        };
        let expected = Required {
            outcome,
            error_code: expect.error_code,
            error_message: expect.error_message.as_deref(),
            http_status: expect.http_status,
            schema: schema.as_deref(),
            matchers: &matchers,
            clauses,
            rest_interface: self.transport == TransportKind::Rest,
        };
        let findings = check::answer(
            &answer,
            &expected,
            &self.shared.catalog,
            &self.shared.schemas,
        );
        self.findings.extend(findings);
        self.notes.extend(check::error_note(&answer, &expected));
        if let Some(response) = &answer.json {
            self.note_empty_lists(&matchers, response);
        }
        answer.json.ok_or(Stop::Failed)
    }

    /// A matcher on every entry of a list (`[*]`) that this answer has none of checked
    /// nothing: it is noted, and the clauses it names stand unchecked by this execution
    /// unless a finding cites them (a rule of every entry passes an empty list vacuously).
    fn note_empty_lists(&mut self, matchers: &[Matcher], response: &Value) {
        for matcher in matchers {
            if !matcher.path.contains("[*]") || !check::lookup(response, &matcher.path).is_empty() {
                continue;
            }
            self.notes.push(format!(
                "{} not checked: the answer holds no entries there",
                matcher.path
            ));
            self.unchecked
                .extend(matcher.clauses.iter().flatten().cloned());
        }
    }
}

/// The method a `call` or `raw` step calls: a raw step's HTTP path is the method it names
/// beside its text, else the method its text names.
pub(super) fn step_method(step: &Step) -> String {
    step.method().unwrap_or_default()
}
