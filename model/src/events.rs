//! One event stream for the three producers: a run of the suite, a fuzz run and the
//! self-proofs' matrices each announce what happens as an [`Event`] to one [`EventSink`],
//! and every reporter reads that stream: the terminal's progress, the [`JsonLines`] writer
//! of `--events FILE` (one JSON object per line, like nextest's libtest-json), and the
//! [`RunCollector`], which folds a run's events back into the [`RunReport`] every report
//! format is written from.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use harness_protocol::wire::TransportKind;

use crate::check::{Redactor, Side, Verdict};
use crate::results::{CaseResult, RunReport};

/// Which self-proof a matrix row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// Every check fails against a seeded fault.
    Faults,
    /// No check fails against a spec-open variant.
    Variants,
}

impl Matrix {
    /// `faults` or `variants`.
    pub fn as_str(self) -> &'static str {
        match self {
            Matrix::Faults => "faults",
            Matrix::Variants => "variants",
        }
    }
}

/// What a producer reports as it goes (lent, not copied: a result holds every answer's
/// text).
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// A run of the suite starts with this many executions.
    RunStarted {
        /// Target name.
        target: &'a str,
        /// Number of (case, transport) executions.
        total: usize,
        /// Which side the run judges.
        side: Side,
        /// The run's redactor: it knows the target's secrets and learns every token.
        redactor: &'a Redactor,
    },
    /// One execution finished.
    CaseFinished {
        /// Its place in the run's plan (results are reported in plan order).
        index: usize,
        /// The result.
        result: &'a CaseResult,
    },
    /// The run stopped early, or the fuzzer did (a signal, the run timeout, the breaker).
    Interrupted {
        /// Why.
        reason: &'a str,
    },
    /// The run ended; no event of it follows.
    RunFinished {
        /// Wall time of the run.
        duration: Duration,
        /// Why the run stopped before every execution ran, if it did.
        interrupted: Option<&'a str>,
    },
    /// A fuzz run starts sending its generated stateless requests.
    FuzzStarted {
        /// The seed.
        seed: u64,
        /// Requests planned for this shard.
        planned: usize,
    },
    /// One generated request was sent and judged.
    RequestJudged {
        /// Its index in the whole run.
        index: usize,
        /// The transport.
        transport: TransportKind,
        /// The method.
        method: &'a str,
        /// Pass, the finding's verdict, `Skip` (throttled) or `Error` (no answer).
        verdict: Verdict,
    },
    /// One distinct failure of the fuzzer, after shrinking.
    FuzzFinding {
        /// The clause broken.
        clause: &'a str,
        /// What failed: a request's transport and method, or a sequence.
        what: &'a str,
        /// What was observed (redacted).
        message: &'a str,
        /// Whether a stateful sequence failed (else a single request).
        sequence: bool,
        /// The finding whole, as `fuzz.json` holds it: the request as generated and
        /// shrunk (or the sequence), the first index, the occurrences, the case file.
        finding: &'a Value,
    },
    /// The fuzz run ended; no event of it follows.
    FuzzFinished {
        /// Distinct findings, stateless and stateful (each announced before).
        findings: usize,
        /// Wall time of the generated requests.
        duration: Duration,
        /// Wall time of the stateful sequences.
        stateful_duration: Duration,
        /// Every member of `fuzz.json` but the findings, which the `FuzzFinding` events
        /// carry: the seed, the shard, the counts (`sent` and the rest), the flags, and the
        /// stateful report's counts. A collector rebuilds the report from these.
        totals: &'a Value,
    },
    /// One row of a self-proof's matrix ended.
    RowFinished {
        /// The matrix.
        matrix: Matrix,
        /// The fault or the variants of the row.
        name: &'a str,
        /// Whether the row proves what it should (fault caught, no false failure).
        passed: bool,
        /// The row as the terminal prints it.
        line: &'a str,
        /// The row whole (what caught the fault, the false failures found), as the
        /// matrix's collector folds it back.
        row: &'a Value,
    },
    /// A self-proof's matrix ended; every row of it was announced before.
    MatrixFinished {
        /// The matrix.
        matrix: Matrix,
        /// Wall time of the whole matrix.
        duration: Duration,
        /// Server `must` clauses no fault made fail (empty for the variant matrix).
        unkillable: &'a [String],
    },
}

