//! WebSocket transport: one connection per session, one request in flight at a time from
//! the runner's side, or several at once ([`WsSession::call_in_flight`]), their answers
//! matched by id in whatever order they come.
//!
//! While waiting for an answer the session skips frames that are not answers: pings
//! (tungstenite answers them), and notifications (a `method` and no `id`, which SPEC.md
//! section 6 says a server pushes after a subscription). A frame that looks like an answer
//! but carries another id is taken as the answer, so the envelope check reports the wrong
//! id instead of the run waiting for a timeout. Skipped frames are capped in number.
//!
//! A session connects as the [`Dialer`] says: directly or through a proxy's `CONNECT`
//! tunnel, then TLS for `wss://` with the dialer's configuration, then the WebSocket
//! handshake. Its bytes are read through a frame count (`ws/frames.rs`): a message is
//! bounded in frames as tungstenite bounds it in bytes, so empty continuation frames end
//! the call at once, named, instead of keeping it busy until its timeout; and a message's
//! payload is read only with room for it in the process's budget of answers in flight
//! (`in_flight.rs`), so sessions side by side cannot each assemble a message of the cap.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::dial::{Dialer, authority};
use super::{Outgoing, RequestLimits, tls};
use frames::{FrameCounted, FrameFlood, MAX_FRAMES_PER_MESSAGE};
use harness_protocol::jsonrpc;
use harness_protocol::spec;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::Received;
use harness_protocol::wire::SentRequest;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

mod frames;

/// How many non-answer frames a call skips before giving up.
const MAX_SKIPPED_FRAMES: usize = 10_000;

/// One WebSocket connection.
#[derive(Debug)]
pub struct WsSession {
    url: String,
    stream: WebSocketStream<FrameCounted<Box<dyn Io>>>,
    /// The local address of the connection's socket.
    local: Option<std::net::SocketAddr>,
    limits: RequestLimits,
    /// Notifications seen while waiting for answers.
    pub notifications: usize,
    /// Whether a request on this connection has carried `params.access_token` or asked for
    /// a token ([`may_give_a_token`]).
    may_remember_token: bool,
}

