//! The one integration test binary: one module per feature.

mod cli;
mod faults;
mod fuzz;
mod hostile;
mod judge;
mod load;
mod quotes;
mod safety;
mod serve;
mod tls;
