//! Requests released together: a race step's copies, each over a connection of its own
//! opened beforehand, with last-byte synchronisation.
//!
//! Every connection is opened first (TCP, TLS for `https://` and `wss://`, the WebSocket
//! handshake), and every request written but for its final byte: over HTTP/1.1 the request
//! is written by hand (reqwest cannot hold a byte back) with `Connection: close`, over
//! WebSocket the masked frame is written under tungstenite. Then the final bytes go out back
//! to back, and only then are the answers read, all at once. What is recorded per request is
//! when its final byte left; the release spread is the time from the first final byte to the
//! last. Everything is bounded by the request timeout: opening, and waiting for the answers.
//! The HTTP/1.1 text written and read by hand is `http1.rs`'s.

use std::net::SocketAddr;
use std::time::Instant;

use futures_util::future::join_all;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::dial::{Dialer, authority};
use super::http;
use super::http1::{parse_response, read_to_end, request_bytes};
use super::{Outgoing, RequestLimits, WsSession};
use harness_protocol::wire::Exchange;
use harness_protocol::wire::Received;
use harness_protocol::wire::SentRequest;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

/// One request of a race.
#[derive(Clone, Copy, Debug)]
pub struct RaceEntry<'a> {
    /// `http-query`, `http-body` or `ws`.
    pub transport: TransportKind,
    /// Its JSON-RPC id.
    pub id: u64,
    /// What it sends.
    pub outgoing: &'a Outgoing,
    /// When its final byte goes.
    pub wave: Wave,
}

/// When a request of a race is released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wave {
    /// The lead: released with the first wave; the second waits for its answer.
    Lead,
    /// The first wave: released together.
    #[default]
    Together,
    /// The second wave: released as soon as the lead's answer has arrived.
    AfterLead,
}

/// What a race sent and got, one entry per request in the order given.
#[derive(Debug)]
pub struct RaceOutcome {
    /// Each request's exchange (`elapsed_ms` from its final byte to its answer).
    pub exchanges: Vec<Exchange>,
    /// When each request's final byte left, in microseconds after the first final byte;
    /// `None` for a request that could not be held (its exchange says why). A second
    /// wave's bytes leave after the lead's answer.
    pub released_us: Vec<Option<f64>>,
    /// The local address of each request's connection (how the reference server's arrivals
    /// name it), when known.
    pub local_addrs: Vec<Option<SocketAddr>>,
}

impl RaceOutcome {
    /// The release spread: microseconds from the first final byte to the last of the
    /// first wave (`waves` in the order of the entries).
    pub fn release_spread_us(&self, waves: &[Wave]) -> f64 {
        self.released_us
            .iter()
            .zip(waves)
            .filter(|(_, wave)| **wave != Wave::AfterLead)
            .filter_map(|(at, _)| *at)
            .fold(0.0, f64::max)
    }
}

/// An I/O stream an HTTP request is held on: TCP, or TLS over it.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A request written but for its final byte.
enum Held {
    Http {
        stream: Box<dyn Io>,
        request: SentRequest,
        last: u8,
        local: Option<SocketAddr>,
    },
    Ws {
        session: Box<WsSession>,
        request: SentRequest,
        last: u8,
    },
    /// It could not be held: its exchange.
    Failed(Box<Exchange>),
}

/// Where a race sends and how.
pub(crate) struct RaceTarget<'a> {
    pub(crate) base_url: &'a str,
    pub(crate) ws_url: &'a str,
    pub(crate) dialer: &'a Dialer,
    pub(crate) limits: RequestLimits,
}