impl Event<'_> {
    /// The event as one JSON object (not redacted: [`JsonLines`] redacts).
    pub fn to_json(&self) -> Value {
        let ms = |duration: &Duration| (duration.as_secs_f64() * 1000.0).round();
        match self {
            Event::RunStarted {
                target,
                total,
                side,
                ..
            } => json!({"type": "run", "event": "started", "target": target, "total": total,
                "side": match side { Side::Server => "server", Side::Client => "client" }}),
            Event::CaseFinished { index, result } => json!({"type": "case", "event": "finished",
                "index": index, "case": result.case, "transport": result.transport,
                "verdict": result.verdict, "clauses": result.clauses, "message": result.message,
                "duration_ms": (result.duration_ms * 1000.0).round() / 1000.0}),
            Event::Interrupted { reason } => {
                json!({"type": "interrupt", "event": "fired", "reason": reason})
            }
            Event::RunFinished {
                duration,
                interrupted,
            } => json!({"type": "run", "event": "finished", "duration_ms": ms(duration),
                "interrupted": interrupted}),
            Event::FuzzStarted { seed, planned } => {
                json!({"type": "fuzz", "event": "started", "seed": seed, "planned": planned})
            }
            Event::RequestJudged {
                index,
                transport,
                method,
                verdict,
            } => json!({"type": "request", "event": "judged", "index": index,
                "transport": transport, "method": method, "verdict": verdict}),
            Event::FuzzFinding {
                clause,
                what,
                message,
                sequence,
                finding,
            } => json!({"type": "finding", "event": "found", "clause": clause, "what": what,
                "message": message, "sequence": sequence, "finding": finding}),
            Event::FuzzFinished {
                findings,
                duration,
                stateful_duration,
                totals,
            } => {
                let mut line = json!({"type": "fuzz", "event": "finished"});
                if let (Some(line), Value::Object(totals)) = (line.as_object_mut(), totals) {
                    line.extend(
                        totals
                            .iter()
                            .map(|(key, value)| (key.clone(), value.clone())),
                    );
                }
                line["findings"] = Value::from(*findings);
                line["duration_ms"] = Value::from(precise_ms(duration));
                line["stateful_duration_ms"] = Value::from(precise_ms(stateful_duration));
                line
            }
            Event::RowFinished {
                matrix,
                name,
                passed,
                line,
                row,
            } => json!({"type": "row", "event": "finished", "matrix": matrix.as_str(),
                "name": name, "passed": passed, "line": line, "row": row}),
            Event::MatrixFinished {
                matrix,
                duration,
                unkillable,
            } => json!({"type": "matrix", "event": "finished", "matrix": matrix.as_str(),
                "duration_ms": precise_ms(duration), "unkillable": unkillable}),
        }
    }
}

/// A duration in milliseconds to the microsecond, as a `duration_ms` member that a
/// collector reads back ([`duration_of_ms`]).
pub fn precise_ms(duration: &Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// The duration a `duration_ms` member written by [`precise_ms`] stands for (zero when it
/// is missing, negative or not a number).
pub fn duration_of_ms(member: &Value) -> Duration {
    match member.as_f64() {
        // Saturates past u64::MAX microseconds.
        Some(ms) if ms >= 0.0 => Duration::from_micros((ms * 1000.0).round() as u64),
        _ => Duration::ZERO,
    }
}

/// A function every reporter of a stream is called from.
type Report = dyn Fn(&Event<'_>) + Send + Sync;

/// Where a producer sends its events: one function every reporter is called from, or none.
#[derive(Clone, Default)]
pub struct EventSink(Option<Arc<Report>>);

impl EventSink {
    /// A sink calling `report` with each event.
    pub fn new(report: impl Fn(&Event<'_>) + Send + Sync + 'static) -> EventSink {
        EventSink(Some(Arc::new(report)))
    }

    /// A sink that drops every event.
    pub fn none() -> EventSink {
        EventSink(None)
    }

    /// Hands `event` to the reporters.
    pub fn emit(&self, event: &Event<'_>) {
        if let Some(report) = &self.0 {
            report(event);
        }
    }
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "EventSink(..)"
        } else {
            "EventSink(none)"
        })
    }
}

