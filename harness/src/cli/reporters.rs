//! The reporters every command's event stream goes to (`harness_model::events`): the one
//! terminal progress reporter of `run`, `fuzz` and `selftest` (a progress bar on a
//! terminal, the matrix rows as lines) and the `--events FILE` writer, one [`Line`] per
//! event. A run's reporters also fold its events ([`Reporters::run_report`]): `run`,
//! `judge` and `proxy` write their reports from that fold, never from a value their
//! producer returns, `fuzz` writes `fuzz.json` from its own fold of the same sink
//! (`FuzzCollector`, `fuzz.rs`), and `harness report --from-events` folds the lines read
//! back (`report.rs`).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use harness::selftest::{
    FaultMatrix, MatrixCollector, MatrixEvent, MatrixSink, RowEvent, VariantMatrix,
};
use harness_fuzz::{FuzzEvent, FuzzPhase, FuzzSink, RequestJudged};
use harness_model::check::Verdict;
use harness_model::events::{
    CaseEvent, Event, EventSink, JsonLines, RunEvent, SessionEvent, SharedCollector, folded,
};
use harness_model::results::RunReport;
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use super::CliError;

/// One line of an events file: an event of a run, of a fuzz run or of the self-proofs.
/// Their `type`s differ, so a line read back is the one family whose tags it carries.
#[expect(
    clippy::large_enum_variant,
    reason = "lent when written, one at a time when read back"
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Line<'a> {
    /// A run's (also the judge's and the proxy's).
    Run(Cow<'a, Event<'a>>),
    /// A fuzz run's.
    Fuzz(Cow<'a, FuzzEvent<'a>>),
    /// A matrix's.
    Matrix(Cow<'a, MatrixEvent<'a>>),
    /// The command's end: the last line of every stream.
    Session(Cow<'a, SessionEvent>),
}

/// The `--events FILE` writer: taken out when the stream is finished.
type EventsFile = Mutex<Option<JsonLines<BufWriter<File>>>>;

/// Every reporter of one command, fed through its sinks.
pub(crate) struct Reporters {
    progress: ProgressBar,
    events_file: Option<(PathBuf, EventsFile)>,
    /// The fold of the run's events: the report a command writes.
    run: SharedCollector,
    /// The command a reproduction reruns, written in the stream's last line.
    rerun: Mutex<Option<String>>,
    /// The fold of the self-proofs' rows: the matrices `selftest` prints and writes.
    matrices: Mutex<MatrixCollector>,
}

