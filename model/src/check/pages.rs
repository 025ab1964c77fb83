//! The pagination rules of SPEC.md 4.7, 4.8 and 8, as pure functions over pages and the
//! requests they answer: the one home of these rules, which the runner's walks, the
//! fuzzer's walks and the proxy's judgement of a server's pages call (and the client
//! judge, for what counts as no further page).
//!
//! - a page holds no more entries than its request's `count` asks for, or than the
//!   method's default when it gives none ([`CountBounds`], [`PageLimit`]);
//! - its entries lie inside the requested window, both ends included ([`TimeWindow`]);
//! - no entry comes twice in one walk ([`SeenEntries`], [`Repeat`], entries told apart by
//!   [`entry_identity`]);
//! - a page offers no further page when its continuation is absent, `null` or empty text
//!   ([`offered_continuation`]); where SPEC.md states that marker (4.8: `null`) a
//!   continuation must lead to a page with entries, where it does not (4.7) an empty page,
//!   or a refusal, after a continuation ends the walk ([`EndMarker`]); a walk that hands
//!   out the same continuation twice loops ([`Walk::next_page`]).
//!
//! A broken rule is a [`Violation`] naming its [`Rule`]; each caller words it and picks the
//! clause, as its reports always have.

use std::collections::HashSet;

use serde_json::{Map, Value};

use harness_protocol::spec;

/// The rule a [`Violation`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// No more entries than `count` (or the default `count`) asks for.
    Count,
    /// Entries inside `[start_timestamp, end_timestamp]`.
    Window,
    /// The walk: no entry twice, a continuation leads somewhere, the walk does not loop.
    Continuation,
}

/// One broken pagination rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Violation {
    /// A page holds more entries than its limit.
    OverCount {
        /// Entries on the page.
        entries: usize,
        /// What bounded it.
        limit: PageLimit,
    },
    /// An entry stamped outside the requested window.
    OutsideWindow {
        /// The entry's identity ([`entry_identity`]).
        identity: String,
        /// Its timestamp.
        timestamp: i64,
        /// The window requested.
        window: TimeWindow,
    },
    /// An entry that an earlier page of the walk, or the same page, already held.
    Repeated(Repeat),
    /// A continuation led to an empty page where SPEC.md states the last page's marker.
    EmptyAfterContinuation {
        /// The continuation followed.
        continuation: Value,
    },
}

impl Violation {
    /// The rule broken.
    pub fn rule(&self) -> Rule {
        match self {
            Violation::OverCount { .. } => Rule::Count,
            Violation::OutsideWindow { .. } => Rule::Window,
            Violation::Repeated(_) | Violation::EmptyAfterContinuation { .. } => Rule::Continuation,
        }
    }
}

/// An entry a walk already held ("no entry twice").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repeat {
    /// Its position on the page.
    pub index: usize,
    /// Its identity ([`entry_identity`]).
    pub identity: String,
    /// Whether an earlier page held it (rather than only the same page).
    pub earlier_page: bool,
}

/// The bounds and default of a paged method's `count` (SPEC.md 4.7, 4.8 and 8: 1 to 250,
/// default 100, for `private/get_transaction_log`; 1 to 1000, default 20, for
/// `private/get_trigger_order_history`), as the spec table states them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountBounds {
    /// The least `count`.
    pub min: i64,
    /// The greatest `count`.
    pub max: i64,
    /// The page size when `count` is not given.
    pub default: i64,
}

impl CountBounds {
    /// The bounds of `method`'s `count`, for a method that states them
    /// ([`spec::Method::count_bounds`]).
    pub fn of(method: &str) -> Option<CountBounds> {
        let (min, max, default) = spec::method(method)?.count_bounds()?;
        Some(CountBounds { min, max, default })
    }

    /// What bounds a page asked for with `count` (`None`: not given): that count when it
    /// lies within the bounds, the default when it is absent, nothing when it lies outside
    /// (SPEC.md does not say what such a count is read as).
    pub fn limit(self, count: Option<i64>) -> Option<PageLimit> {
        match count {
            Some(count) if (self.min..=self.max).contains(&count) => Some(PageLimit::Count(count)),
            Some(_) => None,
            None => Some(PageLimit::Default(self.default)),
        }
    }
}

/// The most entries a page may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLimit {
    /// The `count` the request gave.
    Count(i64),
    /// The method's default `count`, the request giving none.
    Default(i64),
}

