//! `harness judge --tls` with a client built only from rustls, reqwest and
//! tokio-tungstenite, trusting the CA the judge wrote.

use super::*;
use crate::cli::KilledOnDrop;

/// A rustls client configuration trusting only the CA in `ca_file`, as a client under test
/// would build it: nothing of the harness's own transports.
fn client_trusting(ca_file: &Path) -> rustls::ClientConfig {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(ca_file).unwrap() {
        roots.add(certificate.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

#[test]
fn the_judge_over_tls_serves_a_client_that_trusts_the_written_ca() {
    let dir = temp_dir("tls-judge");
    let target_file = dir.join("judge.toml");
    let judge = harness()
        .args([
            "judge",
            "--tls",
            "--listen",
            "127.0.0.1:0",
            "--requests",
            "2",
        ])
        .arg("--target-out")
        .arg(&target_file)
        .arg("--out")
        .arg(dir.join("out"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut judge = KilledOnDrop::new(judge);
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(&target_file).is_ok_and(|text| text.contains("[limits]")) {
        assert!(Instant::now() < deadline, "the judge wrote no target file");
        std::thread::sleep(Duration::from_millis(25));
    }
    let target = Target::load(&target_file).unwrap();
    let ca_file = target.tls.ca_file.clone().expect("the judge names its CA");
    let config = client_trusting(&ca_file);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (http_answer, ws_answer) = runtime.block_on(async {
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(config.clone())
            .build()
            .unwrap();
        let http_answer: Value = tokio::time::timeout(WAIT, async {
            http.get(format!("{}/public/get_currencies", target.base_url))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
        .await
        .unwrap();
        let ws_url = target.ws_url.clone().unwrap();
        let ws_answer = tokio::time::timeout(WAIT, async {
            let (mut ws, _) = tokio_tungstenite::connect_async_tls_with_config(
                ws_url.as_str(),
                None,
                true,
                Some(tokio_tungstenite::Connector::Rustls(Arc::new(config))),
            )
            .await
            .unwrap();
            let call =
                json!({"jsonrpc": "2.0", "id": 7, "method": "public/get_currencies", "params": {}});
            ws.send(Message::text(call.to_string())).await.unwrap();
            loop {
                if let Message::Text(text) = ws.next().await.unwrap().unwrap() {
                    return serde_json::from_str::<Value>(&text).unwrap();
                }
            }
        })
        .await
        .unwrap();
        (http_answer, ws_answer)
    });
    while judge.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = judge.kill();
            panic!("the judge did not end after its two requests");
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let output = judge.into_inner().wait_with_output().unwrap();
    assert!(http_answer["result"].is_array(), "{http_answer}");
    assert_eq!(ws_answer["id"], 7, "{ws_answer}");
    assert!(ws_answer["result"].is_array(), "{ws_answer}");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let transports: BTreeSet<String> = verdicts(&dir.join("out"))
        .into_iter()
        .map(|(_, transport, _)| transport)
        .collect();
    assert!(
        transports.contains("ws") && transports.contains("http-query"),
        "{transports:?}"
    );
}
