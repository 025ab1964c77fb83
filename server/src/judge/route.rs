//! Where a JSON-RPC call goes over HTTP (SPEC.md 1, 4, 4.4): "the method path is appended
//! to `{base_url}`" (a body sent to `{base_url}` itself, or to another method's path, is
//! not; nor is a body naming another method sent to the Direct Access path), `private/logout` is "WebSocket only", and a `private/*` call carries credentials
//! ("`private/*` methods need an OAuth 2.0 style bearer access token"; 5.6's Basic and
//! signed headers stand in for it over HTTP).

use harness_protocol::spec::{self, API_PREFIX};
use harness_protocol::wire::TransportKind;

use super::Tally;
use super::record::{Call, Record};

/// Checks an HTTP call's path, a logout's transport and a private call's credentials.
pub(crate) fn check_route(record: &Record, call: &Call, tally: &mut Tally) {
    let path = match record.transport {
        TransportKind::HttpQuery | TransportKind::HttpBody => record.path(),
        // The Direct Access interface: only a body naming another method than the path
        // is this module's (the rest is `direct.rs`'s).
        TransportKind::Rest if !record.body.is_empty() => {
            record.path().strip_prefix("/direct").unwrap_or_default()
        }
        _ => return,
    };
    let Some(rest) = path.strip_prefix(API_PREFIX) else {
        return;
    };
    let Some(method) = call.method.as_deref() else {
        return;
    };
    check_path(record, rest, method, tally);
    if record.transport == TransportKind::Rest {
        return;
    }
    let Some(entry) = spec::method(method) else {
        return;
    };
    if entry.ws_only() {
        tally.fail(
            "client.logout.ws_only",
            record.transport,
            Some(record.seq),
            format!("{method} went over HTTP; it is served over WebSocket only"),
        );
    }
    if entry.private && entry.interface == spec::Interface::JsonRpc {
        let token_elsewhere =
            call.params.contains_key("access_token") || record.uri.contains("access_token");
        let credential = record.header("authorization").map(|value| {
            value
                .trim()
                .split_once(' ')
                .map_or("", |(_, rest)| rest.trim())
        });
        if credential == Some("") {
            tally.fail(
                "client.private.credentials",
                record.transport,
                Some(record.seq),
                format!("{method} went over HTTP with an Authorization header naming a scheme and no credential"),
            );
        } else if credential.is_some() {
            tally.pass("client.private.credentials", record.transport);
        } else if !token_elsewhere {
            tally.fail(
                "client.private.credentials",
                record.transport,
                Some(record.seq),
                format!("{method} went over HTTP with no Authorization header"),
            );
        }
    }
}

/// The method path after the API prefix (`rest`) names the call's `method`.
fn check_path(record: &Record, rest: &str, method: &str, tally: &mut Tally) {
    // A percent-encoded character is the character (RFC 3986 2.1): `get%5Fmmp_status`
    // names `get_mmp_status`.
    let decoded = percent_encoding::percent_decode_str(rest).decode_utf8_lossy();
    let in_path = decoded.trim_start_matches('/');
    if in_path.is_empty() {
        tally.fail(
            "client.http.path",
            record.transport,
            Some(record.seq),
            format!(
                "{method} went to {} itself; the method path is appended to it",
                if record.transport == TransportKind::Rest {
                    format!("{{direct_access_url}}{API_PREFIX}")
                } else {
                    "{base_url}".to_owned()
                }
            ),
        );
    } else if in_path != method {
        tally.fail(
            "client.http.path",
            record.transport,
            Some(record.seq),
            format!("the path names {in_path} and the body {method}"),
        );
    } else {
        tally.pass("client.http.path", record.transport);
    }
}

#[cfg(test)]
mod tests;
