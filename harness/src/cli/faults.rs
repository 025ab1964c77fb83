//! `harness faults`: the reference server's fault switches, one per line.

use harness_server::serve::Fault;

use super::{CliError, exit};

pub(crate) fn list() -> Result<u8, CliError> {
    let width = Fault::ALL
        .iter()
        .map(|fault| fault.name().len())
        .max()
        .unwrap_or(0);
    for fault in Fault::ALL {
        outln!("{:width$}  {}", fault.name(), fault.description());
    }
    Ok(exit::PASS)
}
