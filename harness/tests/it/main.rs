//! The one integration test binary: one module per feature.

mod cli;
mod faults;
mod hostile;
mod safety;
mod serve;
