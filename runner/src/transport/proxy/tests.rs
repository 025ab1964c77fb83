//! Unit tests of the proxy rule: which variable carries which scheme, `NO_PROXY`, and loopback.

use super::*;

fn rule(pairs: &[(&str, &str)]) -> ProxyRule {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    ProxyRule::from_lookup(&|name| {
        pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    })
    .unwrap()
}

fn proxied(rule: &ProxyRule, url: &str) -> Option<String> {
    rule.proxy_for(&Url::parse(url).unwrap())
        .map(|proxy| proxy.as_str().to_owned())
}

/// Proxy variables, a URL, and the proxy it goes through (`None`: a direct connection).
type ProxyChoice = (
    &'static [(&'static str, &'static str)],
    &'static str,
    Option<&'static str>,
);

const BOTH: &[(&str, &str)] = &[
    ("HTTPS_PROXY", "http://secure:3128"),
    ("HTTP_PROXY", "plain:8080"),
];

const CHOICES: &[ProxyChoice] = &[
    // https and wss take the https proxy, http and ws the http proxy.
    (
        BOTH,
        "https://api.example.com/api/v2",
        Some("http://secure:3128/"),
    ),
    (
        BOTH,
        "wss://api.example.com/ws",
        Some("http://secure:3128/"),
    ),
    (BOTH, "http://api.example.com/", Some("http://plain:8080/")),
    (BOTH, "ws://api.example.com/", Some("http://plain:8080/")),
    // Lowercase names win over uppercase.
    (
        &[
            ("https_proxy", "http://lower:1"),
            ("HTTPS_PROXY", "http://upper:2"),
        ],
        "https://h.example/",
        Some("http://lower:1/"),
    ),
    // A star bypasses every host.
    (
        &[("HTTPS_PROXY", "http://p:1"), ("no_proxy", "*")],
        "https://example.com/",
        None,
    ),
];

#[test]
fn each_scheme_takes_its_variable_lowercase_first_unless_no_proxy_says_otherwise() {
    for (variables, url, expected) in CHOICES {
        assert_eq!(
            proxied(&rule(variables), url).as_deref(),
            *expected,
            "{url}"
        );
    }
}

#[test]
fn loopback_hosts_always_bypass_the_proxy() {
    let rule = rule(&[("HTTPS_PROXY", "http://p:1"), ("HTTP_PROXY", "http://p:1")]);
    for url in [
        "https://127.0.0.1:8700/api/v2",
        "wss://localhost/ws",
        "http://[::1]:80/",
        "ws://127.9.9.9/",
        "https://app.localhost/",
    ] {
        assert_eq!(proxied(&rule, url), None, "{url}");
    }
}

#[test]
fn no_proxy_matches_domains_suffixes_addresses_and_networks() {
    let rule = rule(&[
        ("HTTPS_PROXY", "http://p:1"),
        (
            "NO_PROXY",
            "internal.example, .corp.test,10.0.0.0/8 ,192.0.2.7,[2001:db8::1]",
        ),
    ]);
    for url in [
        "https://internal.example/",
        "https://api.internal.example/",
        "https://corp.test/",
        "https://a.b.corp.test./",
        "https://10.20.30.40/",
        "https://192.0.2.7/",
        "https://[2001:db8::1]/",
    ] {
        assert_eq!(proxied(&rule, url), None, "{url}");
    }
    for url in [
        "https://notinternal.example/",
        "https://192.0.2.8/",
        "https://11.0.0.1/",
        "https://example.com/",
    ] {
        assert!(proxied(&rule, url).is_some(), "{url}");
    }
}

#[test]
fn no_proxy_variable_means_a_direct_connection() {
    let rule = rule(&[]);
    assert_eq!(rule, ProxyRule::default());
    assert_eq!(proxied(&rule, "https://example.com/"), None);
}

#[test]
fn proxies_other_than_http_are_refused_by_name() {
    let error = ProxyRule::from_lookup(&|name| {
        (name == "HTTPS_PROXY").then(|| "socks5://p:1080".to_owned())
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "HTTPS_PROXY names a socks5:// proxy; only http:// proxies are supported"
    );
}

#[tokio::test]
async fn tunnel_sends_connect_with_credentials_and_refuses_a_non_2xx_answer() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let proxy_task = tokio::spawn(async move {
        let mut heads = Vec::new();
        for answer in [
            "HTTP/1.1 200 Connection established\r\n\r\n",
            "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n",
        ] {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") {
                head.push(stream.read_u8().await.unwrap());
            }
            stream.write_all(answer.as_bytes()).await.unwrap();
            heads.push(String::from_utf8(head).unwrap());
            if answer.contains("200") {
                stream.write_all(b"inside").await.unwrap();
            }
        }
        heads
    });
    let proxy = Url::parse(&format!("http://user:p%40ss@{addr}")).unwrap();
    let mut stream = tunnel(&proxy, "api.example.com", 443).await.unwrap();
    let mut inside = [0u8; 6];
    stream.read_exact(&mut inside).await.unwrap();
    assert_eq!(&inside, b"inside");
    let error = tunnel(&proxy, "api.example.com", 443).await.unwrap_err();
    assert!(error.to_string().contains("407"), "{error}");
    let heads = proxy_task.await.unwrap();
    assert!(
        heads[0].starts_with("CONNECT api.example.com:443 HTTP/1.1\r\n"),
        "{}",
        heads[0]
    );
    // "user:p@ss" in Basic.
    assert!(
        heads[0].contains("Proxy-Authorization: Basic dXNlcjpwQHNz\r\n"),
        "{}",
        heads[0]
    );
}
