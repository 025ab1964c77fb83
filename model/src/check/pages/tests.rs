//! Each pagination rule shown to fail on a page that breaks it and to hold on one that
//! keeps it.

use serde_json::{Map, Value, json};

use super::*;

fn entries(ids: &[i64]) -> Vec<Value> {
    ids.iter()
        .map(|id| json!({"id": id, "timestamp": 1_000 + id}))
        .collect()
}

#[test]
fn count_bounds_are_the_spec_tables() {
    assert_eq!(
        CountBounds::of("private/get_transaction_log"),
        Some(CountBounds {
            min: 1,
            max: 250,
            default: 100
        })
    );
    assert_eq!(
        CountBounds::of("private/get_trigger_order_history"),
        Some(CountBounds {
            min: 1,
            max: 1000,
            default: 20
        })
    );
    assert_eq!(CountBounds::of("public/get_currencies"), None);
}

#[test]
fn a_page_keeps_to_its_count_or_the_default() {
    let bounds = CountBounds::of("private/get_transaction_log").expect("paged");
    assert_eq!(bounds.limit(Some(2)), Some(PageLimit::Count(2)));
    assert_eq!(bounds.limit(Some(1)), Some(PageLimit::Count(1)));
    assert_eq!(bounds.limit(Some(250)), Some(PageLimit::Count(250)));
    assert_eq!(bounds.limit(None), Some(PageLimit::Default(100)));
    // Outside the bounds SPEC.md does not say what the count is read as.
    assert_eq!(bounds.limit(Some(0)), None);
    assert_eq!(bounds.limit(Some(251)), None);

    let limit = PageLimit::Count(2);
    assert!(limit.allows(2));
    assert!(limit.allows(0));
    assert_eq!(limit.check(2), None);
    let broken = limit.check(3).expect("three entries for count 2");
    assert_eq!(broken.rule(), Rule::Count);
    assert_eq!(
        broken,
        Violation::OverCount {
            entries: 3,
            limit: PageLimit::Count(2)
        }
    );
    assert!(PageLimit::Default(100).allows(100));
    assert!(!PageLimit::Default(100).allows(101));
    assert_eq!(PageLimit::Default(100).entries(), 100);
}

#[test]
fn entries_lie_inside_the_window_both_ends_included() {
    let params: Map<String, Value> =
        serde_json::from_value(json!({"start_timestamp": 1_002, "end_timestamp": "1003"}))
            .expect("object");
    let window = TimeWindow::of_params(&params);
    assert_eq!(
        window,
        TimeWindow {
            start: Some(1_002),
            end: Some(1_003)
        }
    );
    assert!(!window.is_unbounded());
    assert!(window.contains(1_002));
    assert!(window.contains(1_003));
    assert!(!window.contains(1_001));
    assert!(!window.contains(1_004));
    assert_eq!(window.first_outside(&entries(&[2, 3]), "timestamp"), None);
    assert_eq!(
        window.first_outside(&entries(&[2, 4, 1]), "timestamp"),
        Some(1_004)
    );
    let open = TimeWindow::of_params(&Map::new());
    assert!(open.is_unbounded());
    assert!(open.contains(i64::MIN) && open.contains(i64::MAX));
    let from_only = TimeWindow {
        start: Some(5),
        end: None,
    };
    assert!(!from_only.is_unbounded());
    assert!(from_only.contains(i64::MAX) && !from_only.contains(4));
}

#[test]
fn an_entry_is_told_apart_by_its_key_or_as_a_whole() {
    let entry = json!({"id": 7, "amount": 1});
    assert_eq!(entry_identity(&entry, Some("id")), "7");
    assert_eq!(entry_identity(&entry, None), entry.to_string());
    assert_eq!(entry_identity(&entry, Some("other")), entry.to_string());
}

#[test]
fn no_further_page_is_an_absent_null_or_empty_continuation() {
    assert_eq!(offered_continuation(None), None);
    assert_eq!(offered_continuation(Some(&Value::Null)), None);
    assert_eq!(offered_continuation(Some(&json!(""))), None);
    assert_eq!(offered_continuation(Some(&json!(0))), Some(&json!(0)));
    assert_eq!(offered_continuation(Some(&json!("x"))), Some(&json!("x")));
}

#[test]
fn the_end_marker_is_the_spec_tables() {
    assert_eq!(
        EndMarker::of("private/get_transaction_log"),
        EndMarker::Null
    );
    assert_eq!(
        EndMarker::of("private/get_trigger_order_history"),
        EndMarker::NotStated
    );
    assert_eq!(EndMarker::of("public/get_currencies"), EndMarker::NotStated);
    assert!(!EndMarker::Null.continuation_may_end());
    assert!(EndMarker::NotStated.continuation_may_end());
}

#[test]
fn seen_entries_tell_earlier_pages_from_the_same_page() {
    let mut seen = SeenEntries::default();
    assert_eq!(seen.take_page(vec!["1".into(), "2".into()]), Vec::new());
    let repeats = seen.take_page(vec!["2".into(), "3".into(), "3".into(), "2".into()]);
    assert_eq!(
        repeats,
        vec![
            Repeat {
                index: 0,
                identity: "2".into(),
                earlier_page: true
            },
            Repeat {
                index: 2,
                identity: "3".into(),
                earlier_page: false
            },
            Repeat {
                index: 3,
                identity: "2".into(),
                earlier_page: true
            },
        ]
    );
    // The third page's 3 was remembered from the second.
    assert_eq!(seen.take_page(vec!["3".into()]).len(), 1);
}

