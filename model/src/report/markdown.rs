//! `report.md`: the summary, then failures first with their findings, the SPEC.md words
//! each finding's clause enforces, and reproduction.

use std::fmt::Write;

use super::{Context, Summary, failures_first, is_noteworthy, known_failures, shown_reproduction};
use crate::check::Verdict;
use crate::results::CaseResult;

/// Renders `report.md`.
pub fn render_markdown(context: &Context<'_>, summary: &Summary) -> String {
    let report = context.report;
    let mut out = String::new();
    let _ = writeln!(out, "# Conformance report: {}\n", report.target);
    let _ = writeln!(out, "{}.\n", super::provenance(report, ", "));
    if let Some(reason) = &report.interrupted {
        let note = super::not_run_note(|words| format!("\"{words}\""));
        let _ = writeln!(out, "**Interrupted: {reason}.** {note}\n");
    }
    let names: Vec<&str> = Verdict::ALL
        .iter()
        .map(|verdict| verdict.as_str())
        .collect();
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .map(|verdict| summary.count(*verdict).to_string())
        .collect();
    let _ = writeln!(
        out,
        "| {} |\n|{}\n| {} |\n",
        names.join(" | "),
        "---|".repeat(names.len()),
        counts.join(" | ")
    );
    let coverage = super::coverage_sentence(
        summary,
        report.side,
        |figure| figure.to_string(),
        |word| format!("`{word}`"),
    );
    let _ = writeln!(out, "{coverage}");
    if !summary.uncovered.is_empty() {
        let _ = writeln!(out, "Not checked: {}.", summary.uncovered.join(", "));
    }
    out.push_str(&super::sections::sections_markdown(&summary.sections));
    out.push_str(&super::statements::statements_markdown(&summary.statements));
    out.push_str(&super::domains::domains_markdown(&summary.domains));
    results_markdown(&mut out, context);
    known_markdown(&mut out, report);
    report.redactor.text(&out)
}

/// The results other than pass, failures first, each with its findings, quotes and
/// reproduction.
fn results_markdown(out: &mut String, context: &Context<'_>) {
    let report = context.report;
    let noteworthy: Vec<_> = failures_first(report)
        .into_iter()
        .filter(|result| is_noteworthy(result))
        .collect();
    if !noteworthy.is_empty() {
        let _ = writeln!(out, "\n## Results other than pass\n");
    }
    for result in noteworthy {
        let _ = writeln!(
            out,
            "### {} `{}` [{}]\n",
            result.verdict.as_str().to_uppercase(),
            result.case,
            result.transport
        );
        let _ = writeln!(
            out,
            "{}  \nClauses: {}  \n{}\n",
            result.title,
            result.clauses.join(", "),
            result.message
        );
        for finding in result.findings.iter().skip(1) {
            let _ = writeln!(out, "- {}", super::finding_line(finding));
        }
        out.push_str(&quotes(context, result));
        if let Some(commands) = shown_reproduction(context, result) {
            let _ = writeln!(out, "\n```sh\n{commands}\n```\n");
        }
    }
}

/// The failures the expectations file lists, in a table.
fn known_markdown(out: &mut String, report: &crate::results::RunReport) {
    let known = known_failures(report);
    if !known.is_empty() {
        let _ = writeln!(
            out,
            "\n## Known failures\n\nListed in the expectations file: `xfail` still fails and does not fail the run; `fixed` passes now and its entry can go.\n\n| verdict | case | transport | clauses | reason |\n|---|---|---|---|---|"
        );
        for result in known {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} |",
                result.verdict,
                result.case,
                result.transport,
                result.clauses.join(", "),
                result.message.replace('|', "\\|").replace('\n', " ")
            );
        }
    }
}

/// The SPEC.md words of each clause a failing or warning finding of the result cites, as
/// block quotes; a clause without a quote shows its note (why SPEC.md does not make the
/// finding a failure).
fn quotes(context: &Context<'_>, result: &CaseResult) -> String {
    let mut out = String::new();
    for clause in super::quoted_clauses(context, result) {
        let words = if clause.quote.is_empty() {
            clause.note.clone().unwrap_or_default()
        } else {
            clause
                .quote
                .iter()
                .map(|quote| format!("\"{}\"", quote.trim()))
                .collect::<Vec<_>>()
                .join(" … ")
        };
        if words.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n> `{}` (SPEC.md {}, {}): {}",
            clause.id,
            clause.section,
            clause.level.as_str(),
            words
        );
    }
    out
}
