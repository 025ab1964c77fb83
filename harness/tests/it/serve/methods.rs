//! Every method of section 4 answers per its schema over every transport, and the parameter
//! rules of section 4 hold.

use super::*;

#[tokio::test]
async fn public_methods_answer_per_schema_over_query_body_and_ws() {
    let server = start(&[]).await;
    assert_ok(
        "method.public.get_currencies.json",
        server.get("public/get_currencies", "", None).await,
    );
    for currency in ["BTC", "ETH", "USDC", "USDT", "EURR"] {
        let result = assert_ok(
            "method.public.get_historical_volatility.json",
            server
                .get(
                    "public/get_historical_volatility",
                    &format!("currency={currency}"),
                    None,
                )
                .await,
        );
        assert!(!result.as_array().expect("array").is_empty());
    }
    for instrument in [
        "BTC-PERPETUAL",
        "ETH-PERPETUAL",
        "BTC-27JUN25",
        "BTC-27JUN25-70000-C",
    ] {
        let result = assert_ok(
            "method.public.get_book_summary_by_instrument.json",
            server
                .get(
                    "public/get_book_summary_by_instrument",
                    &format!("instrument_name={instrument}"),
                    None,
                )
                .await,
        );
        assert_eq!(result[0]["instrument_name"], instrument);
    }
    let body = rpc(42, "public/get_currencies", json!({}));
    let (status, answer) = server.get_body("public/get_currencies", body, None).await;
    assert_eq!((status, &answer["id"]), (200, &json!(42)));
    let mut ws = Ws::connect(&server).await;
    let answer = ws
        .call(
            "public/get_historical_volatility",
            json!({"currency": "ETH"}),
        )
        .await;
    assert_schema(
        "method.public.get_historical_volatility.json",
        &answer["result"],
    );
}

