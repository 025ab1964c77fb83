//! The skip policy: whether an execution runs, decided before anything is sent.
//!
//! A case is skipped, with the reason, when it changes server state and the target file
//! does not allow it (`needs.destructive`, or a state-changing method called without saying
//! so), or when the target file lacks what it needs: the transport's URL, an account role
//! or a fixture; or when it races and the target file says `races = false`.

use harness_model::case::Case;

use harness_model::target_file::Target;
use harness_protocol::wire::TransportKind;

/// Why `case` does not run over `transport` against `target`; `None` when it runs.
pub(crate) fn skip_reason(
    target: &Target,
    case: &Case,
    transport: TransportKind,
) -> Option<String> {
    not_allowed(target, case)
        .or_else(|| unnamed_by_target(target, case))
        .or_else(|| unreachable_over(target, case, transport))
        .or_else(|| missing_need(target, case))
}

/// What the target file does not allow: races, or changing server state.
fn not_allowed(target: &Target, case: &Case) -> Option<String> {
    if !target.races && case.steps.iter().any(|step| step.race().is_some()) {
        return Some(
            "releases copies of a request together; the target file sets races = false".to_owned(),
        );
    }
    if case.needs.destructive && !target.allow_destructive {
        return Some(
            "changes server state; the target file does not set allow_destructive = true"
                .to_owned(),
        );
    }
    // A case that calls such a method without saying so is held back all the same.
    if let Some(method) = case.state_changing_method()
        && !target.allow_destructive
    {
        return Some(format!(
            "calls {method}, which changes server state; the target file does not set allow_destructive = true"
        ));
    }
    None
}

/// A name SPEC.md does not show that the case needs and the target file does not give:
/// a method's parameter names, an unnamed parameter, a captured field.
fn unnamed_by_target(target: &Target, case: &Case) -> Option<String> {
    // Parameter names SPEC.md does not show (4.3) are the target file's to give.
    if let Some(method) = case.steps.iter().find_map(|step| {
        let method = step.call_method()?;
        let unnamed =
            harness_protocol::spec::method(method).is_some_and(|method| !method.params_shown);
        (unnamed && !step.params.is_empty() && !target.param_names.contains_key(method))
            .then_some(method)
    }) {
        return Some(format!(
            "SPEC.md does not show the parameter names of {method}; the target file does not name them in [param_names.\"{method}\"]"
        ));
    }
    // A parameter SPEC.md describes without naming (4.8's filter keywords) likewise.
    if let Some((method, param)) = case.steps.iter().find_map(|step| {
        let method = step.call_method()?;
        let spec = harness_protocol::spec::method(method)?;
        let param = spec.unnamed_params.iter().find(|param| {
            step.params.contains_key(**param)
                && !target
                    .param_names
                    .get(method)
                    .is_some_and(|names| names.contains_key(**param))
        })?;
        Some((method, *param))
    }) {
        return Some(format!(
            "SPEC.md does not show the name of {method}'s {param} parameter; the target file does not name it in [param_names.\"{method}\"]"
        ));
    }
    // Field names SPEC.md does not show (2.6, 4.2) are the target file's to give; a case
    // whose later steps need a value captured through one cannot run without it.
    if let Some(field) = case.steps.iter().find_map(|step| {
        step.capture
            .values()
            .find_map(|path| target.missing_field_name(path))
    }) {
        return Some(format!(
            "SPEC.md does not show the name of the field a step captures; the target file does not give {field} in [field_names]"
        ));
    }
    None
}

/// The transport's URL the target file lacks, for the case's transport or a step's.
fn unreachable_over(target: &Target, case: &Case, transport: TransportKind) -> Option<String> {
    let over_ws = transport == TransportKind::Ws
        || case
            .steps
            .iter()
            .any(|step| step.transport_in(transport) == TransportKind::Ws);
    if over_ws && target.ws_url.is_none() {
        return Some("the target file has no ws_url".to_owned());
    }
    if transport == TransportKind::Rest && target.direct_access_url.is_none() {
        return Some("the target file has no direct_access_url".to_owned());
    }
    None
}

/// An account role or a fixture the case needs and the target file lacks.
fn missing_need(target: &Target, case: &Case) -> Option<String> {
    if let Some(role) = case
        .needs
        .accounts
        .iter()
        .find(|role| !target.accounts.contains_key(*role))
    {
        return Some(format!("the target file has no [accounts.{role}]"));
    }
    case.needs
        .fixtures
        .iter()
        .find(|name| fixture_missing(&target.fixtures, name))
        .map(|name| format!("the target file has no fixtures.{name}"))
}

