//! What each auth mode adds to a request, checked without a server: every mode but a
//! `bearer` login builds its credentials locally.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::run::Shared;
use crate::transport::RequestLimits;
use harness_model::case::{
    ApiKey, Basic, Case, ClientSignature, Login, Signature, Signed, SkewSide,
};
use harness_model::check::{Catalog, SchemaSet};
use harness_model::target_file::{Account, Fixtures, RateLimits, Secret, Target};
use harness_protocol::auth::sign;
use harness_protocol::wire::TransportKind;

fn shared(fixtures: Fixtures) -> Shared {
    let main = Account {
        client_id: "main-id".to_owned(),
        client_secret: Secret::new("main-secret"),
        second_factor: None,
    };
    let target = Target {
        name: "t".to_owned(),
        base_url: "http://127.0.0.1:1/api/v2".to_owned(),
        ws_url: Some("ws://127.0.0.1:1/ws/api/v2".to_owned()),
        direct_access_url: None,
        signature_scheme: "test-hmac".to_owned(),
        allow_destructive: false,
        races: true,
        race_rounds: None,
        accounts: BTreeMap::from([("main".to_owned(), main)]),
        fixtures,
        limits: RateLimits::default(),
        tls: Default::default(),
        param_names: Default::default(),
        field_names: Default::default(),
    };
    let schemas = SchemaSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/schemas"))
        .expect("schemas load");
    Shared::new(
        target,
        Arc::new(Catalog::default()),
        Arc::new(schemas),
        RequestLimits::default(),
        super::super::Breaker::new(0, Duration::from_secs(5), super::super::Interrupt::new()),
    )
    .expect("the client builds")
}

fn case() -> Case {
    toml::from_str(
        "id = \"c\"\ntitle = \"t\"\nclauses = [\"x\"]\n[[step]]\ncall = \"public/auth\"\n",
    )
    .expect("case parses")
}

fn step(auth: Auth) -> Step {
    Step {
        auth,
        ..Step::call("public/auth")
    }
}

/// A `client_signature` login with `signature`.
fn client_signature(signature: Signature) -> ClientSignature {
    ClientSignature {
        signature,
        ..ClientSignature::default()
    }
}

/// What a step's authentication added: its params, and the header to send.
type Applied = (Map<String, Value>, Option<Authorization>);

/// Runs `authenticate` for each step in order, over `transport`, on one execution.
fn authenticate(
    shared: &Shared,
    transport: TransportKind,
    steps: &[Step],
) -> Vec<Result<Applied, Stop>> {
    let case = case();
    let mut execution = Execution::new(shared, &case, transport);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    steps
        .iter()
        .map(|step| {
            let mut params = step.params.clone();
            runtime
                .block_on(execution.authenticate(step, &mut params, TokenUse::Here))
                .map(|authorization| (params, authorization))
        })
        .collect()
}

fn one(
    shared: &Shared,
    transport: TransportKind,
    auth: Auth,
) -> (Map<String, Value>, Option<Authorization>) {
    match authenticate(shared, transport, &[step(auth)]).remove(0) {
        Ok(applied) => applied,
        Err(stop) => panic!("authentication stopped: {stop:?}"),
    }
}

fn header(authorization: Option<Authorization>) -> String {
    match authorization {
        Some(Authorization::Value(value)) => value,
        other => panic!("expected a header value, got {other:?}"),
    }
}

#[test]
fn client_credentials_fill_what_the_step_did_not_set() {
    let shared = shared(Fixtures::default());
    let (params, header) = one(
        &shared,
        TransportKind::Ws,
        Auth::ClientCredentials(Login::default()),
    );
    assert!(header.is_none());
    assert_eq!(
        Value::Object(params),
        json!({"grant_type": "client_credentials", "client_id": "main-id", "client_secret": "main-secret"})
    );
    let mut own = step(Auth::ClientCredentials(Login {
        wrong_secret: true,
        ..Login::default()
    }));
    own.params
        .insert("grant_type".to_owned(), json!("password"));
    let applied = authenticate(&shared, TransportKind::Ws, &[own]).remove(0);
    let (params, _) = applied.expect("applies");
    assert_eq!(params["grant_type"], json!("password"));
    assert_eq!(params["client_secret"], json!("main-secrex"));
}

