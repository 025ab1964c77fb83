//! Interrupted runs keep what they learned: the binary, as a child process, gets SIGINT or
//! SIGTERM while it waits on a target that never answers (so the timing is not luck: the
//! signal is sent once the target holds a request), writes all four reports with the rest
//! "not run" and exits 4; a second signal ends it at once; the run timeout does the same
//! as a signal; the judge judges what it recorded; the fuzzer writes what it found.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::cli::{KilledOnDrop, harness, temp_dir};

/// Longer than any wait here should take; past it the test fails instead of hanging.
const BOUND: Duration = Duration::from_secs(60);

/// A plain HTTP server on 127.0.0.1 that counts requests and either never answers them
/// or answers each with `{}` (not a JSON-RPC envelope) after a pause.
struct Stub {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl Stub {
    fn start(answer: Option<Duration>) -> Stub {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        runtime.spawn(async move {
            for _ in 0..10_000 {
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                tokio::spawn(serve(stream, answer, counter.clone()));
            }
        });
        Stub {
            addr,
            requests,
            _runtime: runtime,
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// A target file naming this server and a `main` account.
    fn target_file(&self, dir: &Path) -> PathBuf {
        let path = dir.join("target.toml");
        std::fs::write(
            &path,
            format!(
                "name = \"stub\"\nbase_url = \"http://{}/api/v2\"\n\n[accounts.main]\nclient_id = \"stub-id\"\nclient_secret = \"stub-secret-value\"\n",
                self.addr
            ),
        )
        .unwrap();
        path
    }
}

/// Reads one request (head and `content-length` body), counts it, then answers `{}` after
/// the pause and closes, or holds the connection open without a word.
async fn serve(
    mut stream: tokio::net::TcpStream,
    answer: Option<Duration>,
    requests: Arc<AtomicUsize>,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
        if buffer.len() > 1 << 20 {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length.min(1 << 20) {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let Some(pause) = answer else {
        // Hold the connection until the test's runtime ends.
        return std::future::pending::<()>().await;
    };
    tokio::time::sleep(pause).await;
    let _ = stream
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
        .await;
}

fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} failed");
}

/// Waits for the child within [`BOUND`] (killing it past that) and returns its status.
fn wait(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            panic!("the child did not end within {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits within [`BOUND`] until `ready` holds.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < BOUND, "waited {BOUND:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_all(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut text);
    }
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut text);
    }
    text
}

/// `harness run` against the silent stub, over http-query, with a request timeout far
/// longer than the test.
fn run_against(stub: &Stub, dir: &Path, more: &[&str]) -> KilledOnDrop {
    let child = harness()
        .args([
            "run",
            "--quiet",
            "--transport",
            "http-query",
            "--timeout-ms",
            "600000",
        ])
        .arg("--target")
        .arg(stub.target_file(dir))
        .arg("--out")
        .arg(dir.join("reports"))
        .args(more)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    KilledOnDrop::new(child)
}

fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("reports/report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every execution is a skip saying why it did not run; some were cut in flight.
fn assert_not_run(report: &serde_json::Value, reason: &str) {
    assert_eq!(report["interrupted"], reason, "{}", report["summary"]);
    let results = report["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let mut cut = 0;
    for result in results {
        assert_eq!(result["verdict"], "skip", "{result}");
        let message = result["message"].as_str().unwrap();
        if message.starts_with("not run: ") {
            assert!(message.contains(reason), "{message}");
            cut += usize::from(message.ends_with("before this execution finished"));
        }
    }
    assert!(cut > 0, "no execution was in flight");
}

#[test]
fn sigint_during_a_run_writes_all_four_reports_and_exits_4() {
    let stub = Stub::start(None);
    let dir = temp_dir("interrupt-sigint");
    let mut child = run_against(&stub, &dir, &[]);
    // Two requests: the run's first call goes out beside the executions, so only a second
    // request proves an execution is in flight (on a loaded machine the first may be alone).
    wait_until("two requests at the stub", || stub.requests() > 1);
    send(&child, "-INT");
    let status = wait(&mut child);
    let output = read_all(&mut child);
    assert_eq!(status.code(), Some(4), "{output}");
    assert!(
        output.contains("interrupted by SIGINT: ") && output.contains("executions not run"),
        "{output}"
    );
    for file in ["report.json", "junit.xml", "report.md", "report.html"] {
        assert!(dir.join("reports").join(file).exists(), "{file} missing");
    }
    assert_not_run(&report(&dir), "interrupted by SIGINT");
    let html = std::fs::read_to_string(dir.join("reports/report.html")).unwrap();
    assert!(html.contains("<b>Interrupted: interrupted by SIGINT.</b>"));
    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).unwrap();
    assert!(junit.contains("not run: interrupted by SIGINT"));
}

#[test]
fn a_second_signal_stops_at_once() {
    let stub = Stub::start(None);
    let dir = temp_dir("interrupt-twice");
    let mut child = run_against(&stub, &dir, &[]);
    wait_until("a request at the stub", || stub.requests() > 0);
    let stderr = child.stderr.take().unwrap();
    send(&child, "-TERM");
    // The second signal goes once the first is handled, or the two would be one.
    let mut lines = BufReader::new(stderr).lines();
    let started = Instant::now();
    loop {
        let line = lines
            .next()
            .expect("stderr ended before the first signal was handled");
        if line.unwrap().contains("a second signal stops at once") {
            break;
        }
        assert!(started.elapsed() < BOUND);
    }
    send(&child, "-TERM");
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(143));
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn the_run_timeout_writes_the_reports_as_a_signal_does() {
    let stub = Stub::start(None);
    let dir = temp_dir("interrupt-timeout");
    let mut child = run_against(&stub, &dir, &["--run-timeout-s", "1"]);
    let status = wait(&mut child);
    let output = read_all(&mut child);
    assert_eq!(status.code(), Some(4), "{output}");
    assert_not_run(&report(&dir), "the run timeout expired (1 s)");
}

#[test]
fn the_judge_judges_what_it_recorded_when_interrupted() {
    let dir = temp_dir("interrupt-judge");
    let target = dir.join("judge.toml");
    let child = harness()
        .args(["judge", "--listen", "127.0.0.1:0", "--target-out"])
        .arg(&target)
        .arg("--out")
        .arg(dir.join("reports"))
        .arg("--events")
        .arg(dir.join("events.jsonl"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KilledOnDrop::new(child);
    wait_until("the judge's target file", || {
        std::fs::read_to_string(&target).is_ok_and(|text| text.contains("[limits]"))
    });
    let base_url = harness::target_file::Target::load(&target)
        .unwrap()
        .base_url;
    let authority = base_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&authority).unwrap();
    stream.set_read_timeout(Some(BOUND)).unwrap();
    write!(
        stream,
        "GET /api/v2/public/get_currencies HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    send(&child, "-INT");
    let status = wait(&mut child);
    let output = read_all(&mut child);
    assert!(matches!(status.code(), Some(0 | 1)), "{output}");
    assert!(output.contains(": 1 requests"), "{output}");
    // The judged session goes through the event stream as a run does: its start, each
    // verdict, its end with the counts of report.json.
    let report = report(&dir);
    let events: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let results = report["results"].as_array().unwrap();
    assert_eq!(events.len(), results.len() + 3, "{events:?}");
    assert_eq!(events[0]["event"], "started");
    assert_eq!(events[0]["total"], results.len());
    // Then the session's end, naming the command a reproduction reruns.
    let ended = events.last().unwrap();
    assert_eq!(
        (&ended["type"], &ended["event"]),
        (&"session".into(), &"ended".into())
    );
    assert_eq!(ended["rerun"], "harness judge --scenario default");
    let last = &events[events.len() - 2];
    assert_eq!(last["event"], "finished");
    assert_eq!(last["summary"], report["summary"]);
}

#[test]
fn the_fuzzer_writes_the_findings_it_has_when_interrupted() {
    // 50 ms an answer: the 5000 requests would take minutes, the signal comes in seconds.
    let stub = Stub::start(Some(Duration::from_millis(50)));
    let dir = temp_dir("interrupt-fuzz");
    let out = dir.join("fuzz");
    let child = harness()
        .args([
            "fuzz",
            "--transport",
            "http-query",
            "--requests",
            "5000",
            "--concurrency",
            "2",
            "--seed",
            "7",
        ])
        .arg("--target")
        .arg(stub.target_file(&dir))
        .arg("--out")
        .arg(&out)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KilledOnDrop::new(child);
    wait_until("fuzz requests at the stub", || stub.requests() > 20);
    send(&child, "-INT");
    let status = wait(&mut child);
    let output = read_all(&mut child);
    assert_eq!(status.code(), Some(1), "{output}");
    assert!(
        output.contains("the findings so far are written, unshrunk"),
        "{output}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fuzz.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], "interrupted by SIGINT");
    assert_eq!(report["shrink_requests"], 0);
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    let case_files = std::fs::read_dir(&out)
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == "toml"))
        })
        .count();
    // Stateful sequences run first and write their findings' case files too; their
    // findings are in the one list.
    assert_eq!(case_files, findings.len());
}
