//! The diff as terminal text and as Markdown for a pull-request comment.

use std::fmt::Write;

use super::{Change, Diff, Row};

/// Terminal text: one section per non-empty list, one line per execution, and a summary.
pub fn render_text(diff: &Diff) -> String {
    let mut out = String::new();
    for (title, list) in changed(diff) {
        let _ = writeln!(out, "{title} ({}):", list.len());
        for change in list {
            let _ = writeln!(
                out,
                "  {}: {} (was {})",
                row_line(&change.after),
                one_line(&change.after.message),
                change.before.verdict
            );
        }
    }
    for (title, rows) in came_or_went(diff) {
        let _ = writeln!(out, "{title} ({}):", rows.len());
        for row in rows {
            let _ = writeln!(out, "  {}", row_line(row));
        }
    }
    let _ = writeln!(out, "{}", headline(diff));
    out
}

/// An execution as a terminal line: `VERDICT case [transport] {clauses}`.
fn row_line(row: &Row) -> String {
    format!(
        "{:5} {} [{}] {{{}}}",
        row.verdict.as_str().to_uppercase(),
        row.case,
        row.transport,
        row.clauses.join(", ")
    )
}

/// Markdown for a pull-request comment: a headline, then a table per non-empty list.
pub fn render_markdown(diff: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Conformance: {}\n", headline(diff));
    if diff.is_empty() {
        let _ = writeln!(out, "No execution changed its outcome.");
        return out;
    }
    for (title, list) in changed(diff) {
        out.push_str(&table_head(
            title,
            list.len(),
            &["now", "was", "case", "transport", "clauses", "message"],
        ));
        for Change { before, after } in list.iter() {
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} | {} |",
                after.verdict,
                before.verdict,
                cell(&after.case),
                cell(&after.transport),
                cell(&after.clauses.join(", ")),
                cell(&after.message)
            );
        }
        out.push('\n');
    }
    for (title, rows) in came_or_went(diff) {
        out.push_str(&table_head(
            title,
            rows.len(),
            &["verdict", "case", "transport", "clauses"],
        ));
        for Row {
            case,
            transport,
            verdict,
            clauses,
            ..
        } in rows.iter()
        {
            let _ = writeln!(
                out,
                "| {verdict} | `{}` | {} | {} |",
                cell(case),
                cell(transport),
                cell(&clauses.join(", "))
            );
        }
        out.push('\n');
    }
    out
}

/// A Markdown table's title with the number of its rows, then its head of `columns`.
fn table_head(title: &str, rows: usize, columns: &[&str]) -> String {
    format!(
        "#### {} ({rows})\n\n| {} |\n|{}\n",
        capitalized(title),
        columns.join(" | "),
        "---|".repeat(columns.len())
    )
}

/// The executions whose outcome changed (regressions, newly known failures, newly passing),
/// each list with its title; empty lists left out.
fn changed(diff: &Diff) -> impl Iterator<Item = (&'static str, &[Change])> {
    [
        ("regressions", diff.regressions.as_slice()),
        ("newly known failures", diff.newly_known.as_slice()),
        ("newly passing", diff.newly_passing.as_slice()),
    ]
    .into_iter()
    .filter(|(_, list)| !list.is_empty())
}

/// The executions only one report has, added then removed, each list with its title;
/// empty lists left out.
fn came_or_went(diff: &Diff) -> impl Iterator<Item = (&'static str, &[Row])> {
    [
        ("added", diff.added.as_slice()),
        ("removed", diff.removed.as_slice()),
    ]
    .into_iter()
    .filter(|(_, rows)| !rows.is_empty())
}

/// A title with its first letter upper-case, for a Markdown heading.
fn capitalized(title: &str) -> String {
    let mut letters = title.chars();
    letters
        .next()
        .map(|first| first.to_uppercase().chain(letters).collect())
        .unwrap_or_default()
}

/// `2 regressions; 3 newly known failures, 1 newly passing, 0 added, 0 removed`.
fn headline(diff: &Diff) -> String {
    let regressions = diff.regressions.len();
    let lead = match regressions {
        0 => "no regression".to_owned(),
        1 => "1 regression".to_owned(),
        n => format!("{n} regressions"),
    };
    format!(
        "{lead}; {} newly known failures, {} newly passing, {} added, {} removed",
        diff.newly_known.len(),
        diff.newly_passing.len(),
        diff.added.len(),
        diff.removed.len()
    )
}

/// A message on one line.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Text safe inside a Markdown table cell (and inside backticks): no line breaks, no
/// column separator, no backtick.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|").replace('`', "'")
}
