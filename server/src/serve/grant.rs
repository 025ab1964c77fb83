//! Token issuing and ending: `public/auth` with its three grant types (SPEC.md 4.1, 5.3,
//! 5.5), `public/exchange_token` (4.2), `public/fork_token` (4.3) and `private/logout`
//! (4.4).
//!
//! The spec names no parameters for `fork_token`; the reference server takes
//! `refresh_token` and `session_name`. Refreshing a connection-scoped token ends the
//! previous pair (section 5.3); refreshing a session-scoped one rotates the refresh token
//! but lets the old access token live out its time, since the session itself goes on.

use serde_json::Value;

use super::ctx::Ctx;
use super::fault::Fault;
use super::state::{User, lock};
use super::tokens::{Ending, Issued, bound_scope, grant_scope};
use super::{ServerState, Variant};
use harness_protocol::auth::scope::Scope;
use harness_protocol::auth::sign;
use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec;

/// `public/auth`.
pub(crate) fn auth(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    // The `grant-type-any-case` fault takes a listed grant type in any letter case.
    let any_case = ctx.fault(Fault::GrantTypeAnyCase)
        && ctx.params.str("grant_type").is_some_and(|name| {
            spec::GRANT_TYPES
                .iter()
                .any(|listed| listed.eq_ignore_ascii_case(name))
        });
    let grant_type = ctx
        .listed(
            "grant_type",
            ctx.fault(Fault::GrantTypeAny) || any_case,
            false,
        )?
        .ok_or_else(|| ErrorObject::invalid_params("grant_type", "missing required parameter"))?;
    // SPEC.md 4.1: `data` is "returned in the response", under a name it does not show;
    // the reference returns it as `data`.
    // The `sig-data-not-returned-without-nonce` fault forgets it when no nonce is given.
    let unechoed = ctx.fault(Fault::SigDataNotReturned)
        || (ctx.fault(Fault::SigDataNotReturnedWithoutNonce) && !ctx.params.has("nonce"));
    let echo = (grant_type == "client_signature" && !unechoed)
        .then(|| ctx.params.str("data").map(str::to_owned))
        .flatten();
    let issued = match grant_type {
        "client_signature" => client_signature(ctx)?,
        // The `refresh-token-optional` fault lets a refresh without its token fall back
        // to the client id and secret given with it.
        "refresh_token"
            if ctx.fault(Fault::RefreshTokenOptional) && !ctx.params.has("refresh_token") =>
        {
            client_credentials(ctx)?
        }
        "refresh_token" => refresh(ctx)?,
        // client_credentials, or any other name when the grant-type-any fault is on.
        _ => client_credentials(ctx)?,
    };
    let signed_login = grant_type == "client_signature";
    let mut token_set = finish(ctx, &issued);
    if let Some(members) = token_set.as_object_mut() {
        if let Some(data) = echo {
            members.insert("data".to_owned(), Value::from(data));
        }
        state_fields(ctx, signed_login, members);
    }
    Ok(token_set)
}

/// The two fields SPEC.md 4.1 describes without names ("a flag that the token came from an
/// external identity-provider login, and a copy of the input `state`"), under the names
/// the reference's target file gives, for a login that sends `state`: the copy, and the
/// flag, false, since no login of this server goes through an identity provider. A login
/// without `state` gets neither (SPEC.md gives them no presence rule), so every other
/// token set stays as it was. The `auth-state-not-copied-signed` fault leaves the copy out
/// of client_signature logins; `auth-idp-flag-true` sets the flag.
fn state_fields(ctx: &Ctx<'_>, signed_login: bool, members: &mut serde_json::Map<String, Value>) {
    let Some(state) = ctx.params.str("state") else {
        return;
    };
    if !(ctx.fault(Fault::AuthStateNotCopiedSigned) && signed_login) {
        members.insert(
            super::fixtures::TOKEN_STATE_COPY.to_owned(),
            Value::from(state),
        );
    }
    members.insert(
        super::fixtures::TOKEN_IDP_LOGIN.to_owned(),
        Value::Bool(ctx.fault(Fault::AuthIdpFlagTrue)),
    );
}

