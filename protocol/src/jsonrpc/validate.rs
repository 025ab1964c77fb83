//! The strict response validator: every way a response envelope can depart from
//! JSON-RPC 2.0 as SPEC.md section 1 adopts it, each tied to the clause it breaks.

use std::fmt;

use serde_json::Value;

use super::VERSION;

/// One defect of a response envelope. Extra members (`usIn`, `usOut`, `usDiff`,
/// `testnet`, ...) are tolerated and never produce a violation.
#[derive(Clone, Debug, PartialEq)]
pub enum EnvelopeViolation {
    /// The response is not a JSON object.
    NotAnObject,
    /// `jsonrpc` is absent.
    JsonrpcMissing,
    /// `jsonrpc` is present with another value.
    JsonrpcWrong(Value),
    /// `id` is absent.
    IdMissing,
    /// `id` does not echo the request's id (other value or other JSON type).
    IdMismatch {
        /// The id the request carried.
        expected: u64,
        /// The id the response carried.
        got: Value,
    },
    /// Neither `result` nor `error` is present.
    NeitherResultNorError,
    /// Both `result` and `error` are present.
    BothResultAndError,
    /// `error` is not an object.
    ErrorNotObject,
    /// `error.code` is absent or not an integer.
    ErrorCodeNotInteger,
    /// `error.message` is absent or not a string.
    ErrorMessageNotString,
    /// An envelope member (`jsonrpc`, `id`, `result`, `error`) named twice: the envelope
    /// says two things, and which a client reads is its JSON library's choice.
    DuplicateMember(String),
}

impl EnvelopeViolation {
    /// The catalog clause the violation breaks.
    pub fn clause(&self) -> &'static str {
        match self {
            EnvelopeViolation::NotAnObject
            | EnvelopeViolation::JsonrpcMissing
            | EnvelopeViolation::JsonrpcWrong(_) => "env.response.jsonrpc",
            EnvelopeViolation::IdMissing | EnvelopeViolation::IdMismatch { .. } => {
                "env.response.id"
            }
            EnvelopeViolation::NeitherResultNorError | EnvelopeViolation::BothResultAndError => {
                "env.response.exclusive"
            }
            EnvelopeViolation::ErrorNotObject
            | EnvelopeViolation::ErrorCodeNotInteger
            | EnvelopeViolation::ErrorMessageNotString => "env.error.object",
            EnvelopeViolation::DuplicateMember(name) => match name.as_str() {
                "jsonrpc" => "env.response.jsonrpc",
                "id" => "env.response.id",
                _ => "env.response.exclusive",
            },
        }
    }
}

impl fmt::Display for EnvelopeViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvelopeViolation::NotAnObject => write!(f, "response is not a JSON object"),
            EnvelopeViolation::JsonrpcMissing => write!(f, "response has no \"jsonrpc\" member"),
            EnvelopeViolation::JsonrpcWrong(value) => {
                write!(f, "response \"jsonrpc\" is {value}, expected \"{VERSION}\"")
            }
            EnvelopeViolation::IdMissing => write!(f, "response has no \"id\" member"),
            EnvelopeViolation::IdMismatch { expected, got } => {
                write!(
                    f,
                    "response id is {got}, expected the request's id {expected}"
                )
            }
            EnvelopeViolation::NeitherResultNorError => {
                write!(f, "response has neither \"result\" nor \"error\"")
            }
            EnvelopeViolation::BothResultAndError => {
                write!(f, "response has both \"result\" and \"error\"")
            }
            EnvelopeViolation::ErrorNotObject => write!(f, "\"error\" is not an object"),
            EnvelopeViolation::ErrorCodeNotInteger => write!(f, "\"error.code\" is not an integer"),
            EnvelopeViolation::ErrorMessageNotString => {
                write!(f, "\"error.message\" is not a string")
            }
            EnvelopeViolation::DuplicateMember(name) => write!(
                f,
                "response names \"{name}\" more than once: the envelope is ambiguous (RFC 8259 4: names SHOULD be unique; JSON-RPC's \"{name}\" is one value)"
            ),
        }
    }
}

