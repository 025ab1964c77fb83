//! `harness variants`: the reference server's spec-open variants, each with the SPEC.md
//! passage that leaves its point open.

use harness::serve::Variant;

use super::{CliError, exit};

pub(crate) fn list() -> Result<u8, CliError> {
    for variant in Variant::ALL {
        let point = variant.open_point();
        println!(
            "{}  ({}, SPEC.md {})",
            variant.name(),
            point.id,
            point.section
        );
        println!("    {}", variant.description());
        println!("    open: {}", point.question);
        println!("    SPEC.md: \"{}\"", point.passage);
        println!("    reference: {}", point.reference);
    }
    Ok(exit::PASS)
}