/// `public/exchange_token`: a token for the caller's main account or one of its
/// subaccounts, with the caller's permissions or a narrower requested scope.
pub(crate) fn exchange_token(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    if ctx.fault(Fault::ExchangeTokenBroken) {
        return Err(ErrorObject::bad_request("token exchange is unavailable"));
    }
    let refresh_token = ctx.params.required_str("refresh_token")?;
    let subject_id = ctx.params.required_int("subject_id")?;
    let state = ctx.state;
    let record = state
        .tokens_refresh(refresh_token)
        .ok_or_else(|| ErrorObject::unauthorized("invalid or expired refresh token"))?;
    let caller = state
        .user(record.user_id)
        .ok_or_else(|| ErrorObject::unauthorized("unknown user"))?;
    let subject = u64::try_from(subject_id)
        .ok()
        .filter(|id| {
            *id == caller.main_id
                || state.is_subaccount_of(*id, caller.main_id)
                // The `exchange-token-any-subject` fault takes any main account's subaccount.
                || (ctx.fault(Fault::ExchangeTokenAnySubject)
                    && state.user(*id).is_some_and(User::is_subaccount))
        })
        .filter(|id| {
            !(ctx.fault(Fault::DisabledSubUnreachable) && lock(&state.disabled_logins).contains(id))
        })
        .and_then(|id| state.user(id))
        .ok_or_else(|| {
            ErrorObject::invalid_params(
                "subject_id",
                "must be the main account or one of its subaccounts",
            )
        })?;
    let scope = match ctx.params.str("scope") {
        None if ctx.fault(Fault::ExchangeTokenFullScope) => subject.maximum.clone(),
        // The `exchange-token-drops-trade` fault keeps every area of the caller's but trade.
        None if ctx.fault(Fault::ExchangeTokenDropsTrade) => {
            let mut kept = record.scope.clone();
            kept.access.remove("trade");
            kept
        }
        None => record.scope.clone(),
        Some(requested) => {
            let capped = ctx.variant(Variant::ExchangeScopeCapped);
            let escalates = ctx.fault(Fault::ExchangeScopeExceeds);
            if !capped && !escalates && !Scope::parse(requested).within(&record.scope) {
                return Err(ErrorObject::unauthorized(
                    "requested scope exceeds the caller's permissions",
                ));
            }
            // Granting within the caller's scope caps a wider request (the variant); the
            // `exchange-scope-exceeds` fault grants it within the subject's key instead.
            let bound = if escalates {
                &subject.maximum
            } else {
                &record.scope
            };
            grant_scope(Some(requested), bound, keep_unnamed(ctx))
        }
    };
    let holder = if ctx.fault(Fault::ExchangeTokenForCaller) {
        caller
    } else {
        subject
    };
    let issued = issue(ctx, holder, bound_scope(&scope, &holder.maximum))?;
    if holder.user_id != caller.user_id {
        lock(&state.tokens).mark_through_main(&issued);
    }
    Ok(finish(ctx, &issued))
}

