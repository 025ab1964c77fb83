//! The parameter rules of SPEC.md section 4 and the oracle built on them: given a request,
//! what a conforming server must answer (a result, an error, or either).
//!
//! The oracle says "error" only where the spec leaves no room: a value outside a listed
//! enumeration or range, a type no coercion can fix, a missing required parameter, missing
//! or bad credentials, a scope the method states and the token lacks. It says "result"
//! only for a request built from the stated types and listed values, with what SPEC.md
//! marks required. Where the spec is silent (unknown extra parameters, a string where an
//! integer is declared, an unknown instrument, an empty string, a scope value 5.4 does not
//! list, a timestamp past any bound or a window that ends before it starts, two filters
//! SPEC.md does not relate given together, a state changed by an earlier request) it says
//! "either", and only the envelope and, for a result, the
//! schema are checked: a server may refuse what SPEC.md does not require it to accept.

use serde_json::{Map, Value};

mod auth;

use super::{FuzzRequest, RequestAuth};
use auth::{auth_params_refusal, auth_refusal};
use harness_model::case::{ApiKey, Auth};
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

use harness_protocol::spec::{Fixture, Kind, Method, Param, Values};

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
    /// The request goes over a WebSocket connection that has carried an access token
    /// before; the server may remember it (5.2 says so for a session token and does not say
    /// for another).
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
        return match (&request.auth, request.params.is_empty()) {
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
        };
    }
    let Some(rule) = method(&request.method) else {
        // SPEC.md lists only some methods ("All other methods ...: not shown"), and that an
        // unknown one is refused is only a warn clause (`env.invalid_request.refused`).
        return Prediction::either("");
    };
    if let Some(refusal) = auth_refusal(request, rule, knowledge) {
        return refusal;
    }
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
            ValueValidity::Invalid(why) => return error(spec.clause, format!("{name} {why}")),
        }
    }
    let has = |name: &str| {
        request
            .params
            .get(name)
            .is_some_and(|value| !value.is_null())
    };
    for param in rule.params {
        // SPEC.md does not say whether it may be left out: either answer is legal. A
        // continuation is the exception: a first page has none to give.
        if param.required == harness_protocol::spec::Required::NotShown
            && !has(param.name)
            && !matches!(param.values, Values::Token)
        {
            certain = false;
        }
    }
    for name in rule
        .params
        .iter()
        .filter(|param| param.required == harness_protocol::spec::Required::Yes)
        .map(|param| param.name)
    {
        if !has(name) {
            let clause = rule
                .params
                .iter()
                .find(|spec| spec.name == name)
                .map_or(rule.clause, |spec| spec.clause);
            return error(clause, format!("required {name} is missing"));
        }
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
    if has("currency")
        && has("instrument_name")
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

/// A parameter's string value, if it is one.
fn str_of<'a>(request: &'a FuzzRequest, name: &str) -> Option<&'a str> {
    request.params.get(name).and_then(Value::as_str)
}

/// Whether a parameter value is one SPEC.md allows, not, or not said.
enum ValueValidity {
    Valid,
    Unsure,
    Invalid(String),
}

