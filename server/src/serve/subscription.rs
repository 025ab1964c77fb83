//! The subscriptions the reference serves for the target file's `subscription` and
//! `raw_feed_subscription` fixtures. SPEC.md shows no subscription operation and no channel
//! ("Events: not shown"), only that "after subscribing, the server pushes notifications to
//! the client without a request" (6) and that authenticated connections have "access to the
//! raw event feed" (5.1). So the reference takes `public/subscribe` and `private/subscribe`
//! over WebSocket, with `channels` a list of its two channel names: the default
//! instrument's book, every 100 ms, open to any connection, and its raw trade feed, open
//! only to an authenticated one (a valid `access_token` in the request, or the session
//! token the connection remembers). The answer is the list of channels subscribed; each
//! accepted channel is then pushed a notification (`method` "subscription", no `id`) every
//! [`PUSH_INTERVAL`] while the connection lasts (`ws.rs` sends them).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value, json};

use super::fault::Fault;
use super::fixtures::DEFAULT_INSTRUMENT;
use super::{Connection, ServerState};
use harness_model::target_file::SubscriptionRequest;
use harness_protocol::jsonrpc::ErrorObject;

/// The method that subscribes to public channels.
const PUBLIC_METHOD: &str = "public/subscribe";
/// The method the reference's target file names for the raw event feed (either method
/// takes either channel; the feed's needs an authenticated connection whichever).
const PRIVATE_METHOD: &str = "private/subscribe";
/// The method of every notification pushed.
const NOTIFICATION_METHOD: &str = "subscription";
/// How often a subscribed channel is pushed a notification.
pub(crate) const PUSH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// The default instrument's book, pushed to any connection.
fn book_channel() -> String {
    format!("book.{DEFAULT_INSTRUMENT}.100ms")
}

/// The default instrument's raw trade feed, for authenticated connections only.
fn raw_channel() -> String {
    format!("trades.{DEFAULT_INSTRUMENT}.raw")
}

/// The request of the target file's `subscription`: the busy public book.
pub(crate) fn public_fixture() -> SubscriptionRequest {
    request(PUBLIC_METHOD, book_channel())
}

/// The request of the target file's `raw_feed_subscription`: the raw trade feed.
pub(crate) fn raw_feed_fixture() -> SubscriptionRequest {
    request(PRIVATE_METHOD, raw_channel())
}

fn request(method: &str, channel: String) -> SubscriptionRequest {
    let mut params = Map::new();
    params.insert("channels".to_owned(), json!([channel]));
    SubscriptionRequest {
        method: method.to_owned(),
        params,
    }
}

/// How many connections are pushed each channel now (only the
/// `subscription-silent-to-second` fault reads it).
#[derive(Debug, Default)]
pub(crate) struct Subscribers {
    by_channel: Mutex<HashMap<String, usize>>,
}

impl Subscribers {
    /// The counts, whatever a panicking holder left.
    fn counts(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.by_channel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more connection pushed `channel`; returns how many were before.
    fn hold(&self, channel: &str) -> usize {
        let mut by_channel = self.counts();
        let count = by_channel.entry(channel.to_owned()).or_default();
        *count += 1;
        *count - 1
    }

    /// Counts one connection fewer pushed `channel` (its pushing ended).
    pub(crate) fn release(&self, channel: &str) {
        let mut by_channel = self.counts();
        if let Some(count) = by_channel.get_mut(channel) {
            *count = count.saturating_sub(1);
        }
    }
}

/// The notification pushed on `channel`, the `sequence`th of its subscription.
pub(crate) fn notification_text(channel: &str, sequence: u64, now_ms: u64) -> String {
    let notification = json!({
        "jsonrpc": "2.0",
        "method": NOTIFICATION_METHOD,
        "params": {"channel": channel, "data": {"sequence": sequence, "timestamp": now_ms}},
    });
    harness_protocol::jsonrpc::to_text(&notification)
}

impl ServerState {
    /// A subscription request's answer, or `None` when `method` is no subscription method.
    /// The channels accepted to push go into `connection.to_push`, for `ws.rs` to start.
    pub(crate) fn subscribe(
        &self,
        connection: &mut Connection,
        method: &str,
        params: &Map<String, Value>,
    ) -> Option<Result<Value, ErrorObject>> {
        if method != PUBLIC_METHOD && method != PRIVATE_METHOD {
            return None;
        }
        Some(self.subscribe_channels(connection, params))
    }

