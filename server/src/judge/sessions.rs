//! Who is calling: the judge follows the tokens it hands out, so that requests made with a
//! token, with its refreshed successor, or on a WebSocket connection that remembers it all
//! count as one client session.
//!
//! Pagination and pacing are judged per session rather than per token: a client that
//! refreshes its token in the middle of a walk is still walking, and a client that logs in
//! again does not get a new rate budget from the spec's point of view.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::record::{Call, Record};
use super::signed::parse_signed;
use harness_protocol::auth::sign;
use harness_protocol::spec;

/// The tokens issued so far and the session each belongs to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sessions {
    access: HashMap<String, usize>,
    refresh: HashMap<String, usize>,
    /// Access tokens issued with a `session:<name>` scope (SPEC.md 5.4).
    session_scoped: HashSet<String>,
    /// The session a WebSocket connection last authenticated as.
    connections: HashMap<String, usize>,
    /// The session-scoped token each WebSocket connection remembers (SPEC.md 5.2).
    remembered: HashMap<String, String>,
    /// The client id of each session, when known.
    clients: Vec<Option<String>>,
}

/// Whose request it is, as far as the judge can tell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Caller {
    /// A stable key: `session#<n>`, `client:<id>` or `anonymous:<connection>`.
    pub(crate) key: String,
    /// The client id, when known.
    pub(crate) client: Option<String>,
}

impl Sessions {
    /// Every access token issued so far.
    pub(crate) fn tokens(&self) -> impl Iterator<Item = &str> {
        self.access.keys().map(String::as_str)
    }

    /// Whether a WebSocket connection holds a session token, so that its requests may
    /// omit `access_token` (SPEC.md 5.2).
    pub(crate) fn remembers(&self, connection: &str) -> bool {
        self.remembered.contains_key(connection)
    }

    /// Learns from an answered request: tokens issued, and what a connection remembers.
    pub(crate) fn learn(&mut self, record: &Record, call: &Call) {
        if record.connection.starts_with("ws#") {
            self.remember(record, call);
        }
        let Some(result) = record.result() else {
            return;
        };
        let Some(access) = result.get("access_token").and_then(Value::as_str) else {
            return;
        };
        if !spec::token_issuing_methods().any(|method| call.is(method.name)) {
            return;
        }
        let previous = call
            .text("refresh_token")
            .and_then(|refresh| self.refresh.get(&refresh).copied());
        let session = match (call.text("grant_type").as_deref(), previous) {
            (Some("refresh_token"), Some(session)) => session,
            (_, Some(parent)) => {
                let client = self.clients.get(parent).cloned().flatten();
                self.new_session(client)
            }
            _ => {
                let client = call.text("client_id").or_else(|| basic_client(record));
                self.new_session(client)
            }
        };
        self.access.insert(access.to_owned(), session);
        if let Some(refresh) = result.get("refresh_token").and_then(Value::as_str) {
            self.refresh.insert(refresh.to_owned(), session);
        }
        let session_scoped = result
            .get("scope")
            .and_then(Value::as_str)
            .is_some_and(|scope| scope.split(' ').any(|item| item.starts_with("session:")));
        if session_scoped {
            self.session_scoped.insert(access.to_owned());
        }
        if record.connection.starts_with("ws#") {
            self.connections.insert(record.connection.clone(), session);
            if session_scoped {
                self.remembered
                    .insert(record.connection.clone(), access.to_owned());
            }
        }
    }

    /// What a WebSocket connection remembers after a request: a session-scoped token it
    /// presented, and nothing once it logged out.
    fn remember(&mut self, record: &Record, call: &Call) {
        if call.is(spec::LOGOUT_METHOD) && record.result().is_some() {
            self.remembered.remove(&record.connection);
        } else if let Some(token) = call.text("access_token")
            && self.session_scoped.contains(&token)
        {
            self.remembered.insert(record.connection.clone(), token);
        }
    }

    fn new_session(&mut self, client: Option<String>) -> usize {
        self.clients.push(client);
        self.clients.len() - 1
    }

    fn session(&self, session: usize) -> Caller {
        Caller {
            key: format!("session#{session}"),
            client: self.clients.get(session).cloned().flatten(),
        }
    }

    /// The caller of a request: its token's session, its API key, or its connection.
    pub(crate) fn caller(&self, record: &Record, call: &Call, scheme: Option<&str>) -> Caller {
        let token = match record.header("authorization") {
            Some(value) => {
                let value = value.trim();
                let (name, rest) = value.split_once(' ').unwrap_or((value, ""));
                if name.eq_ignore_ascii_case("bearer") {
                    Some(rest.trim().to_owned())
                } else if let Some(client) = basic_client(record) {
                    return key_caller(client);
                } else if let Some(header) = parse_signed(value, scheme) {
                    return key_caller(header.client_id);
                } else {
                    None
                }
            }
            None => call.text("access_token"),
        };
        if let Some(session) = token.and_then(|token| self.access.get(&token).copied()) {
            return self.session(session);
        }
        if let Some(session) = self.connections.get(&record.connection) {
            return self.session(*session);
        }
        Caller {
            key: format!("anonymous:{}", record.connection),
            client: None,
        }
    }
}

fn key_caller(client: String) -> Caller {
    Caller {
        key: format!("client:{client}"),
        client: Some(client),
    }
}

