//! Both transports through an HTTP proxy's `CONNECT` tunnel, to a host name only the
//! proxy can resolve.

use super::*;

/// A minimal HTTP proxy on 127.0.0.1 that only tunnels: it answers `CONNECT` by
/// connecting to `upstream` whatever host was asked for (it plays the proxy's DNS), and
/// records every host it was asked for.
struct ConnectProxy {
    addr: std::net::SocketAddr,
    tunnels: Arc<AtomicUsize>,
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ConnectProxy {
    async fn start(upstream: std::net::SocketAddr) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let tunnels = Arc::new(AtomicUsize::new(0));
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (counter, log) = (tunnels.clone(), asked.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let (counter, log) = (counter.clone(), log.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                        match client.read_u8().await {
                            Ok(byte) => head.push(byte),
                            Err(_) => return,
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let Some(authority) = head
                        .strip_prefix("CONNECT ")
                        .and_then(|rest| rest.split(' ').next())
                    else {
                        let _ = client
                            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                            .await;
                        return;
                    };
                    log.lock().unwrap().push(authority.to_owned());
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                        return;
                    };
                    counter.fetch_add(1, Ordering::SeqCst);
                    if client
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await
                        .is_ok()
                    {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        ConnectProxy {
            addr,
            tunnels,
            asked,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_transports_go_through_the_https_proxy_to_a_host_only_it_can_resolve() {
    let dir = temp_dir("tls-proxy");
    // "api.proxied.test" resolves nowhere but in the proxy, so a run that passes went
    // through it; a loopback URL would bypass the proxy by design.
    let mut config = serve::ServeConfig::loopback();
    let identity = TlsIdentity::generate(config.listen, &["api.proxied.test"]).unwrap();
    std::fs::write(dir.join("ca.pem"), identity.ca_pem().unwrap()).unwrap();
    config.tls = Some(identity);
    let running = tokio::time::timeout(WAIT, serve::start(config))
        .await
        .unwrap()
        .unwrap();
    let port = running.addr.port();
    let proxy = ConnectProxy::start(running.addr).await;
    let text_via_name = running
        .target()
        .to_toml()
        .replace(
            &format!("127.0.0.1:{port}"),
            &format!("api.proxied.test:{port}"),
        )
        .replace(
            "allow_destructive = true",
            "allow_destructive = true\nca_file = \"ca.pem\"",
        );
    let target = dir.join("target.toml");
    std::fs::write(&target, text_via_name).unwrap();
    let mut command = harness();
    command
        .args([
            "run",
            "--quiet",
            "--filter",
            "auth.client_credentials",
            "--target",
        ])
        .arg(&target)
        .arg("--out")
        .arg(dir.join("out"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    for name in [
        "https_proxy",
        "http_proxy",
        "no_proxy",
        "NO_PROXY",
        "HTTP_PROXY",
    ] {
        command.env_remove(name);
    }
    command.env("HTTPS_PROXY", format!("http://{}", proxy.addr));
    let output = tokio::time::timeout(
        WAIT,
        tokio::task::spawn_blocking(move || command.output().unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    running.shutdown().await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let transports: BTreeSet<String> = verdicts(&dir.join("out"))
        .into_iter()
        .map(|(_, transport, _)| transport)
        .collect();
    assert!(transports.contains("ws") && transports.contains("http-query"));
    // One tunnel at least for the pooled HTTP client and one per WebSocket session.
    let ws_sessions = verdicts(&dir.join("out"))
        .iter()
        .filter(|(_, transport, _)| transport == "ws")
        .count();
    assert!(
        proxy.tunnels.load(Ordering::SeqCst) > ws_sessions,
        "{} tunnels for {ws_sessions} WebSocket executions",
        proxy.tunnels.load(Ordering::SeqCst)
    );
    let asked = proxy.asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .all(|authority| *authority == format!("api.proxied.test:{port}")),
        "{asked:?}"
    );
}
