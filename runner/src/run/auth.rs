//! Authentication of a step: what each `auth.mode` of a case adds to the request.
//!
//! `bearer` logs in once per execution, account and scope (or uses a captured token) and
//! places the token where SPEC.md 5.2 says; `client_credentials` and `client_signature` fill
//! the `public/auth` parameters of SPEC.md 5.3 and 5.5; `basic` and `signed` build the HTTP
//! `Authorization` headers of SPEC.md 5.6; `api_key` sends the Direct Access key (5.8). A
//! login mode fills in `grant_type` and `client_id` unless the step gives its own or leaves
//! them out (`auth.omit`), so a step can send a login missing either. A
//! step that asks for a wrong secret gets the nearest wrong one: the account's secret with
//! its last character changed. The parameters and headers themselves are built by
//! `transport::credential`, as the fuzzer's are.
//! The step's authentication also says whose pacing budget (`pace.rs`) its requests draw
//! from.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::exec::{Execution, Stop, TokenUse};
use super::pace;
use crate::transport::{
    self, Authorization, ClientSession, Credentials, SignatureParams, Token, place_bearer,
};
use harness_model::case::{
    Auth, Basic, Bearer, BearerLogin, BearerToken, ClientSignature, LoginParam, SecondFactorCode,
    Signature, Signed, Step,
};
use harness_model::target_file::CountedPer;
use harness_protocol::auth::nonce::fresh_nonce;
use harness_protocol::wire::TransportKind;

