//! Every final summary a command prints, in one place: the lines of standard output a
//! person reads once a run, a judged or proxied session, or a self-proof has ended (results
//! other than a pass, the counts, known failures, where the reports went), and the plan of
//! `harness run --plan`. A run's, a judged or a proxied session's summary is printed from
//! the report folded from its events (`reporters.rs`), never from a value a producer
//! returned; the command files start producers and call these, and print no summary of
//! their own.

use std::path::PathBuf;

use harness::selftest::{FaultMatrix, VariantMatrix};
use harness_model::check::{Catalog, Verdict};
use harness_model::known_failures::{EntryOutcome, EntryStatus, KnownFailures};
use harness_model::report::{self, Context, Summary};
use harness_model::results::RunReport;
use harness_runner::run;

/// The terminal summary: results other than pass (failures first), then the counts.
pub(crate) fn run(report: &RunReport, catalog: &Catalog, rerun: &str) {
    let summary = &Summary::new(report, catalog);
    let context = &Context {
        report,
        catalog,
        rerun: rerun.to_owned(),
        extra_html: None,
    };
    for result in report::failures_first(report).into_iter().filter(|result| {
        !matches!(
            result.verdict,
            Verdict::Pass | Verdict::Info | Verdict::Fixed
        )
    }) {
        outln!(
            "{:5} {} [{}] {{{}}}: {}",
            result.verdict.as_str().to_uppercase(),
            result.case,
            result.transport,
            result.clauses.join(", "),
            report.redactor.text(&result.message)
        );
        if result.verdict == Verdict::Fail {
            for line in report::reproduction(context, result).iter().take(1) {
                outln!("      reproduce: {line}");
            }
        }
    }
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|verdict| format!("{} {}", summary.count(*verdict), verdict))
        .collect();
    outln!(
        "{}: {} in {:.2} s; {} of {} server must clauses covered",
        report.target,
        counts.join(", "),
        report.duration.as_secs_f64(),
        summary.must_covered,
        summary.must_total
    );
    let known = summary.count(Verdict::Xfail);
    outln!(
        "{} passed, {} failed{}",
        summary.count(Verdict::Pass)
            + summary.count(Verdict::Info)
            + summary.count(Verdict::Warn)
            + summary.count(Verdict::Fixed),
        summary.count(Verdict::Fail),
        if known > 0 {
            format!(", {known} known failures")
        } else {
            String::new()
        }
    );
    if let Some(reason) = &report.interrupted {
        let not_run = report
            .results
            .iter()
            .filter(|result| result.message.starts_with(run::NOT_RUN))
            .count();
        outln!("{reason}: {not_run} executions not run; the reports hold what ran");
    }
}

/// One line per fixed entry, and counts; returns how many entries are fixed.
pub(crate) fn expectations(
    expectations: Option<&KnownFailures>,
    outcomes: &[EntryOutcome],
) -> usize {
    let Some(expectations) = expectations else {
        return 0;
    };
    let file = expectations.path.display();
    let count = |status| {
        outcomes
            .iter()
            .filter(|outcome| outcome.status == status)
            .count()
    };
    for outcome in outcomes
        .iter()
        .filter(|outcome| outcome.status == EntryStatus::Fixed)
    {
        let entry = &outcome.entry;
        let over = entry
            .transport
            .map(|transport| format!(" [{transport}]"))
            .unwrap_or_default();
        outln!(
            "FIXED {}{over} ({file}:{}): passes now: remove it from {file}",
            entry.selector,
            entry.line
        );
    }
    outln!(
        "{file}: {} known failure(s) still failing, {} fixed, {} not run",
        count(EntryStatus::Failing),
        count(EntryStatus::Fixed),
        count(EntryStatus::NotRun)
    );
    count(EntryStatus::Fixed)
}

/// The `reports: a, b, c` line of a command that wrote reports.
pub(crate) fn report_paths(paths: &[PathBuf]) {
    let paths: Vec<String> = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    eprintln!("reports: {}", paths.join(", "));
}

