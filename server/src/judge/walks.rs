//! Walks through paged reads (SPEC.md 4.7, 4.8): every continuation sent is one a page of
//! the same walk handed out, with its value and JSON type, and a walk ends only where
//! SPEC.md says there is no further page: "continuation: integer, null when no further
//! page".
//!
//! A walk is one caller's (see [`Caller`]) reads of one method for one currency (and
//! subaccount), linked by continuation; other parameters may change from page to page (a
//! fresh `end_timestamp` with every page is fine). A first-page request reads the walk
//! again when it asks for what its first page asked for (the same parameters but
//! `end_timestamp`); one with another `count`, window start or filter is a new read.
//!
//! SPEC.md does not oblige a client to read to the end, so most early stops are grey:
//! - one page and no more is a pass (a poller reads the newest entries);
//! - a walk stopped after following some pages, after a page shorter than `count`, or
//!   re-read from the first page once while a continuation was on offer, is a warning
//!   with the explanation;
//! - a walk stopped right at a continuation of 0 after following pages is a failure: 0 is
//!   a further page, and the client took a falsy cursor for the end;
//! - the first page asked for three times in a row, each answer offering a continuation
//!   never used, is a failure: the classic restart loop.
//!
//! Walks of the same reads may run side by side (two tasks of one client, each walking the
//! same log), and a client may log in again and go on: SPEC.md ties a continuation to the
//! reads that handed it out, not to a token or a session. A continuation that a page of
//! the same client's reads handed out, and that has not been followed as often as it was
//! handed out, is followed, whichever walk or session sent it; a
//! restart loop is judged when the recording ends, once it is known that none of the
//! continuations its first pages were offered was ever sent.
//!
//! A page asked for with the pending continuation but answered with an error (refused for
//! pacing, say) counts as followed: the error is judged by its own clause, never twice.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Tally;
use super::paging::paged;
use super::record::{Call, Record};
use super::sessions::Caller;
use harness_model::check::{pages, short};
use harness_protocol::spec::Paging;
use harness_protocol::wire::TransportKind;

/// The clause every walk is judged against.
const CLAUSE: &str = "client.pagination.follow";

/// A first-page request this soon after a page that offered more is a re-read of the walk,
/// not a new one: a poller refreshing the newest page waits longer than that.
const RESTART_WINDOW_MS: u64 = 5_000;

/// First-page requests in a row, each offered a continuation never used, that make a loop.
const RESTART_LOOP: usize = 3;

/// A page that offered more.
struct Pending {
    value: Value,
    seq: u64,
    answered_ms: u64,
    /// Entries served and `count` asked, when the page was shorter than asked.
    short: Option<(usize, i64)>,
    /// Whether the page was a first page (asked for without continuation).
    first_page: bool,
    /// A request that asked for this continuation and got an error: its number and error.
    attempted: Option<(u64, String)>,
}

struct Walk {
    transport: TransportKind,
    /// What the walk's first page asked for: every parameter but those a page may change.
    selection: String,
    pending: Option<Pending>,
    pages_followed: usize,
    /// Continuations followed since the walk began, to tell a loop.
    followed: Vec<String>,
    /// First-page requests in a row that were offered a continuation.
    first_pages_in_a_row: usize,
    /// The continuations those first pages were offered, as text.
    first_page_offers: Vec<String>,
    /// Suspected restart loops: the request that made the third first page, what to say,
    /// and the continuations offered; judged at the end of the recording.
    suspected_loops: Vec<(u64, String, Vec<String>)>,
}

impl Walk {
    fn new(transport: TransportKind) -> Walk {
        Walk {
            transport,
            selection: String::new(),
            pending: None,
            pages_followed: 0,
            followed: Vec::new(),
            first_pages_in_a_row: 0,
            first_page_offers: Vec::new(),
            suspected_loops: Vec::new(),
        }
    }

