//! The wire's record types, shared by every side of the harness: which [`TransportKind`] a
//! message travelled over, and an [`Exchange`] (what was sent, what came back, or why nothing
//! came back). The client transports produce exchanges, the checks read them and the reports
//! print them; the reference server and the proxy speak of the same transports.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a case reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
pub enum TransportKind {
    /// HTTP GET with parameters in the query string.
    #[serde(rename = "http-query")]
    HttpQuery,
    /// HTTP GET with a JSON-RPC request body.
    #[serde(rename = "http-body")]
    HttpBody,
    /// JSON-RPC over WebSocket.
    #[serde(rename = "ws")]
    Ws,
    /// The Direct Access REST interface.
    #[serde(rename = "rest")]
    Rest,
}

impl TransportKind {
    /// Every transport, in report order.
    pub const ALL: [TransportKind; 4] = [
        TransportKind::HttpQuery,
        TransportKind::HttpBody,
        TransportKind::Ws,
        TransportKind::Rest,
    ];

    /// The JSON-RPC transports a case applies to when it does not say.
    pub const DEFAULT: [TransportKind; 3] = [
        TransportKind::HttpQuery,
        TransportKind::HttpBody,
        TransportKind::Ws,
    ];

    /// The name used in case files, reports and `--transport`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::HttpQuery => "http-query",
            TransportKind::HttpBody => "http-body",
            TransportKind::Ws => "ws",
            TransportKind::Rest => "rest",
        }
    }

    /// Parses a name as written on the command line.
    pub fn from_name(name: &str) -> Option<TransportKind> {
        TransportKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Whether the transport is HTTP (query, body or REST).
    pub fn is_http(self) -> bool {
        self != TransportKind::Ws
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request as it went on the wire.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SentRequest {
    /// `GET`, or `WS` for a WebSocket frame.
    pub method: String,
    /// The full URL.
    pub url: String,
    /// Headers the harness set.
    pub headers: Vec<(String, String)>,
    /// The body or frame, if any.
    pub body: Option<String>,
    /// The JSON-RPC id sent, if the request had one.
    pub id: Option<u64>,
}

/// An answer as it came off the wire; read back (from an events file) it is parsed again.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "ReceivedText")]
pub struct Received {
    /// HTTP status (none on WebSocket).
    pub status: Option<u16>,
    /// The body or frame as text; one that is not UTF-8 as its size, a digest and its
    /// first bytes in hex.
    pub body: String,
    /// The body parsed as JSON, when it is JSON.
    #[serde(skip)]
    pub json: Option<Value>,
    /// The envelope members the body names twice (which the parsed JSON cannot show; see
    /// [`crate::jsonrpc::duplicate_envelope_members`]).
    #[serde(skip)]
    pub duplicate_members: Vec<String>,
    /// The answer came in a binary WebSocket frame, not a text one.
    #[serde(skip)]
    pub binary_frame: bool,
}

/// One request and its answer, or what went wrong instead.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exchange {
    /// The transport used.
    pub transport: TransportKind,
    /// What was sent.
    pub request: SentRequest,
    /// What came back.
    pub response: Option<Received>,
    /// Why there is no answer.
    pub failure: Option<TransportError>,
    /// Milliseconds from sending to the answer.
    pub elapsed_ms: f64,
}

/// Why a call produced no answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportError {
    /// The kind of failure.
    pub kind: TransportErrorKind,
    /// What happened.
    pub message: String,
}

/// Kinds of transport failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportErrorKind {
    /// The target could not be reached at all: a harness error, not a verdict.
    Connect,
    /// No answer within the request timeout.
    Timeout,
    /// The connection closed before an answer.
    Closed,
    /// The answer exceeded the size cap, or a WebSocket sent more frames than the cap
    /// allows without one.
    TooLarge,
    /// The harness could not build the request (e.g. a bad URL).
    Request,
}

/// The two meanings of "no answer": whether anything can be judged of a request that got
/// none ([`TransportErrorKind::no_answer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoAnswer {
    /// Nothing came back: the request timed out, or no connection was made. There is
    /// nothing to judge: the harness reports an error, never a failure of the target.
    Silence,
    /// The connection was closed before an answer: the target dropped the request, which
    /// a check may judge.
    Dropped,
}

impl TransportErrorKind {
    /// Whether a failure of this kind means the target gave no answer at all, and which
    /// kind of no answer ([`NoAnswer`]); `None` for an answer too large or a request the
    /// harness could not build. The run's breaker counts both kinds.
    pub fn no_answer(self) -> Option<NoAnswer> {
        match self {
            TransportErrorKind::Timeout | TransportErrorKind::Connect => Some(NoAnswer::Silence),
            TransportErrorKind::Closed => Some(NoAnswer::Dropped),
            TransportErrorKind::TooLarge | TransportErrorKind::Request => None,
        }
    }
}

