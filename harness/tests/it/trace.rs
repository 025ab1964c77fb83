//! The traceability table (`cases/statements.toml`): every statement of SPEC.md that the
//! rule of `check::spec_statements` finds is mapped to clauses of the catalog or excused in
//! one line, every mapped text is still in SPEC.md, and every mapped clause exists.

use std::path::{Path, PathBuf};

use harness::check::{Catalog, Level, SpecText, StatementKind, spec_statements};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec() -> String {
    std::fs::read_to_string(root().join("cases/SPEC.md"))
        .expect("cases/SPEC.md is in the repository")
}

fn catalog() -> Catalog {
    Catalog::load(&root().join("cases/clauses.toml")).expect("catalog and statement table load")
}

#[test]
fn every_statement_of_spec_md_is_mapped_or_excused() {
    let catalog = catalog();
    let path = root().join("cases/statements.toml");
    let problems: Vec<String> = catalog
        .statements()
        .problems(&spec(), &catalog)
        .into_iter()
        .map(|problem| format!("{}:{problem}", path.display()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_rule_finds_rows_and_sentences_of_every_section() {
    let spec = spec();
    let found = spec_statements(&spec);
    let rows = found
        .iter()
        .filter(|statement| statement.kind == StatementKind::Row)
        .count();
    assert!(rows >= 100, "only {rows} table rows");
    assert!(found.len() >= 230, "only {} statements", found.len());
    let text = SpecText::new(&spec);
    let lost: Vec<&str> = found
        .iter()
        .map(|statement| statement.text.as_str())
        .filter(|statement| !text.contains(statement))
        .collect();
    assert_eq!(lost, Vec::<&str>::new(), "a statement is not SPEC.md text");
    for must_be_found in [
        "The timestamp is valid for 60 seconds from generation; older timestamps are rejected.",
        "count | integer | 1 to 250; default 100",
        "Disabling ends any active session of that subaccount immediately.",
        "Tokens last `expires_in` seconds.",
    ] {
        assert!(
            found
                .iter()
                .any(|statement| statement.text == must_be_found),
            "{must_be_found}"
        );
    }
}

#[test]
fn every_must_clause_is_traced_to_a_statement() {
    let catalog = catalog();
    let traced: std::collections::BTreeSet<&str> = catalog
        .statements()
        .iter()
        .flat_map(|statement| statement.clauses.iter().map(String::as_str))
        .collect();
    let untraced: Vec<&str> = catalog
        .iter()
        .filter(|clause| clause.level == Level::Must && !traced.contains(clause.id.as_str()))
        .map(|clause| clause.id.as_str())
        .collect();
    assert_eq!(untraced, Vec::<&str>::new());
}

#[test]
fn every_excuse_is_one_line_and_says_why() {
    let catalog = catalog();
    let excused: Vec<_> = catalog
        .statements()
        .iter()
        .filter_map(|statement| {
            statement
                .excuse
                .as_deref()
                .map(|excuse| (statement, excuse))
        })
        .collect();
    assert!(excused.len() >= 30, "only {} excuses", excused.len());
    for (statement, excuse) in excused {
        assert!(
            !excuse.contains('\n') && excuse.len() >= 10,
            "statement {}: {excuse:?}",
            statement.id
        );
    }
}

#[test]
fn report_html_quotes_every_excuse_on_one_line_beside_coverage_by_statement() {
    let out = std::env::temp_dir().join(format!("harness-it-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "run",
            "--quiet",
            "--filter",
            "auth.client_signature_stale",
            "--out",
        ])
        .arg(&out)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Coverage by SPEC.md statement</h2>"));
    assert!(html.contains("<tr data-statement=\"5.5.4\">"), "{html}");
    let catalog = catalog();
    for statement in catalog.statements().iter() {
        if let Some(excuse) = &statement.excuse {
            let line = format!(
                "<li class=\"excuse\" data-statement=\"{0}\"><code>{0}</code> &ldquo;{1}&rdquo;: {2}</li>",
                statement.id,
                harness::report::escape(&statement.text),
                harness::report::escape(excuse)
            );
            assert!(html.contains(&line), "{line}");
        }
    }
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        markdown.contains("## Coverage by SPEC.md statement"),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        json["coverage"]["statements"]["total"],
        catalog.statements().len()
    );
    let _ = std::fs::remove_dir_all(&out);
}