impl Execution<'_> {
    /// The credentials of the step's account role (default `main`), spoiled when the step
    /// asks for a wrong secret.
    fn credentials(&self, auth: &Auth) -> Result<Credentials, Stop> {
        let mut credentials = self.account(auth.account())?;
        if let Some(role) = auth.secret_of() {
            // Another key of the same user (SPEC.md 5.3: "up to 8 client ids"): its secret
            // under the account's client id. Optional in a target file: without it, a skip.
            credentials.secret = self
                .session
                .credentials(role)
                .ok_or_else(|| {
                    Stop::Skip(format!(
                        "the target file has no [accounts.{role}] (another key of the same user)"
                    ))
                })?
                .secret;
        }
        if let Auth::Basic(Basic {
            short_secret: Some(short),
            ..
        }) = auth
        {
            credentials.secret = short.apply(&credentials.secret);
        }
        Ok(credentials.spoiled(auth.wrong_secret()))
    }

    fn account(&self, role: Option<&str>) -> Result<Credentials, Stop> {
        let role = role.unwrap_or("main");
        self.session
            .credentials(role)
            .ok_or_else(|| Stop::Error(format!("the target file has no [accounts.{role}]")))
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

    /// The signature timestamp of a step: now plus its offset, moved by the target's clock
    /// skew to the side of the window the step asks for.
    fn signature_timestamp(&self, signature: &Signature) -> u64 {
        let offset = match signature.clock_skew {
            Some(side) => side.apply(
                signature.timestamp_offset_ms,
                self.shared.target.limits.clock_skew_ms,
            ),
            None => signature.timestamp_offset_ms,
        };
        self.session.timestamp(offset)
    }

    /// A timestamp no other nonceless signature of the run was made with: without a nonce
    /// the signed timestamp is what tells two requests apart, and SPEC.md 4.1 ("The nonce
    /// is single use") lets a server refuse a second one signed in the same millisecond,
    /// which executions running at once would otherwise send. Takes the next free
    /// millisecond and, when that is ahead of the clock, waits for the clock to reach it.
    async fn nonceless_timestamp(last_nonceless_ms: &AtomicU64, wanted: u64) -> u64 {
        let previous = last_nonceless_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(wanted.max(last.saturating_add(1)))
            })
            .unwrap_or_else(|last| last);
        let taken = wanted.max(previous.saturating_add(1));
        let ahead = taken.saturating_sub(wanted);
        if ahead > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(ahead)).await;
        }
        taken
    }

    /// Applies a step's auth mode to its params, or returns the header to send.
    pub(super) async fn authenticate(
        &mut self,
        step: &Step,
        params: &mut Map<String, Value>,
        token_use: TokenUse,
    ) -> Result<Option<Authorization>, Stop> {
        let auth = &step.auth;
        if let Some(code) = auth.second_factor() {
            self.second_factor(auth, code, params)?;
        }
        match auth {
            Auth::None => Ok(None),
            Auth::Bearer(bearer) => {
                let token = self.bearer_token(bearer, token_use).await?;
                Ok(place_bearer(self.transport, &token, params))
            }
            Auth::ClientCredentials(login) => {
                let credentials = self.credentials(auth)?;
                fill_login(
                    params,
                    login.omit.as_slice(),
                    "client_credentials",
                    &credentials,
                );
                if !params.contains_key("client_secret") {
                    transport::insert_client_secret(params, &credentials);
                }
                Ok(None)
            }
            Auth::ClientSignature(login) => {
                self.client_signature(auth, login, params).await?;
                Ok(None)
            }
            Auth::Basic(_) => Ok(Some(transport::basic(&self.credentials(auth)?))),
            Auth::Signed(signed) => Ok(Some(self.signed(auth, signed)?)),
            Auth::ApiKey(key) => {
                let key_text = self
                    .shared
                    .target
                    .fixtures
                    .direct_access_key
                    .as_ref()
                    .map(|key| key.expose().to_owned())
                    .ok_or_else(|| {
                        Stop::Error("the target file has no fixtures.direct_access_key".to_owned())
                    })?;
                Ok(Some(transport::api_key(&transport::spoiled(
                    key_text,
                    key.wrong_secret,
                ))))
            }
        }
    }

    /// The signed `Authorization` header of a `signed` step (SPEC.md 5.6).
    fn signed(&mut self, auth: &Auth, signed: &Signed) -> Result<Authorization, Stop> {
        let credentials = self.credentials(auth)?;
        let sign_uri = match &signed.sign_uri {
            Some(uri) => Some(self.resolved(uri)?),
            None => None,
        };
        let signature = &signed.signature;
        let timestamp = self.signature_timestamp(signature);
        let nonce = self.nonce(signature.nonce.as_deref())?;
        let sign_body = match &signed.sign_body {
            Some(body) => Some(self.resolved(body)?),
            None => None,
        };
        let mut plan = self.session.signed_plan(credentials, timestamp, nonce);
        plan.sign_uri = sign_uri;
        plan.sign_body = sign_body;
        plan.lowercase_method = signed.lowercase_method;
        plan.uppercase_hex = signature.uppercase_hex;
        plan.altered_signature = signature.altered_signature;
        Ok(Authorization::Signed(plan))
    }

    /// Adds the account's second factor (SPEC.md 5.7) in the parameter the target file names.
    fn second_factor(
        &self,
        auth: &Auth,
        code: SecondFactorCode,
        params: &mut Map<String, Value>,
    ) -> Result<(), Stop> {
        let role = auth.account().unwrap_or("main");
        let factor = self
            .shared
            .target
            .accounts
            .get(role)
            .and_then(|account| account.second_factor.as_ref())
            .ok_or_else(|| {
                Stop::Skip(format!(
                    "SPEC.md 5.7 does not show how the second factor is sent, and the target file gives no second_factor for [accounts.{role}]"
                ))
            })?;
        let now_s = self.session.timestamp(0) / 1_000;
        let value = match code {
            SecondFactorCode::Valid => factor.code.valid(now_s),
            SecondFactorCode::Wrong => factor.code.wrong(now_s),
        }
        .map_err(|error| Stop::Error(error.to_string()))?;
        self.shared.redactor.add(value.clone());
        params.insert(factor.parameter.clone(), Value::from(value));
        Ok(())
    }

    /// The `public/auth` parameters of a `client_signature` step (SPEC.md 5.5), with the
    /// defects a step may ask for: no LF after the nonce, upper-case hex, a wrong secret.
    async fn client_signature(
        &mut self,
        auth: &Auth,
        step: &ClientSignature,
        params: &mut Map<String, Value>,
    ) -> Result<(), Stop> {
        let credentials = self.credentials(auth)?;
        let signature = &step.signature;
        let mut timestamp = self.signature_timestamp(signature);
        let nonce = if step.no_nonce {
            // Only a timestamp of now: one moved on purpose (stale, skewed) is the case's.
            if signature.timestamp_offset_ms == 0 && signature.clock_skew.is_none() {
                timestamp =
                    Self::nonceless_timestamp(&self.shared.last_nonceless_ms, timestamp).await;
            }
            String::new()
        } else {
            self.nonce(signature.nonce.as_deref())?
        };
        let data = match &step.data {
            Some(data) => self.resolved(data)?,
            None => String::new(),
        };
        let plan = SignatureParams {
            timestamp,
            nonce: (!step.no_nonce).then_some(nonce),
            data: data.clone(),
            uppercase: signature.uppercase_hex,
            no_trailing_lf: step.no_trailing_lf,
            altered: signature.altered_signature,
        };
        fill_login(params, &step.login.omit, "client_signature", &credentials);
        transport::insert_client_signature(params, &credentials, &plan)
            .map_err(|error| Stop::Error(error.to_string()))?;
        if step.data.is_some() {
            params.insert("data".to_owned(), Value::from(data));
        }
        Ok(())
    }

    /// The token of a `bearer` step: its `token` template, or a login as its account.
    pub(super) async fn bearer_token(
        &mut self,
        bearer: &Bearer,
        token_use: TokenUse,
    ) -> Result<String, Stop> {
        match &bearer.token {
            BearerToken::Given(token) => self.resolved(token),
            BearerToken::Login(login) => {
                let account = bearer.account.as_deref();
                let token = self
                    .login(account, login.scope.as_deref(), token_use)
                    .await?;
                self.check_granted(account, login, token_use)?;
                Ok(token)
            }
        }
    }

    /// Skips the case when the server granted the requirement the step's token must lack
    /// (`lacks`), or did not grant what it must carry (`grants`): the granted scope is read,
    /// never assumed.
    fn check_granted(
        &self,
        account: Option<&str>,
        login: &BearerLogin,
        token_use: TokenUse,
    ) -> Result<(), Stop> {
        if login.lacks.is_none() && login.grants.is_none() {
            return Ok(());
        }
        let key = Self::token_key(account, login.scope.as_deref(), token_use);
        let Some(token) = self.session.cached_token(&key, |_| true) else {
            return Ok(());
        };
        let scope = login.scope.as_deref().unwrap_or_default();
        if let Some(requirement) = &login.lacks
            && token.granted.grants(requirement)
        {
            return Err(Stop::Skip(format!(
                "the token asked for scope \"{scope}\" was granted \"{}\", which grants {requirement}: its refusal cannot be checked",
                token.granted
            )));
        }
        if let Some(requirement) = &login.grants
            && !token.granted.grants(requirement)
        {
            return Err(Stop::Skip(format!(
                "the token asked for scope \"{scope}\" was granted \"{}\", without {requirement}: the refusal would not isolate the rule",
                token.granted
            )));
        }
        Ok(())
    }

    /// Where the token of a login as `role` with `scope` is cached. A token for other
    /// connections than the execution's ([`TokenUse::Elsewhere`]) is kept apart from the
    /// execution's own, and reused by every race of the execution: one token drawn on
    /// round after round.
    fn token_key(
        role: Option<&str>,
        scope: Option<&str>,
        token_use: TokenUse,
    ) -> (String, Option<String>) {
        let role = role.unwrap_or("main");
        let role = match token_use {
            TokenUse::Here => role.to_owned(),
            TokenUse::Elsewhere => format!("{role} (issued over HTTP)"),
        };
        (role, scope.map(str::to_owned))
    }

    /// Obtains (once per execution) a token for an account with `client_credentials`, over
    /// the execution's own transport.
    async fn login(
        &mut self,
        role: Option<&str>,
        scope: Option<&str>,
        token_use: TokenUse,
    ) -> Result<String, Stop> {
        let key = Self::token_key(role, scope, token_use);
        // A shared token has made the paced calls a burst allows: a fresh one (step_call.rs).
        let counted = self.renew_per_burst
            && self.calling_paced
            && self.shared.target.limits.transaction_log_counted_per == CountedPer::Token;
        let burst = self.shared.target.limits.transaction_log_burst.max(1);
        let within_burst = |token: &mut Token| {
            let fits = !counted || token.paced_uses < burst;
            if fits {
                token.paced_uses += u32::from(counted);
            }
            fits
        };
        if let Some(token) = self.session.cached_token(&key, within_burst) {
            return Ok(token.access);
        }
        let answer = self.send_login(role, scope, token_use).await?;
        match answer.json.as_ref().and_then(Token::from_answer) {
            Some(mut token) => {
                let access = token.access.clone();
                token.paced_uses = u32::from(counted);
                self.session.keep_token(key, token);
                Ok(access)
            }
            None => Err(self.login_refused(answer, scope)),
        }
    }

    /// Sends the login of `role` for `scope`, over HTTP where the token is not for the
    /// execution's own connection; a refusal of a scope naming `mainaccount` is asked
    /// again without it.
    async fn send_login(
        &mut self,
        role: Option<&str>,
        scope: Option<&str>,
        token_use: TokenUse,
    ) -> Result<harness_model::check::ParsedAnswer, Stop> {
        let credentials = self.account(role)?;
        // An unjudged execution (a fuzzer's) logs in over HTTP, so a worker's WebSocket
        // carries only the requests its oracle judges (what a connection remembers of a
        // token is part of the prediction, SPEC.md 5.2). So does a login for a token used
        // on another connection than the execution's (a race's): SPEC.md 5.4 names a
        // `connection` scope without saying what it binds, and a server may hold a token
        // issued over a WebSocket to that WebSocket alone; one issued over HTTP has no
        // connection to be bound to.
        let transport = self.transport;
        if !self.judging || token_use == TokenUse::Elsewhere {
            self.transport = TransportKind::HttpBody;
        }
        let mut answer = self
            .send_unless_throttled(&ClientSession::login_request(&credentials, scope))
            .await;
        // 5.4 lists `mainaccount` among what a granted scope can carry, not among the values
        // a request names: a server may refuse it asked for. The login is tried once more
        // without it, and a step that needs it granted says so (`auth.grants`).
        let refused = |answer: &Result<harness_model::check::ParsedAnswer, Stop>| {
            answer
                .as_ref()
                .ok()
                .is_some_and(|answer| answer.json.as_ref().and_then(Token::from_answer).is_none())
        };
        if let Some(without) = scope.and_then(without_mainaccount)
            && refused(&answer)
        {
            self.notes.push(format!(
                "the login asking for scope \"{}\" was refused; asked again without mainaccount, which 5.4 does not list among the values to request",
                scope.unwrap_or_default()
            ));
            answer = self
                .send_unless_throttled(&ClientSession::login_request(&credentials, Some(&without)))
                .await;
        }
        self.transport = transport;
        answer
    }

    /// Why a login that gave no token stops the execution: a skip where the refusal is
    /// one SPEC.md allows or the target's pace, else a failure of
    /// `auth.client_credentials.accepted`.
    fn login_refused(
        &mut self,
        answer: harness_model::check::ParsedAnswer,
        scope: Option<&str>,
    ) -> Stop {
        let limits = &self.shared.target.limits;
        // A scope naming block_rfq (a method's need in 5.4, not among the values listed to
        // request) may be refused: what that step checks cannot be checked.
        if scope.is_some_and(|scope| scope.contains("block_rfq:")) {
            return Stop::Skip(format!(
                "the login asking for scope \"{}\" was refused: 5.4 does not list block_rfq among the scope values to request",
                scope.unwrap_or_default()
            ));
        }
        if let Some(code) = pace::session_limited(&answer, limits) {
            return Stop::Skip(pace::session_limit_skip(
                harness_protocol::spec::AUTH_METHOD,
                code,
            ));
        }
        // Throttled on every try: the target's pace, never a verdict.
        if let Some(code) = pace::throttled(&answer, limits) {
            return Stop::Skip(format!(
                "{THROTTLED_LOGIN} (code {code}) on every one of its tries"
            ));
        }
        let body = answer.json.as_ref().map_or(answer.body, Value::to_string);
        self.record(
            &["auth.client_credentials.accepted".to_owned()],
            format!(
                "logging in with client_credentials gave no access_token: {}",
                harness_model::check::short(&Value::from(body))
            ),
        );
        Stop::Failed
    }
}

