//! The pure parts of a client session: credentials, login request, token set, signing plan,
//! bearer placement and the token cache.

use std::path::Path;

use serde_json::json;

use super::*;

fn session() -> ClientSession {
    let text = r#"
name = "t"
base_url = "http://127.0.0.1:1/api/v2"
direct_access_url = "http://127.0.0.1:2"
signature_scheme = "test-hmac"
[accounts.main]
client_id = "main-id"
client_secret = "main-secret"
"#;
    let target = Target::parse(Path::new("target.toml"), text, &|_| None).expect("parses");
    let limits = RequestLimits::default();
    let dialer = Dialer::new(&target.tls).expect("dialer builds");
    let http = HttpClient::new(limits, &dialer).expect("client builds");
    ClientSession::new(target, http, dialer, limits, Clock::manual(1_000_000))
}

fn key(role: &str, scope: Option<&str>) -> TokenKey {
    (role.to_owned(), scope.map(str::to_owned))
}

fn token(access: &str) -> Token {
    Token {
        access: access.to_owned(),
        refresh: String::new(),
        granted: Scope::parse(""),
        paced_uses: 0,
    }
}

#[test]
fn credentials_come_from_the_target_file_and_hide_the_secret() {
    let session = session();
    let credentials = session.credentials("main").expect("main exists");
    assert_eq!(credentials.client_id, "main-id");
    assert_eq!(credentials.secret, "main-secret");
    assert!(!format!("{credentials:?}").contains("main-secret"));
    assert_eq!(session.credentials("sub"), None);
}

#[test]
fn a_login_is_client_credentials_with_the_scope_asked_for() {
    let credentials = Credentials {
        client_id: "id".to_owned(),
        secret: "secret".to_owned(),
    };
    let login = ClientSession::login_request(&credentials, Some("account:read"));
    assert_eq!(login.method, "public/auth");
    assert_eq!(
        Value::Object(login.params),
        json!({"grant_type": "client_credentials", "client_id": "id",
               "client_secret": "secret", "scope": "account:read"})
    );
    let without_scope = ClientSession::login_request(&credentials, None);
    assert!(!without_scope.params.contains_key("scope"));
    assert!(without_scope.authorization.is_none() && without_scope.raw.is_none());
}

#[test]
fn the_token_set_is_read_from_the_result() {
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "access_token": "acc", "refresh_token": "ref", "scope": "account:read trade:none",
        "token_type": "bearer", "expires_in": 900}});
    let token = Token::from_answer(&answer).expect("has a token");
    assert_eq!(
        (token.access.as_str(), token.refresh.as_str()),
        ("acc", "ref")
    );
    assert_eq!(token.granted, Scope::parse("account:read trade:none"));
    let refused = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "no"}});
    assert_eq!(Token::from_answer(&refused), None);
    let no_access = json!({"jsonrpc": "2.0", "id": 1, "result": {"refresh_token": "ref"}});
    assert_eq!(Token::from_answer(&no_access), None);
}

#[test]
fn a_bearer_token_goes_in_params_on_websocket_and_in_the_header_on_http() {
    let mut params = Map::new();
    assert!(place_bearer(TransportKind::Ws, "tok", &mut params).is_none());
    assert_eq!(params.get("access_token"), Some(&json!("tok")));
    for transport in [
        TransportKind::HttpQuery,
        TransportKind::HttpBody,
        TransportKind::Rest,
    ] {
        let mut params = Map::new();
        let header = place_bearer(transport, "tok", &mut params);
        assert!(matches!(header, Some(Authorization::Value(value)) if value == "Bearer tok"));
        assert!(params.is_empty());
    }
}

#[test]
fn signatures_are_dated_by_the_session_clock_in_the_target_scheme() {
    let session = session();
    assert_eq!(session.timestamp(0), 1_000_000);
    assert_eq!(session.timestamp(-61_000), 939_000);
    let credentials = session.credentials("main").expect("main exists");
    let plan = session.signed_plan(credentials, 5, "n".to_owned());
    assert_eq!(plan.scheme, "test-hmac");
    assert_eq!(
        (plan.client_id.as_str(), plan.secret.as_str()),
        ("main-id", "main-secret")
    );
    assert_eq!((plan.timestamp, plan.nonce.as_str()), (5, "n"));
    assert!(plan.sign_uri.is_none() && !plan.uppercase_hex);
}

#[test]
fn rest_calls_go_under_the_direct_access_url() {
    assert_eq!(session().rest_base_url(), "http://127.0.0.1:2/api/v2");
}

#[test]
fn tokens_are_cached_per_role_and_scope_while_the_owner_accepts_them() {
    let session = session();
    assert_eq!(session.cached_token(&key("main", None), |_| true), None);
    session.keep_token(key("main", None), token("a"));
    session.keep_token(key("main", Some("account:read")), token("b"));
    let plain = session.cached_token(&key("main", None), |_| true);
    assert_eq!(plain.map(|token| token.access), Some("a".to_owned()));
    let scoped = session.cached_token(&key("main", Some("account:read")), |_| true);
    assert_eq!(scoped.map(|token| token.access), Some("b".to_owned()));
    // An owner that allows two paced uses: the third asks for a new login.
    let use_once_more = |token: &mut Token| {
        let fits = token.paced_uses < 2;
        token.paced_uses += u32::from(fits);
        fits
    };
    assert!(
        session
            .cached_token(&key("main", None), use_once_more)
            .is_some()
    );
    assert!(
        session
            .cached_token(&key("main", None), use_once_more)
            .is_some()
    );
    assert!(
        session
            .cached_token(&key("main", None), use_once_more)
            .is_none()
    );
}
