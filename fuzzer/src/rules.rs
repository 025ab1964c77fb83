//! The parameter rules of SPEC.md section 4 and the oracle built on them: given a request,
//! what a conforming server must answer (a result, an error, or either).
//!
//! The oracle says "error" only where the spec leaves no room: a value outside a listed
//! enumeration or range, a type no coercion can fix, a missing required parameter, missing
//! or bad credentials, a scope the method states and the token lacks. It says "result"
//! only for a request built from the stated types and listed values, with what SPEC.md
//! marks required. Where the spec is silent (unknown extra parameters, a string where an
//! integer is declared, an unknown instrument, an empty string, a scope value 5.4 does not
//! list, a string longer than any length SPEC.md states (RFC 8259 9 lets a parser limit it), a
//! timestamp past any bound or a window that ends before it starts, two filters
//! SPEC.md does not relate given together, a state changed by an earlier request) it says
//! "either", and only the envelope and, for a result, the
//! schema are checked: a server may refuse what SPEC.md does not require it to accept.

use serde_json::Value;

mod auth;
mod method;
mod values;

use super::{FuzzRequest, RequestAuth};
use auth::auth_refusal;
use harness_model::case::{ApiKey, Auth};
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;
use method::method_refusal;
use values::{ValueValidity, judge_value, well_typed, window_reversed};

use harness_protocol::spec::{Method, Values};

/// The Direct Access `lock_portfolio` (REST only).
pub(crate) const LOCK_PORTFOLIO: &str = spec::LOCK_PORTFOLIO_METHOD;

/// The methods the fuzzer calls over JSON-RPC: those of the spec table whose parameter
/// names SPEC.md shows (so not `public/fork_token`) and that are not Direct Access REST.
pub(crate) static METHODS: std::sync::LazyLock<Vec<&'static Method>> =
    std::sync::LazyLock::new(|| {
        harness_protocol::spec::METHODS
            .iter()
            .filter(|method| {
                method.params_shown
                    && method.interface != harness_protocol::spec::Interface::DirectAccess
            })
            .collect()
    });

/// The method of a name, if the fuzzer calls it.
pub(crate) fn method(name: &str) -> Option<&'static Method> {
    METHODS.iter().copied().find(|rule| rule.name == name)
}

/// What a conforming server must answer (the type the sequence model predicts with too).
pub use super::prediction::Prediction;

/// What the oracle knows beyond the request: the fixtures and the scope a token was granted.
#[derive(Clone, Debug, Default)]
pub struct OracleKnowledge {
    /// `fixtures.instrument_name`.
    pub instrument: Option<String>,
    /// `fixtures.subaccount_id`.
    pub subaccount: Option<u64>,
    /// `fixtures.two_factor_subaccount_id`: the subaccount a second-factor call of the
    /// `two_factor` account acts on.
    pub two_factor_subaccount: Option<u64>,
    /// `fixtures.currency`: the currency of `fixtures.instrument_name` where both are given.
    pub currency: Option<String>,
    /// The scope granted to the token the request carries (bearer), if known.
    pub granted: Option<Scope>,
    /// The client id of the account the request's credentials belong to.
    pub client_id: Option<String>,
    /// The account role the request's credentials belong to.
    pub account: Option<String>,
    /// The request goes over a WebSocket connection that has carried an access token or
    /// asked for one (a login, an exchange, a fork) before; the server may remember it (5.2
    /// says so for a session token and does not say for another).
    pub connection_holds_token: bool,
}

fn error(clause: &'static str, why: impl Into<String>) -> Prediction {
    Prediction::error(clause, why)
}

/// The oracle: what `request` must get.
pub fn expect(request: &FuzzRequest, knowledge: &OracleKnowledge) -> Prediction {
    if request.raw.is_some() {
        // SPEC.md does not say that a body departing from the envelope (`jsonrpc` "1.0",
        // array `params`: the `lenient-envelope` variant) is refused, and that malformed JSON
        // gets an error is only a warn clause (`env.invalid_request.refused`): the answer is
        // judged as an envelope only.
        return Prediction::either("");
    }
    if request.method == LOCK_PORTFOLIO {
        return expect_lock_portfolio(request);
    }
    let Some(rule) = method(&request.method) else {
        // SPEC.md lists only some methods ("All other methods ...: not shown"), and that an
        // unknown one is refused is only a warn clause (`env.invalid_request.refused`).
        return Prediction::either("");
    };
    if let Some(refusal) = auth_refusal(request, rule, knowledge) {
        return refusal;
    }
    let (mut certain, values_unsure) = match judge_values(request, rule, knowledge) {
        Ok(judged) => judged,
        Err(refusal) => return refusal,
    };
    certain &= !omits_unshown(request, rule);
    if let Some(missing) = missing_required(request, rule) {
        return missing;
    }
    if let Some(refusal) = method_refusal(request, rule, knowledge) {
        // The code of a refusal is certain only where no value may be refused first.
        return if values_unsure {
            Prediction {
                code: None,
                ..refusal
            }
        } else {
            refusal
        };
    }
    if has(request, "currency")
        && has(request, "instrument_name")
        && !(str_of(request, "instrument_name") == knowledge.instrument.as_deref()
            && str_of(request, "currency") == knowledge.currency.as_deref())
    {
        // Two filters SPEC.md does not relate (4.7): an instrument of another currency may
        // be answered with nothing or refused as a contradiction. The target's fixture
        // instrument with its fixture currency is the one pair known to agree.
        certain = false;
    }
    if request.auth.is_bogus_token() {
        // A public method with a bad token: the spec does not say whether it is refused.
        certain = false;
    }
    if certain {
        Prediction::result(accepted_clause(request, rule))
    } else {
        Prediction::either("")
    }
}

