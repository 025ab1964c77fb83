//! The WebSocket side: `GET /ws/api/v2` upgrades to a JSON-RPC connection where each text
//! or binary message is one request.
//!
//! Requests on one connection run concurrently: each message becomes its own task, and the
//! answers go back through one writer in whatever order they finish, each carrying its own
//! id. A per-connection semaphore bounds the requests in flight, so a client that floods
//! without reading is slowed down by backpressure instead of growing the server's memory.
//!
//! An [`Observer`](super::Observer) sees each message as it is read (in arrival order,
//! with the handshake's URI and headers), may refuse it, and sees each answer.

use std::sync::{Arc, Mutex};

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{Extensions, HeaderMap, Uri};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{Semaphore, mpsc};

use super::observe::{RawAnswer, RawRequest, Wire};
use super::state::lock;
use super::{Connection, ServerState, observe, subscription};

/// Requests of one connection in flight at once.
const IN_FLIGHT: usize = 64;

/// How long a request works under `ws-in-flight-ids-crossed`: long enough that requests
/// sent at once are all in flight together, short enough for one at a time to pass.
const CROSSED_WORK: std::time::Duration = std::time::Duration::from_millis(50);

/// Upgrades the connection. Frames a little over the body limit are still read so they
/// can be answered with an error envelope; far larger ones close the connection.
pub(crate) async fn upgrade(
    State(state): State<Arc<ServerState>>,
    uri: Uri,
    headers: HeaderMap,
    extensions: Extensions,
    upgrade: WebSocketUpgrade,
) -> Response {
    let frame_limit = state.max_body_bytes.saturating_mul(4).max(1 << 20);
    let handshake = Handshake {
        connection: state.next_ws_connection(),
        uri: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned()),
        headers: observe::header_list(&headers),
        peer: extensions
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .map(|ConnectInfo(peer)| *peer),
    };
    upgrade
        .max_message_size(frame_limit)
        .max_frame_size(frame_limit)
        .on_upgrade(move |socket| serve_socket(state, socket, handshake))
}

/// What the writer task sends next.
enum Outgoing {
    /// An answer envelope.
    Answer(String),
    /// A close frame, after which the writer stops (the `logout-closes` variant).
    Close,
}

/// What the observer is told about the connection a message came on.
struct Handshake {
    connection: String,
    uri: String,
    headers: Vec<(String, String)>,
    /// The client's address, for the arrivals (`arrivals.rs`).
    peer: Option<std::net::SocketAddr>,
}

/// Serves one WebSocket connection: each message dispatched as it arrives, up to
/// [`IN_FLIGHT`] at once, its answer written when ready.
async fn serve_socket(state: Arc<ServerState>, socket: WebSocket, handshake: Handshake) {
    let (sink, mut stream) = socket.split();
    let (answers, outbox) = mpsc::channel::<Outgoing>(IN_FLIGHT);
    let writer = tokio::spawn(write_answers(sink, outbox));
    let connection = Arc::new(Mutex::new(Connection {
        label: handshake.connection.clone(),
        ..Connection::default()
    }));
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    // The `ws-in-flight-ids-crossed` fault: one "current id" per connection, overwritten
    // by each arriving request and read when an answer goes out after slow work.
    let crossed = state
        .fault(super::Fault::WsInFlightIdsCrossed)
        .then(|| Arc::new(Mutex::new(serde_json::Value::Null)));
    while let Some(Ok(message)) = stream.next().await {
        let bytes = match message {
            Message::Text(text) => axum::body::Bytes::from(text),
            Message::Binary(bytes) => bytes,
            // axum answers pings itself; pongs need nothing.
            Message::Ping(_) | Message::Pong(_) => continue,
            Message::Close(_) => break,
        };
        // The frame is in: the request has arrived (for a race's arrival spread).
        if let Some(peer) = handshake.peer {
            state.arrivals.record(peer);
        }
        let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
            break;
        };
        if let Some(current_id) = &crossed {
            let id = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|request| request.get("id").cloned());
            *lock(current_id) = id.unwrap_or_default();
        }
        // Observed here, in arrival order, before the message runs concurrently.
        let observed = observe_request(&state, &handshake, &bytes);
        let message = Arrived {
            state: Arc::clone(&state),
            connection: Arc::clone(&connection),
            answers: answers.clone(),
            crossed: crossed.clone(),
            bytes,
            observed,
        };
        tokio::spawn(async move {
            message.answer().await;
            drop(permit);
        });
    }
    drop(answers);
    let _ = writer.await;
}