/// `public/fork_token`: a new named session with the same scope as a session token.
pub(crate) fn fork_token(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    if ctx.fault(Fault::ForkTokenBroken) {
        return Err(ErrorObject::bad_request("token forking is unavailable"));
    }
    // The spec shows no parameter names (4.3); the `fork-token-names` variant calls the
    // session's `name` and refuses the reference's `session_name`.
    let name_param = if ctx.variant(Variant::ForkTokenNames) {
        if ctx.params.has("session_name") {
            return Err(ErrorObject::invalid_params(
                "session_name",
                "unknown parameter",
            ));
        }
        "name"
    } else {
        if ctx.params.has("name") {
            return Err(ErrorObject::invalid_params("name", "unknown parameter"));
        }
        "session_name"
    };
    let refresh_token = ctx.params.required_str("refresh_token")?;
    let session_name = ctx.params.required_str(name_param)?;
    if session_name.is_empty() || session_name.contains(char::is_whitespace) {
        return Err(ErrorObject::invalid_params(
            name_param,
            "must be a non-empty name without spaces",
        ));
    }
    let state = ctx.state;
    let record = state
        .tokens_refresh(refresh_token)
        .ok_or_else(|| ErrorObject::unauthorized("invalid or expired refresh token"))?;
    if record.scope.session.is_none() && !ctx.fault(Fault::ForkConnectionAllowed) {
        return Err(ErrorObject::unauthorized(
            "connection-scoped tokens cannot be forked",
        ));
    }
    let user = state
        .user(record.user_id)
        .ok_or_else(|| ErrorObject::unauthorized("unknown user"))?;
    if ctx.fault(Fault::ForkEndsOriginal) {
        lock(&state.tokens).revoke_access(&record.access_token);
    }
    // The `fork-token-full-scope` fault forks into the account's full permissions.
    let mut scope = if ctx.fault(Fault::ForkTokenFullScope) {
        user.maximum.clone()
    } else {
        record.scope
    };
    scope.session = Some(session_name.to_owned());
    scope.connection = false;
    let issued = issue(ctx, user, scope)?;
    let mut tokens = lock(&state.tokens);
    if ctx.fault(Fault::ForkEndsOnRefresh) || ctx.fault(Fault::BearerRefusesForked) {
        tokens.note_fork(refresh_token, &issued);
    }
    if tokens.is_through_main(refresh_token) {
        tokens.mark_through_main(&issued);
    }
    drop(tokens);
    Ok(finish(ctx, &issued))
}

/// `private/logout`: ends the access token and its refresh token.
pub(crate) fn logout(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let access_token = ctx.caller()?.access_token.clone();
    ctx.state.on_logout(ctx.caller()?.user_id);
    if let Some(token) = access_token {
        if !ctx.fault(Fault::LogoutNoop) {
            let refresh = lock(&ctx.state.tokens)
                .access(&token, 0)
                .map(|record| record.refresh_token.clone())
                .filter(|_| !ctx.state.fault(Fault::LogoutKeepsRefresh));
            let ended = token.clone();
            let set_aside = ctx.fault(Fault::LogoutKeepsWsRemembered);
            let invalidate = move |state: &ServerState| {
                let mut tokens = lock(&state.tokens);
                // The `logout-keeps-ws-remembered` fault keeps what a connection remembers.
                if set_aside {
                    tokens.set_aside(&ended, Ending::Logout);
                }
                tokens.revoke_access(&ended);
                if let Some(refresh) = &refresh {
                    tokens.revoke_refresh(refresh);
                }
            };
            if ctx.fault(Fault::RaceLogout) {
                // The tokens stop working a few ms after the answer.
                ctx.state.deferred.later(invalidate);
            } else {
                invalidate(ctx.state);
            }
        }
        if let Some(connection) = ctx.connection.as_deref_mut()
            && connection.session_token.as_deref() == Some(token.as_str())
            && !ctx.state.fault(Fault::LogoutNoop)
        {
            connection.session_token = None;
        }
    }
    if ctx.variant(Variant::LogoutCloses) {
        if let Some(connection) = ctx.connection.as_deref_mut() {
            connection.close_after_answer = true;
        }
        return Ok(Value::Null);
    }
    Ok(Value::String("ok".to_owned()))
}

/// The login's `client_id`; the `auth-client-id-defaults-to-main` fault takes the main
/// account's when it is missing.
fn login_client_id<'a>(ctx: &'a Ctx<'_>) -> Result<&'a str, ErrorObject> {
    match ctx.params.str("client_id") {
        None if ctx.fault(Fault::AuthClientIdDefaultsToMain) => ctx
            .state
            .user(super::state::MAIN_ID)
            .map(|user| user.client_id)
            .ok_or_else(|| ErrorObject::invalid_credentials("unknown client id")),
        _ => ctx.params.required_str("client_id"),
    }
}

