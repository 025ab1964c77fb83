//! Every case file as its own test, once per transport, against the embedded reference
//! server on a loopback port (real HTTP and WebSocket). Works under `cargo test` and
//! `cargo nextest`; filter and list as usual (`cargo test --test cases -- auth.`).
//!
//! The trials come from `harness::conformance`, as a server crate's would. Parallel cases
//! share one server. A `serial` case changes state other cases could see, so it gets a
//! fresh server of its own.
//!
//! Each passing execution's responses are also an insta snapshot in `snapshots/`
//! (volatile values replaced, see `harness::report::snapshot_of`): review changes with
//! `cargo insta review`; CI fails on unreviewed drift.

use std::path::Path;

use harness::auth::clock::Clock;
use harness::case;
use harness::check::{Catalog, Redactor, SchemaSet};
use harness::conformance::{self, Suite, TargetSource};
use harness::report;
use harness::results::CaseResult;
use harness::serve;
use harness::target_file::Target;
use libtest_mimic::{Failed, Trial};

/// A passing execution's responses match its committed snapshot.
fn snapshot_matches(result: &CaseResult, target: &Target) -> Result<(), Failed> {
    let redactor = Redactor::new(target.secrets());
    let snapshot = report::snapshot_of(result, &redactor, Clock::system().now_ms());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let name = report::snapshot_name(result);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_json_snapshot!(name.as_str(), snapshot));
    }))
    .map_err(|_| {
        Failed::from(format!(
            "snapshot {name} differs from snapshots/{name}.snap: review with `cargo insta review`"
        ))
    })
}

fn main() -> std::process::ExitCode {
    // Eight trials at once, not one per core: they mostly wait.
    let args = conformance::arguments();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).expect("clause catalog loads");
    let schemas = SchemaSet::load(&root.join("schemas")).expect("schemas load");
    let cases = case::discover(&root, &catalog, &schemas).unwrap_or_else(|error| panic!("{error}"));
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
    // The same trials a server crate gets from `harness::conformance`, against the
    // reference server, each passing one also checked against its snapshot.
    let mut suite = Suite::new(TargetSource::Launched(std::sync::Arc::new(
        serve::ServeConfig::loopback(),
    )));
    suite.corpus = harness::corpus::CorpusSource {
        dir: Some(root),
        added: Vec::new(),
    };
    suite.on_pass = Some(std::sync::Arc::new(snapshot_matches));
    suite.skips_fail = true;
    trials.extend(suite.trials());
    libtest_mimic::run(&args, trials).exit_code()
}
