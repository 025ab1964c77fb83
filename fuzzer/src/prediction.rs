//! What a conforming server must answer a fuzzed request or a sequence's step, and judging
//! an answer against it: one type for the single-request oracle (`rules::expect`) and the
//! sequence model (`state::model`), one function ([`judge`]) that compares, and one place
//! ([`broken`]) where a broken clause becomes a [`Finding`] whose verdict is the catalog's
//! level for the clause (as `check::answer::finding` gives it to the runner's checks).

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use harness_model::check::{Catalog, Finding, Outcome};

/// A predicted outcome, the clause a wrong answer breaks, the error code SPEC.md gives
/// (if any), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// `Result`, `Error`, or `Any` where SPEC.md leaves it open.
    pub outcome: Outcome,
    /// The catalog clause a wrong answer breaks (empty for `Any`).
    pub clause: &'static str,
    /// The error code SPEC.md requires, for an error it gives one for.
    pub code: Option<i64>,
    /// Why, for the report.
    pub why: String,
}

impl Prediction {
    /// `outcome`, a wrong answer breaking `clause`, for the reason `why`.
    pub fn new(outcome: Outcome, clause: &'static str, why: impl Into<String>) -> Prediction {
        Prediction {
            outcome,
            clause,
            code: None,
            why: why.into(),
        }
    }

    /// A result; a refusal breaks `clause`.
    pub fn result(clause: &'static str) -> Prediction {
        Prediction {
            outcome: Outcome::Result,
            clause,
            code: None,
            why: String::new(),
        }
    }

    /// An error; a result breaks `clause`.
    pub fn error(clause: &'static str, why: impl Into<String>) -> Prediction {
        Prediction {
            outcome: Outcome::Error,
            clause,
            code: None,
            why: why.into(),
        }
    }

    /// Either: SPEC.md leaves the outcome open.
    pub fn either(why: impl Into<String>) -> Prediction {
        Prediction {
            outcome: Outcome::Any,
            clause: "",
            code: None,
            why: why.into(),
        }
    }

    /// The same prediction, requiring the error code SPEC.md gives.
    pub fn with_code(self, code: i64) -> Prediction {
        Prediction {
            code: Some(code),
            ..self
        }
    }
}

/// What came back, as far as judging goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// A result.
    Result(Value),
    /// An error with this code and message.
    Error(i64, String),
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
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return if throttle_codes.contains(&code) {
                Seen::Throttled
            } else {
                Seen::Error(code, message.to_owned())
            };
        }
        match answer.get("result") {
            Some(result) => Seen::Result(result.clone()),
            None => Seen::Nothing("an answer with neither result nor error".to_owned()),
        }
    }
}

/// How an answer departs from its prediction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// A result was predicted; an error came (code, message).
    Refused(i64, String),
    /// An error was predicted; a result came.
    Answered,
    /// An error with the code SPEC.md gives was predicted; one with this code came.
    WrongCode(i64),
}

impl Mismatch {
    /// What happened, with why it was predicted.
    pub fn describe(&self, prediction: &Prediction) -> String {
        let what = match self {
            Mismatch::Refused(code, message) => {
                format!("expected a result, got error {code} {message}")
            }
            Mismatch::Answered => "expected an error, got a result".to_owned(),
            Mismatch::WrongCode(code) => format!(
                "expected error {}, got error {code}",
                prediction.code.unwrap_or_default()
            ),
        };
        let what = what.trim_end().to_owned();
        match prediction.why.as_str() {
            "" => what,
            why => format!("{what} ({why})"),
        }
    }
}

/// The one comparison of an answer with its prediction: `None` when it holds (a throttled
/// answer or no answer is never judged here).
pub fn judge(prediction: &Prediction, seen: &Seen) -> Option<Mismatch> {
    match (prediction.outcome, seen) {
        (Outcome::Result, Seen::Error(code, message)) => {
            Some(Mismatch::Refused(*code, message.clone()))
        }
        (Outcome::Error, Seen::Result(_)) => Some(Mismatch::Answered),
        (Outcome::Error, Seen::Error(code, _))
            if prediction.code.is_some_and(|wanted| wanted != *code) =>
        {
            Some(Mismatch::WrongCode(*code))
        }
        _ => None,
    }
}

