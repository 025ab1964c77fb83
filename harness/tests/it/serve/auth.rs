//! Authentication over real sockets: every grant and credential path of section 5 and its
//! refusals, scopes and the second factor, refresh, exchange and fork, WebSocket sessions,
//! logout and subaccount logins.

use super::*;

#[tokio::test]
async fn client_signature_is_accepted_and_each_refusal_happens() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let signed = |timestamp: u64, nonce: &str, data: &str| {
        let signature = sign::client_signature(&secret, timestamp, nonce, data).expect("signs");
        json!({"grant_type": "client_signature", "client_id": client_id, "timestamp": timestamp,
               "signature": signature, "nonce": nonce, "data": data})
    };
    let mut ws = Ws::connect(&server).await;
    let answer = ws
        .call("public/auth", signed(now_ms(), &fresh_nonce(), ""))
        .await;
    assert_schema("method.public.auth.json", &answer["result"]);
    let answer = ws
        .call("public/auth", signed(now_ms(), &fresh_nonce(), "some data"))
        .await;
    assert!(answer["result"].is_object(), "{answer}");
    let answer = ws
        .call("public/auth", signed(now_ms() + 30_000, &fresh_nonce(), ""))
        .await;
    assert!(
        answer["result"].is_object(),
        "a clock 30 s ahead is tolerated: {answer}"
    );
    let stale = ws
        .call("public/auth", signed(now_ms() - 61_000, &fresh_nonce(), ""))
        .await;
    assert_eq!(error_code(&stale), 13004);
    let reused = signed(now_ms(), "fixed-nonce", "");
    assert!(ws.call("public/auth", reused.clone()).await["result"].is_object());
    assert_eq!(error_code(&ws.call("public/auth", reused).await), 13004);
    let mut wrong = signed(now_ms(), &fresh_nonce(), "");
    wrong["signature"] =
        json!(sign::client_signature("not-the-secret", now_ms(), "x", "").expect("signs"));
    assert_eq!(error_code(&ws.call("public/auth", wrong).await), 13004);
    let mut upper = signed(now_ms(), &fresh_nonce(), "");
    upper["signature"] = json!(
        upper["signature"]
            .as_str()
            .expect("signature")
            .to_ascii_uppercase()
    );
    assert_eq!(error_code(&ws.call("public/auth", upper).await), 13004);
    // Over HTTP the timestamp arrives as a query string and is coerced to an integer.
    let timestamp = now_ms();
    let nonce = fresh_nonce();
    let signature = sign::client_signature(&secret, timestamp, &nonce, "").expect("signs");
    let query = format!(
        "grant_type=client_signature&client_id={client_id}&timestamp={timestamp}&nonce={nonce}&signature={signature}"
    );
    assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &query, None).await,
    );
}

