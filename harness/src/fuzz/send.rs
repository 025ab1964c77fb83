//! Sending a generated request: credentials are obtained and cached here (one
//! `client_credentials` login per account and scope), secrets, nonces and timestamps are
//! added at send time, and the transaction-log rate limit is respected by moving to a fresh
//! token once a token has used the burst the target file declares.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::rules::{Knowledge, LOCK_PORTFOLIO};
use super::{FuzzRequest, RequestAuth, SecretPlan};
use crate::auth::clock::Clock;
use crate::auth::nonce::fresh_nonce;
use crate::auth::scope::Scope;
use crate::auth::sign;
use crate::case::TransportKind;
use crate::target_file::Target;
use crate::transport::{
    Authorization, Dialer, Exchange, HttpClient, Outgoing, RequestLimits, SignedPlan,
    TransportError, WsSession,
};

/// A token from a login, and how often it has been used for the transaction log.
#[derive(Clone, Debug)]
struct Token {
    access: String,
    refresh: String,
    granted: Scope,
    log_uses: u32,
}

/// What came of sending one request.
#[derive(Debug)]
pub(crate) struct Sent {
    /// The exchange to judge (the second one of a replay).
    pub(crate) exchange: Exchange,
    /// The id the request carried, when it carried one.
    pub(crate) sent_id: Option<u64>,
    /// What the oracle needs beyond the request.
    pub(crate) knowledge: Knowledge,
    /// The parameters as sent, with what the sender added (secrets included: never print).
    pub(crate) params: Map<String, Value>,
}

/// Why a request could not be sent: a login it needed failed.
#[derive(Debug)]
pub(crate) struct SetupFailure {
    pub(crate) exchange: Exchange,
}

/// Sends requests to one target.
#[derive(Debug)]
pub(crate) struct Sender {
    pub(crate) target: Target,
    http: HttpClient,
    dialer: Dialer,
    limits: RequestLimits,
    clock: Clock,
    tokens: Mutex<HashMap<(String, Option<String>), Token>>,
}

