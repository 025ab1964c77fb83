//! The plan of a run's paced calls, checked without a server: a bounded walk's pages, a
//! request sent once, the budget's skips and where `account = "any"` goes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use harness_model::check::{Catalog, SchemaSet};
use harness_model::target_file::Target;

const PACED: &str = "private/get_transaction_log";

/// A target pacing at 1 per second with burst 1 per account, with `accounts`.
fn target(accounts: &[&str]) -> Target {
    let mut text = String::from(
        "name = \"t\"\nbase_url = \"http://127.0.0.1:1/api/v2\"\nws_url = \"ws://127.0.0.1:1/ws/api/v2\"\n",
    );
    for account in accounts {
        text.push_str(&format!(
            "[accounts.{account}]\nclient_id = \"{account}\"\nclient_secret = \"secret-{account}\"\n"
        ));
    }
    text.push_str("[limits]\ntransaction_log_per_second = 1.0\ntransaction_log_burst = 1\n");
    Target::parse(Path::new("target.toml"), &text, &|_| None).expect("test target parses")
}

fn case(id: &str, steps: &str) -> Case {
    let text = format!(
        "id = \"{id}\"\ntitle = \"t\"\nclauses = [\"x\"]\ntransports = [\"http-query\"]\n{steps}"
    );
    toml::from_str(&text).expect("test case parses")
}

fn call(count: u32, account: &str) -> String {
    format!(
        "[[step]]\ncall = \"{PACED}\"\nparams = {{ currency = \"BTC\", start_timestamp = 0, end_timestamp = \"{{{{now_ms}}}}\", count = {count} }}\nauth = {{ mode = \"bearer\", account = \"{account}\" }}\n"
    )
}

/// A call that judges what the page holds (at most `count` entries): it reads a history.
fn read(count: u32, account: &str) -> String {
    call(count, account).replace(
        "auth = {",
        &format!(
            "expect = {{ match = [{{ path = \"result.logs\", len_max = {count} }}] }}\nauth = {{"
        ),
    )
}

const WALK: &str = "[[step]]\nauth = { mode = \"bearer\", account = \"main\" }\n[step.walk]\ncall = \"private/get_transaction_log\"\nparams = { currency = \"BTC\", start_timestamp = 0, end_timestamp = \"{{now_ms}}\" }\nitems = \"logs\"\ncount = 20\ncompare_count = 250\nkey = \"id\"\ntimestamp = \"timestamp\"\nwindow = { start = \"start_timestamp\", end = \"end_timestamp\", entries = 30 }\n";

fn config(cases: Vec<Case>, accounts: &[&str]) -> RunConfig {
    let schemas = SchemaSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/schemas"))
        .expect("schemas load");
    RunConfig::new(
        target(accounts),
        cases,
        Arc::new(Catalog::default()),
        Arc::new(schemas),
    )
}

#[test]
fn a_bounded_walk_is_a_few_pages_and_its_probe_is_the_same_request_as_a_call() {
    let cases = vec![case("c.max", &call(250, "main")), case("c.walk", WALK)];
    let plan = paced_plan(&config(cases.clone(), &["main"]));
    // count 250 once (the walk's probe is the same request), two pages of 20, one of 250.
    assert_eq!(plan.calls(), 4, "{plan}");
    assert_eq!(plan.open_walks, 0);
    assert_eq!(
        plan.duration,
        Duration::from_secs_f64(3.0 * pace::PACING_MARGIN)
    );
    let full = paced_plan(&RunConfig {
        full_walks: true,
        ..config(cases, &["main"])
    });
    assert_eq!(full.open_walks, 1);
    assert!(
        full.to_string().contains("1 walks read the whole history"),
        "{full}"
    );
}

#[test]
fn a_budget_skips_what_does_not_fit_with_the_reason() {
    let cases = vec![
        case("c.one", &call(1, "main")),
        case("c.two", &call(2, "main")),
        case("c.three", &call(3, "main")),
    ];
    let plan = paced_plan(&RunConfig {
        paced_budget: Some(Duration::from_secs(1)),
        ..config(cases, &["main"])
    });
    // The first call is the burst, the second waits 1.05 s: over a budget of 1 s.
    assert_eq!(plan.calls(), 1, "{plan}");
    assert_eq!(plan.skipped.len(), 2);
    let reason = &plan.skipped[&("c.two".to_owned(), TransportKind::HttpQuery)];
    assert!(reason.contains("--paced-budget-s 1"), "{reason}");
    assert!(
        plan.to_string().contains("2 executions do not fit"),
        "{plan}"
    );
}

