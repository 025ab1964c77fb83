//! A generated request as the runner's steps: the one form in which the fuzzer both sends
//! a request (`send.rs`, through the runner's executor) and writes a finding's case file
//! (`case_file.rs`), so the file replays what was sent.
//!
//! Credentials become auth modes the executor fills in. A request that needs a token of
//! its own gets a login step first, over HTTP: a refresh (its refresh token) and a logout
//! (logging out ends the token, so it must not be one the other requests share). A replay
//! is the same step twice, the second reusing the first's nonce. Generated values are sent
//! as they are ([`literal`]: a generated `{{` is not a template), and a raw body carries
//! the id of its request as `{{request_id}}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{FuzzRequest, RequestAuth, SecretPlan};
use harness_model::case::{Auth, AuthMode, Case, Step, literal, literal_text};
use harness_model::target_file::Target;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// The capture holding the token a request's own login gave.
const OWN_TOKEN: &str = "own_token";

/// `request` as a case of one step, or two (a login first, or a replay's first sending);
/// the last step is the request judged. Its steps expect nothing: the caller sets that.
pub(crate) fn request_case(request: &FuzzRequest, target: &Target) -> Case {
    let mut steps = Vec::new();
    let mut params: Map<String, Value> = request
        .params
        .iter()
        .map(|(name, value)| (name.clone(), literal(value)))
        .collect();
    let mut auth = auth_of(&request.auth, target);
    match &request.auth {
        RequestAuth::RefreshOf { account, scope } => {
            steps.push(own_login(account, scope.as_deref(), "result.refresh_token"));
            params.insert("refresh_token".to_owned(), template(OWN_TOKEN));
        }
        RequestAuth::Bearer { account, scope } if request.method == spec::LOGOUT_METHOD => {
            steps.push(own_login(account, scope.as_deref(), "result.access_token"));
            auth = Auth {
                mode: AuthMode::Bearer,
                token: Some(format!("{{{{{OWN_TOKEN}}}}}")),
                ..Auth::default()
            };
        }
        RequestAuth::ClientCredentials { account, .. }
        | RequestAuth::ClientSignature { account, .. } => {
            login_params(request, account, target, &mut params, &mut auth);
        }
        _ => {}
    }
    if is_replay(request) {
        steps.push(step(request, &params, auth.clone()));
        if auth.mode != AuthMode::None {
            auth.nonce = Some("reuse".to_owned());
        }
    }
    steps.push(step(request, &params, auth));
    Case {
        id: "fuzz".to_owned(),
        title: request.why.clone(),
        clauses: Vec::new(),
        transports: vec![request.transport],
        needs: harness_model::case::Needs::default(),
        serial: false,
        steps,
        path: std::path::PathBuf::new(),
    }
}

/// Whether `request` is sent twice with one nonce, the second judged.
pub(crate) fn is_replay(request: &FuzzRequest) -> bool {
    matches!(
        request.auth,
        RequestAuth::Signed { replay: true, .. }
            | RequestAuth::ClientSignature { replay: true, .. }
    )
}

/// The step sending `request` with `params` and `auth`.
fn step(request: &FuzzRequest, params: &Map<String, Value>, auth: Auth) -> Step {
    match &request.raw {
        Some(raw) => Step {
            raw: Some(literal_text(raw).replace("%ID%", "{{request_id}}")),
            // The URL's method, whatever the text names.
            call: Some(request.method.clone()),
            auth,
            ..Step::default()
        },
        None => Step {
            call: Some(request.method.clone()),
            params: params.clone(),
            auth,
            ..Step::default()
        },
    }
}

/// `{{name}}`.
fn template(name: &str) -> Value {
    Value::from(format!("{{{{{name}}}}}"))
}

/// A `client_credentials` login of `account` over HTTP that captures `path` as the
/// request's own token.
fn own_login(account: &str, scope: Option<&str>, path: &str) -> Step {
    let mut params = Map::new();
    if let Some(scope) = scope {
        params.insert("scope".to_owned(), Value::from(scope));
    }
    Step {
        call: Some(spec::AUTH_METHOD.to_owned()),
        params,
        auth: Auth {
            mode: AuthMode::ClientCredentials,
            account: Some(account.to_owned()),
            ..Auth::default()
        },
        capture: BTreeMap::from([(OWN_TOKEN.to_owned(), path.to_owned())]),
        transport: Some(TransportKind::HttpBody),
        ..Step::default()
    }
}

