//! The one integration test binary: one module per feature.

mod cli;
mod conformance;
mod diff;
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
mod pipe;
mod proxy;
mod quotes;
mod safety;
mod serve;
mod tidy;
mod tls;
mod trace;
mod variants;
