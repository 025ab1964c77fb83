//! A hostile target: raw TCP listeners on 127.0.0.1 that front the reference server and
//! misbehave in one chosen way, so the harness can be run against each misbehaviour.
//!
//! The HTTP listener parses requests by hand and writes answers byte by byte, which is
//! what it takes to send an endless body, close mid-answer or answer with something that is
//! not HTTP. The WebSocket listener completes the handshake with tungstenite and then
//! writes frames itself where tungstenite would refuse to (invalid UTF-8, a frame cut
//! short). Correct answers come from a real reference server behind it, so a behaviour
//! that should be tolerated is checked against the whole suite, not against a stub.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::serve;
use harness::target_file::Target;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// The pause between the bytes of a trickled answer.
const TRICKLE: Duration = Duration::from_millis(50);

/// How the hostile server answers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Behaviour {
    /// Reads requests and never answers.
    Silent,
    /// Answers correctly, this long after the request.
    Slow(Duration),
    /// Starts a correct answer at once, then sends it one byte every 50 ms.
    Trickle,
    /// An HTTP body (chunked) or WebSocket message (continuation frames) that never ends.
    Endless,
    /// An HTTP body without a length, delimited by the connection's close, that never ends
    /// (WebSocket as [`Behaviour::Endless`]).
    EndlessClose,
    /// The first byte of the answer in a WebSocket text frame without FIN, then empty
    /// continuation frames (legal, two bytes each) forever; HTTP answers as it should.
    EmptyContinuations,
    /// An answer of this many bytes, sent as fast as the client reads.
    Oversized(usize),
    /// A correct answer carrying an extra member that pads it to about this many bytes.
    Padded(usize),
    /// An answer whose bytes are not UTF-8.
    InvalidUtf8,
    /// An HTTP body of this many bytes marked `Content-Encoding: gzip`: gzip's magic, then
    /// bytes that are not UTF-8 (WebSocket answers as it should).
    Gzip(usize),
    /// An HTML page instead of JSON.
    NotJson,
    /// The answer carries the request's id plus one.
    WrongId,
    /// The answer's `id` and `result` (or `error`) each named 50,000 times (900 KB, under
    /// the runs' cap), the right ones last (the value a reader keeping the last name sees
    /// is the right answer).
    DuplicateMembers,
    /// The right answer with an extra member holding an integer of this many digits (still
    /// JSON).
    HugeInteger(usize),
    /// The right answer in a binary frame (WebSocket; HTTP answers as it should).
    BinaryFrame,
    /// Every answer is sent twice (WebSocket).
    DuplicateAnswer,
    /// This many subscription notifications before every answer (WebSocket).
    Notifications(usize),
    /// Notifications and never an answer (WebSocket).
    NotificationFlood,
    /// This many pings before every answer (WebSocket).
    Pings(usize),
    /// Pings and never an answer (WebSocket).
    PingFlood,
    /// Half of the answer, then the connection closes.
    CloseMidAnswer,
    /// A close frame instead of the answer (WebSocket).
    CloseFrame,
    /// The correct envelope with this HTTP status.
    Status(u16),
    /// HTTP 500 with a plain-text body.
    ServerError,
    /// HTTP 404 with a JSON-RPC `method_not_found` envelope.
    NotFound,
    /// Bytes that are not HTTP at all, then the connection closes.
    NotHttp,
    /// The WebSocket upgrade is answered with HTTP 500.
    RefuseUpgrade,
    /// The WebSocket upgrade is never answered.
    NoHandshake,
    /// The target file says `https://` and `wss://`; both ports answer the TLS handshake
    /// with bytes that are not TLS, then close.
    TlsGarbage,
}

/// A running hostile server and the reference server behind it.
pub(crate) struct Hostile {
    reference: serve::Running,
    target: Target,
    listeners: JoinSet<()>,
}

impl Hostile {
    /// Starts the reference server and, in front of it, an HTTP and a WebSocket listener.
    pub(crate) async fn start(behaviour: Behaviour) -> Hostile {
        Hostile::start_with(behaviour, false).await
    }

