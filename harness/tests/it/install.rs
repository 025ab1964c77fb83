//! The binary travels without its source tree: a copy run from an empty folder, with an
//! empty environment, runs the whole suite from its embedded corpus and names that corpus
//! in `--version`; `--cases` and `--add-cases` read a team's own; and no library code reads
//! a path of the source tree (`CARGO_MANIFEST_DIR`) outside its tests.
//! `.ci/run` goes further: `cargo install` into a folder, the clone removed, the suite run.

use std::path::Path;
use std::process::Command;

use crate::cli::{TempDir, temp_dir, text};

/// A copy of the binary in a folder of its own, run from another empty folder with nothing
/// in the environment; both folders go with the returned guard.
fn installed(name: &str) -> (Command, std::path::PathBuf, TempDir) {
    let root = temp_dir(name);
    let bin = root.join("bin");
    let work = root.join("work");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let copy = bin.join("harness");
    std::fs::copy(env!("CARGO_BIN_EXE_harness"), &copy).unwrap();
    let mut command = Command::new(copy);
    command.current_dir(&work).env_clear();
    (command, work, root)
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn a_copied_binary_runs_the_suite_from_an_empty_folder() {
    let (mut command, work, _root) = installed("install-run");
    let output = command
        .args(["run", "--quiet", "--out", "reports"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = std::fs::read_to_string(work.join("reports/report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert!(
        report["summary"]["pass"].as_u64().unwrap() > 100,
        "{}",
        report["summary"]
    );
    assert_eq!(report["summary"]["fail"], 0);
    assert!(
        report["results"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("cases/"),
        "embedded files are named inside the corpus, not the source tree"
    );
}

#[test]
fn version_names_the_interface_and_the_corpus_digest() {
    let (mut command, _, _root) = installed("install-version");
    let output = command.arg("--version").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let line = String::from_utf8_lossy(&output.stdout);
    assert!(line.starts_with("harness 0."), "{line}");
    assert!(line.contains("interface 2.1.1"), "{line}");
    assert!(
        line.contains(&format!("corpus sha256:{}", &harness::corpus::DIGEST[..16])),
        "{line}"
    );
}

#[test]
fn a_teams_own_cases_are_added_or_replace_the_corpus() {
    let (mut command, work, _root) = installed("install-own-cases");
    let own = work.join("own");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(
        own.join("mmp.toml"),
        "id = \"team.mmp_status\"\ntitle = \"a team's own case\"\nclauses = [\"auth.ws.access_token\"]\ntransports = [\"ws\"]\n\n[[step]]\ncall = \"private/get_mmp_status\"\nauth = { mode = \"bearer\" }\n",
    )
    .unwrap();
    let output = command
        .args(["run", "--quiet", "--add-cases", "own", "--filter", "team."])
        .args(["--out", "reports"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = std::fs::read_to_string(work.join("reports/report.json")).unwrap();
    assert!(report.contains("\"team.mmp_status\""), "{report}");

    let (mut command, _, _root) = installed("install-own-corpus");
    let output = command
        .args(["run", "--quiet", "--cases"])
        .arg(&own)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("no clauses.toml here"),
        "{}",
        text(&output)
    );
}

/// Library code (what an installed binary runs) names no path of the source tree; tests
/// may, to compare the embedded corpus with the files it was built from.
#[test]
fn no_library_code_reads_the_source_tree() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "tests.rs" || path.components().any(|part| part.as_os_str() == "tests") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            let library = source.split("#[cfg(test)]").next().unwrap_or_default();
            if library.contains("CARGO_MANIFEST_DIR") {
                offenders.push(path.display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:?}");
}
