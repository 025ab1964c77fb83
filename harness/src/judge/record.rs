//! Recording: the [`Recorder`] the reference server calls with every raw request and
//! answer, the [`Record`] it keeps of each, and the [`Call`] a record reads as.
//!
//! A request is classified by what arrived, not by what the client meant: a WebSocket
//! message is `ws`, an HTTP request under `/direct/` is `rest`, an HTTP request with a body
//! is `http-body`, any other HTTP request is `http-query`. The recorder also refuses, live,
//! the requests that break a single-request rule (see [`super::check_request`]).

use std::sync::Mutex;

use serde_json::{Map, Value};
use tokio::sync::watch;

use super::sessions::Sessions;
use super::{Knowledge, Tally};
use crate::case::TransportKind;
use crate::check::{Redactor, Verdict};
use crate::jsonrpc::ErrorObject;
use crate::serve::{Observer, RawAnswer, RawRequest, Wire};

/// One request as it arrived, with its answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Arrival order.
    pub seq: u64,
    /// The order of this arrival among all arrivals and answers.
    pub event: u64,
    /// How it arrived.
    pub transport: TransportKind,
    /// The connection: the peer address over HTTP, `ws#<n>` on WebSocket.
    pub connection: String,
    /// Arrival time, ms since the epoch, from the judge's clock.
    pub at_ms: u64,
    /// The HTTP method, or `WS`.
    pub http_method: String,
    /// Path and query as received (for WebSocket, those of the handshake).
    pub uri: String,
    /// Headers as received (for WebSocket, those of the handshake).
    pub headers: Vec<(String, String)>,
    /// The body or WebSocket message.
    pub body: Vec<u8>,
    /// The answer, once it went out.
    pub answer: Option<Answer>,
}

/// The answer to a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// When it went out.
    pub at_ms: u64,
    /// Its order among all arrivals and answers.
    pub event: u64,
    /// HTTP status; `None` on WebSocket.
    pub status: Option<u16>,
    /// The response envelope.
    pub body: Value,
    /// Whether the judge refused the request (the server never saw it).
    pub refused: bool,
}

/// What a record reads as: the JSON-RPC method and parameters, however they travelled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Call {
    /// `public/<name>` or `private/<name>`, from the envelope or the URL path.
    pub method: Option<String>,
    /// The parameters (empty when absent or not an object).
    pub params: Map<String, Value>,
    /// The parsed body or message; `None` for a query-string request.
    pub envelope: Option<Value>,
    /// Why the body or message is not JSON.
    pub unparsable: Option<String>,
}

impl Record {
    /// A record of a raw request, classified.
    pub fn from_raw(raw: &RawRequest, event: u64) -> Record {
        let path = raw.uri.split('?').next().unwrap_or_default();
        let transport = match raw.wire {
            Wire::Ws => TransportKind::Ws,
            Wire::Http if path.starts_with("/direct/") => TransportKind::Rest,
            Wire::Http if !raw.body.is_empty() => TransportKind::HttpBody,
            Wire::Http => TransportKind::HttpQuery,
        };
        Record {
            seq: raw.seq,
            event,
            transport,
            connection: raw.connection.clone(),
            at_ms: raw.at_ms,
            http_method: raw.method.clone(),
            uri: raw.uri.clone(),
            headers: raw.headers.clone(),
            body: raw.body.to_vec(),
            answer: None,
        }
    }

    /// The path of the URI.
    pub fn path(&self) -> &str {
        self.uri.split('?').next().unwrap_or_default()
    }

    /// The query string of the URI, if any.
    pub fn query(&self) -> Option<&str> {
        self.uri.split_once('?').map(|(_, query)| query)
    }

    /// A header's value (names compare without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The result of the answer, when it was a success.
    pub fn result(&self) -> Option<&Value> {
        self.answer.as_ref()?.body.get("result")
    }

    /// Reads the request as a JSON-RPC call.
    pub fn call(&self) -> Call {
        let from_path = self
            .path()
            .strip_prefix("/api/v2/")
            .or_else(|| self.path().strip_prefix("/direct/api/v2/"))
            .map(str::to_owned);
        if self.transport == TransportKind::Ws || !self.body.is_empty() {
            return match serde_json::from_slice::<Value>(&self.body) {
                Ok(envelope) => Call {
                    method: envelope
                        .get("method")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or(from_path),
                    params: envelope
                        .get("params")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default(),
                    envelope: Some(envelope),
                    unparsable: None,
                },
                Err(error) => Call {
                    method: from_path,
                    unparsable: Some(error.to_string()),
                    ..Call::default()
                },
            };
        }
        let params = form_urlencoded::parse(self.query().unwrap_or_default().as_bytes())
            .map(|(name, value)| (name.into_owned(), Value::String(value.into_owned())))
            .collect();
        Call {
            method: from_path,
            params,
            envelope: None,
            unparsable: None,
        }
    }
}

impl Call {
    /// Whether this is the method named.
    pub fn is(&self, method: &str) -> bool {
        self.method.as_deref() == Some(method)
    }

