//! The path of one request through the server, the same for every transport: find the
//! method, check the parameters, settle who is calling, apply the rate limit, run.
//!
//! The methods are those of the spec table ([`harness_protocol::spec::METHODS`]), each with its handler;
//! any other name is `-32601 method_not_found`. Parameters are checked against the table's
//! declaration (see [`super::params`]); the handler then applies the rules a declaration
//! cannot express (enumerations, ranges, requirements between parameters, scope), reading
//! the listed values and bounds from the same table.

use serde_json::{Map, Value};

use super::ctx::{Ctx, Transport};
use super::fault::Fault;
use std::sync::LazyLock;

use super::params::{Declared, Leniency, Origin, Params, ParseFaults, declared};
use super::principal::{AuthPath, Principal};
use super::{Connection, ServerState, Variant, account, fixtures, grant, market, reshape, trading};
use harness_model::target_file::CountedPer;
use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec::{self, Kind};

type Run = fn(&mut Ctx<'_>) -> Result<Value, ErrorObject>;

/// A method of the spec table served over JSON-RPC, with its handler. `toggle_subaccount_login`
/// also takes the second factor (5.7 names no parameter for it; the target file names it).
struct ServedMethod {
    spec: &'static spec::Method,
    /// Every parameter accepted: the spec's and the server's own choices for names the spec
    /// does not show.
    params: Vec<Declared>,
    run: Run,
}

/// The reference server's handler for each JSON-RPC method of [`spec::METHODS`], with the
/// parameters it accepts beyond those SPEC.md names: `public/auth` takes the `state` whose
/// copy section 4.1 describes, and `public/fork_token`'s parameter names are "not shown"
/// (section 4.3), so the server picks its own (the target file names them).
const HANDLERS: &[(&str, Run, &[Declared])] = &[
    ("public/auth", grant::auth, &[declared("state", Kind::Str)]),
    ("public/exchange_token", grant::exchange_token, &[]),
    (
        "public/fork_token",
        grant::fork_token,
        &[
            declared("refresh_token", Kind::Str),
            declared("session_name", Kind::Str),
            declared("name", Kind::Str),
        ],
    ),
    ("private/logout", grant::logout, &[]),
    (
        "private/toggle_subaccount_login",
        account::toggle_subaccount_login,
        &[declared(fixtures::SECOND_FACTOR_PARAM, Kind::Str)],
    ),
    ("private/get_mmp_status", trading::get_mmp_status, &[]),
    (
        "private/get_trigger_order_history",
        trading::get_trigger_order_history,
        &[],
    ),
    (
        "private/get_transaction_log",
        account::get_transaction_log,
        &[declared(fixtures::KEYWORDS_PARAM, Kind::Str)],
    ),
    ("public/get_currencies", market::get_currencies, &[]),
    (
        "public/get_historical_volatility",
        market::get_historical_volatility,
        &[],
    ),
    ("private/delete_member", account::delete_member, &[]),
    ("private/close_position", trading::close_position, &[]),
    (
        "public/get_book_summary_by_instrument",
        market::get_book_summary_by_instrument,
        &[],
    ),
];

/// The served methods, built once from the spec table and [`HANDLERS`].
static METHODS: LazyLock<Vec<ServedMethod>> = LazyLock::new(|| {
    spec::METHODS
        .iter()
        .filter(|method| method.interface != spec::Interface::DirectAccess)
        .filter_map(|method| {
            let (_, run, extra) = HANDLERS.iter().find(|(name, ..)| *name == method.name)?;
            let params = method
                .params
                .iter()
                .map(|param| declared(param.name, param.kind))
                .chain(extra.iter().copied())
                .collect();
            Some(ServedMethod {
                spec: method,
                params,
                run: *run,
            })
        })
        // The read of an order the target file names (`orders.rs`), outside SPEC.md's table.
        .chain(std::iter::once(ServedMethod {
            spec: &super::orders::ORDER_READ,
            params: vec![declared(super::orders::ORDER_ID_PARAM, Kind::Str)],
            run: trading::get_order_state,
        }))
        .collect()
});

fn served(method_name: &str) -> Option<&'static ServedMethod> {
    METHODS
        .iter()
        .find(|method| method.spec.name == method_name)
}

/// The declared parameters of a served method; `None` for an unknown method.
pub(crate) fn declared_params(method_name: &str) -> Option<&'static [Declared]> {
    served(method_name).map(|method| method.params.as_slice())
}