/// Writes the connection's answers in the order they are ready, until a close.
async fn write_answers(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut outbox: mpsc::Receiver<Outgoing>,
) {
    while let Some(outgoing) = outbox.recv().await {
        let message = match outgoing {
            Outgoing::Answer(text) => Message::Text(text.into()),
            Outgoing::Close => {
                let _ = sink.send(Message::Close(None)).await;
                break;
            }
        };
        if sink.send(message).await.is_err() {
            break;
        }
    }
}

/// Tells the observer (the judge, the proxy) of a message: its sequence number and the
/// error the observer answers it with instead, if any.
fn observe_request(
    state: &ServerState,
    handshake: &Handshake,
    bytes: &axum::body::Bytes,
) -> Option<(u64, Option<harness_protocol::jsonrpc::ErrorObject>)> {
    state.observer.as_ref().map(|observer| {
        let raw = RawRequest {
            seq: state.next_seq(),
            wire: Wire::Ws,
            connection: handshake.connection.clone(),
            at_ms: state.now_ms(),
            method: "WS".to_owned(),
            uri: handshake.uri.clone(),
            headers: handshake.headers.clone(),
            body: bytes.clone(),
        };
        (raw.seq, observer.request(&raw))
    })
}

/// A message that arrived, with what answering it takes.
struct Arrived {
    state: Arc<ServerState>,
    connection: Arc<Mutex<Connection>>,
    answers: mpsc::Sender<Outgoing>,
    /// The connection's "current id" under the `ws-in-flight-ids-crossed` fault.
    crossed: Option<Arc<Mutex<serde_json::Value>>>,
    bytes: axum::body::Bytes,
    observed: Option<(u64, Option<harness_protocol::jsonrpc::ErrorObject>)>,
}

impl Arrived {
    /// Dispatches the message and sends its answer, then the pushes and the close the
    /// call asked for.
    async fn answer(self) {
        let Arrived {
            state,
            connection,
            answers,
            crossed,
            bytes,
            observed,
        } = self;
        // The lock is held only for the synchronous dispatch, never across an await.
        let mut close = false;
        let mut to_push = Vec::new();
        let response = match &observed {
            Some((_, Some(error))) => {
                let id = harness_protocol::jsonrpc::parse_request(&bytes)
                    .map_or_else(|(id, _)| id, |incoming| incoming.id);
                state.envelope(id, Err(error.clone()))
            }
            _ => {
                let mut connection = lock(&connection);
                let response = state.dispatch_message(&mut connection, &bytes);
                close = std::mem::take(&mut connection.close_after_answer);
                to_push = std::mem::take(&mut connection.to_push);
                response
            }
        };
        if let (Some(observer), Some((seq, _))) = (&state.observer, &observed) {
            observer.answer(&RawAnswer {
                seq: *seq,
                at_ms: state.now_ms(),
                status: None,
                body: response.clone(),
            });
        }
        let mut response = response;
        if let Some(current_id) = &crossed {
            tokio::time::sleep(CROSSED_WORK).await;
            if let Some(object) = response.as_object_mut() {
                object.insert("id".to_owned(), lock(current_id).clone());
            }
        }
        // The request (up to the 1 MiB frame limit) is done with: a task that waits for
        // a slow reader below holds only its answer, so 64 of them stay small.
        drop(bytes);
        // A closed writer means the client went away; the answer has nowhere to go.
        // A crashed parser's answer (`message::CRASH_TEXT`) goes as plain text.
        let text = match response {
            serde_json::Value::String(text) => text,
            other => harness_protocol::jsonrpc::to_text(&other),
        };
        let _ = answers.send(Outgoing::Answer(text)).await;
        for channel in to_push {
            tokio::spawn(push(Arc::clone(&state), channel, answers.downgrade()));
        }
        if close {
            let _ = answers.send(Outgoing::Close).await;
        }
    }
}

/// Pushes `channel` a notification every [`subscription::PUSH_INTERVAL`] until the
/// connection's writer is gone (`subscription.rs`). It holds the writer only to send, so
/// the connection ends when its client goes.
async fn push(state: Arc<ServerState>, channel: String, writer: mpsc::WeakSender<Outgoing>) {
    let mut sequence = 0;
    loop {
        tokio::time::sleep(subscription::PUSH_INTERVAL).await;
        let Some(writer) = writer.upgrade() else {
            break;
        };
        let text = subscription::notification_text(&channel, sequence, state.now_ms());
        if writer.send(Outgoing::Answer(text)).await.is_err() {
            break;
        }
        sequence += 1;
    }
    state.subscribers.release(&channel);
}
