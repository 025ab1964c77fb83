//! Unit tests of the case loader: good cases load with their step lines, bad ones give `path:line: message`.

use std::path::Path;

use super::*;
use crate::case::Auth;
use crate::check::{Level, Side};

fn catalog() -> Catalog {
    Catalog::of_clauses(&[(
        "auth.client_signature.window",
        "5.5",
        Level::Must,
        Side::Server,
    )])
}

fn schemas() -> SchemaSet {
    SchemaSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/schemas")).unwrap()
}

const GOOD: &str = r#"
id = "auth.stale"
title = "a stale timestamp is rejected"
clauses = ["auth.client_signature.window"]

[[step]]
call = "public/auth"
auth = { mode = "client_signature", timestamp_offset_ms = -61000 }
expect = { outcome = "error" }
"#;

/// The error of loading `text` as case file `c.toml`, as it is shown.
fn load_error(text: &str) -> String {
    parse_case(Path::new("c.toml"), text, &catalog(), &schemas())
        .unwrap_err()
        .to_string()
}

#[test]
fn good_case_loads_with_step_lines() {
    let case = parse_case(Path::new("c.toml"), GOOD, &catalog(), &schemas()).unwrap();
    assert_eq!(case.steps[0].line, 6);
    assert_eq!(case.transports.len(), 3);
}

/// Edits that break a good case file, and the error each gets: (the file, the text
/// replaced, its replacement, the error or a part of it).
const BREAKING_EDITS: &[(&str, &str, &str, &str)] = &[
    (
        GOOD,
        "expect =",
        "expct =",
        "c.toml:9: unknown field \"expct\" (did you mean \"expect\"?)",
    ),
    (
        GOOD,
        "auth.client_signature.window\"]",
        "auth.client_signature.windw\"]",
        "c.toml:4: unknown clause \"auth.client_signature.windw\" (did you mean \"auth.client_signature.window\"?)",
    ),
    (
        GOOD,
        "client_signature\"",
        "client_signatur\"",
        "did you mean \"client_signature\"",
    ),
    (
        GOOD,
        "call = \"public/auth\"",
        "call = \"public/auth\"\nprobe = { call = \"public/auth\" }",
        "c.toml:6: a step has exactly one of call, raw (with an optional call naming its URL), walk or probe",
    ),
    (
        GOOD,
        "mode = \"client_signature\", timestamp_offset_ms = -61000",
        "mode = \"basic\"",
        "needs an http transport",
    ),
    (
        GOOD,
        "timestamp_offset_ms = -61000",
        "omit = [\"client_secret\"]",
        "omit names \"client_secret\"; the auth modes fill in only grant_type and client_id",
    ),
    (
        TWO_CONNECTIONS,
        "connection = \"second\"",
        "connection = \"second\"\ntransport = \"rest\"",
        "the transport of a step is",
    ),
];

#[test]
fn breaking_edits_are_refused_with_their_line_and_reason() {
    for (file, replaced, replacement, expected) in BREAKING_EDITS {
        let text = file.replace(replaced, replacement);
        assert_ne!(&text, file, "{replaced:?} is in the file");
        let error = load_error(&text);
        assert!(error.contains(expected), "{error}");
    }
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    for text in [
        "",
        "[[step]",
        "id = 5",
        "\u{0}\u{1}",
        "step = 3\nid='x'\ntitle='t'\nclauses=[]",
    ] {
        assert!(parse_case(Path::new("c.toml"), text, &catalog(), &schemas()).is_err());
    }
}

/// The committed corpus loads: every case file parses and names known clauses and schemas.
#[test]
fn committed_corpus_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let catalog = Catalog::load(&root.join("clauses.toml")).unwrap();
    let cases = discover(&root, &catalog, &schemas()).unwrap_or_else(|error| panic!("{error}"));
    assert!(!cases.is_empty());
}

const TWO_CONNECTIONS: &str = r#"
id = "auth.two"
title = "two connections"
clauses = ["auth.client_signature.window"]
transports = ["ws"]

[[step]]
call = "public/test"
connection = "first"

[[step]]
call = "public/test"
connection = "second"
"#;

#[test]
fn steps_may_name_connections() {
    let case = parse_case(Path::new("c.toml"), TWO_CONNECTIONS, &catalog(), &schemas()).unwrap();
    assert_eq!(case.steps[0].connection.as_deref(), Some("first"));
    assert_eq!(case.steps[1].connection.as_deref(), Some("second"));
}

#[test]
fn a_connection_used_once_close_to_another_gets_a_suggestion() {
    let text = TWO_CONNECTIONS.replace("\"second\"", "\"firsst\"");
    let text = format!("{text}\n[[step]]\ncall = \"public/test\"\nconnection = \"first\"\n");
    let error = load_error(&text);
    assert_eq!(
        error,
        "c.toml:11: connection \"firsst\" is used by this step only (did you mean \"first\"?)"
    );
}

