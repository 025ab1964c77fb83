//! HTTP transport: GET `{base_url}/<method>` with the parameters in the query string or a
//! JSON-RPC body; and the Direct Access REST GET. TLS and proxies come from the
//! [`Dialer`].
//!
//! Keep-alive connections are pooled. A server may close an idle one at any moment (RFC 9112
//! 9.3: Node.js does after five seconds), and a request written just then meets a closed or
//! reset connection before any answer: that request is sent once more, on a connection
//! opened for it (RFC 9112 9.3.1 lets a client retry an idempotent method, and every
//! method of this API is a GET), so a stale connection is never a verdict. A second
//! failure is the exchange's.

use std::time::Instant;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use rustls::ClientConfig;

use super::dial::{Dialer, authority};
use super::{Authorization, Outgoing, RequestLimits, tls};
use harness_protocol::auth::sign::{HttpSignedFields, SignedHeader};
use harness_protocol::jsonrpc;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::Received;
use harness_protocol::wire::SentRequest;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

/// A pooled HTTP client (keep-alive connections are reused across calls).
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: reqwest::Client,
    /// The same client without a pool: the one retry of a request whose pooled connection
    /// was closed under it goes on a connection of its own.
    unpooled: reqwest::Client,
    limits: RequestLimits,
}

impl HttpClient {
    /// A client with these limits, connecting as `dialer` says.
    pub fn new(limits: RequestLimits, dialer: &Dialer) -> Result<HttpClient, TransportError> {
        let build = |pool_max_idle: usize| {
            let builder =
                reqwest::Client::builder().use_preconfigured_tls(ClientConfig::clone(&dialer.tls));
            // Without a proxy in the environment, reqwest skips asking for one on every request.
            let builder = if dialer.proxies.is_direct() {
                builder.no_proxy()
            } else {
                let proxies = dialer.proxies.clone();
                builder.proxy(reqwest::Proxy::custom(move |url| {
                    proxies.proxy_for(url).cloned()
                }))
            };
            builder
                .timeout(limits.request_timeout)
                .connect_timeout(limits.request_timeout)
                .pool_max_idle_per_host(pool_max_idle)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|error| {
                    TransportError::new(
                        TransportErrorKind::Request,
                        format!("failed to build HTTP client: {error}"),
                    )
                })
        };
        let client = build(64)?;
        let unpooled = build(0)?;
        Ok(HttpClient {
            client,
            unpooled,
            limits,
        })
    }

    /// Sends a JSON-RPC call over HTTP. `base_url` is `{base_url}` (or the Direct Access
    /// URL + `/api/v2` for [`TransportKind::Rest`]); `id` is used for body requests.
    pub async fn call(
        &self,
        kind: TransportKind,
        base_url: &str,
        id: u64,
        outgoing: &Outgoing,
    ) -> Exchange {
        let prepared = match prepare(kind, base_url, id, outgoing) {
            Ok(prepared) => prepared,
            Err(exchange) => return *exchange,
        };
        let Prepared {
            request,
            url,
            body,
            authorization,
        } = prepared;
        let send = |client: &reqwest::Client| {
            let mut builder = client.get(&url);
            if let Some(value) = &authorization {
                builder = builder.header(AUTHORIZATION, value);
            }
            if let Some(body) = &body {
                builder = builder
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone());
            }
            builder.send()
        };
        let started = Instant::now();
        let sent = match send(&self.client).await {
            // A pooled connection closed under the request, before any answer: once more,
            // on a connection of its own (see the module's notes).
            Err(error) if failure_kind(&error) == TransportErrorKind::Closed => {
                send(&self.unpooled).await
            }
            sent => sent,
        };
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                // A TLS failure is the target's setup, never a verdict: like an unreachable
                // target, it stops the execution as a harness error.
                if let Some(message) = tls::describe_failure(&error, &authority(&url)) {
                    return failed(kind, request, TransportErrorKind::Connect, message);
                }
                return failed(kind, request, failure_kind(&error), describe(&error));
            }
        };
        let status = response.status().as_u16();
        let deadline = started + self.limits.request_timeout;
        match read_capped(response, self.limits.max_response_bytes, deadline).await {
            Ok(bytes) => Exchange {
                transport: kind,
                request,
                response: Some(Received::from_bytes(Some(status), bytes)),
                failure: None,
                elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            },
            Err(error) => Exchange {
                elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                ..failed(kind, request, error.kind, error.message)
            },
        }
    }
}

/// What kind of failure a request's error is: `Closed` when the connection ended before
/// an answer (closed or reset), the others by what reqwest says went wrong.
fn failure_kind(error: &reqwest::Error) -> TransportErrorKind {
    if error.is_timeout() {
        TransportErrorKind::Timeout
    } else if error.is_connect() {
        TransportErrorKind::Connect
    } else if error.is_builder() {
        TransportErrorKind::Request
    } else {
        TransportErrorKind::Closed
    }
}

