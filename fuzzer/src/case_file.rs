//! Writing a finding as a case file the conformance runner loads (CONTRIBUTING.md): the
//! shrunk request as a `call` (or `raw`, or `walk`) step with the prediction the oracle
//! gave it, so `harness run --cases DIR` reproduces the finding without the fuzzer. The
//! file is a [`Case`] value written by [`Case::to_toml`]: the fuzzer has no case-file
//! syntax of its own.
//!
//! Secrets never appear: credentials are written as auth modes the runner fills in.

use serde_json::Value;

use super::FuzzRequest;
use super::prediction::Prediction;
use super::rules;
use super::steps::{account_of, is_replay, request_case};
use harness_model::case::{Case, ExpectedAnswer, Needs, Step, StepKind, Walk, storable};
use harness_model::check::Matcher;
use harness_model::check::Outcome;
use harness_model::target_file::Target;
use harness_protocol::spec;

/// The case file of a finding judged with `prediction`: `id` must be unique in the
/// directory it goes to.
pub fn case_file(
    id: &str,
    request: &FuzzRequest,
    prediction: &Prediction,
    clause: &str,
    message: &str,
    target: &Target,
) -> String {
    let comment = format!(
        "Found by harness fuzz ({}); shrunk. The oracle expects {}.",
        one_line(&request.why),
        match prediction.outcome {
            Outcome::Result => "a result",
            Outcome::Error => "an error",
            Outcome::Any => "either a result or an error",
        }
    );
    let case = finding_case(id, request, prediction, clause, message, target);
    // Every value went through `storable`, so TOML can hold it.
    case.to_toml(&comment)
        .unwrap_or_else(|error| format!("# {comment}\n# not written: {error}\n"))
}

/// The finding as a [`Case`]: the steps the request was sent as ([`request_case`]), the
/// last expecting what the oracle predicted (a walk as one `walk` step), every value as a
/// case file can hold it ([`storable`]).
fn finding_case(
    id: &str,
    request: &FuzzRequest,
    prediction: &Prediction,
    clause: &str,
    message: &str,
    target: &Target,
) -> Case {
    let destructive = rules::method(&request.method).is_some_and(|rule| rule.state_changing);
    let mut case = request_case(request, target);
    for step in &mut case.steps {
        step.params = step
            .params
            .iter()
            .map(|(name, value)| (name.clone(), storable(value)))
            .collect();
    }
    if let Some(last) = case.steps.last_mut() {
        if request.walk {
            *last = walk_step(request, last);
        } else if !matches!(last.kind, StepKind::Race { .. }) {
            // A race (a replay released together with the original) judges itself: any
            // answer of a copy, at most one result (`steps.rs`).
            last.expect = expected_answer(prediction, clause, request);
        }
    }
    if is_replay(request)
        && let [first, _, ..] = case.steps.as_mut_slice()
    {
        // A replay's first sending: either answer is fine.
        first.expect.outcome = Outcome::Any;
    }
    Case {
        id: id.to_owned(),
        title: one_line(message),
        clauses: vec![clause.to_owned()],
        needs: Needs {
            accounts: account_of(&request.auth)
                .map(|account| vec![account.to_owned()])
                .unwrap_or_default(),
            fixtures: Vec::new(),
            destructive,
        },
        serial: destructive,
        ..case
    }
}

/// The `walk` step that follows `request` from its first page (`step`) to the last.
fn walk_step(request: &FuzzRequest, step: &Step) -> Step {
    let mut params = step.params.clone();
    let count = params
        .remove("count")
        .and_then(|count| count.as_u64())
        .and_then(|count| u32::try_from(count).ok())
        .or_else(|| {
            let default = spec::method(&request.method)?.default_count()?;
            u32::try_from(default).ok()
        })
        .unwrap_or(1);
    let items = spec::method(&request.method)
        .and_then(|method| method.paging)
        .map_or("", |paging| paging.items);
    Step {
        auth: step.auth.clone(),
        ..Step::new(StepKind::Walk(Box::new(Walk {
            call: request.method.clone(),
            params,
            items: items.to_owned(),
            cursor: "continuation".to_owned(),
            count,
            compare_count: None,
            key: None,
            timestamp: None,
            max_pages: 400,
            expiry_of: None,
            each: Vec::new(),
            window: None,
        })))
    }
}

fn expected_answer(prediction: &Prediction, clause: &str, request: &FuzzRequest) -> ExpectedAnswer {
    let outcome = |outcome| ExpectedAnswer {
        outcome,
        ..ExpectedAnswer::default()
    };
    if super::assess::found_before_prediction(request, clause) {
        return outcome(Outcome::Any);
    }
    match prediction.outcome {
        Outcome::Error => ExpectedAnswer {
            error_code: prediction.code,
            error_message: prediction.code.and_then(error_name),
            ..outcome(Outcome::Error)
        },
        Outcome::Any => outcome(Outcome::Any),
        Outcome::Result => ExpectedAnswer {
            http_status: (clause == "http.status.success").then_some(200),
            matchers: echo_matcher(clause, request)
                .map(|matcher| {
                    vec![Matcher {
                        clauses: Some(vec![clause.to_owned()]),
                        ..matcher
                    }]
                })
                .unwrap_or_default(),
            ..outcome(Outcome::Result)
        },
    }
}

/// The error name SPEC.md gives with `code`, when it gives one.
fn error_name(code: i64) -> Option<String> {
    (code == harness_protocol::spec::SECOND_FACTOR_ERROR_CODE)
        .then(|| harness_protocol::spec::SECOND_FACTOR_ERROR_NAME.to_owned())
}

/// The matcher that shows a broken echoed rule (see `assess::echoed_rules`).
fn echo_matcher(clause: &str, request: &FuzzRequest) -> Option<Matcher> {
    let param = |name: &str| request.params.get(name).map(storable);
    let number = |name: &str| param(name).and_then(|value| value.as_f64());
    let path = |path: &str| Matcher {
        path: path.to_owned(),
        ..Matcher::default()
    };
    Some(match clause {
        "m.get_transaction_log.count" => Matcher {
            len_max: count_of(request),
            ..path("result.logs")
        },
        "m.get_trigger_order_history.count" => Matcher {
            len_max: count_of(request),
            ..path("result.entries")
        },
        "m.get_transaction_log.window" => Matcher {
            min: number("start_timestamp"),
            max: number("end_timestamp"),
            ..path("result.logs[*].timestamp")
        },
        "m.get_transaction_log.subaccount" => Matcher {
            equals: Some(param("subaccount_id")?),
            ..path("result.logs[*].user_id")
        },
        "m.get_trigger_order_history.instrument_filter" => Matcher {
            equals: Some(param("instrument_name")?),
            ..path("result.entries[*].instrument_name")
        },
        "m.get_book_summary_by_instrument.instrument" => Matcher {
            equals: Some(param("instrument_name")?),
            ..path("result[*].instrument_name")
        },
        "m.get_mmp_status.block_rfq" => Matcher {
            equals: Some(Value::Bool(true)),
            ..path("result[*].block_rfq")
        },
        _ => return None,
    })
}

/// The request's `count`, or the method's default `count` of the spec table when it sends
/// none.
fn count_of(request: &FuzzRequest) -> Option<usize> {
    let count = match request.params.get("count") {
        Some(count) => count.as_i64(),
        None => spec::method(&request.method).and_then(spec::Method::default_count),
    };
    count.and_then(|count| usize::try_from(count).ok())
}

fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(160)
        .collect();
    line.trim().to_owned()
}
