//! Turning a judged session into the report `harness run` writes: one result per client
//! clause of the catalog and transport seen, with the offending requests as exchanges, so
//! every report format (JSON, JUnit, Markdown, HTML) works unchanged and redacts the same.

use std::time::Duration;

use serde_json::Value;

use super::record::Record;
use super::{Cell, Tally};
use harness_model::check::{Catalog, Finding, Level, Redactor, Side, Verdict};
use harness_model::results::{CaseResult, RunReport};
use harness_model::target_file::Target;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::Received;
use harness_protocol::wire::SentRequest;
use harness_protocol::wire::TransportKind;

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
        side: harness_model::check::Side::Client,
        interrupted: None,
    }
}

/// The result of one clause over one transport (used by `harness proxy` for the server's
/// side too, from a tally of server clauses).
pub(crate) fn result(
    judged: &Judged<'_>,
    clause: &str,
    text: &str,
    level: Level,
    transport: TransportKind,
) -> CaseResult {
    let cell = judged.tally.get(clause, transport);
    let verdict = cell.and_then(Cell::verdict);
    // A finding on an `info` clause is information, never a failure or a warning.
    let as_level = |verdict: Verdict| {
        if level == Level::Info && matches!(verdict, Verdict::Fail | Verdict::Warn) {
            Verdict::Info
        } else {
            verdict
        }
    };
    let kept: Vec<(&Finding, Option<u64>)> = cell
        .map(|cell| cell.findings_with_requests().collect())
        .unwrap_or_default();
    let findings: Vec<Finding> = kept
        .iter()
        .map(|(finding, seq)| {
            Finding::new(
                as_level(finding.verdict),
                finding.clauses.clone(),
                format!("request #{}: {}", seq.unwrap_or(0), finding.message),
            )
        })
        .collect();
    let notes: Vec<String> = cell.map(|cell| cell.notes.clone()).unwrap_or_default();
    let message = result_message(cell, verdict, &findings, &kept, &notes, (clause, transport));
    let exchanges = offending_exchanges(judged, &kept);
    CaseResult {
        case: clause.to_owned(),
        title: text.to_owned(),
        path: "cases/clauses.toml".to_owned(),
        transport,
        verdict: verdict.map_or(Verdict::Skip, as_level),
        clauses: vec![clause.to_owned()],
        checks: vec![clause.to_owned()],
        message,
        findings,
        notes,
        exchanges,
        duration_ms: 0.0,
        points: Vec::new(),
    }
}

/// The result's message: why nothing was judged, how many checks held, or the first
/// finding at the worst verdict with the count of requests that broke the clause.
fn result_message(
    cell: Option<&Cell>,
    verdict: Option<Verdict>,
    findings: &[Finding],
    kept: &[(&Finding, Option<u64>)],
    notes: &[String],
    (clause, transport): (&str, TransportKind),
) -> String {
    match verdict {
        // Notes alone judge nothing: the first says why.
        None => notes
            .first()
            .cloned()
            .unwrap_or_else(|| skip_reason(clause, transport)),
        Some(Verdict::Pass) => format!("{} checks held", cell.map_or(0, |cell| cell.passes)),
        Some(worst) => {
            let failures = cell.map_or(0, Cell::failures);
            let more = if failures > 1 {
                format!(" ({failures} requests in all)")
            } else {
                String::new()
            };
            findings
                .iter()
                .zip(kept)
                .find(|(_, (finding, _))| finding.verdict == worst)
                .map(|(shown, _)| format!("{}{more}", shown.message))
                .unwrap_or_default()
        }
    }
}

/// The exchanges of the requests that broke the clause, failures first, at most
/// [`EXCHANGES_PER_RESULT`].
fn offending_exchanges(judged: &Judged<'_>, kept: &[(&Finding, Option<u64>)]) -> Vec<Exchange> {
    // Failures first: they are what the reader came for.
    let mut offending: Vec<u64> = [Verdict::Fail, Verdict::Warn]
        .iter()
        .flat_map(|wanted| {
            kept.iter()
                .filter(move |(finding, _)| finding.verdict == *wanted)
                .filter_map(|(_, seq)| *seq)
        })
        .collect();
    offending.dedup();
    offending
        .iter()
        .take(EXCHANGES_PER_RESULT)
        .filter_map(|seq| judged.records.iter().find(|record| record.seq == *seq))
        .map(|record| exchange(judged.target, record))
        .collect()
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
pub(crate) fn exchange(target: &Target, record: &Record) -> Exchange {
    let origin = if record.transport == TransportKind::Ws {
        target
            .ws_url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches(harness_protocol::spec::WS_PATH)
            .to_owned()
    } else {
        target
            .base_url
            .trim_end_matches(harness_protocol::spec::API_PREFIX)
            .to_owned()
    };
    let id = record
        .call()
        .envelope
        .and_then(|envelope| envelope.get("id").and_then(Value::as_u64));
    let response = record.answer.as_ref().map(|answer| Received {
        status: answer.status,
        body: answer.body.to_string(),
        json: Some(answer.body.clone()),
        duplicate_members: Vec::new(),
        binary_frame: false,
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

#[cfg(test)]
mod tests;
