//! The answer check: what one answer to a `call` or `raw` step must be, as findings.
//!
//! Every answer gets the checks no case can turn off: it is JSON, its envelope is valid
//! ([`harness_protocol::jsonrpc::validate_answer`]), and a success over HTTP has status 200 (SPEC.md
//! section 7). Then the step's own expectations: the outcome (a result, an error, or
//! either), the error code and message where SPEC.md gives them, the HTTP status, the result
//! schema, and the matchers. Templates in matchers are resolved by the caller beforehand,
//! so this is a pure function of the answer and the expectation.
//!
//! Where SPEC.md gives no error code, a step requires only an error; the code the target
//! chose is a note on the result ([`error_note`]), never a finding.

use serde::Deserialize;
use serde_json::Value;

use super::{Catalog, Finding, Matcher, SchemaSet, short};
use harness_protocol::jsonrpc::{self, ErrorObject, validate_answer};

/// The kind of answer a step requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A `result`.
    #[default]
    Result,
    /// An `error`.
    Error,
    /// Either; only the envelope and matchers are checked.
    Any,
}

/// One answer as the checks see it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedAnswer {
    /// The answer parsed as JSON, when it is JSON.
    pub json: Option<Value>,
    /// HTTP status (none on WebSocket).
    pub status: Option<u16>,
    /// The raw text, kept only when it is not JSON.
    pub body: String,
    /// The JSON-RPC id the request carried.
    pub request_id: Option<u64>,
    /// The envelope members the answer's text names twice.
    pub duplicate_members: Vec<String>,
    /// The answer came in a binary WebSocket frame.
    pub binary_frame: bool,
}

/// What a step expects of its answer, every template resolved.
#[derive(Clone, Copy, Debug)]
pub struct Required<'a> {
    /// The kind of answer.
    pub outcome: Outcome,
    /// An error code SPEC.md gives.
    pub error_code: Option<i64>,
    /// The error name SPEC.md gives with that code.
    pub error_message: Option<&'a str>,
    /// The HTTP status (HTTP transports only).
    pub http_status: Option<u16>,
    /// The schema a result must match; `None`: no schema check.
    pub schema: Option<&'a str>,
    /// Matchers on the envelope, templates resolved.
    pub matchers: &'a [Matcher],
    /// The step's clauses, cited by every finding on the step's own expectations.
    pub clauses: &'a [String],
    /// The answer comes from the Direct Access REST interface (4.13), which SPEC.md shows
    /// only a result for: a refusal there may be an HTTP 4xx with a body of any form.
    pub rest_interface: bool,
}

/// The finding for an observation on `clauses`: `fail` if any of them is `must`, else `warn`
/// if any is `warn`, else `info` (see [`Catalog::finding_verdict`]).
pub fn finding(catalog: &Catalog, clauses: &[String], message: String) -> Finding {
    Finding::new(catalog.finding_verdict(clauses), clauses.to_vec(), message)
}

/// Schema violations reported per answer at most.
const SCHEMA_VIOLATIONS_SHOWN: usize = 5;

/// Every finding on one answer, in the order the checks run.
pub fn answer(
    answer: &ParsedAnswer,
    expected: &Required<'_>,
    catalog: &Catalog,
    schemas: &SchemaSet,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut record = |clauses: &[String], message: String| {
        findings.push(finding(catalog, clauses, message));
    };
    let clauses = expected.clauses;
    let plain_refusal = expected.rest_interface
        && expected.outcome != Outcome::Result
        && answer
            .status
            .is_some_and(|status| (400..500).contains(&status));
    if answer.json.is_none() && plain_refusal {
        return findings;
    }
    let Some(response) = &answer.json else {
        let body = short(&Value::from(answer.body.as_str()));
        record(
            &["env.response.jsonrpc".to_owned()],
            format!("answer is not JSON: {body}"),
        );
        return findings;
    };
    if answer.binary_frame {
        record(
            &["transport.ws_text".to_owned()],
            "the answer came in a binary WebSocket frame; JSON-RPC messages over WebSocket are text".to_owned(),
        );
    }
    for violation in validate_answer(response, &answer.duplicate_members, answer.request_id) {
        record(&[violation.clause().to_owned()], violation.to_string());
    }
    let error = jsonrpc::error_of(response);
    let has_result = response.get("result").is_some();
    if let Some(message) = outcome_broken(expected, response, has_result, error.as_ref()) {
        record(clauses, message);
    }
    if let Some(status) = answer.status {
        if let Some(wanted) = expected.http_status.filter(|wanted| *wanted != status) {
            record(
                clauses,
                format!("expected HTTP status {wanted}, got {status}"),
            );
        } else if has_result && error.is_none() && status != 200 {
            record(
                &["http.status.success".to_owned()],
                format!("a successful call was answered with HTTP status {status}, not 200"),
            );
        }
    }
    if expected.outcome == Outcome::Result
        && has_result
        && let Some(schema) = expected.schema
        && let Some(violations) = schemas.validate(schema, &response["result"])
    {
        for violation in violations.iter().take(SCHEMA_VIOLATIONS_SHOWN) {
            record(
                clauses,
                format!("result does not match {schema}: {violation}"),
            );
        }
    }
    for matcher in expected.matchers {
        let matcher_clauses = matcher.clauses.as_deref().unwrap_or(clauses);
        for mismatch in matcher.check(response) {
            record(matcher_clauses, mismatch);
        }
    }
    findings
}

/// What the answer's kind breaks of what the step expects: a result expected and an
/// error (or neither) came, an error expected and a result came, or the wrong error.
fn outcome_broken(
    expected: &Required<'_>,
    response: &Value,
    has_result: bool,
    error: Option<&jsonrpc::ErrorObject>,
) -> Option<String> {
    match (expected.outcome, has_result, error) {
        (Outcome::Result, false, Some(error)) => Some(format!(
            "expected a result, got error {} {}{}",
            error.code,
            error.message,
            reason_of(error)
        )),
        (Outcome::Result, false, None) => {
            Some("expected a result, got neither result nor a well-formed error".to_owned())
        }
        (Outcome::Error, true, None) => Some(format!(
            "expected an error, got result {}",
            short(&response["result"])
        )),
        (Outcome::Error, _, Some(error)) => {
            if let Some(code) = expected.error_code.filter(|code| *code != error.code) {
                Some(format!(
                    "expected error code {code}, got {} {}",
                    error.code, error.message
                ))
            } else {
                expected.error_message.filter(|name| !error.names(name)).map(|name| format!(
                    "expected the error named \"{name}\" (in its message or data, wherever the error object puts it), got \"{}\" (code {}) without it",
                    error.message, error.code
                ))
            }
        }
        _ => None,
    }
}

/// The note on an error the step expected where SPEC.md gives no code: the code and message
/// the target chose. It is an observation, not a finding: the check held whatever the code.
pub fn error_note(answer: &ParsedAnswer, expected: &Required<'_>) -> Option<String> {
    if expected.outcome != Outcome::Error || expected.error_code.is_some() {
        return None;
    }
    let error = jsonrpc::error_of(answer.json.as_ref()?)?;
    if expected
        .error_message
        .is_some_and(|name| !error.names(name))
    {
        return None;
    }
    Some(format!(
        "rejected with {} {} (SPEC.md gives no code)",
        error.code, error.message
    ))
}

/// The `data.reason` of an error, as a parenthesised suffix.
fn reason_of(error: &ErrorObject) -> String {
    match error
        .data
        .as_ref()
        .and_then(|data| data.get("reason"))
        .and_then(Value::as_str)
    {
        Some(reason) => format!(" ({reason})"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
