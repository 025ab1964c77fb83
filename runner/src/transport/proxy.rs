//! HTTP proxies from the environment, one rule for both transports.
//!
//! `https_proxy`/`HTTPS_PROXY` carries `https://` and `wss://` traffic, `http_proxy`/
//! `HTTP_PROXY` carries `http://` and `ws://` (the lowercase name wins when both are set,
//! as curl reads them). `no_proxy`/`NO_PROXY` lists hosts reached directly: `*` for all,
//! a domain (with or without a leading dot) for itself and its subdomains, an IP address,
//! or an IP network such as `10.0.0.0/8`. Loopback hosts (`localhost`, `127.0.0.0/8`,
//! `::1`) are always reached directly: a proxy on another machine cannot reach them.
//!
//! Only `http://` proxies are supported. HTTP requests go through reqwest's proxy support
//! with this rule; a WebSocket opens a `CONNECT` tunnel ([`tunnel`]) and speaks TLS and
//! WebSocket inside it. A proxy variable that names no usable proxy is a
//! [`ProxyRuleError`].

use std::net::IpAddr;

use base64::Engine;
use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most of a proxy's answer to `CONNECT` read before giving up.
const MAX_CONNECT_ANSWER_BYTES: usize = 16 * 1024;

/// Why a proxy variable of the environment names no usable proxy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProxyRuleError {
    /// The value is not a URL, even with `http://` put in front.
    #[error("{variable} is not a proxy URL: {source}")]
    NotAUrl {
        /// `HTTP_PROXY` or `HTTPS_PROXY`.
        variable: &'static str,
        /// The parser's complaint.
        #[source]
        source: <Url as std::str::FromStr>::Err,
    },
    /// A proxy of another scheme than `http://`.
    #[error("{variable} names a {scheme}:// proxy; only http:// proxies are supported")]
    NotHttp {
        /// `HTTP_PROXY` or `HTTPS_PROXY`.
        variable: &'static str,
        /// The proxy URL's scheme.
        scheme: String,
    },
    /// A proxy URL without a host.
    #[error("{variable} names no proxy host")]
    NoHost {
        /// `HTTP_PROXY` or `HTTPS_PROXY`.
        variable: &'static str,
    },
}

/// Which proxy, if any, carries a URL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyRule {
    http: Option<Url>,
    https: Option<Url>,
    no_proxy: Vec<NoProxy>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum NoProxy {
    All,
    Domain(String),
    Network(IpAddr, u8),
}

impl ProxyRule {
    /// The rule of this process's environment.
    pub(crate) fn from_env() -> Result<ProxyRule, ProxyRuleError> {
        ProxyRule::from_lookup(&|name| std::env::var(name).ok())
    }

    /// The rule of an environment given by `lookup`.
    pub(crate) fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProxyRule, ProxyRuleError> {
        let read = |lower: &str, upper: &str| {
            lookup(lower)
                .filter(|value| !value.trim().is_empty())
                .or_else(|| lookup(upper).filter(|value| !value.trim().is_empty()))
        };
        let http = read("http_proxy", "HTTP_PROXY")
            .map(|value| proxy_url("HTTP_PROXY", &value))
            .transpose()?;
        let https = read("https_proxy", "HTTPS_PROXY")
            .map(|value| proxy_url("HTTPS_PROXY", &value))
            .transpose()?;
        let no_proxy = read("no_proxy", "NO_PROXY")
            .map(|list| parse_no_proxy(&list))
            .unwrap_or_default();
        Ok(ProxyRule {
            http,
            https,
            no_proxy,
        })
    }

    /// Whether no URL goes through a proxy: the environment names none.
    pub fn is_direct(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy that carries `url`, or `None` to connect directly.
    pub fn proxy_for(&self, url: &Url) -> Option<&Url> {
        let proxy = match url.scheme() {
            "https" | "wss" => self.https.as_ref(),
            "http" | "ws" => self.http.as_ref(),
            _ => None,
        }?;
        let name = url.host_str()?;
        let host = match name.trim_matches(['[', ']']).parse::<IpAddr>() {
            Ok(ip) => Host::Ip(ip),
            Err(_) => Host::Name(name.trim_end_matches('.').to_ascii_lowercase()),
        };
        if host.is_loopback() || self.no_proxy.iter().any(|entry| entry.matches(&host)) {
            None
        } else {
            Some(proxy)
        }
    }
}

enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    fn is_loopback(&self) -> bool {
        match self {
            Host::Name(name) => name == "localhost" || name.ends_with(".localhost"),
            Host::Ip(ip) => ip.is_loopback(),
        }
    }
}

