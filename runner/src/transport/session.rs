//! A client session with one target: what the runner's executions and the fuzzer's sender
//! both need to talk to it, written once.
//!
//! A [`ClientSession`] owns the HTTP client handle (pooled connections), a WebSocket opened
//! on first use, the tokens of its `client_credentials` logins keyed by (account role,
//! requested scope), the Direct Access REST base URL, and the clock that dates signatures.
//! It knows the target file's accounts, so it builds the login request (SPEC.md 5.3), reads
//! the token set of its answer (2.1), plans the signed `Authorization` header (5.6), and
//! places a bearer token (5.2). What to send, how to record it and how to judge the answer
//! stay with the caller.
//!
//! The runner gives each execution a session of its own. The fuzzer's workers share one
//! session's HTTP client and tokens, each with a WebSocket of its own
//! ([`ClientSession::sharing_tokens`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use super::{Authorization, Dialer, HttpClient, Outgoing, RequestLimits, SignedPlan, WsSession};

use harness_protocol::wire::TransportErrorKind;

use harness_protocol::wire::TransportError;

use harness_model::target_file::Target;
use harness_protocol::auth::clock::Clock;
use harness_protocol::auth::scope::Scope;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::TransportKind;

/// The key of a cached token: the account role and the scope asked for at login.
pub(crate) type TokenKey = (String, Option<String>);

/// A token set from a login (SPEC.md 2.1), as far as a client uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// `access_token`.
    pub access: String,
    /// `refresh_token` (empty when the answer had none).
    pub refresh: String,
    /// `scope`, as granted.
    pub granted: Scope,
    /// How often the owner used it for a paced method; the owner's policy decides.
    pub paced_uses: u32,
}

impl Token {
    /// The token set of a `public/auth` answer, when it carries an access token.
    pub fn from_answer(answer: &Value) -> Option<Token> {
        let result = answer.get("result")?;
        let field = |name: &str| result.get(name).and_then(Value::as_str);
        Some(Token {
            access: field("access_token")?.to_owned(),
            refresh: field("refresh_token").unwrap_or_default().to_owned(),
            granted: Scope::parse(field("scope").unwrap_or_default()),
            paced_uses: 0,
        })
    }
}

/// A client id and the secret to use with it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The client id.
    pub client_id: String,
    /// The client secret (never printed: `Debug` hides it).
    pub secret: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Places a bearer token where SPEC.md 5.2 says: in `params.access_token` on WebSocket, in
/// the `Authorization` header on HTTP (the returned header).
pub fn place_bearer(
    transport: TransportKind,
    token: &str,
    params: &mut Map<String, Value>,
) -> Option<Authorization> {
    if transport == TransportKind::Ws {
        params.insert("access_token".to_owned(), Value::from(token));
        None
    } else {
        Some(Authorization::Value(format!("Bearer {token}")))
    }
}

/// One client's session with a target.
#[derive(Debug)]
pub struct ClientSession {
    target: Target,
    http: HttpClient,
    dialer: Dialer,
    limits: RequestLimits,
    clock: Clock,
    ws: Option<WsSession>,
    /// Shared with the sessions made by [`ClientSession::sharing_tokens`].
    tokens: Arc<Mutex<HashMap<TokenKey, Token>>>,
}

