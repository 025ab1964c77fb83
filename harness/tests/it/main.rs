//! The one integration test binary: one module per feature.

mod serve;