#[test]
fn in_flight_goes_on_a_ws_only_call_step_and_never_on_a_paced_method() {
    let ok = TWO_CONNECTIONS.replace("connection = \"second\"", "in_flight = 4");
    let case = parse_case(Path::new("c.toml"), &ok, &catalog(), &schemas()).unwrap();
    assert_eq!(
        case.steps[1].kind,
        StepKind::InFlight {
            method: "public/test".to_owned(),
            copies: 4
        }
    );
    let over_http = ok.replace("[\"ws\"]", "[\"ws\", \"http-body\"]");
    let over_http = over_http.replace("connection = \"first\"\n", "");
    let error = load_error(&over_http);
    assert!(error.contains("runs over ws only"), "{error}");
    let too_many = ok.replace("in_flight = 4", "in_flight = 17");
    let error = load_error(&too_many);
    assert!(error.contains("2 to 16"), "{error}");
    let paced = ok.replace(
        "call = \"public/test\"\nin_flight",
        "call = \"private/get_transaction_log\"\nin_flight",
    );
    let error = load_error(&paced);
    assert!(error.contains("paced method"), "{error}");
}

const RACE: &str = r#"
id = "races.stale"
title = "copies released together"
clauses = ["auth.client_signature.window"]

[[step]]
call = "public/auth"
auth = { mode = "client_signature" }
expect = { outcome = "any" }
race = { copies = 8, at_most = 1 }
"#;

#[test]
fn a_race_loads_with_its_default_rounds_and_bad_ones_are_refused() {
    let case = parse_case(Path::new("c.toml"), RACE, &catalog(), &schemas()).unwrap();
    let race = case.steps[0].race().unwrap();
    assert_eq!(
        (race.copies, race.rounds),
        (8, super::super::Race::DEFAULT_ROUNDS)
    );
    for (from, to, error) in [
        (
            "copies = 8",
            "copies = 65",
            "c.toml:6: race.copies is 65; a race releases 2 to 64 copies",
        ),
        (
            "copies = 8",
            "copies = 8, rounds = 0",
            "c.toml:6: race.rounds is 0",
        ),
        (
            "at_most = 1",
            "at_most = \"one\"",
            "c.toml:6: race.at_most must be a number or a template",
        ),
        (
            "outcome = \"any\"",
            "outcome = \"result\"",
            "c.toml:6: a race step needs expect.outcome = \"any\"",
        ),
        (
            "at_most = 1",
            "at_mots = 1",
            "c.toml:10: unknown field \"at_mots\" (did you mean \"at_most\"?)",
        ),
        (
            "at_most = 1",
            "at_most = 1, after_lead = 2",
            "c.toml:6: race.after_lead needs a race.lead to wait for",
        ),
        (
            "at_most = 1",
            "at_most = 1, lead = { call = \"private/logout\" }",
            "c.toml:6: race.after_lead is 0; with a lead, 1 to 8 of the copies wait for its answer",
        ),
        (
            "at_most = 1",
            "at_most = 1, after_lead = 2, lead = { raw = \"{}\" }",
            "c.toml:6: race.lead is a plain call",
        ),
        (
            "at_most = 1",
            "at_most = 1, again_after_ms = 20000",
            "c.toml:6: race.again_after_ms is at most 10000",
        ),
    ] {
        let message = load_error(&RACE.replace(from, to));
        assert!(message.contains(error), "{message}");
    }
    let twice = format!(
        "{RACE}\n[[step]]\ncall = \"public/auth\"\nauth = {{ mode = \"client_signature\" }}\nexpect = {{ outcome = \"any\" }}\nrace = {{ copies = 2, at_most = 1 }}\n"
    );
    assert!(load_error(&twice).contains("c.toml:12: a case has at most one race step"));
    let led = RACE.replace(
        "at_most = 1 }",
        "at_most = 0, after_lead = 4, counts = \"result.x\", lead = { call = \"private/logout\" } }",
    );
    let case = parse_case(Path::new("c.toml"), &led, &catalog(), &schemas()).unwrap();
    let race = case.steps[0].race().unwrap();
    assert_eq!(race.after_lead, 4);
    assert_eq!(race.counts.as_deref(), Some("result.x"));
    assert_eq!(
        race.lead.as_ref().and_then(|lead| lead.call_method()),
        Some("private/logout")
    );
}

