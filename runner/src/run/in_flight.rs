//! Several requests in flight on one WebSocket connection: a call step with `in_flight = N`
//! goes N times at once, each with its own id, and every answer, matched to its request by
//! id in whatever order it came, is checked as the step expects. SPEC.md section 1 makes
//! WebSocket a channel of "JSON-RPC messages" whose responses each carry the `id` that
//! "echoes the request id"; it does not say a client waits for one answer before sending
//! the next request.

use serde_json::Value;

use super::exec::{Execution, Stop};
use harness_model::case::Step;

impl Execution<'_> {
    /// Sends `copies` of the step's call of `method` at once and checks every answer.
    pub(super) async fn in_flight(
        &mut self,
        step: &Step,
        method: &str,
        copies: usize,
    ) -> Result<(), Stop> {
        let mut outgoings = Vec::with_capacity(copies);
        for _ in 0..copies {
            outgoings.push(self.prepare(step, method).await?);
        }
        let answers = self.send_in_flight(&outgoings).await?;
        let clauses = self.case.step_clauses(step).to_vec();
        let mut response = Value::Null;
        for answer in answers {
            response = self.check_answer(answer, &clauses, step)?;
        }
        if self.failing() {
            return Err(Stop::Failed);
        }
        self.capture(step, &response, &clauses)
    }
}