fn client_credentials(ctx: &Ctx<'_>) -> Result<Issued, ErrorObject> {
    let client_id = login_client_id(ctx)?;
    let secret_optional = ctx.fault(Fault::CredentialsSecretOptional);
    let client_secret = match ctx.params.str("client_secret") {
        None if secret_optional => None,
        _ => Some(ctx.params.required_str("client_secret")?),
    };
    let user = ctx
        .state
        .user_by_client(client_id)
        .ok_or_else(|| ErrorObject::invalid_credentials("unknown client id"))?;
    let secret_ok = client_secret.is_none_or(|secret| {
        ctx.state
            .secret_accepted(user.client_secret.expose(), secret)
            || (ctx.fault(Fault::CredentialsAnyAccountSecret)
                && any_account_has_secret(ctx, secret))
            || (ctx.fault(Fault::CredentialsAnyKeyOfUser)
                && ctx.state.other_keys(user).any(|key| {
                    ctx.state
                        .secret_accepted(key.client_secret.expose(), secret)
                }))
    });
    if !secret_ok && !ctx.fault(Fault::CredentialsAnySecret) {
        return Err(ErrorObject::invalid_credentials("wrong client secret"));
    }
    issue(
        ctx,
        user,
        grant_scope(ctx.params.str("scope"), &user.maximum, keep_unnamed(ctx)),
    )
}

/// Whether some account's secret is this one (what the `credentials-any-account-secret`
/// fault accepts for any client id).
fn any_account_has_secret(ctx: &Ctx<'_>, secret: &str) -> bool {
    ctx.state
        .users
        .iter()
        .any(|user| sign::signatures_match(user.client_secret.expose(), secret))
}

/// `public/auth` with `grant_type=client_signature` (SPEC.md 4.1, 5.5): the timestamp in
/// its window, the signature over `timestamp LF nonce LF data` under one of the user's
/// keys, the nonce (or the timestamp) used once.
fn client_signature(ctx: &Ctx<'_>) -> Result<Issued, ErrorObject> {
    let client_id = login_client_id(ctx)?;
    // The `sig-timestamp-optional` fault verifies only what is given: without a timestamp,
    // neither the window nor the signature.
    let unstamped = ctx.fault(Fault::SigTimestampOptional) && !ctx.params.has("timestamp");
    let timestamp = if unstamped {
        i64::try_from(ctx.state.now_ms()).unwrap_or(i64::MAX)
    } else {
        ctx.params.required_int("timestamp")?
    };
    let timestamp = u64::try_from(timestamp)
        .map_err(|_| ErrorObject::invalid_params("timestamp", "must not be negative"))?;
    let signature = if ctx.fault(Fault::SigSignatureOptional) {
        ctx.params.str("signature")
    } else {
        Some(ctx.params.required_str("signature")?)
    };
    let nonce = ctx.params.str("nonce").unwrap_or_default();
    let data = signed_data(ctx);
    let user = ctx
        .state
        .user_by_client(client_id)
        .ok_or_else(|| ErrorObject::invalid_credentials("unknown client id"))?;
    let window = super::principal::signature_window_ms(
        ctx.fault(Fault::SigWindowWide),
        ctx.fault(Fault::SigWindowNarrow),
        ctx.fault(Fault::SigWindow61s),
    );
    // The `sig-window-with-nonce-only` fault holds only a request with a nonce to the window.
    if !(ctx.fault(Fault::SigWindowWithNonceOnly) && nonce.is_empty()) {
        ctx.state.check_timestamp(timestamp, window)?;
    }
    let unchecked = ctx.fault(Fault::SigUnchecked)
        || (ctx.fault(Fault::SigUncheckedWithData) && !data.is_empty());
    if let Some(signature) = signature.filter(|_| !unchecked && !unstamped) {
        verify_client_signature(ctx, user, (timestamp, nonce, &data), signature)?;
    }
    if !ctx.fault(Fault::SigNonceReuse) {
        use_client_nonce(ctx, client_id, nonce, timestamp)?;
    }
    issue(
        ctx,
        user,
        grant_scope(ctx.params.str("scope"), &user.maximum, keep_unnamed(ctx)),
    )
}