/// The served methods, in the spec's order.
pub(crate) fn method_names() -> impl Iterator<Item = &'static str> {
    METHODS.iter().map(|method| method.spec.name)
}

/// Runs one request and returns its result or error.
pub(crate) fn call(
    state: &ServerState,
    transport: Transport<'_>,
    method_name: &str,
    mut raw: Map<String, Value>,
    origin: Origin,
) -> Result<Value, ErrorObject> {
    // What a race fault put off and is now due lands before anything is read.
    state.deferred.settle(state);
    let Some(method) = served(method_name) else {
        return Err(ErrorObject::method_not_found());
    };
    refuse_logout_over_http(state, method, &transport)?;
    let needs_caller = method.spec.private
        || (state.fault(Fault::PublicRequiresToken) && method.spec.name != "public/auth");
    let presented = ws_token(&transport, &mut raw)?;
    // Parameters are checked before credentials, so a token misplaced in the query string
    // is named as such instead of being reported as missing.
    let params = checked_params(state, method, raw, origin)?;
    if !needs_caller && state.variant(Variant::PublicRefusesBadToken) {
        refuse_bad_token(state, &transport, presented.as_deref())?;
    }
    let (principal, connection) = match transport {
        Transport::Http(http) => {
            let principal = if needs_caller {
                match state.principal_from_header(&http)? {
                    Some(principal) => Some(principal),
                    None => anonymous(state)?,
                }
            } else {
                None
            };
            (principal, None)
        }
        Transport::Ws(connection) => {
            let principal = ws_principal(state, connection, presented, needs_caller)?;
            (principal, Some(connection))
        }
    };
    // The `disabled-exchanged-refused` fault refuses every token acting for a subaccount
    // whose login is disabled, the ones its main account obtained for it too.
    if state.fault(Fault::DisabledExchangedRefused)
        && principal.as_ref().is_some_and(|principal| {
            super::state::lock(&state.disabled_logins).contains(&principal.user_id)
        })
    {
        return Err(ErrorObject::unauthorized(
            "the subaccount's login is disabled",
        ));
    }
    if method.spec.paced
        && let Some(principal) = &principal
    {
        admit_paced(state, principal)?;
    }
    let mut ctx = Ctx {
        state,
        method: method.spec,
        params,
        principal,
        connection,
        origin,
    };
    let mut result = (method.run)(&mut ctx)?;
    reshape::result(&ctx, &mut result);
    Ok(result)
}

/// Logout is refused over HTTP before anything else: which credentials came with it does
/// not matter (SPEC.md 4.4).
fn refuse_logout_over_http(
    state: &ServerState,
    method: &ServedMethod,
    transport: &Transport<'_>,
) -> Result<(), ErrorObject> {
    if method.spec.interface == spec::Interface::WsOnly
        && let Transport::Http(http) = transport
        && !state.fault(Fault::LogoutOverHttp)
    {
        let bearer = http.authorization.and_then(bearer_token);
        // The `logout-over-http-api-key` fault refuses it under a bearer token only.
        if bearer.is_some() || !state.fault(Fault::LogoutOverHttpApiKey) {
            // The `logout-http-ends-token` fault refuses it, but ends the token first.
            if let (Some(token), true) = (bearer, state.fault(Fault::LogoutHttpEndsToken)) {
                super::state::lock(&state.tokens).revoke_access(token);
            }
            return Err(ErrorObject::bad_request("private/logout is websocket only"));
        }
    }
    Ok(())
}

/// The access token a WebSocket request carries among its parameters, taken out before
/// they are checked; over HTTP it has no place there, so `access_token` stays an unknown
/// parameter.
fn ws_token(
    transport: &Transport<'_>,
    raw: &mut Map<String, Value>,
) -> Result<Option<String>, ErrorObject> {
    match transport {
        Transport::Ws(_) => match raw.remove("access_token") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(token)) => Ok(Some(token)),
            Some(_) => Err(ErrorObject::invalid_params(
                "access_token",
                "must be of type string",
            )),
        },
        Transport::Http(_) => Ok(None),
    }
}

