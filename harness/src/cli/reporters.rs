//! The reporters every command's event stream goes to (`harness_model::events`): the one
//! terminal progress reporter of `run`, `fuzz` and `selftest` (a progress bar on a
//! terminal, the matrix rows as lines), the `--events FILE` writer (one JSON object per
//! line) and the collectors that fold the stream back into the values every output is
//! written from: a run's report, a fuzz run's, the self-proofs' matrices.

use std::fs::File;
use std::io::{BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use harness::selftest::{FaultMatrix, MatrixCollector, VariantMatrix};
use harness_fuzz::{FuzzCollector, FuzzReport};
use harness_model::check::Verdict;
use harness_model::events::{Event, EventSink, JsonLines, RunCollector};
use harness_model::results::RunReport;
use indicatif::{ProgressBar, ProgressStyle};

use super::CliError;

/// The `--events FILE` writer: taken out when the stream is finished.
type EventsFile = Mutex<Option<JsonLines<BufWriter<File>>>>;

/// Every reporter of one command, fed by [`Reporters::observe`].
pub(crate) struct Reporters {
    progress: ProgressBar,
    events_file: Option<(PathBuf, EventsFile)>,
    collectors: Mutex<Collectors>,
}

/// The folds of the stream: one per producer, each ignoring the others' events.
#[derive(Default)]
struct Collectors {
    run: RunCollector,
    fuzz: FuzzCollector,
    matrices: MatrixCollector,
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
            collectors: Mutex::default(),
        }))
    }

    /// A sink handing every event to these reporters.
    pub(crate) fn sink(self: &Arc<Reporters>) -> EventSink {
        let reporters = Arc::clone(self);
        EventSink::new(move |event| reporters.observe(event))
    }

    /// Hands one event to every reporter.
    pub(crate) fn observe(&self, event: &Event<'_>) {
        self.terminal(event);
        if let Some((_, lines)) = &self.events_file
            && let Some(lines) = lines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_mut()
        {
            lines.observe(event);
        }
        let mut collectors = self.collectors();
        collectors.run.observe(event);
        collectors.fuzz.observe(event);
        collectors.matrices.observe(event);
    }

    fn collectors(&self) -> std::sync::MutexGuard<'_, Collectors> {
        self.collectors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The run folded from the stream so far (`None` without a started and finished run);
    /// the collector starts over.
    pub(crate) fn take_run(&self) -> Option<RunReport> {
        std::mem::take(&mut self.collectors().run).report()
    }

    /// The fuzz run folded from the stream; an error when the stream holds none.
    pub(crate) fn take_fuzz(&self) -> Result<FuzzReport, CliError> {
        match std::mem::take(&mut self.collectors().fuzz).report() {
            Ok(Some(report)) => Ok(report),
            Ok(None) => Err(CliError::harness(
                "the fuzz run's event stream has no finish",
            )),
            Err(error) => Err(CliError::harness(format!(
                "the fuzz run's events do not fold into a report: {error}"
            ))),
        }
    }

    /// The fault matrix folded from the stream, over the clean run `clean`.
    pub(crate) fn take_fault_matrix(&self, clean: RunReport) -> Result<FaultMatrix, CliError> {
        self.collectors()
            .matrices
            .fault_matrix(clean)
            .map_err(CliError::harness)
    }

    /// The false-failure matrix folded from the stream.
    pub(crate) fn take_variant_matrix(&self) -> Result<VariantMatrix, CliError> {
        self.collectors()
            .matrices
            .variant_matrix()
            .map_err(CliError::harness)
    }

    /// The terminal: the bar counts executions or requests; a matrix row is a line.
    fn terminal(&self, event: &Event<'_>) {
        let bar = &self.progress;
        match event {
            Event::RunStarted { total, .. } => bar.set_length(*total as u64),
            Event::FuzzStarted { planned, .. } => {
                bar.set_position(0);
                bar.set_length(*planned as u64);
            }
            Event::CaseFinished { result, .. } => {
                bar.inc(1);
                if result.verdict == Verdict::Fail {
                    bar.set_message(format!("last failure: {}", result.case));
                }
            }
            Event::RequestJudged {
                transport,
                method,
                verdict,
                ..
            } => {
                bar.inc(1);
                if *verdict == Verdict::Fail {
                    bar.set_message(format!("last failure: {transport} {method}"));
                }
            }
            Event::Interrupted { reason } => bar.set_message((*reason).to_owned()),
            Event::RowFinished { line, .. } => bar.suspend(|| outln!("{line}")),
            Event::RunFinished { .. }
            | Event::FuzzFinished { .. }
            | Event::FuzzFinding { .. }
            | Event::MatrixFinished { .. } => {}
        }
    }

    /// A report judged after the fact (the judge's, the proxy's), announced to these
    /// reporters and folded back from the stream, so its formats are written from the stream
    /// as a run's are.
    pub(crate) fn fold(self: &Arc<Reporters>, report: RunReport) -> Result<RunReport, CliError> {
        harness_model::events::announce(&report, &self.sink());
        self.finish()?
            .ok_or_else(|| CliError::harness("the session's event stream has no finish"))
    }

    /// Clears the bar and closes the events file; returns the run the collector folded
    /// from the stream (`None` for a stream without a finished run).
    pub(crate) fn finish(&self) -> Result<Option<RunReport>, CliError> {
        self.progress.finish_and_clear();
        if let Some((path, lines)) = &self.events_file
            && let Some(lines) = lines.lock().unwrap_or_else(PoisonError::into_inner).take()
        {
            lines.finish().map_err(|error| {
                CliError::harness(format!("failed to write {}: {error}", path.display()))
            })?;
        }
        Ok(self.take_run())
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
