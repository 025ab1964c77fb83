//! The conformance suite as the test that judges a mutant of the reference server
//! (cargo-mutants: `.cargo/mutants.toml`, MUTANTS.md): every case file of `cases/`, once
//! per transport, against the in-process reference server (a fresh one for each `serial`
//! case), as `harness/tests/cases.rs` runs them, but judged by the suite's verdicts alone.
//!
//! It sits in this crate, not in `harness`, so that a mutant rebuilds only this crate and
//! links one small test binary; cargo-mutants builds and runs it with
//! `--features conformance --test mutants_suite`.
//!
//! Unlike `tests/cases.rs` it compares no snapshot (a mutant that changes a byte no check
//! reads, such as a token's length or the order of a page SPEC.md leaves open, would
//! otherwise look killed), and a skipped execution is no failure (a mutant that grants a
//! requested scope a refusal case then cannot test is a server SPEC.md allows, and the case
//! says so with a skip). So only a `fail` or `error` verdict kills a mutant: a broken
//! `must` clause, or a request the server did not answer within the runner's request
//! timeout (a hung server).
//!
//! `cargo test -p harness-server --features conformance --test mutants_suite` runs it
//! against the unmutated server, where every trial passes.

use std::path::Path;
use std::sync::Arc;

use harness_model::corpus::CorpusSource;
use harness_runner::conformance::{self, Suite, TargetSource};
use harness_server::serve::ServeConfig;

/// The `get_transaction_log` burst of the server under test: large enough that a walk of
/// one-entry pages (a mutant that shortens pages, which SPEC.md allows) is not paced at one
/// request a second, so the suite still ends in seconds with its verdicts instead of timing
/// out; the rate probe then sends this many requests and more, a second's work.
const BURST: u32 = 2_000;

fn main() -> std::process::ExitCode {
    let args = conformance::arguments();
    let mut server = ServeConfig::loopback();
    server.limits.transaction_log_burst = BURST;
    let mut suite = Suite::new(TargetSource::Launched(Arc::new(server)));
    suite.corpus = CorpusSource {
        dir: Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")),
        added: Vec::new(),
    };
    // A skip is a server SPEC.md allows (the case cannot check it), never a kill.
    suite.skips_fail = false;
    libtest_mimic::run(&args, suite.trials()).exit_code()
}
