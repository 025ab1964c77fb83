//! Stopping a run early and keeping what it learned: an [`Interrupt`] that a signal
//! handler, the run timeout, the [`super::Breaker`] or the run's first call fires once with
//! an [`Interruption`] (why), and the result of an execution that did not run because of it.
//!
//! An execution that did not run, or did not finish, says nothing about the server: it is
//! a [`Verdict::Skip`] whose message starts with [`NOT_RUN`], never a pass, and the run's
//! report carries the reason ([`harness_model::results::RunReport::interrupted`]).

use std::fmt;
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

/// What the reason of a run the breaker stopped starts with, as a report keeps it.
const STOPPED_ANSWERING: &str = "target stopped answering: ";

/// Why a run was stopped early. Reports keep it as text, its `Display`: `interrupted by
/// SIGINT`, `the run timeout expired (600 s)`, `target stopped answering: 12 requests in a
/// row timed out after 5 s`, `target unreachable: ...`.
#[derive(Clone, Debug, PartialEq)]
pub enum Interruption {
    /// A signal (`SIGINT`, `SIGTERM`).
    Signal(&'static str),
    /// The run timeout expired.
    RunTimeout(Duration),
    /// The [`super::Breaker`]: `requests` in a row got no answer; `symptom` says how.
    StoppedAnswering {
        /// Requests in a row without an answer.
        requests: usize,
        /// What happened to them, in words (`timed out after 5 s`).
        symptom: String,
    },
    /// The run's first call could not connect; the failure's message, redacted.
    Unreachable(String),
}

impl Interruption {
    /// Whether no request in flight can still get an answer (the target stopped answering
    /// or cannot be reached): executions in flight are cut at once, without [`GRACE`].
    pub fn no_answer_left(&self) -> bool {
        matches!(
            self,
            Interruption::StoppedAnswering { .. } | Interruption::Unreachable(_)
        )
    }

    /// Whether the breaker stopped the run: the harness could not do its job (exit 3).
    pub fn is_stopped_answering(&self) -> bool {
        matches!(self, Interruption::StoppedAnswering { .. })
    }
}

impl fmt::Display for Interruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interruption::Signal(signal) => write!(f, "interrupted by {signal}"),
            Interruption::RunTimeout(timeout) => {
                write!(f, "the run timeout expired ({} s)", timeout.as_secs_f64())
            }
            Interruption::StoppedAnswering { requests, symptom } => {
                write!(
                    f,
                    "{STOPPED_ANSWERING}{requests} requests in a row {symptom}"
                )
            }
            Interruption::Unreachable(message) => write!(f, "target unreachable: {message}"),
        }
    }
}

/// What the reason of a run the harness could not carry out starts with (an unreachable
/// target, a client that could not be built), as its report keeps it: its reports say the
/// harness could not run, never that the target passed.
pub const COULD_NOT_RUN: &str = "the harness could not run (exit 3): ";

/// Whether a reason as a report keeps it is that of a run the harness could not carry
/// out ([`COULD_NOT_RUN`]).
pub fn could_not_run_reason(reason: &str) -> bool {
    reason.starts_with(COULD_NOT_RUN)
}

/// Whether a reason as a report keeps it (text, as [`Interruption`]'s `Display` writes it)
/// is the breaker's: for a report read back from its events, where the run's [`Interrupt`]
/// is gone. A live run asks [`Interruption::is_stopped_answering`].
pub fn stopped_answering(reason: &str) -> bool {
    reason.starts_with(STOPPED_ANSWERING)
}

/// A one-shot stop switch shared by whoever may stop a run and the run itself. The first
/// reason given wins; cloning shares the switch.
#[derive(Clone, Debug)]
pub struct Interrupt {
    reason: Arc<watch::Sender<Option<Interruption>>>,
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

    /// Fires the switch with a reason; later calls keep the first reason. Returns whether
    /// this call fired it.
    pub fn fire(&self, reason: Interruption) -> bool {
        self.reason.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(reason);
            true
        })
    }

    /// The reason, once fired.
    pub fn reason(&self) -> Option<Interruption> {
        self.reason.borrow().clone()
    }

    /// Resolves once the switch is fired, with the reason.
    pub async fn fired(&self) -> Interruption {
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
    reason: &Interruption,
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
        points: harness_model::case::reached_by_execution(case, transport)
            .into_iter()
            .collect(),
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
        assert!(interrupt.fire(Interruption::Signal("SIGINT")));
        assert!(!interrupt.fire(Interruption::Signal("SIGTERM")));
        assert_eq!(waiter.await.unwrap(), Interruption::Signal("SIGINT"));
        assert_eq!(interrupt.fired().await, Interruption::Signal("SIGINT"));
        assert_eq!(
            interrupt
                .reason()
                .map(|reason| reason.to_string())
                .as_deref(),
            Some("interrupted by SIGINT")
        );
    }
}
