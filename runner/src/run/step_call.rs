//! Steps run for a caller that judges the answers itself: how both fuzzers send their
//! requests. The single-request fuzzer turns each generated request into the steps of the
//! case it would write (`harness_fuzz::case_file`), the sequence fuzzer each sequence into
//! its case's steps; both run those steps here, through the executor that runs every case
//! (templates, captures, authentication, named connections, sending, recording, the
//! breaker, secrets learned), and judge each answer with their own oracle.
//!
//! What differs from a judged step, and only this: the answer is not checked against the
//! step's expectations, the step does not wait for the pacing budget (the fuzzer's
//! scheduler takes it without waiting, so a paced request never holds a worker) and is
//! not sent again when throttled (a throttled answer is counted, not judged), and a
//! capture that finds nothing leaves its name without a value instead of failing. An execution
//! can borrow a session that shares its tokens with other workers
//! ([`ClientSession::sharing_tokens`]); its tokens for the paced method are then renewed
//! per burst where the target counts that limit per token.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

pub use super::Shared;
pub use super::auth::THROTTLED_LOGIN;
use super::exec::step_method;
pub use super::exec::{Execution, Stop};
use crate::transport::ClientSession;
use harness_model::case::{Case, Race, Step, StepKind};
use harness_protocol::wire::Exchange;
use harness_protocol::wire::TransportKind;

/// The pacing budget of requests that carry no account's credentials (no token, a bogus
/// one): one budget of their own.
pub const ANONYMOUS: &str = super::pace::ANONYMOUS;

impl Shared {
    /// A session of its own against the run's target, over the run's HTTP client and
    /// dialer.
    pub fn session(&self) -> ClientSession {
        ClientSession::new(
            self.target.clone(),
            self.http.clone(),
            self.dialer.clone(),
            self.limits,
            harness_protocol::auth::clock::Clock::system(),
        )
    }

    /// The redactor of the run's executions: the target's secrets and every token and
    /// signature seen so far.
    pub fn redactor(&self) -> &harness_model::check::Redactor {
        &self.redactor
    }

    /// Takes a token from each of the pacing budgets `accounts` when every one of them has
    /// one, else takes nothing and says how long until they all might (zero: taken).
    pub fn take_budgets(&self, accounts: &[&str], now: Instant) -> Duration {
        self.pacer.take_all(accounts, now)
    }

    /// Waits until each of the pacing budgets `accounts` has room, and takes it.
    pub async fn wait_budgets(&self, accounts: &[&str]) {
        self.pacer.wait_all(accounts).await;
    }
}

/// A step sent without judging its answer.
#[derive(Debug)]
pub struct Called {
    /// The parameters as sent, with what the auth mode added (secrets included: never
    /// print).
    pub params: Map<String, Value>,
    /// The JSON-RPC id the request went with.
    pub id: u64,
    /// The exchange, its answer parsed.
    pub exchange: Exchange,
}

impl<'a> Execution<'a> {
    /// An execution over `session` (a worker's, kept across its requests) whose steps are
    /// sent by [`Execution::call_unjudged`]; `renew_per_burst` renews a shared token once it
    /// has made the paced calls a burst allows, where the target counts them per token.
    pub fn unjudged(
        shared: &'a Shared,
        case: &'a Case,
        transport: TransportKind,
        session: ClientSession,
        renew_per_burst: bool,
    ) -> Self {
        let mut execution = Execution::with_session(shared, case, transport, session);
        execution.judging = false;
        execution.renew_per_burst = renew_per_burst;
        execution
    }

    /// The findings recorded so far (a failed login's).
    pub fn findings(&self) -> &[harness_model::check::Finding] {
        &self.findings
    }

    /// The session back, its WebSocket still open, for the worker's next request.
    pub fn into_session(self) -> ClientSession {
        self.session
    }

