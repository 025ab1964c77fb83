//! The self-proof: the suite must pass the clean reference server and catch every seeded
//! fault, each by a failing case that cites a clause the fault breaks. The result is the
//! [`FaultMatrix`]: fault -> cases that caught it, the mutation score, and which `must`
//! clauses no fault can make fail. Its other half, [`variants`], runs the suite, the fuzzer
//! and judge self-play against every spec-open variant and counts the false failures.

mod collect;
pub mod variants;

pub use collect::{
    Matrix, MatrixCollectError, MatrixCollector, MatrixEnd, MatrixEvent, MatrixEvents, MatrixRow,
    MatrixSink, RowEvent,
};
pub use variants::{
    VariantMatrix, VariantPlan, VariantRow, conforming_client_case, variant_matrix,
};

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use harness_model::case::Case;
use harness_model::check::{Catalog, Level, SchemaSet, Side, Verdict};
use harness_model::events::EventSink;
use harness_model::results::RunReport;
use harness_runner::run::{self, RunError};
use harness_server::serve::{self, Fault};

/// Fault-matrix rows run at once, each against its own reference server. A run of the
/// suite spends about half its wall time waiting on its longest chain of requests (the
/// rate probe's hundred pages), so four rows at once keep two cores busy. The variant
/// matrix stays one row at a time: its rows are CPU-bound (fuzzing), so running them at
/// once gained nothing, and one of its timing-sensitive rows failed once under load.
pub(crate) const ROWS_AT_ONCE: usize = 4;

/// What the self-test needs.
#[derive(Clone, Debug)]
pub struct SelftestConfig {
    /// The case corpus.
    pub cases: Vec<Case>,
    /// The clause catalog.
    pub catalog: Arc<Catalog>,
    /// Result schemas.
    pub schemas: Arc<SchemaSet>,
    /// Executions at once within one run.
    pub concurrency: usize,
    /// Only these faults (all when empty).
    pub faults: Vec<Fault>,
}

/// One fault's row of the matrix.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FaultRow {
    /// The fault.
    #[serde(with = "collect::fault_name")]
    pub fault: Fault,
    /// Failing (case, transport, failing clauses).
    pub caught_by: Vec<(String, String, Vec<String>)>,
    /// Whether some failing case cites a clause the fault breaks.
    pub cites_its_clause: bool,
    /// Wall time of the run.
    #[serde(rename = "duration_ms", with = "harness_model::events::duration_ms")]
    pub duration: Duration,
}

impl FaultRow {
    /// Caught, by a case citing one of the fault's clauses.
    pub fn killed(&self) -> bool {
        !self.caught_by.is_empty() && self.cites_its_clause
    }

    /// The row as the terminal prints it: the fault, caught or missed, the cases that
    /// caught it.
    pub fn line(&self) -> String {
        let cases: BTreeSet<&str> = self
            .caught_by
            .iter()
            .map(|(case, _, _)| case.as_str())
            .collect();
        let mark = if self.killed() { "caught" } else { "MISSED" };
        format!(
            "{:32} {mark:7} {}",
            self.fault.name(),
            cases.into_iter().collect::<Vec<_>>().join(", ")
        )
    }
}

/// The whole matrix.
#[derive(Clone, Debug)]
pub struct FaultMatrix {
    /// The run against the clean server.
    pub clean: RunReport,
    /// One row per fault.
    pub rows: Vec<FaultRow>,
    /// Server `must` clauses that no fault made fail.
    pub unkillable: Vec<String>,
    /// Wall time of everything.
    pub duration: Duration,
}

impl FaultMatrix {
    /// Faults killed over faults run, in percent.
    pub fn mutation_score(&self) -> f64 {
        if self.rows.is_empty() {
            return 0.0;
        }
        let killed = self.rows.iter().filter(|row| row.killed()).count();
        100.0 * killed as f64 / self.rows.len() as f64
    }

    /// Whether the clean run failed anywhere.
    pub fn clean_failures(&self) -> Vec<String> {
        self.clean
            .results
            .iter()
            .filter(|result| {
                matches!(
                    result.verdict,
                    Verdict::Fail | Verdict::Error | Verdict::Warn
                )
            })
            .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
            .collect()
    }

