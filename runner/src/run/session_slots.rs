//! Session slots a run holds on a target that counts them.
//!
//! SPEC.md 8 does not show the number of session slots, and the suite opens many sessions
//! (`session:<name>` scopes, forks, exchanges). A target file that names the code its server
//! refuses a new session with when its slots are full (`[limits] session_limit_codes`)
//! says the server counts them. The run then keeps to them: the executions of cases that
//! open sessions go one at a time (`Shared::session_lane`), each logs out the sessions it
//! opened when it ends (`private/logout` over a WebSocket of its own, not recorded: the
//! harness tidying up, not a step the case judges), and a step still refused with that
//! code is a skip with the reason, never a failure.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Shared;
use crate::transport::Outgoing;
use harness_model::case::Case;
use harness_model::check::ParsedAnswer;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// The methods whose answer may be a session-scoped token set (SPEC.md 4.1, 4.2, 4.3).
const ISSUERS: [&str; 3] = [
    spec::AUTH_METHOD,
    spec::EXCHANGE_TOKEN_METHOD,
    spec::FORK_TOKEN_METHOD,
];

/// The record of the target file's `[field_names]` that names the field of a fork's
/// answer holding its token (4.3: "response shape: not shown").
const FORK_RECORD: &str = "fork_token";

/// The access token of a session-scoped token set `method` answered with: its granted
/// scope names a session (5.4 `session:<name>`), or it is a fork's, which always opens a
/// session (4.3) and whose token is in the field the target file names for it
/// (`[field_names.fork_token] access_token`, else `access_token`).
pub(crate) fn opened_session(
    method: &str,
    answer: &ParsedAnswer,
    field_names: &BTreeMap<String, BTreeMap<String, String>>,
) -> Option<String> {
    if !ISSUERS.contains(&method) {
        return None;
    }
    let result = answer.json.as_ref()?.get("result")?;
    let forked = method == spec::FORK_TOKEN_METHOD;
    let field = field_names
        .get(FORK_RECORD)
        .and_then(|fields| fields.get("access_token"))
        .filter(|_| forked)
        .map_or("access_token", String::as_str);
    let in_session = forked
        || result
            .get("scope")
            .and_then(Value::as_str)
            .is_some_and(|scope| {
                scope
                    .split_whitespace()
                    .any(|word| word.starts_with("session:"))
            });
    let token = result.get(field).and_then(Value::as_str)?;
    in_session.then(|| token.to_owned())
}

/// Whether a case's steps may open a session: one asks for a `session:` scope, or forks
/// a token (a fork is always a new session, 4.3).
pub(crate) fn opens_sessions(case: &Case) -> bool {
    let steps = serde_json::to_string(&case.steps).unwrap_or_default();
    steps.contains("session:") || steps.contains(spec::FORK_TOKEN_METHOD)
}

/// Logs out the sessions an execution `opened`, where the target counts its slots, so the
/// next execution finds them free. Answers are not judged, nor recorded.
pub(crate) async fn end_sessions(shared: &Shared, opened: Vec<String>) {
    if shared.target.limits.session_limit_codes.is_empty() || opened.is_empty() {
        return;
    }
    let mut session = shared.session();
    for (id, token) in (1..).zip(opened) {
        let mut params = Map::new();
        params.insert("access_token".to_owned(), Value::from(token));
        let logout = Outgoing {
            method: spec::LOGOUT_METHOD.to_owned(),
            params,
            ..Outgoing::default()
        };
        let _ = session.call(TransportKind::Ws, id, &logout).await;
        // A server may close the connection after a logout (4.4 does not say): the next
        // one goes over a connection of its own.
        session.close().await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer(result: Value) -> ParsedAnswer {
        ParsedAnswer {
            json: Some(json!({"jsonrpc": "2.0", "id": 1, "result": result})),
            status: Some(200),
            body: String::new(),
            request_id: Some(1),
            duplicate_members: Vec::new(),
            binary_frame: false,
        }
    }

    #[test]
    fn only_a_session_scoped_token_set_opens_a_session() {
        let none = BTreeMap::new();
        let session = answer(json!({"access_token": "at", "scope": "session:a trade:read"}));
        let connection = answer(json!({"access_token": "at", "scope": "connection trade:read"}));
        assert_eq!(
            opened_session("public/auth", &session, &none).as_deref(),
            Some("at")
        );
        assert_eq!(
            opened_session("public/fork_token", &session, &none).as_deref(),
            Some("at")
        );
        assert_eq!(opened_session("public/auth", &connection, &none), None);
        assert_eq!(
            opened_session("private/get_mmp_status", &session, &none),
            None
        );
    }

    #[test]
    fn a_fork_opens_a_session_in_the_field_the_target_file_names() {
        let names = BTreeMap::from([(
            FORK_RECORD.to_owned(),
            BTreeMap::from([("access_token".to_owned(), "token".to_owned())]),
        )]);
        let fork = answer(json!({"token": "ft"}));
        assert_eq!(
            opened_session("public/fork_token", &fork, &names).as_deref(),
            Some("ft")
        );
        assert_eq!(opened_session("public/auth", &fork, &names), None);
    }
}
