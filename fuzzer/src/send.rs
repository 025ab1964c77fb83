//! Sending a generated request through the runner's executor: the request becomes the
//! steps of its case (`steps.rs`), which an [`Execution`] runs unjudged over the worker's
//! session (`run::step_call`), and the answer of the last step comes back with what the
//! oracle needs beyond the request. The sessions of all workers share their tokens (one
//! `client_credentials` login per account and scope), each with its own WebSocket; a
//! token is renewed once it has used the burst the target file declares where the target
//! counts the transaction-log limit per token, and where it counts it per account (the
//! default) the account's budget in the executor's [`Shared::take_budgets`] paces it. The scheduler asks
//! that budget without waiting ([`Sender::try_pace`]) and sends a paced request only when
//! it has room ([`Budget::Taken`]), so no worker sleeps behind the budget while other work
//! is ready.

use crate::state::slots::{SLOTS_SPEC_GUARANTEES, SessionsOpened};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::rules::OracleKnowledge;
use super::steps::{account_of, request_case};
use super::{FuzzRequest, RequestAuth};
use harness_model::case::{Auth, Bearer, BearerToken, Case};
use harness_model::check::{Finding, Redactor, SchemaSet, Verdict};
use harness_model::target_file::{CountedPer, RateLimits, Target};
use harness_protocol::wire::Exchange;
use harness_protocol::wire::NoAnswer;
use harness_protocol::wire::TransportKind;
use harness_runner::run::step_call::{ANONYMOUS, Called, Execution, Shared, Stop, THROTTLED_LOGIN};
use harness_runner::run::{Breaker, RunError};
use harness_runner::transport::{ClientSession, RequestLimits, Token};

/// What came of sending one request.
#[derive(Debug)]
pub(crate) struct Sent {
    /// The exchange to judge (the second one of a replay).
    pub(crate) exchange: Exchange,
    /// The id the request carried, when it carried one.
    pub(crate) sent_id: Option<u64>,
    /// What the oracle needs beyond the request.
    pub(crate) knowledge: OracleKnowledge,
    /// The parameters as sent, with what the sender added (secrets included: never print).
    pub(crate) params: Map<String, Value>,
    /// The answer is an error with one of the target's `[limits] throttle_codes`.
    pub(crate) throttled: bool,
}

/// Whether the pacing budget of a request was already taken by its scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Budget {
    /// Wait for the budget before sending (shrinking, the later pages of a walk).
    Wait,
    /// The scheduler took the budget's token ([`Sender::try_pace`]): send at once.
    Taken,
}

/// Why a request could not be sent: a login it needed failed, or gave no answer.
#[derive(Debug)]
pub(crate) struct SetupFailure {
    /// The login's finding: at the catalog's level, or [`Verdict::Error`] when no answer
    /// came (nothing was judged).
    pub(crate) finding: Finding,
}

/// Sends requests to one target.
pub(crate) struct Sender {
    pub(crate) target: Target,
    /// What the executor's executions share: the HTTP client, the pacer, the breaker that
    /// counts requests in a row without an answer, the redactor.
    shared: Shared,
    /// The session whose tokens every worker's session shares.
    session: ClientSession,
    /// How long a paced call may wait for its budget (`FuzzConfig::paced_wait`).
    pub(crate) paced_wait: Duration,
    /// The sessions the run's sequences opened, per account, and how many of one key the
    /// target keeps at least (`[limits] session_slots`, else what SPEC.md 4.3 implies).
    pub(crate) sessions: SessionsOpened,
    pub(crate) session_slots: u32,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("target", &self.target.name)
            .finish_non_exhaustive()
    }
}

impl Sender {
    pub(crate) fn new(
        target: Target,
        schemas: Arc<SchemaSet>,
        limits: RequestLimits,
        breaker: Breaker,
        paced_wait: Duration,
    ) -> Result<Sender, RunError> {
        let shared = Shared::new(
            target.clone(),
            super::prediction::catalog(),
            schemas,
            limits,
            breaker,
        )?;
        let session = shared.session();
        let session_slots = target.limits.session_slots.unwrap_or(SLOTS_SPEC_GUARANTEES);
        Ok(Sender {
            shared,
            session,
            paced_wait,
            sessions: SessionsOpened::default(),
            session_slots,
            target,
        })
    }

    /// What the executor's executions share (sequences run their cases with it).
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The redactor of the executor's executions: the target's secrets and every token and
    /// signature seen so far.
    pub(crate) fn redactor(&self) -> &Redactor {
        self.shared.redactor()
    }

    /// A session of its own: a sequence's, whose logouts and toggles must not reach the
    /// tokens the workers share.
    pub(crate) fn fresh_session(&self) -> ClientSession {
        self.shared.session()
    }

    /// A session for a worker: its own WebSocket, the tokens every worker shares.
    pub(crate) fn worker_session(&self) -> ClientSession {
        self.session.sharing_tokens()
    }

