//! Token state: each use of a token the judge's server issued is held to what became of
//! it: its kind, its end (refresh, logout, disable, lifetime), its scope; forks, exchanges
//! and the second factor.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;

/// A session of records, judged in order as `assess` judges them.
#[derive(Default)]
struct Session {
    records: Vec<Record>,
    knowledge: Knowledge,
}

impl Session {
    fn new() -> Session {
        Session {
            records: Vec::new(),
            knowledge: Knowledge {
                second_factor: BTreeMap::from([("tf".to_owned(), "code".to_owned())]),
                users: BTreeMap::from([("sub".to_owned(), 7)]),
                ..Knowledge::default()
            },
        }
    }

    /// A WebSocket message on `connection` at `at_ms`, answered with `result` (or an error
    /// when `None`).
    fn ws(
        &mut self,
        connection: &str,
        at_ms: u64,
        method: &str,
        params: Value,
        result: Option<Value>,
    ) -> &mut Self {
        let seq = self.records.len() as u64 + 1;
        let record = Record {
            connection: connection.to_owned(),
            at_ms,
            event: seq * 2,
            body: json!({"jsonrpc": "2.0", "id": seq, "method": method, "params": params})
                .to_string()
                .into_bytes(),
            ..Record::sample(seq, TransportKind::Ws)
        };
        let answer = match result {
            Some(result) => json!({"jsonrpc": "2.0", "id": seq, "result": result}),
            None => json!({"jsonrpc": "2.0", "id": seq, "error": {"code": 13009, "message": "no"}}),
        };
        self.records.push(record.answered(answer));
        self
    }

    /// A login of `client` issuing `at<n>` and `rt<n>` with `scope`, at time `at_ms`.
    fn login(&mut self, client: &str, n: u32, scope: &str, at_ms: u64) -> &mut Self {
        self.ws(
            "ws#1",
            at_ms,
            "public/auth",
            json!({"grant_type": "client_credentials", "client_id": client, "client_secret": "s"}),
            Some(json!({"access_token": format!("at{n}"), "refresh_token": format!("rt{n}"), "expires_in": 900, "scope": scope, "token_type": "bearer"})),
        )
    }

    /// The findings of every record, judged in arrival order.
    fn findings(&self) -> Vec<String> {
        self.tally().describe()
    }

    fn tally(&self) -> Tally {
        let mut sessions = Sessions::default();
        let mut tally = Tally::default();
        let mut callers = Vec::new();
        for record in &self.records {
            let call = record.call();
            check_tokens(record, &call, &sessions, &self.knowledge, &mut tally);
            callers.push(sessions.caller(record, &call, None));
            sessions.learn(record, &call);
        }
        check_second_factor(&self.records, &callers, &self.knowledge, &mut tally);
        tally
    }
}

const FULL: &str = "connection account:read_write trade:read_write wallet:read_write mainaccount";

fn mmp(token: &str) -> Value {
    json!({"access_token": token})
}

#[test]
fn a_live_token_with_its_scope_passes() {
    let mut session = Session::new();
    session.login("main", 1, FULL, 0).ws(
        "ws#1",
        10,
        "private/get_mmp_status",
        mmp("at1"),
        Some(json!([])),
    );
    assert_eq!(session.findings(), Vec::<String>::new());
}

#[test]
fn a_refresh_token_presented_as_the_access_token_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws("ws#1", 10, "private/get_mmp_status", mmp("rt1"), None);
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &[
            "client.token.kind",
            "refresh token where the access token goes",
        ],
    );
}

#[test]
fn an_access_token_handed_over_as_a_refresh_token_fails() {
    let mut session = Session::new();
    session.login("main", 1, FULL, 0).ws(
        "ws#1",
        10,
        "public/auth",
        json!({"grant_type": "refresh_token", "refresh_token": "at1"}),
        None,
    );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &[
            "client.token.kind",
            "access token where a refresh token goes",
        ],
    );
}

