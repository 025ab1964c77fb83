//! HTTP transport: GET `{base_url}/<method>` with the parameters in the query string or a
//! JSON-RPC body; and the Direct Access REST GET. TLS and proxies come from the
//! [`Dialer`].

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
    limits: RequestLimits,
}

impl HttpClient {
    /// A client with these limits, connecting as `dialer` says.
    pub fn new(limits: RequestLimits, dialer: &Dialer) -> Result<HttpClient, TransportError> {
        let proxies = dialer.proxies.clone();
        let builder =
            reqwest::Client::builder().use_preconfigured_tls(ClientConfig::clone(&dialer.tls));
        // Without a proxy in the environment, reqwest skips asking for one on every request.
        let builder = if proxies.is_direct() {
            builder.no_proxy()
        } else {
            builder.proxy(reqwest::Proxy::custom(move |url| {
                proxies.proxy_for(url).cloned()
            }))
        };
        let client = builder
            .timeout(limits.request_timeout)
            .connect_timeout(limits.request_timeout)
            .pool_max_idle_per_host(64)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| {
                TransportError::new(
                    TransportErrorKind::Request,
                    format!("failed to build HTTP client: {error}"),
                )
            })?;
        Ok(HttpClient { client, limits })
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
        let mut builder = self.client.get(&url);
        if let Some(value) = &authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        if let Some(body) = &body {
            builder = builder
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        let started = Instant::now();
        let response = match builder.send().await {
            Ok(response) => response,
            Err(error) => {
                // A TLS failure is the target's setup, never a verdict: like an unreachable
                // target, it stops the execution as a harness error.
                if let Some(message) = tls::describe_failure(&error, &authority(&url)) {
                    return failed(kind, request, TransportErrorKind::Connect, message);
                }
                let kind_of_failure = if error.is_timeout() {
                    TransportErrorKind::Timeout
                } else if error.is_connect() {
                    TransportErrorKind::Connect
                } else if error.is_builder() {
                    TransportErrorKind::Request
                } else {
                    TransportErrorKind::Closed
                };
                return failed(kind, request, kind_of_failure, describe(&error));
            }
        };
        let status = response.status().as_u16();
        match read_capped(response, self.limits.max_response_bytes).await {
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
    let mut url = format!("{base_url}/{}", outgoing.method);
    let body: Option<String> = match kind {
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
        Some(Authorization::Signed(plan)) => {
            let uri = plan.sign_uri.clone().unwrap_or_else(|| request_uri(&url));
            let body_bytes = body.as_deref().unwrap_or("").as_bytes();
            let fields = HttpSignedFields {
                timestamp: plan.timestamp,
                nonce: &plan.nonce,
                method: "GET",
                uri: &uri,
                body: body_bytes,
            };
            match SignedHeader::sign(&plan.scheme, &plan.client_id, &plan.secret, &fields) {
                Ok(mut header) => {
                    if plan.uppercase_hex {
                        header.signature = header.signature.to_ascii_uppercase();
                    }
                    if plan.altered_signature {
                        header.signature =
                            harness_protocol::auth::sign::altered_signature(&header.signature);
                    }
                    Some(header.to_header_value())
                }
                Err(error) => {
                    return Err(Box::new(failed(
                        kind,
                        request,
                        TransportErrorKind::Request,
                        error.to_string(),
                    )));
                }
            }
        }
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

/// The request URI (path and query) of a URL, as the signed scheme signs it.
pub(crate) fn request_uri(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or_else(|| "/".to_owned(), |slash| after_scheme[slash..].to_owned())
}

async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, TransportError> {
    // Sized once from the announced length (within the cap), so a large page is not grown
    // and copied chunk by chunk.
    let announced = response.content_length().unwrap_or(0);
    let mut bytes = Vec::with_capacity(usize::try_from(announced).unwrap_or(cap).min(cap));
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > cap {
                    return Err(TransportError::new(
                        TransportErrorKind::TooLarge,
                        format!("response body exceeds {cap} bytes"),
                    ));
                }
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
}
