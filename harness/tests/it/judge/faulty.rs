//! Faulty clients, one bug each, built from `harness::auth::sign` pieces: the judge must
//! catch every one citing the clause it breaks.

use serde_json::json;

use super::*;

/// One client bug each.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    NoTrailingLf,
    ReusedNonce,
    StaleTimestamp,
    UppercaseHex,
    SecretSent,
    SecretSentBase64,
    SecretInBasicHeader,
    TokenInUrl,
    WsTokenInUrl,
    NonIntegerId,
    ParamsAsArray,
    WrongVersion,
    BareMethod,
    SignedWithoutNonce,
    SignedWithoutQuery,
    SignedStale,
    SignedNonceReused,
    CountTooLarge,
    RestartsWalk,
    StopsAtShortPage,
    BurstsTransactionLog,
    GivesUpOnUnknownType,
    ToggleWithoutState,
    SignedOtherScheme,
    WsPrivateWithoutToken,
    Posts,
}

async fn misbehave(bug: Bug, target: &Target) {
    let (_, secret) = main_account(target);
    let now = now_ms();
    let bearer = |token: &str| [("authorization", format!("Bearer {token}"))];
    match bug {
        Bug::NoTrailingLf => {
            let signature = sign::hmac_hex(secret.as_bytes(), format!("{now}\nn-lf").as_bytes());
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-lf", signature)],
            )
            .await;
        }
        Bug::ReusedNonce => {
            let first = sign::client_signature(&secret, now, "n-same", "").unwrap();
            let second = sign::client_signature(&secret, now + 1, "n-same", "").unwrap();
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-same", first)],
            )
            .await;
            ws(
                target,
                "",
                &[client_signature_auth(target, 2, now + 1, "n-same", second)],
            )
            .await;
        }
        Bug::StaleTimestamp => {
            let stale = now - 61_000;
            let signature = sign::client_signature(&secret, stale, "n-stale", "").unwrap();
            ws(
                target,
                "",
                &[client_signature_auth(
                    target, 1, stale, "n-stale", signature,
                )],
            )
            .await;
        }
        Bug::UppercaseHex => {
            let signature = sign::client_signature(&secret, now, "n-upper", "")
                .unwrap()
                .to_ascii_uppercase();
            ws(
                target,
                "",
                &[client_signature_auth(target, 1, now, "n-upper", signature)],
            )
            .await;
        }
        Bug::SecretSent => {
            let signature = sign::client_signature(&secret, now, "n-secret", "").unwrap();
            let mut message = client_signature_auth(target, 1, now, "n-secret", signature);
            message["params"]["client_secret"] = json!(secret);
            ws(target, "", &[message]).await;
        }
        Bug::SecretSentBase64 => {
            use base64::Engine;
            let signature = sign::client_signature(&secret, now, "n-secret64", "").unwrap();
            let mut message = client_signature_auth(target, 1, now, "n-secret64", signature);
            message["params"]["key"] =
                json!(base64::engine::general_purpose::STANDARD.encode(&secret));
            ws(target, "", &[message]).await;
        }
        Bug::SecretInBasicHeader => {
            let (client, _) = main_account(target);
            let signature = sign::client_signature(&secret, now, "n-basic", "").unwrap();
            get(
                target,
                &format!("/api/v2/public/auth?grant_type=client_signature&client_id={client}&timestamp={now}&nonce=n-basic&signature={signature}"),
                &[("authorization", sign::basic_header_value(&client, &secret))],
                None,
            )
            .await;
        }
        Bug::TokenInUrl => {
            let token = login(target).await;
            get(
                target,
                &format!("/api/v2/private/get_mmp_status?access_token={token}"),
                &[],
                None,
            )
            .await;
        }
        Bug::WsTokenInUrl => {
            let token = login(target).await;
            let message = json!({"jsonrpc": "2.0", "id": 1, "method": "private/get_mmp_status", "params": {}});
            ws(target, &format!("?access_token={token}"), &[message]).await;
        }
        Bug::NonIntegerId => {
            let answers = ws(target, "", &[json!({"jsonrpc": "2.0", "id": "abc", "method": "public/get_currencies", "params": {}})]).await;
            assert_eq!(
                answers[0]["error"]["code"], -32600,
                "refused as the reference server refuses: {}",
                answers[0]
            );
        }
        Bug::ParamsAsArray => {
            ws(target, "", &[json!({"jsonrpc": "2.0", "id": 1, "method": "public/get_currencies", "params": []})]).await;
        }
        Bug::WrongVersion => {
            let body =
                json!({"jsonrpc": "1.0", "id": 1, "method": "public/get_currencies", "params": {}});
            get(
                target,
                "/api/v2/public/get_currencies",
                &[],
                Some(body.to_string()),
            )
            .await;
        }
        Bug::BareMethod => {
            ws(
                target,
                "",
                &[json!({"jsonrpc": "2.0", "id": 1, "method": "get_currencies", "params": {}})],
            )
            .await;
        }
        Bug::SignedWithoutNonce => {
            let header = signed(target, now, "n-x", "/api/v2/private/get_mmp_status");
            let header = header.replace(",nonce=n-x", "");
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedWithoutQuery => {
            let header = signed(target, now, "n-q", "/api/v2/private/get_mmp_status");
            get(
                target,
                "/api/v2/private/get_mmp_status?index_name=btc_usd",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedStale => {
            let header = signed(
                target,
                now - 61_000,
                "n-old",
                "/api/v2/private/get_mmp_status",
            );
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", header)],
                None,
            )
            .await;
        }
        Bug::SignedNonceReused => {
            for _ in 0..2 {
                let header = signed(
                    target,
                    now_ms(),
                    "n-twice",
                    "/api/v2/private/get_mmp_status",
                );
                get(
                    target,
                    "/api/v2/private/get_mmp_status",
                    &[("authorization", header)],
                    None,
                )
                .await;
            }
        }
        Bug::CountTooLarge => {
            let token = login(target).await;
            get(target, &txlog(251, None), &bearer(&token), None).await;
        }
        Bug::RestartsWalk => {
            let token = login(target).await;
            for _ in 0..3 {
                get(target, &txlog(5, None), &bearer(&token), None).await;
            }
        }
        Bug::StopsAtShortPage => {
            let token = login(target).await;
            let page = get(target, &txlog(100, None), &bearer(&token), None).await;
            assert!(page["result"]["logs"].as_array().unwrap().len() < 100);
        }
        Bug::BurstsTransactionLog => {
            let token = login(target).await;
            // Six at once, where the advertised burst is two.
            let client = reqwest::Client::new();
            let sends = (0..6).map(|_| {
                client
                    .get(format!("{}{}", origin(target), txlog(1, None)))
                    .header("authorization", format!("Bearer {token}"))
                    .send()
            });
            for response in with_timeout(futures_util::future::join_all(sends)).await {
                response.expect("answered");
            }
        }
        Bug::GivesUpOnUnknownType => {
            let token = login(target).await;
            let mut continuation = None;
            loop {
                let page = get(
                    target,
                    &txlog(5, continuation.as_ref()),
                    &bearer(&token),
                    None,
                )
                .await;
                let listed = harness::spec::LISTED_LOG_TYPES;
                let logs = page["result"]["logs"].as_array().unwrap().clone();
                if logs
                    .iter()
                    .any(|entry| !listed.contains(&entry["type"].as_str().unwrap_or("")))
                {
                    break; // The bug: an unknown type ends the client's work.
                }
                continuation = Some(page["result"]["continuation"].clone());
            }
        }
        Bug::SignedOtherScheme => {
            let uri = "/api/v2/private/get_mmp_status";
            let header = signed(target, now, "n-scheme", uri).replacen(
                &target.signature_scheme,
                "svc-hmac-sha256",
                1,
            );
            get(target, uri, &[("authorization", header)], None).await;
        }
        Bug::WsPrivateWithoutToken => {
            let (client_id, secret) = main_account(target);
            let answers = ws(
                target,
                "",
                &[
                    json!({"jsonrpc": "2.0", "id": 1, "method": "public/auth", "params": {
                        "grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}}),
                    json!({"jsonrpc": "2.0", "id": 2, "method": "private/get_mmp_status", "params": {}}),
                ],
            )
            .await;
            assert!(answers[1]["error"].is_object(), "{}", answers[1]);
        }
        Bug::Posts => {
            let (client_id, secret) = main_account(target);
            let body = json!({"jsonrpc": "2.0", "id": 0, "method": "public/auth", "params": {
                "grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}});
            post(target, "/api/v2/public/auth", body.to_string()).await;
        }
        Bug::ToggleWithoutState => {
            let token = login(target).await;
            get(
                target,
                "/api/v2/private/toggle_subaccount_login?sid=100011",
                &bearer(&token),
                None,
            )
            .await;
        }
    }
}

/// The judge a bug is tried against: its scenario, burst and scheme name.
fn config_for(bug: Bug) -> judge::JudgeConfig {
    let mut config = judge::JudgeConfig::loopback();
    match bug {
        Bug::StopsAtShortPage => config.scenario = Scenario::ShortPages,
        Bug::GivesUpOnUnknownType => config.scenario = Scenario::UnknownTypes,
        Bug::BurstsTransactionLog => config.limits.transaction_log_burst = 2,
        Bug::SignedOtherScheme => config.signature_scheme = Some("deri-hmac-sha256".to_owned()),
        _ => {}
    }
    config
}

#[test]
fn every_faulty_client_is_caught_citing_the_clause_it_breaks() {
    use Verdict::{Fail, Warn};
    let table: &[(Bug, Verdict, &str, &str)] = &[
        (
            Bug::NoTrailingLf,
            Fail,
            "client.sig.framing",
            "lacks the trailing lf",
        ),
        (
            Bug::ReusedNonce,
            Fail,
            "client.sig.nonce_unique",
            "already used",
        ),
        (Bug::StaleTimestamp, Fail, "client.sig.fresh", "61 s old"),
        (
            Bug::UppercaseHex,
            Fail,
            "client.sig.hex_lower",
            "upper-case",
        ),
        (
            Bug::SecretSent,
            Fail,
            "auth.client_signature.secret_not_sent",
            "client_secret",
        ),
        (
            Bug::SecretSentBase64,
            Fail,
            "auth.client_signature.secret_not_sent",
            "carries the client secret",
        ),
        (
            Bug::SecretInBasicHeader,
            Fail,
            "auth.client_signature.secret_not_sent",
            "carries the client secret",
        ),
        (
            Bug::TokenInUrl,
            Fail,
            "client.token.http_header",
            "in the url",
        ),
        (
            Bug::WsTokenInUrl,
            Fail,
            "client.token.ws_param",
            "websocket url",
        ),
        (Bug::NonIntegerId, Fail, "client.env.id", "not an integer"),
        (Bug::ParamsAsArray, Fail, "client.env.params", "an array"),
        (Bug::WrongVersion, Fail, "client.env.jsonrpc", "not \"2.0\""),
        (Bug::BareMethod, Fail, "client.env.method", "get_currencies"),
        (
            Bug::SignedWithoutNonce,
            Fail,
            "client.signed.well_formed",
            "nonce",
        ),
        (
            Bug::SignedWithoutQuery,
            Fail,
            "client.signed.request_data",
            "without its query string",
        ),
        (Bug::SignedStale, Fail, "client.signed.fresh", "61 s old"),
        (
            Bug::SignedNonceReused,
            Fail,
            "client.signed.nonce_unique",
            "already used",
        ),
        (Bug::CountTooLarge, Fail, "client.count.bounds", "251"),
        (
            Bug::RestartsWalk,
            Fail,
            "client.pagination.follow",
            "restart loop",
        ),
        (
            Bug::StopsAtShortPage,
            Warn,
            "client.pagination.follow",
            "short page",
        ),
        (
            Bug::BurstsTransactionLog,
            Fail,
            "client.rate.transaction_log",
            "burst of 2",
        ),
        (
            Bug::GivesUpOnUnknownType,
            Fail,
            "client.log_type.tolerant",
            "went silent",
        ),
        (
            Bug::ToggleWithoutState,
            Fail,
            "client.params.required",
            "missing state",
        ),
        (
            Bug::SignedOtherScheme,
            Fail,
            "client.signed.well_formed",
            "\"deri-hmac-sha256\"",
        ),
        (
            Bug::WsPrivateWithoutToken,
            Fail,
            "client.token.ws_param",
            "holds no session token",
        ),
        (Bug::Posts, Fail, "client.http.method", "http POST"),
    ];
    let runtime = multi_thread_runtime();
    let mut missed = Vec::new();
    for (bug, verdict, clause, fragment) in table {
        let tally = runtime.block_on(async {
            let judge = with_timeout(judge::start(config_for(*bug)))
                .await
                .expect("judge starts");
            misbehave(*bug, &judge.target().clone()).await;
            finish(judge).await
        });
        let caught = found(&tally.describe(), *verdict, clause, fragment);
        if !caught {
            missed.push(format!(
                "{bug:?}: expected {verdict} {clause} ({fragment}), got {:#?}",
                tally.describe()
            ));
        }
        if *bug == Bug::Posts {
            // The body of the POST is read: its parameters are all there.
            let wrongly = tally.failed_clauses();
            assert_eq!(
                wrongly,
                vec!["client.http.method"],
                "{:#?}",
                tally.describe()
            );
        }
    }
    assert!(
        missed.is_empty(),
        "faulty clients the judge did not catch:\n{}",
        missed.join("\n")
    );
}