    /// Takes in a page's answer: the walk ends where no continuation came, and waits on the
    /// one offered otherwise (`call`, the result's list member and the default `count`;
    /// `first`: the page was asked for without continuation).
    fn answered(
        &mut self,
        record: &Record,
        (call, items, default_count): (&Call, &str, i64),
        first: bool,
        served: Option<&Value>,
        pool: &mut Offers,
        tally: &mut Tally,
    ) {
        let Some(value) = served else {
            tally.pass(CLAUSE, record.transport);
            self.pending = None;
            self.followed.clear();
            self.first_pages_in_a_row = 0;
            self.first_page_offers.clear();
            return;
        };
        pool.offer(value);
        if first {
            self.first_page_offers.push(text_of(value));
        }
        let page_len = record
            .result()
            .and_then(|result| result.get(items))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let count = call.int("count").unwrap_or(default_count);
        self.pending = Some(Pending {
            value: value.clone(),
            seq: record.seq,
            answered_ms: record.answer.as_ref().map_or(0, |answer| answer.at_ms),
            short: (i64::try_from(page_len).unwrap_or(i64::MAX) < count)
                .then_some((page_len, count)),
            first_page: first,
            attempted: None,
        });
    }
}

/// The verdicts at the end of the recording: a walk left waiting on a continuation, and
/// the suspected restart loops (a fail unless a continuation they were offered was sent
/// later, by any session of the client).
fn verdicts(walk: &Walk, ever_sent: &HashSet<String>, tally: &mut Tally) {
    if let Some(pending) = &walk.pending {
        ended(walk, pending, tally);
    }
    for (seq, finding, offers) in &walk.suspected_loops {
        if offers.iter().all(|text| !ever_sent.contains(text)) {
            tally.fail(CLAUSE, walk.transport, Some(*seq), finding.clone());
        } else {
            tally.warn(
                CLAUSE,
                walk.transport,
                Some(*seq),
                format!(
                    "read the first page {RESTART_LOOP} times in a row; a continuation offered was sent later, so not a restart loop"
                ),
            );
        }
    }
}

/// The continuations of one client's reads of one method, currency and subaccount, across
/// its sessions: walks of the same reads running side by side (or a walk taken up again
/// after a new login) follow each other's.
#[derive(Default)]
struct Offers {
    /// Every continuation handed out and not yet followed, with how many times it is still
    /// owed.
    offered: Vec<(Value, usize)>,
    /// Every continuation ever sent, as text.
    ever_sent: HashSet<String>,
}

impl Offers {
    /// Takes `sent` off the continuations still owed, if a page handed it out.
    fn take_offered(&mut self, sent: &Value, call: &Call) -> bool {
        let owed = self
            .offered
            .iter_mut()
            .find(|(given, owed)| *owed > 0 && same(sent, given, call));
        match owed {
            Some((_, owed)) => {
                *owed -= 1;
                true
            }
            None => false,
        }
    }

    fn offer(&mut self, value: &Value) {
        match self.offered.iter_mut().find(|(given, _)| given == value) {
            Some((_, owed)) => *owed += 1,
            None => self.offered.push((value.clone(), 1)),
        }
    }
}