#[test]
fn a_client_signature_verifies_with_the_account_secret() {
    let shared = shared(Fixtures::default());
    let signed = Auth::ClientSignature(ClientSignature {
        data: Some("hello".to_owned()),
        ..ClientSignature::default()
    });
    let (params, _) = one(&shared, TransportKind::HttpQuery, signed);
    let timestamp = params["timestamp"].as_u64().expect("timestamp");
    let nonce = params["nonce"].as_str().expect("nonce");
    let expected = sign::client_signature("main-secret", timestamp, nonce, "hello").expect("signs");
    assert_eq!(params["signature"], json!(expected));
    assert_eq!(
        (&params["grant_type"], &params["data"]),
        (&json!("client_signature"), &json!("hello"))
    );
}

#[test]
fn a_client_signature_carries_the_defects_the_step_asks_for() {
    let shared = shared(Fixtures::default());
    let defective = Auth::ClientSignature(ClientSignature {
        no_trailing_lf: true,
        login: Login {
            wrong_secret: true,
            ..Login::default()
        },
        ..client_signature(Signature {
            uppercase_hex: true,
            timestamp_offset_ms: -61_000,
            nonce: Some("fixed-nonce".to_owned()),
            ..Signature::default()
        })
    });
    let (params, _) = one(&shared, TransportKind::Ws, defective);
    let timestamp = params["timestamp"].as_u64().expect("timestamp");
    let unframed = sign::hmac_hex(
        b"main-secrex",
        format!("{timestamp}\nfixed-nonce").as_bytes(),
    );
    assert_eq!(params["signature"], json!(unframed.to_ascii_uppercase()));
    assert!(!params.contains_key("data"));
}

#[test]
fn a_reused_nonce_is_the_previous_signed_step_s() {
    let shared = shared(Fixtures::default());
    let reuse = || {
        step(Auth::ClientSignature(client_signature(Signature {
            nonce: Some("reuse".to_owned()),
            ..Signature::default()
        })))
    };
    let mut applied = authenticate(
        &shared,
        TransportKind::Ws,
        &[
            step(Auth::ClientSignature(ClientSignature::default())),
            reuse(),
        ],
    );
    let second = applied.pop().and_then(Result::ok).expect("second applies");
    let first = applied.pop().and_then(Result::ok).expect("first applies");
    assert_eq!(first.0["nonce"], second.0["nonce"]);
    let alone = authenticate(&shared, TransportKind::Ws, &[reuse()]).remove(0);
    assert!(
        matches!(alone, Err(Stop::Error(message)) if message.contains("no earlier signed step"))
    );
}

#[test]
fn basic_and_signed_are_headers() {
    let shared = shared(Fixtures {
        currency: Some("BTC".to_owned()),
        ..Fixtures::default()
    });
    let (_, basic) = one(
        &shared,
        TransportKind::HttpQuery,
        Auth::Basic(Basic::default()),
    );
    assert_eq!(
        header(basic),
        sign::basic_header_value("main-id", "main-secret")
    );
    let signed = Auth::Signed(Signed {
        sign_uri: Some("/api/v2/{{fixtures.currency}}".to_owned()),
        signature: Signature {
            uppercase_hex: true,
            ..Signature::default()
        },
        ..Signed::default()
    });
    let (_, plan) = one(&shared, TransportKind::HttpBody, signed);
    let Some(Authorization::Signed(plan)) = plan else {
        panic!("expected a signed header plan");
    };
    assert_eq!(
        (plan.scheme.as_str(), plan.client_id.as_str()),
        ("test-hmac", "main-id")
    );
    assert_eq!(plan.sign_uri.as_deref(), Some("/api/v2/BTC"));
    assert!(plan.uppercase_hex && !plan.nonce.is_empty());
}

