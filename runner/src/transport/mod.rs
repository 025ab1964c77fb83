//! Client transports that speak the [`harness_protocol::jsonrpc`] types to a target: HTTP GET with a
//! query string or a JSON-RPC body (reqwest), JSON-RPC over WebSocket (tokio-tungstenite),
//! and the Direct Access REST call. Both speak TLS and go through proxies as one
//! [`Dialer`] says (`tls.rs`, `proxy.rs`); a connection it cannot open is a [`DialError`].
//!
//! Every call is bounded: a per-request timeout, a cap on the response size, a room for the
//! answers being read at once shared by the process (`in_flight.rs`: HTTP bodies, a race's
//! hand-read answers and WebSocket messages alike), and on WebSocket a cap on the frames
//! of one message and on how many unrelated frames (pings, notifications) are skipped
//! while waiting for the answer. Each call returns an [`Exchange`](harness_protocol::wire::Exchange): what was sent and what came
//! back, the raw material of verdicts and reports.
//!
//! A [`ClientSession`] is one client's session with a target over these transports: the
//! runner's executions and the fuzzer's sender each hold one.

mod credential;
mod dial;
mod http;
mod http1;
mod in_flight;
mod proxy;
mod race;
mod session;
mod tls;
mod ws;

pub use credential::{SignatureParams, basic};
pub(crate) use credential::{api_key, insert_client_secret, insert_client_signature, spoiled};
pub use dial::{DialError, Dialer};
pub use http::HttpClient;
pub use proxy::ProxyRule;
pub use race::{RaceEntry, RaceOutcome, Wave};
pub use session::{ClientSession, Credentials, Token, place_bearer};
pub use ws::WsSession;

use std::time::Duration;

use serde_json::{Map, Value};

/// RequestLimits every call obeys.
#[derive(Clone, Copy, Debug)]
pub struct RequestLimits {
    /// How long one request may take, connecting included.
    pub request_timeout: Duration,
    /// The largest response body or message accepted.
    pub max_response_bytes: usize,
}

impl Default for RequestLimits {
    fn default() -> RequestLimits {
        RequestLimits {
            request_timeout: Duration::from_secs(5),
            max_response_bytes: 8 * 1024 * 1024,
        }
    }
}

/// What to send.
#[derive(Clone, Debug, Default)]
pub struct Outgoing {
    /// The method, e.g. `public/auth`.
    pub method: String,
    /// The parameters.
    pub params: Map<String, Value>,
    /// A raw body or text frame sent instead of a built request.
    pub raw: Option<String>,
    /// The `Authorization` header (HTTP only).
    pub authorization: Option<Authorization>,
}

/// An `Authorization` header to send.
#[derive(Clone, Debug)]
pub enum Authorization {
    /// A header value used as is (`Bearer ...`, `Basic ...`).
    Value(String),
    /// A signed header, computed over the request actually sent.
    Signed(SignedPlan),
}

/// What a signed `Authorization` header is made of.
#[derive(Clone, Debug)]
pub struct SignedPlan {
    /// Scheme name.
    pub scheme: String,
    /// Client id.
    pub client_id: String,
    /// Secret used for the HMAC.
    pub secret: String,
    /// `ts`.
    pub timestamp: u64,
    /// `nonce`.
    pub nonce: String,
    /// Sign this URI instead of the one sent.
    pub sign_uri: Option<String>,
    /// Sign this body instead of the one sent.
    pub sign_body: Option<String>,
    /// Sign the HTTP method in lower case.
    pub lowercase_method: bool,
    /// Send the signature in upper-case hex.
    pub uppercase_hex: bool,
    /// Send the signature with its last hex digit changed.
    pub altered_signature: bool,
}
