use std::sync::Mutex;

use serde_json::Value;

use super::*;
use harness_protocol::wire::TransportKind;

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
        points: Vec::new(),
    }
}

/// A run's events, results finishing out of plan order.
fn run_events(redactor: &Redactor, results: &[CaseResult], each: &mut dyn FnMut(&Event<'_>)) {
    each(&Event::started(
        "reference",
        results.len(),
        Side::Server,
        redactor,
    ));
    for (index, result) in results.iter().enumerate().rev() {
        each(&Event::case(index, result));
    }
    each(&Event::interrupted("SIGINT"));
    each(&Event::finished(
        results,
        Duration::from_millis(1234),
        Some("SIGINT"),
    ));
}

/// The lines a stream is written as, read back as events.
fn read_back(text: &str) -> Vec<Event<'static>> {
    text.lines()
        .map(|line| serde_json::from_str(line).expect("each line reads back as an event"))
        .collect()
}

#[test]
fn collector_folds_a_run_read_back_in_plan_order() {
    let results = vec![
        result("a", Verdict::Pass, ""),
        result("b", Verdict::Fail, "broken"),
        result("c", Verdict::Skip, "not run"),
    ];
    let mut lines = JsonLines::new(Vec::new());
    run_events(&Redactor::default(), &results, &mut |event| {
        lines.observe(event);
    });
    let text = String::from_utf8(lines.finish().unwrap()).unwrap();
    let mut collector = RunCollector::default();
    for event in read_back(&text) {
        collector.observe(event);
    }
    let report = collector.report().expect("a started and finished run");
    let cases: Vec<&str> = report.results.iter().map(|r| r.case.as_str()).collect();
    assert_eq!(cases, ["a", "b", "c"]);
    assert_eq!(report.target, "reference");
    assert_eq!(report.duration, Duration::from_millis(1234));
    assert_eq!(report.interrupted.as_deref(), Some("SIGINT"));
    assert_eq!(report.count(Verdict::Fail), 1);
    assert_eq!(report.results[1].message, "broken");
    assert_eq!(report.results[1].path, "cases/b.toml");
}

#[test]
fn collector_without_a_finish_has_no_report() {
    let mut collector = RunCollector::default();
    collector.observe(Event::started("t", 0, Side::Server, &Redactor::default()));
    collector.observe(Event::interrupted("r"));
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
    assert_eq!(parsed[0]["side"], "server");
    assert_eq!(parsed[1]["type"], "case");
    assert_eq!(parsed[1]["event"], "finished");
    assert_eq!(parsed[1]["index"], 2);
    assert_eq!(parsed[1]["transport"], "http-query");
    assert_eq!(parsed[4]["type"], "interrupt");
    assert_eq!(parsed[4]["event"], "fired");
    assert_eq!(parsed[4]["reason"], "SIGINT");
    let last = &parsed[5];
    assert_eq!(last["event"], "finished");
    assert_eq!(last["summary"]["pass"], 1);
    assert_eq!(last["summary"]["fail"], 1);
    assert_eq!(last["summary"]["skip"], 1);
    assert_eq!(last["summary"]["xfail"], 0);
    assert_eq!(last["executed"], 2);
    assert_eq!(last["duration_ms"], 1234.0);
}

#[test]
fn durations_keep_the_microsecond_and_a_negative_one_reads_as_zero() {
    let finished = Event::finished(&[], Duration::from_micros(1_234_567), None);
    let text = serde_json::to_string(&finished).unwrap();
    assert!(text.contains("\"duration_ms\":1234.567"), "{text}");
    let Event::Run(RunEvent::Finished { duration, .. }) =
        serde_json::from_str(&text.replace("1234.567", "-3")).unwrap()
    else {
        panic!("a run's finish reads back as one");
    };
    assert_eq!(duration, Duration::ZERO);
}

#[test]
fn a_sink_calls_its_reporter_and_none_drops_events() {
    let seen = std::sync::Arc::new(Mutex::new(0));
    let counter = seen.clone();
    let sink = EventSink::new(move |_| *counter.lock().unwrap() += 1);
    sink.emit(&Event::interrupted("r"));
    sink.clone().emit(&Event::interrupted("r"));
    EventSink::none().emit(&Event::interrupted("r"));
    assert_eq!(*seen.lock().unwrap(), 2);
    assert_eq!(format!("{:?}", EventSink::none()), "Sink(none)");
}

#[test]
fn an_announced_report_reads_back_into_itself() {
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
    let lines = Arc::new(Mutex::new(Vec::new()));
    let into = lines.clone();
    let sink = EventSink::new(move |event| {
        into.lock()
            .unwrap()
            .push(serde_json::to_string(event).unwrap());
    });
    announce(&report, &sink);
    let mut collector = RunCollector::default();
    for line in lines.lock().unwrap().iter() {
        collector.observe(serde_json::from_str(line).unwrap());
    }
    let folded = collector.report().expect("a started and finished run");
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

#[test]
fn a_live_fold_keeps_the_runs_redactor_and_hands_every_event_on() {
    let redactor = Redactor::new(["s3cret-value".to_owned()]);
    let results = vec![
        result("a", Verdict::Pass, ""),
        result("b", Verdict::Fail, "echoed s3cret-value"),
    ];
    let seen = Arc::new(Mutex::new(0));
    let counter = seen.clone();
    let (sink, collector) = collecting(EventSink::new(move |_| {
        *counter.lock().unwrap() += 1;
    }));
    run_events(&redactor, &results, &mut |event| sink.emit(event));
    assert_eq!(
        *seen.lock().unwrap(),
        5,
        "start, two results, interrupt, end"
    );
    let report = folded(&collector).expect("a started and finished run");
    let cases: Vec<&str> = report.results.iter().map(|r| r.case.as_str()).collect();
    assert_eq!(cases, ["a", "b"]);
    // The fold's redactor is the run's: its reports redact what the run saw.
    assert!(
        !report
            .redactor
            .text("echoed s3cret-value")
            .contains("s3cret")
    );
    // The collector was taken: a second fold has nothing.
    assert!(folded(&collector).is_none());
}

#[test]
fn a_run_that_could_not_run_folds_into_a_report_saying_so_over_what_it_attempted() {
    let redactor = Redactor::default();
    let attempted = vec![
        result("a", Verdict::Error, "connection refused"),
        result("b", Verdict::Skip, "not run: target unreachable"),
    ];
    let reason = "the harness could not run (exit 3): target unreachable: refused";
    let mut collector = RunCollector::default();
    collector.observe(Event::started("t", 2, Side::Server, &redactor));
    for (index, result) in attempted.iter().enumerate() {
        collector.observe(Event::case(index, result));
    }
    collector.observe(Event::interrupted(reason));
    collector.observe(Event::finished(&attempted, Duration::ZERO, Some(reason)));
    let report = collector.report().expect("a started and finished run");
    assert_eq!(report.interrupted.as_deref(), Some(reason));
    assert_eq!(report.results.len(), 2);
    assert_eq!(report.executed(), 0, "nothing ran: never a pass");
    assert_eq!(report.count(Verdict::Pass), 0);
}
