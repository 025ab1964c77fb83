//! Steered by what the run sees: the map of response classes a run reached, and the
//! corpus of requests that reached a new one, which steering mutates in place of fresh ones.
//!
//! A response class is what a request reached on the server, as seen from outside: the
//! method, the transport, the kind of answer (a result, an error, no JSON, no answer, a
//! throttled one, a walk), the error code, and the clause the oracle held it to (the one a
//! finding broke, else the one its prediction named). A request that reaches a class no
//! request of the run reached before goes into the corpus; while steering (`--steer`), a
//! worker sends, in place of a quarter of the fresh requests, one more defect on a corpus
//! entry (`generate::remix`). The oracle judges a mutation afresh like any request, so steering
//! changes what is sent, never what is expected of it.
//!
//! A steered run's findings are reproducible from their case files; its stream of requests
//! depends on the order answers came back in, so steering is opt-in: without it a run sends
//! exactly the seed's stream.
//! A corpus can be saved and resumed (`--corpus DIR`: one JSON file per entry).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::{FuzzError, FuzzRequest};
use harness_model::target_file::Target;

/// The response classes a run reached and how the map grew.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageMap {
    /// Each class reached (`method transport answer code clause`), with the number of
    /// requests that reached it.
    pub classes: BTreeMap<String, usize>,
    /// How the map grew: `[requests judged, classes reached]` at each new class.
    pub growth: Vec<[usize; 2]>,
    /// Whether the run was steered by the map.
    pub steered: bool,
    /// Requests that reached a new class, kept in the corpus (with those resumed).
    pub corpus: usize,
    /// Requests sent as a mutation of a corpus entry instead of a fresh one.
    pub mutated: usize,
}

impl CoverageMap {
    /// Counts a request that reached `class` as the `judged`th; whether the class is new.
    pub(crate) fn record(&mut self, class: String, judged: usize) -> bool {
        let count = self.classes.entry(class).or_insert(0);
        *count += 1;
        let new = *count == 1;
        if new {
            self.growth.push([judged, self.classes.len()]);
        }
        new
    }

    /// Classes reached within the first `requests` requests judged.
    pub fn reached_within(&self, requests: usize) -> usize {
        self.growth
            .iter()
            .take_while(|[judged, _]| *judged <= requests)
            .last()
            .map_or(0, |[_, classes]| *classes)
    }

    /// Adds `other`'s classes (their counts summed), corpus and mutations: the map of runs
    /// merged (`fuzz merge`). Growth goes on from this map's last step: the map keeps no
    /// class's own step, so each class `other` adds counts after all of `other`'s requests.
    pub fn merge(&mut self, other: &CoverageMap) {
        let offset = self.growth.last().map_or(0, |[judged, _]| *judged);
        let added = other.growth.last().map_or(0, |[judged, _]| *judged);
        for (class, count) in &other.classes {
            let entry = self.classes.entry(class.clone()).or_insert(0);
            let new = *entry == 0;
            *entry += count;
            if new {
                self.growth.push([offset + added, self.classes.len()]);
            }
        }
        self.steered |= other.steered;
        self.corpus += other.corpus;
        self.mutated += other.mutated;
    }
}

/// The class a request reached: its method, transport, answer, code and clause.
pub(crate) fn class_of(
    request: &FuzzRequest,
    answer: &str,
    code: Option<i64>,
    clause: &str,
) -> String {
    let code = code.map_or_else(|| "-".to_owned(), |code| code.to_string());
    let clause = if clause.is_empty() { "-" } else { clause };
    format!(
        "{} {} {answer} {code} {clause}",
        request.method, request.transport
    )
}

/// The steering of one run: its map, its corpus, and the draws of what to mutate.
pub(crate) struct Steering {
    target: Target,
    enabled: bool,
    state: Mutex<SteeringState>,
}

