//! The reference server over real sockets: every method against its schema, every
//! authentication path and its refusals, pagination, malformed input, and a handful of
//! fault switches that must really change behaviour.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::auth::clock::Clock;
use harness::auth::nonce::fresh_nonce;
use harness::auth::sign::{self, DEFAULT_SCHEME, SignedHeader};
use harness::serve::{self, Config, Connection, Fault, Running, ServerState};
use harness::target_file::{RateLimits, Target};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(10);

/// Every network await goes through this, so a broken server fails a test instead of
/// hanging it.
async fn with_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("network await timed out")
}

fn now_ms() -> u64 {
    Clock::system().now_ms()
}

struct Server {
    running: Running,
    target: Target,
    http: reqwest::Client,
}

async fn start(faults: &[Fault]) -> Server {
    let mut config = Config::loopback();
    config.faults = faults.to_vec();
    // Walks of the transaction log send dozens of requests; the 1/s limit has its own test.
    config.limits = RateLimits {
        transaction_log_per_second: 1_000.0,
        transaction_log_burst: 1_000,
        ..RateLimits::default()
    };
    start_with(config).await
}

async fn start_with(config: Config) -> Server {
    let running = with_timeout(serve::start(config))
        .await
        .expect("server starts");
    let target = running.target();
    Server {
        running,
        target,
        http: reqwest::Client::new(),
    }
}

impl Server {
    fn credentials(&self, role: &str) -> (String, String) {
        let account = &self.target.accounts[role];
        (
            account.client_id.clone(),
            account.client_secret.expose().to_owned(),
        )
    }

