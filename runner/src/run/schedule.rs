//! How a run schedules its executions around the target: executions that call a paced
//! method go first, in a lane of their own ([`PACED_LANE`] at once, outside the
//! `concurrency` slots), so they wait for the pacing budget while the others run; long
//! chains of requests go next; the run's first call finds a refused connection at once;
//! and executions in flight are cut at once when nothing can answer them any more.

use std::sync::Arc;

use super::{GRACE, Interrupt, Interruption, Shared};
use crate::transport::{self};
use harness_model::case::{Case, StepKind};
use harness_protocol::spec;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportKind;

/// Executions calling a paced method that run at once per account, outside the
/// `concurrency` slots: enough that the budget is taken while one of them runs its unpaced
/// steps.
pub const PACED_LANE: usize = 4;

/// Whether an execution of `case` is a long chain of requests: a pagination walk or a
/// rate probe, tens to hundreds of requests one after the other.
pub(super) fn is_long(case: &Case) -> bool {
    case.steps
        .iter()
        .any(|step| matches!(step.kind, StepKind::Walk(_) | StepKind::Probe(_)))
}

/// Whether an execution of `case` calls a paced method, and so waits for the pacing budget
/// (a rate probe spends it): a call, a raw request naming it, a walk or a probe.
pub(super) fn is_paced(case: &Case) -> bool {
    case.methods()
        .iter()
        .any(|method| harness_protocol::spec::is_paced(method))
}

/// The method of the run's first call: the first public JSON-RPC method SPEC.md shows
/// taking no parameters (4.9's `public/get_currencies`), which any target answers.
fn first_method() -> Option<&'static spec::Method> {
    spec::METHODS.iter().find(|method| {
        !method.private
            && method.interface == spec::Interface::JsonRpc
            && method.params_shown
            && method.params.is_empty()
    })
}

/// The run's first call, `public/get_currencies` over HTTP, sent as the executions start:
/// a target that refuses connections (or cannot be reached) stops the run at once, and the
/// failure is returned so that the run ends as unreachable, instead of every execution
/// finding out on its own. Any other outcome, silence included, only counts toward the
/// [`Breaker`].
pub(super) async fn first_call(
    shared: Arc<Shared>,
    interrupt: Interrupt,
) -> Option<TransportError> {
    let outgoing = transport::Outgoing {
        method: first_method()?.name.to_owned(),
        ..transport::Outgoing::default()
    };
    let exchange = shared
        .http
        .call(
            TransportKind::HttpQuery,
            &shared.target.base_url,
            0,
            &outgoing,
        )
        .await;
    shared
        .breaker
        .observe(TransportKind::HttpQuery, exchange.failure.as_ref());
    let failure = exchange
        .failure
        .filter(|failure| failure.kind == harness_protocol::wire::TransportErrorKind::Connect)?;
    // The failed request's URL may carry a client secret in its query string.
    let failure = TransportError {
        message: shared.redactor.text(&failure.message),
        ..failure
    };
    interrupt.fire(Interruption::Unreachable(failure.message.clone()));
    Some(failure)
}

/// Resolves when executions in flight are cut: [`GRACE`] after the interrupt fires, or at
/// once when the target stopped answering or cannot be reached (nothing in flight can
/// still get an answer).
pub(super) async fn cut(interrupt: &Interrupt) -> Interruption {
    let reason = interrupt.fired().await;
    if !reason.no_answer_left() {
        tokio::time::sleep(GRACE).await;
    }
    reason
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_call_asks_for_the_currencies() {
        assert_eq!(
            super::first_method().map(|method| method.name),
            Some("public/get_currencies")
        );
    }
}
