//! Which results a judged session reports.

use super::*;
use crate::judge::record::Answer;

fn record(transport: TransportKind) -> Record {
    Record {
        seq: 1,
        event: 1,
        transport,
        connection: "127.0.0.1:1".to_owned(),
        at_ms: 0,
        http_method: "GET".to_owned(),
        uri: "/api/v2/public/get_currencies".to_owned(),
        headers: Vec::new(),
        body: Vec::new(),
        answer: Some(Answer {
            at_ms: 0,
            event: 2,
            status: Some(200),
            body: Value::Null,
            refused: false,
        }),
    }
}

#[test]
fn only_the_transports_a_session_used_and_the_report_wants_are_reported() {
    let state = crate::serve::ServerState::new(&crate::serve::ServeConfig::loopback());
    let target = state.target("127.0.0.1:9".parse().unwrap());
    let catalog = Catalog::embedded().expect("the embedded catalog");
    let records = [record(TransportKind::HttpQuery), record(TransportKind::Ws)];
    let tally = Tally::default();
    let transports_of = |only: Option<&[TransportKind]>| {
        let judged = Judged {
            records: &records,
            tally: &tally,
            catalog: &catalog,
            target: &target,
            redactor: Redactor::default(),
            duration: Duration::ZERO,
            filter: None,
            transports: only,
        };
        let mut seen: Vec<TransportKind> = to_run_report(&judged)
            .results
            .iter()
            .map(|result| result.transport)
            .collect();
        seen.dedup();
        seen
    };
    let all = transports_of(None);
    assert!(!all.is_empty());
    assert!(
        all.iter()
            .all(|transport| [TransportKind::HttpQuery, TransportKind::Ws].contains(transport)),
        "{all:?}"
    );
    assert!(all.contains(&TransportKind::Ws) && all.contains(&TransportKind::HttpQuery));
    assert_eq!(
        transports_of(Some(&[TransportKind::Ws, TransportKind::HttpBody])),
        [TransportKind::Ws]
    );
}
