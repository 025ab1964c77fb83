//! A fuzz run's events (`harness_model::events`: one way to hand events over, a
//! [`Sink`] of typed events whose JSON form is derived) and their fold back into its
//! [`FuzzReport`]: the run announces its start, each request judged, each finding whole
//! as it is shrunk, and at its end the report whole ([`FuzzEvent::Fuzz`]'s `finished`),
//! so `harness fuzz` writes `fuzz.json`, its terminal summary and its exit code from the
//! same value a `--events` file reads back into ([`FuzzCollector`]).

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::FuzzFinding;
use super::FuzzReport;
use harness_model::check::Verdict;
use harness_model::events::{Events, Interrupted, Sink, duration_ms};
use harness_protocol::wire::TransportKind;

/// The events of a fuzz run.
#[derive(Debug)]
pub struct FuzzEvents;

impl Events for FuzzEvents {
    type Event<'a> = FuzzEvent<'a>;
}

/// Where a fuzz run sends its [`FuzzEvent`]s (`FuzzConfig::events`).
pub type FuzzSink = Sink<FuzzEvents>;

/// What a fuzz run reports as it goes: its lines have `type` `fuzz`, `request`, `finding`
/// or `interrupt`.
#[expect(
    clippy::large_enum_variant,
    reason = "a finding (two requests, each with a step's auth) is announced once per finding, and lent"
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FuzzEvent<'a> {
    /// The run's start and end.
    Fuzz(FuzzPhase<'a>),
    /// One generated request was sent and judged.
    Request(RequestJudged<'a>),
    /// One distinct failure, after shrinking.
    Finding(FindingFound<'a>),
    /// A signal, the run timeout or the breaker stopped the run.
    Interrupt(Interrupted<'a>),
}

/// A fuzz run's start and end (`type` `fuzz`).
#[expect(
    clippy::large_enum_variant,
    reason = "once per run, and lent when announced: the report read back is owned once"
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FuzzPhase<'a> {
    /// The run starts sending its generated stateless requests.
    Started {
        /// The seed.
        seed: u64,
        /// Requests planned for this shard.
        planned: usize,
    },
    /// The run ended; no event of it follows.
    Finished {
        /// Wall time of the generated requests.
        #[serde(rename = "duration_ms", with = "duration_ms")]
        duration: Duration,
        /// Wall time of the stateful sequences.
        #[serde(rename = "stateful_duration_ms", with = "duration_ms")]
        stateful_duration: Duration,
        /// The report whole, as `fuzz.json` holds it, its members beside the durations.
        #[serde(flatten)]
        report: Cow<'a, FuzzReport>,
    },
}

/// One request judged (`type` `request`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RequestJudged<'a> {
    /// Sent and judged.
    Judged {
        /// Its index in the whole run.
        index: usize,
        /// The transport.
        transport: TransportKind,
        /// The method.
        method: Cow<'a, str>,
        /// Pass, the finding's verdict, `Skip` (throttled) or `Error` (no answer).
        verdict: Verdict,
    },
}

/// One distinct finding (`type` `finding`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FindingFound<'a> {
    /// Found and shrunk.
    Found {
        /// The clause broken.
        clause: Cow<'a, str>,
        /// What failed: a request's transport and method, or a sequence.
        what: Cow<'a, str>,
        /// What was observed (redacted).
        message: Cow<'a, str>,
        /// The finding whole, as `fuzz.json` holds it: a single request's or a
        /// sequence's.
        finding: Cow<'a, FuzzFinding>,
    },
}

impl<'a> FuzzEvent<'a> {
    /// The run's end: `report` whole, with its durations.
    pub fn finished(report: &'a FuzzReport) -> FuzzEvent<'a> {
        FuzzEvent::Fuzz(FuzzPhase::Finished {
            duration: report.elapsed,
            stateful_duration: report.stateful.elapsed,
            report: Cow::Borrowed(report),
        })
    }
}

/// Keeps the report of a fuzz run's end, from a live run or a `--events` file read back.
#[derive(Debug, Default)]
pub struct FuzzCollector {
    report: Option<FuzzReport>,
}

impl FuzzCollector {
    /// Takes in one event; a fuzz run's start forgets a run before it.
    pub fn observe(&mut self, event: FuzzEvent<'_>) {
        match event {
            FuzzEvent::Fuzz(FuzzPhase::Started { .. }) => self.report = None,
            FuzzEvent::Fuzz(FuzzPhase::Finished {
                duration,
                stateful_duration,
                report,
            }) => {
                let mut report = report.into_owned();
                // An events file of before the one findings list holds the sequences'
                // findings under `stateful`.
                report.gather_older_findings();
                report.elapsed = duration;
                report.stateful.elapsed = stateful_duration;
                self.report = Some(report);
            }
            FuzzEvent::Request(_) | FuzzEvent::Finding(_) | FuzzEvent::Interrupt(_) => {}
        }
    }

