//! Where credentials travel: a token or secret is found by its name and, under any other
//! name, by its value (a token the judge's server issued, a secret the target file holds).

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::judge::record::Answer;
use harness_model::target_file::RateLimits;

const ISSUED: &str = "issued-access-token-4f2a";
const SECRET: &str = "client-secret-9c1e";

fn record(transport: TransportKind, uri: &str, headers: &[(&str, &str)], body: &str) -> Record {
    Record {
        event: 20,
        uri: uri.to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect(),
        body: body.as_bytes().to_vec(),
        ..Record::sample(2, transport)
    }
}

/// The sessions after the server issued [`ISSUED`] to a `client_credentials` login.
fn sessions_with_issued_token() -> Sessions {
    let mut login = record(
        TransportKind::HttpQuery,
        "/api/v2/public/auth?grant_type=client_credentials&client_id=main",
        &[],
        "",
    );
    login.answer = Some(Answer {
        at_ms: 0,
        event: 11,
        status: Some(200),
        body: json!({"jsonrpc": "2.0", "id": 1, "result": {"access_token": ISSUED, "scope": "connection"}}),
        refused: false,
    });
    let mut sessions = Sessions::default();
    sessions.learn(&login, &login.call());
    assert_eq!(sessions.tokens().collect::<Vec<_>>(), [ISSUED]);
    sessions
}

fn knowledge() -> Knowledge {
    Knowledge {
        secrets: BTreeMap::from([
            ("main".to_owned(), SECRET.to_owned()),
            ("c".to_owned(), "s3cret-value".to_owned()),
        ]),
        signature_scheme: None,
        limits: RateLimits::default(),
        ..Knowledge::default()
    }
}

/// The verdicts of one request, as `clause: verdict` lines.
fn judged(record: &Record) -> Vec<String> {
    let mut tally = Tally::default();
    check_placement(
        record,
        &record.call(),
        &sessions_with_issued_token(),
        &knowledge(),
        &mut tally,
    );
    tally
        .iter()
        .map(|(clause, _, cell)| {
            let verdict = if cell.findings.is_empty() {
                "pass"
            } else {
                "fail"
            };
            format!("{clause}: {verdict}")
        })
        .collect()
}

fn http(uri: &str, authorization: Option<&str>) -> Record {
    Record {
        uri: uri.to_owned(),
        headers: authorization
            .map(|value| vec![("authorization".to_owned(), value.to_owned())])
            .unwrap_or_default(),
        ..Record::sample(1, TransportKind::HttpQuery)
    }
}

/// The findings of placement and required parameters, no session issued.
fn described(record: &Record) -> Vec<String> {
    let mut tally = Tally::default();
    let call = record.call();
    check_placement(
        record,
        &call,
        &Sessions::default(),
        &knowledge(),
        &mut tally,
    );
    check_required_params(record, &call, &mut tally);
    tally.describe()
}

#[test]
fn bearer_header_passes_and_token_in_the_url_fails() {
    assert!(
        described(&http(
            "/api/v2/private/get_mmp_status",
            Some("Bearer at123")
        ))
        .is_empty()
    );
    let findings = described(&http(
        "/api/v2/private/get_mmp_status?access_token=at123",
        None,
    ));
    assert!(
        findings[0].contains("client.token.http_header"),
        "{findings:?}"
    );
}

#[test]
fn a_private_ws_call_without_token_fails_on_a_connection_without_session() {
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"private/get_mmp_status","params":{}}"#;
    let record = Record {
        body: body.as_bytes().to_vec(),
        ..Record::sample(1, TransportKind::Ws)
    };
    let mut tally = Tally::default();
    check_ws_token_omitted(&record, &record.call(), &Sessions::default(), &mut tally);
    let findings = tally.describe();
    assert!(
        findings[0].contains("client.token.ws_param")
            && findings[0].contains("holds no session token"),
        "{findings:?}"
    );
}

#[test]
fn client_signature_with_the_secret_fails() {
    let findings = described(&http(
        "/api/v2/public/auth?grant_type=client_signature&client_id=c&timestamp=1&signature=ab&client_secret=s3cret-value",
        None,
    ));
    assert!(
        findings
            .iter()
            .any(|f| f.contains("auth.client_signature.secret_not_sent"))
    );
}

