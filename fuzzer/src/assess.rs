//! Judging one answer against the oracle's prediction: the envelope first, then result or
//! error as expected, then for a result the HTTP status, the schema and the rules of
//! SPEC.md section 4 an answer shows directly (page sizes, windows, filters and signed data
//! echoed).

mod echoed;

use serde_json::Value;

use super::prediction::{self, Mismatch, Prediction, Seen};
use super::send::Sent;
use super::{FuzzRequest, RequestAuth};
use echoed::echoed_rules;
use harness_model::check::{Finding, Outcome, Redactor, SchemaSet, Verdict, short};
use harness_protocol::jsonrpc::{self, code};
use harness_protocol::spec;
use harness_protocol::wire::NoAnswer;
use harness_protocol::wire::TransportKind;
use harness_protocol::wire::{TransportError, TransportErrorKind};

/// A broken rule: a [`Finding`] on the one clause it breaks, at the catalog's level.
fn fail(clause: &str, message: String) -> Option<Finding> {
    Some(prediction::broken(clause, message))
}

/// Whether a judgement is a throttled answer, which is never judged: a [`Finding`] at
/// [`Verdict::Skip`] (not judged, with the reason).
pub(crate) fn is_throttled(finding: &Finding) -> bool {
    finding.verdict == Verdict::Skip
}

/// Whether a finding says no answer came, so nothing was judged.
pub(crate) fn is_unanswered(finding: &Finding) -> bool {
    finding.verdict == Verdict::Error
}

/// The clause an answer that does not come over `transport` breaks.
fn transport_clause(transport: TransportKind) -> &'static str {
    match transport {
        TransportKind::HttpQuery => "transport.http.query",
        TransportKind::HttpBody => "transport.http.body",
        TransportKind::Ws => "transport.ws",
        TransportKind::Rest => "m.lock_portfolio.result",
    }
}

/// The clause a JSON-RPC answer that is not JSON breaks.
const NOT_JSON: &str = "env.response.jsonrpc";

/// Whether a finding on `clause` for `request` is one [`assess`] makes before it judges the
/// answer against its prediction: the answer did not come over the request's JSON-RPC
/// transport, or its envelope is broken (each clause [`jsonrpc::EnvelopeViolation`] gives).
/// A case replaying such a finding expects either outcome: the runner's envelope check sees
/// the defect whatever the case expects, and the prediction may rest on what only the run
/// knew (the scope a token was granted).
pub(crate) fn found_before_prediction(request: &FuzzRequest, clause: &str) -> bool {
    use jsonrpc::EnvelopeViolation as Broken;
    let envelope = [
        Broken::NotAnObject,
        Broken::IdMissing,
        Broken::NeitherResultNorError,
        Broken::ErrorNotObject,
    ];
    (request.transport != TransportKind::Rest && clause == transport_clause(request.transport))
        || clause == NOT_JSON
        || envelope
            .iter()
            .any(|violation| violation.clause() == clause)
}

/// What kind of answer `sent` got, and its error code: `result`, `error`, `throttled`,
/// `not-json`, `not-an-envelope`, `dropped` or `no-answer`.
pub(crate) fn answer_kind(sent: &Sent) -> (&'static str, Option<i64>) {
    let exchange = &sent.exchange;
    if let Some(failure) = &exchange.failure {
        return match failure.kind.no_answer() {
            Some(NoAnswer::Silence) => ("no-answer", None),
            _ => ("dropped", None),
        };
    }
    let Some(answer) = exchange
        .response
        .as_ref()
        .and_then(|received| received.json.as_ref())
    else {
        return ("not-json", None);
    };
    match (jsonrpc::error_of(answer), answer.get("result")) {
        (Some(error), _) if sent.throttled => ("throttled", Some(error.code)),
        (Some(error), _) => ("error", Some(error.code)),
        (None, Some(_)) => ("result", None),
        (None, None) => ("not-an-envelope", None),
    }
}

