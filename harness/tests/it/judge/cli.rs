//! `harness judge` as a user runs it: scenario listing, a silent session, a faulty client
//! and the exit code and reports it leads to.

use super::*;
use crate::cli::KilledOnDrop;

fn harness_judge(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .arg("judge")
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    command
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-judge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn judge_lists_its_scenarios() {
    let output = harness_judge(&["--scenario", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for scenario in Scenario::ALL {
        assert!(text.contains(scenario.name()), "{text}");
    }
    let output = harness_judge(&["--scenario", "short_pages"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("did you mean \"short-pages\""));
}

#[test]
fn a_session_without_requests_exits_3_and_reports_nothing() {
    let out = temp_dir("silent");
    let output = harness_judge(&[
        "--listen",
        "127.0.0.1:0",
        "--for",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("no request arrived"));
    assert!(!out.join("report.json").exists());
}

#[test]
fn a_faulty_client_makes_the_judge_exit_1_with_redacted_reports() {
    let out = temp_dir("faulty");
    let target_file = out.join("target.toml");
    let child = harness_judge(&[
        "--listen",
        "127.0.0.1:0",
        "--requests",
        "2",
        "--target-out",
        target_file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut child = KilledOnDrop::new(child);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let secret = runtime.block_on(async {
        let target_text = with_timeout(async {
            loop {
                if let Ok(text) = std::fs::read_to_string(&target_file)
                    && text.contains("[limits]")
                {
                    return text;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        let target = Target::parse(&target_file, &target_text, &|_| None).unwrap();
        let token = login(&target).await;
        get(
            &target,
            &format!("/api/v2/private/get_mmp_status?access_token={token}"),
            &[],
            None,
        )
        .await;
        main_account(&target).1
    });

    let deadline = std::time::Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the judge did not end after its two requests");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.into_inner().wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let failed: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["verdict"] == "fail")
        .map(|result| result["case"].as_str().unwrap())
        .collect();
    assert_eq!(failed, vec!["client.token.http_header"]);
    for name in ["report.json", "junit.xml", "report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(!text.contains(&secret), "{name} shows the client secret");
        assert!(!text.contains("access_token=at"), "{name} shows the token");
    }
}
