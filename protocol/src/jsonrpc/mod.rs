//! JSON-RPC 2.0 wire types: requests, responses, error objects and the error codes the
//! harness and the reference server use.
//!
//! This module does no I/O. The server side parses untrusted bytes with [`parse_request`],
//! which never panics and turns every defect into the [`ErrorObject`] the server should
//! answer with. The client side checks a server's answer with [`validate_response`], which
//! returns [`EnvelopeViolation`]s (data, not errors) naming the clause each one breaks.

mod duplicates;
mod validate;

pub use duplicates::duplicate_envelope_members;
pub use validate::{EnvelopeViolation, validate_answer, validate_response};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The protocol version every request and response carries (SPEC.md section 9).
pub const VERSION: &str = "2.0";

/// Error codes. SPEC.md gives only 13668; the others are the ones the real service uses,
/// which the reference server answers with and the harness reports as `info`.
pub mod code {
    /// Malformed JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Valid JSON that is not a request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist (or is not shown by SPEC.md).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// A parameter is missing, of the wrong type or out of range.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Wrong credentials, stale timestamp, reused nonce, bad signature.
    pub const INVALID_CREDENTIALS: i64 = 13004;
    /// No token, an invalid token, or a token without the needed scope.
    pub const UNAUTHORIZED: i64 = 13009;
    /// The second factor is required (SPEC.md section 5.7 and 7).
    pub const SECURITY_KEY_AUTHORIZATION_ERROR: i64 = crate::spec::SECOND_FACTOR_ERROR_CODE;
    /// A rate limit was exceeded.
    pub const TOO_MANY_REQUESTS: i64 = 10028;
    /// A request the server understood but refuses (e.g. logout over HTTP).
    pub const BAD_REQUEST: i64 = 11050;
}

/// A JSON-RPC request as the harness sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Always [`VERSION`] when the harness builds it.
    pub(crate) jsonrpc: String,
    /// The caller's id; SPEC.md says integer.
    pub id: u64,
    /// `public/<name>` or `private/<name>`.
    pub method: String,
    /// Method parameters; an empty object when there are none.
    pub params: Map<String, Value>,
}

impl Request {
    /// A well-formed request.
    pub fn new(id: u64, method: impl Into<String>, params: Map<String, Value>) -> Request {
        Request {
            jsonrpc: VERSION.to_owned(),
            id,
            method: method.into(),
            params,
        }
    }

    /// The request as a JSON value.
    pub fn to_value(&self) -> Value {
        json!({ "jsonrpc": self.jsonrpc, "id": self.id, "method": self.method, "params": self.params })
    }
}

/// The text of a well-formed request, written straight from borrowed parts: the same text
/// as `Request::new(id, method, params).to_value()` serialised, without copying `params`.
pub fn request_text(id: u64, method: &str, params: &Map<String, Value>) -> String {
    #[derive(Serialize)]
    struct Borrowed<'a> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        params: &'a Map<String, Value>,
    }
    to_text(&Borrowed {
        jsonrpc: VERSION,
        id,
        method,
        params,
    })
}

