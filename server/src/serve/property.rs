//! The fuzz properties of the reference server, each shared by its cargo-fuzz target and a
//! proptest test below: `dispatch_envelope` of its transport-free core,
//! [`ServerState::dispatch_message`], and `query_params_coerce` of its coercion of HTTP
//! query strings to the declared parameter types ([`params_from_query`]).
//!
//! The server is built once and shared between calls, with a clock that stands still and a
//! rate limit that never runs dry, so an input behaves the same whenever it runs; the
//! session tokens it hands the fuzzer come from a fixed pool, so the server's token and
//! rate-limit tables do not grow with the number of executions.

use std::sync::{LazyLock, Mutex};

use serde_json::{Map, Value};

use super::call::{declared_params, method_names};
use super::http::query_params;
use super::params::{Leniency, Origin, Params, typed_json};
use super::state::{MAIN_ID, lock};
use super::{Connection, ServeConfig, ServerState, fixtures};
use harness_protocol::auth::clock::Clock;
use harness_protocol::jsonrpc::{self, ErrorObject};
use harness_protocol::spec::Kind;

/// Session tokens the property rotates through.
const FUZZ_TOKENS: usize = 8;

/// Messages sent on one connection at most.
const MAX_MESSAGES: usize = 8;

/// The rule of a server property ([`dispatch_envelope`], [`query_params_coerce`]) that
/// does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ServePropertyError {
    /// A message's answer is not a valid response envelope.
    #[error("answer {answer} is not a valid envelope: {violation}")]
    InvalidAnswer {
        /// The answer.
        answer: Box<Value>,
        /// Its first violation.
        violation: Box<jsonrpc::EnvelopeViolation>,
    },
    /// A message's usable id was not echoed.
    #[error("request id {sent} was answered with {answer}")]
    IdNotEchoed {
        /// The id the message carried.
        sent: Box<Value>,
        /// The answer.
        answer: Box<Value>,
    },
    /// A raw query string gave a value of another type than its parameter's.
    #[error("{method}?{raw} gave {name} = {value}")]
    UndeclaredType {
        /// The method.
        method: String,
        /// The query string.
        raw: String,
        /// The parameter's name.
        name: String,
        /// Its value.
        value: Box<Value>,
    },
    /// Values of the declared types, encoded as a query string, came back changed.
    #[error("{method}?{query} gave {got:?}, sent {sent:?}")]
    NotRoundtrip {
        /// The method.
        method: String,
        /// The query string.
        query: String,
        /// What the coercion gave.
        got: Box<Result<Map<String, Value>, ErrorObject>>,
        /// The values encoded.
        sent: Box<Map<String, Value>>,
    },
}

/// Fuzz and proptest property `dispatch_envelope`: whatever bytes arrive, every message gets
/// a response envelope that [`jsonrpc::validate_response`] accepts, echoing the request's id
/// whenever it had one, and nothing panics.
///
/// The first byte chooses the connection: bit 0 set starts it authenticated with a session
/// token of the main account (so private methods are reached), the other bits pick the
/// token. The rest is split at LF into up to eight messages sent on that one connection.
pub fn dispatch_envelope(bytes: &[u8]) -> Result<(), ServePropertyError> {
    static SERVER: LazyLock<(ServerState, Mutex<Vec<String>>)> = LazyLock::new(|| {
        let mut config = ServeConfig::loopback();
        config.clock = Clock::manual(fixtures::FIXTURE_EPOCH_MS + 200 * 86_400_000);
        config.limits.transaction_log_burst = u32::MAX;
        (ServerState::new(&config), Mutex::new(Vec::new()))
    });
    let (state, pool) = &*SERVER;
    let Some((&flags, rest)) = bytes.split_first() else {
        return Ok(());
    };
    let mut connection = Connection::default();
    if flags & 1 == 1 {
        connection.session_token = fuzz_token(state, pool, usize::from(flags >> 1));
    }
    for message in rest.split(|byte| *byte == b'\n').take(MAX_MESSAGES) {
        let answer = state.dispatch_message(&mut connection, message);
        // An oversized message is refused unread, so its id is rightly not echoed.
        let sent_id = serde_json::from_slice::<Value>(message)
            .ok()
            .and_then(|request| request.get("id").cloned())
            .filter(|id| id.is_number() || id.is_string())
            .filter(|_| message.len() <= state.max_body_bytes);
        let expected = sent_id.as_ref().and_then(Value::as_u64);
        let violations = jsonrpc::validate_response(&answer, expected);
        if let Some(violation) = violations.into_iter().next() {
            return Err(ServePropertyError::InvalidAnswer {
                answer: Box::new(answer),
                violation: Box::new(violation),
            });
        }
        if let Some(sent) = sent_id
            && answer.get("id") != Some(&sent)
        {
            return Err(ServePropertyError::IdNotEchoed {
                sent: Box::new(sent),
                answer: Box::new(answer),
            });
        }
    }
    Ok(())
}

