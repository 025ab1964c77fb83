//! Who is calling, and what became of each token: the judge follows the tokens it hands
//! out, so that requests made with a token, with its refreshed successor, or on a WebSocket
//! connection that remembers it all count as one client session, and so that a token used
//! after its end (refreshed away, logged out, its subaccount disabled) is known as such.
//!
//! Pagination and pacing are judged per session rather than per token: a client that
//! refreshes its token in the middle of a walk is still walking, and a client that logs in
//! again does not get a new rate budget from the spec's point of view.

use std::collections::HashMap;

use serde_json::Value;

use super::record::{Call, Record};
use super::signed::parse_signed;
use harness_protocol::auth::scope::Scope;
use harness_protocol::auth::sign;
use harness_protocol::spec;

/// One token set a token-issuing method handed out (SPEC.md 2.1), and its fate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TokenSet {
    /// The client session it belongs to (a login and its refreshes).
    pub(crate) session: usize,
    /// The request that issued it.
    pub(crate) issued_seq: u64,
    /// When its answer went out, ms since the epoch (its lifetime counts from there).
    pub(crate) issued_ms: u64,
    /// The event of that answer.
    pub(crate) issued_event: u64,
    /// `expires_in`, seconds.
    pub(crate) expires_in: Option<u64>,
    /// The scope granted (`None` when the answer carried none).
    pub(crate) scope: Option<Scope>,
    /// The subaccount an exchange made it act for (`subject_id`), kept through refreshes
    /// and forks.
    pub(crate) subject: Option<u64>,
    /// How its access token ended, if it did: the cause and the answer event after which
    /// a use of it is a use of a dead token.
    pub(crate) access_end: Option<End>,
    /// How its refresh token ended, if it did.
    pub(crate) refresh_end: Option<End>,
}

impl TokenSet {
    /// Whether it is session-scoped (a `session:<name>` word, SPEC.md 5.4).
    pub(crate) fn session_name(&self) -> Option<&str> {
        self.scope.as_ref()?.session.as_deref()
    }
}

/// Why a token stopped being valid (SPEC.md 4.4, 4.5, 5.3), and when the client knew.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct End {
    /// What ended it.
    pub(crate) cause: EndCause,
    /// The request that ended it.
    pub(crate) seq: u64,
    /// That request's arrival event: on its own connection, whatever the client sent
    /// after it, it sent knowing.
    pub(crate) request_event: u64,
    /// The event of its answer.
    pub(crate) event: u64,
    /// When its answer went out, ms since the epoch.
    pub(crate) answered_ms: u64,
    /// The connection it came on.
    pub(crate) connection: String,
}

/// How long after a refresh's answer a request with the token it replaced, on another
/// connection, may still have been sent before the client read the answer (in flight beside
/// it: an asynchronous client refreshes while its other calls go on), and is not judged a
/// use of a dead token.
pub(crate) const REFRESH_IN_FLIGHT_MS: u64 = 100;

/// The same for a logout's or a disable's answer: none. These end a session, which a
/// client does not race its own calls against; a call arriving after the answer went out
/// came from a client that had every reason to know (a sequential client sends its next
/// call within a millisecond of reading an answer, so any grace would hide it).
pub(crate) const END_IN_FLIGHT_MS: u64 = 0;

impl End {
    /// Whether `record` came after the client knew of the end: on the same connection,
    /// after the ending request; on another, after the answer and the time it may have
    /// been in flight beside it ([`REFRESH_IN_FLIGHT_MS`], [`END_IN_FLIGHT_MS`]).
    pub(crate) fn precedes(&self, record: &Record) -> bool {
        let in_flight = match self.cause {
            EndCause::Refreshed => REFRESH_IN_FLIGHT_MS,
            EndCause::LoggedOut | EndCause::Disabled => END_IN_FLIGHT_MS,
        };
        if record.connection == self.connection {
            record.event > self.request_event
        } else {
            record.event > self.event && record.at_ms >= self.answered_ms.saturating_add(in_flight)
        }
    }
}

/// What ends a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EndCause {
    /// A refresh of a connection-scoped token (5.3: "invalidates the previous one").
    Refreshed,
    /// A logout (4.4: "Invalidates the tokens.").
    LoggedOut,
    /// A disable of the subaccount's login (4.5: "Disabling ends any active session of
    /// that subaccount immediately").
    Disabled,
}

/// A subaccount's login disabled (SPEC.md 4.5: "Disabling ends any active session of that
/// subaccount immediately").
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Disable {
    /// The subaccount's user id (`sid`).
    pub(crate) user: u64,
    /// The end it puts to the subaccount's own sessions.
    pub(crate) end: End,
}

