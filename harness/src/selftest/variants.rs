//! The false-failure matrix: the other half of the self-proof. Where the fault matrix shows
//! that every check can fail, this shows that no check fails a server SPEC.md allows.
//!
//! Each row switches on spec-open variants of the reference server ([`Variant`]: one
//! other legal choice at one open point of SPEC.md), one at a time and then all at once,
//! and runs against it the three things a user runs: the conformance suite, `harness fuzz`
//! (fixed seeds), and `harness judge` self-play, where the harness's own runner is the
//! client of a judge that serves the variant. Any failure or harness error in any of them
//! is a false failure: the harness enforced a choice SPEC.md leaves open. Warnings are
//! legal (a warn clause marks what is suspicious but allowed) and are counted apart.
//!
//! The rows run the paced method at [`MATRIX_PACED_PER_SECOND`] rather than SPEC.md's 1
//! per second, so the burst-1 variant proves the per-account pacing in seconds;
//! BENCHMARKS.md measures the suite against that variant at 1 per second.

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::collect::{Matrix, MatrixEnd, MatrixEvent, MatrixRow, MatrixSink, RowEvent};
use super::{SelftestConfig, run_against};
use crate::fuzz;
use harness_model::case::{Auth, Case, Signature, StepKind};
use harness_model::check::Outcome;
use harness_model::check::Verdict;
use harness_model::events::EventSink;
use harness_runner::run::{self, RunError};
use harness_server::judge;
use harness_server::serve::{self, Extreme, Variant};

/// The paced method's rate (per second) the matrix's servers enforce and advertise.
pub const MATRIX_PACED_PER_SECOND: f64 = 20.0;

/// What the false-failure matrix runs besides the suite.
#[derive(Clone, Debug)]
pub struct VariantPlan {
    /// The rows: each a set of variants switched on together.
    pub rows: Vec<Vec<Variant>>,
    /// Seeds of the fuzz runs of each row (none: no fuzzing).
    pub fuzz_seeds: Vec<u64>,
    /// Generated requests of each fuzz run.
    pub fuzz_requests: usize,
    /// Whether each row also runs judge self-play.
    pub judge: bool,
}

impl VariantPlan {
    /// Every variant alone, the narrowest and the widest server, then all at once; two
    /// fuzz seeds of 2,000 requests; self-play.
    pub fn full() -> VariantPlan {
        let mut rows: Vec<Vec<Variant>> = Variant::ALL.iter().map(|&one| vec![one]).collect();
        rows.extend(Extreme::ALL.map(Extreme::variants));
        rows.push(Variant::ALL.to_vec());
        VariantPlan {
            rows,
            fuzz_seeds: vec![1, 2],
            fuzz_requests: 2_000,
            judge: true,
        }
    }
}

/// One row of the matrix.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct VariantRow {
    /// The variants switched on.
    #[serde(with = "super::collect::variant_names")]
    pub variants: Vec<Variant>,
    /// Suite executions that failed or errored: `case [transport]: message`.
    pub suite_failures: Vec<String>,
    /// Suite executions that warned.
    pub suite_warnings: usize,
    /// Fuzz findings: `seed S: clause: message`.
    pub fuzz_findings: Vec<String>,
    /// Client clauses the judge failed the runner on: `clause [transport]: message`.
    pub judge_failures: Vec<String>,
    /// Wall time of the row.
    #[serde(rename = "duration_ms", with = "harness_model::events::duration_ms")]
    pub duration: Duration,
}

impl VariantRow {
    /// The row's name: the variant's, `narrowest` or `widest` for an extreme server, or
    /// `all` for every variant at once.
    pub fn name(&self) -> String {
        if self.variants.len() == Variant::ALL.len() && self.variants.len() > 1 {
            "all".to_owned()
        } else if let Some(extreme) = Extreme::of(&self.variants) {
            extreme.name().to_owned()
        } else {
            let names: Vec<&str> = self.variants.iter().map(|variant| variant.name()).collect();
            names.join("+")
        }
    }