/// A session-scoped access token of the main account, issued anew when the pooled one was
/// revoked (a fuzzed `private/logout` does that).
fn fuzz_token(state: &ServerState, pool: &Mutex<Vec<String>>, slot: usize) -> Option<String> {
    let mut pool = lock(pool);
    let slot = slot % FUZZ_TOKENS;
    if let Some(token) = pool.get(slot)
        && state.principal_from_token(token).is_ok()
    {
        return Some(token.clone());
    }
    let main = state.user(MAIN_ID)?;
    let mut scope = main.maximum.clone();
    scope.session = Some(format!("fuzz{slot}"));
    let issued = lock(&state.tokens).issue(MAIN_ID, scope, state.now_ms())?;
    pool.resize(FUZZ_TOKENS, String::new());
    pool[slot] = issued.access_token.clone();
    Some(issued.access_token)
}

/// The parameters the reference server makes of an HTTP query string for `method`: each
/// name once, each value coerced to its declared type, unknown names refused. This is the
/// server's own coercion, exposed for fuzzing and for clients that want to predict it.
pub(crate) fn params_from_query(
    method: &str,
    query: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    let specs = declared_params(method).ok_or_else(ErrorObject::method_not_found)?;
    let raw = query_params(query)?;
    Params::check(raw, specs, Origin::Query, Leniency::default()).map(Params::into_values)
}

/// A parameter value as a client holds it before it becomes a query string.
#[derive(Clone, Debug)]
#[cfg_attr(any(test, feature = "arbitrary"), derive(arbitrary::Arbitrary))]
pub enum QueryValue {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
}

/// Input of [`query_params_coerce`].
#[derive(Clone, Debug)]
#[cfg_attr(any(test, feature = "arbitrary"), derive(arbitrary::Arbitrary))]
pub struct QueryInput {
    /// Picks a method of the table (modulo their number).
    pub method: u8,
    /// Values by parameter position (modulo the method's parameter count).
    pub(crate) values: Vec<(u8, QueryValue)>,
    /// A raw query string, sent as is.
    pub raw: String,
}

