//! A stream is its command's record (issues 29 and 39): the events of `harness fuzz` and
//! `harness selftest`, written as JSON lines and read back by the same types, fold into
//! the same values the producers return. A fuzz run against a faulted reference server,
//! with findings of single requests and of sequences, folds into the same `fuzz.json`; the
//! `--events FILE` of `harness fuzz` folds (also through `harness report --from-events`)
//! into the `fuzz.json` it wrote beside it; and the self-proofs' rows fold into the same
//! matrices, text and HTML, over the same clean run.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::case;
use harness::check::{Catalog, SchemaSet};
use harness::events::{Event, EventSink, RunCollector};
use harness::fuzz::{self, FoundInput, FuzzCollector, FuzzConfig, FuzzEvent, FuzzReport, FuzzSink};
use harness::selftest::{self, MatrixCollector, MatrixEvent, MatrixSink, VariantPlan};
use harness::serve::{self, Fault, Variant};
use serde_json::Value;

use crate::cli::{run as run_harness, temp_dir, text};

/// The lines a command's sinks write, as `--events FILE` holds them.
#[derive(Clone, Default)]
struct Stream(Arc<Mutex<Vec<String>>>);

impl Stream {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }

    fn run_sink(&self) -> EventSink {
        let stream = self.clone();
        EventSink::new(move |event| stream.push(serde_json::to_string(event).unwrap()))
    }

    fn fuzz_sink(&self) -> FuzzSink {
        let stream = self.clone();
        FuzzSink::new(move |event| stream.push(serde_json::to_string(event).unwrap()))
    }

    fn matrix_sink(&self) -> MatrixSink {
        let stream = self.clone();
        MatrixSink::new(move |event| stream.push(serde_json::to_string(event).unwrap()))
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Every fold of a stream read back.
#[derive(Default)]
struct Folds {
    run: RunCollector,
    fuzz: FuzzCollector,
    matrices: MatrixCollector,
}

/// The lines read back, each as the family of events its `type` names.
fn fold(lines: &[String]) -> Folds {
    let mut folds = Folds::default();
    for line in lines {
        let value: Value = serde_json::from_str(line).unwrap();
        match value["type"].as_str().unwrap() {
            "run" | "case" => folds
                .run
                .observe(serde_json::from_str::<Event<'_>>(line).unwrap()),
            "row" | "matrix" => folds
                .matrices
                .observe(serde_json::from_str::<MatrixEvent<'_>>(line).unwrap()),
            "fuzz" | "request" | "finding" | "interrupt" => folds
                .fuzz
                .observe(serde_json::from_str::<FuzzEvent<'_>>(line).unwrap()),
            // The session's end: the stream is whole.
            "session" => {}
            other => panic!("no event has type {other}"),
        }
    }
    folds
}

/// The JSON lines of a fuzz run, folded back.
fn fold_lines(stream: &str) -> FuzzReport {
    let lines: Vec<String> = stream.lines().map(str::to_owned).collect();
    fold(&lines)
        .fuzz
        .report()
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
    let stream = Stream::default();
    let mut config = FuzzConfig::new(5, 400);
    config.stateful_percent = 50;
    config.concurrency = 16;
    config.shrink_budget = 40;
    config.out = Some(out.clone());
    config.events = stream.fuzz_sink();
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
        direct
            .findings
            .iter()
            .any(|finding| matches!(finding.input, FoundInput::Sequence { .. })),
        "{:?}",
        direct.findings
    );
    assert!(
        direct
            .findings
            .iter()
            .all(|finding| finding.case_file.is_some())
    );
    let folded = fold(&stream.lines())
        .fuzz
        .report()
        .expect("the stream holds a finished fuzz run");
    assert_eq!(pretty(&folded), pretty(&direct));
    // The durations, which fuzz.json leaves out, to the microsecond.
    let close = |a: Duration, b: Duration| a.abs_diff(b) <= Duration::from_micros(1);
    assert!(close(folded.elapsed, direct.elapsed), "{folded:?}");
    assert!(close(folded.stateful.elapsed, direct.stateful.elapsed));
    // Each finding was announced whole, a request's and a sequence's.
    let found: Vec<Value> = stream
        .lines()
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["type"] == "finding")
        .collect();
    assert_eq!(found.len(), direct.findings.len());
    assert!(
        found
            .iter()
            .any(|line| line["finding"]["sequence"].is_object())
    );
    assert!(
        found
            .iter()
            .any(|line| line["finding"]["request"].is_object())
    );
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
    // `harness report --from-events` writes the same fuzz.json from the file.
    let read_back = out.join("read-back");
    let read_back_output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        read_back.to_str().unwrap(),
    ]);
    assert_eq!(
        read_back_output.status.code(),
        Some(0),
        "{}",
        text(&read_back_output)
    );
    assert_eq!(
        std::fs::read_to_string(read_back.join("fuzz.json")).unwrap(),
        written
    );
    // The terminal summary is the folded report's too.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = format!("fuzz: {} requests in", folded.sent);
    assert!(stdout.contains(&summary), "{stdout}");
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
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
    let stream = Stream::default();
    let (events, rows) = (stream.run_sink(), stream.matrix_sink());
    let (faults, variants) = runtime().block_on(async {
        let faults = tokio::time::timeout(
            Duration::from_secs(300),
            selftest::fault_matrix(&config, &events, &rows),
        );
        let faults = faults.await.expect("the fault matrix hung").unwrap();
        let variants = tokio::time::timeout(
            Duration::from_secs(300),
            selftest::variant_matrix(&config, &plan, &rows),
        );
        (
            faults,
            variants.await.expect("the variant matrix hung").unwrap(),
        )
    });
    let Folds {
        run, mut matrices, ..
    } = fold(&stream.lines());
    let mut clean = run.report().expect("the clean run is in the stream");
    // A stream read back is redacted already.
    clean.redactor = faults.clean.redactor.clone();
    let folds = &mut matrices;
    let folded_faults = folds.fault_matrix(clean).unwrap();
    let folded_variants = folds.variant_matrix().unwrap();
    assert_eq!(faults.rows.len(), 2);
    assert_eq!(folded_faults.to_text(), faults.to_text());
    assert_eq!(folded_faults.to_html(), faults.to_html());
    assert_eq!(folded_faults.unkillable, faults.unkillable);
    // Durations read back keep the microsecond.
    let close = |a: Duration, b: Duration| a.abs_diff(b) <= Duration::from_micros(1);
    assert!(close(folded_faults.duration, faults.duration));
    assert_eq!(folded_variants.to_text(), variants.to_text());
    assert_eq!(folded_variants.to_html(), variants.to_html());
    assert!(close(folded_variants.duration, variants.duration));
    // The clean run, the reports' body, is the fold of its events (`run::run`).
    assert_eq!(
        folded_faults.clean.results.len(),
        faults.clean.results.len()
    );
    // The stream: the clean run's lines, a row each, each matrix's end.
    let kinds: Vec<String> = stream
        .lines()
        .iter()
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