    fn origin(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// GET `path_and_query` (relative to the origin) with optional header and body.
    async fn raw(
        &self,
        path_and_query: &str,
        authorization: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> (u16, Value) {
        let mut request = self.http.get(format!("{}{path_and_query}", self.origin()));
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = with_timeout(request.send())
            .await
            .expect("request is answered");
        let status = response.status().as_u16();
        let text = with_timeout(response.text()).await.expect("body is read");
        let value = serde_json::from_str(&text).expect("answer is JSON");
        (status, value)
    }

    async fn get(&self, method: &str, query: &str, authorization: Option<&str>) -> (u16, Value) {
        let separator = if query.is_empty() { "" } else { "?" };
        self.raw(
            &format!("/api/v2/{method}{separator}{query}"),
            authorization,
            None,
        )
        .await
    }

    async fn get_body(
        &self,
        method: &str,
        body: Value,
        authorization: Option<&str>,
    ) -> (u16, Value) {
        self.raw(
            &format!("/api/v2/{method}"),
            authorization,
            Some(body.to_string().into_bytes()),
        )
        .await
    }

    /// A token set for `role` by client_credentials, with an optional scope.
    async fn auth(&self, role: &str, scope: Option<&str>) -> Value {
        let (client_id, secret) = self.credentials(role);
        let mut params = json!({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret});
        if let Some(scope) = scope {
            params["scope"] = json!(scope);
        }
        let (status, answer) = self
            .get_body("public/auth", rpc(1, "public/auth", params), None)
            .await;
        assert!(matches!(status, 200 | 201), "{answer}");
        answer["result"].clone()
    }

    async fn bearer(&self, role: &str) -> String {
        bearer(&self.auth(role, None).await)
    }
}

fn bearer(token_set: &Value) -> String {
    format!(
        "Bearer {}",
        token_set["access_token"].as_str().expect("access_token")
    )
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

struct Ws {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Ws {
    async fn connect(server: &Server) -> Ws {
        let url = server.target.ws_url.clone().expect("ws url");
        let (stream, _) = with_timeout(tokio_tungstenite::connect_async(url))
            .await
            .expect("websocket connects");
        Ws {
            stream,
            next_id: 100,
        }
    }

    async fn send(&mut self, message: Message) {
        with_timeout(self.stream.send(message))
            .await
            .expect("message is sent");
    }

    async fn receive(&mut self) -> Value {
        loop {
            let message = with_timeout(self.stream.next())
                .await
                .expect("connection stays open")
                .expect("message is read");
            match message {
                Message::Text(text) => return serde_json::from_str(&text).expect("answer is JSON"),
                Message::Binary(bytes) => {
                    return serde_json::from_slice(&bytes).expect("answer is JSON");
                }
                _ => continue,
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(Message::text(rpc(id, method, params).to_string()))
            .await;
        let answer = self.receive().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer
    }
}

/// The case schemas, registered by their `$id` so `$ref`s between them resolve.
fn schema(name: &str) -> &'static jsonschema::Validator {
    static VALIDATORS: OnceLock<HashMap<String, jsonschema::Validator>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/schemas");
        let schemas: Vec<(String, Value)> = std::fs::read_dir(directory)
            .expect("schemas directory")
            .map(|entry| {
                let path = entry.expect("schema entry").path();
                let text = std::fs::read_to_string(&path).expect("schema file");
                let name = path
                    .file_name()
                    .expect("file name")
                    .to_string_lossy()
                    .into_owned();
                (name, serde_json::from_str(&text).expect("schema JSON"))
            })
            .collect();
        let mut options = jsonschema::options();
        for (_, schema) in &schemas {
            let id = schema["$id"].as_str().expect("$id").to_owned();
            options =
                options.with_resource(id, jsonschema::Resource::from_contents(schema.clone()));
        }
        schemas
            .iter()
            .map(|(name, schema)| (name.clone(), options.build(schema).expect("schema builds")))
            .collect()
    });
    &validators[name]
}

fn assert_schema(name: &str, value: &Value) {
    let errors: Vec<String> = schema(name)
        .iter_errors(value)
        .map(|error| error.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value}");
}

fn assert_ok(name: &str, (status, answer): (u16, Value)) -> Value {
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["jsonrpc"], "2.0");
    assert!(answer.get("error").is_none(), "{answer}");
    assert_schema(name, &answer["result"]);
    answer["result"].clone()
}

#[tokio::test]
async fn public_methods_answer_per_schema_over_query_body_and_ws() {
    let server = start(&[]).await;
    assert_ok(
        "method.public.get_currencies.json",
        server.get("public/get_currencies", "", None).await,
    );
    for currency in ["BTC", "ETH", "USDC", "USDT", "EURR"] {
        let result = assert_ok(
            "method.public.get_historical_volatility.json",
            server
                .get(
                    "public/get_historical_volatility",
                    &format!("currency={currency}"),
                    None,
                )
                .await,
        );
        assert!(!result.as_array().expect("array").is_empty());
    }
    for instrument in [
        "BTC-PERPETUAL",
        "ETH-PERPETUAL",
        "BTC-27JUN25",
        "BTC-27JUN25-70000-C",
    ] {
        let result = assert_ok(
            "method.public.get_book_summary_by_instrument.json",
            server
                .get(
                    "public/get_book_summary_by_instrument",
                    &format!("instrument_name={instrument}"),
                    None,
                )
                .await,
        );
        assert_eq!(result[0]["instrument_name"], instrument);
    }
    let body = rpc(42, "public/get_currencies", json!({}));
    let (status, answer) = server.get_body("public/get_currencies", body, None).await;
    assert_eq!((status, &answer["id"]), (200, &json!(42)));
    let mut ws = Ws::connect(&server).await;
    let answer = ws
        .call(
            "public/get_historical_volatility",
            json!({"currency": "ETH"}),
        )
        .await;
    assert_schema(
        "method.public.get_historical_volatility.json",
        &answer["result"],
    );
}

#[tokio::test]
async fn private_methods_answer_per_schema() {
    let server = start(&[]).await;
    let token = server.auth("main", None).await;
    assert_schema("method.public.auth.json", &token);
    assert_eq!(token["token_type"], "bearer");
    let auth = bearer(&token);
    let auth = Some(auth.as_str());
    let sub_id = server
        .target
        .fixtures
        .subaccount_id
        .expect("subaccount fixture");
    let member_id = server.target.fixtures.member_id.expect("member fixture");
    for query in [
        "",
        "index_name=all",
        "index_name=eth_usdc&mmp_group=mq_alpha",
        "block_rfq=true",
        "index_name=btc_usd&mmp_group=",
    ] {
        let result = assert_ok(
            "method.private.get_mmp_status.json",
            server.get("private/get_mmp_status", query, auth).await,
        );
        assert!(!result.as_array().expect("array").is_empty(), "{query}");
    }
    let history = assert_ok(
        "method.private.get_trigger_order_history.json",
        server
            .get("private/get_trigger_order_history", "currency=BTC", auth)
            .await,
    );
    assert_eq!(history["entries"].as_array().expect("entries").len(), 20);
    let log = assert_ok(
        "method.private.get_transaction_log.json",
        server.get("private/get_transaction_log", "", auth).await,
    );
    assert_eq!(log["logs"].as_array().expect("logs").len(), 100);
    let types: HashSet<&str> = log["logs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["type"].as_str())
        .collect();
    assert!(types.len() > 3, "{types:?}");
    for query in [
        "instrument_name=BTC-PERPETUAL&type=market",
        "instrument_name=ETH-PERPETUAL&type=limit&price=3000",
    ] {
        assert_ok(
            "method.private.close_position.json",
            server.get("private/close_position", query, auth).await,
        );
    }
    let deleted = assert_ok(
        "method.private.delete_member.json",
        server
            .get(
                "private/delete_member",
                &format!("member_id={member_id}"),
                auth,
            )
            .await,
    );
    assert_eq!(deleted["members"].as_array().expect("members").len(), 2);
    let (_, again) = server
        .get(
            "private/delete_member",
            &format!("member_id={member_id}"),
            auth,
        )
        .await;
    assert_eq!(error_code(&again), -32602);
    for state in ["disable", "enable"] {
        assert_ok(
            "method.private.toggle_subaccount_login.json",
            server
                .get(
                    "private/toggle_subaccount_login",
                    &format!("sid={sub_id}&state={state}"),
                    auth,
                )
                .await,
        );
    }
    let key = server
        .target
        .fixtures
        .direct_access_key
        .clone()
        .expect("direct key");
    let (status, answer) = server
        .raw(
            "/direct/api/v2/private/lock_portfolio",
            Some(&format!("Bearer {}", key.expose())),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_schema("method.private.lock_portfolio.json", &answer["result"]);
    let (status, answer) = server
        .raw(
            "/direct/api/v2/private/lock_portfolio",
            Some("Bearer nope"),
            None,
        )
        .await;
    assert_eq!((status, error_code(&answer)), (401, 13009));
    let (status, _) = server
        .raw("/direct/api/v2/private/lock_portfolio", None, None)
        .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn client_signature_is_accepted_and_each_refusal_happens() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let signed = |timestamp: u64, nonce: &str, data: &str| {
        let signature = sign::client_signature(&secret, timestamp, nonce, data).expect("signs");
        json!({"grant_type": "client_signature", "client_id": client_id, "timestamp": timestamp,
               "signature": signature, "nonce": nonce, "data": data})
    };
    let mut ws = Ws::connect(&server).await;
    let answer = ws
        .call("public/auth", signed(now_ms(), &fresh_nonce(), ""))
        .await;
    assert_schema("method.public.auth.json", &answer["result"]);
    let answer = ws
        .call("public/auth", signed(now_ms(), &fresh_nonce(), "some data"))
        .await;
    assert!(answer["result"].is_object(), "{answer}");
    let answer = ws
        .call("public/auth", signed(now_ms() + 30_000, &fresh_nonce(), ""))
        .await;
    assert!(
        answer["result"].is_object(),
        "a clock 30 s ahead is tolerated: {answer}"
    );
    let stale = ws
        .call("public/auth", signed(now_ms() - 61_000, &fresh_nonce(), ""))
        .await;
    assert_eq!(error_code(&stale), 13004);
    let reused = signed(now_ms(), "fixed-nonce", "");
    assert!(ws.call("public/auth", reused.clone()).await["result"].is_object());
    assert_eq!(error_code(&ws.call("public/auth", reused).await), 13004);
    let mut wrong = signed(now_ms(), &fresh_nonce(), "");
    wrong["signature"] =
        json!(sign::client_signature("not-the-secret", now_ms(), "x", "").expect("signs"));
    assert_eq!(error_code(&ws.call("public/auth", wrong).await), 13004);
    let mut upper = signed(now_ms(), &fresh_nonce(), "");
    upper["signature"] = json!(
        upper["signature"]
            .as_str()
            .expect("signature")
            .to_ascii_uppercase()
    );
    assert_eq!(error_code(&ws.call("public/auth", upper).await), 13004);
    // Over HTTP the timestamp arrives as a query string and is coerced to an integer.
    let timestamp = now_ms();
    let nonce = fresh_nonce();
    let signature = sign::client_signature(&secret, timestamp, &nonce, "").expect("signs");
    let query = format!(
        "grant_type=client_signature&client_id={client_id}&timestamp={timestamp}&nonce={nonce}&signature={signature}"
    );
    assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &query, None).await,
    );
}

#[tokio::test]
async fn http_credentials_are_accepted_and_refused() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let (status, wrong) = server
        .get(
            "public/auth",
            &format!("grant_type=client_credentials&client_id={client_id}&client_secret=nope"),
            None,
        )
        .await;
    assert_eq!((status, error_code(&wrong)), (400, 13004));
    let (_, bad_grant) = server.get("public/auth", "grant_type=password", None).await;
    assert_eq!(error_code(&bad_grant), -32602);
    let method = "private/get_transaction_log";
    let basic = sign::basic_header_value(&client_id, &secret);
    assert_ok(
        "method.private.get_transaction_log.json",
        server.get(method, "count=3", Some(&basic)).await,
    );
    let basic_wrong = sign::basic_header_value(&client_id, "nope");
    assert_eq!(
        error_code(&server.get(method, "count=3", Some(&basic_wrong)).await.1),
        13004
    );
    let signed_header = |timestamp: u64, nonce: &str, uri: &str, key: &str| {
        SignedHeader::sign(
            DEFAULT_SCHEME,
            &client_id,
            key,
            timestamp,
            nonce,
            "GET",
            uri,
            b"",
        )
        .expect("signs")
        .to_header_value()
    };
    let uri = "/api/v2/private/get_transaction_log?count=3";
    let header = signed_header(now_ms(), "n-1", uri, &secret);
    assert_ok(
        "method.private.get_transaction_log.json",
        server.raw(uri, Some(&header), None).await,
    );
    assert_eq!(
        error_code(&server.raw(uri, Some(&header), None).await.1),
        13004,
        "reused nonce"
    );
    let stale = signed_header(now_ms() - 61_000, "n-2", uri, &secret);
    assert_eq!(
        error_code(&server.raw(uri, Some(&stale), None).await.1),
        13004
    );
    let wrong_key = signed_header(now_ms(), "n-3", uri, "nope");
    assert_eq!(
        error_code(&server.raw(uri, Some(&wrong_key), None).await.1),
        13004
    );
    let without_query = signed_header(
        now_ms(),
        "n-4",
        "/api/v2/private/get_transaction_log",
        &secret,
    );
    assert_eq!(
        error_code(&server.raw(uri, Some(&without_query), None).await.1),
        13004
    );
    let (status, missing) = server.get(method, "", None).await;
    assert_eq!((status, error_code(&missing)), (400, 13009));
    assert_eq!(
        error_code(&server.get(method, "", Some("Bearer nope")).await.1),
        13009
    );
    let token = server.auth("main", None).await;
    let query = format!(
        "access_token={}",
        token["access_token"].as_str().expect("token")
    );
    let (_, in_query) = server.get(method, &query, None).await;
    assert_eq!(in_query["error"]["data"]["param"], "access_token");
}

#[tokio::test]
async fn scope_and_second_factor_are_enforced() {
    let server = start(&[]).await;
    let narrow = bearer(&server.auth("main", Some("account:read")).await);
    let narrow = Some(narrow.as_str());
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", narrow)
            .await,
    );
    assert_eq!(
        error_code(
            &server
                .get("private/get_trigger_order_history", "", narrow)
                .await
                .1
        ),
        13009
    );
    assert_eq!(
        error_code(&server.get("private/get_mmp_status", "", narrow).await.1),
        13009
    );
    let no_main = bearer(&server.auth("main", Some("account:read_write")).await);
    let (_, refused) = server
        .get("private/delete_member", "member_id=1", Some(&no_main))
        .await;
    assert_eq!(error_code(&refused), 13009);
    let sub = server.bearer("sub").await;
    assert_eq!(
        error_code(
            &server
                .get("private/delete_member", "member_id=1", Some(&sub))
                .await
                .1
        ),
        13009
    );
    let two_factor = server.bearer("two_factor").await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let query = format!("sid={sub_id}&state=disable");
    let (_, refused) = server
        .get("private/toggle_subaccount_login", &query, Some(&two_factor))
        .await;
    assert_eq!(error_code(&refused), 13668);
    assert_eq!(
        refused["error"]["message"],
        "security_key_authorization_error"
    );
}

