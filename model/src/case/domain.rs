//! Which points of a rule's domain ([`crate::check::Point`]) a case reaches over one
//! transport, read from the case file alone: the transports its steps go over, how each
//! step authenticates and as whom, whether it walks past the first page or to an exactly
//! full last one, whether its checks hold every entry of a list, how its values are
//! encoded, and whether it waits out a lifetime or races.
//!
//! A step's points count for the clauses the step checks (its own `clauses`, else the
//! case's). The catalog's test (`tests/it/domains.rs`) holds each `must` clause's declared
//! domain to what its cases reach; the runner records an execution's points in its result,
//! and the report shows, per clause and point, what was checked and what was skipped.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Auth, BearerToken, Case, Step, StepKind, Walk};
use crate::check::{Outcome, Point};
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// The points one execution of `case` over `transport` reaches, per clause it checks.
pub fn reached(case: &Case, transport: TransportKind) -> BTreeMap<String, BTreeSet<Point>> {
    let mut by_clause: BTreeMap<String, BTreeSet<Point>> = BTreeMap::new();
    let mut logged_in: BTreeSet<Option<&str>> = BTreeSet::new();
    let mut exchanged: BTreeSet<&str> = BTreeSet::new();
    for step in &case.steps {
        let travels = step.transport_in(transport);
        let points = step_points(step, travels, &logged_in, &exchanged);
        let clauses = step.clauses.as_ref().unwrap_or(&case.clauses);
        for clause in clauses {
            by_clause
                .entry(clause.clone())
                .or_default()
                .extend(points.iter().copied());
        }
        if travels == TransportKind::Ws && logs_in(step) {
            logged_in.insert(step.connection.as_deref());
        }
        if step.call_method() == Some(spec::EXCHANGE_TOKEN_METHOD) {
            exchanged.extend(step.capture.keys().map(String::as_str));
        }
    }
    for clause in &case.clauses {
        by_clause.entry(clause.clone()).or_default();
    }
    by_clause
}

/// Every point one execution reaches, whichever clause it counts for.
pub fn reached_by_execution(case: &Case, transport: TransportKind) -> BTreeSet<Point> {
    reached(case, transport).into_values().flatten().collect()
}

/// Whether a step is a `public/auth` login whose token the connection may remember.
fn logs_in(step: &Step) -> bool {
    matches!(
        step.auth,
        Auth::ClientCredentials(_) | Auth::ClientSignature(_)
    ) && step
        .call_method()
        .is_none_or(|method| method == spec::AUTH_METHOD)
}

fn step_points(
    step: &Step,
    travels: TransportKind,
    logged_in: &BTreeSet<Option<&str>>,
    exchanged: &BTreeSet<&str>,
) -> BTreeSet<Point> {
    let mut points = BTreeSet::new();
    points.insert(transport_point(travels));
    if let Some(auth) = auth_point(step, travels, logged_in) {
        points.insert(auth);
    }
    points.insert(role_point(step, exchanged));
    points.extend(page_points(step));
    if holds_every_entry(step) {
        points.insert(Point::Every);
    }
    points.extend(encoding_points(step, travels));
    points.insert(timing_point(step));
    points
}

fn transport_point(transport: TransportKind) -> Point {
    match transport {
        TransportKind::HttpQuery => Point::HttpQuery,
        TransportKind::HttpBody => Point::HttpBody,
        TransportKind::Ws => Point::Ws,
        TransportKind::Rest => Point::Rest,
    }
}

/// How the step authenticates: a call without credentials over a WebSocket that logged
/// in earlier goes with the token the connection remembers.
fn auth_point(
    step: &Step,
    travels: TransportKind,
    logged_in: &BTreeSet<Option<&str>>,
) -> Option<Point> {
    Some(match &step.auth {
        Auth::None => {
            let private = step
                .call_method()
                .and_then(spec::method)
                .is_some_and(|method| method.private);
            if travels == TransportKind::Ws
                && private
                && logged_in.contains(&step.connection.as_deref())
            {
                Point::Remembered
            } else {
                return None;
            }
        }
        Auth::Bearer(_) => Point::Bearer,
        Auth::ClientCredentials(_) => Point::ClientCredentials,
        Auth::ClientSignature(_) => Point::ClientSignature,
        Auth::Basic(_) => Point::Basic,
        Auth::Signed(_) => Point::Signed,
        Auth::ApiKey(_) => Point::ApiKey,
    })
}

