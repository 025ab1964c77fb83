//! Safety with real targets: cases that change state run only where the target file allows
//! it, credentials do not travel in clear text to another machine, secrets can stay out of
//! the target file, and no secret or token the server issued reaches any output.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use harness::case::{self};

use harness::check::{Catalog, SchemaSet, Verdict};
use harness::run;
use harness::serve::{self, Fault};
use harness::target_file::Target;
use harness::wire::TransportKind;

const WAIT: Duration = Duration::from_secs(120);

async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("network await timed out")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> (Vec<case::Case>, Catalog, SchemaSet) {
    let cases_dir = root().join("cases");
    let catalog = Catalog::load(&cases_dir.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&cases_dir.join("schemas")).unwrap();
    let cases = case::discover(&cases_dir, &catalog, &schemas).unwrap();
    (cases, catalog, schemas)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_case_calling_a_state_changing_method_says_it_is_destructive() {
    let (cases, _, _) = corpus();
    let mut called = Vec::new();
    let mut undeclared = Vec::new();
    for case in &cases {
        if let Some(method) = case.state_changing_method() {
            called.push(method.clone());
            if !case.needs.destructive {
                undeclared.push(format!(
                    "{} ({}) calls {method}",
                    case.id,
                    case.path.display()
                ));
            }
        }
    }
    assert_eq!(
        undeclared,
        Vec::<String>::new(),
        "set needs.destructive = true"
    );
    // The scan saw every such method, so it cannot pass by finding nothing.
    for method in harness::spec::state_changing_methods() {
        assert!(
            called.iter().any(|seen| seen == method),
            "no case calls {method}"
        );
    }
}

fn undeclared_case(text: &str) -> case::Case {
    let (_, catalog, schemas) = corpus();
    case::parse_case(Path::new("safety.toml"), text, &catalog, &schemas).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_changing_case_that_does_not_say_so_is_skipped_all_the_same() {
    let logout = undeclared_case(
        "id = \"safety.logout\"\ntitle = \"t\"\nclauses = [\"auth.logout.invalidates\"]\ntransports = [\"ws\"]\n\n[[step]]\ncall = \"private/logout\"\nauth = { mode = \"bearer\" }\nexpect = { outcome = \"any\" }\n",
    );
    let raw_close = undeclared_case(
        "id = \"safety.raw_close\"\ntitle = \"t\"\nclauses = [\"m.close_position.type\"]\ntransports = [\"http-body\"]\n\n[[step]]\nraw = '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"private/close_position\", \"params\": {\"instrument_name\": \"BTC-PERPETUAL\", \"type\": \"market\"}}'\nauth = { mode = \"bearer\" }\nexpect = { outcome = \"any\" }\n",
    );
    assert!(!logout.needs.destructive && !raw_close.needs.destructive);
    let (_, catalog, schemas) = corpus();
    let (catalog, schemas) = (Arc::new(catalog), Arc::new(schemas));
    let running = with_timeout(serve::start(serve::ServeConfig::loopback()))
        .await
        .unwrap();
    for allow_destructive in [false, true] {
        let target = Target {
            allow_destructive,
            ..running.target()
        };
        let config = run::RunConfig {
            run_timeout: WAIT,
            ..run::RunConfig::new(target, Vec::new(), catalog.clone(), schemas.clone())
        };
        for (case, transport, method) in [
            (&logout, TransportKind::Ws, "private/logout"),
            (
                &raw_close,
                TransportKind::HttpBody,
                "private/close_position",
            ),
        ] {
            let result = with_timeout(run::run_one(&config, case, transport))
                .await
                .unwrap();
            if allow_destructive {
                assert_eq!(result.verdict, Verdict::Pass, "{}", result.message);
                assert!(!result.exchanges.is_empty());
            } else {
                assert_eq!(result.verdict, Verdict::Skip);
                assert!(result.exchanges.is_empty());
                assert!(
                    result
                        .message
                        .contains(&format!("calls {method}, which changes server state")),
                    "{}",
                    result.message
                );
            }
        }
    }
    running.shutdown().await;
}

/// Runs the binary from the repository root with a target file and extra environment.
fn harness_run(target: &Path, out: &Path, envs: &[(String, String)], extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--quiet", "--target"])
        .arg(target)
        .arg("--out")
        .arg(out)
        .args(extra)
        .envs(envs.iter().cloned())
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn plain_http_to_another_machine_is_refused_on_every_url_unless_allowed() {
    let dir = temp_dir("plain-urls");
    let account = "[accounts.main]\nclient_id = \"a\"\nclient_secret = \"b\"\n";
    let refused = [
        "base_url = \"http://192.0.2.1/api/v2\"\n",
        "base_url = \"https://192.0.2.1/api/v2\"\nws_url = \"ws://192.0.2.1/ws/api/v2\"\n",
        "base_url = \"https://192.0.2.1/api/v2\"\ndirect_access_url = \"http://192.0.2.1/direct\"\n",
        // A look-alike of loopback is another machine.
        "base_url = \"http://localhost.example/api/v2\"\n",
        "base_url = \"http://127.0.0.1@192.0.2.1/api/v2\"\n",
    ];
    for (index, urls) in refused.iter().enumerate() {
        let target = dir.join(format!("refused-{index}.toml"));
        std::fs::write(&target, format!("name = \"remote\"\n{urls}{account}")).unwrap();
        let output = harness_run(&target, &dir, &[], &[]);
        assert_eq!(output.status.code(), Some(2), "{urls}: {}", text(&output));
        assert!(text(&output).contains("pass --allow-plain-http"), "{urls}");
    }
    // Loopback in any spelling, and another machine with the flag, get as far as connecting
    // (to a port where nothing listens, so the run ends as a harness error, not a refusal).
    let allowed = [
        ("base_url = \"http://localhost:9/api/v2\"\n", &[][..]),
        ("base_url = \"http://[::1]:9/api/v2\"\n", &[][..]),
        ("base_url = \"http://127.0.0.1:9/api/v2\"\n", &[][..]),
        (
            "base_url = \"http://127.0.0.1:9/api/v2\"\nws_url = \"ws://192.0.2.1:9/ws/api/v2\"\n",
            &["--allow-plain-http"][..],
        ),
    ];
    for (index, (urls, flags)) in allowed.iter().enumerate() {
        let target = dir.join(format!("allowed-{index}.toml"));
        std::fs::write(&target, format!("name = \"near\"\n{urls}{account}")).unwrap();
        let mut extra = vec!["--filter", "envelope.success", "--timeout-ms", "300"];
        extra.extend_from_slice(flags);
        let output = harness_run(&target, &dir, &[], &extra);
        assert_eq!(output.status.code(), Some(3), "{urls}: {}", text(&output));
        assert!(!text(&output).contains("--allow-plain-http"), "{urls}");
    }
}

/// Files under `dir` (recursively) and the outputs that contain any of `secrets`.
fn leaks(dir: &Path, outputs: &[(&str, &[u8])], secrets: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut check = |name: &str, bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        for secret in secrets
            .iter()
            .filter(|secret| text.contains(secret.as_str()))
        {
            found.push(format!("{name} holds {}…", &secret[..6]));
        }
    };
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .map(|entry| entry.unwrap().path()),
            );
        } else {
            check(&path.display().to_string(), &std::fs::read(&path).unwrap());
        }
    }
    for (name, bytes) in outputs {
        check(name, bytes);
    }
    found
}