#[tokio::test]
async fn refresh_rotates_and_ends_the_previous_connection_token() {
    let server = start(&[]).await;
    let first = server.auth("main", None).await;
    let refresh = |token_set: &Value| {
        format!(
            "grant_type=refresh_token&refresh_token={}",
            token_set["refresh_token"].as_str().expect("refresh")
        )
    };
    let second = assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &refresh(&first), None).await,
    );
    assert_ne!(first["access_token"], second["access_token"]);
    assert_ne!(first["refresh_token"], second["refresh_token"]);
    let method = "private/get_transaction_log";
    assert_eq!(
        error_code(&server.get(method, "count=1", Some(&bearer(&first))).await.1),
        13009
    );
    assert_eq!(
        error_code(&server.get("public/auth", &refresh(&first), None).await.1),
        13009
    );
    assert_ok(
        "method.private.get_transaction_log.json",
        server.get(method, "count=1", Some(&bearer(&second))).await,
    );
    let session = server.auth("main", Some("session:desk")).await;
    assert!(
        session["scope"]
            .as_str()
            .expect("scope")
            .contains("session:desk")
    );
    let renewed = assert_ok(
        "method.public.auth.json",
        server.get("public/auth", &refresh(&session), None).await,
    );
    assert!(
        renewed["scope"]
            .as_str()
            .expect("scope")
            .contains("session:desk")
    );
    assert_ne!(session["refresh_token"], renewed["refresh_token"]);
}

