//! The server's pages through the proxy: seeded paging faults of the reference server are
//! caught on the server's side, and the same walk holds without them.

use futures_util::{SinkExt, StreamExt};
use harness::check::Verdict;
use harness::proxy::report as proxy_report;
use harness::serve::Fault;
use harness::target_file::Target;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{judged, main_account, runtime, start, stop, with_timeout, with_verdict};

/// A transaction-log walk over WebSocket: login, then pages of 5 following the
/// continuation, at most `pages` of them.
async fn walk_transaction_log(target: &Target, pages: usize) {
    let url = target.ws_url.clone().expect("a ws_url");
    let (mut socket, _) = with_timeout(tokio_tungstenite::connect_async(url))
        .await
        .expect("ws connects");
    let (client_id, secret) = main_account(target);
    let mut ask = async |message: Value| -> Value {
        with_timeout(socket.send(Message::text(message.to_string())))
            .await
            .expect("sent");
        loop {
            match with_timeout(socket.next()).await {
                Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).unwrap(),
                Some(Ok(_)) => {}
                other => panic!("websocket ended early: {other:?}"),
            }
        }
    };
    let login = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "public/auth", "params": {
        "grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}}),
    )
    .await;
    let token = login["result"]["access_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let mut continuation = Value::Null;
    for page in 0..pages {
        let mut params = json!({"access_token": token, "currency": "BTC", "count": 5});
        if !continuation.is_null() {
            params["continuation"] = continuation.clone();
        }
        let answer = ask(json!({"jsonrpc": "2.0", "id": 10 + page, "method": "private/get_transaction_log", "params": params})).await;
        continuation = answer["result"]["continuation"].clone();
        if continuation.is_null() {
            break;
        }
    }
}

/// The server's pages: a page longer than its count, and a next page repeating the
/// previous one's last entry, are each caught on the server's side.
#[test]
fn seeded_paging_faults_are_caught_on_the_server_side() {
    for (fault, clause) in [
        (
            Fault::TxlogPageExceedsCount,
            "server:m.get_transaction_log.count [ws]",
        ),
        (
            Fault::TxlogPagesOverlap,
            "server:m.get_transaction_log.continuation [ws]",
        ),
    ] {
        let session = runtime().block_on(async {
            let (server, proxy) = start(vec![fault]).await;
            walk_transaction_log(proxy.client_target(), 3).await;
            stop(server, proxy).await
        });
        let report = judged(&session);
        let failures = with_verdict(&report, proxy_report::SERVER_PREFIX, Verdict::Fail);
        assert!(
            failures.iter().any(|line| line.starts_with(clause)),
            "{fault:?}: {failures:?}"
        );
        assert_eq!(
            with_verdict(&report, proxy_report::CLIENT_PREFIX, Verdict::Fail),
            Vec::<String>::new()
        );
    }
    // Without a fault the same walk holds.
    let session = runtime().block_on(async {
        let (server, proxy) = start(Vec::new()).await;
        walk_transaction_log(proxy.client_target(), 3).await;
        stop(server, proxy).await
    });
    let report = judged(&session);
    let passed = with_verdict(&report, proxy_report::SERVER_PREFIX, Verdict::Pass);
    for clause in [
        "server:m.get_transaction_log.count [ws]",
        "server:m.get_transaction_log.continuation [ws]",
    ] {
        assert!(
            passed.iter().any(|line| line.starts_with(clause)),
            "{clause}: {passed:?}"
        );
    }
}
