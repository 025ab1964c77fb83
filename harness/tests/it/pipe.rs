//! A closed pipe ends a command's output quietly, as in a Unix tool: every subcommand that
//! prints, with its standard output closed before it writes, exits with its usual code and
//! says nothing of the pipe on standard error (no panic, no "Broken pipe").

use std::path::Path;
use std::process::{Output, Stdio};

use crate::cli::{harness, temp_dir};

/// `harness ARGS` with standard output a pipe whose reading end is closed at once.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = harness()
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn every_printing_subcommand_ends_quietly_on_a_closed_pipe() {
    let dir = temp_dir("pipe");
    let report = dir.join("report.json");
    std::fs::write(
        &report,
        r#"{"results": [{"case": "a", "transport": "ws", "verdict": "pass", "clauses": ["x"]}]}"#,
    )
    .unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"logs": 3}}"#,
    )
    .unwrap();
    let out = dir.join("run");
    let merged = dir.join("merged");
    let fuzzed = dir.join("fuzz");
    let commands: Vec<(Vec<&str>, i32)> = vec![
        (vec!["variants"], 0),
        (vec!["faults"], 0),
        (vec!["--version"], 0),
        (vec!["--help"], 0),
        (
            vec!["diff", report.to_str().unwrap(), report.to_str().unwrap()],
            0,
        ),
        (
            vec![
                "lint-response",
                "--method",
                "private/get_transaction_log",
                broken.to_str().unwrap(),
            ],
            1,
        ),
        (
            vec![
                "run",
                "--filter",
                "auth.basic",
                "--out",
                out.to_str().unwrap(),
            ],
            0,
        ),
        (
            vec![
                "fuzz",
                "--requests",
                "20",
                "--seed",
                "1",
                "--out",
                fuzzed.to_str().unwrap(),
            ],
            0,
        ),
        (
            vec![
                "fuzz",
                "merge",
                fuzzed.to_str().unwrap(),
                "--out",
                merged.to_str().unwrap(),
            ],
            0,
        ),
    ];
    for (args, code) in commands {
        let output = with_closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        out.join("report.json").is_file(),
        "the run still wrote its reports"
    );
}
