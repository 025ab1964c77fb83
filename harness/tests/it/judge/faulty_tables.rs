//! Faulty clients of the four classes an independent client showed the judge missing:
//! requests off the method tables, tokens used against their state, the Direct Access
//! interface misused, credentials and routes mis-encoded. One bug each, each caught citing
//! the clause it breaks, and nothing else failed.

use base64::Engine as _;
use serde_json::json;

use super::*;

/// One client bug each.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    SidAsString,
    TypeUpperCase,
    IndexNameOfResponses,
    MmpGroupWithoutIndex,
    RefreshTokenAsBearer,
    UsesTokenAfterLogout,
    UsesTokenAfterRefresh,
    ForksConnectionToken,
    ExchangeWiderScope,
    ReadOnlyToggle,
    TwoFactorWithoutCode,
    PrivateWithoutCredentials,
    LogoutOverHttp,
    DirectKeyInQuery,
    DirectWithOAuthToken,
    LockOnBaseUrl,
    LockWithParams,
    BasicTrailingNewline,
    BasicUnknownClient,
    ScopeWithCommas,
    BodyToBaseUrl,
    BodyToOtherPath,
    DirectBodyOtherMethod,
    SignedUnknownClient,
    RatePerToken,
}

/// A login of `role` over HTTP with `scope`: its access and refresh tokens.
async fn login_as(target: &Target, role: &str, scope: &str) -> (String, String) {
    let result = &token_set_of(target, role, scope).await;
    (
        result["access_token"].as_str().expect("a token").to_owned(),
        result["refresh_token"]
            .as_str()
            .expect("a refresh token")
            .to_owned(),
    )
}

fn call(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn direct_lock(target: &Target) -> String {
    format!(
        "{}/api/v2/private/lock_portfolio",
        target.direct_access_url.as_deref().unwrap()
    )
}

async fn direct(url: String, authorization: Option<String>) {
    direct_with_body(url, authorization, None).await;
}

async fn direct_with_body(url: String, authorization: Option<String>, body: Option<String>) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    with_timeout(request.send()).await.expect("answered");
}

fn direct_key(target: &Target) -> String {
    target
        .fixtures
        .direct_access_key
        .as_ref()
        .unwrap()
        .expose()
        .to_owned()
}

