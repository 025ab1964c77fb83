//! Tests of coverage by statement and its two renderings.

use std::path::Path;

use super::*;
use crate::check::{Level, Statements};

const TABLE: &str = "[[statement]]\nid = \"5.5.4\"\ntext = \"older timestamps are rejected.\"\nclauses = [\"a.window\"]\n\
[[statement]]\nid = \"5.5.5\"\ntext = \"The nonce is single use.\"\nclauses = [\"a.nonce\"]\n\
[[statement]]\nid = \"5.4.4\"\ntext = \"Tokens last <expires_in> seconds.\"\nclauses = [\"a.expires\"]\nexcuse = \"needs more than a run\"\n\
[[statement]]\nid = \"6.1\"\ntext = \"Events: not shown.\"\nexcuse = \"not shown: the channels\"\n\
[[statement]]\nid = \"9.3\"\ntext = \"clients must tolerate unknown values.\"\nclauses = [\"c.tolerant\"]\n";

fn rows() -> Vec<StatementCoverage> {
    let catalog = Catalog::of_clauses(&[
        ("a.window", "5.5", Level::Must, Side::Server),
        ("a.nonce", "5.5", Level::Must, Side::Server),
        ("a.expires", "5.4", Level::Info, Side::Server),
        ("c.tolerant", "9", Level::Must, Side::Client),
    ])
    .with_statements(Statements::parse(Path::new("statements.toml"), TABLE).unwrap());
    let covered = BTreeSet::from(["a.window".to_owned(), "a.nonce".to_owned()]);
    let matrix = BTreeMap::from([(
        "a.nonce".to_owned(),
        BTreeMap::from([(TransportKind::Ws, Verdict::Fail)]),
    )]);
    statement_coverage(&catalog, Side::Server, &covered, &matrix)
}

#[test]
fn each_statement_gets_the_status_its_clauses_earn_this_run() {
    let rows = rows();
    let statuses: Vec<(&str, StatementStatus)> = rows
        .iter()
        .map(|row| (row.id.as_str(), row.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("5.5.4", StatementStatus::Checked),
            ("5.5.5", StatementStatus::Failed),
            ("5.4.4", StatementStatus::Unchecked),
            ("6.1", StatementStatus::Excused),
            ("9.3", StatementStatus::OtherSide),
        ]
    );
}

#[test]
fn both_reports_give_the_figures_and_quote_every_excuse_on_one_line() {
    let rows = rows();
    let markdown = statements_markdown(&rows);
    assert!(markdown.contains("5 statements of SPEC.md: 1 checked, 1 failed, 1 mapped but not checked by this run, 1 excused, 1 checked on the other side only."), "{markdown}");
    assert!(
        markdown.contains("Failed or not checked: 5.5.5, 5.4.4."),
        "{markdown}"
    );
    assert!(markdown.contains("- 6.1 \"Events: not shown.\": not shown: the channels\n"));
    assert!(
        markdown.contains("- 5.4.4 \"Tokens last <expires_in> seconds.\": needs more than a run\n")
    );
    let html = statements_html(&rows);
    assert!(html.contains("<li class=\"excuse\" data-statement=\"6.1\"><code>6.1</code> &ldquo;Events: not shown.&rdquo;: not shown: the channels</li>"), "{html}");
    assert!(html.contains(
        "&ldquo;Tokens last &lt;expires_in&gt; seconds.&rdquo;: needs more than a run</li>"
    ));
    assert!(html.contains("<td class=\"fail\">failed</td>"));
    assert_eq!(html.matches("<li class=\"excuse\"").count(), 2);
}

#[test]
fn a_corpus_without_a_table_renders_nothing() {
    assert_eq!(statements_markdown(&[]), "");
    assert_eq!(statements_html(&[]), "");
}
