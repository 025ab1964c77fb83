//! How the transports open connections: one TLS client configuration and one proxy rule,
//! built once per run from the target file and the environment, and shared by the HTTP
//! client and every WebSocket session. A TCP connection that cannot be opened is a
//! [`DialError`].

use std::sync::Arc;

use reqwest::Url;
use rustls::ClientConfig;

use tokio::net::TcpStream;

use super::proxy::{self, ProxyRule};
use super::tls;
use harness_model::target_file::TlsTrust;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;

/// What a URL's parse fails with.
type UrlParseError = <Url as std::str::FromStr>::Err;

/// Why [`Dialer::open_tcp`] opened no TCP stream.
#[derive(Debug, thiserror::Error)]
pub enum DialError {
    /// The URL does not parse.
    #[error("failed to connect to {url}: {source}")]
    NotAUrl {
        /// The URL.
        url: String,
        /// The parser's complaint.
        #[source]
        source: UrlParseError,
    },
    /// The URL names no host, or no port and no scheme with a known one.
    #[error("failed to connect to {url}: no host and port")]
    NoHostAndPort {
        /// The URL.
        url: String,
    },
    /// The connection (or the proxy's tunnel) failed.
    #[error("failed to connect to {url}: {source}")]
    Connect {
        /// The URL.
        url: String,
        /// The connection's failure.
        #[source]
        source: std::io::Error,
    },
}

/// Opens connections for both transports.
#[derive(Clone, Debug)]
pub struct Dialer {
    pub(crate) tls: Arc<ClientConfig>,
    pub(crate) proxies: Arc<ProxyRule>,
}

impl Dialer {
    /// Trusts what `trust` says; proxies come from the environment (see [`ProxyRule`]).
    pub fn new(trust: &TlsTrust) -> Result<Dialer, TransportError> {
        let proxies = ProxyRule::from_env()
            .map_err(|error| TransportError::new(TransportErrorKind::Request, error.to_string()))?;
        Dialer::with_proxies(trust, proxies)
    }

    /// Trusts what `trust` says and uses the given proxies.
    pub(crate) fn with_proxies(
        trust: &TlsTrust,
        proxies: ProxyRule,
    ) -> Result<Dialer, TransportError> {
        let config = tls::client_config(trust)
            .map_err(|error| TransportError::new(TransportErrorKind::Request, error.to_string()))?;
        Ok(Dialer {
            tls: Arc::new(config),
            proxies: Arc::new(proxies),
        })
    }

    /// The proxy rule in use.
    pub fn proxies(&self) -> &ProxyRule {
        &self.proxies
    }

    /// The proxy rule, shared (for a client built elsewhere, such as the recording proxy's
    /// upstream side).
    pub fn shared_proxies(&self) -> Arc<ProxyRule> {
        self.proxies.clone()
    }

    /// A TCP stream to the URL's host, through a proxy's `CONNECT` tunnel when the proxy
    /// rule names one for it (the WebSocket handshake and the race's HTTP/1.1 go over it;
    /// so does the recording proxy's upstream WebSocket). Requests and answers are small
    /// and go one at a time: no Nagle delay. The caller bounds the time it takes.
    pub async fn open_tcp(&self, url: &str) -> Result<TcpStream, DialError> {
        let parsed = Url::parse(url).map_err(|source| DialError::NotAUrl {
            url: url.to_owned(),
            source,
        })?;
        let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
            return Err(DialError::NoHostAndPort {
                url: url.to_owned(),
            });
        };
        let socket = match self.proxies.proxy_for(&parsed) {
            Some(proxy) => proxy::tunnel(proxy, host, port).await,
            None => TcpStream::connect((host.trim_matches(['[', ']']), port)).await,
        }
        .map_err(|source| DialError::Connect {
            url: url.to_owned(),
            source,
        })?;
        let _ = socket.set_nodelay(true);
        Ok(socket)
    }

    /// The TLS client configuration every connection uses.
    pub fn tls_config(&self) -> Arc<ClientConfig> {
        self.tls.clone()
    }
}

/// `host:port` of a URL, for messages; the URL itself when it does not parse.
pub(crate) fn authority(url: &str) -> String {
    match Url::parse(url) {
        Ok(parsed) => match (parsed.host_str(), parsed.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => url.to_owned(),
        },
        Err(_) => url.to_owned(),
    }
}
