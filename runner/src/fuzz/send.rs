//! Sending a generated request: credentials are obtained and cached in the sender's
//! [`ClientSession`] (one `client_credentials` login per account and scope, shared by every
//! worker), secrets, nonces and timestamps are added at send time, and the transaction-log
//! rate limit is respected by moving to a fresh token once a token has used the burst the
//! target file declares, or, where the target counts it per account, by the account's
//! budget in the shared [`Pacer`]. The scheduler asks that budget without waiting
//! ([`Sender::try_pace`]) and sends a paced request only when it has room ([`Budget::Taken`]),
//! so no worker sleeps behind the budget while other work is ready.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::rules::{LOCK_PORTFOLIO, OracleKnowledge};
use super::{FuzzRequest, RequestAuth, SecretPlan};
use crate::run::Breaker;
use crate::run::pace::{ANONYMOUS, Pacer};
use crate::transport::{
    self, Authorization, ClientSession, Credentials, Dialer, Exchange, HttpClient, Outgoing,
    RequestLimits, SignatureParams, Token, TransportError, WsSession, place_bearer,
};
use harness_model::case::TransportKind;
use harness_model::target_file::{CountedPer, Target};
use harness_protocol::auth::clock::Clock;
use harness_protocol::auth::nonce::fresh_nonce;
use harness_protocol::spec;

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

/// Why a request could not be sent: a login it needed failed.
#[derive(Debug)]
pub(crate) struct SetupFailure {
    pub(crate) exchange: Exchange,
}