#[tokio::test]
async fn http_credentials_are_accepted_and_refused() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let (status, wrong) = server
        .get(
            "public/auth",
            &format!("grant_type=client_credentials&client_id={client_id}&client_secret=nope"),
            None,
        )
        .await;
    assert_eq!((status, error_code(&wrong)), (400, 13004));
    let (_, bad_grant) = server.get("public/auth", "grant_type=password", None).await;
    assert_eq!(error_code(&bad_grant), -32602);
    let method = "private/get_transaction_log";
    let basic = sign::basic_header_value(&client_id, &secret);
    assert_ok(
        "method.private.get_transaction_log.json",
        server.get(method, "count=3", Some(&basic)).await,
    );
    let basic_wrong = sign::basic_header_value(&client_id, "nope");
    assert_eq!(
        error_code(&server.get(method, "count=3", Some(&basic_wrong)).await.1),
        13004
    );
    let signed_header = |timestamp: u64, nonce: &str, uri: &str, key: &str| {
        SignedHeader::sign(
            DEFAULT_SCHEME,
            &client_id,
            key,
            &harness::auth::sign::HttpSignedFields::get(timestamp, nonce, uri),
        )
        .expect("signs")
        .to_header_value()
    };
    let uri = "/api/v2/private/get_transaction_log?count=3";
    let header = signed_header(now_ms(), "n-1", uri, &secret);
    assert_ok(
        "method.private.get_transaction_log.json",
        server.raw(uri, Some(&header), None).await,
    );
    assert_eq!(
        error_code(&server.raw(uri, Some(&header), None).await.1),
        13004,
        "reused nonce"
    );
    let stale = signed_header(now_ms() - 61_000, "n-2", uri, &secret);
    assert_eq!(
        error_code(&server.raw(uri, Some(&stale), None).await.1),
        13004
    );
    let wrong_key = signed_header(now_ms(), "n-3", uri, "nope");
    assert_eq!(
        error_code(&server.raw(uri, Some(&wrong_key), None).await.1),
        13004
    );
    let without_query = signed_header(
        now_ms(),
        "n-4",
        "/api/v2/private/get_transaction_log",
        &secret,
    );
    assert_eq!(
        error_code(&server.raw(uri, Some(&without_query), None).await.1),
        13004
    );
    let (status, missing) = server.get(method, "", None).await;
    assert_eq!((status, error_code(&missing)), (400, 13009));
    assert_eq!(
        error_code(&server.get(method, "", Some("Bearer nope")).await.1),
        13009
    );
    let token = server.auth("main", None).await;
    let query = format!(
        "access_token={}",
        token["access_token"].as_str().expect("token")
    );
    let (_, in_query) = server.get(method, &query, None).await;
    assert_eq!(in_query["error"]["data"]["param"], "access_token");
}

#[tokio::test]
async fn scope_and_second_factor_are_enforced() {
    let server = start(&[]).await;
    let narrow = bearer(&server.auth("main", Some("account:read")).await);
    let narrow = Some(narrow.as_str());
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", narrow)
            .await,
    );
    assert_eq!(
        error_code(
            &server
                .get("private/get_trigger_order_history", "", narrow)
                .await
                .1
        ),
        13009
    );
    assert_eq!(
        error_code(&server.get("private/get_mmp_status", "", narrow).await.1),
        13009
    );
    let no_main = bearer(&server.auth("main", Some("account:read_write")).await);
    let (_, refused) = server
        .get("private/delete_member", "member_id=1", Some(&no_main))
        .await;
    assert_eq!(error_code(&refused), 13009);
    let sub = server.bearer("sub").await;
    assert_eq!(
        error_code(
            &server
                .get("private/delete_member", "member_id=1", Some(&sub))
                .await
                .1
        ),
        13009
    );
    let two_factor = server.bearer("two_factor").await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let query = format!("sid={sub_id}&state=disable");
    let (_, refused) = server
        .get("private/toggle_subaccount_login", &query, Some(&two_factor))
        .await;
    assert_eq!(error_code(&refused), 13668);
    assert_eq!(
        refused["error"]["message"],
        "security_key_authorization_error"
    );
}

#[tokio::test]
async fn refresh_rotates_and_ends_the_previous_connection_token() {
    let server = start(&[]).await;
    let first = server.auth("main", None).await;
    let refresh = |token_set: &Value| {
        format!(
            "grant_type=refresh_token&refresh_token={}",
            token_set["refresh_token"].as_str().expect("refresh")
        )
    };
    let second = assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &refresh(&first), None).await,
    );
    assert_ne!(first["access_token"], second["access_token"]);
    assert_ne!(first["refresh_token"], second["refresh_token"]);
    let method = "private/get_transaction_log";
    assert_eq!(
        error_code(&server.get(method, "count=1", Some(&bearer(&first))).await.1),
        13009
    );
    assert_eq!(
        error_code(&server.get("public/auth", &refresh(&first), None).await.1),
        13009
    );
    assert_ok(
        "method.private.get_transaction_log.json",
        server.get(method, "count=1", Some(&bearer(&second))).await,
    );
    let session = server.auth("main", Some("session:desk")).await;
    assert!(
        session["scope"]
            .as_str()
            .expect("scope")
            .contains("session:desk")
    );
    let renewed = assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &refresh(&session), None).await,
    );
    assert!(
        renewed["scope"]
            .as_str()
            .expect("scope")
            .contains("session:desk")
    );
    assert_ne!(session["refresh_token"], renewed["refresh_token"]);
}

