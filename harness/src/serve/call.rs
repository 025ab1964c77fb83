//! The path of one request through the server, the same for every transport: find the
//! method, check the parameters, settle who is calling, apply the rate limit, run.
//!
//! The method table below is the list of SPEC.md section 4; any other name is
//! `-32601 method_not_found`. Each entry declares its parameters (see [`super::params`]);
//! the method body then applies the rules the declaration cannot express (enumerations,
//! ranges, requirements between parameters, scope).

use serde_json::{Map, Value};

use super::ctx::{Ctx, Transport};
use super::fault::Fault;
use super::params::{Kind, Origin, Params, Spec, spec};
use super::principal::Principal;
use super::{Connection, ServerState, account, grant, market, trading};
use crate::jsonrpc::ErrorObject;

type Run = fn(&mut Ctx<'_>) -> Result<Value, ErrorObject>;

struct Method {
    name: &'static str,
    private: bool,
    params: &'static [Spec],
    run: Run,
}

const fn method(name: &'static str, private: bool, params: &'static [Spec], run: Run) -> Method {
    Method {
        name,
        private,
        params,
        run,
    }
}

const S: Kind = Kind::Str;
const I: Kind = Kind::Int;

/// The methods of SPEC.md section 4 reachable over JSON-RPC.
const METHODS: &[Method] = &[
    method(
        "public/auth",
        false,
        &[
            spec("grant_type", S),
            spec("client_id", S),
            spec("client_secret", S),
            spec("refresh_token", S),
            spec("timestamp", I),
            spec("signature", S),
            spec("nonce", S),
            spec("data", S),
            spec("scope", S),
            // Section 4.1 says the result copies an input `state`; it is accepted and,
            // since the result field's name is not shown, not echoed.
            spec("state", S),
        ],
        grant::auth,
    ),
    method(
        "public/exchange_token",
        false,
        &[
            spec("refresh_token", S),
            spec("subject_id", I),
            spec("scope", S),
        ],
        grant::exchange_token,
    ),
    method(
        "public/fork_token",
        false,
        &[spec("refresh_token", S), spec("session_name", S)],
        grant::fork_token,
    ),
    method("private/logout", true, &[], grant::logout),
    method(
        "private/toggle_subaccount_login",
        true,
        &[spec("sid", I), spec("state", S)],
        account::toggle_subaccount_login,
    ),
    method(
        "private/get_mmp_status",
        true,
        &[
            spec("index_name", S),
            spec("mmp_group", S),
            spec("block_rfq", Kind::Bool),
        ],
        trading::get_mmp_status,
    ),
    method(
        "private/get_trigger_order_history",
        true,
        &[
            spec("currency", S),
            spec("instrument_name", S),
            spec("count", I),
            spec("continuation", S),
        ],
        trading::get_trigger_order_history,
    ),
    method(
        "private/get_transaction_log",
        true,
        &[
            spec("currency", S),
            spec("start_timestamp", I),
            spec("end_timestamp", I),
            spec("count", I),
            spec("subaccount_id", I),
            spec("continuation", I),
        ],
        account::get_transaction_log,
    ),
    method("public/get_currencies", false, &[], market::get_currencies),
    method(
        "public/get_historical_volatility",
        false,
        &[spec("currency", S)],
        market::get_historical_volatility,
    ),
    method(
        "private/delete_member",
        true,
        &[spec("member_id", I)],
        account::delete_member,
    ),
    method(
        "private/close_position",
        true,
        &[
            spec("instrument_name", S),
            spec("type", S),
            spec("price", Kind::Num),
        ],
        trading::close_position,
    ),
    method(
        "public/get_book_summary_by_instrument",
        false,
        &[spec("instrument_name", S)],
        market::get_book_summary_by_instrument,
    ),
];

/// The declared parameters of a method of the table; `None` for an unknown method.
pub(crate) fn declared_params(method_name: &str) -> Option<&'static [Spec]> {
    METHODS
        .iter()
        .find(|method| method.name == method_name)
        .map(|method| method.params)
}

/// The methods of the table, in order.
pub(crate) fn method_names() -> impl Iterator<Item = &'static str> {
    METHODS.iter().map(|method| method.name)
}

/// Runs one request and returns its result or error.
pub(crate) fn call(
    state: &ServerState,
    transport: Transport<'_>,
    method_name: &str,
    mut raw: Map<String, Value>,
    origin: Origin,
) -> Result<Value, ErrorObject> {
    let Some(method) = METHODS.iter().find(|method| method.name == method_name) else {
        return Err(ErrorObject::method_not_found());
    };
    // Logout is refused over HTTP before anything else: which credentials came with it
    // does not matter (SPEC.md 4.4).
    if method.name == "private/logout"
        && matches!(transport, Transport::Http(_))
        && !state.fault(Fault::LogoutOverHttp)
    {
        return Err(ErrorObject::bad_request("private/logout is websocket only"));
    }
    let needs_caller =
        method.private || (state.fault(Fault::PublicRequiresToken) && method.name != "public/auth");
    // On WebSocket the token travels among the parameters and is taken out before they are
    // checked; over HTTP it has no place there, so `access_token` is an unknown parameter.
    let presented = match &transport {
        Transport::Ws(_) => match raw.remove("access_token") {
            None | Some(Value::Null) => None,
            Some(Value::String(token)) => Some(token),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "access_token",
                    "must be of type string",
                ));
            }
        },
        Transport::Http(_) => None,
    };
    // Parameters are checked before credentials, so a token misplaced in the query string
    // is named as such instead of being reported as missing.
    let params = Params::check(raw, method.params, origin)?;
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
    if method.name == "private/get_transaction_log"
        && let Some(principal) = &principal
    {
        let admitted = super::state::lock(&state.rate).admit(&principal.rate_key, state.now_ms());
        if !admitted {
            return Err(ErrorObject::too_many_requests());
        }
    }
    let mut ctx = Ctx {
        state,
        params,
        principal,
        connection,
    };
    (method.run)(&mut ctx)
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
/// methods; a bad presented token fails only a request that needs a caller.
fn ws_principal(
    state: &ServerState,
    connection: &mut Connection,
    presented: Option<String>,
    needs_caller: bool,
) -> Result<Option<Principal>, ErrorObject> {
    let presented = presented.filter(|_| !state.fault(Fault::WsAccessTokenIgnored));
    if let Some(token) = presented {
        let resolved = state.principal_from_token(&token);
        if let Ok(principal) = &resolved
            && principal.scope.session.is_some()
            && !state.fault(Fault::WsSessionForgotten)
        {
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
    if let Some(token) = connection.session_token.clone() {
        return match state.principal_from_token(&token) {
            Ok(principal) => Ok(Some(principal)),
            Err(error) => {
                // The session ended (logout, expiry, disabled login): forget it.
                connection.session_token = None;
                Err(error)
            }
        };
    }
    anonymous(state)
}
