//! One hand-made answer per branch of the answer check.

use std::path::Path;
use std::sync::LazyLock;

use serde_json::{Value, json};

use super::*;
use crate::check::{Level, Side, Verdict};

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    Catalog::of_clauses(&[
        ("env.response.jsonrpc", "1", Level::Must, Side::Server),
        ("env.response.id", "1", Level::Must, Side::Server),
        ("http.status.success", "1", Level::Must, Side::Server),
        ("step.rule", "1", Level::Must, Side::Server),
        ("step.remark", "1", Level::Info, Side::Server),
        ("matcher.rule", "1", Level::Must, Side::Server),
    ])
});

static SCHEMAS: LazyLock<SchemaSet> = LazyLock::new(|| {
    SchemaSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/schemas"))
        .expect("the repository's schemas load")
});

fn step_clauses() -> Vec<String> {
    vec!["step.rule".to_owned()]
}

fn expecting(outcome: Outcome, clauses: &[String]) -> Required<'_> {
    Required {
        outcome,
        error_code: None,
        error_message: None,
        http_status: None,
        schema: None,
        matchers: &[],
        clauses,
        rest_interface: false,
    }
}

fn over_http(json: &Value, status: u16) -> ParsedAnswer {
    ParsedAnswer {
        json: Some(json.clone()),
        status: Some(status),
        body: String::new(),
        request_id: Some(1),
        duplicate_members: Vec::new(),
        binary_frame: false,
    }
}

fn over_ws(json: &Value) -> ParsedAnswer {
    ParsedAnswer {
        status: None,
        ..over_http(json, 200)
    }
}

fn result(value: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "result": value})
}

fn error(code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}})
}

fn check(answer: &ParsedAnswer, expected: &Required<'_>) -> Vec<Finding> {
    super::answer(answer, expected, &CATALOG, &SCHEMAS)
}

/// The findings as (verdict, first clause, message) for compact assertions.
fn summary(findings: &[Finding]) -> Vec<(Verdict, String, String)> {
    findings
        .iter()
        .map(|finding| {
            (
                finding.verdict,
                finding.clauses.first().cloned().unwrap_or_default(),
                finding.message.clone(),
            )
        })
        .collect()
}

/// The summary of one failure of the step's own clause.
fn step_failure(message: &str) -> Vec<(Verdict, String, String)> {
    vec![(Verdict::Fail, "step.rule".to_owned(), message.to_owned())]
}

#[test]
fn a_result_as_expected_gives_no_finding() {
    let clauses = step_clauses();
    let answer = result(json!("ok"));
    assert!(
        check(
            &over_http(&answer, 200),
            &expecting(Outcome::Result, &clauses)
        )
        .is_empty()
    );
}

#[test]
fn an_answer_that_is_not_json_fails_the_envelope_and_nothing_else() {
    let clauses = step_clauses();
    let answer = ParsedAnswer {
        json: None,
        status: Some(502),
        body: "<html>bad gateway</html>".to_owned(),
        request_id: Some(1),
        duplicate_members: Vec::new(),
        binary_frame: false,
    };
    let findings = check(&answer, &expecting(Outcome::Result, &clauses));
    assert_eq!(
        summary(&findings),
        [(
            Verdict::Fail,
            "env.response.jsonrpc".to_owned(),
            "answer is not JSON: \"<html>bad gateway</html>\"".to_owned()
        )]
    );
}

#[test]
fn an_envelope_violation_cites_its_own_clause() {
    let clauses = step_clauses();
    let answer = json!({"jsonrpc": "2.0", "id": 2, "result": "ok"});
    let findings = check(&over_ws(&answer), &expecting(Outcome::Result, &clauses));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].clauses, ["env.response.id"]);
    assert_eq!(findings[0].verdict, Verdict::Fail);
}

#[test]
fn an_error_where_a_result_was_expected_names_code_message_and_reason() {
    let clauses = step_clauses();
    let answer = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": 13004, "message": "invalid_credentials", "data": {"reason": "wrong secret"}}});
    let findings = check(&over_ws(&answer), &expecting(Outcome::Result, &clauses));
    assert_eq!(
        summary(&findings),
        step_failure("expected a result, got error 13004 invalid_credentials (wrong secret)")
    );
}

