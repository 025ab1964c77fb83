use serde_json::json;

use super::*;
use crate::check::Verdict;
use crate::judge::paging::tests::{one_session, page};
use crate::judge::tally::assert_only_finding;

fn tally_of(records: &[Record]) -> Tally {
    let callers = one_session(records);
    let mut tally = Tally::default();
    check_pagination(records, &callers, &mut tally);
    tally
}

fn judged(records: &[Record]) -> Vec<String> {
    tally_of(records).describe()
}

fn verdict(records: &[Record]) -> Option<crate::check::Verdict> {
    tally_of(records)
        .get(CLAUSE, TransportKind::Ws)
        .and_then(|cell| cell.verdict())
}

/// The same page request with `name` set to `value` among its parameters.
fn with_param(mut record: Record, name: &str, value: Value) -> Record {
    let mut envelope: Value = serde_json::from_slice(&record.body).unwrap();
    envelope["params"][name] = value;
    record.body = envelope.to_string().into_bytes();
    record
}

/// The same page request answered with a pacing refusal instead of a page.
fn refused_for_pacing(mut record: Record) -> Record {
    let answer = record.answer.as_mut().unwrap();
    answer.body = json!({"jsonrpc": "2.0", "id": record.seq, "error": {"code": 10028, "message": "too_many_requests"}});
    record
}

#[test]
fn a_walk_followed_to_the_end_passes() {
    let walk = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(77), 5, Some(66)),
        page(3, 20, 5, Some(66), 2, None),
    ];
    assert_eq!(judged(&walk), Vec::<String>::new());
    assert_eq!(verdict(&walk), Some(crate::check::Verdict::Pass));
}

#[test]
fn a_fresh_end_timestamp_with_every_page_is_still_one_walk() {
    let walk: Vec<Record> = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 1_000, 5, Some(77), 5, Some(66)),
        page(3, 2_000, 5, Some(66), 2, None),
    ]
    .into_iter()
    .map(|record| {
        let at = record.at_ms;
        with_param(record, "end_timestamp", json!(1_750_000_000_000_u64 + at))
    })
    .collect();
    assert_eq!(judged(&walk), Vec::<String>::new());
}

#[test]
fn one_page_and_no_more_passes() {
    let walk = [page(1, 0, 5, None, 5, Some(77))];
    assert_eq!(judged(&walk), Vec::<String>::new());
    assert_eq!(verdict(&walk), Some(crate::check::Verdict::Pass));
}

#[test]
fn a_poller_reading_the_first_page_now_and_then_passes() {
    let polls = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 30_000, 5, None, 5, Some(77)),
        page(3, 60_000, 5, None, 5, Some(77)),
    ];
    assert_eq!(judged(&polls), Vec::<String>::new());
}

#[test]
fn reading_the_first_page_again_once_warns_and_three_times_in_a_row_fails() {
    let twice = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, None, 5, Some(77)),
    ];
    let findings = judged(&twice);
    assert_only_finding(
        &findings,
        Some(Verdict::Warn),
        &["read the first page again"],
    );
    let thrice = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, None, 5, Some(77)),
        page(3, 20, 5, None, 5, Some(77)),
    ];
    let findings = judged(&thrice);
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("fail") && f.contains("restart loop")),
        "{findings:?}"
    );
}

#[test]
fn a_single_short_page_warns() {
    let findings = judged(&[page(1, 0, 100, None, 5, Some(77))]);
    assert_only_finding(
        &findings,
        Some(Verdict::Warn),
        &["a short page does not mark the end"],
    );
}

#[test]
fn stopping_mid_walk_warns() {
    let findings = judged(&[
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(77), 5, Some(66)),
    ]);
    assert_only_finding(
        &findings,
        Some(Verdict::Warn),
        &["stopped after 1 followed pages"],
    );
}

#[test]
fn stopping_at_continuation_zero_after_following_pages_fails() {
    let findings = judged(&[
        page(1, 0, 5, None, 5, Some(1)),
        page(2, 10, 5, Some(1), 5, Some(0)),
    ]);
    assert!(
        findings[0].starts_with("fail") && findings[0].contains("0 is a further page"),
        "{findings:?}"
    );
    let walk = [
        page(1, 0, 5, None, 5, Some(1)),
        page(2, 10, 5, Some(1), 5, Some(0)),
        page(3, 20, 5, Some(0), 2, None),
    ];
    assert_eq!(judged(&walk), Vec::<String>::new());
}

#[test]
fn a_page_refused_for_pacing_counts_as_followed_whether_or_not_it_is_sent_again() {
    let given_up = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(77), 5, Some(66)),
        refused_for_pacing(page(3, 20, 5, Some(66), 0, None)),
    ];
    let tally = tally_of(&given_up);
    assert_eq!(tally.describe(), Vec::<String>::new());
    assert!(
        tally.describe_notes()[0].contains("error 10028 too_many_requests"),
        "{:?}",
        tally.describe_notes()
    );
    let resent = [
        page(1, 0, 5, None, 5, Some(77)),
        refused_for_pacing(page(2, 10, 5, Some(77), 0, None)),
        page(3, 1_010, 5, Some(77), 2, None),
    ];
    assert_eq!(judged(&resent), Vec::<String>::new());
}

#[test]
fn a_continuation_of_another_type_or_value_is_caught() {
    let as_string = with_param(page(2, 10, 5, None, 5, None), "continuation", json!("77"));
    let findings = judged(&[page(1, 0, 5, None, 5, Some(77)), as_string]);
    assert!(findings[0].contains("with its json type"), "{findings:?}");
    let findings = judged(&[
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(78), 5, None),
    ]);
    assert!(findings[0].contains("sent continuation 78"), "{findings:?}");
}

#[test]
fn a_first_page_with_another_count_is_a_new_read_not_a_re_read() {
    let reads = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 10, None, 10, Some(72)),
        page(3, 20, 1, None, 1, Some(81)),
    ];
    assert_eq!(judged(&reads), Vec::<String>::new());
    let restarts_with_fresh_end: Vec<Record> = (1..=3)
        .map(|seq| {
            with_param(
                page(seq, seq * 10, 5, None, 5, Some(77)),
                "end_timestamp",
                json!(1_750_000_000_000_u64 + seq),
            )
        })
        .collect();
    assert!(
        judged(&restarts_with_fresh_end)
            .iter()
            .any(|f| f.contains("restart loop"))
    );
}

#[test]
fn walks_of_two_currencies_are_apart() {
    let eth = |record: Record| with_param(record, "currency", json!("ETH"));
    let interleaved = [
        page(1, 0, 5, None, 5, Some(77)),
        eth(page(2, 10, 5, None, 5, Some(55))),
        page(3, 20, 5, Some(77), 2, None),
        eth(page(4, 30, 5, Some(55), 2, None)),
    ];
    assert_eq!(judged(&interleaved), Vec::<String>::new());
}