impl ClientSession {
    /// A session with `target` over `http` (a handle on a shared pool), opening WebSockets
    /// through `dialer`, with no WebSocket open and no token yet.
    pub fn new(
        target: Target,
        http: HttpClient,
        dialer: Dialer,
        limits: RequestLimits,
        clock: Clock,
    ) -> Self {
        ClientSession {
            target,
            http,
            dialer,
            limits,
            clock,
            ws: None,
            tokens: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// A session over the same HTTP client that shares this one's tokens, with no
    /// WebSocket open: each fuzz worker has one, so a login serves every worker while each
    /// keeps a connection of its own.
    pub fn sharing_tokens(&self) -> ClientSession {
        ClientSession {
            target: self.target.clone(),
            http: self.http.clone(),
            dialer: self.dialer.clone(),
            limits: self.limits,
            clock: self.clock.clone(),
            ws: None,
            tokens: Arc::clone(&self.tokens),
        }
    }

    /// The target.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// A signature timestamp: now, moved by `offset_ms`.
    pub fn timestamp(&self, offset_ms: i64) -> u64 {
        self.clock.now_ms().saturating_add_signed(offset_ms)
    }

    /// The credentials of an account role of the target file.
    pub fn credentials(&self, role: &str) -> Option<Credentials> {
        self.target.accounts.get(role).map(|account| Credentials {
            client_id: account.client_id.clone(),
            secret: account.client_secret.expose().to_owned(),
        })
    }

    /// `{direct_access_url}/api/v2`, under which the REST methods live (SPEC.md 4.13).
    pub(crate) fn rest_base_url(&self) -> String {
        format!(
            "{}{}",
            self.target.direct_access_url.as_deref().unwrap_or_default(),
            harness_protocol::spec::API_PREFIX
        )
    }

    /// A `public/auth` request with `client_credentials` (SPEC.md 5.3), asking for `scope`.
    pub fn login_request(credentials: &Credentials, scope: Option<&str>) -> Outgoing {
        let mut params = Map::new();
        params.insert("grant_type".to_owned(), Value::from("client_credentials"));
        params.insert(
            "client_id".to_owned(),
            Value::from(credentials.client_id.as_str()),
        );
        params.insert(
            "client_secret".to_owned(),
            Value::from(credentials.secret.as_str()),
        );
        if let Some(scope) = scope {
            params.insert("scope".to_owned(), Value::from(scope));
        }
        Outgoing {
            method: harness_protocol::spec::AUTH_METHOD.to_owned(),
            params,
            ..Outgoing::default()
        }
    }

    /// The plan of a signed `Authorization` header (SPEC.md 5.6) in the target's scheme,
    /// signing the URI sent, in lower-case hex.
    pub fn signed_plan(
        &self,
        credentials: Credentials,
        timestamp: u64,
        nonce: String,
    ) -> SignedPlan {
        SignedPlan {
            scheme: self.target.signature_scheme.clone(),
            client_id: credentials.client_id,
            secret: credentials.secret,
            timestamp,
            nonce,
            sign_uri: None,
            sign_body: None,
            lowercase_method: false,
            uppercase_hex: false,
            altered_signature: false,
        }
    }

    /// The cached token of `key`, if `fits` accepts it (`fits` may count a use).
    pub fn cached_token(
        &self,
        key: &TokenKey,
        fits: impl FnOnce(&mut Token) -> bool,
    ) -> Option<Token> {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        let token = tokens.get_mut(key)?;
        fits(token).then(|| token.clone())
    }

    /// Caches `token` under `key`, replacing the one there.
    pub(crate) fn keep_token(&self, key: TokenKey, token: Token) {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, token);
    }

    /// Sends one request over `transport`, on the session's own WebSocket for
    /// [`TransportKind::Ws`] (opened on first use). `Err` only when the WebSocket could not
    /// be opened; every other failure is in the exchange.
    pub async fn call(
        &mut self,
        transport: TransportKind,
        id: u64,
        outgoing: &Outgoing,
    ) -> Result<Exchange, TransportError> {
        let mut ws = self.ws.take();
        let exchange = self.call_over(transport, id, outgoing, &mut ws).await;
        self.ws = ws;
        exchange
    }

    /// Sends one request over HTTP: a query string or JSON-RPC body to `{base_url}`, or the
    /// Direct Access REST call under `ClientSession::rest_base_url`.
    pub async fn call_http(
        &self,
        transport: TransportKind,
        id: u64,
        outgoing: &Outgoing,
    ) -> Exchange {
        let base_url = if transport == TransportKind::Rest {
            self.rest_base_url()
        } else {
            self.target.base_url.clone()
        };
        self.http.call(transport, &base_url, id, outgoing).await
    }

    /// [`ClientSession::call`] on the WebSocket in `ws` (opened there on first use). A
    /// WebSocket whose call failed is dropped, never reused.
    pub async fn call_over(
        &self,
        transport: TransportKind,
        id: u64,
        outgoing: &Outgoing,
        ws: &mut Option<WsSession>,
    ) -> Result<Exchange, TransportError> {
        match transport {
            TransportKind::HttpQuery | TransportKind::HttpBody | TransportKind::Rest => {
                Ok(self.call_http(transport, id, outgoing).await)
            }
            TransportKind::Ws => {
                if ws.is_none() {
                    let url = self.target.ws_url.as_deref().unwrap_or_default();
                    *ws = Some(WsSession::connect(url, self.limits, &self.dialer).await?);
                }
                let Some(session) = ws.as_mut() else {
                    return Err(TransportError::new(
                        TransportErrorKind::Connect,
                        "no WebSocket session",
                    ));
                };
                let exchange = session.call(id, outgoing).await;
                if exchange.failure.is_some() {
                    *ws = None;
                }
                Ok(exchange)
            }
        }
    }

    /// Sends several requests at once on the session's WebSocket (opened on first use) and
    /// matches their answers by id ([`WsSession::call_in_flight`]). `Err` only when the
    /// WebSocket could not be opened; a WebSocket with a failed call is dropped.
    pub(crate) async fn call_in_flight(
        &mut self,
        requests: &[(u64, &Outgoing)],
    ) -> Result<Vec<Exchange>, TransportError> {
        if self.ws.is_none() {
            let url = self.target.ws_url.as_deref().unwrap_or_default();
            self.ws = Some(WsSession::connect(url, self.limits, &self.dialer).await?);
        }
        let Some(ws) = self.ws.as_mut() else {
            return Err(TransportError::new(
                TransportErrorKind::Connect,
                "no WebSocket session",
            ));
        };
        let exchanges = ws.call_in_flight(requests).await;
        if exchanges.iter().any(|exchange| exchange.failure.is_some()) {
            self.ws = None;
        }
        Ok(exchanges)
    }

    /// Releases `entries` together, each over a connection of its own opened beforehand,
    /// with last-byte synchronisation, and reads their answers (`race.rs`).
    pub async fn race(&self, entries: &[super::RaceEntry<'_>]) -> super::RaceOutcome {
        let target = super::race::RaceTarget {
            base_url: &self.target.base_url,
            ws_url: self.target.ws_url.as_deref().unwrap_or_default(),
            dialer: &self.dialer,
            limits: self.limits,
        };
        super::race::release(&target, entries).await
    }

    /// A new HTTP client with a pool of its own: its requests go over other TCP
    /// connections than the session's.
    pub(crate) fn fresh_http(&self) -> Result<HttpClient, TransportError> {
        HttpClient::new(self.limits, &self.dialer)
    }

    /// Exchanges the session's HTTP client with `other`, as [`ClientSession::swap_ws`] does
    /// the WebSocket.
    pub(crate) fn swap_http(&mut self, other: &mut HttpClient) {
        std::mem::swap(&mut self.http, other);
    }

    /// Exchanges the session's WebSocket with `other`: how an execution moves its calls to
    /// another connection of its own and back.
    pub(crate) fn swap_ws(&mut self, other: &mut Option<WsSession>) {
        std::mem::swap(&mut self.ws, other);
    }

    /// The session's WebSocket, when one is open.
    pub(crate) fn ws_mut(&mut self) -> Option<&mut WsSession> {
        self.ws.as_mut()
    }

    /// Whether a request on the session's WebSocket has carried `params.access_token` or
    /// asked for a token, so the connection may remember one (SPEC.md 5.2).
    pub fn may_remember_token(&self) -> bool {
        self.ws.as_ref().is_some_and(WsSession::may_remember_token)
    }

    /// Closes the session's WebSocket, if one is open.
    pub async fn close(&mut self) {
        if let Some(ws) = self.ws.take() {
            ws.close().await;
        }
    }
}

#[cfg(test)]
mod tests;