#[test]
fn neither_result_nor_error_fails_the_envelope_and_the_step() {
    let clauses = step_clauses();
    let answer = json!({"jsonrpc": "2.0", "id": 1});
    let findings = check(&over_ws(&answer), &expecting(Outcome::Result, &clauses));
    let messages: Vec<&str> = findings
        .iter()
        .map(|finding| finding.message.as_str())
        .collect();
    assert_eq!(findings.len(), 2, "{messages:?}");
    assert_eq!(
        messages[1],
        "expected a result, got neither result nor a well-formed error"
    );
}

#[test]
fn a_result_where_an_error_was_expected_fails_the_step() {
    let clauses = step_clauses();
    let answer = result(json!({"access_token": "x"}));
    let findings = check(&over_ws(&answer), &expecting(Outcome::Error, &clauses));
    assert_eq!(
        summary(&findings),
        step_failure("expected an error, got result {\"access_token\":\"x\"}")
    );
}

#[test]
fn the_error_code_and_name_spec_gives_are_required() {
    let clauses = step_clauses();
    let name = "security_key_authorization_error";
    let rows = [
        (
            error(10000, "other"),
            None,
            step_failure("expected error code 13668, got 10000 other"),
        ),
        (
            error(13668, "two_factor_required"),
            Some(name),
            step_failure(
                "expected the error named \"security_key_authorization_error\" (in its message or data, wherever the error object puts it), got \"two_factor_required\" (code 13668) without it",
            ),
        ),
        (error(13668, name), Some(name), Vec::new()),
        // The shape of the error object is not shown: the name in its data passes too.
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 13668, "message": "second factor required", "data": {"name": name}}}),
            Some(name),
            Vec::new(),
        ),
    ];
    for (answer, error_message, wanted) in rows {
        let expected = Required {
            error_code: Some(13668),
            error_message,
            ..expecting(Outcome::Error, &clauses)
        };
        assert_eq!(
            summary(&check(&over_ws(&answer), &expected)),
            wanted,
            "{answer}"
        );
    }
}

#[test]
fn an_error_whose_code_spec_does_not_give_passes_with_a_note() {
    let clauses = step_clauses();
    let answer = over_ws(&error(13004, "invalid_credentials"));
    let expected = expecting(Outcome::Error, &clauses);
    assert!(check(&answer, &expected).is_empty());
    assert_eq!(
        error_note(&answer, &expected).as_deref(),
        Some("rejected with 13004 invalid_credentials (SPEC.md gives no code)")
    );
}

#[test]
fn no_note_where_spec_gives_the_code_or_the_answer_is_judged_otherwise() {
    let clauses = step_clauses();
    let refused = over_ws(&error(13668, "security_key_authorization_error"));
    let with_code = Required {
        error_code: Some(13668),
        ..expecting(Outcome::Error, &clauses)
    };
    assert_eq!(error_note(&refused, &with_code), None);
    let other_name = Required {
        error_message: Some("another_name"),
        ..expecting(Outcome::Error, &clauses)
    };
    assert_eq!(check(&refused, &other_name).len(), 1);
    assert_eq!(error_note(&refused, &other_name), None);
    assert_eq!(
        error_note(&refused, &expecting(Outcome::Any, &clauses)),
        None
    );
    let answered = over_ws(&result(json!("ok")));
    assert_eq!(
        error_note(&answered, &expecting(Outcome::Error, &clauses)),
        None
    );
}

#[test]
fn either_outcome_is_accepted_when_the_step_says_any() {
    let clauses = step_clauses();
    for answer in [result(json!(1)), error(1, "x")] {
        assert!(check(&over_ws(&answer), &expecting(Outcome::Any, &clauses)).is_empty());
    }
}

#[test]
fn an_expected_http_status_is_checked_on_http_only() {
    let clauses = step_clauses();
    let answer = error(13009, "unauthorized");
    let expected = Required {
        http_status: Some(401),
        error_code: Some(13009),
        ..expecting(Outcome::Error, &clauses)
    };
    assert_eq!(
        summary(&check(&over_http(&answer, 400), &expected)),
        step_failure("expected HTTP status 401, got 400")
    );
    assert!(check(&over_ws(&answer), &expected).is_empty());
}

