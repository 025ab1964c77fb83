//! The oracle's credential rules: which credentials a method cannot run with (missing,
//! stale, replayed, wrongly signed or short of the scope the method states), and which
//! `public/auth` parameter sets a grant refuses.

use harness_protocol::spec;
use serde_json::Value;

use super::{OracleKnowledge, Prediction, error};
use crate::{FuzzRequest, RequestAuth};
use harness_model::case::{Auth, Basic, ClientSignature, Login, Signed};
use harness_protocol::spec::Method;

/// Credentials the method cannot run with.
pub(super) fn auth_refusal(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    if !rule.private {
        return public_auth_refusal(request);
    }
    if request.auth.is_bogus_token() {
        return Some(error(
            "auth.private.requires_token",
            "an access token that was never issued",
        ));
    }
    header_refusal(request).or_else(|| private_auth_refusal(request, rule, knowledge))
}

/// Defective credentials on a public method: `either`, since public methods need no
/// credentials and whether bad ones are refused is not said.
fn public_auth_refusal(request: &FuzzRequest) -> Option<Prediction> {
    let defective = request.auth.is_bogus_token()
        || matches!(
            request.auth,
            RequestAuth::Step(
                Auth::Basic(Basic {
                    wrong_secret: true,
                    ..
                }) | Auth::Signed(_)
            )
        );
    defective.then_some(Prediction::either(""))
}

/// A `basic` or `signed` header (SPEC.md 5.6) the method cannot run with.
fn header_refusal(request: &FuzzRequest) -> Option<Prediction> {
    match &request.auth {
        RequestAuth::Step(Auth::Basic(Basic {
            wrong_secret: true, ..
        })) => Some(error(
            "auth.basic.wrong_secret",
            "basic authorization with a wrong secret",
        )),
        RequestAuth::Step(Auth::Signed(signed)) => signed_refusal(request, signed),
        _ => None,
    }
}

/// A signed header the method cannot run with: a wrong secret, a stale timestamp, a
/// replayed nonce.
fn signed_refusal(request: &FuzzRequest, signed: &Signed) -> Option<Prediction> {
    let offset_ms = signed.signature.timestamp_offset_ms;
    if signed.wrong_secret {
        return Some(error(
            "auth.signed.wrong_key",
            "signed header with a wrong secret",
        ));
    }
    // Older than the window is rejected (5.6); whether a timestamp ahead of the server's
    // clock is accepted is not stated, so only the past is judged.
    if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS && offset_ms < 0 {
        return Some(error(
            "auth.signed.window",
            format!("signed header timestamp {offset_ms} ms away"),
        ));
    }
    if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS {
        return Some(Prediction::either(""));
    }
    // Released together with the original, either copy may be the one that succeeds:
    // the race step holds them to one result (`steps.rs`).
    if crate::steps::raced(request) {
        return Some(Prediction::either(
            "a replay released together with the original: its race allows one result",
        ));
    }
    if request.auth.is_replay() {
        return Some(error(
            "auth.signed.nonce_single_use",
            "signed header nonce used twice",
        ));
    }
    None
}

/// A private method without a token, a WebSocket-only one over HTTP, or a token short of
/// the scope it states.
fn private_auth_refusal(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let http = request.transport.is_http();
    if rule.private
        && matches!(
            request.auth,
            RequestAuth::Step(Auth::None | Auth::ClientCredentials(_) | Auth::ClientSignature(_))
                | RequestAuth::NoSecret { .. }
                | RequestAuth::RefreshOf { .. }
        )
    {
        if knowledge.connection_holds_token {
            // The connection may remember a token it carried, or one it asked for (5.2).
            return Some(Prediction::either(""));
        }
        return Some(error(
            "auth.private.requires_token",
            "a private method without credentials",
        ));
    }
    if rule.ws_only() && http {
        return Some(error(
            "auth.logout.ws_only",
            format!("{} (WebSocket only) over http", rule.name),
        ));
    }
    let narrowed = knowledge
        .granted
        .as_ref()
        .is_some_and(|granted| spec::WIDEST_GRANTS.iter().any(|full| !granted.grants(full)));
    if rule.private && rule.scope.is_empty() && narrowed {
        // The spec shows no scope for this method: a narrower token may or may not do.
        return Some(Prediction::either(""));
    }
    if rule.private
        && let Some(granted) = &knowledge.granted
        && let Some(missing) = rule.scope.iter().find(|needed| !granted.grants(needed))
    {
        return Some(error(
            rule.scope_clause,
            format!("the token lacks {missing}"),
        ));
    }
    None
}

