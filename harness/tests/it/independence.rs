//! State-changing cases are independent of each other (issue 13, item 8): a real server
//! keeps state between cases, so every call that changes state either changes nothing
//! the other cases see, leaves the target as the case found it, runs on one transport
//! only, or closes a position of its own. And the mechanisms that make it so work: a
//! clean-up step runs after a failure, and positions are drawn once per run.

use std::path::Path;
use std::sync::Arc;

use harness::case::{self, Case, Step};

use harness::check::Outcome;
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::run;
use harness::serve::{self, Fault};
use harness::spec;
use harness::target_file::Target;

fn corpus() -> (Vec<Case>, Catalog, SchemaSet) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases = case::discover(&root, &catalog, &schemas).unwrap();
    (cases, catalog, schemas)
}

/// Why a state-changing step leaves the other cases a target as they expect it.
fn why_independent(case: &Case, step: &Step) -> Option<&'static str> {
    let method = step.call_method()?;
    let param = |name: &str| step.params.get(name).and_then(|value| value.as_str());
    if step.expect.outcome == Outcome::Error {
        return Some("a refusal changes nothing (a server that accepts it fails the case)");
    }
    if step
        .auth
        .given_token()
        .is_some_and(|token| token.starts_with("{{"))
    {
        return Some("it ends a session the case opened itself");
    }
    match method {
        "private/toggle_subaccount_login" if param("state") == Some("enable") => {
            Some("enabling is the state the case found")
        }
        "private/toggle_subaccount_login"
            if case.steps.iter().any(|later| {
                later.always && later.params.get("state").and_then(|v| v.as_str()) == Some("enable")
            }) =>
        {
            Some("an `always` step enables the subaccount again, even after a failure")
        }
        "private/close_position" if param("instrument_name") == Some("{{fixtures.position}}") => {
            Some("each execution closes a position of its own")
        }
        _ if case.transports.len() == 1 && case.serial => {
            Some("it runs once, on one transport, after the parallel cases")
        }
        _ => None,
    }
}

#[test]
fn every_state_changing_step_leaves_the_other_cases_a_target_they_expect() {
    let (cases, _, _) = corpus();
    let mut checked = 0;
    let mut dependent = Vec::new();
    for case in &cases {
        for step in &case.steps {
            let Some(method) = step.call_method() else {
                continue;
            };
            if !spec::is_state_changing(method) {
                continue;
            }
            checked += 1;
            if why_independent(case, step).is_none() {
                dependent.push(format!("{} (line {}): {method}", case.id, step.line));
            }
        }
    }
    assert!(checked >= 15, "{checked} state-changing steps");
    assert_eq!(
        dependent,
        Vec::<String>::new(),
        "steps other cases may depend on"
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn config(target: Target, filter: &str) -> run::RunConfig {
    let (cases, catalog, schemas) = corpus();
    run::RunConfig {
        filter: Some(filter.to_owned()),
        concurrency: 4,
        run_timeout: std::time::Duration::from_secs(120),
        ..run::RunConfig::new(target, cases, Arc::new(catalog), Arc::new(schemas))
    }
}

#[test]
fn a_failed_disable_case_still_enables_the_subaccount_again() {
    let runtime = runtime();
    runtime.block_on(async {
        let mut server = serve::ServeConfig::loopback();
        server.faults = vec![Fault::DisableKeepsSessions];
        let running = serve::start(server).await.unwrap();
        let target = running.target().clone();
        let report = run::run(
            config(
                target.clone(),
                "toggle_subaccount_login.disable_ends_sessions",
            ),
            harness::events::EventSink::none(),
        )
        .await
        .unwrap();
        assert!(!report.results.is_empty());
        for result in &report.results {
            assert_eq!(result.verdict, Verdict::Fail, "{}", result.message);
            assert!(
                result.notes.iter().all(|note| !note.contains("clean-up")),
                "{:?}",
                result.notes
            );
        }
        // The clean-up step went out after the failing one, and its answer was not judged.
        for result in &report.results {
            let last = result.exchanges.last().expect("exchanges recorded");
            let sent = format!("{:?}", last.request);
            assert!(
                sent.contains("toggle_subaccount_login") && sent.contains("enable"),
                "{sent}"
            );
        }
        running.shutdown().await;
    });
}

#[test]
fn positions_are_drawn_once_per_run_and_the_rest_skipped_with_the_reason() {
    let runtime = runtime();
    runtime.block_on(async {
        let mut server = serve::ServeConfig::loopback();
        server.variants = vec![serve::Variant::PositionsCloseOnce];
        let running = serve::start(server).await.unwrap();
        let target = running.target().clone();
        let report = run::run(
            config(target, "m.close_position."),
            harness::events::EventSink::none(),
        )
        .await
        .unwrap();
        let closing: Vec<_> = report
            .results
            .iter()
            .filter(|result| result.case.ends_with(".market") || result.case.ends_with(".limit"))
            .collect();
        // limit over WebSocket, market over http-query and WebSocket (limit.toml shares the
        // positions out among the closing cases).
        assert_eq!(closing.len(), 3);
        assert!(
            closing.iter().all(|result| result.verdict == Verdict::Pass),
            "{:?}",
            closing
                .iter()
                .map(|result| &result.message)
                .collect::<Vec<_>>()
        );
        running.shutdown().await;
        // A target file that names only instrument_name has one position to close.
        let mut server = serve::ServeConfig::loopback();
        server.variants = vec![serve::Variant::PositionsCloseOnce];
        let fresh = serve::start(server).await.unwrap();
        let mut one = fresh.target().clone();
        one.fixtures.positions.clear();
        let report = run::run(
            config(one, "m.close_position.market"),
            harness::events::EventSink::none(),
        )
        .await
        .unwrap();
        let verdicts: Vec<Verdict> = report.results.iter().map(|result| result.verdict).collect();
        assert_eq!(
            verdicts
                .iter()
                .filter(|&&verdict| verdict == Verdict::Pass)
                .count(),
            1,
            "{verdicts:?}"
        );
        assert_eq!(
            verdicts
                .iter()
                .filter(|&&verdict| verdict == Verdict::Skip)
                .count(),
            1,
            "{verdicts:?}"
        );
        let skipped = report
            .results
            .iter()
            .find(|result| result.verdict == Verdict::Skip)
            .unwrap();
        assert!(
            skipped.message.contains("[fixtures] positions"),
            "{}",
            skipped.message
        );
        fresh.shutdown().await;
    });
}
