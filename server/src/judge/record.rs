//! What the judge keeps of each request: the [`Record`] of what arrived and its
//! [`Answer`], and the [`Call`] a record reads as.
//!
//! A request is classified by what arrived, not by what the client meant: a WebSocket
//! message is `ws`, an HTTP request under `/direct/` is `rest`, an HTTP request with a body
//! is `http-body`, any other HTTP request is `http-query`.

use serde_json::{Map, Value};

use crate::serve::{RawRequest, Wire};
use harness_protocol::wire::TransportKind;

/// One request as it arrived, with its answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Arrival order.
    pub(crate) seq: u64,
    /// The order of this arrival among all arrivals and answers.
    pub(crate) event: u64,
    /// How it arrived.
    pub transport: TransportKind,
    /// The connection: the peer address over HTTP, `ws#<n>` on WebSocket.
    pub connection: String,
    /// Arrival time, ms since the epoch, from the judge's clock.
    pub(crate) at_ms: u64,
    /// The HTTP method, or `WS`.
    pub(crate) http_method: String,
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
    pub(crate) at_ms: u64,
    /// Its order among all arrivals and answers.
    pub(crate) event: u64,
    /// HTTP status; `None` on WebSocket.
    pub status: Option<u16>,
    /// The response envelope.
    pub body: Value,
    /// Whether the judge refused the request (the server never saw it).
    pub(crate) refused: bool,
}

/// What a record reads as: the JSON-RPC method and parameters, however they travelled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Call {
    /// `public/<name>` or `private/<name>`, from the envelope or the URL path.
    pub method: Option<String>,
    /// The parameters (empty when absent or not an object).
    pub params: Map<String, Value>,
    /// The parsed body or message; `None` for a query-string request.
    pub(crate) envelope: Option<Value>,
    /// Why the body or message is not JSON.
    pub(crate) unparsable: Option<String>,
}

impl Record {
    /// A record of a raw request, classified.
    pub(crate) fn from_raw(raw: &RawRequest, event: u64) -> Record {
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
    pub(crate) fn query(&self) -> Option<&str> {
        self.uri.split_once('?').map(|(_, query)| query)
    }

    /// A header's value (names compare without regard to case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
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
        let path = self.path();
        // A percent-encoded character of the path is the character (RFC 3986 2.1).
        let from_path = path
            .strip_prefix("/direct")
            .unwrap_or(path)
            .strip_prefix(harness_protocol::spec::API_PREFIX)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(|method| {
                percent_encoding::percent_decode_str(method)
                    .decode_utf8_lossy()
                    .into_owned()
            });
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
    pub(crate) fn is(&self, method: &str) -> bool {
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
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        match self.params.get(name)? {
            Value::Number(number) => number.as_i64(),
            Value::String(text) => text.parse().ok(),
            _ => None,
        }
    }
}

/// Records as unit tests of the judge's checks build them.
#[cfg(test)]
impl Record {
    /// Request `seq` over `transport`, as a client of that transport sends it (connection
    /// `ws#1` or `127.0.0.1:1`, method `WS` or `GET`, URI `/ws/api/v2` or `/api/v2`), at
    /// time 0 and event `seq`, with no header, no body and no answer. A test sets what it
    /// reads with struct update syntax.
    pub(crate) fn sample(seq: u64, transport: TransportKind) -> Record {
        let ws = transport == TransportKind::Ws;
        Record {
            seq,
            event: seq,
            transport,
            connection: if ws { "ws#1" } else { "127.0.0.1:1" }.to_owned(),
            at_ms: 0,
            http_method: if ws { "WS" } else { "GET" }.to_owned(),
            uri: if ws { "/ws/api/v2" } else { "/api/v2" }.to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
            answer: None,
        }
    }

    /// The record answered with `body` at its own time, as the next event: status 200 over
    /// HTTP, none on WebSocket.
    pub(crate) fn answered(self, body: Value) -> Record {
        Record {
            answer: Some(Answer {
                at_ms: self.at_ms,
                event: self.event + 1,
                status: (self.transport != TransportKind::Ws).then_some(200),
                body,
                refused: false,
            }),
            ..self
        }
    }
}

#[cfg(test)]
mod tests;
