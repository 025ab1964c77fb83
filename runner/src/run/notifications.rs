//! The judgement of `expect.notifications`: after a step that subscribes has been answered
//! over WebSocket, its connection must be pushed `at_least` notifications (a `method` and
//! no `id`) within `within_ms` (SPEC.md 6: "after subscribing, the server pushes
//! notifications to the client without a request").
//!
//! SPEC.md shows no channel, so how often one publishes is the target's: silence alone is
//! no finding. A case names a `witness`, a connection of its own that subscribed to the
//! same channel before; the frames the witness already holds are set aside, and silence
//! fails only when the witness was pushed something in the same window, so the channel was
//! busy while this subscriber heard nothing. When both heard nothing the channel was quiet,
//! and the execution is skipped with the reason.

use std::time::{Duration, Instant};

use harness_model::case::{ExpectedNotifications, Step};

use super::exec::{Execution, Stop};
use crate::transport::WsSession;

impl Execution<'_> {
    /// Waits for the notifications `expected` asks of the step's connection, and judges the
    /// silence, if any, against the witness.
    pub(super) async fn await_notifications(
        &mut self,
        step: &Step,
        expected: &ExpectedNotifications,
    ) -> Result<(), Stop> {
        let start = Instant::now();
        let deadline = start + Duration::from_millis(expected.within_ms);
        // What the witness was pushed before this subscription was answered shows nothing.
        let witness_before = match expected.witness.as_deref() {
            Some(name) => Some(self.witness(step, name)?.listen(usize::MAX, start).await),
            None => None,
        };
        let subscriber = self.session.ws_mut().ok_or_else(|| {
            Stop::Error(format!(
                "the step at line {} expects notifications but has no WebSocket open",
                step.line
            ))
        })?;
        if subscriber.listen(expected.at_least, deadline).await >= expected.at_least {
            return Ok(());
        }
        let pushed = subscriber.notifications;
        let witness_pushed = match (expected.witness.as_deref(), witness_before) {
            (Some(name), Some(before)) => {
                let now = Instant::now();
                self.witness(step, name)?.listen(usize::MAX, now).await - before
            }
            _ => 0,
        };
        if witness_pushed == 0 {
            let witness = if expected.witness.is_some() {
                ", nor was the connection that subscribed to it before"
            } else {
                ""
            };
            return Err(Stop::Skip(format!(
                "the channel was quiet: the connection of the step at line {} was pushed {pushed} of the {} notifications asked within {} ms{witness} (SPEC.md 6 shows no channel, so not how often one publishes)",
                step.line, expected.at_least, expected.within_ms
            )));
        }
        let clauses = self.case.step_clauses(step);
        self.record(
            clauses,
            format!(
                "after subscribing (the step at line {}), the connection was pushed {pushed} notifications within {} ms, fewer than {}, while the connection that subscribed to the same channel before it was pushed {witness_pushed} in the same time",
                step.line, expected.within_ms, expected.at_least
            ),
        );
        Err(Stop::Failed)
    }

    /// The WebSocket of the named witness connection.
    fn witness(&mut self, step: &Step, name: &str) -> Result<&mut WsSession, Stop> {
        self.connections
            .get_mut(name)
            .and_then(|connection| connection.ws.as_mut())
            .ok_or_else(|| {
                Stop::Error(format!(
                    "the witness connection \"{name}\" of the step at line {} has no WebSocket open: an earlier step must subscribe on it",
                    step.line
                ))
            })
    }
}
