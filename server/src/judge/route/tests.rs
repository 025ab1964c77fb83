//! Where an HTTP call goes: the method path appended to base_url, logout over WebSocket
//! only, credentials on every private call.

use super::*;
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;

fn judged(
    transport: TransportKind,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Vec<String> {
    let record = Record {
        uri: uri.to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect(),
        body: body.as_bytes().to_vec(),
        ..Record::sample(1, transport)
    };
    let mut tally = Tally::default();
    check_route(&record, &record.call(), &mut tally);
    tally.describe()
}

const CURRENCIES: &str = r#"{"jsonrpc":"2.0","id":1,"method":"public/get_currencies","params":{}}"#;

#[test]
fn a_body_sent_to_base_url_itself_or_to_another_methods_path_fails() {
    assert_only_finding(
        &judged(TransportKind::HttpBody, "/api/v2", &[], CURRENCIES),
        Some(Verdict::Fail),
        &["client.http.path", "{base_url} itself"],
    );
    assert_only_finding(
        &judged(TransportKind::HttpBody, "/api/v2/", &[], CURRENCIES),
        Some(Verdict::Fail),
        &["client.http.path"],
    );
    assert_only_finding(
        &judged(
            TransportKind::HttpBody,
            "/api/v2/public/auth",
            &[],
            CURRENCIES,
        ),
        Some(Verdict::Fail),
        &["the path names public/auth and the body public/get_currencies"],
    );
    assert_eq!(
        judged(
            TransportKind::HttpBody,
            "/api/v2/public/get_currencies",
            &[],
            CURRENCIES
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        judged(
            TransportKind::HttpQuery,
            "/api/v2/public/get_currencies",
            &[],
            ""
        ),
        Vec::<String>::new()
    );
    // A percent-encoded character is the character.
    assert_eq!(
        judged(
            TransportKind::HttpQuery,
            "/api/v2/public/get%5Fcurrencies",
            &[],
            ""
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_logout_over_http_fails() {
    assert_only_finding(
        &judged(
            TransportKind::HttpQuery,
            "/api/v2/private/logout",
            &[("authorization", "Bearer t")],
            "",
        ),
        Some(Verdict::Fail),
        &["client.logout.ws_only", "over HTTP"],
    );
}

#[test]
fn a_private_call_over_http_without_credentials_fails() {
    assert_only_finding(
        &judged(
            TransportKind::HttpQuery,
            "/api/v2/private/get_mmp_status",
            &[],
            "",
        ),
        Some(Verdict::Fail),
        &["client.private.credentials", "no Authorization header"],
    );
    assert_eq!(
        judged(
            TransportKind::HttpQuery,
            "/api/v2/private/get_mmp_status",
            &[("authorization", "Basic eDp5")],
            ""
        ),
        Vec::<String>::new()
    );
    assert_only_finding(
        &judged(
            TransportKind::HttpQuery,
            "/api/v2/private/get_mmp_status",
            &[("authorization", "Bearer ")],
            "",
        ),
        Some(Verdict::Fail),
        &["client.private.credentials", "no credential"],
    );
    // A token in the URL is the placement clause's to judge, not this one's.
    assert_eq!(
        judged(
            TransportKind::HttpQuery,
            "/api/v2/private/get_mmp_status?access_token=t",
            &[],
            ""
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        judged(
            TransportKind::HttpQuery,
            "/api/v2/public/get_currencies",
            &[],
            ""
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_token_in_the_body_of_a_private_call_is_the_placement_clauses_to_judge() {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"private/get_mmp_status","params":{"access_token":"t"}}"#;
    assert_eq!(
        judged(
            TransportKind::HttpBody,
            "/api/v2/private/get_mmp_status",
            &[],
            body
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_direct_access_body_naming_another_method_than_its_path_fails() {
    const LOCK: &str = "/direct/api/v2/private/lock_portfolio";
    assert_only_finding(
        &judged(TransportKind::Rest, LOCK, &[], CURRENCIES),
        Some(Verdict::Fail),
        &[
            "client.http.path",
            "the path names private/lock_portfolio and the body public/get_currencies",
        ],
    );
    let lock = r#"{"jsonrpc":"2.0","id":1,"method":"private/lock_portfolio","params":{}}"#;
    assert_eq!(
        judged(TransportKind::Rest, LOCK, &[], lock),
        Vec::<String>::new()
    );
    // A body-less call, or one of an empty object, names its method by its path alone.
    for body in ["", "{}", "null"] {
        assert_eq!(
            judged(TransportKind::Rest, LOCK, &[], body),
            Vec::<String>::new(),
            "{body:?}"
        );
    }
    // A body-less call is direct.rs's to judge, even one to the interface's own path.
    assert_eq!(
        judged(TransportKind::Rest, "/direct/api/v2/", &[], ""),
        Vec::<String>::new()
    );
}
