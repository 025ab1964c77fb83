//! How many answer bytes one execution keeps: every answer whole while the execution's
//! budget lasts, then only the first bytes of each, so a hostile target that answers a long
//! walk with pages near the size cap cannot make a run's memory or reports unbounded.

use harness_protocol::wire::RECORDED_BODY_BYTES;

use harness_protocol::wire::Exchange;

/// Answer bytes one execution keeps in full across its exchanges; past this, each further
/// answer is kept only as its first [`RECORDED_TAIL_BYTES`]. The reference server's largest
/// execution (a transaction-log walk) keeps about 200 KB; the bound is for a hostile target
/// that answers a 200-page walk with pages near the size cap.
const RECORDED_BYTES_PER_EXECUTION: usize = 1024 * 1024;

/// What is kept of each answer once an execution's budget is spent.
const RECORDED_TAIL_BYTES: usize = 1024;

/// How many answer bytes an execution has kept, and so how much of the next answer it keeps.
#[derive(Debug, Default)]
pub(super) struct RecordBudget {
    kept: usize,
}

impl RecordBudget {
    /// The exchange as the execution keeps it: whole while the budget lasts (up to
    /// [`RECORDED_BODY_BYTES`]), then only its first [`RECORDED_TAIL_BYTES`].
    pub(super) fn record(&mut self, exchange: Exchange) -> Exchange {
        let cap = RECORDED_BYTES_PER_EXECUTION
            .saturating_sub(self.kept)
            .clamp(RECORDED_TAIL_BYTES, RECORDED_BODY_BYTES);
        let recorded = exchange.for_record(cap);
        self.kept += recorded
            .response
            .as_ref()
            .map_or(0, |received| received.body.len());
        recorded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_protocol::wire::Received;
    use harness_protocol::wire::SentRequest;
    use harness_protocol::wire::TransportKind;

    fn exchange(body: &str) -> Exchange {
        Exchange {
            transport: TransportKind::HttpBody,
            request: SentRequest::default(),
            response: Some(Received::from_bytes(Some(200), body.as_bytes().to_vec())),
            failure: None,
            elapsed_ms: 0.0,
        }
    }

    fn kept_len(exchange: &Exchange) -> usize {
        exchange
            .response
            .as_ref()
            .map_or(0, |received| received.body.len())
    }

    #[test]
    fn budget_keeps_answers_whole_until_spent_then_only_their_first_bytes() {
        let mut budget = RecordBudget::default();
        let page = "a".repeat(200 * 1024);
        for _ in 0..5 {
            assert_eq!(kept_len(&budget.record(exchange(&page))), page.len());
        }
        // 1000 KiB kept: the sixth answer gets what is left of the MiB, the seventh the tail.
        let sixth = budget.record(exchange(&page));
        assert!(kept_len(&sixth) < 30 * 1024, "{}", kept_len(&sixth));
        let seventh = budget.record(exchange(&page));
        assert!(
            kept_len(&seventh) < RECORDED_TAIL_BYTES + 64,
            "{}",
            kept_len(&seventh)
        );
    }

    #[test]
    fn budget_never_keeps_more_of_one_answer_than_the_recorded_body_cap() {
        let mut budget = RecordBudget::default();
        let huge = "a".repeat(RECORDED_BODY_BYTES * 2);
        assert!(kept_len(&budget.record(exchange(&huge))) < RECORDED_BODY_BYTES + 64);
    }
}
