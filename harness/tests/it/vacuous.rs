//! A rule of every entry of a list (a matcher on `[*]`, a walk's `each`) checks nothing on
//! an answer whose list is empty: the execution notes it, and the clause the matcher names
//! is not counted as checked by it, so coverage does not claim a rule an empty history
//! could not show.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use harness::case;
use harness::check::{Catalog, SchemaSet, Verdict};
use harness::run;
use harness::serve;
use harness::wire::TransportKind;

const WAIT: Duration = Duration::from_secs(120);

/// A read of the transaction log over `window` (start, end), every entry held to the
/// subaccount's user id.
fn case_over(window: (u64, &str), catalog: &Catalog, schemas: &SchemaSet) -> case::Case {
    let text = format!(
        "id = \"vacuous.subaccount\"\ntitle = \"t\"\nclauses = [\"m.get_transaction_log.subaccount\", \"m.get_transaction_log.result\"]\ntransports = [\"http-query\"]\nneeds = {{ fixtures = [\"currency\", \"subaccount_id\"] }}\n\n[[step]]\ncall = \"private/get_transaction_log\"\nparams = {{ currency = \"{{{{fixtures.currency}}}}\", subaccount_id = \"{{{{fixtures.subaccount_id}}}}\", start_timestamp = {}, end_timestamp = {}, count = 10 }}\nauth = {{ mode = \"bearer\" }}\nexpect = {{ match = [{{ path = \"result.logs[*].user_id\", equals = \"{{{{fixtures.subaccount_id}}}}\", clauses = [\"m.get_transaction_log.subaccount\"] }}] }}\n",
        window.0, window.1
    );
    case::parse_case(Path::new("vacuous.toml"), &text, catalog, schemas).expect("case parses")
}

/// A walk of the transaction log over `window` (start, end), every entry of every page held
/// to the subaccount's user id.
fn walk_over(window: (u64, &str), catalog: &Catalog, schemas: &SchemaSet) -> case::Case {
    let text = format!(
        "id = \"vacuous.walk\"\ntitle = \"t\"\nclauses = [\"m.get_transaction_log.subaccount\", \"m.get_transaction_log.continuation\"]\ntransports = [\"http-query\"]\nneeds = {{ fixtures = [\"currency\", \"subaccount_id\"] }}\n\n[[step]]\nauth = {{ mode = \"bearer\" }}\n[step.walk]\ncall = \"private/get_transaction_log\"\nparams = {{ currency = \"{{{{fixtures.currency}}}}\", subaccount_id = \"{{{{fixtures.subaccount_id}}}}\", start_timestamp = {}, end_timestamp = {} }}\nitems = \"logs\"\ncursor = \"continuation\"\ncount = 20\nkey = \"id\"\neach = [{{ path = \"user_id\", equals = \"{{{{fixtures.subaccount_id}}}}\", clauses = [\"m.get_transaction_log.subaccount\"] }}]\n",
        window.0, window.1
    );
    case::parse_case(Path::new("vacuous.toml"), &text, catalog, schemas).expect("case parses")
}

/// Runs `case` over HTTP: it passes, and the subaccount rule counts as checked unless
/// `unchecked_note` is given, which a note must then hold.
async fn assert_checked(config: &run::RunConfig, case: &case::Case, unchecked_note: Option<&str>) {
    let rule = "m.get_transaction_log.subaccount".to_owned();
    let result = tokio::time::timeout(WAIT, run::run_one(config, case, TransportKind::HttpQuery))
        .await
        .expect("in time")
        .expect("runs");
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.message);
    assert_eq!(
        result.checks.contains(&rule),
        unchecked_note.is_none(),
        "{:?}",
        result.checks
    );
    if let Some(note) = unchecked_note {
        assert!(
            result.notes.iter().any(|noted| noted.contains(note)),
            "{:?}",
            result.notes
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_of_every_entry_is_not_counted_as_checked_on_an_empty_list() {
    let cases_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&cases_dir.join("clauses.toml")).expect("catalog loads");
    let schemas = SchemaSet::load(&cases_dir.join("schemas")).expect("schemas load");
    let running = tokio::time::timeout(WAIT, serve::start(serve::ServeConfig::loopback()))
        .await
        .expect("in time")
        .expect("reference starts");
    let full = case_over((0, "\"{{now_ms}}\""), &catalog, &schemas);
    let empty = case_over((0, "1"), &catalog, &schemas);
    let walked = walk_over((0, "\"{{now_ms}}\""), &catalog, &schemas);
    let empty_walk = walk_over((0, "1"), &catalog, &schemas);
    let config = run::RunConfig {
        run_timeout: WAIT,
        ..run::RunConfig::new(
            running.target(),
            Vec::new(),
            Arc::new(catalog),
            Arc::new(schemas),
        )
    };
    // The whole history: entries to hold, and the rule counts as checked. The first
    // millisecond of 1970: no entry, nothing of the rule checked, and a note says so. The
    // same of a walk's entries, page after page.
    assert_checked(&config, &full, None).await;
    assert_checked(&config, &empty, Some("result.logs[*].user_id not checked")).await;
    assert_checked(&config, &walked, None).await;
    assert_checked(&config, &empty_walk, Some("its pages hold no entries")).await;
    running.shutdown().await;
}
