//! The `harness proxy` command: the client's target file, forwarding, the end after
//! `--requests`, the four reports with both sides, and the refusal of a plain-text listen
//! address other than loopback.

use std::process::Command;
use std::time::Duration;

use harness::serve;
use harness::target_file::Target;
use serde_json::{Value, json};

use super::{get, runtime, with_timeout, ws};
use crate::cli::KilledOnDrop;

/// `harness proxy` itself: it writes the client's target file, forwards, ends after
/// `--requests`, and writes the four reports with both sides.
#[test]
fn the_command_ends_after_its_requests_and_reports_both_sides() {
    let dir = crate::cli::temp_dir("proxy-command");
    let runtime = runtime();
    let server = runtime.block_on(async {
        with_timeout(serve::start(serve::ServeConfig::loopback()))
            .await
            .expect("server starts")
    });
    let upstream_file = dir.join("upstream.toml");
    std::fs::write(&upstream_file, server.target().to_toml()).unwrap();
    let client_file = dir.join("client.toml");
    let out = dir.join("reports");
    let child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--requests",
            "2",
            "--target",
        ])
        .arg(&upstream_file)
        .arg("--target-out")
        .arg(&client_file)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KilledOnDrop::new(child);
    let mut waited = 0;
    while std::fs::metadata(&client_file).map_or(true, |meta| meta.len() == 0) {
        assert!(waited < 300, "no client target file within 30 s");
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let target = Target::load(&client_file).expect("the client target file loads");
    assert_eq!(target.accounts, server.target().accounts);
    runtime.block_on(async {
        let body =
            json!({"jsonrpc": "2.0", "id": 3, "method": "public/get_currencies", "params": {}});
        get(&target, "/api/v2/public/get_currencies", Some(body)).await;
        ws(
            &target,
            &[json!({"jsonrpc": "2.0", "id": 4, "method": "public/get_currencies", "params": {}})],
        )
        .await;
    });
    let mut waited = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if waited >= 300 {
            let _ = child.kill();
            panic!("harness proxy did not end within 30 s of its requests");
        }
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    };
    let output = child.into_inner().wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("2 requests (0 not judged)"), "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let cases: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|result| result["case"].as_str())
        .collect();
    assert!(
        cases.contains(&"server:env.response.id") && cases.contains(&"client:client.env.id"),
        "{cases:?}"
    );
    for secret in server.target().secrets() {
        assert!(!stdout.contains(&secret));
    }
    runtime.block_on(server.shutdown());
}

#[test]
fn a_listen_address_other_than_loopback_needs_allow_plain_http() {
    let dir = crate::cli::temp_dir("proxy-plain");
    let upstream_file = dir.join("upstream.toml");
    let runtime = runtime();
    let server = runtime.block_on(async {
        with_timeout(serve::start(serve::ServeConfig::loopback()))
            .await
            .expect("server starts")
    });
    std::fs::write(&upstream_file, server.target().to_toml()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["proxy", "--listen", "0.0.0.0:0", "--for", "1", "--target"])
        .arg(&upstream_file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--allow-plain-http"));
    runtime.block_on(server.shutdown());
}