    /// [`Hostile::start`], the first request over each listener answered as it should
    /// when `honest_first` (as an attacker would, so the harness's first call finds the
    /// target up).
    pub(crate) async fn start_with(behaviour: Behaviour, honest_first: bool) -> Hostile {
        let reference = serve::start(serve::ServeConfig::loopback())
            .await
            .expect("reference server starts");
        let upstream = reference.target();
        let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ws = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (http_addr, ws_addr) = (http.local_addr().unwrap(), ws.local_addr().unwrap());
        let origin = format!("http://{}", reference.addr);
        let upstream_ws = upstream.ws_url.clone().unwrap();
        let mut listeners = JoinSet::new();
        let honest_http = Arc::new(AtomicBool::new(honest_first));
        let honest_ws = Arc::new(AtomicBool::new(honest_first));
        listeners.spawn(accept(http, move |stream| {
            serve_http(stream, behaviour, origin.clone(), honest_http.clone())
        }));
        listeners.spawn(accept(ws, move |stream| {
            serve_ws(stream, behaviour, upstream_ws.clone(), honest_ws.clone())
        }));
        let (http_scheme, ws_scheme) = match behaviour {
            Behaviour::TlsGarbage => ("https", "wss"),
            _ => ("http", "ws"),
        };
        let target = Target {
            name: format!("hostile {behaviour:?}"),
            base_url: format!("{http_scheme}://{http_addr}/api/v2"),
            ws_url: Some(format!("{ws_scheme}://{ws_addr}/ws/api/v2")),
            direct_access_url: Some(format!("{http_scheme}://{http_addr}/direct")),
            ..upstream
        };
        Hostile {
            reference,
            target,
            listeners,
        }
    }

    /// The target file's view of the hostile server.
    pub(crate) fn target(&self) -> Target {
        self.target.clone()
    }

    /// Stops both listeners, every connection they hold, and the reference server.
    pub(crate) async fn stop(mut self) {
        self.listeners.shutdown().await;
        self.reference.shutdown().await;
    }
}

/// Accepts connections until aborted; dropping the set aborts every connection task.
async fn accept<F, Fut>(listener: TcpListener, serve_one: F)
where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    while let Ok((stream, _)) = listener.accept().await {
        connections.spawn(serve_one(stream));
        while connections.try_join_next().is_some() {}
    }
}

/// One HTTP request as read off the socket.
struct HttpRequest {
    target: String,
    authorization: Option<String>,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> Option<HttpRequest> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 * 1024 || stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let target = lines.next()?.split(' ').nth(1)?.to_owned();
    let mut length = 0;
    let mut authorization = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().ok()?,
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(HttpRequest {
        target,
        authorization,
        body,
    })
}

/// The reference server's answer to the same request.
async fn forward(origin: &str, request: &HttpRequest) -> (u16, Vec<u8>) {
    let mut builder = reqwest::Client::new().get(format!("{origin}{}", request.target));
    if let Some(value) = &request.authorization {
        builder = builder.header("Authorization", value);
    }
    if !request.body.is_empty() {
        builder = builder
            .header("Content-Type", "application/json")
            .body(request.body.clone());
    }
    let response = builder.send().await.expect("reference answers");
    let status = response.status().as_u16();
    (status, response.bytes().await.unwrap().to_vec())
}

fn head(status: u16, content_type: &str, length: usize) -> Vec<u8> {
    format!("HTTP/1.1 {status} Hostile\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n")
        .into_bytes()
}

/// Answers as it should once, the first time it is asked, if `honest` still says so.
fn this_time(behaviour: Behaviour, honest: &AtomicBool) -> Behaviour {
    if honest.swap(false, Ordering::SeqCst) {
        Behaviour::Slow(Duration::ZERO)
    } else {
        behaviour
    }
}

