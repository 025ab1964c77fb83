//! The pages of paged methods: count, default count, window, and the walk's continuity.

use serde_json::{Value, json};

use super::{record, verdict};
use crate::judge::Record;
use harness_model::check::Verdict;
use harness_protocol::wire::TransportKind;

fn page(seq: u64, params: Value, logs: Vec<u64>, continuation: Value) -> Record {
    let entries: Vec<Value> = logs
        .iter()
        .map(|id| json!({"id": id, "timestamp": 1_000 + id}))
        .collect();
    ws_call_with(
        seq,
        "private/get_transaction_log",
        params,
        json!({"jsonrpc": "2.0", "id": seq, "result": {"logs": entries, "continuation": continuation}}),
    )
}

fn ws_call_with(seq: u64, method: &str, params: Value, answer: Value) -> Record {
    record(
        seq,
        TransportKind::Ws,
        "/ws/api/v2",
        json!({"jsonrpc": "2.0", "id": seq, "method": method, "params": params}),
        answer,
    )
}

#[test]
fn pages_hold_to_count_window_and_continuation() {
    let clause = "m.get_transaction_log.continuation";
    let walk = vec![
        page(
            1,
            json!({"currency": "BTC", "count": 2}),
            vec![1, 2],
            json!(10),
        ),
        page(
            2,
            json!({"currency": "BTC", "count": 2, "continuation": 10}),
            vec![3, 4],
            json!(20),
        ),
        page(
            3,
            json!({"currency": "BTC", "count": 2, "continuation": 20}),
            vec![5],
            Value::Null,
        ),
    ];
    assert_eq!(
        verdict(&walk, clause, TransportKind::Ws),
        Some(Verdict::Pass)
    );
    assert_eq!(
        verdict(&walk, "m.get_transaction_log.count", TransportKind::Ws),
        Some(Verdict::Pass)
    );
    // The next page repeats the last entry of the previous one.
    let overlapping = vec![
        page(
            1,
            json!({"currency": "BTC", "count": 2}),
            vec![1, 2],
            json!(10),
        ),
        page(
            2,
            json!({"currency": "BTC", "count": 2, "continuation": 10}),
            vec![2, 3],
            Value::Null,
        ),
    ];
    assert_eq!(
        verdict(&overlapping, clause, TransportKind::Ws),
        Some(Verdict::Fail)
    );
    // A page read again by passing the same continuation twice is not claimed.
    let reread = vec![
        page(
            1,
            json!({"currency": "BTC", "count": 2}),
            vec![1, 2],
            json!(10),
        ),
        page(
            2,
            json!({"currency": "BTC", "count": 2, "continuation": 10}),
            vec![3, 4],
            json!(20),
        ),
        page(
            3,
            json!({"currency": "BTC", "count": 2, "continuation": 10}),
            vec![3, 4],
            json!(20),
        ),
    ];
    assert_eq!(
        verdict(&reread, clause, TransportKind::Ws),
        Some(Verdict::Pass)
    );
    let too_long = vec![page(
        1,
        json!({"currency": "BTC", "count": 2}),
        vec![1, 2, 3],
        Value::Null,
    )];
    assert_eq!(
        verdict(&too_long, "m.get_transaction_log.count", TransportKind::Ws),
        Some(Verdict::Fail)
    );
    let by_default = vec![page(
        1,
        json!({"currency": "BTC"}),
        (1..=101).collect(),
        Value::Null,
    )];
    assert_eq!(
        verdict(
            &by_default,
            "m.get_transaction_log.count_default",
            TransportKind::Ws
        ),
        Some(Verdict::Fail)
    );
    let windowed = json!({"currency": "BTC", "start_timestamp": 1_002, "end_timestamp": 1_003});
    let inside = vec![page(1, windowed.clone(), vec![2, 3], Value::Null)];
    assert_eq!(
        verdict(&inside, "m.get_transaction_log.window", TransportKind::Ws),
        Some(Verdict::Pass)
    );
    let outside = vec![page(1, windowed, vec![2, 4], Value::Null)];
    assert_eq!(
        verdict(&outside, "m.get_transaction_log.window", TransportKind::Ws),
        Some(Verdict::Fail)
    );
}