/// Releases `entries` together and reads their answers: the lead and the first wave at
/// once, then, when there is a lead, the second wave as soon as the lead's answer is in.
/// The release spread is the first wave's (the lead's included).
pub(crate) async fn release(target: &RaceTarget<'_>, entries: &[RaceEntry<'_>]) -> RaceOutcome {
    let opening = entries.iter().map(|entry| hold(target, entry));
    let mut held: Vec<Held> = join_all(opening).await;
    let local_addrs = held
        .iter()
        .map(|request| match request {
            Held::Http { local, .. } => *local,
            Held::Ws { session, .. } => session.local_addr(),
            Held::Failed(_) => None,
        })
        .collect();
    let mut released_at: Vec<Option<Instant>> = vec![None; held.len()];
    // The release: every final byte of the first wave, back to back.
    let first_wave = |entry: &RaceEntry<'_>| entry.wave != Wave::AfterLead;
    release_wave(&mut held, entries, &mut released_at, first_wave).await;
    let first = released_at.iter().flatten().min().copied();
    let released_us = released_at
        .iter()
        .map(|at| {
            at.zip(first)
                .map(|(at, first)| at.duration_since(first).as_secs_f64() * 1e6)
        })
        .collect();
    let deadline = Instant::now() + target.limits.request_timeout;
    let cap = target.limits.max_response_bytes;
    // The lead's answer first, then the second wave.
    let lead = entries.iter().position(|entry| entry.wave == Wave::Lead);
    let mut lead_exchange = None;
    if let Some(index) = lead {
        let placeholder = Held::Failed(Box::new(unanswered(
            entries[index].transport,
            SentRequest::default(),
            TransportError::new(TransportErrorKind::Closed, "taken"),
        )));
        let request = std::mem::replace(&mut held[index], placeholder);
        lead_exchange = Some(
            answer(
                request,
                entries[index].transport,
                released_at[index],
                deadline,
                cap,
            )
            .await,
        );
        let second_wave = |entry: &RaceEntry<'_>| entry.wave == Wave::AfterLead;
        release_wave(&mut held, entries, &mut released_at, second_wave).await;
    }
    let answers = held
        .into_iter()
        .zip(entries)
        .zip(released_at)
        .map(|((request, entry), at)| answer(request, entry.transport, at, deadline, cap));
    let mut exchanges = join_all(answers).await;
    if let (Some(index), Some(exchange)) = (lead, lead_exchange) {
        exchanges[index] = exchange;
    }
    RaceOutcome {
        exchanges,
        released_us,
        local_addrs,
    }
}

