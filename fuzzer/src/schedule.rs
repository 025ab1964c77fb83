//! Which generated request a fuzz worker sends next: the pace of a rate-limited method is a
//! budget the schedule plans around, never a wait that holds a worker.
//!
//! A request to a paced method (`spec::is_paced`) goes out only when its budget has room
//! (the sender's pacer, asked without waiting); when it has none, the request is deferred
//! and the worker takes the next ready one. Deferred requests go first as soon as their
//! budget has room again, so the paced method is exercised at the rate the target allows
//! and no faster. Once every other request is sent, the workers wait for the budget for the
//! deferred ones, but only for `paced_wait`: the paced requests still deferred then are
//! left unsent and counted, so a run of thousands of requests is not stretched to the one
//! method's rate.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::FuzzRequest;
use super::send::{Budget, Sender};

/// The longest a worker sleeps before it asks the budget again.
const POLL: Duration = Duration::from_millis(100);

/// What a worker does next.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Send the request at this index, with its budget taken or not needed.
    Send(usize, Budget),
    /// Only deferred paced requests are left and their budgets are empty: ask again after
    /// this long.
    Wait(Duration),
    /// Nothing is left to send (or the paced requests left wait past `paced_wait`).
    Done,
}

/// The requests of one run and what was handed out of them.
pub(crate) struct Schedule {
    requests: Arc<Vec<(usize, FuzzRequest)>>,
    next: AtomicUsize,
    /// Deferred paced requests by budget, oldest first.
    deferred: Mutex<BTreeMap<Vec<String>, VecDeque<usize>>>,
    /// When the last request that was not deferred was handed out.
    rest_sent: Mutex<Option<Instant>>,
    paced_wait: Duration,
    /// The end of the run's planned duration: until then deferred paced requests wait for
    /// their budget whatever `paced_wait` says.
    until: Option<Instant>,
}

impl Schedule {
    pub(crate) fn new(
        requests: Arc<Vec<(usize, FuzzRequest)>>,
        paced_wait: Duration,
        until: Option<Instant>,
    ) -> Self {
        Schedule {
            requests,
            next: AtomicUsize::new(0),
            deferred: Mutex::new(BTreeMap::new()),
            rest_sent: Mutex::new(None),
            paced_wait,
            until,
        }
    }

    /// The next request to send: a deferred paced one whose budget has room, else the
    /// next generated one (deferred instead when it is paced and its budget is empty).
    pub(crate) fn next(&self, sender: &Sender) -> Next {
        let mut deferred = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, queue) in deferred.iter_mut() {
            if !queue.is_empty()
                && sender.try_pace(key).is_zero()
                && let Some(index) = queue.pop_front()
            {
                return Next::Send(index, Budget::Taken);
            }
        }
        loop {
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            let Some((_, request)) = self.requests.get(index) else {
                break;
            };
            match sender.budget_key(request) {
                None => return Next::Send(index, Budget::Wait),
                Some(key) if sender.try_pace(&key).is_zero() => {
                    return Next::Send(index, Budget::Taken);
                }
                Some(key) => deferred.entry(key).or_default().push_back(index),
            }
        }
        let now = Instant::now();
        let rest_sent = *self
            .rest_sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(now);
        let waiting = deferred.values().any(|queue| !queue.is_empty());
        let planned = self.until.is_some_and(|until| now < until);
        if !waiting || (now >= rest_sent + self.paced_wait && !planned) {
            return Next::Done;
        }
        let mut soonest = POLL;
        for (key, queue) in deferred.iter_mut().filter(|(_, queue)| !queue.is_empty()) {
            let wait = sender.try_pace(key);
            if wait.is_zero()
                && let Some(index) = queue.pop_front()
            {
                return Next::Send(index, Budget::Taken);
            }
            soonest = soonest.min(wait);
        }
        Next::Wait(soonest)
    }

    /// The paced requests deferred and never sent (past `paced_wait`, or cut by a stop).
    pub(crate) fn left_unsent(&self) -> Vec<usize> {
        let deferred = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
        let mut left: Vec<usize> = deferred.values().flatten().copied().collect();
        left.sort_unstable();
        left
    }
}