/// The request's parameters checked against the method's declaration, as leniently as
/// the variants on allow, and held to the variants' own requirements.
fn checked_params(
    state: &ServerState,
    method: &ServedMethod,
    mut raw: Map<String, Value>,
    origin: Origin,
) -> Result<Params, ErrorObject> {
    let leniency = Leniency {
        ignore_unknown: state.variant(Variant::UnknownParamsIgnored),
        coerce: state.variant(Variant::CoerceTypes),
        faults: ParseFaults {
            unicode_digits: state.fault(Fault::IntUnicodeDigits),
            float_parse: state.fault(Fault::IntFloatParse),
            unicode_trim: state.fault(Fault::IntUnicodeTrim),
        },
    };
    if state.variant(Variant::TimestampsUnbounded) {
        clamp_timestamps(&mut raw);
    }
    let params = Params::check(raw, &method.params, origin, leniency)?;
    if state.variant(Variant::RequireUnflagged) {
        required_under_variant(method.spec.name, &params)?;
    }
    if state.variant(Variant::RefusesUnlisted) {
        refuse_unlisted(&params)?;
    }
    Ok(params)
}

/// Takes a token of the paced method's budget for `principal` (its account's, or its
/// token's, as the target counts it), or refuses with `too_many_requests`.
fn admit_paced(state: &ServerState, principal: &Principal) -> Result<(), ErrorObject> {
    let key = if state.limits.transaction_log_counted_per == CountedPer::Account {
        format!("user:{}", principal.user_id)
    } else {
        principal.rate_key.clone()
    };
    let admitted = if state.fault(Fault::RaceBucket) {
        // The bucket is read now and the token taken a few ms after the answer.
        let has_token = super::state::lock(&state.rate).has_token(&key, state.now_ms());
        if has_token {
            state.deferred.later(move |state| {
                super::state::lock(&state.rate).admit(&key, state.now_ms());
            });
        }
        has_token
    } else {
        super::state::lock(&state.rate).admit(&key, state.now_ms())
    };
    if admitted {
        Ok(())
    } else {
        Err(ErrorObject::too_many_requests())
    }
}

/// Under the `timestamps-unbounded` variant, a timestamp past the signed 64-bit range is
/// taken as its largest value and one before the epoch as the epoch (SPEC.md states no
/// bound), so the answer is a page, empty where nothing falls in the window.
fn clamp_timestamps(raw: &mut Map<String, Value>) {
    for name in ["start_timestamp", "end_timestamp"] {
        let Some(value) = raw.get_mut(name) else {
            continue;
        };
        let number: Option<i128> = match &*value {
            Value::Number(number) => number
                .as_i64()
                .map(i128::from)
                .or_else(|| number.as_u64().map(i128::from)),
            Value::String(text) => text.parse().ok(),
            _ => None,
        };
        let Some(number) = number else {
            continue;
        };
        let clamped = i64::try_from(number.clamp(0, i128::from(i64::MAX))).unwrap_or(i64::MAX);
        *value = match value {
            Value::String(_) => Value::String(clamped.to_string()),
            _ => Value::from(clamped),
        };
    }
}

/// Under the `refuses-unlisted` variant, a requested scope naming a value section 5.4
/// does not list, and an empty `instrument_name`, are refused: SPEC.md does not require
/// a server to accept them.
fn refuse_unlisted(params: &Params) -> Result<(), ErrorObject> {
    if let Some(scope) = params.str("scope")
        && !harness_protocol::auth::scope::Scope::parse(scope).listed()
    {
        return Err(ErrorObject::invalid_params(
            "scope",
            "names a value section 5.4 does not list",
        ));
    }
    if params.str("instrument_name") == Some("") {
        return Err(ErrorObject::invalid_params("instrument_name", "is empty"));
    }
    Ok(())
}

/// The parameters the `require-unflagged` variant requires beyond the reference's: ones
/// whose required flag SPEC.md does not show and that deployments commonly require.
const REQUIRED_UNDER_VARIANT: &[(&str, &[&str])] = &[
    ("private/get_trigger_order_history", &["currency"]),
    (
        "private/get_transaction_log",
        &["currency", "start_timestamp", "end_timestamp"],
    ),
    ("public/get_historical_volatility", &["currency"]),
    ("private/close_position", &["instrument_name", "type"]),
];

fn required_under_variant(method_name: &str, params: &Params) -> Result<(), ErrorObject> {
    let required = REQUIRED_UNDER_VARIANT
        .iter()
        .find(|(name, _)| *name == method_name)
        .map_or(&[][..], |(_, required)| *required);
    match required.iter().find(|name| !params.has(name)) {
        Some(missing) => Err(ErrorObject::invalid_params(
            missing,
            "missing required parameter",
        )),
        None => Ok(()),
    }
}