#[tokio::test]
async fn exchange_and_fork_issue_tokens_within_bounds() {
    let server = start(&[]).await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let main = server.auth("main", None).await;
    let refresh = main["refresh_token"].as_str().expect("refresh").to_owned();
    let exchanged = assert_ok(
        "method.public.auth.json",
        server
            .get(
                "public/exchange_token",
                &format!("refresh_token={refresh}&subject_id={sub_id}"),
                None,
            )
            .await,
    );
    let log = assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get(
                "private/get_transaction_log",
                "count=5",
                Some(&bearer(&exchanged)),
            )
            .await,
    );
    assert!(
        log["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|entry| entry["user_id"] == json!(sub_id))
    );
    let narrow = server.auth("main", Some("account:read")).await;
    let narrow_refresh = narrow["refresh_token"].as_str().expect("refresh");
    let query =
        format!("refresh_token={narrow_refresh}&subject_id={sub_id}&scope=account:read_write");
    assert!(
        server
            .get("public/exchange_token", &query, None)
            .await
            .1
            .get("error")
            .is_some()
    );
    let session = server.auth("main", Some("session:one")).await;
    let query = format!(
        "refresh_token={}&session_name=two",
        session["refresh_token"].as_str().expect("refresh")
    );
    let forked = assert_ok(
        "method.public.auth.json",
        server.get("public/fork_token", &query, None).await,
    );
    assert!(
        forked["scope"]
            .as_str()
            .expect("scope")
            .contains("session:two")
    );
    let query = format!("refresh_token={refresh}&session_name=two");
    assert!(
        server
            .get("public/fork_token", &query, None)
            .await
            .1
            .get("error")
            .is_some()
    );
}

#[tokio::test]
async fn websocket_remembers_session_tokens_and_logout_ends_them() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let credentials = |scope: &str| json!({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret, "scope": scope});
    let mut ws = Ws::connect(&server).await;
    ws.call("public/auth", credentials("connection")).await;
    let forgotten = ws.call("private/get_mmp_status", json!({})).await;
    assert_eq!(
        error_code(&forgotten),
        13009,
        "connection tokens are not remembered"
    );
    let session = ws.call("public/auth", credentials("session:ws")).await["result"].clone();
    let remembered = ws.call("private/get_mmp_status", json!({})).await;
    assert!(remembered["result"].is_array(), "{remembered}");
    let (status, over_http) = server
        .get("private/logout", "", Some(&bearer(&session)))
        .await;
    assert_eq!((status, error_code(&over_http)), (400, 11050));
    assert_eq!(ws.call("private/logout", json!({})).await["result"], "ok");
    assert_eq!(
        error_code(&ws.call("private/get_mmp_status", json!({})).await),
        13009
    );
    let (_, after) = server
        .get("private/get_mmp_status", "", Some(&bearer(&session)))
        .await;
    assert_eq!(error_code(&after), 13009);
    let token = server.auth("main", None).await;
    let explicit = json!({"access_token": token["access_token"]});
    assert!(ws.call("private/get_mmp_status", explicit).await["result"].is_array());
}

#[tokio::test]
async fn disabling_a_subaccount_ends_its_sessions() {
    let server = start(&[]).await;
    let sub = server.bearer("sub").await;
    let main = server.bearer("main").await;
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", Some(&sub))
            .await,
    );
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let query = format!("sid={sub_id}&state=disable");
    assert_ok(
        "method.private.toggle_subaccount_login.json",
        server
            .get("private/toggle_subaccount_login", &query, Some(&main))
            .await,
    );
    assert_eq!(
        error_code(
            &server
                .get("private/get_transaction_log", "count=1", Some(&sub))
                .await
                .1
        ),
        13009
    );
    let query = format!("sid={sub_id}&state=sleep");
    assert_eq!(
        error_code(
            &server
                .get("private/toggle_subaccount_login", &query, Some(&main))
                .await
                .1
        ),
        -32602
    );
}
