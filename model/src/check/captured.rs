//! Judging a response someone captured (`harness lint-response`): a success envelope's
//! result against the method's schema, an error envelope as the legitimate answer it is,
//! and the envelope itself, each observation at the level its clause has.
//!
//! An error is judged only by what SPEC.md states: the JSON-RPC error object (an integer
//! `code`, a string `message`) is `info`, since SPEC.md does not show its shape; the one
//! stated code is 13668 for `security_key_authorization_error`, the second-factor error of
//! the methods that need it (section 5.7, section 7). So an error that names
//! `security_key_authorization_error` for such a method with another code fails; nothing
//! else about an error can.

use serde_json::Value;

use super::{Catalog, Level, SchemaSet, Verdict};
use harness_protocol::jsonrpc::{code, validate_response};
use harness_protocol::spec::{self, NEEDS_SECOND_FACTOR, SECOND_FACTOR_ERROR_NAME};

/// The form of a captured response: an envelope with a result or an error, a bare result,
/// or neither.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseForm {
    /// A JSON-RPC envelope with a `result`.
    Result,
    /// A JSON-RPC envelope with an `error`: its code and message, as far as they are there.
    Error {
        /// `error.code`, when an integer.
        code: Option<i64>,
        /// `error.message`, when a string.
        message: Option<String>,
    },
    /// Not an envelope: the bare result.
    BareResult,
    /// An envelope with neither a result nor an error (or not an object).
    Malformed,
}

/// One observation about a captured response.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// `fail` for a broken `must` clause, `info` for what SPEC.md leaves open.
    pub verdict: Verdict,
    /// JSON path in the response (`/` for the whole of it).
    pub path: String,
    /// The clause concerned.
    pub clause: String,
    /// What was observed.
    pub message: String,
}

/// The judgement of one captured response.
#[derive(Clone, Debug, PartialEq)]
pub struct Captured {
    /// What the response is.
    pub form: ResponseForm,
    /// The worst observation's verdict; `pass` when there is none.
    pub verdict: Verdict,
    /// Every observation, in the order made.
    pub observations: Vec<Observation>,
}

/// The clause a method's result schema stands for ([`spec::Method::result_clause`]):
/// `None` for a method the spec table does not know or whose result it does not show.
pub fn result_clause(method: &str) -> Option<&'static str> {
    spec::method(method)?.result_clause
}

/// The method a capture's file name gives: the name up to its first `.`, whose leading
/// `public` or `private` is followed by `_`, `-` or `/` (`private_get_transaction_log.json`,
/// `private-get_transaction_log.2.json` both give `private/get_transaction_log`).
pub fn method_from_file_name(file_name: &str) -> Option<String> {
    let stem = file_name.split('.').next().unwrap_or(file_name);
    for prefix in ["public", "private"] {
        if let Some(rest) = stem.strip_prefix(prefix)
            && let Some(name) = rest.strip_prefix(['_', '-', '/'])
            && !name.is_empty()
        {
            return Some(format!("{prefix}/{name}"));
        }
    }
    None
}

/// Where a captured answer's observations go: a `must` clause's fails, any other's
/// informs.
struct Observer<'a> {
    catalog: &'a Catalog,
    observations: Vec<Observation>,
}

impl Observer<'_> {
    fn observe(&mut self, path: &str, clause: &str, message: String) {
        let verdict = match self.catalog.get(clause).map(|clause| clause.level) {
            Some(Level::Must) => Verdict::Fail,
            _ => Verdict::Info,
        };
        self.observations.push(Observation {
            verdict,
            path: path.to_owned(),
            clause: clause.to_owned(),
            message,
        });
    }
}

/// An error answer's form, observing an error that names the second factor with another
/// code than SPEC.md's 13668.
fn error_form(method: &str, error: &Value, observer: &mut Observer<'_>) -> ResponseForm {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if NEEDS_SECOND_FACTOR.contains(&method)
        && names_second_factor_error(error)
        && code != Some(code::SECURITY_KEY_AUTHORIZATION_ERROR)
    {
        observer.observe(
            "/error/code",
            "auth.two_factor.13668",
            format!(
                "the error names {SECOND_FACTOR_ERROR_NAME} with code {}, not {}",
                error.get("code").unwrap_or(&Value::Null),
                code::SECURITY_KEY_AUTHORIZATION_ERROR
            ),
        );
    }
    ResponseForm::Error { code, message }
}

/// Judges a captured response to `method` (whose result schema, if any, is
/// `method.<method>` in `schemas`).
pub fn judge_captured(
    method: &str,
    response: &Value,
    schemas: &SchemaSet,
    catalog: &Catalog,
) -> Captured {
    let is_envelope = response.as_object().is_some_and(|object| {
        object.contains_key("jsonrpc") || object.contains_key("error") || object.contains_key("id")
    });
    let mut observer = Observer {
        catalog,
        observations: Vec::new(),
    };
    if is_envelope {
        for violation in validate_response(response, None) {
            observer.observe("/", violation.clause(), violation.to_string());
        }
    }
    let form = if !is_envelope {
        ResponseForm::BareResult
    } else if let Some(error) = response
        .get("error")
        .filter(|_| response.get("result").is_none())
    {
        error_form(method, error, &mut observer)
    } else if response.get("result").is_some() {
        ResponseForm::Result
    } else {
        ResponseForm::Malformed
    };
    let result = match form {
        ResponseForm::BareResult => Some(response),
        ResponseForm::Result => response.get("result"),
        _ => None,
    };
    if let (Some(result), Some(schema), Some(clause)) =
        (result, schemas.for_method(method), result_clause(method))
    {
        for violation in schemas.validate(&schema, result).unwrap_or_default() {
            let path = if violation.path.is_empty() {
                "/".to_owned()
            } else {
                violation.path
            };
            observer.observe(&path, clause, violation.message);
        }
    }
    let observations = observer.observations;
    let verdict = observations
        .iter()
        .map(|observation| observation.verdict)
        .fold(Verdict::Pass, Verdict::worst);
    Captured {
        form,
        verdict,
        observations,
    }
}

/// Whether an error object names the second-factor error: its message, or any string
/// inside its `data`, is `security_key_authorization_error`.
fn names_second_factor_error(error: &Value) -> bool {
    fn any_string(value: &Value) -> bool {
        match value {
            Value::String(text) => text == SECOND_FACTOR_ERROR_NAME,
            Value::Array(items) => items.iter().any(any_string),
            Value::Object(members) => members.values().any(any_string),
            _ => false,
        }
    }
    error.get("message").is_some_and(any_string) || error.get("data").is_some_and(any_string)
}

#[cfg(test)]
mod tests;
