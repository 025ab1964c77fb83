//! The health calls of a fuzz run: the first one, which must be answered for the run to
//! start, and one per transport at the end, which must be answered for the server to have
//! stayed up.

use serde_json::Map;

use harness_model::check::{Redactor, SchemaSet};
use harness_model::target_file::Target;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

use super::Failed;
use crate::assess;
use crate::execute::execute;
use crate::send::{Budget, Sender};
use crate::{FuzzConfig, FuzzError, FuzzRequest, RequestAuth};

/// The run's first call: a health request over HTTP, which must be answered.
pub(super) async fn reach(
    sender: &Sender,
    redactor: &Redactor,
    ws: &mut Option<harness_runner::transport::ClientSession>,
) -> Result<(), FuzzError> {
    let health = health_request(TransportKind::HttpQuery);
    match sender.send(&health, 0, ws, Budget::Wait).await {
        Ok(sent) if sent.exchange.response.is_some() => Ok(()),
        Ok(sent) => {
            let message = sent
                .exchange
                .failure
                .map_or_else(|| "no answer".to_owned(), |failure| failure.message);
            Err(FuzzError::Unreachable(redactor.text(&message)))
        }
        Err(_) => Err(FuzzError::Unreachable(
            "the health call could not be sent".to_owned(),
        )),
    }
}

/// The health call again over each transport at the end: the server must still answer
/// (a target that stopped answering is not asked again).
pub(super) async fn stays_up(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    config: &FuzzConfig,
    target: &Target,
    ws: &mut Option<harness_runner::transport::ClientSession>,
) -> Vec<Failed> {
    let mut failed = Vec::new();
    for transport in &config.transports {
        if *transport == TransportKind::Rest
            || (*transport == TransportKind::Ws && target.ws_url.is_none())
        {
            continue;
        }
        let request = health_request(*transport);
        let outcome = execute(
            sender,
            schemas,
            redactor,
            &request,
            u64::MAX >> 12,
            ws,
            Budget::Wait,
        )
        .await;
        if let Some(mut failure) = outcome
            .finding
            .clone()
            .filter(|finding| !assess::is_throttled(finding) && !assess::is_unanswered(finding))
        {
            failure.message = format!("the server did not stay up: {}", failure.message);
            failed.push(Failed {
                number: config.requests,
                input: request,
                run: outcome,
                failure,
            });
        }
    }
    failed
}

/// `public/get_currencies`, which every server answers with a result.
fn health_request(transport: TransportKind) -> FuzzRequest {
    FuzzRequest {
        transport,
        method: spec::CURRENCIES_METHOD.to_owned(),
        params: Map::new(),
        auth: RequestAuth::NONE,
        raw: None,
        why: "the health call".to_owned(),
        walk: false,
        class: None,
    }
}