    /// Sends `step` (over its own transport and connection when it names them) and keeps
    /// its captures, without judging the answer. `Err` when the step could not be sent: a
    /// template without a value (a capture an earlier step did not give), a login that
    /// failed (its finding is in [`Execution::findings`]), or no answer at all.
    pub async fn call_unjudged(&mut self, step: &Step) -> Result<Called, Stop> {
        if let StepKind::Race { race, .. } = &step.kind {
            return self.race_unjudged(step, race).await;
        }
        let single = match step.kind {
            StepKind::Call(_) | StepKind::Raw { .. } => true,
            StepKind::InFlight { .. } => step.transport_in(self.transport) != TransportKind::Ws,
            StepKind::Walk(_) | StepKind::Probe(_) | StepKind::Race { .. } => false,
        };
        if !single {
            // Not a single request: run as any step, and nothing to hand back.
            self.step(step).await?;
            return Err(Stop::Error("the step sent no request".to_owned()));
        }
        let execution_transport = self.enter_step(step)?;
        let called = self.call_only(step, &step_method(step)).await;
        self.leave_step(step, execution_transport);
        called
    }

    /// One round of a race step (a fuzzer's replay released together with the original):
    /// the race judges its own rule (`at_most`), so `Err(Stop::Failed)` with its finding in
    /// [`Execution::findings`] when more copies got a result than it allows; else the last
    /// copy's exchange, whose answer the caller may judge as any copy's.
    async fn race_unjudged(&mut self, step: &Step, race: &Race) -> Result<Called, Stop> {
        let id = self.next_id;
        let execution_transport = self.enter_step(step)?;
        let raced = self.race_once(step, race).await;
        self.leave_step(step, execution_transport);
        raced?;
        let mut exchange = self
            .exchanges
            .last()
            .cloned()
            .ok_or_else(|| Stop::Error("the race sent no request".to_owned()))?;
        // As a single call's: the answer's JSON beside its bytes (`call_only`).
        if let Some(received) = exchange.response.as_mut()
            && received.json.is_none()
        {
            received.json = serde_json::from_str(&received.body).ok();
            if received.json.is_some() {
                received.duplicate_members =
                    harness_protocol::jsonrpc::duplicate_envelope_members(received.body.as_bytes());
            }
        }
        Ok(Called {
            params: step.params.clone(),
            id,
            exchange,
        })
    }

    /// The unjudged part of a `call` or `raw` step: prepared, sent, its captures kept.
    async fn call_only(&mut self, step: &Step, method: &str) -> Result<Called, Stop> {
        self.calling_paced = harness_protocol::spec::is_paced(method);
        let outgoing = self.prepare(step, method).await;
        self.calling_paced = false;
        let outgoing = outgoing?;
        let id = self.next_id;
        let recorded = self.exchanges.len();
        let sent = self.send(&outgoing).await;
        // Sent and recorded, answered or not: the caller judges even a missing answer. Not
        // recorded: it could not be sent (a WebSocket that would not open).
        let exchange = if self.exchanges.len() > recorded {
            self.exchanges.pop()
        } else {
            None
        };
        let Some(mut exchange) = exchange else {
            return Err(sent
                .err()
                .unwrap_or_else(|| Stop::Error("the request was not recorded".to_owned())));
        };
        if let Ok(answer) = sent {
            if let Some(json) = &answer.json {
                self.capture_found(step, json);
            }
            // Back beside the bytes: what `send` moved into the parsed answer, so the
            // caller judges the exchange as the runner would (the envelope's repeated
            // names included).
            if let Some(received) = exchange.response.as_mut() {
                received.json = answer.json;
                received.duplicate_members = answer.duplicate_members;
                received.binary_frame = answer.binary_frame;
            }
        }
        Ok(Called {
            params: outgoing.params,
            id,
            exchange,
        })
    }

    /// Keeps what the step's captures find in `response`; a capture that finds nothing is
    /// left without a value (a refused login issues no token), so a later step using it
    /// cannot be prepared, which its caller reads as the token never having come.
    fn capture_found(&mut self, step: &Step, response: &Value) {
        for (name, path) in &step.capture {
            if let Some((_, Some(value))) = harness_model::check::lookup(response, path).first() {
                self.captures.insert(name.clone(), (*value).clone());
            }
        }
    }

    /// Closes the named connection `name` when it is open: a sequence's, after a logout on
    /// it (a later step of that slot opens a new one).
    pub async fn close_connection(&mut self, name: &str) {
        if let Some(ws) = self
            .connections
            .remove(name)
            .and_then(|connection| connection.ws)
        {
            ws.close().await;
        }
    }

    /// The JSON-RPC id of the execution's next request.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Numbers the execution's requests from `id` on.
    pub fn first_id(&mut self, id: u64) {
        self.next_id = id;
    }
}
