//! The defects of generated requests: one per request, drawn from the same `StdRng` as
//! the valid request it breaks: a value out of its rules, a wrong type, a missing or
//! extra parameter, broken credentials, or a broken envelope.

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::{Value, json};

use super::classes::{self, Class};
use super::{Generator, narrow_scopes, random_text};
use crate::request_auth::signature;
use crate::{FuzzRequest, RequestAuth};
use harness_model::case::Signature;
use harness_protocol::spec;
use harness_protocol::spec::{Kind, Method, Param, Values};
use harness_protocol::wire::TransportKind;

/// A value as the report shows it: long strings by their length, other characters escaped
/// so that an invisible one is seen.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) if text.chars().count() > 40 => {
            format!("a string of {} characters", text.chars().count())
        }
        Value::String(text) => format!("\"{}\"", text.escape_default()),
        other => other.to_string(),
    }
}

/// Strings that break parsers, encoders and comparisons.
const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "BTC ",
    "btc",
    "BTC\u{0}",
    "\u{202e}BTC",
    "💥",
    "\"'\\\n\t",
    "%00%ff",
    "../../etc/passwd",
    "null",
    "1e309",
    "{{fixtures.currency}}",
];

impl Generator<'_> {
    /// One defect: a value, a type, a parameter, the credentials or the envelope.
    pub(crate) fn mutate(&self, rng: &mut StdRng, rule: &Method, request: &mut FuzzRequest) {
        let params = breakable_params(rule);
        // Values just outside a list or range are where servers most often slip, so they
        // get three shares of ten; the other defects one each, credentials two.
        let choice = match rng.random_range(0..10) {
            0..=2 => 0,
            other => other - 2,
        };
        // Credentials are what public/auth is about: half its defects are there.
        if rule.name == spec::AUTH_METHOD && rng.random_bool(0.5) {
            self.break_auth(rng, rule, request);
            return;
        }
        // A value of a named class (a non-ASCII digit, an odd notation, a raw body with a
        // lone surrogate, ...): a fifth of the other defects.
        if rng.random_ratio(1, 5) {
            self.classed(rng, &params, request);
            return;
        }
        // A value outside a list or range needs a parameter that has one.
        let bounded: Vec<&Param> = params
            .iter()
            .copied()
            .filter(|spec| matches!(spec.values, Values::OneOf(_) | Values::Range(..)))
            .collect();
        let spec = if choice == 0 && !bounded.is_empty() {
            bounded.choose(rng).copied()
        } else {
            params.choose(rng).copied()
        };
        match (choice, spec) {
            (0, Some(spec)) => {
                let value = out_of_rules(rng, spec);
                request.why = format!("{} = {value}", spec.name);
                request.params.insert(spec.name.to_owned(), value);
            }
            (1, Some(spec)) => {
                let value = of_wrong_type(rng, spec.kind);
                request.why = format!("{} of the wrong type: {value}", spec.name);
                request.params.insert(spec.name.to_owned(), value);
            }
            (2, _) if !request.params.is_empty() => {
                let names: Vec<String> = request.params.keys().cloned().collect();
                if let Some(name) = names.choose(rng) {
                    request.params.remove(name);
                    request.why = format!("{name} missing");
                }
            }
            (3, _) => {
                request
                    .params
                    .insert("fuzz_extra".to_owned(), json!(random_text(rng, 8)));
                request.why = "an unknown extra parameter".to_owned();
            }
            (4, Some(spec)) if spec.kind == Kind::Str => {
                let value = odd_string(rng);
                request.why = format!("{} = an odd string of {} bytes", spec.name, value.len());
                request.params.insert(spec.name.to_owned(), json!(value));
            }
            (5, _) if request.transport != TransportKind::HttpQuery => {
                self.break_envelope(rng, request);
            }
            _ => self.break_auth(rng, rule, request),
        }
    }

    /// One value of a named class for a parameter, or a raw body of one (over the
    /// transports that carry a body), or an extra parameter of one for a method without
    /// parameters over a query string.
    fn classed(&self, rng: &mut StdRng, params: &[&Param], request: &mut FuzzRequest) {
        let query = request.transport == TransportKind::HttpQuery;
        if !query && (params.is_empty() || rng.random_ratio(1, 4)) {
            let class = Class::raw_class(rng);
            let body = classes::raw_body::raw_body(rng, class, &request.method, &request.params);
            request.raw = Some(body);
            request.why = format!("a raw body of class {}", class.name());
            request.class = Some(class.name().to_owned());
            return;
        }
        let class = Class::value_class(rng);
        let (name, kind) = params
            .choose(rng)
            .map_or(("fuzz_extra", Kind::Str), |spec| (spec.name, spec.kind));
        let value = classes::value(rng, class, kind, request.params.get(name));
        request.why = format!("{name} = {} (class {})", shown(&value), class.name());
        request.params.insert(name.to_owned(), value);
        request.class = Some(class.name().to_owned());
    }

    fn break_envelope(&self, rng: &mut StdRng, request: &mut FuzzRequest) {
        let method = &request.method;
        let (raw, why) = match rng.random_range(0..5) {
            0 => ("{\"jsonrpc\":\"2.0\",".to_owned(), "a truncated body"),
            1 => (
                format!(r#"{{"jsonrpc":"1.0","id":%ID%,"method":"{method}","params":{{}}}}"#),
                "jsonrpc 1.0",
            ),
            2 => (
                format!(r#"{{"jsonrpc":"2.0","id":%ID%,"method":"{method}","params":[1]}}"#),
                "params an array",
            ),
            3 => (
                r#"{"jsonrpc":"2.0","id":%ID%,"method":7}"#.to_owned(),
                "method a number",
            ),
            _ => ("[]".to_owned(), "an empty batch"),
        };
        request.raw = Some(raw);
        request.why = why.to_owned();
    }

    /// Broken credentials: none, a token never issued, a wrong secret or signature, a
    /// narrower scope; for `public/auth` a broken login, for `exchange_token` a scope too
    /// wide or a refresh token never issued.
    fn break_auth(&self, rng: &mut StdRng, rule: &Method, request: &mut FuzzRequest) {
        let http = request.transport.is_http();
        let (auth, why) = match (rule.name, rng.random_range(0..8)) {
            (spec::AUTH_METHOD, _) => broken_login(rng, request),
            (spec::EXCHANGE_TOKEN_METHOD, n) => broken_exchange(rng, n, request),
            (_, 0) => (RequestAuth::NONE, "no credentials"),
            (_, 1) => (RequestAuth::bogus_token(), "a token that was never issued"),
            (_, 2) if self.has_account("two_factor") => {
                (RequestAuth::bearer("two_factor", None), "the 2fa account")
            }
            (_, 3) if http => (
                RequestAuth::basic(&main_account(), true),
                "basic with a wrong secret",
            ),
            (_, 4) if http => broken_signed_header(rng),
            _ => {
                let scope = narrow_scopes().choose(rng).cloned();
                (
                    RequestAuth::bearer(&main_account(), scope),
                    "a token of a narrower scope",
                )
            }
        };
        request.auth = auth;
        request.why = why.to_owned();
    }
}

/// The parameters the generator may break: not those the sender fills in.
fn breakable_params(rule: &Method) -> Vec<&Param> {
    // Parameters the sender fills in are not the generator's to break.
    let sender_filled = [
        "client_secret",
        "timestamp",
        "signature",
        "nonce",
        "refresh_token",
    ];
    rule.params
        .iter()
        .filter(|spec| !sender_filled.contains(&spec.name))
        .collect()
}

/// A value just outside the parameter's list or range (or the type's own edge).
fn out_of_rules(rng: &mut StdRng, spec: &Param) -> Value {
    match spec.values {
        Values::OneOf(_) => json!(ODD_STRINGS.choose(rng)),
        // Past i64::MAX there is nothing but the type's own edge.
        Values::Range(min, i64::MAX) => match rng.random_range(0..3) {
            0 | 1 => json!(min.saturating_sub(1)),
            _ => json!(u64::MAX),
        },
        Values::Range(min, max) => match rng.random_range(0..6) {
            0 | 1 => json!(min.saturating_sub(1)),
            2 | 3 => json!(max.saturating_add(1)),
            4 => json!(i64::MIN),
            _ => json!(u64::MAX),
        },
        _ => json!(random_text(rng, 40)),
    }
}

/// A value of another type than `kind`: an object, an array, or another scalar.
fn of_wrong_type(rng: &mut StdRng, kind: Kind) -> Value {
    match (kind, rng.random_range(0..4)) {
        (_, 0) => json!({"a": 1}),
        (_, 1) => json!([1, 2]),
        (Kind::Str, _) => json!(rng.random_range(-5..5)),
        (Kind::Bool, _) => json!("yes"),
        (Kind::Int, 2) => json!(1.5),
        _ => json!("abc"),
    }
}

/// A long run of `x`, or one of the odd strings.
fn odd_string(rng: &mut StdRng) -> String {
    if rng.random_bool(0.5) {
        "x".repeat(rng.random_range(100..4_000))
    } else {
        (*ODD_STRINGS.choose(rng).unwrap_or(&"")).to_owned()
    }
}

/// The account every broken credential goes as.
fn main_account() -> String {
    "main".to_owned()
}

/// A broken `public/auth` login for the request's grant type, or an unknown grant type.
fn broken_login(rng: &mut StdRng, request: &mut FuzzRequest) -> (RequestAuth, &'static str) {
    let grant = request
        .params
        .get("grant_type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match (grant, rng.random_range(0..5)) {
        ("client_credentials", 0) => (
            RequestAuth::NoSecret {
                account: main_account(),
            },
            "client_secret omitted",
        ),
        ("client_credentials", _) => (
            RequestAuth::client_credentials(&main_account(), true),
            "a wrong client_secret",
        ),
        ("client_signature", n) => broken_client_signature(rng, n),
        _ => {
            request
                .params
                .insert("grant_type".to_owned(), json!(ODD_STRINGS.choose(rng)));
            (request.auth.clone(), "an unknown grant_type")
        }
    }
}

/// A `client_signature` login broken the `n`th way: a wrong secret, a timestamp outside
/// the window either side, upper-case hex, or a replay (half of them raced).
fn broken_client_signature(rng: &mut StdRng, n: i32) -> (RequestAuth, &'static str) {
    let (wrong_secret, offset_ms, uppercase, replay) = match n {
        0 => (true, 0, false, false),
        1 => (false, -90_000, false, false),
        2 => (false, 90_000, false, false),
        3 => (false, 0, true, false),
        _ => (false, 0, false, true),
    };
    let signature = Signature {
        uppercase_hex: uppercase,
        ..signature(offset_ms, replay)
    };
    let auth = RequestAuth::client_signature(&main_account(), wrong_secret, signature);
    // Half the replays go out together with the original.
    if replay && rng.random_bool(0.5) {
        (auth.raced(), "a replay released together with the original")
    } else {
        (auth, "a bad client_signature")
    }
}

/// A broken `exchange_token` call (`n` of 8): a scope wider than the caller's, or a
/// refresh token never issued.
fn broken_exchange(
    rng: &mut StdRng,
    n: i32,
    request: &mut FuzzRequest,
) -> (RequestAuth, &'static str) {
    let scope = narrow_scopes().choose(rng).cloned();
    if n < 4 {
        request.params.insert(
            "scope".to_owned(),
            json!("account:read_write trade:read_write"),
        );
        (
            RequestAuth::RefreshOf {
                account: main_account(),
                scope,
            },
            "a scope wider than the caller's",
        )
    } else {
        request
            .params
            .insert("refresh_token".to_owned(), json!("never-issued"));
        (RequestAuth::NONE, "a refresh token that was never issued")
    }
}

/// A broken signed header: a wrong secret, a timestamp outside the window either side, or
/// a replay (half of them raced).
fn broken_signed_header(rng: &mut StdRng) -> (RequestAuth, &'static str) {
    let (wrong_secret, offset_ms, replay) = match rng.random_range(0..4) {
        0 => (true, 0, false),
        1 => (false, -90_000, false),
        2 => (false, 90_000, false),
        _ => (false, 0, true),
    };
    let auth = RequestAuth::signed(&main_account(), wrong_secret, signature(offset_ms, replay));
    // Half the replays go out together with the original.
    if replay && rng.random_bool(0.5) {
        (auth.raced(), "a replay released together with the original")
    } else {
        (auth, "a bad signed header")
    }
}
