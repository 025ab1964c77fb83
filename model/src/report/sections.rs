//! Coverage by SPEC.md section: for each section, the rules of the judged side the catalog
//! holds, how many the run checked and which failed. Sections with no rule are listed too,
//! so a green run says plainly which parts of SPEC.md it speaks for.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::check::{Catalog, Level, Side, Verdict};
use harness_protocol::spec::SECTIONS;
use harness_protocol::wire::TransportKind;

/// One section's row.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionCoverage {
    /// The section number.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Clauses of the judged side citing the section, as `id (level)`.
    pub rules: Vec<String>,
    /// Those checked by an executed case.
    pub checked: usize,
    /// Those a result failed.
    pub failed: Vec<String>,
}

/// The rows, in SPEC.md's order.
pub(crate) fn section_coverage(
    catalog: &Catalog,
    side: Side,
    covered: &BTreeSet<String>,
    matrix: &BTreeMap<String, BTreeMap<TransportKind, Verdict>>,
) -> Vec<SectionCoverage> {
    SECTIONS
        .iter()
        .map(|section| {
            let clauses: Vec<_> = catalog
                .iter()
                .filter(|clause| clause.side == side && clause.section == section.id)
                .collect();
            let failed = clauses
                .iter()
                .filter(|clause| {
                    matrix
                        .get(&clause.id)
                        .is_some_and(|row| row.values().any(|verdict| *verdict == Verdict::Fail))
                })
                .map(|clause| clause.id.clone())
                .collect();
            SectionCoverage {
                id: section.id,
                title: section.title,
                rules: clauses
                    .iter()
                    .map(|clause| format!("{} ({})", clause.id, level_name(clause.level)))
                    .collect(),
                checked: clauses
                    .iter()
                    .filter(|clause| covered.contains(&clause.id))
                    .count(),
                failed,
            }
        })
        .collect()
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Must => "must",
        Level::Warn => "warn",
        Level::Info => "info",
    }
}

/// The table as Markdown.
pub(crate) fn sections_markdown(rows: &[SectionCoverage]) -> String {
    let mut out = String::from(
        "\n## Coverage by SPEC.md section\n\n| section | rules | checked | failed |\n|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} {} | {} | {} | {} |",
            row.id,
            row.title.replace('|', "\\|"),
            row.rules.len(),
            row.checked,
            row.failed.join(", ")
        );
    }
    out
}

/// The table as HTML (escaped).
pub(crate) fn sections_html(rows: &[SectionCoverage]) -> String {
    let escape = super::escape;
    let mut out = String::from(
        "<h2>Coverage by SPEC.md section</h2><table id=\"sections\"><tr><th>section</th><th>rules</th><th>checked</th><th>failed</th></tr>",
    );
    for row in rows {
        let class = if !row.failed.is_empty() {
            "fail"
        } else if row.rules.is_empty() {
            "skip"
        } else {
            "pass"
        };
        let _ = write!(
            out,
            "<tr data-section=\"{0}\"><td>{0} {1}</td><td title=\"{2}\">{3}</td><td class=\"{class}\">{4}</td><td>{5}</td></tr>",
            escape(row.id),
            escape(row.title),
            escape(&row.rules.join(", ")),
            row.rules.len(),
            row.checked,
            escape(&row.failed.join(", "))
        );
    }
    out.push_str("</table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_count_rules_checked_and_failed_per_section_and_keep_empty_sections() {
        let catalog = Catalog::of_clauses(&[
            ("a.one", "4.8", Level::Info, Side::Server),
            ("a.two", "4.8", Level::Warn, Side::Server),
            ("c.one", "4.8", Level::Info, Side::Client),
        ]);
        let covered = BTreeSet::from(["a.one".to_owned(), "a.two".to_owned()]);
        let matrix = BTreeMap::from([(
            "a.two".to_owned(),
            BTreeMap::from([(TransportKind::Ws, Verdict::Fail)]),
        )]);
        let rows = section_coverage(&catalog, Side::Server, &covered, &matrix);
        assert_eq!(rows.len(), SECTIONS.len());
        let log = rows.iter().find(|row| row.id == "4.8").unwrap();
        assert_eq!(log.rules, vec!["a.one (info)", "a.two (warn)"]);
        assert_eq!(
            (log.checked, log.failed.clone()),
            (2, vec!["a.two".to_owned()])
        );
        let events = rows.iter().find(|row| row.id == "6").unwrap();
        assert!(events.rules.is_empty());
        let markdown = sections_markdown(&rows);
        assert!(
            markdown.contains("| 4.8 `private/get_transaction_log` | 2 | 2 | a.two |"),
            "{markdown}"
        );
        let html = sections_html(&rows);
        assert!(html.contains("<tr data-section=\"6\"><td>6 Events</td><td title=\"\">0</td><td class=\"skip\">0</td>"), "{html}");
    }
}
