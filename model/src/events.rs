//! One way to hand events over: a producer announces what happens as typed events to a
//! [`Sink`], and every reporter reads them: the terminal's progress, the [`JsonLines`]
//! writer of `--events FILE` (one JSON object per line, like nextest's libtest-json), and
//! the folds of a stream read back (`harness report --from-events`). Each layer has its
//! family of events ([`Events`]): a run's ([`Event`], here, also sent by the judge and the
//! proxy through [`announce`]), the fuzzer's (`harness_fuzz::FuzzEvent`) and the
//! self-proofs' (`harness::selftest::MatrixEvent`); every stream written ends with a
//! [`SessionEvent`], so a whole stream is told from a cut one. Every event derives its
//! JSON form and is read back from it by the same type: each line names its `type` and
//! its `event` (serde's tags, one per level), and what it lends the reporters (a result
//! holds every answer's text) is a `Cow`, borrowed when announced and owned when read
//! back.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::check::{Redactor, Side, Verdict};
use crate::results::{CaseResult, RunReport};

/// A family of events, each lending what it reports for `'a`: what one [`Sink`] carries.
pub trait Events: 'static {
    /// The event, borrowing for `'a`.
    type Event<'a>;
}

/// A function every reporter of a stream is called from.
type Report<E> = dyn for<'a> Fn(&<E as Events>::Event<'a>) + Send + Sync;

/// Where a producer sends its events: one function every reporter is called from, or none.
pub struct Sink<E: Events>(Option<Arc<Report<E>>>);

impl<E: Events> Sink<E> {
    /// A sink calling `report` with each event.
    pub fn new(report: impl for<'a> Fn(&E::Event<'a>) + Send + Sync + 'static) -> Sink<E> {
        Sink(Some(Arc::new(report)))
    }

    /// A sink that drops every event.
    pub fn none() -> Sink<E> {
        Sink(None)
    }

    /// Hands `event` to the reporters.
    pub fn emit(&self, event: &E::Event<'_>) {
        if let Some(report) = &self.0 {
            report(event);
        }
    }
}

impl<E: Events> Clone for Sink<E> {
    fn clone(&self) -> Self {
        Sink(self.0.clone())
    }
}

impl<E: Events> Default for Sink<E> {
    fn default() -> Self {
        Sink::none()
    }
}

impl<E: Events> fmt::Debug for Sink<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Sink(..)"
        } else {
            "Sink(none)"
        })
    }
}

/// The events of a run of the suite (and of a session the judge or the proxy judged).
#[derive(Debug)]
pub struct RunEvents;

impl Events for RunEvents {
    type Event<'a> = Event<'a>;
}

/// Where a run sends its [`Event`]s.
pub type EventSink = Sink<RunEvents>;

/// What a run reports as it goes: its lines have `type` `run`, `case` or `interrupt`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event<'a> {
    /// The run's start and end.
    Run(RunEvent<'a>),
    /// One execution.
    Case(CaseEvent<'a>),
    /// The run stopped early (a signal, the run timeout, the breaker).
    Interrupt(Interrupted<'a>),
}

/// A run's start and end (`type` `run`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent<'a> {
    /// A run of the suite starts with this many executions.
    Started {
        /// Target name.
        target: Cow<'a, str>,
        /// Number of (case, transport) executions.
        total: usize,
        /// Which side the run judges.
        side: Side,
        /// The run's redactor: it knows the target's secrets and learns every token (never
        /// written: a stream read back is redacted already).
        #[serde(skip)]
        redactor: Cow<'a, Redactor>,
    },
    /// The run ended; no event of it follows.
    Finished {
        /// Wall time of the run.
        #[serde(rename = "duration_ms", with = "duration_ms")]
        duration: Duration,
        /// Why the run stopped before every execution ran, if it did.
        interrupted: Option<Cow<'a, str>>,
        /// The count of executions per verdict (every verdict, as in `report.json`, before
        /// known failures are applied).
        summary: BTreeMap<Verdict, usize>,
        /// The executions that ran (neither skipped nor errored).
        executed: usize,
    },
}

/// One execution (`type` `case`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum CaseEvent<'a> {
    /// One execution finished.
    Finished {
        /// Its place in the run's plan (results are reported in plan order).
        index: usize,
        /// The result whole, its members beside `index`.
        #[serde(flatten)]
        result: Cow<'a, CaseResult>,
    },
}

