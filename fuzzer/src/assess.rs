//! Judging one answer against the oracle's prediction: the envelope first, then result or
//! error as expected, then for a result the HTTP status, the schema and the rules of
//! SPEC.md section 4 an answer shows directly (page sizes, windows, filters and signed data
//! echoed).

use serde_json::Value;

use super::prediction::{self, Mismatch, Prediction, Seen};
use super::send::Sent;
use super::{FuzzRequest, RequestAuth};
use harness_model::check::pages::{CountBounds, PageLimit, TimeWindow};
use harness_model::check::{Finding, Outcome, Redactor, SchemaSet, Verdict, short};
use harness_protocol::jsonrpc::{self, code};
use harness_protocol::spec;
use harness_protocol::wire::NoAnswer;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

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
    if let Some(failure) = &exchange.failure {
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
        return fail(transport_clause, message);
    }
    let Some(received) = &exchange.response else {
        return fail(transport_clause, "no answer".to_owned());
    };
    let Some(answer) = &received.json else {
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
    if let Some(mismatch) = prediction::judge(prediction, &seen) {
        let mut message = mismatch.describe(prediction);
        let clause = match (&mismatch, &error) {
            (Mismatch::Refused(..), Some(error)) => {
                refusal_clause(request, prediction.clause, error)
            }
            _ => prediction.clause,
        };
        if mismatch == Mismatch::Answered {
            message.push_str(&format!(": {}", shown()));
        }
        return fail(clause, message);
    }
    // An expected error came: nothing more to judge.
    let result = answer.get("result")?;
    if request.transport.is_http() && received.status != Some(200) {
        return fail(
            "http.status.success",
            format!("a result came with http status {:?}", received.status),
        );
    }
    let method = request.method.as_str();
    if let Some(schema) = schemas.for_method(method)
        && let Some(violations) = schemas.validate(&schema, result)
        && let Some(violation) = violations.first()
    {
        // A token set (4.1, 4.2) is one shape whichever method hands it out.
        let issues_tokens = spec::method(method).is_some_and(|method| method.issues_tokens);
        let clause = if issues_tokens {
            "auth.token_set.shape".to_owned()
        } else {
            format!("m.{}.result", method.rsplit('/').next().unwrap_or(method))
        };
        return fail(
            &clause,
            format!("the result breaks its schema at {violation}"),
        );
    }
    match echoed_rules(request, result) {
        Some((clause, message)) => fail(clause, message),
        None => None,
    }
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

/// An integer parameter as sent, whether as a JSON number or as query text.
fn int_param(request: &FuzzRequest, name: &str) -> Option<i64> {
    match request.params.get(name)? {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

fn str_param<'a>(request: &'a FuzzRequest, name: &str) -> Option<&'a str> {
    request.params.get(name).and_then(Value::as_str)
}

fn entries<'a>(result: &'a Value, member: &str) -> &'a [Value] {
    result
        .get(member)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What is wrong when a page holds more entries than the request's `count`, or than the
/// method's default `count` of the spec table when it gave none. A count outside the
/// table's range bounds the page by the range's maximum only: SPEC.md does not say what
/// such a count is read as (the `counts-clamped` variant takes it to the nearest bound; a
/// server may read 0 as the default). So does a count the harness cannot read as an
/// integer (`"𝟚7𝟛"`, digits of another script): a server may read it its own way.
fn over_count(request: &FuzzRequest, list: &[Value]) -> Option<String> {
    let bounds = CountBounds::of(&request.method)?;
    let count = match (request.params.get("count"), int_param(request, "count")) {
        (_, Some(count)) => count,
        (None, None) => bounds.default,
        (Some(_), None) => bounds.max,
    };
    let limit = bounds
        .limit(Some(count))
        .unwrap_or(PageLimit::Count(bounds.max));
    (!limit.allows(list.len())).then(|| format!("{} entries for count {count}", list.len()))
}