    /// A parameter as text: a string as is, a number as written.
    pub fn text(&self, name: &str) -> Option<String> {
        match self.params.get(name)? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        }
    }

    /// A parameter as an integer, whether it travelled as a JSON number or as text.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.params.get(name)? {
            Value::Number(number) => number.as_i64(),
            Value::String(text) => text.parse().ok(),
            _ => None,
        }
    }
}

/// What the recorder holds, behind one lock.
#[derive(Debug, Default)]
struct Book {
    records: Vec<Record>,
    dropped: usize,
    events: u64,
    knowledge: Option<Knowledge>,
    sessions: Sessions,
}

/// Records every request and answer; refuses requests that break a single-request rule.
#[derive(Debug)]
pub struct Recorder {
    book: Mutex<Book>,
    max_records: usize,
    answered: watch::Sender<usize>,
    redactor: Redactor,
}

impl Recorder {
    /// A recorder that keeps at most `max_records` requests.
    pub fn new(max_records: usize) -> Recorder {
        Recorder {
            book: Mutex::new(Book::default()),
            max_records,
            answered: watch::Sender::new(0),
            redactor: Redactor::default(),
        }
    }

    /// Tells the recorder the accounts and limits it judges against.
    pub fn set_knowledge(&self, knowledge: Knowledge, secrets: Vec<String>) {
        for secret in secrets {
            self.redactor.add(secret);
        }
        self.lock().knowledge = Some(knowledge);
    }

    /// Every record so far, in arrival order.
    pub fn records(&self) -> Vec<Record> {
        self.lock().records.clone()
    }

    /// Requests answered but not kept because the cap was reached.
    pub fn dropped(&self) -> usize {
        self.lock().dropped
    }

    /// Knows every secret and every token, signature and credential seen.
    pub fn redactor(&self) -> Redactor {
        self.redactor.clone()
    }

    /// Resolves once at least `count` requests have been answered.
    pub async fn wait_for_answers(&self, count: usize) {
        let mut receiver = self.answered.subscribe();
        // The sender lives as long as the recorder, so this only ends when it is reached.
        let _ = receiver.wait_for(|answered| *answered >= count).await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn learn_secrets(&self, record: &Record, call: &Call) {
        self.redactor.learn(&Value::Object(call.params.clone()));
        if let Some(envelope) = &call.envelope {
            self.redactor.learn(envelope);
        }
        if let Some((_, credential)) = record
            .header("authorization")
            .and_then(|value| value.trim().split_once(' '))
        {
            self.redactor.add(credential.trim());
        }
    }
}

impl Observer for Recorder {
    fn request(&self, raw: &RawRequest) -> Option<ErrorObject> {
        let mut book = self.lock();
        book.events += 1;
        let record = Record::from_raw(raw, book.events);
        let call = record.call();
        self.learn_secrets(&record, &call);
        let refusal = book.knowledge.as_ref().and_then(|knowledge| {
            let mut tally = Tally::default();
            super::check_request(&record, &call, knowledge, &book.sessions, &mut tally);
            refusal(&tally)
        });
        if book.records.len() < self.max_records {
            book.records.push(record);
        } else {
            book.dropped += 1;
        }
        refusal
    }

    fn answer(&self, raw: &RawAnswer) {
        self.redactor.learn(&raw.body);
        let mut book = self.lock();
        book.events += 1;
        let event = book.events;
        // Answers come back close to the end of the list, so searching from the back is
        // short even for a long session.
        let position = book
            .records
            .iter()
            .rposition(|record| record.seq == raw.seq);
        if let Some(position) = position {
            book.records[position].answer = Some(Answer {
                at_ms: raw.at_ms,
                event,
                status: raw.status,
                body: raw.body.clone(),
                refused: raw.body.pointer("/error/data/judge") == Some(&Value::Bool(true)),
            });
            let record = book.records[position].clone();
            book.sessions.learn(&record, &record.call());
        }
        drop(book);
        self.answered.send_modify(|answered| *answered += 1);
    }
}

/// The error a refused request is answered with: the code the reference server uses for
/// that kind of defect, with the clause and the finding as the reason.
fn refusal(tally: &Tally) -> Option<ErrorObject> {
    let (clause, message) = tally.iter().find_map(|(clause, _, cell)| {
        cell.noted
            .iter()
            .find(|noted| noted.verdict == Verdict::Fail)
            .map(|noted| (clause.to_owned(), noted.message.clone()))
    })?;
    let reason = format!("{message} ({clause})");
    let mut error = if clause.starts_with("client.sig.") || clause.starts_with("client.signed.") {
        ErrorObject::invalid_credentials(&reason)
    } else if clause == "client.env.params" {
        ErrorObject::invalid_params("params", &reason)
    } else if clause.starts_with("client.env.") {
        ErrorObject::invalid_request(&reason)
    } else {
        let param = match clause.as_str() {
            "client.count.bounds" => "count",
            "auth.client_signature.secret_not_sent" => "client_secret",
            _ if clause.starts_with("client.token.") => "access_token",
            _ => "params",
        };
        ErrorObject::invalid_params(param, &reason)
    };
    if let Some(Value::Object(data)) = error.data.as_mut() {
        data.insert("judge".to_owned(), Value::Bool(true));
    }
    Some(error)
}
