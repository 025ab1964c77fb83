//! `harness proxy`: a transparent reverse proxy between a real client and a real server
//! that judges both sides of the session as it passes.
//!
//! The client points its `base_url`, `ws_url` and `direct_access_url` at the proxy (the
//! proxy writes that target file, [`Proxy::client_target`]); every HTTP request and
//! WebSocket message is forwarded unchanged to the upstream target's URLs (`http.rs`,
//! `ws.rs`), through the upstream target file's TLS trust and the environment's proxies
//! ([`harness_runner::transport::Dialer`]), and every answer goes back unchanged. Forwarding never
//! waits on judging: a copy of each request and answer goes over a bounded channel to one
//! judging task (`observe.rs`), which pairs them into the judge's [`Record`]s; a copy the
//! channel has no room for is counted, not waited for. When the session ends, the client's
//! requests are judged by the client judge ([`crate::judge::assess`]) and the server's
//! answers by the checks an answer seen alone or after its request allows (`server.rs`);
//! `report.rs` makes one report of both sides, `record.rs` writes the session as
//! snapshots and replayable case files.

mod http;
mod observe;
mod pages;
pub mod record;
pub mod report;
pub(crate) mod server;
mod ws;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::judge::{Knowledge, Record};
use harness_model::check::Redactor;
use harness_model::target_file::Target;
use harness_protocol::auth::clock::Clock;
use harness_runner::transport::{Dialer, RequestLimits};

pub use observe::Event;

/// Copies waiting for the judging task at most; further ones are counted and dropped.
const CHANNEL_CAPACITY: usize = 65_536;

/// How to run the proxy.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The server behind the proxy, as its target file describes it.
    pub upstream: Target,
    /// Timeout and answer size of each forwarded request.
    pub limits: RequestLimits,
    /// Requests kept for judging at most; later ones are forwarded but not judged.
    pub max_records: usize,
    /// The clock of the arrival times.
    pub clock: Clock,
}

impl ProxyConfig {
    /// Loopback on a free port in front of `upstream`.
    pub fn loopback(upstream: Target) -> ProxyConfig {
        ProxyConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            upstream,
            limits: RequestLimits::default(),
            max_records: 200_000,
            clock: Clock::system(),
        }
    }
}

/// What the forwarding tasks share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) upstream: Target,
    pub(crate) http: reqwest::Client,
    pub(crate) dialer: Dialer,
    pub(crate) limits: RequestLimits,
    pub(crate) clock: Clock,
    next_seq: AtomicU64,
    next_ws: AtomicU64,
    events: mpsc::Sender<Event>,
    /// Copies the judging task had no room for.
    pub(crate) unjudged: AtomicUsize,
    answered: Arc<watch::Sender<usize>>,
    /// Turns true when the proxy stops: open WebSocket relays end.
    pub(crate) closing: watch::Sender<bool>,
}