#[test]
fn a_connection_token_used_after_its_refresh_fails_and_a_session_token_does_not() {
    for (scope, fails) in [
        (FULL, true),
        ("session:bot account:read_write trade:read_write", false),
    ] {
        let mut session = Session::new();
        session
            .login("main", 1, scope, 0)
            .ws(
                "ws#2",
                10,
                "public/auth",
                json!({"grant_type": "refresh_token", "refresh_token": "rt1"}),
                Some(json!({"access_token": "at2", "refresh_token": "rt2", "expires_in": 900, "scope": scope})),
            )
            .ws("ws#3", 200, "private/get_mmp_status", mmp("at1"), Some(json!([])));
        let findings = session.findings();
        if fails {
            assert_only_finding(
                &findings,
                Some(Verdict::Fail),
                &["client.token.live", "refreshed away by request #2"],
            );
        } else {
            assert_eq!(findings, Vec::<String>::new(), "{scope}");
        }
    }
}

#[test]
fn a_token_used_after_its_logout_fails_the_access_and_the_refresh_token_alike() {
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws("ws#1", 10, "private/logout", mmp("at1"), Some(json!("ok")))
        .ws("ws#3", 200, "private/get_mmp_status", mmp("at1"), None)
        .ws(
            "ws#3",
            300,
            "public/auth",
            json!({"grant_type": "refresh_token", "refresh_token": "rt1"}),
            None,
        );
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings[0].contains("access token logged out by request #2"),
        "{findings:?}"
    );
    assert!(
        findings[1].contains("refresh token logged out by request #2"),
        "{findings:?}"
    );
}

#[test]
fn a_subaccount_token_used_after_its_login_was_disabled_fails() {
    let mut session = Session::new();
    session
        .login("sub", 1, "connection account:read trade:read", 0)
        .login("main", 2, FULL, 1)
        .ws(
            "ws#1",
            10,
            "private/toggle_subaccount_login",
            json!({"access_token": "at2", "sid": 7, "state": "disable"}),
            Some(json!("ok")),
        )
        .ws("ws#4", 200, "private/get_mmp_status", mmp("at1"), None)
        .login("sub", 3, "connection account:read trade:read", 300)
        .ws(
            "ws#4",
            400,
            "private/get_mmp_status",
            mmp("at3"),
            Some(json!([])),
        );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.live", "#4:", "subaccount 7", "request #3"],
    );
}

#[test]
fn an_access_token_used_past_its_expires_in_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            900_500,
            "private/get_mmp_status",
            mmp("at1"),
            Some(json!([])),
        )
        .ws("ws#1", 902_000, "private/get_mmp_status", mmp("at1"), None);
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.live", "902000 ms", "expires_in 900 s"],
    );
}

#[test]
fn a_token_without_the_scope_its_method_states_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, "connection account:read trade:read", 0)
        .ws(
            "ws#1",
            10,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 7, "state": "enable"}),
            None,
        )
        .ws(
            "ws#1",
            20,
            "private/delete_member",
            json!({"access_token": "at1", "member_id": 1}),
            None,
        )
        .ws(
            "ws#1",
            30,
            "private/get_mmp_status",
            mmp("at1"),
            Some(json!([])),
        );
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings[0].contains("toggle_subaccount_login needs account:read_write"),
        "{findings:?}"
    );
    assert!(
        findings[1].contains("delete_member needs account:read_write and mainaccount"),
        "{findings:?}"
    );
}

#[test]
fn a_fork_of_a_connection_token_or_of_its_own_session_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            10,
            "public/fork_token",
            json!({"refresh_token": "rt1", "session_name": "b"}),
            None,
        )
        .login("main", 2, "session:a account:read", 20)
        .ws(
            "ws#1",
            30,
            "public/fork_token",
            json!({"refresh_token": "rt2", "session_name": "a"}),
            None,
        )
        .ws(
            "ws#1",
            40,
            "public/fork_token",
            json!({"refresh_token": "rt2", "session_name": "b"}),
            Some(json!({"access_token": "at9"})),
        );
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings
            .iter()
            .any(|line| line.contains("client.fork.session_token")),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|line| line.contains("client.fork.new_session") && line.contains("`a`")),
        "{findings:?}"
    );
}

