//! One generated request sent (or walked) and its answer judged against the oracle's
//! expectation: what the fuzz run does for each request and the shrinker for each
//! candidate.

use super::FuzzRequest;
use super::assess;
use super::rules::{self, Expectation};
use super::send::{Budget, Sender};
use super::walk;
use crate::transport::TransportErrorKind;
use harness_model::check::{Finding, Redactor, SchemaSet, Verdict};

/// One request's verdict: the oracle's expectation and, unless the answer held, the
/// finding on it (see [`assess::assess`]).
#[derive(Clone, Debug)]
pub(crate) struct Assessed {
    pub(crate) expectation: Expectation,
    pub(crate) finding: Option<Finding>,
}

/// Sends one generated request (or walks it) and judges the answer; `budget` says whether
/// the scheduler already took its pacing budget (for a walk: its first page's).
pub(crate) async fn execute(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    request: &FuzzRequest,
    id: u64,
    ws: &mut Option<crate::transport::WsSession>,
    budget: Budget,
) -> Assessed {
    if request.walk {
        let (expectation, finding) =
            walk::walk(sender, schemas, redactor, request, id, ws, budget).await;
        return Assessed {
            expectation,
            finding,
        };
    }
    match sender.send(request, id, ws, budget).await {
        Ok(sent) => {
            let as_sent = FuzzRequest {
                params: sent.params.clone(),
                ..request.clone()
            };
            let expectation = rules::expect(&as_sent, &sent.knowledge);
            let finding = assess::assess(request, &expectation, &sent, schemas, redactor);
            Assessed {
                expectation,
                finding,
            }
        }
        Err(setup) => {
            // The login got no answer at all: nothing to judge, an error of the harness.
            let unanswered = setup.exchange.response.is_none()
                && setup.exchange.failure.as_ref().is_some_and(|failure| {
                    matches!(
                        failure.kind,
                        TransportErrorKind::Timeout | TransportErrorKind::Connect
                    )
                });
            let seen = setup.exchange.response.map_or_else(
                || {
                    setup
                        .exchange
                        .failure
                        .map(|failure| failure.message)
                        .unwrap_or_default()
                },
                |received| received.body.chars().take(160).collect(),
            );
            let message = format!(
                "the login this request needs failed: {}",
                redactor.text(&seen)
            );
            let clause = "auth.client_credentials.accepted";
            Assessed {
                expectation: Expectation::Result(clause),
                finding: Some(if unanswered {
                    Finding::new(Verdict::Error, vec![clause.to_owned()], message)
                } else {
                    Finding::fail(clause, message)
                }),
            }
        }
    }
}
