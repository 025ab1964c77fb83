//! The live fuzzer, `harness fuzz` against a running server: a crate of its own above the
//! runner (`harness-runner`, whose executor sends its steps unjudged), so that a server team
//! linking the runner compiles no fuzzer; `harness::fuzz` re-exports it. (The cargo-fuzz
//! entry points are `harness_model::fuzz_targets` and `harness_server::serve::fuzz_targets`,
//! built by `fuzz/`.)
//!
//! A run generates requests from the parameter rules of SPEC.md section 4 ([`generate`]):
//! valid ones, and ones with a single defect (a value outside a list or range, a wrong type,
//! a missing or extra parameter, a long or odd string, missing or bad credentials, a bad or
//! replayed signature, a broken envelope), over HTTP query, HTTP body and WebSocket, and
//! pagination walks that follow `continuation` to the last page (`walk.rs`). The
//! oracle ([`rules::expect`]) says what a conforming server must answer; every answer must
//! be a valid envelope echoing the id, valid input must get a result matching its schema,
//! invalid input an error, no request may go unanswered, and the server must still answer
//! a health call at the end. Each distinct failure is shrunk to a minimal request and
//! written as a case file the conformance runner loads, by the one pipeline of single
//! requests and sequences (`pipeline.rs`, with each kind's `Input`: `input.rs`,
//! `state/input.rs`).
//!
//! The same seed gives the same requests: generation draws from one seeded `StdRng` before
//! anything is sent. Nonces and timestamps, made at send time, are not part of a request.
//! A run can be split across processes, each sending its shard of the same requests
//! ([`Shard`]), and [`merge`](merge::merge) deduplicates the findings of many runs into one
//! report.

mod assess;
mod case_file;
mod collect;
pub mod coverage;
mod execute;
mod generate;
mod input;
pub mod merge;
mod pipeline;
pub mod prediction;
mod request_auth;
pub mod rules;
mod run;
mod schedule;
mod send;
mod shard;
pub mod state;
mod steps;
mod walk;

pub use case_file::case_file;
pub use collect::{
    FindingFound, FuzzCollector, FuzzEvent, FuzzEvents, FuzzPhase, FuzzSink, RequestJudged,
};
pub use generate::generate;
pub use request_auth::RequestAuth;
pub use run::run;
pub use shard::{Shard, ShardError, shard_requests};

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use harness_protocol::wire::TransportKind;

/// How to fuzz.
#[derive(Clone, Debug)]
pub struct FuzzConfig {
    /// Seeds the generator; the same seed gives the same requests.
    pub seed: u64,
    /// Requests to generate (the health calls and logins come on top); a shard sends its
    /// part of them.
    pub requests: usize,
    /// The percentage of `requests` spent on stateful sequences ([`state`]), sent before
    /// the stateless requests, which get the rest.
    pub stateful_percent: usize,
    /// Which part of the requests this process sends (`Shard::WHOLE`: all).
    pub shard: Shard,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Transports to use (`rest` only carries `lock_portfolio`).
    pub transports: Vec<TransportKind>,
    /// Per-request limits.
    pub limits: harness_runner::transport::RequestLimits,
    /// Distinct failures shrunk and written as case files at most.
    pub max_findings: usize,
    /// Requests the shrinker may send per finding.
    pub shrink_budget: usize,
    /// Wall time for the generated requests and for shrinking each; past it no new request
    /// starts, so a server that makes every request time out cannot stall the run.
    pub run_timeout: Duration,
    /// Where case files of findings are written; `None` writes nothing.
    pub out: Option<PathBuf>,
    /// Stops the run early (a signal): no new request starts, and the failures seen so far
    /// are written unshrunk.
    pub interrupt: harness_runner::run::Interrupt,
    /// Requests in a row without an answer that stop the run (`run::Breaker`; 0: never).
    pub no_answer_limit: usize,
    /// How long a paced request may wait for its budget: the stateless ones deferred when
    /// every other request is sent, a sequence's paced step. Past it the request is left
    /// unsent (the step skipped) and counted. 0 (the default): the paced method is sent
    /// whenever its budget has room during the run, and the run never waits for it.
    pub paced_wait: Duration,
    /// How long the run lasts at least (0, the default: as long as the other requests
    /// take). Until then the paced method keeps being sent at the rate its budget allows,
    /// the other requests filling the gaps, so a run of thousands of requests that would
    /// end in a second still exercises the one method whose rate SPEC.md states.
    pub duration: Duration,
    /// Steer by the response classes reached (`coverage.rs`): a quarter of the fresh
    /// requests replaced by a mutation of a request that reached a new class. Off (the
    /// default): the seed's stream exactly, so two runs and the shards of one send the same
    /// requests; the map is kept either way.
    pub steer: bool,
    /// Where the corpus is resumed from and saved to (one JSON file per entry).
    pub corpus: Option<PathBuf>,
    /// Where the run's events go (`harness_model::events`): its start, each request judged,
    /// each finding, an interruption and its end.
    pub events: FuzzSink,
}

