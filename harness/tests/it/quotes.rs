//! Every `must` clause quotes the SPEC.md words it enforces, and every quote is found in
//! `cases/SPEC.md`, the repository's copy of SPEC.md (see `cases/clauses.toml` for how quotes
//! are compared: whitespace runs as one space, backticks and table pipes dropped).

use std::path::{Path, PathBuf};

use harness::check::{Catalog, Level};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec() -> String {
    std::fs::read_to_string(root().join("cases/SPEC.md"))
        .expect("cases/SPEC.md is in the repository")
}

#[test]
fn spec_copy_is_interface_2_1_1() {
    let spec = spec();
    assert!(spec.starts_with("# Derivatives Trading Platform JSON-RPC API\n"));
    assert!(
        spec.contains("- The interface version is 2.1.1; the HTTP path prefix is `/api/v2`."),
        "cases/SPEC.md must be SPEC.md of interface 2.1.1"
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

#[test]
fn reports_show_the_quote_beside_the_failure() {
    let out = std::env::temp_dir().join(format!("harness-it-quotes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--quiet", "--fault", "sig-window-wide"])
        .args(["--filter", "auth.client_signature_stale", "--out"])
        .arg(&out)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let quote =
        "The timestamp is valid for 60 seconds from generation; older timestamps are rejected.";
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        markdown.contains(&format!(
            "> `auth.client_signature.window` (SPEC.md 5.5, must): \"{quote}\""
        )),
        "{markdown}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<blockquote class=\"quote\" data-clause=\"auth.client_signature.window\">")
            && html.contains(&format!("<p>&ldquo;{quote}&rdquo;</p>")),
        "{html}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        json["clauses"]["auth.client_signature.window"]["quote"][0],
        quote
    );
    assert_eq!(
        json["clauses"]["auth.client_signature.window"]["level"],
        "must"
    );
    let _ = std::fs::remove_dir_all(&out);
}
