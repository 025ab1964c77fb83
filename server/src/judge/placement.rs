//! Where credentials travel (SPEC.md 5.2, 5.3) and which parameters must be sent (4.1,
//! 4.5).
//!
//! Over HTTP the access token goes in `Authorization: Bearer` and never in the URL (a URL
//! ends up in proxy logs, browser history and the server's access log); over WebSocket it
//! goes in `params.access_token`. A token is recognised by the name `access_token` or by
//! being one the judge's server issued. With `client_signature` the client secret must not
//! travel at all.

use serde_json::Value;

use super::record::{Call, Record};
use super::sessions::Sessions;
use super::{Knowledge, Tally};
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// Checks token placement and that the client secret stays home with `client_signature`.
pub(crate) fn check_placement(
    record: &Record,
    call: &Call,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let issued_in = |text: &str| {
        sessions
            .tokens()
            .find(|token| text.contains(token))
            .is_some()
    };
    let query_token = record.query().is_some_and(|query| {
        form_urlencoded::parse(query.as_bytes()).any(|(name, _)| name == "access_token")
    }) || issued_in(&record.uri);
    let placed = Placed {
        record,
        call,
        query_token,
        issued_in: &issued_in,
    };
    match record.transport {
        TransportKind::HttpQuery | TransportKind::HttpBody => placed.check_http(tally),
        TransportKind::Ws => placed.check_ws(tally),
        TransportKind::Rest => {}
    }
    if call.is(spec::AUTH_METHOD) && call.text("grant_type").as_deref() == Some("client_signature")
    {
        check_secret_not_sent(record, call, knowledge, tally);
    }
}

/// A request and where a token was seen in it.
struct Placed<'a> {
    record: &'a Record,
    call: &'a Call,
    /// A token travels in the URL (named `access_token`, or one the server issued).
    query_token: bool,
    /// Whether a text holds a token the server issued.
    issued_in: &'a dyn Fn(&str) -> bool,
}

impl Placed<'_> {
    /// Over HTTP the token goes in `Authorization: Bearer`, never in the URL or the body.
    fn check_http(&self, tally: &mut Tally) {
        let (record, call) = (self.record, self.call);
        let seq = Some(record.seq);
        let bearer = record.header("authorization").is_some_and(|value| {
            value
                .trim()
                .get(..7)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer "))
        });
        let body_token = call.params.contains_key("access_token")
            || (!record.body.is_empty()
                && (self.issued_in)(&String::from_utf8_lossy(&record.body)));
        if self.query_token {
            tally.fail(
                "client.token.http_header",
                record.transport,
                seq,
                "the access token travels in the url; over http it goes in the authorization header",
            );
        } else if body_token {
            tally.fail(
                "client.token.http_header",
                record.transport,
                seq,
                "the access token travels in the request body; over http it goes in the authorization header",
            );
        } else if bearer {
            tally.pass("client.token.http_header", record.transport);
        }
    }

    /// Over WebSocket the token goes in `params.access_token`, nowhere else.
    fn check_ws(&self, tally: &mut Tally) {
        let (record, call) = (self.record, self.call);
        let seq = Some(record.seq);
        let mut elsewhere = call.envelope.clone().unwrap_or(Value::Null);
        if let Some(params) = elsewhere.get_mut("params").and_then(Value::as_object_mut) {
            params.remove("access_token");
        }
        let elsewhere = elsewhere.to_string();
        let misplaced = elsewhere.contains("\"access_token\"") || (self.issued_in)(&elsewhere);
        if self.query_token {
            tally.fail(
                "client.token.ws_param",
                record.transport,
                seq,
                "the access token travels in the websocket url; it goes in params.access_token",
            );
        } else if misplaced {
            tally.fail(
                "client.token.ws_param",
                record.transport,
                seq,
                "the access token travels outside params.access_token",
            );
        } else if call
            .params
            .get("access_token")
            .is_some_and(Value::is_string)
        {
            tally.pass("client.token.ws_param", record.transport);
        }
    }
}

