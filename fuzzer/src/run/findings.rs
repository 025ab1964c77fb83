//! What a fuzz run found: the judged requests counted and their failures gathered, then
//! grouped by clause and method, the first of each group shrunk and written as a case file.

use std::collections::BTreeMap;
use std::time::Instant;

use harness_model::check::{Outcome, Redactor, SchemaSet};

use super::Failed;
use crate::assess;
use crate::execute::Assessed;
use crate::prediction::Prediction;
use crate::rules;
use crate::send::Sender;
use crate::{
    FoundInput, FuzzConfig, FuzzError, FuzzFinding, FuzzReport, FuzzRequest, case_file, shrink,
};

/// Counts each judged request into `report` (what the oracle expected, throttled,
/// unanswered) and gives back the failures, each with the request as sent (steering's in
/// place of the fresh one).
pub(super) fn tally(
    report: &mut FuzzReport,
    outcomes: Vec<Option<Assessed>>,
    requests: &[(usize, FuzzRequest)],
    instead: Vec<Option<FuzzRequest>>,
) -> Vec<Failed> {
    let mut failed: Vec<Failed> = Vec::new();
    for (index, outcome) in outcomes.into_iter().enumerate() {
        let Some(outcome) = outcome else {
            continue;
        };
        match outcome.prediction.outcome {
            Outcome::Result => report.expected_result += 1,
            Outcome::Error => report.expected_error += 1,
            Outcome::Any => report.expected_any += 1,
        }
        match outcome.finding {
            None => {}
            Some(finding) if assess::is_throttled(&finding) => report.rate_limited += 1,
            Some(finding) if assess::is_unanswered(&finding) => report.unanswered += 1,
            Some(failure) => {
                let (number, fresh) = requests[index].clone();
                let request = instead[index].clone().unwrap_or(fresh);
                failed.push((request, outcome.prediction, failure, number));
            }
        }
    }
    failed
}

/// Groups failures by clause and method, then shrinks and writes the first of each group.
pub(super) async fn findings(
    sender: &Sender,
    schemas: &SchemaSet,
    redactor: &Redactor,
    config: &FuzzConfig,
    failed: Vec<Failed>,
    shrink_requests: &mut usize,
) -> Result<Vec<FuzzFinding>, FuzzError> {
    // The first failure of each clause and method, with how many requests failed that way.
    let mut groups: BTreeMap<(String, String), (Failed, usize)> = BTreeMap::new();
    for failed in failed {
        let key = (failed.2.clause().to_owned(), failed.0.method.clone());
        groups
            .entry(key)
            .and_modify(|group| group.1 += 1)
            .or_insert((failed, 1));
    }
    let mut groups: Vec<(Failed, usize)> = groups.into_values().collect();
    groups.sort_by_key(|group| group.0.3);
    // All shrinking together gets one more run timeout; none once interrupted.
    let shrink_deadline = Instant::now() + config.run_timeout;
    let mut findings = Vec::new();
    if let Some(dir) = &config.out {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
            path: dir.clone(),
            source,
        })?;
    }
    for ((request, prediction, failure, first_index), occurrences) in
        groups.into_iter().take(config.max_findings)
    {
        let (shrunk, sent) = shrink::shrink(
            sender,
            schemas,
            redactor,
            &request,
            &failure,
            config.shrink_budget,
            match config.interrupt.reason() {
                Some(_) => std::time::Duration::ZERO,
                None => shrink_deadline.saturating_duration_since(Instant::now()),
            },
        )
        .await;
        *shrink_requests += sent;
        let shrunk_prediction = expect_offline(&shrunk, &prediction);
        let mut case_path = None;
        if let Some(dir) = &config.out {
            let id = format!("fuzz.s{}.r{first_index}", config.seed);
            let text = case_file(
                &id,
                &shrunk,
                &shrunk_prediction,
                failure.clause(),
                &failure.message,
                &sender.target,
            );
            case_path = Some(crate::write_case_file(dir, &id, &text)?);
        }
        findings.push(FuzzFinding {
            clause: failure.clause().to_owned(),
            message: failure.message,
            first_index,
            occurrences,
            input: FoundInput::Request { request, shrunk },
            case_file: case_path,
        });
    }
    Ok(findings)
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
