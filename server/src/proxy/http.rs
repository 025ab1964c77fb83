//! Forwarding HTTP: every request the client sends the proxy goes to the upstream
//! target's URL of the same path, with its method, query, headers and body unchanged, and
//! the upstream's status, headers and body go back unchanged. Only hop-by-hop headers
//! (SPEC.md says nothing of them; HTTP says a proxy must not forward them) are left out,
//! and `Accept-Encoding`, so the upstream answers uncompressed and its answers can be
//! judged (as mitmproxy's `anticomp` does); a client copes with an answer it did not need
//! to decompress.
//!
//! Paths map by prefix: `/direct/...` to the upstream's `direct_access_url`, `/api/v2/...`
//! to its `base_url` (which SPEC.md section 1 says ends in `/api/v2`), anything else to the
//! origin of its `base_url`. The URI a client signs (SPEC.md 5.6) therefore stays the
//! URI the upstream sees whenever the upstream's `base_url` path is `/api/v2`.
//!
//! A copy of the request goes to the judging task before the request is forwarded, and a
//! copy of the answer after it is in hand; neither waits on the judging task. An upstream
//! that cannot be reached gets the client a 502 from the proxy, which is not the server's
//! answer and is not judged. The upstream side's failures are [`UpstreamHttpError`]s.

use harness_protocol::spec::{API_PREFIX, WS_PATH};
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rustls::ClientConfig;

use super::{Event, Shared};
use crate::serve::{RawRequest, Wire};
use harness_model::target_file::Target;
use harness_runner::transport::{Dialer, RequestLimits};

/// Headers that belong to one connection, never forwarded (RFC 9110 section 7.6.1), those
/// the HTTP client sets itself, and the compression a client accepts (see the module).
const NOT_FORWARDED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
];

/// Why the upstream side's HTTP client was not built, or an upstream answer not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpstreamHttpError {
    /// reqwest refused the client's configuration.
    #[error("failed to build the upstream HTTP client: {source}")]
    Client {
        /// reqwest's complaint.
        #[source]
        source: reqwest::Error,
    },
    /// The answer's body broke off.
    #[error("answer not read: {source}")]
    NotRead {
        /// reqwest's complaint.
        #[source]
        source: reqwest::Error,
    },
    /// The answer's body is over the cap.
    #[error("answer larger than {cap} bytes")]
    TooLarge {
        /// The cap, in bytes.
        cap: usize,
    },
}

/// The HTTP client of the upstream side: the dialer's TLS configuration and proxies, no
/// redirects followed (a redirect is the server's answer, forwarded as it is).
pub(crate) fn client(
    dialer: &Dialer,
    limits: RequestLimits,
) -> Result<reqwest::Client, UpstreamHttpError> {
    let proxies = dialer.shared_proxies();
    let builder =
        reqwest::Client::builder().use_preconfigured_tls(ClientConfig::clone(&dialer.tls_config()));
    let builder = if proxies.is_direct() {
        builder.no_proxy()
    } else {
        builder.proxy(reqwest::Proxy::custom(move |url| {
            proxies.proxy_for(url).cloned()
        }))
    };
    builder
        .timeout(limits.request_timeout)
        .connect_timeout(limits.request_timeout)
        .pool_max_idle_per_host(64)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|source| UpstreamHttpError::Client { source })
}

/// The proxy's routes: the WebSocket handshake, and every other request forwarded.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(WS_PATH, get(super::ws::upgrade))
        .fallback(forward)
        .with_state(shared)
}

/// The URL of `upstream` for a path and query the client sent the proxy.
pub(crate) fn map_url(upstream: &Target, path_and_query: &str) -> String {
    let base = upstream.base_url.trim_end_matches('/');
    if let (Some(rest), Some(direct)) = (
        path_and_query.strip_prefix("/direct"),
        upstream.direct_access_url.as_deref(),
    ) && (rest.is_empty() || rest.starts_with(['/', '?']))
    {
        return format!("{}{rest}", direct.trim_end_matches('/'));
    }
    if let Some(rest) = path_and_query.strip_prefix(API_PREFIX)
        && (rest.is_empty() || rest.starts_with(['/', '?']))
    {
        return format!("{base}{rest}");
    }
    format!("{}{path_and_query}", base.trim_end_matches(API_PREFIX))
}

pub(super) fn forwarded(name: &HeaderName) -> bool {
    !NOT_FORWARDED.contains(&name.as_str())
}

fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

pub(super) fn bad_gateway(message: String) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        format!("harness proxy: {message}\n"),
    )
        .into_response()
}

async fn forward(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, shared.limits.max_response_bytes).await {
        Ok(body) => body,
        Err(error) => return bad_gateway(format!("request body not read: {error}")),
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let seq = shared.next_seq();
    shared.observe(Event::Request(RawRequest {
        seq,
        wire: Wire::Http,
        connection: peer.to_string(),
        at_ms: shared.clock.now_ms(),
        method: parts.method.as_str().to_owned(),
        uri: path_and_query.clone(),
        headers: header_list(&parts.headers),
        body: body.clone(),
    }));
    let url = map_url(&shared.upstream, &path_and_query);
    let mut upstream = shared.http.request(parts.method.clone(), &url);
    for (name, value) in parts.headers.iter().filter(|(name, _)| forwarded(name)) {
        upstream = upstream.header(name, value);
    }
    if !body.is_empty() {
        upstream = upstream.body(body);
    }
    let answer = match upstream.send().await {
        Ok(answer) => answer,
        Err(error) => return bad_gateway(format!("{url} did not answer: {error}")),
    };
    let status = answer.status();
    let headers = answer.headers().clone();
    let body = match read_capped(answer, shared.limits.max_response_bytes).await {
        Ok(body) => body,
        Err(error) => return bad_gateway(format!("{url}: {error}")),
    };
    shared.observe(Event::HttpAnswer {
        seq,
        status: status.as_u16(),
        body: body.clone(),
        at_ms: shared.clock.now_ms(),
    });
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    for (name, value) in headers.iter().filter(|(name, _)| forwarded(name)) {
        response.headers_mut().append(name, value.clone());
    }
    response
}

/// The whole body of an upstream answer, refused past `cap` bytes.
async fn read_capped(
    mut answer: reqwest::Response,
    cap: usize,
) -> Result<Bytes, UpstreamHttpError> {
    let mut body = Vec::new();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|source| UpstreamHttpError::NotRead { source })?
    {
        if body.len() + chunk.len() > cap {
            return Err(UpstreamHttpError::TooLarge { cap });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}