#[test]
fn a_success_over_http_must_have_status_200() {
    let clauses = step_clauses();
    let answer = result(json!("ok"));
    assert_eq!(
        summary(&check(
            &over_http(&answer, 201),
            &expecting(Outcome::Result, &clauses)
        )),
        [(
            Verdict::Fail,
            "http.status.success".to_owned(),
            "a successful call was answered with HTTP status 201, not 200".to_owned()
        )]
    );
}

#[test]
fn a_result_off_its_schema_fails_the_step_with_at_most_five_violations() {
    let clauses = step_clauses();
    let expected = Required {
        schema: Some("method.public.get_currencies"),
        ..expecting(Outcome::Result, &clauses)
    };
    let answer = result(json!([{}, {}, {}, {}, {}, {}, {}]));
    let findings = check(&over_ws(&answer), &expected);
    assert_eq!(findings.len(), 5, "{findings:?}");
    assert!(findings.iter().all(|finding| {
        finding.clauses == clauses
            && finding
                .message
                .starts_with("result does not match method.public.get_currencies: ")
    }));
}

#[test]
fn the_schema_is_checked_only_when_a_result_was_required() {
    let clauses = step_clauses();
    let answer = result(json!("not a list"));
    let any = Required {
        schema: Some("method.public.get_currencies"),
        ..expecting(Outcome::Any, &clauses)
    };
    assert!(check(&over_ws(&answer), &any).is_empty());
    let required = Required {
        outcome: Outcome::Result,
        ..any
    };
    assert_eq!(check(&over_ws(&answer), &required).len(), 1);
    let no_schema = Required {
        schema: None,
        ..required
    };
    assert!(check(&over_ws(&answer), &no_schema).is_empty());
}

#[test]
fn a_matcher_cites_its_own_clauses_or_else_the_step_s() {
    let clauses = step_clauses();
    let matchers = [
        Matcher {
            path: "result.token_type".to_owned(),
            equals: Some(json!("bearer")),
            ..Matcher::default()
        },
        Matcher {
            path: "result.scope".to_owned(),
            exists: Some(true),
            clauses: Some(vec!["matcher.rule".to_owned()]),
            ..Matcher::default()
        },
    ];
    let expected = Required {
        matchers: &matchers,
        ..expecting(Outcome::Result, &clauses)
    };
    let answer = result(json!({"token_type": "mac"}));
    assert_eq!(
        summary(&check(&over_ws(&answer), &expected)),
        [
            (
                Verdict::Fail,
                "step.rule".to_owned(),
                "result.token_type is \"mac\", expected \"bearer\"".to_owned()
            ),
            (
                Verdict::Fail,
                "matcher.rule".to_owned(),
                "result.scope is absent".to_owned()
            )
        ]
    );
}

#[test]
fn a_finding_is_info_unless_one_of_its_clauses_is_must() {
    let remark = ["step.remark".to_owned()];
    assert_eq!(
        finding(&CATALOG, &remark, String::new()).verdict,
        Verdict::Info
    );
    let both = ["step.remark".to_owned(), "step.rule".to_owned()];
    assert_eq!(
        finding(&CATALOG, &both, String::new()).verdict,
        Verdict::Fail
    );
    let unknown = ["not.in.catalog".to_owned()];
    assert_eq!(
        finding(&CATALOG, &unknown, String::new()).verdict,
        Verdict::Fail
    );
}

#[test]
fn a_plain_text_refusal_passes_only_on_the_rest_interface_and_only_as_an_error() {
    let clauses = step_clauses();
    let plain = ParsedAnswer {
        json: None,
        status: Some(401),
        body: "unauthorized".to_owned(),
        request_id: None,
        duplicate_members: Vec::new(),
        binary_frame: false,
    };
    let rest = |outcome| Required {
        rest_interface: true,
        ..expecting(outcome, &clauses)
    };
    assert!(check(&plain, &rest(Outcome::Error)).is_empty());
    assert!(!check(&plain, &rest(Outcome::Result)).is_empty());
    assert!(!check(&plain, &expecting(Outcome::Error, &clauses)).is_empty());
    let ok_plain = ParsedAnswer {
        status: Some(200),
        ..plain
    };
    assert!(!check(&ok_plain, &rest(Outcome::Error)).is_empty());
}
