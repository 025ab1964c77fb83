//! The run-wide "consecutive no-answer" breaker: a target that stops answering ends the
//! run in seconds, with the truth, instead of every request waiting out its timeout.
//!
//! Every request of a run (the runner's executions, the fuzzer's workers and sequences)
//! reports whether an answer came. An answer resets the count; a request left without one
//! (timed out, connection refused, connection reset or closed) adds to it. After
//! [`Breaker::limit`] in a row the breaker fires the run's [`Interrupt`] with
//! [`Interruption::StoppedAnswering`], which names the symptom ("target stopped answering: 12
//! requests in a row timed out after 5 s"): the run then stops as for Ctrl-C, marks what
//! is left "not run" and writes its reports, and the command exits 3 (the harness could not
//! do its job), not 4.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use super::{Interrupt, Interruption};
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;

/// Requests in a row without an answer that end a run by default: more than one wave of
/// a small concurrency, so one unlucky moment does not end a run, and few enough that a
/// silent target ends the run within about two request timeouts at the default
/// concurrency.
pub const DEFAULT_LIMIT: usize = 12;

/// Counts requests in a row without an answer and stops the run at the limit.
#[derive(Debug)]
pub struct Breaker {
    limit: usize,
    request_timeout: Duration,
    interrupt: Interrupt,
    streak: Mutex<Streak>,
}

/// The requests without an answer since the last answer, and how they ended.
#[derive(Debug, Default)]
struct Streak {
    count: usize,
    kinds: Vec<TransportErrorKind>,
}

impl Breaker {
    /// A breaker that fires `interrupt` after `limit` requests in a row got no answer
    /// (0: never); `request_timeout` is named in the reason.
    pub fn new(limit: usize, request_timeout: Duration, interrupt: Interrupt) -> Breaker {
        Breaker {
            limit,
            request_timeout,
            interrupt,
            streak: Mutex::new(Streak::default()),
        }
    }

    /// The number of requests in a row without an answer that stops the run (0: never).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// An answer came: the count starts again.
    pub fn answered(&self) {
        let mut streak = self.streak.lock().unwrap_or_else(PoisonError::into_inner);
        streak.count = 0;
        streak.kinds.clear();
    }

    /// Counts what came of one request: `None` when an answer came, else why none did.
    /// A failure that is not the target's silence (an answer too large, a request that
    /// could not be built) neither counts nor resets.
    pub fn observe(&self, failure: Option<&TransportError>) {
        match failure {
            None => self.answered(),
            Some(failure) if failure.kind.no_answer().is_some() => {
                self.unanswered(failure.kind);
            }
            Some(_) => {}
        }
    }

    /// A request got no answer: counts it, and fires the interrupt at the limit.
    pub fn unanswered(&self, kind: TransportErrorKind) {
        if self.limit == 0 {
            return;
        }
        let mut streak = self.streak.lock().unwrap_or_else(PoisonError::into_inner);
        streak.count += 1;
        if !streak.kinds.contains(&kind) {
            streak.kinds.push(kind);
        }
        if streak.count >= self.limit {
            let reason = Interruption::StoppedAnswering {
                requests: streak.count,
                symptom: self.symptom(&streak.kinds),
            };
            drop(streak);
            self.interrupt.fire(reason);
        }
    }

    /// What happened to the requests of a streak, in words.
    fn symptom(&self, kinds: &[TransportErrorKind]) -> String {
        let one = |kind: TransportErrorKind| match kind {
            TransportErrorKind::Timeout => format!(
                "timed out after {}",
                seconds(self.request_timeout.as_secs_f64())
            ),
            TransportErrorKind::Connect => {
                "could not connect (refused, unreachable, or a failed TLS handshake)".to_owned()
            }
            _ => "were closed or reset without an answer".to_owned(),
        };
        match kinds {
            [kind] => one(*kind),
            kinds => {
                let all: Vec<String> = kinds.iter().map(|kind| one(*kind)).collect();
                format!("got no answer ({})", all.join("; "))
            }
        }
    }
}

/// `5 s`, `0.4 s`.
fn seconds(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0} s")
    } else {
        format!("{value} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(limit: usize) -> (Breaker, Interrupt) {
        let interrupt = Interrupt::new();
        (
            Breaker::new(limit, Duration::from_secs(5), interrupt.clone()),
            interrupt,
        )
    }

    fn failure(kind: TransportErrorKind) -> TransportError {
        TransportError::new(kind, "x")
    }

    #[test]
    fn the_limit_in_a_row_fires_with_the_symptom() {
        let (breaker, interrupt) = breaker(3);
        let timeout = failure(TransportErrorKind::Timeout);
        breaker.observe(Some(&timeout));
        breaker.observe(Some(&timeout));
        assert_eq!(interrupt.reason(), None);
        breaker.observe(Some(&timeout));
        let reason = interrupt.reason().unwrap();
        assert_eq!(
            reason.to_string(),
            "target stopped answering: 3 requests in a row timed out after 5 s"
        );
        assert!(reason.is_stopped_answering());
        assert!(super::super::interrupt::stopped_answering(
            &reason.to_string()
        ));
    }

    #[test]
    fn an_answer_starts_the_count_again() {
        let (breaker, interrupt) = breaker(2);
        breaker.observe(Some(&failure(TransportErrorKind::Closed)));
        breaker.observe(None);
        breaker.observe(Some(&failure(TransportErrorKind::Connect)));
        assert_eq!(interrupt.reason(), None);
        breaker.observe(Some(&failure(TransportErrorKind::TooLarge)));
        assert_eq!(interrupt.reason(), None);
        breaker.observe(Some(&failure(TransportErrorKind::Timeout)));
        let reason = interrupt.reason().unwrap().to_string();
        assert!(reason.contains("could not connect"), "{reason}");
        assert!(reason.contains("timed out after 5 s"), "{reason}");
    }

    #[test]
    fn a_limit_of_zero_never_fires() {
        let (breaker, interrupt) = breaker(0);
        for _ in 0..100 {
            breaker.observe(Some(&failure(TransportErrorKind::Timeout)));
        }
        assert_eq!(interrupt.reason(), None);
    }
}
