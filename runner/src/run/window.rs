//! The window of a bounded walk: where its ends fall among the entries of one probed page.
//!
//! A walk over the whole history costs a paced request per page, so its cost grows with the
//! target's history. A bounded walk reads one page first (the density probe) and walks only
//! a window whose ends are timestamps of entries on that page, about `entries` entries
//! apart: its cost is a few pages whatever the history holds. Both ends fall exactly on an
//! entry's timestamp, and SPEC.md 4.8 calls `start_timestamp` the "earliest timestamp" and
//! `end_timestamp` the "latest timestamp": every probed entry stamped inside the window,
//! both ends included, must come back in the walk (a server that takes either end as
//! exclusive loses one). Where the page has entries to spare, the newest and the oldest of
//! its timestamps stay outside the window, so that a server ignoring the window shows it.

use harness_model::check::pages::TimeWindow;

/// The chosen window, both ends included, and the keys of the probed entries inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Window {
    pub(super) start: i64,
    pub(super) end: i64,
    /// The probed entries stamped within `start..=end`: the walk must return each of them.
    pub(super) known: Vec<(String, i64)>,
}

/// Picks a window holding about `entries` of the probed `(key, timestamp)` pairs (in any
/// order), its ends on their timestamps; `None` when the page holds none.
pub(super) fn choose(probed: &[(String, i64)], entries: usize) -> Option<Window> {
    let mut stamps: Vec<i64> = probed.iter().map(|(_, stamp)| *stamp).collect();
    stamps.sort_unstable_by(|a, b| b.cmp(a));
    stamps.dedup();
    let last = stamps.len().checked_sub(1)?;
    // The newest timestamp stays outside when at least two others remain for the window
    // and one to leave below it.
    let end_index = usize::from(last >= 2);
    let end = stamps[end_index];
    let wanted = entries.max(1);
    let mut start_index = end_index;
    let window = |start: i64| TimeWindow {
        start: Some(start),
        end: Some(end),
    };
    let inside = |start: i64| {
        probed
            .iter()
            .filter(|(_, stamp)| window(start).contains(*stamp))
            .count()
    };
    // Widen downwards until the window holds enough, keeping the oldest timestamp outside
    // when the page has one to spare.
    let floor = if last >= 2 { last - 1 } else { last };
    while start_index < floor && inside(stamps[start_index]) < wanted {
        start_index += 1;
    }
    let start = stamps[start_index];
    let known = probed
        .iter()
        .filter(|(_, stamp)| window(start).contains(*stamp))
        .cloned()
        .collect();
    Some(Window { start, end, known })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(stamps: &[i64]) -> Vec<(String, i64)> {
        stamps
            .iter()
            .enumerate()
            .map(|(index, stamp)| (format!("e{index}"), *stamp))
            .collect()
    }

    #[test]
    fn the_ends_fall_on_entries_with_one_left_outside_each() {
        let probed = page(&[100, 90, 80, 70, 60, 50, 40]);
        let window = choose(&probed, 3).expect("a window");
        assert_eq!((window.start, window.end), (70, 90));
        assert_eq!(window.known.len(), 3);
    }

    #[test]
    fn oldest_first_pages_give_the_same_window() {
        let newest_first = choose(&page(&[100, 90, 80, 70, 60]), 2).expect("a window");
        let oldest_first = choose(&page(&[60, 70, 80, 90, 100]), 2).expect("a window");
        assert_eq!(
            (newest_first.start, newest_first.end),
            (oldest_first.start, oldest_first.end)
        );
    }

    #[test]
    fn entries_sharing_a_timestamp_are_all_known() {
        let window = choose(&page(&[100, 90, 90, 80, 70]), 1).expect("a window");
        assert_eq!((window.start, window.end), (90, 90));
        assert_eq!(window.known.len(), 2);
    }

    #[test]
    fn a_small_page_is_taken_whole() {
        let window = choose(&page(&[5]), 50).expect("a window");
        assert_eq!((window.start, window.end, window.known.len()), (5, 5, 1));
        let window = choose(&page(&[9, 5]), 50).expect("a window");
        assert_eq!((window.start, window.end, window.known.len()), (5, 9, 2));
        assert_eq!(choose(&[], 50), None);
    }

    #[test]
    fn a_large_page_keeps_the_oldest_outside() {
        let stamps: Vec<i64> = (0..10).rev().collect();
        let window = choose(&page(&stamps), 100).expect("a window");
        assert_eq!((window.start, window.end), (1, 8));
    }
}