#[test]
fn an_exchange_asking_more_than_the_caller_holds_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, "connection account:read trade:read", 0)
        .ws(
            "ws#1",
            10,
            "public/exchange_token",
            json!({"refresh_token": "rt1", "subject_id": 7, "scope": "account:read_write"}),
            None,
        )
        .ws(
            "ws#1",
            20,
            "public/exchange_token",
            json!({"refresh_token": "rt1", "subject_id": 7, "scope": "session:x account:read"}),
            None,
        );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.exchange.scope_bound", "account:read_write"],
    );
}

#[test]
fn a_two_factor_account_calling_without_its_second_factor_and_never_with_it_fails() {
    let mut session = Session::new();
    session
        .login("tf", 1, FULL, 0)
        // Refused with 13668, then sent again with the factor: the flow of a security key.
        .ws(
            "ws#1",
            10,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 8, "state": "enable"}),
            None,
        )
        .ws(
            "ws#1",
            20,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 8, "state": "enable", "code": "123456"}),
            Some(json!("ok")),
        )
        // Never sent with it.
        .ws(
            "ws#1",
            30,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 8, "state": "disable"}),
            None,
        )
        // The main account has no second factor.
        .login("main", 2, FULL, 40)
        .ws(
            "ws#1",
            50,
            "private/toggle_subaccount_login",
            json!({"access_token": "at2", "sid": 7, "state": "enable"}),
            Some(json!("ok")),
        );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.second_factor.sent", "`code`", "#4:"],
    );
}

#[test]
fn a_request_in_flight_beside_a_refresh_is_not_judged_a_use_of_a_dead_token_and_after_a_logout_is()
{
    // On another connection within 100 ms of a refresh's answer the client may not have
    // read it yet (an asynchronous client refreshes while its calls go on); later, or on
    // the same connection, it had. A logout ends a session: any call after its answer is
    // judged.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            10,
            "public/auth",
            json!({"grant_type": "refresh_token", "refresh_token": "rt1"}),
            Some(json!({"access_token": "at2", "refresh_token": "rt2", "expires_in": 900, "scope": FULL})),
        )
        .ws("ws#2", 60, "private/get_mmp_status", mmp("at1"), None)
        .ws("ws#2", 200, "private/get_mmp_status", mmp("at1"), None)
        .ws("ws#1", 300, "private/logout", mmp("at2"), Some(json!("ok")))
        .ws("ws#2", 301, "private/get_mmp_status", mmp("at2"), None);
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings[0].contains("#4:") && findings[0].contains("refreshed away"),
        "{findings:?}"
    );
    assert!(
        findings[1].contains("#6:") && findings[1].contains("logged out"),
        "{findings:?}"
    );
}

#[test]
fn a_token_exchanged_for_a_subaccount_outlives_its_disable() {
    // SPEC.md 4.5: a disabled subaccount "remains reachable through the main account".
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            5,
            "public/exchange_token",
            json!({"refresh_token": "rt1", "subject_id": 7}),
            Some(json!({"access_token": "at5", "refresh_token": "rt5", "expires_in": 900, "scope": "connection account:read trade:read"})),
        )
        .ws("ws#1", 10, "private/toggle_subaccount_login", json!({"access_token": "at1", "sid": 7, "state": "disable"}), Some(json!("ok")))
        .ws("ws#1", 300, "private/get_mmp_status", mmp("at5"), Some(json!([])));
    assert_eq!(session.findings(), Vec::<String>::new());
}

#[test]
fn a_fork_naming_another_live_session_of_the_client_fails() {
    let mut session = Session::new();
    session
        .login("main", 1, "session:a account:read", 0)
        .login("main", 2, "session:b account:read", 5)
        .ws(
            "ws#1",
            10,
            "public/fork_token",
            json!({"refresh_token": "rt1", "session_name": "b"}),
            None,
        )
        .ws(
            "ws#1",
            20,
            "public/fork_token",
            json!({"refresh_token": "rt1", "session_name": "c"}),
            Some(json!({"access_token": "at9"})),
        );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.fork.new_session", "still alive"],
    );
}

