//! One paced answer per run for every execution that would send the same request.
//!
//! A paced method costs the target's budget a request at a time (SPEC.md section 8: 1 per
//! second), so the run sends each distinct read of it once: the answer of the first
//! execution to ask serves every later execution that sends the same request, keyed by
//! (transport, authentication, method, parameters). Only idempotent reads are shared: a
//! paced method SPEC.md's table does not mark state-changing, in a plain `call` step (no
//! raw body, race, in-flight copies, named connection or captured token) or a walk's
//! density probe. A parameter written as `{{now_ms}}` is keyed as "now": two reads of the
//! history up to now, seconds apart, ask the same question. A later execution waits while
//! the first one's request is under way, and records the shared exchange with a note; an
//! execution that sends the same request twice sends it twice.
//!
//! What the run keeps is bounded by [`SHARED_ANSWER_BYTES`], not by what the target sends:
//! an answer that would take the kept answers past it is not kept, and the next execution
//! that asks sends its own request (paced like any other).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio::sync::Mutex as AsyncMutex;

use super::exec::{Execution, Stop};
use super::template;
use harness_model::case::{Step, StepKind};
use harness_model::check::ParsedAnswer;
use harness_protocol::spec;
use harness_protocol::wire::Exchange;

/// Answer bytes (the answers' text, whole) the run keeps to share. The reference server's
/// paced answers take under 2 MB in all (a full run: 161 transaction-log answers, walks'
/// pages included, 1.96 MB); a target answering every request with a megabyte
/// would otherwise have the run hold each distinct paced answer, parsed, until it ends.
const SHARED_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// A shared answer, the exchange it came in, and the execution (case id, transport) that
/// sent it: an execution that sends the same request again means to (a case reading twice,
/// or spending its budget on purpose), so it is never served its own answer.
#[derive(Clone)]
struct Shared {
    answer: ParsedAnswer,
    exchange: Exchange,
    sender: (String, String),
}

/// The run's paced answers by request. Off by default: executions scheduled one at a time
/// by a caller (the `cargo test` trials, each with its own snapshot) send their own.
#[derive(Default)]
pub(crate) struct PacedAnswers {
    on: bool,
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Option<Shared>>>>>,
    /// The bytes of the answers kept so far (at most [`SHARED_ANSWER_BYTES`]).
    kept_bytes: AtomicUsize,
}

impl PacedAnswers {
    /// Answers shared across the executions of one run.
    pub(crate) fn shared() -> PacedAnswers {
        PacedAnswers {
            on: true,
            ..PacedAnswers::default()
        }
    }

    fn slot(&self, key: &str) -> Arc<AsyncMutex<Option<Shared>>> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slots.entry(key.to_owned()).or_default().clone()
    }

    /// Takes room for an answer of `bytes` among the kept ones; false when there is none.
    fn make_room(&self, bytes: usize) -> bool {
        self.kept_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                kept.checked_add(bytes)
                    .filter(|total| *total <= SHARED_ANSWER_BYTES)
            })
            .is_ok()
    }
}

/// The key of a request with `raw` parameters (templates) resolved to `resolved`.
fn key(
    transport: &str,
    auth: &str,
    method: &str,
    raw: &Map<String, Value>,
    resolved: &Map<String, Value>,
) -> String {
    let canonical: BTreeMap<&String, &Value> = resolved.iter().collect();
    let now = Value::from("now");
    let canonical: BTreeMap<&String, &Value> = canonical
        .into_iter()
        .map(
            |(name, value)| match raw.get(name).and_then(Value::as_str) {
                Some(text) if text.replace(' ', "") == "{{now_ms}}" => (name, &now),
                _ => (name, value),
            },
        )
        .collect();
    format!(
        "{transport} {auth} {method} {}",
        serde_json::to_string(&canonical).unwrap_or_default()
    )
}

/// Whether answers of `method` may be shared: paced, and a read.
fn shareable(method: &str) -> bool {
    spec::is_paced(method) && spec::method(method).is_some_and(|method| !method.state_changing)
}

