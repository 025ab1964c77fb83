//! Authentication of a step: what each `auth.mode` of a case adds to the request.
//!
//! `bearer` logs in once per execution, account and scope (or uses a captured token) and
//! places the token where SPEC.md 5.2 says; `client_credentials` and `client_signature` fill
//! the `public/auth` parameters of SPEC.md 5.3 and 5.5; `basic` and `signed` build the HTTP
//! `Authorization` headers of SPEC.md 5.6; `api_key` sends the Direct Access key (5.8). A
//! step that asks for a wrong secret gets the account's secret with `-wrong` appended.

use serde_json::{Map, Value};

use super::exec::{Execution, Stop};
use crate::auth::nonce::fresh_nonce;
use crate::auth::sign;
use crate::case::{Auth, AuthMode, Step, TransportKind};
use crate::transport::{Authorization, Outgoing, SignedPlan};

/// A client id and the secret to use with it.
struct Credentials {
    client_id: String,
    secret: String,
}

/// `secret`, or one that is not it when the step asks for a wrong secret.
fn spoiled(secret: String, wrong: bool) -> String {
    if wrong {
        format!("{secret}-wrong")
    } else {
        secret
    }
}

impl Execution<'_> {
    /// The credentials of an account role (default `main`), spoiled when the step asks for a
    /// wrong secret.
    fn credentials(&self, auth: &Auth) -> Result<Credentials, Stop> {
        let (client_id, secret) = self.account(auth.account.as_deref())?;
        Ok(Credentials {
            client_id,
            secret: spoiled(secret, auth.wrong_secret),
        })
    }

    fn account(&self, role: Option<&str>) -> Result<(String, String), Stop> {
        let role = role.unwrap_or("main");
        let account = self
            .shared
            .target
            .accounts
            .get(role)
            .ok_or_else(|| Stop::Error(format!("the target file has no [accounts.{role}]")))?;
        Ok((
            account.client_id.clone(),
            account.client_secret.expose().to_owned(),
        ))
    }

    fn timestamp(&self, offset_ms: i64) -> u64 {
        self.clock.now_ms().saturating_add_signed(offset_ms)
    }

    fn nonce(&mut self, requested: Option<&str>) -> Result<String, Stop> {
        let nonce = match requested {
            Some("reuse") => self.last_nonce.clone().ok_or_else(|| {
                Stop::Error("nonce = \"reuse\" with no earlier signed step".to_owned())
            })?,
            Some(literal) => self.resolved(literal)?,
            None => fresh_nonce(),
        };
        self.last_nonce = Some(nonce.clone());
        Ok(nonce)
    }

    /// Applies a step's auth mode to its params, or returns the header to send.
    pub(super) async fn authenticate(
        &mut self,
        step: &Step,
        params: &mut Map<String, Value>,
    ) -> Result<Option<Authorization>, Stop> {
        let auth = &step.auth;
        match auth.mode {
            AuthMode::None => Ok(None),
            AuthMode::Bearer => {
                let token = self.bearer_token(auth).await?;
                Ok(self.bearer(token, params))
            }
            AuthMode::ClientCredentials => {
                let credentials = self.credentials(auth)?;
                params
                    .entry("grant_type")
                    .or_insert_with(|| Value::from("client_credentials"));
                params
                    .entry("client_id")
                    .or_insert_with(|| Value::from(credentials.client_id));
                params
                    .entry("client_secret")
                    .or_insert_with(|| Value::from(credentials.secret));
                Ok(None)
            }
            AuthMode::ClientSignature => {
                self.client_signature(auth, params)?;
                Ok(None)
            }
            AuthMode::Basic => {
                let credentials = self.credentials(auth)?;
                Ok(Some(Authorization::Value(sign::basic_header_value(
                    &credentials.client_id,
                    &credentials.secret,
                ))))
            }
            AuthMode::Signed => {
                let credentials = self.credentials(auth)?;
                let sign_uri = match &auth.sign_uri {
                    Some(uri) => Some(self.resolved(uri)?),
                    None => None,
                };
                Ok(Some(Authorization::Signed(SignedPlan {
                    scheme: self.shared.target.signature_scheme.clone(),
                    client_id: credentials.client_id,
                    secret: credentials.secret,
                    timestamp: self.timestamp(auth.timestamp_offset_ms),
                    nonce: self.nonce(auth.nonce.as_deref())?,
                    sign_uri,
                    uppercase_hex: auth.uppercase_hex,
                })))
            }
            AuthMode::ApiKey => {
                let key = self
                    .shared
                    .target
                    .fixtures
                    .direct_access_key
                    .as_ref()
                    .map(|key| key.expose().to_owned())
                    .ok_or_else(|| {
                        Stop::Error("the target file has no fixtures.direct_access_key".to_owned())
                    })?;
                let key = spoiled(key, auth.wrong_secret);
                Ok(Some(Authorization::Value(format!("Bearer {key}"))))
            }
        }
    }

    /// The `public/auth` parameters of a `client_signature` step (SPEC.md 5.5), with the
    /// defects a step may ask for: no LF after the nonce, upper-case hex, a wrong secret.
    fn client_signature(
        &mut self,
        auth: &Auth,
        params: &mut Map<String, Value>,
    ) -> Result<(), Stop> {
        let credentials = self.credentials(auth)?;
        let timestamp = self.timestamp(auth.timestamp_offset_ms);
        let nonce = self.nonce(auth.nonce.as_deref())?;
        let data = match &auth.data {
            Some(data) => self.resolved(data)?,
            None => String::new(),
        };
        let secret = credentials.secret;
        let mut signature = if auth.no_trailing_lf && data.is_empty() {
            sign::hmac_hex(
                secret.as_bytes(),
                format!("{timestamp}\n{nonce}").as_bytes(),
            )
        } else {
            sign::client_signature(&secret, timestamp, &nonce, &data)
                .map_err(|error| Stop::Error(error.to_string()))?
        };
        if auth.uppercase_hex {
            signature = signature.to_ascii_uppercase();
        }
        params
            .entry("grant_type")
            .or_insert_with(|| Value::from("client_signature"));
        params.insert("client_id".to_owned(), Value::from(credentials.client_id));
        params.insert("timestamp".to_owned(), Value::from(timestamp));
        params.insert("nonce".to_owned(), Value::from(nonce));
        params.insert("signature".to_owned(), Value::from(signature));
        if auth.data.is_some() {
            params.insert("data".to_owned(), Value::from(data));
        }
        Ok(())
    }

    /// The token of a `bearer` step: its `token` template, or a login as its account.
    pub(super) async fn bearer_token(&mut self, auth: &Auth) -> Result<String, Stop> {
        match &auth.token {
            Some(token) => self.resolved(token),
            None => {
                self.login(auth.account.as_deref(), auth.scope.as_deref())
                    .await
            }
        }
    }

    /// Places a bearer token where SPEC.md section 5.2 says: header on HTTP, params on WebSocket.
    pub(super) fn bearer(
        &self,
        token: String,
        params: &mut Map<String, Value>,
    ) -> Option<Authorization> {
        if self.transport == TransportKind::Ws {
            params.insert("access_token".to_owned(), Value::from(token));
            None
        } else {
            Some(Authorization::Value(format!("Bearer {token}")))
        }
    }

    /// Obtains (once per execution) a token for an account with `client_credentials`, over
    /// the execution's own transport.
    async fn login(&mut self, role: Option<&str>, scope: Option<&str>) -> Result<String, Stop> {
        let key = (
            role.unwrap_or("main").to_owned(),
            scope.unwrap_or_default().to_owned(),
        );
        if let Some(token) = self.tokens.get(&key) {
            return Ok(token.clone());
        }
        let (client_id, secret) = self.account(role)?;
        let mut params = Map::new();
        params.insert("grant_type".to_owned(), Value::from("client_credentials"));
        params.insert("client_id".to_owned(), Value::from(client_id));
        params.insert("client_secret".to_owned(), Value::from(secret));
        if let Some(scope) = scope {
            params.insert("scope".to_owned(), Value::from(scope));
        }
        let outgoing = Outgoing {
            method: "public/auth".to_owned(),
            params,
            raw: None,
            authorization: None,
        };
        let answer = self.send(&outgoing).await?;
        let clauses = vec!["auth.client_credentials.accepted".to_owned()];
        let token = answer
            .json
            .as_ref()
            .and_then(|json| json.pointer("/result/access_token"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match token {
            Some(token) => {
                self.tokens.insert(key, token.clone());
                Ok(token)
            }
            None => {
                let body = answer.json.as_ref().map_or(answer.body, Value::to_string);
                self.record(
                    &clauses,
                    format!(
                        "logging in with client_credentials gave no access_token: {}",
                        crate::check::short(&Value::from(body))
                    ),
                );
                Err(Stop::Failed)
            }
        }
    }
}