#[tokio::test]
async fn private_methods_answer_per_schema() {
    let server = start(&[]).await;
    let token = server.auth("main", None).await;
    assert_schema("method.public.auth.json", &token);
    assert_eq!(token["token_type"], "bearer");
    let auth = bearer(&token);
    let auth = Some(auth.as_str());
    let sub_id = server
        .target
        .fixtures
        .subaccount_id
        .expect("subaccount fixture");
    let member_id = server.target.fixtures.member_id.expect("member fixture");
    for query in [
        "",
        "index_name=all",
        "index_name=eth_usdc&mmp_group=mq_alpha",
        "block_rfq=true",
        "index_name=btc_usd&mmp_group=",
    ] {
        let result = assert_ok(
            "method.private.get_mmp_status.json",
            server.get("private/get_mmp_status", query, auth).await,
        );
        assert!(!result.as_array().expect("array").is_empty(), "{query}");
    }
    let history = assert_ok(
        "method.private.get_trigger_order_history.json",
        server
            .get("private/get_trigger_order_history", "currency=BTC", auth)
            .await,
    );
    assert_eq!(history["entries"].as_array().expect("entries").len(), 20);
    let log = assert_ok(
        "method.private.get_transaction_log.json",
        server.get("private/get_transaction_log", "", auth).await,
    );
    assert_eq!(log["logs"].as_array().expect("logs").len(), 100);
    let types: HashSet<&str> = log["logs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["type"].as_str())
        .collect();
    assert!(types.len() > 3, "{types:?}");
    for query in [
        "instrument_name=BTC-PERPETUAL&type=market",
        "instrument_name=ETH-PERPETUAL&type=limit&price=3000",
    ] {
        assert_ok(
            "method.private.close_position.json",
            server.get("private/close_position", query, auth).await,
        );
    }
    let deleted = assert_ok(
        "method.private.delete_member.json",
        server
            .get(
                "private/delete_member",
                &format!("member_id={member_id}"),
                auth,
            )
            .await,
    );
    assert_eq!(deleted["members"].as_array().expect("members").len(), 2);
    let (_, again) = server
        .get(
            "private/delete_member",
            &format!("member_id={member_id}"),
            auth,
        )
        .await;
    assert_eq!(error_code(&again), -32602);
    for state in ["disable", "enable"] {
        assert_ok(
            "method.private.toggle_subaccount_login.json",
            server
                .get(
                    "private/toggle_subaccount_login",
                    &format!("sid={sub_id}&state={state}"),
                    auth,
                )
                .await,
        );
    }
    let key = server
        .target
        .fixtures
        .direct_access_key
        .clone()
        .expect("direct key");
    let (status, answer) = server
        .raw(
            "/direct/api/v2/private/lock_portfolio",
            Some(&format!("Bearer {}", key.expose())),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_schema("method.private.lock_portfolio.json", &answer["result"]);
    let (status, answer) = server
        .raw(
            "/direct/api/v2/private/lock_portfolio",
            Some("Bearer nope"),
            None,
        )
        .await;
    assert_eq!((status, error_code(&answer)), (401, 13009));
    let (status, _) = server
        .raw("/direct/api/v2/private/lock_portfolio", None, None)
        .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn parameter_rules_of_section_4_hold() {
    let server = start(&[]).await;
    let auth = server.bearer("main").await;
    let auth = Some(auth.as_str());
    let refused = [
        ("private/get_transaction_log", "count=0"),
        ("private/get_transaction_log", "count=251"),
        ("private/get_transaction_log", "count=seven"),
        ("private/get_transaction_log", "currency=DOGE"),
        ("private/get_transaction_log", "subaccount_id=1"),
        ("private/get_trigger_order_history", "count=1001"),
        ("private/get_trigger_order_history", "currency=SOL"),
        ("private/get_trigger_order_history", "continuation=bogus"),
        ("private/get_mmp_status", "mmp_group=mq_alpha"),
        ("private/get_mmp_status", "index_name=foo_usd"),
        ("private/get_mmp_status", "block_rfq=yes"),
        ("private/delete_member", "member_id=0"),
        (
            "private/close_position",
            "instrument_name=BTC-PERPETUAL&type=stop",
        ),
        ("private/close_position", "instrument_name=NOPE"),
        ("public/get_historical_volatility", "currency=SOL"),
        ("public/get_book_summary_by_instrument", ""),
        ("public/get_currencies", "unexpected=1"),
    ];
    for (method, query) in refused {
        let (status, answer) = server.get(method, query, auth).await;
        assert_eq!(
            (status, error_code(&answer)),
            (400, -32602),
            "{method}?{query}: {answer}"
        );
    }
    let log = server
        .get("private/get_transaction_log", "currency=SOL", auth)
        .await;
    assert_ok("method.private.get_transaction_log.json", log);
    let history = server
        .get(
            "private/get_trigger_order_history",
            "currency=ETH&instrument_name=ETH-PERPETUAL",
            auth,
        )
        .await;
    let history = assert_ok("method.private.get_trigger_order_history.json", history);
    assert!(
        history["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|entry| entry["instrument_name"] == "ETH-PERPETUAL")
    );
}

#[tokio::test]
async fn whole_history_validates_and_covers_every_type() {
    let server = start(&[]).await;
    let main = server.bearer("main").await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let walk = |query: String| {
        let server = &server;
        let main = main.clone();
        async move {
            let mut entries: Vec<Value> = Vec::new();
            let mut cursor = String::new();
            for _ in 0..20 {
                let answer = server
                    .get(
                        "private/get_transaction_log",
                        &format!("count=250{query}{cursor}"),
                        Some(&main),
                    )
                    .await;
                let page = assert_ok("method.private.get_transaction_log.json", answer);
                entries.extend(page["logs"].as_array().expect("logs").iter().cloned());
                match page["continuation"].as_u64() {
                    Some(next) => cursor = format!("&continuation={next}"),
                    None => break,
                }
            }
            entries
        }
    };
    let main_log = walk(String::new()).await;
    assert!(main_log.len() >= 600, "{}", main_log.len());
    let types: HashSet<&str> = main_log
        .iter()
        .filter_map(|entry| entry["type"].as_str())
        .collect();
    // Every type section 2.3 lists, and one it does not (section 9 says they appear).
    for kind in harness::spec::LISTED_LOG_TYPES
        .iter()
        .copied()
        .chain(["staking_reward"])
    {
        assert!(types.contains(kind), "{kind} missing");
    }
    let currencies: HashSet<&str> = main_log
        .iter()
        .filter_map(|entry| entry["currency"].as_str())
        .collect();
    assert!(currencies.len() >= 6, "{currencies:?}");
    let sub_log = walk(format!("&subaccount_id={sub_id}")).await;
    assert!(
        sub_log.len() > 200 && sub_log.len() < 400,
        "{}",
        sub_log.len()
    );
    assert!(
        sub_log
            .iter()
            .all(|entry| entry["user_id"] == json!(sub_id))
    );
}
