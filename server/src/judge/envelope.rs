//! The request envelope (SPEC.md section 1): `jsonrpc` "2.0", an integer `id` unique among
//! the connection's requests in flight, a string `method` named `public/<name>` or
//! `private/<name>`, and an object `params` (an empty one when there are none).
//!
//! Only JSON-RPC bodies and WebSocket messages have an envelope; a query-string request
//! carries its method in the path and has nothing here to judge.

use std::collections::HashMap;

use serde_json::Value;

use super::Tally;
use super::record::{Call, Record};
use harness_model::check::short;
use harness_protocol::wire::TransportKind;

/// What is wrong with a present member (`None`: nothing).
type Wrong = fn(&Value) -> Option<String>;

/// Each member of the envelope: its name, its clause, what a missing one is told, and
/// what is wrong with a present one.
const MEMBERS: [(&str, &str, &str, Wrong); 4] = [
    (
        "jsonrpc",
        "client.env.jsonrpc",
        "jsonrpc is missing",
        wrong_jsonrpc,
    ),
    ("id", "client.env.id", "id is missing", wrong_id),
    (
        "method",
        "client.env.method",
        "method is missing",
        wrong_method,
    ),
    (
        "params",
        "client.env.params",
        "params is missing: a call without parameters sends {}",
        wrong_params,
    ),
];

fn wrong_jsonrpc(value: &Value) -> Option<String> {
    (value.as_str() != Some("2.0")).then(|| format!("jsonrpc is {}, not \"2.0\"", short(value)))
}

fn wrong_id(value: &Value) -> Option<String> {
    match value {
        Value::Number(number) if number.is_i64() || number.is_u64() => None,
        other => Some(is_not("id", other, "an integer")),
    }
}

fn wrong_method(value: &Value) -> Option<String> {
    match value {
        Value::String(method) if is_method_name(method) => None,
        Value::String(method) => Some(format!(
            "method \"{method}\" is not named public/<name> or private/<name>"
        )),
        other => Some(is_not("method", other, "a string")),
    }
}

fn wrong_params(value: &Value) -> Option<String> {
    match value {
        Value::Object(_) => None,
        other => Some(is_not("params", other, "an object")),
    }
}

/// Checks the envelope of one request.
pub(crate) fn check_envelope(record: &Record, call: &Call, tally: &mut Tally) {
    let transport = record.transport;
    // A Direct Access call is REST (SPEC.md 1): without a body, or with one that holds no
    // parameter (`{}` or `null`, as a generic JSON client sends), it has no envelope.
    if transport == TransportKind::HttpQuery
        || (transport == TransportKind::Rest
            && (record.body.is_empty() || super::direct::empty_json(&record.body)))
    {
        return;
    }
    let seq = Some(record.seq);
    let Some(envelope) = &call.envelope else {
        let reason = call.unparsable.as_deref().unwrap_or("not json");
        tally.fail(
            "client.env.jsonrpc",
            transport,
            seq,
            format!("the request is not a json-rpc object: {reason}"),
        );
        return;
    };
    let Some(object) = envelope.as_object() else {
        tally.fail(
            "client.env.jsonrpc",
            transport,
            seq,
            format!("the request is a json {}, not an object", kind(envelope)),
        );
        return;
    };
    for (name, clause, missing, wrong) in MEMBERS {
        match object.get(name).map(wrong) {
            Some(None) => tally.pass(clause, transport),
            Some(Some(message)) => tally.fail(clause, transport, seq, message),
            None => tally.fail(clause, transport, seq, missing),
        }
    }
}

/// Checks that an HTTP request is a GET (SPEC.md section 4: "All methods below are
/// invoked with HTTP GET"). A CORS preflight (`OPTIONS`) is the browser's, not a call.
pub(crate) fn check_http_method(record: &Record, tally: &mut Tally) {
    if record.transport == TransportKind::Ws || record.http_method.eq_ignore_ascii_case("OPTIONS") {
        return;
    }
    tally.judge(
        "client.http.method",
        record.transport,
        record.seq,
        record.http_method == "GET",
        || {
            format!(
                "sent with http {}; every method is invoked with http GET",
                record.http_method
            )
        },
    );
}