#[tokio::test]
async fn exchange_and_fork_issue_tokens_within_bounds() {
    let server = start(&[]).await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let main = server.auth("main", None).await;
    let refresh = main["refresh_token"].as_str().expect("refresh").to_owned();
    let exchanged = assert_ok(
        "method.public.auth.json",
        server
            .get(
                "public/exchange_token",
                &format!("refresh_token={refresh}&subject_id={sub_id}"),
                None,
            )
            .await,
    );
    let log = assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get(
                "private/get_transaction_log",
                "count=5",
                Some(&bearer(&exchanged)),
            )
            .await,
    );
    assert!(
        log["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|entry| entry["user_id"] == json!(sub_id))
    );
    let narrow = server.auth("main", Some("account:read")).await;
    let narrow_refresh = narrow["refresh_token"].as_str().expect("refresh");
    let query =
        format!("refresh_token={narrow_refresh}&subject_id={sub_id}&scope=account:read_write");
    assert!(
        server
            .get("public/exchange_token", &query, None)
            .await
            .1
            .get("error")
            .is_some()
    );
    let session = server.auth("main", Some("session:one")).await;
    let query = format!(
        "refresh_token={}&session_name=two",
        session["refresh_token"].as_str().expect("refresh")
    );
    let forked = assert_ok(
        "method.public.auth.json",
        server.get("public/fork_token", &query, None).await,
    );
    assert!(
        forked["scope"]
            .as_str()
            .expect("scope")
            .contains("session:two")
    );
    let query = format!("refresh_token={refresh}&session_name=two");
    assert!(
        server
            .get("public/fork_token", &query, None)
            .await
            .1
            .get("error")
            .is_some()
    );
}

