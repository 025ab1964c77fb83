//! One report of both sides of a proxied session, in the model every report writer reads
//! (`results::RunReport`): the client section is the client judge's report of the client's
//! requests, its results' case ids prefixed `client:`; the server section holds one result
//! per server clause and transport the answers were judged on, prefixed `server:`. Every
//! finding names its clause (the result's), the side at fault (its message opens with it)
//! and the exchange (`request #n`, and the exchange itself among the result's).

use std::time::Duration;

use super::{Session, server};
use crate::judge::{self, Judged, Tally};
use harness_model::check::{Catalog, SchemaSet, Side, Verdict};
use harness_model::results::{CaseResult, RunReport};

/// The prefix of a client-side result's case id.
pub const CLIENT_PREFIX: &str = "client:";
/// The prefix of a server-side result's case id.
pub const SERVER_PREFIX: &str = "server:";

/// Both sides judged.
#[derive(Clone, Debug)]
pub struct Verdicts {
    /// The client judge's tally of the client's requests.
    pub client: Tally,
    /// The tally of the server's answers.
    pub(crate) server: Tally,
}

/// Judges both sides of a session.
pub fn judge_session(session: &Session, schemas: &SchemaSet, catalog: &Catalog) -> Verdicts {
    Verdicts {
        client: judge::assess(&session.records, &session.knowledge),
        server: server::assess_answers(&session.records, schemas, catalog),
    }
}

/// The report of a judged session: client section, then server section.
pub fn to_run_report(
    session: &Session,
    verdicts: &Verdicts,
    catalog: &Catalog,
    duration: Duration,
) -> RunReport {
    let judged = |tally| Judged {
        records: &session.records,
        tally,
        catalog,
        target: &session.client_target,
        redactor: session.redactor.clone(),
        duration,
        filter: None,
        transports: None,
    };
    let client = judged(&verdicts.client);
    let mut results: Vec<CaseResult> = judge::to_run_report(&client).results;
    for result in &mut results {
        sided(result, CLIENT_PREFIX, "the client");
    }
    let server = judged(&verdicts.server);
    for transport in server::transports(&session.records) {
        for (clause_id, _, _) in verdicts
            .server
            .iter()
            .filter(|(_, seen, _)| *seen == transport)
        {
            let Some(clause) = catalog.get(clause_id) else {
                continue;
            };
            let mut result =
                judge::clause_result(&server, &clause.id, &clause.text, clause.level, transport);
            sided(&mut result, SERVER_PREFIX, "the server");
            results.push(result);
        }
    }
    RunReport {
        target: format!("{} through harness proxy", session.upstream.name),
        results,
        duration,
        redactor: session.redactor.clone(),
        side: Side::Client,
        interrupted: None,
    }
}

/// Names the side in a result's case id, title and findings.
fn sided(result: &mut CaseResult, prefix: &str, side: &str) {
    result.case = format!("{prefix}{}", result.case);
    result.title = format!("{side}: {}", result.title);
    for finding in &mut result.findings {
        if matches!(finding.verdict, Verdict::Fail | Verdict::Warn) {
            finding.message = format!("{side} at fault, {}", finding.message);
        }
    }
    if matches!(result.verdict, Verdict::Fail | Verdict::Warn) {
        result.message = format!("{side} at fault, {}", result.message);
    }
}

/// The results of one side (`client:` or `server:`).
pub fn side<'a>(report: &'a RunReport, prefix: &'a str) -> impl Iterator<Item = &'a CaseResult> {
    report
        .results
        .iter()
        .filter(move |result| result.case.starts_with(prefix))
}
