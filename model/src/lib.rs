//! The model of the harness: what the suite is made of and what it produces, without running
//! anything. Case files (`case`) and target files (`target_file`), the clause catalog and the
//! checks that judge an answer (`check`), the embedded or given corpus (`corpus`), known
//! failures (`expect`), the results of a run (`results`), the event stream of a run, a fuzz run
//! and the self-proofs (`events`), the report formats (`report`) and
//! the comparison of two runs (`diff`).
//!
//! No network I/O, no async runtime: the runner and the server crates drive these types.
#![warn(missing_docs)]

pub mod case;
pub mod check;
pub mod corpus;
pub mod diff;
pub mod events;
#[cfg(any(test, feature = "arbitrary"))]
pub mod fuzz_targets;
pub mod known_failures;
pub mod report;
pub mod results;
pub mod target_file;
