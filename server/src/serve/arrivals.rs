//! Reference-only: when each request arrived, by the peer address of its connection, so the
//! harness can report a race's arrival spread (the time from the first copy's arrival to
//! the last) beside its release spread when the target is the embedded reference.
//!
//! An HTTP request arrives when its body has been read (its last byte is in), a WebSocket
//! request when its frame has been read. The last [`KEPT`] arrivals are kept. They are read
//! at `GET /reference/arrivals?peers=ADDR,ADDR,...` (outside `/api/v2`: nothing of SPEC.md),
//! which answers `{"arrived_us": [...]}`, one entry per peer in the order asked: the
//! microseconds since the server started when that peer's latest request arrived, or null.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::ServerState;

/// Arrivals kept: far more than the copies of one race.
const KEPT: usize = 4096;

/// The latest arrivals, oldest first.
#[derive(Debug)]
pub(crate) struct Arrivals {
    epoch: Instant,
    kept: Mutex<VecDeque<(SocketAddr, u64)>>,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            epoch: Instant::now(),
            kept: Mutex::new(VecDeque::with_capacity(KEPT)),
        }
    }
}

impl Arrivals {
    /// Notes that a request from `peer` has just arrived.
    pub(crate) fn record(&self, peer: SocketAddr) {
        let at_us = u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX);
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() >= KEPT {
                kept.pop_front();
            }
            kept.push_back((peer, at_us));
        }
    }

    /// The latest arrival of each peer, in microseconds since the server started.
    pub(crate) fn of(&self, peers: &[SocketAddr]) -> Vec<Option<u64>> {
        let Ok(kept) = self.kept.lock() else {
            return vec![None; peers.len()];
        };
        peers
            .iter()
            .map(|peer| {
                kept.iter()
                    .rev()
                    .find(|(from, _)| from == peer)
                    .map(|(_, at)| *at)
            })
            .collect()
    }
}

/// The query of `GET /reference/arrivals`.
#[derive(serde::Deserialize)]
pub(crate) struct Asked {
    #[serde(default)]
    peers: String,
}

/// `GET /reference/arrivals?peers=...`.
pub(crate) async fn endpoint(
    State(state): State<Arc<ServerState>>,
    Query(asked): Query<Asked>,
) -> Response {
    let peers: Vec<SocketAddr> = asked
        .peers
        .split(',')
        .filter_map(|peer| peer.trim().parse().ok())
        .collect();
    let body = json!({ "arrived_us": state.arrivals.of(&peers) }).to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_arrival_of_each_peer_is_kept() {
        let arrivals = Arrivals::default();
        let (a, b, c): (SocketAddr, SocketAddr, SocketAddr) = (
            "127.0.0.1:1".parse().unwrap(),
            "127.0.0.1:2".parse().unwrap(),
            "127.0.0.1:3".parse().unwrap(),
        );
        arrivals.record(a);
        arrivals.record(b);
        arrivals.record(a);
        let found = arrivals.of(&[a, b, c]);
        assert!(found[0] >= found[1]);
        assert!(found[1].is_some());
        assert_eq!(found[2], None);
        for _ in 0..KEPT {
            arrivals.record(c);
        }
        assert_eq!(arrivals.of(&[a])[0], None);
    }
}