#[test]
fn a_connection_remembering_a_logged_out_session_token_fails_on_its_next_call() {
    let mut session = Session::new();
    session
        .login("main", 1, "session:s account:read trade:read", 0)
        .ws(
            "ws#9",
            5,
            "private/get_mmp_status",
            mmp("at1"),
            Some(json!([])),
        )
        .ws("ws#1", 10, "private/logout", mmp("at1"), Some(json!("ok")))
        .ws("ws#9", 200, "private/get_mmp_status", json!({}), None);
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.live", "logged out by request #3"],
    );
}

#[test]
fn what_the_target_file_does_not_describe_is_noted_not_judged() {
    // A proxy's view: a client whose account the target file does not describe calls a
    // method needing the second factor, and the disable of a subaccount whose logins the
    // file does not name ends nobody the judge can name.
    let mut session = Session::new();
    session
        .login("stranger", 1, FULL, 0)
        .ws(
            "ws#1",
            10,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 99, "state": "disable"}),
            Some(json!("ok")),
        )
        .ws(
            "ws#1",
            20,
            "private/get_mmp_status",
            mmp("at1"),
            Some(json!([])),
        );
    let tally = session.tally();
    assert_eq!(tally.describe(), Vec::<String>::new());
    let notes = tally.describe_notes();
    assert!(
        notes
            .iter()
            .any(|note| note.contains("client.second_factor.sent")
                && note.contains("does not describe")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|note| note.contains("client.token.live") && note.contains("not judged")),
        "{notes:?}"
    );
}

#[test]
fn block_rfq_status_needs_block_rfq_read_instead_of_trade_read() {
    let mut session = Session::new();
    session
        .login("main", 1, "connection account:read trade:read", 0)
        .ws(
            "ws#1",
            10,
            "private/get_mmp_status",
            json!({"access_token": "at1", "block_rfq": true}),
            None,
        )
        .login("main", 2, "connection trade:read block_rfq:read", 20)
        .ws(
            "ws#1",
            30,
            "private/get_mmp_status",
            json!({"access_token": "at2", "block_rfq": true}),
            Some(json!([])),
        );
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.scope", "needs block_rfq:read", "#2:"],
    );
}

#[test]
fn the_edges_of_a_lifetime_and_of_the_time_in_flight() {
    // A lifetime of 900 s and 1 s of slack: the last millisecond passes, the next fails.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            901_000,
            "private/get_mmp_status",
            mmp("at1"),
            Some(json!([])),
        )
        .ws("ws#1", 901_001, "private/get_mmp_status", mmp("at1"), None);
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.live", "#3:"],
    );
    // A refresh leaves 100 ms for calls in flight on another connection: the 99th passes,
    // the 100th fails; a logout leaves none: a call in the millisecond of its answer fails.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            10,
            "public/auth",
            json!({"grant_type": "refresh_token", "refresh_token": "rt1"}),
            Some(json!({"access_token": "at2", "refresh_token": "rt2", "expires_in": 900, "scope": FULL})),
        )
        .ws("ws#2", 109, "private/get_mmp_status", mmp("at1"), None)
        .ws("ws#2", 110, "private/get_mmp_status", mmp("at1"), None)
        .ws("ws#1", 200, "private/logout", mmp("at2"), Some(json!("ok")))
        .ws("ws#2", 200, "private/get_mmp_status", mmp("at2"), None);
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(findings[0].contains("#4:"), "{findings:?}");
    assert!(findings[1].contains("#6:"), "{findings:?}");
}

#[test]
fn a_refresh_token_is_not_held_to_the_access_tokens_lifetime() {
    let mut session = Session::new();
    session.login("main", 1, FULL, 0).ws(
        "ws#1",
        2_000_000,
        "public/auth",
        json!({"grant_type": "refresh_token", "refresh_token": "rt1"}),
        Some(json!({"access_token": "at2", "refresh_token": "rt2", "expires_in": 900, "scope": FULL})),
    );
    assert_eq!(session.findings(), Vec::<String>::new());
}

#[test]
fn on_the_connection_that_logged_out_the_next_call_is_judged_whenever_it_comes() {
    // Pipelined behind the logout on its own connection: the client sent it knowing.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws("ws#1", 10, "private/logout", mmp("at1"), Some(json!("ok")))
        .ws("ws#1", 10, "private/get_mmp_status", mmp("at1"), None);
    assert_only_finding(
        &session.findings(),
        Some(Verdict::Fail),
        &["client.token.live", "#3:"],
    );
}

