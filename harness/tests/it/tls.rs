//! TLS and proxies end to end: the suite over https and wss against `harness serve --tls`
//! passes exactly as over plain HTTP (and the fuzzer finds nothing), with `ca_file` or with the CA in a temporary system
//! trust store (`SSL_CERT_FILE`); the judge over TLS serves a client that trusts its CA; a
//! wrong CA is a harness error naming host and reason; `accept_invalid_certs` and plain
//! URLs to another host are refused; and both transports go through an HTTP proxy's
//! `CONNECT` tunnel when `HTTPS_PROXY` says so.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use harness::serve::{self, TlsIdentity};
use harness::target_file::Target;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

use super::cli::{harness, run, spawn_reference_with, temp_dir, text};

mod judge;
mod proxy;

const WAIT: Duration = Duration::from_secs(60);

/// The (case, transport, verdict) of every result of a report.
fn verdicts(dir: &Path) -> BTreeSet<(String, String, String)> {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            let field = |name: &str| result[name].as_str().unwrap().to_owned();
            (field("case"), field("transport"), field("verdict"))
        })
        .collect()
}

fn run_against(target: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--quiet",
        "--target",
        target.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn stop(mut server: crate::cli::KilledOnDrop) {
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn the_suite_passes_over_https_and_wss_exactly_as_over_plain_http() {
    let dir = temp_dir("tls-suite");
    let tls_target = dir.join("tls.toml");
    let plain_target = dir.join("plain.toml");
    let tls_server = spawn_reference_with(&tls_target, &["--tls"]);
    let plain_server = spawn_reference_with(&plain_target, &[]);
    let tls_run = run_against(&tls_target, &dir.join("tls"), &[]);
    let plain_run = run_against(&plain_target, &dir.join("plain"), &[]);
    let fuzz_run = run(&[
        "fuzz",
        "--requests",
        "40",
        "--seed",
        "19",
        "--target",
        tls_target.to_str().unwrap(),
        "--out",
        dir.join("fuzz").to_str().unwrap(),
    ]);
    stop(tls_server);
    stop(plain_server);

    let written = std::fs::read_to_string(&tls_target).unwrap();
    let target = Target::load(&tls_target).unwrap();
    assert!(
        target.base_url.starts_with("https://127.0.0.1:"),
        "{written}"
    );
    assert!(
        target.ws_url.as_deref().unwrap().starts_with("wss://"),
        "{written}"
    );
    assert!(
        target
            .direct_access_url
            .as_deref()
            .unwrap()
            .starts_with("https://"),
        "{written}"
    );
    assert_eq!(target.tls.ca_file, Some(dir.join("tls.ca.pem")));

    assert_eq!(tls_run.status.code(), Some(0), "{}", text(&tls_run));
    assert_eq!(plain_run.status.code(), Some(0), "{}", text(&plain_run));
    assert_eq!(fuzz_run.status.code(), Some(0), "{}", text(&fuzz_run));
    let over_tls = verdicts(&dir.join("tls"));
    assert!(over_tls.len() > 200, "{} results", over_tls.len());
    for transport in ["http-query", "http-body", "ws", "rest"] {
        assert!(
            over_tls.iter().any(|(_, seen, _)| seen == transport),
            "no {transport} result"
        );
    }
    // Info and pass are one outcome here: the rate probe's verdict between them depends on
    // timing (how far the bucket refilled during the burst), not on the transport.
    let outcome = |set: BTreeSet<(String, String, String)>| -> BTreeSet<(String, String, String)> {
        set.into_iter()
            .map(|(case, transport, verdict)| {
                let verdict = if verdict == "info" {
                    "pass".to_owned()
                } else {
                    verdict
                };
                (case, transport, verdict)
            })
            .collect()
    };
    let over_tls = outcome(over_tls);
    let over_plain = outcome(verdicts(&dir.join("plain")));
    let differences: Vec<_> = over_tls.symmetric_difference(&over_plain).collect();
    assert!(differences.is_empty(), "{differences:?}");
    assert!(over_tls.iter().all(|(_, _, verdict)| verdict == "pass"));
}

#[test]
fn a_ca_in_the_system_trust_store_is_trusted_without_ca_file() {
    let dir = temp_dir("tls-system-roots");
    let written = dir.join("written.toml");
    let server = spawn_reference_with(&written, &["--tls"]);
    // The same target without ca_file: only the platform's trust store can vouch for it.
    let text_without_ca: String = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with("ca_file"))
        .map(|line| format!("{line}\n"))
        .collect();
    let target = dir.join("target.toml");
    std::fs::write(&target, text_without_ca).unwrap();
    // A temporary trust store holding only the test CA; rustls-native-certs reads
    // SSL_CERT_FILE in place of the platform's store.
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::copy(
        dir.join("written.ca.pem"),
        store.join("ca-certificates.crt"),
    )
    .unwrap();
    let out = dir.join("out");
    let args = [
        "run",
        "--quiet",
        "--filter",
        "auth.client_credentials",
        "--target",
        target.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let trusted = harness()
        .args(args)
        .env("SSL_CERT_FILE", store.join("ca-certificates.crt"))
        .env_remove("SSL_CERT_DIR")
        .output()
        .unwrap();
    // Another folder: a run that cannot start writes its reports too, saying why.
    let untrusted_out = dir.join("out-untrusted");
    let mut untrusted_args = args;
    untrusted_args[7] = untrusted_out.to_str().unwrap();
    let untrusted = harness()
        .args(untrusted_args)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .output()
        .unwrap();
    stop(server);
    assert_eq!(trusted.status.code(), Some(0), "{}", text(&trusted));
    let transports: BTreeSet<String> = verdicts(&dir.join("out"))
        .into_iter()
        .map(|(_, transport, _)| transport)
        .collect();
    assert!(transports.contains("ws") && transports.contains("http-body"));
    assert_eq!(untrusted.status.code(), Some(3), "{}", text(&untrusted));
    assert!(
        text(&untrusted).contains("UnknownIssuer"),
        "{}",
        text(&untrusted)
    );
}

#[test]
fn a_wrong_ca_is_a_harness_error_naming_host_and_reason_on_either_transport() {
    let dir = temp_dir("tls-wrong-ca");
    let written = dir.join("written.toml");
    let server = spawn_reference_with(&written, &["--tls"]);
    let other = TlsIdentity::generate("127.0.0.1:0".parse().unwrap(), &[]).unwrap();
    std::fs::write(dir.join("other-ca.pem"), other.ca_pem().unwrap()).unwrap();
    let text_with_other_ca: String = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .map(|line| {
            if line.starts_with("ca_file") {
                // Relative: resolved against the target file's directory.
                "ca_file = \"other-ca.pem\"\n".to_owned()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let target = dir.join("target.toml");
    std::fs::write(&target, text_with_other_ca).unwrap();
    let host = Target::load(&target)
        .unwrap()
        .base_url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let both = run_against(&target, &dir.join("both"), &[]);
    let ws_only = run_against(&target, &dir.join("ws"), &["--transport", "ws"]);
    // Its first request sends the client secret in the query string of the URL the
    // message names.
    let secret_in_url = run_against(
        &target,
        &dir.join("query"),
        &[
            "--transport",
            "http-query",
            "--filter",
            "auth.client_credentials",
        ],
    );
    stop(server);

    let expected = format!("TLS with {host} failed: invalid peer certificate: UnknownIssuer");
    assert_eq!(both.status.code(), Some(3), "{}", text(&both));
    assert!(
        String::from_utf8_lossy(&both.stderr).contains(&expected),
        "{}",
        text(&both)
    );
    assert_eq!(
        secret_in_url.status.code(),
        Some(3),
        "{}",
        text(&secret_in_url)
    );
    assert!(
        text(&secret_in_url).contains(&expected),
        "{}",
        text(&secret_in_url)
    );
    for secret in Target::load(&target).unwrap().secrets() {
        assert!(
            !text(&secret_in_url).contains(&secret),
            "{}",
            text(&secret_in_url)
        );
    }
    // Over WebSocket alone the run ends in 3 either way: the first call (over HTTP) or the
    // executions that ran name the TLS failure. Which comes first is timing: when the
    // first call's failure ends the run, the run is unreachable and its report says so and
    // holds no result; when the executions' failures fire the breaker first, the report
    // says that every execution ended in ERROR (naming the TLS failure) or was not run,
    // none in FAIL.
    assert_eq!(ws_only.status.code(), Some(3), "{}", text(&ws_only));
    let report = std::fs::read_to_string(dir.join("ws/report.json")).expect("reports written");
    let report: Value = serde_json::from_str(&report).unwrap();
    if report["results"].as_array().is_some_and(Vec::is_empty) {
        let why = report["interrupted"].as_str().unwrap_or_default();
        assert!(
            why.contains("target unreachable: ") && why.contains(&expected),
            "{why}"
        );
        return;
    }
    assert_eq!(report["summary"]["fail"], 0);
    let mut errors = 0;
    for result in report["results"].as_array().unwrap() {
        let message = result["message"].as_str().unwrap();
        if result["verdict"] == "error" {
            errors += 1;
            assert!(message.contains(&expected), "{result}");
        } else {
            assert_eq!(result["verdict"], "skip", "{result}");
            assert!(
                message.starts_with("not run: target stopped answering: ")
                    && message.contains("could not connect"),
                "{result}"
            );
        }
    }
    assert!(errors > 0, "no execution named the TLS failure");
}

#[test]
fn accept_invalid_certs_and_plain_urls_are_refused_for_another_host() {
    let dir = temp_dir("tls-refusals");
    let accepting = dir.join("accepting.toml");
    std::fs::write(
        &accepting,
        "name = \"remote\"\nbase_url = \"https://192.0.2.1/api/v2\"\naccept_invalid_certs = true\n[accounts.main]\nclient_id = \"a\"\nclient_secret = \"b\"\n",
    )
    .unwrap();
    let refused = run(&["run", "--quiet", "--target", accepting.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("--allow-invalid-certs"),
        "{}",
        text(&refused)
    );
    let refused = run(&[
        "fuzz",
        "--requests",
        "1",
        "--target",
        accepting.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));

    let plain_ws = dir.join("plain-ws.toml");
    std::fs::write(
        &plain_ws,
        "name = \"remote\"\nbase_url = \"https://192.0.2.1/api/v2\"\nws_url = \"ws://192.0.2.1/ws/api/v2\"\n[accounts.main]\nclient_id = \"a\"\nclient_secret = \"b\"\n",
    )
    .unwrap();
    let refused = run(&["run", "--quiet", "--target", plain_ws.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("--allow-plain-http"),
        "{}",
        text(&refused)
    );
}

#[test]
fn accept_invalid_certs_reaches_a_loopback_server_with_an_unknown_ca() {
    let dir = temp_dir("tls-accept-invalid");
    let written = dir.join("written.toml");
    let server = spawn_reference_with(&written, &["--tls"]);
    let text_accepting: String = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .map(|line| {
            if line.starts_with("ca_file") {
                "accept_invalid_certs = true\n".to_owned()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let target = dir.join("target.toml");
    std::fs::write(&target, text_accepting).unwrap();
    let output = run_against(
        &target,
        &dir.join("out"),
        &["--filter", "auth.client_credentials"],
    );
    stop(server);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
}

#[test]
fn a_given_certificate_and_key_are_served_and_their_ca_named() {
    let dir = temp_dir("tls-given-pair");
    // A CA and a certificate for localhost made as an operator would, outside the harness.
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), leaf.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), leaf_key.serialize_pem()).unwrap();
    let target = dir.join("target.toml");
    let (cert, key, ca) = (
        dir.join("cert.pem"),
        dir.join("key.pem"),
        dir.join("ca.pem"),
    );
    let server = spawn_reference_with(
        &target,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--tls-ca",
            ca.to_str().unwrap(),
        ],
    );
    let output = run_against(
        &target,
        &dir.join("out"),
        &["--filter", "auth.client_credentials"],
    );
    stop(server);
    assert_eq!(Target::load(&target).unwrap().tls.ca_file, Some(ca));
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));

    // A key that does not match the certificate is refused before anything listens.
    let other_key = dir.join("other-key.pem");
    std::fs::write(
        &other_key,
        rcgen::KeyPair::generate().unwrap().serialize_pem(),
    )
    .unwrap();
    let refused = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        other_key.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("do not make a TLS server"),
        "{}",
        text(&refused)
    );
}
