//! Forwarding WebSocket: each client connection to `/ws/api/v2` gets its own connection to
//! the upstream's `ws_url` (the handshake's query appended, its end-to-end headers
//! copied), opened as the runner opens one: directly or through a proxy's `CONNECT`
//! tunnel, then TLS for `wss://` with the upstream target file's trust settings. Then two
//! pumps copy messages unchanged, one each way, until either side closes.
//!
//! Every text or binary message is handed to the judging task as it passes, without
//! waiting: from the client as a request, from the server as a message the judging task
//! pairs with a request by id. An upstream connection that does not open is an
//! [`UpstreamWsError`], which the proxy prints.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{Message as ClientMessage, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::Connector;
use tokio_tungstenite::tungstenite::Message as UpstreamMessage;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::{Event, Shared};
use crate::serve::{RawRequest, Wire};
use harness_runner::transport::DialError;
use tokio_tungstenite::tungstenite;

/// Upgrades the client's connection; the upstream connection opens once it is upgraded.
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let limit = shared.limits.max_response_bytes;
    let path_and_query = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| relay(shared, socket, path_and_query, headers))
}

/// End-to-end headers of the client's handshake, copied to the upstream's.
pub(super) fn copied(name: &str) -> bool {
    !(name.starts_with("sec-websocket-")
        || matches!(
            name,
            "host" | "connection" | "upgrade" | "content-length" | "transfer-encoding"
        ))
}

/// Relays one WebSocket connection between the client and the upstream, observing both
/// ways.
async fn relay(shared: Arc<Shared>, client: WebSocket, path_and_query: String, headers: HeaderMap) {
    let Some(ws_url) = shared.upstream.ws_url.clone() else {
        return;
    };
    let query = path_and_query
        .split_once('?')
        .map(|(_, query)| format!("?{query}"))
        .unwrap_or_default();
    let url = format!("{ws_url}{query}");
    let upstream = match connect(&url, &headers, &shared).await {
        Ok(upstream) => upstream,
        Err(error) => {
            eprintln!("harness proxy: {error}");
            return;
        }
    };
    let connection = shared.next_ws();
    let header_list: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let shared_closing = shared.closing.subscribe();
    let (to_client, from_client) = client.split();
    let (to_upstream, from_upstream) = upstream.split();
    let seen = Seen {
        shared: &shared,
        connection: &connection,
        path_and_query: &path_and_query,
        headers: &header_list,
    };
    // Either side closing ends both, and so does the proxy stopping.
    let mut closing = shared_closing;
    tokio::select! {
        () = upward(seen, from_client, to_upstream) => {}
        () = downward(seen, from_upstream, to_client) => {}
        _ = closing.wait_for(|closing| *closing) => {}
    }
}

/// What the observer is told of each message on a connection: which one, its handshake's
/// path and headers.
#[derive(Clone, Copy)]
struct Seen<'a> {
    shared: &'a Shared,
    connection: &'a str,
    path_and_query: &'a str,
    headers: &'a [(String, String)],
}

/// Forwards the client's messages upstream, each request observed, until either side
/// closes.
async fn upward<E, F>(
    seen: Seen<'_>,
    mut from_client: impl futures_util::Stream<Item = Result<ClientMessage, E>> + Unpin,
    mut to_upstream: impl futures_util::Sink<UpstreamMessage, Error = F> + Unpin,
) {
    while let Some(Ok(message)) = from_client.next().await {
        let forwarded = match message {
            ClientMessage::Text(text) => {
                observe_request(
                    seen.shared,
                    seen.connection,
                    seen.path_and_query,
                    seen.headers,
                    text.as_bytes(),
                );
                UpstreamMessage::text(text.as_str())
            }
            ClientMessage::Binary(bytes) => {
                observe_request(
                    seen.shared,
                    seen.connection,
                    seen.path_and_query,
                    seen.headers,
                    &bytes,
                );
                UpstreamMessage::binary(bytes)
            }
            ClientMessage::Ping(bytes) => UpstreamMessage::Ping(bytes),
            ClientMessage::Pong(bytes) => UpstreamMessage::Pong(bytes),
            ClientMessage::Close(_) => break,
        };
        if to_upstream.send(forwarded).await.is_err() {
            break;
        }
    }
    let _ = to_upstream.close().await;
}