/// Judges the answer `sent` got: `None` when it holds, else a [`Finding`] at
/// [`Verdict::Fail`] on the clause it breaks, at [`Verdict::Skip`] for a throttled
/// answer, or at [`Verdict::Error`] when no answer came (timed out, refused).
pub(crate) fn assess(
    request: &FuzzRequest,
    prediction: &Prediction,
    sent: &Sent,
    schemas: &SchemaSet,
    redactor: &Redactor,
) -> Option<Finding> {
    let transport_clause = transport_clause(request.transport);
    let exchange = &sent.exchange;
    // A text RFC 8259 calls unpredictable (a lone surrogate, a name given twice): a server
    // that drops the connection or answers with something else than JSON breaks no rule.
    let handling_open = request
        .class
        .as_deref()
        .and_then(super::generate::handling_left_open)
        .is_some();
    if let Some(failure) = &exchange.failure {
        if handling_open && failure.kind == TransportErrorKind::Closed {
            return None;
        }
        return transport_failure(transport_clause, failure, redactor);
    }
    let Some(received) = &exchange.response else {
        return fail(transport_clause, "no answer".to_owned());
    };
    let Some(answer) = &received.json else {
        if handling_open {
            return None;
        }
        let body: String = received.body.chars().take(120).collect();
        return fail(
            NOT_JSON,
            format!("the answer is not JSON: {}", redactor.text(&body)),
        );
    };
    if let Some(violation) =
        jsonrpc::validate_answer(answer, &received.duplicate_members, sent.sent_id).first()
    {
        return fail(violation.clause(), violation.to_string());
    }
    if let Some(finding) = outcome_broken(request, prediction, sent, answer, redactor) {
        return Some(finding);
    }
    // An expected error came: nothing more to judge.
    let result = answer.get("result")?;
    if request.transport.is_http() && received.status != Some(200) {
        return fail(
            "http.status.success",
            format!("a result came with http status {:?}", received.status),
        );
    }
    if let Some(finding) = schema_broken(&request.method, result, schemas) {
        return Some(finding);
    }
    match echoed_rules(request, result) {
        Some((clause, message)) => fail(clause, message),
        None => None,
    }
}

/// The finding on a request that got no answer: an error when the target was silent (no
/// answer, nothing to judge), else a failure of the transport's clause.
fn transport_failure(
    transport_clause: &str,
    failure: &TransportError,
    redactor: &Redactor,
) -> Option<Finding> {
    let what = match failure.kind {
        TransportErrorKind::Timeout => "no answer within the timeout",
        TransportErrorKind::Closed => "the connection was dropped",
        TransportErrorKind::TooLarge => "the answer exceeded the size cap",
        TransportErrorKind::Connect => "the server could not be reached",
        TransportErrorKind::Request => "the request could not be built",
    };
    let message = format!("{what}: {}", redactor.text(&failure.message));
    // No answer came: there is nothing to judge, so the harness reports an error, never
    // a failure of the target.
    if failure.kind.no_answer() == Some(NoAnswer::Silence) {
        return Some(Finding::new(
            Verdict::Error,
            vec![transport_clause.to_owned()],
            message,
        ));
    }
    fail(transport_clause, message)
}

/// The answer's outcome against the prediction: a throttled answer where a result was
/// due is not judged ([`Verdict::Skip`]); a result where an error was due, or a refusal
/// where a result was, breaks the clause it names.
fn outcome_broken(
    request: &FuzzRequest,
    prediction: &Prediction,
    sent: &Sent,
    answer: &Value,
    redactor: &Redactor,
) -> Option<Finding> {
    let shown = || short(&redactor.json(answer));
    let error = jsonrpc::error_of(answer);
    let seen = match (&error, answer.get("result")) {
        (Some(_), _) if sent.throttled => Seen::Throttled,
        (Some(error), _) => Seen::Error(error.code, error.message.clone()),
        (None, Some(result)) => Seen::Result(result.clone()),
        (None, None) => Seen::Nothing("neither result nor error".to_owned()),
    };
    if let (Seen::Throttled, Some(error)) = (&seen, &error)
        && prediction.outcome == Outcome::Result
    {
        // A throttling answer (a code of the target's `[limits] throttle_codes`) is the
        // server protecting itself: SPEC.md states the transaction log's rate and leaves the
        // limits of every other method open (section 8).
        return Some(Finding::new(
            Verdict::Skip,
            Vec::new(),
            format!("throttled with code {}: not judged", error.code),
        ));
    }
    let mismatch = prediction::judge(prediction, &seen)?;
    let mut message = mismatch.describe(prediction);
    let clause = match (&mismatch, &error) {
        (Mismatch::Refused(..), Some(error)) => refusal_clause(request, prediction.clause, error),
        _ => prediction.clause,
    };
    if mismatch == Mismatch::Answered {
        message.push_str(&format!(": {}", shown()));
    }
    fail(clause, message)
}