/// The embedded clause catalog, whose levels give a finding its verdict.
static CATALOG: LazyLock<Arc<Catalog>> =
    LazyLock::new(|| Arc::new(Catalog::embedded().unwrap_or_else(|_| Catalog::default())));

/// The embedded clause catalog, which the executor's findings take their levels from too.
pub(crate) fn catalog() -> Arc<Catalog> {
    Arc::clone(&CATALOG)
}

/// A broken clause as a finding: the verdict is the catalog's level for the clause (a
/// clause the catalog lacks counts as `must`).
pub fn broken(clause: &str, message: impl Into<String>) -> Finding {
    harness_model::check::finding(&CATALOG, &[clause.to_owned()], message.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_model::check::Verdict;
    use serde_json::json;

    fn predicted(outcome: Outcome) -> Prediction {
        Prediction {
            outcome,
            clause: "auth.logout.invalidates",
            code: None,
            why: "the token of step 1 was invalidated".to_owned(),
        }
    }

    #[test]
    fn either_accepts_both_and_throttling_is_never_judged() {
        let error = Seen::Error(13009, "unauthorized".to_owned());
        let result = Seen::Result(json!("ok"));
        assert!(judge(&predicted(Outcome::Any), &error).is_none());
        assert!(judge(&predicted(Outcome::Any), &result).is_none());
        assert!(judge(&predicted(Outcome::Error), &Seen::Throttled).is_none());
        assert!(judge(&predicted(Outcome::Result), &Seen::Throttled).is_none());
        let answered = judge(&predicted(Outcome::Error), &result).unwrap();
        assert_eq!(answered, Mismatch::Answered);
        assert_eq!(
            answered.describe(&predicted(Outcome::Error)),
            "expected an error, got a result (the token of step 1 was invalidated)"
        );
        assert_eq!(
            judge(&predicted(Outcome::Result), &error),
            Some(Mismatch::Refused(13009, "unauthorized".to_owned()))
        );
    }

    #[test]
    fn an_error_with_a_code_spec_gives_must_carry_it() {
        let two_factor = Prediction::error("auth.two_factor.13668", "no second factor")
            .with_code(harness_protocol::spec::SECOND_FACTOR_ERROR_CODE);
        let wanted = Seen::Error(
            harness_protocol::spec::SECOND_FACTOR_ERROR_CODE,
            String::new(),
        );
        assert!(judge(&two_factor, &wanted).is_none());
        let other = Seen::Error(13009, String::new());
        assert_eq!(judge(&two_factor, &other), Some(Mismatch::WrongCode(13009)));
    }

    #[test]
    fn an_answer_is_read_as_result_error_or_throttled() {
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 10028, "message": "x"}});
        assert_eq!(Seen::of(Some(&error), &[10028]), Seen::Throttled);
        assert_eq!(
            Seen::of(Some(&error), &[]),
            Seen::Error(10028, "x".to_owned())
        );
        let result = json!({"jsonrpc": "2.0", "id": 1, "result": null});
        assert_eq!(Seen::of(Some(&result), &[]), Seen::Result(Value::Null));
        assert!(matches!(Seen::of(None, &[]), Seen::Nothing(_)));
        assert!(matches!(Seen::of(Some(&json!({})), &[]), Seen::Nothing(_)));
    }

    #[test]
    fn the_verdict_of_a_broken_clause_is_its_catalog_level() {
        assert_eq!(
            broken("auth.logout.invalidates", "m").verdict,
            Verdict::Fail
        );
        assert_eq!(
            broken("auth.exchange_token.scope_bound", "m").verdict,
            Verdict::Warn
        );
    }
}