/// An HTTP request ready to go: what is recorded, the URL, the body and the
/// `Authorization` value (a signed header computed over the URL and body sent).
pub(crate) struct Prepared {
    pub(crate) request: SentRequest,
    pub(crate) url: String,
    pub(crate) body: Option<String>,
    pub(crate) authorization: Option<String>,
}

/// Builds the GET of `outgoing` under `base_url`: its parameters in the query string, or a
/// JSON-RPC body; the recorded request carries the headers sent. A signed header that
/// cannot be computed is the failed exchange.
pub(crate) fn prepare(
    kind: TransportKind,
    base_url: &str,
    id: u64,
    outgoing: &Outgoing,
) -> Result<Prepared, Box<Exchange>> {
    let (url, body) = url_and_body(kind, base_url, id, outgoing);
    let mut request = SentRequest {
        method: "GET".to_owned(),
        url: url.clone(),
        headers: Vec::new(),
        body: body.clone(),
        id: (kind == TransportKind::HttpBody && outgoing.raw.is_none()).then_some(id),
    };
    let authorization = match &outgoing.authorization {
        None => None,
        Some(Authorization::Value(value)) => Some(value.clone()),
        Some(Authorization::Signed(plan)) => match signed_header(plan, &url, body.as_deref()) {
            Ok(value) => Some(value),
            Err(error) => {
                return Err(Box::new(failed(
                    kind,
                    request,
                    TransportErrorKind::Request,
                    error.to_string(),
                )));
            }
        },
    };
    if let Some(value) = &authorization {
        request
            .headers
            .push(("Authorization".to_owned(), value.clone()));
    }
    if body.is_some() {
        request
            .headers
            .push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    Ok(Prepared {
        request,
        url,
        body,
        authorization,
    })
}

/// The URL of `outgoing` under `base_url` and its body: the parameters in the query
/// string, or a JSON-RPC body (a raw one as the case writes it).
fn url_and_body(
    kind: TransportKind,
    base_url: &str,
    id: u64,
    outgoing: &Outgoing,
) -> (String, Option<String>) {
    let mut url = format!("{base_url}/{}", outgoing.method);
    let body = match kind {
        TransportKind::HttpBody => Some(
            outgoing
                .raw
                .clone()
                .unwrap_or_else(|| jsonrpc::request_text(id, &outgoing.method, &outgoing.params)),
        ),
        _ if outgoing.raw.is_some() => outgoing.raw.clone(),
        _ => {
            let mut query = form_urlencoded::Serializer::new(String::new());
            for (name, value) in &outgoing.params {
                if let Some(text) = harness_protocol::wire::query_value(value) {
                    query.append_pair(name, &text);
                }
            }
            let query = query.finish();
            if !query.is_empty() {
                url.push('?');
                url.push_str(&query);
            }
            None
        }
    };
    (url, body)
}

/// The signed `Authorization` value of SPEC.md 5.6 for a GET of `url` with `body`, as the
/// plan asks it (its own URI or body to sign, and the mistakes a case makes on purpose:
/// the method in lower case, upper-case hex, an altered signature).
fn signed_header(
    plan: &super::SignedPlan,
    url: &str,
    body: Option<&str>,
) -> Result<String, harness_protocol::auth::sign::SignError> {
    let uri = plan.sign_uri.clone().unwrap_or_else(|| request_uri(url));
    let body_bytes = plan.sign_body.as_deref().or(body).unwrap_or("").as_bytes();
    let fields = HttpSignedFields {
        timestamp: plan.timestamp,
        nonce: &plan.nonce,
        method: "GET",
        uri: &uri,
        body: body_bytes,
    };
    let mut header = SignedHeader::sign(&plan.scheme, &plan.client_id, &plan.secret, &fields)?;
    if plan.lowercase_method
        && let Ok(lower) =
            harness_protocol::auth::sign::http_signature_lowercase_method(&plan.secret, &fields)
    {
        header.signature = lower;
    }
    if plan.uppercase_hex {
        header.signature = header.signature.to_ascii_uppercase();
    }
    if plan.altered_signature {
        header.signature = harness_protocol::auth::sign::altered_signature(&header.signature);
    }
    Ok(header.to_header_value())
}

/// The request URI (path and query) of a URL, as the signed scheme signs it.
pub(crate) fn request_uri(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or_else(|| "/".to_owned(), |slash| after_scheme[slash..].to_owned())
}

/// The body of `response`, read within the cap and the process's room for answers in
/// flight (`in_flight.rs`), by `deadline`.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
    deadline: Instant,
) -> Result<Vec<u8>, TransportError> {
    let too_large = || {
        TransportError::new(
            TransportErrorKind::TooLarge,
            format!("response body exceeds {cap} bytes"),
        )
    };
    let announced = response
        .content_length()
        .map(|length| usize::try_from(length).unwrap_or(usize::MAX));
    if announced.is_some_and(|length| length > cap) {
        return Err(too_large());
    }
    let Some(_room) = super::in_flight::reserve(announced.unwrap_or(cap), deadline).await else {
        return Err(TransportError::new(
            TransportErrorKind::Timeout,
            "response body did not complete within the request timeout \
             (no room among the answers in flight)",
        ));
    };
    // Sized once from the announced length (within the cap), so a large page is not grown
    // and copied chunk by chunk; a body that announces none grows once, from its first
    // chunks to the cap it reserved room for ([`grow_within`]), never by doubling (each
    // doubling holds the old buffer and the new at once, half again the room reserved).
    let mut bytes = Vec::with_capacity(announced.unwrap_or(UNANNOUNCED_FIRST_BYTES));
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > cap {
                    return Err(too_large());
                }
                grow_within(&mut bytes, chunk.len(), cap);
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(error) if error.is_timeout() => {
                return Err(TransportError::new(
                    TransportErrorKind::Timeout,
                    "response body did not complete within the request timeout",
                ));
            }
            Err(error) => {
                return Err(TransportError::new(
                    TransportErrorKind::Closed,
                    format!("response body broke off: {}", describe(&error)),
                ));
            }
        }
    }
}

