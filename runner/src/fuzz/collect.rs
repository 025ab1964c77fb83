//! Folds a fuzz run's events back into its [`FuzzReport`], as `harness run`'s reports are
//! folded from a run's (`harness_model::events::RunCollector`): `harness fuzz` writes
//! `fuzz.json`, its terminal summary and its exit code from the folded report. The run
//! announces each finding whole and, at its end, every other member of the report
//! (`run.rs`); the collector reads the JSON form of those events, the very lines
//! `--events FILE` holds, so one fold serves a live run ([`FuzzCollector::observe`]) and a
//! file written by one ([`FuzzCollector::observe_line`]).

use serde::Serialize;
use serde_json::Value;

use super::FuzzReport;
use harness_model::events::{Event, duration_of_ms};

/// A value as JSON, for an event (`Null` if it cannot be; the report's types always can).
pub(super) fn to_value(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The report as `fuzz.json` holds it, without its findings, stateless and stateful: the
/// `totals` of `Event::FuzzFinished`.
pub(super) fn totals(report: &FuzzReport) -> Value {
    let mut totals = to_value(report);
    if let Some(members) = totals.as_object_mut() {
        members.remove("findings");
        if let Some(stateful) = members.get_mut("stateful").and_then(Value::as_object_mut) {
            stateful.remove("findings");
        }
    }
    totals
}

/// Gathers a fuzz run's findings and its finish, in the order they were announced.
#[derive(Debug, Default)]
pub struct FuzzCollector {
    findings: Vec<Value>,
    sequence_findings: Vec<Value>,
    finished: Option<Value>,
}

impl FuzzCollector {
    /// Takes in one event; those of other producers, and each request judged, are ignored.
    pub fn observe(&mut self, event: &Event<'_>) {
        if matches!(
            event,
            Event::FuzzStarted { .. } | Event::FuzzFinding { .. } | Event::FuzzFinished { .. }
        ) {
            self.observe_line(&event.to_json());
        }
    }

    /// Takes in one event as its JSON line; a fuzz run's start forgets a run before it.
    pub fn observe_line(&mut self, line: &Value) {
        match (line["type"].as_str(), line["event"].as_str()) {
            (Some("fuzz"), Some("started")) => *self = FuzzCollector::default(),
            (Some("finding"), Some("found")) => {
                let into = if line["sequence"] == true {
                    &mut self.sequence_findings
                } else {
                    &mut self.findings
                };
                into.push(line["finding"].clone());
            }
            (Some("fuzz"), Some("finished")) => self.finished = Some(line.clone()),
            _ => {}
        }
    }

    /// The run's report once it has finished (`None` before), or why the events do not
    /// make one (a finding or a count of the wrong shape).
    pub fn report(self) -> Result<Option<FuzzReport>, serde_json::Error> {
        let Some(mut line) = self.finished else {
            return Ok(None);
        };
        let elapsed = duration_of_ms(&line["duration_ms"]);
        let stateful_elapsed = duration_of_ms(&line["stateful_duration_ms"]);
        if let Some(members) = line.as_object_mut() {
            for key in ["type", "event", "duration_ms", "stateful_duration_ms"] {
                members.remove(key);
            }
            members.insert("findings".to_owned(), Value::Array(self.findings));
            if let Some(stateful) = members.get_mut("stateful").and_then(Value::as_object_mut) {
                stateful.insert("findings".to_owned(), Value::Array(self.sequence_findings));
            }
        }
        let mut report: FuzzReport = serde_json::from_value(line)?;
        report.elapsed = elapsed;
        report.stateful.elapsed = stateful_elapsed;
        Ok(Some(report))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Map, json};

    use super::*;
    use crate::fuzz::{FuzzFinding, FuzzRequest, RequestAuth, Shard};
    use harness_protocol::wire::TransportKind;

    fn report() -> FuzzReport {
        let request = FuzzRequest {
            transport: TransportKind::Ws,
            method: "public/get_currencies".to_owned(),
            params: Map::new(),
            auth: RequestAuth::None,
            raw: Some("{".to_owned()),
            why: "a broken envelope".to_owned(),
            walk: false,
            class: None,
        };
        FuzzReport {
            seed: 9,
            requests: 40,
            shard: Shard { index: 2, count: 3 },
            sent: 12,
            expected_error: 12,
            paced_share: 1.0 / 3.0,
            findings: vec![FuzzFinding {
                clause: "env.response.id".to_owned(),
                message: "id 7 came back as \"7\"".to_owned(),
                first_index: 4,
                occurrences: 2,
                request: request.clone(),
                shrunk: request,
                case_file: Some("out/fuzz.s9.r4.toml".into()),
            }],
            failed_requests: 2,
            interrupted: Some("SIGINT".to_owned()),
            elapsed: Duration::from_micros(2_500_001),
            ..FuzzReport::default()
        }
    }

    /// The events `run.rs` announces at a run's end, as their JSON lines.
    fn lines(report: &FuzzReport) -> Vec<Value> {
        let finding = to_value(&report.findings[0]);
        let totals = totals(report);
        let events = [
            Event::FuzzStarted {
                seed: report.seed,
                planned: 12,
            },
            Event::FuzzFinding {
                clause: "env.response.id",
                what: "ws public/get_currencies, 2 requests",
                message: "m",
                sequence: false,
                finding: &finding,
            },
            Event::Interrupted { reason: "SIGINT" },
            Event::FuzzFinished {
                findings: 1,
                duration: report.elapsed,
                stateful_duration: Duration::from_millis(3),
                totals: &totals,
            },
        ];
        events.iter().map(Event::to_json).collect()
    }

    #[test]
    fn the_end_events_fold_back_into_the_report() {
        let report = report();
        let mut collector = FuzzCollector::default();
        for line in lines(&report) {
            collector.observe_line(&line);
        }
        let folded = collector.report().unwrap().expect("a finished run");
        assert_eq!(
            serde_json::to_string_pretty(&folded).unwrap(),
            serde_json::to_string_pretty(&report).unwrap()
        );
        assert_eq!(folded.elapsed, report.elapsed);
        assert_eq!(folded.stateful.elapsed, Duration::from_millis(3));
        assert!(lines(&report)[3].get("stateful").is_some());
    }

    #[test]
    fn no_finish_is_no_report_and_a_bad_finding_is_an_error_not_a_panic() {
        let report = report();
        let mut lines = lines(&report);
        let mut collector = FuzzCollector::default();
        collector.observe_line(&lines[1]);
        assert!(collector.report().unwrap().is_none());
        lines[1]["finding"] = json!({"clause": 3});
        let mut collector = FuzzCollector::default();
        for line in &lines {
            collector.observe_line(line);
        }
        assert!(collector.report().is_err());
        // A second run's start forgets the first's findings.
        let mut collector = FuzzCollector::default();
        collector.observe_line(&lines[1]);
        for line in [&lines[0], &lines[3]] {
            collector.observe_line(line);
        }
        assert!(collector.report().unwrap().unwrap().findings.is_empty());
    }
}