/// Whether the target file lacks the fixture `name` (an unknown name is missing).
fn fixture_missing(fixtures: &harness_model::target_file::Fixtures, name: &str) -> bool {
    match name {
        "subaccount_id" => fixtures.subaccount_id.is_none(),
        "member_id" => fixtures.member_id.is_none(),
        "kept_member_id" => fixtures.kept_member_id.is_none(),
        "second_member_id" => fixtures.second_member_id.is_none(),
        "two_factor_subaccount_id" => fixtures.two_factor_subaccount_id.is_none(),
        "no_direct_access_member_id" => fixtures.no_direct_access_member_id.is_none(),
        "mmp_reset_index" => fixtures.mmp_reset_index.is_none(),
        "mmp_triggered_index" => fixtures.mmp_triggered_index.is_none(),
        "mmp_block_rfq_index" => fixtures.mmp_block_rfq_index.is_none(),
        "instrument_name" => fixtures.instrument_name.is_none(),
        "other_instrument_name" => fixtures.other_instrument_name.is_none(),
        "currency" => fixtures.currency.is_none(),
        "position" => fixtures.position_pool().is_empty(),
        "direct_access_key" => fixtures.direct_access_key.is_none(),
        "direct_access_order" => fixtures.direct_access_order.is_none(),
        "expired_otm_option" => fixtures.expired_option_pool().is_empty(),
        "subscription" => fixtures.subscription.is_none(),
        "raw_feed_subscription" => fixtures.raw_feed_subscription.is_none(),
        "resting_close_price" => fixtures.resting_close_price.is_none(),
        "order_read" => fixtures.order_read.is_none(),
        "direct_access_order_read" => fixtures.direct_access_order_read.is_none(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A target with every URL, the `main` account and the currency fixture.
    fn target(extra: &str) -> Target {
        let text = format!(
            r#"
name = "t"
base_url = "http://127.0.0.1:1/api/v2"
ws_url = "ws://127.0.0.1:1/ws/api/v2"
direct_access_url = "http://127.0.0.1:2"
{extra}
[accounts.main]
client_id = "id"
client_secret = "secret-value"
[fixtures]
currency = "BTC"
"#
        );
        Target::parse(Path::new("target.toml"), &text, &|_| None).expect("test target parses")
    }

    fn case(needs: &str, call: &str) -> Case {
        let text = format!(
            "id = \"c\"\ntitle = \"t\"\nclauses = [\"x\"]\nneeds = {{ {needs} }}\n[[step]]\ncall = \"{call}\"\n"
        );
        toml::from_str(&text).expect("test case parses")
    }

    const READ: &str = "public/get_currencies";

    #[test]
    fn names_spec_md_does_not_show_must_come_from_the_target_file() {
        // (a step using such a name, what the skip reason names, the target's table of it)
        let steps = [
            (
                "call = \"public/fork_token\"\nparams = { refresh_token = \"r\", session_name = \"s\" }",
                "[param_names.\"public/fork_token\"]",
                "[param_names.\"public/fork_token\"]\nrefresh_token = \"r\"\nsession_name = \"name\"\n",
            ),
            (
                "call = \"public/exchange_token\"\ncapture = { token = \"result.{{field_names.exchange_token.access_token}}\" }",
                "exchange_token.access_token in [field_names]",
                "[field_names.exchange_token]\naccess_token = \"token\"\n",
            ),
        ];
        for (step, named_in_reason, table) in steps {
            let text = format!("id = \"c\"\ntitle = \"t\"\nclauses = [\"x\"]\n[[step]]\n{step}\n");
            let case: Case = toml::from_str(&text).expect("test case parses");
            let reason =
                skip_reason(&target(""), &case, TransportKind::HttpQuery).unwrap_or_default();
            assert!(reason.contains(named_in_reason), "{reason}");
            assert_eq!(
                skip_reason(&target(table), &case, TransportKind::HttpQuery),
                None
            );
        }
    }

    #[test]
    fn a_case_the_target_can_serve_runs() {
        let case = case("accounts = [\"main\"], fixtures = [\"currency\"]", READ);
        for transport in TransportKind::ALL {
            assert_eq!(skip_reason(&target(""), &case, transport), None);
        }
    }

    #[test]
    fn a_destructive_case_runs_only_where_the_target_allows_it() {
        let case = case("destructive = true", "private/delete_member");
        let reason = skip_reason(&target(""), &case, TransportKind::HttpQuery);
        assert_eq!(
            reason.as_deref(),
            Some("changes server state; the target file does not set allow_destructive = true")
        );
        let allowing = target("allow_destructive = true");
        assert_eq!(
            skip_reason(&allowing, &case, TransportKind::HttpQuery),
            None
        );
    }

    #[test]
    fn a_state_changing_call_is_held_back_even_when_the_case_does_not_say_so() {
        let case = case("", "private/close_position");
        let reason = skip_reason(&target(""), &case, TransportKind::Ws).unwrap_or_default();
        assert!(
            reason.starts_with("calls private/close_position, which changes server state"),
            "{reason}"
        );
    }

    #[test]
    fn a_transport_without_its_url_is_skipped() {
        let bare = Target {
            ws_url: None,
            direct_access_url: None,
            ..target("")
        };
        let case = case("", READ);
        assert_eq!(
            skip_reason(&bare, &case, TransportKind::Ws).as_deref(),
            Some("the target file has no ws_url")
        );
        assert_eq!(
            skip_reason(&bare, &case, TransportKind::Rest).as_deref(),
            Some("the target file has no direct_access_url")
        );
        assert_eq!(skip_reason(&bare, &case, TransportKind::HttpBody), None);
    }

    #[test]
    fn a_missing_account_or_fixture_is_named() {
        let needs_sub = case("accounts = [\"main\", \"sub\"]", READ);
        assert_eq!(
            skip_reason(&target(""), &needs_sub, TransportKind::HttpQuery).as_deref(),
            Some("the target file has no [accounts.sub]")
        );
        for fixture in [
            "subaccount_id",
            "member_id",
            "instrument_name",
            "direct_access_key",
            "subscription",
            "raw_feed_subscription",
            "order_read",
            "direct_access_order_read",
            "resting_close_price",
            "no_such_fixture",
        ] {
            let case = case(&format!("fixtures = [\"currency\", \"{fixture}\"]"), READ);
            assert_eq!(
                skip_reason(&target(""), &case, TransportKind::HttpQuery),
                Some(format!("the target file has no fixtures.{fixture}"))
            );
        }
    }
}