/// Fuzz and proptest property `query_params_coerce`: a raw query string never panics the
/// server's coercion, and every value it accepts has its parameter's declared type; and
/// values of the declared types, encoded as the harness's HTTP client encodes them, come
/// back from the coercion unchanged.
pub fn query_params_coerce(input: &QueryInput) -> Result<(), ServePropertyError> {
    let names: Vec<&str> = method_names().collect();
    let method = names[usize::from(input.method) % names.len()];
    let specs = declared_params(method).unwrap_or_default();
    if let Ok(params) = params_from_query(method, &input.raw) {
        for (name, value) in &params {
            let spec = specs.iter().find(|spec| spec.name == name);
            let fits = spec.is_some_and(|spec| typed_json(value.clone(), spec.kind).is_some());
            if !fits {
                return Err(ServePropertyError::UndeclaredType {
                    method: method.to_owned(),
                    raw: input.raw.clone(),
                    name: name.clone(),
                    value: Box::new(value.clone()),
                });
            }
        }
    }
    if specs.is_empty() {
        return Ok(());
    }
    let mut expected = Map::new();
    for (position, value) in &input.values {
        let spec = specs[usize::from(*position) % specs.len()];
        let typed = match (spec.kind, value) {
            (Kind::Str, QueryValue::Str(text)) => Value::from(text.as_str()),
            (Kind::Int, QueryValue::Int(number)) => Value::from(*number),
            (Kind::Num, QueryValue::Num(number)) if number.is_finite() => Value::from(*number),
            (Kind::Bool, QueryValue::Bool(flag)) => Value::from(*flag),
            _ => continue,
        };
        expected.insert(spec.name.to_owned(), typed);
    }
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in &expected {
        if let Some(text) = harness_protocol::wire::query_value(value) {
            query.append_pair(name, &text);
        }
    }
    let query = query.finish();
    match params_from_query(method, &query) {
        Ok(params) if params == expected => Ok(()),
        got => Err(ServePropertyError::NotRoundtrip {
            method: method.to_owned(),
            query,
            got: Box::new(got),
            sent: Box::new(expected),
        }),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Requests for every method of the table, with parameters drawn from the values the
    /// methods take and a few they refuse.
    fn message() -> impl Strategy<Value = String> {
        let method = prop::sample::select(method_names().collect::<Vec<_>>());
        let value = prop_oneof![
            Just("null"),
            Just("0"),
            Just("-1"),
            Just("251"),
            Just("1.5"),
            Just("\"BTC\""),
            Just("\"btc_usd\""),
            Just("\"\""),
            Just("true"),
            Just("{}"),
        ];
        let name = prop_oneof![
            Just("currency"),
            Just("count"),
            Just("index_name"),
            Just("mmp_group"),
            Just("continuation"),
            Just("grant_type"),
            Just("access_token"),
            Just("member_id"),
            Just("sid"),
            Just("type"),
        ];
        let params = prop::collection::vec((name, value), 0..4).prop_map(|pairs| {
            let members: Vec<String> = pairs
                .iter()
                .map(|(name, value)| format!("\"{name}\":{value}"))
                .collect();
            members.join(",")
        });
        (any::<u32>(), method, params).prop_map(|(id, method, params)| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#)
        })
    }

    #[test]
    fn authenticated_private_call_holds_the_property() {
        let bytes = b"\x01{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"private/get_mmp_status\"}";
        assert_eq!(dispatch_envelope(bytes), Ok(()));
    }

    proptest! {
        #[test]
        fn every_message_gets_a_valid_envelope(
            flags in any::<u8>(),
            messages in prop::collection::vec(message(), 1..4),
        ) {
            let mut bytes = vec![flags];
            bytes.extend_from_slice(messages.join("\n").as_bytes());
            prop_assert_eq!(dispatch_envelope(&bytes), Ok(()));
        }
    }

    fn query_value() -> impl Strategy<Value = QueryValue> {
        prop_oneof![
            "(.|\n|\\+|%|&|=){0,12}".prop_map(QueryValue::Str),
            any::<i64>().prop_map(QueryValue::Int),
            any::<f64>().prop_map(QueryValue::Num),
            any::<bool>().prop_map(QueryValue::Bool),
        ]
    }

    proptest! {
        #[test]
        fn query_strings_coerce_to_declared_types(
            method in any::<u8>(),
            values in prop::collection::vec((any::<u8>(), query_value()), 0..6),
            raw in "(([a-z_]{1,8}|count|currency)=(-?[0-9.e+]{0,5}|true|x|%[0-9A-F]{0,2})&?){0,4}",
        ) {
            prop_assert_eq!(query_params_coerce(&QueryInput { method, values, raw }), Ok(()));
        }
    }
}