fn judge_value(
    spec: &Param,
    value: &Value,
    query: bool,
    knowledge: &OracleKnowledge,
) -> ValueValidity {
    if value.is_null() {
        return ValueValidity::Unsure;
    }
    // Over a query string every value is text: what matters is whether it coerces.
    let coerced: Option<Value> = match (spec.kind, value) {
        (Kind::Str, Value::String(_)) => Some(value.clone()),
        // Over a query string even an object arrives as text.
        (Kind::Str, _) if query => Some(Value::String(
            harness_protocol::wire::query_value(value).unwrap_or_default(),
        )),
        (Kind::Int, Value::Number(number)) if number.is_i64() => Some(value.clone()),
        // SPEC.md states no bound for a timestamp (the spec table's `i64::MAX`): a server
        // may answer an empty page or refuse.
        (Kind::Int, Value::Number(number)) if number.is_u64() => {
            return match spec.values {
                Values::Range(_, i64::MAX) => ValueValidity::Unsure,
                _ => ValueValidity::Invalid("is beyond any range".to_owned()),
            };
        }
        (Kind::Num, Value::Number(_)) => Some(value.clone()),
        (Kind::Bool, Value::Bool(_)) => Some(value.clone()),
        (Kind::Int | Kind::Num | Kind::Bool, Value::String(text)) => {
            match spec.kind.from_text(text) {
                // A JSON string holding a number: a lenient server may take it.
                Some(_) if !query => return ValueValidity::Unsure,
                Some(parsed) if plainly_written(text, &parsed) => Some(parsed),
                // `+5`, `-0`, `05`, `5.`: a number only some parsers read as one.
                Some(_) => return ValueValidity::Unsure,
                None => None,
            }
        }
        _ => None,
    };
    // SPEC.md gives each parameter a type but does not say that a value of another type is
    // refused: a server may coerce it, or ignore it (the `coerce-types` variant).
    let Some(value) = coerced else {
        return ValueValidity::Unsure;
    };
    match spec.values {
        Values::OneOf(allowed) => match value.as_str() {
            Some(text) if allowed.contains(&text) => ValueValidity::Valid,
            _ => ValueValidity::Invalid(format!("{value} is not one of the listed values")),
        },
        Values::Range(min, max) => match value.as_i64() {
            // No stated bound, and past what a JSON number holds exactly wherever it is
            // parsed (RFC 8259 section 6: 2^53): a server may read it as another number.
            Some(number) if max == i64::MAX && number.unsigned_abs() > EXACT_IN_EVERY_PARSER => {
                ValueValidity::Unsure
            }
            Some(number) if (min..=max).contains(&number) => ValueValidity::Valid,
            // No stated bound (a timestamp): outside the table's range is either. A stated
            // range (a count) says what is valid, not that a value outside it is refused: a
            // server may take it into the range (the `counts-clamped` variant).
            _ => ValueValidity::Unsure,
        },
        Values::Fixture(Fixture::Instrument) => {
            if knowledge.instrument.as_deref() == value.as_str() {
                ValueValidity::Valid
            } else {
                ValueValidity::Unsure
            }
        }
        // The fixture subaccount belongs to the main account.
        Values::Fixture(Fixture::Subaccount) => {
            let main = knowledge
                .account
                .as_deref()
                .is_none_or(|account| account == "main");
            if main && knowledge.subaccount.is_some() && knowledge.subaccount == value.as_u64() {
                ValueValidity::Valid
            } else {
                ValueValidity::Unsure
            }
        }
        // A member or a continuation the target did not hand out may or may not exist.
        Values::Fixture(Fixture::Member) | Values::Token => ValueValidity::Unsure,
        Values::Free => free_value(spec.name, &value, knowledge),
    }
}

/// Whether `value` is of the declared `kind` as it travels: its JSON type, or over a query
/// string text in the type's plain form.
fn well_typed(kind: Kind, value: &Value, query: bool) -> bool {
    match (kind, value) {
        (_, Value::Null) => false,
        (Kind::Str, Value::String(_)) => true,
        (Kind::Str, _) => query,
        (Kind::Int, Value::Number(number)) => number.is_i64(),
        (Kind::Num, Value::Number(_)) | (Kind::Bool, Value::Bool(_)) => true,
        (_, Value::String(text)) if query => kind
            .from_text(text)
            .is_some_and(|parsed| plainly_written(text, &parsed)),
        _ => false,
    }
}

/// The largest integer every JSON parser holds exactly (RFC 8259 section 6).
const EXACT_IN_EVERY_PARSER: u64 = (1 << 53) - 1;

/// Whether query text that parses as `parsed` is that value's plain form: the JSON text of
/// the number (no sign but `-`, no leading zero, no `-0`), which every parser of integers
/// or numbers reads alike.
fn plainly_written(text: &str, parsed: &Value) -> bool {
    match parsed {
        Value::Number(number) if number.is_i64() || number.is_u64() => text == number.to_string(),
        Value::Number(_) => {
            serde_json::from_str::<serde_json::Number>(text).is_ok()
                && !(text.starts_with('-') && parsed.as_f64() == Some(0.0))
        }
        _ => true,
    }
}

/// A value of a parameter SPEC.md gives a type but no list: valid only where nothing but
/// the type is asked. An empty string (but the `mmp_group` SPEC.md 4.6 says may be empty),
/// a scope naming a value 5.4 does not list, an instrument filter other than the fixture's,
/// or a group SPEC.md does not name may be refused.
fn free_value(name: &str, value: &Value, knowledge: &OracleKnowledge) -> ValueValidity {
    let Some(text) = value.as_str() else {
        return ValueValidity::Valid;
    };
    let valid = match name {
        "mmp_group" => text.is_empty(),
        "scope" => !text.trim().is_empty() && Scope::parse(text).listed(),
        "instrument_name" => knowledge.instrument.as_deref() == Some(text),
        _ => !text.is_empty(),
    };
    if valid {
        ValueValidity::Valid
    } else {
        ValueValidity::Unsure
    }
}

