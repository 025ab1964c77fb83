//! The findings of many `harness fuzz` runs as one report (`harness fuzz merge DIR...`): the
//! shards of one seed, other seeds, other machines.
//!
//! Each run's `--out` holds its report (`fuzz.json`, a [`FuzzReport`]) and a case file per
//! finding. Two findings are one when they break the same clause with the same shrunk request
//! (what the generator said about the request aside): the merged finding keeps the first
//! run's, adds up the failed requests and names every run that found it. Findings of
//! stateful sequences merge the same way, by clause and shrunk sequence. The merged report
//! also says, for each seed, which shards were merged and which are missing.
//!
//! A run's report of before the one findings list held its sequences' findings apart
//! (`stateful.findings`); [`load_run`] reads them into the one list.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{FoundInput, FuzzFinding, FuzzReport, FuzzRequest, Shard};

/// The report file in a run's `--out`.
pub const RUN_REPORT: &str = "fuzz.json";

/// The report file `merge` writes.
pub const MERGED_REPORT: &str = "merge.json";

/// A run merged.
#[derive(Clone, Debug, Serialize)]
pub struct MergedRun {
    /// Its `--out` directory.
    pub dir: PathBuf,
    /// The seed.
    pub seed: u64,
    /// Requests generated from the seed.
    pub requests: usize,
    /// The part of them this run sent.
    pub shard: Shard,
    /// Requests sent.
    pub sent: usize,
    /// Its findings, before merging.
    pub findings: usize,
    /// The run timeout stopped it before every request was sent.
    pub timed_out: bool,
    /// Why it did not do its job (unreachable, or the target stopped answering), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_done: Option<String>,
}

/// The shards merged of one seed's requests split `count` ways.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeedShards {
    /// The seed.
    pub seed: u64,
    /// Requests generated from it.
    pub requests: usize,
    /// How many shards the requests were split into.
    pub count: usize,
    /// The shards merged, in order, each once.
    pub merged: Vec<usize>,
    /// The shards not merged: their requests were not sent by any run given.
    pub missing: Vec<usize>,
}

/// A distinct finding of the merged runs, of a single request or of a stateful sequence.
#[derive(Clone, Debug, Serialize)]
pub struct MergedFinding {
    /// The seed of the run it was kept from.
    pub seed: u64,
    /// The finding as that run reported it; `occurrences` counts the failed requests (or
    /// sequences) of every run, and `case_file` is the copy in the merged directory.
    pub finding: FuzzFinding,
    /// The `--out` directories of the runs that found it.
    pub runs: Vec<PathBuf>,
}

/// Whether two findings are one: the same clause and shrunk request (or sequence).
fn same(a: &FuzzFinding, b: &FuzzFinding) -> bool {
    a.clause == b.clause
        && match (&a.input, &b.input) {
            (FoundInput::Request { shrunk: a, .. }, FoundInput::Request { shrunk: b, .. }) => {
                same_request(a, b)
            }
            (FoundInput::Sequence { shrunk: a, .. }, FoundInput::Sequence { shrunk: b, .. }) => {
                a == b
            }
            _ => false,
        }
}

/// Adds the findings of the run in `dir` to `kept`: each to the kept finding it repeats
/// (its occurrences added, the run listed once), else as a new distinct finding.
fn keep(kept: &mut Vec<MergedFinding>, seed: u64, dir: &Path, findings: &[FuzzFinding]) {
    for finding in findings {
        match kept.iter_mut().find(|kept| same(&kept.finding, finding)) {
            Some(kept) => {
                kept.finding.occurrences += finding.occurrences;
                if !kept.runs.iter().any(|run| run == dir) {
                    kept.runs.push(dir.to_owned());
                }
            }
            None => kept.push(MergedFinding {
                seed,
                finding: finding.clone(),
                runs: vec![dir.to_owned()],
            }),
        }
    }
}

/// The merged report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MergedReport {
    /// The runs, in the order given.
    pub runs: Vec<MergedRun>,
    /// For each seed and split, the shards merged.
    pub seeds: Vec<SeedShards>,
    /// Requests sent by all runs.
    pub sent: usize,
    /// Findings of all runs, before merging.
    pub run_findings: usize,
    /// Distinct findings, by clause and shrunk request (or sequence): the single
    /// requests' by clause, seed and first index, then the sequences' in the runs' order.
    pub findings: Vec<MergedFinding>,
    /// The response classes the runs reached, their maps merged.
    pub coverage: super::coverage::CoverageMap,
}

/// Why runs could not be merged.
#[derive(Debug)]
pub enum MergeError {
    /// A file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A run report is not a `harness fuzz` report.
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and what.
        message: String,
    },
    /// The merged report or a case file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Read { path, source } => {
                write!(f, "failed to read {}: {source}", path.display())
            }
            MergeError::Parse { path, message } => write!(f, "{}:{message}", path.display()),
            MergeError::Write { path, source } => {
                write!(f, "failed to write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for MergeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MergeError::Read { source, .. } | MergeError::Write { source, .. } => Some(source),
            MergeError::Parse { .. } => None,
        }
    }
}

