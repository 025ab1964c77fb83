//! The protocol and spec core of the harness for the derivatives-trading JSON-RPC API
//! (interface version 2.1.1): the facts of SPEC.md (`spec`), the JSON-RPC envelope
//! (`jsonrpc`), credentials and signatures (`auth`), the wire's record types (`wire`), the
//! token bucket every pacer uses, and the `path:line: message` error of every input file.
//!
//! Nothing here does I/O or knows a case, a target or a server: every other crate of the
//! workspace builds on it.
#![warn(missing_docs)]

pub mod auth;
pub mod file_error;
pub mod jsonrpc;
pub mod spec;
pub mod token_bucket;
pub mod wire;