    /// Failures of a check against a server SPEC.md allows.
    pub fn false_failures(&self) -> usize {
        self.suite_failures.len() + self.fuzz_findings.len() + self.judge_failures.len()
    }

    /// Every false failure, each prefixed with what found it.
    pub fn describe(&self) -> Vec<String> {
        let suite = self
            .suite_failures
            .iter()
            .map(|line| format!("suite: {line}"));
        let fuzz = self
            .fuzz_findings
            .iter()
            .map(|line| format!("fuzz: {line}"));
        let judge = self
            .judge_failures
            .iter()
            .map(|line| format!("judge: {line}"));
        suite.chain(fuzz).chain(judge).collect()
    }
}

/// The whole matrix.
#[derive(Clone, Debug)]
pub struct VariantMatrix {
    /// One row per variant set.
    pub rows: Vec<VariantRow>,
    /// Wall time of everything.
    pub duration: Duration,
}

impl VariantMatrix {
    /// False failures over every row.
    pub fn false_failures(&self) -> usize {
        self.rows.iter().map(VariantRow::false_failures).sum()
    }

    /// The matrix as text, one row per line, then the count.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for row in &self.rows {
            let _ = writeln!(out, "{}", row_line(row));
        }
        let _ = writeln!(
            out,
            "false failures {} over {} variant rows",
            self.false_failures(),
            self.rows.len()
        );
        out
    }

    /// The matrix as an HTML section (escaped), for `report.html`.
    pub fn to_html(&self) -> String {
        let escape = harness_model::report::escape;
        let mut out = String::from("<h2>False-failure matrix</h2>");
        let _ = write!(
            out,
            "<p id=\"false-failures\">False failures against spec-open variants: <b>{}</b> over {} rows</p>",
            self.false_failures(),
            self.rows.len()
        );
        out.push_str("<table id=\"variants\"><tr><th>variant</th><th>suite</th><th>fuzz</th><th>judge self-play</th><th>false failures</th></tr>");
        for row in &self.rows {
            let class = if row.false_failures() == 0 {
                "pass"
            } else {
                "fail"
            };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{} failed, {} warned</td><td>{} findings</td><td>{} failed</td><td class=\"{class}\">{}</td></tr>",
                escape(&row.name()),
                row.suite_failures.len(),
                row.suite_warnings,
                row.fuzz_findings.len(),
                row.judge_failures.len(),
                escape(&row.describe().join("; "))
            );
        }
        out.push_str("</table>");
        out
    }
}

/// One line of the text matrix.
pub fn row_line(row: &VariantRow) -> String {
    let mark = if row.false_failures() == 0 {
        "clean"
    } else {
        "FALSE FAILURES"
    };
    let mut line = format!(
        "{:28} {mark:14} suite {} failed {} warned; fuzz {} findings; judge {} failed",
        row.name(),
        row.suite_failures.len(),
        row.suite_warnings,
        row.fuzz_findings.len(),
        row.judge_failures.len()
    );
    for failure in row.describe() {
        let _ = write!(line, "\n    {failure}");
    }
    line
}

/// Whether the runner, as a client, keeps every client rule while executing `case`: no
/// step departs from one on purpose (raw bytes, rate probes, expected refusals, stale,
/// reused or wrong signatures). Judge self-play sends only these.
pub fn conforming_client_case(case: &Case) -> bool {
    // A signature now or lately, with a fresh nonce, in lower-case hex, as computed.
    let plain = |signature: &Signature| {
        signature.timestamp_offset_ms.abs() < 30_000
            && signature.nonce.is_none()
            && !signature.uppercase_hex
            && !signature.altered_signature
    };
    case.steps.iter().all(|step| {
        let conforming_auth = !step.auth.wrong_secret()
            && match &step.auth {
                Auth::ClientSignature(login) => {
                    plain(&login.signature) && !login.no_nonce && !login.no_trailing_lf
                }
                Auth::Signed(signed) => plain(&signed.signature) && signed.sign_uri.is_none(),
                _ => true,
            };
        !matches!(step.kind, StepKind::Raw { .. } | StepKind::Probe(_))
            && step.expect.outcome == Outcome::Result
            && conforming_auth
    })
}

