//! One seeded run split across processes (`harness fuzz --shard I/N`).
//!
//! Every shard generates the same stream of requests from the same seed and sends only its
//! own: request `k` of the whole run (counting from 0) belongs to shard `k mod N + 1`. Each
//! index has exactly one residue, so no request is sent by two shards, and the N shards
//! together send every request of the unsharded run, each under its index in the whole run
//! (its JSON-RPC id and the name of a finding's case file do not depend on the sharding).
//! Shards are numbered from 1, as `--shard` and `--partition` count in nextest, Jest and
//! Playwright.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::FuzzRequest;
use super::generate::stream;
use harness_model::target_file::Target;
use harness_protocol::wire::TransportKind;

/// Shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 1 to `count`.
    pub index: usize,
    /// How many shards the run is split into.
    pub count: usize,
}

impl Shard {
    /// The whole run, unsplit.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Shard `index` of `count`; `None` unless `1 <= index <= count`.
    pub fn new(index: usize, count: usize) -> Option<Shard> {
        (1..=count)
            .contains(&index)
            .then_some(Shard { index, count })
    }

    /// Whether request `request_index` of the whole run (from 0) is this shard's.
    pub fn holds(self, request_index: usize) -> bool {
        request_index % self.count == self.index - 1
    }

    /// This shard's items of `all`, each with its index in `all`.
    pub fn select<T>(self, all: impl IntoIterator<Item = T>) -> Vec<(usize, T)> {
        all.into_iter()
            .enumerate()
            .filter(|(index, _)| self.holds(*index))
            .collect()
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let parsed = text.split_once('/').and_then(|(index, count)| {
            Some((index.trim().parse().ok()?, count.trim().parse().ok()?))
        });
        let Some((index, count)) = parsed else {
            return Err(ShardError::NotIOfN {
                text: text.to_owned(),
            });
        };
        Shard::new(index, count).ok_or_else(|| ShardError::OutOfRange {
            text: text.to_owned(),
        })
    }
}

/// Why a text is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not two numbers around a slash.
    #[error("shard \"{text}\" is not I/N (shard I of N, e.g. 2/8)")]
    NotIOfN {
        /// The text.
        text: String,
    },
    /// I not from 1 to N, or N zero.
    #[error("shard \"{text}\" is out of range: I must be from 1 to N, and N at least 1")]
    OutOfRange {
        /// The text.
        text: String,
    },
}

/// The requests shard `shard` sends of the first `count` that `seed` generates for `target`,
/// each with its index in the whole run. Only the shard's requests are kept, so a shard of a
/// large run holds a shard's worth of memory.
pub fn shard_requests(
    seed: u64,
    count: usize,
    shard: Shard,
    target: &Target,
    transports: &[TransportKind],
) -> Vec<(usize, FuzzRequest)> {
    shard.select(stream(seed, target, transports).take(count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parses_and_prints_as_i_of_n() {
        let shard: Shard = "2/8".parse().unwrap();
        assert_eq!(shard, Shard { index: 2, count: 8 });
        assert_eq!(shard.to_string(), "2/8");
        assert_eq!(" 1 / 1 ".parse::<Shard>(), Ok(Shard::WHOLE));
    }

    #[test]
    fn shard_out_of_range_or_malformed_is_refused() {
        for text in ["0/4", "5/4", "1/0", "0/0", "4", "a/b", "1/2/3", "-1/2", ""] {
            assert!(text.parse::<Shard>().is_err(), "{text:?} accepted");
        }
    }

    #[test]
    fn shards_partition_every_index() {
        for count in 1..=7 {
            for request_index in 0..100 {
                let holders = (1..=count)
                    .filter(|&index| Shard::new(index, count).unwrap().holds(request_index))
                    .count();
                assert_eq!(holders, 1, "request {request_index} of {count} shards");
            }
        }
    }

    #[test]
    fn select_keeps_order_and_whole_run_indices() {
        let shard = Shard::new(2, 3).unwrap();
        let selected = shard.select(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
        assert_eq!(selected, vec![(1, 'b'), (4, 'e')]);
        assert_eq!(Shard::WHOLE.select(0..3), vec![(0, 0), (1, 1), (2, 2)]);
    }
}