    /// Takes the budget of a paced call of a sequence when it has room within `patience`;
    /// false, having taken nothing, when it would not: a sequence then skips the call
    /// instead of holding its worker. Where the target counts the limit per token, the
    /// token's budget; else every account's, since a sequence's token may be another
    /// account's (an exchanged token is the subaccount's) or remembered by its connection.
    pub(crate) async fn pace_within(&self, access_token: Option<&str>, patience: Duration) -> bool {
        let keys = match access_token {
            Some(token) if self.counted_per_token() => vec![format!("token:{token}")],
            _ => self.every_budget(),
        };
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let deadline = Instant::now() + patience;
        loop {
            let wait = self.shared.take_budgets(&keys, Instant::now());
            if wait.is_zero() {
                return true;
            }
            if Instant::now() + wait > deadline {
                return false;
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// The budget of every account role of the target file, and the anonymous one.
    fn every_budget(&self) -> Vec<String> {
        self.target
            .accounts
            .keys()
            .cloned()
            .chain([ANONYMOUS.to_owned()])
            .collect()
    }

    /// The budgets a request to a paced method takes from, where the target counts the
    /// limit per account (the default): its account role's, or without credentials of its
    /// own [`ANONYMOUS`], or over WebSocket every account's (its connection may remember
    /// any account's token, SPEC.md 5.2). `None` for an unpaced method, and where the
    /// target counts per token (a fresh token is used instead).
    pub(crate) fn budget_key(&self, request: &FuzzRequest) -> Option<Vec<String>> {
        if !harness_protocol::spec::is_paced(&request.method) || self.counted_per_token() {
            return None;
        }
        Some(match account_of(&request.auth) {
            Some(account) => vec![account.to_owned()],
            None if request.transport == TransportKind::Ws => self.every_budget(),
            None => vec![ANONYMOUS.to_owned()],
        })
    }

    /// Takes a token of each of the budgets `keys` when they all have one (zero), else says
    /// how long until they might: never waits.
    pub(crate) fn try_pace(&self, keys: &[String]) -> Duration {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.shared.take_budgets(&keys, Instant::now())
    }

    fn counted_per_token(&self) -> bool {
        self.target.limits.transaction_log_counted_per == CountedPer::Token
    }

    /// Sends `request`, its JSON-RPC ids from `id` on, over the worker's session in `slot`
    /// (made on first use, kept for its next request); a paced request waits for its budget
    /// unless `budget` says the scheduler took it.
    pub(crate) async fn send(
        &self,
        request: &FuzzRequest,
        id: u64,
        slot: &mut Option<ClientSession>,
        budget: Budget,
    ) -> Result<Sent, SetupFailure> {
        if budget == Budget::Wait
            && let Some(keys) = self.budget_key(request)
        {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            self.shared.wait_budgets(&keys).await;
        }
        let case = request_case(request, &self.target);
        let session = slot.take().unwrap_or_else(|| self.worker_session());
        let mut knowledge = self.fixture_knowledge(request, &session);
        let mut execution =
            Execution::unjudged(&self.shared, &case, request.transport, session, true);
        execution.first_id(id);
        let called = self
            .call_steps(request, &case, &mut execution, &mut knowledge)
            .await;
        *slot = Some(execution.into_session());
        let called = called.map_err(|finding| SetupFailure { finding })?;
        self.know(request, &mut knowledge);
        let sent_id = match (&request.raw, request.transport) {
            (Some(raw), _) => raw.contains("%ID%").then_some(called.id),
            (None, TransportKind::HttpBody | TransportKind::Ws) => Some(called.id),
            (None, _) => None,
        };
        let throttle_codes = &self.target.limits.throttle_codes;
        let throttled = called
            .exchange
            .json()
            .and_then(harness_protocol::jsonrpc::error_of)
            .is_some_and(|error| throttle_codes.contains(&error.code));
        Ok(Sent {
            throttled,
            exchange: called.exchange,
            sent_id,
            knowledge,
            params: called.params,
        })
    }

    /// What the oracle knows before anything is sent: the target's fixtures, the account
    /// the credentials go as, and whether the worker's WebSocket carried a token before.
    fn fixture_knowledge(&self, request: &FuzzRequest, session: &ClientSession) -> OracleKnowledge {
        OracleKnowledge {
            instrument: self.target.fixtures.instrument_name.clone(),
            subaccount: self.target.fixtures.subaccount_id,
            two_factor_subaccount: self.target.fixtures.two_factor_subaccount_id,
            currency: self.target.fixtures.currency.clone(),
            granted: None,
            client_id: None,
            account: account_of(&request.auth).map(str::to_owned),
            connection_holds_token: request.transport == TransportKind::Ws
                && session.may_remember_token(),
        }
    }

    /// Runs the steps of the request's `case`: those before the last set it up (the scope
    /// its login was granted goes into `knowledge`), the last is the request. `Err` with
    /// the finding when a step before it was throttled, failed or got no answer.
    async fn call_steps(
        &self,
        request: &FuzzRequest,
        case: &Case,
        execution: &mut Execution<'_>,
        knowledge: &mut OracleKnowledge,
    ) -> Result<Called, Finding> {
        let last = case.steps.len() - 1;
        for (index, step) in case.steps.iter().enumerate() {
            match execution.call_unjudged(step).await {
                Ok(call) if index < last => {
                    // A step before the request that the target throttled did not happen
                    // (an original whose nonce a replay reuses, a login): nothing after it
                    // can be judged.
                    if let Some(throttled) = throttled_step(&call.exchange, &self.target.limits) {
                        return Err(throttled);
                    }
                    // The login of the request's own token says what it was granted.
                    match call.exchange.json().and_then(Token::from_answer) {
                        Some(token) => knowledge.granted = Some(token.granted),
                        None if !step.capture.is_empty() => {
                            return Err(own_login_failed(&call.exchange, &self.target.limits));
                        }
                        None => {}
                    }
                }
                Ok(call) => return Ok(call),
                Err(stop) => return Err(self.setup_failure(request, stop, execution.findings())),
            }
        }
        Err(Finding::new(
            Verdict::Error,
            vec![LOGIN_CLAUSE.to_owned()],
            "the request could not be sent".to_owned(),
        ))
    }

    /// What the oracle knows of the credentials the executor used: the scope the shared
    /// token was granted, the `client_id` a login names.
    fn know(&self, request: &FuzzRequest, knowledge: &mut OracleKnowledge) {
        match &request.auth {
            RequestAuth::Step(Auth::Bearer(Bearer {
                account,
                token: BearerToken::Login(login),
                ..
            })) if knowledge.granted.is_none() => {
                let key = (
                    account.clone().unwrap_or_else(|| "main".to_owned()),
                    login.scope.clone(),
                );
                knowledge.granted = self
                    .session
                    .cached_token(&key, |_| true)
                    .map(|token| token.granted);
            }
            login if login.is_login() => {
                let account = login.account().unwrap_or("main");
                knowledge.client_id = self
                    .session
                    .credentials(account)
                    .map(|credentials| credentials.client_id);
            }
            _ => {}
        }
    }

    /// The finding of a request that could not be sent: a login it needed failed (the
    /// executor's finding on it) or its WebSocket would not open.
    fn setup_failure(&self, request: &FuzzRequest, stop: Stop, findings: &[Finding]) -> Finding {
        // A replay released together with the original is judged by its race: more copies
        // got a result than one nonce allows (`steps.rs`).
        if request.auth.is_raced_replay()
            && matches!(stop, Stop::Failed)
            && let Some(raced) = findings.last()
        {
            return raced.clone();
        }
        match stop {
            // A fuzz step never ends a case early (`refusal_ends_case` is the runner's).
            Stop::Failed | Stop::Held => {
                let seen = findings
                    .last()
                    .map(|finding| finding.message.clone())
                    .unwrap_or_default();
                super::prediction::broken(
                    LOGIN_CLAUSE,
                    format!("the login this request needs failed: {seen}"),
                )
            }
            // The target throttled the login on every try: counted, not judged.
            Stop::Skip(message) if message.starts_with(THROTTLED_LOGIN) => {
                Finding::new(Verdict::Skip, Vec::new(), message)
            }
            Stop::Error(message) | Stop::Skip(message) => {
                let clause = match request.transport {
                    TransportKind::Ws => "transport.ws",
                    _ => LOGIN_CLAUSE,
                };
                Finding::new(
                    Verdict::Error,
                    vec![clause.to_owned()],
                    format!("the request could not be sent: {message}"),
                )
            }
        }
    }
}

/// The finding, not judged, of a step before the request that the target throttled.
fn throttled_step(exchange: &Exchange, limits: &RateLimits) -> Option<Finding> {
    let code = exchange
        .json()
        .as_ref()
        .and_then(|json| harness_protocol::jsonrpc::error_of(json))
        .map(|error| error.code)
        .filter(|code| limits.throttle_codes.contains(code))?;
    Some(Finding::new(
        Verdict::Skip,
        Vec::new(),
        format!("a step before the request was throttled with code {code}: not judged"),
    ))
}

/// The clause a login the request needs breaks when it gives no token.
const LOGIN_CLAUSE: &str = "auth.client_credentials.accepted";

/// The finding of a request's own login that gave no token: no answer at all is the
/// harness's error, any other answer the target's failure.
fn own_login_failed(exchange: &Exchange, limits: &RateLimits) -> Finding {
    if let Some(throttled) = throttled_step(exchange, limits) {
        return throttled;
    }
    let seen = match (&exchange.response, &exchange.failure) {
        (Some(received), _) => received.body.chars().take(160).collect(),
        (None, Some(failure)) => failure.message.clone(),
        (None, None) => String::new(),
    };
    let message = format!("the login this request needs failed: {seen}");
    let unanswered = exchange.response.is_none()
        && exchange
            .failure
            .as_ref()
            .is_some_and(|failure| failure.kind.no_answer() == Some(NoAnswer::Silence));
    if unanswered {
        Finding::new(Verdict::Error, vec![LOGIN_CLAUSE.to_owned()], message)
    } else {
        super::prediction::broken(LOGIN_CLAUSE, message)
    }
}
