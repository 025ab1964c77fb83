//! Turning a judged session into the report `harness run` writes: one result per client
//! clause of the catalog and transport seen, with the offending requests as exchanges, so
//! every report format (JSON, JUnit, Markdown, HTML) works unchanged and redacts the same.

use std::time::Duration;

use serde_json::Value;

use super::record::Record;
use super::{Noted, Tally};
use crate::case::TransportKind;
use crate::check::{Catalog, Finding, Level, Redactor, Side, Verdict};
use crate::run::{CaseResult, RunReport};
use crate::target_file::Target;
use crate::transport::{Exchange, Received, SentRequest};

/// Offending requests shown per result.
const EXCHANGES_PER_RESULT: usize = 3;

/// What the report of a judged session is made from.
#[derive(Clone, Debug)]
pub struct Judged<'a> {
    /// Every request, in arrival order.
    pub records: &'a [Record],
    /// The verdicts.
    pub tally: &'a Tally,
    /// The clause catalog (its `side = "client"` clauses are reported).
    pub catalog: &'a Catalog,
    /// The judge's target (URLs for the exchanges, name for the report).
    pub target: &'a Target,
    /// Knows every secret and token of the session.
    pub redactor: Redactor,
    /// How long the session lasted.
    pub duration: Duration,
    /// Only clauses whose id contains this text.
    pub filter: Option<&'a str>,
    /// Only these transports.
    pub transports: Option<&'a [TransportKind]>,
}

/// One result per client clause and transport seen.
pub fn to_run_report(judged: &Judged<'_>) -> RunReport {
    let mut results = Vec::new();
    for transport in TransportKind::ALL {
        let seen = judged
            .records
            .iter()
            .any(|record| record.transport == transport);
        let wanted = judged
            .transports
            .is_none_or(|only| only.contains(&transport));
        if !seen || !wanted {
            continue;
        }
        for clause in judged
            .catalog
            .iter()
            .filter(|clause| clause.side == Side::Client)
        {
            if judged
                .filter
                .is_some_and(|filter| !clause.id.contains(filter))
            {
                continue;
            }
            results.push(result(
                judged,
                &clause.id,
                &clause.text,
                clause.level,
                transport,
            ));
        }
    }
    RunReport {
        target: judged.target.name.clone(),
        results,
        duration: judged.duration,
        redactor: judged.redactor.clone(),
        side: crate::check::Side::Client,
        interrupted: None,
    }
}

fn result(
    judged: &Judged<'_>,
    clause: &str,
    text: &str,
    level: Level,
    transport: TransportKind,
) -> CaseResult {
    let cell = judged.tally.get(clause, transport);
    let mut verdict = cell
        .and_then(|cell| cell.verdict())
        .unwrap_or(Verdict::Skip);
    if level == Level::Info && matches!(verdict, Verdict::Fail | Verdict::Warn) {
        verdict = Verdict::Info;
    }
    let noted: Vec<&Noted> = cell
        .map(|cell| cell.noted.iter().collect())
        .unwrap_or_default();
    let worst = |verdict| noted.iter().find(|noted| noted.verdict == verdict);
    let message = match verdict {
        Verdict::Fail | Verdict::Warn | Verdict::Info => {
            let first = worst(Verdict::Fail)
                .or_else(|| worst(Verdict::Warn))
                .or_else(|| noted.first());
            let failures = cell.map_or(0, |cell| cell.failures());
            let more = if failures > 1 {
                format!(" ({failures} requests in all)")
            } else {
                String::new()
            };
            first
                .map(|noted| {
                    format!(
                        "request #{}: {}{more}",
                        noted.seq.unwrap_or(0),
                        noted.message
                    )
                })
                .unwrap_or_default()
        }
        Verdict::Pass => format!("{} checks held", cell.map_or(0, |cell| cell.passes)),
        _ => skip_reason(clause, transport),
    };
    let findings = noted
        .iter()
        .filter(|noted| noted.verdict != Verdict::Info)
        .map(|noted| {
            Finding::new(
                noted.verdict,
                vec![clause.to_owned()],
                format!("request #{}: {}", noted.seq.unwrap_or(0), noted.message),
            )
        })
        .collect();
    let notes = noted
        .iter()
        .filter(|noted| noted.verdict == Verdict::Info)
        .map(|noted| noted.message.clone())
        .collect();
    // Failures first: they are what the reader came for.
    let mut offending: Vec<u64> = [Verdict::Fail, Verdict::Warn]
        .iter()
        .flat_map(|verdict| noted.iter().filter(move |noted| noted.verdict == *verdict))
        .filter_map(|noted| noted.seq)
        .collect();
    offending.dedup();
    let exchanges = offending
        .iter()
        .take(EXCHANGES_PER_RESULT)
        .filter_map(|seq| judged.records.iter().find(|record| record.seq == *seq))
        .map(|record| exchange(judged.target, record))
        .collect();
    CaseResult {
        case: clause.to_owned(),
        title: text.to_owned(),
        path: "cases/clauses.toml".to_owned(),
        transport,
        verdict,
        clauses: vec![clause.to_owned()],
        checks: vec![clause.to_owned()],
        message,
        findings,
        notes,
        exchanges,
        duration_ms: 0.0,
    }
}

/// Why nothing was judged for a clause over a transport, with a hint where one helps.
fn skip_reason(clause: &str, transport: TransportKind) -> String {
    let hint = match clause {
        "client.log_type.tolerant" => "; --scenario unknown-types serves more",
        "client.pagination.follow" => "; --scenario short-pages provokes early stops",
        "client.env.jsonrpc" | "client.env.id" | "client.env.method" | "client.env.params"
            if transport == TransportKind::HttpQuery =>
        {
            "; query-string requests carry no json-rpc envelope"
        }
        _ => "",
    };
    format!("no request over {transport} exercised this clause{hint}")
}

/// An offending request as an exchange of the report.
fn exchange(target: &Target, record: &Record) -> Exchange {
    let origin = if record.transport == TransportKind::Ws {
        target
            .ws_url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches("/ws/api/v2")
            .to_owned()
    } else {
        target.base_url.trim_end_matches("/api/v2").to_owned()
    };
    let id = record
        .call()
        .envelope
        .and_then(|envelope| envelope.get("id").and_then(Value::as_u64));
    let response = record.answer.as_ref().map(|answer| Received {
        status: answer.status,
        body: answer.body.to_string(),
        json: Some(answer.body.clone()),
    });
    Exchange {
        transport: record.transport,
        request: SentRequest {
            method: record.http_method.clone(),
            url: format!("{origin}{}", record.uri),
            headers: record.headers.clone(),
            body: (!record.body.is_empty())
                .then(|| String::from_utf8_lossy(&record.body).into_owned()),
            id,
        },
        response,
        failure: None,
        elapsed_ms: record.answer.as_ref().map_or(0.0, |answer| {
            answer.at_ms.saturating_sub(record.at_ms) as f64
        }),
    }
}
