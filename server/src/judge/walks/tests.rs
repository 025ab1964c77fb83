//! Unit tests of the judge's walk checks: walks read to the end or stopped where a reader may, and restarts, loops and unknown continuations.

use serde_json::json;

use super::*;
use crate::judge::paging::tests::{one_session, page};
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;

fn tally_of(records: &[Record]) -> Tally {
    let callers = one_session(records);
    let mut tally = Tally::default();
    check_pagination(records, &callers, &mut tally);
    tally
}

fn judged(records: &[Record]) -> Vec<String> {
    tally_of(records).describe()
}

fn verdict(records: &[Record]) -> Option<harness_model::check::Verdict> {
    tally_of(records)
        .get(CLAUSE, TransportKind::Ws)
        .and_then(|cell| cell.verdict())
}

/// A walk that follows every continuation it is handed: one page of `count` 5 per
/// `(entries served, continuation handed out)`, 10 ms apart, each asking for the
/// continuation of the page before.
fn followed(pages: &[(u64, Option<u64>)]) -> Vec<Record> {
    let mut asked = None;
    let mut walk = Vec::new();
    for (seq, (served, next)) in (1..).zip(pages) {
        walk.push(page(seq, (seq - 1) * 10, 5, asked, *served, *next));
        asked = *next;
    }
    walk
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
fn walks_read_to_the_end_or_stopped_where_a_reader_may_stop_pass() {
    let passing: [(&str, Vec<Record>); 6] = [
        (
            "followed to the end",
            followed(&[(5, Some(77)), (5, Some(66)), (2, None)]),
        ),
        ("one page and no more", followed(&[(5, Some(77))])),
        (
            "one page and no more, its continuation 0",
            followed(&[(5, Some(0))]),
        ),
        (
            "a poller reading the first page now and then",
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                page(2, 30_000, 5, None, 5, Some(77)),
                page(3, 60_000, 5, None, 5, Some(77)),
            ],
        ),
        (
            "followed past a continuation of 0",
            followed(&[(5, Some(1)), (5, Some(0)), (2, None)]),
        ),
        (
            "first pages of other counts are new reads",
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                page(2, 10, 10, None, 10, Some(72)),
                page(3, 20, 1, None, 1, Some(81)),
            ],
        ),
    ];
    for (name, walk) in passing {
        assert_eq!(judged(&walk), Vec::<String>::new(), "{name}");
        assert_eq!(verdict(&walk), Some(Verdict::Pass), "{name}");
    }
}

#[test]
fn early_stops_that_spec_md_allows_but_that_look_wrong_warn() {
    let warned: [(Vec<Record>, &str); 3] = [
        (
            vec![page(1, 0, 100, None, 5, Some(77))],
            "a short page does not mark the end",
        ),
        (
            followed(&[(5, Some(77)), (5, Some(66))]),
            "stopped after 1 followed pages",
        ),
        (
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                page(2, 10, 5, None, 5, Some(77)),
            ],
            "read the first page again",
        ),
    ];
    for (walk, warning) in warned {
        assert_only_finding(&judged(&walk), Some(Verdict::Warn), &[warning]);
    }
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
fn a_restart_loop_a_falsy_cursor_taken_for_the_end_or_a_continuation_never_handed_out_fails() {
    let restarts_with_fresh_end: Vec<Record> = (1..=3)
        .map(|seq| {
            with_param(
                page(seq, seq * 10, 5, None, 5, Some(77)),
                "end_timestamp",
                json!(1_750_000_000_000_u64 + seq),
            )
        })
        .collect();
    let failing: [(Vec<Record>, &str); 5] = [
        (
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                page(2, 10, 5, None, 5, Some(77)),
                page(3, 20, 5, None, 5, Some(77)),
            ],
            "restart loop",
        ),
        (restarts_with_fresh_end, "restart loop"),
        (
            followed(&[(5, Some(1)), (5, Some(0))]),
            "0 is a further page",
        ),
        (
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                with_param(page(2, 10, 5, None, 5, None), "continuation", json!("77")),
            ],
            "with its json type",
        ),
        (
            vec![
                page(1, 0, 5, None, 5, Some(77)),
                page(2, 10, 5, Some(78), 5, None),
            ],
            "sent continuation 78",
        ),
    ];
    for (walk, words) in failing {
        let findings = judged(&walk);
        assert!(
            findings
                .iter()
                .any(|finding| finding.starts_with("fail") && finding.contains(words)),
            "{findings:?}"
        );
    }
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

#[test]
fn walks_of_the_same_reads_side_by_side_follow_each_others_continuations() {
    // Two tasks read the same first page at once, both are given 77, and both follow it;
    // one of them is then handed 66, which the other follows.
    let side_by_side = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 5, 5, None, 5, Some(77)),
        page(3, 10, 5, Some(77), 5, Some(66)),
        page(4, 15, 5, Some(77), 5, Some(66)),
        page(5, 20, 5, Some(66), 2, None),
        page(6, 25, 5, Some(66), 2, None),
    ];
    let findings = judged(&side_by_side);
    assert!(
        findings.iter().all(|finding| !finding.starts_with("fail")),
        "{findings:?}"
    );
    // Three first pages at once, whose continuation is then followed: no restart loop.
    let three_at_once = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 5, 5, None, 5, Some(77)),
        page(3, 10, 5, None, 5, Some(77)),
        page(4, 15, 5, Some(77), 2, None),
    ];
    let findings = judged(&three_at_once);
    assert!(
        findings.iter().all(|finding| !finding.starts_with("fail")),
        "{findings:?}"
    );
    // A continuation followed as often as it was handed out is spent: sent again, it loops.
    let spent = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(77), 5, Some(66)),
        page(3, 20, 5, Some(77), 5, Some(66)),
    ];
    assert!(
        judged(&spent)
            .iter()
            .any(|finding| finding.starts_with("fail") && finding.contains("already followed")),
        "{:?}",
        judged(&spent)
    );
}

#[test]
fn a_walk_goes_on_in_another_session_of_the_same_client_but_not_of_another_client() {
    let walk = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 10, 5, Some(77), 2, None),
    ];
    let caller = |session: &str, client: &str| Caller {
        key: session.to_owned(),
        client: Some(client.to_owned()),
        account: Some(client.to_owned()),
    };
    for (second, fails) in [
        (caller("session#2", "bot"), false),
        (caller("session#2", "other"), true),
    ] {
        let mut tally = Tally::default();
        check_pagination(&walk, &[caller("session#1", "bot"), second], &mut tally);
        let findings = tally.describe();
        assert_eq!(
            findings.iter().any(|finding| finding.starts_with("fail")),
            fails,
            "{findings:?}"
        );
    }
}

#[test]
fn a_walk_that_took_the_other_walks_continuation_and_stopped_at_zero_fails() {
    // Tasks of the same reads: two first pages are both handed 77, one follows it, a third
    // first page starts over, and then the second 77 is followed (a continuation handed
    // out beside the walk's own, which it owes), is handed 0, and the reads stop there.
    // That page counts as followed, so a stop at the falsy 0 is a stop before a further page.
    let crossed = [
        page(1, 0, 5, None, 5, Some(77)),
        page(2, 5, 5, None, 5, Some(77)),
        page(3, 10, 5, Some(77), 5, Some(66)),
        page(4, 15, 5, None, 5, Some(88)),
        page(5, 20, 5, Some(77), 5, Some(0)),
    ];
    let findings = judged(&crossed);
    assert!(
        findings
            .iter()
            .any(|finding| finding.starts_with("fail") && finding.contains("0 is a further page")),
        "{findings:?}"
    );
}
