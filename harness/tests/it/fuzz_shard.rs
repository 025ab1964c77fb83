//! `harness fuzz --shard I/N` and `harness fuzz merge`: the shards of a seed partition its
//! requests (none sent twice, none left out), sharded runs send what the whole run sends and
//! find what it finds, and merging two runs of one seed and fault gives one finding per
//! clause and shrunk request.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::fuzz::{self, FuzzReport, Shard, merge};
use harness::wire::TransportKind;

use super::fuzz::reference_target;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-it-shard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn harness(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `harness fuzz` with the id fault (every answer breaks a clause), seed 5, 300 requests.
fn faulted_run(out: &Path, shard: Option<&str>) -> FuzzReport {
    let mut args = vec![
        "fuzz",
        "--requests",
        "300",
        "--seed",
        "5",
        "--concurrency",
        "4",
        "--fault",
        "envelope-id-as-string",
    ];
    if let Some(shard) = shard {
        args.extend(["--shard", shard]);
    }
    let output = harness(&args, out);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    merge::load_run(out).unwrap()
}

fn clauses(findings: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    findings.into_iter().collect()
}

#[test]
fn shards_partition_the_requests_of_one_seed() {
    let target = reference_target();
    let transports = TransportKind::ALL;
    let whole = fuzz::generate(9, 300, &target, &transports);
    for count in [1, 3, 7] {
        let mut union = Vec::new();
        for index in 1..=count {
            let shard = Shard::new(index, count).unwrap();
            let part = fuzz::shard_requests(9, 300, shard, &target, &transports);
            assert!(!part.is_empty(), "shard {shard} is empty");
            assert!(part.iter().all(|(number, _)| shard.holds(*number)));
            union.extend(part);
        }
        union.sort_by_key(|(number, _)| *number);
        let numbers: Vec<usize> = union.iter().map(|(number, _)| *number).collect();
        // Sorted and equal to 0..300: no index twice, none missing.
        assert_eq!(numbers, (0..300).collect::<Vec<_>>(), "{count} shards");
        let requests: Vec<_> = union.into_iter().map(|(_, request)| request).collect();
        assert_eq!(requests, whole, "{count} shards");
    }
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn sharded_runs_and_merge_match_the_whole_run() {
    let dir = temp_dir("runs");
    let whole = faulted_run(&dir.join("whole"), None);
    let again = faulted_run(&dir.join("again"), None);
    let first = faulted_run(&dir.join("first"), Some("1/2"));
    let second = faulted_run(&dir.join("second"), Some("2/2"));
    assert!(!whole.findings.is_empty());

    // The shards send the whole run between them, each finding under its whole-run index;
    // a tenth of the 300 requests goes to stateful sequences, shared out the same way.
    assert_eq!((whole.sent, first.sent, second.sent), (270, 135, 135));
    assert_eq!(
        whole.stateful.sequences,
        first.stateful.sequences + second.stateful.sequences
    );
    for report in [&first, &second] {
        assert!(
            report
                .findings
                .iter()
                .all(|finding| report.shard.holds(finding.first_index)),
            "{:?}",
            report.findings
        );
    }

    // Two runs of one seed and fault: one finding per clause and shrunk request, in both.
    let merged_out = dir.join("merged-same");
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["fuzz", "merge"])
        .args([dir.join("whole"), dir.join("again")])
        .arg("--out")
        .arg(&merged_out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let merged = merge::merge(&[
        (dir.join("whole"), whole.clone()),
        (dir.join("again"), again),
    ]);
    assert_eq!(
        merged.findings.len(),
        whole.findings.len(),
        "{}",
        text(&output)
    );
    assert!(merged.findings.iter().all(|kept| kept.runs.len() == 2));
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(merged_out.join(merge::MERGED_REPORT)).unwrap(),
    )
    .unwrap();
    let written = written["findings"].as_array().unwrap();
    assert_eq!(written.len(), whole.findings.len());
    for kept in written {
        let case_file = kept["finding"]["case_file"].as_str().unwrap();
        assert!(Path::new(case_file).starts_with(&merged_out), "{case_file}");
        assert!(Path::new(case_file).is_file(), "{case_file}");
    }

    // The two shards merged break the clauses the whole run breaks.
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["fuzz", "merge"])
        .args([dir.join("first"), dir.join("second")])
        .arg("--out")
        .arg(dir.join("merged-shards"))
        .output()
        .unwrap();
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("seed 5: 300 requests, shards 1, 2 of 2"),
        "{shown}"
    );
    let sharded = merge::merge(&[(dir.join("first"), first), (dir.join("second"), second)]);
    assert_eq!(
        clauses(sharded.findings.into_iter().map(|kept| kept.finding.clause)),
        clauses(whole.findings.into_iter().map(|finding| finding.clause))
    );
}

