//! The server's side of a proxied session: every answer the proxy saw is judged by what
//! SPEC.md lets one judge of an answer seen after its request, and nothing more.
//!
//! - the envelope (`jsonrpc::validate_response`): `jsonrpc` is `"2.0"`, one of `result`
//!   and `error`, the error object (an `info` clause: SPEC.md does not show its shape);
//! - the id: an answer to a request that carried an integer id echoes it;
//! - a success over HTTP comes with status 200 (SPEC.md section 7);
//! - a result against its method's schema, and a second-factor error named with another
//!   code than 13668 (`check::judge_captured`, as `harness lint-response` judges one);
//! - pages against their request's `count` and window, and the pages of a walk against
//!   each other (`pages.rs`).
//!
//! What needs a request the proxy did not see, or a state it cannot know (whether a call
//! should have succeeded, whether the account has 2FA enabled, what a token grants), is not
//! claimed. A verdict takes its clause's level: only a `must` clause fails, so no point
//! SPEC.md leaves open fails here.

use serde_json::Value;

use super::pages::{check_pages, judged};
use crate::judge::{Record, Tally};
use harness_model::check::{Catalog, Level, SchemaSet, judge_captured};
use harness_protocol::jsonrpc::validate_response;
use harness_protocol::wire::TransportKind;

/// The envelope clauses every answer is held to.
pub(crate) const ENVELOPE_CLAUSES: &[&str] = &[
    "env.response.jsonrpc",
    "env.response.id",
    "env.response.exclusive",
    "env.error.object",
];

/// The clause of a success over HTTP: status 200.
pub(crate) const HTTP_SUCCESS_CLAUSE: &str = "http.status.success";

/// Judges every answered request's answer.
pub(crate) fn assess_answers(records: &[Record], schemas: &SchemaSet, catalog: &Catalog) -> Tally {
    let mut tally = Tally::default();
    for record in records {
        assess_answer(record, schemas, catalog, &mut tally);
    }
    check_pages(records, &mut tally);
    tally
}

/// Judges one answer; a request without an answer, not sent with GET or over WebSocket,
/// or that names no method, is skipped.
pub(crate) fn assess_answer(
    record: &Record,
    schemas: &SchemaSet,
    catalog: &Catalog,
    tally: &mut Tally,
) {
    let Some(answer) = &record.answer else {
        return;
    };
    // SPEC.md section 4: every method is invoked with GET (or as a WebSocket message); what
    // a server answers a request sent otherwise is not stated (`client.http.method`
    // holds the client to it).
    if !matches!(record.http_method.as_str(), "GET" | "WS") {
        return;
    }
    let call = record.call();
    let Some(method) = call.method.clone() else {
        return;
    };
    let reporter = Reporter {
        catalog,
        method: &method,
        transport: record.transport,
        seq: record.seq,
    };
    let request_id = call
        .envelope
        .as_ref()
        .and_then(|envelope| envelope.get("id"))
        .and_then(Value::as_u64);
    let mut broken: Vec<&str> = Vec::new();
    for violation in validate_response(&answer.body, request_id) {
        broken.push(violation.clause());
        reporter.report(tally, violation.clause(), violation.to_string());
    }
    let is_error = answer.body.get("error").is_some();
    for clause in ENVELOPE_CLAUSES {
        let applies = *clause != "env.error.object" || is_error;
        if applies && !broken.contains(clause) {
            tally.pass(clause, record.transport);
        }
    }
    let result = answer.body.get("result").filter(|_| !is_error);
    if let (Some(status), Some(_)) = (answer.status, result) {
        if status == 200 {
            tally.pass(HTTP_SUCCESS_CLAUSE, record.transport);
        } else {
            reporter.report(
                tally,
                HTTP_SUCCESS_CLAUSE,
                format!("a result came with HTTP status {status}, not 200"),
            );
        }
    }
    reporter.judge_body(&answer.body, schemas, result.is_some(), tally);
}

/// Where a proxied answer's findings go: a `must` clause fails, any other warns.
struct Reporter<'a> {
    catalog: &'a Catalog,
    method: &'a str,
    transport: TransportKind,
    seq: u64,
}

impl Reporter<'_> {
    fn report(&self, tally: &mut Tally, clause: &str, message: String) {
        let message = format!("the server's answer to {}: {message}", self.method);
        match self.catalog.get(clause).map(|clause| clause.level) {
            Some(Level::Must) => tally.fail(clause, self.transport, Some(self.seq), message),
            _ => tally.warn(clause, self.transport, Some(self.seq), message),
        }
    }

    /// Judges the answer's body past its envelope (judged against the request's id by the
    /// caller): the result's schema and the method's rules ([`judge_captured`]).
    fn judge_body(&self, body: &Value, schemas: &SchemaSet, has_result: bool, tally: &mut Tally) {
        let (method, transport) = (self.method, self.transport);
        let is_error = body.get("error").is_some();
        let captured = judge_captured(method, body, schemas, self.catalog);
        let mut judged: Vec<String> = Vec::new();
        for observation in captured
            .observations
            .iter()
            .filter(|observation| !ENVELOPE_CLAUSES.contains(&observation.clause.as_str()))
        {
            judged.push(observation.clause.clone());
            self.report(
                tally,
                &observation.clause,
                format!("{}: {}", observation.path, observation.message),
            );
        }
        if let Some(schema_clause) = harness_model::check::result_clause(method)
            && has_result
            && schemas.for_method(method).is_some()
            && !judged.iter().any(|clause| clause == schema_clause)
        {
            tally.pass(schema_clause, transport);
        }
        if is_error
            && harness_protocol::spec::NEEDS_SECOND_FACTOR.contains(&method)
            && !judged
                .iter()
                .any(|clause| clause == "auth.two_factor.13668")
        {
            tally.pass("auth.two_factor.13668", transport);
        }
    }
}

/// The transports the answers of `records` came over.
pub(crate) fn transports(records: &[Record]) -> Vec<TransportKind> {
    TransportKind::ALL
        .into_iter()
        .filter(|transport| {
            records
                .iter()
                .any(|record| record.transport == *transport && judged(record))
        })
        .collect()
}