/// Forwards the upstream's messages to the client, each answer observed, until either
/// side closes.
async fn downward<E, F>(
    seen: Seen<'_>,
    mut from_upstream: impl futures_util::Stream<Item = Result<UpstreamMessage, E>> + Unpin,
    mut to_client: impl futures_util::Sink<ClientMessage, Error = F> + Unpin,
) {
    while let Some(Ok(message)) = from_upstream.next().await {
        let forwarded = match message {
            UpstreamMessage::Text(text) => {
                observe_answer(seen.shared, seen.connection, text.as_bytes());
                ClientMessage::Text(text.as_str().into())
            }
            UpstreamMessage::Binary(bytes) => {
                observe_answer(seen.shared, seen.connection, &bytes);
                ClientMessage::Binary(bytes)
            }
            UpstreamMessage::Ping(bytes) => ClientMessage::Ping(bytes),
            UpstreamMessage::Pong(bytes) => ClientMessage::Pong(bytes),
            UpstreamMessage::Close(_) => break,
            UpstreamMessage::Frame(_) => continue,
        };
        if to_client.send(forwarded).await.is_err() {
            break;
        }
    }
    let _ = to_client.close().await;
}

fn observe_request(
    shared: &Shared,
    connection: &str,
    uri: &str,
    headers: &[(String, String)],
    body: &[u8],
) {
    shared.observe(Event::Request(RawRequest {
        seq: shared.next_seq(),
        wire: Wire::Ws,
        connection: connection.to_owned(),
        at_ms: shared.clock.now_ms(),
        method: "WS".to_owned(),
        uri: uri.to_owned(),
        headers: headers.to_vec(),
        body: axum::body::Bytes::copy_from_slice(body),
    }));
}

fn observe_answer(shared: &Shared, connection: &str, body: &[u8]) {
    shared.observe(Event::WsMessage {
        connection: connection.to_owned(),
        body: axum::body::Bytes::copy_from_slice(body),
        at_ms: shared.clock.now_ms(),
    });
}

type Upstream = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// Why the upstream WebSocket connection did not open.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpstreamWsError {
    /// The upstream URL makes no WebSocket request.
    #[error("bad upstream ws_url {url}: {source}")]
    BadUrl {
        /// The upstream URL.
        url: String,
        /// tungstenite's complaint.
        #[source]
        source: Box<tungstenite::Error>,
    },
    /// No TCP connection (or proxy tunnel) to the upstream.
    #[error(transparent)]
    Dial(#[from] DialError),
    /// The TLS or WebSocket handshake failed.
    #[error("failed to connect to {url}: {source}")]
    Handshake {
        /// The upstream URL.
        url: String,
        /// tungstenite's complaint.
        #[source]
        source: Box<tungstenite::Error>,
    },
    /// No handshake within the request timeout.
    #[error("failed to connect to {url}: no handshake within the timeout")]
    Timeout {
        /// The upstream URL.
        url: String,
    },
}

/// Opens the upstream connection within the request timeout.
async fn connect(
    url: &str,
    headers: &HeaderMap,
    shared: &Shared,
) -> Result<Upstream, UpstreamWsError> {
    let mut request = url
        .into_client_request()
        .map_err(|source| UpstreamWsError::BadUrl {
            url: url.to_owned(),
            source: Box::new(source),
        })?;
    for (name, value) in headers.iter().filter(|(name, _)| copied(name.as_str())) {
        request.headers_mut().append(name, value.clone());
    }
    let limit = shared.limits.max_response_bytes;
    let config = WebSocketConfig::default()
        .max_message_size(Some(limit))
        .max_frame_size(Some(limit));
    let connecting = async {
        // The rule's proxy, credentials and all, as every connection of the harness.
        let socket = shared.dialer.open_tcp(url).await?;
        let connector = Connector::Rustls(shared.dialer.tls_config());
        tokio_tungstenite::client_async_tls_with_config(
            request,
            socket,
            Some(config),
            Some(connector),
        )
        .await
        .map(|(stream, _)| stream)
        .map_err(|source| UpstreamWsError::Handshake {
            url: url.to_owned(),
            source: Box::new(source),
        })
    };
    tokio::time::timeout(shared.limits.request_timeout, connecting)
        .await
        .map_err(|_| UpstreamWsError::Timeout {
            url: url.to_owned(),
        })?
}
