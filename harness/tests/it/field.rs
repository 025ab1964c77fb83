//! Field conditions (issue 27): a target that paces one method is fuzzed at full speed with
//! no throttled answer, a paced execution does not hold the runner's slot, and a target
//! that is silent, answers after 30 s, or refuses connections ends the run with exit 3
//! and the symptom named (reports written where anything ran). Every server here is
//! started by the test on 127.0.0.1; every wait has a hang guard, never a speed bound
//! (speed is in BENCHMARKS.md, `cargo run --release --example bench -- --field`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::case::{self, Case};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::events::{CaseEvent, Event, EventSink};
use harness::fuzz;
use harness::run;
use harness::serve;
use harness::target_file::{CountedPer, RateLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::cli::{harness, temp_dir};

/// Longer than any run here should take; past it the test fails instead of hanging.
const HANG: Duration = Duration::from_secs(120);

/// A reference server whose transaction log is paced per user at 1/s with `burst`.
async fn paced_server(burst: u32) -> serve::Running {
    let mut config = serve::ServeConfig::loopback();
    config.limits = RateLimits {
        transaction_log_per_second: 1.0,
        transaction_log_burst: burst,
        transaction_log_counted_per: CountedPer::Account,
        ..config.limits
    };
    serve::start(config).await.expect("reference server starts")
}

fn schemas() -> Arc<SchemaSet> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    Arc::new(SchemaSet::load(&root.join("schemas")).unwrap())
}

// Issue 27: a worker that drew a paced request slept on the pacer, so every worker ended
// up asleep behind the budget.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn fuzzing_a_paced_target_keeps_to_its_budget_and_sends_the_rest() {
    let running = paced_server(5).await;
    let target = running.target();
    let mut config = fuzz::FuzzConfig::new(1, 1_000);
    config.paced_wait = Duration::from_secs(1);
    let started = Instant::now();
    let report = tokio::time::timeout(HANG, fuzz::run(target.clone(), schemas(), &config))
        .await
        .expect("the fuzz run hung")
        .expect("the fuzz run is carried out");
    let wall = started.elapsed().as_secs_f64();
    running.shutdown().await;
    assert_eq!(report.rate_limited, 0, "throttled answers");
    assert_eq!(
        report.stateful.throttled, 0,
        "throttled answers in sequences"
    );
    assert!(report.paced_sent > 0, "the paced method was not exercised");
    assert!(report.paced_unsent > 0, "nothing was left for the budget");
    // Never more than the burst and the rate allow over the run, on each of the three
    // budgets (the main account, the subaccount, no credentials).
    assert!(
        report.paced_sent as f64 <= 3.0 * (5.0 + wall + 1.0),
        "{} paced requests in {wall:.1} s",
        report.paced_sent
    );
    assert!(!report.timed_out && report.interrupted.is_none());
    assert_eq!(report.unanswered, 0);
    // The stateful tenth of the requests goes to sequences; the rest are generated here.
    let generated =
        fuzz::shard_requests(1, 900, fuzz::Shard::WHOLE, &target, &config.transports).len();
    assert_eq!(report.sent + report.paced_unsent, generated);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

fn corpus_parts() -> (Arc<Catalog>, Arc<SchemaSet>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    (
        Arc::new(Catalog::load(&root.join("clauses.toml")).unwrap()),
        schemas(),
    )
}

fn parse(id: &str, steps: &str, catalog: &Catalog, schemas: &SchemaSet) -> Case {
    let text = format!(
        "id = \"{id}\"\ntitle = \"field\"\nclauses = [\"env.response.id\"]\ntransports = [\"http-query\"]\n{steps}"
    );
    case::parse_case(Path::new("field.toml"), &text, catalog, schemas).unwrap()
}

// Issue 27: an execution waiting for the pacing budget held one of the `--concurrency`
// slots, so the unpaced executions waited behind it.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn a_paced_execution_does_not_hold_the_only_slot() {
    let running = paced_server(1).await;
    let (catalog, schemas) = corpus_parts();
    let paced_step = "[[step]]\ncall = \"private/get_transaction_log\"\nauth = { mode = \"bearer\" }\nparams = { currency = \"BTC\" }\nexpect = { outcome = \"any\", no_schema = true }\n";
    let mut cases = vec![parse(
        "field.paced",
        &paced_step.repeat(4),
        &catalog,
        &schemas,
    )];
    for index in 0..20 {
        cases.push(parse(
            &format!("field.unpaced.{index:02}"),
            "[[step]]\ncall = \"public/get_currencies\"\n",
            &catalog,
            &schemas,
        ));
    }
    let config = run::RunConfig {
        concurrency: 1,
        ..run::RunConfig::new(running.target(), cases, catalog, schemas)
    };
    let finished: Arc<Mutex<Vec<String>>> = Arc::default();
    let order = finished.clone();
    let report = tokio::time::timeout(
        HANG,
        run::run(
            config,
            EventSink::new(move |event| {
                if let Event::Case(CaseEvent::Finished { result, .. }) = event {
                    order.lock().unwrap().push(result.case.clone());
                }
            }),
        ),
    )
    .await
    .expect("the run hung")
    .expect("the run is carried out");
    running.shutdown().await;
    assert_eq!(report.count(Verdict::Pass), 21, "{:?}", report.results);
    let finished = finished.lock().unwrap();
    // Four paced calls at 1/s take three refills; the unpaced cases do not wait for them.
    assert_eq!(finished.last().map(String::as_str), Some("field.paced"));
}

