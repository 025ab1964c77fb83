//! Writing a finding as a case file the conformance runner loads (CONTRIBUTING.md): the
//! shrunk request as a `call` (or `raw`) step with the expectation the oracle gave it, so
//! `harness run --cases DIR` reproduces the finding without the fuzzer.
//!
//! Secrets never appear: credentials are written as auth modes the runner fills in.

use serde_json::{Map, Value};

use super::rules::{self, Expectation};
use super::send::account_of;
use super::{FuzzRequest, RequestAuth, SecretPlan};
use harness_model::target_file::Target;

/// The case file of a finding judged with `expectation`: `id` must be unique in the
/// directory it goes to.
pub fn case_file(
    id: &str,
    request: &FuzzRequest,
    expectation: &Expectation,
    clause: &str,
    message: &str,
    target: &Target,
) -> String {
    let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let mut out = String::new();
    out.push_str(&format!(
        "# Found by harness fuzz ({}); shrunk. The oracle expects {}.\n",
        one_line(&request.why),
        match expectation {
            Expectation::Result(_) => "a result",
            Expectation::Error { .. } => "an error",
            Expectation::Any => "either a result or an error",
        }
    ));
    out.push_str(&format!("id = {}\n", quote(id)));
    out.push_str(&format!("title = {}\n", quote(&one_line(message))));
    out.push_str(&format!("clauses = [{}]\n", quote(clause)));
    out.push_str(&format!(
        "transports = [{}]\n",
        quote(request.transport.as_str())
    ));
    let account = account_of(&request.auth);
    let destructive = rules::method(&request.method).is_some_and(|rule| rule.state_changing);
    out.push_str(&format!(
        "needs = {{ accounts = [{}], destructive = {destructive} }}\n",
        account.map(quote).unwrap_or_default()
    ));
    if destructive {
        out.push_str("serial = true\n");
    }
    let mut params = request.params.clone();
    if let RequestAuth::RefreshOf { account, scope } = &request.auth {
        out.push_str("\n[[step]]\ncall = \"public/auth\"\n");
        if let Some(scope) = scope {
            out.push_str(&format!("params = {{ scope = {} }}\n", quote(scope)));
        }
        out.push_str(&format!(
            "auth = {{ mode = \"client_credentials\", account = {} }}\n",
            quote(account)
        ));
        out.push_str(
            "expect = { outcome = \"result\" }\ncapture = { refresh = \"result.refresh_token\" }\n",
        );
        params.insert("refresh_token".to_owned(), Value::from("{{refresh}}"));
    }
    if let (
        RequestAuth::ClientCredentials { account, .. }
        | RequestAuth::ClientSignature { account, .. },
        Some(client_id),
    ) = (
        &request.auth,
        params.get("client_id").and_then(Value::as_str),
    ) && target
        .accounts
        .get(account)
        .is_some_and(|known| known.client_id == client_id)
    {
        params.insert(
            "client_id".to_owned(),
            Value::from(format!("{{{{account.{account}.client_id}}}}")),
        );
    }
    let auth = auth_table(&request.auth, &quote);
    let replay = matches!(
        request.auth,
        RequestAuth::Signed { replay: true, .. }
            | RequestAuth::ClientSignature { replay: true, .. }
    );
    if replay {
        out.push_str(&step(
            request,
            &params,
            auth.as_deref(),
            "{ outcome = \"any\" }",
        ));
    }
    let auth = auth.map(|auth| {
        if replay {
            auth.replace(" }", ", nonce = \"reuse\" }")
        } else {
            auth
        }
    });
    out.push_str(&step(
        request,
        &params,
        auth.as_deref(),
        &expect_table(expectation, clause, request),
    ));
    out
}

fn step(
    request: &FuzzRequest,
    params: &Map<String, Value>,
    auth: Option<&str>,
    expect: &str,
) -> String {
    let mut out = String::from("\n[[step]]\n");
    if request.walk {
        // Keys before the [step.walk] header belong to the step, after it to the walk.
        if let Some(auth) = auth {
            out.push_str(&format!("auth = {auth}\n"));
        }
        let mut params = params.clone();
        let count = params
            .remove("count")
            .and_then(|count| count.as_u64())
            .unwrap_or(20);
        let items = if request.method == "private/get_trigger_order_history" {
            "entries"
        } else {
            "logs"
        };
        out.push_str(&format!(
            "[step.walk]\ncall = {}\n",
            toml::Value::String(request.method.clone())
        ));
        if !params.is_empty() {
            out.push_str(&format!("params = {}\n", inline_table(&params)));
        }
        out.push_str(&format!(
            "items = \"{items}\"\ncount = {count}\nmax_pages = 400\n"
        ));
        return out;
    }
    match &request.raw {
        Some(raw) => out.push_str(&format!(
            "raw = {}\n",
            toml::Value::String(raw.replace("%ID%", "1"))
        )),
        None => {
            let call = if request.method == rules::LOCK_PORTFOLIO {
                "private/lock_portfolio"
            } else {
                &request.method
            };
            out.push_str(&format!(
                "call = {}\n",
                toml::Value::String(call.to_owned())
            ));
            if !params.is_empty() {
                out.push_str(&format!("params = {}\n", inline_table(params)));
            }
        }
    }
    if let Some(auth) = auth {
        out.push_str(&format!("auth = {auth}\n"));
    }
    out.push_str(&format!("expect = {expect}\n"));
    out
}