/// Checks a response envelope as [`validate_response`] does, and the members its text
/// names twice ([`super::duplicate_envelope_members`], which the parsed value cannot show).
pub fn validate_answer(
    response: &Value,
    duplicates: &[String],
    request_id: Option<u64>,
) -> Vec<EnvelopeViolation> {
    let mut violations = validate_response(response, request_id);
    violations.extend(
        duplicates
            .iter()
            .map(|name| EnvelopeViolation::DuplicateMember(name.clone())),
    );
    violations
}

/// Checks a response envelope against the request id it answers.
///
/// `request_id` is `None` when the request carried no id (a query-string GET) or no usable
/// one (the harness sent garbage on purpose); then any id, `null` or none at all is
/// accepted: SPEC.md 1 says the response id "echoes the request id", and there is nothing
/// to echo.
pub fn validate_response(response: &Value, request_id: Option<u64>) -> Vec<EnvelopeViolation> {
    let mut violations = Vec::new();
    let Some(object) = response.as_object() else {
        violations.push(EnvelopeViolation::NotAnObject);
        return violations;
    };
    match object.get("jsonrpc") {
        None => violations.push(EnvelopeViolation::JsonrpcMissing),
        Some(Value::String(version)) if version == VERSION => {}
        Some(other) => violations.push(EnvelopeViolation::JsonrpcWrong(other.clone())),
    }
    match (object.get("id"), request_id) {
        (None, Some(_)) => violations.push(EnvelopeViolation::IdMissing),
        (Some(got), Some(expected)) if got.as_u64() != Some(expected) || !got.is_u64() => {
            violations.push(EnvelopeViolation::IdMismatch {
                expected,
                got: got.clone(),
            });
        }
        _ => {}
    }
    match (object.get("result"), object.get("error")) {
        (None, None) => violations.push(EnvelopeViolation::NeitherResultNorError),
        (Some(_), Some(_)) => violations.push(EnvelopeViolation::BothResultAndError),
        (None, Some(error)) => match error.as_object() {
            None => violations.push(EnvelopeViolation::ErrorNotObject),
            Some(error) => {
                if !error
                    .get("code")
                    .is_some_and(|code| code.is_i64() || code.is_u64())
                {
                    violations.push(EnvelopeViolation::ErrorCodeNotInteger);
                }
                if !error.get("message").is_some_and(Value::is_string) {
                    violations.push(EnvelopeViolation::ErrorMessageNotString);
                }
            }
        },
        (Some(_), None) => {}
    }
    violations
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn well_formed_success_with_extra_members_passes() {
        let response = json!({"jsonrpc": "2.0", "id": 7, "result": [], "usIn": 1, "usOut": 2, "usDiff": 1, "testnet": true});
        assert_eq!(validate_response(&response, Some(7)), vec![]);
    }

    #[test]
    fn id_echoed_as_string_is_a_mismatch() {
        let response = json!({"jsonrpc": "2.0", "id": "7", "result": 1});
        let violations = validate_response(&response, Some(7));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].clause(), "env.response.id");
    }

    #[test]
    fn both_result_and_error_is_flagged() {
        let response =
            json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}});
        assert_eq!(
            validate_response(&response, Some(1)),
            vec![EnvelopeViolation::BothResultAndError]
        );
    }

    #[test]
    fn error_with_string_code_is_flagged() {
        let response = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "13004", "message": 5}});
        assert_eq!(
            validate_response(&response, Some(1)),
            vec![
                EnvelopeViolation::ErrorCodeNotInteger,
                EnvelopeViolation::ErrorMessageNotString
            ]
        );
    }

    #[test]
    fn missing_jsonrpc_and_id_are_flagged() {
        let response = json!({"result": 1});
        assert_eq!(
            validate_response(&response, Some(1)),
            vec![
                EnvelopeViolation::JsonrpcMissing,
                EnvelopeViolation::IdMissing
            ]
        );
    }

    #[test]
    fn an_answer_to_a_request_without_id_may_carry_none_or_null() {
        for response in [
            json!({"jsonrpc": "2.0", "result": []}),
            json!({"jsonrpc": "2.0", "id": null, "result": []}),
            json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}}),
        ] {
            assert_eq!(validate_response(&response, None), vec![], "{response}");
        }
    }

    #[test]
    fn non_object_is_flagged() {
        assert_eq!(
            validate_response(&json!([1]), Some(1)),
            vec![EnvelopeViolation::NotAnObject]
        );
    }
}
