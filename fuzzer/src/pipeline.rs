//! One pipeline from failures to findings, for single requests and stateful sequences
//! alike: the failures of a run grouped (one finding per group, its first failure kept and
//! the others counted), each group's first failure shrunk by one loop ([`smallest`]) within
//! the shrink budget and the run timeout, written as a case file, and given back as a
//! [`FuzzFinding`]. What differs between the two kinds (how one is sent and judged, what
//! is smaller, what its case file says) is an [`Input`]: `FuzzRequest`'s in `input.rs`,
//! `Sequence`'s in `state/input.rs`. How the failures are found (the stateless crew and
//! its schedule, the sequences' workers) stays with each kind's run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness_model::check::{Finding, Redactor, SchemaSet};
use harness_model::target_file::Target;

use crate::send::Sender;
use crate::{FoundInput, FuzzConfig, FuzzError, FuzzFinding};

/// What the pipeline sends with and judges by.
pub(crate) struct Context<'a> {
    pub(crate) sender: &'a Sender,
    pub(crate) schemas: &'a SchemaSet,
    pub(crate) redactor: &'a Redactor,
}

/// Something the fuzzer generates, sends, judges, shrinks and writes as a case file: a
/// single request or a stateful sequence. How a run sends them (the stateless crew and
/// its schedule, the sequences' workers) is each kind's own.
pub(crate) trait Input: Clone {
    /// What sending one gives: the verdict on it, and what its case file needs.
    type Run: Clone;
    /// What the candidates of one shrink share (a request's WebSocket session; nothing
    /// for a sequence, whose connections are its own).
    type Session: Default;
    /// The letter of a finding's case file id, `fuzz.s<seed>.<letter><first index>`.
    const LETTER: char;

    /// This shard's part (`FuzzConfig::shard`) of what the seed generates for `budget`
    /// requests, each with its number in the whole run.
    fn generate(config: &FuzzConfig, target: &Target, budget: usize) -> Vec<(usize, Self)>;
    /// The failures one finding stands for: the same clause, for a request of the same
    /// method.
    fn group(&self, failure: &Finding) -> (String, String);
    /// Sends it, its JSON-RPC ids from `id` on, and judges the answers.
    async fn execute(
        &self,
        context: &Context<'_>,
        id: u64,
        session: &mut Self::Session,
    ) -> Self::Run;
    /// Ends the session of a shrink.
    async fn close(session: Self::Session);
    /// The JSON-RPC id of the `tries`th candidate (from 1) of the shrink of finding `number`.
    fn shrink_id(number: usize, tries: usize) -> u64;
    /// The requests `run` sent.
    fn sent(run: &Self::Run) -> usize;
    /// Whether `run` fails the way `failure` did.
    fn fails_again(run: &Self::Run, failure: &Finding) -> bool;
    /// It and its run cut after what failed (a sequence's failing step), or as they are
    /// where nothing follows what failed (a request).
    fn cut(self, run: Self::Run) -> (Self, Self::Run);
    /// Smaller variants of it, most promising first; none larger than it.
    fn candidates(&self) -> Vec<Self>;
    /// The finding reported of the shrunk input: `failure` (a request's, as first seen) or
    /// what the shrunk run failed with (a sequence's); `None` when it no longer fails.
    fn reported(failure: Finding, shrunk: &Self::Run) -> Option<Finding>;
    /// The text of the case file `id` of the shrunk input, with the run it was first
    /// seen failing in and the run of the shrunk one.
    fn case_file(
        &self,
        id: &str,
        runs: (&Self::Run, &Self::Run),
        failure: &Finding,
        context: &Context<'_>,
    ) -> String;
    /// As a finding holds it, generated and shrunk.
    fn found(self, shrunk: Self) -> FoundInput;
}

/// A failed input: its number in the run (a request's index, a sequence's number), the
/// input as sent, its run and the failure.
pub(crate) struct Failed<I: Input> {
    pub(crate) number: usize,
    pub(crate) input: I,
    pub(crate) run: I::Run,
    pub(crate) failure: Finding,
}

/// How much a shrink may send, and until when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) budget: usize,
    pub(crate) deadline: Instant,
}

/// What trying one candidate gave: what takes the place of the smallest so far when it
/// failed the same way, and the requests it sent.
pub(crate) struct Tried<T> {
    pub(crate) kept: Option<T>,
    pub(crate) sent: usize,
}

