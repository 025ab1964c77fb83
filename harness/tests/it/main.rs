//! The one integration test binary: one module per feature.

mod bounded;
mod cli;
mod conformance;
mod diff;
mod domains;
mod events;
mod events_fold;
mod expect;
mod faults;
mod field;
mod fuzz;
mod fuzz_shard;
mod fuzz_state;
mod fuzz_targets;
mod hostile;
mod independence;
mod install;
mod interrupt;
mod judge;
mod lint;
mod load;
mod openapi;
mod pipe;
mod proxy;
mod quotes;
mod redteam;
mod safety;
mod serve;
mod tidy;
mod tls;
mod trace;
mod vacuous;
mod variants;

/// The results of a run that failed or erred, as `case [transport]: message`.
fn failed_results(report: &harness::results::RunReport) -> Vec<String> {
    report
        .results
        .iter()
        .filter(|result| {
            matches!(
                result.verdict,
                harness::check::Verdict::Fail | harness::check::Verdict::Error
            )
        })
        .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
        .collect()
}