async fn serve_http(
    mut stream: TcpStream,
    behaviour: Behaviour,
    origin: String,
    honest: Arc<AtomicBool>,
) {
    if matches!(behaviour, Behaviour::TlsGarbage) {
        return not_tls(stream).await;
    }
    while let Some(request) = read_request(&mut stream).await {
        let behaviour = this_time(behaviour, &honest);
        if matches!(behaviour, Behaviour::Silent) {
            // Hold the connection until the client gives up on it.
            drain(&mut stream).await;
            return;
        }
        let (status, body) = forward(&origin, &request).await;
        let json = "application/json";
        let answer = match behaviour {
            Behaviour::Slow(delay) => {
                tokio::time::sleep(delay).await;
                [head(status, json, body.len()), body].concat()
            }
            Behaviour::Trickle => {
                let answer = [head(status, json, body.len()), body].concat();
                for byte in answer {
                    if stream.write_all(&[byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(TRICKLE).await;
                }
                continue;
            }
            Behaviour::Endless => {
                let opening = b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": \"".to_vec();
                let chunked = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
                let mut out = chunked.as_bytes().to_vec();
                out.extend(format!("{:x}\r\n", opening.len()).as_bytes());
                out.extend(opening);
                out.extend(b"\r\n");
                if stream.write_all(&out).await.is_err() {
                    return;
                }
                let chunk = [
                    format!("{:x}\r\n", 16 * 1024).into_bytes(),
                    vec![b'a'; 16 * 1024],
                    b"\r\n".to_vec(),
                ]
                .concat();
                while stream.write_all(&chunk).await.is_ok() {}
                return;
            }
            Behaviour::EndlessClose => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": \"";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'a'; 64 * 1024];
                while stream.write_all(&chunk).await.is_ok() {}
                return;
            }
            Behaviour::Gzip(size) => {
                let body = not_utf8(size);
                let head = format!(
                    "HTTP/1.1 {status} Hostile\r\nContent-Type: {json}\r\nContent-Encoding: gzip\r\nContent-Length: {size}\r\n\r\n"
                );
                [head.into_bytes(), body].concat()
            }
            Behaviour::Oversized(size) => {
                let _ = stream.write_all(&head(200, json, size)).await;
                let chunk = vec![b' '; 64 * 1024];
                let mut sent = 0;
                while sent < size && stream.write_all(&chunk).await.is_ok() {
                    sent += chunk.len();
                }
                return;
            }
            Behaviour::Padded(size) => {
                let body = padded(&body, size);
                [head(status, json, body.len()), body].concat()
            }
            Behaviour::InvalidUtf8 => {
                let body = invalid_utf8(&body);
                [head(status, json, body.len()), body].concat()
            }
            Behaviour::NotJson => {
                let page = b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec();
                [head(200, "text/html", page.len()), page].concat()
            }
            Behaviour::WrongId | Behaviour::DuplicateMembers | Behaviour::HugeInteger(_) => {
                let body = rewritten(behaviour, &body);
                [head(status, json, body.len()), body].concat()
            }
            Behaviour::CloseMidAnswer => {
                let mut answer = head(status, json, body.len());
                answer.extend_from_slice(&body[..body.len() / 2]);
                let _ = stream.write_all(&answer).await;
                return;
            }
            Behaviour::Status(code) => [head(code, json, body.len()), body].concat(),
            Behaviour::ServerError => {
                let text = b"Internal Server Error".to_vec();
                [head(500, "text/plain", text.len()), text].concat()
            }
            Behaviour::NotFound => {
                let id = serde_json::from_slice::<Value>(&request.body)
                    .ok()
                    .and_then(|value| value.get("id").cloned())
                    .unwrap_or(Value::Null);
                let envelope = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                let body = envelope.to_string().into_bytes();
                [head(404, json, body.len()), body].concat()
            }
            Behaviour::NotHttp => {
                let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").await;
                return;
            }
            _ => [head(status, json, body.len()), body].concat(),
        };
        if stream.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// Reads and discards until the peer closes.
async fn drain(stream: &mut (impl AsyncRead + Unpin)) {
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink).await, Ok(read) if read > 0) {}
}