impl Execution<'_> {
    /// The sharing key of `step`'s request to `method`, when it may be shared.
    fn share_key(
        &self,
        step: &Step,
        method: &str,
        page: Option<&Map<String, Value>>,
        raw: &Map<String, Value>,
    ) -> Option<String> {
        let plain = matches!(
            step.kind,
            StepKind::Call(_) | StepKind::Walk(_) | StepKind::Probe(_)
        ) && step.connection.is_none()
            && step.auth.given_token().is_none();
        if !self.shared.paced_answers.on || !plain || !shareable(method) {
            return None;
        }
        let resolved = match page {
            None => template::resolve_map(&step.params, self).ok()?,
            Some(params) => params.clone(),
        };
        Some(key(
            &self.transport.to_string(),
            &format!("{:?}", step.auth),
            method,
            raw,
            &resolved,
        ))
    }

    /// Sends `step`'s request to `method` paced (throttled answers waited out and sent
    /// again), or takes the answer an earlier execution of the run got for the same request.
    /// The request is the `call` step's (its templates and authentication), or with `page`
    /// a walk's page of those parameters and the step's bearer token; `raw` are the
    /// parameters as the case writes them, templates unresolved.
    pub(crate) async fn paced_call(
        &mut self,
        step: &Step,
        method: &str,
        page: Option<&Map<String, Value>>,
        raw: &Map<String, Value>,
    ) -> Result<ParsedAnswer, Stop> {
        let slot = self
            .share_key(step, method, page, raw)
            .map(|key| self.shared.paced_answers.slot(&key));
        let mut held = match slot {
            Some(slot) => Some(slot.lock_owned().await),
            None => None,
        };
        let sender = (self.case.id.clone(), self.transport.to_string());
        if let Some(shared) = held
            .as_deref()
            .and_then(Option::as_ref)
            .filter(|shared| shared.sender != sender)
        {
            self.exchanges.push(shared.exchange.clone());
            self.notes.push(format!(
                "the answer to {method} is the one an earlier execution of the run got for the same request (paced: sent once per run)"
            ));
            return Ok(shared.answer.clone());
        }
        let answer = self.send_paced(step, method, page).await?;
        if let (Some(held), Some(exchange)) = (held.as_mut(), self.exchanges.last())
            && self
                .shared
                .paced_answers
                .make_room(self.budget.last_answer_bytes())
        {
            **held = Some(Shared {
                answer: answer.clone(),
                exchange: exchange.clone(),
                sender,
            });
        }
        Ok(answer)
    }

    /// Sends `step`'s request to `method` (or, with `page`, a walk's page of those
    /// parameters), paced where SPEC.md 8 paces the method: prepared after the pacer had
    /// room, so a signature carries a fresh timestamp and nonce, and sent again after a
    /// back-off while the target throttles it. The one loop every paced request goes
    /// through, shared or not.
    pub(crate) async fn send_paced(
        &mut self,
        step: &Step,
        method: &str,
        page: Option<&Map<String, Value>>,
    ) -> Result<ParsedAnswer, Stop> {
        let accounts = spec::is_paced(method).then(|| self.pace_keys(&step.auth));
        let mut attempt = 0;
        loop {
            let room = match &accounts {
                Some(accounts) => Some(self.shared.pacer.wait_for_room(accounts).await),
                None => None,
            };
            // Prepared after the wait, so signatures carry a fresh timestamp and nonce.
            let outgoing = match page {
                None => self.prepare(step, method).await?,
                Some(params) => self.paged_request(step, method, params.clone()).await?,
            };
            let answer = self.send(&outgoing).await?;
            let budgets = accounts.as_deref().unwrap_or_default();
            self.throttled_within_budget(
                method,
                &answer,
                attempt,
                room.map(|room| (room, budgets)),
            );
            match self.throttled(method, &answer, &mut attempt, budgets) {
                Some(backoff) => tokio::time::sleep(backoff).await,
                None => return Ok(answer),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn now_is_one_key_whenever_it_is_read() {
        let raw = map(json!({"currency": "{{fixtures.currency}}", "end_timestamp": "{{now_ms}}"}));
        let early = map(json!({"currency": "BTC", "end_timestamp": 1_000}));
        let late = map(json!({"end_timestamp": 9_000, "currency": "BTC"}));
        assert_eq!(
            key("http-query", "bearer", "m", &raw, &early),
            key("http-query", "bearer", "m", &raw, &late)
        );
    }

    #[test]
    fn transport_auth_and_values_part_keys() {
        let raw = map(json!({"count": 250}));
        let one = map(json!({"count": 250}));
        let other = map(json!({"count": 249}));
        let base = key("ws", "main", "m", &raw, &one);
        assert_ne!(base, key("http-query", "main", "m", &raw, &one));
        assert_ne!(base, key("ws", "sub", "m", &raw, &one));
        assert_ne!(base, key("ws", "main", "m", &raw, &other));
        // A fixed timestamp is not "now".
        let fixed = map(json!({"end_timestamp": 5}));
        assert_ne!(
            key("ws", "main", "m", &fixed, &fixed),
            key("ws", "main", "m", &fixed, &map(json!({"end_timestamp": 6})))
        );
    }

    #[test]
    fn kept_answers_stay_within_their_budget() {
        let answers = PacedAnswers::shared();
        assert!(answers.make_room(SHARED_ANSWER_BYTES - 10));
        assert!(!answers.make_room(11), "past the budget");
        assert!(answers.make_room(10), "what is left still fits");
        assert!(!answers.make_room(1));
        assert!(!answers.make_room(usize::MAX));
    }

    #[test]
    fn only_paced_reads_are_shared() {
        let methods = || spec::METHODS.iter();
        assert!(methods().any(|method| shareable(method.name)));
        assert!(
            methods()
                .filter(|method| method.state_changing || !spec::is_paced(method.name))
                .all(|method| !shareable(method.name))
        );
    }
}