impl FuzzConfig {
    /// `requests` requests from `seed` over the three JSON-RPC transports and REST.
    pub fn new(seed: u64, requests: usize) -> FuzzConfig {
        FuzzConfig {
            seed,
            requests,
            stateful_percent: 10,
            shard: Shard::WHOLE,
            concurrency: 32,
            transports: TransportKind::ALL.to_vec(),
            limits: harness_runner::transport::RequestLimits::default(),
            max_findings: 20,
            shrink_budget: 200,
            run_timeout: Duration::from_secs(600),
            out: None,
            interrupt: harness_runner::run::Interrupt::new(),
            no_answer_limit: harness_runner::run::DEFAULT_LIMIT,
            paced_wait: Duration::ZERO,
            duration: Duration::ZERO,
            steer: false,
            corpus: None,
            events: FuzzSink::none(),
        }
    }
}

/// One generated request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FuzzRequest {
    /// The transport it goes over.
    pub transport: TransportKind,
    /// The method (`private/lock_portfolio` for the REST call).
    pub method: String,
    /// The parameters; the sender adds what must be fresh (secrets, nonces, timestamps).
    pub params: Map<String, Value>,
    /// The credentials.
    pub auth: RequestAuth,
    /// A raw body or frame sent instead of the built request (HTTP body and WebSocket).
    pub raw: Option<String>,
    /// What the generator did, for the report.
    pub why: String,
    /// Follow `continuation` from the first page to the last instead of sending once.
    pub walk: bool,
    /// The named class of the value or body that makes it odd (`unicode-Nd`,
    /// `numeric-notation`, `lone-surrogate`, ...), if one does: what kind of input it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

/// One distinct failure, shrunk: of a single request or of a stateful sequence, which
/// `harness fuzz` reports, prints and merges alike.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FuzzFinding {
    /// The catalog clause broken.
    pub clause: String,
    /// What was observed (redacted).
    pub message: String,
    /// Index in the whole run (all shards) of the first request (or number of the first
    /// sequence) that failed this way.
    pub first_index: usize,
    /// Requests (or sequences) that failed this way.
    pub occurrences: usize,
    /// What failed, as generated and shrunk: its members (`request` or `sequence`, and
    /// `shrunk`) stand beside the others in `fuzz.json`.
    #[serde(flatten)]
    pub input: FoundInput,
    /// The case file written for it.
    pub case_file: Option<PathBuf>,
}

/// What a finding failed on, as generated and shrunk. Untagged: a single request's finding
/// has `request`, a sequence's `sequence`, so `fuzz.json` reads as it always has.
#[expect(
    clippy::large_enum_variant,
    reason = "a few per run: two requests unboxed read as they are written"
)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FoundInput {
    /// A single request's.
    Request {
        /// The request as generated.
        request: FuzzRequest,
        /// The smallest request found that still fails the same way.
        shrunk: FuzzRequest,
    },
    /// A stateful sequence's.
    Sequence {
        /// The sequence as generated.
        sequence: state::Sequence,
        /// The fewest steps found that still fail the same way.
        shrunk: state::Sequence,
    },
}

impl FuzzFinding {
    /// What failed, as a line of the terminal and of the event stream says it: the shrunk
    /// request's transport, method and input class, or the shrunk sequence's length and
    /// the length it was shrunk from; and how many requests (or sequences) failed so.
    pub fn what(&self) -> String {
        match &self.input {
            FoundInput::Request { shrunk, .. } => {
                let class = shrunk
                    .class
                    .as_deref()
                    .map_or_else(String::new, |class| format!(" (input class {class})"));
                format!(
                    "{} {}{class}, {} requests",
                    shrunk.transport, shrunk.method, self.occurrences
                )
            }
            FoundInput::Sequence { sequence, shrunk } => format!(
                "{} steps, shrunk from {}; {} sequences",
                shrunk.steps.len(),
                sequence.steps.len(),
                self.occurrences
            ),
        }
    }
}