#[test]
fn a_capped_memory_stops_remembering_a_page_past_its_cap() {
    let mut seen = SeenEntries::capped(3);
    assert!(seen.take_page(vec!["1".into(), "2".into()]).is_empty());
    // Two more would make four: checked, not remembered.
    assert!(seen.take_page(vec!["3".into(), "4".into()]).is_empty());
    assert!(seen.take_page(vec!["3".into()]).is_empty());
    // Exactly at the cap, remembered.
    assert_eq!(seen.take_page(vec!["1".into()]).len(), 1);
    let mut at_cap = SeenEntries::capped(2);
    assert!(at_cap.take_page(vec!["1".into(), "2".into()]).is_empty());
    assert_eq!(at_cap.take_page(vec!["2".into()]).len(), 1);
}

#[test]
fn a_walk_without_repeats_or_stray_entries_holds() {
    let mut walk = Walk::new(EndMarker::Null, Some("id"));
    assert_eq!(walk.following(), None);
    assert!(!walk.refusal_ends_walk());
    let window = TimeWindow {
        start: Some(1_001),
        end: Some(1_004),
    };
    let first = walk.page(&entries(&[1, 2]), Some((window, "timestamp")));
    assert_eq!(
        first,
        PageReport {
            violations: Vec::new(),
            ended: false
        }
    );
    assert_eq!(walk.next_page(Some(&json!(10))), Next::Page(json!(10)));
    assert_eq!(walk.following(), Some(&json!(10)));
    let second = walk.page(&entries(&[3, 4]), Some((window, "timestamp")));
    assert!(second.violations.is_empty());
    assert_eq!(walk.next_page(Some(&Value::Null)), Next::End);
    assert_eq!(walk.next_page(None), Next::End);
}

#[test]
fn a_walk_repeating_an_entry_breaks_the_continuation_rule() {
    let mut walk = Walk::new(EndMarker::Null, Some("id"));
    walk.page(&entries(&[1, 2]), None);
    walk.next_page(Some(&json!(10)));
    let report = walk.page(&entries(&[2, 3]), None);
    assert_eq!(
        report.violations,
        vec![Violation::Repeated(Repeat {
            index: 0,
            identity: "2".into(),
            earlier_page: true
        })]
    );
    assert_eq!(report.violations[0].rule(), Rule::Continuation);
    // Within one page too.
    let mut walk = Walk::new(EndMarker::Null, None);
    let same = json!({"id": 1});
    let report = walk.page(&[same.clone(), same.clone()], None);
    assert_eq!(
        report.violations,
        vec![Violation::Repeated(Repeat {
            index: 1,
            identity: same.to_string(),
            earlier_page: false
        })]
    );
}

#[test]
fn an_entry_outside_the_window_breaks_the_window_rule() {
    let mut walk = Walk::new(EndMarker::Null, Some("id"));
    let window = TimeWindow {
        start: Some(1_002),
        end: Some(1_003),
    };
    let report = walk.page(&entries(&[2, 3, 4]), Some((window, "timestamp")));
    assert_eq!(
        report.violations,
        vec![Violation::OutsideWindow {
            identity: "4".into(),
            timestamp: 1_004,
            window
        }]
    );
    assert_eq!(report.violations[0].rule(), Rule::Window);
    // Without a window, or on a member the entries lack, nothing is judged.
    assert!(walk.page(&entries(&[9]), None).violations.is_empty());
    assert!(
        walk.page(&entries(&[10]), Some((window, "created")))
            .violations
            .is_empty()
    );
}

#[test]
fn an_empty_page_after_a_continuation_breaks_a_stated_end_marker() {
    let mut walk = Walk::new(EndMarker::Null, None);
    walk.page(&entries(&[1]), None);
    walk.next_page(Some(&json!(10)));
    assert!(!walk.refusal_ends_walk());
    let report = walk.page(&[], None);
    assert_eq!(
        report,
        PageReport {
            violations: vec![Violation::EmptyAfterContinuation {
                continuation: json!(10)
            }],
            ended: false
        }
    );
    assert_eq!(report.violations[0].rule(), Rule::Continuation);
    // An empty first page is no broken promise.
    let mut fresh = Walk::new(EndMarker::Null, None);
    assert!(fresh.page(&[], None).violations.is_empty());
}

#[test]
fn an_empty_page_or_a_refusal_after_a_continuation_ends_a_walk_without_a_stated_marker() {
    let mut walk = Walk::new(EndMarker::NotStated, None);
    assert!(!walk.refusal_ends_walk());
    assert!(!walk.page(&[], None).ended);
    walk.next_page(Some(&json!("abc")));
    assert!(walk.refusal_ends_walk());
    assert_eq!(
        walk.page(&[], None),
        PageReport {
            violations: Vec::new(),
            ended: true
        }
    );
    assert!(!walk.page(&entries(&[1]), None).ended);
}

#[test]
fn a_continuation_handed_out_twice_is_a_loop() {
    let mut walk = Walk::new(EndMarker::NotStated, None);
    assert_eq!(walk.next_page(Some(&json!("a"))), Next::Page(json!("a")));
    assert_eq!(walk.next_page(Some(&json!("b"))), Next::Page(json!("b")));
    assert_eq!(walk.next_page(Some(&json!("a"))), Next::Again(json!("a")));
    assert_eq!(walk.following(), Some(&json!("a")));
    // An empty text offers no further page, on either marker.
    assert_eq!(walk.next_page(Some(&json!(""))), Next::End);
}