/// An interruption (`type` `interrupt`), of a run or of a fuzz run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Interrupted<'a> {
    /// A signal, the run timeout, or the breaker stopped the run.
    Fired {
        /// Why.
        reason: Cow<'a, str>,
    },
}

impl<'a> Event<'a> {
    /// A run's start.
    pub fn started(target: &'a str, total: usize, side: Side, redactor: &'a Redactor) -> Self {
        Event::Run(RunEvent::Started {
            target: Cow::Borrowed(target),
            total,
            side,
            redactor: Cow::Borrowed(redactor),
        })
    }

    /// An execution's end, at `index` of the plan.
    pub fn case(index: usize, result: &'a CaseResult) -> Self {
        Event::Case(CaseEvent::Finished {
            index,
            result: Cow::Borrowed(result),
        })
    }

    /// An interruption.
    pub fn interrupted(reason: &'a str) -> Self {
        Event::Interrupt(Interrupted::Fired {
            reason: Cow::Borrowed(reason),
        })
    }

    /// A run's end, with the counts of its `results`.
    pub fn finished(
        results: &[CaseResult],
        duration: Duration,
        interrupted: Option<&'a str>,
    ) -> Self {
        Event::finished_with(
            results.iter().map(|result| result.verdict),
            duration,
            interrupted,
        )
    }

    /// A run's end, with the counts of its results' `verdicts` (a producer that kept only
    /// the verdicts of the results it announced).
    pub fn finished_with(
        verdicts: impl IntoIterator<Item = Verdict>,
        duration: Duration,
        interrupted: Option<&'a str>,
    ) -> Self {
        let mut summary: BTreeMap<Verdict, usize> =
            Verdict::ALL.iter().map(|verdict| (*verdict, 0)).collect();
        let mut executed = 0;
        for verdict in verdicts {
            *summary.entry(verdict).or_default() += 1;
            executed += usize::from(!matches!(verdict, Verdict::Skip | Verdict::Error));
        }
        Event::Run(RunEvent::Finished {
            duration,
            interrupted: interrupted.map(Cow::Borrowed),
            summary,
            executed,
        })
    }
}

/// The last line of every `--events FILE` (`type` `session`, `event` `ended`), written by
/// the command's reporters when it ends: a consumer tells a whole stream from one cut short
/// (a killed command, a truncated file) by it. It is no event of a run, a fuzz run or the
/// self-proofs, and no fold takes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The command's session.
    Session(SessionEnd),
}

/// A command's end (`type` `session`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SessionEnd {
    /// The command ended; the stream is whole.
    Ended {
        /// The command a reproduction of the stream's results reruns (`harness run
        /// --target t.toml`), when the stream holds a run's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rerun: Option<String>,
    },
}

impl SessionEvent {
    /// A command's end, whose results a reproduction reruns with `rerun`.
    pub fn ended(rerun: Option<String>) -> SessionEvent {
        SessionEvent::Session(SessionEnd::Ended { rerun })
    }

    /// The command a reproduction reruns, if the stream names one.
    pub fn rerun(&self) -> Option<&str> {
        let SessionEvent::Session(SessionEnd::Ended { rerun }) = self;
        rerun.as_deref()
    }
}

/// `duration_ms`: a [`Duration`] as milliseconds to the microsecond, for
/// `#[serde(with = "duration_ms")]`; a negative or missing number reads as zero.
pub mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `duration` in milliseconds, to the microsecond.
    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(super::precise_ms(duration))
    }

    /// Reads milliseconds back into a duration.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(deserializer)?;
        // Saturates past u64::MAX microseconds.
        Ok(if ms >= 0.0 {
            Duration::from_micros((ms * 1000.0).round() as u64)
        } else {
            Duration::ZERO
        })
    }
}