async fn misbehave(bug: Bug, target: &Target) {
    let bearer = |token: &str| [("authorization", format!("Bearer {token}"))];
    let sub = target.fixtures.subaccount_id.unwrap();
    match bug {
        Bug::SidAsString => {
            let (token, _) = login_as(target, "main", "account:read_write").await;
            ws(
                target,
                "",
                &[call(
                    1,
                    "private/toggle_subaccount_login",
                    json!({"access_token": token, "sid": sub.to_string(), "state": "enable"}),
                )],
            )
            .await;
        }
        Bug::TypeUpperCase => {
            let (token, _) = login_as(target, "main", "trade:read_write").await;
            ws(target, "", &[call(1, "private/close_position", json!({"access_token": token, "instrument_name": "BTC-PERPETUAL", "type": "MARKET"}))]).await;
        }
        Bug::IndexNameOfResponses => {
            let (token, _) = login_as(target, "main", "trade:read").await;
            get(
                target,
                "/api/v2/private/get_mmp_status?index_name=eurr_usdc",
                &bearer(&token),
                None,
            )
            .await;
        }
        Bug::MmpGroupWithoutIndex => {
            let (token, _) = login_as(target, "main", "trade:read").await;
            get(
                target,
                "/api/v2/private/get_mmp_status?mmp_group=quotes",
                &bearer(&token),
                None,
            )
            .await;
        }
        Bug::RefreshTokenAsBearer => {
            let (_, refresh) = login_as(target, "main", "trade:read").await;
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &bearer(&refresh),
                None,
            )
            .await;
        }
        Bug::UsesTokenAfterLogout => {
            let (token, _) = login_as(target, "main", "trade:read").await;
            ws(
                target,
                "",
                &[call(1, "private/logout", json!({"access_token": token}))],
            )
            .await;
            // Past the moment a request on another connection may still have been in
            // flight beside the answer that ended the token.
            tokio::time::sleep(Duration::from_millis(200)).await;
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &bearer(&token),
                None,
            )
            .await;
        }
        Bug::UsesTokenAfterRefresh => {
            let (token, refresh) = login_as(target, "main", "trade:read").await;
            get(
                target,
                &format!("/api/v2/public/auth?grant_type=refresh_token&refresh_token={refresh}"),
                &[],
                None,
            )
            .await;
            // Past the moment a request on another connection may still have been in
            // flight beside the answer that ended the token.
            tokio::time::sleep(Duration::from_millis(200)).await;
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &bearer(&token),
                None,
            )
            .await;
        }
        Bug::ForksConnectionToken => {
            let (_, refresh) = login_as(target, "main", "trade:read").await;
            get(
                target,
                &format!("/api/v2/public/fork_token?refresh_token={refresh}&session_name=other"),
                &[],
                None,
            )
            .await;
        }
        Bug::ExchangeWiderScope => {
            let (_, refresh) = login_as(target, "main", "account:read").await;
            get(target, &format!("/api/v2/public/exchange_token?refresh_token={refresh}&subject_id={sub}&scope=account%3Aread_write"), &[], None).await;
        }
        Bug::ReadOnlyToggle => {
            let (token, _) = login_as(target, "main", "account:read").await;
            get(
                target,
                &format!("/api/v2/private/toggle_subaccount_login?sid={sub}&state=enable"),
                &bearer(&token),
                None,
            )
            .await;
        }
        Bug::TwoFactorWithoutCode => {
            let (token, _) = login_as(target, "two_factor", "account:read_write").await;
            let sid = target.fixtures.two_factor_subaccount_id.unwrap();
            ws(
                target,
                "",
                &[call(
                    1,
                    "private/toggle_subaccount_login",
                    json!({"access_token": token, "sid": sid, "state": "enable"}),
                )],
            )
            .await;
        }
        Bug::PrivateWithoutCredentials => {
            get(target, "/api/v2/private/get_mmp_status", &[], None).await;
        }
        Bug::LogoutOverHttp => {
            let (token, _) = login_as(target, "main", "trade:read").await;
            get(target, "/api/v2/private/logout", &bearer(&token), None).await;
        }
        Bug::DirectKeyInQuery => {
            direct(
                format!("{}?api_key={}", direct_lock(target), direct_key(target)),
                None,
            )
            .await;
        }
        Bug::DirectWithOAuthToken => {
            let (token, _) = login_as(target, "main", "trade:read_write").await;
            direct(direct_lock(target), Some(format!("Bearer {token}"))).await;
        }
        Bug::LockOnBaseUrl => {
            let key = direct_key(target);
            get(
                target,
                "/api/v2/private/lock_portfolio",
                &bearer(&key),
                None,
            )
            .await;
        }
        Bug::LockWithParams => {
            direct(
                format!("{}?subaccount_id={sub}", direct_lock(target)),
                Some(format!("Bearer {}", direct_key(target))),
            )
            .await;
        }
        Bug::BasicTrailingNewline => {
            let (client, secret) = main_account(target);
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{client}:{secret}\n"));
            get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", format!("Basic {encoded}"))],
                None,
            )
            .await;
        }
        Bug::BasicUnknownClient => {
            let encoded = base64::engine::general_purpose::STANDARD.encode("nobody:anything");
            let answer = get(
                target,
                "/api/v2/private/get_mmp_status",
                &[("authorization", format!("Basic {encoded}"))],
                None,
            )
            .await;
            // Refused live by the judge itself (it knows every account), not left to the
            // server behind it.
            assert_eq!(answer["error"]["data"]["judge"], true, "{answer}");
        }
        Bug::ScopeWithCommas => {
            let (client, secret) = main_account(target);
            get(target, &format!("/api/v2/public/auth?grant_type=client_credentials&client_id={client}&client_secret={secret}&scope=session%3Abot%2Caccount%3Aread"), &[], None).await;
        }
        Bug::BodyToBaseUrl => {
            get(
                target,
                "/api/v2",
                &[],
                Some(call(1, "public/get_currencies", json!({})).to_string()),
            )
            .await;
        }
        Bug::BodyToOtherPath => {
            get(
                target,
                "/api/v2/public/get_historical_volatility",
                &[],
                Some(call(1, "public/get_currencies", json!({})).to_string()),
            )
            .await;
        }
        Bug::DirectBodyOtherMethod => {
            direct_with_body(
                direct_lock(target),
                Some(format!("Bearer {}", direct_key(target))),
                Some(call(1, "public/get_currencies", json!({})).to_string()),
            )
            .await;
        }
        Bug::SignedUnknownClient => {
            // Signed with the main account's secret, under a client id no account has.
            let (client, _) = main_account(target);
            let uri = "/api/v2/private/get_mmp_status";
            let header = signed(target, now_ms(), "n-nobody", uri).replacen(
                &format!("id={client}"),
                "id=nobody",
                1,
            );
            get(target, uri, &[("authorization", header)], None).await;
        }
        Bug::RatePerToken => {
            // Two tokens of one account, each kept to 1 request per second: 2 per second
            // on the account's budget (burst 1), which the judge counts per account.
            let (first, _) = login_as(target, "main", "account:read").await;
            let (second, _) = login_as(target, "main", "account:read").await;
            let currencies = ["BTC", "ETH", "USDC", "USDT", "EURR", "SOL"];
            for pair in currencies.chunks(2) {
                for (token, currency) in [&first, &second].into_iter().zip(pair) {
                    // A first page of a walk of its own: only the rate is at fault.
                    let uri =
                        format!("/api/v2/private/get_transaction_log?currency={currency}&count=5");
                    get(target, &uri, &bearer(token), None).await;
                }
                tokio::time::sleep(Duration::from_millis(1_000)).await;
            }
        }
    }
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn every_faulty_client_of_tables_tokens_direct_access_and_encodings_is_caught() {
    use harness::check::Verdict::Fail;
    let table: &[(Bug, Verdict, &str, &str)] = &[
        (
            Bug::SidAsString,
            Fail,
            "client.params.type",
            "not an integer",
        ),
        (
            Bug::TypeUpperCase,
            Fail,
            "client.params.values",
            "the case differs",
        ),
        (
            Bug::IndexNameOfResponses,
            Fail,
            "client.params.values",
            "eurr_usdc",
        ),
        (
            Bug::MmpGroupWithoutIndex,
            Fail,
            "client.params.requires",
            "without index_name",
        ),
        (
            Bug::RefreshTokenAsBearer,
            Fail,
            "client.token.kind",
            "refresh token",
        ),
        (
            Bug::UsesTokenAfterLogout,
            Fail,
            "client.token.live",
            "logged out",
        ),
        (
            Bug::UsesTokenAfterRefresh,
            Fail,
            "client.token.live",
            "refreshed away",
        ),
        (
            Bug::ForksConnectionToken,
            Fail,
            "client.fork.session_token",
            "connection-scoped",
        ),
        (
            Bug::ExchangeWiderScope,
            Fail,
            "client.exchange.scope_bound",
            "account:read_write",
        ),
        (
            Bug::ReadOnlyToggle,
            Fail,
            "client.token.scope",
            "needs account:read_write",
        ),
        (
            Bug::TwoFactorWithoutCode,
            Fail,
            "client.second_factor.sent",
            "no second factor",
        ),
        (
            Bug::PrivateWithoutCredentials,
            Fail,
            "client.private.credentials",
            "no Authorization",
        ),
        (
            Bug::LogoutOverHttp,
            Fail,
            "client.logout.ws_only",
            "over HTTP",
        ),
        (
            Bug::DirectKeyInQuery,
            Fail,
            "client.direct.key_header",
            "in the URL",
        ),
        (
            Bug::DirectWithOAuthToken,
            Fail,
            "client.direct.key_header",
            "OAuth access token",
        ),
        (
            Bug::LockOnBaseUrl,
            Fail,
            "client.direct.address",
            "{direct_access_url}",
        ),
        (
            Bug::LockWithParams,
            Fail,
            "client.direct.no_params",
            "subaccount_id",
        ),
        (
            Bug::BasicTrailingNewline,
            Fail,
            "client.basic.well_formed",
            "whitespace",
        ),
        (
            Bug::BasicUnknownClient,
            Fail,
            "client.basic.well_formed",
            "which no account has",
        ),
        (Bug::ScopeWithCommas, Fail, "client.scope.grammar", "commas"),
        (
            Bug::BodyToBaseUrl,
            Fail,
            "client.http.path",
            "{base_url} itself",
        ),
        (
            Bug::BodyToOtherPath,
            Fail,
            "client.http.path",
            "the path names public/get_historical_volatility and the body public/get_currencies",
        ),
        (
            Bug::DirectBodyOtherMethod,
            Fail,
            "client.http.path",
            "the path names private/lock_portfolio and the body public/get_currencies",
        ),
        (
            Bug::SignedUnknownClient,
            Fail,
            "client.signed.well_formed",
            "id=\"nobody\" names no client id",
        ),
        (
            Bug::RatePerToken,
            Fail,
            "client.rate.transaction_log",
            "per second",
        ),
    ];
    let runtime = multi_thread_runtime();
    let mut missed = Vec::new();
    for (bug, verdict, clause, fragment) in table {
        let tally = runtime.block_on(async {
            let mut config = judge::JudgeConfig::loopback();
            if *bug == Bug::RatePerToken {
                config.limits.transaction_log_burst = 1;
            }
            let judge = with_timeout(judge::start(config))
                .await
                .expect("judge starts");
            misbehave(*bug, &judge.target().clone()).await;
            finish(judge).await
        });
        let findings = tally.describe();
        let caught = found(&findings, *verdict, clause, fragment);
        let others: Vec<&str> = tally
            .failed_clauses()
            .into_iter()
            .filter(|failed| failed != clause)
            .collect();
        if !caught || !others.is_empty() {
            missed.push(format!(
                "{bug:?}: expected {verdict} {clause} ({fragment}) and nothing else failed, got {findings:#?}"
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "faulty clients the judge did not catch, or caught for something else:\n{}",
        missed.join("\n")
    );
}