impl Reporters {
    /// The terminal's reporter (no bar when `quiet` or standard error is no terminal),
    /// and the JSON lines writer of `events_path` when given.
    pub(crate) fn new(quiet: bool, events_path: Option<&Path>) -> Result<Arc<Reporters>, CliError> {
        let events_file = events_path
            .map(|path| {
                let parent = path
                    .parent()
                    .filter(|parent| !parent.as_os_str().is_empty());
                let file = parent
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| File::create(path))
                    .map_err(|error| {
                        CliError::harness(format!("failed to write {}: {error}", path.display()))
                    })?;
                Ok::<_, CliError>((
                    path.to_path_buf(),
                    Mutex::new(Some(JsonLines::new(BufWriter::new(file)))),
                ))
            })
            .transpose()?;
        Ok(Arc::new(Reporters {
            progress: progress_bar(quiet),
            events_file,
            run: SharedCollector::default(),
            rerun: Mutex::default(),
            matrices: Mutex::default(),
        }))
    }

    /// A sink for a run's events.
    pub(crate) fn sink(self: &Arc<Reporters>) -> EventSink {
        let reporters = Arc::clone(self);
        EventSink::new(move |event| {
            reporters
                .run
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .observe(event.clone());
            reporters.run_terminal(event);
            reporters.write(&Line::Run(Cow::Borrowed(event)), |lines| {
                if let Event::Run(RunEvent::Started { redactor, .. }) = event {
                    lines.redact_with(redactor);
                }
            });
        })
    }

    /// A sink for a fuzz run's events.
    pub(crate) fn fuzz_sink(self: &Arc<Reporters>) -> FuzzSink {
        let reporters = Arc::clone(self);
        FuzzSink::new(move |event| {
            reporters.fuzz_terminal(event);
            reporters.write(&Line::Fuzz(Cow::Borrowed(event)), |_| {});
        })
    }

    /// A sink for the self-proofs' rows and matrices.
    pub(crate) fn matrix_sink(self: &Arc<Reporters>) -> MatrixSink {
        let reporters = Arc::clone(self);
        MatrixSink::new(move |event| {
            reporters
                .matrices
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .observe(event.clone());
            if let MatrixEvent::Row(RowEvent::Finished { line, .. }) = event {
                reporters.progress.suspend(|| outln!("{line}"));
            }
            reporters.write(&Line::Matrix(Cow::Borrowed(event)), |_| {});
        })
    }

    /// Writes `line` into the events file, after `before` has seen the writer.
    fn write(&self, line: &Line<'_>, before: impl FnOnce(&mut JsonLines<BufWriter<File>>)) {
        if let Some((_, lines)) = &self.events_file
            && let Some(lines) = lines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_mut()
        {
            before(lines);
            lines.write(line);
        }
    }

    /// The terminal during a run: the bar counts executions.
    fn run_terminal(&self, event: &Event<'_>) {
        let bar = &self.progress;
        match event {
            Event::Run(RunEvent::Started { total, .. }) => bar.set_length(*total as u64),
            Event::Case(CaseEvent::Finished { result, .. }) => {
                bar.inc(1);
                if result.verdict == Verdict::Fail {
                    bar.set_message(format!("last failure: {}", result.case));
                }
            }
            Event::Interrupt(harness_model::events::Interrupted::Fired { reason }) => {
                bar.set_message(reason.to_string());
            }
            Event::Run(RunEvent::Finished { .. }) => {}
        }
    }

    /// The terminal during a fuzz run: the bar counts requests.
    fn fuzz_terminal(&self, event: &FuzzEvent<'_>) {
        let bar = &self.progress;
        match event {
            FuzzEvent::Fuzz(FuzzPhase::Started { planned, .. }) => {
                bar.set_position(0);
                bar.set_length(*planned as u64);
            }
            FuzzEvent::Request(RequestJudged::Judged {
                transport,
                method,
                verdict,
                ..
            }) => {
                bar.inc(1);
                if *verdict == Verdict::Fail {
                    bar.set_message(format!("last failure: {transport} {method}"));
                }
            }
            FuzzEvent::Interrupt(harness_model::events::Interrupted::Fired { reason }) => {
                bar.set_message(reason.to_string());
            }
            FuzzEvent::Fuzz(FuzzPhase::Finished { .. }) | FuzzEvent::Finding(_) => {}
        }
    }

    /// Announces a session judged after the fact (the judge's, the proxy's) to these
    /// reporters as a run's stream, finishes them, and gives back the fold of that stream:
    /// the report its outputs are written from.
    pub(crate) fn announce(
        self: &Arc<Reporters>,
        report: &RunReport,
    ) -> Result<RunReport, CliError> {
        harness_model::events::announce(report, &self.sink());
        self.finish()?;
        self.run_report()
            .ok_or_else(|| CliError::harness("the session's events hold no finished run"))
    }

    /// The fault matrix the rows announced so far fold into, over `clean` (the clean run's
    /// fold), once the matrix has finished.
    pub(crate) fn fault_matrix(&self, clean: RunReport) -> Result<FaultMatrix, CliError> {
        self.matrices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .fault_matrix(clean)
            .map_err(CliError::harness)
    }

    /// The variant matrix the rows announced so far fold into, once it has finished.
    pub(crate) fn variant_matrix(&self) -> Result<VariantMatrix, CliError> {
        self.matrices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .variant_matrix()
            .map_err(CliError::harness)
    }

    /// The report the run's events fold into, once the run has started and finished: the
    /// one every output of `run`, `judge` and `proxy` is written from.
    pub(crate) fn run_report(&self) -> Option<RunReport> {
        folded(&self.run)
    }

    /// Names the command a reproduction of this stream's results reruns (`harness run
    /// --target t.toml`), for the stream's last line: `harness report --from-events` then
    /// writes the reports the command wrote, byte for byte.
    pub(crate) fn rerun(&self, rerun: &str) {
        *self.rerun.lock().unwrap_or_else(PoisonError::into_inner) = Some(rerun.to_owned());
    }

    /// Clears the bar and closes the events file, after its last line: the session's end,
    /// which tells a whole stream from one cut short.
    pub(crate) fn finish(&self) -> Result<(), CliError> {
        self.progress.finish_and_clear();
        if let Some((path, lines)) = &self.events_file
            && let Some(mut lines) = lines.lock().unwrap_or_else(PoisonError::into_inner).take()
        {
            let rerun = self
                .rerun
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            lines.write(&Line::Session(Cow::Owned(SessionEvent::ended(rerun))));
            lines.finish().map_err(|error| {
                CliError::harness(format!("failed to write {}: {error}", path.display()))
            })?;
        }
        Ok(())
    }
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}") {
        bar.set_style(style);
    }
    bar
}
