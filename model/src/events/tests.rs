use std::sync::Mutex;

use super::*;

fn result(case: &str, verdict: Verdict, message: &str) -> CaseResult {
    CaseResult {
        case: case.to_owned(),
        title: String::new(),
        path: format!("cases/{case}.toml"),
        transport: TransportKind::HttpQuery,
        verdict,
        clauses: vec!["envelope.jsonrpc".to_owned()],
        checks: Vec::new(),
        message: message.to_owned(),
        findings: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        duration_ms: 1.5,
    }
}

/// A run's events, results finishing out of plan order.
fn run_events(redactor: &Redactor, results: &[CaseResult], each: &mut dyn FnMut(&Event<'_>)) {
    each(&Event::RunStarted {
        target: "reference",
        total: results.len(),
        side: Side::Server,
        redactor,
    });
    for (index, result) in results.iter().enumerate().rev() {
        each(&Event::CaseFinished { index, result });
    }
    each(&Event::Interrupted { reason: "SIGINT" });
    each(&Event::RunFinished {
        duration: Duration::from_millis(1234),
        interrupted: Some("SIGINT"),
    });
}

#[test]
fn collector_folds_a_run_back_in_plan_order() {
    let results = vec![
        result("a", Verdict::Pass, ""),
        result("b", Verdict::Fail, "broken"),
        result("c", Verdict::Skip, "not run"),
    ];
    let mut collector = RunCollector::default();
    run_events(&Redactor::default(), &results, &mut |event| {
        collector.observe(event);
    });
    let report = collector.report().expect("a started and finished run");
    let cases: Vec<&str> = report.results.iter().map(|r| r.case.as_str()).collect();
    assert_eq!(cases, ["a", "b", "c"]);
    assert_eq!(report.target, "reference");
    assert_eq!(report.duration, Duration::from_millis(1234));
    assert_eq!(report.interrupted.as_deref(), Some("SIGINT"));
    assert_eq!(report.count(Verdict::Fail), 1);
}

#[test]
fn collector_without_a_finish_has_no_report() {
    let mut collector = RunCollector::default();
    collector.observe(&Event::RunStarted {
        target: "t",
        total: 0,
        side: Side::Server,
        redactor: &Redactor::default(),
    });
    collector.observe(&Event::FuzzStarted {
        seed: 1,
        planned: 2,
    });
    assert!(collector.report().is_none());
}

#[test]
fn json_lines_count_verdicts_and_redact_secrets() {
    let redactor = Redactor::new(["s3cret-value".to_owned()]);
    let results = vec![
        result("a", Verdict::Pass, ""),
        result("b", Verdict::Fail, "echoed s3cret-value"),
        result("c", Verdict::Skip, "not run"),
    ];
    let mut lines = JsonLines::new(Vec::new());
    run_events(&redactor, &results, &mut |event| lines.observe(event));
    let text = String::from_utf8(lines.finish().expect("a vector takes every write"))
        .expect("JSON is UTF-8");
    assert!(!text.contains("s3cret-value"), "{text}");
    let parsed: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect();
    assert_eq!(parsed.len(), 6);
    assert_eq!(parsed[0]["type"], "run");
    assert_eq!(parsed[0]["event"], "started");
    assert_eq!(parsed[1]["index"], 2);
    assert_eq!(parsed[4]["reason"], "SIGINT");
    let last = &parsed[5];
    assert_eq!(last["event"], "finished");
    assert_eq!(last["summary"]["pass"], 1);
    assert_eq!(last["summary"]["fail"], 1);
    assert_eq!(last["summary"]["skip"], 1);
    assert_eq!(last["executed"], 2);
    assert_eq!(last["duration_ms"], 1234.0);
}

#[test]
fn every_event_names_its_type_and_event() {
    let redactor = Redactor::default();
    let case = result("a", Verdict::Pass, "");
    let finding = json!({"clause": "c", "case_file": null});
    let totals = json!({"seed": 7, "sent": 10, "stateful": {"sent": 2}});
    let events = [
        Event::RunStarted {
            target: "t",
            total: 1,
            side: Side::Client,
            redactor: &redactor,
        },
        Event::CaseFinished {
            index: 0,
            result: &case,
        },
        Event::Interrupted { reason: "r" },
        Event::RunFinished {
            duration: Duration::ZERO,
            interrupted: None,
        },
        Event::FuzzStarted {
            seed: 7,
            planned: 10,
        },
        Event::RequestJudged {
            index: 3,
            transport: TransportKind::Ws,
            method: "public/get_currencies",
            verdict: Verdict::Fail,
        },
        Event::FuzzFinding {
            clause: "c",
            what: "ws public/get_currencies, 1 requests",
            message: "m",
            sequence: false,
            finding: &finding,
        },
        Event::FuzzFinished {
            findings: 1,
            duration: Duration::from_micros(1_234_567),
            stateful_duration: Duration::from_secs(1),
            totals: &totals,
        },
        Event::RowFinished {
            matrix: Matrix::Faults,
            name: "f",
            passed: true,
            line: "f caught",
            row: &Value::Null,
        },
        Event::MatrixFinished {
            matrix: Matrix::Variants,
            duration: Duration::from_secs(2),
            unkillable: &[],
        },
    ];
    for event in &events {
        let json = event.to_json();
        assert!(
            json["type"].is_string() && json["event"].is_string(),
            "{json}"
        );
    }
    assert_eq!(events[5].to_json()["transport"], "ws");
    assert_eq!(events[5].to_json()["verdict"], "fail");
    assert_eq!(events[6].to_json()["finding"], finding);
    // The finish line is fuzz.json's members without the findings, and the durations.
    let finished = events[7].to_json();
    assert_eq!(
        (&finished["sent"], &finished["seed"]),
        (&json!(10), &json!(7))
    );
    assert_eq!(finished["duration_ms"], 1234.567);
    assert_eq!(
        duration_of_ms(&finished["duration_ms"]),
        Duration::from_micros(1_234_567)
    );
    assert_eq!(duration_of_ms(&Value::Null), Duration::ZERO);
}

#[test]
fn a_sink_calls_its_reporter_and_none_drops_events() {
    let seen = std::sync::Arc::new(Mutex::new(0));
    let counter = seen.clone();
    let sink = EventSink::new(move |_| *counter.lock().unwrap() += 1);
    sink.emit(&Event::Interrupted { reason: "r" });
    sink.clone().emit(&Event::Interrupted { reason: "r" });
    EventSink::none().emit(&Event::Interrupted { reason: "r" });
    assert_eq!(*seen.lock().unwrap(), 2);
    assert_eq!(format!("{:?}", EventSink::none()), "EventSink(none)");
}

#[test]
fn an_announced_report_folds_back_into_itself() {
    let report = RunReport {
        target: "judge".to_owned(),
        results: vec![
            result("client.a", Verdict::Fail, "broke it"),
            result("client.b", Verdict::Pass, ""),
        ],
        duration: Duration::from_millis(77),
        redactor: Redactor::new(Vec::new()),
        side: Side::Client,
        interrupted: None,
    };
    let collector = Arc::new(Mutex::new(RunCollector::default()));
    let into = collector.clone();
    let sink = EventSink::new(move |event| into.lock().unwrap().observe(event));
    announce(&report, &sink);
    let folded = std::mem::take(&mut *collector.lock().unwrap())
        .report()
        .expect("a started and finished run");
    assert_eq!(folded.target, "judge");
    assert_eq!(folded.side, Side::Client);
    assert_eq!(folded.duration, report.duration);
    let cases: Vec<(&str, Verdict)> = folded
        .results
        .iter()
        .map(|result| (result.case.as_str(), result.verdict))
        .collect();
    assert_eq!(
        cases,
        [("client.a", Verdict::Fail), ("client.b", Verdict::Pass)]
    );
}
