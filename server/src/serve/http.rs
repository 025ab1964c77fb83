//! The HTTP side: JSON-RPC over `GET /api/v2/<method>`, the Direct Access
//! `lock_portfolio`, and a 404 envelope for everything else.
//!
//! Parameters come from the query string or from a JSON-RPC body sent with the GET
//! (SPEC.md section 1); when both are present the body wins. A body over the size limit is
//! answered with an error envelope instead of a dropped connection: the rest of it is read
//! and discarded up to a hard cap, because a server that stops reading mid-upload makes
//! many clients report a broken pipe instead of the answer.
//!
//! With an [`Observer`](super::Observer) configured, every request (whatever its path or
//! method) is shown to it once its body is read, and may be refused by it; every answer is
//! shown to it before it goes out.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use super::call;
use super::ctx::Transport;
use super::fault::Fault;
use super::observe::{RawAnswer, RawRequest, Wire};
use super::params::Origin;
use super::principal::HttpAuth;
use super::{ServerState, observe};
use harness_protocol::jsonrpc::{self, ErrorObject, code};
use harness_protocol::spec;

/// How much of an oversized body is read and thrown away before the answer goes out.
const DRAIN_FACTOR: usize = 16;

/// The routes of the reference server.
pub(crate) fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .route(spec::WS_PATH, get(super::ws::upgrade))
        .route(
            &format!("/direct{}/private/lock_portfolio", spec::API_PREFIX),
            any(direct),
        )
        .route(
            &format!(
                "/direct{}/{}",
                spec::API_PREFIX,
                super::direct_order::DIRECT_ORDER_METHOD
            ),
            any(direct_order),
        )
        .route(
            &format!(
                "/direct{}/{}",
                spec::API_PREFIX,
                super::orders::ORDER_READ_METHOD
            ),
            any(direct_read),
        )
        .route("/reference/arrivals", get(super::arrivals::endpoint))
        .route(
            &format!("{}/{{*method}}", spec::API_PREFIX),
            any(jsonrpc_get),
        )
        .fallback(not_found)
        .with_state(state)
}

/// What became of the request body.
enum BodyRead {
    Complete(Bytes),
    TooLarge,
    Broken,
}

async fn read_body(body: Body, limit: usize) -> BodyRead {
    let drain_cap = limit.saturating_mul(DRAIN_FACTOR).max(1 << 20);
    let mut stream = body.into_data_stream();
    let mut collected: Vec<u8> = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return BodyRead::Broken;
        };
        total = total.saturating_add(chunk.len());
        if total > drain_cap {
            break;
        }
        if total <= limit {
            collected.extend_from_slice(&chunk);
        }
    }
    if total > limit {
        BodyRead::TooLarge
    } else {
        BodyRead::Complete(Bytes::from(collected))
    }
}

fn authorization(headers: &HeaderMap) -> Option<&str> {
    // A header that is not visible ASCII is kept as an empty value, so it is refused as an
    // unsupported scheme rather than ignored as if absent.
    headers
        .get(header::AUTHORIZATION)
        .map(|value| value.to_str().unwrap_or(""))
}

fn status_for(state: &ServerState, outcome: &Result<Value, ErrorObject>) -> StatusCode {
    match outcome {
        Ok(_) if state.fault(Fault::HttpStatus201) => StatusCode::CREATED,
        Ok(_) => StatusCode::OK,
        Err(error) if error.code == code::TOO_MANY_REQUESTS => StatusCode::TOO_MANY_REQUESTS,
        Err(_) => StatusCode::BAD_REQUEST,
    }
}

/// A status and the envelope to send with it.
type Answer = (StatusCode, Value);

fn reply(
    state: &ServerState,
    status: StatusCode,
    id: Value,
    outcome: Result<Value, ErrorObject>,
) -> Answer {
    let status = if outcome.as_ref().is_err_and(super::params::is_crash) {
        StatusCode::INTERNAL_SERVER_ERROR
    } else if outcome.is_err() && state.variant(super::Variant::ErrorsStatus200) {
        StatusCode::OK
    } else {
        status
    };
    (status, state.envelope(id, outcome))
}

fn respond((status, envelope): Answer) -> Response {
    if let Value::String(text) = envelope {
        // A crashed parser's answer (`message::CRASH_TEXT`): no envelope.
        return (status, [(header::CONTENT_TYPE, "text/plain")], text).into_response();
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        jsonrpc::to_text(&envelope),
    )
        .into_response()
}

