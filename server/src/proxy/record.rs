//! `--record DIR`: a proxied session written down, one client session (one connection) at
//! a time, as
//!
//! - `snapshots/<session>.snap`: the answers, in the insta format `harness run --snapshots`
//!   writes (`report::snapshot`), tokens, signatures and times near now normalized;
//! - `cases/<session>.toml`: a case file `harness run --add-cases DIR/cases` replays
//!   against any target. It keeps the requests (method and parameters, over the transport
//!   they took) and asserts only what SPEC.md states of any answer: the envelope, and the
//!   method's result schema where it answers with a result (`outcome = "any"`: whether a
//!   call succeeds depends on the target's data, which SPEC.md does not state).
//!
//! Credentials are not replayed as recorded: a private call becomes a `bearer` step that
//! logs in with the replaying target's account, and the credential calls themselves
//! (`public/auth`, token exchange and fork, logout) are left out. Every text written goes
//! through the session's [`Redactor`](harness_model::check::Redactor).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Session;
use crate::judge::{self, Record};
use harness_model::check::{Catalog, Verdict};
use harness_model::report as snapshot;
use harness_model::results::CaseResult;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// Whether a replay leaves a call out: it makes its own credentials (the token-issuing
/// methods) and must not end its session (logout).
fn not_replayed(method: &str) -> bool {
    method == spec::LOGOUT_METHOD
        || spec::token_issuing_methods().any(|issuing| issuing.name == method)
}

/// The envelope clauses every replayed case checks.
const REPLAY_CLAUSES: &[&str] = &[
    "env.response.jsonrpc",
    "env.response.id",
    "env.response.exclusive",
];

/// What `write` wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Snapshot files.
    pub snapshots: Vec<PathBuf>,
    /// Case files.
    pub cases: Vec<PathBuf>,
}

/// The records of each client session (one connection), in order of first request.
pub fn sessions(records: &[Record]) -> Vec<(String, Vec<&Record>)> {
    let mut order: Vec<String> = Vec::new();
    let mut by_connection: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for record in records {
        if !by_connection.contains_key(record.connection.as_str()) {
            order.push(record.connection.clone());
        }
        by_connection
            .entry(record.connection.as_str())
            .or_default()
            .push(record);
    }
    order
        .into_iter()
        .filter_map(|connection| {
            let records = by_connection.remove(connection.as_str())?;
            Some((connection, records))
        })
        .collect()
}

/// Writes the snapshots and case files of every session into `dir`.
pub fn write(
    dir: &Path,
    session: &Session,
    catalog: &Catalog,
    now_ms: u64,
) -> std::io::Result<Written> {
    let mut written = Written::default();
    let snapshots_dir = dir.join("snapshots");
    let cases_dir = dir.join("cases");
    std::fs::create_dir_all(&cases_dir)?;
    let mut results = Vec::new();
    for (index, (_, records)) in sessions(&session.records).iter().enumerate() {
        let name = format!("session_{}", index + 1);
        results.push(snapshot_result(&name, records, session));
        if let Some(text) = case_file(&name, records, session, catalog) {
            let path = cases_dir.join(format!("{name}.toml"));
            std::fs::write(&path, text)?;
            written.cases.push(path);
        }
    }
    snapshot::write_snapshots(&snapshots_dir, &results, &session.redactor, now_ms)?;
    written.snapshots = results
        .iter()
        .map(|result| snapshots_dir.join(format!("{}.snap", snapshot::snapshot_name(result))))
        .collect();
    Ok(written)
}

/// A session's answers as the execution a snapshot is made of.
fn snapshot_result(name: &str, records: &[&Record], session: &Session) -> CaseResult {
    CaseResult {
        case: format!("proxy.{name}"),
        title: format!("answers of client session {name}"),
        path: String::new(),
        transport: records
            .first()
            .map_or(TransportKind::HttpQuery, |record| record.transport),
        verdict: Verdict::Info,
        clauses: Vec::new(),
        checks: Vec::new(),
        message: String::new(),
        findings: Vec::new(),
        notes: Vec::new(),
        exchanges: records
            .iter()
            .filter(|record| record.answer.is_some())
            .map(|record| judge::exchange(&session.client_target, record))
            .collect(),
        duration_ms: 0.0,
        points: Vec::new(),
    }
}

