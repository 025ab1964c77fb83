//! Reports of a run: `report.json` (machine-readable), `junit.xml` (CI), `report.md`
//! (failures first) and `report.html` (one self-contained page), plus the terminal
//! summary. Every writer consumes the same [`Summary`] and redacts through the run's
//! [`crate::check::Redactor`], so no format can show a secret another one hides.

mod domains;
mod html;
mod json;
mod junit;
mod markdown;
mod repro;
mod sections;
mod snapshot;
mod statements;

pub use domains::{DomainCoverage, PointStatus};
pub use html::escape;
pub(crate) use html::render_html;
pub use json::render_json;
pub(crate) use junit::render_junit;
pub use markdown::render_markdown;
pub use repro::reproduction;
pub(crate) use repro::shown_reproduction;
pub use sections::SectionCoverage;
pub use snapshot::{SnapshotStats, snapshot_name, snapshot_of, write_snapshots};
pub use statements::{StatementCoverage, StatementStatus};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::check::{Catalog, Clause, Finding, Level, Side, Verdict};
use crate::results::{CaseResult, RunReport};
use harness_protocol::wire::TransportKind;

/// The word for the side a run judges, as reports print it.
pub(crate) fn side_name(side: Side) -> &'static str {
    match side {
        Side::Server => "server",
        Side::Client => "client",
    }
}

/// Counts and coverage of a run, computed once for every format.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Results per verdict.
    pub counts: BTreeMap<Verdict, usize>,
    /// `must` clauses of the judged side in the catalog.
    pub must_total: usize,
    /// Those checked by at least one executed case.
    pub must_covered: usize,
    /// Those not checked, in catalog order.
    pub uncovered: Vec<String>,
    /// Verdict per (clause, transport): the worst of the results that check the clause.
    pub matrix: BTreeMap<String, BTreeMap<TransportKind, Verdict>>,
    /// Rules and checks per SPEC.md section, every section listed.
    pub sections: Vec<SectionCoverage>,
    /// What the run says of each statement of the traceability table.
    pub statements: Vec<StatementCoverage>,
    /// What the run did at each point of each must clause's domain.
    pub domains: Vec<DomainCoverage>,
}

/// What a report needs besides the results.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// The run.
    pub report: &'a RunReport,
    /// The catalog.
    pub catalog: &'a Catalog,
    /// The command to rerun one case, e.g. `harness run --target t.toml`.
    pub rerun: String,
    /// Extra HTML section (the fault matrix of `harness selftest`), already escaped.
    pub extra_html: Option<String>,
}

impl Summary {
    /// Summarizes a run against the catalog.
    pub fn new(report: &RunReport, catalog: &Catalog) -> Summary {
        let mut counts: BTreeMap<Verdict, usize> =
            Verdict::ALL.iter().map(|verdict| (*verdict, 0)).collect();
        let mut matrix: BTreeMap<String, BTreeMap<TransportKind, Verdict>> = BTreeMap::new();
        let mut covered = BTreeSet::new();
        for result in &report.results {
            *counts.entry(result.verdict).or_default() += 1;
            let executed = !matches!(result.verdict, Verdict::Skip | Verdict::Error);
            let concerned = case_clauses(result);
            for clause in result.checks.iter().chain(concerned.iter().copied()) {
                if executed {
                    covered.insert(clause.clone());
                }
                // A failing case stopped early: it vouches only for the clauses it failed.
                let stopped = matches!(result.verdict, Verdict::Fail | Verdict::Xfail);
                let verdict = if stopped && !concerned.contains(clause) {
                    Verdict::Skip
                } else {
                    result.verdict
                };
                let cell = matrix
                    .entry(clause.clone())
                    .or_default()
                    .entry(result.transport)
                    .or_insert(verdict);
                *cell = cell.worst(verdict);
            }
        }
        let must: Vec<&str> = catalog
            .iter()
            .filter(|clause| clause.level == Level::Must && clause.side == report.side)
            .map(|clause| clause.id.as_str())
            .collect();
        let uncovered: Vec<String> = must
            .iter()
            .filter(|id| !covered.contains(**id))
            .map(|id| (*id).to_owned())
            .collect();
        let sections = sections::section_coverage(catalog, report.side, &covered, &matrix);
        let statements = statements::statement_coverage(catalog, report.side, &covered, &matrix);
        let domains = domains::domain_coverage(catalog, report.side, &report.results);
        Summary {
            domains,
            counts,
            must_total: must.len(),
            must_covered: must.len() - uncovered.len(),
            uncovered,
            matrix,
            sections,
            statements,
        }
    }