/// Reads the body of a GET (other methods are answered without reading it, unless an
/// observer wants to see what they carried), shows the request to the observer, answers it
/// unless the observer refused it (a GET by `answer`, any other method as not found), and
/// shows the answer.
async fn observed(
    state: &ServerState,
    request: Request,
    answer: fn(&ServerState, &Parts, BodyRead) -> Answer,
) -> Response {
    let answer = |state: &ServerState, parts: &Parts, read: BodyRead| {
        if parts.method == Method::GET {
            answer(state, parts, read)
        } else {
            not_found_answer(state)
        }
    };
    let (parts, body) = request.into_parts();
    let read = if parts.method == Method::GET || state.observer.is_some() {
        read_body(body, state.max_body_bytes).await
    } else {
        BodyRead::Complete(Bytes::new())
    };
    // Its last byte is in: the request has arrived (for a race's arrival spread).
    if let Some(ConnectInfo(peer)) = parts.extensions.get::<ConnectInfo<std::net::SocketAddr>>() {
        state.arrivals.record(*peer);
    }
    let Some(observer) = &state.observer else {
        return respond(answer(state, &parts, read));
    };
    let body = match &read {
        BodyRead::Complete(bytes) => bytes.clone(),
        BodyRead::TooLarge | BodyRead::Broken => Bytes::new(),
    };
    let connection = parts
        .extensions
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(|| "http".to_owned(), |ConnectInfo(peer)| peer.to_string());
    let raw = RawRequest {
        seq: state.next_seq(),
        wire: Wire::Http,
        connection,
        at_ms: state.now_ms(),
        method: parts.method.as_str().to_owned(),
        uri: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned()),
        headers: observe::header_list(&parts.headers),
        body,
    };
    let answered = match observer.request(&raw) {
        Some(error) => {
            let id =
                jsonrpc::parse_request(&raw.body).map_or_else(|(id, _)| id, |incoming| incoming.id);
            reply(state, StatusCode::BAD_REQUEST, id, Err(error))
        }
        None => answer(state, &parts, read),
    };
    observer.answer(&RawAnswer {
        seq: raw.seq,
        at_ms: state.now_ms(),
        status: Some(answered.0.as_u16()),
        body: answered.1.clone(),
    });
    respond(answered)
}

async fn jsonrpc_get(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    if let Some(plain) = bare_url_plain(&state, request.uri().path()) {
        return plain;
    }
    observed(&state, request, answer_jsonrpc).await
}

/// Under the `bare-url-plain` variant, `{base_url}` itself (which names no method, and of
/// which SPEC.md says nothing) is answered 404 with a plain-text body.
fn bare_url_plain(state: &ServerState, path: &str) -> Option<Response> {
    let bare = path
        .strip_prefix(spec::API_PREFIX)
        .is_some_and(|rest| matches!(rest, "" | "/"));
    (bare && state.variant(super::Variant::BareUrlPlain)).then(|| {
        (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain")],
            "404 page not found",
        )
            .into_response()
    })
}

fn answer_jsonrpc(state: &ServerState, parts: &Parts, read: BodyRead) -> Answer {
    let path = parts.uri.path();
    let method_name = path
        .strip_prefix(spec::API_PREFIX)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or_default()
        .to_owned();
    let uri = parts
        .uri
        .path_and_query()
        .map_or(path, |path_and_query| path_and_query.as_str());
    let body = match read {
        BodyRead::Complete(bytes) => bytes,
        BodyRead::TooLarge => {
            let error = ErrorObject::invalid_request("request body exceeds the size limit");
            return reply(state, StatusCode::BAD_REQUEST, Value::Null, Err(error));
        }
        BodyRead::Broken => {
            let error = ErrorObject::invalid_request("request body could not be read");
            return reply(state, StatusCode::BAD_REQUEST, Value::Null, Err(error));
        }
    };
    let (id, params, origin) = if !body.is_empty() && !state.fault(Fault::HttpBodyIgnored) {
        match state.parse_request(&body) {
            Err((id, error)) => return reply(state, StatusCode::BAD_REQUEST, id, Err(error)),
            Ok(incoming) if incoming.method != method_name => {
                let error = ErrorObject::invalid_request("body method differs from the path");
                return reply(state, StatusCode::BAD_REQUEST, incoming.id, Err(error));
            }
            Ok(incoming) => (incoming.id, incoming.params, Origin::Json),
        }
    } else {
        let query = parts
            .uri
            .query()
            .filter(|_| !state.fault(Fault::HttpQueryIgnored))
            .unwrap_or_default();
        match query_params(query) {
            Ok(params) => (Value::Null, params, Origin::Query),
            Err(error) => return reply(state, StatusCode::BAD_REQUEST, Value::Null, Err(error)),
        }
    };
    let http = HttpAuth {
        authorization: authorization(&parts.headers),
        method: parts.method.as_str(),
        uri,
        path,
        body: &body,
        peer: parts
            .extensions
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .map(|ConnectInfo(peer)| *peer),
    };
    let outcome = call::call(state, Transport::Http(http), &method_name, params, origin);
    let status = status_for(state, &outcome);
    reply(state, status, id, outcome)
}