#[test]
fn merge_of_clean_runs_passes_and_of_no_run_is_a_usage_error() {
    let dir = temp_dir("clean");
    let output = harness(
        &["fuzz", "--requests", "60", "--seed", "3", "--shard", "2/3"],
        &dir.join("clean"),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(text(&output).contains("--shard 2/3"), "{}", text(&output));
    let merged = harness(
        &["fuzz", "merge", dir.join("clean").to_str().unwrap()],
        &dir.join("m"),
    );
    let shown = text(&merged);
    assert_eq!(merged.status.code(), Some(0), "{shown}");
    assert!(shown.contains("not merged: shards 1, 3 ("), "{shown}");

    let not_a_run = harness(&["fuzz", "merge", dir.to_str().unwrap()], &dir.join("m2"));
    assert_eq!(not_a_run.status.code(), Some(2), "{}", text(&not_a_run));
    let bad_shard = harness(
        &["fuzz", "--requests", "1", "--shard", "4/3"],
        &dir.join("x"),
    );
    assert_eq!(bad_shard.status.code(), Some(2), "{}", text(&bad_shard));
    assert!(
        text(&bad_shard).contains("out of range"),
        "{}",
        text(&bad_shard)
    );
}

/// A run's `fuzz.json` of before the one findings list (its sequences' findings apart,
/// under `stateful`) merges with the same run's of today: every finding, a sequence's
/// included, is one found by both runs.
#[test]
fn merge_reads_an_older_fuzz_json_with_the_sequence_findings_apart() {
    use serde_json::Value;
    let dir = temp_dir("older");
    let (today, older) = (dir.join("today"), dir.join("older"));
    let run = harness(
        &[
            "fuzz",
            "--requests",
            "300",
            "--stateful",
            "50",
            "--seed",
            "1",
            "--fault",
            "refresh-same-token",
            "--fault",
            "envelope-id-as-string",
            "--quiet",
        ],
        &today,
    );
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(today.join("fuzz.json")).unwrap()).unwrap();
    let (sequences, requests): (Vec<Value>, Vec<Value>) = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .partition(|finding| finding.get("sequence").is_some());
    assert!(!sequences.is_empty() && !requests.is_empty(), "{report}");
    let found = sequences.len() + requests.len();
    report["findings"] = Value::Array(requests);
    report["stateful"]["findings"] = Value::Array(sequences);
    std::fs::create_dir_all(&older).unwrap();
    std::fs::write(older.join("fuzz.json"), report.to_string()).unwrap();
    for entry in std::fs::read_dir(&today).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            std::fs::copy(&path, older.join(path.file_name().unwrap())).unwrap();
        }
    }
    let merged = harness(
        &[
            "fuzz",
            "merge",
            today.to_str().unwrap(),
            older.to_str().unwrap(),
        ],
        &dir.join("merged"),
    );
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged));
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("merged").join(merge::MERGED_REPORT)).unwrap(),
    )
    .unwrap();
    let kept = json["findings"].as_array().unwrap();
    assert_eq!(kept.len(), found, "{json}");
    assert_eq!(json["run_findings"], 2 * found);
    assert!(
        kept.iter()
            .all(|kept| kept["runs"].as_array().unwrap().len() == 2)
    );
    assert!(
        kept.iter()
            .any(|kept| kept["finding"]["sequence"].is_object())
    );
}
