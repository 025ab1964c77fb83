//! Shrinking a failing request: try smaller variants one at a time (a parameter removed, a
//! string emptied or halved, a number made 0 or 1 or halved, a signature or Basic header
//! replaced by a bearer token) and keep the first that still breaks the same clause, until
//! no variant does or the request budget is spent.
//!
//! The oracle judges each variant afresh, so removing a required parameter is kept only if
//! the server then still breaks the same clause for the new reason.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::execute::execute;
use super::send::{Budget, Sender};
use super::{FuzzRequest, RequestAuth};
use harness_model::case::{Auth, Bearer, BearerLogin, BearerToken};
use harness_model::check::{Finding, Redactor, SchemaSet};

/// Ids of shrink requests start here, far from the generated requests' ids.
const SHRINK_ID_BASE: u64 = 1 << 40;

/// The shrunk request and the number of requests sent to find it.
pub(crate) async fn shrink(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    request: &FuzzRequest,
    failure: &Finding,
    budget: usize,
    run_timeout: Duration,
) -> (FuzzRequest, usize) {
    let deadline = Instant::now() + run_timeout;
    let mut best = request.clone();
    let mut sent = 0usize;
    let mut ws = None;
    'improve: loop {
        for candidate in candidates(&best) {
            if sent >= budget || Instant::now() > deadline {
                break 'improve;
            }
            sent += 1;
            let id = SHRINK_ID_BASE + sent as u64;
            let finding = execute(
                sender,
                schemas,
                redactor,
                &candidate,
                id,
                &mut ws,
                Budget::Wait,
            )
            .await
            .finding;
            if finding.is_some_and(|again| {
                again.verdict == failure.verdict && again.clauses == failure.clauses
            }) {
                best = candidate;
                continue 'improve;
            }
        }
        break;
    }
    if let Some(mut session) = ws {
        session.close().await;
    }
    (best, sent)
}

/// Smaller variants of a request, most promising first.
fn candidates(request: &FuzzRequest) -> Vec<FuzzRequest> {
    let mut out = Vec::new();
    let simpler_auth = match &request.auth {
        RequestAuth::Step(auth @ (Auth::Basic(_) | Auth::Signed(_))) => {
            Some(RequestAuth::Step(Auth::bearer(auth.account())))
        }
        RequestAuth::Step(Auth::Bearer(Bearer {
            account,
            token: BearerToken::Login(BearerLogin { scope: Some(_), .. }),
            ..
        })) => Some(RequestAuth::Step(Auth::bearer(account.as_deref()))),
        _ => None,
    };
    if let Some(auth) = simpler_auth {
        out.push(FuzzRequest {
            auth,
            ..request.clone()
        });
    }
    for name in request.params.keys() {
        let mut without = request.clone();
        without.params.remove(name);
        out.push(without);
    }
    for (name, value) in &request.params {
        for smaller in smaller_values(value) {
            let mut variant = request.clone();
            variant.params.insert(name.clone(), smaller);
            out.push(variant);
        }
    }
    out
}

fn smaller_values(value: &Value) -> Vec<Value> {
    match value {
        Value::String(text) if !text.is_empty() => {
            let half: String = text.chars().take(text.chars().count() / 2).collect();
            vec![json!(""), json!(half)]
        }
        Value::Number(number) => match number.as_i64() {
            Some(0) => Vec::new(),
            Some(1) => vec![json!(0)],
            Some(n) => vec![json!(0), json!(1), json!(n / 2)],
            None => vec![json!(0)],
        },
        Value::Array(items) if !items.is_empty() => vec![json!([])],
        Value::Object(members) if !members.is_empty() => vec![json!({})],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;
    use crate::request_auth::signature;
    use harness_protocol::wire::TransportKind;

    #[test]
    fn candidates_never_grow_a_request() {
        let mut params = Map::new();
        params.insert("count".to_owned(), json!(251));
        params.insert("currency".to_owned(), json!("BTC"));
        let request = FuzzRequest {
            transport: TransportKind::HttpBody,
            method: "private/get_transaction_log".to_owned(),
            params,
            auth: RequestAuth::signed("main", false, signature(0, false)),
            raw: None,
            why: String::new(),
            walk: false,
            class: None,
        };
        let size = |request: &FuzzRequest| serde_json::to_string(&request.params).unwrap().len();
        for candidate in candidates(&request) {
            assert!(size(&candidate) <= size(&request), "{candidate:?}");
        }
        assert!(
            candidates(&request)
                .iter()
                .any(|c| matches!(c.auth, RequestAuth::Step(Auth::Bearer(_))))
        );
    }
}