impl PageLimit {
    /// The number of entries.
    pub fn entries(self) -> i64 {
        match self {
            PageLimit::Count(count) | PageLimit::Default(count) => count,
        }
    }

    /// Whether a page of `entries` entries keeps to the limit.
    pub fn allows(self, entries: usize) -> bool {
        i64::try_from(entries).is_ok_and(|entries| entries <= self.entries())
    }

    /// The violation of a page of `entries` entries, if it holds too many.
    pub fn check(self, entries: usize) -> Option<Violation> {
        (!self.allows(entries)).then_some(Violation::OverCount {
            entries,
            limit: self,
        })
    }
}

/// The requested window, `[start_timestamp, end_timestamp]` (SPEC.md 4.8: "earliest
/// timestamp" and "latest timestamp", so both ends belong to it); an end not given does
/// not bound it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// `start_timestamp`, ms.
    pub start: Option<i64>,
    /// `end_timestamp`, ms.
    pub end: Option<i64>,
}

impl TimeWindow {
    /// The window of a request's parameters, each end a JSON integer or, as a query string
    /// carries it, its text.
    pub fn of_params(params: &Map<String, Value>) -> TimeWindow {
        let end = |name: &str| match params.get(name) {
            Some(Value::Number(number)) => number.as_i64(),
            Some(Value::String(text)) => text.parse().ok(),
            _ => None,
        };
        TimeWindow {
            start: end("start_timestamp"),
            end: end("end_timestamp"),
        }
    }

    /// Whether neither end is given.
    pub fn is_unbounded(self) -> bool {
        self.start.is_none() && self.end.is_none()
    }

    /// Whether `timestamp` lies inside the window, both ends included.
    pub fn contains(self, timestamp: i64) -> bool {
        !(self.start.is_some_and(|start| timestamp < start)
            || self.end.is_some_and(|end| timestamp > end))
    }

    /// The first timestamp among `entries` (read from their `member`) outside the window.
    pub fn first_outside(self, entries: &[Value], member: &str) -> Option<i64> {
        entries
            .iter()
            .filter_map(|entry| entry.get(member).and_then(Value::as_i64))
            .find(|at| !self.contains(*at))
    }
}

/// What tells one entry of a walk from another ("no entry twice"): its `key` member where
/// the walk names one (the whole entry when it lacks that member), else the whole entry, as
/// JSON text.
pub fn entry_identity(entry: &Value, key: Option<&str>) -> String {
    match key.and_then(|member| entry.get(member)) {
        Some(value) => value.to_string(),
        None => entry.to_string(),
    }
}

/// The continuation a page offers for a further page: `None` when it offers none (absent,
/// `null`, or empty text; 4.8: "null when no further page").
pub fn offered_continuation(continuation: Option<&Value>) -> Option<&Value> {
    continuation.filter(|value| !value.is_null() && value.as_str() != Some(""))
}

/// How SPEC.md marks a paged method's last page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndMarker {
    /// 4.8: "continuation: integer, null when no further page". A continuation handed out
    /// promises a further page, which must hold entries.
    Null,
    /// 4.7 shows no marker: the continuation a last page carries may be the marker, so an
    /// empty page or a refusal after a continuation ends the walk.
    NotStated,
}

impl EndMarker {
    /// The marker of `method` as the spec table states it ([`spec::Paging::null_at_end`]);
    /// [`EndMarker::NotStated`] for a method the table does not page.
    pub fn of(method: &str) -> EndMarker {
        let stated = spec::method(method)
            .and_then(|method| method.paging)
            .is_some_and(|paging| paging.null_at_end);
        if stated {
            EndMarker::Null
        } else {
            EndMarker::NotStated
        }
    }

    /// Whether an empty page, or a refusal, that a continuation led to ends the walk.
    pub fn continuation_may_end(self) -> bool {
        self == EndMarker::NotStated
    }
}

/// The entries of one walk seen so far, for "no entry twice".
#[derive(Clone, Debug, Default)]
pub struct SeenEntries {
    identities: HashSet<String>,
    cap: Option<usize>,
}

impl SeenEntries {
    /// Remembers at most `cap` entries: a page that would take the walk past it is checked
    /// but no longer remembered.
    pub fn capped(cap: usize) -> SeenEntries {
        SeenEntries {
            identities: HashSet::new(),
            cap: Some(cap),
        }
    }

