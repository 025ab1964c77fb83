//! The Direct Access interface (SPEC.md 1, 4.13, 5.8): its one described operation goes to
//! `{direct_access_url}`, never to `{base_url}` or the WebSocket, with the interface's API
//! key as `Authorization: Bearer <API_KEY>` (not in the URL, not an OAuth access token)
//! and "No parameters."

use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

use super::record::{Call, Record};
use super::sessions::Sessions;
use super::{Knowledge, Tally};

/// Checks where a Direct Access call goes, its key and its parameters.
pub(crate) fn check_direct_access(
    record: &Record,
    call: &Call,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let direct_method = call
        .method
        .as_deref()
        .and_then(spec::method)
        .filter(|method| method.interface == spec::Interface::DirectAccess);
    if record.transport != TransportKind::Rest {
        if let Some(method) = direct_method {
            tally.fail(
                "client.direct.address",
                record.transport,
                Some(record.seq),
                format!(
                    "{} went to the JSON-RPC interface over {}; it is served at {{direct_access_url}}",
                    method.name, record.transport
                ),
            );
        }
        return;
    }
    let Some(method) = direct_method else {
        return;
    };
    tally.pass("client.direct.address", record.transport);
    check_key(record, sessions, knowledge, tally);
    let key = knowledge.direct_access_key.as_deref();
    let params: Vec<String> = record
        .query()
        .map(|query| {
            form_urlencoded::parse(query.as_bytes())
                .filter(|(_, value)| Some(value.as_ref()) != key)
                .map(|(name, _)| name.into_owned())
                .collect()
        })
        .unwrap_or_default();
    if !params.is_empty() {
        tally.fail(
            "client.direct.no_params",
            record.transport,
            Some(record.seq),
            format!(
                "{} sends parameters ({}): it takes none",
                method.name,
                params.join(", ")
            ),
        );
    } else if !record.body.is_empty() && !empty_json(&record.body) {
        tally.fail(
            "client.direct.no_params",
            record.transport,
            Some(record.seq),
            format!(
                "{} sends a body of {} bytes: it takes no parameters",
                method.name,
                record.body.len()
            ),
        );
    } else {
        tally.pass("client.direct.no_params", record.transport);
    }
}

/// The key goes as `Authorization: Bearer <API_KEY>`, and it is the interface's key.
fn check_key(record: &Record, sessions: &Sessions, knowledge: &Knowledge, tally: &mut Tally) {
    let clause = "client.direct.key_header";
    let key = knowledge.direct_access_key.as_deref();
    let in_url = key.is_some_and(|key| record.uri.contains(key));
    let bearer = record.header("authorization").and_then(|value| {
        let (scheme, credential) = value.trim().split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| credential.trim().to_owned())
    });
    let problem = match (&bearer, key) {
        _ if in_url => Some("the Direct Access key travels in the URL".to_owned()),
        (None, _) => Some("no `Authorization: Bearer <API_KEY>` header".to_owned()),
        (Some(token), _) if sessions.access_set(token).is_some() => Some(
            "the bearer value is an OAuth access token, not an API key of the Direct Access interface"
                .to_owned(),
        ),
        (Some(token), Some(key)) if token != key => {
            Some("the bearer value is not the Direct Access interface's API key".to_owned())
        }
        (Some(_), Some(_)) => None,
        (Some(_), None) => {
            tally.note(
                clause,
                record.transport,
                "the target names no Direct Access key, so the bearer value was not compared with it",
            );
            return;
        }
    };
    match problem {
        Some(problem) => tally.fail(clause, record.transport, Some(record.seq), problem),
        None => tally.pass(clause, record.transport),
    }
}

/// A body that holds no parameter: `{}` or `null`, as a generic JSON client may send.
pub(crate) fn empty_json(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|value| {
        value.is_null() || value.as_object().is_some_and(serde_json::Map::is_empty)
    })
}

#[cfg(test)]
mod tests;