/// Compact JSON text of `value`. Written into a byte buffer, which is several times faster
/// than `Value`'s `Display` (that goes through a `fmt::Formatter` a piece at a time).
pub fn to_text(value: &impl Serialize) -> String {
    // A `Value` or a struct of plain fields and `Value`s has string keys only, the one
    // thing serialisation can refuse; the fallback is never taken.
    serde_json::to_string(value).unwrap_or_default()
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short message; the reference server uses the error's name.
    pub message: String,
    /// Extra detail, e.g. `{"reason": ..., "param": ...}` for invalid params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with no data.
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// An error whose data gives the reason.
    fn with_reason(code: i64, message: &str, reason: &str) -> ErrorObject {
        ErrorObject {
            data: Some(json!({ "reason": reason })),
            ..ErrorObject::new(code, message)
        }
    }

    /// `-32700 parse_error`.
    pub fn parse_error() -> ErrorObject {
        ErrorObject::new(code::PARSE_ERROR, "parse_error")
    }

    /// `-32600 invalid_request` with a reason.
    pub fn invalid_request(reason: &str) -> ErrorObject {
        ErrorObject::with_reason(code::INVALID_REQUEST, "invalid_request", reason)
    }

    /// `-32601 method_not_found`.
    pub fn method_not_found() -> ErrorObject {
        ErrorObject::new(code::METHOD_NOT_FOUND, "method_not_found")
    }

    /// `-32602 invalid_params` naming the parameter and the reason.
    pub fn invalid_params(param: &str, reason: &str) -> ErrorObject {
        ErrorObject {
            data: Some(json!({ "reason": reason, "param": param })),
            ..ErrorObject::new(code::INVALID_PARAMS, "invalid_params")
        }
    }

    /// `13004 invalid_credentials` with a reason.
    pub fn invalid_credentials(reason: &str) -> ErrorObject {
        ErrorObject::with_reason(code::INVALID_CREDENTIALS, "invalid_credentials", reason)
    }

    /// `13009 unauthorized` with a reason.
    pub fn unauthorized(reason: &str) -> ErrorObject {
        ErrorObject::with_reason(code::UNAUTHORIZED, "unauthorized", reason)
    }

    /// Whether the error carries `name` anywhere: as its message or inside it, or as a
    /// string of its data, at any depth. SPEC.md 7 gives an error's name but not the shape
    /// of the error object, so where the name goes is the server's choice.
    pub fn names(&self, name: &str) -> bool {
        fn carries(value: &Value, name: &str) -> bool {
            match value {
                Value::String(text) => text.contains(name),
                Value::Array(items) => items.iter().any(|item| carries(item, name)),
                Value::Object(members) => members
                    .iter()
                    .any(|(key, value)| key == name || carries(value, name)),
                _ => false,
            }
        }
        self.message.contains(name) || self.data.as_ref().is_some_and(|data| carries(data, name))
    }

    /// `13668 security_key_authorization_error`.
    pub fn security_key_authorization_error() -> ErrorObject {
        ErrorObject::new(
            code::SECURITY_KEY_AUTHORIZATION_ERROR,
            crate::spec::SECOND_FACTOR_ERROR_NAME,
        )
    }

    /// `10028 too_many_requests`.
    pub fn too_many_requests() -> ErrorObject {
        ErrorObject::new(code::TOO_MANY_REQUESTS, "too_many_requests")
    }

    /// `11050 bad_request` with a reason.
    pub fn bad_request(reason: &str) -> ErrorObject {
        ErrorObject::with_reason(code::BAD_REQUEST, "bad_request", reason)
    }
}

/// A request as the server received it: what it could make of untrusted input.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    /// The id to echo: the request's id when it had a usable one, otherwise `null`.
    pub id: Value,
    /// The method name.
    pub method: String,
    /// The parameters (an empty object when the request had none).
    pub params: Map<String, Value>,
}

/// Parses one JSON-RPC request from untrusted bytes.
///
/// On failure it returns the id to echo (`null` when none could be read) and the error the
/// server should answer with. It never panics, whatever the input.
#[expect(
    clippy::result_large_err,
    reason = "the error is answered at once; boxing buys nothing here"
)]
pub fn parse_request(bytes: &[u8]) -> Result<Incoming, (Value, ErrorObject)> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(_) => return Err((Value::Null, ErrorObject::parse_error())),
    };
    request_from_value(value)
}

/// Like [`parse_request`], for a request that is already a JSON value.
#[expect(
    clippy::result_large_err,
    reason = "the error is answered at once; boxing buys nothing here"
)]
pub fn request_from_value(value: Value) -> Result<Incoming, (Value, ErrorObject)> {
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            ErrorObject::invalid_request("request is not a JSON object"),
        ));
    };
    let id = match object.remove("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id,
        Some(Value::Null) | None => Value::Null,
        Some(_) => {
            return Err((
                Value::Null,
                ErrorObject::invalid_request("id is not a number or string"),
            ));
        }
    };
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == VERSION => {}
        _ => return Err((id, ErrorObject::invalid_request("jsonrpc must be \"2.0\""))),
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return Err((id, ErrorObject::invalid_request("method must be a string"))),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err((
                id,
                ErrorObject::invalid_params("params", "params must be an object"),
            ));
        }
    };
    Ok(Incoming { id, method, params })
}

/// A success response envelope.
pub fn success(id: Value, result: Value) -> Value {
    object([
        ("jsonrpc", Value::from(VERSION)),
        ("id", id),
        ("result", result),
    ])
}

/// A JSON object of these members, in this order, moving each value in. `json!` would copy
/// every value that is not a literal (it serialises it into a new `Value`), which for a
/// 100-entry page was a tenth of the reference server's time.
pub fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

/// An error response envelope.
pub fn failure(id: Value, error: &ErrorObject) -> Value {
    json!({ "jsonrpc": VERSION, "id": id, "error": error })
}

/// The error object of a response, if it has a well-formed one.
pub fn error_of(response: &Value) -> Option<ErrorObject> {
    serde_json::from_value(response.get("error")?.clone()).ok()
}