/// The Direct Access `lock_portfolio`: a result for the valid key and no parameters.
fn expect_lock_portfolio(request: &FuzzRequest) -> Prediction {
    match (&request.auth, request.params.is_empty()) {
        (
            RequestAuth::Step(Auth::ApiKey(ApiKey {
                wrong_secret: false,
            })),
            true,
        ) => Prediction::result("m.lock_portfolio.result"),
        (
            RequestAuth::Step(Auth::ApiKey(ApiKey {
                wrong_secret: false,
            })),
            false,
        ) => Prediction::either(""),
        _ => error("m.lock_portfolio.bearer", "no valid direct access key"),
    }
}

/// Each parameter's value against its rule: `Err` with the refusal of the first invalid
/// one; else whether a result is still certain (no unknown parameter, no value SPEC.md
/// leaves open, not a state-changing method) and whether a value's type may be refused
/// before anything else.
fn judge_values(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Result<(bool, bool), Prediction> {
    let query = request.transport == TransportKind::HttpQuery;
    let mut certain = !rule.state_changing;
    // A value not of its declared type (or not in its plain form): a server may refuse it
    // before anything else.
    let mut values_unsure = false;
    for (name, value) in &request.params {
        let Some(spec) = rule.params.iter().find(|spec| spec.name == name) else {
            // Unknown parameters: the spec does not say they are refused.
            certain &= name == "access_token" && request.transport == TransportKind::Ws;
            values_unsure = true;
            continue;
        };
        values_unsure |= !well_typed(spec.kind, value, query);
        match judge_value(spec, value, query, knowledge) {
            ValueValidity::Valid if name == "end_timestamp" && window_reversed(request, query) => {
                certain = false;
            }
            ValueValidity::Valid => {}
            ValueValidity::Unsure => certain = false,
            ValueValidity::Invalid(why) => return Err(error(spec.clause, format!("{name} {why}"))),
        }
    }
    Ok((certain, values_unsure))
}

/// Whether the request leaves out a parameter SPEC.md does not say may be left out, so
/// either answer is legal. A continuation is the exception: a first page has none to give.
fn omits_unshown(request: &FuzzRequest, rule: &Method) -> bool {
    rule.params.iter().any(|param| {
        param.required == harness_protocol::spec::Required::NotShown
            && !has(request, param.name)
            && !matches!(param.values, Values::Token)
    })
}

/// The refusal of the first required parameter the request leaves out.
fn missing_required(request: &FuzzRequest, rule: &Method) -> Option<Prediction> {
    let name = rule
        .params
        .iter()
        .filter(|param| param.required == harness_protocol::spec::Required::Yes)
        .map(|param| param.name)
        .find(|name| !has(request, name))?;
    let clause = rule
        .params
        .iter()
        .find(|spec| spec.name == name)
        .map_or(rule.clause, |spec| spec.clause);
    Some(error(clause, format!("required {name} is missing")))
}

/// Whether the request gives parameter `name` a value other than null.
fn has(request: &FuzzRequest, name: &str) -> bool {
    request
        .params
        .get(name)
        .is_some_and(|value| !value.is_null())
}

/// A parameter's string value, if it is one.
fn str_of<'a>(request: &'a FuzzRequest, name: &str) -> Option<&'a str> {
    request.params.get(name).and_then(Value::as_str)
}

/// The clause a refusal of a valid request breaks: the credential's, else the method's.
fn accepted_clause(request: &FuzzRequest, rule: &Method) -> &'static str {
    if request.auth.is_bogus_token() {
        return rule.clause;
    }
    match &request.auth {
        RequestAuth::Step(Auth::ClientSignature(_)) => "auth.client_signature.accepted",
        RequestAuth::Step(Auth::ClientCredentials(_)) | RequestAuth::NoSecret { .. } => {
            "auth.client_credentials.accepted"
        }
        RequestAuth::Step(Auth::Basic(_)) => "auth.basic.accepted",
        RequestAuth::Step(Auth::Signed(_)) => "auth.signed.accepted",
        RequestAuth::Step(Auth::Bearer(_)) if request.transport == TransportKind::Ws => {
            "auth.ws.access_token"
        }
        RequestAuth::Step(Auth::Bearer(_)) => "auth.http.bearer",
        RequestAuth::Step(Auth::None) if !rule.private => "auth.public.no_credentials",
        _ => rule.clause,
    }
}