/// How the reason of a login the target throttled on every try starts: the fuzzer counts such
/// a request as throttled, not judged.
pub const THROTTLED_LOGIN: &str = "the target throttled the login";

/// `scope` without its `mainaccount` word, when it has one.
fn without_mainaccount(scope: &str) -> Option<String> {
    let words: Vec<&str> = scope.split_whitespace().collect();
    words
        .contains(&harness_protocol::spec::MAINACCOUNT)
        .then(|| {
            words
                .into_iter()
                .filter(|word| *word != harness_protocol::spec::MAINACCOUNT)
                .collect::<Vec<_>>()
                .join(" ")
        })
}

/// The `grant_type` and `client_id` of a login (SPEC.md 5.3), each unless the step gives its
/// own or leaves it out (`auth.omit`).
fn fill_login(
    params: &mut Map<String, Value>,
    omit: &[LoginParam],
    grant_type: &str,
    credentials: &Credentials,
) {
    let filled = [
        (LoginParam::GrantType, grant_type),
        (LoginParam::ClientId, credentials.client_id.as_str()),
    ];
    for (param, value) in filled {
        if !omit.contains(&param) {
            params
                .entry(param.name())
                .or_insert_with(|| Value::from(value.to_owned()));
        }
    }
}

impl Execution<'_> {
    /// Whose pacing budgets a request with this authentication draws from: its account, or,
    /// on a target whose limit is counted per token, this execution's own token for it; a
    /// token the step gives draws from the main account's too ([`pace::budget_names`]).
    pub(super) fn pace_keys(&self, auth: &Auth) -> Vec<String> {
        pace::budget_names(auth, &self.case.id, self.transport, &self.shared.target)
    }
}

#[cfg(test)]
mod tests;
