//! Updates a race fault puts off: the answer goes out at once and the update it should have
//! made lands [`RACE_DEFER_MS`](super::fault::RACE_DEFER_MS) later, as a store written
//! behind the answer would. Each one is applied by the first request that arrives after it
//! is due (every request settles what is due before anything else), so no thread or timer
//! is needed and a request cannot see an update before it was due.
//!
//! Only the `race-disable`, `race-logout`, `race-close` and `race-bucket` faults put
//! updates off; the
//! correct server applies every update before it answers.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::ServerState;

/// One update put off.
type Update = Box<dyn FnOnce(&ServerState) + Send>;

/// The updates put off, with when each is due.
#[derive(Default)]
pub(crate) struct Deferred(Mutex<Vec<(Instant, Update)>>);

impl std::fmt::Debug for Deferred {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pending = self.0.lock().map_or(0, |updates| updates.len());
        write!(formatter, "Deferred({pending} pending)")
    }
}

impl Deferred {
    /// Puts `update` off by [`RACE_DEFER_MS`](super::fault::RACE_DEFER_MS).
    pub(crate) fn later(&self, update: impl FnOnce(&ServerState) + Send + 'static) {
        let due = Instant::now() + Duration::from_millis(super::fault::RACE_DEFER_MS);
        if let Ok(mut updates) = self.0.lock() {
            updates.push((due, Box::new(update)));
        }
    }

    /// Applies every update that is due, outside the lock.
    pub(crate) fn settle(&self, state: &ServerState) {
        let now = Instant::now();
        let due: Vec<Update> = match self.0.lock() {
            Ok(mut updates) if !updates.is_empty() => {
                let (due, pending): (Vec<_>, Vec<_>) =
                    updates.drain(..).partition(|(at, _)| *at <= now);
                *updates = pending;
                due.into_iter().map(|(_, update)| update).collect()
            }
            _ => Vec::new(),
        };
        for update in due {
            update(state);
        }
    }
}