    /// Takes one page's entries, by identity in page order, and returns those the walk
    /// already held: on an earlier page or earlier on this one.
    pub fn take_page(&mut self, identities: Vec<String>) -> Vec<Repeat> {
        let page_len = identities.len();
        let mut on_page = HashSet::new();
        let mut repeats = Vec::new();
        for (index, identity) in identities.into_iter().enumerate() {
            let earlier_page = self.identities.contains(&identity);
            if earlier_page || on_page.contains(&identity) {
                repeats.push(Repeat {
                    index,
                    identity,
                    earlier_page,
                });
            } else {
                on_page.insert(identity);
            }
        }
        if self
            .cap
            .is_none_or(|cap| self.identities.len() + page_len <= cap)
        {
            self.identities.extend(on_page);
        }
        repeats
    }
}

/// What a page's continuation makes of a walk ([`Walk::next_page`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// No further page.
    End,
    /// A further page, asked for with this continuation.
    Page(Value),
    /// A continuation the walk already handed out: the walk loops.
    Again(Value),
}

/// What one page of a walk showed ([`Walk::page`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PageReport {
    /// The rules the page broke, in page order.
    pub violations: Vec<Violation>,
    /// The page, empty after a continuation where SPEC.md does not state the last page's
    /// marker, ended the walk; nothing of it was judged.
    pub ended: bool,
}

/// One walk read page by page, as the runner and the fuzzer drive it: fed each page's
/// entries, then its continuation.
#[derive(Clone, Debug)]
pub struct Walk {
    marker: EndMarker,
    key: Option<String>,
    seen: SeenEntries,
    handed_out: HashSet<String>,
    following: Option<Value>,
}

impl Walk {
    /// A walk of a method whose last page is marked as `marker` says, its entries told
    /// apart by their `key` member ([`entry_identity`]).
    pub fn new(marker: EndMarker, key: Option<&str>) -> Walk {
        Walk {
            marker,
            key: key.map(str::to_owned),
            seen: SeenEntries::default(),
            handed_out: HashSet::new(),
            following: None,
        }
    }

    /// The continuation the next page is asked for with (`None` for the first page).
    pub fn following(&self) -> Option<&Value> {
        self.following.as_ref()
    }

    /// Whether a refusal of the next page ends the walk: it follows a continuation that,
    /// SPEC.md not stating the last page's marker (4.7), may have been that marker.
    pub fn refusal_ends_walk(&self) -> bool {
        self.following.is_some() && self.marker.continuation_may_end()
    }

    /// The identity of one of the walk's entries.
    pub fn identity(&self, entry: &Value) -> String {
        entry_identity(entry, self.key.as_deref())
    }

    /// Judges a page's `entries`: a continuation's empty page (the end, or a broken
    /// promise of a further page), then per entry a repeat and, with `window`, a timestamp
    /// (its `member`) outside the window.
    pub fn page(&mut self, entries: &[Value], window: Option<(TimeWindow, &str)>) -> PageReport {
        let mut violations = Vec::new();
        if let (Some(continuation), true) = (&self.following, entries.is_empty()) {
            if self.marker.continuation_may_end() {
                return PageReport {
                    violations,
                    ended: true,
                };
            }
            violations.push(Violation::EmptyAfterContinuation {
                continuation: continuation.clone(),
            });
        }
        let identities: Vec<String> = entries.iter().map(|entry| self.identity(entry)).collect();
        let mut repeats = self
            .seen
            .take_page(identities.clone())
            .into_iter()
            .peekable();
        for (index, (entry, identity)) in entries.iter().zip(identities).enumerate() {
            if let Some(repeat) = repeats.next_if(|repeat| repeat.index == index) {
                violations.push(Violation::Repeated(repeat));
            }
            if let Some((window, member)) = window
                && let Some(timestamp) = entry.get(member).and_then(Value::as_i64)
                && !window.contains(timestamp)
            {
                violations.push(Violation::OutsideWindow {
                    identity,
                    timestamp,
                    window,
                });
            }
        }
        PageReport {
            violations,
            ended: false,
        }
    }

    /// Reads a page's `continuation`: the end, or the page to ask for next (which the walk
    /// then follows), or a loop when the walk handed it out before.
    pub fn next_page(&mut self, continuation: Option<&Value>) -> Next {
        let Some(next) = offered_continuation(continuation) else {
            return Next::End;
        };
        self.following = Some(next.clone());
        if self.handed_out.insert(next.to_string()) {
            Next::Page(next.clone())
        } else {
            Next::Again(next.clone())
        }
    }
}

#[cfg(test)]
mod tests;