#[test]
fn a_public_call_is_not_held_to_the_token_it_carries() {
    // Public methods need no credentials: a dead token beside one is not a use.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws("ws#1", 10, "private/logout", mmp("at1"), Some(json!("ok")))
        .ws("ws#1", 20, "public/get_currencies", mmp("at1"), Some(json!([])))
        // A login by client_credentials is not judged on a refresh_token it carries besides.
        .ws(
            "ws#1",
            30,
            "public/auth",
            json!({"grant_type": "client_credentials", "client_id": "main", "client_secret": "s", "refresh_token": "at1"}),
            None,
        );
    assert_eq!(session.findings(), Vec::<String>::new());
}

#[test]
fn the_note_on_an_unknown_owner_comes_only_after_a_disable_and_only_for_a_login_of_its_own() {
    // A client the target file does not describe, and no disable: nothing to note.
    let mut session = Session::new();
    session.login("stranger", 1, FULL, 0).ws(
        "ws#1",
        10,
        "private/get_mmp_status",
        mmp("at1"),
        Some(json!([])),
    );
    assert!(
        !session
            .tally()
            .describe_notes()
            .iter()
            .any(|note| note.contains("client.token.live")),
        "{:?}",
        session.tally().describe_notes()
    );
    // An exchanged token after a disable: it acts for a known subaccount, nothing to note.
    let mut session = Session::new();
    session
        .login("main", 1, FULL, 0)
        .ws(
            "ws#1",
            5,
            "public/exchange_token",
            json!({"refresh_token": "rt1", "subject_id": 7}),
            Some(json!({"access_token": "at5", "refresh_token": "rt5", "expires_in": 900, "scope": "connection account:read trade:read"})),
        )
        .ws("ws#1", 10, "private/toggle_subaccount_login", json!({"access_token": "at1", "sid": 7, "state": "disable"}), Some(json!("ok")))
        .ws("ws#1", 300, "private/get_mmp_status", mmp("at5"), Some(json!([])));
    assert!(
        !session
            .tally()
            .describe_notes()
            .iter()
            .any(|note| note.contains("client.token.live")),
        "{:?}",
        session.tally().describe_notes()
    );
}

#[test]
fn block_rfq_read_is_needed_however_true_is_spelt_and_not_for_false() {
    // A query string carries text: "true" and "1" are true, "false" is not.
    for (spelling, fails) in [("true", true), ("1", true), ("false", false), ("0", false)] {
        let mut session = Session::new();
        session.login("main", 1, "connection trade:read", 0).ws(
            "ws#1",
            10,
            "private/get_mmp_status",
            json!({"access_token": "at1", "block_rfq": spelling}),
            None,
        );
        let findings = session.findings();
        assert_eq!(
            findings
                .iter()
                .any(|line| line.contains("needs block_rfq:read")),
            fails,
            "{spelling}: {findings:?}"
        );
    }
}

#[test]
fn only_the_same_call_of_the_same_account_with_a_factor_counts_as_sent_again() {
    let mut session = Session::new();
    session
        .login("tf", 1, FULL, 0)
        .login("main", 2, FULL, 1)
        .ws(
            "ws#1",
            10,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 8, "state": "disable"}),
            None,
        )
        // Another account's call with a factor: not this one sent again.
        .ws(
            "ws#1",
            20,
            "private/toggle_subaccount_login",
            json!({"access_token": "at2", "sid": 8, "state": "disable", "code": "123456"}),
            None,
        )
        // Another call of this account with a factor: not this one either.
        .ws(
            "ws#1",
            30,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 8, "state": "enable", "code": "123456"}),
            Some(json!("ok")),
        )
        // An empty factor is none.
        .ws(
            "ws#1",
            40,
            "private/toggle_subaccount_login",
            json!({"access_token": "at1", "sid": 9, "state": "enable", "code": ""}),
            None,
        );
    let findings = session.findings();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings[0].contains("#3:") && findings[1].contains("#6:"),
        "{findings:?}"
    );
}