impl TransportError {
    /// A failure of this kind, with what happened.
    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> TransportError {
        TransportError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {}

/// The most of one answer body [`Exchange::for_record`] keeps: well above the
/// largest answer of the reference server (a 250-entry transaction-log page is about
/// 100 KB), so only a hostile or broken target's answers are cut.
pub const RECORDED_BODY_BYTES: usize = 256 * 1024;

impl Exchange {
    /// The parsed JSON of the answer, when one came and parsed.
    pub fn json(&self) -> Option<&Value> {
        self.response
            .as_ref()
            .and_then(|received| received.json.as_ref())
    }

    /// The exchange as results and reports keep it: an answer body over `cap` bytes is cut at a
    /// character boundary, marked as cut, and its parsed JSON dropped. Checks see the whole
    /// answer; only what outlives the step is bounded, so a run against a target that sends
    /// huge answers holds at most `cap` bytes per exchange instead of the size cap of
    /// the transports' `RequestLimits`.
    pub fn for_record(mut self, cap: usize) -> Exchange {
        if let Some(received) = self.response.as_mut()
            && received.body.len() > cap
        {
            let total = received.body.len();
            let mut end = cap;
            while !received.body.is_char_boundary(end) {
                end -= 1;
            }
            // A new string, not `truncate`: a truncated string keeps its whole allocation, so
            // every kept answer would still hold the megabytes it was cut from.
            received.body = format!("{} [cut: {total} bytes in all]", &received.body[..end]);
            received.json = None;
        }
        self
    }
}

/// What a [`Received`] is written as: its JSON is parsed again from the text when read.
#[derive(Deserialize)]
struct ReceivedText {
    status: Option<u16>,
    body: String,
}

impl From<ReceivedText> for Received {
    fn from(text: ReceivedText) -> Received {
        Received::from_bytes(text.status, text.body.into_bytes())
    }
}

impl Received {
    /// The answer from the bytes read, parsed once; the bytes become the kept text without
    /// a copy when they are UTF-8 (as JSON must be), and are copied lossily otherwise.
    pub fn from_bytes(status: Option<u16>, bytes: Vec<u8>) -> Received {
        let json = serde_json::from_slice(&bytes).ok().or_else(|| {
            let surrogates = lone_surrogates_replaced(&bytes);
            let read = surrogates.as_deref().unwrap_or(&bytes);
            let numbers = huge_numbers_bounded(read);
            if surrogates.is_none() && numbers.is_none() {
                return None;
            }
            serde_json::from_slice(numbers.as_deref().unwrap_or(read)).ok()
        });
        let duplicate_members = if json.as_ref().is_some_and(Value::is_object) {
            crate::jsonrpc::duplicate_envelope_members(&bytes)
        } else {
            Vec::new()
        };
        let body =
            String::from_utf8(bytes).unwrap_or_else(|error| binary_summary(error.as_bytes()));
        Received {
            status,
            body,
            json,
            duplicate_members,
            binary_frame: false,
        }
    }
}

/// What is kept of an answer that is not UTF-8 (a compressed body, bytes of another
/// encoding): its size, a digest and its first bytes in hex, never the bytes escaped whole
/// (a megabyte of gzip escapes to several in a report). It cannot be JSON (RFC 8259 8.1).
fn binary_summary(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = hex::encode(sha2::Sha256::digest(bytes));
    let head = hex::encode(&bytes[..bytes.len().min(BINARY_HEAD_BYTES)]);
    format!(
        "[not UTF-8: {} bytes, sha256 {}, first bytes {head}]",
        bytes.len(),
        &digest[..16]
    )
}

/// The first bytes of a binary answer kept, in hex.
const BINARY_HEAD_BYTES: usize = 16;

/// JSON text with each `\u` escape of a UTF-16 surrogate written as `\ufffd`, when it has
/// one: RFC 8259's grammar allows an escaped lone surrogate (JavaScript's `JSON.stringify`
/// writes one for a string that holds it), which serde_json refuses to read into a string.
/// Escaped pairs become two replacement characters, which judging an answer does not mind.
fn lone_surrogates_replaced(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut replaced = false;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\' && at + 1 < bytes.len() {
            let escape = &bytes[at..(at + 6).min(bytes.len())];
            let surrogate = escape.len() == 6
                && escape[1] == b'u'
                && std::str::from_utf8(&escape[2..])
                    .ok()
                    .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                    .is_some_and(|unit| (0xD800..=0xDFFF).contains(&unit));
            if surrogate {
                out.extend_from_slice(b"\\ufffd");
                replaced = true;
                at += 6;
            } else {
                out.extend_from_slice(&bytes[at..at + 2]);
                at += 2;
            }
            continue;
        }
        out.push(bytes[at]);
        at += 1;
    }
    replaced.then_some(out)
}