/// The client id of a `Basic` authorization header.
fn basic_client(record: &Record) -> Option<String> {
    record
        .header("authorization")
        .and_then(sign::parse_basic)
        .map(|(client, _)| client)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use harness_protocol::wire::TransportKind;

    fn answered(seq: u64, uri: &str, result: Value) -> Record {
        Record {
            event: seq * 2,
            uri: uri.to_owned(),
            ..Record::sample(seq, TransportKind::HttpQuery)
        }
        .answered(json!({"jsonrpc": "2.0", "id": null, "result": result}))
    }

    fn ws_login(seq: u64, connection: &str, scope: &str) -> Record {
        let mut login = answered(
            seq,
            "/ws/api/v2",
            json!({"access_token": format!("at{seq}"), "refresh_token": format!("rt{seq}"), "scope": scope}),
        );
        login.transport = TransportKind::Ws;
        login.connection = connection.to_owned();
        login.body = json!({"jsonrpc": "2.0", "id": seq, "method": "public/auth", "params": {"grant_type": "client_credentials", "client_id": "c", "client_secret": "s"}}).to_string().into_bytes();
        login
    }

    #[test]
    fn only_a_session_scoped_login_is_remembered_by_its_connection() {
        let mut sessions = Sessions::default();
        let connection_scoped = ws_login(1, "ws#1", "connection account:read");
        sessions.learn(&connection_scoped, &connection_scoped.call());
        assert!(!sessions.remembers("ws#1"));
        let session_scoped = ws_login(2, "ws#2", "session:bot account:read");
        sessions.learn(&session_scoped, &session_scoped.call());
        assert!(sessions.remembers("ws#2"));
        assert!(!sessions.remembers("ws#1"));
    }

    #[test]
    fn a_refreshed_token_stays_in_its_session() {
        let mut sessions = Sessions::default();
        let login = answered(
            1,
            "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s",
            json!({"access_token": "at1", "refresh_token": "rt1"}),
        );
        sessions.learn(&login, &login.call());
        let refresh = answered(
            2,
            "/api/v2/public/auth?grant_type=refresh_token&refresh_token=rt1",
            json!({"access_token": "at2", "refresh_token": "rt2"}),
        );
        sessions.learn(&refresh, &refresh.call());
        let mut use_first = answered(3, "/api/v2/private/get_transaction_log", json!({}));
        use_first.headers = vec![("authorization".to_owned(), "Bearer at1".to_owned())];
        let mut use_second = use_first.clone();
        use_second.headers = vec![("authorization".to_owned(), "Bearer at2".to_owned())];
        let first = sessions.caller(&use_first, &use_first.call(), None);
        let second = sessions.caller(&use_second, &use_second.call(), None);
        assert_eq!(first, second);
        assert_eq!(first.client.as_deref(), Some("c"));
        assert!(sessions.tokens().any(|token| token == "at2"));
    }

    #[test]
    fn a_token_exchanged_from_a_session_is_a_new_session_of_the_same_client() {
        let mut sessions = Sessions::default();
        let login = answered(
            1,
            "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s",
            json!({"access_token": "at1", "refresh_token": "rt1"}),
        );
        sessions.learn(&login, &login.call());
        let exchange = answered(
            2,
            "/api/v2/public/exchange_token?refresh_token=rt1&subject_id=7",
            json!({"access_token": "at2", "refresh_token": "rt2"}),
        );
        sessions.learn(&exchange, &exchange.call());
        let caller = |token: &str| {
            let mut call = answered(3, "/api/v2/private/get_transaction_log", json!({}));
            call.headers = vec![("authorization".to_owned(), format!("Bearer {token}"))];
            sessions.caller(&call, &call.call(), None)
        };
        let (first, exchanged) = (caller("at1"), caller("at2"));
        assert_ne!(first.key, exchanged.key);
        assert_eq!(exchanged.client.as_deref(), Some("c"));
    }

    #[test]
    fn a_connection_remembers_a_session_token_presented_on_it_until_it_logs_out() {
        let mut sessions = Sessions::default();
        let login = answered(
            1,
            "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s",
            json!({"access_token": "at1", "refresh_token": "rt1", "scope": "session:bot"}),
        );
        sessions.learn(&login, &login.call());
        let mut presented = answered(2, "/ws/api/v2", json!([]));
        presented.transport = TransportKind::Ws;
        presented.connection = "ws#5".to_owned();
        presented.body = json!({"jsonrpc": "2.0", "id": 2, "method": "private/get_mmp_status", "params": {"access_token": "at1"}}).to_string().into_bytes();
        sessions.learn(&presented, &presented.call());
        assert!(sessions.remembers("ws#5"));
        let mut logout = presented.clone();
        logout.body = json!({"jsonrpc": "2.0", "id": 3, "method": "private/logout", "params": {}})
            .to_string()
            .into_bytes();
        sessions.learn(&logout, &logout.call());
        assert!(!sessions.remembers("ws#5"));
    }

    #[test]
    fn a_basic_header_names_its_client_as_the_caller() {
        let sessions = Sessions::default();
        let mut call = answered(1, "/api/v2/private/get_transaction_log", json!({}));
        // base64 of "c:s3"
        call.headers = vec![("authorization".to_owned(), "Basic YzpzMw==".to_owned())];
        let caller = sessions.caller(&call, &call.call(), None);
        assert_eq!(caller.client.as_deref(), Some("c"));
        assert_eq!(caller.key, "client:c");
    }
}
