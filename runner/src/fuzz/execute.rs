//! One generated request sent (or walked) and its answer judged against the oracle's
//! prediction: what the fuzz run does for each request and the shrinker for each
//! candidate.

use super::FuzzRequest;
use super::assess;
use super::rules::{self, Prediction};
use super::send::{Budget, Sender};
use super::walk;
use crate::transport::TransportErrorKind;
use harness_model::check::{Finding, Redactor, SchemaSet, Verdict};

/// One request's verdict: the oracle's prediction and, unless the answer held, the
/// finding on it (see [`assess::assess`]).
#[derive(Clone, Debug)]
pub(crate) struct Assessed {
    pub(crate) prediction: Prediction,
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
        let (prediction, finding) =
            walk::walk(sender, schemas, redactor, request, id, ws, budget).await;
        return Assessed {
            prediction,
            finding,
        };
    }
    match sender.send(request, id, ws, budget).await {
        Ok(sent) => {
            let as_sent = FuzzRequest {
                params: sent.params.clone(),
                ..request.clone()
            };
            let prediction = rules::expect(&as_sent, &sent.knowledge);
            let finding = assess::assess(request, &prediction, &sent, schemas, redactor);
            Assessed {
                prediction,
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
                prediction: Prediction::result(clause),
                finding: Some(if unanswered {
                    Finding::new(Verdict::Error, vec![clause.to_owned()], message)
                } else {
                    super::prediction::broken(clause, message)
                }),
            }
        }
    }
}