/// What is wrong with a member of another type: `NAME is TYPE VALUE, not WANTED`.
fn is_not(name: &str, value: &Value, wanted: &str) -> String {
    format!("{name} is {} {}, not {wanted}", kind(value), short(value))
}

/// `public/<name>` or `private/<name>` with a non-empty name.
fn is_method_name(method: &str) -> bool {
    method
        .strip_prefix("public/")
        .or_else(|| method.strip_prefix("private/"))
        .is_some_and(|name| !name.is_empty() && !name.contains(char::is_whitespace))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Warns on an integer id sent on a connection while an earlier request with the same id was
/// still unanswered there: SPEC.md 1 says only that the id is "chosen by the caller" and
/// that the response "echoes the request id", not that ids are unique, so the two answers
/// cannot be told apart but no words are broken (a warning, never a failure). Over HTTP/1.1
/// a connection carries one request at a time, so this only bites on WebSocket (or a
/// pipelining HTTP client).
pub(crate) fn check_ids_in_flight(records: &[Record], tally: &mut Tally) {
    // For each (connection, id): the answer event of the latest request with that id.
    let mut in_flight: HashMap<(&str, String), (u64, Option<u64>)> = HashMap::new();
    for record in records {
        let Some(id) = record
            .call()
            .envelope
            .and_then(|envelope| envelope.get("id").cloned())
            .filter(Value::is_number)
        else {
            continue;
        };
        let key = (record.connection.as_str(), id.to_string());
        if let Some((earlier, answered)) = in_flight.get(&key)
            && answered.is_none_or(|answered| answered > record.event)
        {
            tally.warn(
                "client.env.id",
                record.transport,
                Some(record.seq),
                format!("id {id} reused while request #{earlier} with the same id was still in flight on {}: the two answers cannot be told apart (SPEC.md states no uniqueness, so a warning)", record.connection),
            );
        }
        let answered = record.answer.as_ref().map(|answer| answer.event);
        in_flight.insert(key, (record.seq, answered));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::record::Answer;

    fn message(seq: u64, body: &str, answered_at_event: Option<u64>) -> Record {
        Record {
            event: seq * 10,
            body: body.as_bytes().to_vec(),
            answer: answered_at_event.map(|event| Answer {
                at_ms: 0,
                event,
                status: None,
                body: Value::Null,
                refused: false,
            }),
            ..Record::sample(seq, TransportKind::Ws)
        }
    }

    fn judged(body: &str) -> Vec<String> {
        let record = message(1, body, Some(11));
        let mut tally = Tally::default();
        check_envelope(&record, &record.call(), &mut tally);
        tally.describe()
    }

    #[test]
    fn a_well_formed_request_passes_every_envelope_clause() {
        let findings =
            judged(r#"{"jsonrpc":"2.0","id":7,"method":"public/get_currencies","params":{}}"#);
        assert_eq!(findings, Vec::<String>::new());
    }

    #[test]
    fn string_id_array_params_and_bare_method_are_each_named() {
        let findings =
            judged(r#"{"jsonrpc":"2.0","id":"7","method":"get_currencies","params":[]}"#);
        assert_eq!(findings.len(), 3, "{findings:?}");
        assert!(findings[0].contains("client.env.id") && findings[0].contains("a string"));
        assert!(findings[1].contains("client.env.method"));
        assert!(findings[2].contains("client.env.params") && findings[2].contains("an array"));
    }

    #[test]
    fn a_post_fails_the_http_method_and_a_get_passes() {
        let mut record = message(1, "{}", None);
        record.transport = TransportKind::HttpBody;
        record.http_method = "POST".to_owned();
        let mut tally = Tally::default();
        check_http_method(&record, &mut tally);
        record.http_method = "GET".to_owned();
        check_http_method(&record, &mut tally);
        let cell = tally
            .get("client.http.method", TransportKind::HttpBody)
            .unwrap();
        assert_eq!((cell.passes, cell.failures()), (1, 1));
        assert!(tally.describe()[0].contains("http POST"));
    }

    #[test]
    fn a_method_names_something_after_its_prefix_and_holds_no_space() {
        for method in [
            "public/",
            "private/",
            "public/get currencies",
            "/private/get_transaction_log",
            "api/v2/private/get_transaction_log",
        ] {
            let findings = judged(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#
            ));
            assert!(
                findings.iter().any(|f| f.contains("client.env.method")),
                "{method}: {findings:?}"
            );
        }
    }

    #[test]
    fn an_id_is_any_integer_and_nothing_else() {
        for integer in ["-1", "0", "18446744073709551615"] {
            let findings = judged(&format!(
                r#"{{"jsonrpc":"2.0","id":{integer},"method":"public/get_currencies","params":{{}}}}"#
            ));
            assert_eq!(findings, Vec::<String>::new(), "id {integer}");
        }
        for other in ["1.5", "1e3"] {
            let findings = judged(&format!(
                r#"{{"jsonrpc":"2.0","id":{other},"method":"public/get_currencies","params":{{}}}}"#
            ));
            assert!(
                findings.iter().any(|f| f.contains("client.env.id")),
                "id {other}: {findings:?}"
            );
        }
    }

    #[test]
    fn an_empty_body_is_judged_over_http_and_skipped_only_on_a_bodiless_rest_call() {
        let mut record = message(1, "", Some(11));
        record.transport = TransportKind::HttpBody;
        let mut tally = Tally::default();
        check_envelope(&record, &record.call(), &mut tally);
        assert_eq!(tally.failed_clauses(), vec!["client.env.jsonrpc"]);
        record.transport = TransportKind::Rest;
        let mut tally = Tally::default();
        check_envelope(&record, &record.call(), &mut tally);
        assert_eq!(tally.iter().count(), 0);
        // Nor one whose body holds no parameter, as a generic JSON client sends it.
        for body in ["{}", "null", " { } "] {
            record.body = body.as_bytes().to_vec();
            check_envelope(&record, &record.call(), &mut tally);
            assert_eq!(tally.iter().count(), 0, "{body:?}");
        }
        // A REST call with a body is a JSON-RPC request like any other.
        record.body = b"[1]".to_vec();
        check_envelope(&record, &record.call(), &mut tally);
        assert_eq!(tally.failed_clauses(), vec!["client.env.jsonrpc"]);
    }

    #[test]
    fn missing_params_and_wrong_version_fail() {
        let findings = judged(r#"{"jsonrpc":"1.0","id":1,"method":"public/get_currencies"}"#);
        assert!(findings.iter().any(|f| f.contains("client.env.jsonrpc")));
        assert!(findings.iter().any(|f| f.contains("params is missing")));
    }

    #[test]
    fn an_id_reused_before_its_answer_warns_and_after_it_does_not() {
        let body = r#"{"jsonrpc":"2.0","id":5,"method":"public/get_currencies","params":{}}"#;
        let overlapping = [message(1, body, Some(25)), message(2, body, Some(30))];
        let mut tally = Tally::default();
        check_ids_in_flight(&overlapping, &mut tally);
        assert_eq!(tally.failed_clauses(), Vec::<&str>::new());
        assert!(tally.describe()[0].contains("still in flight"));
        let sequential = [message(1, body, Some(15)), message(2, body, Some(30))];
        let mut tally = Tally::default();
        check_ids_in_flight(&sequential, &mut tally);
        assert_eq!(tally.failed_clauses(), Vec::<&str>::new());
    }
}