/// Checks every walk of the recording.
pub(crate) fn check_pagination(records: &[Record], callers: &[Caller], tally: &mut Tally) {
    let mut walks: HashMap<(String, String, String, String), Walk> = HashMap::new();
    let mut offers: HashMap<(String, String, String, String), Offers> = HashMap::new();
    let mut order = Vec::new();
    for (record, caller) in records.iter().zip(callers) {
        let call = record.call();
        let Some((_, Paging { items, .. }, (_, _, default_count))) = paged(&call) else {
            continue;
        };
        let Some(answer) = record.answer.as_ref() else {
            continue;
        };
        let key = walk_key(&caller.key, &call);
        let client = caller
            .client
            .as_ref()
            .map_or_else(|| caller.key.clone(), |client| format!("client:{client}"));
        let pool = offers.entry(walk_key(&client, &call)).or_default();
        let walk = walks.entry(key.clone()).or_insert_with(|| {
            order.push((key, walk_key(&client, &call)));
            Walk::new(record.transport)
        });
        walk.transport = record.transport;
        let sent = call
            .params
            .get("continuation")
            .filter(|value| !value.is_null());
        let Some(result) = record.result() else {
            if let (Some(pending), Some(sent)) = (walk.pending.as_mut(), sent)
                && same(sent, &pending.value, &call)
            {
                pending.attempted = Some((record.seq, error_of(&answer.body)));
            }
            continue;
        };
        match sent {
            Some(sent) => follow(walk, pool, record, &call, sent, tally),
            None => first_page(walk, record, &selection(&call), tally),
        }
        let served = pages::offered_continuation(result.get("continuation"));
        walk.answered(
            record,
            (&call, items, default_count),
            sent.is_none(),
            served,
            pool,
            tally,
        );
    }
    for (key, client_key) in order {
        verdicts(&walks[&key], &offers[&client_key].ever_sent, tally);
    }
}

/// The reads a request belongs to: caller (a session, or a client across its sessions),
/// method, currency and subaccount.
fn walk_key(caller: &str, call: &Call) -> (String, String, String, String) {
    (
        caller.to_owned(),
        call.method.clone().unwrap_or_default(),
        call.text("currency").unwrap_or_default(),
        call.text("subaccount_id").unwrap_or_default(),
    )
}

/// What a first page asks for: its parameters but the continuation, the token and the end
/// of the window (which a client may well set to "now" every time).
fn selection(call: &Call) -> String {
    let mut params: Vec<(&String, String)> = call
        .params
        .iter()
        .filter(|(name, _)| {
            !["continuation", "access_token", "end_timestamp"].contains(&name.as_str())
        })
        .map(|(name, value)| (name, text_of(value)))
        .collect();
    params.sort();
    format!("{params:?}")
}

/// A continuation as text: a string as is, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Whether `sent` is the continuation `given`: the same JSON value, or over a query string
/// (which has no JSON types) the same text.
fn same(sent: &Value, given: &Value, call: &Call) -> bool {
    sent == given || (call.envelope.is_none() && text_of(sent) == text_of(given))
}