/// The `data` a `client_signature` signs, as the faults that distort it read it: each
/// non-ASCII character as `?` (`sig-data-not-utf8`, a server encoding the string to sign
/// in ASCII), or without its surrounding whitespace (`sig-data-trimmed`).
fn signed_data<'p>(ctx: &'p Ctx<'_>) -> std::borrow::Cow<'p, str> {
    let data = ctx.params.str("data").unwrap_or_default();
    let data: std::borrow::Cow<'_, str> = if ctx.fault(Fault::SigDataNotUtf8) {
        data.chars()
            .map(|c| if c.is_ascii() { c } else { '?' })
            .collect::<String>()
            .into()
    } else {
        data.into()
    };
    if ctx.fault(Fault::SigDataTrimmed) {
        data.trim().to_owned().into()
    } else {
        data
    }
}

/// Checks `signature` over the string to sign of (timestamp, nonce, data) against the
/// user's key (every key of the user under `sig-any-key-of-user`).
fn verify_client_signature(
    ctx: &Ctx<'_>,
    user: &User,
    (timestamp, nonce, data): (u64, &str, &str),
    signature: &str,
) -> Result<(), ErrorObject> {
    let string_to_sign = if ctx.fault(Fault::SigNoTrailingLf) && data.is_empty() {
        format!("{timestamp}\n{nonce}")
    } else {
        sign::client_string_to_sign(timestamp, nonce, data)
            .map_err(|error| ErrorObject::invalid_credentials(&error.to_string()))?
    };
    let expected_with = |secret: &str| {
        let expected = sign::hmac_hex(secret.as_bytes(), string_to_sign.as_bytes());
        if ctx.fault(Fault::SigUppercaseHex) {
            expected.to_ascii_uppercase()
        } else {
            expected
        }
    };
    let keys: Vec<&User> = if ctx.fault(Fault::SigAnyKeyOfUser) {
        std::iter::once(user)
            .chain(ctx.state.other_keys(user))
            .collect()
    } else {
        vec![user]
    };
    let accepted = keys.iter().any(|key| {
        ctx.state
            .signature_accepted(&expected_with(key.client_secret.expose()), signature)
    });
    if accepted {
        Ok(())
    } else {
        Err(ErrorObject::invalid_credentials("signature does not match"))
    }
}

/// Uses the request's nonce once; without a nonce the signed timestamp is what makes the
/// request unique, so the exact request cannot be replayed while a fresh one still goes
/// through.
fn use_client_nonce(
    ctx: &Ctx<'_>,
    client_id: &str,
    nonce: &str,
    timestamp: u64,
) -> Result<(), ErrorObject> {
    let replay_key = if nonce.is_empty() {
        format!("\u{0}ts:{timestamp}")
    } else if ctx.fault(Fault::SigNonceWithTimestamp) {
        format!("{nonce}\u{0}{timestamp}")
    } else {
        nonce.to_owned()
    };
    let replay_key = format!("{}{replay_key}", replay_space(ctx));
    if ctx.fault(Fault::RaceSigNonce) {
        ctx.state
            .use_nonce_in_two_steps(client_id, &replay_key, timestamp)?;
    } else {
        ctx.state.use_nonce(client_id, &replay_key, timestamp)?;
    }
    Ok(())
}