async fn serve_ws(
    mut stream: TcpStream,
    behaviour: Behaviour,
    upstream: String,
    honest: Arc<AtomicBool>,
) {
    match behaviour {
        Behaviour::TlsGarbage => return not_tls(stream).await,
        Behaviour::NoHandshake => return drain(&mut stream).await,
        Behaviour::RefuseUpgrade => {
            let _ = stream
                .write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        }
        _ => {}
    }
    let Ok(mut client) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let Ok((mut reference, _)) = tokio_tungstenite::connect_async(upstream.as_str()).await else {
        return;
    };
    while let Some(Ok(message)) = client.next().await {
        let request = match message {
            Message::Text(text) => text.to_string(),
            Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Message::Close(_) => return,
            _ => continue,
        };
        let behaviour = this_time(behaviour, &honest);
        if matches!(behaviour, Behaviour::Silent) {
            continue;
        }
        if reference.send(Message::text(request)).await.is_err() {
            return;
        }
        let answer = match reference.next().await {
            Some(Ok(Message::Text(text))) => text.to_string(),
            _ => return,
        };
        if misbehave_ws(&mut client, behaviour, answer).await.is_err() {
            return;
        }
    }
}

type Ws = WebSocketStream<TcpStream>;

/// Sends `answer` the way `behaviour` says; an error means the client went away.
async fn misbehave_ws(client: &mut Ws, behaviour: Behaviour, answer: String) -> Result<(), ()> {
    match behaviour {
        Behaviour::Slow(delay) => {
            tokio::time::sleep(delay).await;
            client.send(Message::text(answer)).await.map_err(gone)
        }
        Behaviour::Trickle => {
            let body = answer.as_bytes();
            raw_frame(client, &[], body.len()).await?;
            for byte in body {
                client.get_mut().write_all(&[*byte]).await.map_err(gone)?;
                tokio::time::sleep(TRICKLE).await;
            }
            Ok(())
        }
        Behaviour::Endless | Behaviour::EndlessClose => {
            let payload = vec![b'a'; 16 * 1024];
            // A text frame without FIN, then continuation frames forever.
            let mut frame = [vec![0x01, 126, 0x40, 0x00], payload.clone()].concat();
            loop {
                client.get_mut().write_all(&frame).await.map_err(gone)?;
                frame[0] = 0x00;
            }
        }
        Behaviour::EmptyContinuations => {
            client
                .get_mut()
                .write_all(&[0x01, 0x01, answer.as_bytes()[0]])
                .await
                .map_err(gone)?;
            let empty = [0x00, 0x00].repeat(32 * 1024);
            loop {
                client.get_mut().write_all(&empty).await.map_err(gone)?;
            }
        }
        Behaviour::Oversized(size) => client
            .send(Message::text("a".repeat(size)))
            .await
            .map_err(gone),
        Behaviour::Padded(size) => {
            let body = padded(answer.as_bytes(), size);
            client
                .send(Message::text(String::from_utf8(body).unwrap()))
                .await
                .map_err(gone)
        }
        Behaviour::InvalidUtf8 => {
            let body = invalid_utf8(answer.as_bytes());
            raw_frame(client, &body, body.len()).await
        }
        Behaviour::NotJson => client
            .send(Message::text("hello, this is not JSON"))
            .await
            .map_err(gone),
        Behaviour::WrongId | Behaviour::DuplicateMembers | Behaviour::HugeInteger(_) => {
            let body = rewritten(behaviour, answer.as_bytes());
            client
                .send(Message::text(String::from_utf8(body).unwrap()))
                .await
                .map_err(gone)
        }
        Behaviour::DuplicateAnswer => {
            client
                .send(Message::text(answer.clone()))
                .await
                .map_err(gone)?;
            client.send(Message::text(answer)).await.map_err(gone)
        }
        Behaviour::Notifications(count) => {
            for sequence in 0..count {
                client
                    .send(Message::text(notification(sequence).to_string()))
                    .await
                    .map_err(gone)?;
            }
            client.send(Message::text(answer)).await.map_err(gone)
        }
        Behaviour::NotificationFlood => {
            for sequence in 0.. {
                client
                    .send(Message::text(notification(sequence).to_string()))
                    .await
                    .map_err(gone)?;
            }
            Ok(())
        }
        Behaviour::Pings(count) => {
            for _ in 0..count {
                client
                    .send(Message::Ping(b"hostile".to_vec().into()))
                    .await
                    .map_err(gone)?;
            }
            client.send(Message::text(answer)).await.map_err(gone)
        }
        Behaviour::PingFlood => loop {
            client
                .send(Message::Ping(b"hostile".to_vec().into()))
                .await
                .map_err(gone)?;
        },
        Behaviour::CloseMidAnswer => {
            let body = answer.as_bytes();
            raw_frame(client, &body[..body.len() / 2], body.len()).await?;
            client.get_mut().shutdown().await.map_err(gone)?;
            Err(())
        }
        Behaviour::CloseFrame => {
            client.send(Message::Close(None)).await.map_err(gone)?;
            Err(())
        }
        Behaviour::BinaryFrame => client
            .send(Message::binary(answer.into_bytes()))
            .await
            .map_err(gone),
        _ => client.send(Message::text(answer)).await.map_err(gone),
    }
}