/// Whether the request's `end_timestamp` is before its `start_timestamp`: SPEC.md does not
/// say whether such a window is refused or answered empty.
fn window_reversed(request: &FuzzRequest, query: bool) -> bool {
    let timestamp = |name: &str| -> Option<i64> {
        match request.params.get(name)? {
            Value::String(text) if query => text.parse().ok(),
            other => other.as_i64(),
        }
    };
    matches!(
        (timestamp("start_timestamp"), timestamp("end_timestamp")),
        (Some(start), Some(end)) if end < start
    )
}

/// Rules between parameters, and per-method refusals the table cannot express.
fn method_refusal(
    request: &FuzzRequest,
    rule: &Method,
    knowledge: &OracleKnowledge,
) -> Option<Prediction> {
    let params: &Map<String, Value> = &request.params;
    let query = request.transport == TransportKind::HttpQuery;
    // Over a query string every value is text, whatever its JSON type was.
    let owned = |name: &str| match params.get(name) {
        Some(Value::String(text)) => Some(text.clone()),
        Some(value) if query => harness_protocol::wire::query_value(value),
        _ => None,
    };
    let mmp_group = owned("mmp_group");
    let index_name = owned("index_name");
    let requested_scope = owned("scope");
    let text = |name: &str| match name {
        "mmp_group" => mmp_group.as_deref(),
        "index_name" => index_name.as_deref(),
        "scope" => requested_scope.as_deref(),
        _ => params.get(name).and_then(Value::as_str),
    };
    match rule.name {
        spec::MMP_STATUS_METHOD => {
            if text("mmp_group").is_some_and(|group| !group.is_empty())
                && text("index_name").is_none()
            {
                return Some(error(
                    "m.get_mmp_status.mmp_group_requires_index",
                    "mmp_group without index_name",
                ));
            }
            if text("mmp_group").is_some_and(str::is_empty) && text("index_name").is_none() {
                // 4.6: mmp_group "requires index_name", and empty "targets the default
                // orders MMP group (not an error)": read either way.
                return Some(Prediction::either("an empty mmp_group without index_name"));
            }
            let block_rfq = params
                .get("block_rfq")
                .is_some_and(|flag| flag == &Value::Bool(true) || flag == "true");
            if block_rfq
                && let Some(granted) = &knowledge.granted
                && !granted.grants(spec::MMP_BLOCK_RFQ_SCOPE)
            {
                return Some(error(
                    "m.get_mmp_status.scope",
                    "block_rfq without block_rfq:read",
                ));
            }
        }
        name if harness_protocol::spec::NEEDS_SECOND_FACTOR.contains(&name) => {
            if matches!(&request.auth, RequestAuth::Step(Auth::Bearer(bearer)) if bearer.account.as_deref() == Some("two_factor"))
            {
                // 13668 is the answer to a call that lacks only the second factor: SPEC.md
                // does not say which refusal comes first when the parameters are wrong too
                // (a subaccount that is not the account's, a state outside the two).
                let own_subaccount = knowledge.two_factor_subaccount.is_some_and(|id| {
                    params.get("sid").and_then(Value::as_u64) == Some(id)
                        || text("sid") == Some(id.to_string().as_str())
                });
                let state_listed = matches!(text("state"), Some("enable" | "disable"));
                if !(own_subaccount && state_listed) {
                    return Some(Prediction::error(
                        "auth.two_factor.13668",
                        "a 2fa account without the second factor, and parameters that may be refused first",
                    ));
                }
                return Some(
                    error(
                        "auth.two_factor.13668",
                        "a 2fa account without the second factor",
                    )
                    .with_code(harness_protocol::spec::SECOND_FACTOR_ERROR_CODE),
                );
            }
        }
        spec::AUTH_METHOD => return auth_params_refusal(request, knowledge),
        spec::EXCHANGE_TOKEN_METHOD => {
            if let (Some(granted), Some(requested)) = (&knowledge.granted, text("scope"))
                && !Scope::parse(requested).within(granted)
            {
                // "must not exceed the caller's permissions": refusing it and capping it
                // both keep the rule, and the response shape is not shown (4.2).
                return Some(Prediction::either(""));
            }
            if !matches!(request.auth, RequestAuth::RefreshOf { .. }) {
                return Some(error(
                    "auth.exchange_token.accepted",
                    "a refresh token that was never issued",
                ));
            }
        }
        _ => {}
    }
    None
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