fn error_of(body: &Value) -> String {
    let error = body.get("error");
    let code = error
        .and_then(|error| error.get("code"))
        .map_or_else(|| "?".to_owned(), Value::to_string);
    let message = error
        .and_then(|error| error.get("message"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    format!("error {code} {message}").trim_end().to_owned()
}

/// A request that sent a continuation.
fn follow(
    walk: &mut Walk,
    pool: &mut Offers,
    record: &Record,
    call: &Call,
    sent: &Value,
    tally: &mut Tally,
) {
    let (transport, seq) = (record.transport, Some(record.seq));
    let owed = pool.take_offered(sent, call);
    pool.ever_sent.insert(text_of(sent));
    match &walk.pending {
        Some(pending) if same(sent, &pending.value, call) => {
            tally.pass(CLAUSE, transport);
            walk.pages_followed += 1;
            walk.first_pages_in_a_row = 0;
            walk.first_page_offers.clear();
        }
        Some(pending) if text_of(sent) == text_of(&pending.value) => tally.fail(
            CLAUSE,
            transport,
            seq,
            format!(
                "sent continuation {} where request #{} was given {}: the exact value, with its json type, goes back",
                short(sent),
                pending.seq,
                short(&pending.value)
            ),
        ),
        // A walk of the same reads beside this one handed it out.
        _ if owed => {
            tally.pass(CLAUSE, transport);
            walk.pages_followed += 1;
        }
        _ if walk.followed.contains(&text_of(sent)) => tally.fail(
            CLAUSE,
            transport,
            seq,
            format!(
                "the walk loops: continuation {} was already followed",
                short(sent)
            ),
        ),
        Some(pending) => tally.fail(
            CLAUSE,
            transport,
            seq,
            format!(
                "sent continuation {} where request #{} was given {}",
                short(sent),
                pending.seq,
                short(&pending.value)
            ),
        ),
        None => tally.fail(
            CLAUSE,
            transport,
            seq,
            format!(
                "sent continuation {} that no page of this walk handed out",
                short(sent)
            ),
        ),
    }
    walk.followed.push(text_of(sent));
}

/// A request for the first page: a new walk, or the old one read again.
fn first_page(walk: &mut Walk, record: &Record, selection: &str, tally: &mut Tally) {
    let (transport, seq) = (record.transport, Some(record.seq));
    let re_read = walk.pending.as_ref().filter(|pending| {
        record.at_ms.saturating_sub(pending.answered_ms) <= RESTART_WINDOW_MS
            && pending.attempted.is_none()
            && walk.selection == selection
    });
    match re_read {
        Some(pending) => {
            if pending.first_page {
                walk.first_pages_in_a_row += 1;
            } else {
                walk.first_pages_in_a_row = 1;
                walk.first_page_offers.clear();
            }
            if walk.first_pages_in_a_row == RESTART_LOOP {
                let finding = format!(
                    "asked for the first page {RESTART_LOOP} times in a row, each answer offering a continuation that was never sent (a restart loop); request #{} was given {}",
                    pending.seq,
                    short(&pending.value)
                );
                let offers = walk.first_page_offers.clone();
                walk.suspected_loops.push((record.seq, finding, offers));
            } else if walk.first_pages_in_a_row < RESTART_LOOP {
                tally.warn(
                    CLAUSE,
                    transport,
                    seq,
                    format!(
                        "read the first page again instead of sending continuation {} given to request #{}",
                        short(&pending.value),
                        pending.seq
                    ),
                );
            }
        }
        None => {
            if let Some(pending) = &walk.pending {
                ended(walk, pending, tally);
            }
            walk.first_pages_in_a_row = 1;
            walk.first_page_offers.clear();
        }
    }
    walk.selection = selection.to_owned();
    walk.pending = None;
    walk.pages_followed = 0;
    walk.followed.clear();
}

/// Judges a walk left at `pending`, a page that offered more.
fn ended(walk: &Walk, pending: &Pending, tally: &mut Tally) {
    let (transport, seq) = (walk.transport, Some(pending.seq));
    let given = short(&pending.value);
    if let Some((attempt, error)) = &pending.attempted {
        tally.pass(CLAUSE, transport);
        tally.note(
            CLAUSE,
            transport,
            format!(
                "request #{attempt} asked for continuation {given} and was answered with {error}; the walk ended there, which that error's own clause judges"
            ),
        );
        return;
    }
    let falsy = matches!(&pending.value, Value::Number(number) if number.as_f64() == Some(0.0))
        || pending.value.as_str() == Some("0");
    let short_page = pending.short.map(|(page_len, count)| {
        format!(
            "a page of {page_len} entries (count {count}) ended with continuation {given}: a short page does not mark the end, a null continuation does"
        )
    });
    match (walk.pages_followed, short_page) {
        (followed, _) if followed > 0 && falsy => tally.fail(
            CLAUSE,
            transport,
            seq,
            format!(
                "stopped after {followed} followed pages at continuation {given}: 0 is a further page, only a null continuation means there is none"
            ),
        ),
        (0, None) => tally.pass(CLAUSE, transport),
        (followed, Some(short_page)) => tally.warn(
            CLAUSE,
            transport,
            seq,
            format!(
                "stopped after {followed} followed pages where {short_page} (fine for a client that wanted no more)"
            ),
        ),
        (followed, None) => tally.warn(
            CLAUSE,
            transport,
            seq,
            format!(
                "stopped after {followed} followed pages although request #{} was given continuation {given} (fine for a client that wanted no more; SPEC.md does not oblige reading to the end)",
                pending.seq
            ),
        ),
    }
}

#[cfg(test)]
mod tests;