/// A result that breaks its method's schema, on the method's result clause (a token
/// set's shape for a method that issues tokens).
fn schema_broken(method: &str, result: &Value, schemas: &SchemaSet) -> Option<Finding> {
    let schema = schemas.for_method(method)?;
    let violations = schemas.validate(&schema, result)?;
    let violation = violations.first()?;
    // A token set (4.1, 4.2) is one shape whichever method hands it out.
    let issues_tokens = spec::method(method).is_some_and(|method| method.issues_tokens);
    let clause = if issues_tokens {
        "auth.token_set.shape".to_owned()
    } else {
        format!("m.{}.result", method.rsplit('/').next().unwrap_or(method))
    };
    fail(
        &clause,
        format!("the result breaks its schema at {violation}"),
    )
}

/// The clause a refusal of a valid request breaks: the parameter's when the error names one
/// (`data.param`), the credential's when it is a credentials error, else the method's.
fn refusal_clause<'a>(
    request: &FuzzRequest,
    accepted: &'a str,
    error: &harness_protocol::jsonrpc::ErrorObject,
) -> &'a str {
    let named = error
        .data
        .as_ref()
        .and_then(|data| data.get("param"))
        .and_then(Value::as_str);
    let rule = super::rules::method(&request.method);
    match (named, rule) {
        (Some("mmp_group"), _) if str_param(request, "mmp_group") == Some("") => {
            "m.get_mmp_status.empty_group"
        }
        (Some(name), Some(rule)) => rule
            .params
            .iter()
            .find(|spec| spec.name == name)
            .map_or(accepted, |spec| spec.clause),
        _ if error.code == code::UNAUTHORIZED || error.code == code::INVALID_CREDENTIALS => {
            accepted
        }
        // A login's refusal breaks the login's clause; another call's, its method's.
        (_, Some(rule)) if !is_login(&request.auth) => rule.clause,
        _ => accepted,
    }
}

/// Whether the request is a `public/auth` login with credentials (its own clause is the
/// login's).
fn is_login(auth: &RequestAuth) -> bool {
    auth.is_login()
}

/// A string parameter as sent.
fn str_param<'a>(request: &'a FuzzRequest, name: &str) -> Option<&'a str> {
    request.params.get(name).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;
    use crate::rules::OracleKnowledge;
    use harness_model::case::Auth;
    use harness_protocol::wire::{Exchange, Received, SentRequest};

    fn request(class: Option<&str>) -> FuzzRequest {
        FuzzRequest {
            transport: TransportKind::HttpBody,
            method: "public/get_currencies".to_owned(),
            params: Map::new(),
            auth: RequestAuth::Step(Auth::None),
            raw: Some("{}".to_owned()),
            why: String::new(),
            walk: false,
            class: class.map(str::to_owned),
        }
    }

    fn sent(response: Option<Received>, failure: Option<TransportError>) -> Sent {
        Sent {
            exchange: Exchange {
                transport: TransportKind::HttpBody,
                request: SentRequest::default(),
                response,
                failure,
                elapsed_ms: 0.0,
            },
            sent_id: None,
            knowledge: OracleKnowledge::default(),
            params: Map::new(),
            throttled: false,
        }
    }

    fn judged(class: Option<&str>, sent: &Sent) -> Option<Finding> {
        let prediction = Prediction {
            outcome: Outcome::Any,
            clause: "",
            code: None,
            why: String::new(),
        };
        let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let schemas = SchemaSet::load(&cases.join("schemas")).expect("the schemas");
        assess(
            &request(class),
            &prediction,
            sent,
            &schemas,
            &Redactor::default(),
        )
    }

    #[test]
    fn a_text_rfc_8259_calls_unpredictable_may_be_dropped_or_answered_otherwise() {
        let dropped = sent(
            None,
            Some(TransportError::new(
                TransportErrorKind::Closed,
                "closed".to_owned(),
            )),
        );
        let not_json = sent(
            Some(Received::from_bytes(Some(500), b"crash".to_vec())),
            None,
        );
        for answer in [&dropped, &not_json] {
            assert!(judged(Some("lone-surrogate"), answer).is_none());
            assert!(judged(Some("duplicate-keys"), answer).is_none());
            // Any other text: the server owes a JSON-RPC answer.
            let finding = judged(Some("bom"), answer).expect("a finding");
            assert_eq!(finding.verdict, Verdict::Fail);
            assert!(judged(None, answer).is_some());
        }
        // A JSON-RPC answer to it is judged as any answer is.
        let wrong = sent(
            Some(Received::from_bytes(
                Some(200),
                br#"{"jsonrpc":"1.0","id":null,"result":1}"#.to_vec(),
            )),
            None,
        );
        assert!(judged(Some("lone-surrogate"), &wrong).is_some());
    }
}