    /// The run's report once it has finished (`None` before).
    pub fn report(self) -> Option<FuzzReport> {
        self.report
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Map, Value};

    use super::*;
    use crate::{FoundInput, FuzzFinding, FuzzRequest, RequestAuth, Shard};

    fn report() -> FuzzReport {
        let request = FuzzRequest {
            transport: TransportKind::Ws,
            method: "public/get_currencies".to_owned(),
            params: Map::new(),
            auth: RequestAuth::NONE,
            raw: Some("{".to_owned()),
            why: "a broken envelope".to_owned(),
            walk: false,
            class: None,
        };
        let mut report = FuzzReport {
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
                input: FoundInput::Request {
                    request: request.clone(),
                    shrunk: request,
                },
                case_file: Some("out/fuzz.s9.r4.toml".into()),
            }],
            failed_requests: 2,
            interrupted: Some("SIGINT".to_owned()),
            elapsed: Duration::from_micros(2_500_001),
            ..FuzzReport::default()
        };
        report.stateful.elapsed = Duration::from_millis(3);
        report
    }

    /// The events a run announces, as their JSON lines.
    fn lines(report: &FuzzReport) -> Vec<String> {
        let events = [
            FuzzEvent::Fuzz(FuzzPhase::Started {
                seed: report.seed,
                planned: 12,
            }),
            FuzzEvent::Finding(FindingFound::Found {
                clause: Cow::Borrowed("env.response.id"),
                what: Cow::Borrowed("ws public/get_currencies, 2 requests"),
                message: Cow::Borrowed("m"),
                finding: Cow::Borrowed(&report.findings[0]),
            }),
            FuzzEvent::Interrupt(Interrupted::Fired {
                reason: Cow::Borrowed("SIGINT"),
            }),
            FuzzEvent::finished(report),
        ];
        events
            .iter()
            .map(|event| serde_json::to_string(event).unwrap())
            .collect()
    }

    #[test]
    fn the_events_read_back_fold_into_the_report() {
        let report = report();
        let mut collector = FuzzCollector::default();
        for line in lines(&report) {
            collector.observe(serde_json::from_str(&line).unwrap());
        }
        let folded = collector.report().expect("a finished run");
        assert_eq!(
            serde_json::to_string_pretty(&folded).unwrap(),
            serde_json::to_string_pretty(&report).unwrap()
        );
        assert_eq!(folded.elapsed, report.elapsed);
        assert_eq!(folded.stateful.elapsed, Duration::from_millis(3));
        let finding: Value = serde_json::from_str(&lines(&report)[1]).unwrap();
        assert_eq!(
            (&finding["type"], &finding["event"]),
            (&Value::from("finding"), &Value::from("found"))
        );
        assert_eq!(finding["finding"]["first_index"], 4);
        let finished: Value = serde_json::from_str(&lines(&report)[3]).unwrap();
        assert_eq!(finished["sent"], 12);
        assert_eq!(finished["duration_ms"], 2500.001);
    }

    #[test]
    fn an_older_end_with_the_sequences_findings_apart_folds_into_one_list() {
        let report = report();
        let mut finished: Value = serde_json::from_str(&lines(&report)[3]).unwrap();
        let mut sequence = serde_json::to_value(&report.findings[0]).unwrap();
        let members = sequence.as_object_mut().unwrap();
        members.remove("request");
        members.insert("sequence".to_owned(), serde_json::json!({"steps": []}));
        members.insert("shrunk".to_owned(), serde_json::json!({"steps": []}));
        finished["stateful"]["findings"] = Value::Array(vec![sequence]);
        let mut collector = FuzzCollector::default();
        collector.observe(serde_json::from_value(finished).unwrap());
        let folded = collector.report().expect("a finished run");
        assert_eq!(folded.findings.len(), 2);
        assert!(matches!(
            folded.findings[1].input,
            crate::FoundInput::Sequence { .. }
        ));
        // Written again, the one list holds both and `stateful` none.
        let written = serde_json::to_value(&folded).unwrap();
        assert_eq!(written["findings"].as_array().map(Vec::len), Some(2));
        assert!(written["stateful"].get("findings").is_none());
    }

    #[test]
    fn no_finish_is_no_report_and_a_bad_finding_does_not_read_back() {
        let report = report();
        let lines = lines(&report);
        let mut collector = FuzzCollector::default();
        collector.observe(serde_json::from_str(&lines[1]).unwrap());
        assert!(collector.report().is_none());
        let broken = lines[1].replace("\"first_index\":4", "\"first_index\":\"four\"");
        assert!(serde_json::from_str::<FuzzEvent<'_>>(&broken).is_err());
        // A second run's start forgets the first's end.
        let mut collector = FuzzCollector::default();
        collector.observe(serde_json::from_str(&lines[3]).unwrap());
        collector.observe(serde_json::from_str(&lines[0]).unwrap());
        assert!(collector.report().is_none());
    }
}
