//! A conformance test harness and fuzzing suite for the derivatives-trading JSON-RPC API
//! (interface version 2.1.1).
//!
//! This crate is the `harness` binary and a facade over the workspace's crates, as the
//! `grep` crate is over ripgrep's: `harness::run` is `harness_runner::run`, and so on. A
//! server team that only wants the suite in its own `cargo test` depends on
//! `harness-runner` (see `harness_runner::conformance`), which builds no server, command line
//! or progress bar. The one module of its own is `selftest`, the proofs that every check
//! can fail and that no spec-open choice of a server fails it.
#![warn(missing_docs)]

pub use harness_fuzz as fuzz;
pub use harness_model::{
    case, check, corpus, diff, events, known_failures, report, results, target_file,
};
pub use harness_protocol::{auth, file_error, jsonrpc, spec, token_bucket, wire};
pub use harness_runner::{conformance, run, transport};
pub use harness_server::{judge, proxy, serve};

pub mod selftest;