/// The case file replaying a session, or `None` when it made no call a replay keeps.
pub fn case_file(
    name: &str,
    records: &[&Record],
    session: &Session,
    catalog: &Catalog,
) -> Option<String> {
    let mut steps = Vec::new();
    let mut clauses: Vec<String> = REPLAY_CLAUSES.iter().map(|c| (*c).to_owned()).collect();
    let mut left_out = 0usize;
    let transport = records
        .iter()
        .map(|record| record.transport)
        .find(|transport| *transport != TransportKind::Rest)?;
    for record in records {
        match step(record, session) {
            Some((method, table)) => {
                if let Some(clause) = harness_model::check::result_clause(&method)
                    && catalog.get(clause).is_some()
                    && !clauses.iter().any(|kept| kept == clause)
                {
                    clauses.push(clause.to_owned());
                }
                steps.push(toml::Value::Table(table));
            }
            None => left_out += 1,
        }
    }
    if steps.is_empty() {
        return None;
    }
    let mut case = toml::Table::new();
    case.insert("id".into(), format!("recorded.{name}").into());
    case.insert(
        "title".into(),
        format!("replay of client session {name} recorded by harness proxy").into(),
    );
    case.insert(
        "clauses".into(),
        toml::Value::Array(clauses.into_iter().map(toml::Value::from).collect()),
    );
    case.insert(
        "transports".into(),
        toml::Value::Array(vec![transport.to_string().into()]),
    );
    case.insert("step".into(), toml::Value::Array(steps));
    let body = toml::to_string(&case).ok()?;
    Some(format!(
        "# Recorded by harness proxy in front of {}: {} requests, {left_out} not replayed\n\
         # (credential calls, Direct Access REST, unreadable or unanswered requests).\n\
         # Asserts only what SPEC.md states of any answer; replay with\n\
         # `harness run --target FILE --add-cases DIR`.\n{body}",
        session.redactor.text(&session.upstream.name),
        records.len()
    ))
}

/// One replayed step: the method and the step's table.
fn step(record: &Record, session: &Session) -> Option<(String, toml::Table)> {
    if record.transport == TransportKind::Rest || record.answer.is_none() {
        return None;
    }
    let call = record.call();
    if call.unparsable.is_some() {
        return None;
    }
    let method = call.method.clone()?;
    if not_replayed(&method) || !(method.starts_with("public/") || method.starts_with("private/")) {
        return None;
    }
    let mut params = toml::Table::new();
    for (name, value) in &call.params {
        if name == "access_token" || value.is_null() {
            continue;
        }
        let value = session.redactor.json(value);
        if value.to_string().contains("{{") {
            return None;
        }
        params.insert(
            name.clone(),
            toml::Value::try_from(without_nulls(&value)).ok()?,
        );
    }
    let mut table = toml::Table::new();
    table.insert("call".into(), method.clone().into());
    table.insert("transport".into(), record.transport.to_string().into());
    if !params.is_empty() {
        table.insert("params".into(), toml::Value::Table(params));
    }
    if method.starts_with("private/") {
        let mut auth = toml::Table::new();
        auth.insert("mode".into(), "bearer".into());
        table.insert("auth".into(), toml::Value::Table(auth));
    }
    let mut expect = toml::Table::new();
    expect.insert("outcome".into(), "any".into());
    table.insert("expect".into(), toml::Value::Table(expect));
    Some((method, table))
}

/// A JSON value TOML can hold: members and items that are null left out.
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(_, member)| !member.is_null())
                .map(|(name, member)| (name.clone(), without_nulls(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| !item.is_null())
                .map(without_nulls)
                .collect(),
        ),
        other => other.clone(),
    }
}