/// Announces a report judged after the fact as the stream a run sends: its start, each
/// execution in order, its end. The judge and the proxy judge a session when it ends, so
/// their reports go to the same reporters (`--events FILE`, the collector) as a run's.
pub fn announce(report: &RunReport, sink: &EventSink) {
    sink.emit(&Event::RunStarted {
        target: &report.target,
        total: report.results.len(),
        side: report.side,
        redactor: &report.redactor,
    });
    for (index, result) in report.results.iter().enumerate() {
        sink.emit(&Event::CaseFinished { index, result });
    }
    sink.emit(&Event::RunFinished {
        duration: report.duration,
        interrupted: report.interrupted.as_deref(),
    });
}

/// Folds a run's events into its [`RunReport`]: the results in plan order, as the runner
/// returns them.
#[derive(Debug, Default)]
pub struct RunCollector {
    started: Option<(String, Side, Redactor)>,
    results: Vec<(usize, CaseResult)>,
    finished: Option<(Duration, Option<String>)>,
}

impl RunCollector {
    /// Takes in one event; those of other producers are ignored.
    pub fn observe(&mut self, event: &Event<'_>) {
        match event {
            Event::RunStarted {
                target,
                side,
                redactor,
                ..
            } => self.started = Some(((*target).to_owned(), *side, (*redactor).clone())),
            Event::CaseFinished { index, result } => {
                self.results.push((*index, (*result).clone()));
            }
            Event::RunFinished {
                duration,
                interrupted,
            } => self.finished = Some((*duration, interrupted.map(str::to_owned))),
            _ => {}
        }
    }

    /// The run's report, once it has both started and finished.
    pub fn report(mut self) -> Option<RunReport> {
        let (target, side, redactor) = self.started?;
        let (duration, interrupted) = self.finished?;
        self.results.sort_by_key(|(index, _)| *index);
        Some(RunReport {
            target,
            results: self.results.into_iter().map(|(_, result)| result).collect(),
            duration,
            redactor,
            side,
            interrupted,
        })
    }
}

/// Writes the stream as JSON lines, redacted by the run's redactor; a run's `finished`
/// line carries the counts by verdict (`summary`, as in `report.json`, before known
/// failures are applied) and the executions that ran (`executed`).
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
    redactor: Redactor,
    counts: BTreeMap<Verdict, usize>,
    error: Option<io::Error>,
}

impl<W: Write> JsonLines<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines {
            out,
            redactor: Redactor::default(),
            counts: BTreeMap::new(),
            error: None,
        }
    }

    /// Writes one event as a line; the first write error is kept for [`JsonLines::finish`].
    pub fn observe(&mut self, event: &Event<'_>) {
        let mut line = event.to_json();
        match event {
            Event::RunStarted { redactor, .. } => {
                self.redactor = (*redactor).clone();
                self.counts.clear();
            }
            Event::CaseFinished { result, .. } => {
                *self.counts.entry(result.verdict).or_default() += 1;
            }
            Event::RunFinished { .. } => {
                let count = |verdict: &Verdict| self.counts.get(verdict).copied().unwrap_or(0);
                let summary: serde_json::Map<String, Value> = Verdict::ALL
                    .iter()
                    .map(|verdict| (verdict.as_str().to_owned(), Value::from(count(verdict))))
                    .collect();
                let executed: usize = Verdict::ALL
                    .iter()
                    .filter(|verdict| !matches!(verdict, Verdict::Skip | Verdict::Error))
                    .map(count)
                    .sum();
                line["summary"] = Value::Object(summary);
                line["executed"] = Value::from(executed);
            }
            _ => {}
        }
        if self.error.is_some() {
            return;
        }
        let text = self.redactor.text(&line.to_string());
        if let Err(error) = writeln!(self.out, "{text}") {
            self.error = Some(error);
        }
    }

    /// Flushes and gives back the writer, or the first error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests;
