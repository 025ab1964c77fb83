//! Malformed input gets error envelopes, WebSocket requests run concurrently, and the fault
//! switches really change behaviour.

use super::*;

#[tokio::test]
async fn malformed_input_is_answered_with_error_envelopes() {
    let server = start(&[]).await;
    let method = "/api/v2/public/get_currencies";
    for (body, code) in [
        (b"{not json".to_vec(), -32700),
        (vec![0xff, 0xfe, b'{', b'}'], -32700),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"public/get_currencies","params":[1]}"#.to_vec(),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{}}"#.to_vec(),
            -32600,
        ),
        (br#"[1,2]"#.to_vec(), -32600),
        (vec![b' '; 70 * 1024], -32600),
    ] {
        let (status, answer) = server.raw(method, None, Some(body)).await;
        assert_eq!((status, error_code(&answer)), (400, code), "{answer}");
    }
    let (status, answer) = server.get("public/no_such_method", "", None).await;
    assert_eq!((status, error_code(&answer)), (400, -32601));
    let (status, answer) = server.get("private/lock_portfolio", "", None).await;
    assert_eq!((status, error_code(&answer)), (400, -32601));
    let (status, answer) = server.raw("/elsewhere", None, None).await;
    assert_eq!((status, error_code(&answer)), (404, -32601));
    let mut ws = Ws::connect(&server).await;
    for (message, code) in [
        (Message::text("garbage"), -32700),
        (Message::binary(vec![0xc3, 0x28]), -32700),
        (Message::text(" ".repeat(70 * 1024)), -32600),
        (
            Message::text(rpc(9, "public/nope", json!({})).to_string()),
            -32601,
        ),
    ] {
        ws.send(message).await;
        assert_eq!(error_code(&ws.receive().await), code);
    }
    let state = ServerState::new(&ServeConfig::loopback());
    let mut connection = Connection::default();
    for seed in 0u32..2_000 {
        let bytes: Vec<u8> = (0..(seed % 97))
            .map(|index| (seed.wrapping_mul(31).wrapping_add(index * 7) % 256) as u8)
            .collect();
        let answer = state.dispatch_message(&mut connection, &bytes);
        assert_eq!(answer["jsonrpc"], "2.0");
    }
}

#[tokio::test]
async fn websocket_requests_run_concurrently_with_their_own_ids() {
    let server = start(&[]).await;
    let mut ws = Ws::connect(&server).await;
    for id in 1..=20u64 {
        let method = if id % 2 == 0 {
            "public/get_currencies"
        } else {
            "public/get_historical_volatility"
        };
        ws.send(Message::text(rpc(id, method, json!({})).to_string()))
            .await;
    }
    let mut seen = HashSet::new();
    for _ in 0..20 {
        let answer = ws.receive().await;
        assert!(answer["result"].is_array(), "{answer}");
        seen.insert(answer["id"].as_u64().expect("integer id"));
    }
    assert_eq!(seen, (1..=20).collect());
}

#[tokio::test]
async fn faults_change_behaviour() {
    let server = start(&[
        Fault::EnvelopeNoJsonrpc,
        Fault::HttpStatus201,
        Fault::TxlogEndless,
        Fault::ScopeNotEnforced,
    ])
    .await;
    let (status, answer) = server.get("public/get_currencies", "", None).await;
    assert_eq!(status, 201);
    assert!(answer.get("jsonrpc").is_none());
    let narrow = bearer(&server.auth("main", Some("account:read")).await);
    let (_, history) = server
        .get("private/get_trigger_order_history", "", Some(&narrow))
        .await;
    assert!(history["result"].is_object(), "{history}");
    let (_, log) = server
        .get(
            "private/get_transaction_log",
            "count=250&currency=SOL",
            Some(&narrow),
        )
        .await;
    assert!(log["result"]["continuation"].is_u64(), "{log}");

    let server = start(&[
        Fault::EnvelopeIdOffByOne,
        Fault::SigUnchecked,
        Fault::LockNoKey,
    ])
    .await;
    let mut ws = Ws::connect(&server).await;
    ws.send(Message::text(
        rpc(7, "public/get_currencies", json!({})).to_string(),
    ))
    .await;
    assert_eq!(ws.receive().await["id"], 8);
    let (client_id, _) = server.credentials("main");
    let query = format!(
        "grant_type=client_signature&client_id={client_id}&timestamp={}&signature=00",
        now_ms()
    );
    assert!(server.get("public/auth", &query, None).await.1["result"].is_object());
    let (status, _) = server
        .raw("/direct/api/v2/private/lock_portfolio", None, None)
        .await;
    assert_eq!(status, 200);
}

#[test]
fn every_fault_names_catalog_clauses() {
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cases/clauses.toml"
    ))
    .expect("catalog");
    let ids: HashSet<&str> = catalog
        .lines()
        .filter_map(|line| line.strip_prefix("id = \""))
        .filter_map(|rest| rest.strip_suffix('"'))
        .collect();
    assert!(Fault::ALL.len() >= 70);
    for fault in Fault::ALL {
        assert_eq!(Fault::from_name(fault.name()), Some(*fault));
        for clause in fault.clauses() {
            assert!(
                ids.contains(clause),
                "{} names unknown clause {clause}",
                fault.name()
            );
        }
    }
}