impl WsSession {
    /// The local address of the connection's socket (how the reference's arrivals name it).
    pub(crate) fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.local
    }

    /// Connects as `dialer` says, within the request timeout.
    pub async fn connect(
        url: &str,
        limits: RequestLimits,
        dialer: &Dialer,
    ) -> Result<WsSession, TransportError> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(limits.max_response_bytes))
            .max_frame_size(Some(limits.max_response_bytes));
        let connecting = async {
            let socket = dialer
                .open_tcp(url)
                .await
                .map_err(|error| error.to_string())?;
            let local = socket.local_addr().ok();
            let failed = |error: &(dyn std::error::Error + 'static)| {
                let reason = tls::describe_failure(error, &authority(url))
                    .unwrap_or_else(|| error.to_string());
                format!("failed to connect to {url}: {reason}")
            };
            let io: Box<dyn Io> = if url.starts_with("wss://") {
                let name = server_name(url)
                    .ok_or_else(|| format!("failed to connect to {url}: no host name"))?;
                let connector = tokio_rustls::TlsConnector::from(dialer.tls.clone());
                let tls = connector
                    .connect(name, socket)
                    .await
                    .map_err(|error| failed(&error))?;
                Box::new(tls)
            } else {
                Box::new(socket)
            };
            let counted = FrameCounted::new(io, MAX_FRAMES_PER_MESSAGE, limits.max_response_bytes);
            let (stream, _) =
                tokio_tungstenite::client_async_with_config(url, counted, Some(config))
                    .await
                    .map_err(|error| failed(&error))?;
            Ok::<_, String>((stream, local))
        };
        match tokio::time::timeout(limits.request_timeout, connecting).await {
            Ok(Ok((stream, local))) => Ok(WsSession {
                url: url.to_owned(),
                stream,
                local,
                limits,
                notifications: 0,
                may_remember_token: false,
            }),
            Ok(Err(message)) => Err(TransportError::new(TransportErrorKind::Connect, message)),
            // Connected, or still connecting, but no answer: the target's silence, not a
            // refusal.
            Err(_) => Err(TransportError::new(
                TransportErrorKind::Timeout,
                format!("failed to connect to {url}: no handshake within the timeout"),
            )),
        }
    }

    /// Whether a request on this connection has carried `params.access_token` or asked
    /// for a token (a login, an exchange, a fork): a token the server may remember for
    /// the connection (SPEC.md 5.2 says so of a session token; whether of another is open).
    pub fn may_remember_token(&self) -> bool {
        self.may_remember_token
    }

    /// The frame of a request, and how it is recorded.
    fn frame(&mut self, id: u64, outgoing: &Outgoing) -> (String, SentRequest) {
        self.may_remember_token |= may_give_a_token(outgoing);
        let text = outgoing
            .raw
            .clone()
            .unwrap_or_else(|| jsonrpc::request_text(id, &outgoing.method, &outgoing.params));
        let request = SentRequest {
            method: "WS".to_owned(),
            url: self.url.clone(),
            headers: Vec::new(),
            body: Some(text.clone()),
            id: outgoing.raw.is_none().then_some(id),
        };
        (text, request)
    }

    /// Sends each request in turn by `deadline`; the requests sent, and the failure that
    /// stopped the sending, if one did.
    async fn send_all(
        &mut self,
        requests: &[(u64, &Outgoing)],
        deadline: Instant,
    ) -> (Vec<SentRequest>, Option<TransportError>) {
        let mut sent = Vec::with_capacity(requests.len());
        for &(id, outgoing) in requests {
            let (text, request) = self.frame(id, outgoing);
            sent.push(request);
            let send = self.stream.send(Message::text(text));
            match tokio::time::timeout_at(deadline.into(), send).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    let failure = TransportError::new(
                        TransportErrorKind::Closed,
                        format!("failed to send on {}: {error}", self.url),
                    );
                    return (sent, Some(failure));
                }
                Err(_) => {
                    let failure = TransportError::new(
                        TransportErrorKind::Timeout,
                        format!("sending on {} timed out", self.url),
                    );
                    return (sent, Some(failure));
                }
            }
        }
        (sent, None)
    }

    /// Sends several requests at once, then reads their answers in whatever order they
    /// come and matches each to its request by id. An answer whose id matches no request
    /// still waiting goes to the first request left without one, so the envelope check
    /// reports the wrong id; a request left without any answer gets the failure that ended
    /// the reading. One exchange per request, in request order.
    pub(crate) async fn call_in_flight(&mut self, requests: &[(u64, &Outgoing)]) -> Vec<Exchange> {
        let started = Instant::now();
        let deadline = started + self.limits.request_timeout;
        let (sent, mut failure) = self.send_all(requests, deadline).await;
        let mut answers: Vec<Option<(Received, f64)>> = vec![None; sent.len()];
        let mut stray = Vec::new();
        while failure.is_none()
            && answers.iter().filter(|answer| answer.is_some()).count() + stray.len() < sent.len()
        {
            match self.answer(deadline).await {
                Ok(received) => {
                    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                    let id = received
                        .json
                        .as_ref()
                        .and_then(|json| json.get("id"))
                        .and_then(Value::as_u64);
                    let slot = sent.iter().zip(&answers).position(|(request, answer)| {
                        answer.is_none() && request.id.is_some() && request.id == id
                    });
                    match slot {
                        Some(slot) => answers[slot] = Some((received, elapsed_ms)),
                        None => stray.push((received, elapsed_ms)),
                    }
                }
                Err(error) => failure = Some(error),
            }
        }
        let mut stray = stray.into_iter();
        for answer in &mut answers {
            if answer.is_none() {
                *answer = stray.next();
            }
        }
        sent.into_iter()
            .zip(answers)
            .map(|(request, answer)| match answer {
                Some((received, elapsed_ms)) => Exchange {
                    transport: TransportKind::Ws,
                    request,
                    response: Some(received),
                    failure: None,
                    elapsed_ms,
                },
                None => Exchange {
                    transport: TransportKind::Ws,
                    request,
                    response: None,
                    failure: Some(failure.clone().unwrap_or_else(|| {
                        TransportError::new(
                            TransportErrorKind::Closed,
                            format!("{} sent no answer to this request", self.url),
                        )
                    })),
                    elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                },
            })
            .collect()
    }

    /// Sends one request (or raw frame) and waits for its answer.
    pub async fn call(&mut self, id: u64, outgoing: &Outgoing) -> Exchange {
        let (text, request) = self.frame(id, outgoing);
        let started = Instant::now();
        let deadline = started + self.limits.request_timeout;
        let outcome =
            match tokio::time::timeout_at(deadline.into(), self.stream.send(Message::text(text)))
                .await
            {
                Ok(Ok(())) => self.answer(deadline).await,
                Ok(Err(error)) => Err(TransportError::new(
                    TransportErrorKind::Closed,
                    format!("failed to send on {}: {error}", self.url),
                )),
                Err(_) => Err(TransportError::new(
                    TransportErrorKind::Timeout,
                    format!("sending on {} timed out", self.url),
                )),
            };
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        match outcome {
            Ok(received) => Exchange {
                transport: TransportKind::Ws,
                request,
                response: Some(received),
                failure: None,
                elapsed_ms,
            },
            Err(failure) => Exchange {
                transport: TransportKind::Ws,
                request,
                response: None,
                failure: Some(failure),
                elapsed_ms,
            },
        }
    }

    /// Writes the frame of a request but for its last byte, which it returns with how the
    /// request is recorded: the first half of a race's release (`race.rs`). The frame is
    /// written on the socket under tungstenite, which has nothing of its own buffered
    /// before the first request, and is whole once [`WsSession::release`] writes the byte.
    pub(crate) async fn hold(
        &mut self,
        id: u64,
        outgoing: &Outgoing,
    ) -> Result<(u8, SentRequest), TransportError> {
        let (text, request) = self.frame(id, outgoing);
        let mut frame = masked_text_frame(text.as_bytes(), rand::random());
        let last = frame.pop().unwrap_or_default();
        let io = self.stream.get_mut();
        let written = async {
            io.write_all(&frame).await?;
            io.flush().await
        };
        written.await.map_err(|error| {
            TransportError::new(
                TransportErrorKind::Closed,
                format!("failed to send on {}: {error}", self.url),
            )
        })?;
        Ok((last, request))
    }

    /// Writes the last byte [`WsSession::hold`] kept back.
    pub(crate) async fn release(&mut self, last: u8) -> Result<(), TransportError> {
        let io = self.stream.get_mut();
        let written = async {
            io.write_all(&[last]).await?;
            io.flush().await
        };
        written.await.map_err(|error| {
            TransportError::new(
                TransportErrorKind::Closed,
                format!("failed to send on {}: {error}", self.url),
            )
        })
    }

    /// Waits for the answer to the request released last, as [`WsSession::call`] does.
    pub(crate) async fn answer_by(
        &mut self,
        deadline: Instant,
    ) -> Result<Received, TransportError> {
        self.answer(deadline).await
    }

    async fn answer(&mut self, deadline: Instant) -> Result<Received, TransportError> {
        for _ in 0..MAX_SKIPPED_FRAMES {
            let frame = match tokio::time::timeout_at(deadline.into(), self.stream.next()).await {
                Err(_) => {
                    return Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        format!(
                            "no answer on {} within {:?}",
                            self.url, self.limits.request_timeout
                        ),
                    ));
                }
                Ok(None) => {
                    return Err(TransportError::new(
                        TransportErrorKind::Closed,
                        format!("{} closed the connection before answering", self.url),
                    ));
                }
                Ok(Some(Err(error))) => {
                    use tokio_tungstenite::tungstenite::Error;
                    let flood = match &error {
                        Error::Io(io) => io
                            .get_ref()
                            .and_then(|inner| inner.downcast_ref::<FrameFlood>()),
                        _ => None,
                    };
                    // Not silence: the target sent more than a message may hold.
                    let kind = if flood.is_some() || matches!(error, Error::Capacity(_)) {
                        TransportErrorKind::TooLarge
                    } else {
                        TransportErrorKind::Closed
                    };
                    let message = match flood {
                        Some(flood) => format!("{} sent {flood}", self.url),
                        None => format!("{}: {error}", self.url),
                    };
                    return Err(TransportError::new(kind, message));
                }
                Ok(Some(Ok(frame))) => frame,
            };
            let binary_frame = matches!(frame, Message::Binary(_));
            let bytes = match frame {
                // The frame's buffer becomes the kept text's: `Bytes` gives its allocation
                // up when it holds the only reference, so the answer is not copied.
                Message::Text(text) => Vec::from(tokio_tungstenite::tungstenite::Bytes::from(text)),
                Message::Binary(bytes) => Vec::from(bytes),
                Message::Close(_) => {
                    return Err(TransportError::new(
                        TransportErrorKind::Closed,
                        format!("{} sent close before answering", self.url),
                    ));
                }
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            };
            let received = Received {
                binary_frame,
                ..Received::from_bytes(None, bytes)
            };
            if received.json.as_ref().is_some_and(is_notification) {
                self.notifications += 1;
                continue;
            }
            return Ok(received);
        }
        // Not silence: the target sent more than the cap allows, so a finding, not an error.
        Err(TransportError::new(
            TransportErrorKind::TooLarge,
            format!(
                "{} sent {MAX_SKIPPED_FRAMES} frames without an answer",
                self.url
            ),
        ))
    }

    /// Reads what the server pushes, with no request awaiting an answer, until the
    /// connection has been pushed `at_least` notifications in all
    /// ([`WsSession::notifications`]) or `deadline` has passed; a deadline already past
    /// still takes the frames that are in. Frames other than notifications are dropped, a
    /// closed connection ends the reading, and at most [`MAX_SKIPPED_FRAMES`] are read.
    /// Returns the count.
    pub(crate) async fn listen(&mut self, at_least: usize, deadline: Instant) -> usize {
        for _ in 0..MAX_SKIPPED_FRAMES {
            if self.notifications >= at_least {
                break;
            }
            // The stream is polled before the deadline is: a frame already in is read.
            let frame = match tokio::time::timeout_at(deadline.into(), self.stream.next()).await {
                Ok(Some(Ok(frame))) => frame,
                _ => break,
            };
            let json = match frame {
                Message::Text(text) => serde_json::from_str::<Value>(&text).ok(),
                Message::Binary(bytes) => serde_json::from_slice::<Value>(&bytes).ok(),
                Message::Close(_) => break,
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => None,
            };
            if json.as_ref().is_some_and(is_notification) {
                self.notifications += 1;
            }
        }
        self.notifications
    }

    /// Closes the connection politely (bounded by the request timeout).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(500), self.stream.close(None)).await;
    }
}