/// JSON text with each number beyond f64's range (a 400-digit integer, `1e400`) written as
/// the largest power of ten f64 holds, in the same form (an integer stays an integer
/// literal, sign kept), when it has one: RFC 8259 6 sets no limit on a number's size, and
/// serde_json refuses to read one it cannot hold. Judging an answer needs what a value is
/// (a number, an integer), not its digits: such a number echoes no request id and fits no
/// schema bound either way. `None` when no number needed it.
fn huge_numbers_bounded(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut bounded = false;
    let mut in_string = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            out.push(byte);
            match byte {
                b'\\' if at + 1 < bytes.len() => {
                    out.push(bytes[at + 1]);
                    at += 2;
                    continue;
                }
                b'"' => in_string = false,
                _ => {}
            }
            at += 1;
            continue;
        }
        if byte == b'"' {
            in_string = true;
            out.push(byte);
            at += 1;
            continue;
        }
        if byte != b'-' && !byte.is_ascii_digit() {
            out.push(byte);
            at += 1;
            continue;
        }
        let end = bytes[at..]
            .iter()
            .position(|byte| !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .map_or(bytes.len(), |length| at + length);
        let literal = &bytes[at..end];
        let overflows = std::str::from_utf8(literal)
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .is_some_and(f64::is_infinite);
        if overflows {
            bounded = true;
            if literal[0] == b'-' {
                out.push(b'-');
            }
            if literal
                .iter()
                .any(|byte| matches!(byte, b'.' | b'e' | b'E'))
            {
                out.extend_from_slice(b"1e308");
            } else {
                out.push(b'1');
                out.extend(std::iter::repeat_n(b'0', 308));
            }
        } else {
            out.extend_from_slice(literal);
        }
        at = end;
    }
    bounded.then_some(out)
}

/// A query-string value for a JSON parameter value.
pub fn query_value(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(number.to_string()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_escaped_lone_surrogate_is_json_read_with_a_replacement_character() {
        let answer = br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"\udc00\\ud800"}}"#;
        let received = Received::from_bytes(Some(200), answer.to_vec());
        let json = received.json.expect("read as JSON");
        assert_eq!(json["error"]["message"], "\u{fffd}\\ud800");
        assert!(
            Received::from_bytes(None, b"{\"a\":".to_vec())
                .json
                .is_none()
        );
    }

    use super::*;

    #[test]
    fn a_number_beyond_f64_is_still_json_read_as_a_number_of_its_form() {
        let digits = "9".repeat(1_000_000);
        let answer = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{digits}}}"#);
        let json = Received::from_bytes(None, answer.into_bytes())
            .json
            .expect("read as JSON");
        assert!(json["result"].is_f64() && json["result"].as_f64().unwrap() >= 1e308);
        let subject = format!("-{}", "4".repeat(400));
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":2,"error":{{"code":1,"message":"no \"{subject}\"","data":{{"subject_id":{subject},"x":1e999}}}}}}"#
        );
        let json = Received::from_bytes(None, answer.into_bytes())
            .json
            .expect("read as JSON");
        assert!(json["error"]["data"]["subject_id"].as_f64().unwrap() <= -1e308);
        assert_eq!(json["error"]["data"]["x"].as_f64(), Some(1e308));
        assert_eq!(json["error"]["message"], format!("no \"{subject}\""));
        assert_eq!(json["id"], 2);
        // Not JSON stays not JSON.
        assert!(
            Received::from_bytes(None, format!("[{digits}").into_bytes())
                .json
                .is_none()
        );
    }

    #[test]
    fn an_answer_that_is_not_utf8_is_kept_as_size_digest_and_first_bytes() {
        let mut gzip = vec![0x1f, 0x8b, 0x08, 0x00];
        gzip.extend((0..100_000u32).map(|index| (index % 251) as u8 | 0x80));
        let received = Received::from_bytes(Some(200), gzip);
        assert!(received.json.is_none());
        assert!(
            received
                .body
                .starts_with("[not UTF-8: 100004 bytes, sha256 "),
            "{}",
            received.body
        );
        assert!(
            received.body.contains("first bytes 1f8b08008081"),
            "{}",
            received.body
        );
        assert!(received.body.len() < 120, "{}", received.body.len());
    }

    fn exchange(body: &str) -> Exchange {
        Exchange {
            transport: TransportKind::Ws,
            request: SentRequest::default(),
            response: Some(Received::from_bytes(None, body.as_bytes().to_vec())),
            failure: None,
            elapsed_ms: 0.0,
        }
    }

    #[test]
    fn recorded_copy_cuts_a_long_answer_at_a_character_boundary() {
        let long = format!("\"{}\"", "é".repeat(100));
        let recorded = exchange(&long).for_record(10);
        let received = recorded.response.unwrap();
        assert_eq!(received.body, "\"éééé [cut: 202 bytes in all]");
        assert!(received.json.is_none());
    }

    #[test]
    fn recorded_copy_of_a_long_answer_frees_what_it_cut() {
        let recorded = exchange(&"a".repeat(1 << 20)).for_record(1024);
        let body = recorded.response.unwrap().body;
        assert!(
            body.capacity() <= 4 * 1024,
            "{} bytes still held",
            body.capacity()
        );
    }

    #[test]
    fn recorded_copy_keeps_a_short_answer_whole() {
        let recorded = exchange("{\"result\": 1}").for_record(1024);
        let received = recorded.response.unwrap();
        assert_eq!(received.body, "{\"result\": 1}");
        assert!(received.json.is_some());
    }
}