/// Rules a result shows directly: at most `count` entries (or the default), entries inside
/// the window, and filters that come back echoed.
fn echoed_rules(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    // A raw body's parameters are not the request's (an array, another envelope): nothing
    // was asked that the result could echo.
    if request.raw.is_some() {
        return None;
    }
    let field = |entry: &Value, name: &str| entry.get(name).cloned().unwrap_or(Value::Null);
    match request.method.as_str() {
        spec::TYPED_LOG_METHOD => {
            let logs = entries(result, "logs");
            if let Some(message) = over_count(request, logs) {
                return Some(("m.get_transaction_log.count", message));
            }
            let window = TimeWindow {
                start: int_param(request, "start_timestamp"),
                end: int_param(request, "end_timestamp"),
            };
            for entry in logs {
                let timestamp = entry.get("timestamp").and_then(Value::as_i64);
                if timestamp.is_some_and(|at| !window.contains(at)) {
                    return Some((
                        "m.get_transaction_log.window",
                        format!(
                            "entry at {timestamp:?} outside {:?}..={:?}",
                            window.start, window.end
                        ),
                    ));
                }
                if let Some(sub) = int_param(request, "subaccount_id")
                    && field(entry, "user_id").as_i64() != Some(sub)
                {
                    return Some((
                        "m.get_transaction_log.subaccount",
                        format!(
                            "entry of user {} for subaccount_id {sub}",
                            field(entry, "user_id")
                        ),
                    ));
                }
            }
        }
        spec::TRIGGER_HISTORY_METHOD => {
            let list = entries(result, "entries");
            if let Some(message) = over_count(request, list) {
                return Some(("m.get_trigger_order_history.count", message));
            }
            if let Some(name) = str_param(request, "instrument_name")
                && let Some(entry) = list
                    .iter()
                    .find(|entry| field(entry, "instrument_name") != name)
            {
                return Some((
                    "m.get_trigger_order_history.instrument_filter",
                    format!(
                        "entry of {} for filter {name}",
                        field(entry, "instrument_name")
                    ),
                ));
            }
        }
        spec::BOOK_SUMMARY_METHOD => {
            let name = str_param(request, "instrument_name")?;
            let list = result.as_array()?;
            if let Some(entry) = list
                .iter()
                .find(|entry| field(entry, "instrument_name") != name)
            {
                return Some((
                    "m.get_book_summary_by_instrument.instrument",
                    format!("summary of {} for {name}", field(entry, "instrument_name")),
                ));
            }
        }
        spec::AUTH_METHOD if str_param(request, "grant_type") == Some("client_signature") => {
            let data = str_param(request, "data")?;
            if !harness_model::check::holds(result, &Value::from(data)) {
                return Some((
                    "auth.client_signature.data_returned",
                    format!("the token set does not return the data {data:?}"),
                ));
            }
        }
        spec::MMP_STATUS_METHOD => {
            let list = result.as_array()?;
            let block_rfq = matches!(request.params.get("block_rfq"), Some(Value::Bool(true)))
                || str_param(request, "block_rfq") == Some("true");
            if block_rfq
                && list
                    .iter()
                    .any(|entry| field(entry, "block_rfq") != Value::Bool(true))
            {
                return Some((
                    "m.get_mmp_status.block_rfq",
                    "block_rfq true answered with order/quote statuses".to_owned(),
                ));
            }
        }
        _ => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn trigger_history(count: Value) -> FuzzRequest {
        let mut params = serde_json::Map::new();
        params.insert("count".to_owned(), count);
        FuzzRequest {
            transport: TransportKind::HttpQuery,
            method: spec::TRIGGER_HISTORY_METHOD.to_owned(),
            params,
            auth: RequestAuth::NONE,
            raw: None,
            why: String::new(),
            walk: false,
            class: None,
        }
    }

    #[test]
    fn a_count_the_harness_cannot_read_bounds_a_page_by_the_maximum_only() {
        let page: Vec<Value> = (0..69).map(|index| json!({ "id": index })).collect();
        // Digits of another script: a server may read them (Python's int() does) or not.
        assert_eq!(over_count(&trigger_history(json!("𝟚7𝟛")), &page), None);
        assert!(over_count(&trigger_history(json!(20)), &page).is_some());
        assert!(over_count(&trigger_history(json!("20")), &page).is_some());
    }
}
