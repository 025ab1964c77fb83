//! Every output of `harness fuzz` and `harness selftest` is written from the event stream
//! (issue 29): the collectors fed a run's events fold them into the same values the
//! producers return. A fuzz run against a faulted reference server, with findings of
//! single requests and of sequences, folds into the same `fuzz.json`, from the live events
//! and from their JSON lines; the `--events FILE` of `harness fuzz` folds into the
//! `fuzz.json` it wrote beside it; and the self-proofs' rows fold into the same matrices,
//! text and HTML, over the same clean run.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::case;
use harness::check::{Catalog, SchemaSet};
use harness::events::{Event, EventSink, JsonLines, RunCollector};
use harness::fuzz::{self, FuzzCollector, FuzzConfig, FuzzReport};
use harness::report::{Context, Summary, render_json};
use harness::selftest::{self, MatrixCollector, VariantPlan};
use harness::serve::{self, Fault, Variant};
use serde_json::Value;

use crate::cli::{run as run_harness, temp_dir, text};

/// Every collector and the JSON lines writer, fed from one sink.
#[derive(Default)]
struct Folds {
    run: RunCollector,
    fuzz: FuzzCollector,
    matrices: MatrixCollector,
    lines: Option<JsonLines<Vec<u8>>>,
}

fn sink(folds: &Arc<Mutex<Folds>>) -> EventSink {
    let folds = Arc::clone(folds);
    EventSink::new(move |event: &Event<'_>| {
        let mut folds = folds.lock().unwrap();
        folds.run.observe(event);
        folds.fuzz.observe(event);
        folds.matrices.observe(event);
        if let Some(lines) = folds.lines.as_mut() {
            lines.observe(event);
        }
    })
}

fn folds() -> Arc<Mutex<Folds>> {
    Arc::new(Mutex::new(Folds {
        lines: Some(JsonLines::new(Vec::new())),
        ..Folds::default()
    }))
}

/// The JSON lines written so far, folded by a fresh fuzz collector.
fn fold_lines(stream: &str) -> FuzzReport {
    let mut collector = FuzzCollector::default();
    for line in stream.lines() {
        let line: Value = serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}"));
        collector.observe_line(&line);
    }
    collector
        .report()
        .expect("the lines fold")
        .expect("the lines hold a finished fuzz run")
}