#[tokio::test]
async fn websocket_remembers_session_tokens_and_logout_ends_them() {
    let server = start(&[]).await;
    let (client_id, secret) = server.credentials("main");
    let credentials = |scope: &str| json!({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret, "scope": scope});
    let mut ws = Ws::connect(&server).await;
    ws.call("public/auth", credentials("connection")).await;
    let forgotten = ws.call("private/get_mmp_status", json!({})).await;
    assert_eq!(
        error_code(&forgotten),
        13009,
        "connection tokens are not remembered"
    );
    let session = ws.call("public/auth", credentials("session:ws")).await["result"].clone();
    let remembered = ws.call("private/get_mmp_status", json!({})).await;
    assert!(remembered["result"].is_array(), "{remembered}");
    let (status, over_http) = server
        .get("private/logout", "", Some(&bearer(&session)))
        .await;
    assert_eq!((status, error_code(&over_http)), (400, 11050));
    assert_eq!(ws.call("private/logout", json!({})).await["result"], "ok");
    assert_eq!(
        error_code(&ws.call("private/get_mmp_status", json!({})).await),
        13009
    );
    let (_, after) = server
        .get("private/get_mmp_status", "", Some(&bearer(&session)))
        .await;
    assert_eq!(error_code(&after), 13009);
    let token = server.auth("main", None).await;
    let explicit = json!({"access_token": token["access_token"]});
    assert!(ws.call("private/get_mmp_status", explicit).await["result"].is_array());
}

#[tokio::test]
async fn disabling_a_subaccount_ends_its_sessions() {
    let server = start(&[]).await;
    let sub = server.bearer("sub").await;
    let main = server.bearer("main").await;
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", Some(&sub))
            .await,
    );
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let query = format!("sid={sub_id}&state=disable");
    assert_ok(
        "method.private.toggle_subaccount_login.json",
        server
            .get("private/toggle_subaccount_login", &query, Some(&main))
            .await,
    );
    assert_eq!(
        error_code(
            &server
                .get("private/get_transaction_log", "count=1", Some(&sub))
                .await
                .1
        ),
        13009
    );
    let query = format!("sid={sub_id}&state=sleep");
    assert_eq!(
        error_code(
            &server
                .get("private/toggle_subaccount_login", &query, Some(&main))
                .await
                .1
        ),
        -32602
    );
}

