//! `harness lint-response` on responses captured from the reference server: results and
//! error envelopes (13668 included) pass, each method named by its file name; a
//! second-factor error with another code fails; a file naming no method is bad input.

use std::path::Path;

use serde_json::Value;

use crate::cli::{run, temp_dir, text};

/// GETs `{base_url}/{method}?{query}`, with a bearer token if given, and returns the body.
async fn capture(base_url: &str, method: &str, query: &str, token: Option<&str>) -> Value {
    let client = reqwest::Client::new();
    let mut request = client.get(format!("{base_url}/{method}?{query}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), request.send())
        .await
        .expect("the reference server answers in time")
        .unwrap();
    response.json().await.unwrap()
}

fn write(dir: &Path, name: &str, value: &Value) {
    std::fs::write(dir.join(name), serde_json::to_string_pretty(value).unwrap()).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn captured_results_and_errors_are_judged_by_what_spec_md_states() {
    let running = harness::serve::start(harness::serve::ServeConfig::loopback())
        .await
        .unwrap();
    let target = running.target();
    let base = target.base_url.clone();
    let dir = temp_dir("lint-captured");
    write(
        &dir,
        "public_get_currencies.json",
        &capture(&base, "public/get_currencies", "", None).await,
    );
    let unauthorized = capture(&base, "private/get_transaction_log", "currency=BTC", None).await;
    assert!(unauthorized.get("error").is_some(), "{unauthorized}");
    write(&dir, "private_get_transaction_log.json", &unauthorized);
    let account = &target.accounts["two_factor"];
    let auth = capture(
        &base,
        "public/auth",
        &format!(
            "grant_type=client_credentials&client_id={}&client_secret={}",
            account.client_id,
            account.client_secret.expose()
        ),
        None,
    )
    .await;
    let token = auth["result"]["access_token"].as_str().unwrap().to_owned();
    let sid = target.fixtures.subaccount_id.unwrap();
    let second_factor = capture(
        &base,
        "private/toggle_subaccount_login",
        &format!("sid={sid}&state=disable"),
        Some(&token),
    )
    .await;
    running.shutdown().await;
    assert_eq!(second_factor["error"]["code"], 13668, "{second_factor}");
    write(&dir, "private-toggle_subaccount_login.json", &second_factor);

    let output = run(&["lint-response", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("private_get_transaction_log.json: PASS private/get_transaction_log error 13009 unauthorized"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "PASS private/toggle_subaccount_login error 13668 security_key_authorization_error"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("PASS public/get_currencies result"),
        "{stdout}"
    );
    assert!(stdout.contains("3 file(s): 3 pass"), "{stdout}");

    // The second-factor error under another code breaks the one code SPEC.md states.
    let mut wrong = second_factor.clone();
    wrong["error"]["code"] = Value::from(13009);
    write(&dir, "private_toggle_subaccount_login.wrong.json", &wrong);
    let output = run(&["lint-response", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("private_toggle_subaccount_login.wrong.json: FAIL private/toggle_subaccount_login error 13009"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fail /error/code: [auth.two_factor.13668]"),
        "{stdout}"
    );
    assert!(stdout.contains("4 file(s): 3 pass, 1 fail"), "{stdout}");
}

#[test]
fn a_file_naming_no_method_is_bad_input_unless_method_is_given() {
    let dir = temp_dir("lint-unnamed");
    let capture = dir.join("capture.json");
    std::fs::write(
        &capture,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":10028,"message":"too_many_requests"}}"#,
    )
    .unwrap();
    let output = run(&["lint-response", capture.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("no known method in the file name"),
        "{}",
        text(&output)
    );
    let output = run(&[
        "lint-response",
        "--method",
        "private/get_transaction_log",
        capture.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(
        text(&output).contains("PASS private/get_transaction_log error 10028 too_many_requests")
    );
}
