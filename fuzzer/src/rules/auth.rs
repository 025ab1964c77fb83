//! The oracle's credential rules: which credentials a method cannot run with (missing,
//! stale, replayed, wrongly signed or short of the scope the method states), and which
//! `public/auth` parameter sets a grant refuses.

use harness_protocol::spec;
use serde_json::Value;

use super::{OracleKnowledge, Prediction, error};
use crate::{FuzzRequest, RequestAuth, SecretPlan};
use harness_protocol::spec::Method;

/// Credentials the method cannot run with.
pub(super) fn auth_refusal(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let http = request.transport.is_http();
    if !rule.private {
        // Public methods need no credentials; whether bad ones are refused is not said.
        let defective = matches!(
            request.auth,
            RequestAuth::Basic {
                wrong_secret: true,
                ..
            } | RequestAuth::Signed { .. }
                | RequestAuth::BogusToken
        );
        return defective.then_some(Prediction::either(""));
    }
    match &request.auth {
        RequestAuth::Basic {
            wrong_secret: true, ..
        } => {
            return Some(error(
                "auth.basic.wrong_secret",
                "basic authorization with a wrong secret",
            ));
        }
        RequestAuth::Signed {
            wrong_secret: true, ..
        } => {
            return Some(error(
                "auth.signed.wrong_key",
                "signed header with a wrong secret",
            ));
        }
        // Older than the window is rejected (5.6); whether a timestamp ahead of the server's
        // clock is accepted is not stated, so only the past is judged.
        RequestAuth::Signed { offset_ms, .. }
            if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS
                && *offset_ms < 0 =>
        {
            return Some(error(
                "auth.signed.window",
                format!("signed header timestamp {offset_ms} ms away"),
            ));
        }
        RequestAuth::Signed { offset_ms, .. }
            if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS =>
        {
            return Some(Prediction::either(""));
        }
        RequestAuth::Signed { replay: true, .. } => {
            return Some(error(
                "auth.signed.nonce_single_use",
                "signed header nonce used twice",
            ));
        }
        RequestAuth::BogusToken => {
            return Some(error(
                "auth.private.requires_token",
                "an access token that was never issued",
            ));
        }
        _ => {}
    }
    if rule.private
        && matches!(
            request.auth,
            RequestAuth::None
                | RequestAuth::ClientCredentials { .. }
                | RequestAuth::ClientSignature { .. }
                | RequestAuth::RefreshOf { .. }
        )
    {
        if knowledge.connection_holds_token {
            // The connection may remember a token it carried before (5.2).
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

pub(super) fn auth_params_refusal(
    request: &FuzzRequest,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let grant = request.params.get("grant_type").and_then(Value::as_str);
    let planned = match &request.auth {
        RequestAuth::ClientCredentials { .. } => Some("client_credentials"),
        RequestAuth::ClientSignature { .. } => Some("client_signature"),
        RequestAuth::RefreshOf { .. } => Some("refresh_token"),
        _ => None,
    };
    if planned.is_some() && planned != grant {
        return Some(error(
            "auth.grant_type.required_params",
            "the grant type's parameters are missing",
        ));
    }
    // A parameter another grant type uses (a `data` with client_credentials): 4.1 says
    // which parameters each grant needs, not that the others are ignored.
    let foreign: &[&str] = match grant {
        Some("client_credentials") => &["timestamp", "signature", "nonce", "data", "refresh_token"],
        Some("client_signature") => &["client_secret", "refresh_token"],
        Some("refresh_token") => &["client_secret", "timestamp", "signature", "nonce", "data"],
        _ => &[],
    };
    let sent_foreign = foreign
        .iter()
        .any(|name| request.params.contains_key(*name));
    let client_id = request.params.get("client_id").and_then(Value::as_str);
    if matches!(planned, Some("client_credentials" | "client_signature"))
        && client_id != knowledge.client_id.as_deref()
    {
        return Some(error(
            "auth.grant_type.required_params",
            "client_id is missing or not the key's",
        ));
    }
    match (&request.auth, grant) {
        (
            RequestAuth::ClientCredentials {
                secret: SecretPlan::Wrong,
                ..
            },
            _,
        ) => Some(error(
            "auth.client_credentials.wrong_secret",
            "client_credentials with a wrong secret",
        )),
        (
            RequestAuth::ClientCredentials {
                secret: SecretPlan::Omitted,
                ..
            },
            _,
        ) => Some(error(
            "auth.grant_type.required_params",
            "client_credentials without client_secret",
        )),
        (
            RequestAuth::ClientSignature {
                wrong_secret: true, ..
            },
            _,
        ) => Some(error(
            "auth.client_signature.wrong_key",
            "client_signature with a wrong secret",
        )),
        (
            RequestAuth::ClientSignature {
                uppercase: true, ..
            },
            _,
        ) => Some(error(
            "auth.client_signature.hex_lower",
            "client_signature in upper-case hex",
        )),
        (RequestAuth::ClientSignature { offset_ms, .. }, _)
            if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS
                && *offset_ms < 0 =>
        {
            Some(error(
                "auth.client_signature.window",
                format!("client_signature timestamp {offset_ms} ms away"),
            ))
        }
        (RequestAuth::ClientSignature { offset_ms, .. }, _)
            if offset_ms.unsigned_abs() > harness_protocol::spec::SIGNATURE_WINDOW_MS =>
        {
            Some(Prediction::either(""))
        }
        (RequestAuth::ClientSignature { replay: true, .. }, _) => Some(error(
            "auth.client_signature.nonce_single_use",
            "client_signature nonce used twice",
        )),
        _ if sent_foreign => Some(Prediction::either(
            "a parameter of another grant type (4.1 does not say it is ignored)",
        )),
        (RequestAuth::RefreshOf { .. }, Some("refresh_token")) => None,
        (RequestAuth::None | RequestAuth::BogusToken, Some("refresh_token")) => Some(error(
            "auth.grant_type.required_params",
            "a refresh token that was never issued",
        )),
        (RequestAuth::None | RequestAuth::BogusToken, Some(_)) => Some(error(
            "auth.grant_type.required_params",
            "no credentials for the grant type",
        )),
        _ => None,
    }
}