/// As whom: a token captured from an exchange is a subaccount's exchanged token.
fn role_point(step: &Step, exchanged: &BTreeSet<&str>) -> Point {
    if let Auth::Bearer(bearer) = &step.auth
        && let BearerToken::Given(token) = &bearer.token
        && exchanged
            .iter()
            .any(|name| token.contains(&format!("{{{{{name}}}}}")))
    {
        return Point::Exchanged;
    }
    match step.auth.account() {
        Some("sub") => Point::Sub,
        Some("two_factor") => Point::TwoFactor,
        _ => Point::Main,
    }
}

/// A walk reads its first page and follows the continuation to later ones; one whose
/// window holds no more entries than a page ends on an exactly full page. A call that
/// sends a captured continuation reads a later page; any other call of a paged method, the
/// first.
fn page_points(step: &Step) -> Vec<Point> {
    match &step.kind {
        StepKind::Walk(walk) => {
            let mut points = vec![Point::First, Point::Later];
            if walk
                .window
                .as_ref()
                .is_some_and(|window| window.entries <= walk.count)
            {
                points.push(Point::FullLast);
            }
            points
        }
        _ if step.params.contains_key(&Walk::default_cursor()) => vec![Point::Later],
        _ if step
            .call_method()
            .and_then(spec::method)
            .is_some_and(|method| method.paging.is_some()) =>
        {
            vec![Point::First]
        }
        _ => Vec::new(),
    }
}

/// Whether the step's checks hold every entry of a list: a `[*]` matcher, a walk (which
/// holds every entry of every page), or a result held to a schema (the step's, or the
/// method's own unless the step turns it off), which holds every item.
fn holds_every_entry(step: &Step) -> bool {
    let expect = &step.expect;
    let schema_held = !expect.no_schema
        && (expect.schema.is_some() || expect.outcome == Outcome::Result)
        && matches!(step.kind, StepKind::Call(_) | StepKind::InFlight { .. });
    expect
        .matchers
        .iter()
        .any(|matcher| matcher.path.contains("[*]"))
        || matches!(step.kind, StepKind::Walk(_))
        || schema_held
}

/// How the step's values are written: over the query string, a value that needs
/// percent-encoding; anywhere, a non-ASCII one; over a JSON-RPC body or WebSocket, JSON.
fn encoding_points(step: &Step, travels: TransportKind) -> Vec<Point> {
    let mut points = Vec::new();
    if matches!(travels, TransportKind::HttpBody | TransportKind::Ws) {
        points.push(Point::JsonBody);
    }
    let mut strings = Vec::new();
    for value in step.params.values() {
        strings_in(value, &mut strings);
    }
    if let StepKind::Raw { text, .. } = &step.kind {
        strings.push(text.as_str());
    }
    if strings.iter().any(|text| !text.is_ascii()) {
        points.push(Point::NonAscii);
    }
    if travels == TransportKind::HttpQuery
        && strings
            .iter()
            .any(|text| without_templates(text).chars().any(needs_percent))
    {
        points.push(Point::Percent);
    }
    points
}

fn strings_in<'a>(value: &'a Value, into: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => into.push(text),
        Value::Array(items) => items.iter().for_each(|item| strings_in(item, into)),
        Value::Object(members) => members.values().for_each(|item| strings_in(item, into)),
        _ => {}
    }
}

/// The text with its `{{...}}` templates taken out (their values are the run's).
fn without_templates(text: &str) -> String {
    let mut kept = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        kept.push_str(&rest[..start]);
        match rest[start..].find("}}") {
            Some(end) => rest = &rest[start + end + 2..],
            None => {
                rest = "";
            }
        }
    }
    kept.push_str(rest);
    kept
}