    fn subscribe_channels(
        &self,
        connection: &mut Connection,
        params: &Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let channels: Vec<&str> = match params.get("channels") {
            Some(Value::Array(channels)) if !channels.is_empty() => channels
                .iter()
                .map(Value::as_str)
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    ErrorObject::invalid_params("channels", "must be a list of channel names")
                })?,
            _ => {
                return Err(ErrorObject::invalid_params(
                    "channels",
                    "must be a non-empty list of channel names",
                ));
            }
        };
        let (book, raw) = (book_channel(), raw_channel());
        if let Some(unknown) = channels
            .iter()
            .find(|channel| **channel != book && **channel != raw)
        {
            return Err(ErrorObject::invalid_params(
                "channels",
                &format!("no channel {unknown}"),
            ));
        }
        if channels.contains(&raw.as_str()) {
            self.admit_to_raw_feed(connection, params)?;
        }
        for channel in &channels {
            if connection.pushing.iter().any(|pushed| pushed == channel) {
                continue;
            }
            let before = self.subscribers.hold(channel);
            // The fault: a channel another connection is pushed stays silent on this one.
            if before > 0 && self.fault(Fault::SubscriptionSilentToSecond) {
                self.subscribers.release(channel);
                continue;
            }
            connection.pushing.push((*channel).to_owned());
            connection.to_push.push((*channel).to_owned());
        }
        Ok(json!(channels))
    }

    /// Whether the connection is authenticated, as the raw event feed requires: a valid
    /// `access_token` in the request, or the session token the connection remembers.
    fn admit_to_raw_feed(
        &self,
        connection: &Connection,
        params: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        let presented = params.get("access_token").and_then(Value::as_str);
        let authenticated = presented
            .or(connection.session_token.as_deref())
            .is_some_and(|token| self.principal_from_token(token).is_ok());
        if !authenticated {
            return Err(ErrorObject::unauthorized(
                "the raw event feed needs an authenticated connection",
            ));
        }
        if self.fault(Fault::RawFeedRefused) {
            return Err(ErrorObject::unauthorized(
                "the raw event feed is not available",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::ServeConfig;

    fn params_of(request: &SubscriptionRequest) -> Map<String, Value> {
        request.params.clone()
    }

    #[test]
    fn the_book_is_pushed_once_per_connection_and_the_raw_feed_needs_a_token() {
        let state = ServerState::new(&ServeConfig::loopback());
        let mut connection = Connection::default();
        let book = public_fixture();
        let answer = state.subscribe(&mut connection, &book.method, &params_of(&book));
        assert_eq!(answer, Some(Ok(json!([book_channel()]))));
        assert_eq!(connection.to_push, vec![book_channel()]);
        connection.to_push.clear();
        // Subscribed again: answered, but not pushed twice.
        let again = state.subscribe(&mut connection, &book.method, &params_of(&book));
        assert!(matches!(again, Some(Ok(_))));
        assert!(connection.to_push.is_empty());
        let raw = raw_feed_fixture();
        let refused = state.subscribe(&mut connection, &raw.method, &params_of(&raw));
        assert!(matches!(refused, Some(Err(_))), "{refused:?}");
        let mut unknown = params_of(&book);
        unknown.insert("channels".to_owned(), json!(["book.NOPE.100ms"]));
        assert!(matches!(
            state.subscribe(&mut connection, &book.method, &unknown),
            Some(Err(_))
        ));
        assert!(matches!(
            state.subscribe(&mut connection, &book.method, &Map::new()),
            Some(Err(_))
        ));
        assert_eq!(
            state.subscribe(&mut connection, "public/no_such_method", &Map::new()),
            None
        );
    }

    #[test]
    fn a_notification_has_a_method_and_no_id() {
        let text = notification_text(&book_channel(), 3, 7);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["method"], NOTIFICATION_METHOD);
        assert!(value.get("id").is_none());
        assert_eq!(value["params"]["channel"], book_channel());
    }
}
