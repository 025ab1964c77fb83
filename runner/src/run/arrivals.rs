//! The arrival spread of a race against the embedded reference server: the time from the
//! first copy's arrival at the server to the last, read from the reference's own
//! `GET /reference/arrivals?peers=...` (outside the API prefix, nothing of SPEC.md) by the local
//! addresses of the copies' connections. Only a run whose target is the embedded reference
//! asks (`RunConfig::reference_arrivals`); a target file never is.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

/// The spread, in microseconds, of the arrivals of `peers` at the reference server whose
/// `base_url` (ending in the API prefix) is given; `None` when it could not be read or fewer than
/// two of them arrived.
pub(crate) async fn arrival_spread_us(base_url: &str, peers: &[SocketAddr]) -> Option<f64> {
    if peers.len() < 2 {
        return None;
    }
    let origin = base_url
        .trim_end_matches('/')
        .trim_end_matches(harness_protocol::spec::API_PREFIX);
    let list: Vec<String> = peers.iter().map(SocketAddr::to_string).collect();
    let url = format!("{origin}/reference/arrivals?peers={}", list.join(","));
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()
        .ok()?;
    let body: Value = client.get(url).send().await.ok()?.json().await.ok()?;
    let arrived: Vec<u64> = body
        .get("arrived_us")?
        .as_array()?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    spread(&arrived)
}

/// Last minus first, when there are at least two.
fn spread(arrived: &[u64]) -> Option<f64> {
    let first = arrived.iter().min()?;
    let last = arrived.iter().max()?;
    (arrived.len() >= 2).then(|| (last - first) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_last_minus_first() {
        assert_eq!(spread(&[30, 10, 25]), Some(20.0));
        assert_eq!(spread(&[10]), None);
        assert_eq!(spread(&[]), None);
    }
}