/// The part of the nonce cache a `client_signature` nonce is remembered in: one for every
/// connection and transport, or what the `sig-nonce-per-connection` and
/// `sig-nonce-per-transport` faults split it into.
fn replay_space(ctx: &Ctx<'_>) -> String {
    let connection = ctx
        .connection
        .as_ref()
        .map(|connection| connection.label.as_str());
    if ctx.fault(Fault::SigNoncePerConnection) {
        format!("{}\u{0}", connection.unwrap_or("http"))
    } else if ctx.fault(Fault::SigNoncePerTransport) {
        format!("{}\u{0}", if connection.is_some() { "ws" } else { "http" })
    } else {
        String::new()
    }
}

fn refresh(ctx: &Ctx<'_>) -> Result<Issued, ErrorObject> {
    let refresh_token = ctx.params.required_str("refresh_token")?;
    let now_ms = ctx.state.now_ms();
    // One lock for lookup, issue and revocation, so two concurrent refreshes with the same
    // token cannot both succeed; the `race-refresh` fault lets go of it between the lookup
    // and the rest.
    let mut tokens = lock(&ctx.state.tokens);
    let record = tokens
        .refresh(refresh_token, now_ms)
        .cloned()
        .ok_or_else(|| ErrorObject::unauthorized("invalid or expired refresh token"))?;
    if ctx.fault(Fault::RaceRefresh) {
        drop(tokens);
        super::fault::race_pause();
        tokens = lock(&ctx.state.tokens);
    }
    // The `refresh-takes-session-slot` fault takes a slot on every refresh of a session.
    if let (Some(name), true) = (
        &record.scope.session,
        ctx.fault(Fault::RefreshTakesSessionSlot),
    ) && !tokens.take_session_slot(record.user_id, name, SLOTS_A_SESSION_TAKES_AT_MOST)
    {
        return Err(ErrorObject::bad_request("session slots full"));
    }
    let mut scope = record.scope.clone();
    if let (Some(name), true) = (&scope.session, ctx.fault(Fault::RefreshSessionChanged)) {
        // A prefix, so the new name does not even contain the old one.
        scope.session = Some(format!("refreshed-{name}"));
    }
    let mut issued = tokens
        .issue(record.user_id, scope, now_ms)
        .ok_or_else(ErrorObject::too_many_requests)?;
    if tokens.is_through_main(refresh_token) {
        tokens.mark_through_main(&issued);
    }
    // The `fork-ends-on-refresh` fault ends the session forked from this one.
    if ctx.fault(Fault::ForkEndsOnRefresh)
        && let Some(forked) = tokens.fork_of(refresh_token).cloned()
    {
        tokens.revoke_access(&forked);
    }
    if ctx.fault(Fault::RefreshSameToken) {
        tokens.keep_refresh(&mut issued, refresh_token);
    } else {
        tokens.revoke_refresh(refresh_token);
    }
    let revoke_session = ctx.variant(Variant::SessionRefreshRevokes);
    if (record.scope.session.is_none() || revoke_session) && !ctx.fault(Fault::RefreshKeepsOldToken)
    {
        tokens.revoke_access(&record.access_token);
    }
    Ok(issued)
}

/// The slots a session may hold under the `refresh-takes-session-slot` fault: its login
/// and three refreshes.
const SLOTS_A_SESSION_TAKES_AT_MOST: usize = 4;

/// Whether families a requested scope does not name keep the key's level (a variant).
fn keep_unnamed(ctx: &Ctx<'_>) -> bool {
    ctx.variant(Variant::ScopeUnnamedKept)
}

/// Issues a token pair for `user`.
fn issue(ctx: &Ctx<'_>, user: &User, scope: Scope) -> Result<Issued, ErrorObject> {
    let now_ms = ctx.state.now_ms();
    lock(&ctx.state.tokens)
        .issue(user.user_id, scope, now_ms)
        .ok_or_else(ErrorObject::too_many_requests)
}

/// The token set, remembered by a WebSocket connection when session-scoped.
fn finish(ctx: &mut Ctx<'_>, issued: &Issued) -> Value {
    ctx.remember(issued);
    let token_type = if ctx.fault(Fault::TokenTypeMac) {
        "mac"
    } else {
        "bearer"
    };
    issued.token_set(token_type)
}
