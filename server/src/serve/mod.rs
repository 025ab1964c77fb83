//! The reference server: an in-process implementation of the API of SPEC.md over real
//! sockets, used to check the harness's own checks and to judge clients.
//!
//! [`start`] binds a listener and serves three interfaces with axum: HTTP GET JSON-RPC under
//! `/api/v2/<method>`, WebSocket JSON-RPC at `/ws/api/v2`, and the Direct Access REST
//! operation under `/direct/api/v2/private/lock_portfolio`. [`Running::target`] describes
//! the running server as a [`Target`], with freshly generated secrets. With a
//! [`TlsIdentity`] all three are served over TLS (`tls.rs`) and the target's URLs are
//! `https://` and `wss://`.
//!
//! With no [`Fault`] switched on the server follows every clause of the catalog; each fault
//! breaks exactly one rule, so a harness run against it must report that clause as failed.
//! [`ServerState::dispatch_message`] is the transport-free core: one WebSocket-style
//! message in, one JSON-RPC envelope out, never a panic; the fuzz targets and the client
//! judge call it directly.
//!
//! The files beside this one: `http.rs` and `ws.rs` speak the transports, `call.rs`
//! routes a request through authentication, parameters and the method, `principal.rs`
//! decides who is calling, `grant.rs` issues tokens, `account.rs`, `trading.rs` and
//! `market.rs` hold the methods of SPEC.md section 4, `fixtures.rs` and `ledger.rs` the
//! data, `tokens.rs`, `rate.rs` and `params.rs` the bookkeeping, `fault.rs` and `variant.rs` the switches, declared alike by `switch.rs`.

#[macro_use]
mod switch;

mod account;
mod arrivals;
mod call;
mod ctx;
mod deferred;
mod direct_order;
mod fault;
mod fixtures;
#[cfg(any(test, feature = "arbitrary"))]
pub mod fuzz_targets;
mod grant;
mod http;
#[cfg(feature = "conformance")]
mod launch;
mod ledger;
mod market;
mod message;
mod observe;
mod orders;
mod params;

mod principal;
mod property;
mod rate;
mod reshape;
mod state;
mod subscription;
mod tls;
mod tokens;
mod trading;
mod variant;
mod ws;

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use axum::serve::ListenerExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use harness_model::target_file::{CountedPer, RateLimits, Target};
use harness_protocol::auth::clock::Clock;
use harness_protocol::auth::nonce::ReplayCache;

pub use fault::Fault;
pub use ledger::MAIN_LOG_ENTRIES;
pub(crate) use observe::Knobs;
pub use observe::{Observer, RawAnswer, RawRequest, Wire};
pub use property::{
    QueryInput, QueryValue, ServePropertyError, dispatch_envelope, query_params_coerce,
};
pub use tls::{TlsError, TlsIdentity};
pub use variant::{Extreme, Variant};

/// How to run the reference server.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Fault switches; empty for a conforming server.
    pub faults: Vec<Fault>,
    /// Spec-open variants: other legal choices where SPEC.md leaves a point open.
    pub variants: Vec<Variant>,
    /// The `private/get_transaction_log` rate limit enforced and advertised.
    pub limits: RateLimits,
    /// The only clock the server reads.
    pub clock: Clock,
    /// The largest HTTP body or WebSocket message answered normally; larger ones get an
    /// error envelope.
    pub(crate) max_body_bytes: usize,
    /// The scheme name of the signed `Authorization` header the server accepts and its
    /// target file advertises.
    pub signature_scheme: String,
    /// What the server serves beyond its faults (the client judge's scenarios).
    pub(crate) knobs: Knobs,
    /// Sees every request and answer (the client judge's recorder).
    pub(crate) observer: Option<Arc<dyn Observer>>,
    /// Serve over TLS with this certificate; plain HTTP when `None`.
    pub tls: Option<TlsIdentity>,
    /// The main account's transaction log holds this many generated entries over the same
    /// six months and currencies (`harness serve --log-entries N`), to try a suite's cost
    /// against a long history; `None`: the fixed history every snapshot is taken from.
    pub log_entries: Option<usize>,
}

impl ServeConfig {
    /// This configuration with the 2FA accounts taking the fixed `code` as their second
    /// factor instead of a TOTP code, as a test environment's do (`harness serve
    /// --two-factor-code`); the target file it writes gives `code = "..."`.
    pub fn with_two_factor_code(mut self, code: impl Into<String>) -> ServeConfig {
        self.knobs.two_factor_code = Some(code.into());
        self
    }

    /// 127.0.0.1 on a free port, no faults, 1 transaction-log request per second with a
    /// burst of 100 per token, the system clock and a 64 KiB body limit.
    ///
    /// The sustained rate is SPEC.md's; the burst is the reference's own choice, large
    /// enough that a pagination walk with a small page size is not paced, so a full run
    /// takes seconds (the target file says the same burst, and the runner honours it).
    pub fn loopback() -> ServeConfig {
        ServeConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            faults: Vec::new(),
            variants: Vec::new(),
            limits: RateLimits {
                transaction_log_per_second: harness_protocol::spec::PACED_PER_SECOND,
                transaction_log_burst: 100,
                transaction_log_counted_per: CountedPer::Token,
                throttle_codes: vec![harness_protocol::jsonrpc::code::TOO_MANY_REQUESTS],
                session_limit_codes: Vec::new(),
                session_slots: None,
                clock_skew_ms: 0,
            },
            clock: Clock::system(),
            max_body_bytes: 64 * 1024,
            signature_scheme: harness_protocol::auth::sign::DEFAULT_SCHEME.to_owned(),
            knobs: Knobs::default(),
            observer: None,
            tls: None,
            log_entries: None,
        }
    }
}

