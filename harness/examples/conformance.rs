//! The conformance suite as `cargo test` trials, the way a server crate uses it.
//!
//! A server crate adds `harness-runner` (with its `conformance` feature) and `libtest-mimic`
//! as dev-dependencies, and `tests/conformance.rs` with `harness = false` in its `[[test]]`
//! section; its `main` is the last three lines below. It builds no HTTP server, command line
//! or progress bar of the harness: those are `harness-server` and `harness`.
//! Here the server under test is the embedded reference server, started first and
//! described by the target file it writes, as a team's own server would be.
//!
//! ```sh
//! cargo run --example conformance                 # every case, one trial per transport
//! cargo run --example conformance -- auth. --list # the usual libtest arguments
//! ```

use std::process::ExitCode;

use harness_runner::conformance::{self, TargetSource};

fn main() -> ExitCode {
    // Your server: start it (or let CI start it) and describe it in a target file.
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let server = runtime
        .block_on(harness::serve::start(
            harness::serve::ServeConfig::loopback(),
        ))
        .expect("the reference server starts on a loopback port");
    let target_file = std::env::temp_dir().join(format!("conformance-{}.toml", std::process::id()));
    std::fs::write(&target_file, server.target().to_toml()).expect("target file written");

    // The whole of a server crate's `tests/conformance.rs`:
    let args = conformance::arguments();
    let trials = conformance::trials(TargetSource::File(target_file.clone()));
    let conclusion = libtest_mimic::run(&args, trials);

    let _ = std::fs::remove_file(&target_file);
    runtime.block_on(server.shutdown());
    conclusion.exit_code()
}
