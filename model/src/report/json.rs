//! `report.json`: the machine-readable result, redacted, with each clause the results cite
//! (its level, statement and SPEC.md quote).

use serde_json::{Value, json};

use super::{Context, Summary, reproduction};
use crate::check::Verdict;

/// Renders `report.json`.
pub fn render_json(context: &Context<'_>, summary: &Summary) -> String {
    let redactor = &context.report.redactor;
    let results: Vec<Value> = context
        .report
        .results
        .iter()
        .map(|result| {
            let exchanges: Vec<Value> = result
                .exchanges
                .iter()
                .map(|exchange| redactor.json(&serde_json::to_value(exchange).unwrap_or(Value::Null)))
                .collect();
            let mut entry = json!({
                "case": result.case,
                "title": result.title,
                "path": result.path,
                "transport": result.transport,
                "verdict": result.verdict,
                "clauses": result.clauses,
                "checks": result.checks,
                "message": redactor.text(&result.message),
                "findings": redactor.json(&serde_json::to_value(&result.findings).unwrap_or(Value::Null)),
                "notes": result.notes.iter().map(|note| redactor.text(note)).collect::<Vec<_>>(),
                "duration_ms": (result.duration_ms * 1000.0).round() / 1000.0,
                "exchanges": exchanges,
            });
            if matches!(
                result.verdict,
                Verdict::Fail | Verdict::Warn | Verdict::Error | Verdict::Xfail
            ) {
                entry["reproduce"] = json!(reproduction(context, result));
            }
            entry
        })
        .collect();
    let summary_counts: serde_json::Map<String, Value> = Verdict::ALL
        .iter()
        .map(|verdict| {
            (
                verdict.as_str().to_owned(),
                Value::from(summary.count(*verdict)),
            )
        })
        .collect();
    let clauses = cited_clauses(context);
    let report = json!({
        "target": context.report.target,
        "harness_version": env!("CARGO_PKG_VERSION"),
        "spec_version": harness_protocol::spec::INTERFACE_VERSION,
        "duration_ms": (context.report.duration.as_secs_f64() * 1000.0).round(),
        "interrupted": context.report.interrupted,
        "summary": summary_counts,
        "results": results,
        "clauses": clauses,
        "coverage": {
            "must_total": summary.must_total,
            "must_covered": summary.must_covered,
            "uncovered": summary.uncovered,
            "sections": summary.sections.iter().map(|row| json!({
                "section": row.id,
                "title": row.title,
                "rules": row.rules,
                "checked": row.checked,
                "failed": row.failed,
            })).collect::<Vec<_>>(),
            "statements": statements_json(summary),
            "domains": domains_json(summary),
        },
    });
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    redactor.text(&text)
}

/// Every clause the results cite (case clauses, checks and findings), by id: its section,
/// level, statement, SPEC.md quote and note.
fn cited_clauses(context: &Context<'_>) -> serde_json::Map<String, Value> {
    let mut cited = std::collections::BTreeSet::new();
    for result in &context.report.results {
        cited.extend(result.clauses.iter().chain(&result.checks));
        cited.extend(result.findings.iter().flat_map(|finding| &finding.clauses));
    }
    context
        .catalog
        .clauses_of(cited)
        .into_iter()
        .map(|clause| {
            let mut entry = json!({
                "section": clause.section,
                "level": clause.level.as_str(),
                "text": clause.text,
                "quote": clause.quote,
            });
            if let Some(note) = &clause.note {
                entry["note"] = json!(note);
            }
            (clause.id.clone(), entry)
        })
        .collect()
}

/// Coverage by rule domain: per must clause, each point of its domain and what the run
/// did there (`checked`, `failed`, `skipped` with the reason, `not_run`).
fn domains_json(summary: &Summary) -> Value {
    summary
        .domains
        .iter()
        .map(|row| {
            let points: Vec<Value> = row
                .points
                .iter()
                .map(|(point, status)| {
                    let mut entry = json!({
                        "dimension": point.dimension().as_str(),
                        "point": point.as_str(),
                        "status": status.as_str().replace(' ', "_"),
                    });
                    if let super::PointStatus::Skipped(reason) = status {
                        entry["reason"] = json!(reason);
                    }
                    entry
                })
                .collect();
            json!({ "clause": row.clause, "points": points })
        })
        .collect()
}

/// Coverage by statement: the count of each status, and the statements failed or not
/// checked.
fn statements_json(summary: &Summary) -> Value {
    let counts: serde_json::Map<String, Value> =
        super::statements::status_counts(&summary.statements)
            .into_iter()
            .map(|(status, count)| (status.as_str().replace(' ', "_"), Value::from(count)))
            .collect();
    let open: Vec<&str> = summary
        .statements
        .iter()
        .filter(|row| {
            matches!(
                row.status,
                super::StatementStatus::Failed | super::StatementStatus::Unchecked
            )
        })
        .map(|row| row.id.as_str())
        .collect();
    json!({ "total": summary.statements.len(), "counts": counts, "open": open })
}
