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

#[test]
fn a_count_out_of_its_range_is_not_judged_against_the_page() {
    // `count` 0 lies below the range SPEC.md gives it: whatever the page holds, the page is
    // not judged against it (the refusal a server owes is the suite's to check).
    let below = vec![page(
        1,
        json!({"currency": "BTC", "count": 0}),
        vec![1],
        Value::Null,
    )];
    assert_eq!(
        verdict(&below, "m.get_transaction_log.count", TransportKind::Ws),
        None
    );
}

#[test]
fn one_bound_or_bounds_given_as_text_still_make_a_window() {
    let clause = "m.get_transaction_log.window";
    let from_only = vec![page(
        1,
        json!({"currency": "BTC", "start_timestamp": 1_003}),
        vec![2, 3],
        Value::Null,
    )];
    assert_eq!(
        verdict(&from_only, clause, TransportKind::Ws),
        Some(Verdict::Fail)
    );
    let until_only = vec![page(
        1,
        json!({"currency": "BTC", "end_timestamp": 1_002}),
        vec![2, 3],
        Value::Null,
    )];
    assert_eq!(
        verdict(&until_only, clause, TransportKind::Ws),
        Some(Verdict::Fail)
    );
    // A query string's parameters are text.
    let as_text = vec![page(
        1,
        json!({"currency": "BTC", "start_timestamp": "1002", "end_timestamp": "1003"}),
        vec![2, 4],
        Value::Null,
    )];
    assert_eq!(
        verdict(&as_text, clause, TransportKind::Ws),
        Some(Verdict::Fail)
    );
}

#[test]
fn a_long_walk_remembers_every_page_up_to_its_cap() {
    // Four full pages of 250: the fourth repeats an entry of the third, which a walk of
    // 750 entries (far below MAX_WALK_ENTRIES) still remembers.
    let clause = "m.get_transaction_log.continuation";
    let params = |continuation: Option<u64>| {
        let mut params = json!({"currency": "BTC", "count": 250});
        if let Some(continuation) = continuation {
            params["continuation"] = json!(continuation);
        }
        params
    };
    let walk = vec![
        page(1, params(None), (1..=250).collect(), json!(10)),
        page(2, params(Some(10)), (251..=500).collect(), json!(20)),
        page(3, params(Some(20)), (501..=750).collect(), json!(30)),
        page(4, params(Some(30)), (750..=999).collect(), Value::Null),
    ];
    assert_eq!(
        verdict(&walk, clause, TransportKind::Ws),
        Some(Verdict::Fail)
    );
}
