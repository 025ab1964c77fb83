//! The judging task's side of the proxy: it receives copies of what the forwarding tasks
//! saw ([`Event`]), pairs each answer with its request into the client judge's
//! [`Record`]s, and teaches the [`Redactor`] every secret, token and signature that passes.
//!
//! An HTTP answer names its request. A WebSocket answer is paired by id with the earliest
//! request of the same id still unanswered on its connection; an answer whose id matches
//! none (a wrong id) goes to the oldest request still waiting, as the runner's WebSocket
//! transport pairs them, so the wrong id is judged. A notification (a `method`, no
//! `result` or `error`) is no answer.

use std::collections::{BTreeMap, VecDeque};

use axum::body::Bytes;
use serde_json::Value;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};

use crate::judge::{Answer, Call, Record};
use crate::serve::RawRequest;
use harness_model::check::Redactor;

/// Unanswered WebSocket requests remembered per connection; older ones are forgotten.
const PENDING_PER_CONNECTION: usize = 1_024;

/// A copy of what passed through the proxy, for the judging task.
#[derive(Clone, Debug)]
pub enum Event {
    /// A request as it arrived from the client (an HTTP request or a WebSocket message).
    Request(RawRequest),
    /// The upstream's answer to HTTP request `seq`, as forwarded back.
    HttpAnswer {
        /// The request answered.
        seq: u64,
        /// The HTTP status.
        status: u16,
        /// The body.
        body: Bytes,
        /// When it went back to the client.
        at_ms: u64,
    },
    /// A message from the server on a WebSocket connection, as forwarded back.
    WsMessage {
        /// The connection (`ws#<n>`).
        connection: String,
        /// The message.
        body: Bytes,
        /// When it went back to the client.
        at_ms: u64,
    },
}

/// What the judging task has when the session ends.
#[derive(Debug, Default)]
pub(crate) struct Book {
    pub(crate) records: Vec<Record>,
    /// Requests not kept because the cap was reached.
    pub(crate) dropped: usize,
    pub(crate) redactor: Redactor,
    events: u64,
    max_records: usize,
    /// Per WebSocket connection, unanswered requests as (id, seq), oldest first.
    pending: BTreeMap<String, VecDeque<(Value, u64)>>,
    /// Index of each kept record by seq (records arrive in seq order but not strictly).
    index: BTreeMap<u64, usize>,
    /// Answers paired with their request so far (`--requests`).
    answered: Option<Arc<watch::Sender<usize>>>,
}

/// Receives events until the proxy stops (`finished`), then takes what is still queued.
pub(crate) async fn judge_events(
    mut inbox: mpsc::Receiver<Event>,
    mut finished: oneshot::Receiver<()>,
    max_records: usize,
    redactor: Redactor,
    answered: Arc<watch::Sender<usize>>,
) -> Book {
    let mut book = Book {
        redactor,
        max_records,
        answered: Some(answered),
        ..Book::default()
    };
    loop {
        tokio::select! {
            event = inbox.recv() => match event {
                Some(event) => book.take(event),
                None => break,
            },
            _ = &mut finished => {
                while let Ok(event) = inbox.try_recv() {
                    book.take(event);
                }
                break;
            }
        }
    }
    book
}

impl Book {
    fn take(&mut self, event: Event) {
        self.events += 1;
        match event {
            Event::Request(raw) => self.request(&raw),
            Event::HttpAnswer {
                seq,
                status,
                body,
                at_ms,
            } => self.answer(seq, Some(status), &body, at_ms),
            Event::WsMessage {
                connection,
                body,
                at_ms,
            } => {
                let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                let is_answer = message.get("result").is_some()
                    || message.get("error").is_some()
                    || message.get("method").is_none();
                let Some(pending) = self.pending.get_mut(&connection) else {
                    return;
                };
                // The request of the same id; failing that, an answer goes to the oldest
                // request still waiting, so a wrong id is judged as one.
                let position = message
                    .get("id")
                    .and_then(|id| pending.iter().position(|(sent, _)| sent == id))
                    .or_else(|| is_answer.then_some(0));
                if let Some((_, seq)) = position.and_then(|position| pending.remove(position)) {
                    self.answer(seq, None, &body, at_ms);
                }
            }
        }
    }

    fn request(&mut self, raw: &RawRequest) {
        let record = Record::from_raw(raw, self.events);
        let call = record.call();
        learn_secrets(&self.redactor, &record, &call);
        if let Some(id) = call
            .envelope
            .as_ref()
            .and_then(|envelope| envelope.get("id"))
            .filter(|_| raw.wire == crate::serve::Wire::Ws)
        {
            let pending = self.pending.entry(raw.connection.clone()).or_default();
            if pending.len() >= PENDING_PER_CONNECTION {
                pending.pop_front();
            }
            pending.push_back((id.clone(), raw.seq));
        }
        if self.records.len() < self.max_records {
            self.index.insert(raw.seq, self.records.len());
            self.records.push(record);
        } else {
            self.dropped += 1;
        }
    }

    fn answer(&mut self, seq: u64, status: Option<u16>, body: &[u8], at_ms: u64) {
        let body = serde_json::from_slice::<Value>(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        self.redactor.learn(&body);
        if let Some(answered) = &self.answered {
            answered.send_modify(|answered| *answered += 1);
        }
        let Some(&position) = self.index.get(&seq) else {
            return;
        };
        self.records[position].answer = Some(Answer {
            at_ms,
            event: self.events,
            status,
            body,
            refused: false,
        });
    }
}

/// Every credential a request carries: parameters, the envelope, the Authorization value.
fn learn_secrets(redactor: &Redactor, record: &Record, call: &Call) {
    redactor.learn(&Value::Object(call.params.clone()));
    if let Some(envelope) = &call.envelope {
        redactor.learn(envelope);
    }
    if let Some((_, credential)) = record
        .header("authorization")
        .and_then(|value| value.trim().split_once(' '))
    {
        redactor.add(credential.trim());
    }
}
