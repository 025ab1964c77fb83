//! How many answer bytes an execution keeps: every answer whole while the execution's
//! budget and the run's last, then only the first bytes of each, so a hostile target that
//! answers every request near the size cap cannot make a run's memory or reports grow with
//! what it sends: the run keeps at most [`RECORDED_BYTES_PER_RUN`] whole, and a kilobyte an
//! answer past that.

use std::sync::atomic::{AtomicUsize, Ordering};

use harness_protocol::wire::RECORDED_BODY_BYTES;

use harness_protocol::wire::Exchange;

/// Answer bytes one execution keeps in full across its exchanges; past this, each further
/// answer is kept only as its first [`RECORDED_TAIL_BYTES`]. The reference server's largest
/// execution (a transaction-log walk) keeps about 200 KB; the bound is for a hostile target
/// that answers a 200-page walk with pages near the size cap.
const RECORDED_BYTES_PER_EXECUTION: usize = 1024 * 1024;

/// Answer bytes a whole run keeps in full across all its executions. The reference
/// server's full run keeps about 3 MB; past this, each further answer is kept only as its
/// first [`RECORDED_TAIL_BYTES`], so report.json stays well under 16 MB whatever a target
/// sends.
pub(crate) const RECORDED_BYTES_PER_RUN: usize = 8 * 1024 * 1024;

/// What is kept of each answer once an execution's budget or the run's is spent.
const RECORDED_TAIL_BYTES: usize = 1024;

/// How many answer bytes an execution has kept, and so how much of the next answer it keeps.
#[derive(Debug, Default)]
pub(super) struct RecordBudget {
    kept: usize,
    /// The size of the last answer recorded, before any cut.
    last_answer_bytes: usize,
}

impl RecordBudget {
    /// The exchange as the execution keeps it: whole while its budget and the run's
    /// (`run`, the bytes every execution kept so far) last, up to [`RECORDED_BODY_BYTES`],
    /// then only its first [`RECORDED_TAIL_BYTES`].
    pub(super) fn record(&mut self, exchange: Exchange, run: &AtomicUsize) -> Exchange {
        let run_left = RECORDED_BYTES_PER_RUN.saturating_sub(run.load(Ordering::Relaxed));
        self.last_answer_bytes = exchange
            .response
            .as_ref()
            .map_or(0, |received| received.body.len());
        let cap = RECORDED_BYTES_PER_EXECUTION
            .saturating_sub(self.kept)
            .min(run_left)
            .clamp(RECORDED_TAIL_BYTES, RECORDED_BODY_BYTES);
        let recorded = exchange.for_record(cap);
        let kept = recorded
            .response
            .as_ref()
            .map_or(0, |received| received.body.len());
        self.kept += kept;
        run.fetch_add(kept, Ordering::Relaxed);
        recorded
    }

    /// The size of the last answer [`RecordBudget::record`] was given, whole: what holding
    /// that answer costs, whatever was kept of it.
    pub(super) fn last_answer_bytes(&self) -> usize {
        self.last_answer_bytes
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_run_budget_bounds_what_every_execution_keeps_together() {
        let run = AtomicUsize::new(0);
        let page = "a".repeat(200 * 1024);
        // Forty-one executions of one page each: each alone keeps its page whole, until
        // the run has kept its 8 MiB; then each keeps the tail only.
        let kept: Vec<usize> = (0..60)
            .map(|_| kept_len(&RecordBudget::default().record(exchange(&page), &run)))
            .collect();
        assert_eq!(kept[0], page.len());
        assert!(kept[59] < RECORDED_TAIL_BYTES + 64, "{}", kept[59]);
        let total: usize = kept.iter().sum();
        assert!(
            total < RECORDED_BYTES_PER_RUN + page.len() + 60 * 1100,
            "{total}"
        );
    }

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
            assert_eq!(
                kept_len(&budget.record(exchange(&page), &AtomicUsize::new(0))),
                page.len()
            );
        }
        // 1000 KiB kept: the sixth answer gets what is left of the MiB, the seventh the tail.
        let sixth = budget.record(exchange(&page), &AtomicUsize::new(0));
        assert!(kept_len(&sixth) < 30 * 1024, "{}", kept_len(&sixth));
        let seventh = budget.record(exchange(&page), &AtomicUsize::new(0));
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
        assert!(
            kept_len(&budget.record(exchange(&huge), &AtomicUsize::new(0)))
                < RECORDED_BODY_BYTES + 64
        );
    }
}
