//! Unit tests of the judge's paging checks, with record builders the walk tests share.

use serde_json::json;

use super::*;
use crate::judge::sessions::Caller;
use harness_protocol::wire::TransportKind;

/// A transaction-log page request over WebSocket, answered with `len` entries and `next`
/// as continuation.
pub(crate) fn page(
    seq: u64,
    at_ms: u64,
    count: u64,
    continuation: Option<u64>,
    len: u64,
    next: Option<u64>,
) -> Record {
    let mut params = json!({"currency": "BTC", "count": count});
    if let Some(continuation) = continuation {
        params["continuation"] = json!(continuation);
    }
    let body = json!({"jsonrpc": "2.0", "id": seq, "method": "private/get_transaction_log", "params": params});
    let logs: Vec<Value> = (0..len)
        .map(|index| json!({"id": seq * 100 + index, "type": "trade"}))
        .collect();
    Record {
        event: seq * 2,
        at_ms,
        body: body.to_string().into_bytes(),
        ..Record::sample(seq, TransportKind::Ws)
    }
    .answered(json!({"jsonrpc": "2.0", "id": seq, "result": {"logs": logs, "continuation": next}}))
}

/// One caller, the same client on one session, for every record.
pub(crate) fn one_session(records: &[Record]) -> Vec<Caller> {
    records
        .iter()
        .map(|_| Caller {
            key: "session#0".to_owned(),
            client: Some("c".to_owned()),
            account: Some("c".to_owned()),
        })
        .collect()
}

fn judged(records: &[Record]) -> Vec<String> {
    let mut tally = Tally::default();
    check_log_type_tolerance(records, &mut tally);
    tally.describe()
}

#[test]
fn going_silent_after_unknown_types_is_caught_and_carrying_on_is_not() {
    let mut first = page(1, 0, 5, None, 5, Some(77));
    first.answer.as_mut().unwrap().body["result"]["logs"][0]["type"] = json!("airdrop");
    let findings = judged(std::slice::from_ref(&first));
    assert!(
        findings
            .iter()
            .any(|f| f.contains("client.log_type.tolerant") && f.contains("airdrop")),
        "{findings:?}"
    );
    let findings = judged(&[first.clone(), page(2, 10, 5, Some(77), 2, None)]);
    assert_eq!(findings, Vec::<String>::new());
    // Only a request after the answer shows the client alive: one before it does not.
    let mut late = page(2, 10, 5, None, 5, Some(77));
    late.answer.as_mut().unwrap().body["result"]["logs"][0]["type"] = json!("airdrop");
    let findings = judged(&[page(1, 0, 5, None, 2, None), late]);
    assert!(
        findings.iter().any(|f| f.contains("went silent")),
        "{findings:?}"
    );
    // Stopping at continuation 0 is the walk's failure, not this clause's.
    first.answer.as_mut().unwrap().body["result"]["continuation"] = json!(0);
    assert_eq!(judged(&[first]), Vec::<String>::new());
}

#[test]
fn count_outside_its_bounds_fails() {
    let record = page(1, 0, 251, None, 0, None);
    let mut tally = Tally::default();
    check_count(&record, &record.call(), &mut tally);
    assert_eq!(tally.failed_clauses(), vec!["client.count.bounds"]);
}