/// A plain TCP server on 127.0.0.1 that reads requests and answers `answer_after` later
/// (a correct-looking HTTP answer), or never when `None`; the first `answered` requests
/// are answered at once.
struct Quiet {
    addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl Quiet {
    fn start(answer_after: Option<Duration>) -> Quiet {
        Quiet::answering_first(0, answer_after)
    }

    fn answering_first(answered: usize, answer_after: Option<Duration>) -> Quiet {
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            for _ in 0..10_000 {
                let Ok((mut stream, _)) = listener.accept().await else {
                    break;
                };
                let seen = seen.clone();
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    if !matches!(stream.read(&mut buffer).await, Ok(read) if read > 0) {
                        return;
                    }
                    let first = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < answered;
                    let answer_after = if first { Some(Duration::ZERO) } else { answer_after };
                    let Some(pause) = answer_after else {
                        // Hold the connection until the test's runtime ends.
                        return std::future::pending::<()>().await;
                    };
                    tokio::time::sleep(pause).await;
                    let body = r#"{"jsonrpc":"2.0","id":1,"result":[]}"#;
                    let _ = stream
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        )
                        .await;
                });
            }
        });
        Quiet {
            addr,
            _runtime: runtime,
        }
    }
}

/// A target file naming `addr` for every transport and a `main` account.
fn target_file(dir: &Path, addr: SocketAddr) -> PathBuf {
    let path = dir.join("target.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"field\"\nbase_url = \"http://{addr}/api/v2\"\nws_url = \"ws://{addr}/ws/api/v2\"\n\n[accounts.main]\nclient_id = \"field-id\"\nclient_secret = \"field-secret-value\"\n"
        ),
    )
    .unwrap();
    path
}

/// Runs the binary with `args` in the repository root, within [`HANG`].
fn run_bounded(mut command: Command) -> Output {
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    match receiver.recv_timeout(HANG) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("the harness did not end within {HANG:?}");
        }
    }
}

