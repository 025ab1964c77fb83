//! Tests of the statement rule and the traceability table's loader and problems.

use std::path::Path;

use super::*;
use crate::check::{Level, Side};

const SPEC: &str = "# Title\n\nIntro one. Intro two.\n\n## 1. What\n\nTransports:\n- WebSocket: the token goes in `access_token`.\n\n\
| Field | Type | Rule |\n|---|---|---|\n| id | integer | echoes the request id |\n| empty | string | |\n\n\
## 5. Authentication\n\n5.5 Client signature (WebSocket):\n- The timestamp is valid for 60 seconds; older ones are rejected. The nonce is single use.\n\
5.6 Basic is accepted.\n1. `client_credentials`: send `client_id`.\n";

fn texts(spec: &str) -> Vec<(String, String)> {
    spec_statements(spec)
        .into_iter()
        .map(|statement| {
            (
                format!("{}.{}", statement.section, statement.ordinal),
                statement.text,
            )
        })
        .collect()
}

#[test]
fn rows_with_a_rule_and_sentences_are_statements_and_labels_are_not() {
    let pairs: Vec<(&str, &str)> = vec![
        ("0.1", "Intro one."),
        ("0.2", "Intro two."),
        ("1.1", "WebSocket: the token goes in `access_token`."),
        ("1.2", "id | integer | echoes the request id"),
        (
            "5.5.1",
            "The timestamp is valid for 60 seconds; older ones are rejected.",
        ),
        ("5.5.2", "The nonce is single use."),
        ("5.6.1", "Basic is accepted."),
        ("5.6.2", "`client_credentials`: send `client_id`."),
    ];
    let expected: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(id, text)| (id.to_owned(), text.to_owned()))
        .collect();
    assert_eq!(texts(SPEC), expected);
}

fn catalog() -> Catalog {
    Catalog::of_clauses(&[("auth.window", "5.5", Level::Must, Side::Server)])
}

fn table(entries: &str) -> Result<Statements, FileError> {
    Statements::parse(Path::new("statements.toml"), entries)
}

const FULL: &str = "[[statement]]\nid = \"0.1\"\ntext = \"Intro one.\"\nexcuse = \"describes only\"\n\
[[statement]]\nid = \"0.2\"\ntext = \"Intro two.\"\nexcuse = \"describes only\"\n\
[[statement]]\nid = \"1.1\"\ntext = \"WebSocket: the token goes in `access_token`.\"\nclauses = [\"auth.window\"]\n\
[[statement]]\nid = \"1.2\"\ntext = \"id | integer | echoes the request id\"\nclauses = [\"auth.window\"]\n\
[[statement]]\nid = \"5.5.1\"\ntext = \"The timestamp is valid for 60 seconds; older ones are rejected.\"\nclauses = [\"auth.window\"]\n\
[[statement]]\nid = \"5.5.2\"\ntext = \"The nonce is single use.\"\nclauses = [\"auth.window\"]\n\
[[statement]]\nid = \"5.6.1\"\ntext = \"Basic is accepted.\"\nclauses = [\"auth.window\"]\n\
[[statement]]\nid = \"5.6.2\"\ntext = \"`client_credentials`: send `client_id`.\"\nclauses = [\"auth.window\"]\n";

#[test]
fn a_complete_table_has_no_problems() {
    let statements = table(FULL).unwrap();
    assert_eq!(statements.len(), 8);
    assert_eq!(statements.iter().nth(4).unwrap().section(), "5.5");
    assert_eq!(statements.problems(SPEC, &catalog()), Vec::<String>::new());
}

#[test]
fn an_unmapped_statement_a_changed_text_and_an_unknown_clause_are_problems() {
    let statements = table(&FULL.replace("single use", "used once").replace(
        "clauses = [\"auth.window\"]\n[[statement]]\nid = \"5.6.1\"",
        "clauses = [\"auth.windw\"]\n[[statement]]\nid = \"5.6.1\"",
    ))
    .unwrap();
    let problems = statements.problems(SPEC, &catalog());
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].starts_with("0: SPEC.md line 18 states \"The nonce is single use.\""));
    assert!(
        problems[0].contains("add it as id \"5.5.3\""),
        "{}",
        problems[0]
    );
    assert!(problems[1].contains("the text of statement \"5.5.2\" is no longer a statement"));
    assert!(problems[2].contains("maps to clause \"auth.windw\""));
}

#[test]
fn a_statement_under_another_section_is_a_problem() {
    let statements = table(&FULL.replace("id = \"5.6.1\"", "id = \"5.5.9\"")).unwrap();
    let problems = statements.problems(SPEC, &catalog());
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("is in SPEC.md section 5.6"));
}

#[test]
fn malformed_entries_are_errors_with_their_line() {
    let cases = [
        (
            "[[statement]]\nid = \"5\"\ntext = \"t\"\nexcuse = \"e\"\n",
            1,
            "not a section plus an ordinal",
        ),
        (
            "[[statement]]\nid = \"5.1\"\ntext = \"t\"\n",
            1,
            "neither clauses nor an excuse",
        ),
        (
            "[[statement]]\nid = \"5.1\"\ntext = \"t\"\nexcuse = \"a\\nb\"\n",
            1,
            "not one line",
        ),
        (
            "[[statement]]\nid = \"5.1\"\ntext = \"t\"\nexcuse = \"e\"\n[[statement]]\nid = \"5.1\"\ntext = \"u\"\nexcuse = \"e\"\n",
            5,
            "duplicate statement id \"5.1\" (first at line 1)",
        ),
        (
            "[[statement]]\nid = \"5.1\"\ntext = \"t\"\nexcuses = \"e\"\n",
            4,
            "unknown field",
        ),
    ];
    for (text, line, message) in cases {
        let error = table(text).unwrap_err();
        assert_eq!(error.line, line, "{error}");
        assert!(error.message.contains(message), "{error}");
    }
}
