//! Unit tests of the corpus: the embedded one is the repository's `cases/`, a directory
//! replaces it only whole, added case files join it and keep ids unique.

use std::path::{Path, PathBuf};

use super::*;

fn repository_cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-corpus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const EXTRA_CASE: &str = "id = \"team.ws_access_token\"\ntitle = \"a team's own case\"\nclauses = [\"auth.ws.access_token\"]\ntransports = [\"ws\"]\n\n[[step]]\ncall = \"private/get_mmp_status\"\nauth = { mode = \"bearer\" }\n";

#[test]
fn the_embedded_corpus_is_the_repository_one() {
    let embedded = Corpus::embedded().unwrap();
    let from_dir = Corpus::load(&CorpusSource {
        dir: Some(repository_cases()),
        added: Vec::new(),
    })
    .unwrap();
    let ids = |corpus: &Corpus| -> Vec<String> {
        corpus.cases.iter().map(|case| case.id.clone()).collect()
    };
    assert_eq!(ids(&embedded), ids(&from_dir));
    assert_eq!(
        embedded.catalog.ids().collect::<Vec<_>>(),
        from_dir.catalog.ids().collect::<Vec<_>>()
    );
    assert!(
        embedded.cases[0].path.starts_with("cases/"),
        "{:?}",
        embedded.cases[0].path
    );
}

#[test]
fn a_directory_without_a_catalog_is_refused_with_the_flag_that_adds() {
    let dir = temp_dir("no-catalog");
    let error = Corpus::load(&CorpusSource {
        dir: Some(dir.clone()),
        added: Vec::new(),
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with(&format!("{}: no clauses.toml here", dir.display())),
        "{error}"
    );
    assert!(error.contains("--add-cases"), "{error}");
}

#[test]
fn added_case_files_join_the_embedded_corpus_and_keep_ids_unique() {
    let dir = temp_dir("added");
    std::fs::write(dir.join("own.toml"), EXTRA_CASE).unwrap();
    let embedded = Corpus::embedded().unwrap();
    let with_own = Corpus::load(&CorpusSource {
        dir: None,
        added: vec![dir.clone()],
    })
    .unwrap();
    assert_eq!(with_own.cases.len(), embedded.cases.len() + 1);
    assert_eq!(with_own.cases.last().unwrap().id, "team.ws_access_token");

    let twice = temp_dir("added-twice");
    std::fs::write(twice.join("a.toml"), EXTRA_CASE).unwrap();
    std::fs::write(twice.join("b.toml"), EXTRA_CASE).unwrap();
    let error = Corpus::load(&CorpusSource {
        dir: None,
        added: vec![twice.clone()],
    })
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        format!(
            "{}:1: case id \"team.ws_access_token\" is also used by {}",
            twice.join("b.toml").display(),
            twice.join("a.toml").display()
        )
    );

    let empty = temp_dir("added-empty");
    let error = Corpus::load(&CorpusSource {
        dir: None,
        added: vec![empty.clone()],
    })
    .unwrap_err()
    .to_string();
    assert_eq!(error, format!("{}: no case files found", empty.display()));
}

#[test]
fn a_broken_added_case_names_its_file_and_line() {
    let dir = temp_dir("added-broken");
    std::fs::write(
        dir.join("own.toml"),
        EXTRA_CASE.replace("auth.ws.access_token", "auth.ws.access_tokn"),
    )
    .unwrap();
    let error = Corpus::load(&CorpusSource {
        dir: None,
        added: vec![dir.clone()],
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with(&format!("{}:3: ", dir.join("own.toml").display())),
        "{error}"
    );
    assert!(
        error.contains("did you mean \"auth.ws.access_token\""),
        "{error}"
    );
}

#[test]
fn the_version_line_names_the_interface_and_the_corpus() {
    let line = version_line();
    assert!(line.contains("interface 2.1.1"), "{line}");
    assert!(
        line.contains(&format!("corpus sha256:{}", &DIGEST[..16])),
        "{line}"
    );
}
