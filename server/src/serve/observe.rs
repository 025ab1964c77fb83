//! Hooks for whoever watches the server from outside: an [`Observer`] sees every raw
//! request before it is answered and every answer as it goes out, and [`Knobs`] change
//! what the server serves for the scenarios of the client judge.
//!
//! The observer is how the client judge records a client's traffic without a second
//! implementation of the transports: the server stays the one place that speaks HTTP and
//! WebSocket. Knobs default to today's behaviour, so a server without them is the plain
//! reference server the conformance suite runs against.

use std::fmt;
use std::sync::atomic::Ordering;

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::Value;

use super::ServerState;
use super::ledger::{LogEntry, LogQuery, PageAsk, log_page};
use harness_protocol::jsonrpc::ErrorObject;

/// Which listener a request came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// An HTTP request (JSON-RPC under `/api/v2`, Direct Access, or any other path).
    Http,
    /// One message on a WebSocket connection.
    Ws,
}

/// A request exactly as it arrived, before the server looked at it.
#[derive(Clone, Debug)]
pub struct RawRequest {
    /// Arrival order, unique per server start.
    pub(crate) seq: u64,
    /// HTTP or WebSocket.
    pub(crate) wire: Wire,
    /// The connection: the peer address over HTTP, `ws#<n>` for the n-th WebSocket.
    pub connection: String,
    /// Arrival time from the server's clock, in ms since the epoch.
    pub(crate) at_ms: u64,
    /// The HTTP method; `WS` for a WebSocket message.
    pub method: String,
    /// Path and query as received; for a WebSocket message, those of its handshake.
    pub uri: String,
    /// Header names and values (values that are not visible ASCII come out lossy); for a
    /// WebSocket message, those of its handshake.
    pub headers: Vec<(String, String)>,
    /// The body, or the WebSocket message.
    pub body: Bytes,
}

/// The answer to a request, as it goes out.
#[derive(Clone, Debug)]
pub struct RawAnswer {
    /// The [`RawRequest::seq`] it answers.
    pub(crate) seq: u64,
    /// When it was produced, from the server's clock.
    pub(crate) at_ms: u64,
    /// The HTTP status; `None` on WebSocket.
    pub status: Option<u16>,
    /// The response envelope.
    pub body: Value,
}

/// Watches the server's traffic. Called on the request path, so it must be quick and never
/// block on I/O.
pub trait Observer: Send + Sync + fmt::Debug {
    /// Sees a request before the server does. `Some(error)` refuses it: the server answers
    /// with that error (HTTP status 400) instead of running it.
    fn request(&self, request: &RawRequest) -> Option<ErrorObject>;
    /// Sees the answer to a request.
    fn answer(&self, answer: &RawAnswer);
}

/// What the server serves, beyond its fault switches. `Knobs::default()` is the reference
/// server as the conformance suite knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Knobs {
    /// Caps every access token's lifetime at this many seconds (the `expires_in` it says
    /// and the time it works), forcing clients to refresh.
    pub(crate) token_lifetime_s: Option<u64>,
    /// Serves pages of at most this many entries whatever `count` asks, still ending the
    /// walk with a null (or absent) continuation.
    pub(crate) page_limit: Option<usize>,
    /// Gives three transaction-log entries in seven a type SPEC.md does not list and every
    /// entry members it does not describe (section 9: clients must tolerate them).
    pub(crate) unknown_log_types: bool,
    /// Hands out transaction-log continuations that count the pages left down to 0 (the
    /// one that leads to the last page), instead of entry ids of 10000 and up: a client
    /// that takes a falsy continuation for the end stops one page early.
    pub(crate) small_cursors: bool,
    /// Turns on two-factor confirmation for the `main` account, so its
    /// `private/toggle_subaccount_login` is answered with 13668.
    pub(crate) two_factor_main: bool,
    /// Accepts a signed `Authorization` header whatever its scheme name (SPEC.md 5.6:
    /// `svc-hmac-sha256` only "stands for the scheme name"), verifying it all the same.
    pub(crate) any_signature_scheme: bool,
    /// The 2FA accounts take this fixed code as their second factor instead of a TOTP code
    /// (a test environment's; `harness serve --two-factor-code`), and the target file says
    /// `code = "..."`.
    pub(crate) two_factor_code: Option<String>,
}

/// Types no version of SPEC.md lists, served under [`Knobs::unknown_log_types`].
const NEW_LOG_TYPES: &[&str] = &["fee_rebate", "airdrop", "margin_call_v2"];

/// Whether the entry with this id gets an unlisted type: ids whose residue modulo 7 is 0,
/// 3 or 6, whatever step the ledger numbers its entries by (unless a multiple of 7).
fn unlisted(id: u64) -> Option<&'static str> {
    let residue = id % 7;
    residue
        .is_multiple_of(3)
        .then(|| NEW_LOG_TYPES[(residue / 3) as usize])
}