/// A JSON object as a TOML inline table. Values TOML cannot hold (null, integers beyond
/// i64) are written as strings, which is what a query string carries anyway.
fn inline_table(params: &Map<String, Value>) -> String {
    let members: Vec<String> = params
        .iter()
        .map(|(name, value)| {
            let key = toml::Value::String(name.clone()).to_string();
            format!("{key} = {}", toml_value(value))
        })
        .collect();
    format!("{{ {} }}", members.join(", "))
}

fn toml_value(value: &Value) -> String {
    match value {
        Value::Number(number) if number.is_i64() || number.is_f64() => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(members) => inline_table(members),
        Value::String(text) => toml::Value::String(text.clone()).to_string(),
        other => toml::Value::String(other.to_string()).to_string(),
    }
}

fn auth_table(auth: &RequestAuth, quote: &dyn Fn(&str) -> String) -> Option<String> {
    Some(match auth {
        RequestAuth::None | RequestAuth::RefreshOf { .. } => return None,
        RequestAuth::ClientCredentials {
            secret: SecretPlan::Omitted,
            ..
        } => return None,
        RequestAuth::Bearer { account, scope } => match scope {
            Some(scope) => format!(
                "{{ mode = \"bearer\", account = {}, scope = {} }}",
                quote(account),
                quote(scope)
            ),
            None => format!("{{ mode = \"bearer\", account = {} }}", quote(account)),
        },
        RequestAuth::BogusToken => {
            "{ mode = \"bearer\", token = \"never-issued-token\" }".to_owned()
        }
        RequestAuth::Basic {
            account,
            wrong_secret,
        } => format!(
            "{{ mode = \"basic\", account = {}, wrong_secret = {wrong_secret} }}",
            quote(account)
        ),
        RequestAuth::Signed {
            account,
            wrong_secret,
            offset_ms,
            ..
        } => format!(
            "{{ mode = \"signed\", account = {}, wrong_secret = {wrong_secret}, timestamp_offset_ms = {offset_ms} }}",
            quote(account)
        ),
        RequestAuth::ClientCredentials { account, secret } => format!(
            "{{ mode = \"client_credentials\", account = {}, wrong_secret = {} }}",
            quote(account),
            *secret == SecretPlan::Wrong
        ),
        RequestAuth::ClientSignature {
            account,
            wrong_secret,
            offset_ms,
            uppercase,
            ..
        } => format!(
            "{{ mode = \"client_signature\", account = {}, wrong_secret = {wrong_secret}, timestamp_offset_ms = {offset_ms}, uppercase_hex = {uppercase} }}",
            quote(account)
        ),
        RequestAuth::ApiKey { right: true } => "{ mode = \"api_key\" }".to_owned(),
        RequestAuth::ApiKey { right: false } => {
            "{ mode = \"bearer\", token = \"wrong-direct-access-key\" }".to_owned()
        }
    })
}

fn expect_table(expectation: &Expectation, clause: &str, request: &FuzzRequest) -> String {
    if clause.starts_with("env.") || clause.starts_with("transport.") {
        return "{ outcome = \"any\" }".to_owned();
    }
    match expectation {
        Expectation::Error {
            code: Some(code), ..
        } => format!(
            "{{ outcome = \"error\", error_code = {code}, error_message = \"security_key_authorization_error\" }}"
        ),
        Expectation::Error { .. } => "{ outcome = \"error\" }".to_owned(),
        Expectation::Any => "{ outcome = \"any\" }".to_owned(),
        Expectation::Result(_) => {
            let mut parts = vec!["outcome = \"result\"".to_owned()];
            if clause == "http.status.success" {
                parts.push("http_status = 200".to_owned());
            }
            if let Some(matcher) = echo_matcher(clause, request) {
                parts.push(format!(
                    "match = [{{ {matcher}, clauses = [\"{clause}\"] }}]"
                ));
            }
            format!("{{ {} }}", parts.join(", "))
        }
    }
}

/// The matcher that shows a broken echoed rule (see `assess::echoed_rules`).
fn echo_matcher(clause: &str, request: &FuzzRequest) -> Option<String> {
    let param = |name: &str| request.params.get(name).map(toml_value);
    Some(match clause {
        "m.get_transaction_log.count" => format!(
            "path = \"result.logs\", len_max = {}",
            param("count").unwrap_or_else(|| "100".to_owned())
        ),
        "m.get_trigger_order_history.count" => format!(
            "path = \"result.entries\", len_max = {}",
            param("count").unwrap_or_else(|| "20".to_owned())
        ),
        "m.get_transaction_log.window" => {
            let mut bounds = vec!["path = \"result.logs[*].timestamp\"".to_owned()];
            bounds.extend(param("start_timestamp").map(|start| format!("min = {start}")));
            bounds.extend(param("end_timestamp").map(|end| format!("max = {end}")));
            bounds.join(", ")
        }
        "m.get_transaction_log.subaccount" => format!(
            "path = \"result.logs[*].user_id\", equals = {}",
            param("subaccount_id")?
        ),
        "m.get_trigger_order_history.instrument_filter" => format!(
            "path = \"result.entries[*].instrument_name\", equals = {}",
            param("instrument_name")?
        ),
        "m.get_book_summary_by_instrument.instrument" => format!(
            "path = \"result[*].instrument_name\", equals = {}",
            param("instrument_name")?
        ),
        "m.get_mmp_status.block_rfq" => "path = \"result[*].block_rfq\", equals = true".to_owned(),
        _ => return None,
    })
}

fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(160)
        .collect();
    line.trim().to_owned()
}
