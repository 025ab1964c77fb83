//! Issue 41: a suite whose paced calls do not grow with the target's history. The walks of
//! the transaction log read windows of a few pages on a history of one entry and of
//! thousands alike, without a failure; `harness run` prints its plan of paced calls before
//! the run, and `--paced-budget-s` skips with the reason what does not fit. No timing here
//! (BENCHMARKS.md, "Issue 41").

use std::path::Path;

use harness::check::Verdict;
use harness::corpus::Corpus;
use harness::run;
use harness::serve;
use serde_json::Value;

use crate::cli::{harness, temp_dir};

/// Runs `cases` (those `filter` selects, when given) against the reference started with
/// `config`.
async fn cases_against(
    config: serve::ServeConfig,
    edit: impl FnOnce(&mut Vec<harness::case::Case>),
    filter: Option<&str>,
) -> harness::results::RunReport {
    let running = serve::start(config).await.expect("reference server starts");
    let corpus = Corpus::embedded().expect("the embedded corpus loads");
    let mut cases = corpus.cases;
    edit(&mut cases);
    let config = run::RunConfig {
        filter: filter.map(str::to_owned),
        concurrency: 8,
        ..run::RunConfig::new(
            running.target(),
            cases,
            corpus.catalog.clone(),
            corpus.schemas.clone(),
        )
    };
    let report = run::run(config, harness::events::EventSink::none())
        .await
        .expect("the run is carried out");
    running.shutdown().await;
    report
}

/// The transaction log's cases against a reference whose main account holds `entries`.
async fn log_cases_against(entries: usize) -> harness::results::RunReport {
    let mut config = serve::ServeConfig::loopback();
    config.log_entries = Some(entries);
    cases_against(config, |_| {}, Some("get_transaction_log")).await
}

fn assert_nothing_fails(report: &harness::results::RunReport) {
    let failed = crate::failed_results(report);
    assert!(failed.is_empty(), "{failed:#?}");
}

// The window walk read `logs[15]` of one page and failed on a shorter history.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn the_walks_pass_a_history_of_one_entry() {
    let report = log_cases_against(1).await;
    assert_nothing_fails(&report);
    let window = report
        .results
        .iter()
        .find(|result| result.case == "m.get_transaction_log.window_walk")
        .expect("the window walk ran");
    assert_eq!(window.verdict, Verdict::Pass, "{}", window.message);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn the_walks_read_windows_of_a_long_history() {
    let report = log_cases_against(20_000).await;
    assert_nothing_fails(&report);
    let walk = report
        .results
        .iter()
        .find(|result| result.case == "m.get_transaction_log.walk")
        .expect("the walk ran");
    assert!(
        walk.notes
            .iter()
            .any(|note| note.starts_with("bounded walk: the window")),
        "{:?}",
        walk.notes
    );
}

// The trigger order history's walk has no window: SPEC.md bounds neither that history nor
// the pages a walk may take, so a history longer than the walk reads is not decided, where
// it once failed as "did not end" (a false failure on a target with a long history).
#[tokio::test(flavor = "multi_thread")]
async fn a_walk_without_window_longer_than_its_pages_is_skipped_not_failed() {
    let only_the_walk = |cases: &mut Vec<harness::case::Case>| {
        cases.retain(|case| case.id == "m.get_trigger_order_history.walk");
        assert_eq!(cases.len(), 1, "the trigger history's walk is a case");
        for step in &mut cases[0].steps {
            if let harness::case::StepKind::Walk(walk) = &mut step.kind {
                assert!(walk.window.is_none(), "the walk has no window");
                walk.max_pages = 2;
            }
        }
    };
    let report = cases_against(serve::ServeConfig::loopback(), only_the_walk, None).await;
    assert!(!report.results.is_empty());
    for result in &report.results {
        assert_eq!(result.verdict, Verdict::Skip, "{}", result.message);
        assert!(
            result
                .message
                .contains("the walk has no window to bound it"),
            "{}",
            result.message
        );
    }
}

fn report_of(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json parses")
}

#[test]
fn run_prints_its_plan_and_a_paced_budget_skips_with_the_reason() {
    let out = temp_dir("paced-budget");
    let output = harness()
        .args([
            "run",
            "--variant",
            "rate-per-user-burst-1",
            "--filter",
            "get_transaction_log",
        ])
        .args(["--paced-budget-s", "0", "--quiet", "--out"])
        .arg(&out)
        .output()
        .expect("harness runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("plan: "), "{stderr}");
    assert!(stderr.contains("do not fit the paced budget"), "{stderr}");
    let report = report_of(&out);
    let results = report["results"].as_array().expect("results");
    let skipped: Vec<&Value> = results
        .iter()
        .filter(|result| result["verdict"] == "skip")
        .collect();
    assert!(!skipped.is_empty());
    assert!(skipped.iter().all(|result| {
        result["message"]
            .as_str()
            .is_some_and(|message| message.contains("--paced-budget-s 0"))
    }));
    assert!(results.iter().all(|result| result["verdict"] != "fail"));
    assert!(results.iter().any(|result| result["verdict"] == "pass"));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

/// A walk of the whole history, named in the plan and passing: the subaccount's walk, whose
/// 50 entries fit the reference's burst (the main account's 960 would take a page a second).
#[test]
fn full_walks_are_named_in_the_plan() {
    let out = temp_dir("full-walks");
    let output = harness()
        .args([
            "run",
            "--filter",
            "get_transaction_log.subaccount_walk",
            "--full-walks",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("harness runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("walks read the whole history"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