/// With `client_signature` the client secret travels in no form (SPEC.md 4.1).
fn check_secret_not_sent(record: &Record, call: &Call, knowledge: &Knowledge, tally: &mut Tally) {
    let seq = Some(record.seq);
    let clause = "auth.client_signature.secret_not_sent";
    let request_text = format!(
        "{}\n{:?}\n{}",
        record.uri,
        record.headers,
        String::from_utf8_lossy(&record.body)
    );
    // The secret in any form it could travel in: as is, percent-encoded, hex, base64 (a
    // parameter of another name, data), or inside an `Authorization: Basic` header.
    let basic = record
        .header("authorization")
        .and_then(harness_protocol::auth::sign::parse_basic)
        .map(|(_, secret)| secret);
    let leaked = knowledge.secrets.values().any(|secret| {
        !secret.is_empty()
            && (encoded_forms(secret).any(|form| request_text.contains(form.as_str()))
                || basic.as_deref() == Some(secret.as_str()))
    });
    if call.params.contains_key("client_secret") {
        tally.fail(
            clause,
            record.transport,
            seq,
            "a client_signature request carries client_secret",
        );
    } else if leaked {
        tally.fail(
            clause,
            record.transport,
            seq,
            "a client_signature request carries the client secret",
        );
    } else {
        tally.pass(clause, record.transport);
    }
}

/// The forms a secret may travel in unnoticed by a search for its text: itself,
/// percent-encoded, hex (either case) and base64 (standard and URL-safe, padded or not).
fn encoded_forms(secret: &str) -> impl Iterator<Item = String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let bytes = secret.as_bytes();
    let hex = hex::encode(bytes);
    [
        secret.to_owned(),
        form_urlencoded::byte_serialize(bytes).collect(),
        hex.to_ascii_uppercase(),
        hex,
        STANDARD.encode(bytes),
        STANDARD_NO_PAD.encode(bytes),
        URL_SAFE.encode(bytes),
        URL_SAFE_NO_PAD.encode(bytes),
    ]
    .into_iter()
}

/// Checks that a private WebSocket call without `params.access_token` comes on a
/// connection that holds a session token: SPEC.md 5.2 lets only such a connection omit it.
/// Judged on the recording rather than refused live: the server refuses such a call
/// itself, as a real one would.
pub(crate) fn check_ws_token_omitted(
    record: &Record,
    call: &Call,
    sessions: &Sessions,
    tally: &mut Tally,
) {
    let private = call
        .method
        .as_deref()
        .is_some_and(|method| method.starts_with("private/"));
    let presented = call
        .params
        .get("access_token")
        .is_some_and(|token| !token.is_null());
    if record.transport != TransportKind::Ws || !private || presented {
        return;
    }
    tally.judge(
        "client.token.ws_param",
        record.transport,
        record.seq,
        sessions.remembers(&record.connection),
        || {
            format!(
                "{} went without params.access_token on a connection that holds no session token: only a connection authenticated with a session-scoped token (scope session:<name>) may omit it",
                call.method.as_deref().unwrap_or_default()
            )
        },
    );
}

/// The parameters a call cannot do without, as the spec table states them: those the
/// chosen `grant_type` requires (`grant_type` itself when it names none), and the
/// required ones of `private/toggle_subaccount_login` (the ones the clause quotes).
pub(crate) fn check_required_params(record: &Record, call: &Call, tally: &mut Tally) {
    let params = |method: &'static spec::Method, keep: &dyn Fn(spec::Required) -> bool| {
        method
            .params
            .iter()
            .filter(|param| keep(param.required))
            .map(|param| param.name)
            .collect::<Vec<&str>>()
    };
    let toggle = spec::method("private/toggle_subaccount_login");
    let required = match call.method.as_deref().and_then(spec::method) {
        Some(method) if method.param("grant_type").is_some() => match call.text("grant_type") {
            Some(grant) if spec::GRANT_TYPES.contains(&grant.as_str()) => {
                params(method, &|required| {
                    matches!(required, spec::Required::When(grants)
                            if grants.split(' ').any(|named| named == grant))
                })
            }
            _ => vec!["grant_type"],
        },
        Some(method) if toggle.is_some_and(|toggle| toggle.name == method.name) => {
            params(method, &|required| required == spec::Required::Yes)
        }
        _ => return,
    };
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|name| call.params.get(*name).is_none_or(Value::is_null))
        .collect();
    if missing.is_empty() {
        tally.pass("client.params.required", record.transport);
    } else {
        let method = call.method.as_deref().unwrap_or_default();
        let grant = call
            .text("grant_type")
            .map(|grant| format!(" with grant_type {grant}"))
            .unwrap_or_default();
        tally.fail(
            "client.params.required",
            record.transport,
            Some(record.seq),
            format!("{method}{grant} is missing {}", missing.join(", ")),
        );
    }
}

#[cfg(test)]
mod tests;
