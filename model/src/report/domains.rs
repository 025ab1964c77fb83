//! Coverage by rule domain: for each `must` clause of the judged side, each point of its
//! declared domain (`check::Domain`) and what the run did there: checked by an execution
//! that reached it (failed, if one of them failed), skipped (with the first reason), or not
//! run (no execution of the run reached it: filtered out, or no case does).
//!
//! An execution reaches the points its case file gives it over its transport
//! (`CaseResult::points`), counted for every clause it checks. A run whose results carry no
//! points (the judge's, the proxy's: a client is judged on whatever it sends) has no rows.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::check::{Catalog, Level, Point, Side, Verdict};
use crate::results::CaseResult;

/// What the run did at one point of a clause's domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum PointStatus {
    /// An execution that reached the point failed the clause.
    Failed,
    /// Executions that reached the point ran, and none failed.
    Checked,
    /// Every execution that would have reached the point was skipped or could not run:
    /// the first one's reason.
    Skipped(String),
    /// No execution of the run reaches the point.
    NotRun,
}

impl PointStatus {
    /// The word reports print.
    pub fn as_str(&self) -> &'static str {
        match self {
            PointStatus::Failed => "failed",
            PointStatus::Checked => "checked",
            PointStatus::Skipped(_) => "skipped",
            PointStatus::NotRun => "not run",
        }
    }
}

/// One clause's row: its points in domain order, each with what the run did there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DomainCoverage {
    /// The clause.
    pub clause: String,
    /// Its declared points and their status.
    pub points: Vec<(Point, PointStatus)>,
}

impl DomainCoverage {
    /// How many of the clause's points have this status word.
    pub fn count(&self, word: &str) -> usize {
        self.points
            .iter()
            .filter(|(_, status)| status.as_str() == word)
            .count()
    }
}

/// The rows, in catalog order: every `must` clause of `side` that declares a domain, when
/// any result carries points.
pub(crate) fn domain_coverage(
    catalog: &Catalog,
    side: Side,
    results: &[CaseResult],
) -> Vec<DomainCoverage> {
    if results.iter().all(|result| result.points.is_empty()) {
        return Vec::new();
    }
    let mut by_clause: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for result in results {
        for clause in &result.checks {
            by_clause.entry(clause.as_str()).or_default().push(result);
        }
    }
    catalog
        .iter()
        .filter(|clause| clause.level == Level::Must && clause.side == side)
        .filter_map(|clause| {
            let domain = clause.domain.as_ref()?;
            let reaching = by_clause.get(clause.id.as_str());
            let points = domain
                .points()
                .map(|point| {
                    let executions: Vec<&CaseResult> = reaching
                        .into_iter()
                        .flatten()
                        .filter(|result| result.points.contains(&point))
                        .copied()
                        .collect();
                    (point, status(&clause.id, &executions))
                })
                .collect();
            Some(DomainCoverage {
                clause: clause.id.clone(),
                points,
            })
        })
        .collect()
}

fn status(clause: &str, executions: &[&CaseResult]) -> PointStatus {
    let failed = executions.iter().any(|result| {
        result.verdict == Verdict::Fail && result.clauses.iter().any(|cited| cited == clause)
    });
    if failed {
        return PointStatus::Failed;
    }
    if executions
        .iter()
        .any(|result| !matches!(result.verdict, Verdict::Skip | Verdict::Error))
    {
        return PointStatus::Checked;
    }
    match executions.first() {
        Some(result) => PointStatus::Skipped(result.message.clone()),
        None => PointStatus::NotRun,
    }
}

