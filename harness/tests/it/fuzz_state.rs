//! Stateful fuzzing (issue 16): sequences alone find each seeded fault that needs memory
//! across calls, with a clause the fault breaks and a case file that fails under
//! `harness run` with the fault and passes without it; and they find nothing against the
//! clean reference server nor against any spec-open variant.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::fuzz::{FoundInput, FuzzConfig, FuzzReport};
use harness::serve::{Extreme, Fault, Variant};

/// The faults single requests miss (`fuzz/README.md`, the per-fault table): the 11 that
/// need memory across calls, and a default page size that only a call over the whole
/// history without `count` shows.
const SEQUENCE_FAULTS: [Fault; 12] = [
    Fault::WsSessionForgotten,
    Fault::RefreshKeepsOldToken,
    Fault::RefreshSameToken,
    Fault::RefreshSessionChanged,
    Fault::ExchangeTokenBroken,
    Fault::ForkTokenBroken,
    Fault::ForkConnectionAllowed,
    Fault::LogoutOverHttp,
    Fault::LogoutNoop,
    Fault::DeleteMemberNoMainaccount,
    Fault::DisableKeepsSessions,
    Fault::TxlogDefault150,
];

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "harness-it-fuzz-state-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Only sequences, `requests` of them, against a fresh reference server; bounded.
fn sequences_against(
    faults: &[Fault],
    variants: &[Variant],
    requests: usize,
    out: Option<PathBuf>,
) -> FuzzReport {
    let mut config = FuzzConfig::new(1, requests);
    config.stateful_percent = 100;
    config.out = out;
    config.concurrency = 8;
    config.shrink_budget = 80;
    super::fuzz::fuzz_reference_with(faults, variants, &config)
}

/// Runs the case files in `case_file`'s directory with `flags`; the exit code.
fn replay(case_file: &Path, name: &str, flags: &[&str]) -> Option<i32> {
    let dir = temp_dir(&format!("replay-{name}"));
    std::fs::copy(cases().join("clauses.toml"), dir.join("clauses.toml")).unwrap();
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    for entry in std::fs::read_dir(cases().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join("schemas").join(path.file_name().unwrap())).unwrap();
    }
    std::fs::copy(case_file, dir.join(case_file.file_name().unwrap())).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg("--cases")
        .arg(&dir)
        .arg("--out")
        .arg(dir.join("report"))
        .args(flags)
        .output()
        .unwrap();
    output.status.code()
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn sequences_find_every_fault_that_needs_state_and_their_cases_replay_it() {
    let mut missed = Vec::new();
    for fault in SEQUENCE_FAULTS {
        let out = temp_dir(fault.name());
        let report = sequences_against(&[fault], &[], 1_500, Some(out));
        assert_eq!(report.sent, 0, "only sequences were asked for");
        let caught = report
            .findings
            .iter()
            .find(|finding| fault.clauses().contains(&finding.clause.as_str()));
        let Some(finding) = caught else {
            missed.push(format!("{}: {:?}", fault.name(), report.findings));
            continue;
        };
        let FoundInput::Sequence { sequence, shrunk } = &finding.input else {
            panic!("{}: a single request's finding: {finding:?}", fault.name());
        };
        // The run that finds delete-member-no-mainaccount deletes the fixture member, so
        // against the same server no shorter sequence fails that way again.
        let shrinkable = fault != Fault::DeleteMemberNoMainaccount;
        assert!(
            shrunk.steps.len() <= sequence.steps.len() && (!shrinkable || shrunk.steps.len() <= 6),
            "{}: {:?}",
            fault.name(),
            shrunk
        );
        let case_file = finding.case_file.as_ref().expect("a case file is written");
        let with_fault = replay(case_file, fault.name(), &["--fault", fault.name()]);
        assert_eq!(
            with_fault,
            Some(1),
            "{} replayed with the fault",
            fault.name()
        );
        let clean = replay(case_file, &format!("{}-clean", fault.name()), &[]);
        assert_eq!(
            clean,
            Some(0),
            "{} replayed without the fault",
            fault.name()
        );
    }
    assert_eq!(missed, Vec::<String>::new());
}

#[test]
fn sequences_find_nothing_against_the_clean_reference_or_any_variant() {
    let mut false_findings = Vec::new();
    // The clean reference, the two extremes and every variant at once; each variant alone
    // is in `harness selftest --matrix variants` (its fuzz runs include sequences).
    let mut rows: Vec<Vec<Variant>> = vec![Vec::new(), Variant::ALL.to_vec()];
    rows.extend(Extreme::ALL.map(Extreme::variants));
    for variants in rows {
        let report = sequences_against(&[], &variants, 500, None);
        assert!(report.stateful.sent >= 300, "{:?}", report.stateful);
        assert!(
            report.stateful.expected_result > 100 && report.stateful.expected_error > 30,
            "{:?}",
            report.stateful
        );
        for finding in &report.findings {
            false_findings.push(format!(
                "{variants:?}: {}: {} ({:?})",
                finding.clause, finding.message, finding.input
            ));
        }
    }
    assert_eq!(false_findings, Vec::<String>::new());
}
