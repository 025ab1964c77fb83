//! Pagination walks: a valid request to a paged method, followed by its `continuation`
//! from the first page to the last. Each page is judged like any answer; the walk adds the
//! rules of SPEC.md 4.7 and 4.8 that only a sequence shows: where SPEC.md states the last
//! page's marker (4.8: `null` when there is no further page) a continuation leads to a
//! non-empty page, while where it does not (4.7) an empty page is a legitimate end; no
//! entry comes twice, and the walk ends.

use std::collections::HashSet;

use serde_json::Value;

use super::FuzzRequest;
use super::assess;
use super::rules::{self, Prediction};
use super::send::{Budget, Sender};
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
    let null_at_end = paging.is_some_and(|paging| paging.null_at_end);
    let accepted = rule.map_or(clause, |rule| rule.clause);
    let prediction = Prediction::result(accepted);
    let fail = |message: String| Some(super::prediction::broken(clause, message));
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<Value> = None;
    for page in 0..MAX_PAGES {
        let mut page_request = FuzzRequest {
            walk: false,
            ..request.clone()
        };
        if let Some(cursor) = &cursor {
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
            Err(setup) => {
                let finding = Finding {
                    message: redactor.text(&format!(
                        "the login a page needs failed: {}",
                        setup.finding.message
                    )),
                    ..setup.finding
                };
                return (prediction, Some(finding));
            }
        };
        if page == 0 {
            // The walk holds its pages to a result only where the oracle holds the first
            // page to one: a request the shrinker made smaller (an empty filter, a dropped
            // parameter) may be one SPEC.md does not make valid, judged like any request.
            let as_sent = FuzzRequest {
                params: sent.params.clone(),
                walk: false,
                ..request.clone()
            };
            let first = rules::expect(&as_sent, &sent.knowledge);
            if first.outcome != Outcome::Result {
                let finding = assess::assess(&page_request, &first, &sent, schemas, redactor);
                return (first, finding);
            }
        }
        // Where SPEC.md does not say how the last page is marked (4.7), the previous
        // continuation may have been the marker, and a server may refuse it.
        let refused = sent
            .exchange
            .json()
            .is_some_and(|answer| answer.get("result").is_none() && answer.get("error").is_some());
        if page > 0 && !null_at_end && refused {
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
        let entries = result
            .get(items)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        // An empty page after a continuation is a broken end marker only where SPEC.md
        // states the marker (4.8: `null`); where it does not (4.7), the empty page ends.
        if cursor.is_some() && entries.is_empty() && !null_at_end {
            return (prediction, None);
        }
        if let Some(cursor) = &cursor
            && entries.is_empty()
        {
            return (
                prediction,
                fail(format!("continuation {cursor} led to an empty page {page}")),
            );
        }
        for entry in entries {
            if !seen.insert(entry.to_string()) {
                let shown = short(&redactor.json(entry));
                return (
                    prediction,
                    fail(format!("page {page} repeats an entry: {shown}")),
                );
            }
        }
        match result.get("continuation") {
            None | Some(Value::Null) => return (prediction, None),
            Some(Value::String(text)) if text.is_empty() && !null_at_end => {
                return (prediction, None);
            }
            Some(next) => cursor = Some(next.clone()),
        }
    }
    (
        prediction,
        fail(format!("no last page after {MAX_PAGES} pages")),
    )
}
