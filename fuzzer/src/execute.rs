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
    /// What kind of answer came, and its error code: the request's response class
    /// (`coverage.rs`) with the clause of its finding or prediction.
    pub(crate) answer: (&'static str, Option<i64>),
}

impl Assessed {
    /// The response class the request reached (`coverage::class_of`).
    pub(crate) fn class(&self, request: &FuzzRequest) -> String {
        let clause = self
            .finding
            .as_ref()
            .and_then(|finding| finding.clauses.first())
            .map_or(self.prediction.clause, String::as_str);
        super::coverage::class_of(request, self.answer.0, self.answer.1, clause)
    }
}

/// Sends one generated request (or walks it) and judges the answer; `budget` says whether
/// the scheduler already took its pacing budget (for a walk: its first page's).
pub(crate) async fn execute(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    request: &FuzzRequest,
    id: u64,
    session: &mut Option<harness_runner::transport::ClientSession>,
    budget: Budget,
) -> Assessed {
    if request.walk {
        let (prediction, finding) =
            walk::walk(sender, schemas, redactor, request, id, session, budget).await;
        return Assessed {
            prediction,
            finding,
            answer: ("walk", None),
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
                answer: assess::answer_kind(&sent),
            }
        }
        Err(setup) => Assessed {
            prediction: Prediction::result("auth.client_credentials.accepted"),
            finding: Some(Finding {
                message: redactor.text(&setup.finding.message),
                ..setup.finding
            }),
            answer: ("login-failed", None),
        },
    }
}
