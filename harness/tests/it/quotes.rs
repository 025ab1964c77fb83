//! Every `must` clause quotes the SPEC.md words it enforces, and every quote is found in
//! `spec/SPEC.md`, the repository's copy of SPEC.md (see `cases/clauses.toml` for how quotes
//! are compared: whitespace runs as one space, backticks and table pipes dropped).

use std::path::{Path, PathBuf};

use harness::check::{Catalog, Level};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec() -> String {
    std::fs::read_to_string(root().join("spec/SPEC.md")).expect("spec/SPEC.md is in the repository")
}

#[test]
fn spec_copy_is_interface_2_1_1() {
    let spec = spec();
    assert!(spec.starts_with("# Derivatives Trading Platform JSON-RPC API\n"));
    assert!(
        spec.contains("- The interface version is 2.1.1; the HTTP path prefix is `/api/v2`."),
        "spec/SPEC.md must be SPEC.md of interface 2.1.1"
    );
}

#[test]
fn every_must_clause_quotes_spec_words_found_in_spec_md() {
    let path = root().join("cases/clauses.toml");
    let catalog = Catalog::load(&path).unwrap();
    let problems: Vec<String> = catalog
        .quote_problems(&spec())
        .into_iter()
        .map(|problem| format!("{}:{problem}", path.display()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let must = catalog
        .iter()
        .filter(|clause| clause.level == Level::Must)
        .count();
    assert!(must >= 90, "only {must} must clauses");
}

#[test]
fn every_clause_below_must_says_why_or_quotes_what_it_describes() {
    let catalog = Catalog::load(&root().join("cases/clauses.toml")).unwrap();
    let silent: Vec<&str> = catalog
        .iter()
        .filter(|clause| clause.level != Level::Must)
        .filter(|clause| clause.quote.is_empty() && clause.note.is_none())
        .map(|clause| clause.id.as_str())
        .collect();
    assert_eq!(silent, Vec::<&str>::new());
}