/// The points of a row with this status, as `dimension: point` joined.
fn listed(row: &DomainCoverage, word: &str) -> String {
    row.points
        .iter()
        .filter(|(_, status)| status.as_str() == word)
        .map(|(point, _)| point.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The table as Markdown: a row per clause whose domain the run did not check whole.
pub(crate) fn domains_markdown(rows: &[DomainCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let whole = rows
        .iter()
        .filter(|row| row.count("checked") == row.points.len())
        .count();
    let mut out = format!(
        "\n## Coverage by rule domain\n\n{whole} of {} must clauses checked at every point of their domain.\n\n| clause | failed at | skipped at | not run at |\n|---|---|---|---|\n",
        rows.len()
    );
    for row in rows
        .iter()
        .filter(|row| row.count("checked") < row.points.len())
    {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.clause,
            listed(row, "failed"),
            listed(row, "skipped"),
            listed(row, "not run")
        );
    }
    out
}

/// The table as HTML (escaped): a row per clause, a cell per point.
pub(crate) fn domains_html(rows: &[DomainCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let escape = super::escape;
    let mut out = String::from(
        "<h2>Coverage by rule domain</h2><table id=\"domains\"><tr><th>clause</th><th>points of its domain</th></tr>",
    );
    for row in rows {
        let _ = write!(out, "<tr><td>{}</td><td>", escape(&row.clause));
        for (point, status) in &row.points {
            let class = match status {
                PointStatus::Failed => "fail",
                PointStatus::Checked => "pass",
                PointStatus::Skipped(_) | PointStatus::NotRun => "skip",
            };
            let title = match status {
                PointStatus::Skipped(reason) => format!("skipped: {reason}"),
                other => other.as_str().to_owned(),
            };
            let _ = write!(
                out,
                "<span class=\"{class}\" title=\"{}\">{}</span> ",
                escape(&title),
                escape(&point.to_string())
            );
        }
        out.push_str("</td></tr>");
    }
    out.push_str("</table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Dimension, Domain};
    use harness_protocol::wire::TransportKind;

    fn result(verdict: Verdict, points: &[Point], message: &str) -> CaseResult {
        CaseResult {
            case: "c".into(),
            title: "t".into(),
            path: "p".into(),
            transport: TransportKind::HttpQuery,
            verdict,
            clauses: vec!["a.rule".into()],
            checks: vec!["a.rule".into()],
            message: message.into(),
            findings: Vec::new(),
            notes: Vec::new(),
            exchanges: Vec::new(),
            duration_ms: 0.0,
            points: points.to_vec(),
        }
    }

    fn catalog() -> Catalog {
        let mut catalog = Catalog::of_clauses(&[("a.rule", "1", Level::Must, Side::Server)]);
        catalog.set_domain(
            "a.rule",
            Domain::of(
                &[Point::HttpQuery, Point::Ws, Point::HttpBody, Point::Later],
                &[(Dimension::Pages, "x")],
            ),
        );
        catalog
    }

    #[test]
    fn each_point_says_failed_checked_skipped_with_its_reason_or_not_run() {
        let results = [
            result(Verdict::Pass, &[Point::HttpQuery, Point::Later], ""),
            result(Verdict::Fail, &[Point::Ws], "broke it"),
            result(Verdict::Skip, &[Point::HttpBody], "no fixture"),
        ];
        let rows = domain_coverage(&catalog(), Side::Server, &results);
        assert_eq!(rows.len(), 1);
        let statuses: Vec<(&str, &str)> = rows[0]
            .points
            .iter()
            .map(|(point, status)| (point.as_str(), status.as_str()))
            .collect();
        assert_eq!(
            statuses,
            [
                ("http-query", "checked"),
                ("http-body", "skipped"),
                ("ws", "failed"),
                ("later", "checked")
            ]
        );
        let markdown = domains_markdown(&rows);
        assert!(
            markdown.contains("0 of 1 must clauses checked at every point"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| a.rule | transports: ws | transports: http-body |  |"),
            "{markdown}"
        );
        let html = domains_html(&rows);
        assert!(
            html.contains(
                "<span class=\"skip\" title=\"skipped: no fixture\">transports: http-body</span>"
            ),
            "{html}"
        );
        let none = domain_coverage(&catalog(), Side::Server, &[result(Verdict::Pass, &[], "")]);
        assert!(none.is_empty(), "a run without points has no rows");
        let unreached = domain_coverage(
            &catalog(),
            Side::Server,
            &[result(Verdict::Pass, &[Point::Rest], "")],
        );
        assert!(
            unreached[0]
                .points
                .iter()
                .all(|(_, status)| *status == PointStatus::NotRun)
        );
    }
}
