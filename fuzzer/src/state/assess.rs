//! Judging one step's answer against the model: the outcome against the prediction, and
//! the token set of a refresh against what SPEC.md 5.3 says it carries (a new refresh
//! token, a fresh access token, the same session), and a transaction-log page asked for
//! without `count` against the default of 4.8. Pure functions.

use serde_json::Value;

use super::model::{Prediction, TokenKind};
use crate::prediction;
use harness_model::check::Finding;
use harness_model::check::pages::CountBounds;
use harness_protocol::auth::scope::Scope;

/// What came back, as far as judging goes (the one reading both fuzzers use).
pub use crate::prediction::Seen;

/// The outcome against the prediction ([`prediction::judge`]): `None` when it holds, else
/// the finding on the prediction's clause.
pub fn outcome(prediction: &Prediction, seen: &Seen) -> Option<Finding> {
    let mismatch = prediction::judge(prediction, seen)?;
    Some(prediction::broken(
        prediction.clause,
        mismatch.describe(prediction),
    ))
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
        return Some(prediction::broken(
            "auth.refresh.rotates",
            "the refresh answered with the same refresh token it was given",
        ));
    }
    if field("access_token") == Some(old_access) {
        return Some(prediction::broken(
            "auth.refresh.rotates",
            "the refresh answered with the access token it replaced",
        ));
    }
    let granted = field("scope").map(Scope::parse);
    match (old_kind, granted) {
        (TokenKind::Session(old), Some(scope)) if scope.session.as_deref() != Some(old) => {
            Some(prediction::broken(
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

/// The page of a paced call asked without `count`: at most the method's default `count`
/// of the spec table (4.8 gives 100 for the transaction log).
pub fn default_page(method: &str, result: &Value) -> Option<Finding> {
    let limit = CountBounds::of(method)?.limit(None)?;
    let default = limit.entries();
    let logs = result.get("logs").and_then(Value::as_array)?;
    (!limit.allows(logs.len())).then(|| {
        prediction::broken(
            "m.get_transaction_log.count_default",
            format!("{} entries without count (default {default})", logs.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_without_count_holds_at_most_100_entries() {
        let page = |n: usize| json!({"logs": vec![json!({}); n], "continuation": null});
        let log = "private/get_transaction_log";
        assert!(default_page(log, &page(100)).is_none());
        assert!(default_page(log, &page(101)).is_some());
        assert!(default_page(log, &json!("odd")).is_none());
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
