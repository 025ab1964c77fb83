//! Coverage by SPEC.md statement: each statement of the traceability table
//! (`cases/statements.toml`) with what this run says of it, beside coverage by clause and
//! by section. A statement is failed when a clause of the judged side it maps to failed,
//! checked when one was checked, unchecked when it maps to clauses of the judged side no
//! executed case checked, excused when it maps to none and says why in one line, and
//! `other side` when only the other side's clauses check it. Every excuse is quoted.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::check::{Catalog, Side, Verdict};
use harness_protocol::wire::TransportKind;

/// What a run says of one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StatementStatus {
    /// A clause of the judged side it maps to failed.
    Failed,
    /// A clause of the judged side it maps to was checked, none failed.
    Checked,
    /// It maps to clauses of the judged side, none checked by an executed case.
    Unchecked,
    /// It maps to no clause of the judged side and has an excuse.
    Excused,
    /// Only clauses of the other side check it.
    OtherSide,
}

impl StatementStatus {
    /// The word reports print (and the HTML class it is coloured by).
    pub fn as_str(self) -> &'static str {
        match self {
            StatementStatus::Failed => "failed",
            StatementStatus::Checked => "checked",
            StatementStatus::Unchecked => "unchecked",
            StatementStatus::Excused => "excused",
            StatementStatus::OtherSide => "other side",
        }
    }

    fn class(self) -> &'static str {
        match self {
            StatementStatus::Failed => "fail",
            StatementStatus::Checked => "pass",
            StatementStatus::Unchecked => "warn",
            StatementStatus::Excused | StatementStatus::OtherSide => "skip",
        }
    }
}

/// One statement's row.
#[derive(Clone, Debug, PartialEq)]
pub struct StatementCoverage {
    /// Its id, e.g. `5.5.4`.
    pub id: String,
    /// Its SPEC.md text.
    pub text: String,
    /// The clauses of the judged side it maps to.
    pub clauses: Vec<String>,
    /// What the run says of it.
    pub status: StatementStatus,
    /// Why it is not (fully) checked, when the table says.
    pub excuse: Option<String>,
}

/// The rows, in table order (empty for a corpus without `statements.toml`).
pub(crate) fn statement_coverage(
    catalog: &Catalog,
    side: Side,
    covered: &BTreeSet<String>,
    matrix: &BTreeMap<String, BTreeMap<TransportKind, Verdict>>,
) -> Vec<StatementCoverage> {
    catalog
        .statements()
        .iter()
        .map(|statement| {
            let clauses: Vec<String> = statement
                .clauses
                .iter()
                .filter(|id| catalog.get(id).is_some_and(|clause| clause.side == side))
                .cloned()
                .collect();
            let failed = clauses.iter().any(|id| {
                matrix
                    .get(id)
                    .is_some_and(|row| row.values().any(|verdict| *verdict == Verdict::Fail))
            });
            let status = if failed {
                StatementStatus::Failed
            } else if clauses.iter().any(|id| covered.contains(id)) {
                StatementStatus::Checked
            } else if !clauses.is_empty() {
                StatementStatus::Unchecked
            } else if statement.excuse.is_some() {
                StatementStatus::Excused
            } else {
                StatementStatus::OtherSide
            };
            StatementCoverage {
                id: statement.id.clone(),
                text: statement.text.clone(),
                clauses,
                status,
                excuse: statement.excuse.clone(),
            }
        })
        .collect()
}

/// How many rows have each status, in status order.
pub(crate) fn status_counts(rows: &[StatementCoverage]) -> BTreeMap<StatementStatus, usize> {
    let mut counts = BTreeMap::new();
    for row in rows {
        *counts.entry(row.status).or_insert(0) += 1;
    }
    counts
}

/// The sentence of figures: `239 statements of SPEC.md: 150 checked (0 failed), ...`.
fn figures(rows: &[StatementCoverage], figure: fn(usize) -> String) -> String {
    let counts = status_counts(rows);
    let count = |status| figure(counts.get(&status).copied().unwrap_or(0));
    format!(
        "{} statements of SPEC.md: {} checked, {} failed, {} mapped but not checked by this run, {} excused, {} checked on the other side only.",
        figure(rows.len()),
        count(StatementStatus::Checked),
        count(StatementStatus::Failed),
        count(StatementStatus::Unchecked),
        count(StatementStatus::Excused),
        count(StatementStatus::OtherSide)
    )
}

/// The coverage as Markdown: the figures, the statements not checked, and every excuse on
/// one line.
pub(crate) fn statements_markdown(rows: &[StatementCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Coverage by SPEC.md statement\n\n");
    let _ = writeln!(out, "{}", figures(rows, |figure| figure.to_string()));
    let open: Vec<&str> = rows
        .iter()
        .filter(|row| {
            matches!(
                row.status,
                StatementStatus::Failed | StatementStatus::Unchecked
            )
        })
        .map(|row| row.id.as_str())
        .collect();
    if !open.is_empty() {
        let _ = writeln!(out, "Failed or not checked: {}.", open.join(", "));
    }
    out.push_str("\nExcuses (why a statement is not, or only in part, checked):\n\n");
    for row in rows {
        if let Some(excuse) = &row.excuse {
            let _ = writeln!(out, "- {} \"{}\": {excuse}", row.id, row.text);
        }
    }
    out
}

/// The coverage as HTML (escaped): the figures, a table of every statement, and every
/// excuse quoted on one line.
pub(crate) fn statements_html(rows: &[StatementCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let escape = super::escape;
    let mut out = String::from("<h2>Coverage by SPEC.md statement</h2>");
    let _ = write!(
        out,
        "<p id=\"statement-coverage\">{}</p><table id=\"statements\"><tr><th>statement</th><th>SPEC.md</th><th>clauses</th><th>status</th></tr>",
        figures(rows, |figure| format!("<b>{figure}</b>"))
    );
    for row in rows {
        let _ = write!(
            out,
            "<tr data-statement=\"{0}\"><td>{0}</td><td>{1}</td><td>{2}</td><td class=\"{3}\">{4}</td></tr>",
            escape(&row.id),
            escape(&row.text),
            escape(&row.clauses.join(", ")),
            row.status.class(),
            row.status.as_str()
        );
    }
    out.push_str("</table><h3>Excuses</h3><ul id=\"excuses\">");
    for row in rows {
        if let Some(excuse) = &row.excuse {
            let _ = write!(
                out,
                "<li class=\"excuse\" data-statement=\"{0}\"><code>{0}</code> &ldquo;{1}&rdquo;: {2}</li>",
                escape(&row.id),
                escape(&row.text),
                escape(excuse)
            );
        }
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
mod tests;
