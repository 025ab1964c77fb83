//! The server side of the harness: the embedded reference server with its seeded faults and
//! spec-open variants (`serve`), the judge of a client's requests (`judge`), and the
//! recording proxy that judges both sides of a live session (`proxy`).
#![warn(missing_docs)]

pub mod judge;
pub mod proxy;
pub mod serve;