/// Writes the final byte of every held request `chosen` picks, back to back, and notes
/// when each left; a request whose byte cannot be written becomes a failed exchange.
async fn release_wave(
    held: &mut [Held],
    entries: &[RaceEntry<'_>],
    released_at: &mut [Option<Instant>],
    chosen: impl Fn(&RaceEntry<'_>) -> bool,
) {
    for (index, request) in held.iter_mut().enumerate() {
        if !chosen(&entries[index]) {
            continue;
        }
        let written = match request {
            Held::Http { stream, last, .. } => write_last(stream.as_mut(), *last).await,
            Held::Ws { session, last, .. } => session.release(*last).await,
            Held::Failed(_) => Ok(()),
        };
        match written {
            Ok(()) if !matches!(request, Held::Failed(_)) => {
                released_at[index] = Some(Instant::now());
            }
            Ok(()) => {}
            Err(error) => {
                let placeholder = unanswered(
                    entries[index].transport,
                    SentRequest::default(),
                    error.clone(),
                );
                let sent = match std::mem::replace(request, Held::Failed(Box::new(placeholder))) {
                    Held::Http { request, .. } | Held::Ws { request, .. } => request,
                    Held::Failed(exchange) => exchange.request,
                };
                *request =
                    Held::Failed(Box::new(unanswered(entries[index].transport, sent, error)));
            }
        }
    }
}

/// Opens the entry's connection and writes its request but for the final byte.
async fn hold(target: &RaceTarget<'_>, entry: &RaceEntry<'_>) -> Held {
    let limits = target.limits;
    if entry.transport == TransportKind::Ws {
        let mut session = match WsSession::connect(target.ws_url, limits, target.dialer).await {
            Ok(session) => session,
            Err(error) => {
                let request = SentRequest {
                    method: "WS".to_owned(),
                    url: target.ws_url.to_owned(),
                    ..SentRequest::default()
                };
                return Held::Failed(Box::new(unanswered(TransportKind::Ws, request, error)));
            }
        };
        return match session.hold(entry.id, entry.outgoing).await {
            Ok((last, request)) => Held::Ws {
                session: Box::new(session),
                request,
                last,
            },
            Err(error) => Held::Failed(Box::new(unanswered(
                TransportKind::Ws,
                SentRequest::default(),
                error,
            ))),
        };
    }
    let prepared = match http::prepare(entry.transport, target.base_url, entry.id, entry.outgoing) {
        Ok(prepared) => prepared,
        Err(exchange) => return Held::Failed(exchange),
    };
    let mut bytes = request_bytes(&prepared);
    let last = bytes.pop().unwrap_or_default();
    let opened = tokio::time::timeout(limits.request_timeout, async {
        let (mut stream, local) = connect(&prepared.url, target.dialer).await?;
        stream.write_all(&bytes).await.map_err(|error| {
            TransportError::new(
                TransportErrorKind::Closed,
                format!("failed to send to {}: {error}", authority(&prepared.url)),
            )
        })?;
        stream
            .flush()
            .await
            .map_err(|error| TransportError::new(TransportErrorKind::Closed, error.to_string()))?;
        Ok::<_, TransportError>((stream, local))
    })
    .await
    .unwrap_or_else(|_| {
        Err(TransportError::new(
            TransportErrorKind::Timeout,
            format!(
                "failed to connect to {}: no connection within the timeout",
                authority(&prepared.url)
            ),
        ))
    });
    match opened {
        Ok((stream, local)) => Held::Http {
            stream,
            request: prepared.request,
            last,
            local,
        },
        Err(error) => Held::Failed(Box::new(unanswered(
            entry.transport,
            prepared.request,
            error,
        ))),
    }
}

/// A TCP connection to the URL's host (through a proxy's tunnel when the dialer says so),
/// with TLS for `https://`, and its local address.
async fn connect(
    url: &str,
    dialer: &Dialer,
) -> Result<(Box<dyn Io>, Option<SocketAddr>), TransportError> {
    let refused = |message: String| TransportError::new(TransportErrorKind::Connect, message);
    let socket = dialer
        .open_tcp(url)
        .await
        .map_err(|error| refused(error.to_string()))?;
    let local = socket.local_addr().ok();
    if !url.starts_with("https://") {
        return Ok((Box::new(socket), local));
    }
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|parsed| {
            parsed
                .host_str()
                .map(|host| host.trim_matches(['[', ']']).to_owned())
        })
        .unwrap_or_default();
    let name = rustls::pki_types::ServerName::try_from(host)
        .map_err(|error| refused(format!("failed to connect to {url}: {error}")))?;
    let connector = tokio_rustls::TlsConnector::from(dialer.tls.clone());
    let stream = connector
        .connect(name, socket)
        .await
        .map_err(|error| refused(format!("failed to connect to {url}: TLS: {error}")))?;
    Ok((Box::new(stream), local))
}

async fn write_last(stream: &mut dyn Io, last: u8) -> Result<(), TransportError> {
    let written = async {
        stream.write_all(&[last]).await?;
        stream.flush().await
    };
    written
        .await
        .map_err(|error| TransportError::new(TransportErrorKind::Closed, error.to_string()))
}

/// The exchange of a request left without an answer.
fn unanswered(transport: TransportKind, request: SentRequest, error: TransportError) -> Exchange {
    Exchange {
        transport,
        request,
        response: None,
        failure: Some(error),
        elapsed_ms: 0.0,
    }
}

/// Reads the answer to a released request, by `deadline`.
async fn answer(
    held: Held,
    transport: TransportKind,
    released: Option<Instant>,
    deadline: Instant,
    cap: usize,
) -> Exchange {
    let since = |at: Option<Instant>| at.map_or(0.0, |at| at.elapsed().as_secs_f64() * 1000.0);
    match held {
        Held::Failed(exchange) => *exchange,
        Held::Ws {
            mut session,
            request,
            ..
        } => {
            let outcome = session.answer_by(deadline).await;
            let elapsed_ms = since(released);
            session.close().await;
            match outcome {
                Ok(received) => Exchange {
                    transport,
                    request,
                    response: Some(received),
                    failure: None,
                    elapsed_ms,
                },
                Err(error) => Exchange {
                    elapsed_ms,
                    ..unanswered(transport, request, error)
                },
            }
        }
        Held::Http {
            mut stream,
            request,
            ..
        } => {
            let read = tokio::time::timeout_at(deadline.into(), read_to_end(stream.as_mut(), cap))
                .await
                .unwrap_or_else(|_| {
                    Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        format!("no answer to GET {} within the timeout", request.url),
                    ))
                });
            let elapsed_ms = since(released);
            match read.and_then(|bytes| parse_response(&bytes)) {
                Ok((status, body)) => Exchange {
                    transport,
                    request,
                    response: Some(Received::from_bytes(Some(status), body)),
                    failure: None,
                    elapsed_ms,
                },
                Err(error) => Exchange {
                    elapsed_ms,
                    ..unanswered(transport, request, error)
                },
            }
        }
    }
}
