//! Merging: one finding per clause and shrunk request whatever the runs, shards merged and
//! missing per seed, case files copied, and run reports read back as written.

use serde_json::{Map, json};

use super::*;
use crate::RequestAuth;
use harness_protocol::wire::TransportKind;

fn request(method: &str, currency: &str, why: &str) -> FuzzRequest {
    let mut params = Map::new();
    params.insert("currency".to_owned(), json!(currency));
    FuzzRequest {
        transport: TransportKind::HttpQuery,
        method: method.to_owned(),
        params,
        auth: RequestAuth::NONE,
        raw: None,
        why: why.to_owned(),
        walk: false,
        class: None,
    }
}

fn finding(clause: &str, shrunk: FuzzRequest, first_index: usize) -> FuzzFinding {
    FuzzFinding {
        clause: clause.to_owned(),
        message: format!("{clause} broken"),
        first_index,
        occurrences: 3,
        input: FoundInput::Request {
            request: shrunk.clone(),
            shrunk,
        },
        case_file: None,
    }
}

fn run(seed: u64, shard: Shard, findings: Vec<FuzzFinding>) -> FuzzReport {
    FuzzReport {
        seed,
        requests: 100,
        shard,
        sent: 100 / shard.count,
        findings,
        ..FuzzReport::default()
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-merge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn same_clause_and_shrunk_request_is_one_finding() {
    let btc = |why| request("public/get_index_price", "BTC", why);
    let runs = vec![
        (
            PathBuf::from("a"),
            run(1, Shard::WHOLE, vec![finding("env.id", btc("a value"), 4)]),
        ),
        (
            PathBuf::from("b"),
            run(2, Shard::WHOLE, vec![finding("env.id", btc("other"), 9)]),
        ),
    ];
    let merged = merge(&runs);
    assert_eq!(merged.run_findings, 2);
    assert_eq!(merged.findings.len(), 1, "{:?}", merged.findings);
    let kept = &merged.findings[0];
    assert_eq!((kept.seed, kept.finding.first_index), (1, 4));
    assert_eq!(kept.finding.occurrences, 6);
    assert_eq!(kept.runs, vec![PathBuf::from("a"), PathBuf::from("b")]);
    assert_eq!(merged.sent, 200);
}

#[test]
fn other_clause_or_other_request_stays_apart() {
    let btc = request("public/get_index_price", "BTC", "");
    let eth = request("public/get_index_price", "ETH", "");
    let runs = vec![(
        PathBuf::from("a"),
        run(
            1,
            Shard::WHOLE,
            vec![
                finding("env.id", btc.clone(), 1),
                finding("env.id", eth, 2),
                finding("result.schema", btc, 3),
            ],
        ),
    )];
    let merged = merge(&runs);
    let seen: Vec<(&str, usize)> = merged
        .findings
        .iter()
        .map(|kept| (kept.finding.clause.as_str(), kept.finding.first_index))
        .collect();
    assert_eq!(
        seen,
        vec![("env.id", 1), ("env.id", 2), ("result.schema", 3)]
    );
}

#[test]
fn shards_merged_and_missing_are_told_per_seed() {
    let shard = |index| Shard::new(index, 4).unwrap();
    let runs = vec![
        (PathBuf::from("s1"), run(7, shard(3), Vec::new())),
        (PathBuf::from("s2"), run(7, shard(1), Vec::new())),
        (PathBuf::from("s3"), run(7, shard(3), Vec::new())),
        (PathBuf::from("w"), run(8, Shard::WHOLE, Vec::new())),
    ];
    let merged = merge(&runs);
    assert_eq!(
        merged.seeds,
        vec![
            SeedShards {
                seed: 7,
                requests: 100,
                count: 4,
                merged: vec![1, 3],
                missing: vec![2, 4],
            },
            SeedShards {
                seed: 8,
                requests: 100,
                count: 1,
                merged: vec![1],
                missing: vec![],
            },
        ]
    );
}

#[test]
fn write_copies_case_files_keeping_both_of_one_name() {
    let dir = temp_dir("write");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for (run_dir, text) in [(&a, "first"), (&b, "second")] {
        std::fs::create_dir_all(run_dir).unwrap();
        std::fs::write(run_dir.join("fuzz.s1.r5.toml"), text).unwrap();
    }
    let with_file = |clause, run_dir: &Path| {
        let mut finding = finding(clause, request("public/test", "BTC", ""), 5);
        finding.case_file = Some(run_dir.join("fuzz.s1.r5.toml"));
        finding
    };
    let runs = vec![
        (a.clone(), run(1, Shard::WHOLE, vec![with_file("one", &a)])),
        (b.clone(), run(1, Shard::WHOLE, vec![with_file("two", &b)])),
    ];
    let mut merged = merge(&runs);
    let out = dir.join("merged");
    let report = write(&mut merged, &out).unwrap();
    assert_eq!(report, out.join(MERGED_REPORT));
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    assert_eq!(read("fuzz.s1.r5.toml"), "first");
    assert_eq!(read("fuzz.s1.r5-2.toml"), "second");
    assert_eq!(
        merged.findings[1].finding.case_file,
        Some(out.join("fuzz.s1.r5-2.toml"))
    );
    let json: serde_json::Value = serde_json::from_str(&read(MERGED_REPORT)).unwrap();
    assert_eq!(json["findings"].as_array().map(Vec::len), Some(2));
}

#[test]
fn run_report_reads_back_and_a_broken_one_names_its_line() {
    let dir = temp_dir("load");
    let written = run(
        3,
        Shard::new(2, 5).unwrap(),
        vec![finding("env.id", request("public/test", "BTC", "why"), 6)],
    );
    let json = serde_json::to_string_pretty(&written).unwrap();
    std::fs::write(dir.join(RUN_REPORT), json).unwrap();
    let read = load_run(&dir).unwrap();
    assert_eq!(
        (read.seed, read.requests, read.shard),
        (3, 100, written.shard)
    );
    assert_eq!(read.findings[0].input, written.findings[0].input);

    // A report of before sharding: the whole run.
    std::fs::write(dir.join(RUN_REPORT), r#"{"seed": 4, "sent": 10, "expected_result": 0, "expected_error": 0, "expected_any": 0, "rate_limited": 0, "shrink_requests": 0, "findings": [], "failed_requests": 0, "timed_out": false}"#).unwrap();
    assert_eq!(load_run(&dir).unwrap().shard, Shard::WHOLE);

    std::fs::write(dir.join(RUN_REPORT), "{\n\"seed\": \"x\"\n}").unwrap();
    let error = load_run(&dir).unwrap_err().to_string();
    assert!(error.contains("fuzz.json:2: not the report"), "{error}");
    let missing = load_run(&dir.join("nowhere")).unwrap_err().to_string();
    assert!(missing.starts_with("failed to read"), "{missing}");
}

#[test]
fn sequence_findings_merge_by_clause_and_shrunk_sequence_and_their_cases_are_copied() {
    let dir = temp_dir("sequences");
    let finding = |run_dir: &str, session| {
        let case_file = dir.join(run_dir).join("fuzz.s1.q3.toml");
        std::fs::create_dir_all(dir.join(run_dir)).unwrap();
        std::fs::write(&case_file, format!("id = \"from {run_dir}\"\n")).unwrap();
        sequence_finding(session, Some(case_file))
    };
    let with = |findings: Vec<FuzzFinding>| run(1, Shard::WHOLE, findings);
    let runs = vec![
        (dir.join("a"), with(vec![finding("a", None)])),
        (
            dir.join("b"),
            with(vec![finding("b", None), finding("b", Some("s"))]),
        ),
    ];
    let mut merged = merge(&runs);
    assert_eq!(merged.run_findings, 3);
    assert_eq!(merged.findings.len(), 2);
    assert_eq!(merged.findings[0].finding.occurrences, 4);
    assert_eq!(merged.findings[0].runs.len(), 2);
    let out = dir.join("merged");
    write(&mut merged, &out).unwrap();
    let case_files: Vec<PathBuf> = merged
        .findings
        .iter()
        .filter_map(|merged| merged.finding.case_file.clone())
        .collect();
    assert_eq!(
        case_files,
        [out.join("fuzz.s1.q3.toml"), out.join("fuzz.s1.q3-2.toml")]
    );
    assert_eq!(
        std::fs::read_to_string(&case_files[0]).unwrap(),
        "id = \"from a\"\n"
    );
}

/// A sequence's finding of a login (into `session`, if any) and a refresh of its token.
fn sequence_finding(session: Option<&str>, case_file: Option<PathBuf>) -> FuzzFinding {
    use crate::state::{Action, Grant, SeqStep, Sequence, Who};
    let login = |session: Option<&str>| SeqStep {
        transport: TransportKind::HttpBody,
        connection: 0,
        action: Action::Login {
            who: Who::Main,
            grant: Grant::ClientCredentials,
            session: session.map(str::to_owned),
        },
    };
    let refresh = SeqStep {
        transport: TransportKind::HttpBody,
        connection: 0,
        action: Action::Refresh { of: 0 },
    };
    let sequence = |session| Sequence {
        steps: vec![login(session), refresh.clone()],
    };
    FuzzFinding {
        clause: "auth.refresh.rotates".to_owned(),
        message: "same refresh token".to_owned(),
        first_index: 3,
        occurrences: 2,
        input: FoundInput::Sequence {
            sequence: sequence(session),
            shrunk: sequence(session),
        },
        case_file,
    }
}

#[test]
fn an_older_report_with_its_sequence_findings_apart_reads_into_one_list() {
    let dir = temp_dir("older");
    let mut written = run(
        5,
        Shard::WHOLE,
        vec![finding("env.id", request("public/test", "BTC", "why"), 6)],
    );
    let mut json = serde_json::to_value(&written).unwrap();
    let sequence = sequence_finding(Some("s"), None);
    json["stateful"]["findings"] = json!([serde_json::to_value(&sequence).unwrap()]);
    std::fs::write(dir.join(RUN_REPORT), json.to_string()).unwrap();
    let read = load_run(&dir).unwrap();
    written.findings.push(sequence);
    assert_eq!(
        serde_json::to_value(&read.findings).unwrap(),
        serde_json::to_value(&written.findings).unwrap()
    );
    assert!(matches!(
        read.findings[1].input,
        FoundInput::Sequence { .. }
    ));
    // The one list written reads back as it was, a sequence's finding and all.
    std::fs::write(
        dir.join(RUN_REPORT),
        serde_json::to_string(&written).unwrap(),
    )
    .unwrap();
    assert_eq!(load_run(&dir).unwrap().findings.len(), 2);
}
