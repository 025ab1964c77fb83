//! The fault matrix's wiring: the suite passes the clean reference server and catches a
//! sample of the seeded faults (every tenth, from the first, and the last), each with a
//! failing case that cites a clause the fault breaks. The whole matrix, every fault and
//! every server `must` clause made to fail by some fault, is `harness selftest --matrix
//! faults`, which `.ci/run` runs and which exits 1 on any miss: it takes minutes, and the
//! sample keeps `cargo test` a command a newcomer waits for gladly.

use std::path::Path;
use std::sync::Arc;

use harness::case;
use harness::check::{Catalog, SchemaSet};
use harness::events::EventSink;
use harness::selftest::{self, FaultMatrix};
use harness::serve::Fault;

/// The faults `cargo test` runs: every tenth, and the last one declared.
fn sample() -> Vec<Fault> {
    let mut sample: Vec<Fault> = Fault::ALL.iter().copied().step_by(10).collect();
    sample.extend(Fault::ALL.last().copied());
    sample.dedup();
    sample
}

fn matrix() -> FaultMatrix {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases = case::discover(&root, &catalog, &schemas).unwrap();
    let config = selftest::SelftestConfig {
        cases,
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
        concurrency: 16,
        faults: sample(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(selftest::fault_matrix(
            &config,
            &EventSink::none(),
            &selftest::MatrixSink::none(),
        ))
        .unwrap()
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn fault_matrix_kills_a_sample_of_the_faults() {
    let matrix = matrix();
    println!("{}", matrix.to_text());
    assert_eq!(
        matrix.clean_failures(),
        Vec::<String>::new(),
        "the clean reference server must pass every case"
    );
    let missed: Vec<&str> = matrix
        .rows
        .iter()
        .filter(|row| !row.killed())
        .map(|row| row.fault.name())
        .collect();
    assert_eq!(
        missed,
        Vec::<&str>::new(),
        "faults not caught by a case citing one of their clauses"
    );
    assert_eq!(matrix.rows.len(), sample().len());
    assert!(
        Fault::ALL.len() >= 30,
        "at least 30 faults, found {}",
        Fault::ALL.len()
    );
}
