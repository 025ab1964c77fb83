//! Unit tests of the target file: loading, secrets from the environment, round trips and `path:line` errors.

use std::path::Path;

use super::*;

const GOOD: &str = r#"
name = "demo"
base_url = "http://127.0.0.1:9000/api/v2/"
ws_url = "ws://127.0.0.1:9000/ws/api/v2"
direct_access_url = "http://127.0.0.1:9000/direct"
allow_destructive = true

[accounts.main]
client_id = "main-id"
client_secret_env = "DEMO_SECRET"

[fixtures]
currency = "BTC"
direct_access_key = "da-key"

[limits]
transaction_log_per_second = 2.0
transaction_log_burst = 5
clock_skew_ms = 2000

[param_names."public/fork_token"]
session_name = "name"

[field_names.member]
identifier = "id"
name = "member_name"
"#;

fn env(name: &str) -> Option<String> {
    (name == "DEMO_SECRET").then(|| "s3cr3t".to_owned())
}

/// The error of parsing `text` as target file `t.toml` with no environment, as shown.
fn parse_error(text: &str) -> String {
    Target::parse(Path::new("t.toml"), text, &|_| None)
        .unwrap_err()
        .to_string()
}

#[test]
fn good_file_loads_with_secret_from_env() {
    let target = Target::parse(Path::new("t.toml"), GOOD, &env).unwrap();
    assert_eq!(target.base_url, "http://127.0.0.1:9000/api/v2");
    assert_eq!(target.signature_scheme, "svc-hmac-sha256");
    assert_eq!(target.accounts["main"].client_secret.expose(), "s3cr3t");
    assert_eq!(target.limits.transaction_log_burst, 5);
    assert_eq!(target.limits.clock_skew_ms, 2000);
    assert_eq!(
        format!("{:?}", target.accounts["main"])
            .matches("s3cr3t")
            .count(),
        0
    );
}

#[test]
fn to_toml_round_trips() {
    let target = Target::parse(Path::new("t.toml"), GOOD, &env).unwrap();
    let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
    assert_eq!(again, target);
}

#[test]
fn unknown_key_names_line_and_suggests() {
    let text = "name = \"x\"\nbase_url = \"http://h/api/v2\"\nallow_destructve = true\n";
    assert_eq!(
        parse_error(text),
        "t.toml:3: unknown field \"allow_destructve\" (did you mean \"allow_destructive\"?)"
    );
}

#[test]
fn missing_env_secret_is_an_error_at_its_account() {
    let text = "name = \"x\"\nbase_url = \"http://h/api/v2\"\n[accounts.main]\nclient_id = \"a\"\nclient_secret_env = \"NOPE\"\n";
    assert_eq!(
        parse_error(text),
        "t.toml:3: environment variable NOPE (for client_secret) is not set"
    );
}

#[test]
fn bad_url_scheme_is_refused() {
    let error = Target::parse(
        Path::new("t.toml"),
        "name = \"x\"\nbase_url = \"ftp://h\"\n",
        &|_| None,
    )
    .unwrap_err();
    assert_eq!(error.line, 2);
    assert!(error.message.contains("must start with http://"), "{error}");
}

#[test]
fn wrong_type_names_its_line() {
    let error = Target::parse(Path::new("t.toml"), "name = \"x\"\nbase_url = 5\n", &|_| {
        None
    })
    .unwrap_err();
    assert_eq!(error.line, 2, "{error}");
}

#[test]
fn ca_file_resolves_against_the_target_files_directory_and_round_trips() {
    let text = "name = \"x\"\nbase_url = \"https://h/api/v2\"\nca_file = \"certs/ca.pem\"\naccept_invalid_certs = true\n";
    let target = Target::parse(Path::new("conf/t.toml"), text, &|_| None).unwrap();
    assert_eq!(
        target.tls.ca_file.as_deref(),
        Some(Path::new("conf/certs/ca.pem"))
    );
    assert!(target.tls.accept_invalid_certs);
    let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
    assert_eq!(again, target);
    let absolute = "name = \"x\"\nbase_url = \"https://h/api/v2\"\nca_file = \"/etc/ca.pem\"\n";
    let target = Target::parse(Path::new("conf/t.toml"), absolute, &|_| None).unwrap();
    assert_eq!(
        target.tls.ca_file.as_deref(),
        Some(Path::new("/etc/ca.pem"))
    );
}

