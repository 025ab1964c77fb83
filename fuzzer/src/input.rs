//! A single request as an input of the pipeline (`pipeline.rs`): sent (or walked) and
//! judged against the oracle's prediction (`execute.rs`), grouped by clause and method,
//! shrunk by smaller variants one at a time (a parameter removed, a string emptied or
//! halved, a number made 0 or 1 or halved, a signature or Basic header replaced by a bearer
//! token), and written as a case file of one step (`case_file.rs`).
//!
//! The oracle judges each variant afresh, so removing a required parameter is kept only if
//! the server then still breaks the same clause for the new reason.

use harness_model::check::{Finding, Outcome};
use harness_runner::transport::ClientSession;
use serde_json::{Value, json};

use super::execute::{Assessed, execute};
use super::pipeline::{Context, Input};
use super::prediction::Prediction;
use super::rules;
use super::send::Budget;
use super::{FoundInput, FuzzConfig, FuzzRequest, RequestAuth, case_file, shard_requests};
use harness_model::case::{Auth, Bearer, BearerLogin, BearerToken};
use harness_model::target_file::Target;

/// Ids of shrink requests start here, far from the generated requests' ids.
const SHRINK_ID_BASE: u64 = 1 << 40;

impl Input for FuzzRequest {
    type Run = Assessed;
    type Session = Option<ClientSession>;
    const LETTER: char = 'r';

    fn generate(config: &FuzzConfig, target: &Target, budget: usize) -> Vec<(usize, FuzzRequest)> {
        shard_requests(
            config.seed,
            budget,
            config.shard,
            target,
            &config.transports,
        )
    }

    fn group(&self, failure: &Finding) -> (String, String) {
        (failure.clause().to_owned(), self.method.clone())
    }

    async fn execute(
        &self,
        context: &Context<'_>,
        id: u64,
        session: &mut Self::Session,
    ) -> Assessed {
        execute(
            context.sender,
            context.schemas,
            context.redactor,
            self,
            id,
            session,
            Budget::Wait,
        )
        .await
    }

    async fn close(session: Self::Session) {
        if let Some(mut session) = session {
            session.close().await;
        }
    }

    fn shrink_id(_number: usize, tries: usize) -> u64 {
        SHRINK_ID_BASE + tries as u64
    }

    fn sent(_run: &Assessed) -> usize {
        1
    }

    fn fails_again(run: &Assessed, failure: &Finding) -> bool {
        run.finding.as_ref().is_some_and(|again| {
            again.verdict == failure.verdict && again.clauses == failure.clauses
        })
    }

    fn cut(self, run: Assessed) -> (FuzzRequest, Assessed) {
        (self, run)
    }

    fn candidates(&self) -> Vec<FuzzRequest> {
        candidates(self)
    }

    fn reported(failure: Finding, _shrunk: &Assessed) -> Option<Finding> {
        Some(failure)
    }

    fn case_file(
        &self,
        id: &str,
        (first, _): (&Assessed, &Assessed),
        failure: &Finding,
        context: &Context<'_>,
    ) -> String {
        case_file(
            id,
            self,
            &expect_offline(self, &first.prediction),
            failure.clause(),
            &failure.message,
            &context.sender.target,
        )
    }

    fn found(self, shrunk: FuzzRequest) -> FoundInput {
        FoundInput::Request {
            request: self,
            shrunk,
        }
    }
}

/// The oracle's prediction of a shrunk request without sending it: the granted scope is
/// taken from the original judgement when the credentials did not change.
fn expect_offline(shrunk: &FuzzRequest, original: &Prediction) -> Prediction {
    let knowledge = rules::OracleKnowledge::default();
    match rules::expect(shrunk, &knowledge) {
        shrunk if shrunk.outcome == Outcome::Result && original.outcome == Outcome::Error => {
            original.clone()
        }
        other => other,
    }
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