/// `harness run` against `addr` with the default timeouts: exit 3, the symptom named,
/// nothing failed, the rest "not run", and all four reports written.
fn assert_run_stops_with_the_symptom(addr: SocketAddr, name: &str) {
    let dir = temp_dir(name);
    let mut command = harness();
    command
        .args(["run", "--quiet", "--target"])
        .arg(target_file(&dir, addr))
        .arg("--out")
        .arg(&dir);
    let output = run_bounded(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("target stopped answering: ")
            && stdout.contains("requests in a row timed out after 5 s"),
        "{stdout}"
    );
    assert!(!stdout.contains("\nFAIL "), "{stdout}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");
    for report in ["report.json", "junit.xml", "report.md", "report.html"] {
        assert!(dir.join(report).exists(), "{report} not written");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let interrupted = json["interrupted"].as_str().unwrap_or_default();
    assert!(run::stopped_answering(interrupted), "{json}");
    assert!(
        stdout.contains("0 of "),
        "coverage counted unanswered checks: {stdout}"
    );
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn run_against_a_silent_target_stops_with_exit_3_and_reports() {
    let quiet = Quiet::start(None);
    assert_run_stops_with_the_symptom(quiet.addr, "field-silent");
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn run_against_a_target_answering_after_30_s_stops_with_exit_3_and_reports() {
    let slow = Quiet::start(Some(Duration::from_secs(30)));
    assert_run_stops_with_the_symptom(slow.addr, "field-slow");
}

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
fn refusing_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[test]
fn run_against_a_refusing_port_ends_at_once_with_exit_3() {
    let dir = temp_dir("field-refused");
    let mut command = harness();
    command
        .args(["run", "--quiet", "--target"])
        .arg(target_file(&dir, refusing_port()))
        .arg("--out")
        .arg(&dir);
    let output = run_bounded(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("target unreachable"), "{stderr}");
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn fuzz_against_a_silent_or_refusing_target_ends_with_exit_3() {
    let quiet = Quiet::start(None);
    for (name, addr) in [("silent", quiet.addr), ("refused", refusing_port())] {
        let dir = temp_dir(&format!("field-fuzz-{name}"));
        let mut command = harness();
        command
            .args(["fuzz", "--requests", "100", "--seed", "1", "--target"])
            .arg(target_file(&dir, addr))
            .arg("--out")
            .arg(&dir);
        let output = run_bounded(command);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{name}: {stderr}");
        assert!(stderr.contains("target unreachable"), "{name}: {stderr}");
        // Every exit leaves its report, saying why the run did not happen; a merge of it
        // is not a pass.
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("fuzz.json")).unwrap()).unwrap();
        assert!(
            json["error"]
                .as_str()
                .is_some_and(|error| error.contains("target unreachable")),
            "{name}: {json}"
        );
        let mut merge = harness();
        merge
            .args(["fuzz", "merge", "--out"])
            .arg(dir.join("merged"))
            .arg(&dir);
        let merged = run_bounded(merge);
        let stdout = String::from_utf8_lossy(&merged.stdout);
        assert_eq!(merged.status.code(), Some(3), "{name}: {stdout}");
        assert!(
            stdout.contains("not done: target unreachable"),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn fuzz_against_a_target_that_stops_answering_ends_with_exit_3_and_its_report() {
    // The health call is answered; every request after it is held without a word.
    let quiet = Quiet::answering_first(1, None);
    let dir = temp_dir("field-fuzz-stops");
    let mut command = harness();
    command
        .args([
            "fuzz",
            "--requests",
            "200",
            "--seed",
            "1",
            "--timeout-ms",
            "300",
        ])
        .arg("--target")
        .arg(target_file(&dir, quiet.addr))
        .arg("--out")
        .arg(&dir);
    let output = run_bounded(command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("target stopped answering: ") && stdout.contains("timed out after 0.3 s"),
        "{stdout}"
    );
    assert!(!stdout.contains("\nFAIL "), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fuzz.json")).unwrap()).unwrap();
    assert!(
        json["interrupted"]
            .as_str()
            .is_some_and(run::stopped_answering),
        "{json}"
    );
}

/// A target that throttles its first login (HTTP 429, code 10028) and answers everything
/// else: one request per connection, closed after the answer.
async fn throttling_first_login() -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let logins = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = logins.clone();
    tokio::spawn(async move {
        for _ in 0..1_000 {
            let Ok((mut stream, _)) = listener.accept().await else {
                break;
            };
            let logins = counted.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 8192];
                let Ok(read) = stream.read(&mut buffer).await else {
                    return;
                };
                let head = String::from_utf8_lossy(&buffer[..read]).to_string();
                let (status, body) = if head.contains("/public/auth") {
                    if logins.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        (
                            "429 Too Many Requests",
                            r#"{"jsonrpc":"2.0","id":null,"error":{"code":10028,"message":"too_many_requests"}}"#,
                        )
                    } else {
                        (
                            "200 OK",
                            r#"{"jsonrpc":"2.0","id":null,"result":{"access_token":"field-token-5f1c","token_type":"bearer","expires_in":900,"refresh_token":"field-refresh-5f1c","scope":"connection trade:read","enabled_features":[]}}"#,
                        )
                    }
                } else {
                    ("200 OK", r#"{"jsonrpc":"2.0","id":null,"result":[]}"#)
                };
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .await;
            });
        }
    });
    (addr, logins)
}

// SPEC.md 8 leaves the rate limits of other methods unstated: a target may throttle a login,
// and the harness waits and sends it again, as for any throttled call, instead of failing
// the login (found against a server that limits unauthenticated calls per address).
#[tokio::test(flavor = "multi_thread")]
async fn a_throttled_login_is_sent_again_not_failed() {
    let (addr, logins) = throttling_first_login().await;
    let text = format!(
        "name = \"field\"\nbase_url = \"http://{addr}/api/v2\"\nws_url = \"ws://{addr}/ws/api/v2\"\n\n[accounts.main]\nclient_id = \"field-id\"\nclient_secret = \"field-secret-value\"\n"
    );
    let target = harness::target_file::Target::parse(Path::new("target.toml"), &text, &|_| None)
        .expect("the target file parses");
    let (catalog, schemas) = corpus_parts();
    let case = parse(
        "field.throttled_login",
        "[[step]]\ncall = \"private/get_mmp_status\"\nauth = { mode = \"bearer\" }\nexpect = { outcome = \"any\", no_schema = true }\n",
        &catalog,
        &schemas,
    );
    let config = run::RunConfig::new(target, vec![case], catalog, schemas);
    let report = tokio::time::timeout(HANG, run::run(config, EventSink::none()))
        .await
        .expect("the run ends")
        .expect("the run is carried out");
    let result = &report.results[0];
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.message);
    assert!(
        result
            .notes
            .iter()
            .any(|note| note.contains("public/auth was throttled")),
        "{:?}",
        result.notes
    );
    assert_eq!(logins.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn run_plan_lists_each_execution_s_paced_calls_and_sends_nothing() {
    // Nothing listens: a plan that sent a request would end with exit 3.
    let dir = temp_dir("field-plan");
    let mut command = harness();
    command
        .args(["run", "--plan", "--target"])
        .arg(target_file(&dir, refusing_port()))
        .arg("--out")
        .arg(dir.join("out"));
    let output = run_bounded(command);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.starts_with("plan: "), "{stderr}");
    // The costliest execution first, its calls by budget.
    let first = stdout.lines().next().unwrap_or_default();
    let calls: usize = first.split_whitespace().next().unwrap().parse().unwrap();
    assert!(calls > 1, "{stdout}");
    assert!(first.contains("[http-query]: main "), "{stdout}");
    assert!(!dir.join("out").exists(), "no report: nothing ran");
}
