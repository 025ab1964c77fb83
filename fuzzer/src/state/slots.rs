//! The sessions a fuzz run opens on each account, counted across its sequences, and how
//! many of them a target keeps.
//!
//! SPEC.md 8 leaves "the number of session slots: not shown", and 5.3 says a session
//! "uses no extra session slot" when refreshed, so slots are finite and a server may end
//! an older session when a new one is opened (the independent Python server keeps 16 per
//! key and ends the least recently opened one). Sequences run side by side and each opens
//! sessions (session logins, forks, exchanges), so a sequence cannot know from its own
//! steps whether its session is still kept: the run counts every session opened per
//! account, and the model ([`super::model::Model`]) predicts either for a session token
//! once its account has opened as many newer sessions as the target may not keep beside
//! it. What SPEC.md guarantees is two: a fork's "both sessions can run concurrently under
//! one key" (4.3); a target file that says more (`[limits] session_slots`) keeps the
//! predictions strict for longer.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Who;

/// The sessions of one key SPEC.md guarantees a server keeps at once: a fork's "both
/// sessions can run concurrently under one key" (4.3).
pub const SLOTS_SPEC_GUARANTEES: u32 = 2;

/// The sessions opened so far in the run, per account (the target file's `main` and
/// `sub`; a subaccount's token the main account obtained by exchange counts as the
/// subaccount's, whichever key a server counts it under: more counted, never fewer).
#[derive(Debug, Default)]
pub struct SessionsOpened {
    opened: [AtomicU64; 2],
}

impl SessionsOpened {
    /// Counts a session `who` opened; returns the count with it.
    pub fn open(&self, who: Who) -> u64 {
        self.opened[slot(who)].fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The sessions `who` opened so far.
    pub fn now(&self) -> [u64; 2] {
        [Who::Main, Who::Sub].map(|who| self.opened[slot(who)].load(Ordering::Relaxed))
    }
}

/// The index of `who`'s count.
pub(crate) fn slot(who: Who) -> usize {
    match who {
        Who::Main => 0,
        Who::Sub => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_account_counts_its_own_sessions() {
        let opened = SessionsOpened::default();
        assert_eq!(opened.open(Who::Main), 1);
        assert_eq!(opened.open(Who::Main), 2);
        assert_eq!(opened.open(Who::Sub), 1);
        assert_eq!(opened.now(), [2, 1]);
    }
}
