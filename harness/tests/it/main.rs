//! The one integration test binary: one module per feature.

mod cli;
mod faults;
mod fuzz;
mod fuzz_shard;
mod hostile;
mod judge;
mod load;
mod safety;
mod serve;