/// The first capacity of a body that announces no length: most such bodies fit.
const UNANNOUNCED_FIRST_BYTES: usize = 64 * 1024;

/// Room in `bytes` for `more` bytes, `cap` at most in all: when it must grow, it grows to
/// the cap at once, copying only what fitted its first capacity.
fn grow_within(bytes: &mut Vec<u8>, more: usize, cap: usize) {
    if bytes.len() + more > bytes.capacity() {
        let wanted = cap.max(bytes.len() + more);
        bytes.reserve_exact(wanted - bytes.len());
    }
}

pub(crate) fn failed(
    kind: TransportKind,
    request: SentRequest,
    failure: TransportErrorKind,
    message: String,
) -> Exchange {
    let url = request.url.clone();
    Exchange {
        transport: kind,
        request,
        response: None,
        failure: Some(TransportError::new(
            failure,
            format!("GET {url}: {message}"),
        )),
        elapsed_ms: 0.0,
    }
}

/// The error and its causes on one line: reqwest's top-level message alone says little.
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uri_keeps_path_and_query() {
        assert_eq!(
            request_uri("http://h:1/api/v2/private/x?a=1&b=2"),
            "/api/v2/private/x?a=1&b=2"
        );
        assert_eq!(request_uri("http://h:1"), "/");
    }

    /// A server that answers the first request of each connection and closes the
    /// connection on the next one without a word (a keep-alive it did not announce it
    /// would end), or, with `answer_none`, closes every connection unanswered. Counts the
    /// connections it accepted.
    async fn closing_server(
        answer_none: bool,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            for _ in 0..16 {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    if answer_none
                        || !matches!(stream.read(&mut buffer).await, Ok(read) if read > 0)
                    {
                        let _ = stream.read(&mut buffer).await;
                        return;
                    }
                    let body = r#"{"jsonrpc":"2.0","id":1,"result":[]}"#;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
                    // The next request on this connection: read, then the connection ends.
                    let _ = stream.read(&mut buffer).await;
                });
            }
        });
        (format!("http://{addr}/api/v2"), accepted)
    }

    fn client() -> HttpClient {
        let dialer = Dialer::new(&harness_model::target_file::TlsTrust::default()).unwrap();
        HttpClient::new(RequestLimits::default(), &dialer).unwrap()
    }

    #[tokio::test]
    async fn a_pooled_connection_closed_under_a_request_is_retried_once_on_a_new_one() {
        use std::sync::atomic::Ordering;
        let (base_url, accepted) = closing_server(false).await;
        let client = client();
        let outgoing = Outgoing {
            method: "public/get_currencies".to_owned(),
            ..Outgoing::default()
        };
        for id in 1..=3 {
            let exchange = client
                .call(TransportKind::HttpQuery, &base_url, id, &outgoing)
                .await;
            assert!(exchange.failure.is_none(), "{id}: {:?}", exchange.failure);
        }
        // The first call's connection (the second call meets it closed), the second call's
        // retry's (not pooled), and the third call's.
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
        let (base_url, accepted) = closing_server(true).await;
        let exchange = client
            .call(TransportKind::HttpQuery, &base_url, 1, &outgoing)
            .await;
        assert_eq!(
            exchange.failure.map(|failure| failure.kind),
            Some(TransportErrorKind::Closed)
        );
        // Sent once more, and no more than that.
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }
}
