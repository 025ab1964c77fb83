//! Unit tests of judging captured responses against the catalog and the result schemas.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::json;

use super::*;

fn corpus() -> &'static (SchemaSet, Catalog) {
    static CORPUS: OnceLock<(SchemaSet, Catalog)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        (
            SchemaSet::load(&root.join("schemas")).unwrap(),
            Catalog::load(&root.join("clauses.toml")).unwrap(),
        )
    })
}

fn judge(method: &str, response: Value) -> Captured {
    let (schemas, catalog) = corpus();
    judge_captured(method, &response, schemas, catalog)
}

fn clauses(captured: &Captured) -> Vec<(Verdict, &str)> {
    captured
        .observations
        .iter()
        .map(|observation| (observation.verdict, observation.clause.as_str()))
        .collect()
}

const TOGGLE: &str = "private/toggle_subaccount_login";
const LOG: &str = "private/get_transaction_log";

#[test]
fn an_error_envelope_is_a_legitimate_answer() {
    let captured = judge(
        LOG,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": 13009, "message": "unauthorized", "data": {"reason": "no token"}}}),
    );
    assert_eq!(
        captured.form,
        ResponseForm::Error {
            code: Some(13009),
            message: Some("unauthorized".to_owned())
        }
    );
    assert_eq!(captured.verdict, Verdict::Pass, "{captured:?}");
}

#[test]
fn an_error_object_of_another_shape_is_only_info() {
    let captured = judge(
        LOG,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": "13009"}}),
    );
    assert_eq!(captured.verdict, Verdict::Info);
    assert_eq!(
        clauses(&captured),
        [
            (Verdict::Info, "env.error.object"),
            (Verdict::Info, "env.error.object")
        ]
    );
}

#[test]
fn the_second_factor_error_must_carry_13668() {
    let wrong = judge(
        TOGGLE,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 10000, "message": "security_key_authorization_error"}}),
    );
    assert_eq!(wrong.verdict, Verdict::Fail);
    assert_eq!(clauses(&wrong), [(Verdict::Fail, "auth.two_factor.13668")]);
    assert_eq!(wrong.observations[0].path, "/error/code");
    let named_in_data = judge(
        TOGGLE,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "denied", "data": {"reason": "security_key_authorization_error"}}}),
    );
    assert_eq!(named_in_data.verdict, Verdict::Fail);
    let right = judge(
        TOGGLE,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 13668, "message": "security_key_authorization_error"}}),
    );
    assert_eq!(right.verdict, Verdict::Pass);
}

#[test]
fn nothing_fails_that_spec_md_does_not_state() {
    let open = [
        // Another error of a method that needs the second factor: no code is stated for it.
        (TOGGLE, json!({"code": 13009, "message": "unauthorized"})),
        // 13668 under another name: SPEC.md does not say where the name goes.
        (TOGGLE, json!({"code": 13668, "message": "2fa required"})),
        // The name on a method SPEC.md does not say needs the second factor.
        (
            LOG,
            json!({"code": 1, "message": "security_key_authorization_error"}),
        ),
    ];
    for (method, error) in open {
        let shown = format!("{method}: {error}");
        let captured = judge(method, json!({"jsonrpc": "2.0", "id": 1, "error": error}));
        assert_eq!(captured.verdict, Verdict::Pass, "{shown}");
    }
}

#[test]
fn a_result_is_checked_against_the_method_schema() {
    let captured = judge(
        LOG,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"logs": [{"id": "x"}], "continuation": 0.5}}),
    );
    assert_eq!(captured.form, ResponseForm::Result);
    assert_eq!(captured.verdict, Verdict::Fail);
    assert!(
        captured
            .observations
            .iter()
            .any(|observation| observation.path == "/continuation"
                && observation.clause == "m.get_transaction_log.result"),
        "{captured:?}"
    );
    let bare = judge(
        "public/get_historical_volatility",
        json!([[1_700_000_000_000_u64, 42.5]]),
    );
    assert_eq!(bare.form, ResponseForm::BareResult);
    assert_eq!(bare.verdict, Verdict::Pass);
}

#[test]
fn an_envelope_without_result_or_error_fails() {
    let captured = judge(TOGGLE, json!({"jsonrpc": "2.0", "id": 1}));
    assert_eq!(captured.form, ResponseForm::Malformed);
    assert_eq!(
        clauses(&captured),
        [(Verdict::Fail, "env.response.exclusive")]
    );
    let both = judge(
        TOGGLE,
        json!({"jsonrpc": "2.0", "id": 1, "result": "ok", "error": {"code": 1, "message": "m"}}),
    );
    assert_eq!(both.verdict, Verdict::Fail);
}

#[test]
fn file_names_give_methods() {
    let cases = [
        ("private_get_transaction_log.json", Some(LOG)),
        ("private-get_transaction_log.json", Some(LOG)),
        ("private_get_transaction_log.page2.json", Some(LOG)),
        ("public_auth.json", Some("public/auth")),
        ("public-get_currencies", Some("public/get_currencies")),
        ("get_transaction_log.json", None),
        ("private.json", None),
        ("privateget_x.json", None),
    ];
    for (name, method) in cases {
        assert_eq!(method_from_file_name(name).as_deref(), method, "{name}");
    }
}
