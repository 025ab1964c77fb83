//! The fault matrix: the suite passes the clean reference server, catches every seeded
//! fault with a failing case that cites a clause the fault breaks, and every server `must`
//! clause of the catalog can be made to fail by some fault.

use std::path::Path;
use std::sync::Arc;

use harness::case;
use harness::check::{Catalog, SchemaSet};
use harness::selftest::{self, FaultMatrix};

fn matrix() -> FaultMatrix {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let cases = case::discover(&root, &catalog, &schemas).unwrap();
    let config = selftest::Config {
        cases,
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
        concurrency: 16,
        faults: Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(selftest::fault_matrix(&config, |_| {}))
        .unwrap()
}

#[test]
fn fault_matrix_kills_every_fault_and_every_must_clause() {
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
    assert_eq!(
        matrix.unkillable,
        Vec::<String>::new(),
        "must clauses no fault makes fail"
    );
    assert!(
        matrix.rows.len() >= 30,
        "at least 30 faults, found {}",
        matrix.rows.len()
    );
}