/// Answers a TLS client hello with a line that is not TLS, then closes.
async fn not_tls(mut stream: TcpStream) {
    let mut hello = [0u8; 512];
    let _ = stream.read(&mut hello).await;
    let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.6 garbage\r\n").await;
}

/// `size` bytes that open as gzip does and are not UTF-8.
fn not_utf8(size: usize) -> Vec<u8> {
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00];
    bytes.extend((0..size.saturating_sub(4)).map(|index| (index % 251) as u8 | 0x80));
    bytes
}

/// Writes a final text frame announcing `length` payload bytes but carrying `payload`,
/// bypassing tungstenite's own checks.
async fn raw_frame(client: &mut Ws, payload: &[u8], length: usize) -> Result<(), ()> {
    let mut frame = vec![0x81];
    match length {
        0..=125 => frame.push(length as u8),
        126..=65535 => {
            frame.push(126);
            frame.extend((length as u16).to_be_bytes());
        }
        _ => {
            frame.push(127);
            frame.extend((length as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(payload);
    client.get_mut().write_all(&frame).await.map_err(gone)
}

/// The client went away: whatever the error, there is nobody left to answer.
fn gone<E>(_: E) {}

fn notification(sequence: usize) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "subscription",
        "params": {"channel": "ticker.BTC-PERPETUAL.raw", "data": {"sequence": sequence, "mark_price": 65000.5}}
    })
}

/// The envelope with an extra `padding` member of about `size` bytes.
fn padded(body: &[u8], size: usize) -> Vec<u8> {
    let mut envelope: Value = serde_json::from_slice(body).unwrap();
    envelope["padding"] = Value::from("p".repeat(size));
    envelope.to_string().into_bytes()
}

/// The envelope with a byte that is not UTF-8 inside its `jsonrpc` string.
fn invalid_utf8(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let (before, after) = text.split_once("\"2.0\"").unwrap();
    [before.as_bytes(), b"\"2.0\xff\xfe\"", after.as_bytes()].concat()
}

/// The envelope with its numeric id plus one (an absent or null id is left alone).
/// The answer's bytes as `behaviour` rewrites them.
fn rewritten(behaviour: Behaviour, body: &[u8]) -> Vec<u8> {
    let mut envelope: Value = serde_json::from_slice(body).unwrap();
    match behaviour {
        Behaviour::WrongId => {
            if let Some(id) = envelope.get("id").and_then(Value::as_u64) {
                envelope["id"] = Value::from(id + 1);
            }
            envelope.to_string().into_bytes()
        }
        Behaviour::DuplicateMembers => {
            let outcome = if envelope.get("result").is_some() {
                "result"
            } else {
                "error"
            };
            let mut text = String::from(r#"{"jsonrpc":"2.0""#);
            text.push_str(&format!(r#","id":0,"{outcome}":0"#).repeat(50_000));
            text.push_str(&format!(
                r#","id":{},"{outcome}":{}}}"#,
                envelope["id"], envelope[outcome]
            ));
            text.into_bytes()
        }
        Behaviour::HugeInteger(digits) => {
            let text = envelope.to_string();
            format!(r#"{{"usIn":{},{}"#, "4".repeat(digits), &text[1..]).into_bytes()
        }
        _ => envelope.to_string().into_bytes(),
    }
}