/// Keys that would make a step two kinds at once, or give a mode a key another mode
/// uses, are refused at the line of their table, naming what is wrong: the step kinds and
/// the auth modes are enums, and a case file cannot say what they cannot hold.
#[test]
fn a_step_of_two_kinds_or_an_auth_key_of_another_mode_is_refused_with_its_line() {
    for (from, to, expected) in [
        (
            "call = \"public/auth\"",
            "call = \"public/auth\"\nwalk = { call = \"public/auth\", items = \"logs\", count = 5 }",
            "c.toml:6: a step has exactly one of call, raw (with an optional call naming its URL), walk or probe",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"client_credentials\", token = \"{{access}}\"",
            "c.toml:8: token and scope apply to bearer auth only",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"client_credentials\", grants = \"mainaccount\"",
            "c.toml:8: grants applies to bearer auth only",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"client_credentials\", secret_of = \"main_second\"",
            "c.toml:8: secret_of applies to basic and signed auth only (a login names another client_id in its params)",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"signed\", short_secret = \"empty\"",
            "c.toml:8: short_secret applies to basic auth only",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"basic\", lowercase_method = true",
            "c.toml:8: sign_uri, sign_body and lowercase_method apply to signed auth only",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"basic\", short_secret = \"truncatd\"",
            "c.toml:8: unknown variant \"truncatd\" (did you mean \"truncated\"?)",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"bearer\", wrong_secret = true",
            "c.toml:8: wrong_secret applies to client_credentials, client_signature, basic, signed and api_key auth only",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"bearer\", token = \"{{access}}\", scope = \"account:read\"",
            "c.toml:8: a bearer step with a token logs in with no scope, lacks or grants",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "account = \"main\"",
            "c.toml:8: account applies to the modes that go as an account (not none or api_key)",
        ),
        (
            "mode = \"client_signature\", timestamp_offset_ms = -61000",
            "mode = \"signed\", data = \"x\"",
            "c.toml:8: data, no_trailing_lf and no_nonce apply to client_signature auth only",
        ),
        (
            "call = \"public/auth\"",
            "raw = \"{}\"\nin_flight = 2",
            "c.toml:6: in_flight (2 to 16) goes on a call step that runs over ws only",
        ),
    ] {
        let text = GOOD.replace(from, to);
        assert_ne!(text, GOOD, "{from:?} is in the file");
        assert_eq!(load_error(&text), expected, "{text}");
    }
}

/// Each mode's keys come back as they were written: the auth table and the enum hold the
/// same thing.
#[test]
fn every_auth_mode_round_trips_through_its_enum() {
    for auth in [
        "{ mode = \"bearer\", account = \"any\", scope = \"account:read\", lacks = \"trade:read\", grants = \"mainaccount\", second_factor = \"wrong\" }",
        "{ mode = \"bearer\", token = \"{{access}}\" }",
        "{ mode = \"client_credentials\", account = \"sub\", wrong_secret = true, lacks = \"session\", omit = [\"grant_type\"] }",
        "{ mode = \"client_signature\", wrong_secret = true, timestamp_offset_ms = -61000, clock_skew = \"outside\", data = \"d\", no_nonce = true, no_trailing_lf = true, uppercase_hex = true, altered_signature = true, omit = [\"client_id\"] }",
        "{ mode = \"signed\", nonce = \"reuse\", sign_uri = \"/x\", wrong_secret = true }",
        "{ mode = \"basic\", wrong_secret = true }",
        "{ mode = \"api_key\", wrong_secret = true }",
    ] {
        let text = GOOD
            .replace(
                "auth = { mode = \"client_signature\", timestamp_offset_ms = -61000 }",
                &format!("auth = {auth}"),
            )
            .replace("\"public/auth\"", "\"public/test\"");
        let text =
            if auth.contains("basic") || auth.contains("signed\"") || auth.contains("api_key") {
                text.replace("clauses = [", "transports = [\"http-body\"]\nclauses = [")
            } else {
                text
            };
        let case = parse_case(Path::new("c.toml"), &text, &catalog(), &schemas())
            .unwrap_or_else(|error| panic!("{error}\n{text}"));
        let written = case.to_toml("").unwrap();
        let again = parse_case(Path::new("c.toml"), &written, &catalog(), &schemas()).unwrap();
        assert_eq!(again.steps[0].auth, case.steps[0].auth, "{written}");
        assert_ne!(case.steps[0].auth, Auth::None);
    }
}

#[test]
fn notifications_are_expected_over_ws_only_and_in_bounds() {
    let subscribing = r#"
id = "events.pushes"
title = "pushed after subscribing"
clauses = ["auth.client_signature.window"]
transports = ["ws"]

[[step]]
call = "{{fixtures.subscription.method}}"
expect = { notifications = { at_least = 1, within_ms = 3000, witness = "witness" } }
"#;
    let case = parse_case(Path::new("c.toml"), subscribing, &catalog(), &schemas()).unwrap();
    let expected = case.steps[0].expect.notifications.as_ref().unwrap();
    assert_eq!((expected.at_least, expected.within_ms), (1, 3000));
    for (from, to, error) in [
        ("[\"ws\"]", "[\"ws\", \"http-body\"]", "over ws only"),
        ("at_least = 1", "at_least = 0", "1 or more"),
        ("within_ms = 3000", "within_ms = 60000", "1 to 30000"),
        (
            "witness = \"witness\"",
            "witness = \"\"",
            "name a connection",
        ),
        ("within_ms", "within", "unknown field"),
    ] {
        let message = load_error(&subscribing.replace(from, to));
        assert!(message.contains(error), "{message}");
        assert!(message.starts_with("c.toml:"), "{message}");
    }
}