impl Sender {
    pub(crate) fn new(target: Target, limits: RequestLimits) -> Result<Sender, TransportError> {
        let dialer = Dialer::new(&target.tls)?;
        Ok(Sender {
            http: HttpClient::new(limits, &dialer)?,
            dialer,
            target,
            limits,
            clock: Clock::system(),
            tokens: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) async fn connect_ws(&self) -> Result<WsSession, TransportError> {
        let url = self.target.ws_url.as_deref().unwrap_or_default();
        WsSession::connect(url, self.limits, &self.dialer).await
    }

    fn secret(&self, account: &str) -> String {
        self.target
            .accounts
            .get(account)
            .map(|account| account.client_secret.expose().to_owned())
            .unwrap_or_default()
    }

    fn client_id(&self, account: &str) -> String {
        self.target
            .accounts
            .get(account)
            .map(|account| account.client_id.clone())
            .unwrap_or_default()
    }

    /// A `client_credentials` login over HTTP.
    async fn login(&self, account: &str, scope: Option<&str>) -> Result<Token, SetupFailure> {
        let mut params = Map::new();
        params.insert("grant_type".to_owned(), json!("client_credentials"));
        params.insert("client_id".to_owned(), json!(self.client_id(account)));
        params.insert("client_secret".to_owned(), json!(self.secret(account)));
        if let Some(scope) = scope {
            params.insert("scope".to_owned(), json!(scope));
        }
        let outgoing = Outgoing {
            method: "public/auth".to_owned(),
            params,
            ..Outgoing::default()
        };
        let exchange = self
            .http
            .call(TransportKind::HttpBody, &self.target.base_url, 0, &outgoing)
            .await;
        let result = exchange
            .response
            .as_ref()
            .and_then(|received| received.json.as_ref())
            .and_then(|json| json.get("result"));
        let field = |name: &str| {
            result
                .and_then(|result| result.get(name))
                .and_then(Value::as_str)
        };
        match (field("access_token"), field("refresh_token")) {
            (Some(access), refresh) => Ok(Token {
                access: access.to_owned(),
                refresh: refresh.unwrap_or_default().to_owned(),
                granted: Scope::parse(field("scope").unwrap_or_default()),
                log_uses: 0,
            }),
            _ => Err(SetupFailure { exchange }),
        }
    }

    /// A cached token, renewed when it has used the transaction-log burst.
    async fn token(
        &self,
        account: &str,
        scope: Option<&str>,
        for_log: bool,
    ) -> Result<Token, SetupFailure> {
        let key = (account.to_owned(), scope.map(str::to_owned));
        let burst = self.target.limits.transaction_log_burst.max(1);
        {
            let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(token) = tokens.get_mut(&key)
                && (!for_log || token.log_uses < burst)
            {
                token.log_uses += u32::from(for_log);
                return Ok(token.clone());
            }
        }
        let mut token = self.login(account, scope).await?;
        token.log_uses = u32::from(for_log);
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, token.clone());
        Ok(token)
    }

    /// Sends `request` with JSON-RPC id `id`.
    pub(crate) async fn send(
        &self,
        request: &FuzzRequest,
        id: u64,
        ws: &mut Option<WsSession>,
    ) -> Result<Sent, SetupFailure> {
        let mut params = request.params.clone();
        let mut knowledge = Knowledge {
            instrument: self.target.fixtures.instrument_name.clone(),
            subaccount: self.target.fixtures.subaccount_id,
            granted: None,
            client_id: None,
            account: account_of(&request.auth).map(str::to_owned),
        };
        let mut authorization = None;
        let mut replay = false;
        let for_log = request.method == "private/get_transaction_log";
        let now = self.clock.now_ms();
        match &request.auth {
            RequestAuth::None => {}
            RequestAuth::Bearer { account, scope } => {
                // Logging out ends the token, so logout gets one of its own.
                let token = if request.method == "private/logout" {
                    self.login(account, scope.as_deref()).await?
                } else {
                    self.token(account, scope.as_deref(), for_log).await?
                };
                knowledge.granted = Some(token.granted.clone());
                if request.transport == TransportKind::Ws {
                    params.insert("access_token".to_owned(), json!(token.access));
                } else {
                    authorization = Some(Authorization::Value(format!("Bearer {}", token.access)));
                }
            }
            RequestAuth::BogusToken => {
                if request.transport == TransportKind::Ws {
                    params.insert("access_token".to_owned(), json!("never-issued-token"));
                } else {
                    authorization =
                        Some(Authorization::Value("Bearer never-issued-token".to_owned()));
                }
            }
            RequestAuth::Basic {
                account,
                wrong_secret,
            } => {
                let secret = if *wrong_secret {
                    "wrong-secret".to_owned()
                } else {
                    self.secret(account)
                };
                authorization = Some(Authorization::Value(sign::basic_header_value(
                    &self.client_id(account),
                    &secret,
                )));
            }
            RequestAuth::Signed {
                account,
                wrong_secret,
                offset_ms,
                replay: again,
            } => {
                replay = *again;
                authorization = Some(Authorization::Signed(SignedPlan {
                    scheme: self.target.signature_scheme.clone(),
                    client_id: self.client_id(account),
                    secret: if *wrong_secret {
                        "wrong-secret".to_owned()
                    } else {
                        self.secret(account)
                    },
                    timestamp: now.saturating_add_signed(*offset_ms),
                    nonce: fresh_nonce(),
                    sign_uri: None,
                    uppercase_hex: false,
                }));
            }
            RequestAuth::ClientCredentials { account, secret } => {
                knowledge.client_id = Some(self.client_id(account));
                match secret {
                    SecretPlan::Right => {
                        params.insert("client_secret".to_owned(), json!(self.secret(account)))
                    }
                    SecretPlan::Wrong => {
                        params.insert("client_secret".to_owned(), json!("wrong-secret"))
                    }
                    SecretPlan::Omitted => None,
                };
            }
            RequestAuth::ClientSignature {
                account,
                wrong_secret,
                offset_ms,
                uppercase,
                replay: again,
            } => {
                replay = *again;
                knowledge.client_id = Some(self.client_id(account));
                let timestamp = now.saturating_add_signed(*offset_ms);
                let nonce = fresh_nonce();
                // Sign the data as the server will read it: as text from a query string.
                let data = match params.get("data") {
                    Some(Value::String(text)) => text.clone(),
                    Some(value) if request.transport == TransportKind::HttpQuery => {
                        crate::transport::query_value(value).unwrap_or_default()
                    }
                    _ => String::new(),
                };
                let secret = if *wrong_secret {
                    "wrong-secret".to_owned()
                } else {
                    self.secret(account)
                };
                let mut signature =
                    sign::client_signature(&secret, timestamp, &nonce, &data).unwrap_or_default();
                if *uppercase {
                    signature = signature.to_ascii_uppercase();
                }
                params.insert("timestamp".to_owned(), json!(timestamp));
                params.insert("nonce".to_owned(), json!(nonce));
                params.insert("signature".to_owned(), json!(signature));
            }
            RequestAuth::RefreshOf { account, scope } => {
                let token = self.login(account, scope.as_deref()).await?;
                knowledge.granted = Some(token.granted.clone());
                params.insert("refresh_token".to_owned(), json!(token.refresh));
            }
            RequestAuth::ApiKey { right } => {
                let key = match (&self.target.fixtures.direct_access_key, right) {
                    (Some(key), true) => key.expose().to_owned(),
                    _ => "wrong-direct-access-key".to_owned(),
                };
                authorization = Some(Authorization::Value(format!("Bearer {key}")));
            }
        }
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
            method: if request.method == LOCK_PORTFOLIO {
                "private/lock_portfolio".to_owned()
            } else {
                request.method.clone()
            },
            params,
            raw,
            authorization,
        };
        let mut exchange = self.exchange(request.transport, id, &outgoing, ws).await;
        if replay {
            exchange = self.exchange(request.transport, id, &outgoing, ws).await;
        }
        Ok(Sent {
            exchange,
            sent_id,
            knowledge,
            params: sent_params,
        })
    }

    async fn exchange(
        &self,
        transport: TransportKind,
        id: u64,
        outgoing: &Outgoing,
        ws: &mut Option<WsSession>,
    ) -> Exchange {
        match transport {
            TransportKind::Ws => {
                if ws.is_none() {
                    match self.connect_ws().await {
                        Ok(session) => *ws = Some(session),
                        Err(error) => return failed_ws(&self.target, outgoing, error),
                    }
                }
                let Some(session) = ws.as_mut() else {
                    return failed_ws(
                        &self.target,
                        outgoing,
                        TransportError::new(
                            crate::transport::TransportErrorKind::Connect,
                            "no websocket session",
                        ),
                    );
                };
                let exchange = session.call(id, outgoing).await;
                if exchange.failure.is_some() {
                    // A broken session is not reused.
                    *ws = None;
                }
                exchange
            }
            TransportKind::Rest => {
                let base = format!(
                    "{}/api/v2",
                    self.target.direct_access_url.as_deref().unwrap_or_default()
                );
                let mut rest = outgoing.clone();
                rest.method = "private/lock_portfolio".to_owned();
                self.http.call(TransportKind::Rest, &base, id, &rest).await
            }
            kind => {
                self.http
                    .call(kind, &self.target.base_url, id, outgoing)
                    .await
            }
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
