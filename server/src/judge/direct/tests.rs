//! The Direct Access interface: its address, its key and no parameters.

use serde_json::json;

use super::*;
use crate::judge::record::Answer;
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;

const KEY: &str = "da-key-1234";
const LOCK: &str = "/direct/api/v2/private/lock_portfolio";

fn knowledge() -> Knowledge {
    Knowledge {
        direct_access_key: Some(KEY.to_owned()),
        ..Knowledge::default()
    }
}

/// Sessions in which the server issued the access token `at1`.
fn sessions() -> Sessions {
    let login = Record {
        uri: "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s"
            .to_owned(),
        answer: Some(Answer {
            at_ms: 0,
            event: 2,
            status: Some(200),
            body: json!({"jsonrpc": "2.0", "id": 1, "result": {"access_token": "at1", "refresh_token": "rt1", "scope": "connection"}}),
            refused: false,
        }),
        ..Record::sample(1, TransportKind::HttpQuery)
    };
    let mut sessions = Sessions::default();
    sessions.learn(&login, &login.call());
    sessions
}

fn judged(
    transport: TransportKind,
    uri: &str,
    authorization: Option<&str>,
    body: &str,
) -> Vec<String> {
    let record = Record {
        uri: uri.to_owned(),
        headers: authorization
            .map(|value| vec![("authorization".to_owned(), value.to_owned())])
            .unwrap_or_default(),
        body: body.as_bytes().to_vec(),
        event: 10,
        ..Record::sample(5, transport)
    };
    let mut tally = Tally::default();
    check_direct_access(
        &record,
        &record.call(),
        &sessions(),
        &knowledge(),
        &mut tally,
    );
    tally.describe()
}

#[test]
fn the_key_as_bearer_header_without_parameters_passes() {
    assert_eq!(
        judged(
            TransportKind::Rest,
            LOCK,
            Some(&format!("Bearer {KEY}")),
            ""
        ),
        Vec::<String>::new()
    );
}

#[test]
fn the_key_in_the_query_string_fails() {
    let findings = judged(
        TransportKind::Rest,
        &format!("{LOCK}?api_key={KEY}"),
        None,
        "",
    );
    assert_only_finding(
        &findings,
        Some(Verdict::Fail),
        &["client.direct.key_header", "in the URL"],
    );
}

#[test]
fn an_oauth_token_or_another_key_as_bearer_fails() {
    assert_only_finding(
        &judged(TransportKind::Rest, LOCK, Some("Bearer at1"), ""),
        Some(Verdict::Fail),
        &["OAuth access token"],
    );
    assert_only_finding(
        &judged(TransportKind::Rest, LOCK, Some("Bearer da-other"), ""),
        Some(Verdict::Fail),
        &["not the Direct Access interface's API key"],
    );
}

#[test]
fn lock_portfolio_on_the_json_rpc_interface_fails() {
    assert_only_finding(
        &judged(
            TransportKind::HttpQuery,
            "/api/v2/private/lock_portfolio",
            Some("Bearer at1"),
            "",
        ),
        Some(Verdict::Fail),
        &["client.direct.address", "{direct_access_url}"],
    );
    let message = r#"{"jsonrpc":"2.0","id":1,"method":"private/lock_portfolio","params":{}}"#;
    assert_only_finding(
        &judged(TransportKind::Ws, "/ws/api/v2", None, message),
        Some(Verdict::Fail),
        &["client.direct.address", "over ws"],
    );
}

#[test]
fn a_parameter_or_a_body_fails() {
    assert_only_finding(
        &judged(
            TransportKind::Rest,
            &format!("{LOCK}?subaccount_id=7"),
            Some(&format!("Bearer {KEY}")),
            "",
        ),
        Some(Verdict::Fail),
        &["client.direct.no_params", "subaccount_id"],
    );
    assert_only_finding(
        &judged(
            TransportKind::Rest,
            LOCK,
            Some(&format!("Bearer {KEY}")),
            r#"{"portfolio":1}"#,
        ),
        Some(Verdict::Fail),
        &["client.direct.no_params", "body of 15 bytes"],
    );
    // What a generic JSON client sends for no parameters holds none.
    for body in ["{}", "null"] {
        assert_eq!(
            judged(
                TransportKind::Rest,
                LOCK,
                Some(&format!("Bearer {KEY}")),
                body
            ),
            Vec::<String>::new()
        );
    }
}