/// `--plan`: each execution with paced calls, the costliest first, its calls by budget.
pub(crate) fn paced_plan(plan: &run::PacedPlan) {
    let mut executions: Vec<&run::PlannedExecution> = plan.executions.iter().collect();
    executions.sort_by_key(|execution| std::cmp::Reverse(execution.calls.values().sum::<usize>()));
    for execution in executions {
        let calls: Vec<String> = execution
            .calls
            .iter()
            .map(|(budget, calls)| format!("{budget} {calls}"))
            .collect();
        outln!(
            "{:>4}  {} [{}]: {}",
            execution.calls.values().sum::<usize>(),
            execution.case,
            execution.transport,
            calls.join(", ")
        );
    }
}

/// Prints each failing or warning result, then the session's counts: requests, those not
/// kept, results by verdict.
pub(crate) fn judged(run_report: &RunReport, catalog: &Catalog, requests: usize, dropped: usize) {
    let summary = Summary::new(run_report, catalog);
    failing_and_warning(run_report);
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|verdict| format!("{} {verdict}", summary.count(*verdict)))
        .collect();
    outln!(
        "{}: {} requests ({} not kept), {}",
        run_report.target,
        requests,
        dropped,
        counts.join(", ")
    );
}

/// Prints each failing or warning result, then the session's counts: requests, those not
/// judged, results by verdict.
pub(crate) fn proxied(run_report: &RunReport, catalog: &Catalog, requests: usize, unjudged: usize) {
    failing_and_warning(run_report);
    let summary = Summary::new(run_report, catalog);
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|verdict| format!("{} {verdict}", summary.count(*verdict)))
        .collect();
    outln!(
        "{}: {} requests ({} not judged), {}",
        run_report.target,
        requests,
        unjudged,
        counts.join(", ")
    );
}

/// Prints each failing or warning result of a judged session, failures first, as
/// `VERDICT case [transport]: message`, redacted (`harness judge` and `harness proxy`).
fn failing_and_warning(run_report: &RunReport) {
    for result in report::failures_first(run_report)
        .into_iter()
        .filter(|result| matches!(result.verdict, Verdict::Fail | Verdict::Warn))
    {
        outln!(
            "{:5} {} [{}]: {}",
            result.verdict.as_str().to_uppercase(),
            result.case,
            result.transport,
            run_report.redactor.text(&result.message)
        );
    }
}

/// Prints the fault matrix's summary; whether it proves every check can fail.
pub(crate) fn fault_matrix(matrix: &FaultMatrix, whole: bool) -> bool {
    let clean_failures = matrix.clean_failures();
    for failure in &clean_failures {
        outln!("clean server: {failure}");
    }
    let killed = matrix.rows.iter().filter(|row| row.killed()).count();
    outln!(
        "mutation score {:.1}% ({killed} of {} faults caught) in {:.1} s; clean run {} failures; unkillable must clauses: {}",
        matrix.mutation_score(),
        matrix.rows.len(),
        matrix.duration.as_secs_f64(),
        clean_failures.len(),
        if matrix.unkillable.is_empty() {
            "none".to_owned()
        } else {
            matrix.unkillable.join(", ")
        }
    );
    killed == matrix.rows.len()
        && clean_failures.is_empty()
        && (!whole || matrix.unkillable.is_empty())
}

/// The variant matrix's summary line.
pub(crate) fn variant_matrix(matrix: &VariantMatrix) {
    outln!(
        "false failures {} over {} variant rows in {:.1} s",
        matrix.false_failures(),
        matrix.rows.len(),
        matrix.duration.as_secs_f64()
    );
}

/// The line of `--strict-expect` when known failures were fixed.
pub(crate) fn strict_expect(fixed: usize) {
    outln!("--strict-expect: {fixed} known failure(s) fixed; the run fails until they are removed");
}