/// The byte stream under a session: a TCP socket, or TLS over one.
trait Io: AsyncRead + AsyncWrite + Unpin + Send + Sync {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + Sync> Io for T {}

/// The TLS server name of a `wss://` URL's host.
fn server_name(url: &str) -> Option<rustls::pki_types::ServerName<'static>> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?.trim_matches(['[', ']']).to_owned();
    rustls::pki_types::ServerName::try_from(host).ok()
}

/// A client's text frame (RFC 6455 5.2): FIN and opcode 1, the payload length, and the
/// payload masked with `mask`, as a client must send it.
fn masked_text_frame(payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(payload.len() + 14);
    frame.push(0x81);
    match payload.len() {
        length @ 0..=125 => frame.push(0x80 | length as u8),
        length @ 126..=0xFFFF => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(length as u16).to_be_bytes());
        }
        length => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(length as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(
        payload
            .iter()
            .zip(mask.iter().cycle())
            .map(|(byte, key)| byte ^ key),
    );
    frame
}

/// A server-pushed notification: a `method`, and no `id`, `result` or `error`.
fn is_notification(value: &Value) -> bool {
    value.get("method").is_some()
        && value.get("id").is_none()
        && value.get("result").is_none()
        && value.get("error").is_none()
}

/// Whether `outgoing` hands the connection a token it may remember: it carries
/// `params.access_token`, or calls a method that issues one (`public/auth`,
/// `public/exchange_token`, `public/fork_token`). A raw text is read as JSON where it
/// parses (its `\u` escapes decoded), else searched as text; the method it was made for
/// counts too.
fn may_give_a_token(outgoing: &Outgoing) -> bool {
    const ISSUERS: [&str; 3] = [
        spec::AUTH_METHOD,
        spec::EXCHANGE_TOKEN_METHOD,
        spec::FORK_TOKEN_METHOD,
    ];
    let gives = |method: &str, params: Option<&Map<String, Value>>| {
        ISSUERS.contains(&method)
            || params.is_some_and(|params| params.contains_key("access_token"))
    };
    if gives(&outgoing.method, Some(&outgoing.params)) {
        return true;
    }
    let Some(raw) = outgoing.raw.as_deref() else {
        return false;
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(body)) => gives(
            body.get("method")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            body.get("params").and_then(Value::as_object),
        ),
        _ => raw.contains("access_token") || ISSUERS.iter().any(|method| raw.contains(method)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outgoing(method: &str, params: Value, raw: Option<&str>) -> Outgoing {
        Outgoing {
            method: method.to_owned(),
            params: params.as_object().cloned().unwrap_or_default(),
            raw: raw.map(str::to_owned),
            authorization: None,
        }
    }

    #[test]
    fn a_token_passed_or_asked_for_may_be_remembered() {
        let private = "private/get_mmp_status";
        assert!(!may_give_a_token(&outgoing(private, json!({}), None)));
        assert!(may_give_a_token(&outgoing(
            private,
            json!({"access_token": "t"}),
            None
        )));
        // A login on the connection: a server may remember the token it issues there
        // (the `ws-remembers-any-token` variant does, whatever its scope).
        for issuer in [
            spec::AUTH_METHOD,
            spec::EXCHANGE_TOKEN_METHOD,
            spec::FORK_TOKEN_METHOD,
        ] {
            assert!(may_give_a_token(&outgoing(issuer, json!({}), None)));
        }
        // Raw texts: read as JSON, escapes decoded; else as text.
        let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"public\/\u0061uth","params":{}}"#;
        assert!(may_give_a_token(&outgoing("", json!({}), Some(escaped))));
        let token = r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"\u0061ccess_token":"t"}}"#;
        assert!(may_give_a_token(&outgoing("", json!({}), Some(token))));
        let plain = r#"{"jsonrpc":"2.0","id":1,"method":"private/get_mmp_status","params":{}}"#;
        assert!(!may_give_a_token(&outgoing("", json!({}), Some(plain))));
        assert!(may_give_a_token(&outgoing(
            "",
            json!({}),
            Some("{\"access_token\": [1,")
        )));
    }
}