/// The rule of [`envelope_parse_answers`] that does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EnvelopePropertyError {
    /// The answer built from the outcome is not a valid response envelope.
    #[error("answer {answer} is not a valid envelope: {violation}")]
    InvalidAnswer {
        /// The answer.
        answer: Value,
        /// Its first violation.
        violation: Box<EnvelopeViolation>,
    },
    /// A refused request's usable id was not echoed.
    #[error("request id {sent} was answered with id {id}")]
    IdNotEchoed {
        /// The id the request carried.
        sent: Box<Value>,
        /// The id of the answer.
        id: Box<Value>,
    },
    /// A parsed request, serialised again, parses to another request.
    #[error("{incoming:?} parsed again as {reparsed:?}")]
    NotReparsed {
        /// The request parsed.
        incoming: Box<Incoming>,
        /// What it parsed as again.
        reparsed: Box<Result<Incoming, (Value, ErrorObject)>>,
    },
}

/// Fuzz and proptest property `envelope_parse_answers`: for any bytes, [`parse_request`]
/// returns without panicking; the answer a server builds from its outcome passes
/// [`validate_response`] and echoes the request's id whenever the request had a usable one;
/// and a parsed request, serialised again, parses to the same request.
///
/// Returns the first broken rule.
pub fn envelope_parse_answers(bytes: &[u8]) -> Result<(), EnvelopePropertyError> {
    let outcome = parse_request(bytes);
    let (id, answer) = match &outcome {
        Ok(incoming) => (
            incoming.id.clone(),
            success(incoming.id.clone(), Value::Null),
        ),
        Err((id, error)) => (id.clone(), failure(id.clone(), error)),
    };
    let violations = validate_response(&answer, id.as_u64());
    if let Some(violation) = violations.into_iter().next() {
        return Err(EnvelopePropertyError::InvalidAnswer {
            answer,
            violation: Box::new(violation),
        });
    }
    // A parsed request's id is the one it carried; only a refused one needs a second look,
    // and only when the bytes were JSON at all.
    if let Err((_, error)) = &outcome
        && error.code != code::PARSE_ERROR
        && let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(bytes)
        && let Some(sent @ (Value::Number(_) | Value::String(_))) = object.get("id")
        && *sent != id
    {
        return Err(EnvelopePropertyError::IdNotEchoed {
            sent: Box::new(sent.clone()),
            id: Box::new(id),
        });
    }
    if let Ok(incoming) = outcome {
        let again = json!({
            "jsonrpc": VERSION,
            "id": incoming.id,
            "method": incoming.method,
            "params": incoming.params,
        });
        let reparsed = request_from_value(again);
        if reparsed.as_ref() != Ok(&incoming) {
            return Err(EnvelopePropertyError::NotReparsed {
                incoming: Box::new(incoming),
                reparsed: Box::new(reparsed),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// JSON-RPC-shaped text: objects with the envelope's members holding values of every
    /// type, which raw bytes reach only rarely.
    fn request_text() -> impl Strategy<Value = String> {
        let value = prop_oneof![
            Just("null".to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| format!("{n:?}")),
            "[a-z/0-9\"\\\\]{0,12}".prop_map(|s| format!("{s:?}")),
            Just("{}".to_owned()),
            Just("[]".to_owned()),
            Just("true".to_owned()),
        ];
        let member = (
            prop::sample::select(&["jsonrpc", "id", "method", "params", "x"][..]),
            value,
        )
            .prop_map(|(key, value)| format!("\"{key}\":{value}"));
        prop::collection::vec(member, 0..6).prop_map(|members| format!("{{{}}}", members.join(",")))
    }

    #[test]
    fn request_with_integer_id_is_answered_with_that_id() {
        let bytes = br#"{"jsonrpc":"2.0","id":42,"method":"public/get_currencies"}"#;
        assert_eq!(envelope_parse_answers(bytes), Ok(()));
        assert_eq!(parse_request(bytes).unwrap().id, json!(42));
    }

    #[test]
    fn request_text_is_the_request_value_serialised() {
        let params =
            json!({"currency": "BTC", "count": 10, "nested": {"b": [1.5, null], "a": "x\"y"}});
        let Value::Object(params) = params else {
            unreachable!("an object literal")
        };
        let built = Request::new(7, "private/get_transaction_log", params.clone());
        assert_eq!(
            super::request_text(7, "private/get_transaction_log", &params),
            built.to_value().to_string()
        );
        assert_eq!(to_text(&built.to_value()), built.to_value().to_string());
    }

    proptest! {
        #[test]
        fn any_bytes_get_a_valid_answer(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(envelope_parse_answers(&bytes), Ok(()));
        }

        #[test]
        fn envelope_shaped_text_gets_a_valid_answer(text in request_text()) {
            prop_assert_eq!(envelope_parse_answers(text.as_bytes()), Ok(()));
        }
    }
}