impl Knobs {
    /// One page of the transaction log: [`log_page`]'s, or under
    /// [`Knobs::small_cursors`] the same entries with continuations that count down.
    pub(crate) fn log_page<'a>(
        &self,
        log: &'a [LogEntry],
        query: &LogQuery<'_>,
        ask: PageAsk,
    ) -> (Vec<&'a LogEntry>, Option<u64>) {
        if !self.small_cursors {
            return log_page(log, query, ask);
        }
        // Continuation c names the page c + 1 places from the end, so the last page is
        // reached with 0. A client that changes `count` mid-walk gets the pages of the new
        // length; one that sends a continuation past the first page gets an empty one.
        let page_len = ask.len.max(1);
        let matching: Vec<&LogEntry> = log
            .iter()
            .rev()
            .filter(|entry| query.matches(entry))
            .collect();
        let pages = matching.len().div_ceil(page_len);
        let index = match ask.cursor {
            None => 0,
            Some(cursor) => match usize::try_from(cursor)
                .ok()
                .and_then(|cursor| pages.checked_sub(cursor.checked_add(1)?))
            {
                Some(index) => index,
                None => return (Vec::new(), None),
            },
        };
        let page = matching
            .into_iter()
            .skip(index * page_len)
            .take(page_len)
            .collect();
        let next = (index + 1 < pages).then(|| (pages - index - 2) as u64);
        (page, next)
    }

    /// The page length to serve for a requested `count`.
    pub(crate) fn page_len(&self, count: usize) -> usize {
        self.page_limit
            .map_or(count, |limit| count.min(limit.max(1)))
    }

    /// Rewrites served transaction-log entries as the `unknown_log_types` knob says.
    pub(crate) fn decorate_log(&self, logs: &mut [Value]) {
        if !self.unknown_log_types {
            return;
        }
        for entry in logs.iter_mut() {
            let Some(object) = entry.as_object_mut() else {
                continue;
            };
            let id = object.get("id").and_then(Value::as_u64).unwrap_or(0);
            if let Some(new_type) = unlisted(id) {
                object.insert("type".to_owned(), Value::from(new_type));
            }
            object.insert(
                "settlement_breakdown".to_owned(),
                serde_json::json!({"funding": 0.0, "fees": 0.0}),
            );
            object.insert("x_source_region".to_owned(), Value::from("eu-1"));
        }
    }
}

/// Header names and values as text; a value that is not visible ASCII comes out lossy.
pub(crate) fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

impl ServerState {
    /// The next request number for the observer.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// The label of a new WebSocket connection for the observer.
    pub(crate) fn next_ws_connection(&self) -> String {
        format!(
            "ws#{}",
            self.next_connection.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// What the server serves beyond its faults.
    pub(crate) fn knobs(&self) -> &Knobs {
        &self.knobs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::serve::ledger::Order;

    fn newest_first(cursor: Option<u64>, len: usize) -> PageAsk {
        PageAsk {
            cursor,
            len,
            order: Order::NewestFirst,
        }
    }

    #[test]
    fn default_knobs_change_nothing() {
        let knobs = Knobs::default();
        assert_eq!(knobs.page_len(250), 250);
        let mut logs = vec![json!({"id": 9, "type": "trade"})];
        knobs.decorate_log(&mut logs);
        assert_eq!(logs, vec![json!({"id": 9, "type": "trade"})]);
    }

    #[test]
    fn small_cursors_count_down_to_zero_and_walk_every_entry_once() {
        let log: Vec<LogEntry> = (0..7)
            .map(|index| LogEntry {
                id: 10_000 + 3 * index,
                timestamp: index,
                user_id: 1,
                currency: "BTC",
                body: json!({}),
            })
            .collect();
        let query = LogQuery {
            user_id: 1,
            currency: None,
            start: 0,
            end: u64::MAX,
            keywords: Vec::new(),
        };
        let knobs = Knobs {
            small_cursors: true,
            ..Knobs::default()
        };
        let (mut cursor, mut seen, mut handed_out) = (None, Vec::new(), Vec::new());
        loop {
            let (page, next) = knobs.log_page(&log, &query, newest_first(cursor, 3));
            seen.extend(page.iter().map(|entry| entry.id));
            match next {
                Some(next) => handed_out.push(next),
                None => break,
            }
            cursor = next;
        }
        assert_eq!(handed_out, vec![1, 0]);
        let expected: Vec<u64> = log.iter().rev().map(|entry| entry.id).collect();
        assert_eq!(seen, expected);
        assert_eq!(
            knobs
                .log_page(&log, &query, newest_first(Some(3), 3))
                .0
                .len(),
            0
        );
    }

    #[test]
    fn the_ledger_ids_get_unknown_types() {
        // The ledger numbers entries 10000, 10003, ...: some of any seven in a row are
        // served with an unlisted type.
        let hits: Vec<&str> = (0..7).filter_map(|i| unlisted(10_000 + 3 * i)).collect();
        assert_eq!(hits.len(), 3);
        // Three types, each of them once: a client meets more than one it does not know.
        let mut distinct = hits.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{hits:?}");
    }

    #[test]
    fn unknown_types_replace_three_entries_in_seven_and_add_members() {
        let knobs = Knobs {
            unknown_log_types: true,
            page_limit: Some(3),
            ..Knobs::default()
        };
        assert_eq!(knobs.page_len(250), 3);
        assert_eq!(knobs.page_len(2), 2);
        let mut logs = vec![
            json!({"id": 7, "type": "trade"}),
            json!({"id": 8, "type": "trade"}),
        ];
        knobs.decorate_log(&mut logs);
        assert_ne!(logs[0]["type"], "trade");
        assert_eq!(logs[1]["type"], "trade");
        assert_eq!(logs[1]["x_source_region"], "eu-1");
    }
}
