//! `harness::conformance` as a server team uses it: trials from a target file of a server
//! in another process (failing under a seeded fault, green again with an expectations
//! file), from a URL plus credentials, and `examples/conformance.rs` run as is.

use std::path::Path;
use std::process::Command;

use harness::conformance::{self, Suite, TargetSource};
use libtest_mimic::{Arguments, Conclusion};

use crate::cli::{KilledOnDrop, harness, temp_dir};

/// `harness serve` with `faults` in its own process, once its target file is written.
fn spawn_server(target: &Path, faults: &[&str]) -> KilledOnDrop {
    let mut command = harness();
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--target-out"])
        .arg(target);
    for fault in faults {
        command.args(["--fault", fault]);
    }
    let server = KilledOnDrop::new(
        command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..400 {
        if std::fs::read_to_string(target).is_ok_and(|text| text.contains("[limits]")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    server
}

/// The trials whose name contains `filter`, run on two threads, their output logged to a
/// file (the test's own output stays readable).
fn run_filtered(trials: Vec<libtest_mimic::Trial>, filter: &str) -> Conclusion {
    let log = std::env::temp_dir().join(format!(
        "harness-it-conformance-{}-{}.log",
        std::process::id(),
        filter.replace(['.', ' '], "_")
    ));
    let args = Arguments {
        filter: Some(filter.to_owned()),
        test_threads: Some(2),
        logfile: Some(log.to_string_lossy().into_owned()),
        ..Arguments::default()
    };
    libtest_mimic::run(&args, trials)
}

#[test]
fn trials_from_a_target_file_fail_under_a_fault_and_honour_expectations() {
    let dir = temp_dir("conformance-file");
    let target = dir.join("target.toml");
    let mut server = spawn_server(&target, &["sig-nonce-reuse"]);
    let trials = conformance::trials(TargetSource::File(target.clone()));
    assert!(trials.len() > 200, "one trial per case and transport");
    let failing = run_filtered(trials, "auth.client_signature_nonce_reuse");
    let passing = run_filtered(
        conformance::trials(TargetSource::File(target.clone())),
        "auth.client_signature_stale_timestamp",
    );
    let expect = dir.join("expect.toml");
    std::fs::write(
        &expect,
        "[[known_failure]]\ncase = \"auth.client_signature_nonce_reuse\"\nreason = \"known\"\n",
    )
    .unwrap();
    let mut suite = Suite::new(TargetSource::File(target.clone()));
    suite.expect = Some(expect);
    let known = run_filtered(suite.trials(), "auth.client_signature_nonce_reuse");
    server.kill().unwrap();
    let _ = server.wait();
    assert_eq!(failing.num_failed, 3, "{failing:?}");
    assert_eq!(passing.num_failed, 0, "{passing:?}");
    assert!(passing.num_passed >= 3, "{passing:?}");
    assert_eq!(known.num_failed, 0, "{known:?}");
    assert_eq!(
        known.num_ignored, 3,
        "known failures are ignored trials: {known:?}"
    );
}

#[test]
fn trials_from_a_url_and_credentials_skip_what_they_lack() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let running = runtime
        .block_on(harness::serve::start(
            harness::serve::ServeConfig::loopback(),
        ))
        .unwrap();
    let target = running.target();
    let main = &target.accounts["main"];
    let trials = conformance::trials(TargetSource::Url {
        base_url: target.base_url.clone(),
        ws_url: target.ws_url.clone(),
        client_id: main.client_id.clone(),
        client_secret: main.client_secret.expose().to_owned(),
    });
    // The trigger history: unpaced, and most of its cases need a fixture a URL lacks.
    let conclusion = run_filtered(trials, "m.get_trigger_order_history");
    runtime.block_on(running.shutdown());
    assert_eq!(conclusion.num_failed, 0, "{conclusion:?}");
    assert!(conclusion.num_passed > 0, "{conclusion:?}");
    assert!(
        conclusion.num_ignored > 0,
        "cases needing fixtures are skipped: {conclusion:?}"
    );
}

#[test]
fn a_broken_target_file_fails_one_setup_trial() {
    let dir = temp_dir("conformance-broken");
    let target = dir.join("target.toml");
    std::fs::write(
        &target,
        "name = \"x\"\nbase_ulr = \"http://127.0.0.1:1/api/v2\"\n",
    )
    .unwrap();
    let trials = conformance::trials(TargetSource::File(target));
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].name(), "conformance setup");
    let conclusion = run_filtered(trials, "");
    assert_eq!(conclusion.num_failed, 1);
}

/// What a server crate's `tests/conformance.rs` holds, run as a program (`cargo run
/// --example conformance`), with libtest's own arguments.
#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn the_example_runs_the_suite_against_the_reference_server() {
    let output = Command::new(env!("CARGO"))
        .args([
            "run",
            "--quiet",
            "--package",
            "harness",
            "--example",
            "conformance",
            "--",
            "--test-threads",
            "2",
        ])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("test result: ok."), "{stdout}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");
    assert!(
        stdout.contains("test auth.client_signature_nonce_reuse [ws] "),
        "{stdout}"
    );
}