/// A duration in milliseconds to the microsecond.
pub fn precise_ms(duration: &Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Announces a report judged after the fact as the stream a run sends: its start, each
/// execution in order, its end. The judge and the proxy judge a session when it ends, so
/// their reports go to the same reporters (`--events FILE`) as a run's.
pub fn announce(report: &RunReport, sink: &EventSink) {
    sink.emit(&Event::started(
        &report.target,
        report.results.len(),
        report.side,
        &report.redactor,
    ));
    for (index, result) in report.results.iter().enumerate() {
        sink.emit(&Event::case(index, result));
    }
    sink.emit(&Event::finished(
        &report.results,
        report.duration,
        report.interrupted.as_deref(),
    ));
}

/// Folds a run's events into its [`RunReport`]: the results in plan order, as the runner
/// ran them. Every report of a run is this fold, whether the events come live from the
/// runner, the judge or the proxy ([`collecting`]) or are read back from `--events FILE`.
/// It takes the events whole, so a result read back is moved, not copied.
#[derive(Debug, Default)]
pub struct RunCollector {
    started: Option<(String, Side, Redactor)>,
    results: Vec<(usize, CaseResult)>,
    finished: Option<(Duration, Option<String>)>,
}

impl RunCollector {
    /// Takes in one event; a run's start forgets a run before it.
    pub fn observe(&mut self, event: Event<'_>) {
        match event {
            Event::Run(RunEvent::Started {
                target,
                side,
                redactor,
                ..
            }) => {
                *self = RunCollector {
                    started: Some((target.into_owned(), side, redactor.into_owned())),
                    ..RunCollector::default()
                };
            }
            Event::Case(CaseEvent::Finished { index, result }) => {
                self.results.push((index, result.into_owned()));
            }
            Event::Run(RunEvent::Finished {
                duration,
                interrupted,
                ..
            }) => {
                // To the microsecond, as a stream keeps it: a report folded live and one
                // folded from the stream read back are the same, byte for byte.
                let duration =
                    Duration::from_micros((precise_ms(&duration) * 1000.0).round() as u64);
                self.finished = Some((duration, interrupted.map(Cow::into_owned)));
            }
            Event::Interrupt(_) => {}
        }
    }

    /// The run's report, once it has both started and finished. Its redactor is the run's
    /// when the events came live; read back, it knows no secret (the stream is redacted
    /// already).
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

/// A fold fed live: the [`RunCollector`] a [`collecting`] sink hands each event to.
pub type SharedCollector = Arc<Mutex<RunCollector>>;

/// A sink that folds every event into a [`RunCollector`] and hands it on to `next` (the
/// reporters): a producer's report is the fold of what it announced.
pub fn collecting(next: EventSink) -> (EventSink, SharedCollector) {
    let collector = SharedCollector::default();
    let fold = Arc::clone(&collector);
    let sink = EventSink::new(move |event| {
        fold.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(event.clone());
        next.emit(event);
    });
    (sink, collector)
}

/// The report a [`collecting`] sink folded, once its run has started and finished.
pub fn folded(collector: &SharedCollector) -> Option<RunReport> {
    std::mem::take(&mut *collector.lock().unwrap_or_else(PoisonError::into_inner)).report()
}

/// Writes a stream as JSON lines, each event's derived JSON form, redacted by the run's
/// redactor ([`JsonLines::redact_with`]).
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
    redactor: Redactor,
    error: Option<io::Error>,
}

impl<W: Write> JsonLines<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines {
            out,
            redactor: Redactor::default(),
            error: None,
        }
    }

    /// Redacts the lines that follow with `redactor` (a run's, from its start).
    pub fn redact_with(&mut self, redactor: &Redactor) {
        self.redactor = redactor.clone();
    }

    /// Writes one event as a line; the first write error is kept for [`JsonLines::finish`].
    pub fn write(&mut self, event: &impl Serialize) {
        if self.error.is_some() {
            return;
        }
        let line = match serde_json::to_string(event) {
            Ok(line) => line,
            Err(error) => {
                self.error = Some(io::Error::other(error));
                return;
            }
        };
        let text = self.redactor.text(&line);
        if let Err(error) = writeln!(self.out, "{text}") {
            self.error = Some(error);
        }
    }

    /// Writes one event of a run as a line, redacting what follows its start with the
    /// run's redactor.
    pub fn observe(&mut self, event: &Event<'_>) {
        if let Event::Run(RunEvent::Started { redactor, .. }) = event {
            self.redact_with(redactor);
        }
        self.write(event);
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