    /// The matrix as text, one fault per line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for row in &self.rows {
            let mark = if row.killed() {
                "caught"
            } else if row.caught_by.is_empty() {
                "MISSED"
            } else {
                "WRONG CLAUSE"
            };
            let cases: BTreeSet<&str> = row
                .caught_by
                .iter()
                .map(|(case, _, _)| case.as_str())
                .collect();
            let _ = writeln!(
                out,
                "{:32} {:12} {}",
                row.fault.name(),
                mark,
                cases.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
        let _ = writeln!(
            out,
            "mutation score {:.1}% ({} of {} faults caught); clean run: {} failures; unkillable must clauses: {}",
            self.mutation_score(),
            self.rows.iter().filter(|row| row.killed()).count(),
            self.rows.len(),
            self.clean_failures().len(),
            if self.unkillable.is_empty() {
                "none".to_owned()
            } else {
                self.unkillable.join(", ")
            }
        );
        out
    }

    /// The matrix as an HTML section (escaped), for `report.html`.
    pub fn to_html(&self) -> String {
        let escape = harness_model::report::escape;
        let mut out = String::from("<h2>Fault matrix</h2>");
        let _ = write!(
            out,
            "<p id=\"mutation-score\">Mutation score: <b>{:.1}%</b>; unkillable must clauses: {}</p>",
            self.mutation_score(),
            self.unkillable.len()
        );
        out.push_str("<table id=\"faults\"><tr><th>fault</th><th>breaks</th><th>verdict</th><th>caught by</th></tr>");
        for row in &self.rows {
            let class = if row.killed() { "pass" } else { "fail" };
            let cases: BTreeSet<String> = row
                .caught_by
                .iter()
                .map(|(case, transport, _)| format!("{case} [{transport}]"))
                .collect();
            let _ = write!(
                out,
                "<tr><td><code>{}</code><br>{}</td><td><code>{}</code></td><td class=\"{class}\">{}</td><td>{}</td></tr>",
                escape(row.fault.name()),
                escape(row.fault.description()),
                escape(&row.fault.clauses().join(", ")),
                if row.killed() { "caught" } else { "missed" },
                escape(&cases.into_iter().collect::<Vec<_>>().join(", "))
            );
        }
        out.push_str("</table>");
        out
    }
}

fn with_faults(faults: Vec<Fault>) -> serve::ServeConfig {
    let mut server_config = serve::ServeConfig::loopback();
    server_config.faults = faults;
    server_config
}

/// The suite against a reference server started with `server_config`, its events sent to
/// `events`.
async fn run_against(
    config: &SelftestConfig,
    server_config: serve::ServeConfig,
    events: &EventSink,
) -> Result<RunReport, RunError> {
    let running = serve::start(server_config).await.map_err(|error| {
        RunError::Client(harness_protocol::wire::TransportError {
            kind: harness_protocol::wire::TransportErrorKind::Connect,
            message: error.to_string(),
        })
    })?;
    let run_config = run::RunConfig {
        concurrency: config.concurrency,
        limits: harness_runner::transport::RequestLimits {
            request_timeout: Duration::from_secs(3),
            ..Default::default()
        },
        run_timeout: Duration::from_secs(120),
        ..run::RunConfig::new(
            running.target(),
            config.cases.clone(),
            config.catalog.clone(),
            config.schemas.clone(),
        )
    };
    let report = run::run(run_config, events.clone()).await;
    running.shutdown().await;
    report
}

/// Runs the clean server only, announcing its run to `events`: a matrix without fault
/// rows.
pub async fn clean_run(
    config: &SelftestConfig,
    events: &EventSink,
) -> Result<FaultMatrix, RunError> {
    let started = Instant::now();
    let clean = run_against(config, with_faults(Vec::new()), events).await?;
    Ok(FaultMatrix {
        clean,
        rows: Vec::new(),
        unkillable: Vec::new(),
        duration: started.elapsed(),
    })
}