/// Whether a character is written percent-encoded in a query value (RFC 3986: anything
/// but the unreserved characters).
fn needs_percent(character: char) -> bool {
    !(character.is_ascii_alphanumeric() || matches!(character, '-' | '.' | '_' | '~'))
}

/// When the step goes: after a wait, once a lifetime has passed; released with copies of
/// itself, under a race.
fn timing_point(step: &Step) -> Point {
    match &step.kind {
        StepKind::Race { .. } | StepKind::InFlight { .. } => Point::Race,
        _ if step.wait.is_some() => Point::AfterLifetime,
        _ => Point::AtOnce,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse_case;
    use std::path::Path;

    fn case(text: &str) -> Case {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let catalog = crate::check::Catalog::load(&root.join("clauses.toml")).unwrap();
        let schemas = crate::check::SchemaSet::load(&root.join("schemas")).unwrap();
        parse_case(Path::new("t.toml"), text, &catalog, &schemas).unwrap()
    }

    #[test]
    fn a_ws_call_without_token_after_a_login_goes_with_the_remembered_token() {
        let case = case(
            r#"
id = "t"
title = "t"
clauses = ["auth.ws.session_memory"]
transports = ["ws"]

[[step]]
call = "public/auth"
auth = { mode = "client_credentials", account = "sub" }

[[step]]
call = "private/get_mmp_status"
"#,
        );
        let points = &reached(&case, TransportKind::Ws)["auth.ws.session_memory"];
        assert!(points.contains(&Point::Remembered), "{points:?}");
        assert!(points.contains(&Point::ClientCredentials));
        assert!(points.contains(&Point::Sub) && points.contains(&Point::Main));
        assert!(points.contains(&Point::Ws) && points.contains(&Point::JsonBody));
        let http = reached_by_execution(&case, TransportKind::HttpQuery);
        assert!(!http.contains(&Point::Remembered));
    }

    #[test]
    fn a_walk_reaches_later_pages_and_every_entry() {
        let case = case(
            r#"
id = "t"
title = "t"
clauses = ["m.get_transaction_log.continuation"]
transports = ["http-query"]

[[step]]
auth = { mode = "bearer" }

[step.walk]
call = "private/get_transaction_log"
params = { currency = "BTC", start_timestamp = 0, end_timestamp = "{{now_ms}}" }
items = "logs"
count = 1
timestamp = "timestamp"
window = { start = "start_timestamp", end = "end_timestamp", entries = 1 }
"#,
        );
        let points = reached_by_execution(&case, TransportKind::HttpQuery);
        for point in [Point::First, Point::Later, Point::FullLast, Point::Every] {
            assert!(points.contains(&point), "{point} in {points:?}");
        }
        assert!(
            !points.contains(&Point::Percent),
            "templates are not counted"
        );
    }

    #[test]
    fn query_values_that_need_encoding_and_step_clauses_are_told_apart() {
        let case = case(
            r#"
id = "t"
title = "t"
clauses = ["auth.signed.accepted", "auth.signed.request_data"]
transports = ["http-query"]

[[step]]
call = "public/get_book_summary_by_instrument"
params = { instrument_name = "prüfung a/b" }
clauses = ["auth.signed.request_data"]
auth = { mode = "signed" }
expect = { outcome = "any" }
"#,
        );
        let reached = reached(&case, TransportKind::HttpQuery);
        let points = &reached["auth.signed.request_data"];
        assert!(points.contains(&Point::Percent) && points.contains(&Point::NonAscii));
        assert!(points.contains(&Point::Signed));
        assert!(reached["auth.signed.accepted"].is_empty());
    }

    #[test]
    fn templates_are_taken_out_of_query_values() {
        assert_eq!(without_templates("a{{b c}}d{{e"), "ad");
        assert!(!needs_percent('~') && needs_percent(' ') && needs_percent('/'));
    }
}
