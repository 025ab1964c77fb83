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
