//! The runner of the harness: the client transports (`transport`: HTTP, WebSocket, TLS,
//! proxies), the executor of case files against a target (`run`; the live fuzzer, the
//! `harness-fuzz` crate above this one, sends its steps unjudged through it), and the suite
//! as `cargo test` trials of a server crate (`conformance`, behind the feature of that name).
//!
//! It is what a server team links into its own tests: it builds no HTTP server, no command
//! line and no progress bars (the reference server is `harness-server`, the binary `harness`).
#![warn(missing_docs)]

#[cfg(feature = "conformance")]
pub mod conformance;
pub mod run;
pub mod transport;
