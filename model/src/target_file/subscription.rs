//! The subscriptions a target file names. SPEC.md 6 shows no channel names and no
//! subscription operations ("Events: not shown"), only that "after subscribing, the server
//! pushes notifications to the client without a request", and 5.1 only that authenticated
//! connections have "access to the raw event feed". So the target file names the request
//! that subscribes, a method and its parameters sent over WebSocket: `subscription`, to a
//! busy public channel (the fixture instrument's book, say), and `raw_feed_subscription`, to
//! a channel of the raw event feed. A step calls one as `{{fixtures.<key>.method}}` and gets
//! its parameters from the file.

use std::path::Path;

use serde::{Deserialize, Serialize};

use harness_protocol::file_error::FileError;

use super::{Fixtures, key_line};

/// A request that subscribes to a channel: the method and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionRequest {
    /// The method, e.g. `public/subscribe`.
    pub method: String,
    /// Its parameters (the channel names among them), sent as they are.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// The `[fixtures]` keys of subscription requests.
pub const SUBSCRIPTION_KEYS: [&str; 2] = ["subscription", "raw_feed_subscription"];

impl Fixtures {
    /// The subscription request of a `[fixtures]` key of [`SUBSCRIPTION_KEYS`].
    pub fn subscription_of(&self, key: &str) -> Option<&SubscriptionRequest> {
        match key {
            "subscription" => self.subscription.as_ref(),
            "raw_feed_subscription" => self.raw_feed_subscription.as_ref(),
            _ => None,
        }
    }

    /// The subscription request a step's call names, `{{fixtures.<key>.method}}` as the
    /// case file writes it, whose parameters go with the call.
    pub fn subscription_called_by(&self, call: &str) -> Option<&SubscriptionRequest> {
        let key = call
            .trim()
            .strip_prefix("{{")?
            .strip_suffix("}}")?
            .trim()
            .strip_prefix("fixtures.")?
            .strip_suffix(".method")?;
        self.subscription_of(key)
    }
}

/// Checks a subscription request of the file: its method names something.
pub(super) fn check(
    path: &Path,
    text: &str,
    key: &str,
    request: Option<&SubscriptionRequest>,
) -> Result<(), FileError> {
    match request {
        Some(request) if request.method.trim().is_empty() => Err(FileError::new(
            path,
            key_line(text, key),
            format!("fixtures.{key}.method must name the method that subscribes"),
        )),
        _ => Ok(()),
    }
}

/// The request as the file's inline table, `key = { method = ..., params = { ... } }`.
pub(super) fn inline(key: &str, request: &SubscriptionRequest) -> String {
    let params = toml::Value::try_from(&request.params)
        .map(|params| params.to_string())
        .unwrap_or_else(|_| "{}".to_owned());
    let method = toml::Value::String(request.method.clone());
    format!("{key} = {{ method = {method}, params = {params} }}\n")
}
