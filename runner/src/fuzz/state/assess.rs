//! Judging one step's answer against the model: the outcome against the prediction, and
//! the token set of a refresh against what SPEC.md 5.3 says it carries (a new refresh
//! token, a fresh access token, the same session), and a transaction-log page asked for
//! without `count` against the default of 4.8. Pure functions.

use serde_json::Value;

use super::model::{Outcome, Prediction, TokenKind};
use harness_model::check::Finding;
use harness_protocol::auth::scope::Scope;

/// What came back, as far as judging goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// A result.
    Result(Value),
    /// An error with this code.
    Error(i64),
    /// An error with one of the target's throttle codes: never judged.
    Throttled,
    /// No JSON-RPC answer: the message says what instead.
    Nothing(String),
}

impl Seen {
    /// Reads a parsed answer; `throttle_codes` are the target's `[limits] throttle_codes`.
    pub fn of(answer: Option<&Value>, throttle_codes: &[i64]) -> Seen {
        let Some(answer) = answer else {
            return Seen::Nothing("no JSON answer".to_owned());
        };
        if let Some(error) = answer.get("error").filter(|error| !error.is_null()) {
            let code = error
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or_default();
            return if throttle_codes.contains(&code) {
                Seen::Throttled
            } else {
                Seen::Error(code)
            };
        }
        match answer.get("result") {
            Some(result) => Seen::Result(result.clone()),
            None => Seen::Nothing("an answer with neither result nor error".to_owned()),
        }
    }
}

/// The outcome against the prediction: `None` when it holds, else the failure on the
/// prediction's clause.
pub fn outcome(prediction: &Prediction, seen: &Seen) -> Option<Finding> {
    let broken = |what: &str| {
        Some(Finding::fail(
            prediction.clause,
            format!("{what} ({})", prediction.why),
        ))
    };
    match (prediction.outcome, seen) {
        (Outcome::Result, Seen::Error(code)) => {
            broken(&format!("expected a result, got error {code}"))
        }
        (Outcome::Error, Seen::Result(_)) => broken("expected an error, got a result"),
        _ => None,
    }
}

/// The token set a refresh answered, against the token refreshed: a new refresh token and
/// a fresh access token (5.3), and for a session token the same session.
pub fn refreshed(
    old_access: &str,
    old_refresh: &str,
    old_kind: &TokenKind,
    new_set: &Value,
) -> Option<Finding> {
    let field = |name: &str| new_set.get(name).and_then(Value::as_str);
    if field("refresh_token") == Some(old_refresh) {
        return Some(Finding::fail(
            "auth.refresh.rotates",
            "the refresh answered with the same refresh token it was given",
        ));
    }
    if field("access_token") == Some(old_access) {
        return Some(Finding::fail(
            "auth.refresh.rotates",
            "the refresh answered with the access token it replaced",
        ));
    }
    let granted = field("scope").map(Scope::parse);
    match (old_kind, granted) {
        (TokenKind::Session(old), Some(scope)) if scope.session.as_deref() != Some(old) => {
            Some(Finding::fail(
                "auth.refresh.session_kept",
                format!(
                    "refreshing a token of session {old} gave one of {}",
                    scope
                        .session
                        .map_or_else(|| "no session".to_owned(), |new| format!("session {new}"))
                ),
            ))
        }
        _ => None,
    }
}

/// The transaction-log page of a call without `count`: at most the default 100 entries
/// (4.8).
pub fn default_page(result: &Value) -> Option<Finding> {
    let logs = result.get("logs").and_then(Value::as_array)?;
    (logs.len() > 100).then(|| {
        Finding::fail(
            "m.get_transaction_log.count_default",
            format!("{} entries without count (default 100)", logs.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn predicted(outcome: Outcome) -> Prediction {
        Prediction {
            outcome,
            clause: "auth.logout.invalidates",
            why: "the token of step 1 was invalidated".to_owned(),
        }
    }

    #[test]
    fn either_accepts_both_and_throttling_is_never_judged() {
        let error = Seen::Error(13009);
        let result = Seen::Result(json!("ok"));
        assert!(outcome(&predicted(Outcome::Any), &error).is_none());
        assert!(outcome(&predicted(Outcome::Any), &result).is_none());
        assert!(outcome(&predicted(Outcome::Error), &Seen::Throttled).is_none());
        let finding = outcome(&predicted(Outcome::Error), &result).unwrap();
        assert_eq!(finding.verdict, harness_model::check::Verdict::Fail);
        assert_eq!(finding.clause(), "auth.logout.invalidates");
        assert!(
            finding.message.contains("got a result"),
            "{}",
            finding.message
        );
        assert!(outcome(&predicted(Outcome::Result), &error).is_some());
    }

    #[test]
    fn an_answer_is_read_as_result_error_or_throttled() {
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 10028, "message": "x"}});
        assert_eq!(Seen::of(Some(&error), &[10028]), Seen::Throttled);
        assert_eq!(Seen::of(Some(&error), &[]), Seen::Error(10028));
        let result = json!({"jsonrpc": "2.0", "id": 1, "result": null});
        assert_eq!(Seen::of(Some(&result), &[]), Seen::Result(Value::Null));
        assert!(matches!(Seen::of(None, &[]), Seen::Nothing(_)));
        assert!(matches!(Seen::of(Some(&json!({})), &[]), Seen::Nothing(_)));
    }

    #[test]
    fn a_page_without_count_holds_at_most_100_entries() {
        let page = |n: usize| json!({"logs": vec![json!({}); n], "continuation": null});
        assert!(default_page(&page(100)).is_none());
        assert!(default_page(&page(101)).is_some());
        assert!(default_page(&json!("odd")).is_none());
    }

    #[test]
    fn a_refresh_must_rotate_and_keep_the_session() {
        let session = TokenKind::Session("a".to_owned());
        let good = json!({"access_token": "at2", "refresh_token": "rt2", "scope": "session:a"});
        assert!(refreshed("at1", "rt1", &session, &good).is_none());
        let same = json!({"access_token": "at2", "refresh_token": "rt1"});
        assert_eq!(
            refreshed("at1", "rt1", &session, &same).unwrap().clause(),
            "auth.refresh.rotates"
        );
        let moved = json!({"access_token": "at2", "refresh_token": "rt2", "scope": "session:b"});
        assert_eq!(
            refreshed("at1", "rt1", &session, &moved).unwrap().clause(),
            "auth.refresh.session_kept"
        );
        assert!(refreshed("at1", "rt1", &TokenKind::Connection, &moved).is_none());
    }
}