/// Walks a method's pages with a small count, then compares with one large page.
#[tokio::test]
async fn page_walks_equal_one_large_page_without_duplicates() {
    let server = start(&[]).await;
    let auth = server.bearer("main").await;
    let window = "currency=BTC&start_timestamp=1704067200000&end_timestamp=1709251200000";
    let one_page = assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get(
                "private/get_transaction_log",
                &format!("{window}&count=250"),
                Some(&auth),
            )
            .await,
    );
    assert_eq!(one_page["continuation"], Value::Null);
    let expected: Vec<Value> = one_page["logs"].as_array().expect("logs").clone();
    assert!(
        expected.len() > 14 && expected.len() < 250,
        "{}",
        expected.len()
    );
    let mut walked: Vec<Value> = Vec::new();
    let mut continuation: Option<u64> = None;
    for _ in 0..100 {
        let cursor = continuation
            .map(|value| format!("&continuation={value}"))
            .unwrap_or_default();
        let page = assert_ok(
            "method.private.get_transaction_log.json",
            server
                .get(
                    "private/get_transaction_log",
                    &format!("{window}&count=7{cursor}"),
                    Some(&auth),
                )
                .await,
        );
        let logs = page["logs"].as_array().expect("logs");
        assert!(!logs.is_empty() && logs.len() <= 7);
        walked.extend(logs.iter().cloned());
        match page["continuation"].as_u64() {
            Some(next) => continuation = Some(next),
            None => break,
        }
    }
    assert_eq!(walked, expected);
    let ids: HashSet<u64> = walked
        .iter()
        .filter_map(|entry| entry["id"].as_u64())
        .collect();
    assert_eq!(ids.len(), walked.len());
    let stamps: Vec<u64> = walked
        .iter()
        .filter_map(|entry| entry["timestamp"].as_u64())
        .collect();
    assert!(stamps.windows(2).all(|pair| pair[0] >= pair[1]));
    assert!(
        stamps
            .iter()
            .all(|stamp| (1_704_067_200_000..=1_709_251_200_000).contains(stamp))
    );

    let full = assert_ok(
        "method.private.get_trigger_order_history.json",
        server
            .get(
                "private/get_trigger_order_history",
                "count=1000",
                Some(&auth),
            )
            .await,
    );
    assert!(full.get("continuation").is_none());
    let mut walked: Vec<Value> = Vec::new();
    let mut cursor = String::new();
    for _ in 0..100 {
        let page = assert_ok(
            "method.private.get_trigger_order_history.json",
            server
                .get(
                    "private/get_trigger_order_history",
                    &format!("count=7{cursor}"),
                    Some(&auth),
                )
                .await,
        );
        walked.extend(page["entries"].as_array().expect("entries").iter().cloned());
        match page["continuation"].as_str() {
            Some(next) => cursor = format!("&continuation={next}"),
            None => break,
        }
    }
    assert_eq!(&walked, full["entries"].as_array().expect("entries"));
    assert!(walked.len() >= 80);
}

