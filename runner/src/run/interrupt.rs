//! Stopping a run early and keeping what it learned: an [`Interrupt`] that a signal
//! handler, the run timeout or a caller fires once, and the result of an execution that
//! did not run because of it.
//!
//! An execution that did not run, or did not finish, says nothing about the server: it is
//! a [`Verdict::Skip`] whose message starts with [`NOT_RUN`], never a pass, and the run's
//! report carries the reason ([`harness_model::results::RunReport::interrupted`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use harness_model::case::Case;
use harness_model::check::Verdict;
use harness_model::results::CaseResult;
use harness_protocol::wire::TransportKind;

/// How long executions in flight may still take once a run is interrupted.
pub const GRACE: Duration = Duration::from_secs(2);

/// What the message of an execution that did not run starts with.
pub const NOT_RUN: &str = "not run: ";

/// A one-shot stop switch shared by whoever may stop a run and the run itself. The first
/// reason given wins; cloning shares the switch.
#[derive(Clone, Debug)]
pub struct Interrupt {
    reason: Arc<watch::Sender<Option<String>>>,
}

impl Default for Interrupt {
    fn default() -> Interrupt {
        Interrupt::new()
    }
}

impl Interrupt {
    /// A switch not yet fired.
    pub fn new() -> Interrupt {
        Interrupt {
            reason: Arc::new(watch::Sender::new(None)),
        }
    }

    /// Fires the switch with a reason such as `interrupted by SIGINT`; later calls keep the
    /// first reason. Returns whether this call fired it.
    pub fn fire(&self, reason: impl Into<String>) -> bool {
        let reason = reason.into();
        self.reason.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(reason);
            true
        })
    }

    /// The reason, once fired.
    pub fn reason(&self) -> Option<String> {
        self.reason.borrow().clone()
    }

    /// Resolves once the switch is fired, with the reason.
    pub async fn fired(&self) -> String {
        let mut receiver = self.reason.subscribe();
        let reason = receiver
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|reason| reason.clone());
        match reason {
            Some(reason) => reason,
            // The sender lives in `self`, so it cannot close while this waits.
            None => std::future::pending().await,
        }
    }
}

/// The result of an execution the interrupt kept from running (`started` false) or from
/// finishing.
pub(crate) fn not_run(
    case: &Case,
    transport: TransportKind,
    reason: &str,
    started: bool,
) -> CaseResult {
    let message = if started {
        format!("{NOT_RUN}{reason} before this execution finished")
    } else {
        format!("{NOT_RUN}{reason}")
    };
    CaseResult {
        case: case.id.clone(),
        title: case.title.clone(),
        path: case.path.display().to_string(),
        transport,
        verdict: Verdict::Skip,
        clauses: case.clauses.clone(),
        checks: case.clauses.clone(),
        message,
        findings: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        duration_ms: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_reason_wins_and_waiters_see_it() {
        let interrupt = Interrupt::new();
        assert_eq!(interrupt.reason(), None);
        let waiter = {
            let interrupt = interrupt.clone();
            tokio::spawn(async move { interrupt.fired().await })
        };
        assert!(interrupt.fire("interrupted by SIGINT"));
        assert!(!interrupt.fire("interrupted by SIGTERM"));
        assert_eq!(waiter.await.unwrap(), "interrupted by SIGINT");
        assert_eq!(interrupt.fired().await, "interrupted by SIGINT");
        assert_eq!(interrupt.reason().as_deref(), Some("interrupted by SIGINT"));
    }
}