/// The tokens issued so far and the session each belongs to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sessions {
    /// Token sets by issue order.
    sets: Vec<TokenSet>,
    /// Each access token's set.
    access: HashMap<String, usize>,
    /// Each refresh token's set.
    refresh: HashMap<String, usize>,
    /// The session a WebSocket connection last authenticated as.
    connections: HashMap<String, usize>,
    /// The session-scoped token each WebSocket connection remembers (SPEC.md 5.2).
    remembered: HashMap<String, String>,
    /// The client id of each session, when known.
    clients: Vec<Option<String>>,
    /// Subaccount logins disabled, in order.
    disables: Vec<Disable>,
}

/// Whose request it is, as far as the judge can tell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Caller {
    /// A stable key: `session#<n>`, `client:<id>` or `anonymous:<connection>`.
    pub(crate) key: String,
    /// The client id, when known.
    pub(crate) client: Option<String>,
    /// The account whose budgets the request draws on: the client id, or the subaccount
    /// an exchanged token acts for (`subject:<id>`); `None` when unknown.
    pub(crate) account: Option<String>,
}

impl Sessions {
    /// Every access token issued so far.
    pub(crate) fn tokens(&self) -> impl Iterator<Item = &str> {
        self.access.keys().map(String::as_str)
    }

    /// The token set of an access token the judge's server issued.
    pub(crate) fn access_set(&self, token: &str) -> Option<&TokenSet> {
        self.sets.get(*self.access.get(token)?)
    }

    /// The token set of a refresh token the judge's server issued.
    pub(crate) fn refresh_set(&self, token: &str) -> Option<&TokenSet> {
        self.sets.get(*self.refresh.get(token)?)
    }

    /// The client id of a token set's session.
    pub(crate) fn client_of(&self, set: &TokenSet) -> Option<&str> {
        self.clients.get(set.session)?.as_deref()
    }

    /// The token sets issued so far.
    pub(crate) fn sets(&self) -> &[TokenSet] {
        &self.sets
    }

    /// The subaccount logins disabled so far.
    pub(crate) fn disables(&self) -> &[Disable] {
        &self.disables
    }

    /// Whether a WebSocket connection holds a session token, so that its requests may
    /// omit `access_token` (SPEC.md 5.2).
    pub(crate) fn remembers(&self, connection: &str) -> bool {
        self.remembered.contains_key(connection)
    }

    /// The session token a WebSocket connection remembers.
    pub(crate) fn remembered(&self, connection: &str) -> Option<&str> {
        self.remembered.get(connection).map(String::as_str)
    }

    /// The access token a request presents: its bearer header, its `access_token`
    /// parameter, or on WebSocket the token its connection remembers.
    pub(crate) fn presented(&self, record: &Record, call: &Call) -> Option<String> {
        if let Some(value) = record.header("authorization") {
            let value = value.trim();
            let (name, rest) = value.split_once(' ').unwrap_or((value, ""));
            return name
                .eq_ignore_ascii_case("bearer")
                .then(|| rest.trim().to_owned());
        }
        call.text("access_token").or_else(|| {
            record
                .connection
                .starts_with("ws#")
                .then(|| self.remembered(&record.connection).map(str::to_owned))
                .flatten()
        })
    }

    /// Learns from an answered request: tokens issued, tokens ended, subaccounts
    /// disabled, and what a connection remembers.
    pub(crate) fn learn(&mut self, record: &Record, call: &Call) {
        let ended_by = record.answer.as_ref().map(|answer| answer.event);
        if let (Some(event), Some(_)) = (ended_by, record.result()) {
            self.learn_ends(record, call, event);
        }
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
        let parent = call
            .text("refresh_token")
            .and_then(|refresh| self.refresh.get(&refresh).copied());
        let session = match (call.text("grant_type").as_deref(), parent) {
            (Some("refresh_token"), Some(parent)) => self.sets[parent].session,
            (_, Some(parent)) => {
                let client = self
                    .clients
                    .get(self.sets[parent].session)
                    .cloned()
                    .flatten();
                self.new_session(client)
            }
            _ => {
                let client = call.text("client_id").or_else(|| basic_client(record));
                self.new_session(client)
            }
        };
        let subject = if call.is(spec::EXCHANGE_TOKEN_METHOD) {
            call.int("subject_id").and_then(|id| u64::try_from(id).ok())
        } else {
            parent.and_then(|parent| self.sets[parent].subject)
        };
        let scope = result
            .get("scope")
            .and_then(Value::as_str)
            .map(Scope::parse);
        let session_scoped = scope.as_ref().is_some_and(|scope| scope.session.is_some());
        let answer = record.answer.as_ref();
        self.sets.push(TokenSet {
            session,
            issued_seq: record.seq,
            issued_ms: answer.map_or(record.at_ms, |answer| answer.at_ms),
            issued_event: answer.map_or(record.event, |answer| answer.event),
            expires_in: result.get("expires_in").and_then(Value::as_u64),
            scope,
            subject,
            access_end: None,
            refresh_end: None,
        });
        let set = self.sets.len() - 1;
        self.access.insert(access.to_owned(), set);
        if let Some(refresh) = result.get("refresh_token").and_then(Value::as_str) {
            self.refresh.insert(refresh.to_owned(), set);
        }
        if record.connection.starts_with("ws#") {
            self.connections.insert(record.connection.clone(), session);
            if session_scoped {
                self.remembered
                    .insert(record.connection.clone(), access.to_owned());
            }
        }
    }

