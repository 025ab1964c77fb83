//! The harness against hostile targets: for each way a server can misbehave on the wire
//! (silence, slowness, endless or oversized answers, bytes that are not UTF-8, JSON or
//! HTTP, wrong or duplicate ids, notifications and pings between answers, connections cut
//! mid-answer, error statuses), a run ends within its timeouts, within its size caps, and
//! with today's verdict asserted: FAIL naming a clause, PASS for what SPEC.md tolerates,
//! or a harness error where the target cannot be spoken to at all or gives no answer.

mod server;

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use harness::case::{self, Case};

use harness::check::{Catalog, SchemaSet, Verdict};
use harness::results::RunReport;
use harness::run::{self, RunError};
use harness::transport::RequestLimits;
use harness::wire::RECORDED_BODY_BYTES;
use harness::wire::TransportKind;
use server::{Behaviour, Hostile};

use TransportKind::{HttpBody, HttpQuery, Ws};

/// A run that has not ended by then is a hang, and fails the test instead of stalling it.
const HANG: Duration = Duration::from_secs(30);

/// The request timeout of runs whose server never answers: short, so the suite is quick.
const SHORT: Duration = Duration::from_millis(400);

/// The response cap of these runs: small, so an oversized answer costs little to send.
const CAP: usize = 1024 * 1024;

async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(HANG, future)
        .await
        .expect("the run did not end: the harness hung")
}

struct Corpus {
    cases: Vec<Case>,
    catalog: Arc<Catalog>,
    schemas: Arc<SchemaSet>,
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
        let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
        let cases = case::discover(&root, &catalog, &schemas).unwrap();
        Corpus {
            cases,
            catalog: Arc::new(catalog),
            schemas: Arc::new(schemas),
        }
    })
}

/// What to run against a hostile server.
struct Plan<'a> {
    /// Case ids; empty for the whole corpus.
    ids: &'a [&'a str],
    transports: &'a [TransportKind],
    request_timeout: Duration,
    run_timeout: Duration,
    /// Requests in a row without an answer that stop the run (0: never).
    no_answer_limit: usize,
}

impl Plan<'_> {
    fn new<'a>(ids: &'a [&'a str], transports: &'a [TransportKind]) -> Plan<'a> {
        Plan {
            ids,
            transports,
            request_timeout: SHORT,
            run_timeout: Duration::from_secs(20),
            no_answer_limit: run::DEFAULT_LIMIT,
        }
    }
}

async fn run_plan(behaviour: Behaviour, plan: Plan<'_>) -> Result<RunReport, RunError> {
    let hostile = Hostile::start(behaviour).await;
    let corpus = corpus();
    let cases = corpus
        .cases
        .iter()
        .filter(|case| plan.ids.is_empty() || plan.ids.contains(&case.id.as_str()))
        .cloned()
        .collect();
    let config = run::RunConfig {
        transports: Some(plan.transports.to_vec()),
        concurrency: 16,
        limits: RequestLimits {
            request_timeout: plan.request_timeout,
            max_response_bytes: CAP,
        },
        run_timeout: plan.run_timeout,
        no_answer_limit: plan.no_answer_limit,
        ..run::RunConfig::new(
            hostile.target(),
            cases,
            corpus.catalog.clone(),
            corpus.schemas.clone(),
        )
    };
    let outcome = with_timeout(run::run(config, harness::events::EventSink::none())).await;
    hostile.stop().await;
    outcome
}

async fn run_cases(behaviour: Behaviour, ids: &[&str], transports: &[TransportKind]) -> RunReport {
    run_plan(behaviour, Plan::new(ids, transports))
        .await
        .expect("the run is carried out")
}