/// A reference server configuration with `variants` at the matrix's paced rate.
fn server_config(variants: &[Variant]) -> serve::ServeConfig {
    let mut config = serve::ServeConfig::loopback();
    config.variants = variants.to_vec();
    config.limits.transaction_log_per_second = MATRIX_PACED_PER_SECOND;
    config
}

fn failed_executions(report: &harness_model::results::RunReport) -> (Vec<String>, usize) {
    let failures = report
        .results
        .iter()
        .filter(|result| matches!(result.verdict, Verdict::Fail | Verdict::Error))
        .map(|result| format!("{} [{}]: {}", result.case, result.transport, result.message))
        .collect();
    let warnings = report
        .results
        .iter()
        .filter(|result| result.verdict == Verdict::Warn)
        .count();
    (failures, warnings)
}

fn harness_error(message: String) -> RunError {
    RunError::Client(harness_protocol::wire::TransportError {
        kind: harness_protocol::wire::TransportErrorKind::Connect,
        message,
    })
}

async fn fuzz_row(
    config: &SelftestConfig,
    plan: &VariantPlan,
    variants: &[Variant],
) -> Result<Vec<String>, RunError> {
    let mut findings = Vec::new();
    for &seed in &plan.fuzz_seeds {
        let running = serve::start(server_config(variants))
            .await
            .map_err(|error| harness_error(error.to_string()))?;
        let mut fuzz_config = fuzz::FuzzConfig::new(seed, plan.fuzz_requests);
        fuzz_config.run_timeout = Duration::from_secs(120);
        fuzz_config.shrink_budget = 50;
        let report = fuzz::run(running.target(), config.schemas.clone(), &fuzz_config).await;
        running.shutdown().await;
        let report = report.map_err(|error| harness_error(error.to_string()))?;
        // A single request's finding and a sequence's, each with what failed.
        findings.extend(report.findings.iter().map(|finding| {
            format!(
                "seed {seed}: {} ({}): {}",
                finding.clause,
                finding.what(),
                finding.message
            )
        }));
    }
    Ok(findings)
}

async fn judge_row(config: &SelftestConfig, variants: &[Variant]) -> Result<Vec<String>, RunError> {
    let mut judge_config = judge::JudgeConfig::loopback();
    judge_config.variants = variants.to_vec();
    judge_config.limits.transaction_log_per_second = MATRIX_PACED_PER_SECOND;
    let running = judge::start(judge_config)
        .await
        .map_err(|error| harness_error(error.to_string()))?;
    let cases = config
        .cases
        .iter()
        .filter(|case| conforming_client_case(case))
        .cloned()
        .collect();
    let run_config = run::RunConfig {
        concurrency: config.concurrency,
        run_timeout: Duration::from_secs(120),
        ..run::RunConfig::new(
            running.target().clone(),
            cases,
            Arc::clone(&config.catalog),
            Arc::clone(&config.schemas),
        )
    };
    let report = run::run(run_config, EventSink::none()).await;
    let knowledge = running.knowledge();
    let records = running.stop().await;
    report?;
    let tally = judge::assess(&records, &knowledge);
    Ok(tally
        .iter()
        .flat_map(|(clause, transport, cell)| {
            cell.findings
                .iter()
                .filter(|finding| finding.verdict == Verdict::Fail)
                .map(move |finding| format!("{clause} [{transport}]: {}", finding.message))
        })
        .collect())
}