struct SteeringState {
    map: CoverageMap,
    corpus: Vec<FuzzRequest>,
    /// Entries resumed from `--corpus`, not written again.
    resumed: usize,
    rng: StdRng,
    judged: usize,
}

/// One file per corpus entry, named by a digest of its JSON.
fn entry_file(dir: &Path, text: &str) -> PathBuf {
    // FNV-1a: stable across runs and platforms, enough to tell entries apart.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    dir.join(format!("{hash:016x}.json"))
}

/// The corpus saved in `dir` (none when it does not exist); files that are not a request
/// are skipped.
pub(crate) fn load_corpus(dir: &Path) -> Vec<FuzzRequest> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .filter_map(|text| serde_json::from_str(&text).ok())
        .collect()
}

impl Steering {
    /// Steering for a run of `seed` against `target`, starting from `resumed` entries.
    pub(crate) fn new(target: Target, seed: u64, enabled: bool, resumed: Vec<FuzzRequest>) -> Self {
        let count = resumed.len();
        Steering {
            target,
            enabled,
            state: Mutex::new(SteeringState {
                map: CoverageMap {
                    steered: enabled,
                    corpus: count,
                    ..CoverageMap::default()
                },
                corpus: resumed,
                resumed: count,
                rng: StdRng::seed_from_u64(seed ^ 0x5745_4552),
                judged: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SteeringState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What to send in place of `fresh`: a mutation of a corpus entry a quarter of the
    /// time while steering, else nothing (send `fresh`). Requests to a paced method are
    /// the schedule's to plan, so neither `fresh` nor the entry may be one.
    pub(crate) fn instead_of(&self, fresh: &FuzzRequest) -> Option<FuzzRequest> {
        if !self.enabled || harness_protocol::spec::is_paced(&fresh.method) {
            return None;
        }
        let mut state = self.state();
        let state = &mut *state;
        if state.corpus.is_empty() || !state.rng.random_ratio(1, 4) {
            return None;
        }
        let base = state
            .corpus
            .choose(&mut state.rng)
            .filter(|base| !harness_protocol::spec::is_paced(&base.method))?
            .clone();
        let mutated = super::generate::remix(&mut state.rng, &self.target, &base)?;
        state.map.mutated += 1;
        Some(mutated)
    }

    /// Records the class `request` reached; a request reaching a new class joins the corpus.
    pub(crate) fn observe(&self, request: &FuzzRequest, class: String) {
        let mut state = self.state();
        state.judged += 1;
        let judged = state.judged;
        if state.map.record(class, judged) {
            state.map.corpus += 1;
            state.corpus.push(FuzzRequest {
                walk: false,
                ..request.clone()
            });
        }
    }

    /// The map as it stands.
    pub(crate) fn map(&self) -> CoverageMap {
        self.state().map.clone()
    }

    /// Writes the corpus entries this run added into `dir` (created when missing).
    pub(crate) fn save(&self, dir: &Path) -> Result<(), FuzzError> {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let state = self.state();
        for entry in state.corpus.iter().skip(state.resumed) {
            let text = serde_json::to_string_pretty(entry).unwrap_or_default();
            let path = entry_file(dir, &text);
            std::fs::write(&path, text).map_err(|source| FuzzError::Write { path, source })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_counts_classes_and_grows_at_each_new_one() {
        let mut map = CoverageMap::default();
        assert!(map.record("a".to_owned(), 1));
        assert!(!map.record("a".to_owned(), 2));
        assert!(map.record("b".to_owned(), 3));
        assert_eq!(map.growth, vec![[1, 1], [3, 2]]);
        assert_eq!(map.reached_within(2), 1);
        assert_eq!(map.reached_within(10), 2);
        let mut other = CoverageMap::default();
        other.record("b".to_owned(), 1);
        other.record("c".to_owned(), 4);
        map.merge(&other);
        assert_eq!(map.classes.len(), 3);
        assert_eq!(map.classes["b"], 2);
        assert_eq!(map.growth.last(), Some(&[7, 3]));
    }
}