#[tokio::test]
async fn parameter_rules_of_section_4_hold() {
    let server = start(&[]).await;
    let auth = server.bearer("main").await;
    let auth = Some(auth.as_str());
    let refused = [
        ("private/get_transaction_log", "count=0"),
        ("private/get_transaction_log", "count=251"),
        ("private/get_transaction_log", "count=seven"),
        ("private/get_transaction_log", "currency=DOGE"),
        ("private/get_transaction_log", "subaccount_id=1"),
        ("private/get_trigger_order_history", "count=1001"),
        ("private/get_trigger_order_history", "currency=SOL"),
        ("private/get_trigger_order_history", "continuation=bogus"),
        ("private/get_mmp_status", "mmp_group=mq_alpha"),
        ("private/get_mmp_status", "index_name=foo_usd"),
        ("private/get_mmp_status", "block_rfq=yes"),
        ("private/delete_member", "member_id=0"),
        (
            "private/close_position",
            "instrument_name=BTC-PERPETUAL&type=stop",
        ),
        ("private/close_position", "instrument_name=NOPE"),
        ("public/get_historical_volatility", "currency=SOL"),
        ("public/get_book_summary_by_instrument", ""),
        ("public/get_currencies", "unexpected=1"),
    ];
    for (method, query) in refused {
        let (status, answer) = server.get(method, query, auth).await;
        assert_eq!(
            (status, error_code(&answer)),
            (400, -32602),
            "{method}?{query}: {answer}"
        );
    }
    let log = server
        .get("private/get_transaction_log", "currency=SOL", auth)
        .await;
    assert_ok("method.private.get_transaction_log.json", log);
    let history = server
        .get(
            "private/get_trigger_order_history",
            "currency=ETH&instrument_name=ETH-PERPETUAL",
            auth,
        )
        .await;
    let history = assert_ok("method.private.get_trigger_order_history.json", history);
    assert!(
        history["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|entry| entry["instrument_name"] == "ETH-PERPETUAL")
    );
}

#[tokio::test]
async fn malformed_input_is_answered_with_error_envelopes() {
    let server = start(&[]).await;
    let method = "/api/v2/public/get_currencies";
    for (body, code) in [
        (b"{not json".to_vec(), -32700),
        (vec![0xff, 0xfe, b'{', b'}'], -32700),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"public/get_currencies","params":[1]}"#.to_vec(),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{}}"#.to_vec(),
            -32600,
        ),
        (br#"[1,2]"#.to_vec(), -32600),
        (vec![b' '; 70 * 1024], -32600),
    ] {
        let (status, answer) = server.raw(method, None, Some(body)).await;
        assert_eq!((status, error_code(&answer)), (400, code), "{answer}");
    }
    let (status, answer) = server.get("public/no_such_method", "", None).await;
    assert_eq!((status, error_code(&answer)), (400, -32601));
    let (status, answer) = server.get("private/lock_portfolio", "", None).await;
    assert_eq!((status, error_code(&answer)), (400, -32601));
    let (status, answer) = server.raw("/elsewhere", None, None).await;
    assert_eq!((status, error_code(&answer)), (404, -32601));
    let mut ws = Ws::connect(&server).await;
    for (message, code) in [
        (Message::text("garbage"), -32700),
        (Message::binary(vec![0xc3, 0x28]), -32700),
        (Message::text(" ".repeat(70 * 1024)), -32600),
        (
            Message::text(rpc(9, "public/nope", json!({})).to_string()),
            -32601,
        ),
    ] {
        ws.send(message).await;
        assert_eq!(error_code(&ws.receive().await), code);
    }
    let state = ServerState::new(&Config::loopback());
    let mut connection = Connection::default();
    for seed in 0u32..2_000 {
        let bytes: Vec<u8> = (0..(seed % 97))
            .map(|index| (seed.wrapping_mul(31).wrapping_add(index * 7) % 256) as u8)
            .collect();
        let answer = state.dispatch_message(&mut connection, &bytes);
        assert_eq!(answer["jsonrpc"], "2.0");
    }
}

#[tokio::test]
async fn websocket_requests_run_concurrently_with_their_own_ids() {
    let server = start(&[]).await;
    let mut ws = Ws::connect(&server).await;
    for id in 1..=20u64 {
        let method = if id % 2 == 0 {
            "public/get_currencies"
        } else {
            "public/get_historical_volatility"
        };
        ws.send(Message::text(rpc(id, method, json!({})).to_string()))
            .await;
    }
    let mut seen = HashSet::new();
    for _ in 0..20 {
        let answer = ws.receive().await;
        assert!(answer["result"].is_array(), "{answer}");
        seen.insert(answer["id"].as_u64().expect("integer id"));
    }
    assert_eq!(seen, (1..=20).collect());
}

#[tokio::test]
async fn transaction_log_rate_limit_refuses_then_refills() {
    let clock = Clock::manual(1_735_689_600_000);
    let mut config = Config::loopback();
    config.clock = clock.clone();
    config.limits = RateLimits {
        transaction_log_per_second: 1.0,
        transaction_log_burst: 2,
        ..RateLimits::default()
    };
    let server = start_with(config).await;
    let auth = server.bearer("main").await;
    for _ in 0..2 {
        assert_ok(
            "method.private.get_transaction_log.json",
            server
                .get("private/get_transaction_log", "count=1", Some(&auth))
                .await,
        );
    }
    let (status, answer) = server
        .get("private/get_transaction_log", "count=1", Some(&auth))
        .await;
    assert_eq!((status, error_code(&answer)), (429, 10028));
    clock.advance(1_000);
    assert_ok(
        "method.private.get_transaction_log.json",
        server
            .get("private/get_transaction_log", "count=1", Some(&auth))
            .await,
    );
}

