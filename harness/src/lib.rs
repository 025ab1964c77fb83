//! A conformance test harness and fuzzing suite for the derivatives-trading JSON-RPC API
//! (interface version 2.1.1).
#![warn(missing_docs)]

pub mod auth;
pub mod case;
pub mod check;
pub mod conformance;
pub mod corpus;
pub mod diff;
pub mod expect;
pub mod file_error;
pub mod fuzz;
pub mod jsonrpc;
pub mod judge;
pub mod proxy;
pub mod report;
pub mod run;
pub mod selftest;
pub mod serve;
pub mod spec;
pub mod target_file;
pub mod token_bucket;
pub mod transport;
