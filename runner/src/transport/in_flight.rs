//! The answer bytes being read at once, bounded for the whole process rather than by what
//! targets send, whatever carries them: an HTTP call reserves room for its body before
//! reading it (the length it announces, within the cap, or the whole cap when it announces
//! none: a chunked or close-delimited body), as does a race's copy read by hand
//! (`http1.rs`) once its head is in; a WebSocket message reserves its frame's length when
//! it comes in one frame, the whole cap when it comes in fragments (`ws/frames.rs`, through
//! [`PolledRoom`], since tungstenite reads in `poll_read`). Each gives the room back once
//! its body or message is read, refused or abandoned.
//!
//! Without it, every request in flight may hold an answer of the cap's size: a run's 16
//! executions each assembling an endless WebSocket message took 128 MiB, a race's 64 copies
//! reading endless bodies more. With it, at most [`IN_FLIGHT_BYTES`] of answers are read at
//! once; a call that finds no room waits for it within its own timeout (a target that keeps
//! the room taken leaves its other calls unanswered, never judged). Answers that announce
//! their small length, as nearly every answer does, take a few units each and never wait.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
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
    tokio::time::timeout_at(deadline.into(), wait_for(bytes))
        .await
        .ok()
        .flatten()
}

/// Room for a body of up to `bytes`, however long it takes: the caller's deadline bounds
/// the wait. `None` only if the budget were closed, which it never is.
pub(crate) async fn wait_for(bytes: usize) -> Option<SemaphorePermit<'static>> {
    acquire(&ROOM, bytes).await
}

/// Units of `room` for up to `bytes` (the whole budget at most).
async fn acquire(room: &'static Semaphore, bytes: usize) -> Option<SemaphorePermit<'static>> {
    let units = bytes.div_ceil(UNIT).clamp(1, IN_FLIGHT_BYTES / UNIT);
    let units = u32::try_from(units).unwrap_or(u32::MAX);
    room.acquire_many(units).await.ok()
}

/// The room a reader that cannot `await` holds or waits for, one answer at a time: a
/// WebSocket connection's bytes under tungstenite, read in `poll_read`. The reader says
/// which answer it is reading ([`PolledRoom::want`]) after each read, and polls
/// [`PolledRoom::poll_ready`] before the next, which stays pending while the room is taken.
/// Room for an answer is given back before waiting for the next one's, so a reader never
/// holds room while it waits.
pub(crate) struct PolledRoom {
    room: &'static Semaphore,
    /// The answer the room is held or awaited for (a message's number on its connection).
    answer: Option<u64>,
    waiting: Option<Pin<Box<dyn Future<Output = Option<SemaphorePermit<'static>>> + Send + Sync>>>,
    held: Option<SemaphorePermit<'static>>,
}

impl PolledRoom {
    /// Room taken from the process's budget of answer bytes in flight.
    pub(crate) fn in_process() -> PolledRoom {
        PolledRoom::taken_from(&ROOM)
    }

    /// Room taken from `room`.
    pub(crate) fn taken_from(room: &'static Semaphore) -> PolledRoom {
        PolledRoom {
            room,
            answer: None,
            waiting: None,
            held: None,
        }
    }

    /// The answer being read now, numbered, and the bytes it may take; `None` between
    /// answers, which gives the room back.
    pub(crate) fn want(&mut self, reading: Option<(u64, usize)>) {
        match reading {
            Some((answer, _)) if self.answer == Some(answer) => {}
            Some((answer, bytes)) => {
                self.held = None;
                self.answer = Some(answer);
                self.waiting = Some(Box::pin(acquire(self.room, bytes)));
            }
            None => {
                self.answer = None;
                self.waiting = None;
                self.held = None;
            }
        }
    }

    /// Ready once the room for the answer being read is held (at once when none is wanted).
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(waiting) = self.waiting.as_mut() {
            let Poll::Ready(permit) = waiting.as_mut().poll(cx) else {
                return Poll::Pending;
            };
            self.held = permit;
            self.waiting = None;
        }
        Poll::Ready(())
    }

    /// Units of the budget held now.
    #[cfg(test)]
    pub(crate) fn held_units(&self) -> usize {
        self.held.as_ref().map_or(0, SemaphorePermit::num_permits)
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

    /// Whether `room` is ready at once, polled once.
    async fn ready(room: &mut PolledRoom) -> bool {
        std::future::poll_fn(|cx| Poll::Ready(room.poll_ready(cx).is_ready())).await
    }

    #[tokio::test]
    async fn polled_room_waits_while_taken_and_gives_back_between_answers() {
        static TEST_ROOM: Semaphore = Semaphore::const_new(IN_FLIGHT_BYTES / UNIT);
        let mut first = PolledRoom::taken_from(&TEST_ROOM);
        let mut second = PolledRoom::taken_from(&TEST_ROOM);
        first.want(Some((1, usize::MAX)));
        assert!(ready(&mut first).await);
        assert_eq!(first.held_units(), IN_FLIGHT_BYTES / UNIT);
        // The same answer again keeps its room; another waits for room.
        first.want(Some((1, usize::MAX)));
        assert!(ready(&mut first).await);
        second.want(Some((1, 10 * UNIT)));
        assert!(
            !ready(&mut second).await,
            "no room while the first holds it all"
        );
        first.want(None);
        assert!(ready(&mut second).await);
        assert_eq!(second.held_units(), 10);
        // The next answer gives the room of the last back before waiting for its own.
        second.want(Some((2, IN_FLIGHT_BYTES)));
        assert!(ready(&mut second).await);
        assert_eq!(second.held_units(), IN_FLIGHT_BYTES / UNIT);
    }
}