/// Query-string parameters as strings; a repeated name is refused, since which of the
/// values was meant cannot be known.
pub(crate) fn query_params(query: &str) -> Result<Map<String, Value>, ErrorObject> {
    let mut params = Map::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let name = name.into_owned();
        if params.contains_key(&name) {
            return Err(ErrorObject::invalid_params(&name, "parameter given twice"));
        }
        params.insert(name, Value::String(value.into_owned()));
    }
    Ok(params)
}

/// Whether `method` is served by the Direct Access REST interface (4.13).
fn direct_access(method: &str) -> bool {
    spec::method(method).is_some_and(|method| method.interface == spec::Interface::DirectAccess)
}

async fn direct(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    observed(&state, request, answer_direct).await
}

fn answer_direct(state: &ServerState, parts: &Parts, read: BodyRead) -> Answer {
    let body = match read {
        BodyRead::Complete(bytes) => bytes,
        BodyRead::TooLarge | BodyRead::Broken => {
            let error = ErrorObject::invalid_request("request body could not be accepted");
            return reply(state, StatusCode::BAD_REQUEST, Value::Null, Err(error));
        }
    };
    let mut id = Value::Null;
    let mut has_params = parts.uri.query().is_some_and(|query| !query.is_empty());
    if !body.is_empty() {
        match jsonrpc::parse_request(&body) {
            Err((body_id, error)) => {
                return reply(state, StatusCode::BAD_REQUEST, body_id, Err(error));
            }
            Ok(incoming) if !direct_access(&incoming.method) => {
                let error = ErrorObject::invalid_request("body method differs from the path");
                return reply(state, StatusCode::BAD_REQUEST, incoming.id, Err(error));
            }
            Ok(incoming) => {
                id = incoming.id;
                has_params |= !incoming.params.is_empty();
            }
        }
    }
    let outcome = state.lock_portfolio(authorization(&parts.headers), has_params);
    let status = match &outcome {
        Err(error) if error.code == code::UNAUTHORIZED => StatusCode::UNAUTHORIZED,
        other => status_for(state, other),
    };
    reply(state, status, id, outcome)
}

async fn direct_order(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    observed(&state, request, answer_direct_order).await
}

/// The reference's Direct Access order (`direct_order.rs`); its parameters are not read.
fn answer_direct_order(state: &ServerState, parts: &Parts, _: BodyRead) -> Answer {
    let outcome = state.direct_order(authorization(&parts.headers));
    let status = match &outcome {
        Err(error) if error.code == code::UNAUTHORIZED => StatusCode::UNAUTHORIZED,
        other => status_for(state, other),
    };
    reply(state, status, Value::Null, outcome)
}

async fn direct_read(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    observed(&state, request, answer_direct_read).await
}

/// The reference's Direct Access read of an order (`orders.rs`), its id in the query.
fn answer_direct_read(state: &ServerState, parts: &Parts, _: BodyRead) -> Answer {
    let outcome = query_params(parts.uri.query().unwrap_or_default())
        .and_then(|params| state.direct_read(authorization(&parts.headers), &params));
    let status = match &outcome {
        Err(error) if error.code == code::UNAUTHORIZED => StatusCode::UNAUTHORIZED,
        other => status_for(state, other),
    };
    reply(state, status, Value::Null, outcome)
}

async fn not_found(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    if let Some(plain) = bare_url_plain(&state, request.uri().path()) {
        return plain;
    }
    observed(&state, request, |state, _, _| not_found_answer(state)).await
}

fn not_found_answer(state: &ServerState) -> Answer {
    reply(
        state,
        StatusCode::NOT_FOUND,
        Value::Null,
        Err(ErrorObject::method_not_found()),
    )
}