#[test]
fn unreadable_or_empty_ca_file_is_an_error_at_its_line() {
    let dir = std::env::temp_dir().join(format!("harness-ca-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("t.toml");
    std::fs::write(dir.join("empty.pem"), "no certificate here\n").unwrap();
    for (ca_file, expected) in [
        ("missing.pem", "failed to read"),
        ("empty.pem", "holds no PEM certificate"),
    ] {
        let text =
            format!("name = \"x\"\nbase_url = \"https://h/api/v2\"\n\nca_file = \"{ca_file}\"\n");
        std::fs::write(&target, text).unwrap();
        let error = Target::load(&target).unwrap_err();
        assert_eq!(error.line, 4, "{error}");
        assert!(error.message.starts_with("ca_file: "), "{error}");
        assert!(error.message.contains(expected), "{error}");
        assert!(error.message.contains(ca_file), "{error}");
    }
    let empty = "name = \"x\"\nbase_url = \"https://h/api/v2\"\nca_file = \"\"\n";
    assert_eq!(parse_error(empty), "t.toml:3: ca_file must name a PEM file");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn field_names_load_and_name_only_unnamed_fields() {
    let target = Target::parse(Path::new("t.toml"), GOOD, &env).unwrap();
    assert_eq!(target.field_names["member"]["identifier"], "id");
    assert_eq!(
        target.param_names["public/fork_token"]["session_name"],
        "name"
    );
    let base = "name = \"x\"\nbase_url = \"http://h/api/v2\"\n";
    let refused = |table: &str| {
        let text = format!("{base}{table}");
        Target::parse(Path::new("t.toml"), &text, &|_| None)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("[field_names.membr]\nname = \"n\"\n"),
        "t.toml:3: field_names.membr: SPEC.md leaves no field of a \"membr\" record unnamed (did you mean \"member\"?)"
    );
    assert_eq!(
        refused("[field_names.member]\nidentifer = \"id\"\n"),
        "t.toml:3: field_names.member.identifer: not a field SPEC.md describes without naming (did you mean \"identifier\"?)"
    );
    assert_eq!(
        refused("[param_names.\"public/fork_tokn\"]\nx = \"y\"\n"),
        "t.toml:3: param_names.\"public/fork_tokn\": only methods whose parameter names SPEC.md does not show take names here (did you mean \"public/fork_token\"?)"
    );
}

#[test]
fn missing_field_name_is_the_first_unnamed_field_a_text_uses() {
    let target = Target::parse(Path::new("t.toml"), GOOD, &env).unwrap();
    assert_eq!(target.missing_field_name("result.members[*]"), None);
    assert_eq!(
        target.missing_field_name("result.members[*].{{field_names.member.name}}"),
        None
    );
    assert_eq!(
        target.missing_field_name(
            "{{field_names.member.identifier}}.{{field_names.exchange_token.access_token}}"
        ),
        Some("exchange_token.access_token".to_owned())
    );
}

#[test]
fn races_are_on_unless_the_file_says_races_false() {
    let base = "name = \"x\"\nbase_url = \"http://h/api/v2\"\n";
    let on = Target::parse(Path::new("t.toml"), base, &|_| None).unwrap();
    assert!(on.races && on.race_rounds.is_none());
    let off = Target::parse(
        Path::new("t.toml"),
        &format!("{base}races = false\nrace_rounds = 5\n"),
        &|_| None,
    )
    .unwrap();
    assert!(!off.races);
    assert_eq!(off.race_rounds, Some(5));
    let again = Target::parse(Path::new("t.toml"), &off.to_toml(), &|_| None).unwrap();
    assert_eq!(again, off);
    assert_eq!(
        parse_error(&format!("{base}race = false\n")),
        "t.toml:3: unknown field \"race\" (did you mean \"races\"?)"
    );
    assert!(
        parse_error(&format!("{base}race_rounds = 0\n")).starts_with("t.toml:3: race_rounds is 0")
    );
}

#[test]
fn clear_text_goes_only_to_loopback() {
    for url in [
        "http://127.0.0.1:9000/api/v2",
        "ws://localhost/ws",
        "http://[::1]:80/x",
        "http://user@127.0.0.1/",
    ] {
        assert!(super::is_loopback(url), "{url}");
    }
    for url in [
        "http://example.com/api/v2",
        "http://127.0.0.1@example.com/",
        "ws://10.0.0.1:80",
        "http://localhost.example.com",
    ] {
        assert!(!super::is_loopback(url), "{url}");
    }
    let text = "name = \"x\"\nbase_url = \"https://h/api/v2\"\nws_url = \"ws://h/ws\"\n";
    let target = Target::parse(Path::new("t.toml"), text, &|_| None).unwrap();
    assert_eq!(target.clear_text_url(), Some("ws://h/ws"));
}

/// `GOOD` with `fixtures` in place of its `[fixtures]` keys.
fn with_fixtures(fixtures: &str) -> String {
    GOOD.replace("currency = \"BTC\"\n", fixtures)
}

#[test]
fn expired_options_pool_is_the_single_one_then_the_list_and_round_trips() {
    let text = with_fixtures(
        r#"expired_otm_option = { instrument_name = "BTC-31JAN25-100000-C", currency = "BTC", expired_at = 1738310400000 }
expired_otm_options = [
  { instrument_name = "ETH-31JAN25-4000-C", currency = "ETH", expired_at = 1738310400000 },
  { instrument_name = "BTC-28MAR25-90000-P", currency = "BTC" },
]
"#,
    );
    let target = Target::parse(Path::new("t.toml"), &text, &env).unwrap();
    let pool: Vec<(&str, &str, Option<u64>)> = target
        .fixtures
        .expired_option_pool()
        .into_iter()
        .map(|option| {
            (
                option.instrument_name.as_str(),
                option.currency.as_str(),
                option.expired_at,
            )
        })
        .collect();
    assert_eq!(
        pool,
        [
            ("BTC-31JAN25-100000-C", "BTC", Some(1738310400000)),
            ("ETH-31JAN25-4000-C", "ETH", Some(1738310400000)),
            ("BTC-28MAR25-90000-P", "BTC", None),
        ]
    );
    let written = target.to_toml();
    assert!(written.contains("expired_otm_options = [{ instrument_name = \"ETH-31JAN25-4000-C\""));
    let again = Target::parse(Path::new("again.toml"), &written, &|_| None).unwrap();
    assert_eq!(again, target);
    // The list alone is the pool; neither is none.
    let alone = with_fixtures(
        "expired_otm_options = [{ instrument_name = \"ETH-31JAN25-4000-C\", currency = \"ETH\" }]\n",
    );
    let alone = Target::parse(Path::new("t.toml"), &alone, &env).unwrap();
    assert_eq!(alone.fixtures.expired_option_pool().len(), 1);
    let none = Target::parse(Path::new("t.toml"), GOOD, &env).unwrap();
    assert!(none.fixtures.expired_option_pool().is_empty());
}

#[test]
fn an_expired_option_of_the_list_without_its_currency_names_its_line() {
    let text = with_fixtures(
        "expired_otm_options = [\n  { instrument_name = \"ETH-31JAN25-4000-C\", currency = \"ETH\" },\n  { instrument_name = \"BTC-28MAR25-90000-P\" },\n]\n",
    );
    let line = text
        .lines()
        .position(|line| line.contains("BTC-28MAR25-90000-P"))
        .unwrap()
        + 1;
    let error = parse_error(&text);
    assert!(error.starts_with(&format!("t.toml:{line}")), "{error}");
    assert!(error.contains("currency"), "{error}");
    let unknown = with_fixtures(
        "expired_otm_options = [{ instrument_name = \"X\", currency = \"ETH\", expiry = 1 }]\n",
    );
    assert!(parse_error(&unknown).contains("expiry"));
}

/// A target file whose `[accounts.two_factor]` (line 4) has `second_factor = { <factor> }`
/// on line 7.
fn with_factor(factor: &str) -> String {
    format!(
        "name = \"x\"\nbase_url = \"http://h/api/v2\"\n\n[accounts.two_factor]\nclient_id = \"a\"\nclient_secret = \"s\"\nsecond_factor = {{ parameter = \"otp\", {factor} }}\n"
    )
}

#[test]
fn a_fixed_second_factor_code_loads_inline_or_from_env_and_round_trips() {
    let lookup = |name: &str| (name == "OTP_CODE").then(|| "123456".to_owned());
    for (factor, code) in [
        ("code = \"000000\"", "000000"),
        ("code_env = \"OTP_CODE\"", "123456"),
    ] {
        let text = with_factor(factor);
        let target = Target::parse(Path::new("t.toml"), &text, &lookup).unwrap();
        let second = target.accounts["two_factor"]
            .second_factor
            .as_ref()
            .unwrap();
        assert_eq!(second.parameter, "otp");
        assert_eq!(second.code, FactorCode::Fixed(Secret::new(code.to_owned())));
        assert_eq!(second.code.valid(0).unwrap(), code);
        assert_ne!(second.code.wrong(0).unwrap(), code);
        // A secret: never in the debug form, always among what is redacted.
        assert!(!format!("{second:?}").contains(code), "{second:?}");
        assert!(target.secrets().contains(&code.to_owned()));
        let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
        assert_eq!(again, target);
    }
}

#[test]
fn a_second_factor_gives_exactly_one_source_at_its_line() {
    let secret = "JBSWY3DPEHPK3PXP";
    assert_eq!(
        parse_error(&with_factor(&format!(
            "code = \"1\", totp_secret = \"{secret}\""
        ))),
        "t.toml:7: accounts.two_factor.second_factor gives totp_secret and code: give exactly one of totp_secret, totp_secret_env, code, code_env"
    );
    assert_eq!(
        parse_error(&with_factor("code = \"1\", code_env = \"X\"")),
        "t.toml:7: accounts.two_factor.second_factor gives code and code_env: give exactly one of totp_secret, totp_secret_env, code, code_env"
    );
    assert_eq!(
        parse_error(
            "name = \"x\"\nbase_url = \"http://h/api/v2\"\n\n[accounts.two_factor]\nclient_id = \"a\"\nclient_secret = \"s\"\nsecond_factor = { parameter = \"otp\" }\n"
        ),
        "t.toml:7: accounts.two_factor.second_factor needs one of totp_secret, totp_secret_env (a TOTP secret), code, code_env (a fixed code)"
    );
    assert_eq!(
        parse_error(&with_factor("code = \" \"")),
        "t.toml:7: accounts.two_factor.second_factor: the code is empty"
    );
    assert_eq!(
        parse_error(&with_factor("code_env = \"NOPE\"")),
        "t.toml:7: environment variable NOPE (for second_factor.code) is not set"
    );
    assert_eq!(
        parse_error(&with_factor("cod = \"1\"")),
        "t.toml:7: unknown field \"cod\" (did you mean \"code\"?)"
    );
    // The secret of a TOTP factor is still checked, and never shown.
    let error = parse_error(&with_factor("totp_secret = \"not base32!\""));
    assert!(
        error.starts_with("t.toml:7: accounts.two_factor.second_factor: "),
        "{error}"
    );
}

#[test]
fn a_direct_access_order_is_read_and_round_trips() {
    let text = with_fixtures(
        r#"direct_access_order = { method = "private/buy", params = { instrument_name = "BTC-PERPETUAL", amount = 10, type = "limit", price = 1.5 } }
"#,
    );
    let target = Target::parse(Path::new("t.toml"), &text, &env).unwrap();
    let order = target.fixtures.direct_access_order.as_ref().unwrap();
    assert_eq!(order.method, "private/buy");
    assert_eq!(order.params["amount"], 10);
    assert_eq!(order.params["price"], 1.5);
    let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
    assert_eq!(
        again.fixtures.direct_access_order,
        target.fixtures.direct_access_order
    );
}

#[test]
fn subscriptions_are_read_and_round_trip() {
    let text = with_fixtures(
        r#"subscription = { method = "public/subscribe", params = { channels = ["book.BTC-PERPETUAL.100ms"] } }
raw_feed_subscription = { method = "private/subscribe", params = { channels = ["trades.BTC-PERPETUAL.raw"] } }
"#,
    );
    let target = Target::parse(Path::new("t.toml"), &text, &env).unwrap();
    let subscription = target.fixtures.subscription.as_ref().unwrap();
    assert_eq!(subscription.method, "public/subscribe");
    assert_eq!(
        subscription.params["channels"][0],
        "book.BTC-PERPETUAL.100ms"
    );
    assert_eq!(
        target
            .fixtures
            .subscription_called_by("{{fixtures.raw_feed_subscription.method}}")
            .map(|request| request.method.as_str()),
        Some("private/subscribe")
    );
    assert_eq!(
        target.fixtures.subscription_called_by("public/subscribe"),
        None
    );
    let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
    assert_eq!(again.fixtures.subscription, target.fixtures.subscription);
    assert_eq!(
        again.fixtures.raw_feed_subscription,
        target.fixtures.raw_feed_subscription
    );
}

#[test]
fn a_malformed_subscription_is_named_at_its_line() {
    let line = GOOD
        .lines()
        .position(|line| line.starts_with("currency = "))
        .unwrap()
        + 1;
    for (fixture, message) in [
        (
            "subscription = { method = \" \" }\n",
            "fixtures.subscription.method must name the method that subscribes",
        ),
        (
            "raw_feed_subscription = { methd = \"private/subscribe\" }\n",
            "unknown field",
        ),
        ("subscription = \"public/subscribe\"\n", "invalid type"),
    ] {
        let error = Target::parse(Path::new("t.toml"), &with_fixtures(fixture), &env)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with(&format!("t.toml:{line}: ")), "{error}");
        assert!(error.contains(message), "{error}");
    }
}

#[test]
fn order_reads_and_the_resting_price_are_read_and_round_trip() {
    let text = with_fixtures(
        r#"resting_close_price = 10000000
order_read = { method = "private/get_order_state", param = "order_id", open_states = ["open", "untriggered"], cancelled_states = ["cancelled"] }
direct_access_order_read = { method = "private/get_order_state", param = "order_id", id_path = "result.order.order_id", open_states = ["open"] }
"#,
    );
    let target = Target::parse(Path::new("t.toml"), &text, &env).unwrap();
    let read = target.fixtures.order_read.as_ref().unwrap();
    assert_eq!(read.method, "private/get_order_state");
    assert_eq!(read.open_states, ["open", "untriggered"]);
    assert_eq!(read.id_path, None);
    let direct = target.fixtures.direct_access_order_read.as_ref().unwrap();
    assert_eq!(direct.id_path.as_deref(), Some("result.order.order_id"));
    assert!(direct.cancelled_states.is_empty());
    assert_eq!(target.fixtures.resting_close_price, Some(10_000_000.0));
    let again = Target::parse(Path::new("again.toml"), &target.to_toml(), &|_| None).unwrap();
    assert_eq!(again.fixtures, target.fixtures);
}

#[test]
fn a_malformed_order_read_names_its_line() {
    let line_of = |text: &str, key: &str| {
        text.lines()
            .position(|line| line.starts_with(key))
            .map(|index| index + 1)
            .unwrap()
    };
    for (fixture, key, message) in [
        (
            r#"order_read = { method = "m", param = "order_id", open_states = [] }"#,
            "order_read",
            "open_states names no state",
        ),
        (
            r#"order_read = { method = " ", param = "order_id", open_states = ["open"] }"#,
            "order_read",
            "method is empty",
        ),
        (
            r#"order_read = { method = "m", param = "id", open_states = ["open"], cancelled_states = ["open"] }"#,
            "order_read",
            "both open and cancelled",
        ),
        (
            r#"direct_access_order_read = { method = "m", param = "id", open_states = ["open"] }"#,
            "direct_access_order_read",
            "id_path is missing",
        ),
        (
            r#"order_read = { method = "m", param = "id", open_state = ["open"] }"#,
            "order_read",
            "unknown field",
        ),
        (
            r#"order_read = { method = "m", param = 3, open_states = ["open"] }"#,
            "order_read",
            "",
        ),
        (
            "resting_close_price = -1",
            "resting_close_price",
            "positive",
        ),
    ] {
        let text = with_fixtures(&format!("{fixture}\n"));
        let error = Target::parse(Path::new("t.toml"), &text, &env)
            .unwrap_err()
            .to_string();
        let line = line_of(&text, key);
        assert!(
            error.starts_with(&format!("t.toml:{line}: ")) && error.contains(message),
            "{fixture}: {error}"
        );
    }
}