/// Runs every row of `plan`, announcing each whole as it ends, then the matrix's end, to
/// `rows_sink` (`super::MatrixCollector` folds them back).
pub async fn variant_matrix(
    config: &SelftestConfig,
    plan: &VariantPlan,
    rows_sink: &MatrixSink,
) -> Result<VariantMatrix, RunError> {
    let started = Instant::now();
    let mut rows = Vec::with_capacity(plan.rows.len());
    for variants in &plan.rows {
        let row_started = Instant::now();
        let suite = run_against(config, server_config(variants), &EventSink::none()).await?;
        let (suite_failures, suite_warnings) = failed_executions(&suite);
        let fuzz_findings = fuzz_row(config, plan, variants).await?;
        let judge_failures = if plan.judge {
            judge_row(config, variants).await?
        } else {
            Vec::new()
        };
        let row = VariantRow {
            variants: variants.clone(),
            suite_failures,
            suite_warnings,
            fuzz_findings,
            judge_failures,
            duration: row_started.elapsed(),
        };
        rows_sink.emit(&MatrixEvent::Row(RowEvent::Finished {
            name: Cow::Owned(row.name()),
            passed: row.false_failures() == 0,
            line: Cow::Owned(row_line(&row)),
            row: MatrixRow::Variants(Cow::Borrowed(&row)),
        }));
        rows.push(row);
    }
    let duration = started.elapsed();
    rows_sink.emit(&MatrixEvent::Matrix(MatrixEnd::Finished {
        matrix: Matrix::Variants,
        duration,
        unkillable: Cow::Borrowed(&[]),
    }));
    Ok(VariantMatrix { rows, duration })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variants: Vec<Variant>, suite: usize, fuzz: usize, judge: usize) -> VariantRow {
        let lines = |n: usize, what: &str| (0..n).map(|i| format!("{what} {i}")).collect();
        VariantRow {
            variants,
            suite_failures: lines(suite, "case"),
            suite_warnings: 2,
            fuzz_findings: lines(fuzz, "finding"),
            judge_failures: lines(judge, "clause"),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn rows_are_named_by_their_variants_and_all_at_once_is_all() {
        assert_eq!(
            row(vec![Variant::ShortPages], 0, 0, 0).name(),
            "short-pages"
        );
        assert_eq!(row(Variant::ALL.to_vec(), 0, 0, 0).name(), "all");
        let widest = row(Extreme::Widest.variants(), 0, 0, 0);
        assert_eq!(widest.name(), "widest");
        let pair = row(vec![Variant::ShortPages, Variant::OldestFirst], 0, 0, 0);
        assert_eq!(pair.name(), "short-pages+oldest-first");
    }

    #[test]
    fn false_failures_add_suite_fuzz_and_judge_but_not_warnings() {
        let matrix = VariantMatrix {
            rows: vec![
                row(vec![Variant::ShortPages], 1, 2, 3),
                row(vec![Variant::OldestFirst], 0, 0, 0),
            ],
            duration: Duration::ZERO,
        };
        assert_eq!(matrix.false_failures(), 6);
        assert_eq!(matrix.rows[0].describe()[0], "suite: case 0");
        assert_eq!(matrix.rows[0].describe()[5], "judge: clause 2");
        let text = matrix.to_text();
        assert!(
            text.contains("short-pages                  FALSE FAILURES"),
            "{text}"
        );
        assert!(
            text.contains("oldest-first                 clean"),
            "{text}"
        );
        assert!(
            text.ends_with("false failures 6 over 2 variant rows\n"),
            "{text}"
        );
        let html = matrix.to_html();
        assert!(html.contains("<b>6</b> over 2 rows"), "{html}");
        assert!(html.contains("<td class=\"fail\">suite: case 0;"), "{html}");
    }

    #[test]
    fn the_full_plan_has_every_variant_alone_both_extremes_and_all_at_once() {
        let plan = VariantPlan::full();
        assert_eq!(plan.rows.len(), Variant::ALL.len() + 3);
        assert!(
            plan.rows[..Variant::ALL.len()]
                .iter()
                .all(|row| row.len() == 1)
        );
        let n = Variant::ALL.len();
        assert_eq!(Extreme::of(&plan.rows[n]), Some(Extreme::Narrowest));
        assert_eq!(Extreme::of(&plan.rows[n + 1]), Some(Extreme::Widest));
        assert_eq!(plan.rows.last().map(Vec::len), Some(Variant::ALL.len()));
    }
}