/// Runs the clean server and every fault, one reference server each, announcing the clean
/// run's events to `events`, and each row whole and the matrix's end to `rows_sink`
/// ([`MatrixEvent`]; [`MatrixCollector`] folds them back).
pub async fn fault_matrix(
    config: &SelftestConfig,
    events: &EventSink,
    rows_sink: &MatrixSink,
) -> Result<FaultMatrix, RunError> {
    let started = Instant::now();
    let clean = run_against(config, with_faults(Vec::new()), events).await?;
    let faults: Vec<Fault> = if config.faults.is_empty() {
        Fault::ALL.to_vec()
    } else {
        config.faults.clone()
    };
    let mut rows = Vec::new();
    let mut killed_clauses: BTreeMap<String, Vec<Fault>> = BTreeMap::new();
    // Rows run `ROWS_AT_ONCE` at a time, each against its own server, and come back in
    // order: a run waits on its longest chain of requests far more than it computes.
    let mut reports = futures_util::stream::iter(faults)
        .map(|fault| async move {
            let fault_started = Instant::now();
            let report = run_against(config, with_faults(vec![fault]), &EventSink::none()).await;
            (fault, report, fault_started.elapsed())
        })
        .buffered(ROWS_AT_ONCE);
    while let Some((fault, report, duration)) = reports.next().await {
        let row = fault_row(config, fault, &report?, duration, &mut killed_clauses);
        rows_sink.emit(&MatrixEvent::Row(RowEvent::Finished {
            name: Cow::Borrowed(row.fault.name()),
            passed: row.killed(),
            line: Cow::Owned(row.line()),
            row: MatrixRow::Faults(Cow::Borrowed(&row)),
        }));
        rows.push(row);
    }
    let unkillable = unkillable_clauses(config, &killed_clauses);
    let duration = started.elapsed();
    rows_sink.emit(&MatrixEvent::Matrix(MatrixEnd::Finished {
        matrix: Matrix::Faults,
        duration,
        unkillable: Cow::Borrowed(&unkillable),
    }));
    Ok(FaultMatrix {
        clean,
        rows,
        unkillable,
        duration,
    })
}

/// The row of `fault`: the results of its run that caught it, failing (or, for a fault
/// that breaks only `warn` clauses, warning) with the clauses they name, each added to
/// `killed_clauses`, and whether one names a clause of the fault.
fn fault_row(
    config: &SelftestConfig,
    fault: Fault,
    report: &RunReport,
    duration: Duration,
    killed_clauses: &mut BTreeMap<String, Vec<Fault>>,
) -> FaultRow {
    let mut caught_by = Vec::new();
    let mut cites_its_clause = false;
    let caught_as = caught_as(config, fault);
    for result in report
        .results
        .iter()
        .filter(|result| result.verdict == Verdict::Fail || result.verdict == caught_as)
    {
        let failing: Vec<String> = result
            .findings
            .iter()
            .filter(|finding| finding.verdict == Verdict::Fail || finding.verdict == caught_as)
            .flat_map(|finding| finding.clauses.iter().cloned())
            .collect();
        if failing
            .iter()
            .any(|clause| fault.clauses().contains(&clause.as_str()))
        {
            cites_its_clause = true;
        }
        for clause in &failing {
            killed_clauses
                .entry(clause.clone())
                .or_default()
                .push(fault);
        }
        caught_by.push((result.case.clone(), result.transport.to_string(), failing));
    }
    FaultRow {
        fault,
        caught_by,
        cites_its_clause,
        duration,
    }
}

/// The verdict that catches `fault`: a fault that breaks only rules SPEC.md leaves open (a
/// `warn` clause, such as the declared rate budget of `race-bucket`) can only be warned
/// about, so a warning on its clause catches it; any other fault needs a failure.
fn caught_as(config: &SelftestConfig, fault: Fault) -> Verdict {
    if fault
        .clauses()
        .iter()
        .all(|clause| config.catalog.level(clause) != Level::Must)
    {
        Verdict::Warn
    } else {
        Verdict::Fail
    }
}

/// The server `must` clauses no fault's run failed.
fn unkillable_clauses(
    config: &SelftestConfig,
    killed_clauses: &BTreeMap<String, Vec<Fault>>,
) -> Vec<String> {
    config
        .catalog
        .iter()
        .filter(|clause| clause.level == Level::Must && clause.side == Side::Server)
        .filter(|clause| !killed_clauses.contains_key(&clause.id))
        .map(|clause| clause.id.clone())
        .collect()
}