/// Groups `failed`, shrinks the first failure of each group (up to `max_findings`), writes
/// it as a case file when the run has an `out` directory, and gives back the findings with
/// the requests the shrinking sent.
pub(crate) async fn findings<I: Input>(
    context: &Context<'_>,
    config: &FuzzConfig,
    failed: Vec<Failed<I>>,
) -> Result<(Vec<FuzzFinding>, usize), FuzzError> {
    let groups = group(failed);
    if let Some(dir) = &config.out {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
            path: dir.clone(),
            source,
        })?;
    }
    // All shrinking together gets one more run timeout; none once interrupted.
    let shrink_deadline = Instant::now() + config.run_timeout;
    let (mut findings, mut shrink_requests) = (Vec::new(), 0);
    for (failed, occurrences) in groups.into_iter().take(config.max_findings) {
        let limits = Limits {
            budget: config.shrink_budget,
            deadline: match config.interrupt.reason() {
                Some(_) => Instant::now(),
                None => shrink_deadline,
            },
        };
        let Failed {
            number,
            input,
            run,
            failure,
        } = failed;
        let (shrunk, shrunk_run, sent) = shrink(
            context,
            (input.clone(), run.clone()),
            &failure,
            number,
            limits,
        )
        .await;
        shrink_requests += sent;
        let Some(failure) = I::reported(failure, &shrunk_run) else {
            continue;
        };
        let mut case_file = None;
        if let Some(dir) = &config.out {
            let id = format!("fuzz.s{}.{}{number}", config.seed, I::LETTER);
            let text = shrunk.case_file(&id, (&run, &shrunk_run), &failure, context);
            case_file = Some(write_case_file(dir, &id, &text)?);
        }
        findings.push(FuzzFinding {
            clause: failure.clause().to_owned(),
            message: failure.message,
            first_index: number,
            occurrences,
            input: input.found(shrunk),
            case_file,
        });
    }
    Ok((findings, shrink_requests))
}

/// Writes the case file of finding `id` into `dir` (created when missing), returning its
/// path.
fn write_case_file(dir: &Path, id: &str, text: &str) -> Result<PathBuf, FuzzError> {
    std::fs::create_dir_all(dir).map_err(|source| FuzzError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(format!("{id}.toml"));
    std::fs::write(&path, text).map_err(|source| FuzzError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The first failure of each group (by [`Input::group`]) with how many failed that way,
/// in the order of their numbers.
fn group<I: Input>(failed: Vec<Failed<I>>) -> Vec<(Failed<I>, usize)> {
    let mut groups: BTreeMap<(String, String), (Failed<I>, usize)> = BTreeMap::new();
    for failed in failed {
        groups
            .entry(failed.input.group(&failed.failure))
            .and_modify(|group| group.1 += 1)
            .or_insert((failed, 1));
    }
    let mut groups: Vec<_> = groups.into_values().collect();
    groups.sort_by_key(|(failed, _)| failed.number);
    groups
}

/// Shrinks `failing` (which failed with `failure`) within `limits`: cut after what
/// failed, then the [`smallest`] of its candidates that still fails the same way. Gives
/// back the shrunk input, its run, and the requests sent.
async fn shrink<I: Input>(
    context: &Context<'_>,
    failing: (I, I::Run),
    failure: &Finding,
    number: usize,
    limits: Limits,
) -> (I, I::Run, usize) {
    let (start, mut best_run) = failing.0.cut(failing.1);
    let mut session = I::Session::default();
    let mut tries = 0;
    let (best, sent) = smallest(
        start,
        I::candidates,
        async |candidate: I| {
            tries += 1;
            let id = I::shrink_id(number, tries);
            let run = candidate.execute(context, id, &mut session).await;
            let sent = I::sent(&run);
            let kept = I::fails_again(&run, failure).then(|| {
                let (kept, run) = candidate.cut(run);
                best_run = run;
                kept
            });
            Tried { kept, sent }
        },
        limits,
    )
    .await;
    I::close(session).await;
    (best, best_run, sent)
}

/// The smallest input `candidates` lead to from `start` that `try_one` keeps: passes over
/// the candidates of the smallest so far, each kept one taking its place (the pass going on
/// at the same place among the new one's candidates), until a pass keeps none or the
/// requests sent reach the budget or the deadline passes. Gives it back with the requests
/// sent. Pure but for what `try_one` does.
pub(crate) async fn smallest<T>(
    start: T,
    candidates: impl Fn(&T) -> Vec<T>,
    mut try_one: impl AsyncFnMut(T) -> Tried<T>,
    limits: Limits,
) -> (T, usize) {
    let (mut best, mut sent) = (start, 0);
    loop {
        let (mut place, mut kept_any) = (0, false);
        while let Some(candidate) = candidates(&best).into_iter().nth(place) {
            if sent >= limits.budget || Instant::now() > limits.deadline {
                return (best, sent);
            }
            let tried = try_one(candidate).await;
            sent += tried.sent;
            match tried.kept {
                Some(kept) => {
                    best = kept;
                    kept_any = true;
                }
                None => place += 1,
            }
        }
        if !kept_any {
            return (best, sent);
        }
    }
}

#[cfg(test)]
mod tests;
