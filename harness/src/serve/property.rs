//! The fuzz property of the reference server's transport-free core,
//! [`ServerState::dispatch_message`], shared by the cargo-fuzz target `dispatch_envelope`
//! and the proptest test below.
//!
//! The server is built once and shared between calls, with a clock that stands still and a
//! rate limit that never runs dry, so an input behaves the same whenever it runs; the
//! session tokens it hands the fuzzer come from a fixed pool, so the server's token and
//! rate-limit tables do not grow with the number of executions.

use std::sync::{LazyLock, Mutex};

use serde_json::Value;

use super::state::{MAIN_ID, lock};
use super::{Config, Connection, ServerState, fixtures};
use crate::auth::clock::Clock;
use crate::jsonrpc;

/// Session tokens the property rotates through.
const FUZZ_TOKENS: usize = 8;

/// Messages sent on one connection at most.
const MAX_MESSAGES: usize = 8;

/// Fuzz and proptest property `dispatch_envelope`: whatever bytes arrive, every message gets
/// a response envelope that [`jsonrpc::validate_response`] accepts, echoing the request's id
/// whenever it had one, and nothing panics.
///
/// The first byte chooses the connection: bit 0 set starts it authenticated with a session
/// token of the main account (so private methods are reached), the other bits pick the
/// token. The rest is split at LF into up to eight messages sent on that one connection.
pub fn dispatch_envelope(bytes: &[u8]) -> Result<(), String> {
    static SERVER: LazyLock<(ServerState, Mutex<Vec<String>>)> = LazyLock::new(|| {
        let mut config = Config::loopback();
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
        if let Some(violation) = jsonrpc::validate_response(&answer, expected).first() {
            return Err(format!(
                "answer {answer} is not a valid envelope: {violation}"
            ));
        }
        if let Some(sent) = sent_id
            && answer.get("id") != Some(&sent)
        {
            return Err(format!("request id {sent} was answered with {answer}"));
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Requests for every method of the table, with parameters drawn from the values the
    /// methods take and a few they refuse.
    fn message() -> impl Strategy<Value = String> {
        let method = prop::sample::select(super::super::call::method_names().collect::<Vec<_>>());
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
}
