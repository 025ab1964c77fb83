//! What a step expects to be pushed after its answer: `expect.notifications`. SPEC.md 6
//! says only that "after subscribing, the server pushes notifications to the client without
//! a request"; it shows no channel, so how soon a channel publishes is the target's. A
//! step that subscribes over WebSocket may ask for `at_least` notifications (messages with
//! a `method` and no `id`) on its connection within `within_ms` of its answer. A quiet
//! channel is no finding: with a `witness`, a connection of the execution that subscribed
//! to the same channel before, silence fails only where the witness was pushed something in
//! the same time, so the channel was shown busy; otherwise silence skips with the reason.

use serde::{Deserialize, Serialize};

/// The longest wait a step may ask for: a few seconds show a busy channel.
const MAX_WITHIN_MS: u64 = 30_000;

/// `expect.notifications = { at_least = 1, within_ms = 3000, witness = "witness" }`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedNotifications {
    /// How many notifications the step's connection must have been pushed.
    pub at_least: usize,
    /// How long after the step's answer they may take, in ms.
    pub within_ms: u64,
    /// The named connection (`connection = "..."` of an earlier step) that subscribed to
    /// the same channel first: what it is pushed in the same time shows the channel busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
}

impl ExpectedNotifications {
    /// Why the expectation cannot be judged as written; `None` when it can.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.at_least == 0 {
            return Some("notifications.at_least must be 1 or more".to_owned());
        }
        if !(1..=MAX_WITHIN_MS).contains(&self.within_ms) {
            return Some(format!(
                "notifications.within_ms must be 1 to {MAX_WITHIN_MS}"
            ));
        }
        if self
            .witness
            .as_deref()
            .is_some_and(|name| name.trim().is_empty())
        {
            return Some("notifications.witness must name a connection".to_owned());
        }
        None
    }
}