    /// Results with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.counts.get(&verdict).copied().unwrap_or(0)
    }
}

/// The clauses a result speaks for: its failing clauses and every clause of its case.
fn case_clauses(result: &CaseResult) -> BTreeSet<&String> {
    let mut clauses: BTreeSet<&String> = result.clauses.iter().collect();
    clauses.extend(result.findings.iter().flat_map(|finding| &finding.clauses));
    clauses
}

/// What a report was made against and by, and how long the run took, its parts joined by
/// `separator`: `SPEC.md interface 2.1.1, harness 0.1.0, 1.23 s`.
fn provenance(report: &RunReport, separator: &str) -> String {
    format!(
        "SPEC.md interface {}{separator}harness {}{separator}{:.2} s",
        harness_protocol::spec::INTERFACE_VERSION,
        env!("CARGO_PKG_VERSION"),
        report.duration.as_secs_f64()
    )
}

/// What the reports of an interrupted run say of the executions it did not run, after the
/// reason; `quote` is how the format writes the quoted words.
fn not_run_note(quote: fn(&str) -> String) -> String {
    format!(
        "Executions that did not run are skips marked {}.",
        quote("not run")
    )
}

/// The coverage sentence of the summary, its figures and the word `must` marked up by
/// `figure` and `code`.
fn coverage_sentence(
    summary: &Summary,
    side: Side,
    figure: fn(usize) -> String,
    code: fn(&str) -> String,
) -> String {
    format!(
        "Coverage: {} of {} {} {} clauses checked.",
        figure(summary.must_covered),
        figure(summary.must_total),
        side_name(side),
        code("must")
    )
}

/// One finding of a result: `verdict [clauses]: message`.
fn finding_line(finding: &Finding) -> String {
    format!(
        "{} [{}]: {}",
        finding.verdict,
        finding.clauses.join(", "),
        finding.message
    )
}

/// The clauses whose SPEC.md words a result shows: those a failing or warning finding
/// cites, each once, that have a quote or, failing that, a note (why SPEC.md does not make
/// the finding a failure).
fn quoted_clauses<'a>(context: &Context<'a>, result: &'a CaseResult) -> Vec<&'a Clause> {
    let cited = result
        .findings
        .iter()
        .filter(|finding| matches!(finding.verdict, Verdict::Fail | Verdict::Warn))
        .flat_map(|finding| &finding.clauses);
    context
        .catalog
        .clauses_of(cited)
        .into_iter()
        .filter(|clause| !clause.quote.is_empty() || clause.note.is_some())
        .collect()
}

/// Writes the four report files into `dir` and returns their paths.
pub fn write_all(dir: &Path, context: &Context<'_>) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let summary = Summary::new(context.report, context.catalog);
    let files = [
        ("report.json", render_json(context, &summary)),
        ("junit.xml", render_junit(context, &summary)),
        ("report.md", render_markdown(context, &summary)),
        ("report.html", render_html(context, &summary)),
    ];
    let mut paths = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        paths.push(path);
    }
    Ok(paths)
}

/// Results in report order: most severe first (failures, errors, known failures, warnings,
/// info, fixed, passes, skips).
pub fn failures_first(report: &RunReport) -> Vec<&CaseResult> {
    let mut results: Vec<&CaseResult> = report.results.iter().collect();
    results.sort_by_key(|result| std::cmp::Reverse(result.verdict));
    results
}

/// Results an expectations file speaks for (`xfail`, then `fixed`), shown apart from the
/// results other than pass.
pub fn known_failures(report: &RunReport) -> Vec<&CaseResult> {
    failures_first(report)
        .into_iter()
        .filter(|result| matches!(result.verdict, Verdict::Xfail | Verdict::Fixed))
        .collect()
}

/// Whether a result belongs in "results other than pass" (not a pass, not a known
/// failure or a fixed one, which are shown apart).
pub(crate) fn is_noteworthy(result: &CaseResult) -> bool {
    !matches!(
        result.verdict,
        Verdict::Pass | Verdict::Xfail | Verdict::Fixed
    )
}
