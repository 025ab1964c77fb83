//! A generated request as the runner's steps: the one form in which the fuzzer both sends
//! a request (`send.rs`, through the runner's executor) and writes a finding's case file
//! (`case_file.rs`), so the file replays what was sent.
//!
//! A request's credentials are a step's `auth` already ([`RequestAuth::Step`]), which the
//! executor fills in. A request that needs a token of its own gets a login step first, over
//! HTTP: a refresh (its refresh token) and a logout (logging out ends the token, so it must
//! not be one the other requests share). A replay (nonce `"reuse"`) is the same step twice,
//! the first with a fresh nonce; one released together with the original is a race step
//! of two copies with one fresh nonce, at most one of which may get a result. Generated values are sent
//! as they are ([`literal`]: a generated `{{` is not a template), and a raw body carries
//! the id of its request as `{{request_id}}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::request_auth::REUSE;
use super::{FuzzRequest, RequestAuth};
use harness_model::case::{
    Auth, Case, ExpectedAnswer, Login, LoginParam, Race, Step, StepKind, literal, literal_text,
};
use harness_model::check::Outcome;
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
    let mut auth = step_auth(&request.auth, target);
    match &request.auth {
        RequestAuth::RefreshOf { account, scope } => {
            steps.push(own_login(account, scope.as_deref(), "result.refresh_token"));
            params.insert("refresh_token".to_owned(), template(OWN_TOKEN));
        }
        RequestAuth::Step(Auth::Bearer(bearer))
            if request.method == spec::LOGOUT_METHOD && auth.given_token().is_none() =>
        {
            let account = bearer.account.as_deref().unwrap_or("main");
            steps.push(own_login(
                account,
                bearer_scope(&auth),
                "result.access_token",
            ));
            auth = Auth::bearer_token(format!("{{{{{OWN_TOKEN}}}}}"));
        }
        RequestAuth::NoSecret { account } => {
            login_params(request, account, target, &mut params, &mut auth);
        }
        RequestAuth::Step(login @ (Auth::ClientCredentials(_) | Auth::ClientSignature(_))) => {
            let account = login.account().unwrap_or("main");
            login_params(request, account, target, &mut params, &mut auth);
        }
        _ => {}
    }
    if is_replay(request) {
        // The first sending takes a fresh nonce; the second reuses it. Released together,
        // the two are one race step whose copies carry one fresh nonce.
        let mut first = auth.clone();
        if let Some(signature) = first.signature_mut() {
            signature.nonce = None;
        }
        if raced(request) {
            steps.push(raced_replay(request, &params, first));
        } else {
            if let Some(signature) = auth.signature_mut() {
                signature.nonce = Some(REUSE.to_owned());
            }
            steps.push(step(request, &params, first));
            steps.push(step(request, &params, auth));
        }
    } else {
        steps.push(step(request, &params, auth));
    }
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

/// The scope a `bearer` login asks for.
fn bearer_scope(auth: &Auth) -> Option<&str> {
    match auth {
        Auth::Bearer(harness_model::case::Bearer {
            token: harness_model::case::BearerToken::Login(login),
            ..
        }) => login.scope.as_deref(),
        _ => None,
    }
}

/// Whether `request` is sent twice with one nonce, the second judged.
pub(crate) fn is_replay(request: &FuzzRequest) -> bool {
    request.auth.is_replay()
}

/// Whether `request` goes out as a race of the original and its replay: a replay marked so,
/// not raw, whose nonce a server must check (a login's, or a private method's signed
/// header; a public method may ignore the header, and with it the nonce). Otherwise a
/// replay goes one sending after the other.
pub(crate) fn raced(request: &FuzzRequest) -> bool {
    let checked = match &request.auth {
        RequestAuth::Step(Auth::ClientSignature(_)) => true,
        _ => spec::method(&request.method).is_some_and(|method| method.private),
    };
    request.auth.is_raced_replay() && request.raw.is_none() && checked
}