impl Shared {
    /// The sequence number of the next request.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The name of the next WebSocket connection.
    pub(crate) fn next_ws(&self) -> String {
        format!("ws#{}", self.next_ws.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Hands a copy to the judging task without waiting: a full channel drops it.
    pub(crate) fn observe(&self, event: Event) {
        if self.events.try_send(event).is_err() {
            self.unjudged.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A running proxy.
#[derive(Debug)]
pub struct Proxy {
    /// The address it listens on.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<()>,
    judging: JoinHandle<observe::Book>,
    finish: oneshot::Sender<()>,
    client_target: Target,
}

/// The session seen through the proxy, ready to be judged.
#[derive(Clone, Debug)]
pub struct Session {
    /// Every kept request with its answer, in arrival order.
    pub records: Vec<Record>,
    /// Requests forwarded but not kept (the cap, or a full judging channel).
    pub unjudged: usize,
    /// The upstream target's accounts and limits.
    pub knowledge: Knowledge,
    /// The target file the client used (the proxy's URLs).
    pub client_target: Target,
    /// The server behind the proxy.
    pub upstream: Target,
    /// Knows every secret of the upstream target and every token and signature seen.
    pub redactor: Redactor,
}

/// Binds `config.listen` and forwards to `config.upstream` on the current tokio runtime.
pub async fn start(config: ProxyConfig) -> std::io::Result<Proxy> {
    let dialer = Dialer::new(&config.upstream.tls)
        .map_err(|error| std::io::Error::other(error.to_string()))?;
    let http = http::client(&dialer, config.limits).map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let (events, inbox) = mpsc::channel(CHANNEL_CAPACITY);
    let redactor = Redactor::default();
    let answered = Arc::new(watch::Sender::new(0));
    for secret in config.upstream.secrets() {
        redactor.add(secret);
    }
    let shared = Arc::new(Shared {
        upstream: config.upstream.clone(),
        http,
        dialer,
        limits: config.limits,
        clock: config.clock.clone(),
        next_seq: AtomicU64::new(0),
        next_ws: AtomicU64::new(0),
        events,
        unjudged: AtomicUsize::new(0),
        answered: Arc::clone(&answered),
        closing: watch::Sender::new(false),
    });
    let (finish, finished) = oneshot::channel();
    let judging = tokio::spawn(observe::judge_events(
        inbox,
        finished,
        config.max_records,
        redactor,
        answered,
    ));
    let app = http::router(Arc::clone(&shared)).into_make_service_with_connect_info::<SocketAddr>();
    let (shutdown, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    let client_target = client_target(&config.upstream, addr);
    Ok(Proxy {
        addr,
        shared,
        shutdown,
        task,
        judging,
        finish,
        client_target,
    })
}

/// The upstream target with the proxy's URLs: the same accounts, fixtures and limits.
/// Plain `http`/`ws` on loopback; the proxy speaks TLS only upstream.
pub fn client_target(upstream: &Target, addr: SocketAddr) -> Target {
    Target {
        name: format!("{} (through harness proxy)", upstream.name),
        base_url: format!("http://{addr}{}", harness_protocol::spec::API_PREFIX),
        ws_url: upstream
            .ws_url
            .as_ref()
            .map(|_| format!("ws://{addr}{}", harness_protocol::spec::WS_PATH)),
        direct_access_url: upstream
            .direct_access_url
            .as_ref()
            .map(|_| format!("http://{addr}/direct")),
        tls: Default::default(),
        ..upstream.clone()
    }
}

impl Proxy {
    /// The target file the client uses: the upstream's accounts with the proxy's URLs.
    pub fn client_target(&self) -> &Target {
        &self.client_target
    }

    /// Resolves once at least `count` answers have gone back to clients.
    pub async fn wait_for_answers(&self, count: usize) {
        let mut receiver = self.shared.answered.subscribe();
        let _ = receiver.wait_for(|answered| *answered >= count).await;
    }

    /// Stops accepting connections, ends open WebSocket relays, waits for the judging
    /// task, and returns the session.
    pub async fn stop(self) -> Session {
        self.shared.closing.send_replace(true);
        let _ = self.shutdown.send(());
        // Graceful shutdown waits for open connections; WebSocket ones may never close.
        let abort = self.task.abort_handle();
        if tokio::time::timeout(std::time::Duration::from_secs(2), self.task)
            .await
            .is_err()
        {
            abort.abort();
        }
        let upstream = self.shared.upstream.clone();
        let dropped = self.shared.unjudged.load(Ordering::Relaxed);
        // Forwarding tasks of open WebSocket connections may still hold the channel: the
        // judging task takes what is queued and ends.
        let _ = self.finish.send(());
        let book = self.judging.await.unwrap_or_default();
        Session {
            records: book.records,
            unjudged: dropped + book.dropped,
            knowledge: Knowledge::from_target(&upstream),
            client_target: self.client_target,
            upstream,
            redactor: book.redactor,
        }
    }
}