impl NoProxy {
    fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (NoProxy::All, _) => true,
            (NoProxy::Domain(domain), Host::Name(name)) => {
                name == domain
                    || name
                        .strip_suffix(domain.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            (NoProxy::Network(network, bits), Host::Ip(ip)) => in_network(*ip, *network, *bits),
            _ => false,
        }
    }
}

/// A proxy URL from the environment: `http://host:port`, or `host:port` meaning the same.
fn proxy_url(variable: &'static str, value: &str) -> Result<Url, ProxyRuleError> {
    let value = value.trim();
    let with_scheme = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let url =
        Url::parse(&with_scheme).map_err(|source| ProxyRuleError::NotAUrl { variable, source })?;
    if url.scheme() != "http" {
        return Err(ProxyRuleError::NotHttp {
            variable,
            scheme: url.scheme().to_owned(),
        });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ProxyRuleError::NoHost { variable });
    }
    Ok(url)
}

fn parse_no_proxy(list: &str) -> Vec<NoProxy> {
    list.split([',', ' '])
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            if entry == "*" {
                return NoProxy::All;
            }
            let bare = entry.trim_start_matches('[');
            let (address, bits) = match bare.split_once('/') {
                Some((address, bits)) => (address, bits.parse::<u8>().ok()),
                None => (bare.trim_end_matches(']'), None),
            };
            match address.parse::<IpAddr>() {
                Ok(ip) => {
                    let full = if ip.is_ipv4() { 32 } else { 128 };
                    NoProxy::Network(ip, bits.unwrap_or(full).min(full))
                }
                Err(_) => NoProxy::Domain(
                    entry
                        .trim_start_matches("*.")
                        .trim_start_matches('.')
                        .trim_end_matches('.')
                        .to_ascii_lowercase(),
                ),
            }
        })
        .collect()
}

fn in_network(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(network)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(network) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(network)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(network) & mask
        }
        _ => false,
    }
}

/// A TCP stream to `host:port` through `proxy`'s `CONNECT` tunnel. The caller bounds the
/// time it takes.
pub(crate) async fn tunnel(proxy: &Url, host: &str, port: u16) -> std::io::Result<TcpStream> {
    let proxy_host = proxy.host_str().unwrap_or_default();
    let proxy_port = proxy.port_or_known_default().unwrap_or(80);
    let mut stream = TcpStream::connect((proxy_host.trim_matches(['[', ']']), proxy_port))
        .await
        .map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("failed to reach proxy {proxy_host}:{proxy_port}: {error}"),
            )
        })?;
    stream.set_nodelay(true)?;
    let mut head = format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n");
    if !proxy.username().is_empty() {
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8_lossy()
                .into_owned()
        };
        let credentials = format!(
            "{}:{}",
            decode(proxy.username()),
            decode(proxy.password().unwrap_or_default())
        );
        head.push_str(&format!(
            "Proxy-Authorization: Basic {}\r\n",
            base64::engine::general_purpose::STANDARD.encode(credentials)
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    // Byte by byte, so nothing past the answer's blank line is taken from the tunnel.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() >= MAX_CONNECT_ANSWER_BYTES {
            return Err(std::io::Error::other(format!(
                "proxy {proxy_host}:{proxy_port} sent an answer to CONNECT over {MAX_CONNECT_ANSWER_BYTES} bytes"
            )));
        }
        let byte = stream.read_u8().await.map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("proxy {proxy_host}:{proxy_port} closed the CONNECT tunnel: {error}"),
            )
        })?;
        answer.push(byte);
    }
    let status_line = String::from_utf8_lossy(&answer);
    let status_line = status_line.lines().next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).unwrap_or_default();
    if status.len() == 3 && status.starts_with('2') {
        Ok(stream)
    } else {
        Err(std::io::Error::other(format!(
            "proxy {proxy_host}:{proxy_port} refused CONNECT {host}:{port}: {status_line}"
        )))
    }
}

#[cfg(test)]
mod tests;
