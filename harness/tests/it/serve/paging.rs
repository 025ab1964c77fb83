//! Pagination and the transaction-log rate limit: walks equal one large page, and the limit
//! refuses then refills.

use super::*;

/// Walks a method's pages with a small count, then compares with one large page.
#[tokio::test]
async fn page_walks_equal_one_large_page_without_duplicates() {
    let server = start(&[]).await;
    let auth = server.bearer("main").await;
    let window = "currency=BTC&start_timestamp=1704067200000&end_timestamp=1709251200000";
    let one_page = assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get(
                "private/get_transaction_log",
                &format!("{window}&count=250"),
                Some(&auth),
            )
            .await,
    );
    assert_eq!(one_page["continuation"], Value::Null);
    let expected: Vec<Value> = one_page["logs"].as_array().expect("logs").clone();
    assert!(
        expected.len() > 14 && expected.len() < 250,
        "{}",
        expected.len()
    );
    let mut walked: Vec<Value> = Vec::new();
    let mut continuation: Option<u64> = None;
    for _ in 0..100 {
        let cursor = continuation
            .map(|value| format!("&continuation={value}"))
            .unwrap_or_default();
        let page = assert_ok(
            "method.private.get_transaction_log.json",
            server
                .get(
                    "private/get_transaction_log",
                    &format!("{window}&count=7{cursor}"),
                    Some(&auth),
                )
                .await,
        );
        let logs = page["logs"].as_array().expect("logs");
        assert!(!logs.is_empty() && logs.len() <= 7);
        walked.extend(logs.iter().cloned());
        match page["continuation"].as_u64() {
            Some(next) => continuation = Some(next),
            None => break,
        }
    }
    assert_eq!(walked, expected);
    let ids: HashSet<u64> = walked
        .iter()
        .filter_map(|entry| entry["id"].as_u64())
        .collect();
    assert_eq!(ids.len(), walked.len());
    let stamps: Vec<u64> = walked
        .iter()
        .filter_map(|entry| entry["timestamp"].as_u64())
        .collect();
    assert!(stamps.windows(2).all(|pair| pair[0] >= pair[1]));
    assert!(
        stamps
            .iter()
            .all(|stamp| (1_704_067_200_000..=1_709_251_200_000).contains(stamp))
    );

    let full = assert_ok(
        "method.private.get_trigger_order_history.json",
        server
            .get(
                "private/get_trigger_order_history",
                "count=1000",
                Some(&auth),
            )
            .await,
    );
    assert!(full.get("continuation").is_none());
    let mut walked: Vec<Value> = Vec::new();
    let mut cursor = String::new();
    for _ in 0..100 {
        let page = assert_ok(
            "method.private.get_trigger_order_history.json",
            server
                .get(
                    "private/get_trigger_order_history",
                    &format!("count=7{cursor}"),
                    Some(&auth),
                )
                .await,
        );
        walked.extend(page["entries"].as_array().expect("entries").iter().cloned());
        match page["continuation"].as_str() {
            Some(next) => cursor = format!("&continuation={next}"),
            None => break,
        }
    }
    assert_eq!(&walked, full["entries"].as_array().expect("entries"));
    assert!(walked.len() >= 80);
}

#[tokio::test]
async fn transaction_log_rate_limit_refuses_then_refills() {
    let clock = Clock::manual(1_735_689_600_000);
    let mut config = ServeConfig::loopback();
    config.clock = clock.clone();
    config.limits = RateLimits {
        transaction_log_per_second: 1.0,
        transaction_log_burst: 2,
        ..RateLimits::default()
    };
    let server = start_with(config).await;
    let auth = server.bearer("main").await;
    for _ in 0..2 {
        assert_ok(
            "method.private.get_transaction_log.json",
            server
                .get("private/get_transaction_log", "count=1", Some(&auth))
                .await,
        );
    }
    let (status, answer) = server
        .get("private/get_transaction_log", "count=1", Some(&auth))
        .await;
    assert_eq!((status, error_code(&answer)), (429, 10028));
    clock.advance(1_000);
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", Some(&auth))
            .await,
    );
}
