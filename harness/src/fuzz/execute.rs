//! One generated request sent (or walked) and its answer judged against the oracle's
//! expectation: what the fuzz run does for each request and the shrinker for each
//! candidate.

use super::FuzzRequest;
use super::assess::{self, Failure, Judgement};
use super::rules::{self, Expectation};
use super::send::Sender;
use super::walk;
use crate::check::{Redactor, SchemaSet};

/// One request's verdict.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) expectation: Expectation,
    pub(crate) judgement: Judgement,
}

/// Sends one generated request (or walks it) and judges the answer.
pub(crate) async fn execute(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    request: &FuzzRequest,
    id: u64,
    ws: &mut Option<crate::transport::WsSession>,
) -> Outcome {
    if request.walk {
        let (expectation, judgement) = walk::walk(sender, schemas, redactor, request, id, ws).await;
        return Outcome {
            expectation,
            judgement,
        };
    }
    match sender.send(request, id, ws).await {
        Ok(sent) => {
            let as_sent = FuzzRequest {
                params: sent.params.clone(),
                ..request.clone()
            };
            let expectation = rules::expect(&as_sent, &sent.knowledge);
            let judgement = assess::assess(request, &expectation, &sent, schemas, redactor);
            Outcome {
                expectation,
                judgement,
            }
        }
        Err(setup) => {
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
            Outcome {
                expectation: Expectation::Result("auth.client_credentials.accepted"),
                judgement: Judgement::Fail(Failure {
                    clause: "auth.client_credentials.accepted".to_owned(),
                    message: format!(
                        "the login this request needs failed: {}",
                        redactor.text(&seen)
                    ),
                }),
            }
        }
    }
}