    /// What a successful request ends: the connection-scoped token a refresh replaces
    /// (SPEC.md 5.3), the tokens of the session a logout ends (4.4), a subaccount's
    /// sessions (4.5).
    fn learn_ends(&mut self, record: &Record, call: &Call, event: u64) {
        let answered_ms = record
            .answer
            .as_ref()
            .map_or(record.at_ms, |answer| answer.at_ms);
        let end = |cause| End {
            cause,
            seq: record.seq,
            request_event: record.event,
            event,
            answered_ms,
            connection: record.connection.clone(),
        };
        if call.is(spec::AUTH_METHOD)
            && call.text("grant_type").as_deref() == Some("refresh_token")
            && let Some(parent) = call
                .text("refresh_token")
                .and_then(|token| self.refresh.get(&token).copied())
            && self.sets[parent].session_name().is_none()
        {
            self.sets[parent]
                .access_end
                .get_or_insert(end(EndCause::Refreshed));
        }
        if call.is(spec::LOGOUT_METHOD)
            && let Some(set) = self
                .presented(record, call)
                .and_then(|token| self.access.get(&token).copied())
        {
            let session = self.sets[set].session;
            for set in self.sets.iter_mut().filter(|set| set.session == session) {
                set.access_end.get_or_insert(end(EndCause::LoggedOut));
                set.refresh_end.get_or_insert(end(EndCause::LoggedOut));
            }
        }
        if call.is(spec::TOGGLE_LOGIN_METHOD)
            && call.text("state").as_deref() == Some("disable")
            && let Some(user) = call.int("sid").and_then(|id| u64::try_from(id).ok())
        {
            self.disables.push(Disable {
                user,
                end: end(EndCause::Disabled),
            });
        }
    }

    /// What a WebSocket connection remembers after a request: a session-scoped token it
    /// presented, and nothing once it logged out.
    fn remember(&mut self, record: &Record, call: &Call) {
        if call.is(spec::LOGOUT_METHOD) && record.result().is_some() {
            self.remembered.remove(&record.connection);
        } else if let Some(token) = call.text("access_token")
            && self
                .access_set(&token)
                .is_some_and(|set| set.session_name().is_some())
        {
            self.remembered.insert(record.connection.clone(), token);
        }
    }

    fn new_session(&mut self, client: Option<String>) -> usize {
        self.clients.push(client);
        self.clients.len() - 1
    }

    fn session(&self, session: usize, subject: Option<u64>) -> Caller {
        let client = self.clients.get(session).cloned().flatten();
        Caller {
            key: format!("session#{session}"),
            account: match subject {
                Some(subject) => Some(format!("subject:{subject}")),
                None => client.clone(),
            },
            client,
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
        if let Some(set) = token.and_then(|token| self.access_set(&token)) {
            return self.session(set.session, set.subject);
        }
        if let Some(session) = self.connections.get(&record.connection) {
            let subject = self
                .sets
                .iter()
                .rev()
                .find(|set| set.session == *session)
                .and_then(|set| set.subject);
            return self.session(*session, subject);
        }
        Caller {
            key: format!("anonymous:{}", record.connection),
            client: None,
            account: None,
        }
    }
}

fn key_caller(client: String) -> Caller {
    Caller {
        key: format!("client:{client}"),
        account: Some(client.clone()),
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

    #[test]
    fn a_connection_that_authenticated_by_an_exchange_acts_for_its_subaccount() {
        let mut sessions = Sessions::default();
        let login = answered(
            1,
            "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s",
            json!({"access_token": "at1", "refresh_token": "rt1"}),
        );
        sessions.learn(&login, &login.call());
        let mut exchange = answered(
            2,
            "/ws/api/v2",
            json!({"access_token": "at2", "refresh_token": "rt2"}),
        );
        exchange.transport = TransportKind::Ws;
        exchange.connection = "ws#7".to_owned();
        exchange.body = json!({"jsonrpc": "2.0", "id": 2, "method": "public/exchange_token", "params": {"refresh_token": "rt1", "subject_id": 7}}).to_string().into_bytes();
        sessions.learn(&exchange, &exchange.call());
        let mut call = exchange.clone();
        call.body = json!({"jsonrpc": "2.0", "id": 3, "method": "private/get_transaction_log", "params": {}}).to_string().into_bytes();
        let caller = sessions.caller(&call, &call.call(), None);
        assert_eq!(caller.account.as_deref(), Some("subject:7"));
        assert_eq!(caller.client.as_deref(), Some("c"));
    }
}
