//! The shrink loop on plain values: what it keeps, where a pass goes on, and its budget
//! and deadline.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::*;
use crate::execute::Assessed;
use crate::prediction::{Prediction, broken};
use crate::{FuzzRequest, RequestAuth};
use harness_protocol::wire::TransportKind;

/// Each list without one of its items, the last first.
#[expect(clippy::ptr_arg, reason = "`smallest` hands its candidates a `&T`")]
fn without_one(items: &Vec<u32>) -> Vec<Vec<u32>> {
    (0..items.len())
        .rev()
        .map(|index| {
            let mut fewer = items.clone();
            fewer.remove(index);
            fewer
        })
        .collect()
}

fn run<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

fn limits(budget: usize) -> Limits {
    Limits {
        budget,
        deadline: Instant::now() + Duration::from_secs(60),
    }
}

/// Keeps a list while it holds both 3 and 7, each try costing `cost` requests; records
/// every list tried.
async fn keep_3_and_7(
    tried: &RefCell<Vec<Vec<u32>>>,
    list: Vec<u32>,
    cost: usize,
) -> Tried<Vec<u32>> {
    tried.borrow_mut().push(list.clone());
    let kept = (list.contains(&3) && list.contains(&7)).then_some(list);
    Tried { kept, sent: cost }
}

#[test]
fn the_smallest_keeps_only_what_the_failure_needs() {
    let tried = RefCell::new(Vec::new());
    let (shrunk, sent) = run(smallest(
        vec![1, 3, 5, 7, 9],
        without_one,
        async |list| keep_3_and_7(&tried, list, 2).await,
        limits(1_000),
    ));
    assert_eq!(shrunk, vec![3, 7]);
    assert_eq!(sent, 2 * tried.borrow().len());
    // A pass goes on at the same place among the candidates of what it kept: without 9
    // kept, without 7 not, without 5 kept, without 3 not, without 1 kept; a second pass
    // keeps nothing.
    assert_eq!(
        *tried.borrow(),
        [
            vec![1, 3, 5, 7],
            vec![1, 3, 5],
            vec![1, 3, 7],
            vec![1, 7],
            vec![3, 7],
            vec![3],
            vec![7],
        ]
    );
}

#[test]
fn nothing_smaller_failing_gives_the_start_back() {
    let tried = RefCell::new(Vec::new());
    let (shrunk, sent) = run(smallest(
        vec![3, 7],
        without_one,
        async |list| keep_3_and_7(&tried, list, 1).await,
        limits(1_000),
    ));
    assert_eq!((shrunk, sent), (vec![3, 7], 2));
}

#[test]
fn the_budget_and_the_deadline_stop_the_shrink() {
    let tried = RefCell::new(Vec::new());
    let (shrunk, sent) = run(smallest(
        vec![1, 3, 5, 7, 9],
        without_one,
        async |list| keep_3_and_7(&tried, list, 3).await,
        limits(5),
    ));
    // Two tries of 3 requests pass the budget of 5: the first kept (9 gone), the second
    // (without 7) not.
    assert_eq!((shrunk, sent), (vec![1, 3, 5, 7], 6));
    let past = Limits {
        budget: 1_000,
        deadline: Instant::now() - Duration::from_millis(1),
    };
    let tried = RefCell::new(Vec::new());
    let (shrunk, sent) = run(smallest(
        vec![1, 3, 7],
        without_one,
        async |list| keep_3_and_7(&tried, list, 1).await,
        past,
    ));
    assert_eq!((shrunk, sent), (vec![1, 3, 7], 0));
    assert!(tried.borrow().is_empty());
}

/// A failed request to `method` numbered `number`, breaking `clause`.
fn failed(number: usize, method: &str, clause: &str) -> Failed<FuzzRequest> {
    Failed {
        number,
        input: FuzzRequest {
            transport: TransportKind::HttpQuery,
            method: method.to_owned(),
            params: serde_json::Map::new(),
            auth: RequestAuth::NONE,
            raw: None,
            why: String::new(),
            walk: false,
            class: None,
        },
        run: Assessed {
            prediction: Prediction::result("env.response.result"),
            finding: None,
            answer: ("result", None),
        },
        failure: broken(clause, "m"),
    }
}

#[test]
fn failures_group_by_clause_and_method_first_kept_in_order_of_number() {
    let groups = group(vec![
        failed(7, "public/get_time", "env.response.id"),
        failed(2, "public/test", "env.response.id"),
        failed(9, "public/get_time", "env.response.id"),
        failed(4, "public/get_time", "env.response.jsonrpc"),
    ]);
    let seen: Vec<(usize, usize)> = groups
        .iter()
        .map(|(failed, occurrences)| (failed.number, *occurrences))
        .collect();
    assert_eq!(seen, [(2, 1), (4, 1), (7, 2)]);
}