/// The `public/auth` parameters of a login the generator built: the account's `client_id`
/// as a template, the ones it left out kept out (`auth.omit`), the `data` it signs, and,
/// for data the signature's framing cannot carry (SPEC.md 5.5), an empty signature the
/// server must refuse.
fn login_params(
    request: &FuzzRequest,
    account: &str,
    target: &Target,
    params: &mut Map<String, Value>,
    auth: &mut Auth,
) {
    if params.get("client_id").and_then(Value::as_str)
        == target
            .accounts
            .get(account)
            .map(|known| known.client_id.as_str())
    {
        params.insert(
            "client_id".to_owned(),
            template(&format!("account.{account}.client_id")),
        );
    }
    if auth.mode == AuthMode::None {
        return;
    }
    auth.omit = ["grant_type", "client_id"]
        .into_iter()
        .filter(|name| !params.contains_key(*name))
        .map(str::to_owned)
        .collect();
    if auth.mode != AuthMode::ClientSignature {
        return;
    }
    // Sign the data as the server reads it: as text from a query string.
    let data = match request.params.get("data") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(value) if request.transport == TransportKind::HttpQuery => {
            harness_protocol::wire::query_value(value)
        }
        _ => None,
    };
    let Some(data) = data else {
        return;
    };
    if harness_protocol::auth::sign::client_signature("", 0, "", &data).is_ok() {
        auth.data = Some(literal_text(&data));
        return;
    }
    let offset = auth.timestamp_offset_ms;
    let timestamp = match offset {
        0 => "{{now_ms}}".to_owned(),
        offset if offset < 0 => format!("{{{{now_ms - {}}}}}", offset.unsigned_abs()),
        offset => format!("{{{{now_ms + {offset}}}}}"),
    };
    params.insert("timestamp".to_owned(), Value::from(timestamp));
    params.insert("nonce".to_owned(), template("nonce"));
    params.insert("signature".to_owned(), Value::from(""));
    *auth = Auth::default();
}

/// The auth mode that stands for `auth`.
fn auth_of(auth: &RequestAuth, target: &Target) -> Auth {
    let of = |mode: AuthMode, account: &str| Auth {
        mode,
        account: Some(account.to_owned()),
        ..Auth::default()
    };
    let bearer_token = |token: &str| Auth {
        mode: AuthMode::Bearer,
        token: Some(token.to_owned()),
        ..Auth::default()
    };
    match auth {
        RequestAuth::None
        | RequestAuth::RefreshOf { .. }
        | RequestAuth::ClientCredentials {
            secret: SecretPlan::Omitted,
            ..
        } => Auth::default(),
        RequestAuth::Bearer { account, scope } => Auth {
            scope: scope.clone(),
            ..of(AuthMode::Bearer, account)
        },
        RequestAuth::BogusToken => bearer_token("never-issued-token"),
        RequestAuth::Basic {
            account,
            wrong_secret,
        } => Auth {
            wrong_secret: *wrong_secret,
            ..of(AuthMode::Basic, account)
        },
        RequestAuth::Signed {
            account,
            wrong_secret,
            offset_ms,
            ..
        } => Auth {
            wrong_secret: *wrong_secret,
            timestamp_offset_ms: *offset_ms,
            ..of(AuthMode::Signed, account)
        },
        RequestAuth::ClientCredentials { account, secret } => Auth {
            wrong_secret: *secret == SecretPlan::Wrong,
            ..of(AuthMode::ClientCredentials, account)
        },
        RequestAuth::ClientSignature {
            account,
            wrong_secret,
            offset_ms,
            uppercase,
            ..
        } => Auth {
            wrong_secret: *wrong_secret,
            timestamp_offset_ms: *offset_ms,
            uppercase_hex: *uppercase,
            ..of(AuthMode::ClientSignature, account)
        },
        RequestAuth::ApiKey { .. } if target.fixtures.direct_access_key.is_none() => {
            bearer_token("no-direct-access-key")
        }
        RequestAuth::ApiKey { right } => Auth {
            mode: AuthMode::ApiKey,
            wrong_secret: !*right,
            ..Auth::default()
        },
    }
}

/// The account role of a request's credentials.
pub(crate) fn account_of(auth: &RequestAuth) -> Option<&str> {
    match auth {
        RequestAuth::Bearer { account, .. }
        | RequestAuth::Basic { account, .. }
        | RequestAuth::Signed { account, .. }
        | RequestAuth::ClientCredentials { account, .. }
        | RequestAuth::ClientSignature { account, .. }
        | RequestAuth::RefreshOf { account, .. } => Some(account),
        _ => None,
    }
}
