//! One generated request sent (or walked) and its answer judged against the oracle's
//! prediction: what the fuzz run does for each request and the shrinker for each
//! candidate.

use super::FuzzRequest;
use super::assess;
use super::rules::{self, Prediction};
use super::send::{Budget, Sender};
use super::walk;
use harness_model::check::{Finding, Redactor, SchemaSet};

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
    session: &mut Option<crate::transport::ClientSession>,
    budget: Budget,
) -> Assessed {
    if request.walk {
        let (prediction, finding) =
            walk::walk(sender, schemas, redactor, request, id, session, budget).await;
        return Assessed {
            prediction,
            finding,
        };
    }
    match sender.send(request, id, session, budget).await {
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
        Err(setup) => Assessed {
            prediction: Prediction::result("auth.client_credentials.accepted"),
            finding: Some(Finding {
                message: redactor.text(&setup.finding.message),
                ..setup.finding
            }),
        },
    }
}