/// The clause a replay of `auth` breaks when both sendings succeed.
pub(crate) fn replay_clause(auth: &Auth) -> &'static str {
    match auth {
        Auth::ClientSignature(_) => "auth.client_signature.nonce_single_use",
        _ => "auth.signed.nonce_single_use",
    }
}

/// A replay released together with the original: two copies of the request with one
/// fresh nonce, over connections of their own, at most one of which may get a result
/// (SPEC.md 5.5, 5.6: the nonce is single use). The race judges it; its answers are
/// otherwise what they may be.
fn raced_replay(request: &FuzzRequest, params: &Map<String, Value>, auth: Auth) -> Step {
    let clause = replay_clause(&auth);
    Step {
        params: params.clone(),
        expect: ExpectedAnswer {
            outcome: Outcome::Any,
            no_schema: true,
            ..ExpectedAnswer::default()
        },
        clauses: Some(vec![clause.to_owned()]),
        auth,
        ..Step::new(StepKind::Race {
            method: request.method.clone(),
            race: Box::new(Race {
                copies: 2,
                rounds: 1,
                at_most: Value::from(1),
                over: Vec::new(),
                lead: None,
                after_lead: 0,
                counts: None,
                again_after_ms: None,
                within_declared_rate: false,
            }),
        })
    }
}

/// The step sending `request` with `params` and `auth`.
fn step(request: &FuzzRequest, params: &Map<String, Value>, auth: Auth) -> Step {
    match &request.raw {
        Some(raw) => Step {
            auth,
            ..Step::new(StepKind::Raw {
                text: literal_text(raw).replace("%ID%", "{{request_id}}"),
                // The URL's method, whatever the text names.
                url_of: Some(request.method.clone()),
            })
        },
        None => Step {
            params: params.clone(),
            auth,
            ..Step::call(request.method.clone())
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
        params,
        auth: Auth::ClientCredentials(Login {
            account: Some(account.to_owned()),
            ..Login::default()
        }),
        capture: BTreeMap::from([(OWN_TOKEN.to_owned(), path.to_owned())]),
        transport: Some(TransportKind::HttpBody),
        ..Step::call(spec::AUTH_METHOD)
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
    let omit = [LoginParam::GrantType, LoginParam::ClientId]
        .into_iter()
        .filter(|param| !params.contains_key(param.name()))
        .collect();
    if let Some(login) = auth.login_mut() {
        login.omit = omit;
    }
    let Auth::ClientSignature(login) = auth else {
        return;
    };
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
        login.data = Some(literal_text(&data));
        return;
    }
    let offset = login.signature.timestamp_offset_ms;
    let timestamp = match offset {
        0 => "{{now_ms}}".to_owned(),
        offset if offset < 0 => format!("{{{{now_ms - {}}}}}", offset.unsigned_abs()),
        offset => format!("{{{{now_ms + {offset}}}}}"),
    };
    params.insert("timestamp".to_owned(), Value::from(timestamp));
    params.insert("nonce".to_owned(), template("nonce"));
    params.insert("signature".to_owned(), Value::from(""));
    *auth = Auth::None;
}

/// The step's `auth` of a request's credentials: the one it states, none for the logins
/// the generator spelled out in its parameters, and for the Direct Access key of a target
/// file without one, a token the target never issued.
fn step_auth(auth: &RequestAuth, target: &Target) -> Auth {
    match auth {
        RequestAuth::Step(Auth::ApiKey(_)) if target.fixtures.direct_access_key.is_none() => {
            Auth::bearer_token("no-direct-access-key")
        }
        RequestAuth::Step(auth) => auth.clone(),
        RequestAuth::NoSecret { .. } | RequestAuth::RefreshOf { .. } => Auth::None,
    }
}

/// The account role of a request's credentials.
pub(crate) fn account_of(auth: &RequestAuth) -> Option<&str> {
    auth.account()
}
