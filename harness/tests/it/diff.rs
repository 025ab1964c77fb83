//! `harness diff` end to end on reports the binary wrote: a seeded fault is a regression
//! (exit 1) named with its clause, its removal a newly passing case (exit 0), a narrower
//! run shows cases removed, and the Markdown suits a pull-request comment.

use std::path::Path;

use crate::cli::{run, temp_dir, text};

const CASE: &str = "auth.client_signature_nonce_reuse";
const CLAUSE: &str = "auth.client_signature.nonce_single_use";

fn suite(out: &Path, filter: &str, faults: &[&str]) {
    let mut args = vec![
        "run",
        "--quiet",
        "--filter",
        filter,
        "--out",
        out.to_str().unwrap(),
    ];
    for fault in faults {
        args.extend_from_slice(&["--fault", fault]);
    }
    let output = run(&args);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn regressions_fixes_and_removed_cases_between_two_runs() {
    let dir = temp_dir("diff");
    let (clean, faulty, narrow) = (dir.join("clean"), dir.join("faulty"), dir.join("narrow"));
    suite(&clean, "auth.client_signature", &[]);
    suite(&faulty, "auth.client_signature", &["sig-nonce-reuse"]);
    suite(&narrow, CASE, &[]);
    let path = |dir: &Path| dir.join("report.json").to_str().unwrap().to_owned();

    let worse = run(&["diff", &path(&clean), &path(&faulty)]);
    assert_eq!(worse.status.code(), Some(1), "{}", text(&worse));
    let stdout = String::from_utf8_lossy(&worse.stdout);
    assert!(stdout.contains("regressions ("), "{stdout}");
    assert!(
        stdout.contains(&format!("FAIL  {CASE} [ws] {{{CLAUSE}")),
        "{stdout}"
    );
    assert!(stdout.contains("(was pass)"), "{stdout}");
    assert!(stdout.contains("regression"), "{stdout}");

    let better = run(&["diff", &path(&faulty), &path(&clean)]);
    assert_eq!(better.status.code(), Some(0), "{}", text(&better));
    let stdout = String::from_utf8_lossy(&better.stdout);
    assert!(stdout.contains("newly passing ("), "{stdout}");
    assert!(stdout.contains("no regression"), "{stdout}");

    // Directories work as well as files; a narrower run removes cases.
    let removed = run(&["diff", clean.to_str().unwrap(), narrow.to_str().unwrap()]);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed));
    let stdout = String::from_utf8_lossy(&removed.stdout);
    assert!(stdout.contains("removed ("), "{stdout}");
    assert!(
        !stdout.contains(&format!("  PASS  {CASE} [")),
        "kept, not removed: {stdout}"
    );

    let markdown = run(&[
        "diff",
        "--format",
        "markdown",
        &path(&clean),
        &path(&faulty),
    ]);
    assert_eq!(markdown.status.code(), Some(1));
    let comment = String::from_utf8_lossy(&markdown.stdout);
    assert!(comment.starts_with("### Conformance: "), "{comment}");
    assert!(comment.contains("#### Regressions"), "{comment}");
    assert!(
        comment.contains(&format!("| fail | pass | `{CASE}` | ws | {CLAUSE}")),
        "{comment}"
    );
}

#[test]
fn a_file_that_is_not_a_report_is_a_usage_error() {
    let dir = temp_dir("diff-bad");
    let bad = dir.join("report.json");
    std::fs::write(&bad, "{\n\"target\": \"x\"\n}\n").unwrap();
    let output = run(&["diff", bad.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("report.json:3: not a report.json"),
        "{}",
        text(&output)
    );
}