#[test]
fn the_direct_access_key_is_a_bearer_header_and_its_absence_stops_the_execution() {
    let missing = authenticate(
        &shared(Fixtures::default()),
        TransportKind::Rest,
        &[step(Auth::ApiKey(ApiKey::default()))],
    )
    .remove(0);
    assert!(matches!(missing, Err(Stop::Error(message)) if message.contains("direct_access_key")));
    let shared = shared(Fixtures {
        direct_access_key: Some(Secret::new("da-key-123")),
        ..Fixtures::default()
    });
    let (_, right) = one(
        &shared,
        TransportKind::Rest,
        Auth::ApiKey(ApiKey::default()),
    );
    assert_eq!(header(right), "Bearer da-key-123");
    let wrong = Auth::ApiKey(ApiKey { wrong_secret: true });
    assert_eq!(
        header(one(&shared, TransportKind::Rest, wrong).1),
        "Bearer da-key-12x"
    );
}

#[test]
fn an_account_the_target_file_lacks_stops_the_execution() {
    let other = Auth::Basic(Basic {
        account: Some("sub".to_owned()),
        ..Basic::default()
    });
    let stopped = authenticate(
        &shared(Fixtures::default()),
        TransportKind::HttpQuery,
        &[step(other)],
    )
    .remove(0);
    assert!(
        matches!(stopped, Err(Stop::Error(message)) if message == "the target file has no [accounts.sub]")
    );
}

#[test]
fn a_given_bearer_token_goes_where_the_transport_wants_it() {
    let shared = shared(Fixtures::default());
    let given = || Auth::bearer_token("captured-token");
    let (params, none) = one(&shared, TransportKind::Ws, given());
    assert!(none.is_none());
    assert_eq!(params["access_token"], json!("captured-token"));
    let (params, bearer) = one(&shared, TransportKind::HttpQuery, given());
    assert!(params.is_empty());
    assert_eq!(header(bearer), "Bearer captured-token");
}

#[test]
fn clock_skew_moves_a_signature_timestamp_to_its_side_of_the_window() {
    let mut shared = shared(Fixtures::default());
    shared.target.limits.clock_skew_ms = 20_000;
    let timestamp = |clock_skew: Option<SkewSide>| {
        let edge = Auth::ClientSignature(client_signature(Signature {
            timestamp_offset_ms: -55_000,
            clock_skew,
            ..Signature::default()
        }));
        let (params, _) = one(&shared, TransportKind::HttpQuery, edge);
        i64::try_from(params["timestamp"].as_u64().expect("timestamp")).expect("fits")
    };
    let plain = timestamp(None);
    let inside = timestamp(Some(SkewSide::Inside));
    let outside = timestamp(Some(SkewSide::Outside));
    assert!((inside - plain - 20_000).abs() < 1_000, "{inside} {plain}");
    assert!(
        (plain - outside - 20_000).abs() < 1_000,
        "{plain} {outside}"
    );
    assert_eq!(SkewSide::Inside.apply(-5_000, 20_000), 0, "never past now");
    assert_eq!(SkewSide::Outside.apply(-61_000, 0), -61_000);
}

#[test]
fn a_client_signature_without_nonce_sends_none_and_signs_an_empty_one() {
    let shared = shared(Fixtures::default());
    let bare = Auth::ClientSignature(ClientSignature {
        no_nonce: true,
        ..ClientSignature::default()
    });
    let (params, _) = one(&shared, TransportKind::HttpQuery, bare);
    assert!(!params.contains_key("nonce"));
    let timestamp = params["timestamp"].as_u64().expect("timestamp");
    let expected = sign::client_signature("main-secret", timestamp, "", "").expect("signs");
    assert_eq!(params["signature"], json!(expected));
}

#[tokio::test]
async fn nonceless_signatures_made_at_once_get_milliseconds_of_their_own() {
    let last = AtomicU64::new(0);
    let now = harness_protocol::auth::clock::Clock::system().now_ms();
    let first = Execution::nonceless_timestamp(&last, now).await;
    let second = Execution::nonceless_timestamp(&last, now).await;
    let earlier = Execution::nonceless_timestamp(&last, now - 5).await;
    assert_eq!(first, now);
    assert_eq!(second, now + 1);
    assert_eq!(earlier, now + 2);
}
