//! The transport-free path of one JSON-RPC message through the reference server:
//! [`ServerState::dispatch_message`] (bytes in, a response envelope out, never a panic),
//! the request parser the `lenient-envelope` variant loosens, the error codes the
//! `other-error-codes` variant rewords, and the envelope the envelope faults distort (and
//! the `id-omitted` variant leaves without an id where the request carried none).
//! Both transports answer through it.

use serde_json::Value;

use super::call;
use super::ctx::Transport;
use super::fault::Fault;
use super::params::Origin;
use super::state::OTHER_THROTTLE_CODE;
use super::{Connection, ServerState};
use harness_protocol::jsonrpc::{self, ErrorObject};

/// What a crashed parser answers instead of an envelope (a parsing fault only): the body of
/// an HTTP 500, a WebSocket text frame. [`ServerState::envelope`] gives it as a JSON
/// string, which the transports send as plain text.
pub(crate) const CRASH_TEXT: &str = "Internal Server Error";

impl ServerState {
    /// One WebSocket-style JSON-RPC message in, one response envelope out. Never panics,
    /// whatever the bytes.
    pub fn dispatch_message(&self, connection: &mut Connection, bytes: &[u8]) -> Value {
        if bytes.len() > self.max_body_bytes {
            let error = ErrorObject::invalid_request("message exceeds the size limit");
            return self.envelope(Value::Null, Err(error));
        }
        let incoming = match self.parse_request(bytes) {
            Ok(incoming) => incoming,
            Err((id, error)) => return self.envelope(id, Err(error)),
        };
        let mut id = incoming.id;
        if self.fault(Fault::WsWrongIds) {
            id = std::mem::replace(&mut connection.previous_id, id);
        }
        // A subscription (`subscription.rs`: SPEC.md shows none) is the WebSocket's own.
        if let Some(outcome) = self.subscribe(connection, &incoming.method, &incoming.params) {
            return self.envelope(id, outcome);
        }
        let outcome = call::call(
            self,
            Transport::Ws(connection),
            &incoming.method,
            incoming.params,
            Origin::Json,
        );
        self.envelope(id, outcome)
    }

    /// The error as the server words it: under the `other-error-codes` variant every code
    /// but the one SPEC.md gives (13668) is another, with another message and no data.
    fn recode(&self, error: ErrorObject) -> ErrorObject {
        if !self.variant(super::Variant::OtherErrorCodes)
            || error.code == jsonrpc::code::SECURITY_KEY_AUTHORIZATION_ERROR
        {
            return error;
        }
        let (code, message) = match error.code {
            jsonrpc::code::PARSE_ERROR => (11040, "bad_json"),
            jsonrpc::code::INVALID_REQUEST => (11041, "bad_envelope"),
            jsonrpc::code::METHOD_NOT_FOUND => (11042, "no_such_method"),
            jsonrpc::code::INVALID_PARAMS => (10019, "bad_arguments"),
            jsonrpc::code::INVALID_CREDENTIALS => (10004, "authentication_failed"),
            jsonrpc::code::UNAUTHORIZED => (10008, "not_permitted"),
            jsonrpc::code::TOO_MANY_REQUESTS => (OTHER_THROTTLE_CODE, "slow_down"),
            _ => (10050, "refused"),
        };
        ErrorObject::new(code, message)
    }

    /// Parses a JSON-RPC request. Under the `lenient-envelope` variant a `jsonrpc` other than
    /// "2.0" is taken as 2.0 and array `params` are taken positionally, in the order the
    /// spec table declares the method's parameters.
    #[expect(
        clippy::result_large_err,
        reason = "the error is answered at once; boxing buys nothing here"
    )]
    pub(crate) fn parse_request(
        &self,
        bytes: &[u8],
    ) -> Result<jsonrpc::Incoming, (Value, ErrorObject)> {
        if !self.variant(super::Variant::LenientEnvelope) {
            return jsonrpc::parse_request(bytes);
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(bytes) else {
            return Err((Value::Null, ErrorObject::parse_error()));
        };
        if let Some(object) = value.as_object_mut() {
            object.insert("jsonrpc".to_owned(), Value::from(jsonrpc::VERSION));
            let method = object.get("method").and_then(Value::as_str).unwrap_or("");
            let declared = super::call::declared_params(method).unwrap_or_default();
            if let Some(Value::Array(items)) = object.get("params") {
                let named: serde_json::Map<String, Value> = declared
                    .iter()
                    .zip(items.iter().cloned())
                    .map(|(param, value)| (param.name.to_owned(), value))
                    .collect();
                object.insert("params".to_owned(), Value::Object(named));
            }
        }
        jsonrpc::request_from_value(value)
    }

    /// The response envelope, distorted by whichever envelope fault is on.
    /// Under the `id-omitted` variant, an answer to a request that carried no id has no
    /// `id` member at all.
    pub(crate) fn envelope(&self, id: Value, outcome: Result<Value, ErrorObject>) -> Value {
        let no_request_id = id.is_null();
        let id = match (&id, id.as_u64()) {
            (_, Some(number)) if self.fault(Fault::EnvelopeIdOffByOne) => {
                Value::from(number.wrapping_add(1))
            }
            (Value::Number(number), _) if self.fault(Fault::EnvelopeIdAsString) => {
                Value::String(number.to_string())
            }
            _ => id,
        };
        if outcome.as_ref().is_err_and(super::params::is_crash) {
            // A parser that panicked: no envelope at all (see `CRASH_TEXT`).
            return Value::String(CRASH_TEXT.to_owned());
        }
        let success = outcome.is_ok();
        let outcome = outcome.map_err(|error| self.recode(error));
        let mut envelope = match outcome {
            Ok(result) => jsonrpc::success(id, result),
            Err(error) => jsonrpc::failure(id, &error),
        };
        if let Some(object) = envelope.as_object_mut() {
            if self.fault(Fault::EnvelopeNoJsonrpc) {
                object.remove("jsonrpc");
            }
            if no_request_id && self.variant(super::Variant::IdOmitted) {
                object.remove("id");
            }
            if success && self.fault(Fault::EnvelopeResultAndError) {
                let error = ErrorObject::new(0, "no_error");
                object.insert("error".to_owned(), serde_json::json!(error));
            }
        }
        envelope
    }
}
