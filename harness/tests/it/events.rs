//! The event stream (`harness_model::events`): `--events FILE` of `harness run`, `fuzz`
//! and `selftest` parses line by line, starts with a start event, ends with the session's
//! end (after a finish event whose counts equal the report's), and `harness report
//! --from-events` rebuilds from a run's file the four reports the run wrote, byte for byte
//! (the folds of fuzz and selftest: `events_fold.rs`). A run's report is the fold of its
//! events, so no test holds two paths equal: the fold is tested in
//! `model/src/events/tests.rs`.

use std::path::Path;

use serde_json::Value;

use crate::cli::{run as run_harness, temp_dir, text};

/// Each line of an events file, parsed.
fn read_events(path: &Path) -> Vec<Value> {
    let stream = std::fs::read_to_string(path).expect("the events file is written");
    stream
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

/// The stream's last line is the session's end, naming the command a reproduction reruns;
/// it is taken off.
fn assert_session_ended(events: &mut Vec<Value>, rerun: Option<&str>) {
    let last = events.pop().expect("a stream has lines");
    assert_eq!(
        (&last["type"], &last["event"]),
        (&"session".into(), &"ended".into())
    );
    assert_eq!(last["rerun"].as_str(), rerun, "{last}");
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn run_events_start_end_and_agree_with_report_json() {
    let out = temp_dir("events-run");
    let events_path = out.join("events.jsonl");
    let output = run_harness(&[
        "run",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let mut events = read_events(&events_path);
    let report = read_json(&out.join("report.json"));
    let results = report["results"].as_array().unwrap();
    assert_session_ended(&mut events, Some("harness run"));
    let (first, last) = (&events[0], events.last().unwrap());
    assert_eq!(
        (&first["type"], &first["event"]),
        (&"run".into(), &"started".into())
    );
    assert_eq!(first["total"], results.len());
    assert_eq!(
        (&last["type"], &last["event"]),
        (&"run".into(), &"finished".into())
    );
    assert_eq!(last["summary"], report["summary"]);
    assert_eq!(
        last["duration_ms"].as_f64().unwrap().round(),
        report["duration_ms"].as_f64().unwrap()
    );
    assert_eq!(last["interrupted"], report["interrupted"]);
    let cases: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "case")
        .collect();
    assert_eq!(cases.len(), results.len());
    assert_eq!(
        events.len(),
        results.len() + 2,
        "start, one per case, finish"
    );
    for case in cases {
        let result = &results[case["index"].as_u64().unwrap() as usize];
        assert_eq!(case["case"], result["case"]);
        assert_eq!(case["transport"], result["transport"]);
        assert_eq!(case["verdict"], result["verdict"]);
    }
}

#[test]
fn fuzz_events_count_the_requests_of_fuzz_json() {
    let out = temp_dir("events-fuzz");
    let events_path = out.join("fuzz-events.jsonl");
    let output = run_harness(&[
        "fuzz",
        "--quiet",
        "--seed",
        "7",
        "--requests",
        "150",
        "--out",
        out.to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let mut events = read_events(&events_path);
    let report = read_json(&out.join("fuzz.json"));
    assert_session_ended(&mut events, None);
    let (first, last) = (&events[0], events.last().unwrap());
    assert_eq!(
        (&first["type"], &first["event"]),
        (&"fuzz".into(), &"started".into())
    );
    assert_eq!(first["seed"], 7);
    assert_eq!(
        (&last["type"], &last["event"]),
        (&"fuzz".into(), &"finished".into())
    );
    assert_eq!(last["sent"], report["sent"]);
    assert_eq!(last["findings"], Value::Array(Vec::new()));
    let judged = events
        .iter()
        .filter(|event| event["type"] == "request")
        .count();
    assert_eq!(Value::from(judged), report["sent"]);
    // Paced requests the budget had no room for stay unsent: planned bounds the judged.
    assert!(
        judged > 0 && judged as u64 <= first["planned"].as_u64().unwrap(),
        "{first}"
    );
}

#[test]
fn a_report_rebuilt_from_the_events_is_byte_identical_to_the_live_one() {
    let out = temp_dir("events-report");
    let events_path = out.join("events.jsonl");
    let output = run_harness(&[
        "run",
        "--quiet",
        "--filter",
        "get_",
        "--out",
        out.join("run").to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        out.join("read-back").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(!text(&output).contains("warning"), "{}", text(&output));
    for file in ["report.json", "junit.xml", "report.md", "report.html"] {
        let live = std::fs::read(out.join("run").join(file)).unwrap();
        let read_back = std::fs::read(out.join("read-back").join(file)).unwrap();
        assert!(live == read_back, "{file} differs once read back");
    }
    // Cut before its session's end, the stream still folds, with a warning that it is
    // incomplete.
    let stream = std::fs::read_to_string(&events_path).unwrap();
    let cut: Vec<&str> = stream.lines().collect();
    std::fs::write(&events_path, cut[..cut.len() - 1].join("\n")).unwrap();
    let output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        out.join("cut").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(
        text(&output).contains("the stream is incomplete"),
        "{}",
        text(&output)
    );
    // Cut before the run's end, it holds no finished run.
    std::fs::write(&events_path, cut[..cut.len() - 2].join("\n")).unwrap();
    let output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        out.join("cut-more").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output));
    // A line that is no event is a usage error naming the file and line.
    std::fs::write(&events_path, "{\"type\":\"nonsense\"}\n").unwrap();
    let output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        out.join("bad").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("events.jsonl:1:"),
        "{}",
        text(&output)
    );
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn selftest_rows_are_events_and_terminal_lines() {
    let out = temp_dir("events-selftest");
    let events_path = out.join("rows.jsonl");
    let output = run_harness(&[
        "selftest",
        "--matrix",
        "faults",
        "--fault",
        "envelope-no-jsonrpc",
        "--out",
        out.to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let mut events = read_events(&events_path);
    assert_session_ended(&mut events, Some("harness run"));
    // The clean run (the reports' body), then the row, then the matrix's end.
    let rows: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "row")
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(events[0]["type"], "run");
    let last = events.last().unwrap();
    assert_eq!(
        (&last["type"], &last["matrix"]),
        (&"matrix".into(), &"faults".into())
    );
    // Read back, the file gives the report.html with the matrix.
    let read_back_output = run_harness(&[
        "report",
        "--from-events",
        events_path.to_str().unwrap(),
        "--out",
        out.join("read-back").to_str().unwrap(),
    ]);
    assert_eq!(
        read_back_output.status.code(),
        Some(0),
        "{}",
        text(&read_back_output)
    );
    let html = std::fs::read_to_string(out.join("read-back/report.html")).unwrap();
    assert!(html.contains("envelope-no-jsonrpc"));
    let row = rows[0];
    assert_eq!(row["row"]["fault"], "envelope-no-jsonrpc");
    assert_eq!(
        (&row["type"], &row["matrix"]),
        (&"row".into(), &"faults".into())
    );
    assert_eq!(row["name"], "envelope-no-jsonrpc");
    assert_eq!(row["passed"], true);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = row["line"].as_str().unwrap();
    assert!(line.starts_with("envelope-no-jsonrpc") && line.contains(" caught "));
    assert!(stdout.lines().any(|printed| printed == line), "{stdout}");
}

#[test]
fn an_events_file_that_cannot_be_written_is_exit_3_before_the_run() {
    let out = temp_dir("events-unwritable");
    let blocker = out.join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let events_path = blocker.join("events.jsonl");
    let output = run_harness(&[
        "run",
        "--quiet",
        "--out",
        out.join("reports").to_str().unwrap(),
        "--events",
        events_path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output));
    assert!(
        text(&output).contains("failed to write"),
        "{}",
        text(&output)
    );
    assert!(!out.join("reports/report.json").exists());
}
