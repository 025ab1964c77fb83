//! `harness variants`: the reference server's spec-open variants, each with the SPEC.md
//! passage that leaves its point open, then the two extreme servers and what they switch on.

use harness_server::serve::{Extreme, Variant};

use super::{CliError, exit};

pub(crate) fn list() -> Result<u8, CliError> {
    for variant in Variant::ALL {
        let point = variant.open_point();
        outln!(
            "{}  ({}, SPEC.md {})",
            variant.name(),
            point.id,
            point.section
        );
        outln!("    {}", variant.description());
        outln!("    open: {}", point.question);
        outln!("    SPEC.md: \"{}\"", point.passage);
        outln!("    reference: {}", point.reference);
    }
    for extreme in Extreme::ALL {
        let names: Vec<&str> = extreme.variants().into_iter().map(Variant::name).collect();
        outln!(
            "{}  (--variant {0}) = {}",
            extreme.name(),
            names.join(" + ")
        );
    }
    Ok(exit::PASS)
}