/// Serves the reference (with `faults`), runs the binary against it with the secrets in
/// environment variables, and returns what leaked and how many tokens were issued.
async fn leak_run(name: &str, faults: &[Fault]) -> (Vec<String>, usize, String) {
    let mut config = serve::ServeConfig::loopback();
    config.faults = faults.to_vec();
    leak_run_with(name, config, &[]).await
}

/// [`leak_run`] against a server configured as `config`, the run given `extra` arguments.
async fn leak_run_with(
    name: &str,
    config: serve::ServeConfig,
    extra: &[&str],
) -> (Vec<String>, usize, String) {
    let running = with_timeout(serve::start(config)).await.unwrap();
    let target = running.target();
    let dir = temp_dir(name);
    let mut file = target.to_toml();
    let mut envs = Vec::new();
    for (role, account) in &target.accounts {
        let variable = format!("HARNESS_IT_SECRET_{}", role.to_uppercase());
        let secret = account.client_secret.expose();
        file = file.replace(
            &format!("client_secret = \"{secret}\""),
            &format!("client_secret_env = \"{variable}\""),
        );
        envs.push((variable, secret.to_owned()));
        if let Some(factor) = &account.second_factor {
            let variable = format!("HARNESS_IT_TOTP_{}", role.to_uppercase());
            let secret = factor.code.secret().expose();
            file = file
                .replace(
                    &format!("totp_secret = \"{secret}\""),
                    &format!("totp_secret_env = \"{variable}\""),
                )
                .replace(
                    &format!("code = \"{secret}\""),
                    &format!("code_env = \"{variable}\""),
                );
            envs.push((variable, secret.to_owned()));
        }
    }
    let key = target.fixtures.direct_access_key.as_ref().unwrap().expose();
    file = file.replace(
        &format!("direct_access_key = \"{key}\""),
        "direct_access_key_env = \"HARNESS_IT_DA_KEY\"",
    );
    envs.push(("HARNESS_IT_DA_KEY".to_owned(), key.to_owned()));
    let target_path = dir.join("target.toml");
    std::fs::write(&target_path, &file).unwrap();
    let out = dir.join("out");
    let snapshots = dir.join("snapshots");
    let snapshots_arg = snapshots.display().to_string();
    let mut args = vec!["--snapshots".to_owned(), snapshots_arg];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let run_output = {
        let (target_path, out) = (target_path.clone(), out.clone());
        with_timeout(tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            harness_run(&target_path, &out, &envs, &args)
        }))
        .await
        .unwrap()
    };
    let mut secrets = target.secrets();
    let issued = running.state().issued_tokens();
    secrets.extend(issued.iter().cloned());
    running.shutdown().await;
    let found = leaks(
        &dir,
        &[
            ("stdout", &run_output.stdout),
            ("stderr", &run_output.stderr),
        ],
        &secrets,
    );
    (found, issued.len(), text(&run_output))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn no_secret_or_issued_token_reaches_any_output() {
    let (found, issued, output) = leak_run("leak-clean", &[]).await;
    assert!(output.contains("0 failed"), "{output}");
    assert!(issued > 200, "only {issued} tokens issued");
    assert_eq!(found, Vec::<String>::new());
}