/// Under the `public-refuses-bad-token` variant, a public call presenting a bearer token
/// that is not valid is refused rather than answered as if anonymous.
fn refuse_bad_token(
    state: &ServerState,
    transport: &Transport<'_>,
    presented: Option<&str>,
) -> Result<(), ErrorObject> {
    let token = match transport {
        Transport::Ws(_) => presented,
        Transport::Http(http) => http.authorization.and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        }),
    };
    match token {
        Some(token) if state.principal_from_token(token).is_err() => Err(
            ErrorObject::unauthorized("invalid access token on a public call"),
        ),
        _ => Ok(()),
    }
}

/// The token of an `Authorization: Bearer <token>` header, the scheme read without case.
fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A request without credentials: refused, unless the `private-without-token` fault
/// lets it run as the main account.
fn anonymous(state: &ServerState) -> Result<Option<Principal>, ErrorObject> {
    if state.fault(Fault::PrivateWithoutToken) {
        Ok(state.main_principal())
    } else {
        Err(ErrorObject::unauthorized("missing access token"))
    }
}

/// Settles the caller of a WebSocket request from `params.access_token` or the token the
/// connection remembers. A presented session-scoped token is remembered even on public
/// methods (not under the `ws-remembers-auth-only` variant, which remembers only what
/// `public/auth` issued on the connection); a bad presented token fails only a request
/// that needs a caller.
fn ws_principal(
    state: &ServerState,
    connection: &mut Connection,
    presented: Option<String>,
    needs_caller: bool,
) -> Result<Option<Principal>, ErrorObject> {
    let presented = presented.filter(|_| !state.fault(Fault::WsAccessTokenIgnored));
    if let Some(token) = presented {
        let resolved = state
            .principal_from_token(&token)
            .map(|principal| Principal {
                path: AuthPath::WsToken,
                ..principal
            });
        if let Ok(principal) = &resolved
            && (principal.scope.session.is_some() || state.variant(Variant::WsRemembersAnyToken))
            && !state.fault(Fault::WsSessionForgotten)
            && !state.variant(Variant::WsRemembersAuthOnly)
        {
            state.share_session(&token);
            connection.session_token = Some(token);
        }
        return match resolved {
            Ok(principal) => Ok(Some(principal)),
            Err(error) if needs_caller => Err(error),
            Err(_) => Ok(None),
        };
    }
    if !needs_caller {
        return Ok(None);
    }
    if let Some(token) = connection
        .session_token
        .clone()
        .or_else(|| state.shared_session())
    {
        // The `ws-remembered-token-outlives` fault checks expiry only of a presented token.
        let remembered = if state.fault(Fault::WsRememberedTokenOutlives) {
            state.principal_from_token_at(&token, 0)
        } else {
            state.principal_from_token(&token)
        };
        // The `*-keeps-ws-remembered` faults honour a remembered token that a disable or a
        // logout ended.
        let remembered =
            remembered.or_else(|error| state.principal_remembered_after_end(&token).ok_or(error));
        return match remembered {
            Ok(principal) => Ok(Some(Principal {
                path: AuthPath::WsRemembered,
                ..principal
            })),
            Err(error) => {
                // The session ended (logout, expiry, disabled login): forget it.
                connection.session_token = None;
                Err(error)
            }
        };
    }
    anonymous(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler table is keyed by name: every name is a JSON-RPC method of the spec
    /// table, and every such method has a handler.
    #[test]
    fn every_handler_serves_a_method_of_the_spec() {
        for (name, ..) in HANDLERS {
            let method = spec::method(name);
            assert!(
                method.is_some_and(|method| method.interface != spec::Interface::DirectAccess),
                "{name} is no JSON-RPC method of spec::METHODS"
            );
        }
        for method in spec::METHODS
            .iter()
            .filter(|method| method.interface != spec::Interface::DirectAccess)
        {
            assert!(
                HANDLERS.iter().any(|(name, ..)| *name == method.name),
                "{} has no handler",
                method.name
            );
        }
    }

    /// The `require-unflagged` variant only requires parameters whose required flag SPEC.md
    /// does not show.
    #[test]
    fn the_variant_requires_only_parameters_the_spec_leaves_unflagged() {
        for (name, required) in REQUIRED_UNDER_VARIANT {
            let method = spec::method(name).unwrap();
            for param in *required {
                assert_eq!(
                    method.param(param).map(|param| param.required),
                    Some(spec::Required::NotShown),
                    "{name} {param}"
                );
            }
        }
    }
}
