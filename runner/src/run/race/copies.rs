//! What a race does with each copy: the copy placed for the transport it goes over (its
//! bearer token moved between header and params), and whether its answer counts against
//! `at_most`.

use serde_json::Value;

use crate::transport::{Authorization, Outgoing, place_bearer};
use harness_protocol::wire::TransportKind;

/// `outgoing`, prepared for `from`, with its bearer token where `to` carries one
/// (SPEC.md 5.2): the header over HTTP, `params.access_token` over WebSocket. Anything
/// else goes as it is, so every copy carries the same nonce and signature.
pub(super) fn placed_for(outgoing: &Outgoing, from: TransportKind, to: TransportKind) -> Outgoing {
    let mut copy = outgoing.clone();
    let from_ws = from == TransportKind::Ws;
    let to_ws = to == TransportKind::Ws;
    if from_ws && !to_ws {
        if let Some(Value::String(token)) = copy.params.remove("access_token") {
            copy.authorization = place_bearer(to, &token, &mut copy.params);
        }
    } else if !from_ws
        && to_ws
        && let Some(Authorization::Value(value)) = &copy.authorization
        && let Some(token) = value.strip_prefix("Bearer ")
    {
        let token = token.to_owned();
        copy.authorization = place_bearer(to, &token, &mut copy.params);
    }
    copy
}

/// Whether a copy's answer counts against `at_most`: it has a result, and `path`, when
/// given, holds something (not null, false, 0, or an empty text, list or object).
pub(super) fn counts(answer: &harness_model::check::ParsedAnswer, path: Option<&str>) -> bool {
    let Some(json) = answer
        .json
        .as_ref()
        .filter(|json| json.get("result").is_some())
    else {
        return false;
    };
    let Some(path) = path else {
        return true;
    };
    harness_model::check::lookup(json, path)
        .iter()
        .any(|(_, value)| value.is_some_and(holds_something))
}

fn holds_something(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::Number(number) => number.as_f64().is_some_and(|number| number != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(members) => !members.is_empty(),
        Value::Bool(true) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_moves_between_header_and_params() {
        let mut over_http = Outgoing {
            method: "private/x".to_owned(),
            ..Outgoing::default()
        };
        over_http.authorization = Some(Authorization::Value("Bearer tok".to_owned()));
        let over_ws = placed_for(&over_http, TransportKind::HttpBody, TransportKind::Ws);
        assert!(over_ws.authorization.is_none());
        assert_eq!(
            over_ws.params.get("access_token"),
            Some(&Value::from("tok"))
        );
        let back = placed_for(&over_ws, TransportKind::Ws, TransportKind::HttpQuery);
        assert!(back.params.is_empty());
        assert!(
            matches!(back.authorization, Some(Authorization::Value(ref v)) if v == "Bearer tok")
        );
    }
}