fn pretty(report: &FuzzReport) -> String {
    serde_json::to_string_pretty(report).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn fuzz_collector_folds_the_stream_into_the_same_fuzz_json() {
    let out = temp_dir("fold-fuzz");
    let folds = folds();
    let mut config = FuzzConfig::new(5, 400);
    config.stateful_percent = 50;
    config.concurrency = 16;
    config.shrink_budget = 40;
    config.out = Some(out.clone());
    config.events = sink(&folds);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let schemas = Arc::new(SchemaSet::load(&root.join("schemas")).unwrap());
    let direct = runtime().block_on(async {
        let mut reference = serve::ServeConfig::loopback();
        reference.faults = vec![Fault::EnvelopeIdAsString, Fault::RefreshSameToken];
        let running = serve::start(reference).await.unwrap();
        let run = fuzz::run(running.target(), schemas, &config);
        let report = tokio::time::timeout(Duration::from_secs(120), run).await;
        running.shutdown().await;
        report
            .expect("the run ends within 120 s")
            .expect("the run completes")
    });
    // Both kinds of finding, each with its case file, are in the stream.
    assert!(!direct.findings.is_empty(), "{direct:?}");
    assert!(
        !direct.stateful.findings.is_empty(),
        "{:?}",
        direct.stateful
    );
    assert!(
        direct
            .findings
            .iter()
            .all(|finding| finding.case_file.is_some())
    );
    let mut folds = folds.lock().unwrap();
    let folded = std::mem::take(&mut folds.fuzz)
        .report()
        .expect("the events fold")
        .expect("the stream holds a finished fuzz run");
    assert_eq!(pretty(&folded), pretty(&direct));
    // The durations, which fuzz.json leaves out, to the microsecond.
    let close = |a: Duration, b: Duration| a.abs_diff(b) <= Duration::from_micros(1);
    assert!(close(folded.elapsed, direct.elapsed), "{folded:?}");
    assert!(close(folded.stateful.elapsed, direct.stateful.elapsed));
    // The same fold from the JSON lines `--events FILE` holds.
    let lines = folds.lines.take().unwrap().finish().unwrap();
    let stream = String::from_utf8(lines).unwrap();
    assert_eq!(pretty(&fold_lines(&stream)), pretty(&direct));
}

#[test]
fn the_events_file_of_harness_fuzz_folds_into_its_fuzz_json() {
    let out = temp_dir("fold-fuzz-cli");
    let events_path = out.join("events.jsonl");
    let output = run_harness(&[
        "fuzz",
        "--quiet",
        "--seed",
        "5",
        "--requests",
        "300",
        "--fault",
        "envelope-id-as-string",
        "--out",
        out.to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stream = std::fs::read_to_string(&events_path).unwrap();
    let folded = fold_lines(&stream);
    assert!(!folded.findings.is_empty(), "{stream}");
    let written = std::fs::read_to_string(out.join("fuzz.json")).unwrap();
    assert_eq!(pretty(&folded), written);
    // The terminal summary is the folded report's too.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = format!("fuzz: {} requests in", folded.sent);
    assert!(stdout.contains(&summary), "{stdout}");
}

#[test]
fn matrix_collector_folds_the_rows_into_the_same_matrices() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Arc::new(Catalog::load(&root.join("clauses.toml")).unwrap());
    let schemas = Arc::new(SchemaSet::load(&root.join("schemas")).unwrap());
    let cases = case::discover(&root, &catalog, &schemas).unwrap();
    let config = selftest::SelftestConfig {
        cases,
        catalog: Arc::clone(&catalog),
        schemas,
        concurrency: 16,
        faults: vec![Fault::EnvelopeNoJsonrpc, Fault::EnvelopeIdAsString],
    };
    let plan = VariantPlan {
        rows: vec![vec![Variant::ShortPages]],
        fuzz_seeds: vec![1],
        fuzz_requests: 200,
        judge: false,
    };
    let folds = folds();
    let events = sink(&folds);
    let (faults, variants) = runtime().block_on(async {
        let faults = tokio::time::timeout(
            Duration::from_secs(300),
            selftest::fault_matrix(&config, &events),
        );
        let faults = faults.await.expect("the fault matrix hung").unwrap();
        let variants = tokio::time::timeout(
            Duration::from_secs(300),
            selftest::variant_matrix(&config, &plan, &events),
        );
        (
            faults,
            variants.await.expect("the variant matrix hung").unwrap(),
        )
    });
    let mut folds = folds.lock().unwrap();
    let clean = std::mem::take(&mut folds.run)
        .report()
        .expect("the clean run is in the stream");
    let folded_faults = folds.matrices.fault_matrix(clean).unwrap();
    let folded_variants = folds.matrices.variant_matrix().unwrap();
    assert_eq!(faults.rows.len(), 2);
    assert_eq!(folded_faults.to_text(), faults.to_text());
    assert_eq!(folded_faults.to_html(), faults.to_html());
    assert_eq!(folded_faults.unkillable, faults.unkillable);
    assert_eq!(folded_faults.duration, faults.duration);
    assert_eq!(folded_variants.to_text(), variants.to_text());
    assert_eq!(folded_variants.to_html(), variants.to_html());
    assert_eq!(folded_variants.duration, variants.duration);
    // The clean run, the reports' body, folds into the same report.json.
    let render = |report| {
        let context = Context {
            report,
            catalog: &catalog,
            rerun: "harness run".to_owned(),
            extra_html: None,
        };
        render_json(&context, &Summary::new(report, &catalog))
    };
    assert_eq!(render(&folded_faults.clean), render(&faults.clean));
    // The stream: the clean run's lines, a row each, each matrix's end.
    let lines = folds.lines.take().unwrap().finish().unwrap();
    let stream = String::from_utf8(lines).unwrap();
    let kinds: Vec<String> = stream
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["type"] != "case")
        .map(|line| format!("{} {}", line["type"], line["event"]).replace('"', ""))
        .collect();
    let expected = [
        "run started",
        "run finished",
        "row finished",
        "row finished",
        "matrix finished",
        "row finished",
        "matrix finished",
    ];
    assert_eq!(kinds, expected);
}
