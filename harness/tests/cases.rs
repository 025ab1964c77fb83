//! Every case file as its own test, once per transport, against the embedded reference
//! server on a loopback port (real HTTP and WebSocket). Works under `cargo test` and
//! `cargo nextest`; filter and list as usual (`cargo test --test cases -- auth.`).
//!
//! Parallel cases share one server. A `serial` case changes state other cases could see,
//! so it gets a fresh server of its own.
//!
//! Each passing execution's responses are also an insta snapshot in `snapshots/`
//! (volatile values replaced, see `harness::report::snapshot_of`): review changes with
//! `cargo insta review`; CI fails on unreviewed drift.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use harness::auth::clock::Clock;
use harness::case::{self, Case, TransportKind};
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::report;
use harness::run::{self, CaseResult};
use harness::serve;
use libtest_mimic::{Arguments, Failed, Trial};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    shared: harness::target_file::Target,
    catalog: Arc<Catalog>,
    schemas: Arc<SchemaSet>,
}

fn config(fixture: &Fixture, target: harness::target_file::Target) -> run::Config {
    run::Config {
        target,
        cases: Vec::new(),
        catalog: fixture.catalog.clone(),
        schemas: fixture.schemas.clone(),
        transports: None,
        filter: None,
        concurrency: 1,
        limits: harness::transport::RequestLimits::default(),
        run_timeout: Duration::from_secs(60),
    }
}

fn check(fixture: &Fixture, case: &Case, transport: TransportKind) -> Result<(), Failed> {
    let result: CaseResult = fixture.runtime.block_on(async {
        if case.serial {
            let running = serve::start(serve::Config::loopback())
                .await
                .map_err(|error| error.to_string())?;
            let result = run::run_one(&config(fixture, running.target()), case, transport)
                .await
                .map_err(|error| error.to_string());
            running.shutdown().await;
            result
        } else {
            run::run_one(&config(fixture, fixture.shared.clone()), case, transport)
                .await
                .map_err(|error| error.to_string())
        }
    })?;
    match result.verdict {
        Verdict::Pass | Verdict::Info => {
            let redactor = harness::check::Redactor::new(fixture.shared.secrets());
            let snapshot = report::snapshot_of(&result, &redactor, Clock::system().now_ms());
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots"));
            settings.set_prepend_module_to_snapshot(false);
            settings.set_omit_expression(true);
            let name = report::snapshot_name(&result);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                settings.bind(|| insta::assert_json_snapshot!(name.as_str(), snapshot));
            }))
            .map_err(|_| Failed::from(format!("snapshot {name} differs from snapshots/{name}.snap: review with `cargo insta review`")))
        }
        verdict => {
            let findings: Vec<String> = result
                .findings
                .iter()
                .map(|finding| {
                    format!(
                        "  {} [{}]: {}",
                        finding.verdict,
                        finding.clauses.join(", "),
                        finding.message
                    )
                })
                .collect();
            Err(format!("{verdict}: {}\n{}", result.message, findings.join("\n")).into())
        }
    }
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).expect("clause catalog loads");
    let schemas = SchemaSet::load(&root.join("schemas")).expect("schemas load");
    let cases = case::discover(&root, &catalog, &schemas).unwrap_or_else(|error| panic!("{error}"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let running = runtime
        .block_on(serve::start(serve::Config::loopback()))
        .expect("reference server starts");
    let fixture = Arc::new(Fixture {
        shared: running.target(),
        runtime,
        catalog: Arc::new(catalog),
        schemas: Arc::new(schemas),
    });
    let mut trials = Vec::new();
    // Every snapshot file belongs to a (case, transport) of the corpus: a renamed or deleted
    // case must take its snapshot with it. (cargo-insta's own unreferenced check does not
    // look outside the package, and `snapshots/` sits at the workspace root.)
    let expected: std::collections::BTreeSet<String> = cases
        .iter()
        .flat_map(|case| {
            case.transports
                .iter()
                .map(move |transport| format!("{}__{transport}.snap", case.id))
        })
        .collect();
    trials.push(Trial::test("snapshots_have_no_orphans", move || {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots");
        let mut orphans: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|error| format!("failed to read {}: {error}", dir.display()))?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".snap") && !expected.contains(name))
            .collect();
        orphans.sort();
        if orphans.is_empty() {
            Ok(())
        } else {
            Err(format!("snapshots without a case: {}", orphans.join(", ")).into())
        }
    }));
    for case in cases {
        let case = Arc::new(case);
        for &transport in &case.transports {
            let (fixture, case) = (fixture.clone(), case.clone());
            trials.push(Trial::test(
                format!("{} [{transport}]", case.id),
                move || check(&fixture, &case, transport),
            ));
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(running);
    conclusion.exit_code()
}
