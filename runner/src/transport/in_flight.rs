//! The answer bytes being read at once, bounded for the whole process rather than by what
//! targets send: an HTTP call reserves room for its body before reading it (the length it
//! announces, within the cap, or the whole cap when it announces none: a chunked or
//! close-delimited body), and gives it back once the body is read, refused or abandoned.
//!
//! Without it, every request in flight may hold a body of the cap's size: at a fuzz run's
//! default 32 in flight and the default 8 MiB cap, endless bodies alone would take 256 MiB.
//! With it, at most [`IN_FLIGHT_BYTES`] of bodies are read at once; a call that finds no
//! room waits for it within its own timeout (a target that keeps the room taken leaves its
//! other calls unanswered, never judged). Answers that announce their small length, as
//! nearly every answer does, take a few units each and never wait.

use std::time::Instant;

use tokio::sync::{Semaphore, SemaphorePermit};

/// The most answer bytes read at once by the process: eight bodies of the default cap.
pub(crate) const IN_FLIGHT_BYTES: usize = 64 << 20;

/// The bytes one unit of the budget stands for.
const UNIT: usize = 1024;

static ROOM: Semaphore = Semaphore::const_new(IN_FLIGHT_BYTES / UNIT);

/// Room for a body of up to `bytes` (the whole budget at most), waited for until
/// `deadline`; `None` when the deadline came first. The room is given back when the permit
/// drops.
pub(crate) async fn reserve(bytes: usize, deadline: Instant) -> Option<SemaphorePermit<'static>> {
    let units = bytes.div_ceil(UNIT).clamp(1, IN_FLIGHT_BYTES / UNIT);
    let units = u32::try_from(units).unwrap_or(u32::MAX);
    match tokio::time::timeout_at(deadline.into(), ROOM.acquire_many(units)).await {
        Ok(Ok(permit)) => Some(permit),
        // The semaphore is never closed; a deadline passed is the only other way out.
        Ok(Err(_)) | Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn room_is_given_back_and_a_full_budget_waits_until_the_deadline() {
        let soon = || Instant::now() + Duration::from_millis(50);
        let whole = reserve(usize::MAX, soon()).await.expect("the whole budget");
        assert!(reserve(1, soon()).await.is_none(), "no room left");
        drop(whole);
        let small = reserve(2_000, soon()).await.expect("room again");
        assert_eq!(small.num_permits(), 2);
    }
}
