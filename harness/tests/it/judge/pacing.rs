//! Faulty clients that pace each of their ways to `private/get_transaction_log` apart, as if
//! each had a budget of its own: the judge counts one budget per account (SPEC.md 8 names
//! no unit; the target file advertises `counted_per = "account"`), whichever token,
//! connection or header carries the request, so each is caught.

use base64::Engine as _;
use serde_json::json;

use super::*;

/// One way of splitting an account's budget each.
#[derive(Clone, Copy, Debug)]
enum Bug {
    /// The subaccount logged in with its own client id, and reached through the main
    /// account's exchange, each kept to 1 request per second.
    SubaccountTwoWays,
    /// The main account over a WebSocket that remembers its session token, with a Basic
    /// header and with a signed header, each kept to 1 request per second.
    EveryWayIn,
}

/// The first page of a walk of its own (a currency each, so only the rate is at fault).
fn first_page(currency: &str) -> String {
    format!("/api/v2/private/get_transaction_log?currency={currency}&count=5")
}

const CURRENCIES: [&str; 9] = [
    "BTC", "ETH", "STETH", "ETHW", "USDC", "USDT", "EURR", "SOL", "XRP",
];

async fn misbehave(bug: Bug, target: &Target) {
    let bearer = |token: &Value| {
        [(
            "authorization",
            format!("Bearer {}", token.as_str().unwrap()),
        )]
    };
    let mut currencies = CURRENCIES.iter();
    match bug {
        Bug::SubaccountTwoWays => {
            let own = token_set_of(target, "sub", "account:read").await;
            let main = token_set_of(target, "main", "account:read").await;
            let sub = target.fixtures.subaccount_id.unwrap();
            let exchanged = get(
                target,
                &format!(
                    "/api/v2/public/exchange_token?refresh_token={}&subject_id={sub}",
                    main["refresh_token"].as_str().unwrap()
                ),
                &[],
                None,
            )
            .await;
            let exchanged = exchanged["result"].clone();
            for _ in 0..3 {
                for token in [&own["access_token"], &exchanged["access_token"]] {
                    let uri = first_page(currencies.next().unwrap());
                    get(target, &uri, &bearer(token), None).await;
                }
                tokio::time::sleep(Duration::from_millis(1_000)).await;
            }
        }
        Bug::EveryWayIn => {
            let (client, secret) = main_account(target);
            let url = target.ws_url.as_deref().unwrap();
            let (mut socket, _) = with_timeout(tokio_tungstenite::connect_async(url))
                .await
                .expect("ws connects");
            let mut exchange = async |message: Value| {
                with_timeout(socket.send(Message::text(message.to_string())))
                    .await
                    .expect("sent");
                loop {
                    match with_timeout(socket.next()).await {
                        Some(Ok(Message::Text(_))) => break,
                        Some(Ok(_)) => {}
                        other => panic!("websocket ended early: {other:?}"),
                    }
                }
            };
            exchange(
                json!({"jsonrpc": "2.0", "id": 0, "method": "public/auth", "params": {
                "grant_type": "client_credentials", "client_id": client, "client_secret": secret,
                "scope": "session:pacer account:read"}}),
            )
            .await;
            let basic = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{client}:{secret}"))
            );
            for round in 0..3u64 {
                // The connection remembers its session token: no access_token.
                let currency = currencies.next().unwrap();
                exchange(json!({"jsonrpc": "2.0", "id": round + 1, "method": "private/get_transaction_log",
                    "params": {"currency": currency, "count": 5}}))
                .await;
                let uri = first_page(currencies.next().unwrap());
                get(target, &uri, &[("authorization", basic.clone())], None).await;
                let uri = first_page(currencies.next().unwrap());
                let header = signed(target, now_ms(), &format!("n-pace-{round}"), &uri);
                get(target, &uri, &[("authorization", header)], None).await;
                tokio::time::sleep(Duration::from_millis(1_000)).await;
            }
        }
    }
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn a_client_pacing_each_way_to_one_account_apart_is_caught() {
    let runtime = multi_thread_runtime();
    let mut missed = Vec::new();
    for bug in [Bug::SubaccountTwoWays, Bug::EveryWayIn] {
        let tally = runtime.block_on(async {
            let mut config = judge::JudgeConfig::loopback();
            config.limits.transaction_log_burst = 1;
            let judge = with_timeout(judge::start(config))
                .await
                .expect("judge starts");
            misbehave(bug, &judge.target().clone()).await;
            finish(judge).await
        });
        let findings = tally.describe();
        let caught = found(
            &findings,
            Verdict::Fail,
            "client.rate.transaction_log",
            "per second",
        );
        if !caught || tally.failed_clauses() != vec!["client.rate.transaction_log"] {
            missed.push(format!(
                "{bug:?}: expected only client.rate.transaction_log to fail, got {findings:#?}"
            ));
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}
