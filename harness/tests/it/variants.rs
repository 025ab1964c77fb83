//! The false-failure matrix's wiring: the suite, `harness fuzz` and judge self-play find
//! nothing against the narrowest and the widest server SPEC.md allows; between them these
//! two rows take each open point both ways. Each variant alone, and all at once, is
//! `harness selftest --matrix variants`, which `.ci/run` runs and which exits 1 on a false
//! failure. The fault matrix (`faults.rs`) proves every check can fail; this
//! proves none fails a server that SPEC.md allows.

use std::path::Path;
use std::sync::Arc;

use harness::case;
use harness::check::{Catalog, Level, SchemaSet};
use harness::selftest::{self, VariantPlan};
use harness::serve::{Extreme, Variant};
use harness::spec::{OPEN_POINTS, OpenPoint};

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -- --include-ignored)"]
fn no_check_fails_any_spec_open_variant() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&root.join("schemas")).unwrap();
    let config = selftest::SelftestConfig {
        cases: case::discover(&root, &catalog, &schemas).unwrap(),
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
        concurrency: 16,
        faults: Vec::new(),
    };
    // The extremes, one fuzz seed with a smaller budget: `harness selftest` runs every row
    // of `VariantPlan::full` with two seeds of 2,000 requests.
    let rows: Vec<Vec<Variant>> = Extreme::ALL.map(Extreme::variants).to_vec();
    let plan = VariantPlan {
        rows,
        fuzz_seeds: vec![1],
        fuzz_requests: 300,
        ..VariantPlan::full()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let matrix = runtime
        .block_on(selftest::variant_matrix(
            &config,
            &plan,
            &selftest::MatrixSink::none(),
        ))
        .unwrap();
    println!("{}", matrix.to_text());
    assert_eq!(matrix.rows.len(), 2);
    let names: Vec<String> = matrix.rows.iter().map(|row| row.name()).collect();
    assert!(names.contains(&"narrowest".to_owned()) && names.contains(&"widest".to_owned()));
    let false_failures: Vec<String> = matrix
        .rows
        .iter()
        .flat_map(|row| {
            let name = row.name();
            row.describe()
                .into_iter()
                .map(move |line| format!("{name}: {line}"))
        })
        .collect();
    assert_eq!(
        false_failures,
        Vec::<String>::new(),
        "checks failed a server SPEC.md allows"
    );
}

/// A `must` clause admits two readings where its quoted words are (or hold) the passage an
/// open point cites: each such point is taken one way by the narrowest server and the
/// other way by the widest, so both readings run in the false-failure matrix.
#[test]
fn every_must_clause_that_admits_two_readings_is_taken_both_ways_by_the_extremes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let words = |text: &str| {
        text.replace(['`', '|'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let switched_on = |extreme: Extreme, point: &OpenPoint| -> Option<&'static str> {
        let variants = extreme.variants();
        point
            .alternatives
            .iter()
            .map(|(name, _)| *name)
            .find(|name| variants.iter().any(|variant| variant.name() == *name))
    };
    let mut two_readings = Vec::new();
    for clause in catalog.iter().filter(|clause| clause.level == Level::Must) {
        for quote in clause.quote.iter().map(|quote| words(quote)) {
            for point in OPEN_POINTS {
                let passage = words(point.passage);
                if !(passage.contains(&quote) || quote.contains(&passage)) {
                    continue;
                }
                two_readings.push(format!("{} ~ {}", clause.id, point.id));
                assert_ne!(
                    switched_on(Extreme::Narrowest, point),
                    switched_on(Extreme::Widest, point),
                    "{}: {} is read alike by both extremes",
                    clause.id,
                    point.id
                );
            }
        }
    }
    println!("{}", two_readings.join("\n"));
    assert!(two_readings.len() >= 5, "{two_readings:?}");
}