/// Reads the report of the run whose `--out` is `dir`, the findings of an older layout's
/// sequences (`stateful.findings`) moved into its one findings list.
pub fn load_run(dir: &Path) -> Result<FuzzReport, MergeError> {
    let path = dir.join(RUN_REPORT);
    let text = std::fs::read_to_string(&path).map_err(|source| MergeError::Read {
        path: path.clone(),
        source,
    })?;
    let parse_error = |error: serde_json::Error| MergeError::Parse {
        message: format!(
            "{}: not the report of a harness fuzz run: {error}",
            error.line()
        ),
        path: path.clone(),
    };
    let mut report: FuzzReport = serde_json::from_str(&text).map_err(parse_error)?;
    report.gather_older_findings();
    Ok(report)
}

/// Merges `runs` (each with its `--out` directory); pure, case files are not touched.
pub fn merge(runs: &[(PathBuf, FuzzReport)]) -> MergedReport {
    let mut merged = MergedReport::default();
    for (dir, report) in runs {
        merged.runs.push(MergedRun {
            dir: dir.clone(),
            seed: report.seed,
            requests: report.requests,
            shard: report.shard,
            sent: report.sent,
            findings: report.findings.len(),
            timed_out: report.timed_out,
            not_done: report.not_done().map(str::to_owned),
        });
        merged.sent += report.sent;
        merged.coverage.merge(&report.coverage);
        merged.run_findings += report.findings.len();
    }
    // The single requests' findings by clause, seed and first index, then the sequences'
    // in the runs' order.
    let (mut requests, mut sequences) = (Vec::new(), Vec::new());
    for (dir, report) in runs {
        let (of_sequences, of_requests): (Vec<FuzzFinding>, Vec<FuzzFinding>) = report
            .findings
            .iter()
            .cloned()
            .partition(|finding| matches!(finding.input, FoundInput::Sequence { .. }));
        keep(&mut requests, report.seed, dir, &of_requests);
        keep(&mut sequences, report.seed, dir, &of_sequences);
    }
    requests.sort_by(|a, b| {
        (&a.finding.clause, a.seed, a.finding.first_index).cmp(&(
            &b.finding.clause,
            b.seed,
            b.finding.first_index,
        ))
    });
    merged.findings = requests;
    merged.findings.append(&mut sequences);
    merged.seeds = seed_shards(&merged.runs);
    merged
}

/// Whether two shrunk requests are the same request, whatever the generator said about them.
fn same_request(a: &FuzzRequest, b: &FuzzRequest) -> bool {
    FuzzRequest {
        why: String::new(),
        class: None,
        ..a.clone()
    } == FuzzRequest {
        why: String::new(),
        class: None,
        ..b.clone()
    }
}

/// The shards merged and missing of each seed, requests and split.
fn seed_shards(runs: &[MergedRun]) -> Vec<SeedShards> {
    let mut seeds: Vec<SeedShards> = Vec::new();
    for run in runs {
        let position = seeds.iter().position(|seed| {
            (seed.seed, seed.requests, seed.count) == (run.seed, run.requests, run.shard.count)
        });
        let seed = match position {
            Some(position) => &mut seeds[position],
            None => {
                seeds.push(SeedShards {
                    seed: run.seed,
                    requests: run.requests,
                    count: run.shard.count,
                    merged: Vec::new(),
                    missing: Vec::new(),
                });
                seeds.last_mut().expect("just pushed")
            }
        };
        if !seed.merged.contains(&run.shard.index) {
            seed.merged.push(run.shard.index);
        }
    }
    for seed in &mut seeds {
        seed.merged.sort_unstable();
        seed.missing = (1..=seed.count)
            .filter(|index| !seed.merged.contains(index))
            .collect();
    }
    seeds
}

/// Writes `merged` into `out`: each finding's case file copied from its run's directory (and
/// `case_file` pointed at the copy), then [`MERGED_REPORT`]. Returns the report's path.
pub fn write(merged: &mut MergedReport, out: &Path) -> Result<PathBuf, MergeError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MergeError::Write { path, source }
    };
    std::fs::create_dir_all(out).map_err(write_error(out))?;
    let mut written: Vec<PathBuf> = Vec::new();
    let findings = merged
        .findings
        .iter_mut()
        .map(|kept| (&mut kept.finding.case_file, &kept.runs));
    for (case_file, runs) in findings {
        let Some(name) = case_file.as_ref().and_then(|path| path.file_name()) else {
            continue;
        };
        let name = name.to_owned();
        let name = name.as_os_str();
        let from = runs[0].join(name);
        let text = std::fs::read(&from).map_err(|source| MergeError::Read {
            path: from.clone(),
            source,
        })?;
        // Two findings of one request index (another clause, or another server) keep both.
        let mut to = out.join(name);
        let mut copy = 1;
        while written.contains(&to) {
            copy += 1;
            let stem = Path::new(name)
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy();
            to = out.join(format!("{stem}-{copy}.toml"));
        }
        std::fs::write(&to, text).map_err(write_error(&to))?;
        *case_file = Some(to.clone());
        written.push(to);
    }
    let path = out.join(MERGED_REPORT);
    let json = serde_json::to_string_pretty(merged).unwrap_or_default();
    std::fs::write(&path, json).map_err(write_error(&path))?;
    Ok(path)
}

#[cfg(test)]
mod tests;