/// A server started by [`start`].
#[derive(Debug)]
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    tls: bool,
    state: Arc<ServerState>,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Running {
    /// The target description of this server: URLs, accounts, fixtures and limits.
    pub fn target(&self) -> Target {
        let target = self.state.target(self.addr);
        if self.tls {
            tls::over_tls(target)
        } else {
            target
        }
    }

    /// Stops accepting connections and waits for the server task to end.
    pub async fn shutdown(self) {
        // The receiver is gone only if the server already stopped, which is what we want.
        let _ = self.shutdown.send(());
        let _ = self.task.await;
    }

    /// The server's state, shared with its request handlers.
    pub fn state(&self) -> Arc<ServerState> {
        Arc::clone(&self.state)
    }
}

/// Binds `config.listen` and serves on the current tokio runtime; returns at once.
pub async fn start(config: ServeConfig) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(ServerState::new(&config));
    let (shutdown, stopped) = oneshot::channel::<()>();
    // The peer address tells HTTP connections apart for the observer.
    let app = http::router(Arc::clone(&state)).into_make_service_with_connect_info::<SocketAddr>();
    let stopped = async move {
        let _ = stopped.await;
    };
    // A serve error means the listener failed; there is nobody to report it to but the
    // clients, who see the connection refused.
    let task = match &config.tls {
        None => tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await;
        }),
        Some(identity) => {
            // `tap_io` makes axum hand the peer address to handlers as it does for TCP.
            let listener = tls::TlsListener::new(listener, identity)?.tap_io(|_| {});
            tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(stopped)
                    .await;
            })
        }
    };
    Ok(Running {
        addr,
        tls: config.tls.is_some(),
        state,
        shutdown,
        task,
    })
}

/// Everything the server knows and remembers. All mutable state sits behind mutexes, each
/// held only for a short synchronous step, so the type is `Send + Sync` and handlers never
/// hold a lock across an await.
#[derive(Debug)]
pub struct ServerState {
    faults: fault::FaultSet,
    variants: variant::VariantSet,
    clock: Clock,
    limits: RateLimits,
    max_body_bytes: usize,
    users: Vec<state::User>,
    direct_access_key: harness_model::target_file::Secret,
    instruments: Vec<fixtures::Instrument>,
    ledger: ledger::Ledger,
    tokens: Mutex<tokens::TokenStore>,
    nonces: Mutex<ReplayCache>,
    /// The nonces as a server remembering them only while their timestamp is inside the
    /// window would: the cache of the `sig-nonce-forgotten-after-window` fault.
    window_nonces: Mutex<ReplayCache>,
    rate: Mutex<rate::RateLimiter>,
    /// The Direct Access members of each main account, by its user id (SPEC.md 2.6).
    members: Mutex<std::collections::BTreeMap<u64, Vec<fixtures::Member>>>,
    disabled_logins: Mutex<HashSet<u64>>,
    /// Instruments whose position was closed (kept for the `positions-close-once` variant).
    closed_positions: Mutex<HashSet<String>>,
    /// Whether `lock_portfolio` has locked the Direct Access portfolio (SPEC.md 4.13): new
    /// Direct Access orders are refused (`direct_order.rs`), and JSON-RPC orders are
    /// unaffected (only the `lock-blocks-json-rpc` fault reads it for them).
    portfolio_locked: std::sync::atomic::AtomicBool,
    /// The open orders the reference keeps (`orders.rs`): resting closes and Direct
    /// Access orders.
    orders: orders::OrderBook,
    /// When `get_mmp_status` first reported the status frozen until manual reset, ms since
    /// the epoch (0: not yet); only the `mmp-reset-lapses` fault reads it.
    mmp_reset_reported_ms: AtomicU64,
    /// Updates a race fault puts off (`deferred.rs`); always empty on the correct server.
    deferred: deferred::Deferred,
    /// When each request arrived, by peer (reference-only, `arrivals.rs`).
    arrivals: arrivals::Arrivals,
    /// How many connections are pushed each channel (`subscription.rs`).
    subscribers: subscription::Subscribers,
    /// The session token a WebSocket connection remembered last, which only the
    /// `ws-session-shared` fault keeps (and lends to every other connection).
    shared_session: Mutex<Option<String>>,
    signature_scheme: String,
    knobs: Knobs,
    observer: Option<Arc<dyn Observer>>,
    /// Numbers requests for the observer.
    next_seq: AtomicU64,
    /// Numbers WebSocket connections for the observer.
    next_connection: AtomicU64,
}

/// What one WebSocket connection remembers between its requests.
#[derive(Debug, Default)]
pub struct Connection {
    /// The session-scoped access token this connection authenticated with (SPEC.md 5.2),
    /// or any token under the `ws-remembers-any-token` variant.
    session_token: Option<String>,
    /// Close the connection once the current answer is out (the `logout-closes` variant).
    close_after_answer: bool,
    /// The id of the previous request, which only the `ws-wrong-ids` fault uses.
    previous_id: Value,
    /// The connection's label (`ws#N`), which only the `sig-nonce-per-connection` fault
    /// uses, to keep each connection's nonces apart.
    label: String,
    /// Channels a subscription just accepted, which `ws.rs` starts pushing
    /// (`subscription.rs`).
    to_push: Vec<String>,
    /// Channels the connection is pushed already: subscribed again, they are not pushed
    /// twice, so a client cannot multiply the pushes.
    pushing: Vec<String>,
}
