//! Pagination walks: a valid request to a paged method, followed by its `continuation`
//! from the first page to the last. Each page is judged like any answer; the walk adds the
//! rules of SPEC.md 4.7 and 4.8 that only a sequence shows: where SPEC.md states the last
//! page's marker (4.8: `null` when there is no further page) a continuation leads to a
//! non-empty page, while where it does not (4.7) an empty page is a legitimate end; no
//! entry comes twice, and the walk ends. The rules are `check::pages`'s; this module sends
//! the pages and words what breaks them.

use std::ops::ControlFlow;

use serde_json::Value;

use super::FuzzRequest;
use super::assess;
use super::rules::{self, Prediction};
use super::send::{Budget, Sender, Sent, SetupFailure};
use harness_model::check::pages::{self, EndMarker, Next, Violation};
use harness_model::check::{Finding, Outcome, Redactor, SchemaSet, short};
use harness_runner::transport::ClientSession;

/// Pages followed at most: the reference server's histories end well before this at the
/// smallest page size the generator uses.
const MAX_PAGES: usize = 400;

/// Walks `request` and judges the whole walk: `None` when it holds, else the finding on
/// the first page or rule that broke.
pub(crate) async fn walk(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    request: &FuzzRequest,
    id: u64,
    session: &mut Option<ClientSession>,
    first_budget: Budget,
) -> (Prediction, Option<Finding>) {
    let rule = rules::method(&request.method);
    let paging = rule.and_then(|rule| rule.paging);
    let (items, clause) = paging.map_or(("logs", "m.get_transaction_log.continuation"), |paging| {
        (paging.items, paging.clause)
    });
    let accepted = rule.map_or(clause, |rule| rule.clause);
    let prediction = Prediction::result(accepted);
    let fail = |message: String| Some(super::prediction::broken(clause, message));
    let mut paging_rules = pages::Walk::new(EndMarker::of(&request.method), None);
    for page in 0..MAX_PAGES {
        let mut page_request = FuzzRequest {
            walk: false,
            ..request.clone()
        };
        if let Some(cursor) = paging_rules.following() {
            page_request
                .params
                .insert("continuation".to_owned(), cursor.clone());
        }
        // The scheduler took the first page's budget at most; later pages wait for theirs.
        let budget = if page == 0 {
            first_budget
        } else {
            Budget::Wait
        };
        let sent = match sender.send(&page_request, id, session, budget).await {
            Ok(sent) => sent,
            // The login's own finding, as for a single request: an error, not a failure,
            // when the login got no answer.
            Err(setup) => return (prediction, Some(login_failed(setup, redactor))),
        };
        if page == 0
            && let Some(judged) =
                first_page_not_a_result(request, &page_request, &sent, schemas, redactor)
        {
            return judged;
        }
        // Where SPEC.md does not say how the last page is marked (4.7), the previous
        // continuation may have been the marker, and a server may refuse it.
        let refused = sent
            .exchange
            .json()
            .is_some_and(|answer| answer.get("result").is_none() && answer.get("error").is_some());
        if paging_rules.refusal_ends_walk() && refused {
            return (prediction, None);
        }
        if let Some(finding) = assess::assess(&page_request, &prediction, &sent, schemas, redactor)
        {
            return (prediction, Some(finding));
        }
        let result = sent
            .exchange
            .json()
            .and_then(|answer| answer.get("result"))
            .cloned()
            .unwrap_or(Value::Null);
        match judge_page(&mut paging_rules, page, &result, items, redactor) {
            ControlFlow::Continue(()) => {}
            ControlFlow::Break(None) => return (prediction, None),
            ControlFlow::Break(Some(message)) => return (prediction, fail(message)),
        }
    }
    (
        prediction,
        fail(format!("no last page after {MAX_PAGES} pages")),
    )
}

/// The finding of a page whose login failed: the login's own, as for a single request (an
/// error, not a failure, when the login got no answer).
fn login_failed(setup: SetupFailure, redactor: &Redactor) -> Finding {
    Finding {
        message: redactor.text(&format!(
            "the login a page needs failed: {}",
            setup.finding.message
        )),
        ..setup.finding
    }
}

/// The first page judged like any request where the oracle does not hold it to a result:
/// the walk holds its pages to a result only where the oracle holds the first page to one,
/// and a request the shrinker made smaller (an empty filter, a dropped parameter) may be
/// one SPEC.md does not make valid.
fn first_page_not_a_result(
    request: &FuzzRequest,
    page_request: &FuzzRequest,
    sent: &Sent,
    schemas: &SchemaSet,
    redactor: &Redactor,
) -> Option<(Prediction, Option<Finding>)> {
    let as_sent = FuzzRequest {
        params: sent.params.clone(),
        walk: false,
        ..request.clone()
    };
    let first = rules::expect(&as_sent, &sent.knowledge);
    (first.outcome != Outcome::Result).then(|| {
        let finding = assess::assess(page_request, &first, sent, schemas, redactor);
        (first, finding)
    })
}

/// The pagination rules of [`pages::Walk`] on one page's entries (its `items` member) and
/// its continuation: `Continue` to the next page, `Break(None)` at the walk's end, and
/// `Break(Some(message))` at the first broken rule, worded as the fuzzer's findings are.
/// A continuation handed out again is followed: [`MAX_PAGES`] bounds a looping walk.
fn judge_page(
    walk: &mut pages::Walk,
    page: usize,
    result: &Value,
    items: &str,
    redactor: &Redactor,
) -> ControlFlow<Option<String>> {
    let entries = result
        .get(items)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let report = walk.page(entries, None);
    if report.ended {
        return ControlFlow::Break(None);
    }
    let broken = report
        .violations
        .iter()
        .find_map(|violation| match violation {
            Violation::EmptyAfterContinuation { continuation } => Some(format!(
                "continuation {continuation} led to an empty page {page}"
            )),
            Violation::Repeated(repeat) => Some(format!(
                "page {page} repeats an entry: {}",
                short(&redactor.json(&entries[repeat.index]))
            )),
            Violation::OverCount { .. } | Violation::OutsideWindow { .. } => None,
        });
    if let Some(message) = broken {
        return ControlFlow::Break(Some(message));
    }
    match walk.next_page(result.get("continuation")) {
        Next::End => ControlFlow::Break(None),
        Next::Page(_) | Next::Again(_) => ControlFlow::Continue(()),
    }
}
