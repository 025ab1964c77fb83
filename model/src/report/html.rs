//! `report.html`: one self-contained page (inline CSS, no scripts, no external assets):
//! the summary, a matrix of clauses by transport coloured by verdict, and each result that
//! is not a pass with its clause, the SPEC.md words the clause enforces, exchange and
//! reproduction command.

use std::fmt::Write;

use super::{Context, Summary, failures_first, is_noteworthy, known_failures, shown_reproduction};
use crate::check::Verdict;
use crate::results::CaseResult;
use harness_protocol::wire::{Exchange, TransportKind};

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}\
.pass{background:#c8efc8}.fail{background:#f6b8b8}.warn{background:#fbe3a6}.info{background:#cfe3fb}.skip{background:#eee}\
.error{background:#e3b8f6}.xfail{background:#f3d3c4}.fixed{background:#b8e6e3}pre{background:#f7f7f7;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}\
.figure{display:inline-block;margin-right:1.5em;font-size:1.3em}\
blockquote.quote{margin:.5em 0;padding:4px 10px;border-left:4px solid #999;background:#fafafa}blockquote.quote p{margin:2px 0}";

/// Escapes text for HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Renders `report.html`: the head, the summary, the coverage tables, the results other
/// than pass and the known failures, redacted as a whole.
pub(crate) fn render_html(context: &Context<'_>, summary: &Summary) -> String {
    let report = context.report;
    let mut out = String::new();
    head(&mut out, context, summary);
    if let Some(extra) = &context.extra_html {
        out.push_str(extra);
    }
    matrix(&mut out, context, summary);
    out.push_str(&super::sections::sections_html(&summary.sections));
    out.push_str(&super::statements::statements_html(&summary.statements));
    out.push_str(&super::domains::domains_html(&summary.domains));
    if !summary.uncovered.is_empty() {
        let _ = write!(
            out,
            "<p>Not checked by any executed case: {}</p>",
            escape(&summary.uncovered.join(", "))
        );
    }
    out.push_str("<h2>Results other than pass</h2>");
    let mut any = false;
    for result in failures_first(report)
        .into_iter()
        .filter(|result| is_noteworthy(result))
    {
        any = true;
        noteworthy(&mut out, context, result);
    }
    let known = known_failures(report);
    if !any && known.is_empty() {
        out.push_str("<p>Every executed case passed.</p>");
    } else if !any {
        out.push_str("<p>Every executed case passed but the known failures below.</p>");
    }
    known_table(&mut out, context, &known);
    out.push_str("</body></html>\n");
    report.redactor.text(&out)
}

/// The page's head, title, provenance, interruption and the counts by verdict.
fn head(out: &mut String, context: &Context<'_>, summary: &Summary) {
    let report = context.report;
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Conformance report: {}</title><style>{STYLE}</style></head><body>",
        escape(&report.target)
    );
    let _ = write!(
        out,
        "<h1>Conformance report: {}</h1>",
        escape(&report.target)
    );
    let _ = write!(out, "<p>{}</p>", super::provenance(report, " &middot; "));
    if let Some(reason) = &report.interrupted {
        let note = super::not_run_note(|words| format!("&ldquo;{words}&rdquo;"));
        let _ = write!(
            out,
            "<p id=\"interrupted\"><b>Interrupted: {}.</b> {note}</p>",
            escape(reason)
        );
    }
    let _ = write!(out, "<section id=\"summary\">");
    for verdict in Verdict::ALL {
        let _ = write!(
            out,
            "<span class=\"figure {0}\" data-verdict=\"{0}\">{0}: <b>{1}</b></span>",
            verdict.as_str(),
            summary.count(verdict)
        );
    }
    let coverage = super::coverage_sentence(
        summary,
        report.side,
        |figure| format!("<b>{figure}</b>"),
        |word| format!("<code>{word}</code>"),
    );
    let _ = write!(out, "<p id=\"coverage\">{coverage}</p></section>");
}

/// The clauses by transport, coloured by verdict.
fn matrix(out: &mut String, context: &Context<'_>, summary: &Summary) {
    let _ = write!(
        out,
        "<h2>Clauses by transport</h2><table id=\"matrix\"><tr><th>clause</th><th>section</th><th>statement</th>"
    );
    for transport in TransportKind::ALL {
        let _ = write!(out, "<th>{transport}</th>");
    }
    out.push_str("</tr>");
    for clause in context.catalog.iter() {
        let Some(row) = summary.matrix.get(&clause.id) else {
            continue;
        };
        let _ = write!(
            out,
            "<tr class=\"clause\" data-clause=\"{0}\"><td><code>{0}</code></td><td>{1}</td><td>{2}</td>",
            escape(&clause.id),
            escape(&clause.section),
            escape(&clause.text)
        );
        for transport in TransportKind::ALL {
            match row.get(&transport) {
                Some(verdict) => {
                    let _ = write!(out, "<td class=\"{0}\">{0}</td>", verdict.as_str());
                }
                None => out.push_str("<td></td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// One result other than pass: its verdict, case, findings, the SPEC.md words, its last
/// exchange and how to reproduce it (open when it failed).
fn noteworthy(out: &mut String, context: &Context<'_>, result: &CaseResult) {
    let report = context.report;
    let _ = write!(
        out,
        "<details class=\"result {0}\"{1}><summary><b>{2}</b> <code>{3}</code> [{4}] &mdash; {5}</summary>",
        result.verdict.as_str(),
        if result.verdict == Verdict::Fail {
            " open"
        } else {
            ""
        },
        result.verdict.as_str().to_uppercase(),
        escape(&result.case),
        result.transport,
        escape(&report.redactor.text(&result.message))
    );
    let _ = write!(
        out,
        "<p>{}<br>Clauses: <code>{}</code></p>",
        escape(&result.title),
        escape(&result.clauses.join(", "))
    );
    if !result.findings.is_empty() {
        out.push_str("<ul>");
        for finding in &result.findings {
            let line = report.redactor.text(&super::finding_line(finding));
            let _ = write!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul>");
    }
    quotes(out, context, result);
    if let Some(exchange) = result.exchanges.last() {
        last_exchange(out, context, exchange);
    }
    if let Some(commands) = shown_reproduction(context, result) {
        let _ = write!(out, "<p>Reproduce</p><pre>{}</pre>", escape(&commands));
    }
    out.push_str("</details>");
}

/// A result's last exchange: the request as sent and the answer (JSON pretty-printed and
/// redacted, anything else its first 4096 characters) or why none came.
fn last_exchange(out: &mut String, context: &Context<'_>, exchange: &Exchange) {
    let redactor = &context.report.redactor;
    let request = redactor.text(&format!(
        "{} {}\n{}{}",
        exchange.request.method,
        exchange.request.url,
        exchange
            .request
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\n"))
            .collect::<String>(),
        exchange.request.body.clone().unwrap_or_default()
    ));
    let response = match (&exchange.response, &exchange.failure) {
        (Some(received), _) => {
            let status = received
                .status
                .map(|status| format!("HTTP {status}\n"))
                .unwrap_or_default();
            let body = match serde_json::from_str::<serde_json::Value>(&received.body) {
                Ok(json) => serde_json::to_string_pretty(&redactor.json(&json)).unwrap_or_default(),
                Err(_) => received.body.chars().take(4096).collect(),
            };
            format!("{status}{body}")
        }
        (None, Some(failure)) => failure.message.clone(),
        (None, None) => String::new(),
    };
    let _ = write!(
        out,
        "<p>Request</p><pre>{}</pre><p>Response</p><pre>{}</pre>",
        escape(&request),
        escape(&redactor.text(&response))
    );
}

/// The known failures of an expectations file, when there are any.
fn known_table(out: &mut String, context: &Context<'_>, known: &[&CaseResult]) {
    if known.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"known-failures\">Known failures</h2><p>Listed in the expectations file: <code>xfail</code> still fails and does not fail the run; <code>fixed</code> passes now and its entry can go.</p><table id=\"known\"><tr><th>verdict</th><th>case</th><th>transport</th><th>clauses</th><th>reason</th></tr>");
    for result in known {
        let _ = write!(
            out,
            "<tr class=\"known {0}\" data-verdict=\"{0}\"><td class=\"{0}\">{0}</td><td><code>{1}</code></td><td>{2}</td><td><code>{3}</code></td><td>{4}</td></tr>",
            result.verdict.as_str(),
            escape(&result.case),
            result.transport,
            escape(&result.clauses.join(", ")),
            escape(&context.report.redactor.text(&result.message))
        );
    }
    out.push_str("</table>");
}

/// The SPEC.md words of each clause a failing or warning finding of the result cites, one
/// block quote per clause; a clause without a quote shows its note (why SPEC.md does not
/// make the finding a failure).
fn quotes(out: &mut String, context: &Context<'_>, result: &CaseResult) {
    for clause in super::quoted_clauses(context, result) {
        let _ = write!(
            out,
            "<blockquote class=\"quote\" data-clause=\"{0}\"><p><code>{0}</code> &middot; SPEC.md {1} &middot; {2}</p>",
            escape(&clause.id),
            escape(&clause.section),
            clause.level.as_str()
        );
        for quote in &clause.quote {
            let _ = write!(out, "<p>&ldquo;{}&rdquo;</p>", escape(quote.trim()));
        }
        if clause.quote.is_empty()
            && let Some(note) = &clause.note
        {
            let _ = write!(out, "<p>{}</p>", escape(note));
        }
        out.push_str("</blockquote>");
    }
}