#[test]
fn toggle_without_state_names_the_missing_parameter() {
    let findings = described(&http(
        "/api/v2/private/toggle_subaccount_login?sid=5",
        Some("Bearer x"),
    ));
    assert!(
        findings
            .iter()
            .any(|f| f.contains("client.params.required") && f.contains("missing state"))
    );
}

#[test]
fn an_issued_token_in_the_url_under_another_name_fails() {
    let request = record(
        TransportKind::HttpQuery,
        &format!("/api/v2/private/get_mmp_status?currency=BTC&token={ISSUED}"),
        &[("authorization", "Bearer other")],
        "",
    );
    assert_eq!(judged(&request), ["client.token.http_header: fail"]);
}

#[test]
fn an_access_token_parameter_in_the_url_fails_whatever_its_value() {
    let request = record(
        TransportKind::HttpQuery,
        "/api/v2/private/get_mmp_status?access_token=never-issued",
        &[],
        "",
    );
    assert_eq!(judged(&request), ["client.token.http_header: fail"]);
}

#[test]
fn an_issued_token_in_the_body_under_another_name_fails() {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"private/get_mmp_status","params":{{"token":"{ISSUED}"}}}}"#
    );
    let request = record(
        TransportKind::HttpBody,
        "/api/v2/private/get_mmp_status",
        &[("authorization", "Bearer other")],
        &body,
    );
    assert_eq!(judged(&request), ["client.token.http_header: fail"]);
}

#[test]
fn a_bearer_header_with_a_clean_body_passes() {
    let request = record(
        TransportKind::HttpBody,
        "/api/v2/private/get_mmp_status",
        &[("authorization", &format!("Bearer {ISSUED}"))],
        r#"{"jsonrpc":"2.0","id":3,"method":"private/get_mmp_status","params":{}}"#,
    );
    assert_eq!(judged(&request), ["client.token.http_header: pass"]);
}

#[test]
fn an_issued_token_outside_params_access_token_on_websocket_fails() {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"private/get_mmp_status","params":{{"token":"{ISSUED}"}}}}"#
    );
    let request = record(TransportKind::Ws, "/ws/api/v2", &[], &body);
    assert_eq!(judged(&request), ["client.token.ws_param: fail"]);
}

#[test]
fn an_access_token_name_outside_params_on_websocket_fails() {
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"private/get_mmp_status","params":{},"access_token":"never-issued"}"#;
    let request = record(TransportKind::Ws, "/ws/api/v2", &[], body);
    assert_eq!(judged(&request), ["client.token.ws_param: fail"]);
}

#[test]
fn the_client_secret_under_another_name_fails_a_client_signature_login() {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{{"grant_type":"client_signature","client_id":"main","secret":"{SECRET}"}}}}"#
    );
    let request = record(TransportKind::Ws, "/ws/api/v2", &[], &body);
    assert_eq!(
        judged(&request),
        ["auth.client_signature.secret_not_sent: fail"]
    );
    let clean = r#"{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{"grant_type":"client_signature","client_id":"main","signature":"ab"}}"#;
    let request = record(TransportKind::Ws, "/ws/api/v2", &[], clean);
    assert_eq!(
        judged(&request),
        ["auth.client_signature.secret_not_sent: pass"]
    );
}

/// A `public/auth` call over the query string with these parameters.
fn auth(query: &str) -> Record {
    http(&format!("/api/v2/public/auth?{query}"), None)
}

#[test]
fn required_params_a_grant_without_its_parameters_fails_and_with_them_passes() {
    let findings = described(&auth("grant_type=client_credentials&client_id=c"));
    assert!(
        findings
            .iter()
            .any(|f| f.contains("client.params.required") && f.contains("missing client_secret")),
        "{findings:?}"
    );
    let findings = described(&auth(
        "grant_type=client_credentials&client_id=c&client_secret=other",
    ));
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn required_params_judges_only_the_methods_its_clause_quotes() {
    // public/exchange_token states required parameters too (4.2), but the clause quotes
    // 4.1 and 4.5 only: a call missing them gets no verdict of it.
    let mut tally = Tally::default();
    let request = http("/api/v2/public/exchange_token?refresh_token=r", None);
    check_required_params(&request, &request.call(), &mut tally);
    assert_eq!(tally.iter().count(), 0, "{:?}", tally.describe());
}