/// A target whose 2FA accounts take a fixed code (`harness serve --two-factor-code`), given
/// in the target file as `code_env`: the second-factor cases pass with it (the valid code
/// confirms, the wrong one and none are refused), and the code reaches no output.
#[tokio::test(flavor = "multi_thread")]
async fn a_fixed_second_factor_code_confirms_and_never_leaks() {
    let config = serve::ServeConfig::loopback().with_two_factor_code("otp-K7Q2M9");
    let (found, _, output) =
        leak_run_with("leak-fixed-code", config, &["--filter", "two_factor"]).await;
    assert!(output.contains("0 failed"), "{output}");
    assert!(
        !output.lines().any(|line| line.starts_with("0 passed")),
        "{output}"
    );
    assert_eq!(found, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
async fn no_secret_or_issued_token_reaches_the_output_of_failures() {
    // Every fault at once: failures everywhere, so reproduction commands (which carry
    // request bodies and headers) and failure messages are printed and written.
    let (found, issued, output) = leak_run("leak-faults", Fault::ALL).await;
    assert!(output.contains("reproduce: "), "{output}");
    assert!(issued > 50, "only {issued} tokens issued");
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn the_leak_scan_finds_a_planted_token() {
    let dir = temp_dir("leak-plant");
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(
        dir.join("nested/report.json"),
        "{\"token\": \"atPLANTED0123456789\"}",
    )
    .unwrap();
    let secrets = vec![
        "atPLANTED0123456789".to_owned(),
        "rtNEVERWRITTEN".to_owned(),
    ];
    assert_eq!(leaks(&dir, &[], &secrets).len(), 1);
    assert_eq!(
        leaks(&dir, &[("stdout", b"Bearer rtNEVERWRITTEN")], &secrets).len(),
        2
    );
}
