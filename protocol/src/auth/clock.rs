//! The only reader of the system clock. Everything that needs "now" takes a [`Clock`],
//! so tests can pin time and move it forward without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of milliseconds since the UNIX epoch.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    manual: Option<Arc<AtomicU64>>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock { manual: None }
    }

    /// A clock that stands still at `now_ms` until [`Clock::advance`] moves it.
    pub fn manual(now_ms: u64) -> Clock {
        Clock {
            manual: Some(Arc::new(AtomicU64::new(now_ms))),
        }
    }

    /// Milliseconds since the UNIX epoch.
    pub fn now_ms(&self) -> u64 {
        match &self.manual {
            Some(now) => now.load(Ordering::Relaxed),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| {
                    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
                }),
        }
    }

    /// Moves a manual clock forward; a system clock ignores it.
    pub fn advance(&self, by_ms: u64) {
        if let Some(now) = &self.manual {
            now.fetch_add(by_ms, Ordering::Relaxed);
        }
    }
}