#[test]
fn any_account_goes_where_the_budget_has_room() {
    let cases = vec![
        case("c.main", &format!("{}{}", call(1, "main"), call(2, "main"))),
        case("c.any1", &read(3, "any")),
        case("c.any2", &read(4, "any")),
    ];
    let plan = paced_plan(&config(cases.clone(), &["main", "sub", "two_factor"]));
    let on = |id: &str| plan.accounts[&(id.to_owned(), TransportKind::HttpQuery)].clone();
    // Main has two calls, the two-factor account none: both go there; never to the sub.
    assert_eq!(on("c.any1"), "two_factor");
    assert_eq!(on("c.any2"), "two_factor");
    assert_eq!(plan.by_budget.get("main"), Some(&2));
    assert_eq!(plan.by_budget.get("sub"), None);
    // Without other accounts, everything is main's.
    let alone = paced_plan(&config(cases, &["main"]));
    assert_eq!(alone.by_budget.get("main"), Some(&4));
}

#[test]
fn a_refusal_or_a_bare_acceptance_may_go_as_the_sub_a_read_may_not() {
    let refusal =
        call(251, "any").replace("auth = {", "expect = { outcome = \"error\" }\nauth = {");
    let cases = vec![
        case("c.main", &call(1, "main")),
        case(
            "c.two",
            &format!("{}{}", call(2, "two_factor"), call(3, "two_factor")),
        ),
        case("c.read", &read(3, "any")),
        case("c.refusal", &refusal),
        case("c.accepted", &call(1, "any")),
    ];
    let plan = paced_plan(&config(cases, &["main", "sub", "two_factor"]));
    let on = |id: &str| plan.accounts[&(id.to_owned(), TransportKind::HttpQuery)].clone();
    // The read goes first (it has the fewest accounts to go on): main, the emptier of its
    // two; then the others fill the sub.
    assert_eq!(on("c.read"), "main");
    assert_eq!(on("c.refusal"), "sub");
    assert_eq!(on("c.accepted"), "sub", "{:?}", plan.by_budget);
}

#[test]
fn roles_with_one_client_id_are_one_budget_in_the_plan() {
    let mut config = config(
        vec![
            case("c.two", &call(1, "two_factor")),
            case("c.nda", &call(2, "no_direct_access")),
        ],
        &["main", "two_factor", "no_direct_access"],
    );
    let same = config.target.accounts["two_factor"].client_id.clone();
    if let Some(account) = config.target.accounts.get_mut("no_direct_access") {
        account.client_id = same;
    }
    let plan = paced_plan(&config);
    assert_eq!(plan.by_budget.get("two_factor"), Some(&2), "{plan}");
    assert_eq!(plan.by_budget.get("no_direct_access"), None, "{plan}");
}

#[test]
fn an_expiry_walk_is_a_page_for_each_option_of_the_pool() {
    let walk = "needs = { fixtures = [\"expired_otm_option\"] }\n[[step]]\nauth = { mode = \"bearer\", account = \"main\" }\n[step.walk]\ncall = \"private/get_transaction_log\"\nparams = { currency = \"{{fixtures.expired_otm_option.currency}}\", start_timestamp = 0, end_timestamp = \"{{now_ms}}\" }\nitems = \"logs\"\ncount = 250\nkey = \"id\"\nexpiry_of = \"{{fixtures.expired_otm_option.instrument_name}}\"\nwindow = { start = \"start_timestamp\", end = \"end_timestamp\", around = \"{{fixtures.expired_otm_option.expired_at}}\" }\n";
    let mut config = config(vec![case("c.expiry", walk)], &["main"]);
    let option = |name: &str, currency: &str| harness_model::target_file::ExpiredOption {
        instrument_name: name.to_owned(),
        currency: currency.to_owned(),
        expired_at: Some(1_738_310_400_000),
    };
    config.target.fixtures.expired_otm_option = Some(option("BTC-31JAN25-100000-C", "BTC"));
    assert_eq!(paced_plan(&config).calls(), 1);
    config.target.fixtures.expired_otm_options = vec![
        option("ETH-31JAN25-4000-C", "ETH"),
        option("BTC-28MAR25-90000-P", "BTC"),
    ];
    let plan = paced_plan(&config);
    assert_eq!(plan.calls(), 3, "{plan}");
    assert_eq!(plan.open_walks, 0);
}

#[test]
fn a_token_the_step_gives_is_planned_on_its_account_and_the_main_account_as_the_pacer_charges_it() {
    // SPEC.md 8 does not say whose budget an exchanged token's calls count against: the
    // pacer charges both the step's account and main, and so must the plan, or the main
    // account's lane runs past the plan's estimate.
    let given = call(5, "sub").replace(
        "account = \"sub\" }",
        "account = \"sub\", token = \"{{exchanged}}\" }",
    );
    let plan = paced_plan(&config(
        vec![case("c.given", &given), case("c.main", &call(6, "main"))],
        &["main", "sub"],
    ));
    assert_eq!(plan.by_budget.get("sub"), Some(&1), "{plan}");
    assert_eq!(plan.by_budget.get("main"), Some(&2), "{plan}");
}