/// Sends requests to one target.
pub(crate) struct Sender {
    pub(crate) target: Target,
    /// Shared by every worker: the HTTP client and the tokens. Each worker brings its own
    /// WebSocket.
    session: ClientSession,
    /// Paces the transaction log per account when the target counts its limit that way.
    pacer: Pacer,
    /// Counts requests in a row without an answer; stops the run at its limit.
    breaker: Breaker,
    /// How long a paced call may wait for its budget (`FuzzConfig::paced_wait`).
    pub(crate) paced_wait: Duration,
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
        limits: RequestLimits,
        breaker: Breaker,
        paced_wait: Duration,
    ) -> Result<Sender, TransportError> {
        let dialer = Dialer::new(&target.tls)?;
        Ok(Sender {
            session: ClientSession::new(
                target.clone(),
                HttpClient::new(limits, &dialer)?,
                dialer,
                limits,
                Clock::system(),
            ),
            pacer: Pacer::new(&target.limits),
            breaker,
            paced_wait,
            target,
        })
    }

    /// The credentials of an account role, with the nearest wrong secret when asked (as a
    /// case's step gets it); empty ones for a role the target file lacks.
    fn credentials(&self, account: &str, wrong_secret: bool) -> Credentials {
        self.session
            .credentials(account)
            .unwrap_or_default()
            .spoiled(wrong_secret)
    }

    /// The session shared by every worker: HTTP client, WebSocket dialing, credentials.
    pub(crate) fn session(&self) -> &ClientSession {
        &self.session
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
            let wait = self.pacer.take_all(&keys, Instant::now());
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

    /// Counts what came of one request sent to the target (an answer, or why none came)
    /// toward the run's breaker.
    pub(crate) fn observe(&self, exchange: &Exchange) {
        self.breaker.observe(exchange.failure.as_ref());
    }

    /// Counts a request that could not be sent at all (a WebSocket that would not open).
    pub(crate) fn breaker_observes(&self, error: &TransportError) {
        self.breaker.observe(Some(error));
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
        self.pacer.take_all(&keys, Instant::now())
    }

    /// A `client_credentials` login over HTTP.
    async fn login(&self, account: &str, scope: Option<&str>) -> Result<Token, SetupFailure> {
        let outgoing = ClientSession::login_request(&self.credentials(account, false), scope);
        let exchange = self
            .session
            .call_http(TransportKind::HttpBody, 0, &outgoing)
            .await;
        self.observe(&exchange);
        let token = exchange
            .response
            .as_ref()
            .and_then(|received| received.json.as_ref())
            .and_then(Token::from_answer);
        token.ok_or(SetupFailure { exchange })
    }

    fn counted_per_token(&self) -> bool {
        self.target.limits.transaction_log_counted_per == CountedPer::Token
    }

    /// A cached token. Where the target counts the transaction-log limit per token, a token
    /// is renewed when it has used the burst; where per account (the default), every
    /// transaction-log request waits for the account's budget.
    async fn token(
        &self,
        account: &str,
        scope: Option<&str>,
        for_log: bool,
    ) -> Result<Token, SetupFailure> {
        let key = (account.to_owned(), scope.map(str::to_owned));
        let for_log = for_log && self.counted_per_token();
        let burst = self.target.limits.transaction_log_burst.max(1);
        let within_burst = |token: &mut Token| {
            let fits = !for_log || token.paced_uses < burst;
            if fits {
                token.paced_uses += u32::from(for_log);
            }
            fits
        };
        if let Some(token) = self.session.cached_token(&key, within_burst) {
            return Ok(token);
        }
        let mut token = self.login(account, scope).await?;
        token.paced_uses = u32::from(for_log);
        self.session.keep_token(key, token.clone());
        Ok(token)
    }

    /// Sends `request` with JSON-RPC id `id`; a paced request waits for its budget unless
    /// `budget` says the scheduler took it.
    pub(crate) async fn send(
        &self,
        request: &FuzzRequest,
        id: u64,
        ws: &mut Option<WsSession>,
        budget: Budget,
    ) -> Result<Sent, SetupFailure> {
        let mut params = request.params.clone();
        let mut knowledge = OracleKnowledge {
            instrument: self.target.fixtures.instrument_name.clone(),
            subaccount: self.target.fixtures.subaccount_id,
            granted: None,
            client_id: None,
            account: account_of(&request.auth).map(str::to_owned),
            connection_holds_token: request.transport == TransportKind::Ws
                && ws.as_ref().is_some_and(WsSession::carried_access_token),
        };
        let (authorization, replay) = self
            .authenticate(request, &mut params, &mut knowledge, budget)
            .await?;
        let raw = request
            .raw
            .as_ref()
            .map(|raw| raw.replace("%ID%", &id.to_string()));
        let sent_id = match (&request.raw, request.transport) {
            (Some(raw), _) => raw.contains("%ID%").then_some(id),
            (None, TransportKind::HttpBody | TransportKind::Ws) => Some(id),
            (None, _) => None,
        };
        let sent_params = params.clone();
        let outgoing = Outgoing {
            method: request.method.clone(),
            params,
            raw,
            authorization,
        };
        let mut exchange = self.exchange(request.transport, id, &outgoing, ws).await;
        if replay {
            self.observe(&exchange);
            exchange = self.exchange(request.transport, id, &outgoing, ws).await;
        }
        self.observe(&exchange);
        let throttle_codes = &self.target.limits.throttle_codes;
        let throttled = exchange
            .response
            .as_ref()
            .and_then(|received| received.json.as_ref())
            .and_then(harness_protocol::jsonrpc::error_of)
            .is_some_and(|error| throttle_codes.contains(&error.code));
        Ok(Sent {
            throttled,
            exchange,
            sent_id,
            knowledge,
            params: sent_params,
        })
    }

    /// Applies a request's credentials to its params, or returns the header to send, and
    /// whether the request goes twice (a replay).
    async fn authenticate(
        &self,
        request: &FuzzRequest,
        params: &mut Map<String, Value>,
        knowledge: &mut OracleKnowledge,
        budget: Budget,
    ) -> Result<(Option<Authorization>, bool), SetupFailure> {
        let transport = request.transport;
        let for_log = harness_protocol::spec::is_paced(&request.method);
        if budget == Budget::Wait
            && let Some(keys) = self.budget_key(request)
        {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            self.pacer.wait_all(&keys).await;
        }
        let authorization = match &request.auth {
            RequestAuth::None => None,
            RequestAuth::Bearer { account, scope } => {
                // Logging out ends the token, so logout gets one of its own.
                let token = if request.method == spec::LOGOUT_METHOD {
                    self.login(account, scope.as_deref()).await?
                } else {
                    self.token(account, scope.as_deref(), for_log).await?
                };
                knowledge.granted = Some(token.granted.clone());
                place_bearer(transport, &token.access, params)
            }
            RequestAuth::BogusToken => place_bearer(transport, "never-issued-token", params),
            RequestAuth::Basic {
                account,
                wrong_secret,
            } => Some(transport::basic(&self.credentials(account, *wrong_secret))),
            RequestAuth::Signed {
                account,
                wrong_secret,
                offset_ms,
                replay,
            } => {
                let plan = self.session.signed_plan(
                    self.credentials(account, *wrong_secret),
                    self.session.timestamp(*offset_ms),
                    fresh_nonce(),
                );
                return Ok((Some(Authorization::Signed(plan)), *replay));
            }
            RequestAuth::ClientCredentials { account, secret } => {
                let credentials = self.credentials(account, *secret == SecretPlan::Wrong);
                if *secret != SecretPlan::Omitted {
                    transport::insert_client_secret(params, &credentials);
                }
                knowledge.client_id = Some(credentials.client_id);
                None
            }
            RequestAuth::ClientSignature {
                account,
                wrong_secret,
                offset_ms,
                uppercase,
                replay,
            } => {
                let credentials = self.credentials(account, *wrong_secret);
                // Sign the data as the server will read it: as text from a query string.
                let data = match params.get("data") {
                    Some(Value::String(text)) => text.clone(),
                    Some(value) if transport == TransportKind::HttpQuery => {
                        crate::transport::query_value(value).unwrap_or_default()
                    }
                    _ => String::new(),
                };
                let plan = SignatureParams {
                    timestamp: self.session.timestamp(*offset_ms),
                    nonce: Some(fresh_nonce()),
                    data,
                    uppercase: *uppercase,
                    no_trailing_lf: false,
                };
                if transport::insert_client_signature(params, &credentials, &plan).is_err() {
                    // Data the framing cannot carry (SPEC.md 5.5): sent with an empty
                    // signature, which the server must refuse.
                    params.insert("timestamp".to_owned(), json!(plan.timestamp));
                    params.insert("nonce".to_owned(), json!(plan.nonce));
                    params.insert("signature".to_owned(), json!(""));
                }
                knowledge.client_id = Some(credentials.client_id);
                return Ok((None, *replay));
            }
            RequestAuth::RefreshOf { account, scope } => {
                let token = self.login(account, scope.as_deref()).await?;
                knowledge.granted = Some(token.granted.clone());
                params.insert("refresh_token".to_owned(), json!(token.refresh));
                None
            }
            RequestAuth::ApiKey { right } => {
                let key = match &self.target.fixtures.direct_access_key {
                    Some(key) => transport::spoiled(key.expose().to_owned(), !*right),
                    None => "no-direct-access-key".to_owned(),
                };
                Some(transport::api_key(&key))
            }
        };
        Ok((authorization, false))
    }

    /// Sends over `transport`: HTTP and REST through the shared client (REST carries only
    /// `lock_portfolio`), WebSocket on the worker's own connection.
    async fn exchange(
        &self,
        transport: TransportKind,
        id: u64,
        outgoing: &Outgoing,
        ws: &mut Option<WsSession>,
    ) -> Exchange {
        match transport {
            TransportKind::Ws => self
                .session
                .call_over(transport, id, outgoing, ws)
                .await
                .unwrap_or_else(|error| failed_ws(&self.target, outgoing, error)),
            TransportKind::Rest => {
                let rest = Outgoing {
                    method: LOCK_PORTFOLIO.to_owned(),
                    ..outgoing.clone()
                };
                self.session.call_http(transport, id, &rest).await
            }
            kind => self.session.call_http(kind, id, outgoing).await,
        }
    }
}

/// The account role of a request's credentials.
pub(crate) fn account_of(auth: &RequestAuth) -> Option<&str> {
    match auth {
        RequestAuth::Bearer { account, .. }
        | RequestAuth::Basic { account, .. }
        | RequestAuth::Signed { account, .. }
        | RequestAuth::ClientCredentials { account, .. }
        | RequestAuth::ClientSignature { account, .. }
        | RequestAuth::RefreshOf { account, .. } => Some(account),
        _ => None,
    }
}

fn failed_ws(target: &Target, outgoing: &Outgoing, error: TransportError) -> Exchange {
    Exchange {
        transport: TransportKind::Ws,
        request: crate::transport::SentRequest {
            method: "WS".to_owned(),
            url: target.ws_url.clone().unwrap_or_default(),
            body: outgoing.raw.clone(),
            ..Default::default()
        },
        response: None,
        failure: Some(error),
        elapsed_ms: 0.0,
    }
}