/// The `public/auth` parameter set the grant refuses: parameters of its grant type
/// missing or not the key's, a wrong secret or signature, or no credentials at all.
pub(super) fn auth_params_refusal(
    request: &FuzzRequest,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let grant = request.params.get("grant_type").and_then(Value::as_str);
    let planned = planned_grant(&request.auth);
    if planned.is_some() && planned != grant {
        return Some(error(
            "auth.grant_type.required_params",
            "the grant type's parameters are missing",
        ));
    }
    let client_id = request.params.get("client_id").and_then(Value::as_str);
    if matches!(planned, Some("client_credentials" | "client_signature"))
        && client_id != knowledge.client_id.as_deref()
    {
        return Some(error(
            "auth.grant_type.required_params",
            "client_id is missing or not the key's",
        ));
    }
    if let Some(refusal) = login_refusal(request) {
        return Some(refusal);
    }
    if sent_foreign(request, grant) {
        return Some(Prediction::either(
            "a parameter of another grant type (4.1 does not say it is ignored)",
        ));
    }
    match (&request.auth, grant) {
        (RequestAuth::RefreshOf { .. }, Some("refresh_token")) => None,
        (RequestAuth::Step(auth), Some("refresh_token"))
            if *auth == Auth::None || request.auth.is_bogus_token() =>
        {
            Some(error(
                "auth.grant_type.required_params",
                "a refresh token that was never issued",
            ))
        }
        (RequestAuth::Step(auth), Some(_))
            if *auth == Auth::None || request.auth.is_bogus_token() =>
        {
            Some(error(
                "auth.grant_type.required_params",
                "no credentials for the grant type",
            ))
        }
        _ => None,
    }
}

/// The grant type the request's credentials were made for.
fn planned_grant(auth: &RequestAuth) -> Option<&'static str> {
    match auth {
        RequestAuth::Step(Auth::ClientCredentials(_)) | RequestAuth::NoSecret { .. } => {
            Some("client_credentials")
        }
        RequestAuth::Step(Auth::ClientSignature(_)) => Some("client_signature"),
        RequestAuth::RefreshOf { .. } => Some("refresh_token"),
        _ => None,
    }
}

/// Whether the request sends a parameter another grant type uses (a `data` with
/// client_credentials): 4.1 says which parameters each grant needs, not that the others
/// are ignored.
fn sent_foreign(request: &FuzzRequest, grant: Option<&str>) -> bool {
    let foreign: &[&str] = match grant {
        Some("client_credentials") => &["timestamp", "signature", "nonce", "data", "refresh_token"],
        Some("client_signature") => &["client_secret", "refresh_token"],
        Some("refresh_token") => &["client_secret", "timestamp", "signature", "nonce", "data"],
        _ => &[],
    };
    foreign
        .iter()
        .any(|name| request.params.contains_key(*name))
}

/// A login the grant refuses: a wrong or missing secret, or a bad signature.
fn login_refusal(request: &FuzzRequest) -> Option<Prediction> {
    match &request.auth {
        RequestAuth::Step(Auth::ClientCredentials(Login {
            wrong_secret: true, ..
        })) => Some(error(
            "auth.client_credentials.wrong_secret",
            "client_credentials with a wrong secret",
        )),
        RequestAuth::NoSecret { .. } => Some(error(
            "auth.grant_type.required_params",
            "client_credentials without client_secret",
        )),
        RequestAuth::Step(Auth::ClientSignature(login)) => client_signature_refusal(request, login),
        _ => None,
    }
}

/// A `client_signature` login the grant refuses: a wrong secret, upper-case hex, a stale
/// timestamp, a replayed nonce.
fn client_signature_refusal(request: &FuzzRequest, login: &ClientSignature) -> Option<Prediction> {
    let offset_ms = login.signature.timestamp_offset_ms;
    if login.login.wrong_secret {
        return Some(error(
            "auth.client_signature.wrong_key",
            "client_signature with a wrong secret",
        ));
    }
    if login.signature.uppercase_hex {
        return Some(error(
            "auth.client_signature.hex_lower",
            "client_signature in upper-case hex",
        ));
    }
    if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS && offset_ms < 0 {
        return Some(error(
            "auth.client_signature.window",
            format!("client_signature timestamp {offset_ms} ms away"),
        ));
    }
    if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS {
        return Some(Prediction::either(""));
    }
    if crate::steps::raced(request) {
        return Some(Prediction::either(
            "a replay released together with the original: its race allows one result",
        ));
    }
    if request.auth.is_replay() {
        return Some(error(
            "auth.client_signature.nonce_single_use",
            "client_signature nonce used twice",
        ));
    }
    None
}