#[tokio::test]
async fn faults_change_behaviour() {
    let server = start(&[
        Fault::EnvelopeNoJsonrpc,
        Fault::HttpStatus201,
        Fault::TxlogEndless,
        Fault::ScopeNotEnforced,
    ])
    .await;
    let (status, answer) = server.get("public/get_currencies", "", None).await;
    assert_eq!(status, 201);
    assert!(answer.get("jsonrpc").is_none());
    let narrow = bearer(&server.auth("main", Some("account:read")).await);
    let (_, history) = server
        .get("private/get_trigger_order_history", "", Some(&narrow))
        .await;
    assert!(history["result"].is_object(), "{history}");
    let (_, log) = server
        .get(
            "private/get_transaction_log",
            "count=250&currency=SOL",
            Some(&narrow),
        )
        .await;
    assert!(log["result"]["continuation"].is_u64(), "{log}");

    let server = start(&[
        Fault::EnvelopeIdOffByOne,
        Fault::SigUnchecked,
        Fault::LockNoKey,
    ])
    .await;
    let mut ws = Ws::connect(&server).await;
    ws.send(Message::text(
        rpc(7, "public/get_currencies", json!({})).to_string(),
    ))
    .await;
    assert_eq!(ws.receive().await["id"], 8);
    let (client_id, _) = server.credentials("main");
    let query = format!(
        "grant_type=client_signature&client_id={client_id}&timestamp={}&signature=00",
        now_ms()
    );
    assert!(server.get("public/auth", &query, None).await.1["result"].is_object());
    let (status, _) = server
        .raw("/direct/api/v2/private/lock_portfolio", None, None)
        .await;
    assert_eq!(status, 200);
}

#[test]
fn every_fault_names_catalog_clauses() {
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cases/clauses.toml"
    ))
    .expect("catalog");
    let ids: HashSet<&str> = catalog
        .lines()
        .filter_map(|line| line.strip_prefix("id = \""))
        .filter_map(|rest| rest.strip_suffix('"'))
        .collect();
    assert!(Fault::ALL.len() >= 70);
    for fault in Fault::ALL {
        assert_eq!(Fault::from_name(fault.name()), Some(*fault));
        for clause in fault.clauses() {
            assert!(
                ids.contains(clause),
                "{} names unknown clause {clause}",
                fault.name()
            );
        }
    }
}

#[tokio::test]
async fn whole_history_validates_and_covers_every_type() {
    let server = start(&[]).await;
    let main = server.bearer("main").await;
    let sub_id = server.target.fixtures.subaccount_id.expect("subaccount");
    let walk = |query: String| {
        let server = &server;
        let main = main.clone();
        async move {
            let mut entries: Vec<Value> = Vec::new();
            let mut cursor = String::new();
            for _ in 0..20 {
                let answer = server
                    .get(
                        "private/get_transaction_log",
                        &format!("count=250{query}{cursor}"),
                        Some(&main),
                    )
                    .await;
                let page = assert_ok("method.private.get_transaction_log.json", answer);
                entries.extend(page["logs"].as_array().expect("logs").iter().cloned());
                match page["continuation"].as_u64() {
                    Some(next) => cursor = format!("&continuation={next}"),
                    None => break,
                }
            }
            entries
        }
    };
    let main_log = walk(String::new()).await;
    assert!(main_log.len() >= 600, "{}", main_log.len());
    let types: HashSet<&str> = main_log
        .iter()
        .filter_map(|entry| entry["type"].as_str())
        .collect();
    // Every type section 2.3 lists, and one it does not (section 9 says they appear).
    for kind in harness::spec::LISTED_LOG_TYPES
        .iter()
        .copied()
        .chain(["staking_reward"])
    {
        assert!(types.contains(kind), "{kind} missing");
    }
    let currencies: HashSet<&str> = main_log
        .iter()
        .filter_map(|entry| entry["currency"].as_str())
        .collect();
    assert!(currencies.len() >= 6, "{currencies:?}");
    let sub_log = walk(format!("&subaccount_id={sub_id}")).await;
    assert!(
        sub_log.len() >= 40 && sub_log.len() < 100,
        "{}",
        sub_log.len()
    );
    assert!(
        sub_log
            .iter()
            .all(|entry| entry["user_id"] == json!(sub_id))
    );
}