/// What a run found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FuzzReport {
    /// The seed.
    pub seed: u64,
    /// Requests generated from the seed, of which this shard sent its part.
    #[serde(default)]
    pub requests: usize,
    /// The part sent.
    #[serde(default)]
    pub shard: Shard,
    /// The stateful sequences: what they sent (their findings are in `findings`).
    #[serde(default)]
    pub stateful: state::StatefulReport,
    /// Generated stateless requests sent.
    pub sent: usize,
    /// Of those, requests the oracle expected a result for.
    pub expected_result: usize,
    /// Requests it expected an error for.
    pub expected_error: usize,
    /// Requests where either was fine.
    pub expected_any: usize,
    /// Valid requests refused with `too_many_requests`, not counted as findings.
    pub rate_limited: usize,
    /// Requests that got no answer (timed out, refused): nothing was judged.
    #[serde(default)]
    pub unanswered: usize,
    /// Of the requests sent, those to a paced method (sent when its budget had room).
    #[serde(default)]
    pub paced_sent: usize,
    /// Generated paced requests left unsent: their budget had no room within the run
    /// (see `FuzzConfig::paced_wait`).
    #[serde(default)]
    pub paced_unsent: usize,
    /// Paced requests one account's budget allowed over the run (the target's burst and its
    /// rate times the run's wall time). Requests without an account's credentials (none, a
    /// bogus token) draw from budgets of their own, so `paced_sent` may pass it.
    #[serde(default)]
    pub paced_allowed: usize,
    /// `paced_sent` of `sent`: the share of the requests that went to a paced method.
    #[serde(default)]
    pub paced_share: f64,
    /// `paced_sent` per second of the run: the rate the paced method reached.
    #[serde(default)]
    pub paced_per_second: f64,
    /// The response classes reached and how the map grew (`coverage.rs`).
    #[serde(default)]
    pub coverage: coverage::CoverageMap,
    /// Requests sent by the shrinker.
    pub shrink_requests: usize,
    /// Distinct failures, shrunk: the single requests' (by first index), then the stateful
    /// sequences' (by sequence number).
    pub findings: Vec<FuzzFinding>,
    /// Failed requests in all, before grouping.
    pub failed_requests: usize,
    /// The run timeout stopped the run before every generated request was sent.
    pub timed_out: bool,
    /// Why the run was interrupted (a signal), if it was.
    pub interrupted: Option<String>,
    /// Why the run could not happen at all (the target unreachable at its first call): a
    /// harness error, not a finding; the report is written so every exit leaves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the generated requests (logins included, shrinking excluded).
    #[serde(skip)]
    pub elapsed: Duration,
}

impl FuzzReport {
    /// Generated requests per second.
    pub fn requests_per_second(&self) -> f64 {
        self.sent as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Why the run did not do its job, when it did not: it could not start
    /// ([`FuzzReport::error`]) or the target stopped answering.
    pub fn not_done(&self) -> Option<&str> {
        self.error.as_deref().or_else(|| {
            self.interrupted
                .as_deref()
                .filter(|reason| harness_runner::run::stopped_answering(reason))
        })
    }

    /// Moves the sequences' findings of a report of before the one findings list (read
    /// under `stateful`) into `findings`, after the single requests', where it holds them.
    pub(crate) fn gather_older_findings(&mut self) {
        self.findings.append(&mut self.stateful.older_findings);
    }

    /// Whether the run stopped because the target stopped answering (`run::Breaker`).
    pub fn target_stopped_answering(&self) -> bool {
        self.interrupted
            .as_deref()
            .is_some_and(harness_runner::run::stopped_answering)
    }
}

/// Why the fuzzer could not do its job.
#[derive(Debug)]
pub enum FuzzError {
    /// The target did not answer the first health call at all.
    Unreachable(String),
    /// The target file lacks something the fuzzer needs.
    Target(String),
    /// A case file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl fmt::Display for FuzzError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FuzzError::Unreachable(message) => write!(f, "target unreachable: {message}"),
            FuzzError::Target(message) => write!(f, "target file: {message}"),
            FuzzError::Write { path, .. } => write!(f, "failed to write {}", path.display()),
        }
    }
}

impl std::error::Error for FuzzError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FuzzError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}