/// Every result has `verdict`, cites `clause` and says `message` (all when empty).
fn assert_every(report: &RunReport, verdict: Verdict, clause: &str, message: &str) {
    assert!(!report.results.is_empty());
    let mut wrong = Vec::new();
    for result in &report.results {
        if (
            result.verdict,
            result
                .clauses
                .iter()
                .any(|c| c == clause || clause.is_empty()),
            result.message.contains(message),
        ) != (verdict, true, true)
        {
            wrong.push(format!(
                "{} [{}]: {:?} {:?} {}",
                result.case, result.transport, result.verdict, result.clauses, result.message
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The whole WebSocket suite ran and nothing failed: each result passed, or holds only
/// informational findings (the rate probe's burst can outlast the refill when every answer
/// is delayed by what the server sends before it), or skipped a subscription's channel as
/// quiet (the hostile server forwards answers only, never a push).
fn assert_tolerated(report: &RunReport) {
    assert!(report.results.len() > 50);
    for result in &report.results {
        let quiet_channel =
            result.verdict == Verdict::Skip && result.message.starts_with("the channel was quiet");
        assert!(
            matches!(result.verdict, Verdict::Pass | Verdict::Info) || quiet_channel,
            "{} [{}]: {:?} {}",
            result.case,
            result.transport,
            result.verdict,
            result.message
        );
    }
}

/// A WebSocket call fed frames that are never the answer fails on `transport.ws` after the
/// skipped-frame cap, or is an error (no answer to judge) at the request timeout,
/// whichever comes first.
fn assert_gave_up(report: &RunReport) {
    assert!(!report.results.is_empty());
    for result in &report.results {
        let capped = result.verdict == Verdict::Fail
            && result.clauses.iter().any(|clause| clause == "transport.ws")
            && result.message.contains("frames without an answer");
        let timed_out = result.verdict == Verdict::Error && result.message.contains("within 400ms");
        assert!(
            (capped || timed_out)
                && result
                    .message
                    .contains("no answer to public/get_currencies"),
            "{:?} {:?} {}",
            result.verdict,
            result.clauses,
            result.message
        );
    }
}

const SUCCESS: &[&str] = &["envelope.success"];
const ALL: &[TransportKind] = &[HttpQuery, HttpBody, Ws];
const HTTP: &[TransportKind] = &[HttpQuery, HttpBody];

/// The results over these transports.
fn over<'a>(
    report: &'a RunReport,
    transports: &'a [TransportKind],
) -> impl Iterator<Item = &'a harness::results::CaseResult> {
    report
        .results
        .iter()
        .filter(|result| transports.contains(&result.transport))
}

// Issue 27: a request that got no answer is the harness's error (nothing to judge), never
// a failure of the target.
#[tokio::test(flavor = "multi_thread")]
async fn silent_server_is_an_error_at_each_timeout() {
    let report = run_cases(Behaviour::Silent, SUCCESS, ALL).await;
    assert_every(
        &report,
        Verdict::Error,
        "",
        "no answer to public/get_currencies",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_answer_within_the_timeout_passes() {
    let plan = Plan {
        request_timeout: Duration::from_secs(10),
        ..Plan::new(SUCCESS, ALL)
    };
    let report = run_plan(Behaviour::Slow(Duration::from_millis(50)), plan)
        .await
        .unwrap();
    assert_every(&report, Verdict::Pass, "", "");
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_answer_past_the_timeout_is_an_error() {
    let report = run_cases(Behaviour::Slow(Duration::from_secs(5)), SUCCESS, ALL).await;
    assert_every(
        &report,
        Verdict::Error,
        "",
        "no answer to public/get_currencies",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn answer_trickled_past_the_timeout_is_an_error() {
    let report = run_cases(Behaviour::Trickle, SUCCESS, ALL).await;
    assert_every(
        &report,
        Verdict::Error,
        "",
        "no answer to public/get_currencies",
    );
    for result in over(&report, HTTP) {
        assert!(result.message.contains("timed out"), "{}", result.message);
    }
    for result in over(&report, &[Ws]) {
        assert!(
            result.message.contains("within 400ms"),
            "{}",
            result.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn endless_answer_is_cut_at_the_size_cap() {
    let report = run_cases(Behaviour::Endless, SUCCESS, ALL).await;
    assert_every(&report, Verdict::Fail, "env.response.result", "no answer");
    for result in over(&report, HTTP) {
        assert!(
            result
                .message
                .contains("response body exceeds 1048576 bytes"),
            "{}",
            result.message
        );
    }
    for result in over(&report, &[Ws]) {
        assert!(
            result.message.contains("Message too long"),
            "{}",
            result.message
        );
    }
}

// Issue 49: empty continuation frames never complete a message and never reach the size
// cap; the frame cap of a message ends the call with its cause named (a failure of the
// target) long before the timeout would have made it an error.
#[tokio::test(flavor = "multi_thread")]
async fn empty_continuation_frames_fail_at_the_frame_cap_of_a_message() {
    let plan = Plan {
        request_timeout: Duration::from_secs(10),
        ..Plan::new(SUCCESS, &[Ws])
    };
    let report = run_plan(Behaviour::EmptyContinuations, plan)
        .await
        .expect("the run is carried out");
    assert_every(
        &report,
        Verdict::Fail,
        "env.response.result",
        "more than 10000 frames of one message without its final frame",
    );
}

// Issue 49: a body delimited by the connection's close, never closed, is cut at the cap as
// a chunked one is.
#[tokio::test(flavor = "multi_thread")]
async fn endless_close_delimited_body_is_cut_at_the_size_cap() {
    let report = run_cases(Behaviour::EndlessClose, SUCCESS, HTTP).await;
    assert_every(
        &report,
        Verdict::Fail,
        "env.response.result",
        "response body exceeds 1048576 bytes",
    );
}

// Issue 49: a gzip body (not inflated: the harness asked for no encoding) is not JSON, and
// is kept as its size, a digest and its first bytes, never escaped whole.
#[tokio::test(flavor = "multi_thread")]
async fn a_gzip_body_is_not_json_and_kept_as_its_size_digest_and_first_bytes() {
    let report = run_cases(Behaviour::Gzip(CAP / 2), SUCCESS, HTTP).await;
    assert_every(&report, Verdict::Fail, "env.response.jsonrpc", "not JSON");
    for result in &report.results {
        let kept = &result.exchanges[0].response.as_ref().unwrap().body;
        assert!(
            kept.starts_with("[not UTF-8: 524288 bytes, sha256 ") && kept.len() < 200,
            "{kept}"
        );
    }
}

// Issue 49: ports that answer the TLS handshake with garbage: the run cannot start, and
// says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_tls_port_answering_garbage_is_unreachable_with_the_reason() {
    let outcome = run_plan(Behaviour::TlsGarbage, Plan::new(SUCCESS, ALL)).await;
    match outcome {
        Err(RunError::Unreachable(error)) => {
            assert!(error.message.contains("TLS"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_answer_is_refused_at_the_size_cap() {
    let report = run_cases(Behaviour::Oversized(4 * CAP), SUCCESS, ALL).await;
    assert_every(&report, Verdict::Fail, "env.response.result", "no answer");
    for result in over(&report, HTTP) {
        assert!(
            result
                .message
                .contains("response body exceeds 1048576 bytes"),
            "{}",
            result.message
        );
    }
    for result in over(&report, &[Ws]) {
        assert!(
            result
                .message
                .contains("Message too long: 4194304 > 1048576"),
            "{}",
            result.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn large_answer_under_the_cap_passes_and_is_kept_cut() {
    let report = run_cases(Behaviour::Padded(CAP / 2), SUCCESS, ALL).await;
    assert_every(&report, Verdict::Pass, "", "");
    for result in &report.results {
        let kept = &result.exchanges[0].response.as_ref().unwrap().body;
        assert!(
            kept.len() < RECORDED_BODY_BYTES + 64,
            "{} bytes kept",
            kept.len()
        );
        assert!(
            kept.ends_with("bytes in all]"),
            "{}",
            &kept[kept.len() - 40..]
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_utf8_fails_as_not_json_or_a_broken_frame() {
    let report = run_cases(Behaviour::InvalidUtf8, SUCCESS, ALL).await;
    assert_every(&report, Verdict::Fail, "", "");
    for result in over(&report, HTTP) {
        assert_eq!(result.clauses, ["env.response.jsonrpc"]);
        assert!(
            result.message.starts_with("answer is not JSON"),
            "{}",
            result.message
        );
    }
    // A text frame must be UTF-8 (RFC 6455), so tungstenite refuses the frame itself.
    for result in over(&report, &[Ws]) {
        assert!(result.clauses.iter().any(|clause| clause == "transport.ws"));
        assert!(result.message.contains("UTF-8"), "{}", result.message);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn non_json_answer_fails_the_jsonrpc_clause() {
    let report = run_cases(Behaviour::NotJson, SUCCESS, ALL).await;
    assert_every(
        &report,
        Verdict::Fail,
        "env.response.jsonrpc",
        "answer is not JSON",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_id_fails_wherever_the_request_carried_one() {
    let report = run_cases(Behaviour::WrongId, SUCCESS, ALL).await;
    for result in over(&report, &[HttpBody, Ws]) {
        assert_eq!(result.verdict, Verdict::Fail);
        assert_eq!(result.clauses, ["env.response.id"]);
        assert_eq!(
            result.message,
            "response id is 2, expected the request's id 1"
        );
    }
    // A query-string request has no id, so there is nothing for the answer to echo.
    for result in over(&report, &[HttpQuery]) {
        assert_eq!(result.verdict, Verdict::Pass, "{}", result.message);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_envelope_naming_id_and_result_fifty_thousand_times_fails_as_ambiguous() {
    // A reader keeping the last name sees the right answer; one keeping the first sees id 0
    // and a null result: the envelope says both.
    // 900 KB an answer: a timeout of its own, so a loaded machine's slow parse is no error.
    let plan = Plan {
        request_timeout: Duration::from_secs(10),
        ..Plan::new(SUCCESS, ALL)
    };
    let report = run_plan(Behaviour::DuplicateMembers, plan)
        .await
        .expect("the run runs");
    for result in &report.results {
        assert_eq!(result.verdict, Verdict::Fail, "{}", result.message);
        assert!(
            result
                .message
                .contains("response names \"id\" more than once")
                || result
                    .message
                    .contains("response names \"result\" more than once"),
            "{}",
            result.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn an_answer_with_a_400_digit_integer_is_json_and_tolerated_by_the_whole_suite() {
    // RFC 8259 6 sets no limit on a number's size: an extra member holding one is
    // tolerated like any extra member, never "not JSON".
    let report = run_cases(Behaviour::HugeInteger(400), &[], &[Ws]).await;
    assert_tolerated(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_in_binary_frames_warn_with_the_words_that_leave_it_open() {
    // SPEC.md 1: "WebSocket: JSON-RPC messages" says nothing of the frame; JSON is text.
    let report = run_cases(Behaviour::BinaryFrame, SUCCESS, &[Ws]).await;
    assert_every(
        &report,
        Verdict::Warn,
        "transport.ws_text",
        "binary WebSocket frame",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_answer_is_taken_as_the_next_answer_and_fails_its_id() {
    let report = run_cases(
        Behaviour::DuplicateAnswer,
        &["transport.ws_messages"],
        &[Ws],
    )
    .await;
    assert_every(
        &report,
        Verdict::Fail,
        "env.response.id",
        "response id is 1, expected the request's id 2",
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn notifications_between_answers_are_tolerated_by_the_whole_suite() {
    let report = run_cases(Behaviour::Notifications(3), &[], &[Ws]).await;
    assert_tolerated(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_without_an_answer_fail_after_the_frame_cap() {
    let report = run_cases(Behaviour::NotificationFlood, SUCCESS, &[Ws]).await;
    assert_gave_up(&report);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn pings_between_answers_are_tolerated_by_the_whole_suite() {
    let report = run_cases(Behaviour::Pings(20), &[], &[Ws]).await;
    assert_tolerated(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn ping_flood_without_an_answer_fails_after_the_frame_cap() {
    let report = run_cases(Behaviour::PingFlood, SUCCESS, &[Ws]).await;
    assert_gave_up(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_closed_mid_answer_fails() {
    let report = run_cases(Behaviour::CloseMidAnswer, SUCCESS, ALL).await;
    assert_every(&report, Verdict::Fail, "env.response.result", "no answer");
    for result in over(&report, HTTP) {
        assert!(
            result.message.contains("response body broke off"),
            "{}",
            result.message
        );
    }
    for result in over(&report, &[Ws]) {
        assert!(
            result.message.contains("without closing handshake"),
            "{}",
            result.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn close_frame_instead_of_an_answer_fails() {
    let report = run_cases(Behaviour::CloseFrame, SUCCESS, &[Ws]).await;
    assert_every(
        &report,
        Verdict::Fail,
        "transport.ws",
        "sent close before answering",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_500_with_a_good_envelope_fails_the_status_clause() {
    let report = run_cases(Behaviour::Status(500), SUCCESS, HTTP).await;
    assert_every(
        &report,
        Verdict::Fail,
        "http.status.success",
        "a successful call was answered with HTTP status 500, not 200",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_500_with_a_text_page_fails_the_jsonrpc_clause() {
    let report = run_cases(Behaviour::ServerError, SUCCESS, HTTP).await;
    assert_every(
        &report,
        Verdict::Fail,
        "env.response.jsonrpc",
        "answer is not JSON: \"Internal Server Error\"",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_404_with_an_error_envelope_fails_the_case() {
    let report = run_cases(Behaviour::NotFound, SUCCESS, HTTP).await;
    assert_every(
        &report,
        Verdict::Fail,
        "http.status.success",
        "expected a result, got error -32601 Method not found",
    );
    for result in &report.results {
        let mut unique = result.clauses.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), result.clauses.len(), "{:?}", result.clauses);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bytes_that_are_not_http_fail() {
    let report = run_cases(Behaviour::NotHttp, SUCCESS, HTTP).await;
    assert_every(
        &report,
        Verdict::Fail,
        "http.status.success",
        "invalid HTTP version",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_websocket_upgrade_is_a_harness_error() {
    let report = run_cases(Behaviour::RefuseUpgrade, SUCCESS, &[Ws]).await;
    assert_every(&report, Verdict::Error, "", "HTTP error: 500");
}

#[tokio::test(flavor = "multi_thread")]
async fn unanswered_websocket_upgrade_is_a_harness_error() {
    let report = run_cases(Behaviour::NoHandshake, SUCCESS, &[Ws]).await;
    assert_every(
        &report,
        Verdict::Error,
        "",
        "no handshake within the timeout",
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn a_dead_websocket_side_ends_its_cases_at_once_while_http_goes_on() {
    // The WebSocket upgrade is never answered, HTTP answers as it should: after the
    // breaker's limit of WebSocket requests without an answer, the rest are not sent (an
    // error each, at once), HTTP runs to its end, and the run is not stopped.
    // Quick cases (no race, no paced method, no lifetime waited out), many more WebSocket
    // executions than the run's concurrency.
    let ids: Vec<&str> = corpus()
        .cases
        .iter()
        .map(|case| case.id.as_str())
        .filter(|id| {
            !id.starts_with("races.")
                && !id.contains("transaction_log")
                && !id.contains("lifetime")
                && !id.contains("expir")
        })
        .collect();
    let plan = Plan {
        no_answer_limit: 6,
        request_timeout: Duration::from_secs(2),
        ..Plan::new(&ids, ALL)
    };
    let report = run_plan(Behaviour::NoHandshake, plan)
        .await
        .expect("the run runs");
    assert_eq!(report.interrupted, None, "HTTP still answers");
    let ws: Vec<_> = over(&report, &[Ws]).collect();
    let not_sent = ws
        .iter()
        .filter(|result| {
            result
                .message
                .contains("not sent: the target stopped answering over WebSocket")
        })
        .count();
    assert!(
        not_sent > ws.len() / 2,
        "{not_sent} of {} not sent",
        ws.len()
    );
    assert!(
        over(&report, &[HttpQuery]).any(|result| result.verdict == Verdict::Pass),
        "HTTP went on"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn whole_run_timeout_ends_a_run_against_a_silent_target() {
    // The breaker is off: this is the run timeout's test (`field.rs` has the breaker's).
    let plan = Plan {
        request_timeout: Duration::from_secs(1),
        run_timeout: Duration::from_secs(2),
        no_answer_limit: 0,
        ..Plan::new(&[], ALL)
    };
    let report = run_plan(Behaviour::Silent, plan).await.unwrap();
    assert!(report.results.len() > 200);
    let mut cut_short = 0;
    for result in &report.results {
        match result.verdict {
            Verdict::Error => assert!(result.message.contains("no answer"), "{}", result.message),
            // An execution the run timeout kept from running or finishing did not run.
            Verdict::Skip if result.message.starts_with(run::NOT_RUN) => {
                assert!(
                    result.message.contains("the run timeout expired (2 s)"),
                    "{}",
                    result.message
                );
                cut_short += 1;
            }
            Verdict::Skip => {}
            other => panic!("{} [{}]: {other:?}", result.case, result.transport),
        }
    }
    assert!(cut_short > 100, "{cut_short} executions cut short");
    assert_eq!(
        report.interrupted.as_deref(),
        Some("the run timeout expired (2 s)")
    );
}

/// Runs the binary with `args`, then `--target` (a file naming `hostile`) and `--out` (a
/// folder of its own, `name`), within the test's bound; stops `hostile` after. Gives the
/// output and the folder.
async fn binary_against(
    hostile: Hostile,
    name: &str,
    args: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("harness-it-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("target.toml");
    std::fs::write(&target, hostile.target().to_toml()).unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .args(args)
        .arg("--target")
        .arg(&target)
        .arg("--out")
        .arg(&dir)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let output = with_timeout(tokio::task::spawn_blocking(move || command.output()))
        .await
        .unwrap()
        .unwrap();
    hostile.stop().await;
    (output, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn binary_ends_with_a_failure_against_a_hostile_target() {
    let hostile = Hostile::start(Behaviour::NotJson).await;
    let (output, _) = binary_against(
        hostile,
        "hostile",
        &[
            "run",
            "--quiet",
            "--filter",
            "envelope.success",
            "--timeout-ms",
            "400",
            "--run-timeout-s",
            "5",
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("{env.response.jsonrpc}: answer is not JSON"),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 3 failed"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fuzz_against_a_target_silent_after_its_first_answers_ends_with_exit_3() {
    // Each listener answers its first request (the health call, a first WebSocket
    // message), then holds every request, the Direct Access interface's among them: they
    // are served by the HTTP listener, so they count with HTTP and the run stops.
    let hostile = Hostile::start_with(Behaviour::Silent, true).await;
    let (output, dir) = binary_against(
        hostile,
        "hostile-fuzz",
        &[
            "fuzz",
            "--quiet",
            "--requests",
            "300",
            "--seed",
            "49",
            "--timeout-ms",
            "400",
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("target stopped answering"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fuzz.json")).unwrap()).unwrap();
    assert!(
        json["interrupted"]
            .as_str()
            .is_some_and(|reason| reason.contains("stopped answering")),
        "{json}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn fuzz_fails_an_envelope_naming_id_and_result_fifty_thousand_times() {
    // The fuzzer judges the exchange its step handed back: the names the answer repeats
    // must come back with it, as its parsed JSON does (they once stayed behind, and every
    // such answer passed).
    let hostile = Hostile::start_with(Behaviour::DuplicateMembers, true).await;
    let (output, _dir) = binary_against(
        hostile,
        "hostile-fuzz-duplicates",
        &[
            "fuzz",
            "--quiet",
            "--requests",
            "8",
            "--stateful",
            "0",
            "--seed",
            "1",
            "--transport",
            "ws",
            "--timeout-ms",
            "10000",
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("more than once"), "{stdout}");
    assert!(
        stdout.contains("rerun: harness fuzz --seed 1 --requests 8 --stateful 0 --transport ws"),
        "{stdout}"
    );
}
