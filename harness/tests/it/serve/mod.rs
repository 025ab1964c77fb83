//! The reference server over real sockets: every method against its schema, every
//! authentication path and its refusals, pagination, malformed input, and a handful of
//! fault switches that must really change behaviour. This file holds the helpers (a
//! server, HTTP and WebSocket calls, schemas); one file per feature holds the tests.

mod auth;
mod methods;
mod paging;
mod robustness;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::auth::clock::Clock;
use harness::auth::nonce::fresh_nonce;
use harness::auth::sign::{self, DEFAULT_SCHEME, SignedHeader};
use harness::serve::{self, Connection, Fault, Running, ServeConfig, ServerState};
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
    let mut config = ServeConfig::loopback();
    config.faults = faults.to_vec();
    // Walks of the transaction log send dozens of requests; the 1/s limit has its own test.
    config.limits = RateLimits {
        transaction_log_per_second: 1_000.0,
        transaction_log_burst: 1_000,
        ..RateLimits::default()
    };
    start_with(config).await
}

async fn start_with(config: ServeConfig) -> Server {
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
